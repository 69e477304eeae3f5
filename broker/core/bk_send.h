/* bk_send.h: what every front-end's send shares after decoding: the
 * back-pressure of sendQueueCapacity (sends queued in a front plus sends
 * waiting for the append path, all fronts together), the
 * waitTimeMillsInSendQueue rule for a front's queue, and the pool of sends
 * waiting for the append path (SYNC_FLUSH, SYNC_MASTER) that holds the
 * connection and keeps the front's reply address. A front decodes, calls
 * bk_send_store, and encodes the outcome in its answer callback. Loop
 * thread only. */
#ifndef BK_SEND_H
#define BK_SEND_H

#include <stddef.h>
#include <stdint.h>

#include "bk_append.h"
#include "bk_batch.h"
#include "bk_counts.h"
#include "bk_produce.h"
#include "bk_stats.h"

/* Room for a front's reply address, copied into a waiting send. */
#define BK_SEND_TO_MAX 32

typedef struct bk_send bk_send_t;

/* A front's side of a send: how it answers and holds its connection. */
typedef struct bk_send_front {
    /* Answers the send on conn at reply address to with out; ids are a
     * batch's comma-joined ids or the call's, or NULL for out->put.msg_id;
     * recall is a stored timer message's recall handle (bk_recall.h), or
     * NULL. */
    void (*answer)(void *arg, void *conn, const void *to, const bk_append_out_t *out, const char *ids,
                   const char *recall, int32_t queue_id);
    void (*hold)(void *conn);        /* while the send waits */
    void (*release)(void *conn);
} bk_send_front_t;

typedef struct bk_send_config {
    bk_produce_t *produce;           /* borrowed */
    const st_store_t *store;         /* a batch's ids (borrowed) */
    bk_stats_t *stats;               /* BK_STAT_PUT, BK_STAT_BUSY (borrowed) */
    size_t capacity;                 /* sendQueueCapacity */
    int64_t wait_ms;                 /* waitTimeMillsInSendQueue */
    const bk_counts_t *counts;       /* told every send the log took (borrowed; NULL: none) */
    const char *broker_name;         /* names the broker in recall handles (borrowed) */
} bk_send_config_t;

/* One checked send as a front hands it over. */
typedef struct bk_send_call {
    const bk_send_front_t *front;
    void *front_arg;
    void *conn;
    const void *to;                  /* reply address, to_len <= BK_SEND_TO_MAX */
    size_t to_len;
    bk_batch_t *batch;               /* n > 1: the scratch msgs are in (for ids) */
    size_t body_len;                 /* the request body */
    const char *ids;                 /* the id to answer with (a recall's), NULL: the store's */
} bk_send_call_t;

/* NULL when out of memory. cfg is copied; its pointers are borrowed. */
bk_send_t *bk_send_new(const bk_send_config_t *cfg);
/* Releases the connections of sends still waiting, without answers. */
void bk_send_free(bk_send_t *s);

/* Sends queued in a front or waiting for the append path. */
size_t bk_send_waiting(const bk_send_t *s);
size_t bk_send_capacity(const bk_send_t *s);
int64_t bk_send_wait_ms(const bk_send_t *s);

/* 1 (counted BK_STAT_BUSY) when sendQueueCapacity is full, and the front
 * answers SYSTEM_BUSY; 0 when a send may enter. */
int bk_send_full(bk_send_t *s);
/* A front's queue took a send, or gave one back (counted in waiting). */
void bk_send_queued(bk_send_t *s);
void bk_send_dequeued(bk_send_t *s);
/* 1 (counted BK_STAT_BUSY) when a send waited longer than
 * waitTimeMillsInSendQueue in its front's queue: answered SYSTEM_BUSY. */
int bk_send_too_late(bk_send_t *s, int64_t waited_ms);

/* Stores msgs[0..n) of a checked send (bk_produce_store) and has
 * call->front answer it: now, or once the append is durable as configured,
 * meanwhile holding the connection and a copy of the reply address in a
 * pooled waiter. Answers "out of memory" as BK_SYSTEM_ERROR itself. */
void bk_send_store(bk_send_t *s, const bk_send_call_t *call, const bk_produce_target_t *tgt, st_msg_t *msgs,
                   size_t n);

#endif
