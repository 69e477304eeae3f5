/* bk_query.c: reading stored messages back (see bk_query.h): by commit-log
 * offset with the record's topic checked against the reader, and by key
 * from the store's key index. */
#include "bk_query.h"

#include <inttypes.h>
#include <string.h>

#include "rmq_message.h"

int bk_reader_check(const bk_reader_t *rd, const char *topic, size_t len, bk_result_t *r)
{
    char name[RMQ_TOPIC_MAX + 1], why[BK_WHY_MAX];
    if (!rd || !rd->may_read)
        return 1;
    if (len > RMQ_TOPIC_MAX)
        len = RMQ_TOPIC_MAX;
    memcpy(name, topic, len);
    name[len] = '\0';
    why[0] = '\0';
    if (rd->may_read(rd->arg, name, why, sizeof(why)))
        return 1;
    bk_result_set(r, BK_NO_PERMISSION, "%s", why[0] ? why : "no permission to read this message's topic");
    return 0;
}

bk_status_t bk_query_view(st_store_t *store, int64_t offset, const bk_reader_t *rd, struct evbuffer *body,
                          bk_result_t *r)
{
    rmq_record_t rec;
    struct evbuffer *buf = evbuffer_new();
    rmq_err_t rc = buf ? st_store_read_record(store, offset, buf) : RMQ_ENOMEM;
    if (rc == RMQ_OK)
        rc = rmq_record_decode(evbuffer_pullup(buf, -1), evbuffer_get_length(buf), 0, &rec);
    if (rc == RMQ_ENOMEM) {
        bk_result_set(r, BK_SYSTEM_ERROR, "out of memory");
        goto out;
    }
    if (rc != RMQ_OK) {
        bk_result_set(r, BK_NOT_FOUND, "no message at commit-log offset %" PRId64 ": %s", offset, rmq_strerror(rc));
        goto out;
    }
    if (!bk_reader_check(rd, rec.topic, rec.topic_len, r))
        goto out;
    if (evbuffer_add_buffer(body, buf) != 0) {
        bk_result_set(r, BK_SYSTEM_ERROR, "out of memory");
        goto out;
    }
    bk_result_ok(r);
out:
    if (buf)
        evbuffer_free(buf);
    return r->status;
}

bk_status_t bk_query_key(st_store_t *store, const bk_query_key_req_t *req, int32_t max_num, struct evbuffer *body,
                         int32_t *count, bk_result_t *r)
{
    *count = 0;
    if (!req->topic[0] || !req->key[0])
        return bk_result_set(r, BK_BAD_REQUEST, "QUERY_MESSAGE needs a topic and a key");
    int32_t max = req->max_num > 0 && req->max_num < max_num ? req->max_num : max_num;
    int64_t end = req->end_ms > 0 ? req->end_ms : INT64_MAX;
    rmq_err_t rc = st_store_query_key(store, req->topic, req->key, req->begin_ms, end, max, body, count);
    if (rc == RMQ_OK && *count > 0)
        return bk_result_ok(r);
    if (rc == RMQ_OK || rc == RMQ_ENOTFOUND)
        return bk_result_set(r, BK_NOT_FOUND, "no message of %.60s with key %.60s in [%" PRId64 ", %" PRId64 "]%s",
                             req->topic, req->key, req->begin_ms, req->end_ms,
                             rc == RMQ_ENOTFOUND ? " (messageIndexEnable=false)" : "");
    return bk_result_set(r, BK_SYSTEM_ERROR, "query failed: %s", rmq_strerror(rc));
}
