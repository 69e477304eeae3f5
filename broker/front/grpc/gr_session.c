/* gr_session.c: gRPC client sessions (see gr_session.h). The session
 * references its connection, so a core holder may outlive the close and
 * still ask is_open; a transaction check-back is pushed on Telemetry as a
 * RecoverOrphanedTransactionCommand. */
#include "gr_session.h"

#include <stdlib.h>
#include <string.h>

#include "fr_session.h"
#include "gr_message.h"
#include "rmq_log.h"

static gr_session_t *gs_of(const bk_session_t *ss)
{
    return (gr_session_t *)ss;
}

/* A 5.x client rebalances through QueryAssignment on its own timer: no push. */
static rmq_err_t gs_notify_ids_changed(bk_session_t *ss, const char *group)
{
    (void)ss;
    (void)group;
    return RMQ_OK;
}

/* RecoverOrphanedTransactionCommand{the half as a delivered message,
 * transaction_id}: the producer's checker answers with EndTransaction. */
static rmq_err_t gs_check_transaction(bk_session_t *ss, const bk_tx_check_t *chk)
{
    gr_session_t *gs = gs_of(ss);
    rmq_record_t rec;
    rmq_err_t err = rmq_record_decode(chk->record, chk->record_len, 0, &rec);
    if (err != RMQ_OK)
        return err;
    gr_delivered_t d = {0};
    gr_deliver_ctx_t ctx = {.invisible_ms = -1, .max_body_size = gs->max_body_size};
    err = gr_message_from_record(&rec, &ctx, &d);
    if (err == RMQ_OK) {
        Apache__Rocketmq__V2__RecoverOrphanedTransactionCommand rc =
            APACHE__ROCKETMQ__V2__RECOVER_ORPHANED_TRANSACTION_COMMAND__INIT;
        Apache__Rocketmq__V2__TelemetryCommand cmd = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__INIT;
        rc.message = &d.msg;
        rc.transaction_id = (char *)(chk->offset_msg_id ? chk->offset_msg_id : "");
        cmd.command_case = APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_RECOVER_ORPHANED_TRANSACTION_COMMAND;
        cmd.recover_orphaned_transaction_command = &rc;
        err = gr_session_push(gs, &cmd);
    }
    gr_delivered_deinit(&d);
    return err;
}

static int gs_is_open(const bk_session_t *ss)
{
    return rmq_conn_is_open(gs_of(ss)->conn);
}

static const char *gs_peer(const bk_session_t *ss)
{
    return rmq_conn_peer(gs_of(ss)->conn);
}

static void gs_close(bk_session_t *ss, const char *reason)
{
    rmq_conn_close(gs_of(ss)->conn, reason);
}

static void gs_free(bk_session_t *ss)
{
    gr_session_t *gs = gs_of(ss);
    if (gs->settings_cmd)
        apache__rocketmq__v2__telemetry_command__free_unpacked(gs->settings_cmd, NULL);
    rmq_conn_unref(gs->conn);
    free(gs->client_id);
    free(gs);
}

static const bk_session_ops_t gr_session_ops = {
    .protocol = "grpc",
    .notify_ids_changed = gs_notify_ids_changed,
    .check_transaction = gs_check_transaction,
    .is_open = gs_is_open,
    .peer = gs_peer,
    .close = gs_close,
    .free = gs_free,
};

/* Remembers client_id (a client names itself on every call; the latest wins). */
static gr_session_t *remember_id(gr_session_t *gs, const char *client_id)
{
    if (gs->client_id && strcmp(gs->client_id, client_id) == 0)
        return gs;
    char *id = strdup(client_id);
    if (!id)
        return NULL;
    free(gs->client_id);
    gs->client_id = id;
    return gs;
}

gr_session_t *gr_session_of(rmq_grpc_call_t *call, const char *client_id, size_t max_body_size)
{
    rmq_conn_t *conn = rmq_grpc_call_conn(call);
    bk_session_t *ss = fr_session_find(conn);
    if (ss && ss->ops == &gr_session_ops)
        return remember_id(gs_of(ss), client_id);
    if (ss)
        return NULL;                 /* not a gRPC connection's session */
    gr_session_t *gs = calloc(1, sizeof(*gs));
    if (!gs)
        return NULL;
    bk_session_init(&gs->base, &gr_session_ops);   /* the connection's reference */
    rmq_conn_ref(conn);
    gs->conn = conn;
    gs->max_body_size = max_body_size;
    rmq_conn_set_data(conn, gs);
    return remember_id(gs, client_id);
}

const Apache__Rocketmq__V2__Settings *gr_session_settings(const gr_session_t *gs)
{
    return gs->settings_cmd ? gs->settings_cmd->settings : NULL;
}

void gr_session_set_settings(gr_session_t *gs, Apache__Rocketmq__V2__TelemetryCommand *cmd)
{
    if (gs->settings_cmd)
        apache__rocketmq__v2__telemetry_command__free_unpacked(gs->settings_cmd, NULL);
    gs->settings_cmd = cmd;
}

void gr_session_set_telemetry(gr_session_t *gs, rmq_grpc_call_t *call)
{
    gs->telemetry = call;
}

rmq_err_t gr_session_push(gr_session_t *gs, const Apache__Rocketmq__V2__TelemetryCommand *cmd)
{
    if (!gs->telemetry)
        return RMQ_ECLOSED;
    size_t len = apache__rocketmq__v2__telemetry_command__get_packed_size(cmd);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf)
        return RMQ_ENOMEM;
    apache__rocketmq__v2__telemetry_command__pack(cmd, buf);
    rmq_err_t err = rmq_grpc_write(gs->telemetry, buf, len);
    free(buf);
    return err;
}
