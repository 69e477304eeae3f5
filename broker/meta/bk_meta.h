/* bk_meta.h: metadata rules that span the tables and the store, so master
 * and slave apply one rule: a deleted topic leaves nothing behind (a slave
 * serving a topic whose records it holds before it knows its config is the
 * pull's rule, core/bk_consume.c). Loop thread only. */
#ifndef BK_META_H
#define BK_META_H

#include <stdint.h>

#include "bk_broker.h"

/* Deletes topic name everywhere on this broker: its config, its consume
 * queues and every group's offsets on it, so a topic created again under
 * the name starts empty. RMQ_ENOTFOUND if there was no config (the queues
 * and offsets are removed all the same). */
rmq_err_t bk_meta_delete_topic(bk_broker_t *bk, const char *name);

#endif
