/* fr_pull.c: the rmq front-end of PULL_MESSAGE: decodes a request into
 * the core's neutral pull (core/bk_consume.c: checks, filter, commit
 * offset, store read, long polling), and encodes its result: the neutral
 * pull status as the wire status, the records as the body, moved into the
 * reply without copying. */
#include <stdlib.h>
#include <string.h>

#include "bk_front.h"
#include "bk_consume.h"
#include "fr_routes.h"
#include "fr_perm.h"
#include "fr_session.h"
#include "fr_status.h"
#include "rmq_log.h"

/* The subscription expression of the pull: its own, else the group's from heartbeats, else "*". */
static const char *pull_expression(const bk_front_t *fe, const Rmq__PullMessageRequest *h)
{
    if ((h->sys_flag & RMQ__PULL_FLAG__PULL_SUBSCRIPTION) || h->subscription[0])
        return h->subscription;
    const char *expr = bk_clients_subscription(fe->clients, h->consumer_group, h->topic, NULL);
    return expr ? expr : "*";
}

/* The wire status of a neutral pull status. */
static int pull_wire_status(bk_pull_status_t st)
{
    switch (st) {
    case BK_PULL_FOUND: return RMQ__STATUS__SUCCESS;
    case BK_PULL_NOT_FOUND: return RMQ__STATUS__PULL_NOT_FOUND;
    case BK_PULL_OFFSET_MOVED: return RMQ__STATUS__PULL_OFFSET_MOVED;
    default: return RMQ__STATUS__PULL_RETRY_IMMEDIATELY;
    }
}

/* bk_pull_front_t answer: encodes the core's result of req. */
static void pull_answer(void *arg, void *c, const void *to_p, const bk_pull_req_t *req, const bk_pull_out_t *out)
{
    rmq_conn_t *conn = c;
    rmq_reply_to_t to;
    memcpy(&to, to_p, sizeof(to));
    if (out->r.status != BK_OK) {
        fr_reply_result(conn, to, &out->r, NULL);
        return;
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__PullMessageResponse pr = RMQ__PULL_MESSAGE_RESPONSE__INIT;
    int status = pull_wire_status(out->status);
    pr.suggest_which_broker_id = out->suggest_broker_id;
    pr.next_begin_offset = out->next_begin_offset;
    pr.min_offset = out->min_offset;
    pr.max_offset = out->max_offset;
    pr.msg_count = out->msg_count;
    resp.header_case = RMQ__COMMAND__HEADER_PULL_RESP;
    resp.pull_resp = &pr;
    rmq_conn_reply(conn, to, &resp, status, NULL, out->body);
}

static const bk_pull_front_t pull_front = {pull_answer, rmq_conn_ref_any, rmq_conn_unref_any};
_Static_assert(sizeof(rmq_reply_to_t) <= BK_PULL_TO_MAX, "a held pull keeps the reply address");

void fr_pull(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    rmq_reply_to_t to = rmq_reply_to(req->cmd);
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_PULL, "PullMessageRequest (pull)"))
        return;
    const Rmq__PullMessageRequest *h = req->cmd->pull;
    if (!fr_allowed(fe, conn, req, h->topic, h->consumer_group))
        return;
    bk_pull_req_t pr = {
        .group = h->consumer_group,
        .topic = h->topic,
        .queue_id = h->queue_id,
        .queue_offset = h->queue_offset,
        .max_msg_nums = h->max_msg_nums,
        .max_msg_bytes = h->max_msg_bytes,
        .subscription = pull_expression(fe, h),
        .commit = (h->sys_flag & RMQ__PULL_FLAG__PULL_COMMIT_OFFSET) != 0,
        .commit_offset = h->commit_offset,
        .suspend = (h->sys_flag & RMQ__PULL_FLAG__PULL_SUSPEND) != 0,
        .suspend_timeout_ms = h->suspend_timeout_millis,
    };
    bk_pull_call_t call = {.front = &pull_front, .front_arg = fe, .conn = conn, .to = &to, .to_len = sizeof(to)};
    bk_consume_pull(fe->consume, &pr, pr.suspend ? fr_session_of(conn) : NULL, &call);
}
