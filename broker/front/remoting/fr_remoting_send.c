/* fr_remoting_send.c: SEND_MESSAGE (10), SEND_MESSAGE_V2 (310, the same
 * fields under the names a..m), SEND_BATCH_MESSAGE (320, RocketMQ's batch
 * body) over the core's send (core/bk_produce.c), answered with
 * SendMessageResponseHeader (msgId: the offset msgId of store host and
 * commit-log offset, comma-joined for a batch; queueId; queueOffset;
 * VIEW_MESSAGE_BY_ID resolves such an id, fr_remoting_query.c; a timer
 * message's recallHandle), and RECALL_MESSAGE (370) over the core's recall
 * (core/bk_recall.c), whose delete marker is stored like a send. Waiting
 * for the disk or a slave and the SYSTEM_BUSY of a full sendQueueCapacity
 * are the core's (core/bk_send.c), shared with the native front. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "bk_send.h"
#include "fr_remoting.h"
#include "fr_remoting_wire.h"
#include "rmq_fmt.h"
#include "rmq_message.h"

#define CODE_SEND_BATCH_MESSAGE 320

void fr_rm_send_free(fr_remoting_t *rm)
{
    bk_batch_free(&rm->batch);
}

/* ---- answers ------------------------------------------------------------- */

/* The core's answer callback: the append path's outcome, with the
 * response header whenever the log holds the messages (RocketMQ's clients
 * read it for FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT and
 * SLAVE_NOT_AVAILABLE too). */
static void send_answer(void *arg, void *conn, const void *to_, const bk_append_out_t *out, const char *ids,
                        const char *recall, int32_t queue_id)
{
    fr_rm_to_t to;
    memcpy(&to, to_, sizeof(to));
    char qid[RMQ_FMT_I64_LEN], qoff[RMQ_FMT_I64_LEN];
    rmq_fmt_i64(qid, queue_id);
    rmq_fmt_i64(qoff, out->put.queue_offset);
    rmq_remoting_field_t f[] = {
        {"msgId", (char *)(ids ? ids : out->put.msg_id)},
        {"queueId", qid},
        {"queueOffset", qoff},
        {RMQ_PROP_MSG_REGION, RMQ_REGION_DEFAULT},
        {RMQ_PROP_TRACE_ON, "true"},
        {"recallHandle", (char *)recall},  /* last: left out when NULL */
    };
    rmq_remoting_reply_t rep = {.code = fr_rm_status_code(out->r.status), .remark = out->r.why};
    if (out->stored) {
        rep.fields = f;
        rep.n_fields = sizeof(f) / sizeof(f[0]) - (recall ? 0 : 1);
        rep.fields_plain = 1;          /* names, numbers and hex ids */
    }
    fr_rm_reply_to(conn, &to, &rep);
}

static const bk_send_front_t send_front = {send_answer, rmq_conn_ref_any, rmq_conn_unref_any};

/* ---- decoding ------------------------------------------------------------ */

/* Reads the header fields: V1 names, or V2's one-letter aliases (looked
 * up first when the request has them); -1 after answering. */
static int send_header(rmq_conn_t *conn, const rmq_remoting_request_t *req, fr_rm_send_hdr_t *h)
{
    int v2 = rmq_remoting_field(req, "b") != NULL;
#define SEND_KEY(v1, v2name) (v2 ? (v2name) : (v1)), (v2 ? (v1) : (v2name))
    if (!(h->topic = fr_rm_str(conn, req, SEND_KEY("topic", "b"), 1, NULL)))
        return -1;
    h->producer_group = fr_rm_str(conn, req, SEND_KEY("producerGroup", "a"), 0, "");
    h->default_topic = fr_rm_str(conn, req, SEND_KEY("defaultTopic", "c"), 0, "TBW102");
    h->properties = fr_rm_str(conn, req, SEND_KEY("properties", "i"), 0, "");
    if (fr_rm_int(conn, req, SEND_KEY("queueId", "e"), 1, -1, INT32_MAX, 0, &h->queue_id) != 0 ||
        fr_rm_int(conn, req, SEND_KEY("defaultTopicQueueNums", "d"), 0, 0, INT32_MAX, 4, &h->default_queue_nums) != 0 ||
        fr_rm_int(conn, req, SEND_KEY("sysFlag", "f"), 0, INT32_MIN, INT32_MAX, 0, &h->sys_flag) != 0 ||
        fr_rm_int(conn, req, SEND_KEY("bornTimestamp", "g"), 0, INT64_MIN, INT64_MAX, 0, &h->born_ts) != 0 ||
        fr_rm_int(conn, req, SEND_KEY("flag", "h"), 0, INT32_MIN, INT32_MAX, 0, &h->flag) != 0 ||
        fr_rm_int(conn, req, SEND_KEY("reconsumeTimes", "j"), 0, 0, INT32_MAX, 0, &h->reconsume_times) != 0)
        return -1;
#undef SEND_KEY
    if (strlen(h->properties) > RMQ_PROPS_MAX) {
        rmq_remoting_replyf(conn, req, 13, "properties of %zu bytes, over %u", strlen(h->properties),
                            RMQ_PROPS_MAX);
        return -1;
    }
    return 0;
}

/* The born host of conn's messages: the peer's IPv4 or IPv6 address. */
typedef struct born {
    uint32_t ip;
    uint16_t port;
    const uint8_t *ip6;
} born_t;

static void born_host(const rmq_conn_t *conn, born_t *b)
{
    rmq_conn_peer_ipv4(conn, &b->ip, &b->port);
    b->ip6 = rmq_conn_peer_ipv6(conn, &b->port);
}

static int64_t tag_code(const char *props, size_t len)
{
    size_t vlen = 0;
    const char *tag = rmq_props_get(props, len, RMQ_PROP_TAGS, &vlen);
    return tag ? st_tag_hash(tag, vlen) : 0;
}

/* Fills the fields every message of a send shares. The client's IPv6 host
 * bits are the store's to set (st_msg_sys_flag), from the connection. */
static void msg_common(const fr_rm_send_hdr_t *h, const born_t *b, st_msg_t *m)
{
    memset(m, 0, sizeof(*m));
    m->sys_flag = (int32_t)h->sys_flag;
    m->born_timestamp = h->born_ts;
    m->born_ip = b->ip;
    m->born_port = b->port;
    m->born_ip6 = b->ip6;
    m->reconsume_times = (int32_t)h->reconsume_times;
}

/* The batch's own properties, which every message of it gets after its
 * own, into pb without a UNIQ_KEY: the 5.x client gives the batch as a
 * whole an id, which RocketMQ's store gives no message (each has its own). */
static rmq_err_t batch_outer_props(const char *props, rmq_props_buf_t *pb)
{
    size_t pos = 0, len = strlen(props), klen = strlen(RMQ_PROP_UNIQ_KEY);
    rmq_prop_t p;

    if (rmq_props_buf_reserve(pb, len) != RMQ_OK)
        return RMQ_ENOMEM;
    pb->data[0] = '\0';
    while (rmq_props_next(props, len, &pos, &p))
        if ((p.name_len != klen || memcmp(p.name, RMQ_PROP_UNIQ_KEY, klen) != 0) &&
            rmq_props_buf_append(pb, p.name, p.name_len, p.value, p.value_len) != RMQ_OK)
            return RMQ_ENOMEM;
    return RMQ_OK;
}

/* Splits a batch body into rm->batch.msgs; the count, or -1 after answering. */
static ssize_t batch_split(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req,
                           const fr_rm_send_hdr_t *h, const born_t *b)
{
    size_t n = 0, props_total = 0, off = 0, vlen;
    rmq_props_buf_t outer = { 0 };
    const char *extra_props = h->properties;
    if (rmq_props_get(h->properties, strlen(h->properties), RMQ_PROP_UNIQ_KEY, &vlen) != NULL) {
        if (batch_outer_props(h->properties, &outer) != RMQ_OK) {
            rmq_props_buf_free(&outer);
            rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "out of memory for a batch's properties");
            return -1;
        }
        extra_props = outer.data;
    }
    size_t extra = strlen(extra_props);
    rmq_batch_entry_t e;
    size_t used;
    const char *why = "empty batch body";
    while (off < req->body_len) {
        if (fr_rm_batch_decode(req->body + off, req->body_len - off, &e, &used, &why) != RMQ_OK)
            break;
        off += used;
        n++;
        props_total += e.properties_len + 1 + extra;
    }
    if (off < req->body_len || n == 0) {
        rmq_props_buf_free(&outer);
        rmq_remoting_replyf(conn, req, 13, "SEND_BATCH_MESSAGE: message %zu at byte %zu of the body: %s", n, off,
                            why);
        return -1;
    }
    if (bk_batch_reserve(&rm->batch, n, props_total) != RMQ_OK) {
        rmq_props_buf_free(&outer);
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "out of memory for a batch of %zu", n);
        return -1;
    }
    off = 0;
    for (size_t i = 0; i < n; i++) {
        fr_rm_batch_decode(req->body + off, req->body_len - off, &e, &used, &why);
        off += used;
        st_msg_t *m = &rm->batch.msgs[i];
        msg_common(h, b, m);
        m->flag = e.flag;
        m->body = e.body;
        m->body_len = e.body_len;
        bk_batch_props(&rm->batch, m, e.properties, e.properties_len, extra_props, extra);
        m->tag_code = tag_code(m->properties, m->properties_len);
    }
    rmq_props_buf_free(&outer);
    return (ssize_t)n;
}

void fr_rm_send_message(rmq_conn_t *conn, const rmq_remoting_request_t *req, const fr_rm_send_hdr_t *h, st_msg_t *m)
{
    born_t b;
    born_host(conn, &b);
    msg_common(h, &b, m);
    m->flag = (int32_t)h->flag;
    m->body = req->body_len ? (const void *)req->body : "";
    m->body_len = req->body_len;
    m->properties = h->properties;
    m->properties_len = strlen(h->properties);
    m->tag_code = tag_code(m->properties, m->properties_len);
}

/* ---- handlers ------------------------------------------------------------ */

/* Stores msgs[0..n) of a checked send through the core, which answers
 * now or once durable. */
static void send_store(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req,
                       const bk_produce_target_t *tgt, st_msg_t *msgs, size_t n)
{
    fr_rm_to_t to = fr_rm_to(req);
    bk_send_call_t call = {
        .front = &send_front,
        .conn = conn,
        .to = &to,
        .to_len = sizeof(to),
        .batch = &rm->batch,
        .body_len = req->body_len,
    };
    bk_send_store(rm->fe->send, &call, tgt, msgs, n);
}

/* SYSTEM_BUSY while the sends queued or waiting for the append path, on
 * every front, fill sendQueueCapacity (core/bk_send.c), with RocketMQ's
 * remark for a full send queue. 1 after answering. */
static int send_busy(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req)
{
    bk_send_t *s = rm->fe->send;
    if (!bk_send_full(s))
        return 0;
    rmq_remoting_replyf(conn, req, fr_rm_status_code(BK_BUSY),
                        "[OVERLOAD]system busy, start flow control for a while: %zu sends queued or waiting for "
                        "the disk (sendQueueCapacity=%zu)", bk_send_waiting(s), bk_send_capacity(s));
    return 1;
}

int fr_rm_send_begin(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *cmd,
                     int reply, fr_rm_send_hdr_t *h, bk_produce_target_t *tgt)
{
    bk_result_t r;
    bk_caller_t who;
    if (send_busy(rm, conn, req) || send_header(conn, req, h) != 0 || fr_rm_caller(rm, conn, req, &who) != 0)
        return 0;
    bk_produce_req_t pr = {
        .cmd = cmd,
        .topic = h->topic,
        .producer_group = h->producer_group,
        .default_topic = h->default_topic,
        .default_topic_queue_nums = (int32_t)h->default_queue_nums,
        .queue_id = (int32_t)h->queue_id,
        .body_len = req->body_len,
        .who = &who,
        .reply = reply,
    };
    if (bk_produce_check(rm->fe->produce, &pr, tgt, &r))
        return 1;
    fr_rm_reply_result(conn, req, &r);
    return 0;
}

void fr_rm_handle_send(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int batch = req->code == CODE_SEND_BATCH_MESSAGE;
    fr_rm_send_hdr_t h;
    bk_produce_target_t tgt;
    born_t b;
    if (!fr_rm_send_begin(rm, conn, req, batch ? "SEND_BATCH_MESSAGE" : "SEND_MESSAGE", 0, &h, &tgt))
        return;
    if (batch) {
        born_host(conn, &b);
        ssize_t n = batch_split(rm, conn, req, &h, &b);
        if (n > 0)
            send_store(rm, conn, req, &tgt, rm->batch.msgs, (size_t)n);
        return;
    }
    st_msg_t m;
    fr_rm_send_message(conn, req, &h, &m);
    send_store(rm, conn, req, &tgt, &m, 1);
}

/* ---- recall -------------------------------------------------------------- */

/* The core's answer to a recall: RocketMQ's SUCCESS (FLUSH_DISK_TIMEOUT,
 * FLUSH_SLAVE_TIMEOUT and SLAVE_NOT_AVAILABLE included, as its
 * RecallMessageProcessor has them) with msgId, the recalled message's id;
 * any other outcome is its SYSTEM_ERROR. */
static void recall_answer(void *arg, void *conn, const void *to_, const bk_append_out_t *out, const char *ids,
                          const char *recall, int32_t queue_id)
{
    fr_rm_to_t to;
    (void)arg;
    (void)recall;
    (void)queue_id;
    memcpy(&to, to_, sizeof(to));
    rmq_remoting_field_t f[] = {{"msgId", (char *)ids}, {RMQ_PROP_MSG_REGION, RMQ_REGION_DEFAULT}};
    rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SYSTEM_ERROR, .remark = out->r.why};
    if (out->stored) {
        rep.code = RMQ_REMOTING_SUCCESS;
        rep.remark = NULL;
        rep.fields = f;
        rep.n_fields = sizeof(f) / sizeof(f[0]);
    }
    fr_rm_reply_to(conn, &to, &rep);
}

static const bk_send_front_t recall_front = {recall_answer, rmq_conn_ref_any, rmq_conn_unref_any};

void fr_rm_handle_recall(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_caller_t who;
    bk_result_t r;
    bk_recall_marker_t mk;
    const char *topic, *handle;
    if (send_busy(rm, conn, req) || !(topic = fr_rm_str(conn, req, "topic", NULL, 1, NULL)) ||
        !(handle = fr_rm_str(conn, req, "recallHandle", NULL, 1, NULL)) || fr_rm_caller(rm, conn, req, &who) != 0)
        return;
    bk_recall_req_t rr = {.topic = topic, .handle = handle, .who = &who};
    if (!bk_recall_check(rm->fe->recall, &rr, &mk, &r)) {
        fr_rm_reply_result(conn, req, &r);
        return;
    }
    fr_rm_to_t to = fr_rm_to(req);
    bk_send_call_t call = {
        .front = &recall_front,
        .conn = conn,
        .to = &to,
        .to_len = sizeof(to),
        .body_len = mk.msg.body_len,
        .ids = mk.msg_id,
    };
    bk_send_store(rm->fe->send, &call, &mk.tgt, &mk.msg, 1);
}
