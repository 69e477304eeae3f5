/* fr_remoting_diag.c: an operator's questions to consumers, put through
 * the broker as RocketMQ's AdminBrokerProcessor and Broker2Client do:
 * GET_CONSUMER_RUNNING_INFO (307) and CONSUME_MESSAGE_DIRECTLY (309) name
 * the group and client id; INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223) asks
 * every client of a group (GET_CONSUMER_STATUS_FROM_CLIENT 221) and
 * gathers their offsets; the broker sends the client the same request
 * over its session (core/bk_clients.c finds it), waits for its response by
 * opaque with a timeout, and hands the client's body back to the operator,
 * or SYSTEM_ERROR naming why there is none. This file owns the questions
 * in flight (fr_remoting_t.asks) and the handler of the responses clients
 * send on the broker's port. */
#include <event2/event.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_clients.h"
#include "bk_query.h"
#include "fr_remoting.h"
#include "fr_remoting_admin_wire.h"
#include "rmq_http.h"
#include "rmq_log.h"
#include "rmq_message.h"

/* The most clients of one group a consumer-status request asks. */
#define FR_RM_STATUS_CLIENTS_MAX 1024

/* One question in flight: the client's connection and the opaque its answer carries. */
struct fr_rm_ask {
    fr_rm_ask_t *next;
    fr_remoting_t *rm;
    rmq_conn_t *conn;                /* the asked client's (referenced) */
    int32_t opaque;
    int64_t timeout_ms;
    struct event *timer;
    bk_client_answer_fn fn;
    void *arg;
};

/* Unlinks a from rm's list and frees it (fn already called or never to be). */
static void ask_free(fr_rm_ask_t *a)
{
    fr_rm_ask_t **p = &a->rm->asks;
    while (*p && *p != a)
        p = &(*p)->next;
    if (*p)
        *p = a->next;
    if (a->timer)
        event_free(a->timer);
    rmq_conn_unref(a->conn);
    free(a);
}

/* Calls a's fn with ans, then frees a. */
static void ask_finish(fr_rm_ask_t *a, const bk_client_answer_t *ans)
{
    bk_client_answer_fn fn = a->fn;
    void *arg = a->arg;
    ask_free(a);
    fn(arg, ans);
}

static void ask_timed_out(evutil_socket_t fd, short what, void *arg)
{
    fr_rm_ask_t *a = arg;
    char why[160];
    (void)fd;
    (void)what;
    snprintf(why, sizeof why, "the client at %s did not answer within %" PRId64 " ms%s", rmq_conn_peer(a->conn),
             a->timeout_ms, rmq_conn_is_open(a->conn) ? "" : " (its connection closed)");
    bk_client_answer_t ans = {0, why, NULL, 0};
    ask_finish(a, &ans);
}

int32_t fr_rm_ask_add(fr_remoting_t *rm, rmq_conn_t *conn, int64_t timeout_ms, bk_client_answer_fn fn, void *arg)
{
    fr_rm_ask_t *a = calloc(1, sizeof(*a));
    if (!a)
        return 0;
    a->rm = rm;
    a->conn = conn;
    rmq_conn_ref(conn);
    a->timeout_ms = timeout_ms;
    a->fn = fn;
    a->arg = arg;
    a->next = rm->asks;
    rm->asks = a;
    if (++rm->next_opaque == 0)
        ++rm->next_opaque;
    a->opaque = rm->next_opaque;
    struct timeval tv = {(time_t)(timeout_ms / 1000), (suseconds_t)(timeout_ms % 1000) * 1000};
    a->timer = evtimer_new(rm->fe->node->base, ask_timed_out, a);
    if (!a->timer || evtimer_add(a->timer, &tv) != 0) {
        ask_free(a);
        return 0;
    }
    return a->opaque;
}

void fr_rm_ask_cancel(fr_remoting_t *rm, int32_t opaque)
{
    for (fr_rm_ask_t *a = rm->asks; a; a = a->next)
        if (a->opaque == opaque) {
            ask_free(a);
            return;
        }
}

void fr_rm_ask_free_all(fr_remoting_t *rm)
{
    while (rm->asks) {
        bk_client_answer_t ans = {0, "the broker is stopping", NULL, 0};
        ask_finish(rm->asks, &ans);
    }
}

void fr_rm_handle_answer(rmq_conn_t *conn, const rmq_remoting_request_t *resp, void *arg)
{
    fr_remoting_t *rm = arg;
    fr_rm_ask_t *a = rm->asks;
    char why[512];
    while (a && (a->opaque != resp->opaque || a->conn != conn))
        a = a->next;
    if (!a) {
        LOG_WARN_RL("remoting: a response (code %d, opaque %d) from %s answers no question of the broker",
                    resp->code, (int)resp->opaque, rmq_conn_peer(conn));
        return;
    }
    snprintf(why, sizeof why, "the client at %s answered code %d: %.400s", rmq_conn_peer(conn), resp->code,
             resp->remark);
    bk_client_answer_t ans = {resp->code == RMQ_REMOTING_SUCCESS, resp->code == RMQ_REMOTING_SUCCESS ? "" : why,
                              resp->body, resp->body_len};
    ask_finish(a, &ans);
}

/* ---- the operator's side -------------------------------------------------- */

/* Where the client's answer goes: the operator's connection (referenced). */
typedef struct ask_reply {
    rmq_conn_t *conn;
    fr_rm_to_t to;
} ask_reply_t;

/* bk_client_answer_fn: the client's body as the operator's answer, or
 * SYSTEM_ERROR with why none came. */
static void reply_answer(void *arg, const bk_client_answer_t *ans)
{
    ask_reply_t *ar = arg;
    rmq_remoting_reply_t rep = {.code = ans->ok ? RMQ_REMOTING_SUCCESS : RMQ_REMOTING_SYSTEM_ERROR,
                                .remark = ans->ok ? NULL : ans->why, .body = ans->body, .body_len = ans->body_len};
    fr_rm_reply_to(ar->conn, &ar->to, &rep);
    rmq_conn_unref(ar->conn);
    free(ar);
}

/* Puts q to its client and answers req once the client did (or did not). */
static void ask_and_reply(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req,
                          const bk_client_ask_t *q)
{
    bk_result_t r;
    ask_reply_t *ar = malloc(sizeof(*ar));
    if (!ar) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
        return;
    }
    ar->conn = conn;
    ar->to = fr_rm_to(req);
    rmq_conn_ref(conn);
    if (bk_clients_ask(rm->fe->clients, q, reply_answer, ar, &r) != BK_OK) {
        rmq_conn_unref(conn);
        free(ar);
        fr_rm_reply_result(conn, req, &r);
    }
}

/* GET_CONSUMER_RUNNING_INFO: consumerGroup, clientId, jstackEnable. */
void fr_rm_handle_running_info(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_client_ask_t q = {.kind = BK_ASK_RUNNING_INFO, .timeout_ms = FR_RM_ASK_TIMEOUT_MS};
    q.group = fr_rm_str(conn, req, "consumerGroup", NULL, 1, NULL);
    q.client_id = q.group ? fr_rm_str(conn, req, "clientId", NULL, 1, NULL) : NULL;
    if (!q.client_id || fr_rm_bool(conn, req, "jstackEnable", 0, 0, &q.jstack) != 0 ||
        !fr_rm_allowed(rm, conn, req, NULL, q.group))
        return;
    ask_and_reply(rm, conn, req, &q);
}

/* CONSUME_MESSAGE_DIRECTLY: consumerGroup, clientId, msgId (the message's
 * offset id; the broker sends the client the stored message), brokerName. */
void fr_rm_handle_consume_directly(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_client_ask_t q = {.kind = BK_ASK_CONSUME_DIRECTLY, .timeout_ms = FR_RM_ASK_TIMEOUT_MS,
                         .broker_name = rm->fe->node->cfg->broker_name};
    char host[RMQ_HOST_TEXT_MAX];
    int64_t phys;
    bk_result_t r;
    bk_caller_t who;
    bk_perm_reader_t rd;
    q.group = fr_rm_str(conn, req, "consumerGroup", NULL, 1, NULL);
    q.client_id = q.group ? fr_rm_str(conn, req, "clientId", NULL, 1, NULL) : NULL;
    q.msg_id = q.client_id ? fr_rm_str(conn, req, "msgId", NULL, 1, NULL) : NULL;
    if (!q.msg_id || !fr_rm_allowed(rm, conn, req, NULL, q.group) || fr_rm_caller(rm, conn, req, &who) != 0)
        return;
    if (rmq_msg_id_parse(q.msg_id, host, sizeof host, &phys) != RMQ_OK) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR,
                            "CONSUME_MESSAGE_DIRECTLY: msgId '%.64s' is not an offset message id", q.msg_id);
        return;
    }
    struct evbuffer *rec = evbuffer_new();
    if (!rec) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
        return;
    }
    bk_query_view(rm->fe->node->store, phys, bk_perm_reader_init(&rd, &who, BK_OP_VIEW), rec, &r);
    q.record_len = evbuffer_get_length(rec);
    q.record = q.record_len ? evbuffer_pullup(rec, -1) : NULL;
    if (r.status != BK_OK)
        fr_rm_reply_result(conn, req, &r);
    else
        ask_and_reply(rm, conn, req, &q);
    evbuffer_free(rec);
}

/* ---- a group's consumer status: one question to each of its clients ----- */

/* The operator's INVOKE_BROKER_TO_GET_CONSUMER_STATUS, answered once every
 * asked client answered or timed out. */
typedef struct status_gather {
    rmq_conn_t *conn;                /* the operator's (referenced) */
    fr_rm_to_t to;
    size_t pending;                  /* questions out, plus one while they are put */
    struct evbuffer *table;          /* consumerTable members so far */
    int members;
} status_gather_t;

/* One client's question (bk_client_answer_fn's arg). */
typedef struct status_ask {
    status_gather_t *g;
    char client_id[256];
} status_ask_t;

/* Drops one pending; the last answers GetConsumerStatusBody
 * {consumerTable: {clientId: {MessageQueue: offset}}, messageQueueTable: {}}. */
static void gather_done(status_gather_t *g)
{
    if (--g->pending)
        return;
    struct evbuffer *b = evbuffer_new();
    rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS};
    if (b && evbuffer_add(b, "{\"consumerTable\":{", 18) == 0 && evbuffer_add_buffer(b, g->table) == 0 &&
        evbuffer_add(b, "},\"messageQueueTable\":{}}", 25) == 0) {
        rep.body_len = evbuffer_get_length(b);
        rep.body = evbuffer_pullup(b, -1);
    } else
        rep = (rmq_remoting_reply_t){.code = RMQ_REMOTING_SYSTEM_ERROR,
                                     .remark = "INVOKE_BROKER_TO_GET_CONSUMER_STATUS: out of memory"};
    fr_rm_reply_to(g->conn, &g->to, &rep);
    if (b)
        evbuffer_free(b);
    evbuffer_free(g->table);
    rmq_conn_unref(g->conn);
    free(g);
}

/* bk_client_answer_fn: adds the client's offsets; a client that refused or
 * did not answer is left out, as RocketMQ's broker leaves it. */
static void status_answer(void *arg, const bk_client_answer_t *ans)
{
    status_ask_t *a = arg;
    status_gather_t *g = a->g;
    const uint8_t *table;
    size_t len;
    if (ans->ok && fr_rm_consumer_status_table(ans->body, ans->body_len, &table, &len) == 0) {
        if (g->members++)
            evbuffer_add(g->table, ",", 1);
        rmq_json_str(g->table, a->client_id);
        evbuffer_add(g->table, ":", 1);
        evbuffer_add(g->table, table, len);
    } else if (ans->ok)
        LOG_WARN_RL("INVOKE_BROKER_TO_GET_CONSUMER_STATUS: client %s answered no messageQueueTable", a->client_id);
    free(a);
    gather_done(g);
}

/* Asks client_id of q's group (q->client_id set here) for its status. */
static void status_ask_one(fr_remoting_t *rm, status_gather_t *g, bk_client_ask_t *q, const char *client_id)
{
    bk_result_t r;
    status_ask_t *a = malloc(sizeof(*a));
    if (!a)
        return;
    a->g = g;
    snprintf(a->client_id, sizeof a->client_id, "%s", client_id);
    q->client_id = a->client_id;
    g->pending++;
    if (bk_clients_ask(rm->fe->clients, q, status_answer, a, &r) != BK_OK) {
        g->pending--;
        free(a);
    }
}

/* INVOKE_BROKER_TO_GET_CONSUMER_STATUS (mqadmin getConsumerStatus): topic,
 * group, clientAddr (a client id; absent: every client of the group). The
 * broker asks each client GET_CONSUMER_STATUS_FROM_CLIENT and answers what
 * they answered, or SYSTEM_ERROR when the group has no client here. */
void fr_rm_handle_consumer_status(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_client_ask_t q = {.kind = BK_ASK_CONSUMER_STATUS, .timeout_ms = FR_RM_ASK_TIMEOUT_MS};
    const char *ids[FR_RM_STATUS_CLIENTS_MAX];
    q.topic = fr_rm_str(conn, req, "topic", NULL, 1, NULL);
    q.group = q.topic ? fr_rm_str(conn, req, "group", NULL, 1, NULL) : NULL;
    const char *only = q.group ? fr_rm_str(conn, req, "clientAddr", NULL, 0, "") : NULL;
    if (!only || !fr_rm_allowed(rm, conn, req, q.topic, q.group))
        return;
    size_t n = bk_clients_ids(rm->fe->clients, q.group, ids, FR_RM_STATUS_CLIENTS_MAX);
    if (n == 0) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "No Any Consumer online in the consumer group: [%s]",
                            q.group);
        return;
    }
    status_gather_t *g = calloc(1, sizeof(*g));
    if (!g || !(g->table = evbuffer_new())) {
        free(g);
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
        return;
    }
    g->conn = conn;
    g->to = fr_rm_to(req);
    g->pending = 1;
    rmq_conn_ref(conn);
    for (size_t i = 0; i < n && i < FR_RM_STATUS_CLIENTS_MAX; i++)
        if (!only[0] || strcmp(only, ids[i]) == 0)
            status_ask_one(rm, g, &q, ids[i]);
    gather_done(g);
}
