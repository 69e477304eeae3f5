/* bk_meta.c: topic deletion across config, consume queues and offsets for
 * the streamed delete and the sync's, through the one rule the admin
 * request applies too (core/bk_admin_ops.c). */
#include "bk_meta.h"

#include "bk_admin_ops.h"

rmq_err_t bk_meta_delete_topic(bk_broker_t *bk, const char *name)
{
    return bk_admin_topic_purge(bk->topics, bk->store, bk->offsets, name);
}

