/* test_core_sendback.c: the broker core's send-back and queries in-process,
 * without any wire protocol: a real store in a temp dir, the topic and group
 * tables and the append path, driven by a table of scenarios (broker state,
 * the record at the offset, the request, who asks -> neutral status, where
 * the copy went, with which delay level and properties). Also the queries:
 * a message by key, and by commit-log offset (what a message id names) with
 * the record's topic checked against the reader; and the delay scheduler:
 * a delayed message waits in SCHEDULE_TOPIC_XXXX, then reaches its topic
 * once due, and the persisted progress keeps it from coming twice. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bk_append.h"
#include "bk_groups.h"
#include "bk_produce.h"
#include "bk_props.h"
#include "bk_query.h"
#include "bk_schedule.h"
#include "bk_sendback.h"
#include "core_base.h"
#include "rmq_message.h"
#include "rmq_time.h"
#include "test_store_util.h"

#define TOPIC "CoreTopic"
#define GROUP "core_group"
#define LEVELS 5
#define PROPS "UNIQ_KEY\001UK-1\002TAGS\001tagA\002KEYS\001k1 k2\002"

/* One row: broker state, the record at the offset, the request and the
 * reader, and what the core must do. */
typedef struct scenario {
    const char *name;
    int is_slave;
    int64_t permission;              /* brokerPermission (0: 6) */
    const char *record_topic;        /* the failed message's topic */
    int32_t record_reconsume;        /* its reconsumeTimes */
    int bad_offset;                  /* the request names no record */
    const char *group;
    int32_t delay_level;
    int32_t max_reconsume;
    const char *reader_denies;       /* a topic the caller may not read (NULL: reads all) */
    bk_status_t want;
    const char *want_topic;          /* where the copy goes (NULL: nowhere) */
    int64_t want_level;              /* DELAY of the copy (0: none) */
} scenario_t;

static const scenario_t scenarios[] = {
    {"first failure: retry at level 3", 0, 0, TOPIC, 0, 0, GROUP, 0, 0, NULL, BK_OK, "%RETRY%" GROUP, 3},
    {"the request's level", 0, 0, TOPIC, 1, 0, GROUP, 2, 0, NULL, BK_OK, "%RETRY%" GROUP, 2},
    {"level capped at the last", 0, 0, TOPIC, 9, 0, GROUP, 0, 0, NULL, BK_OK, "%RETRY%" GROUP, LEVELS},
    {"max reconsume times reached: DLQ", 0, 0, TOPIC, 16, 0, GROUP, 0, 0, NULL, BK_OK, "%DLQ%" GROUP, 0},
    {"the request's max reached: DLQ", 0, 0, TOPIC, 2, 0, GROUP, 0, 2, NULL, BK_OK, "%DLQ%" GROUP, 0},
    {"negative level: DLQ at once", 0, 0, TOPIC, 0, 0, GROUP, -1, 0, NULL, BK_OK, "%DLQ%" GROUP, 0},
    {"slave refuses", 1, 0, TOPIC, 0, 0, GROUP, 0, 0, NULL, BK_NOT_MASTER, NULL, 0},
    {"read-only broker refuses", 0, 4, TOPIC, 0, 0, GROUP, 0, 0, NULL, BK_NO_PERMISSION, NULL, 0},
    {"no record at the offset", 0, 0, TOPIC, 0, 1, GROUP, 0, 0, NULL, BK_SYSTEM_ERROR, NULL, 0},
    {"bad group name", 0, 0, TOPIC, 0, 0, "a b", 0, 0, NULL, BK_NAME_ILLEGAL, NULL, 0},
    {"caller may not read the record's topic", 0, 0, TOPIC, 0, 0, GROUP, 0, 0, TOPIC, BK_NO_PERMISSION, NULL, 0},
    {"the group's own retry topic may go back again", 0, 0, "%RETRY%" GROUP, 1, 0, GROUP, 0, 0, "%RETRY%" GROUP,
     BK_OK, "%RETRY%" GROUP, 4},
    {"another group's retry topic is checked", 0, 0, "%RETRY%other", 1, 0, GROUP, 0, 0, "%RETRY%other",
     BK_NO_PERMISSION, NULL, 0},
};

/* What a test broker is made of. */
typedef struct rig {
    st_store_t *st;                  /* core_base()'s */
    bk_topics_t *topics;             /* core_base()'s */
    bk_groups_t *groups;
    bk_append_t *ap;
    bk_sendback_t *sb;
    bk_produce_t *prod;              /* the scheduler's destination checks */
    bk_schedule_t *sched;            /* not started unless a case starts it */
} rig_t;

static bk_stats_t stats;

/* A scheduler over rg with 5 levels of 1..5 s and the fake codec (not started). */
static bk_schedule_t *sched_new(rig_t *rg)
{
    char err[256], path[160];
    core_base_t *cb = core_base();
    ck_assert_int_lt(snprintf(path, sizeof path, "%s/delayOffset.test", cb->config_dir), (int)sizeof path);
    bk_schedule_config_t sc = {.base = cb->base, .store = rg->st, .append = rg->ap, .topics = rg->topics,
                               .produce = rg->prod, .persist = cb->persist, .stats = &stats,
                               .delay_levels = "1s 2s 3s 4s 5s", .horizon_ms = 3600 * 1000, .path = path,
                               .encode = core_progress_encode, .decode = core_progress_decode};
    bk_schedule_t *s = bk_schedule_new(&sc, err, sizeof err);
    ck_assert_msg(s != NULL, "%s", err);
    return s;
}

static void rig_open(rig_t *rg, int is_slave, int64_t permission)
{
    core_base_t *cb = core_base();
    memset(rg, 0, sizeof(*rg));
    core_base_open(cb, 0);
    rg->st = cb->st;
    rg->topics = cb->topics;
    rg->groups = core_groups_new(cb);
    core_topic_add(rg->topics, TOPIC, 1);
    bk_append_config_t ac = {.store = rg->st, .sync_flush_timeout_ms = 5000, .is_slave = is_slave,
                             .permission = permission ? permission : 6, .addr = "127.0.0.1:0"};
    ck_assert_ptr_nonnull(rg->ap = bk_append_new(&ac));
    bk_produce_config_t pc = {.append = rg->ap, .topics = rg->topics, .max_message_size = 4096,
                              .addr = "127.0.0.1:0"};
    ck_assert_ptr_nonnull(rg->prod = bk_produce_new(&pc));
    rg->sched = sched_new(rg);
    bk_sendback_config_t sc = {.store = rg->st, .append = rg->ap, .topics = rg->topics, .groups = rg->groups,
                               .schedule = rg->sched, .is_slave = is_slave,
                               .addr = "127.0.0.1:0"};
    ck_assert_ptr_nonnull(rg->sb = bk_sendback_new(&sc));
}

static void rig_close(rig_t *rg)
{
    bk_sendback_free(rg->sb);
    st_store_set_arrival_cb(rg->st, NULL, NULL);
    bk_produce_free(rg->prod);
    bk_schedule_free(rg->sched);
    core_base_close(core_base());
    bk_append_free(rg->ap);
    bk_groups_free(rg->groups);
}

/* Stores body on topic queue 0 with PROPS; its commit-log offset. */
static int64_t put_record(rig_t *rg, const char *topic, const char *body, int32_t reconsume)
{
    st_msg_t m = {.topic = topic, .topic_len = strlen(topic), .body = body, .body_len = strlen(body),
                  .properties = PROPS, .properties_len = strlen(PROPS), .reconsume_times = reconsume,
                  .born_timestamp = rmq_wall_ms(), .tag_code = st_tag_hash("tagA", 4)};
    st_put_result_t res;
    st_store_put(rg->st, &m, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    return res.phys_offset;
}

/* The fake reader: refuses the one topic named by arg. */
static int fake_may_read(void *arg, const char *topic, char *why, size_t whylen)
{
    if (strcmp(topic, arg) != 0)
        return 1;
    snprintf(why, whylen, "fake reader may not read %s", topic);
    return 0;
}

/* Asserts the value of property name in rec (NULL: absent). */
static void want_prop(const rmq_record_t *rec, const char *name, const char *want, const char *sc)
{
    size_t vl = 0;
    const char *v = rmq_props_get(rec->properties, rec->properties_len, name, &vl);
    if (!want) {
        ck_assert_msg(v == NULL, "%s: property %s present", sc, name);
        return;
    }
    ck_assert_msg(v != NULL, "%s: property %s missing", sc, name);
    ck_assert_msg(vl == strlen(want) && memcmp(v, want, vl) == 0, "%s: %s=%.*s, want %s", sc, name, (int)vl, v,
                  want);
}

/* Checks the copy the core stored at phys. */
static void check_copy(rig_t *rg, const scenario_t *sc, int64_t phys)
{
    struct evbuffer *buf = evbuffer_new();
    rmq_record_t rec;
    char level[16];
    const char *where = sc->want_level ? BK_SCHEDULE_TOPIC : sc->want_topic;
    int32_t q = sc->want_level ? (int32_t)sc->want_level - 1 : 0;
    ck_assert_int_eq(st_store_read_record(rg->st, phys, buf), RMQ_OK);
    ck_assert_int_eq(rmq_record_decode(evbuffer_pullup(buf, -1), evbuffer_get_length(buf), 1, &rec), RMQ_OK);
    ck_assert_msg(rec.topic_len == strlen(where) && memcmp(rec.topic, where, rec.topic_len) == 0,
                  "%s: copy on %.*s", sc->name, (int)rec.topic_len, rec.topic);
    ck_assert_int_eq(rec.queue_id, q);
    ck_assert_int_eq(rec.reconsume_times, sc->record_reconsume + 1);
    ck_assert_int_eq(rec.body_len, 4);
    ck_assert_int_eq(memcmp(rec.body, "fail", 4), 0);
    snprintf(level, sizeof level, "%lld", (long long)sc->want_level);
    want_prop(&rec, RMQ_PROP_DELAY, sc->want_level ? level : NULL, sc->name);
    want_prop(&rec, RMQ_PROP_RETRY_TOPIC, sc->record_topic, sc->name);
    want_prop(&rec, RMQ_PROP_ORIGIN_MESSAGE_ID, "UK-1", sc->name);
    want_prop(&rec, RMQ_PROP_TAGS, "tagA", sc->name);
    want_prop(&rec, RMQ_PROP_REAL_TOPIC, sc->want_level ? sc->want_topic : NULL, sc->name);
    ck_assert_int_eq(st_store_max_offset(rg->st, where, q), 1 + !strcmp(sc->record_topic, where));
    evbuffer_free(buf);
}

/* Runs one scenario against a fresh broker. */
static void run_scenario(const scenario_t *sc)
{
    rig_t rg;
    rig_open(&rg, sc->is_slave, sc->permission);
    if (strcmp(sc->record_topic, TOPIC) != 0)
        core_topic_add(rg.topics, sc->record_topic, 1);
    int64_t phys = put_record(&rg, sc->record_topic, "fail", sc->record_reconsume);
    bk_reader_t rd = {.may_read = fake_may_read, .arg = (void *)sc->reader_denies};
    bk_sendback_req_t req = {.group = sc->group, .offset = sc->bad_offset ? phys + 7 : phys,
                             .delay_level = sc->delay_level, .max_reconsume_times = sc->max_reconsume,
                             .origin_topic = "", .origin_msg_id = "", .reader = sc->reader_denies ? &rd : NULL};
    core_appended_t a = {0};
    if (bk_sendback_run(rg.sb, &req, &a.out, core_on_appended, &a))
        a.done = 1;
    core_loop_until(&a.done, 5000);
    ck_assert_msg(a.done, "%s: no answer", sc->name);
    ck_assert_msg(a.out.r.status == sc->want, "%s: status %s (%s), want %s", sc->name,
                  bk_status_name(a.out.r.status), a.out.r.why, bk_status_name(sc->want));
    ck_assert_msg(a.out.stored == (sc->want_topic != NULL), "%s: stored %d", sc->name, a.out.stored);
    if (sc->want_topic)
        check_copy(&rg, sc, a.out.put.phys_offset);
    else
        ck_assert_int_eq(st_store_max_offset(rg.st, "%DLQ%" GROUP, 0) + st_store_max_offset(rg.st, "%RETRY%" GROUP, 0) +
                         st_store_max_offset(rg.st, BK_SCHEDULE_TOPIC, 2),
                         strcmp(sc->record_topic, "%RETRY%" GROUP) == 0);
    if (sc->reader_denies && sc->want == BK_NO_PERMISSION)
        ck_assert_msg(strstr(a.out.r.why, sc->reader_denies) != NULL, "%s: reason %s", sc->name, a.out.r.why);
    rig_close(&rg);
}

START_TEST(test_sendback_scenarios)
{
    run_scenario(&scenarios[_i]);
}
END_TEST

/* ---- queries -------------------------------------------------------------- */

typedef struct key_wait {
    rig_t *rg;
    const char *key;
    int32_t count;
    bk_result_t r;
} key_wait_t;

/* Queries by key until the index answers (it is built as the log is dispatched). */
static void query_until(key_wait_t *kw, int32_t want)
{
    int64_t deadline = rmq_mono_ms() + 5000;
    for (;;) {
        struct evbuffer *body = evbuffer_new();
        bk_query_key_req_t kr = {.topic = TOPIC, .key = kw->key};
        bk_query_key(kw->rg->st, &kr, 32, body, &kw->count, &kw->r);
        evbuffer_free(body);
        if (kw->count >= want || rmq_mono_ms() > deadline)
            return;
        event_base_loop(core_base()->base, EVLOOP_NONBLOCK);
        usleep(10 * 1000);
    }
}

START_TEST(test_query_by_key)
{
    rig_t rg;
    rig_open(&rg, 0, 0);
    put_record(&rg, TOPIC, "one", 0);
    put_record(&rg, TOPIC, "two", 0);
    key_wait_t kw = {.rg = &rg, .key = "k2"};
    query_until(&kw, 2);
    ck_assert_msg(kw.r.status == BK_OK, "%s", kw.r.why);
    ck_assert_int_eq(kw.count, 2);
    kw.key = "UK-1";
    query_until(&kw, 2);
    ck_assert_int_eq(kw.count, 2);
    kw.key = "nope";
    query_until(&kw, 0);
    ck_assert_int_eq(kw.r.status, BK_NOT_FOUND);
    ck_assert_int_eq(kw.count, 0);
    bk_query_key_req_t empty = {.topic = TOPIC, .key = ""};
    struct evbuffer *body = evbuffer_new();
    ck_assert_int_eq(bk_query_key(rg.st, &empty, 32, body, &kw.count, &kw.r), BK_BAD_REQUEST);
    evbuffer_free(body);
    rig_close(&rg);
}
END_TEST

START_TEST(test_view_by_offset)
{
    rig_t rg;
    bk_result_t r;
    rmq_record_t rec;
    rig_open(&rg, 0, 0);
    put_record(&rg, TOPIC, "first", 0);
    int64_t phys = put_record(&rg, TOPIC, "second", 0);
    struct evbuffer *body = evbuffer_new();
    ck_assert_int_eq(bk_query_view(rg.st, phys, NULL, body, &r), BK_OK);
    ck_assert_int_eq(rmq_record_decode(evbuffer_pullup(body, -1), evbuffer_get_length(body), 1, &rec), RMQ_OK);
    ck_assert_int_eq(rec.body_len, 6);
    ck_assert_int_eq(memcmp(rec.body, "second", 6), 0);
    evbuffer_drain(body, evbuffer_get_length(body));
    ck_assert_int_eq(bk_query_view(rg.st, phys + 3, NULL, body, &r), BK_NOT_FOUND);
    ck_assert_int_eq(bk_query_view(rg.st, 1 << 30, NULL, body, &r), BK_NOT_FOUND);
    bk_reader_t deny = {.may_read = fake_may_read, .arg = (void *)TOPIC};
    ck_assert_int_eq(bk_query_view(rg.st, phys, &deny, body, &r), BK_NO_PERMISSION);
    ck_assert_msg(strstr(r.why, TOPIC) != NULL, "%s", r.why);
    ck_assert_uint_eq(evbuffer_get_length(body), 0);
    bk_reader_t other = {.may_read = fake_may_read, .arg = (void *)"OtherTopic"};
    ck_assert_int_eq(bk_query_view(rg.st, phys, &other, body, &r), BK_OK);
    evbuffer_free(body);
    rig_close(&rg);
}
END_TEST

/* ---- the delay scheduler ----------------------------------------------- */

/* Store arrival: wakes the scheduler (as the broker's arrival callback does). */
static void sched_arrived(const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code, void *arg)
{
    bk_schedule_arrived(arg, topic, queue_id, max_offset, tag_code);
}

/* Starts rg's scheduler, woken by the store's arrivals. */
static void sched_start(rig_t *rg)
{
    st_store_set_arrival_cb(rg->st, sched_arrived, rg->sched);
    bk_schedule_start(rg->sched);
}

/* Runs the loop for ms. */
static void loop_for(int64_t ms)
{
    int64_t end = rmq_mono_ms() + ms;
    while (rmq_mono_ms() < end) {
        event_base_loop(core_base()->base, EVLOOP_NONBLOCK);
        usleep(5 * 1000);
    }
}

/* Reads the first record of TOPIC queue 0 into buf and decodes it into *rec. */
static void first_record(rig_t *rg, struct evbuffer *buf, rmq_record_t *rec)
{
    st_get_result_t res;
    static const st_tag_filter_t all = {.match_all = 1};
    st_store_get(rg->st, TOPIC, 0, 0, 1, 1 << 20, &all, buf, &res);
    ck_assert_int_eq(res.status, ST_GET_FOUND);
    ck_assert_int_eq(rmq_record_decode(evbuffer_pullup(buf, -1), evbuffer_get_length(buf), 1, rec), RMQ_OK);
}

START_TEST(test_delayed_message_reaches_its_time)
{
    rig_t rg;
    rig_open(&rg, 0, 0);
    sched_start(&rg);
    bk_schedule_t *s = rg.sched;
    int64_t puts = stats.total[BK_STAT_PUT];
    const char props[] = "DELAY\0011\002TAGS\001tagA\002";
    st_msg_t m = {.topic = TOPIC, .topic_len = strlen(TOPIC), .body = "later", .body_len = 5,
                  .properties = props, .properties_len = strlen(props), .born_timestamp = rmq_wall_ms()};
    const char *why = NULL;
    ck_assert_int_eq(bk_schedule_divert(s, &m, &why), RMQ_OK);
    ck_assert_int_eq(m.topic_len, strlen(BK_SCHEDULE_TOPIC));
    ck_assert_int_eq(memcmp(m.topic, BK_SCHEDULE_TOPIC, m.topic_len), 0);
    ck_assert_int_eq(m.queue_id, 0);
    bk_append_out_t out;
    ck_assert_int_eq(bk_append_put(rg.ap, &m, 1, &out, NULL, NULL), 1);
    ck_assert_int_eq(out.r.status, BK_OK);
    int64_t t0 = rmq_mono_ms();

    loop_for(300);                   /* not due yet: still scheduled */
    ck_assert_int_eq(st_store_max_offset(rg.st, TOPIC, 0), 0);
    while (st_store_max_offset(rg.st, TOPIC, 0) < 1 && rmq_mono_ms() - t0 < 5000)
        loop_for(20);
    ck_assert_int_eq(st_store_max_offset(rg.st, TOPIC, 0), 1);
    ck_assert_int_ge(rmq_mono_ms() - t0, 900);
    ck_assert_int_eq(stats.total[BK_STAT_PUT], puts + 1);

    /* the copy: the real topic, the schedule properties gone */
    struct evbuffer *buf = evbuffer_new();
    rmq_record_t rec;
    first_record(&rg, buf, &rec);
    ck_assert_int_eq(rec.body_len, 5);
    ck_assert_int_eq(memcmp(rec.body, "later", 5), 0);
    want_prop(&rec, RMQ_PROP_DELAY, NULL, "delivered");
    want_prop(&rec, RMQ_PROP_REAL_TOPIC, NULL, "delivered");
    want_prop(&rec, RMQ_PROP_TAGS, "tagA", "delivered");
    evbuffer_free(buf);

    /* the durable cursor moved past it, and a restart does not deliver it again */
    loop_for(300);
    bk_schedule_progress_t p;
    bk_schedule_progress(s, &p);
    ck_assert_int_eq(p.n_levels, LEVELS);
    ck_assert_int_eq(p.offsets[0], 1);
    st_store_set_arrival_cb(rg.st, NULL, NULL);
    bk_schedule_free(s);
    bk_persist_free(core_base()->persist);     /* waits for the progress write */
    ck_assert_ptr_nonnull(core_base()->persist = bk_persist_new());
    rg.sched = sched_new(&rg);
    sched_start(&rg);
    bk_schedule_progress(rg.sched, &p);
    ck_assert_int_eq(p.offsets[0], 1);
    loop_for(1500);
    ck_assert_int_eq(st_store_max_offset(rg.st, TOPIC, 0), 1);
    rig_close(&rg);
}
END_TEST

/* RocketMQ 5's timer properties (what the 5.x client's setDelayTimeSec,
 * setDelayTimeMs and setDeliverTimeMs send): one row per property set. */
typedef struct timer_case {
    const char *name;
    const char *props;               /* \001 / \002 separated; "NOW+n" replaced by now + n ms */
    rmq_err_t want_rc;
    int32_t want_queue;              /* -1: not diverted */
    int64_t want_delay_ms;           /* due - now, within 200 ms */
    const char *why_has;             /* in the refusal */
} timer_case_t;

static const timer_case_t timer_cases[] = {
    {"TIMER_DELAY_SEC", "TIMER_DELAY_SEC\0013\002", RMQ_OK, LEVELS, 3000, NULL},
    {"TIMER_DELAY_MS", "TIMER_DELAY_MS\0011500\002", RMQ_OK, LEVELS, 1500, NULL},
    {"TIMER_DELIVER_MS", "TIMER_DELIVER_MS\001NOW+2500\002", RMQ_OK, LEVELS, 2500, NULL},
    {"TIMER_DELAY_SEC before TIMER_DELIVER_MS", "TIMER_DELIVER_MS\001NOW+9000\002TIMER_DELAY_SEC\0011\002",
     RMQ_OK, LEVELS, 1000, NULL},
    {"a DELAY level wins", "DELAY\0012\002TIMER_DELAY_SEC\001100\002", RMQ_OK, 1, 2000, NULL},
    {"a time in the past is now", "TIMER_DELAY_MS\001-5\002", RMQ_OK, -1, 0, NULL},
    {"not an integer", "TIMER_DELAY_SEC\001soon\002", RMQ_EINVAL, -1, 0, "TIMER_DELAY_SEC"},
    {"beyond the horizon", "TIMER_DELAY_SEC\0019223372036854775807\002", RMQ_EINVAL, -1, 0, "fileReservedTime"},
};

/* Expands "NOW+n" in c's properties into out; its length. */
static size_t timer_props(const timer_case_t *c, int64_t now, char *out, size_t cap)
{
    const char *at = strstr(c->props, "NOW+");
    if (!at)
        return (size_t)snprintf(out, cap, "%s", c->props);
    long long plus = strtoll(at + 4, NULL, 10);
    const char *rest = strchr(at, '\002');
    return (size_t)snprintf(out, cap, "%.*s%lld%s", (int)(at - c->props), c->props, (long long)now + plus, rest);
}

START_TEST(test_timer_properties_divert)
{
    const timer_case_t *c = &timer_cases[_i];
    rig_t rg;
    rig_open(&rg, 0, 0);
    char props[256];
    int64_t now = rmq_wall_ms();
    size_t plen = timer_props(c, now, props, sizeof props);
    st_msg_t m = {.topic = TOPIC, .topic_len = strlen(TOPIC), .body = "t", .body_len = 1,
                  .properties = props, .properties_len = plen, .born_timestamp = now};
    const char *why = NULL;
    ck_assert_msg(bk_schedule_divert(rg.sched, &m, &why) == c->want_rc, "%s: %s", c->name, why ? why : "");
    if (c->why_has)
        ck_assert_msg(why && strstr(why, c->why_has), "%s: why '%s'", c->name, why ? why : "");
    if (c->want_queue < 0) {
        ck_assert_msg(m.properties == props, "%s: diverted", c->name);
    } else {
        ck_assert_msg(m.queue_id == c->want_queue, "%s: queue %d", c->name, (int)m.queue_id);
        rmq_record_t rec = {.properties = m.properties, .properties_len = m.properties_len};
        want_prop(&rec, RMQ_PROP_TIMER_DELAY_SEC, NULL, c->name);
        want_prop(&rec, RMQ_PROP_TIMER_DELAY_MS, NULL, c->name);
        want_prop(&rec, RMQ_PROP_REAL_TOPIC, TOPIC, c->name);
        if (c->want_queue == LEVELS) {
            int ok = 1;
            int64_t due = bk_props_int(m.properties, m.properties_len, RMQ_PROP_DELIVER_AT, 0, &ok);
            ck_assert_msg(due - now >= c->want_delay_ms && due - now < c->want_delay_ms + 200, "%s: due in %lld ms",
                          c->name, (long long)(due - now));
            ck_assert_int_eq(bk_props_int(m.properties, m.properties_len, RMQ_PROP_TIMER_DELIVER_MS, 0, &ok), due);
        } else {
            want_prop(&rec, RMQ_PROP_TIMER_DELIVER_MS, NULL, c->name);
        }
    }
    rig_close(&rg);
}
END_TEST

/* Stores a timer message of TOPIC with UNIQ_KEY id due at wall ms due
 * through the scheduler's divert; with del_key, a recall's delete marker
 * (TIMER_DEL_UNIQKEY) instead. */
static void timer_put(rig_t *rg, const char *id, int64_t due, const char *del_key)
{
    char props[256];
    int n = snprintf(props, sizeof props, "TIMER_DELIVER_MS\001%lld\002UNIQ_KEY\001%s\002%s%s%s", (long long)due, id,
                     del_key ? "TIMER_DEL_UNIQKEY\001" : "", del_key ? del_key : "", del_key ? "\002" : "");
    st_msg_t m = {.topic = TOPIC, .topic_len = strlen(TOPIC), .body = id, .body_len = strlen(id),
                  .properties = props, .properties_len = (size_t)n, .born_timestamp = rmq_wall_ms()};
    const char *why = NULL;
    bk_append_out_t out;
    ck_assert_int_eq(bk_schedule_divert(rg->sched, &m, &why), RMQ_OK);
    ck_assert_int_eq(m.queue_id, LEVELS);
    ck_assert_int_eq(bk_append_put(rg->ap, &m, 1, &out, NULL, NULL), 1);
    ck_assert_int_eq(out.r.status, BK_OK);
}

/* A delete marker (RocketMQ 5.3's recall, core/bk_recall.c) cancels the
 * timer message of its topic and UNIQ_KEY: neither it nor the marker is
 * delivered, another message due at the same time is; with _i == 1 the
 * scheduler restarts between the recall and the due time, and rebuilds the
 * recall from the timer queue. */
START_TEST(test_delete_marker_cancels_its_message)
{
    rig_t rg;
    rig_open(&rg, 0, 0);
    sched_start(&rg);
    int64_t due = rmq_wall_ms() + 800;
    timer_put(&rg, "RECALLED1", due, NULL);
    timer_put(&rg, "KEPT1", due, NULL);
    timer_put(&rg, "RECALLED1", due + 1, TOPIC "+RECALLED1");
    loop_for(100);
    if (_i == 1) {
        st_store_set_arrival_cb(rg.st, NULL, NULL);
        bk_schedule_free(rg.sched);
        bk_persist_free(core_base()->persist);
        ck_assert_ptr_nonnull(core_base()->persist = bk_persist_new());
        rg.sched = sched_new(&rg);
        sched_start(&rg);
    }
    ck_assert_int_eq(bk_schedule_timer_pending(rg.sched), 3);
    while (st_store_max_offset(rg.st, TOPIC, 0) < 1 && rmq_wall_ms() < due + 3000)
        loop_for(20);
    loop_for(500);
    ck_assert_int_eq(bk_schedule_timer_pending(rg.sched), 0);
    ck_assert_int_eq(st_store_max_offset(rg.st, TOPIC, 0), 1);
    struct evbuffer *buf = evbuffer_new();
    rmq_record_t rec;
    first_record(&rg, buf, &rec);
    want_prop(&rec, RMQ_PROP_UNIQ_KEY, "KEPT1", "the message delivered");
    evbuffer_free(buf);
    rig_close(&rg);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_sendback");
    core_scenarios_tcase(s, "sendback", test_sendback_scenarios, (int)(sizeof scenarios / sizeof scenarios[0]));
    TCase *tq = core_tcase_new("query");
    tcase_add_test(tq, test_query_by_key);
    tcase_add_test(tq, test_view_by_offset);
    suite_add_tcase(s, tq);
    TCase *td = core_tcase_new("schedule");
    tcase_add_test(td, test_delayed_message_reaches_its_time);
    tcase_add_loop_test(td, test_timer_properties_divert, 0, (int)(sizeof timer_cases / sizeof timer_cases[0]));
    tcase_add_loop_test(td, test_delete_marker_cancels_its_message, 0, 2);
    suite_add_tcase(s, td);
    return core_suite_run(s);
}
