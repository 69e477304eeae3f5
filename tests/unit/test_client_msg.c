/* test_client_msg.c: librmq's message helpers: unique ids, the properties
 * string of an outgoing message, validation, and decoding pulled records
 * into owned messages with client-side tag filtering. */
#include <check.h>
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_client_int.h"

static int cmp_str(const void *a, const void *b)
{
    return strcmp((const char *)a, (const char *)b);
}

START_TEST(test_uniq_ids_format_and_unique)
{
    enum { N = 20000 };
    char (*ids)[33] = malloc(N * sizeof *ids);
    for (int i = 0; i < N; i++) {
        rmq_msg_uniq_id(ids[i]);
        ck_assert_uint_eq(strlen(ids[i]), 32);
        for (int j = 0; j < 32; j++)
            ck_assert(isxdigit((unsigned char)ids[i][j]) && !islower((unsigned char)ids[i][j]));
    }
    qsort(ids, N, sizeof *ids, cmp_str);
    for (int i = 1; i < N; i++)
        ck_assert_str_ne(ids[i - 1], ids[i]);
    free(ids);
}
END_TEST

START_TEST(test_props_build)
{
    rmq_property_t up[] = {{"color", "red"}, {"size", "9"}};
    rmq_message_t m = {.topic = "T", .tags = "TagA", .keys = "k1 k2", .body = "x", .body_len = 1,
                       .props = up, .nprops = 2};
    rmq_props_buf_t pb = {0};
    ck_assert_int_eq(rmq_msg_props_build(&m, "ABC", &pb), RMQ_OK);
    const char want[] = "TAGS\x01TagA\x02KEYS\x01k1 k2\x02UNIQ_KEY\x01" "ABC\x02"
                        "color\x01red\x02size\x01" "9";
    ck_assert_uint_eq(pb.len, sizeof want - 1);
    ck_assert(memcmp(pb.data, want, pb.len) == 0);
    size_t vl;
    const char *v = rmq_props_get(pb.data, pb.len, "size", &vl);
    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(vl, 1);
    rmq_props_buf_free(&pb);
    rmq_message_t bare = {.topic = "T", .body = "x", .body_len = 1};
    ck_assert_int_eq(rmq_msg_props_build(&bare, NULL, &pb), RMQ_OK);
    ck_assert_uint_eq(pb.len, 0);
    rmq_props_buf_free(&pb);
}
END_TEST

START_TEST(test_validate)
{
    rmq_error_t e;
    rmq_message_t m = {.topic = "T", .body = "abc", .body_len = 3};
    ck_assert_int_eq(rmq_msg_validate(&m, 100, &e), RMQ_OK);
    ck_assert_int_eq(rmq_msg_validate(&m, 2, &e), RMQ_ETOOBIG);
    ck_assert_ptr_nonnull(strstr(e.text, "limit"));
    m.body_len = 0;
    ck_assert_int_eq(rmq_msg_validate(&m, 100, &e), RMQ_EINVAL);
    m.body_len = 3;
    m.tags = "a\x01" "b";
    ck_assert_int_eq(rmq_msg_validate(&m, 100, &e), RMQ_EINVAL);
    m.tags = NULL;
    m.topic = "";
    ck_assert_int_eq(rmq_msg_validate(&m, 100, &e), RMQ_EINVAL);
    ck_assert_int_eq(rmq_msg_validate(NULL, 100, &e), RMQ_EINVAL);
}
END_TEST

/* Appends a record with tag and body to buf at *pos. */
static void put_record(uint8_t *buf, size_t *pos, int64_t qoff, const char *tag, const char *body)
{
    rmq_message_t m = {.topic = "Topic", .tags = tag, .body = body, .body_len = strlen(body)};
    rmq_props_buf_t pb = {0};
    ck_assert_int_eq(rmq_msg_props_build(&m, "00112233445566778899AABBCCDDEEFF", &pb), RMQ_OK);
    rmq_record_t rec = {0};
    rec.queue_id = 3;
    rec.queue_offset = qoff;
    rec.born_timestamp = 1000 + qoff;
    rec.store_timestamp = 2000 + qoff;
    rec.body = (const uint8_t *)body;
    rec.body_len = (uint32_t)strlen(body);
    rec.topic = "Topic";
    rec.topic_len = 5;
    rec.properties = pb.data;
    rec.properties_len = (uint16_t)pb.len;
    *pos += rmq_record_encode(&rec, buf + *pos);
    rmq_props_buf_free(&pb);
}

START_TEST(test_decode_pulled_filters_tags)
{
    uint8_t buf[4096];
    size_t len = 0;
    put_record(buf, &len, 10, "TagA", "first");
    put_record(buf, &len, 11, "TagB", "second");
    put_record(buf, &len, 12, NULL, "third");
    rmq_tags_t tags;
    ck_assert_int_eq(rmq_tags_parse("TagA || TagC", &tags), RMQ_OK);
    rmq_message_ext_t **msgs = NULL;
    size_t n = 0;
    ck_assert_int_eq(rmq_msg_decode_pulled(buf, len, "broker-a", &tags, &msgs, &n), RMQ_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert_str_eq(msgs[0]->tags, "TagA");
    ck_assert_str_eq(msgs[0]->topic, "Topic");
    ck_assert_str_eq(msgs[0]->broker_name, "broker-a");
    ck_assert_str_eq(msgs[0]->msg_id, "00112233445566778899AABBCCDDEEFF");
    ck_assert_uint_eq(msgs[0]->body_len, 5);
    ck_assert(memcmp(msgs[0]->body, "first", 5) == 0);
    ck_assert_int_eq(msgs[0]->queue_offset, 10);
    ck_assert_int_eq(msgs[0]->store_timestamp, 2010);
    char v[8];
    ck_assert_str_eq(rmq_message_ext_property(msgs[0], "TAGS", v, sizeof v), "TagA");
    ck_assert_ptr_null(rmq_message_ext_property(msgs[0], "nope", v, sizeof v));
    free(msgs[0]);
    free(msgs);
    rmq_tags_free(&tags);
    msgs = NULL;
    n = 0;
    ck_assert_int_eq(rmq_msg_decode_pulled(buf, len, "broker-a", NULL, &msgs, &n), RMQ_OK);
    ck_assert_uint_eq(n, 3);
    ck_assert_str_eq(msgs[2]->tags, "");
    for (size_t i = 0; i < n; i++)
        free(msgs[i]);
    free(msgs);
    msgs = NULL;
    n = 0;
    ck_assert_int_eq(rmq_msg_decode_pulled(buf, len - 3, "broker-a", NULL, &msgs, &n), RMQ_EPROTO);
    for (size_t i = 0; i < n; i++)
        free(msgs[i]);
    free(msgs);
}
END_TEST

START_TEST(test_error_text)
{
    rmq_error_t e;
    rmq_error_set(&e, RMQ_ESTATUS, RMQ__STATUS__SLAVE_NOT_AVAILABLE, "send to %s", "b");
    ck_assert_int_eq(e.err, RMQ_ESTATUS);
    ck_assert_ptr_nonnull(strstr(e.text, "SLAVE_NOT_AVAILABLE"));
    ck_assert_ptr_nonnull(strstr(e.text, "send to b"));
}
END_TEST

static Suite *client_msg_suite(void)
{
    Suite *s = suite_create("client_msg");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_uniq_ids_format_and_unique);
    tcase_add_test(tc, test_props_build);
    tcase_add_test(tc, test_validate);
    tcase_add_test(tc, test_decode_pulled_filters_tags);
    tcase_add_test(tc, test_error_text);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(client_msg_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
