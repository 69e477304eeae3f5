/* test_etcd.c: the etcd client's request bodies (exact JSON the gateway
 * takes) and its answer decoder, over answers captured from etcd 3.4.23:
 * ranges, txns that held and failed, leases granted, kept alive and
 * expired, refusals; and that malformed answers are refused with a message
 * and no pairs. The calls against a live etcd are in tests/cluster. */
#include "rmq_etcd.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#define HDR "{\"cluster_id\":\"15118495548433857066\",\"member_id\":\"13668033151171901709\"," \
            "\"revision\":\"2\",\"raft_term\":\"2\"}"

/* The text of out, as a C string (caller frees); out drained. */
static char *take(struct evbuffer *out)
{
    size_t n = evbuffer_get_length(out);
    char *s = malloc(n + 1);
    evbuffer_remove(out, s, n);
    s[n] = '\0';
    return s;
}

START_TEST(test_encode_range_put_lease)
{
    struct evbuffer *out = evbuffer_new();
    char *s;

    ck_assert_int_eq(rmq_etcd_encode_range(out, "key", 0), RMQ_OK);
    ck_assert_str_eq(s = take(out), "{\"key\":\"a2V5\"}");
    free(s);
    /* prefix "rmq/": range_end "rmq0" */
    ck_assert_int_eq(rmq_etcd_encode_range(out, "rmq/", 1), RMQ_OK);
    ck_assert_str_eq(s = take(out), "{\"key\":\"cm1xLw==\",\"range_end\":\"cm1xMA==\"}");
    free(s);
    ck_assert_int_eq(rmq_etcd_encode_put(out, "key", "val", 3, 4111120383076892423LL), RMQ_OK);
    ck_assert_str_eq(s = take(out), "{\"key\":\"a2V5\",\"value\":\"dmFs\",\"lease\":\"4111120383076892423\"}");
    free(s);
    /* a value with a NUL byte, no lease */
    ck_assert_int_eq(rmq_etcd_encode_put(out, "k", "a\0b", 3, 0), RMQ_OK);
    ck_assert_str_eq(s = take(out), "{\"key\":\"aw==\",\"value\":\"YQBi\"}");
    free(s);
    ck_assert_int_eq(rmq_etcd_encode_grant(out, 10), RMQ_OK);
    ck_assert_str_eq(s = take(out), "{\"TTL\":\"10\"}");
    free(s);
    ck_assert_int_eq(rmq_etcd_encode_lease(out, 7), RMQ_OK);
    ck_assert_str_eq(s = take(out), "{\"ID\":\"7\"}");
    free(s);
    /* refused: empty key, no TTL, no lease */
    ck_assert_int_eq(rmq_etcd_encode_range(out, "", 0), RMQ_EINVAL);
    ck_assert_int_eq(rmq_etcd_encode_put(out, NULL, "v", 1, 0), RMQ_EINVAL);
    ck_assert_int_eq(rmq_etcd_encode_grant(out, 0), RMQ_EINVAL);
    ck_assert_int_eq(rmq_etcd_encode_lease(out, 0), RMQ_EINVAL);
    evbuffer_free(out);
}
END_TEST

START_TEST(test_encode_txn)
{
    struct evbuffer *out = evbuffer_new();
    rmq_etcd_cmp_t cmp[] = {
        { .target = RMQ_ETCD_CMP_CREATE, .key = "key", .revision = 0 },
        { .target = RMQ_ETCD_CMP_MOD, .key = "key", .revision = 99 },
        { .target = RMQ_ETCD_CMP_VALUE, .key = "key", .value = "val", .value_len = 3 },
    };
    rmq_etcd_op_t ok[] = {
        { .type = RMQ_ETCD_OP_PUT, .key = "key", .value = "val", .value_len = 3, .lease = 5 },
        { .type = RMQ_ETCD_OP_DELETE, .key = "old" },
    };
    rmq_etcd_op_t ko[] = { { .type = RMQ_ETCD_OP_RANGE, .key = "key" } };
    rmq_etcd_txn_t txn = { cmp, 3, ok, 2, ko, 1 };
    char *s;

    ck_assert_int_eq(rmq_etcd_encode_txn(out, &txn), RMQ_OK);
    ck_assert_str_eq(s = take(out),
        "{\"compare\":["
        "{\"result\":\"EQUAL\",\"target\":\"CREATE\",\"key\":\"a2V5\",\"create_revision\":\"0\"},"
        "{\"result\":\"EQUAL\",\"target\":\"MOD\",\"key\":\"a2V5\",\"mod_revision\":\"99\"},"
        "{\"result\":\"EQUAL\",\"target\":\"VALUE\",\"key\":\"a2V5\",\"value\":\"dmFs\"}],"
        "\"success\":[{\"request_put\":{\"key\":\"a2V5\",\"value\":\"dmFs\",\"lease\":\"5\"}},"
        "{\"request_delete_range\":{\"key\":\"b2xk\"}}],"
        "\"failure\":[{\"request_range\":{\"key\":\"a2V5\"}}]}");
    free(s);
    /* no ops at all: compares only */
    rmq_etcd_txn_t bare = { cmp, 1, NULL, 0, NULL, 0 };
    ck_assert_int_eq(rmq_etcd_encode_txn(out, &bare), RMQ_OK);
    ck_assert_str_eq(s = take(out),
        "{\"compare\":[{\"result\":\"EQUAL\",\"target\":\"CREATE\",\"key\":\"a2V5\",\"create_revision\":\"0\"}]}");
    free(s);
    rmq_etcd_cmp_t bad = { .target = (rmq_etcd_target_t)7, .key = "k" };
    rmq_etcd_txn_t badtxn = { &bad, 1, NULL, 0, NULL, 0 };
    ck_assert_int_eq(rmq_etcd_encode_txn(out, &badtxn), RMQ_EINVAL);
    evbuffer_free(out);
}
END_TEST

static rmq_err_t decode(rmq_etcd_call_t call, int status, const char *body, rmq_etcd_result_t *res)
{
    return rmq_etcd_decode(call, status, body, strlen(body), res);
}

START_TEST(test_decode_answers)
{
    rmq_etcd_result_t res;

    ck_assert_int_eq(decode(RMQ_ETCD_RANGE, 200, "{\"header\":" HDR ",\"kvs\":[{\"key\":\"a2V5\","
        "\"create_revision\":\"2\",\"mod_revision\":\"3\",\"version\":\"1\",\"value\":\"dmFs\","
        "\"lease\":\"4111120383076892423\"}],\"count\":\"1\"}", &res), RMQ_OK);
    ck_assert_int_eq(res.revision, 2);
    ck_assert_uint_eq(res.n_kvs, 1);
    ck_assert_str_eq(res.kvs[0].key, "key");
    ck_assert_str_eq(res.kvs[0].value, "val");
    ck_assert_uint_eq(res.kvs[0].value_len, 3);
    ck_assert_int_eq(res.kvs[0].create_revision, 2);
    ck_assert_int_eq(res.kvs[0].mod_revision, 3);
    ck_assert_int_eq(res.kvs[0].lease, 4111120383076892423LL);
    rmq_etcd_result_clear(&res);
    /* no such key: no kvs field; an empty value is omitted too */
    ck_assert_int_eq(decode(RMQ_ETCD_RANGE, 200, "{\"header\":" HDR "}", &res), RMQ_OK);
    ck_assert_uint_eq(res.n_kvs, 0);
    ck_assert_int_eq(decode(RMQ_ETCD_RANGE, 200, "{\"header\":" HDR ",\"kvs\":[{\"key\":\"a2V5\","
        "\"create_revision\":\"2\",\"mod_revision\":\"2\",\"version\":\"1\"}]}", &res), RMQ_OK);
    ck_assert_str_eq(res.kvs[0].value, "");
    rmq_etcd_result_clear(&res);
    /* txn held */
    ck_assert_int_eq(decode(RMQ_ETCD_TXN, 200, "{\"header\":" HDR ",\"succeeded\":true,"
        "\"responses\":[{\"response_put\":{\"header\":{\"revision\":\"2\"}}}]}", &res), RMQ_OK);
    ck_assert_int_eq(res.succeeded, 1);
    ck_assert_uint_eq(res.n_kvs, 0);
    /* txn failed (succeeded omitted), its failure range answered */
    ck_assert_int_eq(decode(RMQ_ETCD_TXN, 200, "{\"header\":" HDR ",\"responses\":[{\"response_range\":"
        "{\"header\":{\"revision\":\"2\"},\"kvs\":[{\"key\":\"a2V5\",\"create_revision\":\"2\","
        "\"mod_revision\":\"2\",\"version\":\"1\",\"value\":\"dmFs\",\"lease\":\"9\"}],\"count\":\"1\"}}]}",
        &res), RMQ_OK);
    ck_assert_int_eq(res.succeeded, 0);
    ck_assert_uint_eq(res.n_kvs, 1);
    ck_assert_int_eq(res.kvs[0].lease, 9);
    rmq_etcd_result_clear(&res);
    /* leases */
    ck_assert_int_eq(decode(RMQ_ETCD_GRANT, 200, "{\"header\":" HDR ",\"ID\":\"4111120383076892421\","
        "\"TTL\":\"10\"}", &res), RMQ_OK);
    ck_assert_int_eq(res.lease_id, 4111120383076892421LL);
    ck_assert_int_eq(res.ttl, 10);
    ck_assert_int_eq(decode(RMQ_ETCD_KEEPALIVE, 200, "{\"result\":{\"header\":" HDR ",\"ID\":\"7\","
        "\"TTL\":\"10\"}}\n", &res), RMQ_OK);
    ck_assert_int_eq(res.lease_id, 7);
    ck_assert_int_eq(res.ttl, 10);
    ck_assert_int_eq(res.revision, 2);
    /* keepalive of an expired or revoked lease: no TTL */
    ck_assert_int_eq(decode(RMQ_ETCD_KEEPALIVE, 200, "{\"result\":{\"header\":" HDR ",\"ID\":\"7\"}}\n",
                            &res), RMQ_ENOTFOUND);
    ck_assert_ptr_nonnull(strstr(res.msg, "expired"));
    ck_assert_int_eq(decode(RMQ_ETCD_REVOKE, 200, "{\"header\":" HDR "}", &res), RMQ_OK);
    ck_assert_int_eq(decode(RMQ_ETCD_PUT, 200, "{\"header\":" HDR "}", &res), RMQ_OK);
}
END_TEST

START_TEST(test_decode_refusals)
{
    rmq_etcd_result_t res;

    ck_assert_int_eq(decode(RMQ_ETCD_REVOKE, 404, "{\"error\":\"etcdserver: requested lease not found\","
        "\"message\":\"etcdserver: requested lease not found\",\"code\":5}", &res), RMQ_ESTATUS);
    ck_assert_int_eq(res.code, 5);
    ck_assert_ptr_nonnull(strstr(res.msg, "requested lease not found"));
    ck_assert_ptr_nonnull(strstr(res.msg, "HTTP 404"));
    /* a stream error (keepalive) and a body that is no JSON */
    ck_assert_int_eq(decode(RMQ_ETCD_KEEPALIVE, 500, "{\"error\":{\"grpc_code\":14,\"http_code\":503,"
        "\"message\":\"etcdserver: no leader\"}}", &res), RMQ_ESTATUS);
    ck_assert_int_eq(res.code, 14);
    ck_assert_ptr_nonnull(strstr(res.msg, "no leader"));
    ck_assert_int_eq(decode(RMQ_ETCD_PUT, 502, "<html>bad gateway</html>", &res), RMQ_ESTATUS);
    ck_assert_ptr_nonnull(strstr(res.msg, "no reason given"));
}
END_TEST

START_TEST(test_decode_malformed)
{
    static const char *const bad[] = {
        "",
        "[]",
        "{\"header\":" HDR ",\"kvs\":{}}",
        "{\"header\":" HDR ",\"kvs\":[1]}",
        "{\"header\":" HDR ",\"kvs\":[{\"value\":\"dmFs\"}]}",               /* no key */
        "{\"header\":" HDR ",\"kvs\":[{\"key\":\"a2V\"}]}",                  /* not base64 */
        "{\"header\":" HDR ",\"kvs\":[{\"key\":\"a2V5\",\"value\":\"d*Fs\"}]}",
        "{\"header\":" HDR ",\"kvs\":[{\"key\":\"a2V5\",\"mod_revision\":\"-1\"}]}",
        "{\"header\":" HDR ",\"kvs\":[{\"key\":\"a2V5\",\"version\":\"99999999999999999999\"}]}",
        "{\"header\":{\"revision\":\"x\"}}",
        "{\"header\":" HDR ",\"kvs\":[{\"key\":\"a2V5\"},{\"key\":7}]}",     /* second pair bad */
    };
    rmq_etcd_result_t res;

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(decode(RMQ_ETCD_RANGE, 200, bad[i], &res) == RMQ_EPROTO, "accepted: %s", bad[i]);
        ck_assert_uint_eq(res.n_kvs, 0);
        ck_assert_ptr_null(res.kvs);
        ck_assert(res.msg[0] != '\0');
    }
    ck_assert_int_eq(decode(RMQ_ETCD_TXN, 200, "{\"succeeded\":\"yes\"}", &res), RMQ_EPROTO);
    ck_assert_int_eq(decode(RMQ_ETCD_TXN, 200, "{\"responses\":[{\"response_range\":[]}]}", &res), RMQ_EPROTO);
    ck_assert_int_eq(decode(RMQ_ETCD_GRANT, 200, "{\"header\":" HDR "}", &res), RMQ_EPROTO);
    ck_assert_int_eq(decode(RMQ_ETCD_GRANT, 200, "{\"ID\":\"1\",\"TTL\":\"1\",\"error\":\"too many\"}", &res),
                     RMQ_ESTATUS);
    ck_assert_int_eq(decode(RMQ_ETCD_KEEPALIVE, 200, "{\"header\":" HDR "}", &res), RMQ_EPROTO);
    ck_assert_int_eq(decode(RMQ_ETCD_PUT, 200, "{}", &res), RMQ_EPROTO);
}
END_TEST

START_TEST(test_endpoints)
{
    struct event_base *base = event_base_new();
    char err[256];
    rmq_etcd_t *e = rmq_etcd_new(base, " http://127.0.0.1:2379/ , 10.0.0.2:2379;[::1]:2380", 1000, err, sizeof err);

    ck_assert_ptr_nonnull(e);
    ck_assert_str_eq(rmq_etcd_endpoint(e), "127.0.0.1:2379");
    rmq_etcd_free(e);
    ck_assert_ptr_null(rmq_etcd_new(base, "", 1000, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "controllerEtcdEndpoints"));
    ck_assert_ptr_null(rmq_etcd_new(base, "127.0.0.1:2379,nohost", 1000, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "'nohost'"));
    ck_assert_ptr_null(rmq_etcd_new(base, "a:1,a:2,a:3,a:4,a:5,a:6,a:7,a:8,a:9", 1000, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "too many"));
    event_base_free(base);
}
END_TEST

static Suite *etcd_suite(void)
{
    Suite *s = suite_create("etcd");
    TCase *tc = tcase_create("codec");
    tcase_add_test(tc, test_encode_range_put_lease);
    tcase_add_test(tc, test_encode_txn);
    tcase_add_test(tc, test_decode_answers);
    tcase_add_test(tc, test_decode_refusals);
    tcase_add_test(tc, test_decode_malformed);
    tcase_add_test(tc, test_endpoints);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(etcd_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
