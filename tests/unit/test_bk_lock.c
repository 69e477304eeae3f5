/* test_bk_lock.c: the orderly-consumption lock table: one client per
 * (group, topic, queue); renewal by the holder; takeover only after the
 * lock expired; release only by the holder; groups and queues independent. */
#include <check.h>
#include <stdlib.h>

#include "bk_lock.h"

START_TEST(test_lock_renew_expire_release)
{
    bk_lock_t *lk = bk_lock_new(60000);

    ck_assert_ptr_nonnull(lk);
    ck_assert_int_eq(bk_lock_try(lk, "g", "T", 0, "A", 1000), 1);
    ck_assert_int_eq(bk_lock_try(lk, "g", "T", 0, "B", 2000), 0);      /* held by A */
    ck_assert_int_eq(bk_lock_try(lk, "g", "T", 1, "B", 2000), 1);      /* another queue */
    ck_assert_int_eq(bk_lock_try(lk, "g2", "T", 0, "B", 2000), 1);     /* another group */
    ck_assert_int_eq(bk_lock_try(lk, "g", "T", 0, "A", 50000), 1);     /* renewal */
    ck_assert_int_eq(bk_lock_try(lk, "g", "T", 0, "B", 100000), 0);    /* 50 s after renewal */
    ck_assert_int_eq(bk_lock_try(lk, "g", "T", 0, "B", 110001), 1);    /* expired: B takes over */
    ck_assert_int_eq(bk_lock_try(lk, "g", "T", 0, "A", 110002), 0);
    bk_lock_release(lk, "g", "T", 0, "A");                             /* not the holder: no-op */
    ck_assert_int_eq(bk_lock_try(lk, "g", "T", 0, "A", 110003), 0);
    bk_lock_release(lk, "g", "T", 0, "B");
    ck_assert_int_eq(bk_lock_try(lk, "g", "T", 0, "A", 110004), 1);
    ck_assert_uint_eq(bk_lock_count(lk, 110004), 1);                   /* g/T/1 and g2/T/0 expired */
    bk_lock_free(lk);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("bk_lock");
    TCase *tc = tcase_create("lock");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_lock_renew_expire_release);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
