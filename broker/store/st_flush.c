/* st_flush.c: the flush thread and SYNC_FLUSH group commit.
 *
 * The flush thread msyncs dirty commit-log segments (ASYNC_FLUSH: every
 * flush_interval_ms once flush_least_pages pages are dirty, or everything
 * every flush_thorough_interval_ms; SYNC_FLUSH: as soon as a waiter asks),
 * publishes the durable offset and posts it to the loop (coalesced: one
 * post in flight at a time). About once a second it also msyncs the consume
 * queues and writes the checkpoint. A failed sync latches write_error and
 * posts it; nothing past the last good sync is ever reported durable.
 *
 * With the transient store pool (st_pool.h) the loop writes each append to
 * the file as it publishes it, and a commit-log sync is an fdatasync of
 * what the file holds: a SYNC_FLUSH waiter is released only once both
 * cover it.
 *
 * Group commit: a sync waits (gather_waiters) until as many waiters have
 * queued since the last sync as queued before it, for at most that sync's
 * duration, so the senders the last sync released join this one instead
 * of 64 senders splitting into two halves that take turns.
 *
 * Waiters live on the loop thread in a list ordered by end offset; one
 * release pass completes every waiter the durable offset covers. One
 * libevent timer, armed for the earliest deadline, times them out. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "rmq_log.h"
#include "rmq_time.h"
#include "st_checkpoint.h"
#include "st_internal.h"

#define ST_PAGE 4096
#define CHECKPOINT_INTERVAL_MS 1000
#define GATHER_MAX_US 20000          /* longest wait for a group commit's waiters */

void st_flush_init(st_store_t *st)
{
    st_flush_t *fl = &st->flush;

    memset(fl, 0, sizeof(*fl));
    pthread_mutex_init(&fl->mu, NULL);
    pthread_cond_init(&fl->cv, NULL);
    atomic_init(&fl->requested, 0);
    atomic_init(&fl->durable, 0);
    atomic_init(&fl->post_pending, 0);
    atomic_init(&fl->gather_until, INT64_MAX);
}

/* Syncs and releases segs. */
static rmq_err_t flush_segments(st_store_t *st, st_segment_t **segs, size_t n)
{
    rmq_err_t rc = RMQ_OK;

    for (size_t i = 0; i < n; i++) {
        if (rc == RMQ_OK)
            rc = st_segment_flush(segs[i], st->hooks.sync, st->hooks.sync_arg);
        st_segment_unref(segs[i]);
    }
    free(segs);
    return rc;
}

/* Takes references to the commit-log segments with unflushed bytes. */
static rmq_err_t collect_commitlog(st_store_t *st, st_segment_t ***out, size_t *n)
{
    st_commitlog_t *cl = &st->cl;
    size_t cap = 0;

    *out = NULL;
    *n = 0;
    pthread_mutex_lock(cl->lock);
    for (size_t i = cl->nseg; i-- > 0;) {
        st_segment_t *seg = cl->segs[i];
        int64_t wrote = atomic_load(&seg->wrote), flushed = atomic_load(&seg->flushed);

        if (flushed >= wrote) {
            if (wrote == seg->size)
                break;
            continue;
        }
        if (*n == cap) {
            st_segment_t **p = realloc(*out, (cap = cap ? cap * 2 : 4) * sizeof(*p));

            if (!p) {
                pthread_mutex_unlock(cl->lock);
                return RMQ_ENOMEM;
            }
            *out = p;
        }
        st_segment_ref(seg);
        (*out)[(*n)++] = seg;
    }
    pthread_mutex_unlock(cl->lock);
    return RMQ_OK;
}

/* Loop thread: a posted durable offset arrived. */
static void on_durable(st_store_t *st, void *arg)
{
    (void)arg;
    if (!st)
        return;
    atomic_store(&st->flush.post_pending, 0);
    st_flush_release(st);
}

/* Loop thread: the flush thread latched a write error. */
static void on_write_error(st_store_t *st, void *arg)
{
    (void)arg;
    if (!st)
        return;
    LOG_ERROR("store %s is read-only after a failed disk write or sync", st->root_dir);
    st_flush_fail_all(st, RMQ_EIO);
}

void st_flush_write_failed(st_store_t *st)
{
    if (atomic_exchange(&st->write_error, 1) == 0)
        on_write_error(st, NULL);
}

/* Latches the store read-only (once) and tells the loop. Flush thread. */
static void flush_latch(st_store_t *st, int post)
{
    if (atomic_exchange(&st->write_error, 1) == 0 && post)
        st_link_post(st->link, on_write_error, NULL);
}

/* Flushes the commit log up to the published write position; counts the
 * passes that synced something, and their time (flush metrics). */
static rmq_err_t flush_commitlog(st_store_t *st)
{
    int64_t target = atomic_load_explicit(&st->cl.published, memory_order_acquire);
    int64_t started_us = rmq_mono_us();
    st_segment_t **segs;
    size_t n;
    rmq_err_t rc = collect_commitlog(st, &segs, &n);

    if (rc == RMQ_OK && n > 0) {
        rc = flush_segments(st, segs, n);
        st->flush.last_sync_us = rmq_mono_us() - started_us;
        atomic_fetch_add(&st->flush.syncs, 1);
        atomic_fetch_add(&st->flush.sync_us, st->flush.last_sync_us);
    }
    if (rc == RMQ_OK && target > atomic_load(&st->flush.durable))
        atomic_store(&st->flush.durable, target);
    return rc;
}

/* Flushes consume queues and the log up to the dispatched offset, then
 * records that offset in the checkpoint. */
static rmq_err_t checkpoint_pass(st_store_t *st)
{
    int64_t dispatched = atomic_load(&st->dispatched);
    st_checkpoint_t cp = { .cl_offset = dispatched, .store_ts = rmq_wall_ms() };
    st_segment_t **segs;
    size_t n;
    rmq_err_t rc = st_cq_table_collect_dirty(&st->cqs, &segs, &n);

    if (rc == RMQ_OK)
        rc = flush_segments(st, segs, n);
    if (rc == RMQ_OK)
        rc = flush_commitlog(st);
    if (rc != RMQ_OK)
        return rc;
    pthread_mutex_lock(&st->maps_lock);
    cp.cl_min = st_commitlog_min(&st->cl);
    pthread_mutex_unlock(&st->maps_lock);
    rc = st_checkpoint_write(st->checkpoint_path, &cp);
    if (rc == RMQ_OK)
        st->flush.checkpointed = dispatched;
    else if (rc == RMQ_ENOSPC) {
        /* the log and the queues are synced; only the recovery start point
         * stays older (a rescan from it is safe). A full disk clears when
         * space is freed, so it must not latch the store read-only. */
        LOG_ERROR_RL("checkpoint %s not updated: disk full; retrying", st->checkpoint_path);
        rc = RMQ_OK;
    }
    return rc;
}

rmq_err_t st_flush_all(st_store_t *st)
{
    rmq_err_t rc;

    if (atomic_load(&st->write_error))
        return RMQ_EIO;
    rc = checkpoint_pass(st);
    if (rc != RMQ_OK)
        flush_latch(st, 0);
    return rc;
}

/* Posts the durable offset to the loop unless a post is already queued. */
static void post_durable(st_store_t *st)
{
    if (atomic_exchange(&st->flush.post_pending, 1) == 0 &&
        st_link_post(st->link, on_durable, NULL) != RMQ_OK)
        atomic_store(&st->flush.post_pending, 0);
}

/* The CLOCK_REALTIME time us from now, for pthread_cond_timedwait. */
static struct timespec deadline_in_us(int64_t us)
{
    struct timespec ts;

    clock_gettime(CLOCK_REALTIME, &ts);
    ts.tv_sec += (time_t)(us / 1000000);
    ts.tv_nsec += (long)(us % 1000000) * 1000L;
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

/* Waits for a request, a stop or the interval; returns 1 to stop. */
static int flush_wait(st_flush_t *fl, int interval_ms)
{
    struct timespec ts = deadline_in_us((int64_t)interval_ms * 1000);
    int stop;

    pthread_mutex_lock(&fl->mu);
    while (!fl->stop && !atomic_load(&fl->requested))
        if (pthread_cond_timedwait(&fl->cv, &fl->mu, &ts) == ETIMEDOUT)
            break;
    stop = fl->stop;
    pthread_mutex_unlock(&fl->mu);
    return stop;
}

/* Decides whether this pass syncs the commit log. */
static int flush_due(st_store_t *st, int requested, int64_t now)
{
    const st_store_config_t *c = &st->cfg;
    int64_t published = atomic_load(&st->cl.published);
    int64_t durable = atomic_load(&st->flush.durable);
    int64_t dirty_pages = published / ST_PAGE - durable / ST_PAGE;

    if (published <= durable)
        return 0;
    if (requested || c->flush_type == ST_SYNC_FLUSH)
        return 1;
    if (now - st->flush.last_thorough_ms >= c->flush_thorough_interval_ms)
        return 1;
    return dirty_pages >= c->flush_least_pages;
}

/* Before a commit-log sync with waiters queued: waits, at most as long as
 * the last sync took (GATHER_MAX_US at most), until as many waiters have
 * queued since the last sync started as in the interval before it, then
 * records this sync's start. Flush thread. */
static void gather_waiters(st_store_t *st)
{
    st_flush_t *fl = &st->flush;
    int64_t target = fl->waits_synced + fl->last_group, queued = atomic_load(&fl->waits);

    if (queued > fl->waits_synced && queued < target) {
        struct timespec ts = deadline_in_us(fl->last_sync_us < GATHER_MAX_US ? fl->last_sync_us : GATHER_MAX_US);

        atomic_store(&fl->gather_until, target);
        pthread_mutex_lock(&fl->mu);
        while (!fl->stop && atomic_load(&fl->waits) < target)
            if (pthread_cond_timedwait(&fl->cv, &fl->mu, &ts) == ETIMEDOUT)
                break;
        pthread_mutex_unlock(&fl->mu);
        atomic_store(&fl->gather_until, INT64_MAX);
        queued = atomic_load(&fl->waits);
    }
    fl->last_group = queued - fl->waits_synced;
    fl->waits_synced = queued;
}

/* One pass of the flush thread. */
static void flush_pass(st_store_t *st)
{
    st_flush_t *fl = &st->flush;
    int requested = atomic_exchange(&fl->requested, 0);
    int64_t now = rmq_mono_ms();
    int64_t before = atomic_load(&fl->durable);

    if (flush_due(st, requested, now)) {
        gather_waiters(st);
        if (flush_commitlog(st) != RMQ_OK) {
            flush_latch(st, 1);
            return;
        }
        fl->last_thorough_ms = now;
    }
    if (now - fl->last_checkpoint_ms >= CHECKPOINT_INTERVAL_MS &&
        atomic_load(&st->dispatched) != fl->checkpointed) {
        fl->last_checkpoint_ms = now;
        if (checkpoint_pass(st) != RMQ_OK) {
            flush_latch(st, 1);
            return;
        }
    }
    if (atomic_load(&fl->durable) != before)
        post_durable(st);
}

static void *flush_main(void *arg)
{
    st_store_t *st = arg;
    int interval = st->cfg.flush_interval_ms > 0 ? st->cfg.flush_interval_ms : 500;

    st->flush.last_thorough_ms = st->flush.last_checkpoint_ms = rmq_mono_ms();
    while (!flush_wait(&st->flush, interval))
        if (!atomic_load(&st->write_error))
            flush_pass(st);
    return NULL;
}

/* Loop thread: times out expired waiters and re-arms for the next. */
static void timer_cb(evutil_socket_t fd, short what, void *arg);

static void arm_timer(st_store_t *st, int64_t deadline)
{
    st_flush_t *fl = &st->flush;
    int64_t delay = deadline - rmq_mono_ms();
    struct timeval tv;

    if (!fl->timer)
        return;
    if (evtimer_pending(fl->timer, NULL) && fl->timer_deadline_ms <= deadline)
        return;
    if (delay < 0)
        delay = 0;
    tv.tv_sec = delay / 1000;
    tv.tv_usec = (delay % 1000) * 1000;
    fl->timer_deadline_ms = deadline;
    evtimer_add(fl->timer, &tv);
}

static void timer_cb(evutil_socket_t fd, short what, void *arg)
{
    st_store_t *st = arg;
    st_flush_t *fl = &st->flush;
    int64_t now = rmq_mono_ms(), next = INT64_MAX;
    st_waiter_t *expired = NULL, **pp = &fl->head, *prev = NULL;

    (void)fd;
    (void)what;
    while (*pp) {
        st_waiter_t *w = *pp;

        if (w->deadline_ms <= now) {
            *pp = w->next;
            w->next = expired;
            expired = w;
            continue;
        }
        if (w->deadline_ms < next)
            next = w->deadline_ms;
        prev = w;
        pp = &w->next;
    }
    fl->tail = prev;
    if (next != INT64_MAX)
        arm_timer(st, next);
    while (expired) {
        st_waiter_t *w = expired;

        expired = w->next;
        w->next = fl->free_list;
        fl->free_list = w;
        w->cb(RMQ_ETIMEDOUT, w->arg);
    }
}

/* Inserts w keeping the list ordered by end offset (usually at the tail). */
static void waiter_insert(st_flush_t *fl, st_waiter_t *w)
{
    st_waiter_t **pp = &fl->head;

    w->next = NULL;
    if (!fl->head || fl->tail->end <= w->end) {
        if (fl->tail)
            fl->tail->next = w;
        else
            fl->head = w;
        fl->tail = w;
        return;
    }
    while ((*pp)->end <= w->end)
        pp = &(*pp)->next;
    w->next = *pp;
    *pp = w;
}

/* Counts a queued waiter; wakes the flush thread when it completes the
 * group gather_waiters waits for. Loop thread. */
static void waiter_queued(st_flush_t *fl)
{
    if (atomic_fetch_add(&fl->waits, 1) + 1 != atomic_load(&fl->gather_until))
        return;
    pthread_mutex_lock(&fl->mu);
    pthread_cond_signal(&fl->cv);
    pthread_mutex_unlock(&fl->mu);
}

rmq_err_t st_flush_wait(st_store_t *st, int64_t end, st_flush_fn cb, void *arg)
{
    st_flush_t *fl = &st->flush;
    st_waiter_t *w;

    if (atomic_load(&st->write_error)) {
        cb(RMQ_EIO, arg);
        return RMQ_OK;
    }
    if (atomic_load(&fl->durable) >= end) {
        cb(RMQ_OK, arg);
        return RMQ_OK;
    }
    w = fl->free_list;
    if (w)
        fl->free_list = w->next;
    else if (!(w = malloc(sizeof(*w))))
        return RMQ_ENOMEM;
    w->end = end;
    w->deadline_ms = rmq_mono_ms() + st->cfg.sync_flush_timeout_ms;
    w->cb = cb;
    w->arg = arg;
    waiter_insert(fl, w);
    arm_timer(st, w->deadline_ms);
    waiter_queued(fl);
    st_flush_request(st);
    return RMQ_OK;
}

void st_flush_request(st_store_t *st)
{
    st_flush_t *fl = &st->flush;

    if (!fl->running || atomic_exchange(&fl->requested, 1))
        return;
    pthread_mutex_lock(&fl->mu);
    pthread_cond_signal(&fl->cv);
    pthread_mutex_unlock(&fl->mu);
}

/* Pops the head waiter onto the free list and returns it. */
static st_waiter_t *waiter_pop(st_flush_t *fl)
{
    st_waiter_t *w = fl->head;

    fl->head = w->next;
    if (!fl->head)
        fl->tail = NULL;
    w->next = fl->free_list;
    fl->free_list = w;
    return w;
}

void st_flush_release(st_store_t *st)
{
    st_flush_t *fl = &st->flush;
    int64_t durable = atomic_load(&fl->durable);

    st_commitlog_reclaim(&st->cl);
    while (fl->head && fl->head->end <= durable) {
        st_waiter_t *w = waiter_pop(fl);

        w->cb(RMQ_OK, w->arg);
    }
}

void st_flush_fail_all(st_store_t *st, rmq_err_t err)
{
    st_flush_t *fl = &st->flush;

    while (fl->head) {
        st_waiter_t *w = waiter_pop(fl);

        w->cb(err, w->arg);
    }
}

rmq_err_t st_flush_start(st_store_t *st)
{
    st_flush_t *fl = &st->flush;

    if (st->base && !fl->timer && !(fl->timer = evtimer_new(st->base, timer_cb, st)))
        return RMQ_ENOMEM;
    fl->stop = 0;
    if (pthread_create(&fl->thread, NULL, flush_main, st) != 0)
        return RMQ_ENOMEM;
    fl->running = 1;
    return RMQ_OK;
}

void st_flush_stop(st_store_t *st)
{
    st_flush_t *fl = &st->flush;

    if (!fl->running)
        return;
    pthread_mutex_lock(&fl->mu);
    fl->stop = 1;
    pthread_cond_signal(&fl->cv);
    pthread_mutex_unlock(&fl->mu);
    pthread_join(fl->thread, NULL);
    fl->running = 0;
}

void st_flush_deinit(st_store_t *st)
{
    st_flush_t *fl = &st->flush;

    if (fl->timer)
        event_free(fl->timer);
    while (fl->free_list) {
        st_waiter_t *w = fl->free_list;

        fl->free_list = w->next;
        free(w);
    }
    pthread_cond_destroy(&fl->cv);
    pthread_mutex_destroy(&fl->mu);
}
