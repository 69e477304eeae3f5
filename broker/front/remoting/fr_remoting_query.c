/* fr_remoting_query.c: the remoting front of the queries that read stored
 * messages back, over the core's queries (core/bk_query.c), answered in
 * MessageDecoder's layout:
 *
 * - QUERY_MESSAGE (12): extFields topic, key, maxNum, beginTimestamp,
 *   endTimestamp, and _UNIQUE_KEY_QUERY=true when key is a client's
 *   UNIQ_KEY (maxNum is then defaultQueryMaxNum, as RocketMQ's
 *   QueryMessageProcessor does); answered SUCCESS with the records, or
 *   QUERY_NOT_FOUND, both with indexLastUpdateTimestamp and
 *   indexLastUpdatePhyoffset. The signer needs SUB on the topic (bk_perm.h).
 * - VIEW_MESSAGE_BY_ID (33): the record at commit-log offset `offset`; an
 *   offset names any record of the log, so the record's own topic is
 *   checked against the signer once it is read (the core's reader). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_query.h"
#include "fr_remoting.h"
#include "fr_remoting_wire.h"

/* Answers code with the raw records of body re-encoded for RocketMQ's
 * MessageDecoder and fields f[0..n); SYSTEM_ERROR if they do not re-encode. */
static void query_reply_records(rmq_conn_t *conn, const rmq_remoting_request_t *req, struct evbuffer *body,
                                const rmq_remoting_field_t *f, size_t n)
{
    uint8_t *msg;
    size_t len;
    rmq_err_t rc = fr_rm_records_encode(body, &msg, &len);
    if (rc == RMQ_OK) {
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .fields = f, .n_fields = n, .body = msg,
                                    .body_len = len};
        rmq_remoting_reply(conn, req, &rep);
    } else {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: %s", req->code,
                            rc == RMQ_ECORRUPT ? "a stored record does not re-encode" : "out of memory");
    }
    free(msg);
}

/* Reads QUERY_MESSAGE's extFields into *kr; 0, or -1 after answering. */
static int query_decode(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req,
                        bk_query_key_req_t *kr)
{
    int64_t max_num, begin, end;
    const char *topic = fr_rm_str(conn, req, "topic", NULL, 1, NULL);
    const char *key = topic ? fr_rm_str(conn, req, "key", NULL, 1, NULL) : NULL;
    const char *uniq = rmq_remoting_field(req, "_UNIQUE_KEY_QUERY");
    if (!key || fr_rm_int(conn, req, "maxNum", NULL, 1, INT32_MIN, INT32_MAX, 0, &max_num) != 0 ||
        fr_rm_int(conn, req, "beginTimestamp", NULL, 1, INT64_MIN, INT64_MAX, 0, &begin) != 0 ||
        fr_rm_int(conn, req, "endTimestamp", NULL, 1, INT64_MIN, INT64_MAX, 0, &end) != 0)
        return -1;
    if (uniq && strcmp(uniq, "true") == 0)
        max_num = rm->fe->node->cfg->default_query_max_num;
    *kr = (bk_query_key_req_t){.topic = topic, .key = key, .max_num = (int32_t)max_num, .begin_ms = begin,
                               .end_ms = end};
    return 0;
}

void fr_rm_handle_query(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_query_key_req_t kr;
    bk_result_t r;
    int32_t count = 0;
    int64_t last_ts, last_phys;
    char ts[24], phys[24];
    if (query_decode(rm, conn, req, &kr) != 0 || !fr_rm_allowed(rm, conn, req, kr.topic, NULL))
        return;
    struct evbuffer *body = evbuffer_new();
    if (!body) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
        return;
    }
    bk_query_key(rm->fe->node->store, &kr, (int32_t)rm->fe->node->cfg->default_query_max_num, body, &count, &r);
    st_store_index_last(rm->fe->node->store, &last_ts, &last_phys);
    snprintf(ts, sizeof(ts), "%" PRId64, last_ts);
    snprintf(phys, sizeof(phys), "%" PRId64, last_phys);
    rmq_remoting_field_t f[] = {{"indexLastUpdateTimestamp", ts}, {"indexLastUpdatePhyoffset", phys}};
    if (r.status == BK_OK) {
        query_reply_records(conn, req, body, f, 2);
    } else {
        rmq_remoting_reply_t rep = {.code = fr_rm_status_code(r.status), .remark = r.why, .fields = f,
                                    .n_fields = 2};
        rmq_remoting_reply(conn, req, &rep);
    }
    evbuffer_free(body);
}

void fr_rm_handle_view(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int64_t off;
    bk_result_t r;
    bk_caller_t who;
    bk_perm_reader_t rd;
    if (fr_rm_int(conn, req, "offset", NULL, 1, 0, INT64_MAX, 0, &off) != 0 || fr_rm_caller(rm, conn, req, &who) != 0)
        return;
    struct evbuffer *body = evbuffer_new();
    if (!body) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
        return;
    }
    bk_query_view(rm->fe->node->store, off, bk_perm_reader_init(&rd, &who, BK_OP_VIEW), body, &r);
    if (r.status == BK_OK)
        query_reply_records(conn, req, body, NULL, 0);
    else if (r.status == BK_NOT_FOUND)               /* RocketMQ's viewMessageById: SYSTEM_ERROR */
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "can not find message: %s", r.why);
    else
        fr_rm_reply_result(conn, req, &r);
    evbuffer_free(body);
}
