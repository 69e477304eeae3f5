/* test_histogram.c: percentiles of known distributions within 1/32
 * relative error, exact small values, the max cap, merge and empty. */
#include "rmq_histogram.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static rmq_histogram_t *hist_new(void)
{
    rmq_histogram_t *h = malloc(sizeof(*h));
    ck_assert_ptr_nonnull(h);
    rmq_histogram_init(h);
    return h;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* Asserts that reported is not below exact and at most 1/32 above it. */
static void assert_close(uint64_t reported, uint64_t exact)
{
    ck_assert_uint_ge(reported, exact);
    ck_assert_uint_le(reported - exact, exact / 32);
}

/* Checks several quantiles of values (n of them) against the sorted truth. */
static void check_quantiles(uint64_t *values, size_t n)
{
    static const double qs[] = { 0.0, 0.01, 0.25, 0.5, 0.9, 0.99, 0.999, 1.0 };
    rmq_histogram_t *h = hist_new();
    for (size_t i = 0; i < n; i++)
        rmq_histogram_record(h, values[i]);
    qsort(values, n, sizeof(*values), cmp_u64);
    for (size_t i = 0; i < sizeof(qs) / sizeof(qs[0]); i++) {
        size_t rank = (size_t)ceil(qs[i] * (double)n);
        size_t idx = rank == 0 ? 0 : rank - 1;
        assert_close(rmq_histogram_percentile(h, qs[i]), values[idx]);
    }
    ck_assert_uint_eq(h->min, values[0]);
    ck_assert_uint_eq(h->max, values[n - 1]);
    free(h);
}

START_TEST(test_empty)
{
    rmq_histogram_t *h = hist_new();
    ck_assert_uint_eq(rmq_histogram_percentile(h, 0.0), 0);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 0.5), 0);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 1.0), 0);
    ck_assert(rmq_histogram_mean(h) == 0.0);
    ck_assert_uint_eq(h->total, 0);
    ck_assert_uint_eq(h->min, 0);
    ck_assert_uint_eq(h->max, 0);
    free(h);
}
END_TEST

START_TEST(test_small_values_exact)
{
    rmq_histogram_t *h = hist_new();
    for (uint64_t v = 0; v < 32; v++)
        rmq_histogram_record(h, v);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 0.0), 0);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 0.5), 15);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 0.75), 23);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 1.0), 31);
    ck_assert(rmq_histogram_mean(h) == 15.5);
    free(h);
}
END_TEST

START_TEST(test_uniform)
{
    size_t n = 100000;
    uint64_t *v = malloc(n * sizeof(*v));
    ck_assert_ptr_nonnull(v);
    for (size_t i = 0; i < n; i++)
        v[i] = i + 1;
    check_quantiles(v, n);
    free(v);
}
END_TEST

START_TEST(test_log_spread)
{
    size_t n = 200000;
    uint64_t *v = malloc(n * sizeof(*v));
    ck_assert_ptr_nonnull(v);
    srand(7);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = ((uint64_t)rand() << 31) ^ (uint64_t)rand();
        v[i] = r >> (rand() % 62);
    }
    check_quantiles(v, n);
    free(v);
}
END_TEST

START_TEST(test_every_power_of_two_edge)
{
    rmq_histogram_t *h = hist_new();
    for (int b = 0; b < 64; b++) {
        uint64_t v = UINT64_C(1) << b;
        uint64_t probes[] = { v - 1, v, v + 1, v + v / 3 };
        for (size_t i = 0; i < 4; i++) {
            rmq_histogram_init(h);
            rmq_histogram_record(h, probes[i]);
            rmq_histogram_record(h, UINT64_MAX);
            assert_close(rmq_histogram_percentile(h, 0.5), probes[i]);
        }
    }
    free(h);
}
END_TEST

START_TEST(test_capped_at_max)
{
    rmq_histogram_t *h = hist_new();
    rmq_histogram_record(h, 1000);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 0.5), 1000);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 1.0), 1000);
    rmq_histogram_record(h, UINT64_MAX);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 1.0), UINT64_MAX);
    ck_assert_uint_eq(h->max, UINT64_MAX);
    ck_assert_uint_eq(h->min, 1000);
    free(h);
}
END_TEST

START_TEST(test_quantile_out_of_range)
{
    rmq_histogram_t *h = hist_new();
    for (uint64_t v = 10; v <= 20; v++)
        rmq_histogram_record(h, v);
    ck_assert_uint_eq(rmq_histogram_percentile(h, -1.0), 10);
    ck_assert_uint_eq(rmq_histogram_percentile(h, 2.0), 20);
    free(h);
}
END_TEST

START_TEST(test_merge_equals_single)
{
    rmq_histogram_t *a = hist_new(), *b = hist_new(), *all = hist_new();
    for (uint64_t v = 1; v <= 50000; v++) {
        rmq_histogram_record(v % 3 ? a : b, v * 7);
        rmq_histogram_record(all, v * 7);
    }
    rmq_histogram_merge(a, b);
    ck_assert_int_eq(memcmp(a->counts, all->counts, sizeof(a->counts)), 0);
    ck_assert_uint_eq(a->total, all->total);
    ck_assert_uint_eq(a->sum, all->sum);
    ck_assert_uint_eq(a->min, all->min);
    ck_assert_uint_eq(a->max, all->max);
    ck_assert_uint_eq(rmq_histogram_percentile(a, 0.99), rmq_histogram_percentile(all, 0.99));
    free(a);
    free(b);
    free(all);
}
END_TEST

START_TEST(test_merge_with_empty)
{
    rmq_histogram_t *dst = hist_new(), *src = hist_new();
    rmq_histogram_record(src, 5);
    rmq_histogram_record(src, 500);
    rmq_histogram_merge(dst, src);
    ck_assert_uint_eq(dst->total, 2);
    ck_assert_uint_eq(dst->min, 5);
    ck_assert_uint_eq(dst->max, 500);
    rmq_histogram_init(src);
    rmq_histogram_merge(dst, src);
    ck_assert_uint_eq(dst->total, 2);
    ck_assert_uint_eq(dst->min, 5);
    ck_assert(rmq_histogram_mean(dst) == 252.5);
    free(dst);
    free(src);
}
END_TEST

static Suite *histogram_suite(void)
{
    Suite *s = suite_create("histogram");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_empty);
    tcase_add_test(tc, test_small_values_exact);
    tcase_add_test(tc, test_uniform);
    tcase_add_test(tc, test_log_spread);
    tcase_add_test(tc, test_every_power_of_two_edge);
    tcase_add_test(tc, test_capped_at_max);
    tcase_add_test(tc, test_quantile_out_of_range);
    tcase_add_test(tc, test_merge_equals_single);
    tcase_add_test(tc, test_merge_with_empty);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(histogram_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
