/* fr_remoting_pull.c: PULL_MESSAGE (11) and LITE_PULL_MESSAGE (361, the
 * 5.x DefaultLitePullConsumer's: the same request, header and answers, as
 * RocketMQ's PullMessageProcessor serves both) over the core's pull
 * (core/bk_consume.c), whose hold parks a pull with the suspend flag that
 * finds nothing until data arrives or its suspendTimeoutMillis passes.
 * Answers: 0 FOUND with the messages in MessageDecoder's V1 layout, 19
 * PULL_NOT_FOUND, 20 PULL_RETRY_IMMEDIATELY, 21 PULL_OFFSET_MOVED, each with
 * PullMessageResponseHeader (suggestWhichBrokerId, nextBeginOffset,
 * minOffset, maxOffset). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_remoting.h"
#include "fr_remoting_wire.h"
#include "rmq_log.h"

/* PullSysFlag bits. */
#define PULL_FLAG_COMMIT_OFFSET 1
#define PULL_FLAG_SUSPEND 2
#define PULL_FLAG_SUBSCRIPTION 4

static int pull_code(bk_pull_status_t st)
{
    switch (st) {
    case BK_PULL_FOUND: return RMQ_REMOTING_SUCCESS;
    case BK_PULL_NOT_FOUND: return 19;
    case BK_PULL_OFFSET_MOVED: return 21;
    default: return 20;
    }
}

/* bk_pull_front_t answer: encodes the core's result of req. */
static void pull_answer(void *arg, void *c, const void *to_p, const bk_pull_req_t *req, const bk_pull_out_t *out)
{
    rmq_conn_t *conn = c;
    fr_rm_to_t to;
    memcpy(&to, to_p, sizeof(to));
    rmq_remoting_reply_t rep = {.code = fr_rm_status_code(out->r.status), .remark = out->r.why};
    char sug[24], next[24], min[24], max[24];
    uint8_t *msgs = NULL;
    if (out->r.status != BK_OK) {
        fr_rm_reply_to(conn, &to, &rep);
        return;
    }
    snprintf(sug, sizeof(sug), "%" PRId64, out->suggest_broker_id);
    snprintf(next, sizeof(next), "%" PRId64, out->next_begin_offset);
    snprintf(min, sizeof(min), "%" PRId64, out->min_offset);
    snprintf(max, sizeof(max), "%" PRId64, out->max_offset);
    rmq_remoting_field_t f[] = {
        {"suggestWhichBrokerId", sug},
        {"nextBeginOffset", next},
        {"minOffset", min},
        {"maxOffset", max},
    };
    rep.code = pull_code(out->status);
    rep.fields = f;
    rep.n_fields = sizeof(f) / sizeof(f[0]);
    if (out->status == BK_PULL_FOUND && out->body) {
        size_t len;
        if (fr_rm_records_encode(out->body, &msgs, &len) != RMQ_OK) {
            LOG_ERROR_RL("remoting pull of %s queue %d: cannot encode %zu bytes of records", req->topic,
                         req->queue_id, len);
            rep = (rmq_remoting_reply_t){.code = RMQ_REMOTING_SYSTEM_ERROR, .remark = "cannot encode the messages"};
            fr_rm_reply_to(conn, &to, &rep);
            return;
        }
        rep.body = msgs;
        rep.body_len = len;
    }
    fr_rm_reply_to(conn, &to, &rep);
    free(msgs);
}

static const bk_pull_front_t pull_front = {pull_answer, rmq_conn_ref_any, rmq_conn_unref_any};
_Static_assert(sizeof(fr_rm_to_t) <= BK_PULL_TO_MAX, "a held pull keeps the reply address");

/* The expression to filter by and its type: the request's own
 * (subscription flag, expressionType), else the group's from its
 * heartbeats, else every tag. */
static const char *pull_expression(fr_remoting_t *rm, const rmq_remoting_request_t *req, int64_t sys_flag,
                                   const char *group, const char *topic, rmq_expr_type_t *type)
{
    const char *own = rmq_remoting_field(req, "subscription");
    *type = rmq_expr_type_of(rmq_remoting_field(req, "expressionType"));
    if ((sys_flag & PULL_FLAG_SUBSCRIPTION) && own && own[0])
        return own;
    const char *expr = fr_rm_core_subscription(rm->fe, group, topic, type);
    if (expr)
        return expr;
    *type = RMQ_EXPR_TAG;
    return "*";
}

void fr_rm_handle_pull(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int64_t qid, qoff, max_nums, sys_flag, commit_off, suspend_ms;
    const char *group = fr_rm_str(conn, req, "consumerGroup", NULL, 1, NULL);
    const char *topic = group ? fr_rm_str(conn, req, "topic", NULL, 1, NULL) : NULL;
    if (!topic || fr_rm_int(conn, req, "queueId", NULL, 1, 0, INT32_MAX, 0, &qid) != 0 ||
        fr_rm_int(conn, req, "queueOffset", NULL, 1, 0, INT64_MAX, 0, &qoff) != 0 ||
        fr_rm_int(conn, req, "maxMsgNums", NULL, 1, 1, INT32_MAX, 0, &max_nums) != 0 ||
        fr_rm_int(conn, req, "sysFlag", NULL, 1, 0, INT32_MAX, 0, &sys_flag) != 0 ||
        fr_rm_int(conn, req, "commitOffset", NULL, 0, INT64_MIN, INT64_MAX, -1, &commit_off) != 0 ||
        fr_rm_int(conn, req, "suspendTimeoutMillis", NULL, 0, 0, INT32_MAX, 0, &suspend_ms) != 0 ||
        !fr_rm_allowed(rm, conn, req, topic, group))
        return;
    const char *type = rmq_remoting_field(req, "expressionType");
    if (rmq_expr_type_of(type) == RMQ_EXPR_UNKNOWN) {
        rmq_remoting_replyf(conn, req, 23, "PULL_MESSAGE: expressionType %.32s is not supported (TAG or SQL92)", type);
        return;
    }
    rmq_expr_type_t expr_type;
    const char *expr = pull_expression(rm, req, sys_flag, group, topic, &expr_type);
    bk_pull_req_t pr = {
        .group = group,
        .topic = topic,
        .queue_id = (int32_t)qid,
        .queue_offset = qoff,
        .max_msg_nums = (int32_t)max_nums,
        .subscription = expr,
        .expr_type = expr_type,
        .commit = (sys_flag & PULL_FLAG_COMMIT_OFFSET) && commit_off >= 0,
        .commit_offset = commit_off,
        .suspend = (sys_flag & PULL_FLAG_SUSPEND) != 0,
        .suspend_timeout_ms = suspend_ms,
    };
    fr_rm_to_t to = fr_rm_to(req);
    bk_pull_call_t call = {.front = &pull_front, .front_arg = rm, .conn = conn, .to = &to, .to_len = sizeof(to)};
    bk_consume_pull(rm->fe->consume, &pr, pr.suspend ? fr_rm_session_of(rm, conn, req) : NULL, &call);
}
