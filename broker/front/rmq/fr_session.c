/* fr_session.c: sessions over rmq connections (see fr_session.h). The
 * session references its connection, so a core holder may outlive the
 * close and still ask is_open. */
#include "fr_session.h"

#include <stdlib.h>

typedef struct fr_session {
    bk_session_t base;               /* first: the core sees only this */
    rmq_conn_t *conn;                /* referenced */
} fr_session_t;

static rmq_conn_t *conn_of(const bk_session_t *ss)
{
    return ((const fr_session_t *)ss)->conn;
}

static rmq_err_t fs_notify_ids_changed(bk_session_t *ss, const char *group)
{
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    Rmq__GroupRequest g = RMQ__GROUP_REQUEST__INIT;
    g.consumer_group = (char *)group;
    cmd.code = RMQ__REQUEST_CODE__NOTIFY_CONSUMER_IDS_CHANGED;
    cmd.header_case = RMQ__COMMAND__HEADER_GROUP;
    cmd.group = &g;
    return rmq_conn_send_oneway(conn_of(ss), &cmd, NULL, 0);
}

static rmq_err_t fs_check_transaction(bk_session_t *ss, const bk_tx_check_t *chk)
{
    Rmq__CheckTransactionStateRequest h = RMQ__CHECK_TRANSACTION_STATE_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    h.tran_state_table_offset = chk->tran_state_table_offset;
    h.commit_log_offset = chk->commit_log_offset;
    h.msg_id = (char *)chk->msg_id;
    h.transaction_id = (char *)chk->transaction_id;
    h.offset_msg_id = (char *)chk->offset_msg_id;
    h.producer_group = (char *)chk->producer_group;
    h.broker_addr = (char *)chk->broker_addr;
    req.code = RMQ__REQUEST_CODE__CHECK_TRANSACTION_STATE;
    req.header_case = RMQ__COMMAND__HEADER_CHECK_TRANSACTION;
    req.check_transaction = &h;
    return rmq_conn_send_oneway(conn_of(ss), &req, chk->record, chk->record_len);
}

static int fs_is_open(const bk_session_t *ss)
{
    return rmq_conn_is_open(conn_of(ss));
}

static const char *fs_peer(const bk_session_t *ss)
{
    return rmq_conn_peer(conn_of(ss));
}

static void fs_close(bk_session_t *ss, const char *reason)
{
    rmq_conn_close(conn_of(ss), reason);
}

static void fs_free(bk_session_t *ss)
{
    rmq_conn_unref(conn_of(ss));
    free(ss);
}

static const bk_session_ops_t fr_session_ops = {
    .protocol = "rmq",
    .notify_ids_changed = fs_notify_ids_changed,
    .check_transaction = fs_check_transaction,
    .is_open = fs_is_open,
    .peer = fs_peer,
    .close = fs_close,
    .free = fs_free,
};

bk_session_t *fr_session_find(const rmq_conn_t *conn)
{
    return rmq_conn_get_data(conn);
}

bk_session_t *fr_session_of(rmq_conn_t *conn)
{
    fr_session_t *fs = rmq_conn_get_data(conn);
    if (fs)
        return &fs->base;
    if (!(fs = malloc(sizeof(*fs))))
        return NULL;
    bk_session_init(&fs->base, &fr_session_ops);   /* the connection's reference */
    rmq_conn_ref(conn);
    fs->conn = conn;
    rmq_conn_set_data(conn, fs);
    return &fs->base;
}

void fr_session_conn_closed(rmq_conn_t *conn)
{
    bk_session_t *ss = rmq_conn_get_data(conn);
    if (!ss)
        return;
    rmq_conn_set_data(conn, NULL);
    bk_session_unref(ss);
}
