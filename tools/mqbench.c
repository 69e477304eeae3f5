/* mqbench.c: the producer / consumer benchmark over librmq, printing the
 * lines RocketMQ's benchmark prints (once a second and at the end) plus
 * latency percentiles from per-thread histograms merged at the end, and
 * optionally the same as JSON. Counters are per thread (relaxed atomics,
 * read only by the once-a-second snapshot); nothing on the send or consume
 * path takes a shared lock. TLS and request signing come from
 * --client-config (the servers' tls* keys plus accessKey/secretKey) or
 * else from the RMQ_* environment, as for every librmq client.
 *
 * --rate N paces the producer on absolute deadlines: slot j of the run is
 * due at start + j/N seconds, thread i of W owns slots i, i+W, i+2W... and
 * sleeps until its next one. A thread more than RATE_CATCHUP_US behind skips
 * the older slots, so a stall turns into at most that much catch-up burst.
 * Send RT is measured twice: from the send call (the "Latency RT" line, the
 * per-second lines, p*_ms) and from the slot's due time, skipped slots
 * counted at their lateness (the coordinated-omission correction: the
 * "Latency RT-due" line, p*_due_ms). */
#include <getopt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rmq/rmq.h"
#include "rmq_crc32c.h"
#include "rmq_histogram.h"
#include "rmq_security.h"
#include "rmq_time.h"

#define MAX_SLOTS 1024
/* --rate: how far behind its schedule a thread may fall before it skips slots. */
#define RATE_CATCHUP_US 20000

typedef struct bench_opts {
    int producer;
    const char *namesrv;
    const char *topic;
    const char *group;
    int threads;
    int size;
    int keys;
    long long quantity;
    int duration_s;
    int async;
    int auto_batch;
    int batch;
    int from_first;
    const char *json;
    const char *ids_file;
    int ids_detail;                 /* --ids-detail: where and when, after each id */
    int check_body;
    const char *client_config;
    long long rate;                 /* --rate: messages/s over all threads; 0: unpaced */
} bench_opts_t;

/* One thread's counters; aligned so threads never share a cache line. */
typedef struct slot {
    _Alignas(64) _Atomic uint64_t ok;
    _Atomic uint64_t send_failed;
    _Atomic uint64_t resp_failed;
    _Atomic uint64_t rt_sum_us;     /* producer: send RT; consumer: B2C in ms */
    _Atomic uint64_t s2c_sum_ms;
    _Atomic uint64_t max_rt;        /* producer: lifetime max RT ms; consumer: B2C max since print */
    _Atomic uint64_t max_s2c;
    _Atomic uint64_t max_s2c_all;   /* consumer: S2C max of the whole run */
    _Atomic uint64_t skipped;       /* producer --rate: slots skipped behind schedule */
    rmq_histogram_t hist;           /* producer: send RT; consumer: B2C (owner thread only) */
    union {                         /* owner thread only */
        rmq_histogram_t s2c_hist;   /* consumer: S2C */
        rmq_histogram_t due_hist;   /* producer --rate: send RT from the due time */
    };
} slot_t;

static slot_t *g_slots;
static _Atomic int g_nslots;
static _Atomic int g_stop;
static bench_opts_t g_o;
/* --ids-file: one message id (UNIQ_KEY) a line, of each acknowledged send
 * (producer) or each consumed message, duplicates included (consumer).
 * stdio's own lock serialises the writers; only used when asked for. */
static FILE *g_ids;

/* Writes a stored send's line to the ids file: the id, or with
 * --ids-detail, for SEND_OK only, "ID BROKER EPOCH QUEUE_ID QUEUE_OFFSET
 * OFFSET_MSG_ID WALL_MS" (EPOCH: the master epoch the broker stamped, 0 off
 * controller mode; OFFSET_MSG_ID "-" when the answer had none; WALL_MS: when
 * the answer arrived). Any thread. */
static void ids_write_send(const rmq_send_result_t *res)
{
    if (!g_o.ids_detail) {
        fprintf(g_ids, "%s\n", res->msg_id);
        return;
    }
    if (res->status != RMQ_SEND_OK)
        return;
    fprintf(g_ids, "%s %s %lld %d %lld %s %lld\n", res->msg_id, res->broker_name, (long long)res->epoch,
            (int)res->queue_id, (long long)res->queue_offset, res->offset_msg_id[0] ? res->offset_msg_id : "-",
            (long long)rmq_wall_ms());
}

/* Writes a consumed message's line: the id, or with --ids-detail
 * "ID BROKER QUEUE_ID QUEUE_OFFSET COMMITLOG_OFFSET STORE_MS WALL_MS". Any thread. */
static void ids_write_msg(const rmq_message_ext_t *msg)
{
    if (!g_o.ids_detail) {
        fprintf(g_ids, "%s\n", msg->msg_id);
        return;
    }
    fprintf(g_ids, "%s %s %d %lld %lld %lld %lld\n", msg->msg_id, msg->broker_name, (int)msg->queue_id,
            (long long)msg->queue_offset, (long long)msg->commit_log_offset, (long long)msg->store_timestamp,
            (long long)rmq_wall_ms());
}
/* --check-body (consumer): every body must hash (CRC32C) like the first one
 * consumed; a producer process sends one body throughout. */
static _Atomic int64_t g_body_crc = -1;
static _Atomic uint64_t g_body_bad;
/* --client-config: the file's settings (owning the strings) and the
 * options pointing at them; g_security is NULL without the option. */
static rmq_client_sec_config_t g_sec_cfg;
static rmq_security_opts_t g_sec_opts;
static const rmq_security_opts_t *g_security;
/* --rate's schedule: the due time of slot 0 (mono us). */
static int64_t g_rate_start_us;

static void on_signal(int sig)
{
    (void)sig;
    atomic_store(&g_stop, 1);
}

/* Takes a fresh counter slot; NULL when all are used. */
static slot_t *slot_take(void)
{
    int i = atomic_fetch_add(&g_nslots, 1);
    if (i >= MAX_SLOTS)
        return NULL;
    rmq_histogram_init(&g_slots[i].hist);
    rmq_histogram_init(&g_slots[i].s2c_hist);
    return &g_slots[i];
}

static void atomic_max(_Atomic uint64_t *m, uint64_t v)
{
    uint64_t cur = atomic_load_explicit(m, memory_order_relaxed);
    while (v > cur && !atomic_compare_exchange_weak(m, &cur, v))
        ;
}

/* Sums of every slot's counters and maxima (per-window maxima reset if asked). */
typedef struct snap {
    uint64_t ok, send_failed, resp_failed, rt_sum, s2c_sum, max_rt, max_s2c, max_s2c_all, skipped;
} snap_t;

static snap_t snap_take(int reset_max)
{
    snap_t s = {0};
    int n = atomic_load(&g_nslots);
    n = n > MAX_SLOTS ? MAX_SLOTS : n;
    for (int i = 0; i < n; i++) {
        slot_t *sl = &g_slots[i];
        s.ok += atomic_load_explicit(&sl->ok, memory_order_relaxed);
        s.send_failed += atomic_load_explicit(&sl->send_failed, memory_order_relaxed);
        s.resp_failed += atomic_load_explicit(&sl->resp_failed, memory_order_relaxed);
        s.rt_sum += atomic_load_explicit(&sl->rt_sum_us, memory_order_relaxed);
        s.s2c_sum += atomic_load_explicit(&sl->s2c_sum_ms, memory_order_relaxed);
        s.skipped += atomic_load_explicit(&sl->skipped, memory_order_relaxed);
        uint64_t m = reset_max ? atomic_exchange(&sl->max_rt, 0) : atomic_load(&sl->max_rt);
        uint64_t m2 = reset_max ? atomic_exchange(&sl->max_s2c, 0) : atomic_load(&sl->max_s2c);
        s.max_rt = m > s.max_rt ? m : s.max_rt;
        s.max_s2c = m2 > s.max_s2c ? m2 : s.max_s2c;
        uint64_t m3 = atomic_load(&sl->max_s2c_all);
        s.max_s2c_all = m3 > s.max_s2c_all ? m3 : s.max_s2c_all;
    }
    return s;
}

/* Merges every slot's RT/B2C histogram into rt and its S2C (producer: RT
 * from the due time) one into s2c (after all threads stopped). */
static void hist_merged(rmq_histogram_t *rt, rmq_histogram_t *s2c)
{
    rmq_histogram_init(rt);
    rmq_histogram_init(s2c);
    int n = atomic_load(&g_nslots);
    n = n > MAX_SLOTS ? MAX_SLOTS : n;
    for (int i = 0; i < n; i++) {
        rmq_histogram_merge(rt, &g_slots[i].hist);
        rmq_histogram_merge(s2c, &g_slots[i].s2c_hist);
    }
}

/* P50, P90, P99, P999 and Max of h, in ms. */
static void hist_points_ms(const rmq_histogram_t *h, double p[5])
{
    static const double q[4] = {0.50, 0.90, 0.99, 0.999};
    for (int i = 0; i < 4; i++)
        p[i] = (double)rmq_histogram_percentile(h, q[i]) / 1000.0;
    p[4] = (double)h->max / 1000.0;
}

/* ---- producer ----------------------------------------------------------------- */

typedef struct prod_thread {
    pthread_t tid;
    rmq_producer_t *p;
    slot_t *slot;
    const char *body;
    long long quota;                /* 0: unlimited */
    int index;                      /* --rate: owns the schedule's slots index + k * threads */
    long long k;                    /* --rate: its next slot */
} prod_thread_t;

/* Records one send's outcome of n messages taking rt_us from the send call
 * into sl; with --rate also rt_us + late_us (from the due time). */
static void prod_record(slot_t *sl, rmq_err_t err, uint64_t rt_us, uint64_t late_us, int n)
{
    if (err == RMQ_OK) {
        atomic_fetch_add_explicit(&sl->ok, (uint64_t)n, memory_order_relaxed);
        atomic_fetch_add_explicit(&sl->rt_sum_us, rt_us * (uint64_t)n, memory_order_relaxed);
        atomic_max(&sl->max_rt, rt_us / 1000);
        rmq_histogram_record(&sl->hist, rt_us);
        if (g_o.rate)
            rmq_histogram_record(&sl->due_hist, rt_us + late_us);
    } else if (err == RMQ_ESTATUS) {
        atomic_fetch_add_explicit(&sl->resp_failed, (uint64_t)n, memory_order_relaxed);
    } else {
        atomic_fetch_add_explicit(&sl->send_failed, (uint64_t)n, memory_order_relaxed);
    }
}

static _Atomic int g_failure_told;

/* Prints the first failed send's reason (a TLS failure, a missing route...);
 * later failures are only counted. Any thread. */
static void prod_tell_failure(const rmq_error_t *e)
{
    if (!atomic_exchange(&g_failure_told, 1))
        fprintf(stderr, "mqbench: send failed: %s (further failures are only counted)\n", e->text);
}

/* The slot of async completions, all of which run on the producer's loop thread. */
static slot_t *g_cb_slot;

/* When a --rate async send started and how late after its due time. */
typedef struct send_start {
    uint64_t t0_us;
    uint64_t late_us;
} send_start_t;

/* Records an async send's outcome (loop thread) started at t0_us, late_us late. */
static void prod_async_record(const rmq_send_result_t *res, uint64_t t0_us, uint64_t late_us)
{
    prod_record(g_cb_slot, res->error.err, (uint64_t)rmq_mono_us() - t0_us, late_us,
                res->count > 0 ? res->count : 1);
    if (res->error.err != RMQ_OK)
        prod_tell_failure(&res->error);
    if (g_ids && res->error.err == RMQ_OK)
        ids_write_send(res);
}

/* Async completion: loop thread. arg is the start time. */
static void prod_async_done(const rmq_send_result_t *res, void *arg)
{
    prod_async_record(res, (uint64_t)(uintptr_t)arg, 0);
}

/* Async completion of a --rate send: loop thread. arg is a malloc'd send_start_t. */
static void prod_async_paced_done(const rmq_send_result_t *res, void *arg)
{
    send_start_t st = *(send_start_t *)arg;
    free(arg);
    prod_async_record(res, st.t0_us, st.late_us);
}

/* Queues one async unit of n messages started at t0_us (late_us after its
 * due time with --rate); the outcome is recorded in the callback. */
static rmq_err_t prod_send_async(prod_thread_t *t, rmq_message_t *msgs, int n, uint64_t t0_us,
                                 uint64_t late_us)
{
    rmq_send_cb cb = prod_async_done;
    void *arg = (void *)(uintptr_t)t0_us;
    if (g_o.rate) {
        send_start_t *st = malloc(sizeof *st);
        if (!st)
            return RMQ_ENOMEM;
        *st = (send_start_t){.t0_us = t0_us, .late_us = late_us};
        cb = prod_async_paced_done;
        arg = st;
    }
    rmq_err_t err = n > 1 ? rmq_producer_send_batch_async(t->p, msgs, (size_t)n, 0, cb, arg)
                          : rmq_producer_send_async(t->p, msgs, 0, cb, arg);
    if (err != RMQ_OK && g_o.rate)
        free(arg);
    return err;
}

/* --rate: the due time of thread t's slot k. */
static int64_t rate_due(const prod_thread_t *t, long long k)
{
    double j = (double)t->index + (double)k * (double)g_o.threads;
    return g_rate_start_us + (int64_t)(j * 1e6 / (double)g_o.rate);
}

/* --rate: skips t's slots due more than RATE_CATCHUP_US before now, each
 * recorded from the due time as a send at least that late. */
static void rate_skip_late(prod_thread_t *t, int64_t now)
{
    for (int64_t due = rate_due(t, t->k); now - due > RATE_CATCHUP_US; due = rate_due(t, ++t->k)) {
        rmq_histogram_record(&t->slot->due_hist, (uint64_t)(now - due));
        atomic_fetch_add_explicit(&t->slot->skipped, 1, memory_order_relaxed);
    }
}

/* --rate: takes thread t's next n slots (after skipping those too late to
 * catch up) and sleeps until the first is due (in slices, so a stop is
 * seen); returns that due time, or -1 when the run stopped. */
static int64_t rate_pace(prod_thread_t *t, int n)
{
    rate_skip_late(t, rmq_mono_us());
    int64_t due = rate_due(t, t->k);
    t->k += n;
    for (;;) {
        if (atomic_load(&g_stop))
            return -1;
        int64_t now = rmq_mono_us();
        if (now >= due)
            return due;
        rmq_sleep_until_us(due - now > 50000 ? now + 50000 : due);
    }
}

/* Sends one unit (a message or a batch); sync records here, async in the
 * callback. With --rate it waits for the unit's due time first. */
static void prod_send_one(prod_thread_t *t, rmq_message_t *msgs, int n)
{
    int64_t due = g_o.rate ? rate_pace(t, n) : 0;
    if (due < 0)
        return;
    char keys[32];
    if (g_o.keys) {
        snprintf(keys, sizeof keys, "%lld", (long long)(rmq_wall_ms() / 1000));
        for (int i = 0; i < n; i++)
            msgs[i].keys = keys;
    }
    uint64_t t0 = (uint64_t)rmq_mono_us();
    uint64_t late = g_o.rate && t0 > (uint64_t)due ? t0 - (uint64_t)due : 0;
    rmq_err_t err;
    if (g_o.async) {
        err = prod_send_async(t, msgs, n, t0, late);
        if (err != RMQ_OK)
            prod_record(t->slot, err, 0, 0, n);
    } else {
        rmq_send_result_t res;
        err = n > 1 ? rmq_producer_send_batch(t->p, msgs, (size_t)n, 0, &res)
                    : rmq_producer_send(t->p, msgs, 0, &res);
        prod_record(t->slot, err, (uint64_t)rmq_mono_us() - t0, late, n);
        if (err != RMQ_OK)
            prod_tell_failure(&res.error);
        if (g_ids && err == RMQ_OK)
            ids_write_send(&res);
    }
    if (err != RMQ_OK && err != RMQ_EBUSY)
        rmq_sleep_ms(100);
}

static void *prod_main(void *arg)
{
    prod_thread_t *t = arg;
    int b = g_o.batch > 1 ? g_o.batch : 1;
    rmq_message_t *msgs = calloc((size_t)b, sizeof *msgs);
    for (int i = 0; msgs && i < b; i++) {
        msgs[i].topic = g_o.topic;
        msgs[i].body = t->body;
        msgs[i].body_len = (size_t)g_o.size;
    }
    long long sent = 0;
    while (msgs && !atomic_load(&g_stop) && (t->quota == 0 || sent < t->quota)) {
        int n = b;
        if (t->quota && t->quota - sent < n)
            n = (int)(t->quota - sent);
        prod_send_one(t, msgs, n);
        sent += n;
    }
    free(msgs);
    return NULL;
}

/* Prints the once-a-second producer line over the window since prev. */
static void prod_print(const snap_t *now, const snap_t *prev, double secs, uint64_t max_ms)
{
    uint64_t dok = now->ok - prev->ok;
    double avg = dok ? (double)(now->rt_sum - prev->rt_sum) / 1000.0 / (double)dok : 0.0;
    printf("Send TPS: %llu Max RT(ms): %llu Average RT(ms): %7.3f Send Failed: %llu Response "
           "Failed: %llu\n",
           (unsigned long long)(secs > 0 ? (double)dok / secs + 0.5 : 0), (unsigned long long)max_ms,
           avg, (unsigned long long)now->send_failed, (unsigned long long)now->resp_failed);
    fflush(stdout);
}

/* ---- consumer ------------------------------------------------------------------ */

static _Thread_local slot_t *tls_slot;

/* Consume thread: counts the message with its B2C and S2C latencies. */
static rmq_consume_result_t cons_on_message(const rmq_message_ext_t *msg, void *arg)
{
    (void)arg;
    if (!tls_slot)
        tls_slot = slot_take();
    slot_t *sl = tls_slot;
    if (!sl)
        return RMQ_CONSUME_SUCCESS;
    int64_t now = rmq_wall_ms();
    uint64_t b2c = now > msg->born_timestamp ? (uint64_t)(now - msg->born_timestamp) : 0;
    uint64_t s2c = now > msg->store_timestamp ? (uint64_t)(now - msg->store_timestamp) : 0;
    atomic_fetch_add_explicit(&sl->ok, 1, memory_order_relaxed);
    atomic_fetch_add_explicit(&sl->rt_sum_us, b2c, memory_order_relaxed);
    atomic_fetch_add_explicit(&sl->s2c_sum_ms, s2c, memory_order_relaxed);
    atomic_max(&sl->max_rt, b2c);
    atomic_max(&sl->max_s2c, s2c);
    atomic_max(&sl->max_s2c_all, s2c);
    rmq_histogram_record(&sl->hist, b2c * 1000);
    rmq_histogram_record(&sl->s2c_hist, s2c * 1000);
    if (g_o.check_body) {
        int64_t crc = (int64_t)rmq_crc32c(0, msg->body, msg->body_len), want = -1;
        if (!atomic_compare_exchange_strong(&g_body_crc, &want, crc) && want != crc) {
            atomic_fetch_add(&g_body_bad, 1);
            fprintf(stderr, "mqbench: body of %s differs from the first body (crc32c %08x)\n",
                    msg->msg_id, (unsigned)crc);
        }
    }
    if (g_ids)
        ids_write_msg(msg);
    return RMQ_CONSUME_SUCCESS;
}

static void cons_print(const snap_t *now, const snap_t *prev, double secs)
{
    uint64_t d = now->ok - prev->ok;
    double b2c = d ? (double)(now->rt_sum - prev->rt_sum) / (double)d : 0.0;
    double s2c = d ? (double)(now->s2c_sum - prev->s2c_sum) / (double)d : 0.0;
    printf("TPS: %llu FAIL: %llu AVG(B2C) RT(ms): %7.3f AVG(S2C) RT(ms): %7.3f MAX(B2C) RT(ms): "
           "%llu MAX(S2C) RT(ms): %llu\n",
           (unsigned long long)(secs > 0 ? (double)d / secs + 0.5 : 0),
           (unsigned long long)(now->resp_failed - prev->resp_failed), b2c, s2c,
           (unsigned long long)now->max_rt, (unsigned long long)now->max_s2c);
    fflush(stdout);
}

/* ---- the run ------------------------------------------------------------------- */

/* 1 when the run should end: signal, duration, or (producer) quota reached. */
static int run_over(int64_t start_ms)
{
    if (atomic_load(&g_stop))
        return 1;
    return g_o.duration_s > 0 && rmq_mono_ms() - start_ms >= (int64_t)g_o.duration_s * 1000;
}

/* Prints once a second until the run is over or done() says so. */
static void report_loop(int64_t start_ms, int (*done)(void))
{
    snap_t prev = snap_take(0);
    int64_t prev_ms = rmq_mono_ms();
    while (!run_over(start_ms) && !(done && done())) {
        rmq_sleep_ms(50);
        int64_t now_ms = rmq_mono_ms();
        if (now_ms - prev_ms < 1000)
            continue;
        if (g_ids)
            fflush(g_ids);
        double secs = (double)(now_ms - prev_ms) / 1000.0;
        if (g_o.producer) {
            snap_t now = snap_take(0);
            prod_print(&now, &prev, secs, now.max_rt);
            prev = now;
        } else {
            snap_t now = snap_take(1);
            cons_print(&now, &prev, secs);
            prev = now;
        }
        prev_ms = now_ms;
    }
}

static prod_thread_t *g_pthreads;

/* 1 once -q messages have an outcome (sync or async). */
static int prod_done(void)
{
    if (g_o.quantity <= 0)
        return 0;
    snap_t s = snap_take(0);
    return s.ok + s.send_failed + s.resp_failed >= (uint64_t)g_o.quantity;
}

/* Final lines: percentiles and [Complete]; and the JSON file if asked. */
static int report_final(double secs)
{
    snap_t s = snap_take(0);
    rmq_histogram_t *h = malloc(2 * sizeof *h);
    if (!h)
        return 1;
    hist_merged(&h[0], &h[1]);
    double p[5], ps[5];
    hist_points_ms(&h[0], p);
    hist_points_ms(&h[1], ps);
    free(h);
    unsigned long long tps = (unsigned long long)(secs > 0 ? (double)s.ok / secs + 0.5 : 0);
    double avg = s.ok ? (double)s.rt_sum / (double)s.ok / (g_o.producer ? 1000.0 : 1.0) : 0.0;
    double s2c = s.ok ? (double)s.s2c_sum / (double)s.ok : 0.0;
    const char *what = g_o.producer ? "RT" : "B2C";
    printf("Latency %s(ms) P50: %.3f P90: %.3f P99: %.3f P999: %.3f Max: %.3f\n", what, p[0], p[1],
           p[2], p[3], p[4]);
    if (!g_o.producer)
        printf("Latency S2C(ms) P50: %.3f P90: %.3f P99: %.3f P999: %.3f Max: %.3f\n", ps[0], ps[1],
               ps[2], ps[3], ps[4]);
    if (g_o.producer && g_o.rate) {
        printf("Latency RT-due(ms) P50: %.3f P90: %.3f P99: %.3f P999: %.3f Max: %.3f\n", ps[0],
               ps[1], ps[2], ps[3], ps[4]);
        printf("Rate: %lld msg/s Skipped: %llu (slots more than %d ms behind schedule)\n", g_o.rate,
               (unsigned long long)s.skipped, RATE_CATCHUP_US / 1000);
    }
    if (g_o.producer)
        printf("[Complete] Send Total: %llu Send TPS: %llu Max RT(ms): %llu Average RT(ms): %7.3f "
               "Send Failed: %llu Response Failed: %llu\n",
               (unsigned long long)s.ok, tps, (unsigned long long)s.max_rt, avg,
               (unsigned long long)s.send_failed, (unsigned long long)s.resp_failed);
    else
        printf("[Complete] Consume Total: %llu Consume TPS: %llu FAIL: %llu AVG(B2C) RT(ms): %7.3f "
               "AVG(S2C) RT(ms): %7.3f MAX(B2C) RT(ms): %llu MAX(S2C) RT(ms): %llu\n",
               (unsigned long long)s.ok, tps, (unsigned long long)s.resp_failed, avg, s2c,
               (unsigned long long)(p[4] + 0.5), (unsigned long long)s.max_s2c_all);
    if (!g_o.producer && g_o.check_body)
        printf("[Complete] Body Check: %llu differing\n", (unsigned long long)atomic_load(&g_body_bad));
    fflush(stdout);
    if (!g_o.json)
        return 0;
    /* the second histogram is S2C (consumer) or RT from the due time (producer --rate) */
    static const double none[5] = {0};
    const double *sc = g_o.producer ? none : ps, *pd = g_o.producer && g_o.rate ? ps : none;
    FILE *f = fopen(g_o.json, "w");
    if (!f) {
        fprintf(stderr, "mqbench: cannot write %s\n", g_o.json);
        return 1;
    }
    fprintf(f,
            "{\"mode\": \"%s\", \"topic\": \"%s\", \"threads\": %d, \"size\": %d, \"batch\": %d, "
            "\"async\": %s, \"rate\": %lld, \"seconds\": %.3f, \"total\": %llu, \"tps\": %llu, "
            "\"avg_ms\": %.3f, \"max_ms\": %.3f, \"send_failed\": %llu, \"response_failed\": %llu, "
            "\"avg_s2c_ms\": %.3f, \"p50_ms\": %.3f, \"p90_ms\": %.3f, \"p99_ms\": %.3f, "
            "\"p999_ms\": %.3f, \"p50_s2c_ms\": %.3f, \"p90_s2c_ms\": %.3f, "
            "\"p99_s2c_ms\": %.3f, \"p999_s2c_ms\": %.3f, \"skipped\": %llu, \"p50_due_ms\": %.3f, "
            "\"p90_due_ms\": %.3f, \"p99_due_ms\": %.3f, \"p999_due_ms\": %.3f, "
            "\"max_due_ms\": %.3f}\n",
            g_o.producer ? "producer" : "consumer", g_o.topic, g_o.threads, g_o.size, g_o.batch,
            g_o.async ? "true" : "false", g_o.rate, secs, (unsigned long long)s.ok, tps, avg, p[4],
            (unsigned long long)s.send_failed, (unsigned long long)s.resp_failed, s2c, p[0], p[1],
            p[2], p[3], sc[0], sc[1], sc[2], sc[3], (unsigned long long)s.skipped, pd[0], pd[1],
            pd[2], pd[3], pd[4]);
    fclose(f);
    return 0;
}

static int run_producer(void)
{
    printf("topic: %s threadCount: %d messageSize: %d keyEnable: %s messageQuantity: %lld "
           "batchSize: %d asyncEnable: %s rate: %lld\n",
           g_o.topic, g_o.threads, g_o.size, g_o.keys ? "true" : "false", g_o.quantity, g_o.batch,
           g_o.async ? "true" : "false", g_o.rate);
    char *body = malloc((size_t)g_o.size);
    static const char alnum[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
    for (int i = 0; body && i < g_o.size; i++)
        body[i] = alnum[(unsigned)rand() % (sizeof alnum - 1)];
    rmq_error_t e;
    rmq_producer_opts_t po = {.group = "benchmark_producer", .namesrv = g_o.namesrv,
                              .max_in_flight = 10000, .security = g_security,
                              .auto_batch_max_msgs = g_o.auto_batch};
    rmq_producer_t *p = body ? rmq_producer_new(&po, &e) : NULL;
    if (!p || rmq_producer_start(p) != RMQ_OK) {
        fprintf(stderr, "mqbench: producer: %s\n", p ? "cannot start" : e.text);
        rmq_producer_free(p);
        free(body);
        return 1;
    }
    g_pthreads = calloc((size_t)g_o.threads, sizeof *g_pthreads);
    g_cb_slot = slot_take();
    int64_t start = rmq_mono_ms();
    g_rate_start_us = rmq_mono_us();
    for (int i = 0; g_pthreads && i < g_o.threads; i++) {
        prod_thread_t *t = &g_pthreads[i];
        t->p = p;
        t->slot = slot_take();
        t->body = body;
        t->index = i;
        if (g_o.quantity > 0)
            t->quota = g_o.quantity / g_o.threads + (i < g_o.quantity % g_o.threads ? 1 : 0);
        if (t->quota == 0 && g_o.quantity > 0)
            continue;
        pthread_create(&t->tid, NULL, prod_main, t);
    }
    report_loop(start, prod_done);
    atomic_store(&g_stop, 1);
    for (int i = 0; g_pthreads && i < g_o.threads; i++)
        if (g_pthreads[i].tid)
            pthread_join(g_pthreads[i].tid, NULL);
    rmq_producer_shutdown(p);
    double secs = (double)(rmq_mono_ms() - start) / 1000.0;
    int rc = report_final(secs);
    rmq_producer_free(p);
    free(g_pthreads);
    free(body);
    return rc;
}

static int run_consumer(void)
{
    printf("topic: %s threadCount: %d group: %s consumeFrom: %s\n", g_o.topic, g_o.threads,
           g_o.group, g_o.from_first ? "first" : "last");
    rmq_error_t e;
    rmq_push_consumer_opts_t co = {
        .group = g_o.group, .namesrv = g_o.namesrv, .on_message = cons_on_message,
        .consume_threads = g_o.threads,
        .consume_from = g_o.from_first ? RMQ_CONSUME_FROM_FIRST : RMQ_CONSUME_FROM_LAST,
        .security = g_security,
    };
    rmq_push_consumer_t *c = rmq_push_consumer_new(&co, &e);
    if (!c || rmq_push_consumer_subscribe(c, g_o.topic, "*") != RMQ_OK ||
        rmq_push_consumer_start(c) != RMQ_OK) {
        fprintf(stderr, "mqbench: consumer: %s\n", c ? "cannot start" : e.text);
        rmq_push_consumer_free(c);
        return 1;
    }
    printf("Consumer Started.\n");
    fflush(stdout);
    int64_t start = rmq_mono_ms();
    report_loop(start, NULL);
    rmq_push_consumer_shutdown(c);
    double secs = (double)(rmq_mono_ms() - start) / 1000.0;
    int rc = report_final(secs);
    rmq_push_consumer_free(c);
    return rc;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: mqbench producer -n NS -t TOPIC [-w THREADS] [-s SIZE] [-k] [-q COUNT]\n"
            "                        [-d SECONDS] [--async] [-b BATCH] [--json FILE]\n"
            "                        [--ids-file FILE [--ids-detail]] [--client-config FILE] [--auto-batch N]\n"
            "                        [--rate N]\n"
            "       mqbench consumer -n NS -t TOPIC [-g GROUP] [-w THREADS] [-d SECONDS]\n"
            "                        [-f first|last] [--json FILE] [--ids-file FILE [--ids-detail]]\n"
            "                        [--client-config FILE]\n"
            "  --ids-file FILE: write the id (UNIQ_KEY) of every acknowledged message\n"
            "  (producer; not with -b > 1) or of every consumed one (consumer), one a line\n"
            "  --ids-detail: each ids-file line goes on (producer: SEND_OK only): producer \"BROKER EPOCH QUEUE_ID\n"
            "  QUEUE_OFFSET OFFSET_MSG_ID WALL_MS\" (EPOCH: the controller-mode master epoch\n"
            "  the broker stamped, else 0), consumer \"BROKER QUEUE_ID QUEUE_OFFSET\n"
            "  COMMITLOG_OFFSET STORE_MS WALL_MS\"\n"
            "  --check-body (consumer): count bodies whose CRC32C differs from the first one\n"
            "  --auto-batch N (producer, --async): the library sends up to N messages for one\n"
            "  queue as one batch request (rmq_producer_opts_t.auto_batch_max_msgs)\n"
            "  --rate N (producer): N messages/s over all threads, each thread its share on\n"
            "  absolute deadlines; a thread more than 20 ms behind skips the older slots (no\n"
            "  burst beyond that catch-up). \"Latency RT\" is from the send call as without\n"
            "  --rate; \"Latency RT-due\" from each message's due time, skipped slots counted\n"
            "  at their lateness (coordinated-omission corrected); \"Rate:\" the skipped count\n"
            "  --client-config FILE: TLS and request signing, a properties file with the\n"
            "  servers' keys tlsMode (disabled, or permissive/enforcing: TLS), tlsCaPath,\n"
            "  tlsCertPath, tlsKeyPath, and the ACL account's accessKey and secretKey;\n"
            "  without it RMQ_TLS=1, RMQ_TLS_CA, RMQ_TLS_CERT, RMQ_TLS_KEY, RMQ_ACCESS_KEY and\n"
            "  RMQ_SECRET_KEY from the environment (deploy/SECURITY.md)\n");
}

/* Parses an integer option; exits with a message naming it when invalid. */
static long long int_arg(const char *name, const char *v, long long min)
{
    char *end;
    long long x = strtoll(v, &end, 10);
    if (*v == '\0' || *end != '\0' || x < min) {
        fprintf(stderr, "mqbench: option %s: \"%s\" must be an integer >= %lld\n", name, v, min);
        exit(2);
    }
    return x;
}

static int parse_args(int argc, char **argv)
{
    if (argc < 2 || (strcmp(argv[1], "producer") && strcmp(argv[1], "consumer")))
        return -1;
    g_o = (bench_opts_t){.producer = strcmp(argv[1], "producer") == 0, .topic = "BenchmarkTest",
                         .group = "benchmark_consumer", .size = 128, .batch = 1};
    g_o.threads = g_o.producer ? 64 : 20;
    static const struct option longs[] = {
        {"async", no_argument, NULL, 'A'}, {"json", required_argument, NULL, 'J'},
        {"ids-file", required_argument, NULL, 'I'}, {"check-body", no_argument, NULL, 'B'},
        {"ids-detail", no_argument, NULL, 'D'},
        {"client-config", required_argument, NULL, 'C'},
        {"auto-batch", required_argument, NULL, 'a'}, {"rate", required_argument, NULL, 'R'},
        {0, 0, 0, 0}};
    optind = 2;
    int ch;
    while ((ch = getopt_long(argc, argv, "n:t:w:s:kq:d:b:g:f:", longs, NULL)) != -1) {
        switch (ch) {
        case 'n': g_o.namesrv = optarg; break;
        case 't': g_o.topic = optarg; break;
        case 'w': g_o.threads = (int)int_arg("-w", optarg, 1); break;
        case 's': g_o.size = (int)int_arg("-s", optarg, 1); break;
        case 'k': g_o.keys = 1; break;
        case 'q': g_o.quantity = int_arg("-q", optarg, 0); break;
        case 'd': g_o.duration_s = (int)int_arg("-d", optarg, 0); break;
        case 'b': g_o.batch = (int)int_arg("-b", optarg, 1); break;
        case 'g': g_o.group = optarg; break;
        case 'A': g_o.async = 1; break;
        case 'J': g_o.json = optarg; break;
        case 'I': g_o.ids_file = optarg; break;
        case 'D': g_o.ids_detail = 1; break;
        case 'B': g_o.check_body = 1; break;
        case 'C': g_o.client_config = optarg; break;
        case 'a': g_o.auto_batch = (int)int_arg("--auto-batch", optarg, 0); break;
        case 'R': g_o.rate = int_arg("--rate", optarg, 1); break;
        case 'f':
            if (strcmp(optarg, "first") && strcmp(optarg, "last")) {
                fprintf(stderr, "mqbench: option -f: \"%s\" must be first or last\n", optarg);
                return -1;
            }
            g_o.from_first = strcmp(optarg, "first") == 0;
            break;
        default: return -1;
        }
    }
    if (!g_o.namesrv || optind != argc)
        return -1;
    if (g_o.ids_file && g_o.producer && g_o.batch > 1) {
        fprintf(stderr, "mqbench: --ids-file records one id per send: not with -b > 1\n");
        return -1;
    }
    if (g_o.threads > MAX_SLOTS - 2)
        g_o.threads = MAX_SLOTS - 2;
    return 0;
}

/* Loads --client-config into g_security, checking it once (so errors name
 * the file's keys); -1 after printing why. */
static int load_client_config(void)
{
    rmq_security_t check;
    char why[512];

    if (rmq_client_sec_config_load(&g_sec_cfg, g_o.client_config, why, sizeof why) != RMQ_OK) {
        fprintf(stderr, "mqbench: --client-config: %s\n", why);
        return -1;
    }
    if (rmq_security_init_client(&check, &g_sec_cfg, &rmq_client_sec_file_names, why,
                                 sizeof why) != RMQ_OK) {
        fprintf(stderr, "mqbench: --client-config %s: %s\n", g_o.client_config, why);
        return -1;
    }
    rmq_security_deinit(&check);
    g_sec_opts = (rmq_security_opts_t){
        .tls_mode = g_sec_cfg.tls.mode == RMQ_TLS_DISABLED ? RMQ_CLIENT_TLS_DISABLED
                                                           : RMQ_CLIENT_TLS_ENFORCING,
        .tls_ca_path = g_sec_cfg.tls.ca_path,
        .tls_cert_path = g_sec_cfg.tls.cert_path,
        .tls_key_path = g_sec_cfg.tls.key_path,
        .access_key = g_sec_cfg.access_key,
        .secret_key = g_sec_cfg.secret_key,
    };
    g_security = &g_sec_opts;
    return 0;
}

int main(int argc, char **argv)
{
    if (parse_args(argc, argv) != 0) {
        usage();
        return 2;
    }
    if (g_o.ids_file && !(g_ids = fopen(g_o.ids_file, "w"))) {
        fprintf(stderr, "mqbench: cannot write %s\n", g_o.ids_file);
        return 1;
    }
    g_slots = aligned_alloc(64, sizeof(slot_t) * MAX_SLOTS);
    if (!g_slots)
        return 1;
    memset(g_slots, 0, sizeof(slot_t) * MAX_SLOTS);
    srand((unsigned)time(NULL));
    struct sigaction sa = {.sa_handler = on_signal};
    sigaction(SIGINT, &sa, NULL);
    sigaction(SIGTERM, &sa, NULL);
    signal(SIGPIPE, SIG_IGN);
    int rc = 2;
    if (!g_o.client_config || load_client_config() == 0)
        rc = g_o.producer ? run_producer() : run_consumer();
    rmq_client_sec_config_deinit(&g_sec_cfg);
    free(g_slots);
    if (g_ids && fclose(g_ids) != 0) {
        fprintf(stderr, "mqbench: writing %s failed\n", g_o.ids_file);
        rc = rc ? rc : 1;
    }
    return rc;
}
