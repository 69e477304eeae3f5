/* fr_query.c: the rmq front-end of the queries that read stored messages
 * back: QUERY_MESSAGE (by key) and VIEW_MESSAGE_BY_ID (by commit-log
 * offset, the record's topic checked against the signer). Decodes the
 * header, calls the core (core/bk_query.c) and answers the raw records as
 * the body. */
#include "bk_front.h"
#include "bk_query.h"
#include "fr_routes.h"
#include "fr_perm.h"
#include "fr_status.h"

/* Answers the outcome of a query: SUCCESS with body, or the status. */
static void query_reply(rmq_conn_t *conn, const rmq_frame_t *req, const bk_result_t *r, struct evbuffer *body)
{
    rmq_reply_to_t to = rmq_reply_to(req->cmd);
    if (r->status == BK_OK)
        rmq_conn_reply(conn, to, NULL, RMQ__STATUS__SUCCESS, NULL, body);
    else
        fr_reply_result(conn, to, r, NULL);
}

/* QUERY_MESSAGE: header QueryMessageRequest {topic, key, max_num,
 * begin_timestamp, end_timestamp (0: now and later)}. */
void fr_query_message(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    bk_result_t r;
    int32_t count = 0;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_QUERY_MESSAGE, "QueryMessageRequest (query_message)"))
        return;
    const Rmq__QueryMessageRequest *q = req->cmd->query_message;
    bk_query_key_req_t kr = {.topic = q->topic, .key = q->key, .max_num = q->max_num,
                             .begin_ms = q->begin_timestamp, .end_ms = q->end_timestamp};
    if (!fr_allowed(fe, conn, req, kr.topic, NULL))
        return;
    struct evbuffer *body = evbuffer_new();
    if (!body) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    bk_query_key(fe->node->store, &kr, (int32_t)fe->node->cfg->default_query_max_num, body, &count, &r);
    query_reply(conn, req, &r, body);
    evbuffer_free(body);
}

/* VIEW_MESSAGE_BY_ID: the raw record at a commit-log offset as the body. */
void fr_view_message(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    bk_result_t r;
    bk_caller_t who;
    bk_perm_reader_t rd;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_VIEW_MESSAGE, "ViewMessageRequest (view_message)") ||
        fr_caller(fe, conn, req, &who) != 0)
        return;
    struct evbuffer *body = evbuffer_new();
    if (!body) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    bk_query_view(fe->node->store, req->cmd->view_message->offset, bk_perm_reader_init(&rd, &who, BK_OP_VIEW), body, &r);
    query_reply(conn, req, &r, body);
    evbuffer_free(body);
}
