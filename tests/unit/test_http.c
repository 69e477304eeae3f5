/* test_http.c: rmq_http_basic_parse, the "Authorization: Basic" decoder of
 * the metrics and console port: what it accepts, and that everything else
 * is refused with the credentials left empty. */
#include "rmq_http.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

START_TEST(test_accepts_basic)
{
    rmq_acl_credentials_t c;
    /* admin:admin-secret-1 */
    ck_assert_int_eq(rmq_http_basic_parse("Basic YWRtaW46YWRtaW4tc2VjcmV0LTE=", &c), 0);
    ck_assert_str_eq(c.access_key, "admin");
    ck_assert_str_eq(c.secret_key, "admin-secret-1");
    /* scheme case-insensitive, extra spaces around the token; a:b:c keeps the colon in the secret */
    ck_assert_int_eq(rmq_http_basic_parse("basic   YTpiOmM=  ", &c), 0);
    ck_assert_str_eq(c.access_key, "a");
    ck_assert_str_eq(c.secret_key, "b:c");
    /* "u:" : an empty secret parses (and is then refused by the ACL) */
    ck_assert_int_eq(rmq_http_basic_parse("Basic dTo=", &c), 0);
    ck_assert_str_eq(c.access_key, "u");
    ck_assert_str_eq(c.secret_key, "");
}
END_TEST

START_TEST(test_refuses_the_rest)
{
    static const char *const bad[] = {
        "",                      /* nothing */
        "Bearer YTpi",           /* another scheme */
        "Basic",                 /* no token */
        "Basic ",                /* empty token */
        "Basic YWRtaW4=",        /* "admin": no colon */
        "Basic OnNlY3JldA==",    /* ":secret": empty access key */
        "Basic YTpi YTpi",       /* two tokens */
        "Basic YTp",             /* length not a multiple of 4 */
        "Basic YT!i",            /* not base64 */
        "Basic YQBiOmM=",        /* "a\0b:c": NUL byte */
        "Basic ====",            /* padding only */
    };
    rmq_acl_credentials_t c;
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_msg(rmq_http_basic_parse(bad[i], &c) == -1, "accepted \"%s\"", bad[i]);
        ck_assert_msg(c.access_key[0] == '\0' && c.secret_key[0] == '\0', "left credentials for \"%s\"", bad[i]);
    }
    ck_assert_int_eq(rmq_http_basic_parse(NULL, &c), -1);
}
END_TEST

START_TEST(test_refuses_long_fields)
{
    char plain[700], header[1000] = "Basic ";
    rmq_acl_credentials_t c;
    memset(plain, 'k', 300); /* access key of 300 bytes: longer than the 255 the ACL allows */
    memcpy(plain + 300, ":secret-1", 10);
    EVP_EncodeBlock((unsigned char *)header + 6, (const unsigned char *)plain, (int)strlen(plain));
    ck_assert_int_eq(rmq_http_basic_parse(header, &c), -1);
    memcpy(plain, "ak:", 3);
    memset(plain + 3, 's', 400); /* secret of 400 bytes */
    plain[403] = '\0';
    EVP_EncodeBlock((unsigned char *)header + 6, (const unsigned char *)plain, (int)strlen(plain));
    ck_assert_int_eq(rmq_http_basic_parse(header, &c), -1);
    plain[3 + 255] = '\0'; /* 255: the longest that fits */
    EVP_EncodeBlock((unsigned char *)header + 6, (const unsigned char *)plain, (int)strlen(plain));
    ck_assert_int_eq(rmq_http_basic_parse(header, &c), 0);
    ck_assert_uint_eq(strlen(c.secret_key), 255);
}
END_TEST

static Suite *http_suite(void)
{
    Suite *s = suite_create("http");
    TCase *tc = tcase_create("basic");
    tcase_add_test(tc, test_accepts_basic);
    tcase_add_test(tc, test_refuses_the_rest);
    tcase_add_test(tc, test_refuses_long_fields);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(http_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
