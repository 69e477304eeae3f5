/* ha_sync.h: SYNC_MASTER waiters. A send whose record ends at end_offset
 * waits until some connected slave has acknowledged that offset. Waiters sit
 * in a min-heap by end offset (one ack releases every waiter it covers) and
 * in a min-heap by deadline (one timer for the earliest). Loop thread only;
 * callbacks run on it, never from inside ha_sync_wait. */
#ifndef HA_SYNC_H
#define HA_SYNC_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

typedef struct ha_sync ha_sync_t;

typedef enum ha_sync_status {
    HA_SYNC_OK = 0,                  /* a slave acknowledged end_offset */
    HA_SYNC_PENDING,                 /* parked: the callback will say how it ended */
    HA_SYNC_SLAVE_NOT_AVAILABLE,     /* no slave, or the best one too far behind */
    HA_SYNC_FLUSH_SLAVE_TIMEOUT,     /* deadline passed before an ack */
    HA_SYNC_SHUTDOWN,                /* the master is being freed */
    HA_SYNC_NOMEM,
} ha_sync_status_t;

/* Final outcome of a parked wait (never HA_SYNC_PENDING). Loop thread. */
typedef void (*ha_sync_fn)(ha_sync_status_t status, void *arg);

/* Creates the waiter set on base. fallbehind_max: a slave further behind the
 * waiting offset than this does not count. Owner: the caller (normally
 * ha_master, which feeds it acks). */
ha_sync_t *ha_sync_new(struct event_base *base, int64_t fallbehind_max);

/* Answers every parked waiter HA_SYNC_SHUTDOWN, then frees. Loop thread. */
void ha_sync_free(ha_sync_t *sync);

/* Waits for an ack at or past end_offset until deadline_ms (rmq_mono_ms
 * clock). Returns HA_SYNC_OK or HA_SYNC_SLAVE_NOT_AVAILABLE at once (cb not
 * called), or HA_SYNC_PENDING: cb(status, arg) runs exactly once later.
 * A deadline already past is answered on the next timer pass. Loop thread. */
ha_sync_status_t ha_sync_wait(ha_sync_t *sync, int64_t end_offset, int64_t deadline_ms,
                              ha_sync_fn cb, void *arg);

/* The ack source: n_slaves connected (streaming), the best acked offset among
 * them (-1 if none). Releases every waiter at or below best_acked. Waiters
 * keep waiting while no slave is connected (one may come back before their
 * deadline). Loop thread; callbacks run from inside this call. */
void ha_sync_update(ha_sync_t *sync, int n_slaves, int64_t best_acked);

/* Parked waiters. */
size_t ha_sync_pending(const ha_sync_t *sync);

#endif
