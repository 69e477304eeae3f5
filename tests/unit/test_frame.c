/* test_frame.c: the frame codec. Round trips, a header larger than the
 * pack scratch and the first arena block, a stream split at every byte
 * boundary, many frames in one buffer, oversized and malformed frames, empty
 * bodies, and the wire enum names. */
#include "rmq_frame.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NFRAMES 5

/* Builds request i of a test stream: a topic header and an i*37-byte body. */
static void encode_nth(struct evbuffer *out, int i)
{
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    Rmq__TopicRequest topic = RMQ__TOPIC_REQUEST__INIT;
    char name[32], body[NFRAMES * 37];

    snprintf(name, sizeof(name), "topic-%d", i);
    topic.topic = name;
    cmd.code = RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC;
    cmd.opaque = (uint32_t)(1000 + i);
    cmd.flags = (uint32_t)(i % 3);
    cmd.header_case = RMQ__COMMAND__HEADER_TOPIC;
    cmd.topic = &topic;
    memset(body, 'a' + i, sizeof(body));
    ck_assert_int_eq(rmq_frame_encode(out, &cmd, body, (size_t)i * 37), RMQ_OK);
}

static void check_nth(const rmq_frame_t *f, int i)
{
    char name[32];

    snprintf(name, sizeof(name), "topic-%d", i);
    ck_assert_int_eq(f->cmd->code, RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC);
    ck_assert_uint_eq(f->cmd->opaque, (uint32_t)(1000 + i));
    ck_assert_uint_eq(f->cmd->flags, (uint32_t)(i % 3));
    ck_assert_int_eq(f->cmd->header_case, RMQ__COMMAND__HEADER_TOPIC);
    ck_assert_str_eq(f->cmd->topic->topic, name);
    size_t len = evbuffer_get_length(f->body);
    ck_assert_uint_eq(len, (size_t)i * 37);
    unsigned char *p = evbuffer_pullup(f->body, -1);
    for (size_t k = 0; k < len; k++)
        ck_assert_int_eq(p[k], 'a' + i);
}

/* Flattens a buffer into a malloc'd copy; caller frees. */
static uint8_t *flatten(struct evbuffer *buf, size_t *len)
{
    *len = evbuffer_get_length(buf);
    uint8_t *p = malloc(*len ? *len : 1);
    ck_assert_ptr_nonnull(p);
    evbuffer_copyout(buf, p, *len);
    return p;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

START_TEST(test_round_trip)
{
    struct evbuffer *buf = evbuffer_new();
    rmq_frame_t f = { 0 };
    const char *why = NULL;
    Rmq__Command cmd = RMQ__COMMAND__INIT;

    cmd.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    cmd.opaque = 0xdeadbeefu;
    cmd.flags = RMQ__COMMAND_FLAG__FLAG_RESPONSE;
    cmd.status = RMQ__STATUS__SLAVE_NOT_AVAILABLE;
    cmd.remark = "no slave in sync range";
    cmd.version = RMQ_PROTOCOL_VERSION;
    ck_assert_int_eq(rmq_frame_encode(buf, &cmd, "hello", 5), RMQ_OK);
    ck_assert_int_eq(rmq_frame_decode(buf, 0, &f, &why), RMQ_OK);
    ck_assert_uint_eq(evbuffer_get_length(buf), 0);
    ck_assert_int_eq(f.cmd->code, RMQ__REQUEST_CODE__SEND_MESSAGE);
    ck_assert_uint_eq(f.cmd->opaque, 0xdeadbeefu);
    ck_assert_uint_eq(f.cmd->flags, RMQ__COMMAND_FLAG__FLAG_RESPONSE);
    ck_assert_int_eq(f.cmd->status, RMQ__STATUS__SLAVE_NOT_AVAILABLE);
    ck_assert_str_eq(f.cmd->remark, "no slave in sync range");
    ck_assert_int_eq(f.cmd->version, RMQ_PROTOCOL_VERSION);
    ck_assert_uint_eq(evbuffer_get_length(f.body), 5);
    ck_assert_int_eq(memcmp(evbuffer_pullup(f.body, -1), "hello", 5), 0);
    rmq_frame_clear(&f);
    rmq_frame_clear(&f);
    evbuffer_free(buf);
}
END_TEST

/* A header that outgrows the 512-byte pack scratch and the arena's first
 * block (many sub-messages, a remark larger than a further block) packs to
 * the same bytes as protobuf-c's own pack and decodes whole. */
START_TEST(test_large_header)
{
    enum { NTOPICS = 300, REMARK = 6000 };
    struct evbuffer *buf = evbuffer_new();
    rmq_frame_t f = { 0 };
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    Rmq__TopicConfigTable table = RMQ__TOPIC_CONFIG_TABLE__INIT;
    Rmq__TopicConfig tc[NTOPICS], *tcp[NTOPICS];
    char names[NTOPICS][16], *remark = malloc(REMARK + 1);

    ck_assert_ptr_nonnull(remark);
    memset(remark, 'r', REMARK);
    remark[REMARK] = '\0';
    for (int i = 0; i < NTOPICS; i++) {
        rmq__topic_config__init(&tc[i]);
        snprintf(names[i], sizeof(names[i]), "topic-%d", i);
        tc[i].topic_name = names[i];
        tc[i].write_queue_nums = i;
        tcp[i] = &tc[i];
    }
    table.n_topics = NTOPICS;
    table.topics = tcp;
    cmd.code = RMQ__REQUEST_CODE__GET_ALL_TOPIC_CONFIG;
    cmd.remark = remark;
    cmd.header_case = RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE;
    cmd.topic_config_table = &table;
    ck_assert_int_eq(rmq_frame_encode(buf, &cmd, NULL, 0), RMQ_OK);

    size_t len, want_len = rmq__command__get_packed_size(&cmd);
    uint8_t *got = flatten(buf, &len), *want = malloc(want_len);
    ck_assert_ptr_nonnull(want);
    rmq__command__pack(&cmd, want);
    ck_assert_uint_eq(len, RMQ_FRAME_PREFIX + want_len);
    ck_assert_int_eq(memcmp(got + RMQ_FRAME_PREFIX, want, want_len), 0);

    ck_assert_int_eq(rmq_frame_decode(buf, 0, &f, NULL), RMQ_OK);
    ck_assert_str_eq(f.cmd->remark, remark);
    ck_assert_int_eq(f.cmd->header_case, RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE);
    ck_assert_uint_eq(f.cmd->topic_config_table->n_topics, NTOPICS);
    for (int i = 0; i < NTOPICS; i++) {
        ck_assert_str_eq(f.cmd->topic_config_table->topics[i]->topic_name, names[i]);
        ck_assert_int_eq(f.cmd->topic_config_table->topics[i]->write_queue_nums, i);
    }
    rmq_frame_clear(&f);
    free(got);
    free(want);
    free(remark);
    evbuffer_free(buf);
}
END_TEST

START_TEST(test_encode_buf_moves_body)
{
    struct evbuffer *out = evbuffer_new(), *body = evbuffer_new();
    rmq_frame_t f = { 0 };
    Rmq__Command cmd = RMQ__COMMAND__INIT;

    cmd.code = RMQ__REQUEST_CODE__PULL_MESSAGE;
    evbuffer_add(body, "0123456789", 10);
    ck_assert_int_eq(rmq_frame_encode_buf(out, &cmd, body), RMQ_OK);
    ck_assert_uint_eq(evbuffer_get_length(body), 0);
    ck_assert_int_eq(rmq_frame_encode_buf(out, &cmd, NULL), RMQ_OK);
    ck_assert_int_eq(rmq_frame_decode(out, 0, &f, NULL), RMQ_OK);
    ck_assert_int_eq(memcmp(evbuffer_pullup(f.body, -1), "0123456789", 10), 0);
    rmq_frame_clear(&f);
    ck_assert_int_eq(rmq_frame_decode(out, 0, &f, NULL), RMQ_OK);
    ck_assert_uint_eq(evbuffer_get_length(f.body), 0);
    rmq_frame_clear(&f);
    evbuffer_free(out);
    evbuffer_free(body);
}
END_TEST

START_TEST(test_split_at_every_byte)
{
    struct evbuffer *stream = evbuffer_new();
    size_t len;

    for (int i = 0; i < NFRAMES; i++)
        encode_nth(stream, i);
    uint8_t *bytes = flatten(stream, &len);
    for (size_t cut = 0; cut <= len; cut++) {
        struct evbuffer *in = evbuffer_new();
        rmq_frame_t f = { 0 };
        int next = 0;
        rmq_err_t err;

        evbuffer_add(in, bytes, cut);
        while ((err = rmq_frame_decode(in, 0, &f, NULL)) == RMQ_OK) {
            check_nth(&f, next++);
            rmq_frame_clear(&f);
        }
        ck_assert_int_eq(err, RMQ_EAGAIN);
        evbuffer_add(in, bytes + cut, len - cut);
        while ((err = rmq_frame_decode(in, 0, &f, NULL)) == RMQ_OK) {
            check_nth(&f, next++);
            rmq_frame_clear(&f);
        }
        ck_assert_int_eq(err, RMQ_EAGAIN);
        ck_assert_int_eq(next, NFRAMES);
        ck_assert_uint_eq(evbuffer_get_length(in), 0);
        evbuffer_free(in);
    }
    free(bytes);
    evbuffer_free(stream);
}
END_TEST

START_TEST(test_byte_by_byte)
{
    struct evbuffer *stream = evbuffer_new(), *in = evbuffer_new();
    rmq_frame_t f = { 0 };
    size_t len;
    int next = 0;

    for (int i = 0; i < NFRAMES; i++)
        encode_nth(stream, i);
    uint8_t *bytes = flatten(stream, &len);
    for (size_t k = 0; k < len; k++) {
        evbuffer_add(in, bytes + k, 1);
        rmq_err_t err = rmq_frame_decode(in, 0, &f, NULL);
        if (err == RMQ_OK) {
            check_nth(&f, next++);
            rmq_frame_clear(&f);
        } else {
            ck_assert_int_eq(err, RMQ_EAGAIN);
        }
    }
    ck_assert_int_eq(next, NFRAMES);
    free(bytes);
    evbuffer_free(in);
    evbuffer_free(stream);
}
END_TEST

START_TEST(test_many_frames_flat)
{
    struct evbuffer *stream = evbuffer_new();
    rmq_frame_t f = { 0 };
    size_t len, off = 0, used;
    int next = 0;

    for (int i = 0; i < NFRAMES; i++)
        encode_nth(stream, i);
    uint8_t *bytes = flatten(stream, &len);
    while (rmq_frame_decode_bytes(bytes + off, len - off, 0, &f, &used, NULL) == RMQ_OK) {
        check_nth(&f, next++);
        rmq_frame_clear(&f);
        off += used;
    }
    ck_assert_int_eq(next, NFRAMES);
    ck_assert_uint_eq(off, len);
    for (size_t cut = 0; cut < 8 + 4; cut++) {
        ck_assert_int_eq(rmq_frame_decode_bytes(bytes, cut, 0, &f, &used, NULL), RMQ_EAGAIN);
        ck_assert_uint_eq(used, 0);
    }
    free(bytes);
    evbuffer_free(stream);
}
END_TEST

START_TEST(test_oversized_rejected_before_body)
{
    struct evbuffer *in = evbuffer_new();
    rmq_frame_t f = { 0 };
    const char *why = NULL;
    uint8_t prefix[8];
    size_t used;

    put_be32(prefix, 0x40000000u);
    put_be32(prefix + 4, 10);
    evbuffer_add(in, prefix, sizeof(prefix));
    ck_assert_int_eq(rmq_frame_decode(in, 0, &f, &why), RMQ_ETOOBIG);
    ck_assert_ptr_nonnull(why);
    ck_assert_ptr_null(f.cmd);
    ck_assert_ptr_null(f.body);
    ck_assert_uint_eq(evbuffer_get_length(in), 8);
    ck_assert_int_eq(rmq_frame_decode_bytes(prefix, 8, 0, &f, &used, &why), RMQ_ETOOBIG);
    ck_assert_ptr_null(f.cmd);

    put_be32(prefix, 1025);
    put_be32(prefix + 4, 0);
    ck_assert_int_eq(rmq_frame_decode_bytes(prefix, 8, 1024, &f, &used, &why), RMQ_ETOOBIG);
    put_be32(prefix, 1024);
    ck_assert_int_eq(rmq_frame_decode_bytes(prefix, 8, 1024, &f, &used, &why), RMQ_EAGAIN);
    evbuffer_free(in);
}
END_TEST

/* Decodes bytes both ways and expects err from each. */
static void expect_both(const uint8_t *bytes, size_t len, rmq_err_t want)
{
    struct evbuffer *in = evbuffer_new();
    rmq_frame_t f = { 0 };
    const char *why = NULL;
    size_t used;

    evbuffer_add(in, bytes, len);
    ck_assert_int_eq(rmq_frame_decode(in, 0, &f, &why), want);
    ck_assert_ptr_null(f.cmd);
    ck_assert_ptr_null(f.body);
    if (want != RMQ_EAGAIN)
        ck_assert_ptr_nonnull(why);
    ck_assert_int_eq(rmq_frame_decode_bytes(bytes, len, 0, &f, &used, &why), want);
    ck_assert_ptr_null(f.cmd);
    evbuffer_free(in);
}

START_TEST(test_malformed)
{
    uint8_t b[32];

    put_be32(b, 3);                  /* frame shorter than its header_len field */
    put_be32(b + 4, 0);
    expect_both(b, 8, RMQ_EPROTO);

    put_be32(b, 10);                 /* header_len beyond frame */
    put_be32(b + 4, 7);
    memset(b + 8, 0, 10);
    expect_both(b, 14, RMQ_EPROTO);

    put_be32(b, 4 + 6);              /* header that is not protobuf */
    put_be32(b + 4, 6);
    memset(b + 8, 0xff, 6);
    expect_both(b, 14, RMQ_EPROTO);

    put_be32(b, 4 + 2);              /* truncated varint field */
    put_be32(b + 4, 2);
    b[8] = 0x08;
    b[9] = 0x80;
    expect_both(b, 10, RMQ_EPROTO);

    memset(b, 0xab, sizeof(b));      /* garbage */
    expect_both(b, sizeof(b), RMQ_ETOOBIG);
}
END_TEST

START_TEST(test_empty_header_and_body)
{
    uint8_t b[8];
    rmq_frame_t f = { 0 };
    size_t used;

    put_be32(b, 4);
    put_be32(b + 4, 0);
    ck_assert_int_eq(rmq_frame_decode_bytes(b, 8, 0, &f, &used, NULL), RMQ_OK);
    ck_assert_uint_eq(used, 8);
    ck_assert_int_eq(f.cmd->code, 0);
    ck_assert_uint_eq(evbuffer_get_length(f.body), 0);
    rmq_frame_clear(&f);

    struct evbuffer *buf = evbuffer_new();
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    cmd.code = RMQ__REQUEST_CODE__HEART_BEAT;
    ck_assert_int_eq(rmq_frame_encode(buf, &cmd, NULL, 0), RMQ_OK);
    ck_assert_int_eq(rmq_frame_decode(buf, 0, &f, NULL), RMQ_OK);
    ck_assert_int_eq(f.cmd->code, RMQ__REQUEST_CODE__HEART_BEAT);
    ck_assert_ptr_nonnull(f.body);
    ck_assert_uint_eq(evbuffer_get_length(f.body), 0);
    rmq_frame_clear(&f);
    evbuffer_free(buf);
}
END_TEST

START_TEST(test_names)
{
    ck_assert_str_eq(rmq_status_name(RMQ__STATUS__SLAVE_NOT_AVAILABLE), "SLAVE_NOT_AVAILABLE");
    ck_assert_str_eq(rmq_status_name(RMQ__STATUS__SERVICE_NOT_AVAILABLE_DISK_FULL),
                     "SERVICE_NOT_AVAILABLE_DISK_FULL");
    ck_assert_str_eq(rmq_status_name(99999), "UNKNOWN");
    ck_assert_str_eq(rmq_request_name(RMQ__REQUEST_CODE__SEND_MESSAGE), "SEND_MESSAGE");
    ck_assert_str_eq(rmq_request_name(-5), "UNKNOWN");
}
END_TEST

static Suite *frame_suite(void)
{
    Suite *s = suite_create("frame");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_large_header);
    tcase_add_test(tc, test_encode_buf_moves_body);
    tcase_add_test(tc, test_split_at_every_byte);
    tcase_add_test(tc, test_byte_by_byte);
    tcase_add_test(tc, test_many_frames_flat);
    tcase_add_test(tc, test_oversized_rejected_before_body);
    tcase_add_test(tc, test_malformed);
    tcase_add_test(tc, test_empty_header_and_body);
    tcase_add_test(tc, test_names);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(frame_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
