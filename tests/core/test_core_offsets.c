/* test_core_offsets.c: the core's consumer-offset operations in-process
 * (core/bk_offset_ops.c), without any wire protocol: a real store in a temp
 * dir holding three messages of one queue, stored a few milliseconds apart,
 * and an offsets table where group "g" committed 2 on that queue, driven by
 * a table of scenarios (operation -> neutral status, offset, time). A
 * front-end test can run the same table through its codec. Then a reset by
 * time (bk_offset_reset) with a consumer of "g" on a fake session. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <event2/event.h>

#include "bk_clients.h"
#include "bk_groupstats.h"
#include "bk_perm.h"
#include "bk_offset_ops.h"
#include "bk_offsets.h"
#include "core_base.h"
#include "core_fake.h"
#include "rmq_time.h"

#define TOPIC "OffTopic"
#define GROUP "g"
#define MSGS 3
#define COMMITTED 2

typedef enum op {
    OP_QUERY,
    OP_COMMIT,                       /* then a query must read the offset back */
    OP_MAX,
    OP_MIN,
    OP_BY_TIME,
    OP_EARLIEST,
    OP_PROGRESS,
} op_t;

/* Where a search by time points: before every message, at message i's
 * store time, or after the last one. */
enum { AT_BEFORE = -1, AT_AFTER = MSGS };

/* One row: the request and what the core must answer. */
typedef struct scenario {
    const char *name;
    op_t op;
    const char *topic;
    const char *group;
    int32_t queue_id;
    int64_t offset;                  /* OP_COMMIT: the offset to store */
    int at;                          /* OP_BY_TIME: AT_BEFORE, a message index or AT_AFTER */
    bk_status_t want;
    int64_t want_offset;
    int want_committed;              /* the commit hook ran */
} scenario_t;

static const scenario_t scenarios[] = {
    {"query the committed offset", OP_QUERY, TOPIC, GROUP, 0, 0, 0, BK_OK, COMMITTED, 0},
    {"query for an unknown group", OP_QUERY, TOPIC, "nobody", 0, 0, 0, BK_NOT_FOUND, 0, 0},
    {"query for an unknown topic", OP_QUERY, "NoTopic", GROUP, 0, 0, 0, BK_NOT_FOUND, 0, 0},
    {"query for a queue never committed", OP_QUERY, TOPIC, GROUP, 3, 0, 0, BK_NOT_FOUND, 0, 0},
    {"query for a negative queue", OP_QUERY, TOPIC, GROUP, -1, 0, 0, BK_NOT_FOUND, 0, 0},
    {"commit then query", OP_COMMIT, TOPIC, GROUP, 0, 3, 0, BK_OK, 3, 1},
    {"commit on a new queue", OP_COMMIT, TOPIC, GROUP, 5, 1, 0, BK_OK, 1, 1},
    {"commit for a new group and topic", OP_COMMIT, "NewTopic", "g2", 0, 7, 0, BK_OK, 7, 1},
    {"commit past the max offset is kept", OP_COMMIT, TOPIC, GROUP, 0, 1000, 0, BK_OK, 1000, 1},
    {"commit of a negative offset", OP_COMMIT, TOPIC, GROUP, 0, -1, 0, BK_BAD_REQUEST, COMMITTED, 0},
    {"commit on a negative queue", OP_COMMIT, TOPIC, GROUP, -1, 1, 0, BK_BAD_REQUEST, 0, 0},
    {"commit on a queue id out of range", OP_COMMIT, TOPIC, GROUP, 70000, 1, 0, BK_BAD_REQUEST, 0, 0},
    {"commit with a bad group name", OP_COMMIT, TOPIC, "a b", 0, 1, 0, BK_NAME_ILLEGAL, 0, 0},
    {"commit with a bad topic name", OP_COMMIT, "a/b", GROUP, 0, 1, 0, BK_NAME_ILLEGAL, 0, 0},
    {"max offset", OP_MAX, TOPIC, NULL, 0, 0, 0, BK_OK, MSGS, 0},
    {"min offset", OP_MIN, TOPIC, NULL, 0, 0, 0, BK_OK, 0, 0},
    {"max offset of an empty queue", OP_MAX, TOPIC, NULL, 1, 0, 0, BK_OK, 0, 0},
    {"max offset of an unknown topic", OP_MAX, "NoTopic", NULL, 0, 0, 0, BK_OK, 0, 0},
    {"search before the first message", OP_BY_TIME, TOPIC, NULL, 0, 0, AT_BEFORE, BK_OK, 0, 0},
    {"search at the second message", OP_BY_TIME, TOPIC, NULL, 0, 0, 1, BK_OK, 1, 0},
    {"search at the last message", OP_BY_TIME, TOPIC, NULL, 0, 0, MSGS - 1, BK_OK, MSGS - 1, 0},
    {"search after the last message", OP_BY_TIME, TOPIC, NULL, 0, 0, AT_AFTER, BK_OK, MSGS, 0},
    {"earliest store time", OP_EARLIEST, TOPIC, NULL, 0, 0, 0, BK_OK, 0, 0},
    {"consume progress of the group", OP_PROGRESS, "", GROUP, 0, 0, 0, BK_OK, COMMITTED, 0},
    {"consume progress of an unknown group", OP_PROGRESS, "", "nobody", 0, 0, 0, BK_OK, -1, 0},
};

/* The commit hook: counts the commits the core reports. */
static void on_committed(void *arg, const char *topic, const char *group, int32_t queue_id)
{
    (*(int *)arg)++;
}

/* Sleeps ms milliseconds (distinct store timestamps). */
static void sleep_ms(long ms)
{
    struct timespec ts = {0, ms * 1000000L};
    nanosleep(&ts, NULL);
}

/* Runs one scenario against a fresh store and offsets table. */
static void run_scenario(const scenario_t *sc)
{
    core_base_t *cb = core_base();
    core_base_open(cb, 0);
    st_store_t *st = cb->st;
    int64_t times[MSGS];
    for (int i = 0; i < MSGS; i++) {
        st_put_result_t res;
        ts_put(st, TOPIC, 0, (uint32_t)i, 32, NULL, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
        times[i] = st_store_time_at(st, TOPIC, 0, i);
        sleep_ms(5);
    }
    ck_assert_int_lt(times[0], times[MSGS - 1]);
    bk_offsets_t *offsets = core_offsets_new(cb);
    ck_assert_int_eq(bk_offsets_commit(offsets, TOPIC, GROUP, 0, COMMITTED), RMQ_OK);
    bk_groupstats_t *gs = bk_groupstats_new();
    ck_assert_ptr_nonnull(gs);
    int committed = 0;
    bk_offset_ops_config_t oc = {.store = st, .offsets = offsets, .groupstats = gs, .committed = on_committed,
                                 .committed_arg = &committed};
    bk_offset_ops_t *o = bk_offset_ops_new(&oc);
    ck_assert_ptr_nonnull(o);

    bk_offset_key_t key = {.topic = sc->topic, .group = sc->group, .queue_id = sc->queue_id};
    bk_result_t r = {BK_OK, ""};
    int64_t got = -1;
    bk_queue_offset_req_t q = {.topic = sc->topic, .queue_id = sc->queue_id};
    bk_queue_offset_out_t qo;
    bk_consume_progress_t cp;
    switch (sc->op) {
    case OP_QUERY:
        bk_offset_query(o, &key, &got, &r);
        break;
    case OP_COMMIT: {
        bk_offset_commit(o, &key, sc->offset, &r);
        bk_result_t rq;
        bk_offset_query(o, &key, &got, &rq);
        if (got < 0)
            got = 0;
        break;
    }
    case OP_MAX:
    case OP_MIN:
    case OP_BY_TIME:
    case OP_EARLIEST:
        q.what = sc->op == OP_MAX ? BK_QUEUE_MAX_OFFSET : sc->op == OP_MIN ? BK_QUEUE_MIN_OFFSET :
                 sc->op == OP_BY_TIME ? BK_QUEUE_OFFSET_BY_TIME : BK_QUEUE_EARLIEST_TIME;
        q.timestamp = sc->at == AT_BEFORE ? times[0] - 1000 : sc->at == AT_AFTER ? times[MSGS - 1] + 1000 :
                      times[sc->at];
        bk_offset_queue(o, &q, &qo);
        got = qo.offset;
        if (sc->op == OP_EARLIEST)
            ck_assert_msg(qo.timestamp == times[0], "%s: earliest time %lld, want %lld", sc->name,
                          (long long)qo.timestamp, (long long)times[0]);
        else
            ck_assert_int_eq(qo.timestamp, 0);
        break;
    case OP_PROGRESS:
        bk_offset_progress(o, sc->group, sc->topic, &cp, &r);
        if (sc->want_offset >= 0) {
            ck_assert_msg(cp.n == 1, "%s: %zu queues", sc->name, cp.n);
            ck_assert_str_eq(cp.queues[0].topic, TOPIC);
            ck_assert_int_eq(cp.queues[0].queue_id, 0);
            ck_assert_int_eq(cp.queues[0].broker_offset, MSGS);
            ck_assert_int_eq(cp.queues[0].last_timestamp, times[COMMITTED - 1]);
            got = cp.queues[0].consumer_offset;
        } else {
            ck_assert_uint_eq(cp.n, 0);
        }
        ck_assert(cp.consume_tps == 0.0);
        bk_consume_progress_clear(&cp);
        break;
    }
    ck_assert_msg(r.status == sc->want, "%s: status %s (%s), want %s", sc->name, bk_status_name(r.status), r.why,
                  bk_status_name(sc->want));
    ck_assert_msg(r.status == BK_OK || r.why[0], "%s: a refusal without a reason", sc->name);
    if (sc->want == BK_OK || sc->op == OP_COMMIT)
        ck_assert_msg(got == sc->want_offset, "%s: offset %lld, want %lld", sc->name, (long long)got,
                      (long long)sc->want_offset);
    ck_assert_int_eq(committed, sc->want_committed);

    bk_offset_ops_free(o);
    bk_groupstats_free(gs);
    bk_offsets_free(offsets);
    core_base_close(cb);
}

START_TEST(test_scenarios)
{
    run_scenario(&scenarios[_i]);
}
END_TEST

/* One reset: to before the first message (-2), -1 (the end) or after the
 * last message (MSGS), force or not, and the offsets it must leave on
 * queues 0 (committed 2) and 1 (empty, never committed). */
typedef struct reset_case {
    const char *name;
    int at;
    int force;
    int64_t want0, want1;
    int want_commits;
} reset_case_t;

static const reset_case_t resets[] = {
    {"back to before the first message", -2, 0, 0, 0, 2},
    {"to the end, not forced: kept", -1, 0, COMMITTED, 0, 1},
    {"to the end, forced", -1, 1, MSGS, 0, 2},
    {"after the last message, forced", MSGS, 1, MSGS, 0, 2},
};

START_TEST(test_reset)
{
    const reset_case_t *rc = &resets[_i];
    core_base_t *cb = core_base();
    core_base_open(cb, 0);
    core_topic_add(cb->topics, TOPIC, 2);
    int64_t first = 0;
    for (int i = 0; i < MSGS; i++) {
        st_put_result_t res;
        ts_put(cb->st, TOPIC, 0, (uint32_t)i, 32, NULL, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
        if (i == 0)
            first = st_store_time_at(cb->st, TOPIC, 0, 0);
        sleep_ms(5);
    }
    bk_offsets_t *offsets = core_offsets_new(cb);
    ck_assert_int_eq(bk_offsets_commit(offsets, TOPIC, GROUP, 0, COMMITTED), RMQ_OK);
    bk_clients_config_t cc = {.expire_ms = 60000, .max_groups_per_heartbeat = 16, .max_groups_per_conn = 16};
    bk_clients_t *clients = bk_clients_new(&cc);
    core_fake_session_t f;
    core_fake_session_init(&f);
    bk_hb_sub_t sub = {TOPIC, "*"};
    bk_hb_consumer_t hc = {.group = GROUP, .clustering = 1, .subs = &sub, .nsubs = 1};
    bk_heartbeat_t hb = {.client_id = "c1", .consumers = &hc, .nconsumers = 1};
    bk_caller_t who = {NULL, NULL, NULL};
    bk_result_t r;
    ck_assert_int_eq(bk_clients_heartbeat(clients, &f.base, &who, &hb, &r), 1);
    int commits = 0;
    bk_offset_ops_config_t oc = {.store = cb->st, .offsets = offsets, .topics = cb->topics, .clients = clients,
                                 .committed = on_committed, .committed_arg = &commits};
    bk_offset_ops_t *o = bk_offset_ops_new(&oc);

    int64_t ts = rc->at == -1 ? -1 : rc->at == -2 ? first - 1000 : rmq_wall_ms() + 1000;
    bk_offset_reset_t out;
    size_t told;
    ck_assert_int_eq(bk_offset_reset(o, TOPIC, GROUP, ts, rc->force, &out, &told, &r), BK_OK);
    ck_assert_uint_eq(out.n, 2);
    ck_assert_msg(out.offsets[0] == rc->want0 && out.offsets[1] == rc->want1, "%s: offsets %lld %lld", rc->name,
                  (long long)out.offsets[0], (long long)out.offsets[1]);
    ck_assert_int_eq(bk_offsets_query(offsets, TOPIC, GROUP, 0), rc->want0);
    ck_assert_int_eq(bk_offsets_query(offsets, TOPIC, GROUP, 1), rc->want1);
    ck_assert_int_eq(commits, rc->want_commits);
    ck_assert_uint_eq(told, 1);
    ck_assert_int_eq(f.reset, 1);
    ck_assert_int_eq(f.reset_offset0, rc->want0);
    bk_offset_reset_clear(&out);
    ck_assert_int_eq(bk_offset_reset(o, "NoTopic", GROUP, ts, 1, &out, &told, &r), BK_TOPIC_NOT_EXIST);
    ck_assert_uint_eq(told, 0);

    bk_offset_ops_free(o);
    bk_clients_free(clients);
    bk_session_unref(&f.base);
    bk_offsets_free(offsets);
    core_base_close(cb);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_offsets");
    core_scenarios_tcase(s, "offsets", test_scenarios, (int)(sizeof scenarios / sizeof scenarios[0]));
    core_scenarios_tcase(s, "reset", test_reset, (int)(sizeof resets / sizeof resets[0]));
    return core_suite_run(s);
}
