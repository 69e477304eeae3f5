/* test_ns_kvstore.c: the KV config file (namesrv/ns_kvstore.c): round trip
 * with characters that need escaping, a missing file, corrupt lines, and a
 * save that cannot be written. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ns_kvstore.h"

static char dir[64];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/rmq-kvstore-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[128];

    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");

    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_round_trip)
{
    char path[128], why[256] = "";
    ns_route_t *rt = ns_route_new(), *back = ns_route_new();

    snprintf(path, sizeof path, "%s/kv.conf", dir);
    ck_assert_int_eq(ns_route_kv_put(rt, "ORDER_TOPIC_CONFIG", "TopicA", "broker-a:4;broker-b:4"),
                     RMQ_OK);
    ck_assert_int_eq(ns_route_kv_put(rt, "odd\tns", "key\\with\nnewline", "v\r\t\\"), RMQ_OK);
    ck_assert_int_eq(ns_route_kv_put(rt, "ns", "empty", ""), RMQ_OK);
    ck_assert_int_eq(ns_kvstore_save(rt, path, why, sizeof why), RMQ_OK);
    ck_assert_int_eq(ns_kvstore_load(back, path, why, sizeof why), RMQ_OK);
    ck_assert_str_eq(ns_route_kv_get(back, "ORDER_TOPIC_CONFIG", "TopicA"), "broker-a:4;broker-b:4");
    ck_assert_str_eq(ns_route_kv_get(back, "odd\tns", "key\\with\nnewline"), "v\r\t\\");
    ck_assert_str_eq(ns_route_kv_get(back, "ns", "empty"), "");
    ns_route_free(rt);
    ns_route_free(back);
}
END_TEST

START_TEST(test_missing_file_is_empty)
{
    char path[128], why[256] = "";
    ns_route_t *rt = ns_route_new();

    snprintf(path, sizeof path, "%s/none.conf", dir);
    ck_assert_int_eq(ns_kvstore_load(rt, path, why, sizeof why), RMQ_OK);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_corrupt_lines)
{
    static const char *const bad[] = {
        "only\tone-tab\n",
        "a\tb\tc\td\n",
        "a\tb\tbad\\escape\n",
        "a\tb\tno newline",
        "\tkey\tvalue\n",
    };
    char path[128], why[256];

    snprintf(path, sizeof path, "%s/bad.conf", dir);
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ns_route_t *rt = ns_route_new();
        char text[128];
        snprintf(text, sizeof text, "ok\tk\tv\n%s", bad[i]);
        write_text(path, text);
        why[0] = '\0';
        ck_assert_int_eq(ns_kvstore_load(rt, path, why, sizeof why), RMQ_ECORRUPT);
        ck_assert_ptr_nonnull(strstr(why, ":2:"));
        ns_route_free(rt);
    }
}
END_TEST

START_TEST(test_save_failure)
{
    char path[128], why[256] = "";
    ns_route_t *rt = ns_route_new();

    snprintf(path, sizeof path, "%s/no/such/dir/kv.conf", dir);
    ck_assert_int_eq(ns_route_kv_put(rt, "ns", "k", "v"), RMQ_OK);
    ck_assert_int_eq(ns_kvstore_save(rt, path, why, sizeof why), RMQ_EIO);
    ck_assert_msg(strstr(why, path) != NULL, "%s", why);   /* the failed call and errno are logged */
    ns_route_free(rt);
}
END_TEST

static Suite *kvstore_suite(void)
{
    Suite *s = suite_create("ns_kvstore");
    TCase *tc = tcase_create("kvstore");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_missing_file_is_empty);
    tcase_add_test(tc, test_corrupt_lines);
    tcase_add_test(tc, test_save_failure);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(kvstore_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
