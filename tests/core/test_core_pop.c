/* test_core_pop.c: the broker core's pop consumption in-process (bk_pop.c),
 * without any wire protocol: a real store in a temp dir, the topic, group
 * and offset tables, the append path and send-back. Invisibility and
 * redelivery through the pop retry topic with delivery attempt 2, ack,
 * stale and expired handles, change of invisible time, the DLQ at the
 * group's max attempts, the tag re-check, FIFO pops (blocked while the
 * batch is in flight, the same attempt id replayed, the same offsets after
 * expiry with the attempt counted), a closed session's messages, long
 * polling (a held pop whose requester gave up takes nothing), the DLQ on
 * the client's request, a restart that resumes from the committed offset
 * without loss, and the receipt handle parser. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "bk_append.h"
#include "bk_groups.h"
#include "bk_offset_ops.h"
#include "bk_pop.h"
#include "bk_produce.h"
#include "bk_schedule.h"
#include "bk_sendback.h"
#include "core_base.h"
#include "rmq_message.h"
#include "rmq_time.h"
#include "test_store_util.h"

#define TOPIC "PopTopic"
#define GROUP "pop_group"
#define RETRY "%RETRY%" GROUP "_" TOPIC

typedef struct rig {
    st_store_t *st;
    bk_topics_t *topics;
    bk_groups_t *groups;
    bk_offsets_t *offsets;
    bk_offset_ops_t *ops;            /* commits go through it (and are counted) */
    bk_append_t *ap;
    bk_produce_t *prod;
    bk_schedule_t *sched;
    bk_sendback_t *sb;
    bk_pop_t *pop;
} rig_t;

static bk_stats_t stats;
static int streamed;                 /* commits the offset ops reported (an HA master streams them) */

static void on_committed(void *arg, const char *topic, const char *group, int32_t queue_id)
{
    (void)arg;
    (void)topic;
    (void)group;
    (void)queue_id;
    streamed++;
}

/* What the held pop answered (bk_pop_answer_fn), and its ctx freed. */
typedef struct held_answer {
    int answered, freed;
    int gone;                        /* the requester gave up (bk_pop_gone_fn) */
    size_t n;
    bk_status_t status;
} held_answer_t;

static void on_answer(const bk_pop_req_t *req, bk_pop_out_t *out, void *ctx)
{
    (void)req;
    held_answer_t *ha = ctx;
    ha->answered = 1;
    ha->n = out->n;
    ha->status = out->r.status;
}

static void on_ctx_free(void *ctx)
{
    ((held_answer_t *)ctx)->freed = 1;
}

static int on_gone(void *ctx)
{
    return ((held_answer_t *)ctx)->gone;
}

static void on_arrived(const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code, void *arg)
{
    bk_pop_arrived(((rig_t *)arg)->pop, topic, queue_id, max_offset, tag_code);
}

static bk_pop_t *pop_new(rig_t *rg)
{
    bk_pop_config_t pc = {.base = core_base()->base, .store = rg->st, .topics = rg->topics, .groups = rg->groups,
                          .offsets = rg->ops, .sendback = rg->sb, .broker_name = "broker-a",
                          .addr = "127.0.0.1:0", .permission = 6, .retry_percent = 20, .max_transfer_count = 32,
                          .max_transfer_bytes = 1 << 20, .release_ms = 50};
    bk_pop_t *p = bk_pop_new(&pc);
    ck_assert_ptr_nonnull(p);
    return p;
}

static void rig_open(rig_t *rg)
{
    core_base_t *cb = core_base();
    char err[256], path[160];
    memset(rg, 0, sizeof(*rg));
    core_base_open(cb, 0);
    rg->st = cb->st;
    rg->topics = cb->topics;
    rg->groups = core_groups_new(cb);
    rg->offsets = core_offsets_new(cb);
    bk_offset_ops_config_t oc = {.store = rg->st, .offsets = rg->offsets, .committed = on_committed};
    ck_assert_ptr_nonnull(rg->ops = bk_offset_ops_new(&oc));
    streamed = 0;
    core_topic_add(rg->topics, TOPIC, 2);
    bk_append_config_t ac = {.store = rg->st, .sync_flush_timeout_ms = 5000, .permission = 6, .addr = "127.0.0.1:0"};
    ck_assert_ptr_nonnull(rg->ap = bk_append_new(&ac));
    bk_produce_config_t prc = {.append = rg->ap, .topics = rg->topics, .max_message_size = 4096, .addr = "127.0.0.1:0"};
    ck_assert_ptr_nonnull(rg->prod = bk_produce_new(&prc));
    ck_assert_int_lt(snprintf(path, sizeof path, "%s/delayOffset.test", cb->config_dir), (int)sizeof path);
    bk_schedule_config_t sc = {.base = cb->base, .store = rg->st, .append = rg->ap, .topics = rg->topics,
                               .produce = rg->prod, .persist = cb->persist, .stats = &stats,
                               .delay_levels = "1s 2s", .horizon_ms = 3600 * 1000, .path = path,
                               .encode = core_progress_encode, .decode = core_progress_decode};
    rg->sched = bk_schedule_new(&sc, err, sizeof err);
    ck_assert_msg(rg->sched != NULL, "%s", err);
    bk_sendback_config_t sbc = {.store = rg->st, .append = rg->ap, .topics = rg->topics, .groups = rg->groups,
                                .schedule = rg->sched, .addr = "127.0.0.1:0"};
    ck_assert_ptr_nonnull(rg->sb = bk_sendback_new(&sbc));
    rg->pop = pop_new(rg);
    st_store_set_arrival_cb(rg->st, on_arrived, rg);
}

static void rig_close(rig_t *rg)
{
    bk_pop_free(rg->pop);
    bk_sendback_free(rg->sb);
    st_store_set_arrival_cb(rg->st, NULL, NULL);
    bk_produce_free(rg->prod);
    bk_schedule_free(rg->sched);
    core_base_close(core_base());
    bk_append_free(rg->ap);
    bk_offset_ops_free(rg->ops);
    bk_offsets_free(rg->offsets);
    bk_groups_free(rg->groups);
}

/* Stores body on TOPIC queue qid with tag; its queue offset. */
static int64_t put(rig_t *rg, int32_t qid, const char *body, const char *tag, int32_t reconsume)
{
    char props[128];
    snprintf(props, sizeof props, "UNIQ_KEY\001UK-%s\002TAGS\001%s\002", body, tag);
    st_msg_t m = {.topic = TOPIC, .topic_len = strlen(TOPIC), .queue_id = qid, .body = body,
                  .body_len = strlen(body), .properties = props, .properties_len = strlen(props),
                  .reconsume_times = reconsume, .born_timestamp = rmq_wall_ms(), .tag_code = st_tag_hash(tag, strlen(tag))};
    st_put_result_t res;
    st_store_put(rg->st, &m, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    return res.queue_offset;
}

static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    *(int *)arg = 1;
}

/* Runs the loop for ms (the pop's timer fires meanwhile). */
static void wait_ms(int64_t ms)
{
    int done = 0;
    struct event *ev = evtimer_new(core_base()->base, on_timer, &done);
    struct timeval tv = {.tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000};
    evtimer_add(ev, &tv);
    core_loop_until(&done, ms + 5000);
    event_free(ev);
}

/* A pop of up to 8 messages (invisible ms, tag expression expr) for session ss. */
static bk_pop_req_t pop_req(int64_t invisible, const char *expr, bk_session_t *ss)
{
    return (bk_pop_req_t){.group = GROUP, .topic = TOPIC, .max_msgs = 8, .invisible_ms = invisible,
                          .expression = expr, .ss = ss};
}

/* Runs req, answered at once with BK_OK; the caller clears out. */
static void pop_with(rig_t *rg, const bk_pop_req_t *req, bk_pop_out_t *out)
{
    ck_assert_int_eq(bk_pop_run(rg->pop, req, NULL, out), 1);
    ck_assert_msg(out->r.status == BK_OK, "pop: %s", out->r.why);
}

static void pop(rig_t *rg, int64_t invisible, bk_pop_out_t *out)
{
    bk_pop_req_t req = pop_req(invisible, "*", NULL);
    pop_with(rg, &req, out);
}

/* Runs req until n messages came or 3 s passed (the store dispatches
 * meanwhile); how many came (out: the last pop's). */
static size_t pop_until(rig_t *rg, const bk_pop_req_t *req, size_t n, bk_pop_out_t *out)
{
    int64_t until = rmq_mono_ms() + 3000;
    for (;;) {
        pop_with(rg, req, out);
        if (out->n >= n || rmq_mono_ms() > until)
            return out->n;
        bk_pop_out_clear(out);
        wait_ms(20);
    }
}

static size_t pop_wait(rig_t *rg, size_t n, int64_t invisible, bk_pop_out_t *out)
{
    bk_pop_req_t req = pop_req(invisible, "*", NULL);
    return pop_until(rg, &req, n, out);
}

static bk_status_t ack(rig_t *rg, const char *topic, const char *handle, bk_result_t *r)
{
    bk_pop_ack_req_t req = {.group = GROUP, .topic = topic, .handle = handle};
    return bk_pop_ack(rg->pop, &req, r);
}

/* The first record of out's body. */
static void first_record(const bk_pop_out_t *out, rmq_record_t *rec)
{
    ck_assert_int_eq(rmq_record_decode(evbuffer_pullup(out->body, -1), evbuffer_get_length(out->body), 0, rec),
                     RMQ_OK);
}

START_TEST(test_pop_invisible_then_redelivered_attempt_2)
{
    rig_t rg;
    rig_open(&rg);
    put(&rg, 0, "m1", "tagA", 0);
    bk_pop_out_t out;
    ck_assert_uint_eq(pop_wait(&rg, 1, 300, &out), 1);
    ck_assert_int_eq(out.msgs[0].attempt, 1);
    ck_assert_int_eq(out.msgs[0].retry, 0);
    ck_assert_int_eq(bk_pop_inflight(rg.pop), 1);
    bk_pop_out_clear(&out);
    pop(&rg, 300, &out);
    ck_assert_uint_eq(out.n, 0);
    bk_pop_out_clear(&out);
    wait_ms(400);
    ck_assert_uint_eq(pop_wait(&rg, 1, 300, &out), 1);
    ck_assert_int_eq(out.msgs[0].attempt, 2);
    ck_assert_int_eq(out.msgs[0].retry, 1);
    rmq_record_t rec;
    first_record(&out, &rec);
    ck_assert_int_eq(rec.body_len, 2);
    ck_assert_int_eq(memcmp(rec.body, "m1", 2), 0);
    size_t vl;
    const char *rt = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_RETRY_TOPIC, &vl);
    ck_assert_msg(rt && vl == strlen(TOPIC) && !memcmp(rt, TOPIC, vl), "RETRY_TOPIC");
    ck_assert_ptr_nonnull(rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_FIRST_POP_TIME, &vl));
    ck_assert_int_eq(bk_offsets_query(rg.offsets, TOPIC, GROUP, 0), 1);
    bk_result_t r;
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[0].handle, &r), BK_OK);
    ck_assert_int_eq(bk_offsets_query(rg.offsets, RETRY, GROUP, out.msgs[0].queue_id), 1);
    bk_pop_out_clear(&out);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_acked_not_redelivered)
{
    rig_t rg;
    rig_open(&rg);
    put(&rg, 1, "m1", "tagA", 0);
    put(&rg, 1, "m2", "tagA", 0);
    bk_pop_out_t out;
    ck_assert_uint_eq(pop_wait(&rg, 2, 200, &out), 2);
    bk_result_t r;
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[1].handle, &r), BK_OK);
    ck_assert_int_eq(bk_offsets_query(rg.offsets, TOPIC, GROUP, 1), 0);
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[0].handle, &r), BK_OK);
    ck_assert_int_eq(bk_offsets_query(rg.offsets, TOPIC, GROUP, 1), 2);
    ck_assert_int_gt(streamed, 0);
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[0].handle, &r), BK_BAD_REQUEST);
    ck_assert_msg(strstr(r.why, "INVALID_RECEIPT_HANDLE") != NULL, "%s", r.why);
    bk_pop_out_clear(&out);
    wait_ms(300);
    pop(&rg, 200, &out);
    ck_assert_uint_eq(out.n, 0);
    ck_assert_int_eq(bk_pop_inflight(rg.pop), 0);
    bk_pop_out_clear(&out);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_stale_and_expired_handles)
{
    rig_t rg;
    rig_open(&rg);
    put(&rg, 0, "m1", "tagA", 0);
    put(&rg, 0, "m2", "tagA", 0);
    bk_pop_out_t out;
    ck_assert_uint_eq(pop_wait(&rg, 2, 150, &out), 2);
    char fresh[BK_POP_HANDLE_MAX];
    int64_t pt;
    bk_result_t r;
    bk_pop_ack_req_t req = {.group = GROUP, .topic = TOPIC, .handle = out.msgs[0].handle};
    ck_assert_int_eq(bk_pop_change_invisible(rg.pop, &req, 5000, fresh, sizeof fresh, &pt, &r), BK_OK);
    ck_assert_str_ne(fresh, out.msgs[0].handle);
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[0].handle, &r), BK_BAD_REQUEST);
    ck_assert_msg(strstr(r.why, "stale") != NULL, "%s", r.why);
    wait_ms(300);
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[1].handle, &r), BK_BAD_REQUEST);
    ck_assert_msg(strstr(r.why, "INVALID_RECEIPT_HANDLE") != NULL, "%s", r.why);
    ck_assert_int_eq(ack(&rg, TOPIC, "1 2 3", &r), BK_BAD_REQUEST);
    ck_assert_msg(strstr(r.why, "malformed") != NULL, "%s", r.why);
    ck_assert_int_eq(ack(&rg, TOPIC, fresh, &r), BK_OK);
    bk_pop_out_clear(&out);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_change_invisible_delays_redelivery)
{
    rig_t rg;
    rig_open(&rg);
    put(&rg, 0, "m1", "tagA", 0);
    bk_pop_out_t out;
    ck_assert_uint_eq(pop_wait(&rg, 1, 100, &out), 1);
    char fresh[BK_POP_HANDLE_MAX];
    int64_t pt;
    bk_result_t r;
    bk_pop_ack_req_t req = {.group = GROUP, .topic = TOPIC, .handle = out.msgs[0].handle};
    ck_assert_int_eq(bk_pop_change_invisible(rg.pop, &req, 800, fresh, sizeof fresh, &pt, &r), BK_OK);
    bk_pop_out_clear(&out);
    wait_ms(300);
    pop(&rg, 100, &out);
    ck_assert_uint_eq(out.n, 0);
    bk_pop_out_clear(&out);
    wait_ms(700);
    ck_assert_uint_eq(pop_wait(&rg, 1, 1000, &out), 1);
    ck_assert_int_eq(out.msgs[0].attempt, 2);
    bk_pop_out_clear(&out);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_max_attempts_go_to_dlq)
{
    rig_t rg;
    rig_open(&rg);
    const bk_group_t *g = bk_groups_use(rg.groups, GROUP, strlen(GROUP));
    ck_assert_ptr_nonnull(g);
    put(&rg, 0, "dead", "tagA", g->retry_max_times);
    put(&rg, 0, "live", "tagA", 0);
    bk_pop_out_t out;
    ck_assert_uint_eq(pop_wait(&rg, 1, 1000, &out), 1);
    rmq_record_t rec;
    first_record(&out, &rec);
    ck_assert_int_eq(memcmp(rec.body, "live", 4), 0);
    bk_pop_out_clear(&out);
    int64_t until = rmq_mono_ms() + 3000;
    while (st_store_max_offset(rg.st, "%DLQ%" GROUP, 0) < 1 && rmq_mono_ms() < until)
        wait_ms(20);
    ck_assert_int_eq(st_store_max_offset(rg.st, "%DLQ%" GROUP, 0), 1);
    ck_assert_int_eq(bk_pop_inflight(rg.pop), 1);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_tag_mismatch_finished_silently)
{
    rig_t rg;
    rig_open(&rg);
    put(&rg, 0, "b1", "tagB", 0);
    put(&rg, 0, "a1", "tagA", 0);
    bk_pop_out_t out;
    bk_pop_req_t req = pop_req(1000, "tagA", NULL);
    ck_assert_uint_eq(pop_until(&rg, &req, 1, &out), 1);
    ck_assert_int_eq(out.msgs[0].queue_offset, 1);
    bk_result_t r;
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[0].handle, &r), BK_OK);
    ck_assert_int_eq(bk_offsets_query(rg.offsets, TOPIC, GROUP, 0), 2);
    bk_pop_out_clear(&out);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_closed_session_redelivered)
{
    rig_t rg;
    rig_open(&rg);
    put(&rg, 0, "m1", "tagA", 0);
    core_fake_session_t fs;
    core_fake_session_init(&fs);
    bk_pop_out_t out;
    bk_pop_req_t req = pop_req(60000, "*", &fs.base);
    ck_assert_uint_eq(pop_until(&rg, &req, 1, &out), 1);
    bk_pop_out_clear(&out);
    bk_pop_session_closed(rg.pop, &fs.base);
    wait_ms(200);
    ck_assert_uint_eq(pop_wait(&rg, 1, 60000, &out), 1);
    ck_assert_int_eq(out.msgs[0].attempt, 2);
    bk_pop_out_clear(&out);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_long_polling)
{
    rig_t rg;
    rig_open(&rg);
    core_fake_session_t fs;
    core_fake_session_init(&fs);
    held_answer_t ha = {0}, gone = {0}, expired = {0};
    bk_pop_req_t req = {.group = GROUP, .topic = TOPIC, .max_msgs = 4, .invisible_ms = 60000, .expression = "*",
                        .poll_ms = 5000, .ss = &fs.base, .answer = on_answer, .ctx_free = on_ctx_free};
    bk_pop_out_t out;
    ck_assert_int_eq(bk_pop_run(rg.pop, &req, &ha, &out), 0);
    put(&rg, 1, "late", "tagA", 0);
    core_loop_until(&ha.answered, 3000);
    ck_assert_int_eq(ha.answered, 1);
    ck_assert_int_eq(ha.status, BK_OK);
    ck_assert_uint_eq(ha.n, 1);
    ck_assert_int_eq(ha.freed, 1);
    req.poll_ms = 100;
    ck_assert_int_eq(bk_pop_run(rg.pop, &req, &expired, &out), 0);
    core_loop_until(&expired.answered, 3000);
    ck_assert_uint_eq(expired.n, 0);
    req.poll_ms = 5000;
    ck_assert_int_eq(bk_pop_run(rg.pop, &req, &gone, &out), 0);
    bk_pop_session_closed(rg.pop, &fs.base);
    ck_assert_int_eq(gone.answered, 0);
    ck_assert_int_eq(gone.freed, 1);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_gone_requester_takes_nothing)
{
    rig_t rg;
    rig_open(&rg);
    core_fake_session_t fs;
    core_fake_session_init(&fs);
    held_answer_t cancelled = {0};
    bk_pop_req_t req = {.group = GROUP, .topic = TOPIC, .max_msgs = 4, .invisible_ms = 60000, .expression = "*",
                        .poll_ms = 5000, .ss = &fs.base, .answer = on_answer, .ctx_free = on_ctx_free,
                        .gone = on_gone};
    bk_pop_out_t out;
    ck_assert_int_eq(bk_pop_run(rg.pop, &req, &cancelled, &out), 0);
    cancelled.gone = 1;
    put(&rg, 1, "late", "tagA", 0);
    core_loop_until(&cancelled.freed, 3000);
    ck_assert_int_eq(cancelled.freed, 1);
    ck_assert_int_eq(cancelled.answered, 0);
    ck_assert_uint_eq(bk_pop_inflight(rg.pop), 0);
    ck_assert_uint_eq(pop_wait(&rg, 1, 60000, &out), 1);
    ck_assert_int_eq(out.msgs[0].attempt, 1);
    bk_pop_out_clear(&out);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_dead_letter)
{
    rig_t rg;
    rig_open(&rg);
    put(&rg, 0, "poison", "tagA", 0);
    bk_pop_out_t out;
    ck_assert_uint_eq(pop_wait(&rg, 1, 60000, &out), 1);
    bk_pop_ack_req_t req = {.group = GROUP, .topic = TOPIC, .handle = "1 2 3"};
    bk_result_t r;
    ck_assert_int_eq(bk_pop_dead_letter(rg.pop, &req, &r), BK_BAD_REQUEST);
    req.handle = out.msgs[0].handle;
    ck_assert_int_eq(bk_pop_dead_letter(rg.pop, &req, &r), BK_OK);
    int64_t until = rmq_mono_ms() + 3000;
    while (bk_pop_inflight(rg.pop) > 0 && rmq_mono_ms() < until)
        wait_ms(20);
    ck_assert_int_eq(st_store_max_offset(rg.st, "%DLQ%" GROUP, 0), 1);
    ck_assert_uint_eq(bk_pop_inflight(rg.pop), 0);
    ck_assert_int_eq(bk_offsets_query(rg.offsets, TOPIC, GROUP, 0), 1);
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[0].handle, &r), BK_BAD_REQUEST);
    bk_pop_out_clear(&out);
    rig_close(&rg);
}
END_TEST

/* A FIFO pop of up to 2 messages of queue 0 by attempt id. */
static bk_pop_req_t fifo_req(const char *attempt)
{
    bk_pop_req_t req = pop_req(300, "*", NULL);
    req.max_msgs = 2;
    req.order = 1;
    req.attempt_id = attempt;
    return req;
}

/* A FIFO pop (fifo_req); the caller clears out. */
static void pop_fifo(rig_t *rg, const char *attempt, bk_pop_out_t *out)
{
    bk_pop_req_t req = fifo_req(attempt);
    pop_with(rg, &req, out);
}

START_TEST(test_pop_fifo_blocks_replays_and_redelivers)
{
    rig_t rg;
    rig_open(&rg);
    put(&rg, 0, "f0", "tagA", 0);
    put(&rg, 0, "f1", "tagA", 0);
    put(&rg, 0, "f2", "tagA", 0);
    put(&rg, 1, "other", "tagA", 0);
    bk_pop_out_t out, again;
    bk_pop_req_t first = fifo_req("a1");
    ck_assert_uint_eq(pop_until(&rg, &first, 2, &out), 2);
    ck_assert_int_eq(out.msgs[0].queue_offset, 0);
    ck_assert_int_eq(out.msgs[1].queue_offset, 1);
    ck_assert_int_eq(out.msgs[0].attempt, 1);
    pop_fifo(&rg, "a2", &again);
    ck_assert_uint_eq(again.n, 0);
    bk_pop_out_clear(&again);
    pop_fifo(&rg, "a1", &again);
    ck_assert_uint_eq(again.n, 2);
    ck_assert_str_eq(again.msgs[0].handle, out.msgs[0].handle);
    ck_assert_str_eq(again.msgs[1].handle, out.msgs[1].handle);
    bk_pop_out_clear(&again);
    bk_result_t r;
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[0].handle, &r), BK_OK);
    pop_fifo(&rg, "a3", &again);
    ck_assert_uint_eq(again.n, 0);
    bk_pop_out_clear(&again);
    wait_ms(400);
    ck_assert_int_eq(bk_pop_inflight(rg.pop), 1);
    pop_fifo(&rg, "a4", &again);
    ck_assert_uint_eq(again.n, 1);
    ck_assert_int_eq(again.msgs[0].queue_offset, 1);
    ck_assert_int_eq(again.msgs[0].attempt, 2);
    ck_assert_int_eq(again.msgs[0].retry, 0);
    ck_assert_int_eq(ack(&rg, TOPIC, again.msgs[0].handle, &r), BK_OK);
    ck_assert_int_eq(bk_offsets_query(rg.offsets, TOPIC, GROUP, 0), 2);
    bk_pop_out_clear(&again);
    pop_fifo(&rg, "a5", &again);
    ck_assert_uint_eq(again.n, 1);
    ck_assert_int_eq(again.msgs[0].queue_offset, 2);
    ck_assert_int_eq(again.msgs[0].attempt, 1);
    bk_pop_out_clear(&again);
    bk_pop_out_clear(&out);
    ck_assert_int_eq(st_store_max_offset(rg.st, RETRY, 0), 0);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_restart_resumes_from_committed_offset)
{
    rig_t rg;
    rig_open(&rg);
    for (int i = 0; i < 3; i++)
        put(&rg, 0, i == 0 ? "m0" : i == 1 ? "m1" : "m2", "tagA", 0);
    bk_pop_out_t out;
    ck_assert_uint_eq(pop_wait(&rg, 3, 60000, &out), 3);
    bk_result_t r;
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[0].handle, &r), BK_OK);
    ck_assert_int_eq(ack(&rg, TOPIC, out.msgs[2].handle, &r), BK_OK);
    bk_pop_out_clear(&out);
    bk_pop_free(rg.pop);
    rg.pop = pop_new(&rg);
    ck_assert_uint_eq(pop_wait(&rg, 2, 60000, &out), 2);
    ck_assert_int_eq(out.msgs[0].queue_offset, 1);
    ck_assert_int_eq(out.msgs[1].queue_offset, 2);
    bk_pop_out_clear(&out);
    rig_close(&rg);
}
END_TEST

START_TEST(test_pop_handle_parse)
{
    bk_pop_handle_t h;
    const char *ok = "5 1700000000000 30000 0 1 broker-a 3 7";
    ck_assert_int_eq(bk_pop_handle_parse(ok, strlen(ok), &h), RMQ_OK);
    ck_assert_int_eq(h.pop_time, 1700000000000LL);
    ck_assert_int_eq(h.type, 1);
    ck_assert_str_eq(h.broker, "broker-a");
    ck_assert_int_eq(h.queue_id, 3);
    ck_assert_int_eq(h.queue_offset, 7);
    char buf[BK_POP_HANDLE_MAX];
    ck_assert_uint_eq(bk_pop_handle_format(&h, buf, sizeof buf), strlen(ok));
    ck_assert_str_eq(buf, ok);
    const char *proxy = "5 1700000000000 30000 0 0 broker-a 3 7 123456";
    ck_assert_int_eq(bk_pop_handle_parse(proxy, strlen(proxy), &h), RMQ_OK);
    static const char *const bad[] = {"", "5 1 2 0 0 b 3", "5 1 2 0 2 b 3 7", "5 1 2 0 0  3 7",
                                      "5 x 2 0 0 b 3 7", "5 1 2 0 0 b -3 7", "5 1 2 0 0 b 3 7 8 9",
                                      "5 1 2 0 0 b 3 99999999999999999999", "5 1 2 0 0 b\001 3 7"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(bk_pop_handle_parse(bad[i], strlen(bad[i]), &h) == RMQ_EINVAL, "accepted '%s'", bad[i]);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_pop");
    TCase *tc = core_tcase_new("pop");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_pop_invisible_then_redelivered_attempt_2);
    tcase_add_test(tc, test_pop_acked_not_redelivered);
    tcase_add_test(tc, test_pop_stale_and_expired_handles);
    tcase_add_test(tc, test_pop_change_invisible_delays_redelivery);
    tcase_add_test(tc, test_pop_max_attempts_go_to_dlq);
    tcase_add_test(tc, test_pop_tag_mismatch_finished_silently);
    tcase_add_test(tc, test_pop_closed_session_redelivered);
    tcase_add_test(tc, test_pop_long_polling);
    tcase_add_test(tc, test_pop_gone_requester_takes_nothing);
    tcase_add_test(tc, test_pop_dead_letter);
    tcase_add_test(tc, test_pop_fifo_blocks_replays_and_redelivers);
    tcase_add_test(tc, test_pop_restart_resumes_from_committed_offset);
    tcase_add_test(tc, test_pop_handle_parse);
    suite_add_tcase(s, tc);
    return core_suite_run(s);
}
