/* bk_meta.h: metadata rules that span the tables and the store, so master
 * and slave apply one rule: a deleted topic leaves nothing behind, and a
 * slave serves a topic whose records it holds before it knows its config.
 * Loop thread only. */
#ifndef BK_META_H
#define BK_META_H

#include <stdint.h>

#include "bk_broker.h"

/* Deletes topic name everywhere on this broker: its config, its consume
 * queues and every group's offsets on it, so a topic created again under
 * the name starts empty. RMQ_ENOTFOUND if there was no config (the queues
 * and offsets are removed all the same). */
rmq_err_t bk_meta_delete_topic(bk_broker_t *bk, const char *name);

/* The topic a read of name's queue_id goes to: its config, else on a slave
 * whose store holds records of that queue a read-only stand-in written into
 * scratch (the config follows from the master); NULL otherwise. */
const bk_topic_t *bk_meta_readable_topic(bk_broker_t *bk, const char *name, int32_t queue_id,
                                         bk_topic_t *scratch);

#endif
