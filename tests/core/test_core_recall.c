/* test_core_recall.c: RocketMQ 5.3's recall of a timer message
 * (core/bk_recall.c) over a real store, scheduler and send: the handle
 * codec against one Java's Base64.getUrlEncoder wrote, refused handles; the
 * handle a timer message's send answers (and no other message gets); the
 * checks of a recall with RocketMQ's answers; a recall that cancels the
 * delivery, asked twice, and asked after a delivery. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bk_recall.h"
#include "rmq_base64.h"
#include "bk_send.h"
#include "core_base.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define TOPIC "RecallTopic"
#define BROKER "broker-r"
#define HORIZON_MS (3600 * 1000)
/* "v1 RecallTopic broker-r 1700000000001 7F00000100002A9F0000000000000001" as Java encodes it */
#define JAVA_HANDLE "djEgUmVjYWxsVG9waWMgYnJva2VyLXIgMTcwMDAwMDAwMDAwMSA3RjAwMDAwMTAwMDAyQTlGMDAwMDAwMDAwMDAwMDAwMQ=="

/* ---- handles ------------------------------------------------------------ */

START_TEST(test_handle_codec)
{
    rmq_recall_handle_t h, back;
    char text[RMQ_RECALL_HANDLE_MAX];
    ck_assert_int_eq(rmq_recall_handle_parse(JAVA_HANDLE, strlen(JAVA_HANDLE), &h), RMQ_OK);
    ck_assert_str_eq(h.topic, TOPIC);
    ck_assert_str_eq(h.broker_name, BROKER);
    ck_assert_int_eq(h.timestamp, 1700000000001LL);
    ck_assert_str_eq(h.msg_id, "7F00000100002A9F0000000000000001");
    ck_assert_uint_eq(rmq_recall_handle_format(&h, text, sizeof text), strlen(JAVA_HANDLE));
    ck_assert_str_eq(text, JAVA_HANDLE);
    ck_assert_int_eq(rmq_recall_handle_parse(JAVA_HANDLE, strlen(JAVA_HANDLE) - 2, &back), RMQ_OK);   /* unpadded */
    ck_assert_int_eq(memcmp(&h, &back, sizeof h), 0);
    ck_assert_uint_eq(rmq_recall_handle_format(&h, text, 20), 0);
}
END_TEST

/* Handles RocketMQ's decodeHandle refuses (and what it reads otherwise). */
static const struct {
    const char *raw;                 /* base64url-encoded by the test; NULL: text as is */
    const char *text;
    rmq_err_t want;
    int64_t want_ts;
} handles[] = {
    {NULL, "", RMQ_EINVAL, 0},
    {NULL, "!!!!", RMQ_EINVAL, 0},
    {NULL, "djEgVCBiIDEgPz4+", RMQ_EINVAL, 0},   /* standard alphabet's '+': not URL-safe */
    {"v2 T b 1 id", NULL, RMQ_EINVAL, 0},
    {"v1 T b 1", NULL, RMQ_EINVAL, 0},
    {"v1 T  b 1 id", NULL, RMQ_EINVAL, 0},
    {"v1 T b 1 id extra", NULL, RMQ_OK, 1},
    {"v1 T b soon id", NULL, RMQ_OK, -1},
};

START_TEST(test_handle_refused)
{
    char text[RMQ_RECALL_HANDLE_MAX];
    const char *t = handles[_i].text;
    rmq_recall_handle_t h;
    if (handles[_i].raw) {
        ck_assert_uint_gt(rmq_base64url_encode(handles[_i].raw, strlen(handles[_i].raw), text, sizeof text), 0);
        t = text;
    }
    ck_assert_int_eq(rmq_recall_handle_parse(t, strlen(t), &h), handles[_i].want);
    if (handles[_i].want == RMQ_OK) {
        ck_assert_int_eq(h.timestamp, handles[_i].want_ts);
        ck_assert_str_eq(h.msg_id, "id");
    }
}
END_TEST

/* ---- the rig ------------------------------------------------------------ */

/* What the fake front was answered. */
typedef struct answer {
    int n;
    bk_append_out_t out;
    char ids[128];
    char recall[RMQ_RECALL_HANDLE_MAX];
} answer_t;

static int conn_token;

static void fake_answer(void *arg, void *conn, const void *to, const bk_append_out_t *out, const char *ids,
                        const char *recall, int32_t queue_id)
{
    answer_t *a = arg;
    a->n++;
    a->out = *out;
    snprintf(a->ids, sizeof a->ids, "%s", ids ? ids : out->put.msg_id);
    snprintf(a->recall, sizeof a->recall, "%s", recall ? recall : "");
}

static void fake_keep(void *conn)
{
    ck_assert_ptr_eq(conn, &conn_token);
}

static const bk_send_front_t fake = {fake_answer, fake_keep, fake_keep};

typedef struct rig {
    bk_append_t *ap;
    bk_produce_t *p;
    bk_schedule_t *sched;
    bk_stats_t stats;
    bk_send_t *s;
    bk_recall_t *rc;
} rig_t;

/* The produce hook, as the broker's: through the rig's scheduler. */
static rmq_err_t rig_divert(void *arg, st_msg_t *m, const char **why)
{
    return bk_schedule_divert(((rig_t *)arg)->sched, m, why);
}

static void rig_arrived(const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code, void *arg)
{
    bk_schedule_arrived(arg, topic, queue_id, max_offset, tag_code);
}

/* enabled: recallMessageEnable. The scheduler runs. */
static void rig_open(rig_t *r, int enabled)
{
    char err[256], path[PATH_MAX + 32];
    core_base_t *cb = core_base();
    memset(r, 0, sizeof(*r));
    core_base_open(cb, 0);
    core_topic_add(cb->topics, TOPIC, 1);
    core_topic_add(cb->topics, "Other", 1);
    bk_append_config_t ac = {.store = cb->st, .sync_flush_timeout_ms = 5000, .permission = 6, .addr = "127.0.0.1:0"};
    ck_assert_ptr_nonnull(r->ap = bk_append_new(&ac));
    bk_produce_config_t pc = {.append = r->ap, .topics = cb->topics, .max_message_size = 4096, .addr = "127.0.0.1:0",
                              .divert = rig_divert, .divert_arg = r};
    ck_assert_ptr_nonnull(r->p = bk_produce_new(&pc));
    snprintf(path, sizeof path, "%s/delayOffset.test", cb->config_dir);
    bk_schedule_config_t sc = {.base = cb->base, .store = cb->st, .append = r->ap, .topics = cb->topics,
                               .produce = r->p, .persist = cb->persist, .stats = &r->stats,
                               .delay_levels = "1s 2s", .horizon_ms = HORIZON_MS, .path = path,
                               .encode = core_progress_encode, .decode = core_progress_decode};
    r->sched = bk_schedule_new(&sc, err, sizeof err);
    ck_assert_msg(r->sched != NULL, "%s", err);
    st_store_set_arrival_cb(cb->st, rig_arrived, r->sched);
    bk_schedule_start(r->sched);
    bk_send_config_t snd = {.produce = r->p, .store = cb->st, .stats = &r->stats, .capacity = 100, .wait_ms = 200,
                            .broker_name = BROKER};
    ck_assert_ptr_nonnull(r->s = bk_send_new(&snd));
    bk_recall_config_t rcc = {.append = r->ap, .topics = cb->topics, .broker_name = BROKER, .enabled = enabled,
                              .horizon_ms = bk_schedule_horizon_ms(r->sched)};
    ck_assert_ptr_nonnull(r->rc = bk_recall_new(&rcc));
}

static void rig_close(rig_t *r)
{
    st_store_set_arrival_cb(core_base()->st, NULL, NULL);
    bk_recall_free(r->rc);
    bk_send_free(r->s);
    bk_schedule_free(r->sched);
    bk_produce_free(r->p);
    core_base_close(core_base());
    bk_append_free(r->ap);
}

/* Sends one message with properties props (\001 / \002 separated) to TOPIC; the answer into *a. */
static void rig_send(rig_t *r, const char *props, answer_t *a)
{
    bk_produce_req_t req = {.cmd = "SEND", .topic = TOPIC, .producer_group = "pg", .default_topic = "TBW102",
                            .default_topic_queue_nums = 1, .queue_id = 0, .body_len = 4};
    bk_produce_target_t tgt;
    bk_result_t res;
    ck_assert_msg(bk_produce_check(r->p, &req, &tgt, &res), "%s", res.why);
    st_msg_t m = {.body = "body", .body_len = 4, .properties = props, .properties_len = strlen(props),
                  .born_timestamp = rmq_wall_ms()};
    bk_send_call_t call = {.front = &fake, .front_arg = a, .conn = &conn_token, .to = "", .body_len = 4};
    memset(a, 0, sizeof(*a));
    bk_send_store(r->s, &call, &tgt, &m, 1);
    ck_assert_int_eq(a->n, 1);
    ck_assert_int_eq(a->out.r.status, BK_OK);
}

/* Recalls handle on topic: the check's status; when it passes, the marker
 * is stored and its answer is in *a. */
static bk_status_t rig_recall(rig_t *r, const char *topic, const char *handle, answer_t *a, bk_result_t *res)
{
    bk_recall_marker_t mk;
    bk_recall_req_t req = {.topic = topic, .handle = handle};
    memset(a, 0, sizeof(*a));
    if (!bk_recall_check(r->rc, &req, &mk, res))
        return res->status;
    bk_send_call_t call = {.front = &fake, .front_arg = a, .conn = &conn_token, .to = "", .body_len = 1,
                           .ids = mk.msg_id};
    bk_send_store(r->s, &call, &mk.tgt, &mk.msg, 1);
    ck_assert_int_eq(a->n, 1);
    return a->out.r.status;
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

/* ---- checks ------------------------------------------------------------- */

/* One recall's check: the handle names topic htopic, broker hbroker and a
 * time at now + in_ms; RocketMQ's answer. */
static const struct {
    const char *name;
    int enabled;
    const char *topic;
    const char *htopic, *hbroker;
    int64_t in_ms;
    const char *text;                /* the handle as is, instead */
    bk_status_t want;
    const char *why_has;
} checks[] = {
    {"a good handle", 1, TOPIC, TOPIC, BROKER, 5000, NULL, BK_OK, NULL},
    {"recall disabled", 0, TOPIC, TOPIC, BROKER, 5000, NULL, BK_NO_PERMISSION, "operation is forbidden"},
    {"unknown topic", 1, "NoSuchTopic", "NoSuchTopic", BROKER, 5000, NULL, BK_TOPIC_NOT_EXIST, "not exist"},
    {"not a handle", 1, TOPIC, NULL, NULL, 0, "bm90IGEgaGFuZGxl", BK_ILLEGAL_OPERATION, "recall handle is invalid"},
    {"another topic's handle", 1, TOPIC, "Other", BROKER, 5000, NULL, BK_ILLEGAL_OPERATION, "topic not match"},
    {"another broker's handle", 1, TOPIC, TOPIC, "broker-x", 5000, NULL, BK_ILLEGAL_OPERATION,
     "broker service not available"},
    {"a time passed", 1, TOPIC, TOPIC, BROKER, -1000, NULL, BK_ILLEGAL_OPERATION, "timestamp invalid"},
    {"beyond the horizon", 1, TOPIC, TOPIC, BROKER, HORIZON_MS + 60000, NULL, BK_ILLEGAL_OPERATION,
     "timestamp invalid"},
};

START_TEST(test_recall_checks)
{
    rig_t r;
    answer_t a;
    bk_result_t res = {0};
    char text[RMQ_RECALL_HANDLE_MAX];
    rig_open(&r, checks[_i].enabled);
    const char *handle = checks[_i].text;
    if (!handle) {
        rmq_recall_handle_t h = {.timestamp = rmq_wall_ms() + checks[_i].in_ms};
        snprintf(h.topic, sizeof h.topic, "%s", checks[_i].htopic);
        snprintf(h.broker_name, sizeof h.broker_name, "%s", checks[_i].hbroker);
        snprintf(h.msg_id, sizeof h.msg_id, "ID-1");
        ck_assert_uint_gt(rmq_recall_handle_format(&h, text, sizeof text), 0);
        handle = text;
    }
    bk_status_t st = rig_recall(&r, checks[_i].topic, handle, &a, &res);
    ck_assert_msg(st == checks[_i].want, "%s: %s (%s)", checks[_i].name, bk_status_name(st), res.why);
    if (checks[_i].why_has)
        ck_assert_msg(strstr(res.why, checks[_i].why_has), "%s: why '%s'", checks[_i].name, res.why);
    if (st == BK_OK)
        ck_assert_str_eq(a.ids, "ID-1");
    rig_close(&r);
}
END_TEST

/* ---- end to end --------------------------------------------------------- */

/* A timer message's send answers its handle (a normal or a delay-level
 * message's none); recalling it (twice: both succeed, as in RocketMQ)
 * cancels its delivery while another timer message due at the same time
 * is delivered; recalling that one after its delivery is refused. */
START_TEST(test_recall_cancels_delivery)
{
    rig_t r;
    answer_t a, kept;
    bk_result_t res;
    rmq_recall_handle_t h;
    rig_open(&r, 1);
    rig_send(&r, "UNIQ_KEY\001ID-N\002", &a);
    ck_assert_str_eq(a.recall, "");
    rig_send(&r, "DELAY\0011\002UNIQ_KEY\001ID-L\002", &a);
    ck_assert_str_eq(a.recall, "");
    int64_t sent = rmq_wall_ms();
    rig_send(&r, "TIMER_DELAY_MS\001800\002UNIQ_KEY\001ID-R\002", &a);
    rig_send(&r, "TIMER_DELAY_MS\001800\002UNIQ_KEY\001ID-K\002", &kept);
    ck_assert_int_eq(rmq_recall_handle_parse(a.recall, strlen(a.recall), &h), RMQ_OK);
    ck_assert_str_eq(h.topic, TOPIC);
    ck_assert_str_eq(h.broker_name, BROKER);
    ck_assert_str_eq(h.msg_id, "ID-R");
    ck_assert_int_ge(h.timestamp, sent + 801);
    ck_assert_int_le(h.timestamp, rmq_wall_ms() + 801);

    char handle[RMQ_RECALL_HANDLE_MAX];
    snprintf(handle, sizeof handle, "%s", a.recall);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(rig_recall(&r, TOPIC, handle, &a, &res), BK_OK);
        ck_assert_str_eq(a.ids, "ID-R");
    }
    while (rmq_wall_ms() < h.timestamp + 1500 && st_store_max_offset(core_base()->st, TOPIC, 0) < 3)
        loop_for(20);
    loop_for(300);
    /* the normal message, the level-1 one and ID-K; neither ID-R nor its markers */
    ck_assert_int_eq(st_store_max_offset(core_base()->st, TOPIC, 0), 3);
    ck_assert_int_eq(bk_schedule_timer_pending(r.sched), 0);
    ck_assert_int_eq(rig_recall(&r, TOPIC, kept.recall, &a, &res), BK_ILLEGAL_OPERATION);
    ck_assert_msg(strstr(res.why, "timestamp invalid"), "%s", res.why);
    rig_close(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_recall");
    TCase *th = tcase_create("handles");
    tcase_add_test(th, test_handle_codec);
    tcase_add_loop_test(th, test_handle_refused, 0, (int)(sizeof handles / sizeof handles[0]));
    suite_add_tcase(s, th);
    core_scenarios_tcase(s, "checks", test_recall_checks, (int)(sizeof checks / sizeof checks[0]));
    TCase *te = core_tcase_new("recall");
    tcase_add_test(te, test_recall_cancels_delivery);
    suite_add_tcase(s, te);
    return core_suite_run(s);
}
