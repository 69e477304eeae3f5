/* test_store_index.c: the key index: KEYS words and UNIQ_KEY are found by
 * topic + key, other topics and colliding keys are not; the time range
 * filters; full files roll and queries span them; a clean restart keeps the
 * files; a crash (child exits without closing) rebuilds what was not
 * durable without duplicating entries; retention drops files that only
 * point below the commit log's minimum; the index can be disabled; with the
 * store's threads running, every file is pre-created by the housekeeping
 * thread (the spare exists before the roll) and renamed into place, and
 * queries span the files before and after a clean restart. */
#include <check.h>
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

static ts_env_t env;

static void setup(void)
{
    ts_env_init(&env);
    env.cfg.max_hash_slot_num = 16;
    env.cfg.max_index_num = 64;
}

static void teardown(void)
{
    ts_env_cleanup(&env);
}

/* Puts one message with KEYS keys (may be NULL) and UNIQ_KEY uniq. */
static int64_t put_keyed(st_store_t *st, const char *topic, const char *keys, const char *uniq)
{
    char props[256];
    int len = 0;
    st_msg_t m = {0};
    st_put_result_t res;

    props[0] = '\0';
    if (keys)
        len += snprintf(props + len, sizeof(props) - (size_t)len, "KEYS\x01%s", keys);
    if (uniq)
        len += snprintf(props + len, sizeof(props) - (size_t)len, "%sUNIQ_KEY\x01%s", len ? "\x02" : "", uniq);
    m.topic = topic;
    m.topic_len = strlen(topic);
    m.body = "body";
    m.body_len = 4;
    m.properties = props;
    m.properties_len = (size_t)len;
    st_store_put(st, &m, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    return res.phys_offset;
}

/* Number of records the store returns for topic/key over all time. */
static int query(st_store_t *st, const char *topic, const char *key, int64_t b, int64_t e, int32_t max)
{
    struct evbuffer *out = evbuffer_new();
    int32_t count = -1;
    rmq_record_t recs[128];
    uint8_t *flat;
    size_t n;

    ck_assert_int_eq(st_store_query_key(st, topic, key, b, e, max, out, &count), RMQ_OK);
    n = ts_records(out, recs, 128, &flat);
    ck_assert_int_eq((int)n, count);
    for (size_t i = 0; i < n; i++)
        ck_assert(recs[i].topic_len == strlen(topic) && !memcmp(recs[i].topic, topic, recs[i].topic_len));
    free(flat);
    evbuffer_free(out);
    return count;
}

#define ALL 0, INT64_MAX

/* Sum of entries over all files (entry 0 of each is unused). */
static int total_entries(st_store_t *st)
{
    int sum = 0;

    for (size_t i = 0; i < st_index_file_count(st->index); i++) {
        st_index_header_t h;

        st_index_file_header(st->index, i, &h);
        sum += h.index_count - 1;
    }
    return sum;
}

START_TEST(test_keys_and_uniq)
{
    st_store_t *st = ts_open(&env);

    put_keyed(st, "TopicA", "order-1 user-7", "U1");
    put_keyed(st, "TopicA", "order-2", "U2");
    put_keyed(st, "TopicA", "order-1", NULL);
    put_keyed(st, "TopicB", "order-1", "U3");
    put_keyed(st, "TopicA", NULL, NULL);
    ck_assert_int_eq(query(st, "TopicA", "order-1", ALL, 32), 2);
    ck_assert_int_eq(query(st, "TopicA", "user-7", ALL, 32), 1);
    ck_assert_int_eq(query(st, "TopicA", "U2", ALL, 32), 1);
    ck_assert_int_eq(query(st, "TopicB", "order-1", ALL, 32), 1);
    ck_assert_int_eq(query(st, "TopicB", "order-2", ALL, 32), 0);
    ck_assert_int_eq(query(st, "TopicA", "order", ALL, 32), 0);
    ck_assert_int_eq(query(st, "TopicA", "order-1", ALL, 1), 1);
    /* 16 slots: many keys collide; verification keeps results exact */
    for (int i = 0; i < 40; i++) {
        char k[16];

        snprintf(k, sizeof(k), "k%d", i);
        put_keyed(st, "TopicC", k, NULL);
    }
    for (int i = 0; i < 40; i++) {
        char k[16];

        snprintf(k, sizeof(k), "k%d", i);
        ck_assert_int_eq(query(st, "TopicC", k, ALL, 32), 1);
    }
    st_store_close(st);
}
END_TEST

START_TEST(test_time_range)
{
    st_store_t *st = ts_open(&env);
    int64_t t0, t1, last_ts, last_phys;
    st_store_stats_t stats;

    st_store_index_last(st, &last_ts, &last_phys);      /* nothing indexed yet */
    ck_assert(last_ts == 0 && last_phys == 0);
    put_keyed(st, "T", "k", NULL);
    usleep(30 * 1000);
    t0 = rmq_wall_ms();
    put_keyed(st, "T", "k", NULL);
    t1 = rmq_wall_ms();
    usleep(30 * 1000);
    put_keyed(st, "T", "k", NULL);
    ck_assert_int_eq(query(st, "T", "k", ALL, 32), 3);
    ck_assert_int_eq(query(st, "T", "k", t0, t1, 32), 1);
    ck_assert_int_eq(query(st, "T", "k", 0, t0 - 1, 32), 1);
    ck_assert_int_eq(query(st, "T", "k", t1 + 1, INT64_MAX, 32), 1);
    /* QUERY_MESSAGE's indexLastUpdate*: the newest indexed record */
    st_store_index_last(st, &last_ts, &last_phys);
    st_store_stats(st, &stats);
    ck_assert_int_gt(last_ts, t1);
    ck_assert_int_eq(last_phys, stats.commitlog_max_offset);
    st_store_close(st);
}
END_TEST

START_TEST(test_roll_and_restart)
{
    st_store_t *st = ts_open(&env);

    for (int i = 0; i < 100; i++)   /* one entry each, 63 per file */
        put_keyed(st, "T", i % 2 ? "odd" : "even", NULL);
    ck_assert_uint_eq(st_index_file_count(st->index), 2);
    ck_assert_int_eq(total_entries(st), 100);
    ck_assert_int_eq(query(st, "T", "odd", ALL, 64), 50);
    st_store_close(st);
    st = ts_open(&env);
    ck_assert_int_eq(total_entries(st), 100);
    ck_assert_int_eq(query(st, "T", "even", ALL, 64), 50);
    /* a clean close records the whole log as indexed: the next open
     * re-reads nothing, even after messages without keys */
    for (int i = 0; i < 20; i++)
        put_keyed(st, "T", NULL, NULL);
    int64_t end = st->cl.write_pos;
    st_store_close(st);
    char path[256], *data;
    size_t len;

    ts_path(&env, path, sizeof(path), "index/checkpoint");
    ck_assert_int_eq(rmq_file_read_all(path, &data, &len), RMQ_OK);
    ck_assert_int_eq(atoll(data), end);
    free(data);
    st = ts_open(&env);
    put_keyed(st, "T", "odd", NULL);
    ck_assert_int_eq(query(st, "T", "odd", ALL, 64), 51);
    st_store_close(st);
}
END_TEST

static void crash_puts(ts_env_t *e)
{
    st_store_t *st = ts_open(e);

    for (int i = 0; i < 70; i++)
        put_keyed(st, "T", "x", NULL);
    /* exits without closing: the active file was never synced */
}

START_TEST(test_crash_rebuild)
{
    st_store_t *st = ts_open(&env);

    for (int i = 0; i < 10; i++)
        put_keyed(st, "T", "x", NULL);
    st_store_close(st);
    ts_crash_child(&env, crash_puts);
    st = ts_open(&env);
    ck_assert_int_eq(query(st, "T", "x", ALL, 100), 80);
    ck_assert_int_eq(total_entries(st), 80);
    st_store_close(st);
    /* index files lost entirely: rebuilt from the log */
    char cmd[256];

    snprintf(cmd, sizeof(cmd), "rm -rf %s/index", env.dir);
    ck_assert_int_eq(system(cmd), 0);
    st = ts_open(&env);
    ck_assert_int_eq(total_entries(st), 80);
    ck_assert_int_eq(query(st, "T", "x", ALL, 100), 80);
    st_store_close(st);
}
END_TEST

START_TEST(test_retention)
{
    st_store_t *st = ts_open(&env);
    int64_t last = 0;

    for (int i = 0; i < 200; i++)
        last = put_keyed(st, "T", "x", NULL);
    size_t before = st_index_file_count(st->index);

    ck_assert_uint_ge(before, 3);
    st_index_retain(st, last);
    ck_assert_uint_eq(st_index_file_count(st->index), 1);
    st_store_close(st);
}
END_TEST

START_TEST(test_disabled)
{
    st_store_t *st;
    struct evbuffer *out = evbuffer_new();
    int32_t count;

    env.cfg.message_index_disable = 1;
    st = ts_open(&env);
    put_keyed(st, "T", "x", NULL);
    ck_assert_int_eq(st_store_query_key(st, "T", "x", ALL, 32, out, &count), RMQ_ENOTFOUND);
    char path[256];

    ts_path(&env, path, sizeof(path), "index");
    ck_assert_int_ne(access(path, F_OK), 0);
    evbuffer_free(out);
    st_store_close(st);
}
END_TEST

/* Runs base until the index has a spare ready (or 5 s pass). */
static int wait_spare(st_store_t *st, struct event_base *base)
{
    int64_t deadline = rmq_mono_ms() + 5000, pre, sync;
    int ready = 0;

    for (;;) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        st_index_file_stats(st->index, &pre, &sync, &ready);
        if (ready || rmq_mono_ms() > deadline)
            return ready;
        rmq_sleep_ms(2);
    }
}

/* Entries the active file still has room for (0 without a file). */
static int active_room(st_store_t *st)
{
    size_t n = st_index_file_count(st->index);
    st_index_header_t h;

    if (n == 0)
        return 0;
    st_index_file_header(st->index, n - 1, &h);
    return 64 - h.index_count;
}

START_TEST(test_precreated_files_roll)
{
    struct event_base *base;
    rmq_loop_poster_t *poster;
    st_store_t *st = ts_open(&env);
    st_store_stats_t stats;
    char spare[256];
    int64_t t_mid = 0;

    rmq_loop_global_init();
    base = event_base_new();
    poster = rmq_loop_poster_new(base);
    ck_assert_int_eq(st_store_start(st, base, poster), RMQ_OK);
    ts_path(&env, spare, sizeof(spare), "index/00000000000000000000.spare");
    /* the first file is pre-created at start, before any keyed message */
    ck_assert(wait_spare(st, base));
    ck_assert_int_eq(access(spare, F_OK), 0);
    ck_assert_uint_eq(st_index_file_count(st->index), 0);
    for (int i = 0; i < 120; i++) {        /* two entries each, 31 per file */
        char keys[32];

        if (active_room(st) < 2) {
            /* the next add rolls: the spare must be waiting, on disk */
            ck_assert(wait_spare(st, base));
            ck_assert_int_eq(access(spare, F_OK), 0);
        }
        snprintf(keys, sizeof(keys), "k%d common", i);
        put_keyed(st, "T", keys, NULL);
        if (i == 60)
            t_mid = rmq_wall_ms();
        event_base_loop(base, EVLOOP_NONBLOCK);
    }
    st_store_stats(st, &stats);
    ck_assert_uint_eq(st_index_file_count(st->index), 4);
    ck_assert_int_eq(stats.index_files_precreated, 4);
    ck_assert_int_eq(stats.index_files_created_sync, 0);
    ck_assert_int_eq(total_entries(st), 240);
    ck_assert_int_eq(query(st, "T", "common", ALL, 128), 120);
    ck_assert_int_ge(query(st, "T", "common", t_mid, INT64_MAX, 128), 59);
    for (int i = 0; i < 120; i += 7) {
        char k[16];

        snprintf(k, sizeof(k), "k%d", i);
        ck_assert_int_eq(query(st, "T", k, ALL, 8), 1);
    }
    /* files carry their first record's offset as their name */
    for (size_t f = 0; f < st_index_file_count(st->index); f++) {
        st_index_header_t h;
        char name[64], path[256];

        st_index_file_header(st->index, f, &h);
        snprintf(name, sizeof(name), "index/%020lld", (long long)h.begin_phys);
        ts_path(&env, path, sizeof(path), name);
        ck_assert_int_eq(access(path, F_OK), 0);
    }
    st_store_close(st);
    rmq_loop_poster_free(poster);
    event_base_free(base);
    /* an unused spare does not outlive the store; the files do */
    ck_assert_int_ne(access(spare, F_OK), 0);
    st = ts_open(&env);
    ck_assert_uint_eq(st_index_file_count(st->index), 4);
    ck_assert_int_eq(total_entries(st), 240);
    ck_assert_int_eq(query(st, "T", "common", ALL, 128), 120);
    ck_assert_int_eq(query(st, "T", "k119", ALL, 8), 1);
    st_store_close(st);
}
END_TEST

static Suite *index_suite(void)
{
    Suite *s = suite_create("store_index");
    TCase *tc = tcase_create("index");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_keys_and_uniq);
    tcase_add_test(tc, test_time_range);
    tcase_add_test(tc, test_roll_and_restart);
    tcase_add_test(tc, test_crash_rebuild);
    tcase_add_test(tc, test_retention);
    tcase_add_test(tc, test_disabled);
    tcase_add_test(tc, test_precreated_files_roll);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(index_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
