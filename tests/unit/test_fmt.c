/* test_fmt.c: common/rmq_fmt.c: integers to decimal text and back, as
 * snprintf's %PRId64 and strtoll read and print them, and joined keys
 * against snprintf of the same pieces, also where they do not fit. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_fmt.h"

static const int64_t samples[] = {0, 1, -1, 9, 10, -10, 123456789, -987654321, INT64_MAX, INT64_MIN,
                                  INT64_MAX - 1, INT64_MIN + 1, 1000000000000000000};

START_TEST(test_fmt_i64_as_printf)
{
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        char got[RMQ_FMT_I64_LEN], want[32];
        int n = snprintf(want, sizeof(want), "%" PRId64, samples[i]);
        ck_assert_uint_eq(rmq_fmt_i64(got, samples[i]), (size_t)n);
        ck_assert_str_eq(got, want);
    }
}
END_TEST

START_TEST(test_parse_i64)
{
    int64_t v;
    for (size_t i = 0; i < sizeof(samples) / sizeof(samples[0]); i++) {
        char text[32];
        snprintf(text, sizeof(text), "%" PRId64, samples[i]);
        ck_assert_int_eq(rmq_parse_i64(text, &v), 0);
        ck_assert(v == samples[i]);
    }
    ck_assert_int_eq(rmq_parse_i64("  +42", &v), 0);
    ck_assert(v == 42);
    ck_assert_int_eq(rmq_parse_i64("9223372036854775808", &v), -1);
    ck_assert_int_eq(rmq_parse_i64("-9223372036854775809", &v), -1);
    ck_assert_int_eq(rmq_parse_i64("12x", &v), -1);
    ck_assert_int_eq(rmq_parse_i64("", &v), -1);
    ck_assert_int_eq(rmq_parse_i64("-", &v), -1);
}
END_TEST

/* "group\ntopic\n-7" joined into cap bytes: snprintf's text when it fits,
 * else length 0. */
static void check_join(size_t cap)
{
    char got[64], want[64];
    rmq_join_t j;
    int n = snprintf(want, cap, "%s\n%s\n%d", "group", "topic", -7);
    rmq_join_init(&j, got, cap);
    rmq_join_str(&j, "group");
    rmq_join_char(&j, '\n');
    rmq_join_str(&j, "topic");
    rmq_join_char(&j, '\n');
    rmq_join_i64(&j, -7);
    if ((size_t)n < cap) {
        ck_assert_uint_eq(rmq_join_end(&j), (size_t)n);
        ck_assert_str_eq(got, want);
    } else {
        ck_assert_uint_eq(rmq_join_end(&j), 0);
        if (cap > 0)
            ck_assert_uint_lt(strlen(got), cap);
    }
}

START_TEST(test_join_fits_or_overflows)
{
    for (size_t cap = 0; cap <= 20; cap++)
        check_join(cap);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fmt");
    TCase *tc = tcase_create("fmt");
    tcase_add_test(tc, test_fmt_i64_as_printf);
    tcase_add_test(tc, test_parse_i64);
    tcase_add_test(tc, test_join_fits_or_overflows);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
