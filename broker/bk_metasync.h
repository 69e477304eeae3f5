/* bk_metasync.h: a slave's copy of its master's metadata: every
 * slaveSyncInterval it fetches the topic config, subscription groups and
 * consumer offsets from the master's client address (learnt from the name
 * server) and applies them. Offsets only move forward: per queue the larger
 * of master and slave wins, and offsets newer on the slave (committed while
 * the master was away) are handed to the master. Loop thread only. */
#ifndef BK_METASYNC_H
#define BK_METASYNC_H

#include "bk_broker.h"

typedef struct bk_metasync bk_metasync_t;

/* Starts the periodic sync. NULL when out of memory. */
bk_metasync_t *bk_metasync_new(bk_broker_t *bk);
/* Fails requests in flight and frees. */
void bk_metasync_free(bk_metasync_t *m);
/* Completed syncs (all three tables applied) since start. */
long long bk_metasync_count(const bk_metasync_t *m);

#endif
