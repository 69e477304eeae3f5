/* test_store_epoch.c: the epoch file (broker/store/st_epoch.h): appends
 * survive a reopen, out-of-order appends and malformed files are refused
 * with the line and rule, truncation drops epochs past the cut, and the
 * consistent point between a deposed master and the new master removes
 * exactly the deposed master's unreplicated suffix. */
#include "st_epoch.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[256], path[300];

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s/rmq-epoch-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/epoch", dir);
}

static void teardown(void)
{
    char tmp[320];

    unlink(path);
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    unlink(tmp);
    rmdir(dir);
}

static void write_text(const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

START_TEST(test_append_reopen_truncate)
{
    char why[256];
    st_epoch_t *ef = st_epoch_open(path, why, sizeof why);

    ck_assert_msg(ef != NULL, "%s", why);
    ck_assert_uint_eq(st_epoch_count(ef), 0);
    ck_assert_int_eq(st_epoch_append(ef, 1, 0, why, sizeof why), RMQ_OK);
    ck_assert_int_eq(st_epoch_append(ef, 3, 4096, why, sizeof why), RMQ_OK);
    /* an epoch not above the last, an offset below the last start */
    ck_assert_int_eq(st_epoch_append(ef, 3, 8192, why, sizeof why), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "does not follow the last epoch 3 at 4096"));
    ck_assert_int_eq(st_epoch_append(ef, 4, 100, why, sizeof why), RMQ_EINVAL);
    ck_assert_int_eq(st_epoch_append(ef, 4, 8192, why, sizeof why), RMQ_OK);
    st_epoch_close(ef);

    ef = st_epoch_open(path, why, sizeof why);
    ck_assert_msg(ef != NULL, "%s", why);
    ck_assert_uint_eq(st_epoch_count(ef), 3);
    ck_assert_int_eq(st_epoch_entries(ef)[1].epoch, 3);
    ck_assert_int_eq(st_epoch_entries(ef)[2].start_offset, 8192);
    /* the log cut at 8192: epoch 4 had no byte left */
    ck_assert_int_eq(st_epoch_truncate(ef, 8192), RMQ_OK);
    ck_assert_uint_eq(st_epoch_count(ef), 2);
    st_epoch_close(ef);
    ef = st_epoch_open(path, why, sizeof why);
    ck_assert_uint_eq(st_epoch_count(ef), 2);
    st_epoch_close(ef);
}
END_TEST

START_TEST(test_refuses_malformed)
{
    static const char *const bad[] = {
        "1 0\n2\n", "0 0\n", "1 -5\n", "1 0\n1 10\n", "2 10\n3 5\n", "1  0\n", "1 0 \n", "x 0\n",
        "99999999999999999999 0\n", "1 0\n\n",
    };
    char why[256];

    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        write_text(bad[i]);
        why[0] = '\0';
        ck_assert_msg(st_epoch_open(path, why, sizeof why) == NULL, "accepted: %s", bad[i]);
        ck_assert_ptr_nonnull(strstr(why, "line "));
    }
    /* the last newline is optional */
    write_text("1 0\n2 77");
    st_epoch_t *ef = st_epoch_open(path, why, sizeof why);
    ck_assert_msg(ef != NULL, "%s", why);
    ck_assert_uint_eq(st_epoch_count(ef), 2);
    st_epoch_close(ef);
}
END_TEST

START_TEST(test_consistent_end)
{
    /* the deposed master wrote epoch 2 from 1000 up to 1500; the new master
     * (slave until then, at 1200) started epoch 3 at 1200 */
    st_epoch_entry_t old[] = { { 1, 0 }, { 2, 1000 } };
    st_epoch_entry_t now[] = { { 1, 0 }, { 2, 1000 }, { 3, 1200 } };
    ck_assert_int_eq(st_epoch_consistent_end(old, 2, 1500, now, 3, 5000), 1200);
    /* a slave that is simply behind keeps everything */
    ck_assert_int_eq(st_epoch_consistent_end(now, 3, 3000, now, 3, 5000), 3000);
    /* the same epoch number started elsewhere is not shared: fall back to epoch 1 */
    st_epoch_entry_t forked[] = { { 1, 0 }, { 2, 900 } };
    ck_assert_int_eq(st_epoch_consistent_end(forked, 2, 1400, now, 3, 5000), 900);
    /* nothing shared */
    st_epoch_entry_t other[] = { { 5, 0 } };
    ck_assert_int_eq(st_epoch_consistent_end(other, 1, 10, now, 3, 5000), -1);
    ck_assert_int_eq(st_epoch_consistent_end(NULL, 0, 0, now, 3, 5000), -1);
}
END_TEST

static Suite *epoch_suite(void)
{
    Suite *s = suite_create("store_epoch");
    TCase *tc = tcase_create("epoch");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_append_reopen_truncate);
    tcase_add_test(tc, test_refuses_malformed);
    tcase_add_test(tc, test_consistent_end);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(epoch_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
