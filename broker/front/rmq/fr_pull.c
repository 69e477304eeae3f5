/* fr_pull.c: the rmq front-end of PULL_MESSAGE: decodes a request into
 * the core's neutral pull (core/bk_consume.c: checks, filter, commit
 * offset, store read, long polling), and encodes its result: the neutral
 * pull status as the wire status, the records as the body, moved into the
 * reply without copying. */
#include <stdlib.h>
#include <string.h>

#include "bk_broker.h"
#include "bk_consume.h"
#include "bk_consume_cfg.h"
#include "bk_metrics.h"
#include "fr_routes.h"
#include "fr_perm.h"
#include "fr_session.h"
#include "fr_status.h"
#include "rmq_log.h"

struct fr_pull {
    bk_broker_t *bk;
    bk_consume_t *core;
};

/* A pull's reply address while the core holds it. */
typedef struct pull_ctx {
    fr_pull_t *p;
    rmq_conn_t *conn;                /* referenced */
    rmq_reply_to_t to;
} pull_ctx_t;

/* The subscription expression of the pull: its own, else the group's from heartbeats, else "*". */
static const char *pull_expression(const fr_pull_t *p, const Rmq__PullMessageRequest *h)
{
    if ((h->sys_flag & RMQ__PULL_FLAG__PULL_SUBSCRIPTION) || h->subscription[0])
        return h->subscription;
    const char *expr = bk_clients_subscription(p->bk->clients, h->consumer_group, h->topic);
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

/* Encodes the core's result of req. */
static void pull_reply(fr_pull_t *p, rmq_conn_t *conn, rmq_reply_to_t to, const bk_pull_req_t *req,
                       const bk_pull_out_t *out)
{
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
    if (out->status == BK_PULL_FOUND) {
        bk_stats_add(&p->bk->stats, BK_STAT_GET_FOUND, out->msg_count);
        bk_stats_add(&p->bk->stats, BK_STAT_GET_TRANSFERRED, out->bytes);
        bk_groupstats_add(p->bk->groupstats, req->group, req->topic, out->msg_count);
        bk_metrics_messages_out(p->bk->metrics, req->topic, (uint64_t)out->msg_count, (uint64_t)out->bytes);
    } else {
        bk_stats_add(&p->bk->stats, BK_STAT_GET_MISS, 1);
    }
    rmq_conn_reply(conn, to, &resp, status, NULL, out->body);
}

/* Core callback: a held pull's answer. */
static void pull_answer(const bk_pull_req_t *req, bk_pull_out_t *out, void *arg)
{
    pull_ctx_t *ctx = arg;
    pull_reply(ctx->p, ctx->conn, ctx->to, req, out);
}

static void pull_ctx_free(void *arg)
{
    pull_ctx_t *ctx = arg;
    rmq_conn_unref(ctx->conn);
    free(ctx);
}

void fr_pull(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    fr_pull_t *p = ((bk_broker_t *)arg)->pull;
    rmq_reply_to_t to = rmq_reply_to(req->cmd);
    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_PULL, "PullMessageRequest (pull)"))
        return;
    const Rmq__PullMessageRequest *h = req->cmd->pull;
    if (!fr_allowed(p->bk, conn, req, h->topic, h->consumer_group))
        return;
    bk_pull_req_t pr = {
        .group = h->consumer_group,
        .topic = h->topic,
        .queue_id = h->queue_id,
        .queue_offset = h->queue_offset,
        .max_msg_nums = h->max_msg_nums,
        .max_msg_bytes = h->max_msg_bytes,
        .subscription = pull_expression(p, h),
        .commit = (h->sys_flag & RMQ__PULL_FLAG__PULL_COMMIT_OFFSET) != 0,
        .commit_offset = h->commit_offset,
        .suspend = (h->sys_flag & RMQ__PULL_FLAG__PULL_SUSPEND) != 0,
        .suspend_timeout_ms = h->suspend_timeout_millis,
    };
    bk_session_t *ss = pr.suspend ? fr_session_of(conn) : NULL;
    pull_ctx_t *ctx = ss ? malloc(sizeof(*ctx)) : NULL;
    bk_pull_out_t out;
    if (!ctx)
        pr.suspend = 0;              /* out of memory: answer at once */
    else
        *ctx = (pull_ctx_t){.p = p, .conn = conn, .to = to};
    if (!bk_consume_pull(p->core, &pr, ss, ctx, &out)) {
        rmq_conn_ref(conn);          /* held: the ctx keeps the connection */
        return;
    }
    free(ctx);
    pull_reply(p, conn, to, &pr, &out);
    bk_pull_out_clear(&out);
}

void fr_pull_arrived(const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code, void *arg)
{
    fr_pull_t *p = arg;
    bk_consume_arrived(p->core, topic, queue_id, max_offset, tag_code);
}

void fr_pull_conn_closed(fr_pull_t *p, rmq_conn_t *conn)
{
    bk_session_t *ss = fr_session_find(conn);
    if (ss)
        bk_consume_session_closed(p->core, ss);
}

size_t fr_pull_held(const fr_pull_t *p)
{
    return bk_consume_held(p->core);
}

void fr_pull_release_all(fr_pull_t *p)
{
    bk_consume_stop(p->core);
}

fr_pull_t *fr_pull_new(bk_broker_t *bk)
{
    fr_pull_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->bk = bk;
    bk_consume_config_t cc;
    bk_consume_cfg_fill(&bk->node, &cc);
    cc.answer = pull_answer;
    cc.ctx_free = pull_ctx_free;
    if (!(p->core = bk_consume_new(&cc))) {
        free(p);
        return NULL;
    }
    return p;
}

void fr_pull_set_slave(fr_pull_t *p, int is_slave)
{
    bk_consume_set_slave(p->core, is_slave);
}

void fr_pull_free(fr_pull_t *p)
{
    if (!p)
        return;
    bk_consume_free(p->core);
    free(p);
}
