/* fr_status.c: neutral status -> rmq wire status, in one table, and the
 * replies of neutral results (now, or once an append ended). */
#include "fr_status.h"

#include <stdlib.h>

struct fr_pending {
    rmq_conn_t *conn;                /* referenced */
    rmq_reply_to_t to;
    const char *prefix;
};

int fr_status_wire(bk_status_t status)
{
    static const int wire[] = {
        [BK_OK] = RMQ__STATUS__SUCCESS,
        [BK_BAD_REQUEST] = RMQ__STATUS__BAD_REQUEST,
        [BK_MESSAGE_ILLEGAL] = RMQ__STATUS__MESSAGE_ILLEGAL,
        [BK_MESSAGE_TOO_LARGE] = RMQ__STATUS__MESSAGE_ILLEGAL,
        [BK_NAME_ILLEGAL] = RMQ__STATUS__NAME_ILLEGAL,
        [BK_NO_PERMISSION] = RMQ__STATUS__NO_PERMISSION,
        [BK_TOPIC_NOT_EXIST] = RMQ__STATUS__TOPIC_NOT_EXIST,
        [BK_GROUP_NOT_EXIST] = RMQ__STATUS__SUBSCRIPTION_GROUP_NOT_EXIST,
        [BK_NOT_MASTER] = RMQ__STATUS__SERVICE_NOT_AVAILABLE_SLAVE,
        [BK_SHUTDOWN] = RMQ__STATUS__SERVICE_NOT_AVAILABLE_SHUTDOWN,
        [BK_DISK_FULL] = RMQ__STATUS__SERVICE_NOT_AVAILABLE_DISK_FULL,
        [BK_WRITE_ERROR] = RMQ__STATUS__SERVICE_NOT_AVAILABLE_WRITE_ERROR,
        [BK_FLUSH_DISK_TIMEOUT] = RMQ__STATUS__FLUSH_DISK_TIMEOUT,
        [BK_FLUSH_SLAVE_TIMEOUT] = RMQ__STATUS__FLUSH_SLAVE_TIMEOUT,
        [BK_SLAVE_NOT_AVAILABLE] = RMQ__STATUS__SLAVE_NOT_AVAILABLE,
        [BK_IN_SYNC_REPLICAS_NOT_ENOUGH] = RMQ__STATUS__IN_SYNC_REPLICAS_NOT_ENOUGH,
        [BK_BUSY] = RMQ__STATUS__SYSTEM_BUSY,
        [BK_TRANSACTION_FAILED] = RMQ__STATUS__TRANSACTION_FAILED,
        [BK_SUBSCRIPTION_PARSE_FAILED] = RMQ__STATUS__SUBSCRIPTION_PARSE_FAILED,
        [BK_NOT_FOUND] = RMQ__STATUS__QUERY_NOT_FOUND,
        [BK_ILLEGAL_OPERATION] = RMQ__STATUS__BAD_REQUEST,   /* recalls: not on this front */
        [BK_INVALID_PARAMETER] = RMQ__STATUS__BAD_REQUEST,
        [BK_SYSTEM_ERROR] = RMQ__STATUS__SYSTEM_ERROR,
    };
    if ((unsigned)status < sizeof(wire) / sizeof(wire[0]))
        return wire[status];
    return RMQ__STATUS__SYSTEM_ERROR;
}

void fr_reply_result(rmq_conn_t *conn, rmq_reply_to_t to, const bk_result_t *r, const char *prefix)
{
    if (prefix)
        rmq_conn_replyf(conn, to, fr_status_wire(r->status), "%s: %s", prefix, r->why);
    else
        rmq_conn_replyf(conn, to, fr_status_wire(r->status), "%s", r->why);
}

fr_pending_t *fr_pending_new(rmq_conn_t *conn, rmq_reply_to_t to, const char *prefix)
{
    fr_pending_t *p = malloc(sizeof(*p));
    if (!p)
        return NULL;
    rmq_conn_ref(conn);
    p->conn = conn;
    p->to = to;
    p->prefix = prefix;
    return p;
}

void fr_pending_answer(const bk_append_out_t *out, void *arg)
{
    fr_pending_t *p = arg;
    if (out->r.status == BK_OK)
        rmq_conn_reply(p->conn, p->to, NULL, RMQ__STATUS__SUCCESS, out->r.why[0] ? out->r.why : NULL, NULL);
    else
        fr_reply_result(p->conn, p->to, &out->r, p->prefix);
    rmq_conn_unref(p->conn);
    free(p);
}

int fr_append_reply(bk_append_t *ap, const st_msg_t *msgs, size_t n, rmq_conn_t *conn, rmq_reply_to_t to,
                    const char *prefix)
{
    bk_append_out_t out;
    fr_pending_t *p = fr_pending_new(conn, to, prefix);
    if (!p) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SYSTEM_ERROR, "%s: out of memory", prefix ? prefix : "append");
        return 0;
    }
    if (bk_append_put(ap, msgs, n, &out, fr_pending_answer, p))
        fr_pending_answer(&out, p);
    return out.stored;
}

int fr_need_header(rmq_conn_t *conn, const rmq_frame_t *req, int want, const char *header_name)
{
    if ((int)req->cmd->header_case == want)
        return 1;
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST, "%s needs a %s header",
                    rmq_request_name(req->cmd->code), header_name);
    return 0;
}
