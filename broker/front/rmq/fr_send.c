/* fr_send.c: the rmq front-end of SEND_MESSAGE and SEND_BATCH_MESSAGE:
 * decodes a request (a batch split into messages), has the core check and
 * store it (core/bk_produce.c through core/bk_send.c) and encodes its
 * result. Requests enter a bounded ring (sendQueueCapacity, shared with
 * sends waiting for the disk on every front: core/bk_send.c) and are
 * processed by a drain event in arrival order, at most SEND_DRAIN_MAX per
 * pass so pulls and timers interleave. A request that finds the queue full,
 * or that waited longer than waitTimeMillsInSendQueue, is answered
 * SYSTEM_BUSY: nothing hangs and nothing is dropped silently. Scratch
 * buffers for batch bodies are reused across requests, so the steady-state
 * path does not allocate per message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_batch.h"
#include "bk_front.h"
#include "bk_ha.h"
#include "fr_perm.h"
#include "fr_routes.h"
#include "fr_status.h"
#include "bk_metrics.h"
#include "bk_send.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define SEND_DRAIN_MAX 512

typedef struct send_item {
    rmq_conn_t *conn;              /* referenced while queued */
    rmq_frame_t frame;             /* taken from the server */
    int64_t enq_us;
} send_item_t;

struct fr_send {
    bk_front_t *fe;
    bk_send_t *core;               /* waiting and back-pressure (fe->send) */
    send_item_t *ring;
    size_t cap, head, len;
    struct event *drain;
    bk_batch_t batch;              /* batch scratch: messages, merged properties, ids */
    uint8_t *body;                 /* a request body that was not contiguous */
    size_t body_cap;
};

/* The request's parsed fields shared by the single and batch paths. */
typedef struct send_ctx {
    rmq_conn_t *conn;
    rmq_reply_to_t to;
    const Rmq__SendMessageRequest *hdr;
    bk_caller_t who;                 /* who sends (fr_perm.h) */
    bk_produce_target_t tgt;       /* topic and queue, as the core checked them */
    uint32_t born_ip;
    uint16_t born_port;
    const uint8_t *born_ip6;         /* an IPv6 peer (rmq_conn_peer_ipv6), else NULL */
    const uint8_t *body;
    size_t body_len;
} send_ctx_t;

/* ---- replies ---------------------------------------------------------- */

/* Answers a stored send: ids, queue, first queue offset, count and (in
 * controller mode) the epoch the first message was stored in. */
static void send_reply_ok(rmq_conn_t *conn, rmq_reply_to_t to, const char *ids, int32_t queue_id,
                          const st_put_result_t *put, int64_t epoch)
{
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__SendMessageResponse sr = RMQ__SEND_MESSAGE_RESPONSE__INIT;
    sr.msg_id = (char *)ids;
    sr.queue_id = queue_id;
    sr.queue_offset = put->queue_offset;
    sr.count = put->count;
    sr.master_epoch = epoch;
    resp.header_case = RMQ__COMMAND__HEADER_SEND_RESP;
    resp.send_resp = &sr;
    rmq_conn_reply(conn, to, &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
}

/* The core's answer callback: the send's outcome, now or once durable
 * as configured. */
static void send_answer(void *arg, void *conn_, const void *to_, const bk_append_out_t *out, const char *ids,
                        const char *recall, int32_t queue_id)
{
    bk_front_t *fe = arg;
    (void)recall;                    /* RocketMQ's recall is served on its fronts only */
    rmq_conn_t *conn = conn_;
    rmq_reply_to_t to;
    memcpy(&to, to_, sizeof(to));
    if (out->repl_end_us)
        bk_metrics_sync_wait(fe->metrics, out->repl_end_us - to.start_us, out->r.status == BK_OK);
    if (out->r.status == BK_OK)
        send_reply_ok(conn, to, ids ? ids : out->put.msg_id, queue_id, &out->put,
                      bk_ha_epoch_at(bk_node_ha(fe->node), out->put.phys_offset));
    else
        fr_reply_result(conn, to, &out->r, NULL);
}

static const bk_send_front_t send_front = {send_answer, rmq_conn_ref_any, rmq_conn_unref_any};

/* ---- checks ------------------------------------------------------------- */

/* Decodes the request into the core's neutral send and has it checked;
 * on failure answers and returns -1. */
static int send_check(fr_send_t *s, send_ctx_t *c, int batch)
{
    const Rmq__SendMessageRequest *h = c->hdr;
    bk_produce_req_t req = {
        .cmd = batch ? "SEND_BATCH_MESSAGE" : "SEND_MESSAGE",
        .topic = h->topic,
        .producer_group = h->producer_group,
        .default_topic = h->default_topic,
        .default_topic_queue_nums = h->default_topic_queue_nums,
        .queue_id = h->queue_id,
        .body_len = c->body_len,
        .who = &c->who,
    };
    bk_result_t r;
    if (!bk_produce_check(s->fe->produce, &req, &c->tgt, &r))
        return fr_reply_result(c->conn, c->to, &r, NULL), -1;
    rmq_conn_peer_ipv4(c->conn, &c->born_ip, &c->born_port);
    c->born_ip6 = rmq_conn_peer_ipv6(c->conn, &c->born_port);
    return 0;
}

/* Tag code of a properties string (0 without TAGS). */
static int64_t props_tag_code(const char *props, size_t len)
{
    size_t vlen = 0;
    const char *tag = props ? rmq_props_get(props, len, RMQ_PROP_TAGS, &vlen) : NULL;
    return tag ? st_tag_hash(tag, vlen) : 0;
}

static void msg_common(const send_ctx_t *c, st_msg_t *m)
{
    memset(m, 0, sizeof(*m));
    m->sys_flag = c->hdr->sys_flag;
    m->born_timestamp = c->hdr->born_timestamp;
    m->born_ip = c->born_ip;
    m->born_port = c->born_port;
    m->born_ip6 = c->born_ip6;
    m->reconsume_times = c->hdr->reconsume_times;
}


/* Stores msgs (n > 1: a batch in s->batch.msgs) through the core, which
 * answers now or once the append is durable as configured. */
static void send_store(fr_send_t *s, send_ctx_t *c, st_msg_t *msgs, size_t n)
{
    bk_send_call_t call = {
        .front = &send_front,
        .front_arg = s->fe,
        .conn = c->conn,
        .to = &c->to,
        .to_len = sizeof(c->to),
        .batch = &s->batch,
        .body_len = c->body_len,
    };
    bk_send_store(s->core, &call, &c->tgt, msgs, n);
}

/* ---- single message --------------------------------------------------- */

static void send_single(fr_send_t *s, send_ctx_t *c)
{
    st_msg_t m;
    msg_common(c, &m);
    m.flag = c->hdr->flag;
    m.body = c->body;
    m.body_len = c->body_len;
    m.properties = c->hdr->properties;
    m.properties_len = strlen(c->hdr->properties);
    m.tag_code = props_tag_code(m.properties, m.properties_len);
    send_store(s, c, &m, 1);
}

/* ---- batch -------------------------------------------------------------- */

/* Counts the entries of a batch body and the merged properties size; -1 if malformed. */
static int batch_scan(const send_ctx_t *c, size_t extra_props, size_t *n, size_t *props_total)
{
    size_t off = 0;
    *n = *props_total = 0;
    while (off < c->body_len) {
        rmq_batch_entry_t e;
        size_t used = 0;
        if (rmq_batch_decode(c->body + off, c->body_len - off, &e, &used) != RMQ_OK || used == 0)
            return -1;
        off += used;
        (*n)++;
        *props_total += e.properties_len + 1 + extra_props;
    }
    return *n ? 0 : -1;
}

static void send_batch(fr_send_t *s, send_ctx_t *c)
{
    size_t n, props_total, extra_len = strlen(c->hdr->properties);
    if (batch_scan(c, extra_len, &n, &props_total) != 0) {
        rmq_conn_replyf(c->conn, c->to, RMQ__STATUS__MESSAGE_ILLEGAL,
                        "SEND_BATCH_MESSAGE: malformed or empty batch body (%zu bytes)", c->body_len);
        return;
    }
    if (bk_batch_reserve(&s->batch, n, props_total) != RMQ_OK) {
        rmq_conn_replyf(c->conn, c->to, RMQ__STATUS__SYSTEM_ERROR, "out of memory for a batch of %zu", n);
        return;
    }
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        rmq_batch_entry_t e;
        size_t used = 0;
        rmq_batch_decode(c->body + off, c->body_len - off, &e, &used);
        off += used;
        st_msg_t *m = &s->batch.msgs[i];
        msg_common(c, m);
        m->flag = e.flag;
        m->body = e.body;
        m->body_len = e.body_len;
        bk_batch_props(&s->batch, m, e.properties, e.properties_len, c->hdr->properties, extra_len);
        m->tag_code = props_tag_code(m->properties, m->properties_len);
    }
    send_store(s, c, s->batch.msgs, n);
}

/* ---- queue and dispatch ------------------------------------------------- */

/* Points c->body at the request body, contiguous (copied into scratch only
 * if the frame arrived in pieces). -1 when out of memory. */
static int send_body(fr_send_t *s, send_ctx_t *c, struct evbuffer *body)
{
    size_t len = evbuffer_get_length(body);
    c->body_len = len;
    if (len == 0) {
        c->body = (const uint8_t *)"";
        return 0;
    }
    if (evbuffer_get_contiguous_space(body) >= len) {
        c->body = evbuffer_pullup(body, (ssize_t)len);
        return c->body ? 0 : -1;
    }
    if (bk_scratch_reserve((void **)&s->body, &s->body_cap, len) != 0)
        return -1;
    evbuffer_copyout(body, s->body, len);
    c->body = s->body;
    return 0;
}

/* Processes one queued request. */
static void send_process(fr_send_t *s, send_item_t *it, int64_t now_us)
{
    const Rmq__Command *cmd = it->frame.cmd;
    int batch = cmd->code == RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE;
    send_ctx_t c = {.conn = it->conn, .to = rmq_reply_to(cmd)};
    int64_t waited_ms = (now_us - it->enq_us) / 1000;
    bk_metrics_send_queue_wait(s->fe->metrics, now_us - it->enq_us);
    if (!rmq_conn_is_open(it->conn))
        return;
    if (bk_send_too_late(s->core, waited_ms)) {
        rmq_conn_replyf(c.conn, c.to, RMQ__STATUS__SYSTEM_BUSY,
                        "broker busy: request waited %lld ms in the send queue (waitTimeMillsInSendQueue=%lld)",
                        (long long)waited_ms, (long long)bk_send_wait_ms(s->core));
        return;
    }
    if (!fr_need_header(c.conn, &it->frame, RMQ__COMMAND__HEADER_SEND, "SendMessageRequest (send)") ||
        fr_caller(s->fe, c.conn, &it->frame, &c.who) != 0)
        return;
    c.hdr = cmd->send;
    if (send_body(s, &c, it->frame.body) != 0) {
        rmq_conn_replyf(c.conn, c.to, RMQ__STATUS__SYSTEM_ERROR, "out of memory reading the body");
        return;
    }
    if (send_check(s, &c, batch || c.hdr->batch) != 0)
        return;
    if (batch || c.hdr->batch)
        send_batch(s, &c);
    else
        send_single(s, &c);
}

/* Drain event: processes up to SEND_DRAIN_MAX queued requests, then yields. */
static void send_drain(evutil_socket_t fd, short what, void *arg)
{
    fr_send_t *s = arg;
    int64_t now_us = rmq_mono_us();
    for (int i = 0; i < SEND_DRAIN_MAX && s->len > 0; i++) {
        send_item_t *it = &s->ring[s->head];
        s->head = (s->head + 1) % s->cap;
        s->len--;
        bk_send_dequeued(s->core);
        send_process(s, it, now_us);
        rmq_conn_unref(it->conn);
        rmq_frame_clear(&it->frame);
    }
    if (s->len > 0)
        event_active(s->drain, EV_TIMEOUT, 0);
}

/* Handler for both send codes: queue the request or answer SYSTEM_BUSY. */
void fr_send(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    fr_send_t *s = arg;
    if (bk_send_full(s->core)) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_BUSY,
                        "broker busy: %zu sends queued or waiting for the disk (sendQueueCapacity=%zu)",
                        bk_send_waiting(s->core), bk_send_capacity(s->core));
        return;
    }
    send_item_t *it = &s->ring[(s->head + s->len) % s->cap];
    it->conn = conn;
    rmq_conn_ref(conn);
    it->frame = *req;
    req->cmd = NULL;
    req->body = NULL;
    it->enq_us = rmq_mono_us();
    bk_send_queued(s->core);
    if (s->len++ == 0)
        event_active(s->drain, EV_TIMEOUT, 0);
}

fr_send_t *fr_send_new(bk_front_t *fe)
{
    fr_send_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->fe = fe;
    s->core = fe->send;
    s->cap = bk_send_capacity(fe->send);
    s->ring = calloc(s->cap, sizeof(*s->ring));
    s->drain = event_new(fe->node->base, -1, 0, send_drain, s);
    if (!s->ring || !s->drain) {
        fr_send_free(s);
        return NULL;
    }
    return s;
}

void fr_send_free(fr_send_t *s)
{
    if (!s)
        return;
    while (s->len > 0) {
        send_item_t *it = &s->ring[s->head];
        s->head = (s->head + 1) % s->cap;
        s->len--;
        bk_send_dequeued(s->core);
        rmq_conn_unref(it->conn);
        rmq_frame_clear(&it->frame);
    }
    if (s->drain)
        event_free(s->drain);
    free(s->ring);
    bk_batch_free(&s->batch);
    free(s->body);
    free(s);
}
