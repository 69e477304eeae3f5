/* test_store_flush.c: durability and space states with the store's threads
 * running under a libevent loop: SYNC_FLUSH group commit (one sync releases
 * many waiters; a sync waits for the senders the last one released),
 * FLUSH_DISK_TIMEOUT with a blocked sync, ASYNC_FLUSH
 * progress, the latched write-error state (injected sync failure); and,
 * synchronously, retention (age, deleteWhen, disk ratio), the disk-full
 * threshold and ENOSPC at file creation. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "rmq_loop.h"
#include "rmq_time.h"
#include "st_internal.h"
#include "test_store_util.h"

typedef struct gate {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int closed;
    int fail;
    int delay_ms;
    _Atomic int calls;
} gate_t;

typedef struct waits {
    int done, ok, timedout, eio;
} waits_t;

static ts_env_t env;
static gate_t gate;
static struct event_base *base;
static rmq_loop_poster_t *poster;

static void setup(void)
{
    ts_env_init(&env);
    memset(&gate, 0, sizeof(gate));
    pthread_mutex_init(&gate.mu, NULL);
    pthread_cond_init(&gate.cv, NULL);
    rmq_loop_global_init();
    base = event_base_new();
    poster = rmq_loop_poster_new(base);
}

static void teardown(void)
{
    char small[256];

    ts_path(&env, small, sizeof(small), "small");
    umount2(small, MNT_DETACH);
    rmq_loop_poster_free(poster);
    event_base_free(base);
    pthread_cond_destroy(&gate.cv);
    pthread_mutex_destroy(&gate.mu);
    ts_env_cleanup(&env);
}

/* Sync hook: counts calls, blocks while the gate is closed, takes delay_ms
 * longer (a slow disk), fails on demand. */
static int gated_sync(void *addr, size_t len, void *arg)
{
    gate_t *g = arg;
    int fail;

    atomic_fetch_add(&g->calls, 1);
    pthread_mutex_lock(&g->mu);
    while (g->closed)
        pthread_cond_wait(&g->cv, &g->mu);
    fail = g->fail;
    pthread_mutex_unlock(&g->mu);
    rmq_sleep_ms(g->delay_ms);
    if (fail) {
        errno = EIO;
        return -1;
    }
    return st_segment_msync(addr, len, NULL);
}

static void gate_set(int closed, int fail)
{
    pthread_mutex_lock(&gate.mu);
    gate.closed = closed;
    gate.fail = fail;
    pthread_cond_broadcast(&gate.cv);
    pthread_mutex_unlock(&gate.mu);
}

static st_store_t *open_started(void)
{
    st_store_t *st = ts_open(&env);
    st_hooks_t hooks = { .sync = gated_sync, .sync_arg = &gate };

    st_store_set_hooks(st, &hooks);
    ck_assert_int_eq(st_store_start(st, base, poster), RMQ_OK);
    return st;
}

static void on_flushed(rmq_err_t err, void *arg)
{
    waits_t *w = arg;

    w->done++;
    w->ok += err == RMQ_OK;
    w->timedout += err == RMQ_ETIMEDOUT;
    w->eio += err == RMQ_EIO;
}

/* Runs the loop until *counter reaches want or timeout_ms passes. */
static void run_until(const int *counter, int want, int timeout_ms)
{
    int64_t deadline = rmq_mono_ms() + timeout_ms;

    while (*counter < want && rmq_mono_ms() < deadline) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        rmq_sleep_ms(2);
    }
}

/* Puts one message and parks a flush waiter for it. */
static void put_and_wait(st_store_t *st, uint32_t seq, waits_t *w)
{
    st_put_result_t res;

    ts_put(st, "Sync", 0, seq, 200, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    ck_assert_int_eq(st_store_wait_flush(st, res.end_offset, on_flushed, w), RMQ_OK);
}

START_TEST(test_group_commit_one_sync_many_waiters)
{
    st_store_t *st;
    waits_t w = {0};
    int before;
    st_store_stats_t stats;

    env.cfg.flush_type = ST_SYNC_FLUSH;
    st = open_started();
    gate_set(1, 0);
    put_and_wait(st, 0, &w);
    while (atomic_load(&gate.calls) == 0)
        rmq_sleep_ms(1);
    for (uint32_t i = 1; i < 200; i++)
        put_and_wait(st, i, &w);
    ck_assert_int_eq(w.done, 0);
    before = atomic_load(&gate.calls);
    gate_set(0, 0);
    run_until(&w.done, 200, 5000);
    ck_assert_int_eq(w.ok, 200);
    /* the blocked sync covered the first message; the next one the other 199 */
    ck_assert_int_le(atomic_load(&gate.calls) - before, 4);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.flushed_offset, stats.commitlog_max_offset);
    /* already durable: completes at once */
    ck_assert_int_eq(st_store_wait_flush(st, stats.flushed_offset, on_flushed, &w), RMQ_OK);
    ck_assert_int_eq(w.ok, 201);
    st_store_close(st);
}
END_TEST

/* Commit-log syncs so far. */
static int64_t syncs(st_store_t *st)
{
    st_store_stats_t stats;

    st_store_stats(st, &stats);
    return stats.flush_syncs;
}

START_TEST(test_group_commit_waits_for_released_senders)
{
    st_store_t *st;
    waits_t w = {0};
    int64_t before;

    env.cfg.flush_type = ST_SYNC_FLUSH;
    st = open_started();
    gate.delay_ms = 30;
    /* a sync covering one sender, then one covering the four that came
     * while it ran: the last sync's group is four senders */
    gate_set(1, 0);
    put_and_wait(st, 0, &w);
    while (atomic_load(&gate.calls) == 0)
        rmq_sleep_ms(1);
    for (uint32_t i = 1; i < 5; i++)
        put_and_wait(st, i, &w);
    gate_set(0, 0);
    run_until(&w.done, 5, 5000);
    ck_assert_int_eq(w.ok, 5);
    /* the four come back one by one (1 ms apart, well within the last
     * sync's 30 ms): one sync covers them all, not the first alone */
    before = syncs(st);
    for (uint32_t i = 5; i < 9; i++) {
        put_and_wait(st, i, &w);
        rmq_sleep_ms(1);
    }
    run_until(&w.done, 9, 5000);
    ck_assert_int_eq(w.ok, 9);
    ck_assert_int_eq(syncs(st) - before, 1);
    st_store_close(st);
}
END_TEST

START_TEST(test_sync_flush_timeout)
{
    st_store_t *st;
    waits_t w = {0};
    int64_t t0;

    env.cfg.flush_type = ST_SYNC_FLUSH;
    env.cfg.sync_flush_timeout_ms = 200;
    st = open_started();
    gate_set(1, 0);
    t0 = rmq_mono_ms();
    put_and_wait(st, 1, &w);
    put_and_wait(st, 2, &w);
    run_until(&w.done, 2, 3000);
    ck_assert_int_eq(w.timedout, 2);
    ck_assert_int_ge(rmq_mono_ms() - t0, 190);
    gate_set(0, 0);
    st_store_close(st);
}
END_TEST

START_TEST(test_async_flush_progress)
{
    st_store_t *st = open_started();
    st_put_result_t res;
    st_store_stats_t stats;
    int64_t deadline = rmq_mono_ms() + 3000;

    for (uint32_t i = 0; i < 20; i++)
        ts_put(st, "Async", 0, i, 100, NULL, &res);
    do {
        event_base_loop(base, EVLOOP_NONBLOCK);
        rmq_sleep_ms(10);
        st_store_stats(st, &stats);
    } while (stats.flushed_offset < res.end_offset && rmq_mono_ms() < deadline);
    ck_assert_int_eq(stats.flushed_offset, res.end_offset);
    st_store_close(st);
}
END_TEST

START_TEST(test_write_error_latches)
{
    st_store_t *st;
    waits_t w = {0};
    st_put_result_t res;
    st_store_stats_t stats;
    char path[256];

    env.cfg.flush_type = ST_SYNC_FLUSH;
    st = open_started();
    gate_set(0, 1);
    put_and_wait(st, 1, &w);
    run_until(&w.done, 1, 3000);
    ck_assert_int_eq(w.eio, 1);
    ck_assert_int_eq(w.ok, 0);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.write_error, 1);
    ck_assert_int_eq(stats.writable, 0);
    ck_assert_int_lt(stats.flushed_offset, stats.commitlog_max_offset);
    ts_put(st, "Sync", 0, 2, 10, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_WRITE_ERROR);
    ck_assert_int_eq(st_store_append_raw(st, stats.commitlog_max_offset, "x", 1), RMQ_EREADONLY);
    ck_assert_int_eq(st_store_wait_flush(st, stats.commitlog_max_offset, on_flushed, &w), RMQ_OK);
    ck_assert_int_eq(w.eio, 2);
    gate_set(0, 0);
    st_store_close(st);
    /* the abort file stays: the next open treats it as a crash */
    ts_path(&env, path, sizeof(path), "abort");
    ck_assert_int_eq(access(path, F_OK), 0);
    st = ts_open(&env);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.write_error, 0);
    ck_assert_int_eq(st_store_max_offset(st, "Sync", 0), 1);
    st_store_close(st);
}
END_TEST

START_TEST(test_write_error_sync_path)
{
    st_store_t *st = ts_open(&env);
    st_hooks_t hooks = { .sync = gated_sync, .sync_arg = &gate };
    waits_t w = {0};
    st_put_result_t res;

    st_store_set_hooks(st, &hooks);
    put_and_wait(st, 1, &w);
    ck_assert_int_eq(w.done, 0);
    gate_set(0, 1);
    ck_assert_int_eq(st_store_flush_now(st), RMQ_EIO);
    ck_assert_int_eq(w.eio, 1);
    ts_put(st, "Sync", 0, 2, 10, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_WRITE_ERROR);
    st_store_close(st);
}
END_TEST

START_TEST(test_next_file_precreated)
{
    st_store_t *st;
    st_put_result_t res;
    int adopted = 0;
    uint32_t seq = 0;

    env.cfg.warm_mapped_files = 1;
    st = open_started();
    for (int roll = 0; roll < 3; roll++) {
        int64_t deadline = rmq_mono_ms() + 3000;
        st_segment_t *spare;

        while (!st->cl.spare && rmq_mono_ms() < deadline) {
            event_base_loop(base, EVLOOP_NONBLOCK);
            rmq_sleep_ms(2);
        }
        spare = st->cl.spare;
        ck_assert_ptr_nonnull(spare);
        do
            ts_put(st, "Pre", 0, seq++, 1000, NULL, &res);
        while (res.phys_offset < spare->start);
        ck_assert_int_eq(res.status, ST_PUT_OK);
        adopted += st_commitlog_find(&st->cl, res.phys_offset) == spare;
    }
    ck_assert_int_eq(adopted, 3);
    st_store_close(st);
    st = ts_open(&env);
    ck_assert_int_eq(st_store_max_offset(st, "Pre", 0), seq);
    st_store_close(st);
}
END_TEST

static double injected_ratio;

static double ratio_hook(const char *dir, void *arg)
{
    (void)dir;
    (void)arg;
    return injected_ratio;
}

/* Sets a commit-log file's mtime hours into the past. */
static void age_file(int64_t start, int hours)
{
    char path[256], name[64];
    struct timespec ts[2];

    snprintf(name, sizeof(name), "commitlog/%020lld", (long long)start);
    ts_path(&env, path, sizeof(path), name);
    clock_gettime(CLOCK_REALTIME, &ts[0]);
    ts[0].tv_sec -= hours * 3600;
    ts[1] = ts[0];
    ck_assert_int_eq(utimensat(AT_FDCWD, path, ts, 0), 0);
}

static int log_file_exists(int64_t start)
{
    char path[256], name[64];

    snprintf(name, sizeof(name), "commitlog/%020lld", (long long)start);
    ts_path(&env, path, sizeof(path), name);
    return access(path, F_OK) == 0;
}

START_TEST(test_retention_by_age_and_ratio)
{
    st_store_t *st;
    st_hooks_t hooks = { .disk_ratio = ratio_hook };
    st_put_result_t res;
    st_store_stats_t stats;
    struct evbuffer *held = evbuffer_new(), *buf = evbuffer_new();
    st_get_result_t gr;
    rmq_record_t rec;
    uint8_t *flat;
    int64_t min;

    env.cfg.file_reserved_hours = 1;
    env.cfg.delete_when = "00;01;02;03;04;05;06;07;08;09;10;11;12;13;14;15;16;17;18;19;20;21;22;23";
    st = ts_open(&env);
    st_store_set_hooks(st, &hooks);
    injected_ratio = 0.10;
    for (uint32_t i = 0; i < 300; i++)
        ts_put(st, "Ret", 0, i, 1000, NULL, &res);
    ck_assert_int_ge(res.end_offset, 4 * TS_FILE_SIZE);
    st_store_get(st, "Ret", 0, 0, 1, 0, NULL, held, &gr);
    ck_assert_int_eq(gr.status, ST_GET_FOUND);

    st_store_housekeep_now(st);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.commitlog_min_offset, 0);

    age_file(0, 2);
    age_file(TS_FILE_SIZE, 2);
    st_store_housekeep_now(st);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.commitlog_min_offset, 2 * TS_FILE_SIZE);
    ck_assert(!log_file_exists(0) && !log_file_exists(TS_FILE_SIZE));
    ck_assert(log_file_exists(2 * TS_FILE_SIZE));
    /* the consume queue's first file pointed only into deleted files */
    min = st_store_min_offset(st, "Ret", 0);
    ck_assert_int_ge(min, TS_CQ_PER_FILE);
    ck_assert_int_eq(st_store_time_at(st, "Ret", 0, min - 1), -1);
    st_store_get(st, "Ret", 0, 0, 1, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_OFFSET_TOO_SMALL);
    ck_assert_int_eq(gr.next_begin_offset, min);
    st_store_get(st, "Ret", 0, min, 1, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_FOUND);
    ck_assert_uint_eq(ts_records(buf, &rec, 1, &flat), 1);
    ck_assert_int_ge(rec.phys_offset, 2 * TS_FILE_SIZE);
    ck_assert_int_lt(rec.phys_offset - 2 * TS_FILE_SIZE, 1100);
    free(flat);
    /* the pull that held the first file still reads it */
    ck_assert_uint_eq(ts_records(held, &rec, 1, &flat), 1);
    ts_check_body(&rec, 0);
    free(flat);
    evbuffer_free(held);

    /* above diskMaxUsedSpaceRatio: the oldest file goes even though young */
    injected_ratio = 0.80;
    st_store_housekeep_now(st);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.commitlog_min_offset, 3 * TS_FILE_SIZE);
    ck_assert_int_eq(stats.disk_full, 0);
    evbuffer_free(buf);
    st_store_close(st);
    st = ts_open(&env);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.commitlog_min_offset, 3 * TS_FILE_SIZE);
    ck_assert_int_gt(st_store_min_offset(st, "Ret", 0), min);
    buf = evbuffer_new();
    st_store_get(st, "Ret", 0, st_store_min_offset(st, "Ret", 0), 1, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_FOUND);
    ck_assert_uint_eq(ts_records(buf, &rec, 1, &flat), 1);
    ck_assert_int_ge(rec.phys_offset, 3 * TS_FILE_SIZE);
    free(flat);
    evbuffer_free(buf);
    st_store_close(st);
}
END_TEST

START_TEST(test_disk_full_threshold)
{
    st_store_t *st = ts_open(&env);
    st_hooks_t hooks = { .disk_ratio = ratio_hook };
    st_put_result_t res;
    st_store_stats_t stats;

    st_store_set_hooks(st, &hooks);
    injected_ratio = 0.95;
    st_store_housekeep_now(st);
    ts_put(st, "Full", 0, 1, 10, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_DISK_FULL);
    ck_assert_ptr_nonnull(res.why);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.disk_full, 1);
    ck_assert_int_eq(stats.writable, 0);
    ck_assert(stats.disk_used_ratio > 0.94 && stats.disk_used_ratio < 0.96);
    injected_ratio = 0.50;
    st_store_housekeep_now(st);
    ts_put(st, "Full", 0, 1, 10, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    st_store_close(st);
}
END_TEST

START_TEST(test_enospc_on_small_tmpfs)
{
    char dir[256];
    st_store_t *st;
    st_put_result_t res;
    int full = 0;

    ts_path(&env, dir, sizeof(dir), "small");
    ck_assert_int_eq(mkdir(dir, 0755), 0);
    if (geteuid() != 0 || mount("tmpfs", dir, "tmpfs", 0, "size=256k") != 0) {
        fprintf(stderr, "# skipped ENOSPC case: cannot mount a tmpfs\n");
        return;
    }
    env.cfg.commitlog_dir = dir;
    env.cfg.disk_full_ratio = 100;
    env.cfg.disk_max_used_ratio = 100;
    st = ts_open(&env);
    for (uint32_t i = 0; i < 400 && !full; i++) {
        ts_put(st, "Nospc", 0, i, 1000, NULL, &res);
        full = res.status == ST_PUT_DISK_FULL;
        ck_assert(res.status == ST_PUT_OK || full);
    }
    ck_assert(full);
    st_store_close(st);
    st = ts_open(&env);
    ck_assert_int_gt(st_store_max_offset(st, "Nospc", 0), 100);
    st_store_close(st);
    ck_assert_int_eq(umount(dir), 0);
}
END_TEST

static Suite *flush_suite(void)
{
    Suite *s = suite_create("store_flush");
    TCase *tc = tcase_create("flush");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_group_commit_one_sync_many_waiters);
    tcase_add_test(tc, test_group_commit_waits_for_released_senders);
    tcase_add_test(tc, test_sync_flush_timeout);
    tcase_add_test(tc, test_async_flush_progress);
    tcase_add_test(tc, test_next_file_precreated);
    tcase_add_test(tc, test_write_error_latches);
    tcase_add_test(tc, test_write_error_sync_path);
    tcase_add_test(tc, test_retention_by_age_and_ratio);
    tcase_add_test(tc, test_disk_full_threshold);
    tcase_add_test(tc, test_enospc_on_small_tmpfs);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(flush_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
