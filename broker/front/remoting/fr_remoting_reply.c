/* fr_remoting_reply.c: SEND_REPLY_MESSAGE (324) and SEND_REPLY_MESSAGE_V2
 * (325), a responder's reply to a request, as RocketMQ's
 * ReplyMessageProcessor serves them: the send's header (fr_remoting_send.c)
 * checked by the core's send (BK_OP_SEND_REPLY, usually to
 * <cluster>_REPLY_TOPIC), the reply pushed to its requester as
 * PUSH_REPLY_MESSAGE_TO_CLIENT (326) on the connection of the producer
 * whose client id is the reply's REPLY_TO_CLIENT (core/bk_tx.c, through the
 * session's ask), and stored as a send is (core/bk_send.c). The responder
 * is answered once both are done: SUCCESS when the requester took the
 * reply, else SYSTEM_ERROR saying why (no such client, it refused, it did
 * not answer in time); the stored reply's id either way. This file owns a
 * reply between its request and its answer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_send.h"
#include "fr_remoting.h"
#include "rmq_fmt.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_time.h"

/* A reply between its request and its answer: referenced by the handler,
 * the push in flight and the store waiting; answered and freed with the last. */
typedef struct reply_call {
    int refs;
    rmq_conn_t *conn;                /* the responder's (referenced) */
    fr_rm_to_t to;
    int pushed;                      /* the requester took the reply */
    char push_why[320];              /* why not */
    int stored;
    char msg_id[RMQ_MSG_ID_MAX + 1];
    int32_t queue_id;
    int64_t queue_offset;
} reply_call_t;

static void reply_ref(void *arg)
{
    ((reply_call_t *)arg)->refs++;
}

/* The answer of a finished reply: the push's outcome decides the code,
 * as RocketMQ's handlePushReplyResult; the store's the header. */
static void reply_answer(reply_call_t *rc)
{
    char qid[RMQ_FMT_I64_LEN], qoff[RMQ_FMT_I64_LEN];
    rmq_fmt_i64(qid, rc->queue_id);
    rmq_fmt_i64(qoff, rc->stored ? rc->queue_offset : 0);
    rmq_remoting_field_t f[] = {
        {"msgId", rc->stored ? rc->msg_id : "0"},
        {"queueId", qid},
        {"queueOffset", qoff},
    };
    rmq_remoting_reply_t rep = {.code = rc->pushed ? RMQ_REMOTING_SUCCESS : RMQ_REMOTING_SYSTEM_ERROR,
                                .remark = rc->pushed ? NULL : rc->push_why};
    if (rc->pushed || rc->stored) {
        rep.fields = f;
        rep.n_fields = sizeof(f) / sizeof(f[0]);
        rep.fields_plain = 1;
    }
    fr_rm_reply_to(rc->conn, &rc->to, &rep);
}

/* Drops one reference; the last answers the responder and frees rc. */
static void reply_unref(void *arg)
{
    reply_call_t *rc = arg;
    if (--rc->refs > 0)
        return;
    reply_answer(rc);
    rmq_conn_unref(rc->conn);
    free(rc);
}

/* bk_client_answer_fn of the push: whether the requester took the reply. */
static void reply_pushed(void *arg, const bk_client_answer_t *ans)
{
    reply_call_t *rc = arg;
    rc->pushed = ans->ok;
    if (!ans->ok) {
        snprintf(rc->push_why, sizeof rc->push_why, "push reply message fail: %s", ans->why);
        LOG_WARN_RL("remoting: %s", rc->push_why);
    }
    reply_unref(rc);
}

/* The core's answer callback of the store (conn is the reply_call_t). */
static void reply_stored(void *arg, void *conn, const void *to, const bk_append_out_t *out, const char *ids,
                         const char *recall, int32_t queue_id)
{
    reply_call_t *rc = conn;
    (void)arg;
    (void)to;
    (void)ids;
    (void)recall;
    rc->stored = out->stored;
    rc->queue_id = queue_id;
    if (out->stored) {
        snprintf(rc->msg_id, sizeof rc->msg_id, "%s", out->put.msg_id);
        rc->queue_offset = out->put.queue_offset;
    } else {
        LOG_WARN_RL("remoting: a reply to %s was not stored: %s", rmq_conn_peer(rc->conn), out->r.why);
    }
}

static const bk_send_front_t reply_front = {reply_stored, reply_ref, reply_unref};

/* Pushes the reply of h and body to its requester, REPLY_TO_CLIENT of its
 * properties (with PUSH_REPLY_TIME added); rc referenced while it is out. */
static void reply_push(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req,
                       const fr_rm_send_hdr_t *h, reply_call_t *rc)
{
    size_t plen = strlen(h->properties), vlen = 0;
    const char *to = rmq_props_get(h->properties, plen, RMQ_PROP_REPLY_TO_CLIENT, &vlen);
    char client[RMQ_TOPIC_MAX + 1], now[RMQ_FMT_I64_LEN];
    rmq_props_buf_t pb = {0};
    bk_result_t r;
    if (!to || vlen == 0 || vlen >= sizeof client) {
        snprintf(rc->push_why, sizeof rc->push_why, "reply message properties[" RMQ_PROP_REPLY_TO_CLIENT "] is %s",
                 to && vlen ? "too long" : "null");
        return;
    }
    snprintf(client, sizeof client, "%.*s", (int)vlen, to);
    rmq_fmt_i64(now, rmq_wall_ms());
    bk_reply_push_t rp = {
        .producer_group = h->producer_group, .topic = h->topic, .default_topic = h->default_topic,
        .default_topic_queue_nums = (int32_t)h->default_queue_nums, .queue_id = (int32_t)h->queue_id,
        .sys_flag = (int32_t)h->sys_flag, .flag = (int32_t)h->flag, .reconsume_times = (int32_t)h->reconsume_times,
        .born_timestamp = h->born_ts, .store_timestamp = rmq_wall_ms(), .born_host = rmq_conn_peer(conn),
        .store_host = rm->fe->node->addr, .body = req->body, .body_len = req->body_len,
    };
    bk_client_ask_t q = {.kind = BK_ASK_PUSH_REPLY, .client_id = client, .reply = &rp,
                         .timeout_ms = FR_RM_ASK_TIMEOUT_MS};
    if (rmq_props_buf_reserve(&pb, plen + sizeof(RMQ_PROP_PUSH_REPLY_TIME) + sizeof now + 2) != RMQ_OK) {
        snprintf(rc->push_why, sizeof rc->push_why, "push reply message fail: out of memory");
        return;
    }
    while (plen && h->properties[plen - 1] == '\x02')
        plen--;                      /* the Java client ends each pair with one */
    memcpy(pb.data, h->properties, plen);
    pb.data[plen] = '\0';
    pb.len = plen;
    rmq_props_buf_put(&pb, RMQ_PROP_PUSH_REPLY_TIME, now);
    rp.properties = pb.data;
    reply_ref(rc);
    if (bk_tx_ask_producer(rm->fe->tx, &q, reply_pushed, rc, &r) != BK_OK) {
        snprintf(rc->push_why, sizeof rc->push_why, "%s", r.why);
        LOG_WARN_RL("remoting: a reply from %s: %s", rmq_conn_peer(conn), r.why);
        rc->refs--;
    }
    rmq_props_buf_free(&pb);
}

void fr_rm_handle_reply(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    fr_rm_send_hdr_t h;
    bk_produce_target_t tgt;
    if (!fr_rm_send_begin(rm, conn, req, "SEND_REPLY_MESSAGE", 1, &h, &tgt))
        return;
    reply_call_t *rc = calloc(1, sizeof(*rc));
    if (!rc) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "SEND_REPLY_MESSAGE: out of memory");
        return;
    }
    rc->refs = 1;
    rc->conn = conn;
    rmq_conn_ref(conn);
    rc->to = fr_rm_to(req);
    rc->queue_id = tgt.queue_id;
    reply_push(rm, conn, req, &h, rc);
    st_msg_t m;
    fr_rm_send_message(conn, req, &h, &m);
    bk_send_call_t call = {.front = &reply_front, .conn = rc, .to = &rc->to, .to_len = sizeof(rc->to),
                           .batch = &rm->batch, .body_len = req->body_len};
    bk_send_store(rm->fe->send, &call, &tgt, &m, 1);
    reply_unref(rc);
}
