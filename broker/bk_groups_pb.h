/* bk_groups_pb.h: the protobuf views of the subscription-group table
 * (admin, slave sync, persistence). Not for the core. Loop thread only. */
#ifndef BK_GROUPS_PB_H
#define BK_GROUPS_PB_H

#include "bk_groups.h"
#include "rmq.pb-c.h"

/* Creates or replaces a group from its wire form; persists. */
rmq_err_t bk_groups_update(bk_groups_t *g, const Rmq__SubscriptionGroupConfig *pb);

/* A heap SubscriptionGroupTable snapshot; free with bk_groups_table_free. */
Rmq__SubscriptionGroupTable *bk_groups_table_new(const bk_groups_t *g);
void bk_groups_table_free(Rmq__SubscriptionGroupTable *tab);

#endif
