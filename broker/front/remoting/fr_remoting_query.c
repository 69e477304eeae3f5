/* fr_remoting_query.c: QUERY_MESSAGE (12) on the remoting front, what
 * mqadmin queryMsgByKey and a client's queryMessage send: extFields topic,
 * key, maxNum, beginTimestamp, endTimestamp; the core's search by key
 * (core/bk_query.c) answers the matching records, re-encoded as
 * MessageDecoder's layout, with the header fields RocketMQ's
 * QueryMessageResponseHeader requires. Loop thread. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bk_query.h"
#include "fr_remoting.h"
#include "fr_remoting_wire.h"

/* Answers SUCCESS with the records of rec, re-encoded, or SYSTEM_ERROR. */
static void reply_records(rmq_conn_t *conn, const rmq_remoting_request_t *req, struct evbuffer *rec)
{
    size_t len = evbuffer_get_length(rec);
    const uint8_t *data = evbuffer_pullup(rec, -1);
    uint8_t *msg = data ? malloc(len) : NULL;
    int32_t count;
    if (!msg || fr_rm_messages_encode(data, len, msg, &count) != RMQ_OK) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "QUERY_MESSAGE: %s",
                            msg ? "a stored record could not be read" : "out of memory");
        free(msg);
        return;
    }
    rmq_remoting_field_t f[] = {{"indexLastUpdateTimestamp", "0"}, {"indexLastUpdatePhyoffset", "0"}};
    rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .fields = f, .n_fields = 2, .body = msg,
                                .body_len = len};
    rmq_remoting_reply(conn, req, &rep);
    free(msg);
}

void fr_rm_handle_query_message(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    int64_t max_num, begin, end;
    const char *topic = fr_rm_str(conn, req, "topic", NULL, 1, NULL);
    const char *key = topic ? fr_rm_str(conn, req, "key", NULL, 1, NULL) : NULL;
    bk_result_t r;
    int32_t count = 0;
    if (!key || fr_rm_int(conn, req, "maxNum", NULL, 1, INT32_MIN, INT32_MAX, 0, &max_num) != 0 ||
        fr_rm_int(conn, req, "beginTimestamp", NULL, 1, INT64_MIN, INT64_MAX, 0, &begin) != 0 ||
        fr_rm_int(conn, req, "endTimestamp", NULL, 1, INT64_MIN, INT64_MAX, 0, &end) != 0)
        return;
    struct evbuffer *rec = evbuffer_new();
    if (!rec) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "QUERY_MESSAGE: out of memory");
        return;
    }
    bk_query_key_req_t kr = {.topic = topic, .key = key, .max_num = (int32_t)max_num, .begin_ms = begin,
                             .end_ms = end};
    if (bk_query_key(rm->bk->store, &kr, (int32_t)rm->bk->cfg->default_query_max_num, rec, &count, &r) != BK_OK)
        fr_rm_reply_result(conn, req, &r);
    else
        reply_records(conn, req, rec);
    evbuffer_free(rec);
}
