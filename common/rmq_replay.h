/* rmq_replay.h: the replay cache of request signatures. A server that
 * checks signatures records each valid one with its signed timestamp and
 * refuses the same signature while it could still pass the timestamp window.
 *
 * Bounded: at most cap entries. An entry leaves when its timestamp falls out
 * of the window (it would be refused by the window check anyway) or, with
 * the cache full, when a newer signature needs its room: the entry with the
 * oldest timestamp goes. Either way the cache remembers the newest timestamp
 * it ever dropped (the floor) and refuses every signature whose timestamp is
 * not above it, since it can no longer tell whether such a signature was
 * seen. So eviction never lets a replay through: a flood of valid requests
 * only narrows the window (to the timestamps newer than the floor) for
 * everyone, and a stepped-back wall clock cannot revive a dropped signature.
 * Memory grows on demand, at most about 52 bytes per entry. Loop thread of
 * its owner (not thread-safe). */
#ifndef RMQ_REPLAY_H
#define RMQ_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#define RMQ_REPLAY_KEY 16          /* bytes of a signature that identify it */

typedef struct rmq_replay rmq_replay_t;

typedef enum rmq_replay_verdict {
    RMQ_REPLAY_FRESH = 0,          /* not seen: recorded now */
    RMQ_REPLAY_SEEN,               /* the same signature within the window: a replay */
    RMQ_REPLAY_TOO_OLD,            /* timestamp not above the floor: cannot prove fresh */
    RMQ_REPLAY_NOMEM,              /* could not grow the cache: refused */
} rmq_replay_verdict_t;

/* A cache of at most cap entries (cap >= 1). NULL on ENOMEM. Owner: caller. */
rmq_replay_t *rmq_replay_new(size_t cap);
void rmq_replay_free(rmq_replay_t *r);

/* Drops the entries whose timestamp is more than window_ms before now_ms,
 * then looks key (RMQ_REPLAY_KEY bytes) up and records it with ts_ms when
 * it is fresh. The caller has checked |now_ms - ts_ms| <= window_ms. */
rmq_replay_verdict_t rmq_replay_check(rmq_replay_t *r, const uint8_t *key, int64_t ts_ms,
                                      int64_t now_ms, int64_t window_ms);

size_t rmq_replay_count(const rmq_replay_t *r);
size_t rmq_replay_cap(const rmq_replay_t *r);
/* The newest timestamp dropped so far (INT64_MIN: none). */
int64_t rmq_replay_floor(const rmq_replay_t *r);

#endif
