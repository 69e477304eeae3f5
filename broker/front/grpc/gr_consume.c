/* gr_consume.c: the gRPC front's consumer RPCs over the core's pop
 * (core/bk_pop.c), as the remoting front's pop codes (fr_remoting_pop.c)
 * do. QueryAssignment gives one "any queue" assignment per master of the
 * topic's route (gr_route_fetch). ReceiveMessage decodes its request into a neutral pop, held by the
 * core while nothing is there for the client's long-polling time (at most
 * the broker's longest, and ending before the call's deadline), and
 * answers {status}, one {message} per popped record (gr_message.c, with
 * the receipt handle and delivery attempt), {delivery_timestamp}, then
 * grpc-status 0; an empty pop says MESSAGE_NOT_FOUND. A call cancelled
 * while held takes nothing (bk_pop_req_t.gone); messages popped for a call
 * that went away meanwhile are made visible again after
 * GR_NACK_INVISIBLE_MS, as the proxy does. AckMessage answers per entry,
 * ChangeInvisibleDuration with the new handle, ForwardMessageToDeadLetterQueue
 * through the core's DLQ copy. Application errors travel in the
 * response's Status with grpc-status 0 (GRPC-NOTES.md §1.2); the per-call
 * plumbing (decoding, the client id, the caller's rights, the session) is
 * gr_front.c's. A record that does not map to a v2 message is made
 * visible again, so it ends in the DLQ at the group's max attempts. */
#include <stdlib.h>
#include <string.h>

#include "gr_front.h"
#include "gr_message.h"
#include "gr_session.h"
#include "rmq_grpc_route.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define CODE(name) APACHE__ROCKETMQ__V2__CODE__##name

/* The proxy's limits on a receive's invisible time without auto-renew,
 * and the one a push consumer's auto-renewed pop (or a receive naming
 * none) gets (ProxyConfig; the batch cap and the longest poll are the
 * Settings', gr_front.c). Auto-renew itself is not done: a push
 * consumer's message is visible again after GR_INVISIBLE_DEFAULT_MS. */
#define GR_INVISIBLE_MIN_MS (10 * 1000)
#define GR_INVISIBLE_MAX_MS (12 * 3600 * 1000LL)
#define GR_INVISIBLE_DEFAULT_MS (60 * 1000)
/* A receive answers this long before the call's deadline, so the client
 * gets the answer and not DEADLINE_EXCEEDED. */
#define GR_DEADLINE_RESERVE_MS 1000
/* Messages popped for a call that went away are visible again after this. */
#define GR_NACK_INVISIBLE_MS 1000

/* ---- replies ---- */

/* Packs msg and writes it as one response message of call; RMQ_ENOMEM,
 * or rmq_grpc_write's RMQ_ECLOSED. */
static rmq_err_t write_pb(rmq_grpc_call_t *call, const ProtobufCMessage *msg)
{
    size_t len = protobuf_c_message_get_packed_size(msg);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return RMQ_ENOMEM;
    protobuf_c_message_pack(msg, buf);
    rmq_err_t rc = rmq_grpc_write(call, buf, len);
    free(buf);
    return rc;
}

/* ---- request checks ---- */

/* The name of a request's Resource, or NULL when it names none. */
static const char *resource_name(const Apache__Rocketmq__V2__Resource *r)
{
    return r && r->name && r->name[0] ? r->name : NULL;
}

/* Checks the group and topic names of a request and the caller's right
 * op on them; 1, or 0 with st set. */
static int names_allowed(const gr_front_t *gf, rmq_grpc_call_t *call, bk_op_t op, const char *group,
                         const char *topic, gr_status_t *st)
{
    const char *why;
    if (!group || !rmq_name_is_valid(group, strlen(group), &why))
        return gr_status_set(st, CODE(ILLEGAL_CONSUMER_GROUP), "consumer group '%.100s' %s", group ? group : "",
                             group ? why : "is required");
    if (!topic || !rmq_name_is_valid(topic, strlen(topic), &why))
        return gr_status_set(st, CODE(ILLEGAL_TOPIC), "topic '%.100s' %s", topic ? topic : "",
                             topic ? why : "is required");
    return gr_call_allowed(gf, call, op, topic, group, st);
}

/* 1 if group is a FIFO group here (consumeMessageOrderly). */
static int group_orderly(const gr_front_t *gf, const char *group)
{
    const bk_group_t *g = bk_groups_get(gf->fe->node->groups, group, strlen(group));
    return g && g->consume_orderly;
}

/* The code of a refused ack or change: the core's BK_BAD_REQUEST is a
 * receipt handle it does not know (malformed, stale, expired). */
static gr_code_t handle_code(bk_status_t status)
{
    return status == BK_BAD_REQUEST ? CODE(INVALID_RECEIPT_HANDLE) : gr_code_of_status(status);
}

/* ---- ReceiveMessage ---- */

/* A receive's call while the core holds its pop. */
typedef struct recv_ctx {
    const gr_front_t *gf;
    rmq_grpc_call_t *call;
    int finished;
} recv_ctx_t;

/* Makes out's messages [from, to) visible again soon: nobody got them. */
static void recv_nack(const gr_front_t *gf, const bk_pop_req_t *req, const bk_pop_out_t *out, size_t from,
                      size_t to)
{
    char handle[BK_POP_HANDLE_MAX];
    int64_t pop_time;
    bk_result_t r;
    for (size_t i = from; i < to; i++) {
        bk_pop_ack_req_t ar = {.group = req->group, .topic = req->topic, .handle = out->msgs[i].handle};
        bk_pop_change_invisible(gf->fe->pop, &ar, GR_NACK_INVISIBLE_MS, handle, sizeof(handle), &pop_time, &r);
    }
}

/* Writes message m (record rec) of a pop; RMQ_ECLOSED when the call went
 * away, RMQ_ECORRUPT/RMQ_ENOMEM when it cannot be mapped. */
static rmq_err_t recv_write_message(const recv_ctx_t *ctx, const bk_pop_out_t *out, const bk_pop_msg_t *m,
                                    const rmq_record_t *rec)
{
    Apache__Rocketmq__V2__ReceiveMessageResponse resp = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__INIT;
    gr_deliver_ctx_t dc = {.receipt_handle = m->handle, .invisible_ms = out->invisible_ms,
                           .delivery_attempt = m->attempt,
                           .max_body_size = (size_t)ctx->gf->settings.max_body_size};
    gr_delivered_t d;
    rmq_err_t rc = gr_message_from_record(rec, &dc, &d);
    if (rc == RMQ_OK) {
        resp.content_case = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_MESSAGE;
        resp.message = &d.msg;
        rc = write_pb(ctx->call, &resp.base);
    }
    gr_delivered_deinit(&d);
    return rc;
}

/* Writes the popped messages; those not delivered (the call went away,
 * or one that cannot be mapped) are made visible again. */
static void recv_write_messages(const recv_ctx_t *ctx, const bk_pop_req_t *req, const bk_pop_out_t *out)
{
    size_t len = evbuffer_get_length(out->body), at = 0;
    const uint8_t *body = evbuffer_pullup(out->body, -1);
    for (size_t i = 0; i < out->n; i++) {
        rmq_record_t rec;
        rmq_err_t rc = body ? rmq_record_decode(body + at, len - at, 0, &rec) : RMQ_ENOMEM;
        if (rc == RMQ_OK) {
            at += rec.total_size;
            rc = recv_write_message(ctx, out, &out->msgs[i], &rec);
        }
        if (rc == RMQ_ECORRUPT) {
            LOG_WARN_RL("gRPC receive of %s by %s: queue %d offset %lld does not map to a v2 message; "
                        "visible again", req->topic, req->group, out->msgs[i].queue_id,
                        (long long)out->msgs[i].queue_offset);
            recv_nack(ctx->gf, req, out, i, i + 1);
        } else if (rc != RMQ_OK) {
            recv_nack(ctx->gf, req, out, i, out->n);
            return;
        }
    }
}

/* Writes a receive's {status}; RMQ_OK, or why not. */
static rmq_err_t recv_write_status(rmq_grpc_call_t *call, const gr_status_t *st)
{
    Apache__Rocketmq__V2__ReceiveMessageResponse resp = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status status;
    gr_status_to_pb(st, &status);
    resp.content_case = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_STATUS;
    resp.status = &status;
    return write_pb(call, &resp.base);
}

/* Ends a receive: {delivery_timestamp: now}, then grpc-status 0. */
static void recv_end(rmq_grpc_call_t *call)
{
    Apache__Rocketmq__V2__ReceiveMessageResponse resp = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__INIT;
    Google__Protobuf__Timestamp now = GOOGLE__PROTOBUF__TIMESTAMP__INIT;
    gr_timestamp_set_ms(&now, rmq_wall_ms());
    resp.content_case = APACHE__ROCKETMQ__V2__RECEIVE_MESSAGE_RESPONSE__CONTENT_DELIVERY_TIMESTAMP;
    resp.delivery_timestamp = &now;
    write_pb(call, &resp.base);
    rmq_grpc_finish(call, RMQ_GRPC_OK, NULL);
}

/* Answers a receive that never reached the core: {status}, then the end. */
static void recv_refuse(rmq_grpc_call_t *call, const gr_status_t *st)
{
    recv_write_status(call, st);
    recv_end(call);
}

/* Answers a receive with the core's outcome and finishes the call:
 * {status}, the messages, the end. */
static void recv_answer(recv_ctx_t *ctx, const bk_pop_req_t *req, const bk_pop_out_t *out)
{
    gr_status_t st;
    ctx->finished = 1;
    if (out->r.status != BK_OK)
        gr_status_set(&st, gr_code_of_status(out->r.status), "%s", out->r.why);
    else if (!out->n)
        gr_status_set(&st, CODE(MESSAGE_NOT_FOUND), "no new message");
    else
        gr_status_set(&st, CODE(OK), "OK");
    if (recv_write_status(ctx->call, &st) != RMQ_OK) {
        recv_nack(ctx->gf, req, out, 0, out->n);
        rmq_grpc_finish(ctx->call, RMQ_GRPC_CANCELLED, "the call went away");
        return;
    }
    if (out->n)
        recv_write_messages(ctx, req, out);
    recv_end(ctx->call);
}

/* bk_pop_answer_fn: a held receive's answer. */
static void recv_held_answer(const bk_pop_req_t *req, bk_pop_out_t *out, void *arg)
{
    recv_answer(arg, req, out);
}

/* bk_pop_gone_fn: the client cancelled the held receive. */
static int recv_gone(void *arg)
{
    const recv_ctx_t *ctx = arg;
    return !rmq_grpc_call_live(ctx->call);
}

/* bk_pop_ctx_free_fn: ends a call the core dropped unanswered (its session
 * closed, or it was cancelled), then frees ctx. */
static void recv_ctx_free(void *arg)
{
    recv_ctx_t *ctx = arg;
    if (!ctx->finished)
        rmq_grpc_finish(ctx->call, RMQ_GRPC_CANCELLED, "the receive was dropped");
    free(ctx);
}

/* The long-polling time of a receive: the client's (else the broker's
 * longest), at most the broker's longest, ending GR_DEADLINE_RESERVE_MS
 * before the call's deadline (0: answer at once). */
static int64_t recv_poll_ms(const gr_front_t *gf, rmq_grpc_call_t *call,
                            const Apache__Rocketmq__V2__ReceiveMessageRequest *rq)
{
    int64_t max = gf->settings.long_polling_max_ms, poll = max;
    if (rq->_long_polling_timeout_case && rq->long_polling_timeout)
        poll = gr_duration_ms(rq->long_polling_timeout);
    if (poll > max)
        poll = max;
    int64_t deadline = rmq_grpc_call_deadline_ms(call);
    if (deadline != RMQ_GRPC_NO_DEADLINE && poll > deadline - rmq_mono_ms() - GR_DEADLINE_RESERVE_MS)
        poll = deadline - rmq_mono_ms() - GR_DEADLINE_RESERVE_MS;
    return poll > 0 ? poll : 0;
}

/* Decodes a receive's pop into *pr (strings borrowed from rq); 1, or 0
 * with st set. */
static int recv_request(const gr_front_t *gf, rmq_grpc_call_t *call,
                        const Apache__Rocketmq__V2__ReceiveMessageRequest *rq, bk_pop_req_t *pr, gr_status_t *st)
{
    const char *group = resource_name(rq->group);
    const char *topic = rq->message_queue ? resource_name(rq->message_queue->topic) : NULL;
    const Apache__Rocketmq__V2__FilterExpression *fe = rq->filter_expression;
    if (!names_allowed(gf, call, BK_OP_POP, group, topic, st))
        return 0;
    if (fe && fe->type == APACHE__ROCKETMQ__V2__FILTER_TYPE__SQL)
        return gr_status_set(st, CODE(UNSUPPORTED), "SQL92 filter expressions are not supported; use TAG");
    if (rq->batch_size < 1)
        return gr_status_set(st, CODE(BAD_REQUEST), "batch_size %d must be positive", rq->batch_size);
    int64_t invisible = GR_INVISIBLE_DEFAULT_MS;
    if (!rq->auto_renew && rq->_invisible_duration_case && rq->invisible_duration) {
        invisible = gr_duration_ms(rq->invisible_duration);
        if (invisible < GR_INVISIBLE_MIN_MS || invisible > GR_INVISIBLE_MAX_MS)
            return gr_status_set(st, CODE(ILLEGAL_INVISIBLE_TIME), "invisible_duration %lld ms is outside "
                                 "[%d ms, %lld ms]", (long long)invisible, GR_INVISIBLE_MIN_MS,
                                 (long long)GR_INVISIBLE_MAX_MS);
    }
    *pr = (bk_pop_req_t){
        .group = group,
        .topic = topic,
        .max_msgs = rq->batch_size > gf->settings.receive_batch_size ? gf->settings.receive_batch_size
                                                                   : rq->batch_size,
        .invisible_ms = invisible,
        .expression = fe && fe->expression && fe->expression[0] ? fe->expression : "*",
        .poll_ms = recv_poll_ms(gf, call, rq),
        .order = group_orderly(gf, group),
        .queue_id = rq->message_queue->id,
        .attempt_id = rq->_attempt_id_case && rq->attempt_id[0] ? rq->attempt_id : NULL,
        .answer = recv_held_answer,
        .ctx_free = recv_ctx_free,
        .gone = recv_gone,
    };
    return 1;
}

static void handle_receive(rmq_grpc_call_t *call, void *arg)
{
    const gr_front_t *gf = arg;
    Apache__Rocketmq__V2__ReceiveMessageRequest *rq =
        rmq_grpc_decode(call, &apache__rocketmq__v2__receive_message_request__descriptor);
    if (!rq)
        return;
    bk_pop_req_t pr;
    gr_status_t st;
    gr_session_t *gs = NULL;
    recv_ctx_t *ctx = NULL;
    if (!recv_request(gf, call, rq, &pr, &st)) {
        recv_refuse(call, &st);
    } else if (!(gs = gr_call_session(gf, call, &st)) || !(ctx = calloc(1, sizeof(*ctx)))) {
        if (gs)                      /* its held pops and popped messages go when its connection closes */
            gr_status_set(&st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
        recv_refuse(call, &st);
    } else {
        bk_pop_out_t out;
        pr.ss = &gs->base;
        *ctx = (recv_ctx_t){.gf = gf, .call = call};
        if (bk_pop_run(gf->fe->pop, &pr, ctx, &out)) {
            recv_answer(ctx, &pr, &out);
            bk_pop_out_clear(&out);
            recv_ctx_free(ctx);
        }
    }
    rmq_grpc_unpacked_free(rq);
}

/* ---- QueryAssignment ---- */

static const ProtobufCMessageDescriptor *const assignment_resp =
    &apache__rocketmq__v2__query_assignment_response__descriptor;

/* Points ptrs[0..) at the assignments of route (rmq_grpc_route_assign);
 * how many. mq, as and ptrs hold route.n entries. */
static size_t assignments_fill(const rmq_grpc_route_t *route, int per_queue, Apache__Rocketmq__V2__MessageQueue *mq,
                               Apache__Rocketmq__V2__Assignment *as, Apache__Rocketmq__V2__Assignment **ptrs)
{
    size_t n = rmq_grpc_route_assign(route, per_queue, mq);
    for (size_t i = 0; i < n; i++) {
        apache__rocketmq__v2__assignment__init(&as[i]);
        as[i].message_queue = &mq[i];
        ptrs[i] = &as[i];
    }
    return n;
}

/* QueryAssignment's answer from the topic's route (every member of the
 * group gets the same list, in the route's order): per_queue, each
 * readable queue of the masters (an orderly group: a FIFO pop takes one
 * queue); else one assignment of queue -1 ("any queue": pop balances) per
 * master with a readable queue, as the proxy answers. FORBIDDEN when no
 * master has a readable queue. */
static void assignment_answer(rmq_grpc_call_t *call, const Rmq__TopicRouteData *rd, const char *topic, int per_queue)
{
    rmq_grpc_route_t route = {0};
    char why[320] = "";
    rmq_err_t rc = rmq_grpc_route_build(rd, topic, &route, why, sizeof(why));
    size_t nq = route.n, n;
    Apache__Rocketmq__V2__MessageQueue *mq = rc == RMQ_OK ? calloc(nq + 1, sizeof(*mq)) : NULL;
    Apache__Rocketmq__V2__Assignment *as = mq ? calloc(nq + 1, sizeof(*as)) : NULL;
    Apache__Rocketmq__V2__Assignment **ptrs = as ? calloc(nq + 1, sizeof(*ptrs)) : NULL;
    if (!ptrs) {
        rmq_grpc_answer_status(call, assignment_resp, CODE(INTERNAL_SERVER_ERROR), rc == RMQ_EINVAL ? why
                                                                                                  : "out of memory");
    } else {
        n = assignments_fill(&route, per_queue, mq, as, ptrs);
        Apache__Rocketmq__V2__QueryAssignmentResponse resp = APACHE__ROCKETMQ__V2__QUERY_ASSIGNMENT_RESPONSE__INIT;
        Apache__Rocketmq__V2__Status status;
        gr_status_t st;
        if (n)
            gr_status_set(&st, CODE(OK), "OK");
        else
            gr_status_set(&st, CODE(FORBIDDEN), "topic %.200s has no readable queue on a master", topic);
        gr_status_to_pb(&st, &status);
        resp.status = &status;
        resp.n_assignments = n;
        resp.assignments = ptrs;
        rmq_grpc_answer(call, &resp.base);
    }
    free(ptrs);
    free(as);
    free(mq);
    rmq_grpc_route_deinit(&route);
}

/* gr_route_fn: the assignments of a group that is not orderly. */
static void assignment_answer_any(rmq_grpc_call_t *call, const Rmq__TopicRouteData *rd, const char *topic, void *arg)
{
    (void)arg;
    if (rd)
        assignment_answer(call, rd, topic, 0);
}

/* gr_route_fn: the assignments of an orderly group. */
static void assignment_answer_orderly(rmq_grpc_call_t *call, const Rmq__TopicRouteData *rd, const char *topic,
                                      void *arg)
{
    (void)arg;
    if (rd)
        assignment_answer(call, rd, topic, 1);
}

static void handle_query_assignment(rmq_grpc_call_t *call, void *arg)
{
    gr_front_t *gf = arg;
    Apache__Rocketmq__V2__QueryAssignmentRequest *rq =
        rmq_grpc_decode(call, &apache__rocketmq__v2__query_assignment_request__descriptor);
    if (!rq)
        return;
    gr_status_t st;
    const char *topic = resource_name(rq->topic), *group = resource_name(rq->group);
    if (!names_allowed(gf, call, BK_OP_POP, group, topic, &st) ||
        !gr_route_fetch(gf, call, topic, assignment_resp,
                        group_orderly(gf, group) ? assignment_answer_orderly : assignment_answer_any, NULL, &st))
        gr_call_answer_status(call, assignment_resp, &st);
    rmq_grpc_unpacked_free(rq);
}

/* ---- AckMessage, ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue ---- */

/* The ack request of group and topic for handle (borrowed). */
static bk_pop_ack_req_t ack_req(const char *group, const char *topic, const char *handle)
{
    return (bk_pop_ack_req_t){.group = group, .topic = topic, .handle = handle ? handle : ""};
}

/* Acks one entry (its status in *st); its code. */
static gr_code_t ack_entry(const gr_front_t *gf, const char *group, const char *topic,
                           const Apache__Rocketmq__V2__AckMessageEntry *e, gr_status_t *st)
{
    bk_pop_ack_req_t ar = ack_req(group, topic, e->receipt_handle);
    bk_result_t r;
    bk_status_t status = bk_pop_ack(gf->fe->pop, &ar, &r);
    if (status == BK_OK)
        gr_status_set(st, CODE(OK), "OK");
    else
        gr_status_set(st, handle_code(status), "%s", r.why);
    return st->code;
}

/* An AckMessage's per-entry results, as the response points to them. */
typedef struct ack_results {
    Apache__Rocketmq__V2__AckMessageResultEntry *res;
    Apache__Rocketmq__V2__AckMessageResultEntry **ptrs;
    Apache__Rocketmq__V2__Status *statuses;
    gr_status_t *sts;
    gr_code_t *codes;
} ack_results_t;

static void ack_results_free(ack_results_t *a)
{
    free(a->res);
    free(a->ptrs);
    free(a->statuses);
    free(a->sts);
    free(a->codes);
}

/* Acks every entry of rq into *a and points resp at the results; the
 * top-level status in *st (the one code all share, or MULTIPLE_RESULTS).
 * 0 when out of memory. */
static int ack_entries(const gr_front_t *gf, const Apache__Rocketmq__V2__AckMessageRequest *rq,
                       ack_results_t *a, Apache__Rocketmq__V2__AckMessageResponse *resp, gr_status_t *st)
{
    size_t n = rq->n_entries;
    a->res = calloc(n, sizeof(*a->res));
    a->ptrs = calloc(n, sizeof(*a->ptrs));
    a->statuses = calloc(n, sizeof(*a->statuses));
    a->sts = calloc(n, sizeof(*a->sts));
    a->codes = calloc(n, sizeof(*a->codes));
    if (!a->res || !a->ptrs || !a->statuses || !a->sts || !a->codes)
        return 0;
    for (size_t i = 0; i < n; i++) {
        apache__rocketmq__v2__ack_message_result_entry__init(&a->res[i]);
        a->codes[i] = ack_entry(gf, rq->group->name, rq->topic->name, rq->entries[i], &a->sts[i]);
        gr_status_to_pb(&a->sts[i], &a->statuses[i]);
        a->res[i].message_id = rq->entries[i]->message_id;
        a->res[i].receipt_handle = rq->entries[i]->receipt_handle;
        a->res[i].status = &a->statuses[i];
        a->ptrs[i] = &a->res[i];
    }
    gr_code_t overall = gr_code_overall(a->codes, n);
    if (overall == CODE(MULTIPLE_RESULTS))
        gr_status_set(st, overall, "the entries' statuses differ");
    else
        gr_status_set(st, overall, "%s", a->sts[0].message);
    resp->n_entries = n;
    resp->entries = a->ptrs;
    return 1;
}

static void handle_ack(rmq_grpc_call_t *call, void *arg)
{
    const gr_front_t *gf = arg;
    Apache__Rocketmq__V2__AckMessageRequest *rq =
        rmq_grpc_decode(call, &apache__rocketmq__v2__ack_message_request__descriptor);
    if (!rq)
        return;
    Apache__Rocketmq__V2__AckMessageResponse resp = APACHE__ROCKETMQ__V2__ACK_MESSAGE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status status;
    ack_results_t a = {0};
    gr_status_t st;
    if (names_allowed(gf, call, BK_OP_POP_ACK, resource_name(rq->group), resource_name(rq->topic), &st)) {
        if (!rq->n_entries)
            gr_status_set(&st, CODE(BAD_REQUEST), "AckMessage names no entries");
        else if (!ack_entries(gf, rq, &a, &resp, &st))
            gr_status_set(&st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    }
    gr_status_to_pb(&st, &status);
    resp.status = &status;
    rmq_grpc_answer(call, &resp.base);
    ack_results_free(&a);
    rmq_grpc_unpacked_free(rq);
}

/* Changes the invisible time of rq's handle: 1 with the new handle in
 * handle[BK_POP_HANDLE_MAX], or 0; *st says which. */
static int change_invisible(const gr_front_t *gf,
                            const Apache__Rocketmq__V2__ChangeInvisibleDurationRequest *rq, char *handle,
                            gr_status_t *st)
{
    int64_t invisible = rq->invisible_duration ? gr_duration_ms(rq->invisible_duration) : -1, pop_time;
    bk_result_t r;
    if (invisible < 0 || invisible > GR_INVISIBLE_MAX_MS)
        return gr_status_set(st, CODE(ILLEGAL_INVISIBLE_TIME), "invisible_duration %lld ms is outside "
                             "[0 ms, %lld ms]", (long long)invisible, (long long)GR_INVISIBLE_MAX_MS);
    bk_pop_ack_req_t ar = ack_req(rq->group->name, rq->topic->name, rq->receipt_handle);
    bk_status_t s = bk_pop_change_invisible(gf->fe->pop, &ar, invisible, handle, BK_POP_HANDLE_MAX, &pop_time, &r);
    if (s != BK_OK)
        return gr_status_set(st, handle_code(s), "%s", r.why);
    gr_status_set(st, CODE(OK), "OK");
    return 1;
}

static void handle_change_invisible(rmq_grpc_call_t *call, void *arg)
{
    const gr_front_t *gf = arg;
    Apache__Rocketmq__V2__ChangeInvisibleDurationRequest *rq =
        rmq_grpc_decode(call, &apache__rocketmq__v2__change_invisible_duration_request__descriptor);
    if (!rq)
        return;
    Apache__Rocketmq__V2__ChangeInvisibleDurationResponse resp =
        APACHE__ROCKETMQ__V2__CHANGE_INVISIBLE_DURATION_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status status;
    char handle[BK_POP_HANDLE_MAX];
    gr_status_t st;
    if (names_allowed(gf, call, BK_OP_POP_ACK, resource_name(rq->group), resource_name(rq->topic), &st) &&
        change_invisible(gf, rq, handle, &st))
        resp.receipt_handle = handle;
    gr_status_to_pb(&st, &status);
    resp.status = &status;
    rmq_grpc_answer(call, &resp.base);
    rmq_grpc_unpacked_free(rq);
}

static void handle_forward_dlq(rmq_grpc_call_t *call, void *arg)
{
    const gr_front_t *gf = arg;
    Apache__Rocketmq__V2__ForwardMessageToDeadLetterQueueRequest *rq =
        rmq_grpc_decode(call, &apache__rocketmq__v2__forward_message_to_dead_letter_queue_request__descriptor);
    if (!rq)
        return;
    gr_status_t st;
    bk_result_t r;
    if (names_allowed(gf, call, BK_OP_POP_ACK, resource_name(rq->group), resource_name(rq->topic), &st)) {
        bk_pop_ack_req_t ar = ack_req(rq->group->name, rq->topic->name, rq->receipt_handle);
        bk_status_t s = bk_pop_dead_letter(gf->fe->pop, &ar, &r);
        if (s == BK_OK)
            gr_status_set(&st, CODE(OK), "OK");
        else
            gr_status_set(&st, handle_code(s), "%s", r.why);
    }
    gr_call_answer_status(call, &apache__rocketmq__v2__forward_message_to_dead_letter_queue_response__descriptor,
                          &st);
    rmq_grpc_unpacked_free(rq);
}

static const rmq_grpc_method_t rows[] = {
    {GR_PATH("QueryAssignment"), RMQ_GRPC_UNARY_REQUEST, handle_query_assignment, NULL},
    {GR_PATH("ReceiveMessage"), RMQ_GRPC_UNARY_REQUEST, handle_receive, NULL},
    {GR_PATH("AckMessage"), RMQ_GRPC_UNARY_REQUEST, handle_ack, NULL},
    {GR_PATH("ChangeInvisibleDuration"), RMQ_GRPC_UNARY_REQUEST, handle_change_invisible, NULL},
    {GR_PATH("ForwardMessageToDeadLetterQueue"), RMQ_GRPC_UNARY_REQUEST, handle_forward_dlq, NULL},
};

const gr_methods_t gr_consume_methods = {rows, sizeof(rows) / sizeof(rows[0])};
