/* bk_meta.c: topic deletion across config, consume queues and offsets, and
 * the slave's read-only stand-in for a topic it holds records of. */
#include "bk_meta.h"

#include <stdio.h>
#include <string.h>

#include "bk_names.h"

rmq_err_t bk_meta_delete_topic(bk_broker_t *bk, const char *name)
{
    rmq_err_t rc = bk_topics_delete(bk->topics, name);
    st_store_delete_topic(bk->store, name);
    bk_offsets_delete_topic(bk->offsets, name);
    return rc;
}

const bk_topic_t *bk_meta_readable_topic(bk_broker_t *bk, const char *name, int32_t queue_id,
                                         bk_topic_t *scratch)
{
    const bk_topic_t *topic = bk_topics_get(bk->topics, name, strlen(name));
    if (topic || bk->cfg->broker_role != BK_SLAVE || queue_id < 0 || strlen(name) > BK_NAME_MAX ||
        st_store_max_offset(bk->store, name, queue_id) <= 0)
        return topic;
    *scratch = (bk_topic_t){.read_queues = queue_id + 1, .perm = RMQ__PERM__PERM_READ};
    snprintf(scratch->name, sizeof(scratch->name), "%s", name);
    return scratch;
}
