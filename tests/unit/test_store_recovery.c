/* test_store_recovery.c: restart and crash recovery: a clean restart reads
 * only what follows the checkpoint; kill-style crashes (a child process
 * that exits without closing) recover every record; a torn tail (a record
 * cut in half, a flipped byte in the middle of the last records) is cut off
 * with the consume queues trimmed to match; lost consume queues are rebuilt
 * from the log. Pre-created files (housekeeping thread running): consume
 * queues roll through several pre-created files with reads spanning the
 * boundaries; an unused pre-created consume-queue file and index spare left
 * by a crash, or a consume-queue spare left by a clean stop, change nothing
 * that is served and are removed. A log whose IPv4 records (the old
 * layout) are followed by records with an IPv6 born host recovers both
 * after a crash, each read back with its host. */
#include <check.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "rmq_loop.h"
#include "rmq_time.h"
#include "rmq_file.h"
#include "st_internal.h"
#include "test_store_util.h"

#define N_BEFORE 30
#define N_AFTER 10

static ts_env_t env;

static void setup(void)
{
    ts_env_init(&env);
}

static void teardown(void)
{
    ts_env_cleanup(&env);
}

/* Puts messages seq [from, to) alternating between queues 0 and 1 and
 * appends their results to root/results. */
static void put_range(st_store_t *st, uint32_t from, uint32_t to)
{
    char path[256];
    int fd;

    ts_path(&env, path, sizeof(path), "results");
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    for (uint32_t i = from; i < to; i++) {
        st_put_result_t res;

        ts_put(st, "Rec", (int32_t)(i % 2), i, 1500 + (i * 101) % 2000, NULL, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
        ck_assert_int_eq(write(fd, &res, sizeof(res)), (ssize_t)sizeof(res));
    }
    close(fd);
}

/* Reads back the results the child recorded. */
static st_put_result_t *load_results(size_t *n)
{
    char path[256], *data;
    size_t len;

    ts_path(&env, path, sizeof(path), "results");
    ck_assert_int_eq(rmq_file_read_all(path, &data, &len), RMQ_OK);
    *n = len / sizeof(st_put_result_t);
    return (st_put_result_t *)data;
}

/* Child: N_BEFORE messages, a checkpoint, N_AFTER more, then a crash. */
static void child_checkpoint_then_more(ts_env_t *e)
{
    st_store_t *st = ts_open(e);

    put_range(st, 0, N_BEFORE);
    ck_assert_int_eq(st_store_flush_now(st), RMQ_OK);
    put_range(st, N_BEFORE, N_BEFORE + N_AFTER);
}

/* Checks that queue q holds exactly the messages seq with seq % 2 == q and
 * seq < upto, in order. */
static void check_queues(st_store_t *st, uint32_t upto)
{
    for (int32_t q = 0; q < 2; q++) {
        int64_t want = (int64_t)(upto / 2 + (q == 0 ? upto % 2 : 0));

        ck_assert_int_eq(st_store_max_offset(st, "Rec", q), want);
        for (int64_t k = 0; k < want; k++) {
            struct evbuffer *buf = evbuffer_new();
            st_get_result_t gr;
            rmq_record_t rec;
            uint8_t *flat;

            st_store_get(st, "Rec", q, k, 1, 0, NULL, buf, &gr);
            ck_assert_int_eq(gr.status, ST_GET_FOUND);
            ck_assert_uint_eq(ts_records(buf, &rec, 1, &flat), 1);
            ts_check_body(&rec, (uint32_t)(k * 2 + q));
            free(flat);
            evbuffer_free(buf);
        }
    }
}

/* Overwrites len bytes of the commit log at phys with a byte pattern. */
static void poke_log(int64_t phys, size_t len, int xor_mode, uint8_t value)
{
    char path[256], name[64];
    uint8_t *buf = malloc(len);
    int fd;

    snprintf(name, sizeof(name), "commitlog/%020lld", (long long)(phys / TS_FILE_SIZE * TS_FILE_SIZE));
    ts_path(&env, path, sizeof(path), name);
    fd = open(path, O_RDWR);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pread(fd, buf, len, phys % TS_FILE_SIZE), (ssize_t)len);
    for (size_t i = 0; i < len; i++)
        buf[i] = xor_mode ? (uint8_t)(buf[i] ^ value) : value;
    ck_assert_int_eq(pwrite(fd, buf, len, phys % TS_FILE_SIZE), (ssize_t)len);
    close(fd);
    free(buf);
}

START_TEST(test_clean_restart_does_not_rescan)
{
    st_store_t *st = ts_open(&env);
    st_store_stats_t stats;
    char path[256];

    put_range(st, 0, 100);
    st_store_close(st);
    ts_path(&env, path, sizeof(path), "abort");
    ck_assert_int_ne(access(path, F_OK), 0);
    st = ts_open(&env);
    ck_assert_int_eq(st->recovered_records, 0);
    check_queues(st, 100);
    put_range(st, 100, 110);
    st_store_close(st);
    st = ts_open(&env);
    ck_assert_int_eq(st->recovered_records, 0);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.dispatched_offset, stats.commitlog_max_offset);
    check_queues(st, 110);
    st_store_close(st);
}
END_TEST

START_TEST(test_crash_rescans_from_checkpoint)
{
    st_store_t *st;
    char path[256];
    size_t n;
    st_put_result_t *res;

    ts_crash_child(&env, child_checkpoint_then_more);
    ts_path(&env, path, sizeof(path), "abort");
    ck_assert_int_eq(access(path, F_OK), 0);
    st = ts_open(&env);
    ck_assert_int_eq(st->recovered_records, N_AFTER);
    res = load_results(&n);
    ck_assert_uint_eq(n, N_BEFORE + N_AFTER);
    ck_assert_int_eq(st->cl.write_pos, res[n - 1].end_offset);
    check_queues(st, N_BEFORE + N_AFTER);
    free(res);
    st_store_close(st);
}
END_TEST

static const uint8_t HOST6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x06};

/* Puts 10 messages with an IPv4 born host, then 10 with an IPv6 one, and
 * crashes (nothing flushed by hand). */
static void child_mixed_hosts(ts_env_t *e)
{
    st_store_t *st = ts_open(e);

    for (uint32_t i = 0; i < 20; i++) {
        uint8_t body[64];
        st_msg_t m = {.topic = "Rec", .topic_len = 3, .born_timestamp = i, .born_ip = 0x7F000001,
                      .born_port = (uint16_t)(4000 + i), .born_ip6 = i >= 10 ? HOST6 : NULL,
                      .sys_flag = RMQ_SYSFLAG_HOSTS_V6, .body = body, .body_len = sizeof body};
        st_put_result_t res;

        ts_body(i, body, sizeof body);
        st_store_put(st, &m, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
    }
}

START_TEST(test_mixed_host_layouts_recovered)
{
    st_store_t *st;

    ts_crash_child(&env, child_mixed_hosts);
    st = ts_open(&env);
    ck_assert_int_eq(st_store_max_offset(st, "Rec", 0), 20);
    for (int64_t k = 0; k < 20; k++) {
        struct evbuffer *buf = evbuffer_new();
        st_get_result_t gr;
        rmq_record_t rec;
        uint8_t *flat;

        st_store_get(st, "Rec", 0, k, 1, 0, NULL, buf, &gr);
        ck_assert_int_eq(gr.status, ST_GET_FOUND);
        ck_assert_uint_eq(ts_records(buf, &rec, 1, &flat), 1);
        ts_check_body(&rec, (uint32_t)k);
        ck_assert_uint_eq(rec.born_port, 4000 + k);
        /* the client's host bits are not kept: the layout's are */
        ck_assert_int_eq(rec.sys_flag, k >= 10 ? RMQ_SYSFLAG_BORNHOST_V6 : 0);
        if (k >= 10)
            ck_assert_mem_eq(rmq_record_born_ip6(&rec), HOST6, 16);
        else
            ck_assert_uint_eq(rec.born_ip, 0x7F000001);
        free(flat);
        evbuffer_free(buf);
    }
    st_store_close(st);
}
END_TEST

START_TEST(test_torn_tail_record_cut_in_half)
{
    st_store_t *st;
    size_t n;
    st_put_result_t *res, again;
    int64_t size;
    st_cq_t *cq;

    ts_crash_child(&env, child_checkpoint_then_more);
    res = load_results(&n);
    size = res[n - 1].end_offset - res[n - 1].phys_offset;
    poke_log(res[n - 1].phys_offset + size / 2, (size_t)(size - size / 2), 0, 0);
    st = ts_open(&env);
    ck_assert_int_eq(st->cl.write_pos, res[n - 1].phys_offset);
    ck_assert_int_eq(atomic_load(&st->dispatched), res[n - 1].phys_offset);
    check_queues(st, (uint32_t)n - 1);
    cq = st_cq_table_find(&st->cqs, "Rec", 3, (int32_t)((n - 1) % 2));
    ck_assert_int_eq(cq->max_offset, (int64_t)(n - 1) / 2);
    /* the log continues where the torn record was */
    ts_put(st, "Rec", (int32_t)((n - 1) % 2), (uint32_t)n - 1, 700, NULL, &again);
    ck_assert_int_eq(again.status, ST_PUT_OK);
    ck_assert_int_eq(again.phys_offset, res[n - 1].phys_offset);
    ck_assert_int_eq(again.queue_offset, (int64_t)(n - 1) / 2);
    check_queues(st, (uint32_t)n);
    st_store_close(st);
    st = ts_open(&env);
    ck_assert_int_eq(st->recovered_records, 0);
    check_queues(st, (uint32_t)n);
    st_store_close(st);
    free(res);
}
END_TEST

START_TEST(test_flipped_byte_in_last_records)
{
    st_store_t *st;
    size_t n, bad = N_BEFORE + 3;
    st_put_result_t *res;
    st_segment_t *seg;
    int64_t end;

    ts_crash_child(&env, child_checkpoint_then_more);
    res = load_results(&n);
    poke_log(res[bad].phys_offset + (res[bad].end_offset - res[bad].phys_offset) / 2, 1, 1, 0x5A);
    st = ts_open(&env);
    ck_assert_int_eq(st->recovered_records, (int64_t)(bad - N_BEFORE));
    end = res[bad].phys_offset;
    ck_assert_int_eq(st->cl.write_pos, end);
    check_queues(st, (uint32_t)bad);
    /* everything after the bad record is gone from the file */
    seg = st_commitlog_find(&st->cl, end);
    for (int64_t i = end - seg->start; i < seg->size; i++)
        ck_assert_uint_eq(seg->base[i], 0);
    ck_assert_ptr_null(st_commitlog_find(&st->cl, seg->start + seg->size));
    st_store_close(st);
    free(res);
}
END_TEST

/* Child: 40 messages and a crash, without any checkpoint after open. */
static void child_no_checkpoint(ts_env_t *e)
{
    st_store_t *st = ts_open(e);

    put_range(st, 0, 40);
}

START_TEST(test_lost_consume_queues_rebuilt)
{
    st_store_t *st;
    char path[256], cmd[300];

    ts_crash_child(&env, child_no_checkpoint);
    ts_path(&env, path, sizeof(path), "consumequeue/Rec");
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", path);
    ck_assert_int_eq(system(cmd), 0);
    st = ts_open(&env);
    ck_assert_int_eq(st->recovered_records, 40);
    check_queues(st, 40);
    st_store_close(st);
}
END_TEST

/* Child: the store running with its threads under a loop; crash mid-way. */
static void child_threads(ts_env_t *e)
{
    struct event_base *base;
    rmq_loop_poster_t *poster;
    st_store_t *st = ts_open(e);

    rmq_loop_global_init();
    base = event_base_new();
    poster = rmq_loop_poster_new(base);
    ck_assert_int_eq(st_store_start(st, base, poster), RMQ_OK);
    put_range(st, 0, 120);
    for (int i = 0; i < 30; i++) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        rmq_sleep_ms(50);
    }
    put_range(st, 120, 150);
}

START_TEST(test_kill_with_threads_running)
{
    st_store_t *st;

    ts_crash_child(&env, child_threads);
    st = ts_open(&env);
    ck_assert_int_lt(st->recovered_records, 150);
    check_queues(st, 150);
    st_store_close(st);
}
END_TEST

START_TEST(test_half_created_file_removed)
{
    st_store_t *st = ts_open(&env);
    char path[256];
    int fd;

    put_range(st, 0, 5);
    st_store_close(st);
    ts_path(&env, path, sizeof(path), "commitlog/00000000000000065536");
    fd = open(path, O_WRONLY | O_CREAT, 0644);
    ck_assert_int_eq(ftruncate(fd, 1000), 0);
    close(fd);
    ts_path(&env, path, sizeof(path), "commitlog/00000000000000131072.house");
    close(open(path, O_WRONLY | O_CREAT, 0644));
    st = ts_open(&env);
    check_queues(st, 5);
    ck_assert_int_ne(access(path, F_OK), 0);
    st_store_close(st);
}
END_TEST

/* ---- pre-created files ---- */

#define PRE_BODY 300

/* Puts message seq on Pre/0 with keys "k<seq> common". */
static void put_pre(st_store_t *st, uint32_t seq)
{
    uint8_t body[PRE_BODY];
    char props[64];
    st_msg_t m = {0};
    st_put_result_t res;

    ts_body(seq, body, sizeof(body));
    m.properties_len = (size_t)snprintf(props, sizeof(props), "KEYS\x01k%u common", seq);
    m.properties = props;
    m.topic = "Pre";
    m.topic_len = 3;
    m.body = body;
    m.body_len = sizeof(body);
    st_store_put(st, &m, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    ck_assert_int_eq(res.queue_offset, seq);
}

/* Reads Pre/0 from 0 in pulls of up to 7 (a pull stops at a queue file's
 * end, so several span each boundary) and checks n messages in order. */
static void check_pre(st_store_t *st, uint32_t n)
{
    int64_t off = 0;

    ck_assert_int_eq(st_store_max_offset(st, "Pre", 0), n);
    while (off < n) {
        struct evbuffer *buf = evbuffer_new();
        st_get_result_t gr;
        rmq_record_t recs[8];
        uint8_t *flat;
        size_t got;

        st_store_get(st, "Pre", 0, off, 7, 0, NULL, buf, &gr);
        ck_assert_int_eq(gr.status, ST_GET_FOUND);
        got = ts_records(buf, recs, 8, &flat);
        ck_assert_uint_ge(got, 1);
        for (size_t i = 0; i < got; i++) {
            ck_assert_int_eq(recs[i].queue_offset, off + (int64_t)i);
            ts_check_body(&recs[i], (uint32_t)(off + (int64_t)i));
        }
        ck_assert_int_eq(gr.next_begin_offset, off + (int64_t)got);
        off += (int64_t)got;
        free(flat);
        evbuffer_free(buf);
    }
}

/* Number of records the key query finds for key on Pre. */
static int32_t query_pre(st_store_t *st, const char *key)
{
    struct evbuffer *out = evbuffer_new();
    int32_t count = -1;

    ck_assert_int_eq(st_store_query_key(st, "Pre", key, 0, INT64_MAX, 1000, out, &count), RMQ_OK);
    evbuffer_free(out);
    return count;
}

static int cq_spare_ready(st_store_t *st)
{
    st_cq_t *cq = st_cq_table_find(&st->cqs, "Pre", 3, 0);

    return cq && cq->spare;
}

static int index_spare_ready(st_store_t *st)
{
    int64_t pre, sync;
    int ready;

    st_index_file_stats(st->index, &pre, &sync, &ready);
    return ready;
}

/* Runs base until pred(st) holds; fails after 5 s. */
static void pump_until(struct event_base *base, st_store_t *st, int (*pred)(st_store_t *))
{
    int64_t deadline = rmq_mono_ms() + 5000;

    while (!pred(st)) {
        ck_assert_msg(rmq_mono_ms() < deadline, "pre-created file never arrived");
        event_base_loop(base, EVLOOP_NONBLOCK);
        rmq_sleep_ms(2);
    }
}

static int file_exists(const char *rel)
{
    char path[256];

    ts_path(&env, path, sizeof(path), rel);
    return access(path, F_OK) == 0;
}

#define CQ_FILE(n) "consumequeue/Pre/0/%020d", (n) * TS_CQ_PER_FILE * 20

static int cq_file_exists(int n)
{
    char rel[64];

    snprintf(rel, sizeof(rel), CQ_FILE(n));
    return file_exists(rel);
}

START_TEST(test_cq_precreated_roll)
{
    struct event_base *base;
    rmq_loop_poster_t *poster;
    st_store_t *st = ts_open(&env);
    st_store_stats_t stats;

    rmq_loop_global_init();
    base = event_base_new();
    poster = rmq_loop_poster_new(base);
    ck_assert_int_eq(st_store_start(st, base, poster), RMQ_OK);
    for (uint32_t i = 0; i < 5 * TS_CQ_PER_FILE - 10; i++) {
        if (i > 0 && i % TS_CQ_PER_FILE == 0) {
            /* the next put rolls: the file exists before it is needed */
            ck_assert(cq_spare_ready(st));
            ck_assert(cq_file_exists((int)(i / TS_CQ_PER_FILE)));
        }
        put_pre(st, i);
        event_base_loop(base, EVLOOP_NONBLOCK);
        if (i % TS_CQ_PER_FILE == TS_CQ_PER_FILE - 1)
            pump_until(base, st, cq_spare_ready);
    }
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.cq_files_created_sync, 1);        /* the queue's first */
    ck_assert_int_eq(stats.cq_files_precreated, 4);
    check_pre(st, 5 * TS_CQ_PER_FILE - 10);
    ck_assert_int_eq(query_pre(st, "common"), 5 * TS_CQ_PER_FILE - 10);
    st_store_close(st);
    rmq_loop_poster_free(poster);
    event_base_free(base);
    st = ts_open(&env);
    check_pre(st, 5 * TS_CQ_PER_FILE - 10);
    st_store_close(st);
}
END_TEST

#define SPARE_AT 50      /* past half of a 64-unit queue file and of a 31-message index file */

/* Child: threads running; stops (without closing) once both the queue's
 * next file and the index's next file are pre-created and unused. */
static void child_spares(ts_env_t *e)
{
    struct event_base *base;
    rmq_loop_poster_t *poster;
    st_store_t *st = ts_open(e);

    rmq_loop_global_init();
    base = event_base_new();
    poster = rmq_loop_poster_new(base);
    ck_assert_int_eq(st_store_start(st, base, poster), RMQ_OK);
    for (uint32_t i = 0; i < SPARE_AT; i++)
        put_pre(st, i);
    pump_until(base, st, cq_spare_ready);
    pump_until(base, st, index_spare_ready);
    ck_assert_uint_eq(st_index_file_count(st->index), 2);
}

START_TEST(test_crash_with_unused_spares)
{
    st_store_t *st;

    env.cfg.max_hash_slot_num = 16;
    env.cfg.max_index_num = 64;
    ts_crash_child(&env, child_spares);
    ck_assert(file_exists("abort"));
    ck_assert(cq_file_exists(1));
    ck_assert(file_exists("index/00000000000000000000.spare"));
    st = ts_open(&env);
    check_pre(st, SPARE_AT);
    ck_assert_int_eq(query_pre(st, "common"), SPARE_AT);
    ck_assert_int_eq(query_pre(st, "k49"), 1);
    ck_assert_uint_eq(st_index_file_count(st->index), 2);
    ck_assert(!file_exists("index/00000000000000000000.spare"));
    ck_assert(!cq_file_exists(1));
    /* and the store goes on across the boundary */
    for (uint32_t i = SPARE_AT; i < SPARE_AT + 40; i++)
        put_pre(st, i);
    check_pre(st, SPARE_AT + 40);
    st_store_close(st);
    st = ts_open(&env);
    check_pre(st, SPARE_AT + 40);
    ck_assert_int_eq(query_pre(st, "common"), SPARE_AT + 40);
    st_store_close(st);
}
END_TEST

START_TEST(test_cq_spare_left_by_clean_stop)
{
    struct event_base *base;
    rmq_loop_poster_t *poster;
    st_store_t *st;

    env.cfg.max_hash_slot_num = 16;
    env.cfg.max_index_num = 64;
    st = ts_open(&env);
    rmq_loop_global_init();
    base = event_base_new();
    poster = rmq_loop_poster_new(base);
    ck_assert_int_eq(st_store_start(st, base, poster), RMQ_OK);
    for (uint32_t i = 0; i < 40; i++)
        put_pre(st, i);
    pump_until(base, st, cq_spare_ready);
    st_store_close(st);
    rmq_loop_poster_free(poster);
    event_base_free(base);
    ck_assert(!file_exists("abort"));
    ck_assert(cq_file_exists(1));              /* linked in place, never used */
    st = ts_open(&env);                        /* a clean open: no deep repair */
    check_pre(st, 40);
    ck_assert(!cq_file_exists(1));
    for (uint32_t i = 40; i < 100; i++)
        put_pre(st, i);
    check_pre(st, 100);
    st_store_close(st);
    st = ts_open(&env);
    check_pre(st, 100);
    st_store_close(st);
}
END_TEST

static Suite *recovery_suite(void)
{
    Suite *s = suite_create("store_recovery");
    TCase *tc = tcase_create("recovery");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_clean_restart_does_not_rescan);
    tcase_add_test(tc, test_crash_rescans_from_checkpoint);
    tcase_add_test(tc, test_torn_tail_record_cut_in_half);
    tcase_add_test(tc, test_flipped_byte_in_last_records);
    tcase_add_test(tc, test_lost_consume_queues_rebuilt);
    tcase_add_test(tc, test_kill_with_threads_running);
    tcase_add_test(tc, test_half_created_file_removed);
    tcase_add_test(tc, test_cq_precreated_roll);
    tcase_add_test(tc, test_crash_with_unused_spares);
    tcase_add_test(tc, test_cq_spare_left_by_clean_stop);
    tcase_add_test(tc, test_mixed_host_layouts_recovered);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(recovery_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
