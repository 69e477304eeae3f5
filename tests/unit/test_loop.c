/* test_loop.c: cross-thread posting. Many threads post at once and every
 * job runs on the loop thread in per-thread FIFO order; freeing a poster
 * runs what is still queued; jobs may post more jobs. */
#include "rmq_loop.h"

#include <check.h>
#include <pthread.h>
#include <stdlib.h>

#define N_THREADS 4
#define N_POSTS 10000

typedef struct post_job {
    struct post_state *st;
    int tid;
    int seq;
} post_job_t;

typedef struct post_state {
    struct event_base *base;
    rmq_loop_poster_t *poster;
    pthread_t loop_thread;
    int next_seq[N_THREADS];
    int ran;
    int wrong_thread;
    int out_of_order;
    post_job_t jobs[N_THREADS][N_POSTS];
} post_state_t;

typedef struct poster_arg {
    post_state_t *st;
    int tid;
} poster_arg_t;

/* Runs on the loop thread: checks thread and order, stops the loop at the end. */
static void job_run(void *arg)
{
    post_job_t *job = arg;
    post_state_t *st = job->st;
    if (!pthread_equal(pthread_self(), st->loop_thread))
        st->wrong_thread++;
    if (job->seq != st->next_seq[job->tid])
        st->out_of_order++;
    st->next_seq[job->tid] = job->seq + 1;
    if (++st->ran == N_THREADS * N_POSTS)
        event_base_loopbreak(st->base);
}

static void *poster_thread(void *arg)
{
    poster_arg_t *pa = arg;
    for (int i = 0; i < N_POSTS; i++) {
        post_job_t *job = &pa->st->jobs[pa->tid][i];
        job->st = pa->st;
        job->tid = pa->tid;
        job->seq = i;
        ck_assert_int_eq(rmq_loop_post(pa->st->poster, job_run, job), RMQ_OK);
    }
    return NULL;
}

START_TEST(test_many_threads_fifo_per_thread)
{
    rmq_loop_global_init();
    post_state_t *st = calloc(1, sizeof(*st));
    ck_assert_ptr_nonnull(st);
    st->base = event_base_new();
    ck_assert_ptr_nonnull(st->base);
    st->poster = rmq_loop_poster_new(st->base);
    ck_assert_ptr_nonnull(st->poster);
    st->loop_thread = pthread_self();

    pthread_t threads[N_THREADS];
    poster_arg_t args[N_THREADS];
    for (int t = 0; t < N_THREADS; t++) {
        args[t] = (poster_arg_t){ st, t };
        ck_assert_int_eq(pthread_create(&threads[t], NULL, poster_thread, &args[t]), 0);
    }
    ck_assert_int_eq(event_base_loop(st->base, EVLOOP_NO_EXIT_ON_EMPTY), 0);
    for (int t = 0; t < N_THREADS; t++)
        pthread_join(threads[t], NULL);

    ck_assert_int_eq(st->ran, N_THREADS * N_POSTS);
    ck_assert_int_eq(st->wrong_thread, 0);
    ck_assert_int_eq(st->out_of_order, 0);
    for (int t = 0; t < N_THREADS; t++)
        ck_assert_int_eq(st->next_seq[t], N_POSTS);
    rmq_loop_poster_free(st->poster);
    event_base_free(st->base);
    free(st);
}
END_TEST

typedef struct order_log {
    int order[16];
    int n;
} order_log_t;

static order_log_t g_log;

static void record_job(void *arg)
{
    g_log.order[g_log.n++] = (int)(intptr_t)arg;
}

START_TEST(test_free_runs_pending_jobs)
{
    rmq_loop_global_init();
    struct event_base *base = event_base_new();
    ck_assert_ptr_nonnull(base);
    rmq_loop_poster_t *p = rmq_loop_poster_new(base);
    ck_assert_ptr_nonnull(p);
    g_log.n = 0;
    for (intptr_t i = 0; i < 5; i++)
        ck_assert_int_eq(rmq_loop_post(p, record_job, (void *)i), RMQ_OK);
    ck_assert_int_eq(g_log.n, 0);
    rmq_loop_poster_free(p);
    ck_assert_int_eq(g_log.n, 5);
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(g_log.order[i], i);
    event_base_free(base);
}
END_TEST

typedef struct chain_state {
    struct event_base *base;
    rmq_loop_poster_t *poster;
    int remaining;
} chain_state_t;

/* Re-posts itself until remaining reaches zero, then stops the loop. */
static void chain_job(void *arg)
{
    chain_state_t *cs = arg;
    if (--cs->remaining == 0) {
        event_base_loopbreak(cs->base);
        return;
    }
    ck_assert_int_eq(rmq_loop_post(cs->poster, chain_job, cs), RMQ_OK);
}

START_TEST(test_job_posts_job)
{
    rmq_loop_global_init();
    chain_state_t cs = { event_base_new(), NULL, 100 };
    ck_assert_ptr_nonnull(cs.base);
    cs.poster = rmq_loop_poster_new(cs.base);
    ck_assert_ptr_nonnull(cs.poster);
    ck_assert_int_eq(rmq_loop_post(cs.poster, chain_job, &cs), RMQ_OK);
    ck_assert_int_eq(event_base_loop(cs.base, EVLOOP_NO_EXIT_ON_EMPTY), 0);
    ck_assert_int_eq(cs.remaining, 0);
    rmq_loop_poster_free(cs.poster);
    event_base_free(cs.base);
}
END_TEST

START_TEST(test_free_null)
{
    rmq_loop_poster_free(NULL);
}
END_TEST

static Suite *loop_suite(void)
{
    Suite *s = suite_create("loop");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_many_threads_fifo_per_thread);
    tcase_add_test(tc, test_free_runs_pending_jobs);
    tcase_add_test(tc, test_job_posts_job);
    tcase_add_test(tc, test_free_null);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(loop_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
