/* fr_remoting_tx.c: CONSUMER_SEND_MSG_BACK (36) over the core's send-back
 * (core/bk_sendback.c: retry on %RETRY%group at a delay level, or the
 * dead-letter topic %DLQ%group) and END_TRANSACTION (37) over the core's
 * transactions (core/bk_tx.c: commit, roll back or leave a half message
 * to its check-back), decoded from ConsumerSendMsgBackRequestHeader and
 * EndTransactionRequestHeader and answered in the request's encoding once
 * the outcome is durable. The check-back itself (CHECK_TRANSACTION_STATE
 * 39) is pushed through the remoting session (fr_remoting.c). Java
 * clients send END_TRANSACTION oneway: it is answered only when it is not. */
#include <stdlib.h>

#include "bk_sendback.h"
#include "bk_tx.h"
#include "fr_remoting.h"

#define CODE_SLAVE_NOT_AVAILABLE 11

/* MessageSysFlag's transaction types in commitOrRollback. */
#define TX_NOT_TYPE 0
#define TX_COMMIT_TYPE 8
#define TX_ROLLBACK_TYPE 12

/* A send-back or end of transaction whose answer waits for the append path. */
typedef struct rm_tx_wait {
    rmq_conn_t *conn;                /* referenced */
    fr_rm_to_t to;
    int end_tx;                      /* answers END_TRANSACTION */
} rm_tx_wait_t;

/* The response code of an outcome. END_TRANSACTION answers as RocketMQ's
 * EndTransactionProcessor: SUCCESS once the log holds the outcome (even if
 * the disk or a slave timed out), SLAVE_NOT_AVAILABLE on a slave. A
 * send-back is SUCCESS only when fully stored: on any other code the
 * client sends the message to the retry topic itself. */
static int tx_code(const bk_append_out_t *out, int end_tx)
{
    if (end_tx && out->stored)
        return RMQ_REMOTING_SUCCESS;
    if (end_tx && out->r.status == BK_NOT_MASTER)
        return CODE_SLAVE_NOT_AVAILABLE;
    return fr_rm_status_code(out->r.status);
}

/* bk_append_fn: answers and releases the waiter (loop thread). */
static void tx_answer(const bk_append_out_t *out, void *arg)
{
    rm_tx_wait_t *w = arg;
    rmq_remoting_reply_t rep = {.code = tx_code(out, w->end_tx), .remark = out->r.why[0] ? out->r.why : NULL};
    fr_rm_reply_to(w->conn, &w->to, &rep);
    rmq_conn_unref(w->conn);
    free(w);
}

/* A waiter answering req on conn; NULL after answering SYSTEM_ERROR. */
static rm_tx_wait_t *tx_wait_new(rmq_conn_t *conn, const rmq_remoting_request_t *req, int end_tx)
{
    rm_tx_wait_t *w = malloc(sizeof(*w));
    if (!w) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
        return NULL;
    }
    rmq_conn_ref(conn);
    w->conn = conn;
    w->to = fr_rm_to(req);
    w->end_tx = end_tx;
    return w;
}

/* CONSUMER_SEND_MSG_BACK: offset (commit-log offset of the failed
 * message), group, delayLevel (0: 3 + reconsumeTimes; < 0: straight to the
 * DLQ), optional originMsgId, originTopic, maxReconsumeTimes (absent or <=
 * 0: the group's retryMaxTimes). unitMode marks RocketMQ's retry topic as
 * a unit topic, which rmq's topics do not distinguish: it is not read. */
void fr_rm_handle_send_back(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int64_t offset, level, max_times;
    bk_caller_t who;
    bk_perm_reader_t rd;
    bk_append_out_t out;
    const char *group = fr_rm_str(conn, req, "group", NULL, 1, NULL);
    if (!group || fr_rm_int(conn, req, "offset", NULL, 1, 0, INT64_MAX, 0, &offset) != 0 ||
        fr_rm_int(conn, req, "delayLevel", NULL, 1, INT32_MIN, INT32_MAX, 0, &level) != 0 ||
        fr_rm_int(conn, req, "maxReconsumeTimes", NULL, 0, INT32_MIN, INT32_MAX, 0, &max_times) != 0 ||
        !fr_rm_allowed(rm, conn, req, NULL, group) || fr_rm_caller(rm, conn, req, &who) != 0)
        return;
    bk_sendback_req_t sr = {
        .group = group,
        .offset = offset,
        .delay_level = (int32_t)level,
        .max_reconsume_times = (int32_t)max_times,
        .origin_topic = fr_rm_str(conn, req, "originTopic", NULL, 0, ""),
        .origin_msg_id = fr_rm_str(conn, req, "originMsgId", NULL, 0, ""),
        .reader = bk_perm_reader_init(&rd, &who, BK_OP_SEND_BACK),
    };
    rm_tx_wait_t *w = tx_wait_new(conn, req, 0);
    if (!w)
        return;
    if (bk_sendback_run(rm->fe->sendback, &sr, &out, tx_answer, w))
        tx_answer(&out, w);
    if (out.stored)
        bk_stats_add(rm->fe->stats, BK_STAT_PUT, 1);
}

/* commitOrRollback as the core's state; -1 after answering for another value. */
static int tx_state(rmq_conn_t *conn, const rmq_remoting_request_t *req, int64_t type)
{
    switch (type) {
    case TX_COMMIT_TYPE:
        return BK_TX_COMMIT;
    case TX_ROLLBACK_TYPE:
        return BK_TX_ROLLBACK;
    case TX_NOT_TYPE:
        return BK_TX_UNKNOWN;
    default:
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR,
                            "END_TRANSACTION: commitOrRollback %lld is not 8 (commit), 12 (rollback) or 0 (unknown)",
                            (long long)type);
        return -1;
    }
}

/* END_TRANSACTION: producerGroup, tranStateTableOffset, commitLogOffset
 * (of the half message), commitOrRollback, fromTransactionCheck, msgId.
 * tranStateTableOffset is required, as RocketMQ's header says, but the core
 * names a half by its commit-log offset and group alone; the optional
 * transactionId is the UNIQ_KEY the half message already carries. The
 * signer needs PUB on the half message's real topic (checked by the core). */
void fr_rm_handle_end_transaction(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int64_t table_offset, offset, type;
    int from_check, state;
    bk_caller_t who;
    bk_append_out_t out;
    const char *group = fr_rm_str(conn, req, "producerGroup", NULL, 1, NULL);
    const char *msg_id = group ? fr_rm_str(conn, req, "msgId", NULL, 1, NULL) : NULL;
    if (!msg_id || fr_rm_int(conn, req, "tranStateTableOffset", NULL, 1, 0, INT64_MAX, 0, &table_offset) != 0 ||
        fr_rm_int(conn, req, "commitLogOffset", NULL, 1, 0, INT64_MAX, 0, &offset) != 0 ||
        fr_rm_int(conn, req, "commitOrRollback", NULL, 1, INT32_MIN, INT32_MAX, 0, &type) != 0 ||
        fr_rm_bool(conn, req, "fromTransactionCheck", 0, 0, &from_check) != 0 ||
        (state = tx_state(conn, req, type)) < 0 || fr_rm_caller(rm, conn, req, &who) != 0)
        return;
    bk_tx_end_req_t er = {
        .producer_group = group,
        .commit_log_offset = offset,
        .state = state,
        .msg_id = msg_id,
        .from_check = from_check,
        .who = &who,
    };
    rm_tx_wait_t *w = tx_wait_new(conn, req, 1);
    if (!w)
        return;
    if (bk_tx_end(rm->fe->tx, &er, &out, tx_answer, w))
        tx_answer(&out, w);
}
