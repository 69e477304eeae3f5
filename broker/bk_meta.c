/* bk_meta.c: topic deletion across config, consume queues and offsets: one
 * function for the master's delete, the streamed one and the sync's. */
#include "bk_meta.h"

rmq_err_t bk_meta_delete_topic(bk_broker_t *bk, const char *name)
{
    rmq_err_t rc = bk_topics_delete(bk->topics, name);
    st_store_delete_topic(bk->store, name);
    bk_offsets_delete_topic(bk->offsets, name);
    return rc;
}

