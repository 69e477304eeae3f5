/* fr_remoting_pop.c: RocketMQ 5's pop consumption over remoting, thin over
 * the core (core/bk_pop.c): POP_MESSAGE (200050; PopMessageRequestHeader,
 * held for pollTime when nothing is there), ACK_MESSAGE (200051) and
 * CHANGE_MESSAGE_INVISIBLETIME (200053), whose extraInfo is the receipt
 * handle. A pop's answer is the messages in MessageDecoder's V1 layout with
 * PopMessageResponseHeader (popTime, invisibleTime, reviveQid, restNum);
 * without startOffsetInfo the Java client builds each message's handle
 * (POP_CK) from popTime, invisibleTime and the message's own topic, queue
 * and offset: the core's layout. A FIFO pop (order=true) also carries
 * startOffsetInfo, msgOffsetInfo and orderCountInfo (ExtraInfoUtil's
 * formats), from which the client takes each message's delivery count.
 * Nothing found: PULL_NOT_FOUND. BATCH_ACK_MESSAGE (200151) acks the
 * messages of a BatchAckMessageRequestBody (fr_remoting_pop_wire.c). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_remoting.h"
#include "fr_remoting_pop_wire.h"
#include "fr_remoting_wire.h"
#include "rmq_log.h"

#define RM_PULL_NOT_FOUND 19
#define RM_SUBSCRIPTION_NOT_SUPPORTED 23  /* as PULL_MESSAGE answers a non-TAG expression */

/* A pop's reply address while the core holds it. */
typedef struct pop_ctx {
    rmq_conn_t *conn;                /* referenced */
    fr_rm_to_t to;
} pop_ctx_t;

/* A FIFO pop's offset headers (one queue: topic type 0) into buf[cap]:
 * startOffsetInfo, msgOffsetInfo, orderCountInfo, NUL-separated; -1 when
 * they do not fit. */
static int fifo_infos(const bk_pop_out_t *out, char *buf, size_t cap, char **start, char **offsets,
                      char **counts)
{
    size_t used = 0;
    int qid = out->msgs[0].queue_id, n;
    n = snprintf(buf, cap, "0 %d %" PRId64, qid, out->msgs[0].queue_offset);
    if (n < 0 || (size_t)n >= cap)
        return -1;
    *start = buf;
    used = (size_t)n + 1;
    *offsets = buf + used;
    n = snprintf(buf + used, cap - used, "0 %d ", qid);
    for (size_t i = 0; n >= 0 && (size_t)n < cap - used && i < out->n; i++) {
        used += (size_t)n;
        n = snprintf(buf + used, cap - used, "%s%" PRId64, i ? "," : "", out->msgs[i].queue_offset);
    }
    if (n < 0 || (size_t)n >= cap - used)
        return -1;
    used += (size_t)n + 1;
    *counts = buf + used;
    n = 0;
    for (size_t i = 0; n >= 0 && (size_t)n < cap - used && i < out->n; i++) {
        used += (size_t)n;
        n = snprintf(buf + used, cap - used, "%s0 qo%d%%%" PRId64 " %d", i ? ";" : "", qid,
                     out->msgs[i].queue_offset, out->msgs[i].attempt - 1);
    }
    return n < 0 || (size_t)n >= cap - used ? -1 : 0;
}

/* Encodes the core's result of a pop. */
static void pop_reply(rmq_conn_t *conn, const fr_rm_to_t *to, const bk_pop_req_t *req, const bk_pop_out_t *out)
{
    rmq_remoting_reply_t rep = {.code = fr_rm_status_code(out->r.status), .remark = out->r.why};
    char pop_time[24], invisible[24], rest[24];
    uint8_t *msgs = NULL;
    if (out->r.status != BK_OK) {
        fr_rm_reply_to(conn, to, &rep);
        return;
    }
    snprintf(pop_time, sizeof(pop_time), "%" PRId64, out->pop_time);
    snprintf(invisible, sizeof(invisible), "%" PRId64, out->invisible_ms);
    snprintf(rest, sizeof(rest), "%" PRId64, out->rest);
    rmq_remoting_field_t f[] = {
        {"popTime", pop_time},
        {"invisibleTime", invisible},
        {"reviveQid", "0"},
        {"restNum", rest},
        {"startOffsetInfo", NULL},
        {"msgOffsetInfo", NULL},
        {"orderCountInfo", NULL},
    };
    rep.fields = f;
    rep.n_fields = 4;
    char *infos = NULL;
    size_t infos_cap = 64 + out->n * 64;
    if (req->order && out->n) {
        if (!(infos = malloc(infos_cap)) || fifo_infos(out, infos, infos_cap, &f[4].value, &f[5].value,
                                                       &f[6].value) != 0) {
            free(infos);
            rep = (rmq_remoting_reply_t){.code = RMQ_REMOTING_SYSTEM_ERROR, .remark = "out of memory"};
            fr_rm_reply_to(conn, to, &rep);
            return;
        }
        rep.n_fields = 7;
    }
    rep.code = out->n ? RMQ_REMOTING_SUCCESS : RM_PULL_NOT_FOUND;
    rep.remark = NULL;
    if (out->n) {
        size_t len;
        if (fr_rm_records_encode(out->body, &msgs, &len) != RMQ_OK) {
            LOG_ERROR_RL("remoting pop: cannot encode %zu bytes of records", len);
            rep = (rmq_remoting_reply_t){.code = RMQ_REMOTING_SYSTEM_ERROR, .remark = "cannot encode the messages"};
            fr_rm_reply_to(conn, to, &rep);
            free(infos);
            return;
        }
        rep.body = msgs;
        rep.body_len = len;
    }
    fr_rm_reply_to(conn, to, &rep);
    free(msgs);
    free(infos);
}

/* bk_pop_answer_fn: a held pop's answer. */
static void pop_answer(const bk_pop_req_t *req, bk_pop_out_t *out, void *arg)
{
    pop_ctx_t *ctx = arg;
    pop_reply(ctx->conn, &ctx->to, req, out);
}

static void pop_ctx_free(void *arg)
{
    pop_ctx_t *ctx = arg;
    rmq_conn_unref(ctx->conn);
    free(ctx);
}

void fr_rm_handle_pop(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int64_t qid, max_nums, invisible, poll_ms;
    int order = 0;
    const char *group = fr_rm_str(conn, req, "consumerGroup", NULL, 1, NULL);
    const char *topic = group ? fr_rm_str(conn, req, "topic", NULL, 1, NULL) : NULL;
    if (!topic || !fr_rm_allowed(rm, conn, req, topic, group) ||
        fr_rm_int(conn, req, "queueId", NULL, 1, -1, INT32_MAX, 0, &qid) != 0 ||
        fr_rm_int(conn, req, "maxMsgNums", NULL, 1, 1, INT32_MAX, 0, &max_nums) != 0 ||
        fr_rm_int(conn, req, "invisibleTime", NULL, 1, 1, INT64_MAX, 0, &invisible) != 0 ||
        fr_rm_int(conn, req, "pollTime", NULL, 1, 0, INT32_MAX, 0, &poll_ms) != 0 ||
        fr_rm_bool(conn, req, "order", 0, 0, &order) != 0)
        return;
    const char *type = rmq_remoting_field(req, "expType");
    if (type && strcmp(type, "TAG") != 0) {
        rmq_remoting_replyf(conn, req, RM_SUBSCRIPTION_NOT_SUPPORTED,
                            "POP_MESSAGE: expType %.32s is not supported (TAG only)", type);
        return;
    }
    pop_ctx_t *ctx = malloc(sizeof(*ctx));
    bk_session_t *ss = fr_rm_session_of(rm, conn, req);
    if (!ctx || !ss) {
        free(ctx);
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "out of memory");
        return;
    }
    rmq_conn_ref(conn);
    *ctx = (pop_ctx_t){.conn = conn, .to = fr_rm_to(req)};
    bk_pop_req_t pr = {
        .group = group,
        .topic = topic,
        .max_msgs = (int32_t)max_nums,
        .invisible_ms = invisible,
        .expression = fr_rm_str(conn, req, "exp", NULL, 0, "*"),
        .poll_ms = poll_ms,
        .ss = ss,
        .answer = pop_answer,
        .ctx_free = pop_ctx_free,
        .order = order,
        .queue_id = (int32_t)qid,
        .attempt_id = rmq_remoting_field(req, "attemptId"),
    };
    bk_pop_out_t out;
    if (bk_pop_run(rm->fe->pop, &pr, ctx, &out)) {
        pop_reply(conn, &ctx->to, &pr, &out);
        bk_pop_out_clear(&out);
        pop_ctx_free(ctx);
    }
}

/* The ack or change request of req (ACK_MESSAGE's header fields); 0, or -1
 * after answering. */
static int ack_req(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req, bk_pop_ack_req_t *ar)
{
    ar->group = fr_rm_str(conn, req, "consumerGroup", NULL, 1, NULL);
    ar->topic = ar->group ? fr_rm_str(conn, req, "topic", NULL, 1, NULL) : NULL;
    if (!ar->topic || !fr_rm_allowed(rm, conn, req, ar->topic, ar->group))
        return -1;
    ar->handle = fr_rm_str(conn, req, "extraInfo", NULL, 1, NULL);
    return ar->handle ? 0 : -1;
}

void fr_rm_handle_ack(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_pop_ack_req_t ar;
    bk_result_t r;
    if (ack_req(rm, conn, req, &ar) != 0)
        return;
    bk_pop_ack(rm->fe->pop, &ar, &r);
    fr_rm_reply_result(conn, req, &r);
}

void fr_rm_handle_change_invisible(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_pop_ack_req_t ar;
    bk_result_t r;
    int64_t invisible, pop_time = 0;
    char handle[BK_POP_HANDLE_MAX], pt[24], inv[24];
    if (ack_req(rm, conn, req, &ar) != 0 ||
        fr_rm_int(conn, req, "invisibleTime", NULL, 1, 0, INT64_MAX, 0, &invisible) != 0)
        return;
    if (bk_pop_change_invisible(rm->fe->pop, &ar, invisible, handle, sizeof(handle), &pop_time, &r) != BK_OK) {
        fr_rm_reply_result(conn, req, &r);
        return;
    }
    snprintf(pt, sizeof(pt), "%" PRId64, pop_time);
    snprintf(inv, sizeof(inv), "%" PRId64, invisible);
    rmq_remoting_field_t f[] = {
        {"popTime", pt},
        {"invisibleTime", inv},
        {"reviveQid", "0"},
    };
    rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .fields = f, .n_fields = sizeof(f) / sizeof(f[0])};
    rmq_remoting_reply(conn, req, &rep);
}

void fr_rm_handle_batch_ack(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    fr_rm_batch_ack_t ba;
    char why[BK_WHY_MAX];
    bk_result_t r, first = {.status = BK_OK}, answer;
    size_t failed = 0;
    if (fr_rm_batch_ack_parse(req->body, req->body_len, &ba, why, sizeof(why)) != RMQ_OK) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "BATCH_ACK_MESSAGE: %s", why);
        return;
    }
    for (size_t i = 0; i < ba.n; i++) {
        const fr_rm_acked_t *a = &ba.acked[i];
        if (!fr_rm_allowed(rm, conn, req, a->topic, a->group)) {
            fr_rm_batch_ack_clear(&ba);
            return;
        }
        if (bk_pop_ack_fields(rm->fe->pop, a->group, a->topic, &a->h, &r) != BK_OK && failed++ == 0)
            first = r;
    }
    answer = first;
    if (failed)
        bk_result_set(&answer, first.status, "%zu of %zu messages not acked; the first: %.120s", failed, ba.n,
                      first.why);
    fr_rm_reply_result(conn, req, &answer);
    fr_rm_batch_ack_clear(&ba);
}
