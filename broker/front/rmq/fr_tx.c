/* fr_tx.c: the rmq protocol's decode and encode for transactions
 * (core/bk_tx.h): END_TRANSACTION into the neutral request, with the
 * account that signed it (access control on), answered once its outcome
 * is durable. Check-backs go out through the session (fr_session.c). */
#include "bk_front.h"
#include "fr_routes.h"
#include "fr_perm.h"
#include "fr_status.h"

int fr_tx_state(Rmq__TransactionState s)
{
    switch (s) {
    case RMQ__TRANSACTION_STATE__TX_COMMIT:
        return BK_TX_COMMIT;
    case RMQ__TRANSACTION_STATE__TX_ROLLBACK:
        return BK_TX_ROLLBACK;
    case RMQ__TRANSACTION_STATE__TX_UNKNOWN:
        return BK_TX_UNKNOWN;
    default:
        return -1;
    }
}

void fr_end_transaction(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    rmq_reply_to_t to = rmq_reply_to(req->cmd);
    bk_caller_t who;
    bk_append_out_t out;

    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_END_TRANSACTION, "EndTransactionRequest (end_transaction)"))
        return;
    if (fr_caller(fe, conn, req, &who) != 0)
        return;
    const Rmq__EndTransactionRequest *h = req->cmd->end_transaction;
    if (fr_tx_state(h->state) < 0) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__BAD_REQUEST, "END_TRANSACTION: unknown state %d", (int)h->state);
        return;
    }
    bk_tx_end_req_t er = {
        .producer_group = h->producer_group,
        .commit_log_offset = h->commit_log_offset,
        .state = fr_tx_state(h->state),
        .msg_id = h->msg_id,
        .from_check = h->from_transaction_check,
        .who = &who,
    };
    fr_pending_t *p = fr_pending_new(conn, to, NULL);
    if (!p) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SYSTEM_ERROR, "END_TRANSACTION: out of memory");
        return;
    }
    if (bk_tx_end(fe->tx, &er, &out, fr_pending_answer, p))
        fr_pending_answer(&out, p);
}
