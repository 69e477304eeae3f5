/* bk_offsets.h: consumer offsets, topic@group -> queue id -> next offset to
 * consume, persisted as a packed ConsumerOffsetTable in
 * config/consumerOffset.pb every flushConsumerOffsetInterval (when changed)
 * and at shutdown. This header is protocol-neutral (the core uses it); the
 * protobuf views are in bk_offsets_pb.h. Loop thread only. */
#ifndef BK_OFFSETS_H
#define BK_OFFSETS_H

#include <stdint.h>

#include "bk_persist.h"
#include "rmq_err.h"

typedef struct bk_offsets bk_offsets_t;

/* Loads dir/consumerOffset.pb (missing: empty). persist is borrowed. */
bk_offsets_t *bk_offsets_new(const char *dir, bk_persist_t *persist, char *err, size_t errlen);
void bk_offsets_free(bk_offsets_t *o);

/* Stores the next offset to consume of group on topic/queue. */
rmq_err_t bk_offsets_commit(bk_offsets_t *o, const char *topic, const char *group,
                            int32_t queue_id, int64_t offset);
/* The stored offset, or -1 if unknown. */
int64_t bk_offsets_query(const bk_offsets_t *o, const char *topic, const char *group,
                         int32_t queue_id);
/* One known offset (bk_offsets_each). */
typedef void (*bk_offsets_fn)(void *arg, const char *topic, const char *group, int32_t queue_id,
                              int64_t offset);
/* Calls fn for every known offset of group (NULL: of every group), entry
 * by entry in table order and by ascending queue id in each. The table must
 * not change meanwhile. */
void bk_offsets_each(const bk_offsets_t *o, const char *group, bk_offsets_fn fn, void *arg);

/* Drops every group's offsets of topic. */
void bk_offsets_delete_topic(bk_offsets_t *o, const char *topic);
/* Drops every topic's offsets of group. */
void bk_offsets_delete_group(bk_offsets_t *o, const char *group);

/* Queues a write if anything changed since the last one. */
void bk_offsets_persist(bk_offsets_t *o);

#endif
