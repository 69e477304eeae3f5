/* bk_groups_pb.h: the protobuf views of the subscription-group table
 * (admin, slave sync, persistence). Not for the core. Loop thread only. */
#ifndef BK_GROUPS_PB_H
#define BK_GROUPS_PB_H

#include "bk_groups.h"
#include "rmq.pb-c.h"

/* Creates or replaces a group from its wire form; persists. */
rmq_err_t bk_groups_update(bk_groups_t *g, const Rmq__SubscriptionGroupConfig *pb);

/* Fills a group from its wire form. */
void bk_group_from_pb(bk_group_t *grp, const Rmq__SubscriptionGroupConfig *pb);

/* Copies the current data version into dv. */
void bk_groups_version(const bk_groups_t *g, Rmq__DataVersion *dv);

/* Fills a SubscriptionGroupConfig from a group (name borrowed from grp). */
void bk_group_to_pb(const bk_group_t *grp, Rmq__SubscriptionGroupConfig *pb);

/* A heap SubscriptionGroupTable snapshot; free with bk_groups_table_free. */
Rmq__SubscriptionGroupTable *bk_groups_table_new(const bk_groups_t *g);
void bk_groups_table_free(Rmq__SubscriptionGroupTable *tab);

#endif
