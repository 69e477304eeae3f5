/* bk_append.h: the one append path. Every message the broker stores (a
 * send, a send-back, a DLQ move, a delayed message reaching its time, a
 * committed transaction, a resend) goes through bk_append_put, which
 * stores it, starts the HA push, and answers once it is as durable as
 * configured: on disk under SYNC_FLUSH, acknowledged by a slave under
 * SYNC_MASTER. Store and HA outcomes become one neutral status with its
 * reason. bk_append_writable is the one "may this broker take writes"
 * check. Loop thread only. */
#ifndef BK_APPEND_H
#define BK_APPEND_H

#include <stddef.h>
#include <stdint.h>

#include "bk_status.h"
#include "ha_sync.h"
#include "st_store.h"

typedef struct bk_append bk_append_t;

typedef struct bk_append_config {
    st_store_t *store;               /* borrowed */
    ha_sync_t *sync;                 /* SYNC_MASTER waiters (borrowed), NULL otherwise */
    int sync_flush;                  /* flushDiskType=SYNC_FLUSH */
    int64_t sync_flush_timeout_ms;   /* syncFlushTimeout: bounds the slave wait */
    int is_slave;                    /* brokerRole=SLAVE */
    int64_t permission;              /* brokerPermission: bit 2 = writable */
    const char *addr;                /* this broker, for reasons (borrowed) */
    void (*appended)(void *arg);     /* after each stored append: push to slaves */
    void *appended_arg;
} bk_append_config_t;

/* The outcome of one append. put holds the store's result (ids, offsets)
 * whenever the messages reached the log, even if a wait then failed. */
typedef struct bk_append_out {
    bk_result_t r;
    st_put_result_t put;
    int stored;                      /* the log holds the messages */
    int64_t repl_end_us;             /* rmq_mono_us when a parked slave wait ended; 0 if none */
} bk_append_out_t;

/* Final outcome of a pending append. Loop thread. */
typedef void (*bk_append_fn)(const bk_append_out_t *out, void *arg);

/* Creates the append path over cfg (copied; pointers borrowed). NULL when
 * out of memory. */
bk_append_t *bk_append_new(const bk_append_config_t *cfg);

/* Frees; call after the store and HA are closed (they end every wait). */
void bk_append_free(bk_append_t *ap);

/* The broker is stopping: refuse further writes. */
void bk_append_stop(bk_append_t *ap);

/* The broker's role changed at runtime (controller mode): is_slave refuses
 * writes from now on; sync (may be NULL) is the waiter set later appends
 * wait on (waits already parked end on the set they started on). */
void bk_append_set_role(bk_append_t *ap, int is_slave, ha_sync_t *sync);

/* Controller mode's self-fencing: from rmq_mono_ms() == until_ms on, writes
 * are refused and appends still waiting are not acknowledged, until a later
 * call moves until_ms (0: no lease, the default). */
void bk_append_set_lease(bk_append_t *ap, int64_t until_ms);

/* Controller mode, SYNC_MASTER (RocketMQ's minInSyncReplicas): writes are
 * refused IN_SYNC_REPLICAS_NOT_ENOUGH while have < min (0, 0: never, the
 * default). */
void bk_append_set_in_sync(bk_append_t *ap, int64_t have, int64_t min);

/* 1 if this broker may take writes now; else 0 with r set (slave role,
 * lapsed controller lease, too few in-sync replicas, shutdown,
 * brokerPermission, store disk or write state). */
int bk_append_writable(const bk_append_t *ap, bk_result_t *r);

/* Stores msgs[0..n) (n > 1: a batch on one topic and queue) after the
 * writable check, then waits as configured. Returns 1 when the outcome is
 * final now (in *out; cb not called), or 0 when it is pending: cb(out, arg)
 * runs exactly once later on the loop thread (at the latest when the store
 * or HA is closed). msgs are borrowed for the call. */
int bk_append_put(bk_append_t *ap, const st_msg_t *msgs, size_t n, bk_append_out_t *out, bk_append_fn cb,
                  void *arg);

/* Appends waiting for the disk or a slave. */
size_t bk_append_waiting(const bk_append_t *ap);

#endif
