/* bk_query.c: QUERY_MESSAGE: messages of a topic by key (a KEYS word or
 * the UNIQ_KEY) within a store-time range, answered from the key index
 * (broker/store/st_index.c) with the raw records, newest first, as the
 * body. Loop thread. */
#include <inttypes.h>
#include <stdint.h>

#include "bk_broker.h"
#include "fr_routes.h"
#include "rmq_log.h"

/* QUERY_MESSAGE: header QueryMessageRequest {topic, key, max_num,
 * begin_timestamp, end_timestamp (0: now and later)}. */
void fr_query_message(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    const Rmq__QueryMessageRequest *q;
    struct evbuffer *body;
    int32_t max, count = 0;
    int64_t end;
    rmq_err_t rc;

    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_QUERY_MESSAGE, "QueryMessageRequest (query_message)"))
        return;
    q = req->cmd->query_message;
    if (!q->topic[0] || !q->key[0]) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST,
                        "QUERY_MESSAGE needs a topic and a key");
        return;
    }
    max = q->max_num > 0 && q->max_num < (int32_t)bk->cfg->default_query_max_num ? q->max_num
                                                                               : (int32_t)bk->cfg->default_query_max_num;
    end = q->end_timestamp > 0 ? q->end_timestamp : INT64_MAX;
    if (!(body = evbuffer_new())) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    rc = st_store_query_key(bk->store, q->topic, q->key, q->begin_timestamp, end, max, body, &count);
    if (rc == RMQ_OK && count > 0)
        rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, body);
    else if (rc == RMQ_OK || rc == RMQ_ENOTFOUND)
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__QUERY_NOT_FOUND,
                        "no message of %.200s with key %.200s in [%" PRId64 ", %" PRId64 "]%s", q->topic,
                        q->key, q->begin_timestamp, q->end_timestamp,
                        rc == RMQ_ENOTFOUND ? " (messageIndexEnable=false)" : "");
    else
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "query failed: %s",
                        rmq_strerror(rc));
    evbuffer_free(body);
}
