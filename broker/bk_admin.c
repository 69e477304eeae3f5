/* bk_admin.c: VIEW_MESSAGE_BY_ID, the raw record at a commit-log offset.
 * (The offset, lock and administration requests are in front/rmq/fr_offsets.c,
 * fr_locks.c and fr_admin.c over broker/core.) */
#include <inttypes.h>

#include "bk_broker.h"
#include "fr_routes.h"

/* VIEW_MESSAGE_BY_ID: the raw record at a commit-log offset as the body. */
void fr_view_message(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_VIEW_MESSAGE, "ViewMessageRequest (view_message)"))
        return;
    int64_t off = req->cmd->view_message->offset;
    struct evbuffer *body = evbuffer_new();
    rmq_err_t rc = body ? st_store_read_record(bk->store, off, body) : RMQ_ENOMEM;
    if (rc == RMQ_OK)
        rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, body);
    else
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__QUERY_NOT_FOUND,
                        "no message at commit-log offset %" PRId64 ": %s", off, rmq_strerror(rc));
    if (body)
        evbuffer_free(body);
}
