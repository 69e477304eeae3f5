/* fr_remoting.c: the remoting front's set-up (codec, the one table of
 * codes, their handlers and the core's operation each is, ACL signatures),
 * who signed a request and whether the core lets them (bk_perm.h), its
 * reply helpers, the neutral-status-to-response-code
 * table, extField readers, and its session (core/bk_session.h): ids-changed
 * notices pushed as oneway NOTIFY_CONSUMER_IDS_CHANGED requests in the
 * encoding the client itself uses, questions put to a client and replies
 * pushed to a requester (PUSH_REPLY_MESSAGE_TO_CLIENT). */
#include "fr_remoting.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "fr_remoting_admin_wire.h"
#include "fr_remoting_wire.h"
#include "fr_session.h"
#include "rmq_fmt.h"
#include "rmq_log.h"

#define CODE_CHECK_TRANSACTION_STATE 39
#define CODE_NOTIFY_CONSUMER_IDS_CHANGED 40
#define CODE_RESET_CONSUMER_CLIENT_OFFSET 220
#define CODE_GET_CONSUMER_STATUS_FROM_CLIENT 221
#define CODE_GET_CONSUMER_RUNNING_INFO 307
#define CODE_CONSUME_MESSAGE_DIRECTLY 309
#define CODE_PUSH_REPLY_MESSAGE_TO_CLIENT 326

/* ---- replies ------------------------------------------------------------- */

fr_rm_to_t fr_rm_to(const rmq_remoting_request_t *req)
{
    return (fr_rm_to_t){req->serialize_type, req->opaque, req->flags, req->version};
}

void fr_rm_reply_to(rmq_conn_t *conn, const fr_rm_to_t *to, const rmq_remoting_reply_t *rep)
{
    rmq_remoting_request_t req = {
        .serialize_type = to->serialize_type,
        .opaque = to->opaque,
        .flags = to->flags,
        .version = to->version,
    };
    rmq_remoting_reply(conn, &req, rep);
}

int fr_rm_status_code(bk_status_t status)
{
    static const int code[] = {
        [BK_OK] = 0,
        [BK_BAD_REQUEST] = 1,                /* RocketMQ: SYSTEM_ERROR with the reason */
        [BK_MESSAGE_ILLEGAL] = 13,
        [BK_MESSAGE_TOO_LARGE] = 13,         /* MESSAGE_ILLEGAL, as RocketMQ's broker */
        [BK_NAME_ILLEGAL] = 1,               /* TopicValidator answers SYSTEM_ERROR */
        [BK_NO_PERMISSION] = 16,
        [BK_TOPIC_NOT_EXIST] = 17,
        [BK_GROUP_NOT_EXIST] = 26,
        [BK_NOT_MASTER] = 14,                /* SERVICE_NOT_AVAILABLE */
        [BK_SHUTDOWN] = 14,
        [BK_DISK_FULL] = 14,
        [BK_WRITE_ERROR] = 14,
        [BK_FLUSH_DISK_TIMEOUT] = 10,
        [BK_FLUSH_SLAVE_TIMEOUT] = 12,
        [BK_SLAVE_NOT_AVAILABLE] = 11,
        [BK_IN_SYNC_REPLICAS_NOT_ENOUGH] = 1, /* SYSTEM_ERROR "in-sync replicas not enough" */
        [BK_BUSY] = 2,
        [BK_TRANSACTION_FAILED] = 1,
        [BK_SUBSCRIPTION_PARSE_FAILED] = 23,
        [BK_NOT_FOUND] = 22,                 /* QUERY_NOT_FOUND */
        [BK_ILLEGAL_OPERATION] = 604,        /* ILLEGAL_OPERATION */
        [BK_INVALID_PARAMETER] = RMQ_REMOTING_INVALID_PARAMETER,
        [BK_SYSTEM_ERROR] = 1,
    };
    if ((unsigned)status < sizeof(code) / sizeof(code[0]))
        return code[status];
    return RMQ_REMOTING_SYSTEM_ERROR;
}

void fr_rm_reply_body(rmq_conn_t *conn, const rmq_remoting_request_t *req, struct evbuffer *body)
{
    size_t len = body ? evbuffer_get_length(body) : 0;
    const void *data = len ? evbuffer_pullup(body, -1) : NULL;
    if (data || len == 0) {
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .body = data, .body_len = len};
        rmq_remoting_reply(conn, req, &rep);
    } else {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
    }
}

void fr_rm_reply_result(rmq_conn_t *conn, const rmq_remoting_request_t *req, const bk_result_t *r)
{
    rmq_remoting_reply_t rep = {.code = fr_rm_status_code(r->status), .remark = r->why};
    rmq_remoting_reply(conn, req, &rep);
}

/* ---- extFields ----------------------------------------------------------- */

const char *fr_rm_str(rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *key, const char *alt,
                      int required, const char *dflt)
{
    const char *v = rmq_remoting_field(req, key);
    if (!v && alt)
        v = rmq_remoting_field(req, alt);
    if (v)
        return v;
    if (required)
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d needs extField %s%s%s%s",
                            req->code, key, alt ? " (or " : "", alt ? alt : "", alt ? ")" : "");
    return required ? NULL : dflt;
}

int fr_rm_int(rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *key, const char *alt,
              int required, int64_t min, int64_t max, int64_t dflt, int64_t *out)
{
    const char *v = fr_rm_str(conn, req, key, alt, required, NULL);
    int64_t n;
    if (!v) {
        *out = dflt;
        return required ? -1 : 0;
    }
    if (rmq_parse_i64(v, &n) != 0 || n < min || n > max) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR,
                            "request code %d: extField %s%s%s%s='%.64s' is not an integer in [%" PRId64 ", %" PRId64 "]",
                            req->code, key, alt ? " (or " : "", alt ? alt : "", alt ? ")" : "", v, min, max);
        return -1;
    }
    *out = n;
    return 0;
}

int fr_rm_bool(rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *key, int required, int dflt,
               int *out)
{
    const char *v = fr_rm_str(conn, req, key, NULL, required, NULL);
    *out = dflt;
    if (!v)
        return required ? -1 : 0;
    if (strcasecmp(v, "true") == 0 || strcasecmp(v, "false") == 0) {
        *out = strcasecmp(v, "true") == 0;
        return 0;
    }
    rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR,
                        "request code %d: extField %s='%.64s' is not true or false", req->code, key, v);
    return -1;
}

/* ---- who asks, and may they ------------------------------------------------ */

int fr_rm_caller(const fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req, bk_caller_t *who)
{
    *who = (bk_caller_t){NULL, NULL, NULL};
    if (!rm->fe->node->sec->acl)
        return 0;                    /* access control off: trusted */
    who->peer = rmq_conn_peer(conn);
    if (rmq_acl_account_of(rm->fe->node->sec->acl, who->peer, rmq_remoting_field(req, "AccessKey"), &who->account) >= 0)
        return 0;
    rmq_remoting_replyf(conn, req, RMQ_REMOTING_NO_PERMISSION,
                        "request code %d from %s is not signed by a known account", req->code, rmq_conn_peer(conn));
    return -1;
}

int fr_rm_allowed(const fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *topic,
                  const char *group)
{
    bk_caller_t who;
    bk_result_t r;
    if (fr_rm_caller(rm, conn, req, &who) != 0)
        return 0;
    if (!who.account || bk_perm_check(&who, fr_rm_op(req->code), topic, group, &r))
        return 1;
    fr_rm_reply_result(conn, req, &r);
    return 0;
}

/* ---- session -------------------------------------------------------------- */

/* A remoting client as the core sees it. Kept as the connection's data, so
 * the broker's close hook (fr_session_conn_closed) drops it like a native one. */
typedef struct rm_session {
    bk_session_t base;               /* first */
    fr_remoting_t *rm;
    rmq_conn_t *conn;                /* referenced */
    int serialize_type;
    int version;
} rm_session_t;

/* Writes a request of code with flags, opaque, fields and body to the session's client. */
static rmq_err_t rs_send(rm_session_t *rs, int code, int32_t flags, int32_t opaque, const rmq_remoting_field_t *f,
                         size_t n, const void *body, size_t body_len)
{
    struct evbuffer *out = rmq_conn_output(rs->conn);
    if (!out)
        return RMQ_ECLOSED;
    rmq_remoting_reply_t rep = {.code = code, .fields = f, .n_fields = n, .body = body, .body_len = body_len};
    rmq_err_t err = rmq_remoting_encode(out, rs->serialize_type, code, opaque, flags, rs->version, &rep);
    rmq_conn_output_done(rs->conn);
    return err;
}

/* Writes a oneway request of code with fields and body to the session's client. */
static rmq_err_t rs_push(rm_session_t *rs, int code, const rmq_remoting_field_t *f, size_t n, const void *body,
                         size_t body_len)
{
    return rs_send(rs, code, RMQ_REMOTING_FLAG_ONEWAY, ++rs->rm->next_opaque, f, n, body, body_len);
}

static rmq_err_t rs_notify_ids_changed(bk_session_t *ss, const char *group)
{
    rmq_remoting_field_t f = {"consumerGroup", (char *)group};
    return rs_push((rm_session_t *)ss, CODE_NOTIFY_CONSUMER_IDS_CHANGED, &f, 1, NULL, 0);
}

/* RESET_CONSUMER_CLIENT_OFFSET: a ResetOffsetRequestHeader and the
 * ResetOffsetBody the client's offset store takes. */
static rmq_err_t rs_reset_offset(bk_session_t *ss, const bk_offset_reset_t *reset)
{
    rm_session_t *rs = (rm_session_t *)ss;
    struct evbuffer *body = evbuffer_new();
    if (!body)
        return RMQ_ENOMEM;
    char ts[24];
    snprintf(ts, sizeof(ts), "%" PRId64, reset->timestamp);
    rmq_remoting_field_t f[] = {
        {"topic", (char *)reset->topic},
        {"group", (char *)reset->group},
        {"timestamp", ts},
        {"isForce", "false"},
    };
    fr_rm_reset_offset_json(body, reset, rs->rm->fe->node->cfg->broker_name);
    size_t len = evbuffer_get_length(body);
    const void *data = evbuffer_pullup(body, -1);
    rmq_err_t err = data ? rs_push(rs, CODE_RESET_CONSUMER_CLIENT_OFFSET, f, sizeof(f) / sizeof(f[0]), data, len)
                         : RMQ_ENOMEM;
    evbuffer_free(body);
    return err;
}

/* The numbers of a pushed reply's header, as text. */
typedef struct reply_nums {
    char dqn[RMQ_FMT_I64_LEN], qid[RMQ_FMT_I64_LEN], sys[RMQ_FMT_I64_LEN], born[RMQ_FMT_I64_LEN],
        flag[RMQ_FMT_I64_LEN], recon[RMQ_FMT_I64_LEN], store[RMQ_FMT_I64_LEN];
} reply_nums_t;

#define REPLY_FIELDS 14

/* RocketMQ's ReplyMessageRequestHeader of rp into f[REPLY_FIELDS] (its
 * numbers written into nb); the client requires each but properties and
 * reconsumeTimes. */
static void reply_fields(const bk_reply_push_t *rp, reply_nums_t *nb, rmq_remoting_field_t *f)
{
    rmq_fmt_i64(nb->dqn, rp->default_topic_queue_nums);
    rmq_fmt_i64(nb->qid, rp->queue_id);
    rmq_fmt_i64(nb->sys, rp->sys_flag);
    rmq_fmt_i64(nb->born, rp->born_timestamp);
    rmq_fmt_i64(nb->flag, rp->flag);
    rmq_fmt_i64(nb->recon, rp->reconsume_times);
    rmq_fmt_i64(nb->store, rp->store_timestamp);
    rmq_remoting_field_t v[REPLY_FIELDS] = {
        {"producerGroup", (char *)rp->producer_group},
        {"topic", (char *)rp->topic},
        {"defaultTopic", (char *)rp->default_topic},
        {"defaultTopicQueueNums", nb->dqn},
        {"queueId", nb->qid},
        {"sysFlag", nb->sys},
        {"bornTimestamp", nb->born},
        {"flag", nb->flag},
        {"properties", (char *)rp->properties},
        {"reconsumeTimes", nb->recon},
        {"unitMode", "false"},
        {"bornHost", (char *)rp->born_host},
        {"storeHost", (char *)rp->store_host},
        {"storeTimestamp", nb->store},
    };
    memcpy(f, v, sizeof(v));
}

/* GET_CONSUMER_RUNNING_INFO, GET_CONSUMER_STATUS_FROM_CLIENT or
 * CONSUME_MESSAGE_DIRECTLY (the stored message in MessageDecoder's
 * layout) to a consumer, or
 * PUSH_REPLY_MESSAGE_TO_CLIENT (the reply's header and body) to a
 * requester, its response awaited by opaque (fr_remoting_diag.c). */
static rmq_err_t rs_ask(bk_session_t *ss, const bk_client_ask_t *q, bk_client_answer_fn fn, void *arg)
{
    rm_session_t *rs = (rm_session_t *)ss;
    uint8_t *msg = NULL;
    size_t msg_len = 0, n = 3;
    rmq_err_t err = RMQ_OK;
    int code = CODE_GET_CONSUMER_RUNNING_INFO;
    const void *body = NULL;
    reply_nums_t nb;
    rmq_remoting_field_t f[REPLY_FIELDS] = {
        {"consumerGroup", (char *)q->group},
        {"clientId", (char *)q->client_id},
        {"jstackEnable", q->jstack ? "true" : "false"},
    };
    if (q->kind == BK_ASK_CONSUME_DIRECTLY) {
        code = CODE_CONSUME_MESSAGE_DIRECTLY;
        f[2] = (rmq_remoting_field_t){"msgId", (char *)q->msg_id};
        f[3] = (rmq_remoting_field_t){"brokerName", (char *)(q->broker_name ? q->broker_name : "")};
        n = 4;
        err = fr_rm_check_message_encode(q->record, q->record_len, &msg, &msg_len);
        body = msg;
    } else if (q->kind == BK_ASK_CONSUMER_STATUS) {
        code = CODE_GET_CONSUMER_STATUS_FROM_CLIENT;
        f[0] = (rmq_remoting_field_t){"topic", (char *)q->topic};
        f[1] = (rmq_remoting_field_t){"group", (char *)q->group};
        n = 2;
    } else if (q->kind == BK_ASK_PUSH_REPLY) {
        code = CODE_PUSH_REPLY_MESSAGE_TO_CLIENT;
        reply_fields(q->reply, &nb, f);
        n = REPLY_FIELDS;
        body = q->reply->body;
        msg_len = q->reply->body_len;
    }
    int32_t opaque = err == RMQ_OK ? fr_rm_ask_add(rs->rm, rs->conn, q->timeout_ms, fn, arg) : 0;
    if (err == RMQ_OK && opaque == 0)
        err = RMQ_ENOMEM;
    if (err == RMQ_OK) {
        err = rs_send(rs, code, 0, opaque, f, n, body, msg_len);
        if (err != RMQ_OK)
            fr_rm_ask_cancel(rs->rm, opaque);
    }
    free(msg);
    return err;
}

/* CHECK_TRANSACTION_STATE: the half message in MessageDecoder's layout,
 * under its real topic. */
static rmq_err_t rs_check_transaction(bk_session_t *ss, const bk_tx_check_t *chk)
{
    char tso[24], clo[24];
    uint8_t *msg = NULL;
    size_t msg_len = 0;
    rmq_err_t err = fr_rm_check_message_encode(chk->record, chk->record_len, &msg, &msg_len);
    snprintf(tso, sizeof(tso), "%" PRId64, chk->tran_state_table_offset);
    snprintf(clo, sizeof(clo), "%" PRId64, chk->commit_log_offset);
    rmq_remoting_field_t f[] = {
        {"tranStateTableOffset", tso},
        {"commitLogOffset", clo},
        {"msgId", (char *)(chk->msg_id ? chk->msg_id : "")},
        {"transactionId", (char *)(chk->transaction_id ? chk->transaction_id : "")},
        {"offsetMsgId", (char *)(chk->offset_msg_id ? chk->offset_msg_id : "")},
    };
    if (err == RMQ_OK)
        err = rs_push((rm_session_t *)ss, CODE_CHECK_TRANSACTION_STATE, f, sizeof(f) / sizeof(f[0]), msg, msg_len);
    free(msg);
    return err;
}

static int rs_is_open(const bk_session_t *ss)
{
    return rmq_conn_is_open(((const rm_session_t *)ss)->conn);
}

static const char *rs_peer(const bk_session_t *ss)
{
    return rmq_conn_peer(((const rm_session_t *)ss)->conn);
}

static void rs_close(bk_session_t *ss, const char *reason)
{
    rmq_conn_close(((rm_session_t *)ss)->conn, reason);
}

static void rs_free(bk_session_t *ss)
{
    rmq_conn_unref(((rm_session_t *)ss)->conn);
    free(ss);
}

static const bk_session_ops_t rm_session_ops = {
    .protocol = "remoting",
    .notify_ids_changed = rs_notify_ids_changed,
    .reset_offset = rs_reset_offset,
    .ask = rs_ask,
    .check_transaction = rs_check_transaction,
    .is_open = rs_is_open,
    .peer = rs_peer,
    .close = rs_close,
    .free = rs_free,
};

bk_session_t *fr_rm_session_of(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req)
{
    bk_session_t *ss = fr_session_find(conn);
    if (ss)
        return ss;
    rm_session_t *rs = malloc(sizeof(*rs));
    if (!rs)
        return NULL;
    bk_session_init(&rs->base, &rm_session_ops);   /* the connection's reference */
    rmq_conn_ref(conn);
    rs->rm = rm;
    rs->conn = conn;
    rs->serialize_type = req->serialize_type;
    rs->version = req->version;
    rmq_conn_set_data(conn, rs);
    return &rs->base;
}

/* ---- set-up --------------------------------------------------------------- */

/* Every code this front serves: its handler and the core's operation
 * (bk_perm.h: what it touches and needs, checked on the decoded request).
 * A send's check is the core's send itself (bk_produce_check); the others
 * ask fr_rm_allowed, which finds the operation here by code. */
static const fr_rm_route_t routes[] = {
    {10, fr_rm_handle_send, BK_OP_SEND},                       /* SEND_MESSAGE */
    {310, fr_rm_handle_send, BK_OP_SEND},                      /* SEND_MESSAGE_V2 */
    {320, fr_rm_handle_send, BK_OP_SEND},                      /* SEND_BATCH_MESSAGE */
    {324, fr_rm_handle_reply, BK_OP_SEND_REPLY},               /* SEND_REPLY_MESSAGE */
    {325, fr_rm_handle_reply, BK_OP_SEND_REPLY},               /* SEND_REPLY_MESSAGE_V2 */
    {370, fr_rm_handle_recall, BK_OP_RECALL},                  /* RECALL_MESSAGE */
    {11, fr_rm_handle_pull, BK_OP_PULL},                       /* PULL_MESSAGE */
    {361, fr_rm_handle_pull, BK_OP_PULL},                      /* LITE_PULL_MESSAGE */
    {33, fr_rm_handle_view, BK_OP_VIEW},                       /* VIEW_MESSAGE_BY_ID */
    {14, fr_rm_handle_offset_query, BK_OP_OFFSET_QUERY},       /* QUERY_CONSUMER_OFFSET */
    {15, fr_rm_handle_offset_update, BK_OP_OFFSET_COMMIT},     /* UPDATE_CONSUMER_OFFSET */
    {29, fr_rm_handle_queue_offset, BK_OP_QUEUE_OFFSET},       /* SEARCH_OFFSET_BY_TIMESTAMP */
    {30, fr_rm_handle_queue_offset, BK_OP_QUEUE_OFFSET},       /* GET_MAX_OFFSET */
    {31, fr_rm_handle_queue_offset, BK_OP_QUEUE_OFFSET},       /* GET_MIN_OFFSET */
    {32, fr_rm_handle_queue_offset, BK_OP_QUEUE_OFFSET},       /* GET_EARLIEST_MSG_STORETIME */
    {34, fr_rm_handle_heartbeat, BK_OP_HEARTBEAT},             /* HEART_BEAT */
    {35, fr_rm_handle_unregister, BK_OP_UNREGISTER},           /* UNREGISTER_CLIENT */
    {38, fr_rm_handle_consumer_list, BK_OP_CONSUMER_LIST},     /* GET_CONSUMER_LIST_BY_GROUP */
    {46, fr_rm_handle_check_client, BK_OP_CHECK_CLIENT},       /* CHECK_CLIENT_CONFIG */
    /* queue locks and queries (fr_remoting_locks.c, fr_remoting_query.c) */
    {41, fr_rm_handle_lock, BK_OP_QUEUE_LOCK},                 /* LOCK_BATCH_MQ */
    {42, fr_rm_handle_unlock, BK_OP_QUEUE_LOCK},               /* UNLOCK_BATCH_MQ */
    {12, fr_rm_handle_query, BK_OP_QUERY_BY_KEY},              /* QUERY_MESSAGE */
    /* send-back and transactions (fr_remoting_tx.c) */
    {36, fr_rm_handle_send_back, BK_OP_SEND_BACK},             /* CONSUMER_SEND_MSG_BACK */
    {37, fr_rm_handle_end_transaction, BK_OP_END_TRANSACTION}, /* END_TRANSACTION */
    {200050, fr_rm_handle_pop, BK_OP_POP},                     /* POP_MESSAGE */
    {200051, fr_rm_handle_ack, BK_OP_POP_ACK},                 /* ACK_MESSAGE */
    {200053, fr_rm_handle_change_invisible, BK_OP_POP_ACK},    /* CHANGE_MESSAGE_INVISIBLETIME */
    {200151, fr_rm_handle_batch_ack, BK_OP_POP_ACK},           /* BATCH_ACK_MESSAGE */
    /* server-side rebalance of pop consumers (fr_remoting_assign.c) */
    {400, fr_rm_handle_query_assignment, BK_OP_QUERY_ASSIGNMENT}, /* QUERY_ASSIGNMENT */
    {401, fr_rm_handle_request_mode, BK_OP_REQUEST_MODE},      /* SET_MESSAGE_REQUEST_MODE */
    /* administration (fr_remoting_admin.c) */
    {17, fr_rm_handle_update_topic, BK_OP_TOPIC_UPDATE},       /* UPDATE_AND_CREATE_TOPIC */
    {18, fr_rm_handle_update_topic_list, BK_OP_TOPIC_UPDATE},  /* UPDATE_AND_CREATE_TOPIC_LIST */
    {21, fr_rm_handle_json_read, BK_OP_TOPIC_LIST},            /* GET_ALL_TOPIC_CONFIG */
    {305, fr_rm_handle_json_read, BK_OP_SYSTEM_TOPICS},        /* GET_SYSTEM_TOPIC_LIST_FROM_BROKER */
    {25, fr_rm_handle_update_broker_config, BK_OP_BROKER_CONFIG_UPDATE}, /* UPDATE_BROKER_CONFIG (refused) */
    {26, fr_rm_handle_broker_config, BK_OP_BROKER_CONFIG},     /* GET_BROKER_CONFIG */
    {28, fr_rm_handle_json_read, BK_OP_RUNTIME_INFO},          /* GET_BROKER_RUNTIME_INFO */
    {200, fr_rm_handle_update_group, BK_OP_GROUP_UPDATE},      /* UPDATE_AND_CREATE_SUBSCRIPTIONGROUP */
    {225, fr_rm_handle_update_group_list, BK_OP_GROUP_UPDATE}, /* UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST */
    {201, fr_rm_handle_json_read, BK_OP_GROUP_LIST},           /* GET_ALL_SUBSCRIPTIONGROUP_CONFIG */
    {202, fr_rm_handle_json_read, BK_OP_TOPIC_STATS},          /* GET_TOPIC_STATS_INFO */
    {203, fr_rm_handle_consumer_connections, BK_OP_CONSUMER_CONNECTIONS}, /* GET_CONSUMER_CONNECTION_LIST */
    {204, fr_rm_handle_json_read, BK_OP_PRODUCER_CONNECTIONS}, /* GET_PRODUCER_CONNECTION_LIST */
    {207, fr_rm_handle_delete_group, BK_OP_GROUP_DELETE},      /* DELETE_SUBSCRIPTIONGROUP */
    {208, fr_rm_handle_json_read, BK_OP_CONSUME_STATS},        /* GET_CONSUME_STATS */
    {222, fr_rm_handle_reset_offset, BK_OP_OFFSET_RESET},      /* INVOKE_BROKER_TO_RESET_OFFSET */
    {223, fr_rm_handle_consumer_status, BK_OP_CONSUMER_STATUS}, /* INVOKE_BROKER_TO_GET_CONSUMER_STATUS */
    {314, fr_rm_handle_clone_offset, BK_OP_OFFSET_CLONE},      /* CLONE_GROUP_OFFSET */
    {315, fr_rm_handle_broker_stats, BK_OP_BROKER_STATS},      /* VIEW_BROKER_STATS_DATA */
    {317, fr_rm_handle_broker_consume_stats, BK_OP_BROKER_CONSUME_STATS}, /* GET_BROKER_CONSUME_STATS */
    /* an operator's questions to one consumer (fr_remoting_diag.c) */
    {307, fr_rm_handle_running_info, BK_OP_CONSUMER_RUNNING_INFO}, /* GET_CONSUMER_RUNNING_INFO */
    {309, fr_rm_handle_consume_directly, BK_OP_CONSUME_DIRECTLY},  /* CONSUME_MESSAGE_DIRECTLY */
    {215, fr_rm_handle_delete_topic, BK_OP_TOPIC_DELETE},      /* DELETE_TOPIC_IN_BROKER */
    {300, fr_rm_handle_json_read, BK_OP_TOPIC_CONSUMERS},      /* QUERY_TOPIC_CONSUME_BY_WHO */
    {303, fr_rm_handle_json_read, BK_OP_CONSUME_TIME_SPAN},    /* QUERY_CONSUME_TIME_SPAN */
    {328, fr_rm_handle_json_read, BK_OP_ALL_PRODUCERS},        /* GET_ALL_PRODUCER_INFO */
    {351, fr_rm_handle_json_read, BK_OP_TOPIC_CONFIG},         /* GET_TOPIC_CONFIG */
    /* the ACL policy itself (fr_remoting_acl.c) */
    {50, fr_rm_handle_acl_update, BK_OP_ACL_UPDATE},           /* UPDATE_AND_CREATE_ACL_CONFIG */
    {51, fr_rm_handle_acl_delete, BK_OP_ACL_DELETE},           /* DELETE_ACL_CONFIG */
    {52, fr_rm_handle_acl_version, BK_OP_ACL_VERSION},         /* GET_BROKER_CLUSTER_ACL_INFO */
    {53, fr_rm_handle_acl_white, BK_OP_ACL_WHITE},             /* UPDATE_GLOBAL_WHITE_ADDRS_CONFIG */
    {54, fr_rm_handle_acl_config, BK_OP_ACL_CONFIG},           /* GET_BROKER_CLUSTER_ACL_CONFIG */
};

const fr_rm_route_t *fr_rm_route_at(size_t i)
{
    return i < sizeof(routes) / sizeof(routes[0]) ? &routes[i] : NULL;
}

bk_op_t fr_rm_op(int code)
{
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (routes[i].code == code)
            return routes[i].op;
    return BK_OP_UNDECLARED;
}

fr_remoting_t *fr_remoting_start(bk_front_t *fe, char *err, size_t errlen)
{
    fr_remoting_t *rm = calloc(1, sizeof(*rm));
    rmq_err_t rc = rm ? rmq_remoting_install(fe->srv) : RMQ_ENOMEM;
    if (rc != RMQ_OK)
        goto fail;
    rm->fe = fe;
    for (size_t i = 0; rc == RMQ_OK && i < sizeof(routes) / sizeof(routes[0]); i++)
        rc = rmq_remoting_handle(fe->srv, routes[i].code, routes[i].fn, rm);
    if (rc != RMQ_OK)
        goto fail;
    rmq_remoting_set_acl(fe->srv, fe->node->sec->acl, RMQ_ACL_SIGNER_ONLY);
    rmq_remoting_on_response(fe->srv, fr_rm_handle_answer, rm);
    return rm;
fail:
    snprintf(err, errlen, "cannot start the RocketMQ remoting front-end: %s", rmq_strerror(rc));
    fr_remoting_free(rm);
    return NULL;
}

void fr_remoting_free(fr_remoting_t *rm)
{
    if (!rm)
        return;
    fr_rm_ask_free_all(rm);
    fr_rm_send_free(rm);
    free(rm);
}
