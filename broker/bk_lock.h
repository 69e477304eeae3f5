/* bk_lock.h: orderly-consumption queue locks (LOCK_BATCH_MQ /
 * UNLOCK_BATCH_MQ): per (consumer group, topic, queue) the client id that
 * may consume it, expiring without renewal (rebalanceLockMaxLiveTime).
 * Memory only, like RocketMQ's RebalanceLockManager: after a broker restart
 * clients simply lock again. Loop thread. */
#ifndef BK_LOCK_H
#define BK_LOCK_H

#include <stddef.h>
#include <stdint.h>

#include "bk_broker.h"

typedef struct bk_lock bk_lock_t;

/* Owner: the caller (bk_lock_free). NULL on out of memory. */
bk_lock_t *bk_lock_new(int64_t max_live_ms);
void bk_lock_free(bk_lock_t *lk);

/* Locks (or renews) one queue for client_id at now_ms; returns 1 if the
 * client holds it afterwards, 0 if another live client does, -1 on out of
 * memory. */
int bk_lock_try(bk_lock_t *lk, const char *group, const char *topic, int32_t queue_id,
                const char *client_id, int64_t now_ms);
/* Releases the queue if client_id holds it. */
void bk_lock_release(bk_lock_t *lk, const char *group, const char *topic, int32_t queue_id,
                     const char *client_id);
/* Live locks (runtime info, tests). */
size_t bk_lock_count(bk_lock_t *lk, int64_t now_ms);

#endif
