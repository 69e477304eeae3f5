/* bk_append.c: the one append path (see bk_append.h). A stored append that
 * must wait takes a pooled waiter; it counts the waits still running (disk
 * sync, slave ack) and keeps the first failure, a replication failure
 * winning over a disk one (a slave that never got the message is the
 * stronger reason). The steady state allocates nothing. */
#include "bk_append.h"

#include <stdlib.h>
#include <string.h>

#include "rmq_time.h"

#define PERM_WRITE 2                 /* brokerPermission bit (RocketMQ PermName) */

typedef struct append_waiter {
    struct append_waiter *next;      /* spare list */
    bk_append_t *ap;
    bk_append_fn cb;
    void *arg;
    int pending;                     /* waits still running */
    bk_append_out_t out;
} append_waiter_t;

struct bk_append {
    bk_append_config_t cfg;
    append_waiter_t *spare;
    size_t n_waiting;
    int stopping;
    int64_t lease_until_ms;          /* 0: no controller lease */
    int64_t in_sync, min_in_sync;    /* the sync state set's size, minInSyncReplicas */
};

bk_append_t *bk_append_new(const bk_append_config_t *cfg)
{
    bk_append_t *ap = calloc(1, sizeof(*ap));
    if (ap)
        ap->cfg = *cfg;
    return ap;
}

void bk_append_free(bk_append_t *ap)
{
    if (!ap)
        return;
    while (ap->spare) {
        append_waiter_t *w = ap->spare;
        ap->spare = w->next;
        free(w);
    }
    free(ap);
}

void bk_append_stop(bk_append_t *ap)
{
    ap->stopping = 1;
}

size_t bk_append_waiting(const bk_append_t *ap)
{
    return ap->n_waiting;
}

/* Maps a store refusal onto r. */
static void put_status(bk_result_t *r, st_put_status_t st, const char *why)
{
    static const bk_status_t map[] = {
        [ST_PUT_OK] = BK_OK,
        [ST_PUT_MESSAGE_ILLEGAL] = BK_MESSAGE_ILLEGAL,
        [ST_PUT_DISK_FULL] = BK_DISK_FULL,
        [ST_PUT_WRITE_ERROR] = BK_WRITE_ERROR,
        [ST_PUT_NOT_WRITABLE_ROLE] = BK_NOT_MASTER,
        [ST_PUT_SHUTDOWN] = BK_SHUTDOWN,
        [ST_PUT_CREATE_FILE_FAILED] = BK_WRITE_ERROR,
    };
    bk_status_t s = (unsigned)st < sizeof(map) / sizeof(map[0]) ? map[st] : BK_WRITE_ERROR;
    bk_result_set(r, s, "store refused the message: %s", why ? why : "unknown");
}

void bk_append_set_role(bk_append_t *ap, int is_slave, ha_sync_t *sync)
{
    ap->cfg.is_slave = is_slave;
    ap->cfg.sync = sync;
}

void bk_append_set_lease(bk_append_t *ap, int64_t until_ms)
{
    ap->lease_until_ms = until_ms;
}

void bk_append_set_in_sync(bk_append_t *ap, int64_t have, int64_t min)
{
    ap->in_sync = have;
    ap->min_in_sync = min;
}

/* 1 (r set) when the controller lease has lapsed: this master may have been replaced. */
static int lease_lapsed(const bk_append_t *ap, bk_result_t *r)
{
    if (!ap->lease_until_ms || rmq_mono_ms() < ap->lease_until_ms)
        return 0;
    bk_result_set(r, BK_NOT_MASTER, "broker %s is fenced: no controller confirmed it as master within "
                  "controllerHeartBeatTimeoutMills (less a margin); it may have been replaced", ap->cfg.addr);
    return 1;
}

int bk_append_writable(const bk_append_t *ap, bk_result_t *r)
{
    const char *why = NULL;
    st_put_status_t st;
    if (ap->stopping)
        return bk_result_set(r, BK_SHUTDOWN, "broker is shutting down"), 0;
    if (ap->cfg.is_slave)
        return bk_result_set(r, BK_NOT_MASTER, "broker %s is a slave; send to its master", ap->cfg.addr), 0;
    if (lease_lapsed(ap, r))
        return 0;
    if (ap->in_sync < ap->min_in_sync)
        return bk_result_set(r, BK_IN_SYNC_REPLICAS_NOT_ENOUGH,
                             "in-sync replicas not enough: the sync state set of broker %s has %lld, "
                             "minInSyncReplicas is %lld", ap->cfg.addr, (long long)ap->in_sync,
                             (long long)ap->min_in_sync), 0;
    if (!(ap->cfg.permission & PERM_WRITE))
        return bk_result_set(r, BK_NO_PERMISSION, "broker %s is not writable (brokerPermission=%lld)", ap->cfg.addr,
                             (long long)ap->cfg.permission), 0;
    if ((st = st_store_write_refusal(ap->cfg.store, &why)) != ST_PUT_OK)
        return put_status(r, st, why), 0;
    return 1;
}

/* Records a failure; a replication failure (repl) wins over a disk one. */
static void waiter_fail(bk_append_out_t *out, bk_status_t st, int repl, const char *why)
{
    if (out->r.status != BK_OK && !repl)
        return;
    bk_result_set(&out->r, st, "%s", why);
}

/* Maps a replication outcome onto out (HA_SYNC_OK and PENDING change nothing). */
static void repl_status(bk_append_out_t *out, ha_sync_status_t st)
{
    if (st == HA_SYNC_SLAVE_NOT_AVAILABLE)
        waiter_fail(out, BK_SLAVE_NOT_AVAILABLE, 1,
                    "no slave connected, or the slave is more than haSlaveFallbehindMax behind");
    else if (st == HA_SYNC_FLUSH_SLAVE_TIMEOUT)
        waiter_fail(out, BK_FLUSH_SLAVE_TIMEOUT, 1, "no slave acknowledged within syncFlushTimeout");
    else if (st == HA_SYNC_SHUTDOWN)
        waiter_fail(out, BK_SHUTDOWN, 1, "broker stopped before a slave acknowledged");
    else if (st == HA_SYNC_NOMEM)
        waiter_fail(out, BK_SYSTEM_ERROR, 1, "out of memory waiting for a slave");
}

/* Maps a disk-sync outcome onto out. */
static void flush_status(bk_append_out_t *out, rmq_err_t err)
{
    if (err == RMQ_ETIMEDOUT)
        waiter_fail(out, BK_FLUSH_DISK_TIMEOUT, 0, "disk sync did not finish within syncFlushTimeout");
    else if (err == RMQ_ESHUTDOWN)
        waiter_fail(out, BK_SHUTDOWN, 0, "broker stopped before the disk sync finished");
    else if (err != RMQ_OK) {
        char why[96];
        snprintf(why, sizeof(why), "disk sync failed: %s", rmq_strerror(err));
        waiter_fail(out, BK_WRITE_ERROR, 0, why);
    }
}

/* Ends one wait of w; the last one calls back and recycles w. */
static void waiter_done(append_waiter_t *w)
{
    if (--w->pending > 0)
        return;
    bk_append_t *ap = w->ap;
    ap->n_waiting--;
    w->next = ap->spare;
    ap->spare = w;
    if (w->out.r.status == BK_OK)
        lease_lapsed(ap, &w->out.r);
    w->cb(&w->out, w->arg);
}

/* Store callback (loop thread): the disk sync this append waited for ended. */
static void append_flushed(rmq_err_t err, void *arg)
{
    append_waiter_t *w = arg;
    flush_status(&w->out, err);
    waiter_done(w);
}

/* HA callback (loop thread): the slave wait of this append ended. */
static void append_replicated(ha_sync_status_t st, void *arg)
{
    append_waiter_t *w = arg;
    w->out.repl_end_us = rmq_mono_us();
    repl_status(&w->out, st);
    waiter_done(w);
}

static append_waiter_t *waiter_get(bk_append_t *ap)
{
    append_waiter_t *w = ap->spare;
    if (w)
        ap->spare = w->next;
    else if (!(w = malloc(sizeof(*w))))
        return NULL;
    memset(w, 0, sizeof(*w));
    w->ap = ap;
    ap->n_waiting++;
    return w;
}

/* Starts the slave and disk waits of a stored append; 1 when final now. */
static int append_wait(bk_append_t *ap, bk_append_out_t *out, bk_append_fn cb, void *arg)
{
    ha_sync_t *sync = ap->cfg.sync;
    if (!ap->cfg.sync_flush && !sync)
        return 1;
    append_waiter_t *w = waiter_get(ap);
    if (!w) {
        bk_result_set(&out->r, BK_SYSTEM_ERROR, "out of memory waiting for the message to be durable");
        return 1;
    }
    w->cb = cb;
    w->arg = arg;
    w->out = *out;
    w->pending = 1;                  /* released below */
    if (sync) {
        ha_sync_status_t st = ha_sync_wait(sync, out->put.end_offset, rmq_mono_ms() + ap->cfg.sync_flush_timeout_ms,
                                           append_replicated, w);
        if (st == HA_SYNC_PENDING)
            w->pending++;
        else
            repl_status(&w->out, st);
    }
    if (ap->cfg.sync_flush && w->out.r.status == BK_OK) {
        w->pending++;
        rmq_err_t rc = st_store_wait_flush(ap->cfg.store, out->put.end_offset, append_flushed, w);
        if (rc != RMQ_OK) {
            flush_status(&w->out, rc);
            w->pending--;
        }
    }
    if (w->pending > 1) {
        w->pending--;
        return 0;
    }
    *out = w->out;                   /* every wait ended at once: no callback */
    ap->n_waiting--;
    w->next = ap->spare;
    ap->spare = w;
    return 1;
}

int bk_append_put(bk_append_t *ap, const st_msg_t *msgs, size_t n, bk_append_out_t *out, bk_append_fn cb,
                  void *arg)
{
    memset(out, 0, sizeof(*out));
    if (!bk_append_writable(ap, &out->r))
        return 1;
    if (n == 1)
        st_store_put(ap->cfg.store, msgs, &out->put);
    else
        st_store_put_batch(ap->cfg.store, msgs, n, &out->put);
    if (out->put.status != ST_PUT_OK) {
        put_status(&out->r, out->put.status, out->put.why);
        return 1;
    }
    out->stored = 1;
    if (ap->cfg.appended)
        ap->cfg.appended(ap->cfg.appended_arg);
    return append_wait(ap, out, cb, arg);
}
