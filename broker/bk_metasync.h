/* bk_metasync.h: a slave's copy of its master's metadata. Topic and group
 * changes arrive in the HA stream in log order (bk_metasync_apply); every
 * slaveSyncInterval it also fetches the topic config, subscription groups
 * and consumer offsets from the master's client address (learnt from the
 * name server) and applies them. Offsets only move forward: per queue the
 * larger of master and slave wins, and offsets newer on the slave
 * (committed while the master was away) are handed to the master. Loop
 * thread only. */
#ifndef BK_METASYNC_H
#define BK_METASYNC_H

#include <stddef.h>
#include <stdint.h>

#include "bk_broker.h"
#include "ha.pb-c.h"

typedef struct bk_metasync bk_metasync_t;

/* Starts the periodic sync. NULL when out of memory. */
bk_metasync_t *bk_metasync_new(bk_broker_t *bk);
/* Fails requests in flight and frees. */
void bk_metasync_free(bk_metasync_t *m);
/* Applies one metadata change streamed by the master (borrowed). 0, or -1
 * with the reason in why. */
int bk_metasync_apply(bk_metasync_t *m, const Rmq__HaMeta *meta, char *why, size_t whylen);

/* Completed syncs (all three tables applied) since start. */
long long bk_metasync_count(const bk_metasync_t *m);

#endif
