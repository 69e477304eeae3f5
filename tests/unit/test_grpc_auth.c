/* test_grpc_auth.c: RocketMQ 5's gRPC call signature (rmq_grpc_auth.c)
 * against the shared ACL policy: the header forms the Java and Node
 * clients send, a signature computed apart (Python's hmac), and every
 * refusal with its reason. */
#include <check.h>
#include <string.h>

#include "rmq_grpc_auth.h"
#include "test_acl_fixture.h"

#define DATE "20261206T081500Z"
/* hmac.new(b'app-secret-1', b'20261206T081500Z', hashlib.sha1).hexdigest().upper() */
#define APP_SIG "F1638D6D1C626C8211F7C65477EBECD26266B58A"
#define NOW_MS 1796544900000LL

START_TEST(test_sign_matches_an_independent_hmac)
{
    char sig[41];
    rmq_grpc_auth_sign("app-secret-1", DATE, sig);
    ck_assert_str_eq(sig, APP_SIG);
}
END_TEST

START_TEST(test_parse_forms)
{
    char ak[RMQ_GRPC_AUTH_KEY_MAX + 1], sig[RMQ_GRPC_AUTH_KEY_MAX + 1];
    const char *why = NULL;
    ck_assert_int_eq(rmq_grpc_auth_parse("MQv2-HMAC-SHA1 Credential=app, SignedHeaders=x-mq-date-time, "
                                         "Signature=" APP_SIG, ak, sig, &why), 0);
    ck_assert_str_eq(ak, "app");
    ck_assert_str_eq(sig, APP_SIG);
    ck_assert_int_eq(rmq_grpc_auth_parse("MQv2-HMAC-SHA1 Credential=app/20261206/region/mq,Signature=ab", ak, sig,
                                         &why), 0);
    ck_assert_str_eq(ak, "app");
    ck_assert_str_eq(sig, "ab");
    ck_assert_int_eq(rmq_grpc_auth_parse("Basic YXBwOnNlY3JldA==", ak, sig, &why), -1);
    ck_assert_ptr_nonnull(strstr(why, "not MQv2-HMAC-SHA1"));
    ck_assert_int_eq(rmq_grpc_auth_parse("MQv2-HMAC-SHA1 Signature=ab", ak, sig, &why), -1);
    ck_assert_str_eq(why, "it names no Credential");
    ck_assert_int_eq(rmq_grpc_auth_parse("MQv2-HMAC-SHA1 Credential=app", ak, sig, &why), -1);
    ck_assert_str_eq(why, "it has no Signature");
    char longer[400];
    snprintf(longer, sizeof longer, "MQv2-HMAC-SHA1 Credential=%0200d, Signature=ab", 7);
    ck_assert_int_eq(rmq_grpc_auth_parse(longer, ak, sig, &why), -1);
    ck_assert_str_eq(why, "its Credential is too long");
}
END_TEST

static int auth(const char *peer, const char *authorization, const char *date, const rmq_acl_account_t **a,
                char *remark)
{
    return rmq_grpc_authenticate(acl, peer, authorization, date, NOW_MS, "QueryRoute", a, remark, 256);
}

START_TEST(test_authenticate)
{
    const rmq_acl_account_t *a = NULL;
    char remark[256];
    const char *good = "MQv2-HMAC-SHA1 Credential=app, SignedHeaders=x-mq-date-time, Signature=" APP_SIG;
    ck_assert_int_eq(auth("127.0.0.1:5000", good, DATE, &a, remark), 0);
    ck_assert_str_eq(rmq_acl_account_key(a), "app");
    /* Node's lower-case would do too */
    char lower[160];
    snprintf(lower, sizeof lower, "MQv2-HMAC-SHA1 Credential=app, Signature=%s", "f1638d6d1c626c8211f7c65477ebecd26266b58a");
    ck_assert_int_eq(auth("127.0.0.1:5000", lower, DATE, &a, remark), 0);
    /* a whitelisted address needs no signature */
    ck_assert_int_eq(auth("10.9.1.2:5000", NULL, NULL, &a, remark), 1);
    ck_assert_ptr_null(a);
    ck_assert_int_eq(auth("127.0.0.1:5000", NULL, DATE, &a, remark), -1);
    ck_assert_ptr_nonnull(strstr(remark, "QueryRoute from 127.0.0.1:5000 is not signed"));
    ck_assert_int_eq(auth("127.0.0.1:5000", good, "20261206T081501Z", &a, remark), -1);
    ck_assert_ptr_nonnull(strstr(remark, "account app: signature of QueryRoute does not match its x-mq-date-time"));
    ck_assert_ptr_null(a);
    ck_assert_int_eq(auth("127.0.0.1:5000", good, NULL, &a, remark), -1);
    ck_assert_ptr_nonnull(strstr(remark, "(absent)"));
    /* app is accepted only from its whitelist */
    ck_assert_int_eq(auth("192.168.1.1:5000", good, DATE, &a, remark), -1);
    ck_assert_int_eq(auth("127.0.0.1:5000", "MQv2-HMAC-SHA1 Credential=nobody, Signature=" APP_SIG, DATE, &a,
                          remark), -1);
    ck_assert_ptr_nonnull(strstr(remark, "nobody"));
    ck_assert_int_eq(auth("127.0.0.1:5000", "MQv2-HMAC-SHA1 Credential=app", DATE, &a, remark), -1);
    ck_assert_ptr_nonnull(strstr(remark, "metadata authorization: it has no Signature"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("grpc_auth");
    TCase *tc = tcase_create("auth");
    tcase_add_checked_fixture(tc, acl_fixture_setup, acl_fixture_teardown);
    tcase_add_test(tc, test_sign_matches_an_independent_hmac);
    tcase_add_test(tc, test_parse_forms);
    tcase_add_test(tc, test_authenticate);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
