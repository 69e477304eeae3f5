/* test_core_send.c: the send waiting and back-pressure every front shares
 * (core/bk_send.c) through a fake front, over a real store: sends queued
 * in a front and sends waiting for the disk fill sendQueueCapacity
 * together, waitTimeMillsInSendQueue, an answer at once (no connection
 * held) or after the disk sync (the connection held meanwhile, the front's
 * reply address and a batch's ids kept), counted as stats; every message
 * stored with the broker's CLUSTER (core/bk_produce.c). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <stdio.h>

#include "bk_recall.h"
#include "bk_send.h"
#include "core_base.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define TOPIC "SendTopic"

/* The fake front: what it answered and how often it held and released. */
typedef struct fake_front {
    int answers, holds, releases, stored;
    void *conn;
    char to[16];
    char ids[256];
    char recall[RMQ_RECALL_HANDLE_MAX];
    int32_t queue_id;
    bk_append_out_t out;
} fake_front_t;

static fake_front_t ff;
static int conn_token;

static void fake_answer(void *arg, void *conn, const void *to, const bk_append_out_t *out, const char *ids,
                        const char *recall, int32_t queue_id)
{
    fake_front_t *f = arg;
    f->answers++;
    f->conn = conn;
    memcpy(f->to, to, sizeof(f->to));
    snprintf(f->ids, sizeof(f->ids), "%s", ids ? ids : out->put.msg_id);
    snprintf(f->recall, sizeof(f->recall), "%s", recall ? recall : "");
    f->queue_id = queue_id;
    f->out = *out;
}

static void fake_hold(void *conn)
{
    ck_assert_ptr_eq(conn, &conn_token);
    ff.holds++;
}

static void fake_release(void *conn)
{
    ck_assert_ptr_eq(conn, &conn_token);
    ff.releases++;
}

static void fake_stored(void *arg, const bk_topic_t *topic, rmq_msg_type_t type, int32_t count, size_t body_len)
{
    fake_front_t *f = arg;
    ck_assert_str_eq(topic->name, TOPIC);
    ck_assert_uint_eq(body_len, 10);
    f->stored += count;
}

static const bk_counts_t fake_counts = {.stored = fake_stored, .arg = &ff};

static const bk_send_front_t fake = {fake_answer, fake_hold, fake_release};

/* The core under test over the case's store, flushing as sync_flush says. */
typedef struct rig {
    bk_append_t *ap;
    bk_produce_t *p;
    bk_stats_t stats;
    bk_batch_t batch;
    bk_send_t *s;
    const char *props;               /* of every message rig_send sends (NULL: none) */
} rig_t;

/* cluster: brokerClusterName the core stamps (NULL: none). */
static void rig_open(rig_t *r, int sync_flush, size_t capacity, const char *cluster)
{
    core_base_t *cb = core_base();
    memset(r, 0, sizeof(*r));
    memset(&ff, 0, sizeof(ff));
    cb->env.cfg.flush_type = sync_flush ? ST_SYNC_FLUSH : ST_ASYNC_FLUSH;
    core_base_open(cb, 0);
    core_topic_add(cb->topics, TOPIC, 4);
    bk_append_config_t ac = {.store = cb->st, .sync_flush = sync_flush, .sync_flush_timeout_ms = 5000,
                             .permission = 6, .addr = "127.0.0.1:0"};
    ck_assert_ptr_nonnull(r->ap = bk_append_new(&ac));
    bk_produce_config_t pc = {.append = r->ap, .topics = cb->topics, .max_message_size = 4096,
                              .addr = "127.0.0.1:0", .cluster = cluster};
    ck_assert_ptr_nonnull(r->p = bk_produce_new(&pc));
    bk_send_config_t sc = {.produce = r->p, .store = cb->st, .stats = &r->stats, .capacity = capacity,
                           .wait_ms = 200, .counts = &fake_counts};
    ck_assert_ptr_nonnull(r->s = bk_send_new(&sc));
}

static void rig_close(rig_t *r)
{
    bk_send_free(r->s);
    bk_produce_free(r->p);
    core_base_close(core_base());
    bk_append_free(r->ap);
    bk_batch_free(&r->batch);
}

/* Stores n messages of 10 bytes (together) to queue 1 with reply address "to-1". */
static void rig_send(rig_t *r, size_t n)
{
    bk_produce_req_t req = {.cmd = "SEND", .topic = TOPIC, .producer_group = "pg", .default_topic = "TBW102",
                            .default_topic_queue_nums = 4, .queue_id = 1, .body_len = 10};
    bk_produce_target_t tgt;
    bk_result_t res;
    ck_assert_msg(bk_produce_check(r->p, &req, &tgt, &res), "%s", res.why);
    ck_assert_int_eq(bk_batch_reserve(&r->batch, n, 0), RMQ_OK);
    for (size_t i = 0; i < n; i++)
        r->batch.msgs[i] = (st_msg_t){.body = "0123456789", .body_len = 10 / n,
                                      .properties = r->props ? r->props : "",
                                      .properties_len = r->props ? strlen(r->props) : 0,
                                      .born_timestamp = rmq_wall_ms()};
    char to[16] = "to-1";
    bk_send_call_t call = {.front = &fake, .front_arg = &ff, .conn = &conn_token, .to = to, .to_len = sizeof(to),
                           .batch = &r->batch, .body_len = 10};
    bk_send_store(r->s, &call, &tgt, r->batch.msgs, n);
    memset(to, 0, sizeof(to));       /* the front's copy is gone; the core kept its own */
}

START_TEST(test_back_pressure)
{
    rig_t r;
    rig_open(&r, 0, 2, NULL);
    ck_assert_int_eq(bk_send_full(r.s), 0);
    bk_send_queued(r.s);
    bk_send_queued(r.s);
    ck_assert_uint_eq(bk_send_waiting(r.s), 2);
    ck_assert_int_eq(bk_send_full(r.s), 1);
    ck_assert_int_eq(r.stats.total[BK_STAT_BUSY], 1);
    bk_send_dequeued(r.s);
    ck_assert_int_eq(bk_send_full(r.s), 0);
    ck_assert_int_eq(bk_send_too_late(r.s, 200), 0);
    ck_assert_int_eq(bk_send_too_late(r.s, 201), 1);
    ck_assert_int_eq(r.stats.total[BK_STAT_BUSY], 2);
    bk_send_dequeued(r.s);
    rig_close(&r);
}
END_TEST

START_TEST(test_answer_at_once)
{
    rig_t r;
    rig_open(&r, 0, 10, NULL);
    rig_send(&r, 2);
    ck_assert_int_eq(ff.answers, 1);
    ck_assert_int_eq(ff.out.r.status, BK_OK);
    ck_assert_str_eq(ff.to, "to-1");
    ck_assert_int_eq(ff.queue_id, 1);
    ck_assert_ptr_nonnull(strchr(ff.ids, ','));
    ck_assert_int_eq(ff.holds + ff.releases, 0);
    ck_assert_uint_eq(bk_send_waiting(r.s), 0);
    ck_assert_int_eq(r.stats.total[BK_STAT_PUT], 2);
    ck_assert_int_eq(ff.stored, 2);
    rig_close(&r);
}
END_TEST

START_TEST(test_answer_after_the_disk)
{
    rig_t r;
    rig_open(&r, 1, 1, NULL);
    rig_send(&r, 2);
    ck_assert_int_eq(ff.answers, 0);
    ck_assert_int_eq(ff.holds, 1);
    ck_assert_uint_eq(bk_send_waiting(r.s), 1);
    ck_assert_int_eq(bk_send_full(r.s), 1);   /* a waiting send fills the capacity as a queued one */
    core_loop_until(&ff.answers, 5000);
    ck_assert_int_eq(ff.answers, 1);
    ck_assert_int_eq(ff.out.r.status, BK_OK);
    ck_assert_ptr_eq(ff.conn, &conn_token);
    ck_assert_str_eq(ff.to, "to-1");
    ck_assert_ptr_nonnull(strchr(ff.ids, ','));
    ck_assert_int_eq(ff.releases, 1);
    ck_assert_uint_eq(bk_send_waiting(r.s), 0);
    ck_assert_int_eq(r.stats.total[BK_STAT_PUT], 2);
    rig_close(&r);
}
END_TEST

/* The properties of the record at phys into out (cap bytes, NUL-terminated). */
static void stored_props(int64_t phys, char *out, size_t cap)
{
    struct evbuffer *buf = evbuffer_new();
    rmq_record_t rec;
    ck_assert_int_eq(st_store_read_record(core_base()->st, phys, buf), RMQ_OK);
    size_t len = evbuffer_get_length(buf);
    ck_assert_int_eq(rmq_record_decode(evbuffer_pullup(buf, -1), len, 1, &rec), RMQ_OK);
    snprintf(out, cap, "%.*s", (int)rec.properties_len, rec.properties);
    evbuffer_free(buf);
}

/* Every message of a client's send is stored with CLUSTER, the broker's
 * brokerClusterName, as RocketMQ's broker stamps it (a responder's
 * createReplyMessage reads it), then MSG_REGION and TRACE_ON as RocketMQ
 * 5's broker stamps them (a 5.x client's consumer traces only a message
 * with a region); ones the client set are replaced, the other pairs kept
 * as they were, in their order. */
#define STAMPS_C1                                                                                                   \
    RMQ_PROP_CLUSTER "\x01" "C1\x02" RMQ_PROP_MSG_REGION "\x01" RMQ_REGION_DEFAULT "\x02" RMQ_PROP_TRACE_ON "\x01" "true"

START_TEST(test_cluster_stamped)
{
    rig_t r;
    char props[256];
    rig_open(&r, 0, 10, "C1");
    r.props = "KEYS\x01k\x02" RMQ_PROP_CLUSTER "\x01" "forged\x02TAGS\x01t\x02" RMQ_PROP_MSG_REGION "\x01" "forged\x02"
              RMQ_PROP_TRACE_ON "\x01" "false\x02";
    rig_send(&r, 2);
    ck_assert_int_eq(ff.out.r.status, BK_OK);
    int64_t size = (int64_t)st_msg_record_size(core_base()->st, &r.batch.msgs[0]);
    for (int i = 0; i < 2; i++) {
        stored_props(ff.out.put.phys_offset + i * size, props, sizeof props);
        ck_assert_str_eq(props, "KEYS\x01k\x02TAGS\x01t\x02" STAMPS_C1);
    }
    r.props = NULL;
    rig_send(&r, 1);
    stored_props(ff.out.put.phys_offset, props, sizeof props);
    ck_assert_str_eq(props, STAMPS_C1);
    /* reserved first, a piece without \x01 (no pair: dropped) between kept
     * pairs, an empty value */
    r.props = RMQ_PROP_CLUSTER "\x01x\x02" "A\x01" "a\x02" "B\x01" "b\x02junk\x02" "C\x01\x02" "TAGS\x01t";
    rig_send(&r, 1);
    stored_props(ff.out.put.phys_offset, props, sizeof props);
    ck_assert_str_eq(props, "A\x01" "a\x02" "B\x01" "b\x02" "C\x01\x02" "TAGS\x01t\x02" STAMPS_C1);
    rig_close(&r);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_send");
    TCase *tc = core_tcase_new("send");
    tcase_add_test(tc, test_back_pressure);
    tcase_add_test(tc, test_answer_at_once);
    tcase_add_test(tc, test_answer_after_the_disk);
    tcase_add_test(tc, test_cluster_stamped);
    suite_add_tcase(s, tc);
    return core_suite_run(s);
}
