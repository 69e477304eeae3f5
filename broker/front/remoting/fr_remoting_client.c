/* fr_remoting_client.c: what a RocketMQ consumer asks besides pulls:
 * HEART_BEAT (34, HeartbeatData JSON body), UNREGISTER_CLIENT (35),
 * GET_CONSUMER_LIST_BY_GROUP (38, ConsumerListBody), QUERY_CONSUMER_OFFSET
 * (14: offset, or 22 QUERY_NOT_FOUND), UPDATE_CONSUMER_OFFSET (15; a
 * negative offset is ignored, as ali-ons sends -1), GET_MAX_OFFSET (30),
 * GET_MIN_OFFSET (31), SEARCH_OFFSET_BY_TIMESTAMP (29),
 * GET_EARLIEST_MSG_STORETIME (32), all four over the core's queue offsets
 * (core/bk_offset_ops.c), CHECK_CLIENT_CONFIG (46). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_offset_ops.h"
#include "fr_remoting.h"
#include "fr_remoting_wire.h"
#include "fr_session.h"
#include "rmq_message.h"

#define CODE_SEARCH_OFFSET_BY_TIMESTAMP 29
#define CODE_GET_MAX_OFFSET 30
#define CODE_GET_EARLIEST_MSG_STORETIME 32

/* Answers SUCCESS with one integer extField name (offset, timestamp). */
static void reply_number(rmq_conn_t *conn, const rmq_remoting_request_t *req, char *name, int64_t value)
{
    char v[24];
    snprintf(v, sizeof(v), "%" PRId64, value);
    rmq_remoting_field_t f = {name, v};
    rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .fields = &f, .n_fields = 1};
    rmq_remoting_reply(conn, req, &rep);
}

static void reply_ok(rmq_conn_t *conn, const rmq_remoting_request_t *req)
{
    rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS};
    rmq_remoting_reply(conn, req, &rep);
}

/* A topic or group name field that follows the naming rule; NULL after answering. */
static const char *name_field(rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *key)
{
    const char *v = fr_rm_str(conn, req, key, NULL, 1, NULL), *why;
    if (v && !rmq_name_is_valid(v, strlen(v), &why)) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: %s '%.200s' %s", req->code, key,
                            v, why);
        return NULL;
    }
    return v;
}

void fr_rm_handle_heartbeat(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    fr_rm_heartbeat_t hb;
    char why[256];
    bk_result_t r;
    bk_caller_t who;
    if (fr_rm_caller(rm, conn, req, &who) != 0)
        return;
    rmq_err_t rc = fr_rm_heartbeat_parse(req->body, req->body_len, &hb, why, sizeof(why));
    if (rc != RMQ_OK) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "HEART_BEAT: %s", why);
        return;
    }
    hb.hb.language = rmq_remoting_language_name(req->language);
    hb.hb.version = req->version;
    bk_session_t *ss = fr_rm_session_of(rm, conn, req);
    if (!ss)
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "HEART_BEAT: out of memory");
    else if (fr_rm_core_heartbeat(rm->fe, ss, &who, &hb.hb, &r) != 0)
        fr_rm_reply_result(conn, req, &r);
    else
        reply_ok(conn, req);
    fr_rm_heartbeat_clear(&hb);
}

/* CHECK_CLIENT_CONFIG, as RocketMQ's ClientManageProcessor.checkClientConfig:
 * SUCCESS without a subscription or for a TAG one; otherwise the answer a
 * pull filtering by it would get (SYSTEM_ERROR without enablePropertyFilter,
 * SUBSCRIPTION_PARSE_FAILED naming the error's position). */
/* Answers CHECK_CLIENT_CONFIG after its body was read (rc, cc, why). */
static void check_client_answer(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req,
                                rmq_err_t rc, const fr_rm_check_client_t *cc, const char *why)
{
    bk_result_t r;
    if (rc != RMQ_OK)
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "CHECK_CLIENT_CONFIG: %s", why);
    else if (cc->has_sub && !bk_consume_check_subscription(rm->fe->consume, cc->expr, rmq_expr_type_of(cc->type), &r))
        fr_rm_reply_result(conn, req, &r);
    else
        reply_ok(conn, req);
}

void fr_rm_handle_check_client(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    fr_rm_check_client_t cc = {0};
    char why[256] = "";
    rmq_err_t rc = req->body_len ? fr_rm_check_client_parse(req->body, req->body_len, &cc, why, sizeof(why)) : RMQ_OK;
    if (fr_rm_allowed(rm, conn, req, NULL, cc.group ? cc.group : ""))
        check_client_answer(rm, conn, req, rc, &cc, why);
    rmq_json_free(cc.doc);
}

/* UNREGISTER_CLIENT: a consumer of this connection leaves its group (a
 * producer-only client has nothing here). */
void fr_rm_handle_unregister(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    const char *client = fr_rm_str(conn, req, "clientID", NULL, 1, NULL);
    const char *consumer = fr_rm_str(conn, req, "consumerGroup", NULL, 0, "");
    const char *producer = fr_rm_str(conn, req, "producerGroup", NULL, 0, "");
    if (!client || !fr_rm_allowed(rm, conn, req, NULL, consumer))
        return;
    bk_session_t *ss = fr_session_find(conn);
    if (ss && (consumer[0] || !producer[0]))
        fr_rm_core_unregister(rm->fe, ss, client, consumer);
    reply_ok(conn, req);
}

void fr_rm_handle_consumer_list(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    const char *group = fr_rm_str(conn, req, "consumerGroup", NULL, 1, NULL);
    if (!group || !fr_rm_allowed(rm, conn, req, NULL, group))
        return;
    size_t n = fr_rm_core_consumer_ids(rm->fe, group, NULL, 0);
    if (n == 0) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "no consumer for this group, %.200s", group);
        return;
    }
    const char **ids = calloc(n, sizeof(*ids));
    struct evbuffer *body = ids ? evbuffer_new() : NULL;
    if (body) {
        fr_rm_core_consumer_ids(rm->fe, group, ids, n);
        fr_rm_consumer_list_encode(body, ids, n);
    }
    size_t len = body ? evbuffer_get_length(body) : 0;
    const void *data = body ? evbuffer_pullup(body, -1) : NULL;
    if (data) {
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .body = data, .body_len = len};
        rmq_remoting_reply(conn, req, &rep);
    } else {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "out of memory");
    }
    if (body)
        evbuffer_free(body);
    free(ids);
}

void fr_rm_handle_offset_query(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int64_t qid;
    const char *group = fr_rm_str(conn, req, "consumerGroup", NULL, 1, NULL);
    const char *topic = group ? fr_rm_str(conn, req, "topic", NULL, 1, NULL) : NULL;
    if (!topic || fr_rm_int(conn, req, "queueId", NULL, 1, 0, INT32_MAX, 0, &qid) != 0 ||
        !fr_rm_allowed(rm, conn, req, topic, group))
        return;
    int64_t off = fr_rm_core_offset_query(rm->fe, topic, group, (int32_t)qid);
    /* RocketMQ's broker: a group new to a queue whose head is still in
     * memory starts at 0 (so CONSUME_FROM_LAST_OFFSET consumers, ali-ons'
     * default, read a young queue from its start, and no client logs an
     * error); otherwise QUERY_NOT_FOUND lets the client choose. */
    if (off < 0 && fr_rm_core_queue_head_in_memory(rm->fe, topic, (int32_t)qid))
        off = 0;
    if (off < 0) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_QUERY_NOT_FOUND,
                            "no offset stored for group %.200s on %.200s queue %" PRId64, group, topic, qid);
        return;
    }
    reply_number(conn, req, "offset", off);
}

void fr_rm_handle_offset_update(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int64_t qid, off;
    const char *group = name_field(conn, req, "consumerGroup");
    const char *topic = group ? name_field(conn, req, "topic") : NULL;
    if (!topic || fr_rm_int(conn, req, "queueId", NULL, 1, 0, INT32_MAX, 0, &qid) != 0 ||
        fr_rm_int(conn, req, "commitOffset", NULL, 1, INT64_MIN, INT64_MAX, 0, &off) != 0 ||
        !fr_rm_allowed(rm, conn, req, topic, group))
        return;
    bk_result_t r;
    if (off >= 0 && fr_rm_core_offset_commit(rm->fe, topic, group, (int32_t)qid, off, &r) != BK_OK) {
        fr_rm_reply_result(conn, req, &r);
        return;
    }
    reply_ok(conn, req);
}

/* The core's queue question a remoting queue-offset code asks. */
static bk_queue_query_t queue_query_of(int code)
{
    switch (code) {
    case CODE_GET_MAX_OFFSET: return BK_QUEUE_MAX_OFFSET;
    case CODE_SEARCH_OFFSET_BY_TIMESTAMP: return BK_QUEUE_OFFSET_BY_TIME;
    case CODE_GET_EARLIEST_MSG_STORETIME: return BK_QUEUE_EARLIEST_TIME;
    default: return BK_QUEUE_MIN_OFFSET;
    }
}

/* GET_MAX_OFFSET, GET_MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP,
 * GET_EARLIEST_MSG_STORETIME (-1 for a queue with no message). */
void fr_rm_handle_queue_offset(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int64_t qid;
    bk_queue_offset_req_t q = {.what = queue_query_of(req->code)};
    q.topic = fr_rm_str(conn, req, "topic", NULL, 1, NULL);
    if (!q.topic || fr_rm_int(conn, req, "queueId", NULL, 1, 0, INT32_MAX, 0, &qid) != 0)
        return;
    if (q.what == BK_QUEUE_OFFSET_BY_TIME &&
        fr_rm_int(conn, req, "timestamp", NULL, 1, INT64_MIN, INT64_MAX, 0, &q.timestamp) != 0)
        return;
    if (!fr_rm_allowed(rm, conn, req, q.topic, NULL))
        return;
    q.queue_id = (int32_t)qid;
    bk_queue_offset_out_t out;
    bk_offset_queue(rm->fe->offset_ops, &q, &out);
    if (q.what == BK_QUEUE_EARLIEST_TIME)
        reply_number(conn, req, "timestamp", out.timestamp);    /* GetEarliestMsgStoretimeResponseHeader */
    else
        reply_number(conn, req, "offset", out.offset);
}
