/* test_bk_statsitems.c: the broker statistics items' window arithmetic
 * (RocketMQ's StatsItem sampling and StatsSnapshot sum, tps, avgpt) on an
 * injected clock, the kinds by name, and the fixed table evicting the item
 * counted least recently, and a kept reference to an item following it
 * out of its slot and back in. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "bk_statsitems.h"

#define SEC 1000

START_TEST(test_minute_window)
{
    bk_statsitems_t *t = bk_statsitems_new(8, 0);
    bk_si_snapshot_t ss[BK_SI_WINDOW_COUNT];

    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, "T", ss), 0);
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "T", 30, 3);   /* 3 sends, 30 messages */
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, "T", ss), 1);
    ck_assert_int_eq(ss[BK_SI_MINUTE].sum, 0);                 /* not sampled yet */
    bk_statsitems_tick(t, 5 * SEC);                            /* every window's first sample was due at 0 */
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, "T", ss), 1);
    ck_assert_int_eq(ss[BK_SI_MINUTE].sum, 30);                /* (-5 s, 0) .. (5 s, 30) */
    ck_assert_double_eq_tol(ss[BK_SI_MINUTE].tps, 3.0, 1e-9);
    ck_assert_double_eq_tol(ss[BK_SI_MINUTE].avgpt, 10.0, 1e-9);
    ck_assert_int_eq(ss[BK_SI_MINUTE].times, 3);
    ck_assert_int_eq(ss[BK_SI_HOUR].sum, 30);                  /* over the 10 minutes before */
    ck_assert_double_eq_tol(ss[BK_SI_HOUR].tps, 30.0 / 600.0, 1e-9);
    ck_assert_int_eq(ss[BK_SI_DAY].sum, 30);
    ck_assert_double_eq_tol(ss[BK_SI_DAY].tps, 30.0 / 3600.0, 1e-9);

    bk_statsitems_tick(t, 6 * SEC);                            /* nothing due */
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "T", 10, 1);
    bk_statsitems_tick(t, 10 * SEC);                           /* minute sample 2 */
    bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, "T", ss);
    ck_assert_int_eq(ss[BK_SI_MINUTE].sum, 40);                /* (-5 s, 0) .. (10 s, 40) */
    ck_assert_double_eq_tol(ss[BK_SI_MINUTE].tps, 40.0 / 15.0, 1e-9);
    ck_assert_int_eq(ss[BK_SI_HOUR].sum, 30);                  /* hour not sampled again */

    /* 7 samples kept: after 6 more quiet periods the first two have gone,
     * and only what came after the oldest kept sample counts */
    for (int i = 2; i <= 7; i++)
        bk_statsitems_tick(t, i * 10 * SEC);
    bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, "T", ss);
    ck_assert_int_eq(ss[BK_SI_MINUTE].sum, 0);                 /* (10 s, 40) .. (70 s, 40) */
    ck_assert_double_eq_tol(ss[BK_SI_MINUTE].tps, 0.0, 1e-9);
    ck_assert_double_eq_tol(ss[BK_SI_MINUTE].avgpt, 0.0, 1e-9);
    bk_statsitems_free(t);
}
END_TEST

START_TEST(test_new_item_between_samples)
{
    bk_statsitems_t *t = bk_statsitems_new(8, 0);
    bk_si_snapshot_t ss[BK_SI_WINDOW_COUNT];

    bk_statsitems_tick(t, 0);
    bk_statsitems_add_group(t, BK_SI_GROUP_GET_NUMS, "T", "G", 8, 2);
    bk_statsitems_tick(t, 10 * SEC);
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_GROUP_GET_NUMS, "T@G", ss), 1);
    ck_assert_int_eq(ss[BK_SI_MINUTE].sum, 8);                 /* a zero sample one period back */
    ck_assert_double_eq_tol(ss[BK_SI_MINUTE].tps, 0.8, 1e-9);
    ck_assert_double_eq_tol(ss[BK_SI_MINUTE].avgpt, 4.0, 1e-9);
    ck_assert_int_eq(ss[BK_SI_HOUR].sum, 0);                   /* its first hour sample is at 10 min */
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_GROUP_GET_SIZE, "T@G", ss), 0);   /* kinds apart */
    bk_statsitems_free(t);
}
END_TEST

START_TEST(test_kind_names)
{
    ck_assert_int_eq(bk_statsitems_kind("TOPIC_PUT_NUMS"), BK_SI_TOPIC_PUT_NUMS);
    ck_assert_int_eq(bk_statsitems_kind("BROKER_GET_NUMS"), BK_SI_BROKER_GET_NUMS);
    ck_assert_int_eq(bk_statsitems_kind("SNDBCK_PUT_NUMS"), BK_SI_SNDBCK_PUT_NUMS);
    ck_assert_int_eq(bk_statsitems_kind("topic_put_nums"), -1);
    ck_assert_int_eq(bk_statsitems_kind(""), -1);
    ck_assert_int_eq(bk_statsitems_kind(NULL), -1);
}
END_TEST

START_TEST(test_fixed_table_evicts_least_recent)
{
    bk_statsitems_t *t = bk_statsitems_new(2, 0);
    bk_si_snapshot_t ss[BK_SI_WINDOW_COUNT];
    char longkey[400];

    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "A", 1, 1);
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "B", 1, 1);
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "A", 1, 1);    /* B is now the least recent */
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "C", 5, 1);
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, "B", ss), 0);
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, "A", ss), 1);
    bk_statsitems_tick(t, 1 * SEC);
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, "C", ss), 1);
    ck_assert_int_eq(ss[BK_SI_MINUTE].sum, 5);                 /* the reused slot starts clean */
    ck_assert_int_eq(ss[BK_SI_MINUTE].times, 1);
    memset(longkey, 'k', sizeof(longkey) - 1);
    longkey[sizeof(longkey) - 1] = '\0';
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, longkey, 1, 1); /* too long: not counted, nothing evicted */
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, longkey, ss), 0);
    ck_assert_int_eq(bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, "A", ss), 1);
    ck_assert_ptr_null(bk_statsitems_new(0, 0));
    bk_statsitems_free(t);
}
END_TEST

/* The minute window's sum of (TOPIC_PUT_NUMS, key) after the samples due
 * at now; -1 when no such item is kept. */
static int64_t minute_sum(bk_statsitems_t *t, const char *key, int64_t now)
{
    bk_si_snapshot_t ss[BK_SI_WINDOW_COUNT];
    bk_statsitems_tick(t, now);
    return bk_statsitems_view(t, BK_SI_TOPIC_PUT_NUMS, key, ss) ? ss[BK_SI_MINUTE].sum : -1;
}

START_TEST(test_ref_follows_eviction)
{
    bk_statsitems_t *t = bk_statsitems_new(2, 0);
    bk_si_ref_t a = {0}, a_copy;

    bk_statsitems_add_ref(t, &a, BK_SI_TOPIC_PUT_NUMS, "A", 3, 1);
    ck_assert_uint_ne(a.claim, 0);
    a_copy = a;
    bk_statsitems_add_ref(t, &a, BK_SI_TOPIC_PUT_NUMS, "A", 4, 1);    /* through the ref */
    ck_assert_mem_eq(&a, &a_copy, sizeof(a));
    ck_assert_int_eq(minute_sum(t, "A", 0), 7);

    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "B", 1, 1);
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "C", 1, 1);            /* A, least recent, evicted */
    ck_assert_int_eq(minute_sum(t, "A", 10 * SEC), -1);
    bk_statsitems_add_ref(t, &a, BK_SI_TOPIC_PUT_NUMS, "A", 5, 1);    /* C's slot is not A's */
    ck_assert_int_eq(minute_sum(t, "A", 20 * SEC), 5);                 /* A again, from 0 */
    ck_assert_int_eq(minute_sum(t, "C", 20 * SEC), 1);                 /* and C untouched */
    ck_assert_int_eq(minute_sum(t, "B", 20 * SEC), -1);                /* B made room */
    ck_assert_uint_ne(a.claim, a_copy.claim);
    bk_statsitems_add_ref(t, &a, BK_SI_TOPIC_PUT_NUMS, "A", 1, 1);
    ck_assert_int_eq(minute_sum(t, "A", 30 * SEC), 6);
    bk_statsitems_add_ref(NULL, &a, BK_SI_TOPIC_PUT_NUMS, "A", 1, 1); /* no table: nothing */
    bk_statsitems_free(t);
}
END_TEST

START_TEST(test_top_by_last_minute)
{
    bk_statsitems_t *t = bk_statsitems_new(16, 0);
    bk_si_top_t top[2];

    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "old", 100, 1);
    for (int i = 0; i <= 7; i++)                                /* a minute on: its oldest sample holds 100 */
        bk_statsitems_tick(t, i * 10 * SEC);
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "a", 3, 1);
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "b", 7, 1);
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "c", 5, 1);
    bk_statsitems_add(t, BK_SI_GROUP_GET_NUMS, "g", 50, 1);    /* another kind */
    ck_assert_uint_eq(bk_statsitems_top(t, BK_SI_TOPIC_PUT_NUMS, top, 2), 2);
    ck_assert_str_eq(top[0].key, "b");                          /* "old" added nothing since */
    ck_assert_int_eq(top[0].value, 7);
    ck_assert_str_eq(top[1].key, "c");
    bk_statsitems_add(t, BK_SI_TOPIC_PUT_NUMS, "old", 1, 1);
    ck_assert_uint_eq(bk_statsitems_top(t, BK_SI_TOPIC_PUT_NUMS, top, 2), 2);
    ck_assert_int_eq(top[1].recent, 5);
    ck_assert_uint_eq(bk_statsitems_top(NULL, BK_SI_TOPIC_PUT_NUMS, top, 2), 0);
    bk_statsitems_free(t);
}
END_TEST

static Suite *bk_statsitems_suite(void)
{
    Suite *s = suite_create("bk_statsitems");
    TCase *tc = tcase_create("statsitems");

    tcase_add_test(tc, test_minute_window);
    tcase_add_test(tc, test_new_item_between_samples);
    tcase_add_test(tc, test_kind_names);
    tcase_add_test(tc, test_fixed_table_evicts_least_recent);
    tcase_add_test(tc, test_ref_follows_eviction);
    tcase_add_test(tc, test_top_by_last_minute);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(bk_statsitems_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
