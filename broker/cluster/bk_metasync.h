/* bk_metasync.h: a slave's copy of its master's metadata. Topic and group
 * changes arrive in the HA stream in log order (bk_metasync_apply); every
 * slaveSyncInterval it also fetches the topic config, subscription groups
 * and consumer offsets from the master's client address (learnt from the
 * name server) and applies them. Offsets mirror the master's, except those
 * clients committed on this slave (while the master was unreachable): each
 * is handed to the master while it is ahead of the master's. Loop thread
 * only. */
#ifndef BK_METASYNC_H
#define BK_METASYNC_H

#include <stddef.h>
#include <stdint.h>

#include "bk_node.h"
#include "ha.pb-c.h"

typedef struct bk_metasync bk_metasync_t;

/* Starts the periodic sync. NULL when out of memory. */
bk_metasync_t *bk_metasync_new(const bk_node_t *node);
/* Fails requests in flight and frees. */
void bk_metasync_free(bk_metasync_t *m);
/* Applies one metadata change streamed by the master (borrowed). 0, or -1
 * with the reason in why. */
int bk_metasync_apply(bk_metasync_t *m, const Rmq__HaMeta *meta, char *why, size_t whylen);

/* A client committed topic@group queue_id on this slave: hand it to the
 * master once reachable, and keep it over the master's meanwhile. */
void bk_metasync_note_commit(bk_metasync_t *m, const char *topic, const char *group, int32_t queue_id);

/* Completed syncs (all three tables applied) since start. */
long long bk_metasync_count(const bk_metasync_t *m);

#endif
