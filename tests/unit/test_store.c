/* test_store.c: the store's append and read paths: appends across file
 * rolls with the end-of-file marker, consume-queue contents, pull statuses
 * and filtering, limits, ids and tag hashes, replication append/read, and
 * atomic metadata files. Each case runs in its own temp dir. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmq_file.h"
#include "st_internal.h"
#include "test_store_util.h"

static ts_env_t env;

static void setup(void)
{
    ts_env_init(&env);
}

static void teardown(void)
{
    ts_env_cleanup(&env);
}

START_TEST(test_append_across_rolls_with_blank)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res;
    st_store_stats_t stats;
    int64_t prev_end = 0;
    int rolls = 0;

    for (uint32_t i = 0; i < 300; i++) {
        ts_put(st, "TopicA", 0, i, 700 + (i * 37) % 900, NULL, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
        ck_assert_int_eq(res.queue_offset, i);
        ck_assert_int_eq(res.count, 1);
        if (res.phys_offset != prev_end) {
            /* rolled: the new record starts a file, the old one ends in a blank */
            const uint8_t *p;
            st_segment_t *seg = st_commitlog_find(&st->cl, prev_end);

            ck_assert_int_eq(res.phys_offset % TS_FILE_SIZE, 0);
            ck_assert_int_eq(res.phys_offset, prev_end - prev_end % TS_FILE_SIZE + TS_FILE_SIZE);
            p = st_segment_rptr(seg, prev_end - seg->start, 8);
            ck_assert_uint_eq((uint32_t)p[4] << 24 | (uint32_t)p[5] << 16 | (uint32_t)p[6] << 8 | p[7],
                              RMQ_MAGIC_BLANK);
            rolls++;
        }
        prev_end = res.end_offset;
    }
    ck_assert_int_ge(rolls, 3);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.commitlog_max_offset, prev_end);
    ck_assert_int_eq(stats.dispatched_offset, prev_end);
    ck_assert_int_eq(stats.put_count, 300);
    ts_check_queue(st, "TopicA", 0, 0, 1, 300);
    st_store_close(st);
    st = ts_open(&env);
    ts_check_queue(st, "TopicA", 0, 0, 1, 300);
    st_store_close(st);
}
END_TEST

START_TEST(test_consume_queue_units)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res[40];
    st_cq_t *cq;

    for (uint32_t i = 0; i < 40; i++)
        ts_put(st, "TopicB", (int32_t)(i % 4), i, 100, i % 2 ? "odd" : "even", &res[i]);
    for (int32_t q = 0; q < 4; q++) {
        cq = st_cq_table_find(&st->cqs, "TopicB", 6, q);
        ck_assert_ptr_nonnull(cq);
        ck_assert_int_eq(cq->max_offset, 10);
        ck_assert_int_eq(st_store_max_offset(st, "TopicB", q), 10);
        ck_assert_int_eq(st_store_min_offset(st, "TopicB", q), 0);
        for (int64_t k = 0; k < 10; k++) {
            uint32_t i = (uint32_t)(k * 4 + q);
            int64_t phys, tag;
            int32_t size;

            ck_assert(st_cq_read(&st->cqs, cq, k, &phys, &size, &tag));
            ck_assert_int_eq(phys, res[i].phys_offset);
            ck_assert_int_eq(size, res[i].end_offset - res[i].phys_offset);
            ck_assert_int_eq(tag, st_tag_hash(i % 2 ? "odd" : "even", i % 2 ? 3 : 4));
        }
    }
    ck_assert_int_eq(st_store_max_offset(st, "TopicB", 9), 0);
    st_store_close(st);
}
END_TEST

START_TEST(test_get_statuses_and_filter)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res;
    struct evbuffer *buf = evbuffer_new();
    st_get_result_t gr;
    int64_t code_a = st_tag_hash("A", 1), code_c = st_tag_hash("C", 1);
    st_tag_filter_t only_a = { 0, &code_a, 1 }, only_c = { 0, &code_c, 1 };
    rmq_record_t recs[16];
    uint8_t *flat;

    for (uint32_t i = 0; i < 10; i++)
        ts_put(st, "T", 0, i, 64, i % 2 ? "B" : "A", &res);
    st_store_get(st, "T", 0, 0, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_FOUND);
    ck_assert_int_eq(gr.msg_count, 10);
    ck_assert_int_eq(gr.next_begin_offset, 10);
    ck_assert_int_eq(gr.min_offset, 0);
    ck_assert_int_eq(gr.max_offset, 10);
    ck_assert_int_eq(gr.bytes, (int64_t)evbuffer_get_length(buf));
    evbuffer_drain(buf, evbuffer_get_length(buf));

    st_store_get(st, "T", 0, 0, 32, 0, &only_a, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_FOUND);
    ck_assert_int_eq(gr.msg_count, 5);
    ck_assert_uint_eq(ts_records(buf, recs, 16, &flat), 5);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(recs[i].queue_offset, 2 * i);
    free(flat);
    evbuffer_drain(buf, evbuffer_get_length(buf));

    st_store_get(st, "T", 0, 0, 32, 0, &only_c, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_NO_MATCHED_MESSAGE);
    ck_assert_int_eq(gr.next_begin_offset, 10);

    st_store_get(st, "T", 0, 3, 2, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_FOUND);
    ck_assert_int_eq(gr.msg_count, 2);
    ck_assert_int_eq(gr.next_begin_offset, 5);
    evbuffer_drain(buf, evbuffer_get_length(buf));

    st_store_get(st, "T", 0, 0, 32, 1, NULL, buf, &gr);
    ck_assert_int_eq(gr.msg_count, 1);
    ck_assert_int_eq(gr.next_begin_offset, 1);
    evbuffer_drain(buf, evbuffer_get_length(buf));

    st_store_get(st, "T", 0, 10, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_OFFSET_OVERFLOW_ONE);
    ck_assert_int_eq(gr.next_begin_offset, 10);
    st_store_get(st, "T", 0, 11, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_OFFSET_OVERFLOW_BADLY);
    st_store_get(st, "T", 1, 0, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_NO_MATCHED_LOGIC_QUEUE);
    st_store_get(st, "Nope", 0, 0, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_NO_MATCHED_LOGIC_QUEUE);
    ck_assert_uint_eq(evbuffer_get_length(buf), 0);
    evbuffer_free(buf);
    st_store_close(st);
}
END_TEST

START_TEST(test_get_never_crosses_cq_file)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res;
    struct evbuffer *buf = evbuffer_new();
    st_get_result_t gr;

    for (uint32_t i = 0; i < TS_CQ_PER_FILE + 20; i++)
        ts_put(st, "T", 2, i, 32, NULL, &res);
    st_store_get(st, "T", 2, TS_CQ_PER_FILE - 4, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_FOUND);
    ck_assert_int_eq(gr.msg_count, 4);
    ck_assert_int_eq(gr.next_begin_offset, TS_CQ_PER_FILE);
    evbuffer_drain(buf, evbuffer_get_length(buf));
    st_store_get(st, "T", 2, TS_CQ_PER_FILE, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.msg_count, 20);
    evbuffer_free(buf);
    st_store_close(st);
}
END_TEST

START_TEST(test_buffer_outlives_store)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res;
    struct evbuffer *buf = evbuffer_new();
    st_get_result_t gr;
    rmq_record_t rec;
    uint8_t *flat;

    ts_put(st, "T", 0, 7, 500, NULL, &res);
    st_store_get(st, "T", 0, 0, 1, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_FOUND);
    st_store_close(st);
    /* the pulled reference keeps the file mapped after close */
    ck_assert_uint_eq(ts_records(buf, &rec, 1, &flat), 1);
    ts_check_body(&rec, 7);
    free(flat);
    evbuffer_free(buf);
}
END_TEST

START_TEST(test_put_limits)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res;
    char long_topic[200];
    static char props[40000];
    uint8_t body[16];
    st_msg_t m = { .topic = "T", .topic_len = 1, .body = body, .body_len = sizeof(body) };

    memset(long_topic, 'a', sizeof(long_topic));
    ts_put(st, "bad topic", 0, 1, 10, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_MESSAGE_ILLEGAL);
    ck_assert_ptr_nonnull(res.why);
    ts_put(st, "", 0, 1, 10, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_MESSAGE_ILLEGAL);
    m.topic = long_topic;
    m.topic_len = 128;
    st_store_put(st, &m, &res);
    ck_assert_int_eq(res.status, ST_PUT_MESSAGE_ILLEGAL);
    m.topic_len = 127;
    st_store_put(st, &m, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    ts_put(st, "T", 0, 1, 16 * 1024 + 1, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_MESSAGE_ILLEGAL);
    ts_put(st, "T%|_-x9", 0, 1, 16 * 1024, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    memset(props, 'p', sizeof(props));
    m.topic = "T";
    m.topic_len = 1;
    m.properties = props;
    m.properties_len = 32768;
    st_store_put(st, &m, &res);
    ck_assert_int_eq(res.status, ST_PUT_MESSAGE_ILLEGAL);
    st_store_close(st);
}
END_TEST

START_TEST(test_batch_put)
{
    st_store_t *st = ts_open(&env);
    st_msg_t msgs[5];
    uint8_t bodies[5][300];
    st_put_result_t res;
    rmq_record_t recs[8];
    uint8_t *flat;
    struct evbuffer *buf = evbuffer_new();
    st_get_result_t gr;
    char id[RMQ_MSG_ID_MAX + 1];

    ts_put(st, "T", 1, 100, 50, NULL, &res);
    for (int i = 0; i < 5; i++) {
        ts_body((uint32_t)i, bodies[i], sizeof(bodies[i]));
        msgs[i] = (st_msg_t){ .topic = "T", .topic_len = 1, .queue_id = 1, .body = bodies[i],
                              .body_len = sizeof(bodies[i]) };
    }
    st_store_put_batch(st, msgs, 5, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    ck_assert_int_eq(res.count, 5);
    ck_assert_int_eq(res.queue_offset, 1);
    rmq_msg_id_format(0, 0x7F000001, NULL, 10911, res.phys_offset, id);
    ck_assert_str_eq(res.msg_id, id);
    st_store_get(st, "T", 1, 1, 32, 0, NULL, buf, &gr);
    ck_assert_uint_eq(ts_records(buf, recs, 8, &flat), 5);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(recs[i].queue_offset, 1 + i);
        ts_check_body(&recs[i], (uint32_t)i);
    }
    ck_assert_int_eq(recs[4].phys_offset + recs[4].total_size, res.end_offset);
    free(flat);
    msgs[3].queue_id = 2;
    st_store_put_batch(st, msgs, 5, &res);
    ck_assert_int_eq(res.status, ST_PUT_MESSAGE_ILLEGAL);
    evbuffer_free(buf);
    st_store_close(st);
}
END_TEST

/* brokerIP1=::1: records carry an IPv6 store host (RocketMQ's layout,
 * 12 bytes more), ids are 56 digits and a batch's ids follow those sizes. */
START_TEST(test_ipv6_store_host)
{
    ts_env_t env6 = env;
    st_msg_t msgs[2] = {
        { .topic = "T", .topic_len = 1, .queue_id = 0, .body = (const uint8_t *)"ab", .body_len = 2 },
        { .topic = "T", .topic_len = 1, .queue_id = 0, .body = (const uint8_t *)"cd", .body_len = 2 },
    };
    static const uint8_t loop6[16] = { [15] = 1 };
    st_put_result_t res;
    st_get_result_t gr;
    rmq_record_t recs[2];
    uint8_t *flat;
    char id[RMQ_MSG_ID_MAX + 1], addr[RMQ_HOST_TEXT_MAX];
    int64_t off;

    env6.cfg.store_host_v6 = 1;
    memcpy(env6.cfg.store_host_ip6, loop6, 16);
    st_store_t *st = ts_open(&env6);
    struct evbuffer *buf = evbuffer_new();
    ck_assert_uint_eq(st_msg_record_size(st, &msgs[0]), rmq_record_size(RMQ_SYSFLAG_STOREHOST_V6, 2, 1, 0));
    st_store_put_batch(st, msgs, 2, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    ck_assert_uint_eq(strlen(res.msg_id), 56);
    ck_assert_str_eq(res.msg_id, "0000000000000000000000000000000100002A9F0000000000000000");
    st_store_get(st, "T", 0, 0, 32, 0, NULL, buf, &gr);
    ck_assert_uint_eq(ts_records(buf, recs, 2, &flat), 2);
    ck_assert_int_eq(recs[0].sys_flag & RMQ_SYSFLAG_HOSTS_V6, RMQ_SYSFLAG_STOREHOST_V6);
    ck_assert_mem_eq(recs[1].store_ip6, loop6, 16);
    ck_assert_int_eq(recs[1].phys_offset, (int64_t)st_msg_record_size(st, &msgs[0]));
    rmq_record_msg_id(&recs[0], id);
    ck_assert_str_eq(id, res.msg_id);
    ck_assert_int_eq(rmq_msg_id_parse(id, addr, sizeof addr, &off), RMQ_OK);
    ck_assert_str_eq(addr, "[::1]:10911");
    ck_assert_int_eq(off, 0);
    free(flat);
    evbuffer_free(buf);
    st_store_close(st);
}
END_TEST

START_TEST(test_tag_hash)
{
    /* Java "TagA".hashCode() == 2598919, "".hashCode() == 0, "\u00e9" == 233 */
    ck_assert_int_eq(st_tag_hash("TagA", 4), 2598919);
    ck_assert_int_eq(st_tag_hash("", 0), 0);
    ck_assert_int_eq(st_tag_hash("\xc3\xa9", 2), 233);
    /* overflow wraps like Java int: "abcdefghij".hashCode() == -634317659 */
    ck_assert_int_eq(st_tag_hash("abcdefghij", 10), -634317659);
}
END_TEST

START_TEST(test_read_record_by_offset)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res;
    struct evbuffer *buf = evbuffer_new();
    rmq_record_t rec;
    uint8_t *flat;

    ts_put(st, "T", 0, 1, 10, NULL, &res);
    ts_put(st, "T", 0, 2, 20, "x", &res);
    ck_assert_int_eq(st_store_read_record(st, res.phys_offset, buf), RMQ_OK);
    ck_assert_uint_eq(ts_records(buf, &rec, 1, &flat), 1);
    ts_check_body(&rec, 2);
    free(flat);
    ck_assert_int_eq(st_store_read_record(st, res.phys_offset + 1, buf), RMQ_ENOTFOUND);
    ck_assert_int_eq(st_store_read_record(st, res.end_offset, buf), RMQ_ENOTFOUND);
    ck_assert_int_eq(st_store_time_at(st, "T", 0, 1), res.store_timestamp);
    ck_assert_int_eq(st_store_offset_by_time(st, "T", 0, 0), 0);
    ck_assert_int_eq(st_store_offset_by_time(st, "T", 0, res.store_timestamp + 1), 2);
    ck_assert_int_eq(st_store_time_at(st, "T", 0, 5), -1);
    evbuffer_free(buf);
    st_store_close(st);
}
END_TEST

START_TEST(test_raw_replication_byte_identical)
{
    ts_env_t slave_env;
    st_store_t *master = ts_open(&env), *slave;
    st_put_result_t res;
    int64_t off = 0;
    size_t chunk = 777;
    st_store_stats_t ms, ss;

    ts_env_init(&slave_env);
    slave_env.cfg.read_only_role = 1;
    slave = ts_open(&slave_env);
    for (uint32_t i = 0; i < 250; i++)
        ts_put(master, i % 3 ? "Rep" : "Other", (int32_t)(i % 2), i, 300 + (i * 53) % 1200,
               i % 5 ? NULL : "t5", &res);
    while (off < res.end_offset) {
        struct evbuffer *buf = evbuffer_new();
        int64_t n = st_store_read_raw(master, off, chunk, buf);
        uint8_t *copy = malloc((size_t)n);

        ck_assert_int_gt(n, 0);
        ck_assert_int_le(n, (int64_t)chunk);
        evbuffer_remove(buf, copy, (size_t)n);
        ck_assert_int_eq(st_store_append_raw(slave, off, copy, (size_t)n), RMQ_OK);
        off += n;
        chunk = chunk * 7 % 5000 + 13;
        free(copy);
        evbuffer_free(buf);
    }
    ck_assert_int_eq(st_store_read_raw(master, off, 100, NULL), 0);
    ck_assert_int_eq(st_store_append_raw(slave, off + 1, "x", 1), RMQ_EINVAL);
    st_store_stats(master, &ms);
    st_store_stats(slave, &ss);
    ck_assert_int_eq(ss.commitlog_max_offset, ms.commitlog_max_offset);
    ck_assert_int_eq(ss.dispatched_offset, ms.commitlog_max_offset);
    for (int64_t s = 0; s < ms.commitlog_max_offset; s += TS_FILE_SIZE) {
        st_segment_t *a = st_commitlog_find(&master->cl, s), *b = st_commitlog_find(&slave->cl, s);
        int64_t len = ms.commitlog_max_offset - s < TS_FILE_SIZE ? ms.commitlog_max_offset - s
                                                                 : TS_FILE_SIZE;

        ck_assert_ptr_nonnull(b);
        ck_assert_int_eq(memcmp(a->base, b->base, (size_t)len), 0);
    }
    for (int32_t q = 0; q < 2; q++) {
        ck_assert_int_eq(st_store_max_offset(slave, "Rep", q), st_store_max_offset(master, "Rep", q));
        ck_assert_int_eq(st_store_max_offset(slave, "Other", q),
                         st_store_max_offset(master, "Other", q));
    }
    ts_put(slave, "Rep", 0, 1, 10, NULL, &res);
    ck_assert_int_eq(res.status, ST_PUT_NOT_WRITABLE_ROLE);
    st_store_close(master);
    st_store_close(slave);
    slave = ts_open(&slave_env);
    st_store_stats(slave, &ss);
    ck_assert_int_eq(ss.commitlog_max_offset, ms.commitlog_max_offset);
    st_store_close(slave);
    ts_env_cleanup(&slave_env);
}
END_TEST

START_TEST(test_delete_topic)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res;
    char path[256];
    struct stat sb;

    ts_put(st, "Gone", 0, 1, 10, NULL, &res);
    ts_put(st, "Stay", 0, 2, 10, NULL, &res);
    st_store_delete_topic(st, "Gone");
    ck_assert_int_eq(st_store_max_offset(st, "Gone", 0), 0);
    ts_path(&env, path, sizeof(path), "consumequeue/Gone");
    ck_assert_int_ne(stat(path, &sb), 0);
    ts_put(st, "Gone", 0, 3, 10, NULL, &res);
    ck_assert_int_eq(res.queue_offset, 0);
    ck_assert_int_eq(st_store_max_offset(st, "Stay", 0), 1);
    st_store_close(st);
}
END_TEST

START_TEST(test_lock_excludes_second_open)
{
    st_store_t *st = ts_open(&env);
    char err[256];

    ck_assert_ptr_null(st_store_open(&env.cfg, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "locked"));
    st_store_close(st);
}
END_TEST

START_TEST(test_file_write_atomic)
{
    char path[256], *data;
    size_t len;

    ts_path(&env, path, sizeof(path), "meta.json");
    ck_assert_int_eq(rmq_file_read_all(path, &data, &len), RMQ_ENOTFOUND);
    ck_assert_int_eq(rmq_file_write_atomic(path, "{\"a\":1}", 7), RMQ_OK);
    ck_assert_int_eq(rmq_file_read_all(path, &data, &len), RMQ_OK);
    ck_assert_uint_eq(len, 7);
    ck_assert_str_eq(data, "{\"a\":1}");
    free(data);
    ck_assert_int_eq(rmq_file_write_atomic(path, "", 0), RMQ_OK);
    ck_assert_int_eq(rmq_file_read_all(path, &data, &len), RMQ_OK);
    ck_assert_uint_eq(len, 0);
    free(data);
    ts_path(&env, path, sizeof(path), "meta.json.tmp");
    ck_assert_int_ne(access(path, F_OK), 0);
    ts_path(&env, path, sizeof(path), "no/such/dir/x");
    ck_assert_int_ne(rmq_file_write_atomic(path, "x", 1), RMQ_OK);
}
END_TEST

static Suite *store_suite(void)
{
    Suite *s = suite_create("store");
    TCase *tc = tcase_create("core");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_append_across_rolls_with_blank);
    tcase_add_test(tc, test_consume_queue_units);
    tcase_add_test(tc, test_get_statuses_and_filter);
    tcase_add_test(tc, test_get_never_crosses_cq_file);
    tcase_add_test(tc, test_buffer_outlives_store);
    tcase_add_test(tc, test_put_limits);
    tcase_add_test(tc, test_batch_put);
    tcase_add_test(tc, test_tag_hash);
    tcase_add_test(tc, test_ipv6_store_host);
    tcase_add_test(tc, test_read_record_by_offset);
    tcase_add_test(tc, test_raw_replication_byte_identical);
    tcase_add_test(tc, test_delete_topic);
    tcase_add_test(tc, test_lock_excludes_second_open);
    tcase_add_test(tc, test_file_write_atomic);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(store_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
