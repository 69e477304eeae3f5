/* core_base.h: what every core test stands on (see core_base.c): the loop,
 * temp dir, store and topic table of a case, and the suite runner. */
#ifndef CORE_BASE_H
#define CORE_BASE_H

#include <check.h>
#include <limits.h>
#include <stdint.h>

#include <event2/event.h>

#include "bk_append.h"
#include "bk_groups.h"
#include "bk_offsets.h"
#include "bk_persist.h"
#include "bk_schedule.h"
#include "bk_topics.h"
#include "core_fake.h"
#include "rmq_loop.h"
#include "test_store_util.h"

/* The case's loop and temp dir (set up by the fixture core_tcase_new adds),
 * and what core_base_open opens there: the store (with env.cfg as the case
 * set it), the persistence queue and a topic table under config_dir. */
typedef struct core_base {
    ts_env_t env;
    struct event_base *base;
    rmq_loop_poster_t *poster;
    char config_dir[PATH_MAX];
    st_store_t *st;
    bk_persist_t *persist;
    bk_topics_t *topics;
} core_base_t;

/* The running case's base. */
core_base_t *core_base(void);

/* Opens and starts the store, then the persistence queue and the topic
 * table (auto_create: autoCreateTopicEnable); fails the case on an error. */
void core_base_open(core_base_t *cb, int auto_create);

/* Closes the store, then frees the topic table and the persistence queue
 * (which first finishes its writes). Whatever uses them is freed after the
 * store closes and may be freed after this. */
void core_base_close(core_base_t *cb);

/* Adds or replaces a read-write topic of queues queues. */
void core_topic_add(bk_topics_t *topics, const char *name, int32_t queues);

/* A subscription-group table (autoCreateSubscriptionGroup on) and a
 * consumer-offset table under cb's config_dir, persisted through its
 * queue (core_base_open first); fail the case on an error. */
bk_groups_t *core_groups_new(core_base_t *cb);
bk_offsets_t *core_offsets_new(core_base_t *cb);

/* An answer of the append path (a send, a send-back), caught by
 * core_on_appended (its bk_append_done_fn, arg the core_appended_t). */
typedef struct core_appended {
    int done;
    bk_append_out_t out;
} core_appended_t;

void core_on_appended(const bk_append_out_t *out, void *arg);

/* The delay scheduler's progress codec for tests: the struct's bytes. */
uint8_t *core_progress_encode(const bk_schedule_progress_t *p, size_t *len);
rmq_err_t core_progress_decode(const uint8_t *data, size_t len, bk_schedule_progress_t *p);

/* Runs the case's loop until *done is set or ms pass. */
void core_loop_until(const int *done, int64_t ms);

/* A test case whose every test gets a fresh core_base() (loop, temp dir). */
TCase *core_tcase_new(const char *name);

/* Adds to s such a test case, running test once for each of n scenarios
 * (_i from 0); returned, for more tests. */
TCase *core_scenarios_tcase(Suite *s, const char *name, const TTest *test, int n);

/* Runs suite s; the process's exit status. */
int core_suite_run(Suite *s);

#endif
