/* test_core_pull.c: a consumer's pull on the core in-process
 * (core/bk_consume.c and its long-poll hold, core/bk_hold.c), without any
 * wire protocol: a real store in a temp dir where queue 0 of TOPIC holds
 * three messages tagged TagA, TagB, TagA and a topic absent from the table
 * (a slave's stand-in) holds two, the topic, group and offset tables, and
 * the fake session. A table of scenarios: the pull, what arrives while it
 * is held, and the neutral answer (at once or later, status, count, next
 * offset). A front-end test can run the same table through its codec. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "bk_consume.h"
#include "core_base.h"
#include "rmq_loop.h"
#include "rmq_time.h"
#include "test_store_util.h"

#define TOPIC "PullTopic"
#define STANDIN "StandInTopic"       /* records in the store, no config */
#define GROUP "pg"
#define QUEUES 4
#define MSGS 3

/* One row: broker state, the pull, what arrives while held, the answer. */
typedef struct scenario {
    const char *name;
    int is_slave;
    const char *topic;
    int32_t queue_id;
    int64_t offset;
    const char *subscription;
    int64_t suspend_ms;              /* > 0: may be held this long */
    const char *arrive_tag;          /* held: a message with this tag arrives ("": none) */
    int64_t commit_offset;           /* >= 0: the pull carries this commit offset */
    bk_status_t want;
    int want_held;                   /* answered later, not at once */
    int want_held_after_arrival;     /* the arrival did not release it */
    bk_pull_status_t want_pull;
    int32_t want_count;
    int64_t want_next;
    int64_t want_stored_commit;      /* the group's offset afterwards (-1: none) */
    const char *group;               /* NULL: GROUP */
} scenario_t;

static const scenario_t scenarios[] = {
    {"pull finding messages", 0, TOPIC, 0, 0, "*", 0, "", -1, BK_OK, 0, 0, BK_PULL_FOUND, 3, 3, -1},
    {"pull from the middle", 0, TOPIC, 0, 1, "*", 0, "", -1, BK_OK, 0, 0, BK_PULL_FOUND, 2, 3, -1},
    {"pull at max offset held, woken by an arrival", 0, TOPIC, 0, 3, "*", 5000, "TagA", -1, BK_OK, 1, 0,
     BK_PULL_FOUND, 1, 4, -1},
    {"held pull answered at its suspend timeout", 0, TOPIC, 0, 3, "*", 150, "", -1, BK_OK, 1, 0,
     BK_PULL_NOT_FOUND, 0, 3, -1},
    {"an arrival the filter refuses keeps it held", 0, TOPIC, 0, 3, "TagB", 150, "TagA", -1, BK_OK, 1, 1,
     BK_PULL_RETRY_IMMEDIATELY, 0, 4, -1},
    {"an arrival in another queue keeps it held", 0, TOPIC, 1, 0, "*", 150, "TagA", -1, BK_OK, 1, 1,
     BK_PULL_NOT_FOUND, 0, 0, -1},
    {"at max offset without suspend: not found at once", 0, TOPIC, 0, 3, "*", 0, "", -1, BK_OK, 0, 0,
     BK_PULL_NOT_FOUND, 0, 3, -1},
    {"offset past the max: moved to the max", 0, TOPIC, 0, 10, "*", 5000, "", -1, BK_OK, 0, 0,
     BK_PULL_OFFSET_MOVED, 0, 3, -1},
    {"offset in an empty queue: moved to 0", 0, TOPIC, 2, 5, "*", 0, "", -1, BK_OK, 0, 0, BK_PULL_OFFSET_MOVED,
     0, 0, -1},
    {"offset 0 in an empty queue: not found", 0, TOPIC, 2, 0, "*", 0, "", -1, BK_OK, 0, 0, BK_PULL_NOT_FOUND,
     0, 0, -1},
    {"tag filter", 0, TOPIC, 0, 0, "TagA", 0, "", -1, BK_OK, 0, 0, BK_PULL_FOUND, 2, 3, -1},
    {"tag list with a tab", 0, TOPIC, 0, 0, "TagA\t|| TagB", 0, "", -1, BK_OK, 0, 0, BK_PULL_FOUND, 3, 3, -1},
    {"tag matching nothing", 0, TOPIC, 0, 0, "TagC", 0, "", -1, BK_OK, 0, 0, BK_PULL_RETRY_IMMEDIATELY, 0, 3, -1},
    {"subscription naming no tag", 0, TOPIC, 0, 0, "||", 0, "", -1, BK_SUBSCRIPTION_PARSE_FAILED, 0, 0, 0, 0, 0,
     -1},
    {"commit offset carried by the pull", 0, TOPIC, 0, 0, "*", 0, "", 2, BK_OK, 0, 0, BK_PULL_FOUND, 3, 3, 2},
    {"slave stand-in queue", 1, STANDIN, 0, 0, "*", 0, "", -1, BK_OK, 0, 0, BK_PULL_FOUND, 2, 2, -1},
    {"slave stores no commit offset", 1, TOPIC, 0, 0, "*", 0, "", 2, BK_OK, 0, 0, BK_PULL_FOUND, 3, 3, -1},
    {"slave without records of the topic", 1, "NoTopic", 0, 0, "*", 0, "", -1, BK_TOPIC_NOT_EXIST, 0, 0, 0, 0,
     0, -1},
    {"master has no stand-in", 0, STANDIN, 0, 0, "*", 0, "", -1, BK_TOPIC_NOT_EXIST, 0, 0, 0, 0, 0, -1},
    {"queue out of range", 0, TOPIC, QUEUES, 0, "*", 0, "", -1, BK_BAD_REQUEST, 0, 0, 0, 0, 0, -1},
    {"bad group name", 0, TOPIC, 0, 0, "*", 0, "", -1, BK_NAME_ILLEGAL, 0, 0, 0, 0, 0, -1, "a b"},
};

/* What the core answered (at once or through the callbacks). */
typedef struct answer {
    int done, held, freed;           /* answered; connection held; and released */
    bk_result_t r;
    bk_pull_status_t status;
    int32_t count;
    size_t records;                  /* records actually in the body */
    int64_t next;
} answer_t;

static void answer_record(answer_t *a, const bk_pull_out_t *out)
{
    a->done = 1;
    a->r = out->r;
    a->status = out->status;
    a->count = out->msg_count;
    a->next = out->next_begin_offset;
    a->records = 0;
    if (out->body && evbuffer_get_length(out->body)) {
        rmq_record_t recs[8];
        uint8_t *flat = NULL;
        a->records = ts_records(out->body, recs, 8, &flat);
        free(flat);
    }
}

/* The front's side: the "connection" is the answer_t. */
static void on_answer(void *arg, void *conn, const void *to, const bk_pull_req_t *req, const bk_pull_out_t *out)
{
    answer_record(conn, out);
}

static void on_hold(void *conn)
{
    ((answer_t *)conn)->held = 1;
}

static void on_release(void *conn)
{
    ((answer_t *)conn)->freed = 1;
}

static const bk_pull_front_t test_front = {on_answer, on_hold, on_release};

/* Runs req for session ss with a's answer: 1 when answered at once, 0 held. */
static int pull_run(bk_consume_t *core, const bk_pull_req_t *req, bk_session_t *ss, answer_t *a)
{
    int to = 0;
    bk_pull_call_t call = {.front = &test_front, .conn = a, .to = &to, .to_len = sizeof(to)};
    bk_consume_pull(core, req, ss, &call);
    ck_assert_msg(a->done != a->held, "answered %d and held %d", a->done, a->held);
    return a->done;
}

/* st_arrival_fn: the store's arrivals wake held pulls, as the broker wires it. */
static void on_arrival(const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code, void *arg)
{
    bk_consume_arrived(arg, topic, queue_id, max_offset, tag_code);
}

/* The store, tables and core of one scenario. */
typedef struct fixture {
    st_store_t *st;                  /* core_base()'s */
    bk_topics_t *topics;             /* core_base()'s */
    bk_groups_t *groups;
    bk_offsets_t *offsets;
    bk_consume_t *core;
} fixture_t;

static void fixture_open(fixture_t *fx, int is_slave)
{
    static const char *const tags[MSGS] = {"TagA", "TagB", "TagA"};
    st_put_result_t res;
    core_base_t *cb = core_base();
    core_base_open(cb, 0);
    fx->st = cb->st;
    fx->topics = cb->topics;
    for (uint32_t i = 0; i < MSGS; i++) {
        ts_put(fx->st, TOPIC, 0, i, 40, tags[i], &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
    }
    for (uint32_t i = 0; i < 2; i++) {
        ts_put(fx->st, STANDIN, 0, 100 + i, 40, NULL, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
    }
    core_topic_add(fx->topics, TOPIC, QUEUES);
    fx->groups = core_groups_new(cb);
    fx->offsets = core_offsets_new(cb);
    bk_consume_config_t cc = {
        .base = cb->base, .store = fx->st, .topics = fx->topics, .groups = fx->groups, .offsets = fx->offsets,
        .is_slave = is_slave, .permission = BK_PERM_READ | BK_PERM_WRITE, .max_transfer_count = 32,
        .max_transfer_bytes = 1 << 20, .long_polling = 1, .short_polling_ms = 1000, .in_memory_max = 1 << 30,
        .addr = "127.0.0.1:0",
    };
    ck_assert_ptr_nonnull(fx->core = bk_consume_new(&cc));
    st_store_set_arrival_cb(fx->st, on_arrival, fx->core);
}

static void fixture_close(fixture_t *fx)
{
    bk_consume_free(fx->core);
    bk_offsets_free(fx->offsets);
    bk_groups_free(fx->groups);
    core_base_close(core_base());
}

/* Runs one scenario against a fresh store and tables. */
static void run_scenario(const scenario_t *sc)
{
    fixture_t fx;
    fixture_open(&fx, sc->is_slave);
    core_fake_session_t ss;
    core_fake_session_init(&ss);
    bk_pull_req_t req = {
        .group = sc->group ? sc->group : GROUP,
        .topic = sc->topic, .queue_id = sc->queue_id, .queue_offset = sc->offset, .subscription = sc->subscription,
        .commit = sc->commit_offset >= 0, .commit_offset = sc->commit_offset,
        .suspend = sc->suspend_ms > 0, .suspend_timeout_ms = sc->suspend_ms,
    };
    answer_t a = {0};
    int64_t start = rmq_mono_ms();
    int now = pull_run(fx.core, &req, &ss.base, &a);
    ck_assert_msg(now == !sc->want_held, "%s: answered at once %d", sc->name, now);
    if (!now) {
        ck_assert_uint_eq(bk_consume_held(fx.core), 1);
        if (sc->arrive_tag[0]) {
            st_put_result_t res;
            ts_put(fx.st, sc->topic, 0, 50, 40, sc->arrive_tag, &res);
            ck_assert_int_eq(res.status, ST_PUT_OK);
            ck_assert_msg(a.done == !sc->want_held_after_arrival, "%s: answered on arrival %d", sc->name, a.done);
        }
        core_loop_until(&a.done, sc->suspend_ms + 5000);
        ck_assert_msg(a.done, "%s: no answer", sc->name);
        ck_assert_msg(a.freed, "%s: connection not released", sc->name);
        if (!sc->arrive_tag[0] || sc->want_held_after_arrival)
            ck_assert_msg(rmq_mono_ms() - start >= sc->suspend_ms - 5, "%s: answered after %lld ms, before the "
                          "suspend timeout", sc->name, (long long)(rmq_mono_ms() - start));
        ck_assert_uint_eq(bk_consume_held(fx.core), 0);
    }
    ck_assert_msg(a.r.status == sc->want, "%s: status %s (%s), want %s", sc->name, bk_status_name(a.r.status),
                  a.r.why, bk_status_name(sc->want));
    if (sc->want == BK_OK) {
        ck_assert_msg(a.status == sc->want_pull, "%s: pull status %d, want %d", sc->name, a.status, sc->want_pull);
        ck_assert_msg(a.count == sc->want_count, "%s: %d messages, want %d", sc->name, a.count, sc->want_count);
        ck_assert_msg(a.records == (size_t)sc->want_count, "%s: %zu records in the body", sc->name, a.records);
        ck_assert_msg(a.next == sc->want_next, "%s: next offset %lld, want %lld", sc->name, (long long)a.next,
                      (long long)sc->want_next);
    } else {
        ck_assert_msg(a.r.why[0], "%s: a refusal without a reason", sc->name);
    }
    ck_assert_int_eq(bk_offsets_query(fx.offsets, sc->topic, GROUP, sc->queue_id), sc->want_stored_commit);
    fixture_close(&fx);
    bk_session_unref(&ss.base);
    ck_assert_int_eq(ss.freed, 1);
}

START_TEST(test_scenarios)
{
    run_scenario(&scenarios[_i]);
}
END_TEST

/* The held-pull tests' start: a fresh fixture (master), a fake session, and
 * the pull of queue 0 at its end that holds up to 5 s. */
static bk_pull_req_t held_pull_open(fixture_t *fx, core_fake_session_t *ss)
{
    fixture_open(fx, 0);
    core_fake_session_init(ss);
    return (bk_pull_req_t){.group = GROUP, .topic = TOPIC, .queue_id = 0, .queue_offset = MSGS,
                           .subscription = "*", .suspend = 1, .suspend_timeout_ms = 5000};
}

/* A held pull of a session that closes is dropped unanswered; its
 * connection is released. */
START_TEST(test_held_session_closed)
{
    fixture_t fx;
    core_fake_session_t ss;
    bk_pull_req_t req = held_pull_open(&fx, &ss);
    answer_t a = {0};
    ck_assert_int_eq(pull_run(fx.core, &req, &ss.base, &a), 0);
    bk_session_close(&ss.base, "test");
    bk_consume_session_closed(fx.core, &ss.base);
    ck_assert_uint_eq(bk_consume_held(fx.core), 0);
    ck_assert(a.freed && !a.done);
    st_put_result_t res;
    ts_put(fx.st, TOPIC, 0, 60, 40, NULL, &res);      /* nothing left to wake */
    ck_assert(!a.done);
    fixture_close(&fx);
    bk_session_unref(&ss.base);
    ck_assert_int_eq(ss.freed, 1);
}
END_TEST

/* A clean stop answers a held pull at once (NOT_FOUND) and holds no more. */
START_TEST(test_stop_answers_held)
{
    fixture_t fx;
    core_fake_session_t ss;
    bk_pull_req_t req = held_pull_open(&fx, &ss);
    answer_t a = {0}, b = {0};
    ck_assert_int_eq(pull_run(fx.core, &req, &ss.base, &a), 0);
    bk_consume_stop(fx.core);
    ck_assert(a.done && a.freed);
    ck_assert_int_eq(a.status, BK_PULL_NOT_FOUND);
    ck_assert_int_eq(pull_run(fx.core, &req, &ss.base, &b), 1);
    ck_assert_int_eq(b.status, BK_PULL_NOT_FOUND);
    fixture_close(&fx);
    bk_session_unref(&ss.base);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_pull");
    TCase *tc = core_scenarios_tcase(s, "pull", test_scenarios, (int)(sizeof scenarios / sizeof scenarios[0]));
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_held_session_closed);
    tcase_add_test(tc, test_stop_answers_held);
    return core_suite_run(s);
}
