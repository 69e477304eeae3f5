/* bk_lock.h: the broker core's orderly-consumption queue locks: per
 * (consumer group, topic, queue) the client id that may consume it,
 * expiring without renewal (rebalanceLockMaxLiveTime), and the two batch
 * operations of ordered consumers (lock or renew a set of queues, unlock
 * them) on neutral requests. Memory only, like RocketMQ's
 * RebalanceLockManager: after a broker restart clients simply lock again.
 * The clock is the caller's (now_ms), so tests inject it. Loop thread. */
#ifndef BK_LOCK_H
#define BK_LOCK_H

#include <stddef.h>
#include <stdint.h>

#include "bk_status.h"

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

/* A queue named by a lock request. */
typedef struct bk_lock_mq {
    const char *topic;
    int32_t queue_id;
} bk_lock_mq_t;

/* A batch lock or unlock as the front-end decoded it (borrowed for the call). */
typedef struct bk_lock_batch_req {
    const char *cmd;                 /* the request's name, opens reasons */
    const char *group;
    const char *client_id;
    const bk_lock_mq_t *mqs;
    size_t n_mqs;
    int64_t now_ms;                  /* monotonic clock */
} bk_lock_batch_req_t;

/* Locks or renews every queue of req that no other live client holds;
 * held[i] is set to 1 for each queue the client holds afterwards, 0 for the
 * others (held has req->n_mqs slots). BK_BAD_REQUEST without a group or a
 * client id; BK_SYSTEM_ERROR when out of memory (queues locked so far stay
 * locked, as a renewal would keep them). */
bk_status_t bk_lock_batch(bk_lock_t *lk, const bk_lock_batch_req_t *req, uint8_t *held, bk_result_t *r);

/* Releases the queues of req that the client holds (others' locks stay);
 * BK_BAD_REQUEST without a group or a client id. */
bk_status_t bk_unlock_batch(bk_lock_t *lk, const bk_lock_batch_req_t *req, bk_result_t *r);

#endif
