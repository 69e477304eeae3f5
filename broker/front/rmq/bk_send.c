/* bk_send.c: the rmq front-end of SEND_MESSAGE and SEND_BATCH_MESSAGE:
 * decodes a request (a batch split into messages), has the core check and
 * store it (core/bk_produce.c) and encodes its result. Requests enter a bounded
 * ring (sendQueueCapacity, shared with sends waiting for the disk) and are
 * processed by a drain event in arrival order, at most SEND_DRAIN_MAX per
 * pass so pulls and timers interleave. A request that finds the queue full,
 * or that waited longer than waitTimeMillsInSendQueue, is answered
 * SYSTEM_BUSY: nothing hangs and nothing is dropped silently. Messages are
 * stored through the one append path (core/bk_append.c), which waits for
 * the disk (SYNC_FLUSH) and a slave (SYNC_MASTER); meanwhile a pooled
 * waiter holds the connection and its reply address. Scratch buffers for batch
 * bodies are reused across requests, so the steady-state path does not
 * allocate per message. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_batch.h"
#include "bk_broker.h"
#include "bk_ha.h"
#include "fr_perm.h"
#include "fr_routes.h"
#include "fr_status.h"
#include "bk_metrics.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define SEND_DRAIN_MAX 512

typedef struct send_item {
    rmq_conn_t *conn;              /* referenced while queued */
    rmq_frame_t frame;             /* taken from the server */
    int64_t enq_us;
} send_item_t;

/* A send whose answer waits for the append path (SYNC_FLUSH, SYNC_MASTER):
 * holds the connection and its reply address until the append ends. */
typedef struct send_waiter {
    struct send_waiter *prev, *next;
    bk_send_t *s;
    rmq_conn_t *conn;              /* referenced while waiting */
    rmq_reply_to_t to;
    int32_t queue_id;
    char *ids;                     /* batch: heap comma-joined ids, else NULL */
} send_waiter_t;

struct bk_send {
    bk_broker_t *bk;
    send_item_t *ring;
    size_t cap, head, len;
    struct event *drain;
    send_waiter_t *waiting;        /* sends waiting for the append path */
    send_waiter_t *spare;          /* reusable waiters (singly linked by next) */
    size_t n_waiting;
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

size_t bk_send_waiting(const bk_send_t *s)
{
    return s->len + s->n_waiting;
}

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

/* ---- waiting sends ------------------------------------------------------ */

static send_waiter_t *waiter_get(bk_send_t *s)
{
    send_waiter_t *w = s->spare;
    if (w)
        s->spare = w->next;
    else if (!(w = malloc(sizeof(*w))))
        return NULL;
    memset(w, 0, sizeof(*w));
    w->s = s;
    w->next = s->waiting;
    if (s->waiting)
        s->waiting->prev = w;
    s->waiting = w;
    s->n_waiting++;
    return w;
}

/* Unlinks w, drops its connection and returns it to the spare list. */
static void waiter_put(bk_send_t *s, send_waiter_t *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        s->waiting = w->next;
    if (w->next)
        w->next->prev = w->prev;
    s->n_waiting--;
    if (w->conn)
        rmq_conn_unref(w->conn);
    free(w->ids);
    w->next = s->spare;
    s->spare = w;
}

/* Answers a send with the append path's outcome. */
static void send_answer(bk_send_t *s, rmq_conn_t *conn, rmq_reply_to_t to, const bk_append_out_t *out,
                        const char *ids, int32_t queue_id)
{
    if (out->repl_end_us)
        bk_metrics_sync_wait(s->bk->metrics, out->repl_end_us - to.start_us, out->r.status == BK_OK);
    if (out->r.status == BK_OK)
        send_reply_ok(conn, to, ids ? ids : out->put.msg_id, queue_id, &out->put,
                      bk_ha_epoch_at(s->bk->ha, out->put.phys_offset));
    else
        fr_reply_result(conn, to, &out->r, NULL);
}

/* Append callback (loop thread): the send is durable as configured, or failed. */
static void send_appended(const bk_append_out_t *out, void *arg)
{
    send_waiter_t *w = arg;
    send_answer(w->s, w->conn, w->to, out, w->ids, w->queue_id);
    waiter_put(w->s, w);
}

/* ---- checks ------------------------------------------------------------- */

/* Decodes the request into the core's neutral send and has it checked;
 * on failure answers and returns -1. */
static int send_check(bk_send_t *s, send_ctx_t *c, int batch)
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
    if (!bk_produce_check(s->bk->produce, &req, &c->tgt, &r))
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


/* Stores msgs (n > 1: a batch in s->batch.msgs) through the append path and
 * answers now, or once the append is durable as configured. */
static void send_store(bk_send_t *s, send_ctx_t *c, st_msg_t *msgs, size_t n)
{
    bk_broker_t *bk = s->bk;
    bk_append_out_t out;
    const char *ids = NULL;
    send_waiter_t *w = waiter_get(s);
    if (!w) {
        rmq_conn_replyf(c->conn, c->to, RMQ__STATUS__SYSTEM_ERROR, "out of memory waiting for the send");
        return;
    }
    int done = bk_produce_store(bk->produce, &c->tgt, msgs, n, &out, send_appended, w);
    if (out.stored) {
        bk_stats_add(&bk->stats, BK_STAT_PUT, out.put.count);
        bk_metrics_messages_in(bk->metrics, c->tgt.topic->name, (uint64_t)out.put.count, c->body_len);
        if (n > 1)
            ids = bk_batch_ids(&s->batch, s->bk->store, out.put.phys_offset, n);
    }
    if (done) {
        send_answer(s, c->conn, c->to, &out, ids, c->tgt.queue_id);
        waiter_put(s, w);
        return;
    }
    rmq_conn_ref(c->conn);
    w->conn = c->conn;
    w->to = c->to;
    w->queue_id = c->tgt.queue_id;
    if (ids && !(w->ids = strdup(ids)))
        LOG_ERROR_RL("send: out of memory keeping the ids of a batch of %zu; its answer names the first", n);
}

/* ---- single message --------------------------------------------------- */

static void send_single(bk_send_t *s, send_ctx_t *c)
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

static void send_batch(bk_send_t *s, send_ctx_t *c)
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
static int send_body(bk_send_t *s, send_ctx_t *c, struct evbuffer *body)
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
static void send_process(bk_send_t *s, send_item_t *it, int64_t now_us)
{
    const Rmq__Command *cmd = it->frame.cmd;
    int batch = cmd->code == RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE;
    send_ctx_t c = {.conn = it->conn, .to = rmq_reply_to(cmd)};
    int64_t waited_ms = (now_us - it->enq_us) / 1000;
    bk_metrics_send_queue_wait(s->bk->metrics, now_us - it->enq_us);
    if (!rmq_conn_is_open(it->conn))
        return;
    if (waited_ms > s->bk->cfg->wait_time_mills_in_send_queue) {
        bk_stats_add(&s->bk->stats, BK_STAT_BUSY, 1);
        rmq_conn_replyf(c.conn, c.to, RMQ__STATUS__SYSTEM_BUSY,
                        "broker busy: request waited %lld ms in the send queue (waitTimeMillsInSendQueue=%lld)",
                        (long long)waited_ms, (long long)s->bk->cfg->wait_time_mills_in_send_queue);
        return;
    }
    if (!bk_need_header(c.conn, &it->frame, RMQ__COMMAND__HEADER_SEND, "SendMessageRequest (send)") ||
        fr_caller(s->bk, c.conn, &it->frame, &c.who) != 0)
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
    bk_send_t *s = arg;
    int64_t now_us = rmq_mono_us();
    for (int i = 0; i < SEND_DRAIN_MAX && s->len > 0; i++) {
        send_item_t *it = &s->ring[s->head];
        s->head = (s->head + 1) % s->cap;
        s->len--;
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
    bk_send_t *s = ((bk_broker_t *)arg)->send;
    if (bk_send_waiting(s) >= s->cap) {
        bk_stats_add(&s->bk->stats, BK_STAT_BUSY, 1);
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_BUSY,
                        "broker busy: %zu sends queued or waiting for the disk (sendQueueCapacity=%zu)",
                        bk_send_waiting(s), s->cap);
        return;
    }
    send_item_t *it = &s->ring[(s->head + s->len) % s->cap];
    it->conn = conn;
    rmq_conn_ref(conn);
    it->frame = *req;
    req->cmd = NULL;
    req->body = NULL;
    it->enq_us = rmq_mono_us();
    if (s->len++ == 0)
        event_active(s->drain, EV_TIMEOUT, 0);
}

bk_send_t *bk_send_new(bk_broker_t *bk)
{
    bk_send_t *s = calloc(1, sizeof(*s));
    if (!s)
        return NULL;
    s->bk = bk;
    s->cap = (size_t)bk->cfg->send_queue_capacity;
    s->ring = calloc(s->cap, sizeof(*s->ring));
    s->drain = event_new(bk->base, -1, 0, send_drain, s);
    if (!s->ring || !s->drain) {
        bk_send_free(s);
        return NULL;
    }
    return s;
}

void bk_send_free(bk_send_t *s)
{
    if (!s)
        return;
    while (s->len > 0) {
        send_item_t *it = &s->ring[s->head];
        s->head = (s->head + 1) % s->cap;
        s->len--;
        rmq_conn_unref(it->conn);
        rmq_frame_clear(&it->frame);
    }
    while (s->waiting)
        waiter_put(s, s->waiting);
    while (s->spare) {
        send_waiter_t *w = s->spare;
        s->spare = w->next;
        free(w);
    }
    if (s->drain)
        event_free(s->drain);
    free(s->ring);
    bk_batch_free(&s->batch);
    free(s->body);
    free(s);
}
