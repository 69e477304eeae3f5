/* test_remoting.c: the strict JSON reader and the remoting codec's pure
 * parts: JSON grammar and limits, a binary header written byte by byte,
 * both encodings round-tripping a request, extFields numbers and booleans,
 * oversize and truncated frames, the two probes on the same bytes, and the
 * ACL 1.0 signature against a value computed independently. */
#include "rmq_codec_remoting.h"
#include "rmq_json.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int parses(const char *text)
{
    char err[128];
    rmq_json_t *v = rmq_json_parse(text, strlen(text), err, sizeof err);
    int ok = v != NULL;

    if (!ok)
        ck_assert_ptr_nonnull(strstr(err, "offset "));
    rmq_json_free(v);
    return ok;
}

START_TEST(json_grammar)
{
    ck_assert(parses("{\"a\":[1,-2.5e3,true,false,null,\"x\"],\"b\":{}}"));
    ck_assert(parses(" [ ] "));
    ck_assert(!parses("{\"a\":1,}"));
    ck_assert(!parses("[1,]"));
    ck_assert(!parses("{a:1}"));
    ck_assert(!parses("{0:\"addr\"}"));
    ck_assert(!parses("01"));
    ck_assert(!parses("1."));
    ck_assert(!parses("[1] x"));
    ck_assert(!parses("/* c */ 1"));
    ck_assert(!parses("\"tab\there\""));
    ck_assert(!parses("\"\\u0000\""));
    ck_assert(!parses("\"\\ud800\""));
    ck_assert(!parses("\"\xc0\xaf\""));
    ck_assert(!parses("\"\xed\xa0\x80\""));
    ck_assert(!parses(""));
    ck_assert(!parses("tru"));
}
END_TEST

START_TEST(json_limits)
{
    char deep[128];

    memset(deep, '[', RMQ_JSON_DEPTH_MAX);
    memset(deep + RMQ_JSON_DEPTH_MAX, ']', RMQ_JSON_DEPTH_MAX);
    deep[2 * RMQ_JSON_DEPTH_MAX] = '\0';
    ck_assert(parses(deep));
    memset(deep, '[', RMQ_JSON_DEPTH_MAX + 1);
    memset(deep + RMQ_JSON_DEPTH_MAX + 1, ']', RMQ_JSON_DEPTH_MAX + 1);
    deep[2 * RMQ_JSON_DEPTH_MAX + 2] = '\0';
    ck_assert(!parses(deep));

    size_t n = RMQ_JSON_NODES_MAX + 1;
    char *many = malloc(2 * n + 2);
    many[0] = '[';
    for (size_t i = 0; i < n; i++) {
        many[1 + 2 * i] = '0';
        many[2 + 2 * i] = ',';
    }
    many[2 * n] = ']';
    many[2 * n + 1] = '\0';
    ck_assert(!parses(many));    /* n numbers plus the array */
    free(many);
}
END_TEST

START_TEST(json_values)
{
    const char *text = "{\"id\":9007199254740993,\"s\":\"\\u00e9\\ud83d\\ude00\\n\",\"b\":true}";
    rmq_json_t *v = rmq_json_parse(text, strlen(text), NULL, 0);
    int64_t id;

    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(rmq_json_int(rmq_json_get(v, "id"), INT64_MIN, INT64_MAX, &id), 0);
    ck_assert(id == 9007199254740993LL);
    ck_assert_int_eq(rmq_json_int(rmq_json_get(v, "id"), 0, 100, &id), -1);
    ck_assert_str_eq(rmq_json_scalar(rmq_json_get(v, "s")), "\xc3\xa9\xf0\x9f\x98\x80\n");
    ck_assert_str_eq(rmq_json_scalar(rmq_json_get(v, "b")), "true");
    ck_assert_ptr_null(rmq_json_get(v, "missing"));
    rmq_json_free(v);
}
END_TEST

/* ---- the codec ---------------------------------------------------------- */

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

START_TEST(binary_header_bytes)
{
    /* code 105, JAVA, version 395, opaque 9, flag 0, remark "r", extFields topic=T */
    uint8_t f[64] = { 0 }, *h = f + 8;
    size_t hl = 0, used;
    rmq_remoting_request_t req;
    const char *why = NULL;

    h[hl++] = 0, h[hl++] = 105, h[hl++] = 0, h[hl++] = 0x01, h[hl++] = 0x8b;
    put32(h + hl, 9), hl += 4;
    put32(h + hl, 0), hl += 4;
    put32(h + hl, 1), hl += 4;
    h[hl++] = 'r';
    put32(h + hl, 2 + 5 + 4 + 1), hl += 4;
    h[hl++] = 0, h[hl++] = 5;
    memcpy(h + hl, "topic", 5), hl += 5;
    put32(h + hl, 1), hl += 4;
    h[hl++] = 'T';
    memcpy(h + hl, "BODY", 4);
    put32(f, (uint32_t)(4 + hl + 4));
    put32(f + 4, 1u << 24 | (uint32_t)hl);
    ck_assert_int_eq(rmq_codec_remoting.probe(f, 16, 1024), RMQ_CODEC_YES);
    ck_assert_int_eq(rmq_codec_rmq.probe(f, 16, 1024), RMQ_CODEC_NO);
    ck_assert_int_eq(rmq_remoting_decode(f, 8 + hl + 3, 1024, &req, &used, &why), RMQ_EAGAIN);
    ck_assert_int_eq(rmq_remoting_decode(f, 8 + hl + 4, 1024, &req, &used, &why), RMQ_OK);
    ck_assert_uint_eq(used, 8 + hl + 4);
    ck_assert_int_eq(req.code, 105);
    ck_assert_int_eq(req.version, 395);
    ck_assert_int_eq(req.opaque, 9);
    ck_assert_str_eq(req.remark, "r");
    ck_assert_str_eq(rmq_remoting_field(&req, "topic"), "T");
    ck_assert_uint_eq(req.body_len, 4);
    ck_assert(memcmp(req.body, "BODY", 4) == 0);
    rmq_remoting_request_clear(&req);

    ck_assert_int_eq(rmq_remoting_decode(f, 8 + hl + 4, 16, &req, &used, &why), RMQ_ETOOBIG);
    put32(h + 18, 1000);     /* the remark runs past the header */
    ck_assert_int_eq(rmq_remoting_decode(f, 8 + hl + 4, 1024, &req, &used, &why), RMQ_EPROTO);
    ck_assert_ptr_null(req.fields);
}
END_TEST

START_TEST(json_header_scalars)
{
    const char *hdr = "{\"code\":101,\"opaque\":3,\"flag\":2,\"language\":\"NODE\","
                      "\"extFields\":{\"n\":12,\"b\":false,\"s\":\"x\",\"z\":null}}";
    uint8_t f[256];
    size_t hl = strlen(hdr), used;
    rmq_remoting_request_t req;
    const char *why;

    put32(f, (uint32_t)(4 + hl));
    put32(f + 4, (uint32_t)hl);
    memcpy(f + 8, hdr, hl);
    ck_assert_int_eq(rmq_codec_remoting.probe(f, 16, 1024), RMQ_CODEC_YES);
    ck_assert_int_eq(rmq_codec_rmq.probe(f, 16, 1024), RMQ_CODEC_NO);
    ck_assert_int_eq(rmq_remoting_decode(f, 8 + hl, 1024, &req, &used, &why), RMQ_OK);
    ck_assert_int_eq(req.flags, RMQ_REMOTING_FLAG_ONEWAY);
    ck_assert_int_eq(req.language, 7);
    ck_assert_str_eq(rmq_remoting_field(&req, "n"), "12");
    ck_assert_str_eq(rmq_remoting_field(&req, "b"), "false");
    ck_assert_str_eq(rmq_remoting_field(&req, "s"), "x");
    ck_assert_ptr_null(rmq_remoting_field(&req, "z"));
    rmq_remoting_request_clear(&req);

    /* an array as an extFields value is refused */
    const char *bad = "{\"code\":1,\"extFields\":{\"a\":[1]}}";
    hl = strlen(bad);
    put32(f, (uint32_t)(4 + hl));
    put32(f + 4, (uint32_t)hl);
    memcpy(f + 8, bad, hl);
    ck_assert_int_eq(rmq_remoting_decode(f, 8 + hl, 1024, &req, &used, &why), RMQ_EPROTO);
}
END_TEST

START_TEST(round_trip_both)
{
    rmq_remoting_field_t fields[] = { { "topic", "T\"1" }, { "queueId", "3" } };
    rmq_remoting_reply_t rep = { 17, "remark \xc3\xa9", fields, 2, "body", 4 };

    for (int type = 0; type <= 1; type++) {
        struct evbuffer *b = evbuffer_new();
        rmq_remoting_request_t req;
        const char *why;
        size_t used;
        ck_assert_int_eq(rmq_remoting_encode(b, type, 17, -5, 1, 395, &rep), RMQ_OK);
        size_t len = evbuffer_get_length(b);
        ck_assert_int_eq(rmq_remoting_decode(evbuffer_pullup(b, -1), len, 1024, &req, &used, &why),
                         RMQ_OK);
        ck_assert_int_eq(req.serialize_type, type);
        ck_assert_int_eq(req.code, 17);
        ck_assert_int_eq(req.opaque, -5);
        ck_assert_int_eq(req.flags, 1);
        ck_assert_str_eq(req.remark, "remark \xc3\xa9");
        ck_assert_str_eq(rmq_remoting_field(&req, "topic"), "T\"1");
        ck_assert_str_eq(rmq_remoting_field(&req, "queueId"), "3");
        ck_assert_uint_eq(req.body_len, 4);
        rmq_remoting_request_clear(&req);
        evbuffer_free(b);
    }
}
END_TEST

/* A pop code (200050) goes in a JSON header; the binary header's 16 bits
 * refuse it rather than carry 3442. */
START_TEST(code_over_binary_width)
{
    rmq_remoting_reply_t rep = { 200050, "", NULL, 0, NULL, 0 };
    struct evbuffer *b = evbuffer_new();

    ck_assert_int_eq(rmq_remoting_encode(b, RMQ_REMOTING_ROCKETMQ, 200050, 1, 0, 0, &rep),
                     RMQ_EINVAL);
    ck_assert_uint_eq(evbuffer_get_length(b), 0);
    ck_assert_int_eq(rmq_remoting_encode(b, RMQ_REMOTING_JSON, 200050, 1, 0, 0, &rep), RMQ_OK);
    evbuffer_free(b);
}
END_TEST

START_TEST(probes_disjoint)
{
    /* a native frame with an empty header, and one whose header is protobuf */
    uint8_t native_empty[16] = { 0, 0, 0, 4, 0, 0, 0, 0 };
    uint8_t native_pb[16] = { 0, 0, 0, 8, 0, 0, 0, 2, 0x08, 0x69 };
    uint8_t json_empty_header[16] = { 0, 0, 0, 4, 0, 0, 0, 0, '{' };

    ck_assert_int_eq(rmq_codec_rmq.probe(native_empty, 16, 1024), RMQ_CODEC_YES);
    ck_assert_int_eq(rmq_codec_remoting.probe(native_empty, 16, 1024), RMQ_CODEC_NO);
    ck_assert_int_eq(rmq_codec_rmq.probe(native_pb, 16, 1024), RMQ_CODEC_YES);
    ck_assert_int_eq(rmq_codec_remoting.probe(native_pb, 16, 1024), RMQ_CODEC_NO);
    ck_assert_int_eq(rmq_codec_remoting.probe(json_empty_header, 16, 1024), RMQ_CODEC_NO);
    ck_assert_int_eq(rmq_codec_remoting.probe(native_pb, 7, 1024), RMQ_CODEC_MORE);

    /* a length no frame may have is refused at 8 bytes, never left waiting */
    uint8_t huge[8] = { 0xff, 0xff, 0xff, 0xf0, 0, 0, 0, 16 };
    uint8_t hdr_over[8] = { 0, 0, 0, 16, 1, 0, 0x03, 0xe8 };
    ck_assert_int_eq(rmq_codec_remoting.probe(huge, 8, 1024), RMQ_CODEC_NO);
    ck_assert_int_eq(rmq_codec_rmq.probe(huge, 8, 1024), RMQ_CODEC_NO);
    ck_assert_int_eq(rmq_codec_remoting.probe(hdr_over, 8, 1024), RMQ_CODEC_NO);
}
END_TEST

START_TEST(acl_signature)
{
    /* values by key (AccessKey < a < b; Signature left out), then the body:
     * python3 -c 'import hmac,base64; print(base64.b64encode(hmac.new(
     *     b"secret", b"AKv1v2body", "sha1").digest()).decode())' */
    rmq_remoting_field_t fields[] = {
        { "b", "v2" }, { "AccessKey", "AK" }, { "Signature", "ignored" }, { "a", "v1" },
    };
    rmq_remoting_request_t req = { .fields = fields, .n_fields = 4,
                                   .body = (const uint8_t *)"body", .body_len = 4 };
    char sig[29];

    rmq_remoting_sign(&req, "secret", sig);
    ck_assert_str_eq(sig, "N9Xgg4u3y9kZCBWyma0K4NImfh4=");
}
END_TEST

static Suite *remoting_suite(void)
{
    Suite *s = suite_create("remoting");
    TCase *tc = tcase_create("remoting");

    tcase_add_test(tc, json_grammar);
    tcase_add_test(tc, json_limits);
    tcase_add_test(tc, json_values);
    tcase_add_test(tc, binary_header_bytes);
    tcase_add_test(tc, json_header_scalars);
    tcase_add_test(tc, round_trip_both);
    tcase_add_test(tc, code_over_binary_width);
    tcase_add_test(tc, probes_disjoint);
    tcase_add_test(tc, acl_signature);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(remoting_suite());

    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
