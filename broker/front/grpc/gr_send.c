/* gr_send.c: SendMessage, EndTransaction and RecallMessage (GRPC-NOTES.md
 * §2.4, §3.5, §3.6). Each message of a SendMessage is mapped (gr_message.c), checked
 * (bk_produce_check: the caller's PUB through the one permission table,
 * the topic, the client's queue id when it names a write queue of this
 * broker, else the broker's pick) and stored through the core's send
 * (bk_send.c: back-pressure, waiting for the disk or a slave); the reply
 * has one entry per message, in order, once every message has its
 * outcome. A transactional message's transaction_id is its half message's
 * offset id (store host + commit-log offset), which EndTransaction names
 * the half by; delay rides on delivery_timestamp (the core's delivery
 * time), and such a message's entry has its recall_handle, which
 * RecallMessage takes (core/bk_recall.c: a delete marker stored through
 * the core's send; a handle of another broker, found in the topic's
 * route, is forwarded to that broker's master, rmq_grpc_recall.h). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_front.h"
#include "gr_message.h"
#include "rmq_grpc_route.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define CODE(name) APACHE__ROCKETMQ__V2__CODE__##name
#define GR_MAX_DELAY_MS (24LL * 3600 * 1000)   /* the proxy's default longest delay: one day */

/* One message's outcome. */
typedef struct gr_send_entry {
    gr_status_t st;
    char *message_id;                /* the client's id (owned) */
    char tx_id[RMQ_MSG_ID_MAX + 1];  /* a transactional message's half id, else "" */
    int64_t offset;
    char *recall_handle;             /* a timer message's (owned), else NULL */
} gr_send_entry_t;

/* A SendMessage in flight: alive while it has references (the handler's,
 * and one per send waiting for the append path). */
typedef struct gr_send_req {
    rmq_grpc_call_t *call;
    gr_front_t *gf;
    int refs;
    size_t n, answered;
    int all_sent;                    /* the handler handed every message over */
    int replied;
    gr_send_entry_t entries[];       /* n of them, allocated with the request */
} gr_send_req_t;

static void send_req_unref(gr_send_req_t *sr)
{
    if (--sr->refs > 0)
        return;
    for (size_t i = 0; i < sr->n; i++) {
        free(sr->entries[i].message_id);
        free(sr->entries[i].recall_handle);
    }
    free(sr);
}

static void send_hold(void *conn)
{
    ((gr_send_req_t *)conn)->refs++;
}

static void send_release(void *conn)
{
    send_req_unref(conn);
}

/* One entry of a SendMessage reply and its Status. */
typedef struct reply_row {
    Apache__Rocketmq__V2__SendResultEntry e;
    Apache__Rocketmq__V2__Status st;
} reply_row_t;

/* The reply, once every message has its outcome. */
static void send_reply_if_done(gr_send_req_t *sr)
{
    if (sr->replied || !sr->all_sent || sr->answered < sr->n)
        return;
    sr->replied = 1;
    Apache__Rocketmq__V2__SendMessageResponse resp = APACHE__ROCKETMQ__V2__SEND_MESSAGE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status top = APACHE__ROCKETMQ__V2__STATUS__INIT;
    /* the rows, then the entries' pointers and codes, in one block */
    size_t rows_size = sr->n * sizeof(reply_row_t), ptrs_size = sr->n * sizeof(Apache__Rocketmq__V2__SendResultEntry *);
    reply_row_t *rows = malloc(rows_size + ptrs_size + sr->n * sizeof(gr_code_t));
    if (!rows) {
        rmq_grpc_finish(sr->call, RMQ_GRPC_INTERNAL, "out of memory");
        return;
    }
    Apache__Rocketmq__V2__SendResultEntry **ep = (void *)((char *)rows + rows_size);
    gr_code_t *codes = (void *)((char *)ep + ptrs_size);
    for (size_t i = 0; i < sr->n; i++) {
        apache__rocketmq__v2__send_result_entry__init(&rows[i].e);
        gr_status_to_pb(&sr->entries[i].st, &rows[i].st);
        rows[i].e.status = &rows[i].st;
        rows[i].e.message_id = sr->entries[i].message_id ? sr->entries[i].message_id : "";
        rows[i].e.transaction_id = sr->entries[i].tx_id;
        rows[i].e.offset = sr->entries[i].offset;
        rows[i].e.recall_handle = sr->entries[i].recall_handle ? sr->entries[i].recall_handle : "";
        ep[i] = &rows[i].e;
        codes[i] = sr->entries[i].st.code;
    }
    top.code = gr_code_overall(codes, sr->n);
    top.message = sr->n == 1 ? rows[0].st.message : top.code == CODE(OK) ? "OK" : "the messages had different results";
    resp.status = &top;
    resp.n_entries = sr->n;
    resp.entries = ep;
    rmq_grpc_answer(sr->call, &resp.base);
    free(rows);
}

/* The core's answer for message *to of the request conn. */
static void send_answer(void *arg, void *conn, const void *to, const bk_append_out_t *out, const char *ids,
                        const char *recall, int32_t queue_id)
{
    (void)arg;
    (void)ids;
    (void)queue_id;
    gr_send_req_t *sr = conn;
    size_t i;
    memcpy(&i, to, sizeof(i));
    gr_send_entry_t *en = &sr->entries[i];
    gr_status_of_result(&en->st, &out->r);
    if (out->stored)
        en->offset = out->put.queue_offset;
    if (recall && !(en->recall_handle = strdup(recall)))
        LOG_ERROR_RL("SendMessage: out of memory keeping a recall handle; the entry goes without it");
    if (en->tx_id[0])                /* the half's id names it in EndTransaction */
        snprintf(en->tx_id, sizeof(en->tx_id), "%s", out->stored ? out->put.msg_id : "");
    sr->answered++;
    send_reply_if_done(sr);
}

static const bk_send_front_t send_front = {send_answer, send_hold, send_release};

/* The outcome of message i decided before the store. */
static void entry_refused(gr_send_req_t *sr, size_t i, const gr_status_t *st)
{
    sr->entries[i].st = *st;
    sr->answered++;
}

/* Maps, checks and stores message i of req. */
static void send_one(gr_send_req_t *sr, size_t i, const Apache__Rocketmq__V2__Message *msg, const bk_caller_t *who,
                     const char *topic)
{
    bk_front_t *fe = sr->gf->fe;
    rmq_conn_t *conn = rmq_grpc_call_conn(sr->call);
    gr_store_msg_t sm = {0};
    gr_status_t st;
    st_msg_t m;
    bk_result_t r;
    bk_produce_target_t tgt;
    gr_send_ctx_t ctx = {
        .now_ms = rmq_wall_ms(),
        .max_delay_ms = GR_MAX_DELAY_MS,
        .max_body_size = (size_t)sr->gf->settings.max_body_size,
        .peer_host = gr_call_peer(sr->call),
    };
    gr_send_entry_t *en = &sr->entries[i];
    if (msg->system_properties && msg->system_properties->message_id[0] &&
        !(en->message_id = strdup(msg->system_properties->message_id))) {
        gr_status_set(&st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
        entry_refused(sr, i, &st);
        return;
    }
    if (!msg->topic || strcmp(msg->topic->name, topic) != 0) {
        gr_status_set(&st, CODE(MESSAGE_CORRUPTED), "the messages of one SendMessage must share one topic");
    } else if (gr_message_to_store(msg, &ctx, &sm, &m, &st)) {
        rmq_conn_peer_ipv4(conn, &m.born_ip, &m.born_port);
        m.born_ip6 = rmq_conn_peer_ipv6(conn, &m.born_port);
        bk_produce_req_t pr = {
            .cmd = "SendMessage",
            .topic = topic,
            .producer_group = "",
            .default_topic = "TBW102",
            .default_topic_queue_nums = 4,
            .queue_id = m.queue_id,
            .body_len = m.body_len,
            .who = who,
        };
        int ok = bk_produce_check(fe->produce, &pr, &tgt, &r);
        if (!ok && r.status == BK_BAD_REQUEST && pr.queue_id >= 0) {
            pr.queue_id = -1;        /* not a write queue here: the broker picks one */
            ok = bk_produce_check(fe->produce, &pr, &tgt, &r);
        }
        if (!ok) {
            gr_status_of_result(&st, &r);
            goto refused;
        }
        if (bk_send_full(fe->send)) {
            gr_status_set(&st, CODE(TOO_MANY_REQUESTS), "system busy: %zu sends queued or waiting (sendQueueCapacity=%zu)",
                          bk_send_waiting(fe->send), bk_send_capacity(fe->send));
            goto refused;
        }
        if (m.sys_flag & GR_SYSFLAG_TX_PREPARED)
            en->tx_id[0] = '?';      /* filled with the half's id when stored */
        bk_send_call_t call = {
            .front = &send_front,
            .conn = sr,
            .to = &i,
            .to_len = sizeof(i),
            .body_len = m.body_len,
        };
        bk_send_store(fe->send, &call, &tgt, &m, 1);
        gr_store_msg_deinit(&sm);
        return;
    }
refused:
    gr_store_msg_deinit(&sm);
    entry_refused(sr, i, &st);
}

static void handle_send(rmq_grpc_call_t *call, void *arg)
{
    gr_front_t *gf = arg;
    const ProtobufCMessageDescriptor *resp = &apache__rocketmq__v2__send_message_response__descriptor;
    Apache__Rocketmq__V2__SendMessageRequest *req =
        rmq_grpc_decode(call, &apache__rocketmq__v2__send_message_request__descriptor);
    if (!req)
        return;
    gr_status_t st;
    bk_caller_t who;
    gr_send_req_t *sr = NULL;
    if (req->n_messages == 0 || !req->messages[0]->topic)
        gr_status_set(&st, CODE(MESSAGE_CORRUPTED), "SendMessage holds no message with a topic");
    else if (gr_call_client_id(call, &st) && gr_call_caller(gf, call, &who, &st) &&
             !(sr = calloc(1, sizeof(*sr) + req->n_messages * sizeof(sr->entries[0]))))
        gr_status_set(&st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    if (!sr) {
        gr_call_answer_status(call, resp, &st);
        rmq_grpc_unpacked_free(req);
        return;
    }
    sr->call = call;
    sr->gf = gf;
    sr->refs = 1;
    sr->n = req->n_messages;
    const char *topic = req->messages[0]->topic->name;
    for (size_t i = 0; i < req->n_messages; i++)
        send_one(sr, i, req->messages[i], &who, topic);
    sr->all_sent = 1;
    send_reply_if_done(sr);
    send_req_unref(sr);
    rmq_grpc_unpacked_free(req);
}

/* ---- EndTransaction ------------------------------------------------------------- */

static void end_answer(const bk_append_out_t *out, void *arg)
{
    rmq_grpc_call_t *call = arg;
    rmq_grpc_answer_status(call, &apache__rocketmq__v2__end_transaction_response__descriptor,
                           gr_code_of_status(out->r.status), out->r.status == BK_OK ? "OK" : out->r.why);
}

/* The half message's commit-log offset from transaction_id (its offset
 * id): 1, or 0 with st INVALID_TRANSACTION_ID. */
static int half_offset(const char *transaction_id, int64_t *offset, gr_status_t *st)
{
    char addr[64];
    if (transaction_id[0] && rmq_msg_id_parse(transaction_id, addr, sizeof(addr), offset) == RMQ_OK)
        return 1;
    return gr_status_set(st, CODE(INVALID_TRANSACTION_ID), "transaction_id '%.80s' is no transaction of this broker",
                         transaction_id);
}

/* EndTransaction: the half message named by transaction_id, of the
 * producer group the topic is (gr_message.c's PGROUP), committed or
 * rolled back by the core, which checks the caller's PUB on the topic. */
static void handle_end_transaction(rmq_grpc_call_t *call, void *arg)
{
    gr_front_t *gf = arg;
    const ProtobufCMessageDescriptor *resp = &apache__rocketmq__v2__end_transaction_response__descriptor;
    Apache__Rocketmq__V2__EndTransactionRequest *req =
        rmq_grpc_decode(call, &apache__rocketmq__v2__end_transaction_request__descriptor);
    if (!req)
        return;
    gr_status_t st;
    bk_caller_t who;
    int64_t offset;
    int state = req->resolution == APACHE__ROCKETMQ__V2__TRANSACTION_RESOLUTION__COMMIT     ? BK_TX_COMMIT
                : req->resolution == APACHE__ROCKETMQ__V2__TRANSACTION_RESOLUTION__ROLLBACK ? BK_TX_ROLLBACK
                                                                                           : -1;
    if (!req->topic || !req->topic->name[0])
        gr_status_set(&st, CODE(ILLEGAL_TOPIC), "EndTransaction names no topic");
    else if (state < 0)
        gr_status_set(&st, CODE(BAD_REQUEST), "EndTransaction resolution %d is neither COMMIT nor ROLLBACK",
                      (int)req->resolution);
    else if (half_offset(req->transaction_id, &offset, &st) && gr_call_caller(gf, call, &who, &st)) {
        bk_tx_end_req_t er = {
            .producer_group = req->topic->name,
            .commit_log_offset = offset,
            .state = state,
            .msg_id = req->message_id,
            .from_check = req->source == APACHE__ROCKETMQ__V2__TRANSACTION_SOURCE__SOURCE_SERVER_CHECK,
            .who = &who,
        };
        bk_append_out_t out;
        if (bk_tx_end(gf->fe->tx, &er, &out, end_answer, call))
            end_answer(&out, call);
        rmq_grpc_unpacked_free(req);
        return;
    }
    gr_call_answer_status(call, resp, &st);
    rmq_grpc_unpacked_free(req);
}

/* ---- RecallMessage ---------------------------------------------------------------- */

/* The core's answer to a recall (conn is the call): OK with the recalled
 * message's id once the marker is stored, as RocketMQ's broker counts a
 * flush or slave timeout a success too. */
static void recall_answer(void *arg, void *conn, const void *to, const bk_append_out_t *out, const char *ids,
                          const char *recall, int32_t queue_id)
{
    (void)arg;
    (void)to;
    (void)recall;
    (void)queue_id;
    Apache__Rocketmq__V2__RecallMessageResponse resp = APACHE__ROCKETMQ__V2__RECALL_MESSAGE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st = APACHE__ROCKETMQ__V2__STATUS__INIT;
    st.code = out->stored ? CODE(OK) : gr_code_of_status(out->r.status);
    st.message = out->stored ? "OK" : (char *)out->r.why;
    resp.status = &st;
    resp.message_id = out->stored ? (char *)ids : "";
    rmq_grpc_answer(conn, &resp.base);
}

/* A call lives until it is answered: nothing to hold. */
static void call_keep(void *conn)
{
    (void)conn;
}

static const bk_send_front_t recall_front = {recall_answer, call_keep, call_keep};

/* A recall whose handle names another broker, waiting for the topic's
 * route to name that broker's master. */
typedef struct recall_away {
    gr_front_t *gf;
    rmq_acl_credentials_t cred;      /* the caller's, to sign the forwarded recall */
    char broker[RMQ_RECALL_NAME_MAX + 1];
    char *handle;
} recall_away_t;

static void recall_away_free(recall_away_t *ra)
{
    free(ra->handle);
    free(ra);
}

/* Forwards ra to its broker's master in rd: 1, or 0 with st set. */
static int recall_send_routed(recall_away_t *ra, rmq_grpc_call_t *call, const Rmq__TopicRouteData *rd,
                              const char *topic, gr_status_t *st)
{
    const char *master = rmq_grpc_route_master(rd->broker_datas, rd->n_broker_datas, ra->broker);
    if (!master)
        return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR),
                             "recall failed, broker %s has no master in the route of %s", ra->broker, topic);
    st->code = CODE(INTERNAL_SERVER_ERROR);
    return rmq_recall_forward(ra->gf->recalls, call, &ra->cred, ra->broker, master, topic, ra->handle, st->message,
                              sizeof(st->message));
}

/* gr_route_fn: the recall forwarded to its broker's master in the route
 * (rd NULL: the call was answered, only ra is left to free). */
static void recall_routed(rmq_grpc_call_t *call, const Rmq__TopicRouteData *rd, const char *topic, void *arg)
{
    recall_away_t *ra = arg;
    gr_status_t st;
    if (rd && !recall_send_routed(ra, call, rd, topic, &st))
        gr_call_answer_status(call, &apache__rocketmq__v2__recall_message_response__descriptor, &st);
    recall_away_free(ra);
}

/* Forwards the recall of req, whose handle names broker, to that broker's
 * master, found in the topic's route (RocketMQ's proxy does the same): 1,
 * or 0 with st set (call unanswered). */
static int recall_forward_away(gr_front_t *gf, rmq_grpc_call_t *call, const bk_caller_t *who,
                               const Apache__Rocketmq__V2__RecallMessageRequest *req, const char *broker,
                               gr_status_t *st)
{
    recall_away_t *ra = calloc(1, sizeof(*ra));
    if (!ra || !(ra->handle = strdup(req->recall_handle))) {
        free(ra);
        return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    }
    ra->gf = gf;
    rmq_acl_credentials_of(who->account, &ra->cred);
    snprintf(ra->broker, sizeof(ra->broker), "%s", broker);
    if (gr_route_fetch(gf, call, req->topic->name, &apache__rocketmq__v2__recall_message_response__descriptor,
                       recall_routed, ra, st))
        return 1;
    recall_away_free(ra);
    return 0;
}

/* RecallMessage: the topic's timer message named by recall_handle
 * cancelled through the core's recall, which checks the caller's PUB; a
 * handle naming another broker is forwarded to its master, which checks
 * it, since a 5.x client sends its recalls to its access point. 1 when
 * under way (call answered later), or 0 with st set. */
static int recall_start(gr_front_t *gf, rmq_grpc_call_t *call, const Apache__Rocketmq__V2__RecallMessageRequest *req,
                        gr_status_t *st)
{
    bk_caller_t who;
    bk_result_t r;
    bk_recall_marker_t mk;
    char broker[RMQ_RECALL_NAME_MAX + 1];
    if (!req->topic || !req->topic->name[0])
        return gr_status_set(st, CODE(ILLEGAL_TOPIC), "RecallMessage names no topic");
    if (!gr_call_caller(gf, call, &who, st))
        return 0;
    if (bk_recall_elsewhere(gf->fe->recall, req->recall_handle, broker))
        return recall_forward_away(gf, call, &who, req, broker, st);
    if (bk_send_full(gf->fe->send))
        return gr_status_set(st, CODE(TOO_MANY_REQUESTS), "system busy: %zu sends queued or waiting "
                             "(sendQueueCapacity=%zu)", bk_send_waiting(gf->fe->send), bk_send_capacity(gf->fe->send));
    bk_recall_req_t rr = {.topic = req->topic->name, .handle = req->recall_handle, .who = &who};
    if (!bk_recall_check(gf->fe->recall, &rr, &mk, &r))
        return gr_status_of_result(st, &r);
    bk_send_call_t sc = {.front = &recall_front, .conn = call, .to = "", .to_len = 0,
                         .body_len = mk.msg.body_len, .ids = mk.msg_id};
    bk_send_store(gf->fe->send, &sc, &mk.tgt, &mk.msg, 1);
    return 1;
}

static void handle_recall(rmq_grpc_call_t *call, void *arg)
{
    gr_front_t *gf = arg;
    Apache__Rocketmq__V2__RecallMessageRequest *req =
        rmq_grpc_decode(call, &apache__rocketmq__v2__recall_message_request__descriptor);
    if (!req)
        return;
    gr_status_t st;
    if (!recall_start(gf, call, req, &st))
        gr_call_answer_status(call, &apache__rocketmq__v2__recall_message_response__descriptor, &st);
    rmq_grpc_unpacked_free(req);
}

static const rmq_grpc_method_t rows[] = {
    {GR_PATH("SendMessage"), RMQ_GRPC_UNARY_REQUEST, handle_send, NULL},
    {GR_PATH("EndTransaction"), RMQ_GRPC_UNARY_REQUEST, handle_end_transaction, NULL},
    {GR_PATH("RecallMessage"), RMQ_GRPC_UNARY_REQUEST, handle_recall, NULL},
};

const gr_methods_t gr_send_methods = {rows, sizeof(rows) / sizeof(rows[0])};
