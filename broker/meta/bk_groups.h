/* bk_groups.h: subscription groups (consumer group settings), persisted as
 * a packed SubscriptionGroupTable in config/subscriptionGroup.pb, created on
 * first use when autoCreateSubscriptionGroup is on. This header is
 * protocol-neutral (the core uses it); the protobuf views are in
 * bk_groups_pb.h. Loop thread only. */
#ifndef BK_GROUPS_H
#define BK_GROUPS_H

#include <stdint.h>

#include "bk_persist.h"
#include "rmq_err.h"

typedef struct bk_group {
    char name[128];
    int consume_enable;
    int consume_broadcast_enable;
    int32_t retry_queue_nums;
    int32_t retry_max_times;
    int64_t broker_id;
    int64_t which_broker_when_consume_slowly;
    int consume_orderly;             /* consumeMessageOrderly: a FIFO group (5.x pop: one queue at a time) */
} bk_group_t;

typedef struct bk_groups bk_groups_t;
/* One group created or replaced (grp set) or deleted (grp NULL). */
typedef void (*bk_groups_item_fn)(void *arg, const char *name, const bk_group_t *grp);

/* Loads dir/subscriptionGroup.pb (missing: empty). persist is borrowed. */
bk_groups_t *bk_groups_new(const char *dir, bk_persist_t *persist, int auto_create,
                           char *err, size_t errlen);
void bk_groups_free(bk_groups_t *g);

/* fn runs after each creation, update or delete of one group (an HA master
 * streams it to its slaves). NULL fn: none. */
void bk_groups_on_item(bk_groups_t *g, bk_groups_item_fn fn, void *arg);

/* The group, created with RocketMQ's defaults if absent and auto-create is
 * on; NULL otherwise. Valid until the group is deleted. */
const bk_group_t *bk_groups_use(bk_groups_t *g, const char *name, size_t len);
const bk_group_t *bk_groups_get(const bk_groups_t *g, const char *name, size_t len);
/* Creates or replaces grp (copied); bumps the version, persists, notifies. */
rmq_err_t bk_groups_put(bk_groups_t *g, const bk_group_t *grp);
rmq_err_t bk_groups_delete(bk_groups_t *g, const char *name);

#endif
