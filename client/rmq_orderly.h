/* rmq_orderly.h: ordered consumption for the push consumer (opts.orderly):
 * each owned queue is consumed by at most one thread at a time, in offset
 * order, and only while this client holds the queue's broker-side lock
 * (LOCK_BATCH_MQ, renewed every lock_renew_ms; trusted locally for 30 s
 * after the last successful renewal). A reconsume-later suspends the queue
 * for suspend_ms and retries the same message: nothing is skipped. A
 * dropped queue finishes the message in flight, commits its offset and
 * only then releases the lock (UNLOCK_BATCH_MQ), so the next owner starts
 * where this one stopped.
 *
 * The push consumer keeps its queue state opaque: it passes a handle (q)
 * and the operations below. Threads: functions say where they run. */
#ifndef RMQ_ORDERLY_H
#define RMQ_ORDERLY_H

#include <stddef.h>
#include <stdint.h>

#include "rmq/rmq.h"
#include "rmq_client_int.h"

typedef struct rmq_orderly rmq_orderly_t;
typedef struct rmq_oq rmq_oq_t;

/* What the orderly layer needs from the push consumer's queue state. */
typedef struct rmq_orderly_ops {
    void (*ref)(void *q);                               /* any thread */
    void (*unref)(void *q);                             /* any thread */
    void (*done)(void *q, int64_t offset, size_t bytes); /* consumed; any thread */
    void (*commit)(void *q);                            /* store the offset; loop thread */
    const char *(*master)(void *q);                     /* broker master address or NULL; loop */
} rmq_orderly_ops_t;

/* Creates the orderly layer with its own threads consume threads (not
 * started). The caller owns it (rmq_orderly_free). NULL on ENOMEM. */
rmq_orderly_t *rmq_orderly_new(rmq_instance_t *in, const char *group, rmq_consume_fn fn, void *arg,
                               int threads, int suspend_ms, int lock_renew_ms, const rmq_orderly_ops_t *ops);
/* Starts the lock renewal timer. Loop thread. */
void rmq_orderly_start(rmq_orderly_t *ord);
/* Shutdown, user thread: stops the timer and the consume threads (the
 * message in flight finishes first). */
void rmq_orderly_stop(rmq_orderly_t *ord);
/* Shutdown, user thread, after the final offsets are stored: releases
 * every lock held (waits for the brokers' answers). */
void rmq_orderly_unlock_all(rmq_orderly_t *ord);
/* After rmq_instance_stop. NULL is fine. */
void rmq_orderly_free(rmq_orderly_t *ord);

/* A newly owned queue (q gets a reference until the queue is finished
 * after rmq_oq_drop). Asks for its lock at once. Loop thread. */
rmq_oq_t *rmq_oq_new(rmq_orderly_t *ord, void *q, const char *topic, const char *broker_name, int32_t queue_id);
/* 1 if the queue's lock is held and fresh; else 0 and a lock request
 * follows shortly. Loop thread. */
int rmq_oq_locked(rmq_oq_t *oq);
/* Queues pulled messages (takes them; msgs itself stays the caller's).
 * Loop thread. */
void rmq_oq_add(rmq_oq_t *oq, rmq_message_ext_t **msgs, size_t n);
/* The queue is no longer owned: after the message in flight, commit,
 * unlock and free. oq must not be used afterwards. Loop thread. */
void rmq_oq_drop(rmq_oq_t *oq);

#endif
