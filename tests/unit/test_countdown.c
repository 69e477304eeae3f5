/* test_countdown.c: answers awaited with a deadline (rmq_countdown.h). The
 * callback runs once: at the last answer, at the deadline when answers are
 * missing, at once when none is awaited; answers after the end change
 * nothing. */
#include "rmq_countdown.h"

#include <check.h>
#include <stdlib.h>

#include "rmq_time.h"

typedef struct cd_state {
    struct event_base *base;
    rmq_countdown_t cd;
    int done;
} cd_state_t;

static void cd_done(void *arg)
{
    cd_state_t *st = arg;
    st->done++;
    event_base_loopbreak(st->base);
}

static void cd_setup(cd_state_t *st)
{
    st->base = event_base_new();
    ck_assert_ptr_nonnull(st->base);
    st->done = 0;
    rmq_countdown_init(&st->cd, st->base, "test: waiters");
}

static void cd_teardown(cd_state_t *st)
{
    rmq_countdown_deinit(&st->cd);
    event_base_free(st->base);
}

START_TEST(test_none_awaited_ends_at_once)
{
    cd_state_t st;
    cd_setup(&st);
    rmq_countdown_arm(&st.cd, 10000, cd_done, &st);
    ck_assert_int_eq(st.done, 1);
    cd_teardown(&st);
}
END_TEST

START_TEST(test_last_answer_ends)
{
    cd_state_t st;
    cd_setup(&st);
    rmq_countdown_expect(&st.cd);
    rmq_countdown_expect(&st.cd);
    rmq_countdown_arm(&st.cd, 10000, cd_done, &st);
    rmq_countdown_answer(&st.cd);
    ck_assert_int_eq(st.done, 0);
    rmq_countdown_answer(&st.cd);
    ck_assert_int_eq(st.done, 1);
    rmq_countdown_answer(&st.cd);          /* a stray answer: nothing more */
    ck_assert_int_eq(st.done, 1);
    cd_teardown(&st);
}
END_TEST

START_TEST(test_deadline_ends_once)
{
    cd_state_t st;
    cd_setup(&st);
    rmq_countdown_expect(&st.cd);
    rmq_countdown_expect(&st.cd);
    int64_t t0 = rmq_mono_ms();
    rmq_countdown_arm(&st.cd, 50, cd_done, &st);
    rmq_countdown_answer(&st.cd);
    event_base_dispatch(st.base);
    ck_assert_int_eq(st.done, 1);
    ck_assert_int_ge(rmq_mono_ms() - t0, 45);
    rmq_countdown_answer(&st.cd);          /* the late answer: done already ran */
    ck_assert_int_eq(st.done, 1);
    cd_teardown(&st);
}
END_TEST

static Suite *countdown_suite(void)
{
    Suite *s = suite_create("countdown");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_none_awaited_ends_at_once);
    tcase_add_test(tc, test_last_answer_ends);
    tcase_add_test(tc, test_deadline_ends_once);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(countdown_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
