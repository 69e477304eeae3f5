/* core_base.c: the ground of every core test: the per-case loop, temp dir,
 * store and topic table (a Check fixture), and the suite runner. */
#include "core_base.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_time.h"
#include "rmq_file.h"

static core_base_t the_base;         /* the running case's (Check runs one case per process) */

core_base_t *core_base(void)
{
    return &the_base;
}

static void base_setup(void)
{
    core_base_t *cb = &the_base;
    memset(cb, 0, sizeof *cb);
    ts_env_init(&cb->env);
    ck_assert_ptr_nonnull(cb->base = event_base_new());
    ck_assert_ptr_nonnull(cb->poster = rmq_loop_poster_new(cb->base));
    ck_assert_int_lt(snprintf(cb->config_dir, sizeof cb->config_dir, "%s/config", cb->env.dir),
                     (int)sizeof cb->config_dir);
}

static void base_teardown(void)
{
    core_base_t *cb = &the_base;
    rmq_loop_poster_free(cb->poster);
    event_base_free(cb->base);
    ts_env_cleanup(&cb->env);
}

void core_base_open(core_base_t *cb, int auto_create)
{
    char err[256];
    cb->st = ts_open(&cb->env);
    ck_assert_int_eq(st_store_start(cb->st, cb->base, cb->poster), RMQ_OK);
    ck_assert_ptr_nonnull(cb->persist = bk_persist_new());
    ck_assert_int_eq(rmq_file_mkdirs(cb->config_dir), RMQ_OK);
    cb->topics = bk_topics_new(cb->config_dir, cb->persist, auto_create, 8, err, sizeof err);
    ck_assert_msg(cb->topics != NULL, "%s", err);
}

void core_base_close(core_base_t *cb)
{
    st_store_close(cb->st);
    bk_topics_free(cb->topics);
    bk_persist_free(cb->persist);
    cb->st = NULL;
    cb->topics = NULL;
    cb->persist = NULL;
}

void core_topic_add(bk_topics_t *topics, const char *name, int32_t queues)
{
    bk_topic_t t = {.read_queues = queues, .write_queues = queues, .perm = BK_PERM_READ | BK_PERM_WRITE};
    ck_assert_uint_lt(strlen(name), sizeof t.name);
    strcpy(t.name, name);
    ck_assert_int_eq(bk_topics_update(topics, &t), RMQ_OK);
}

bk_groups_t *core_groups_new(core_base_t *cb)
{
    char err[256];
    bk_groups_t *groups = bk_groups_new(cb->config_dir, cb->persist, 1, err, sizeof err);
    ck_assert_msg(groups != NULL, "%s", err);
    return groups;
}

bk_offsets_t *core_offsets_new(core_base_t *cb)
{
    char err[256];
    bk_offsets_t *offsets = bk_offsets_new(cb->config_dir, cb->persist, err, sizeof err);
    ck_assert_msg(offsets != NULL, "%s", err);
    return offsets;
}

void core_on_appended(const bk_append_out_t *out, void *arg)
{
    core_appended_t *a = arg;
    a->out = *out;
    a->done = 1;
}

void core_loop_until(const int *done, int64_t ms)
{
    int64_t deadline = rmq_mono_ms() + ms;
    while (!*done && rmq_mono_ms() < deadline)
        event_base_loop(the_base.base, EVLOOP_ONCE);
}

TCase *core_tcase_new(const char *name)
{
    TCase *tc = tcase_create(name);
    tcase_add_checked_fixture(tc, base_setup, base_teardown);
    return tc;
}

TCase *core_scenarios_tcase(Suite *s, const char *name, const TTest *test, int n)
{
    TCase *tc = core_tcase_new(name);
    tcase_add_loop_test(tc, test, 0, n);
    suite_add_tcase(s, tc);
    return tc;
}

int core_suite_run(Suite *s)
{
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

uint8_t *core_progress_encode(const bk_schedule_progress_t *p, size_t *len)
{
    uint8_t *buf = malloc(sizeof(*p));
    if (buf)
        memcpy(buf, p, sizeof(*p));
    *len = sizeof(*p);
    return buf;
}

rmq_err_t core_progress_decode(const uint8_t *data, size_t len, bk_schedule_progress_t *p)
{
    if (len != sizeof(*p))
        return RMQ_ECORRUPT;
    memcpy(p, data, len);
    return RMQ_OK;
}
