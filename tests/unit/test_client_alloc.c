/* test_client_alloc.c: librmq's pure pieces of consumption: queue allocation
 * (AllocateMessageQueueAveragely), tag expressions, and the process queue's
 * commit offset (lowest offset not yet consumed). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_client_int.h"
#include "rmq_pq.h"

/* Allocates n queues over the cids and checks every queue goes to exactly
 * one consumer, shares differ by at most one, and ranges are contiguous. */
static void check_partition(size_t n, size_t ncids)
{
    char names[16][16];
    const char *cids[16];
    for (size_t i = 0; i < ncids; i++) {
        snprintf(names[i], sizeof names[i], "c%02zu", i);
        cids[i] = names[i];
    }
    int owner[64];
    memset(owner, -1, sizeof owner);
    size_t min = n, max = 0;
    for (size_t i = 0; i < ncids; i++) {
        size_t start, count;
        rmq_rebalance_allocate(n, cids, ncids, cids[i], &start, &count);
        for (size_t q = start; q < start + count; q++) {
            ck_assert_uint_lt(q, n);
            ck_assert_int_eq(owner[q], -1);
            owner[q] = (int)i;
        }
        min = count < min ? count : min;
        max = count > max ? count : max;
    }
    for (size_t q = 0; q < n; q++)
        ck_assert_int_ge(owner[q], 0);
    if (n >= ncids)
        ck_assert_uint_le(max - min, 1);
    else
        ck_assert_uint_le(max, 1);
}

START_TEST(test_allocate_partitions)
{
    for (size_t n = 0; n <= 40; n++)
        for (size_t c = 1; c <= 12; c++)
            check_partition(n, c);
}
END_TEST

START_TEST(test_allocate_known_values)
{
    const char *cids[] = {"a", "b", "c"};
    size_t start, count;
    rmq_rebalance_allocate(8, cids, 3, "a", &start, &count);
    ck_assert_uint_eq(start, 0);
    ck_assert_uint_eq(count, 3);
    rmq_rebalance_allocate(8, cids, 3, "b", &start, &count);
    ck_assert_uint_eq(start, 3);
    ck_assert_uint_eq(count, 3);
    rmq_rebalance_allocate(8, cids, 3, "c", &start, &count);
    ck_assert_uint_eq(start, 6);
    ck_assert_uint_eq(count, 2);
    rmq_rebalance_allocate(2, cids, 3, "c", &start, &count);
    ck_assert_uint_eq(count, 0);
    rmq_rebalance_allocate(8, cids, 3, "zz", &start, &count);
    ck_assert_uint_eq(count, 0);
}
END_TEST

START_TEST(test_tags_parse_and_match)
{
    rmq_tags_t t;
    ck_assert_int_eq(rmq_tags_parse("*", &t), RMQ_OK);
    ck_assert(t.all);
    ck_assert(rmq_tags_match(&t, "x", 1));
    ck_assert(rmq_tags_match(&t, "", 0));
    rmq_tags_free(&t);
    ck_assert_int_eq(rmq_tags_parse(NULL, &t), RMQ_OK);
    ck_assert(t.all);
    rmq_tags_free(&t);
    ck_assert_int_eq(rmq_tags_parse(" TagA ||TagB|| TagC ", &t), RMQ_OK);
    ck_assert(!t.all);
    ck_assert_uint_eq(t.n, 3);
    ck_assert(rmq_tags_match(&t, "TagA", 4));
    ck_assert(rmq_tags_match(&t, "TagC", 4));
    ck_assert(!rmq_tags_match(&t, "TagD", 4));
    ck_assert(!rmq_tags_match(&t, "Tag", 3));
    ck_assert(!rmq_tags_match(&t, "", 0));
    rmq_tags_free(&t);
    ck_assert_int_eq(rmq_tags_parse("A || ", &t), RMQ_OK);   /* empty pieces skipped (rmq_subexpr.h) */
    ck_assert_uint_eq(t.n, 1);
    ck_assert(rmq_tags_match(&t, "A", 1));
    rmq_tags_free(&t);
    ck_assert_int_eq(rmq_tags_parse("||", &t), RMQ_EINVAL);
}
END_TEST

START_TEST(test_pq_commit_offset)
{
    rmq_pq_t pq;
    rmq_pq_init(&pq, 5);
    ck_assert_int_eq(rmq_pq_commit_offset(&pq), 5);
    int64_t offs[] = {5, 6, 8, 9};
    ck_assert_int_eq(rmq_pq_add(&pq, offs, 4, 40, 12), 0);
    ck_assert_int_eq(rmq_pq_commit_offset(&pq), 5);
    rmq_pq_done(&pq, 6, 10);
    ck_assert_int_eq(rmq_pq_commit_offset(&pq), 5);
    rmq_pq_done(&pq, 5, 10);
    ck_assert_int_eq(rmq_pq_commit_offset(&pq), 8);
    rmq_pq_done(&pq, 9, 10);
    rmq_pq_done(&pq, 9, 10);
    size_t count, bytes;
    rmq_pq_load(&pq, &count, &bytes);
    ck_assert_uint_eq(count, 1);
    ck_assert_uint_eq(bytes, 10);
    rmq_pq_done(&pq, 8, 10);
    ck_assert_int_eq(rmq_pq_commit_offset(&pq), 12);
    rmq_pq_set_next(&pq, 20);
    ck_assert_int_eq(rmq_pq_commit_offset(&pq), 20);
    rmq_pq_deinit(&pq);
}
END_TEST

START_TEST(test_pq_ring_wraps_and_grows)
{
    rmq_pq_t pq;
    rmq_pq_init(&pq, 0);
    int64_t next = 0;
    for (int round = 0; round < 50; round++) {
        int64_t offs[37];
        for (int i = 0; i < 37; i++)
            offs[i] = next + i;
        ck_assert_int_eq(rmq_pq_add(&pq, offs, 37, 37, next + 37), 0);
        for (int i = 36; i >= 10; i--)
            rmq_pq_done(&pq, next + i, 1);
        ck_assert_int_eq(rmq_pq_commit_offset(&pq), next);
        for (int i = 0; i < 10; i++)
            rmq_pq_done(&pq, next + i, 1);
        next += 37;
    }
    ck_assert_int_eq(rmq_pq_commit_offset(&pq), next);
    rmq_pq_deinit(&pq);
}
END_TEST

static Suite *client_alloc_suite(void)
{
    Suite *s = suite_create("client_alloc");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_allocate_partitions);
    tcase_add_test(tc, test_allocate_known_values);
    tcase_add_test(tc, test_tags_parse_and_match);
    tcase_add_test(tc, test_pq_commit_offset);
    tcase_add_test(tc, test_pq_ring_wraps_and_grows);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(client_alloc_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
