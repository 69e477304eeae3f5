/* fr_offsets.c: the rmq front-end of the consumer-offset requests:
 * QUERY/UPDATE_CONSUMER_OFFSET, GET_MAX/MIN_OFFSET,
 * SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME, GET_CONSUME_STATS
 * (decoded into the core's neutral requests, core/bk_offset_ops.c) and
 * GET_ALL_CONSUMER_OFFSET (the offsets table's own protobuf view). */
#include <stdlib.h>
#include <string.h>

#include "bk_front.h"
#include "bk_offsets_pb.h"
#include "bk_offset_ops.h"
#include "fr_routes.h"
#include "fr_perm.h"
#include "fr_status.h"

/* Answers SUCCESS with an OffsetResponse header. */
static void reply_offset(rmq_conn_t *conn, const rmq_frame_t *req, int64_t offset, int64_t ts)
{
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__OffsetResponse o = RMQ__OFFSET_RESPONSE__INIT;
    o.offset = offset;
    o.timestamp = ts;
    resp.header_case = RMQ__COMMAND__HEADER_OFFSET_RESP;
    resp.offset_resp = &o;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
}

/* The core's key of a ConsumerOffsetRequest (strings borrowed from h). */
static bk_offset_key_t offset_key(const Rmq__ConsumerOffsetRequest *h)
{
    return (bk_offset_key_t){.topic = h->topic, .group = h->consumer_group, .queue_id = h->queue_id};
}

/* QUERY_CONSUMER_OFFSET: the stored offset, or QUERY_NOT_FOUND. */
void fr_query_consumer_offset(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_CONSUMER_OFFSET, "ConsumerOffsetRequest (consumer_offset)"))
        return;
    bk_offset_key_t key = offset_key(req->cmd->consumer_offset);
    bk_result_t r;
    int64_t off;
    if (!fr_allowed(fe, conn, req, key.topic, key.group))
        return;
    if (bk_offset_query(fe->offset_ops, &key, &off, &r) != BK_OK)
        fr_reply_result(conn, rmq_reply_to(req->cmd), &r, NULL);
    else
        reply_offset(conn, req, off, 0);
}

/* UPDATE_CONSUMER_OFFSET: stores the offset (persisted by the tick). */
void fr_update_consumer_offset(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_CONSUMER_OFFSET, "ConsumerOffsetRequest (consumer_offset)"))
        return;
    bk_offset_key_t key = offset_key(req->cmd->consumer_offset);
    bk_result_t r;
    if (!fr_allowed(fe, conn, req, key.topic, key.group))
        return;
    if (bk_offset_commit(fe->offset_ops, &key, req->cmd->consumer_offset->commit_offset, &r) != BK_OK)
        fr_reply_result(conn, rmq_reply_to(req->cmd), &r, NULL);
    else
        rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
}

/* GET_MAX/MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME. */
void fr_queue_offset(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_QUEUE, "QueueRequest (queue)"))
        return;
    const Rmq__QueueRequest *h = req->cmd->queue;
    bk_queue_offset_req_t q = {.topic = h->topic, .queue_id = h->queue_id, .timestamp = h->timestamp};
    if (!fr_allowed(fe, conn, req, q.topic, NULL))
        return;
    switch (req->cmd->code) {
    case RMQ__REQUEST_CODE__GET_MAX_OFFSET: q.what = BK_QUEUE_MAX_OFFSET; break;
    case RMQ__REQUEST_CODE__GET_MIN_OFFSET: q.what = BK_QUEUE_MIN_OFFSET; break;
    case RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP: q.what = BK_QUEUE_OFFSET_BY_TIME; break;
    default: q.what = BK_QUEUE_EARLIEST_TIME; break;
    }
    bk_queue_offset_out_t out;
    bk_offset_queue(fe->offset_ops, &q, &out);
    reply_offset(conn, req, out.offset, out.timestamp);
}

/* GET_ALL_CONSUMER_OFFSET: the whole table, as slaves and mqadmin read it. */
void fr_all_offsets(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_allowed(fe, conn, req, NULL, NULL))
        return;
    Rmq__ConsumerOffsetTable *tab = bk_offsets_table_new(fe->node->offsets, NULL);
    if (!tab) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    resp.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET_TABLE;
    resp.consumer_offset_table = tab;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    bk_offsets_table_free(tab);
}

/* GET_CONSUME_STATS: broker vs consumer offset per queue of a group, its
 * pop cursor (pull_offset), and the messages per second it pulled over the
 * last minute. */
void fr_consume_stats(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_CONSUME_STATS_REQ, "ConsumeStatsRequest (consume_stats_req)"))
        return;
    const Rmq__ConsumeStatsRequest *h = req->cmd->consume_stats_req;
    bk_consume_progress_t cp;
    bk_result_t r;
    Rmq__QueueConsumeStats *qs = NULL;
    Rmq__QueueConsumeStats **ptrs = NULL;
    if (!fr_allowed(fe, conn, req, h->topic, h->consumer_group))
        return;
    if (bk_offset_progress(fe->offset_ops, h->consumer_group, h->topic, &cp, &r) != BK_OK) {
        fr_reply_result(conn, rmq_reply_to(req->cmd), &r, NULL);
        return;
    }
    qs = calloc(cp.n ? cp.n : 1, sizeof(*qs));
    ptrs = calloc(cp.n ? cp.n : 1, sizeof(*ptrs));
    if (!qs || !ptrs) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < cp.n; i++) {
        const bk_queue_progress_t *q = &cp.queues[i];
        rmq__queue_consume_stats__init(&qs[i]);
        qs[i].topic = (char *)q->topic;
        qs[i].queue_id = q->queue_id;
        qs[i].broker_offset = q->broker_offset;
        qs[i].consumer_offset = q->consumer_offset;
        qs[i].last_timestamp = q->last_timestamp;
        qs[i].pull_offset = bk_pop_pull_offset(fe->pop, h->consumer_group, q->topic, q->queue_id, q->consumer_offset);
        ptrs[i] = &qs[i];
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__ConsumeStats cs = RMQ__CONSUME_STATS__INIT;
    cs.queues = ptrs;
    cs.n_queues = cp.n;
    cs.consume_tps = cp.consume_tps;
    resp.header_case = RMQ__COMMAND__HEADER_CONSUME_STATS;
    resp.consume_stats = &cs;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
out:
    free(qs);
    free(ptrs);
    bk_consume_progress_clear(&cp);
}
