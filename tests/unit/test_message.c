/* test_message.c: the record and batch codecs: round trips, every
 * truncation, corruption detection (magic, lengths, CRC), blanks, patching,
 * and properties strings: lookup, iteration and building. */
#include "rmq_message.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char PROPS[] = "TAGS\x01tagA\x02KEYS\x01k1 k2\x02UNIQ_KEY\x01" "0A0B0C";

/* Encodes a sample record into a malloc'ed buffer; *len gets its size. */
static uint8_t *sample(size_t *len, rmq_record_t *rec)
{
    static const char body[] = "hello, record";
    uint8_t *buf;

    memset(rec, 0, sizeof(*rec));
    rec->queue_id = 3;
    rec->flag = -7;
    rec->queue_offset = 123456789012LL;
    rec->phys_offset = 987654321LL;
    rec->sys_flag = 0x2;
    rec->born_timestamp = 1700000000123LL;
    rec->born_ip = 0x7F000001;
    rec->born_port = 40000;
    rec->store_timestamp = 1700000000456LL;
    rec->store_ip = 0x0A000001;
    rec->store_port = 10911;
    rec->reconsume_times = 2;
    rec->prepared_tx_offset = 0;
    rec->body = (const uint8_t *)body;
    rec->body_len = sizeof(body) - 1;
    rec->topic = "TopicTest";
    rec->topic_len = 9;
    rec->properties = PROPS;
    rec->properties_len = sizeof(PROPS) - 1;
    *len = rmq_record_size(rec->body_len, rec->topic_len, rec->properties_len);
    buf = malloc(*len);
    ck_assert_uint_eq(rmq_record_encode(rec, buf), *len);
    return buf;
}

START_TEST(test_record_round_trip)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample(&len, &in);

    ck_assert_uint_eq(len, RMQ_RECORD_FIXED + in.body_len + 1 + in.topic_len + 2 + in.properties_len);
    ck_assert_int_eq(rmq_record_decode(buf, len, 1, &out), RMQ_OK);
    ck_assert_uint_eq(out.total_size, len);
    ck_assert_int_eq(out.queue_id, 3);
    ck_assert_int_eq(out.flag, -7);
    ck_assert_int_eq(out.queue_offset, in.queue_offset);
    ck_assert_int_eq(out.phys_offset, in.phys_offset);
    ck_assert_int_eq(out.sys_flag, 2);
    ck_assert_int_eq(out.born_timestamp, in.born_timestamp);
    ck_assert_uint_eq(out.born_ip, in.born_ip);
    ck_assert_uint_eq(out.born_port, in.born_port);
    ck_assert_int_eq(out.store_timestamp, in.store_timestamp);
    ck_assert_uint_eq(out.store_ip, in.store_ip);
    ck_assert_uint_eq(out.store_port, in.store_port);
    ck_assert_int_eq(out.reconsume_times, 2);
    ck_assert_uint_eq(out.body_len, in.body_len);
    ck_assert_mem_eq(out.body, in.body, in.body_len);
    ck_assert_uint_eq(out.topic_len, 9);
    ck_assert_mem_eq(out.topic, "TopicTest", 9);
    ck_assert_uint_eq(out.properties_len, in.properties_len);
    ck_assert_mem_eq(out.properties, PROPS, in.properties_len);
    free(buf);
}
END_TEST

START_TEST(test_record_every_truncation_is_eagain)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample(&len, &in);

    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);

        memcpy(copy, buf, cut);
        ck_assert_int_eq(rmq_record_decode(copy, cut, 1, &out), RMQ_EAGAIN);
        free(copy);
    }
    free(buf);
}
END_TEST

START_TEST(test_record_every_flipped_byte_detected)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample(&len, &in);

    for (size_t i = 0; i < len; i++) {
        rmq_err_t rc;

        buf[i] ^= 0x40;
        rc = rmq_record_decode(buf, len, 1, &out);
        ck_assert_msg(rc == RMQ_ECORRUPT || rc == RMQ_EAGAIN, "byte %zu: %d", i, rc);
        buf[i] ^= 0x40;
    }
    ck_assert_int_eq(rmq_record_decode(buf, len, 1, &out), RMQ_OK);
    free(buf);
}
END_TEST

START_TEST(test_record_crc_only_when_asked)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample(&len, &in);

    buf[RMQ_RECORD_FIXED] ^= 1;
    ck_assert_int_eq(rmq_record_decode(buf, len, 1, &out), RMQ_ECORRUPT);
    ck_assert_int_eq(rmq_record_decode(buf, len, 0, &out), RMQ_OK);
    free(buf);
}
END_TEST

START_TEST(test_record_patch)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample(&len, &in);

    rmq_record_patch(buf, 42, 4096, 1234);
    ck_assert_int_eq(rmq_record_decode(buf, len, 1, &out), RMQ_OK);
    ck_assert_int_eq(out.queue_offset, 42);
    ck_assert_int_eq(out.phys_offset, 4096);
    ck_assert_int_eq(out.store_timestamp, 1234);
    ck_assert_int_eq(out.born_timestamp, in.born_timestamp);
    free(buf);
}
END_TEST

START_TEST(test_record_blank_and_garbage)
{
    uint8_t blank[8] = {0, 0, 0x10, 0, 0xCB, 0xD4, 0x31, 0x94};
    uint8_t zeros[128] = {0};
    rmq_record_t out;

    ck_assert_int_eq(rmq_record_decode(blank, sizeof(blank), 1, &out), RMQ_ENOTFOUND);
    ck_assert_uint_eq(out.total_size, 4096);
    ck_assert_int_eq(rmq_record_decode(zeros, sizeof(zeros), 1, &out), RMQ_ECORRUPT);
    blank[0] = blank[1] = blank[2] = 0;
    blank[3] = 4;
    ck_assert_int_eq(rmq_record_decode(blank, sizeof(blank), 1, &out), RMQ_ECORRUPT);
}
END_TEST

START_TEST(test_record_size_claims_checked)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample(&len, &in);

    /* body length larger than the record */
    buf[84] = 0x7F;
    ck_assert_int_eq(rmq_record_decode(buf, len, 0, &out), RMQ_ECORRUPT);
    free(buf);
    buf = sample(&len, &in);
    /* total size one byte short of the content */
    buf[3] = (uint8_t)(buf[3] - 1);
    ck_assert_int_eq(rmq_record_decode(buf, len, 0, &out), RMQ_ECORRUPT);
    free(buf);
}
END_TEST

START_TEST(test_props_get)
{
    size_t vlen;
    const char *v = rmq_props_get(PROPS, sizeof(PROPS) - 1, "KEYS", &vlen);

    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(vlen, 5);
    ck_assert_mem_eq(v, "k1 k2", 5);
    v = rmq_props_get(PROPS, sizeof(PROPS) - 1, "UNIQ_KEY", &vlen);
    ck_assert_uint_eq(vlen, 6);
    ck_assert_ptr_null(rmq_props_get(PROPS, sizeof(PROPS) - 1, "TAG", &vlen));
    ck_assert_ptr_null(rmq_props_get(PROPS, sizeof(PROPS) - 1, "DELAY", &vlen));
    ck_assert_ptr_null(rmq_props_get("", 0, "TAGS", &vlen));
    v = rmq_props_get("A\x01" "1\x02", 4, "A", &vlen);
    ck_assert_uint_eq(vlen, 1);
}
END_TEST

START_TEST(test_batch_round_trip_and_errors)
{
    rmq_batch_entry_t e[3] = {
        { 1, (const uint8_t *)"abc", 3, "TAGS\x01x", 6 },
        { 2, (const uint8_t *)"", 0, "", 0 },
        { -1, (const uint8_t *)"0123456789", 10, NULL, 0 },
    };
    uint8_t buf[256];
    size_t len = 0, pos = 0, used;
    rmq_batch_entry_t out;

    for (int i = 0; i < 3; i++)
        len += rmq_batch_encode(&e[i], buf + len);
    ck_assert_uint_eq(len, rmq_batch_entry_size(3, 6) + rmq_batch_entry_size(0, 0) +
                               rmq_batch_entry_size(10, 0));
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(rmq_batch_decode(buf + pos, len - pos, &out, &used), RMQ_OK);
        ck_assert_int_eq(out.flag, e[i].flag);
        ck_assert_uint_eq(out.body_len, e[i].body_len);
        ck_assert_mem_eq(out.body, e[i].body, e[i].body_len);
        ck_assert_uint_eq(out.properties_len, e[i].properties_len);
        pos += used;
    }
    ck_assert_uint_eq(pos, len);
    for (size_t cut = 0; cut < rmq_batch_entry_size(3, 6); cut++)
        ck_assert_int_eq(rmq_batch_decode(buf, cut, &out, &used), RMQ_EPROTO);
    buf[11] = 200; /* body length past the entry */
    ck_assert_int_eq(rmq_batch_decode(buf, len, &out, &used), RMQ_EPROTO);
}
END_TEST

START_TEST(test_props_next_skips_pieces_without_separator)
{
    static const char props[] = "A\x01" "1\x02junk\x02\x01" "e\x02" "B\x01\x02" "C\x01x\x01y";
    size_t pos = 0;
    rmq_prop_t p;

    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 1);
    ck_assert_mem_eq(p.name, "A", 1);
    ck_assert_uint_eq(p.name_len, 1);
    ck_assert_mem_eq(p.value, "1", 1);
    ck_assert_uint_eq(p.value_len, 1);
    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 1);
    ck_assert_uint_eq(p.name_len, 0);   /* empty names are the caller's call */
    ck_assert_uint_eq(p.value_len, 1);
    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 1);
    ck_assert_mem_eq(p.name, "B", 1);
    ck_assert_uint_eq(p.value_len, 0);
    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 1);
    ck_assert_mem_eq(p.name, "C", 1);
    ck_assert_uint_eq(p.value_len, 3);   /* split at the first \x01 only */
    ck_assert_mem_eq(p.value, "x\x01y", 3);
    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 0);
    pos = 0;
    ck_assert_int_eq(rmq_props_next(NULL, 0, &pos, &p), 0);
    ck_assert_int_eq(rmq_props_next("", 0, &pos, &p), 0);
}
END_TEST

START_TEST(test_props_buf_builds_and_grows)
{
    rmq_props_buf_t pb = {0};
    char name[16];

    ck_assert_int_eq(rmq_props_buf_put(&pb, "TAGS", "tagA"), RMQ_OK);
    ck_assert_str_eq(pb.data, "TAGS\x01tagA");
    ck_assert_uint_eq(pb.len, 9);
    ck_assert_int_eq(rmq_props_buf_append(&pb, "KEYSxx", 4, "k1 k2!", 5), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, "UNIQ_KEY", "0A0B0C"), RMQ_OK);
    ck_assert_uint_eq(pb.len, sizeof(PROPS) - 1);
    ck_assert_mem_eq(pb.data, PROPS, sizeof(PROPS));
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "N%d", i);
        ck_assert_int_eq(rmq_props_buf_put(&pb, name, "value"), RMQ_OK);
    }
    ck_assert_uint_lt(pb.len, pb.cap);
    ck_assert_uint_eq(strlen(pb.data), pb.len);
    size_t vlen;
    const char *v = rmq_props_get(pb.data, pb.len, "N199", &vlen);
    ck_assert_ptr_nonnull(v);
    ck_assert_mem_eq(v, "value", vlen);
    rmq_props_buf_free(&pb);
    ck_assert_ptr_null(pb.data);
    ck_assert_uint_eq(pb.len + pb.cap, 0);
}
END_TEST

START_TEST(test_props_buf_reserve_and_empty_values)
{
    rmq_props_buf_t pb = {0};

    ck_assert_int_eq(rmq_props_buf_reserve(&pb, 0), RMQ_OK);
    ck_assert_ptr_nonnull(pb.data);
    ck_assert_uint_ge(pb.cap, 1);
    ck_assert_int_eq(rmq_props_buf_reserve(&pb, 1000), RMQ_OK);
    ck_assert_uint_ge(pb.cap, 1001);
    ck_assert_int_eq(rmq_props_buf_put(&pb, "E", ""), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, "F", "f"), RMQ_OK);
    ck_assert_uint_eq(pb.len, 6);
    ck_assert_mem_eq(pb.data, "E\x01\x02" "F\x01" "f", 7);
    rmq_props_buf_free(&pb);
}
END_TEST

static Suite *message_suite(void)
{
    Suite *s = suite_create("message");
    TCase *tc = tcase_create("codec");

    tcase_add_test(tc, test_record_round_trip);
    tcase_add_test(tc, test_record_every_truncation_is_eagain);
    tcase_add_test(tc, test_record_every_flipped_byte_detected);
    tcase_add_test(tc, test_record_crc_only_when_asked);
    tcase_add_test(tc, test_record_patch);
    tcase_add_test(tc, test_record_blank_and_garbage);
    tcase_add_test(tc, test_record_size_claims_checked);
    tcase_add_test(tc, test_props_get);
    tcase_add_test(tc, test_props_next_skips_pieces_without_separator);
    tcase_add_test(tc, test_props_buf_builds_and_grows);
    tcase_add_test(tc, test_props_buf_reserve_and_empty_values);
    tcase_add_test(tc, test_batch_round_trip_and_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(message_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
