/* rmq_topic_json.c: RocketMQ's TopicConfig JSON object (see rmq_topic_json.h). */
#include "rmq_topic_json.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rmq_http.h"

void rmq_topic_list_json(struct evbuffer *out, const char *const *topics, size_t n, const char *broker_addr)
{
    static const char list[] = "\"topicList\":[";
    evbuffer_add(out, "{", 1);
    if (broker_addr != NULL) {
        evbuffer_add(out, "\"brokerAddr\":", 13);
        rmq_json_str(out, broker_addr);
    }
    evbuffer_add(out, ",", broker_addr != NULL);      /* a comma after brokerAddr only */
    evbuffer_add(out, list, sizeof(list) - 1);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            evbuffer_add(out, ",", 1);
        rmq_json_str(out, topics[i]);
    }
    evbuffer_add(out, "]}", 2);
}

int rmq_topic_filter_type_valid(const char *s)
{
    return strcmp(s, "SINGLE_TAG") == 0 || strcmp(s, "MULTI_TAG") == 0;
}

/* Member key of tc as an integer in [min, max] into *out; an optional
 * member keeps *out when absent or null. */
static rmq_err_t topic_int(const rmq_json_t *tc, const char *where, const char *topic, const char *key,
                           int optional, int64_t min, int64_t max, int32_t *out, char *why, size_t whylen)
{
    const rmq_json_t *v = rmq_json_get(tc, key);
    int64_t n;
    if (optional && (v == NULL || v->type == RMQ_JSON_NULL))
        return RMQ_OK;
    if (rmq_json_int(v, min, max, &n) == 0) {
        *out = (int32_t)n;
        return RMQ_OK;
    }
    snprintf(why, whylen, "%s: topic %.64s: %s is %s, not an integer in [%" PRId64 ", %" PRId64 "]", where, topic,
             key, v == NULL ? "missing" : "bad", min, max);
    return RMQ_EPROTO;
}

rmq_err_t rmq_topic_json_read(const rmq_json_t *tc, const char *where, rmq_topic_json_t *out, char *why,
                              size_t whylen)
{
    rmq_err_t err;
    *out = (rmq_topic_json_t){0};
    if (tc->type != RMQ_JSON_OBJECT) {
        snprintf(why, whylen, "%s is not an object", where);
        return RMQ_EPROTO;
    }
    const rmq_json_t *name = rmq_json_get(tc, "topicName");
    if (name == NULL || name->type != RMQ_JSON_STRING) {
        snprintf(why, whylen, "%s has no topicName string", where);
        return RMQ_EPROTO;
    }
    out->name = name->str;
    if ((err = topic_int(tc, where, name->str, "readQueueNums", 0, 0, INT32_MAX, &out->read_queues, why,
                         whylen)) != RMQ_OK ||
        (err = topic_int(tc, where, name->str, "writeQueueNums", 0, 0, INT32_MAX, &out->write_queues, why,
                         whylen)) != RMQ_OK ||
        (err = topic_int(tc, where, name->str, "perm", 0, 0, 15, &out->perm, why, whylen)) != RMQ_OK ||
        (err = topic_int(tc, where, name->str, "topicSysFlag", 1, 0, INT32_MAX, &out->sys_flag, why, whylen)) !=
            RMQ_OK)
        return err;
    const rmq_json_t *order = rmq_json_get(tc, "order");
    if (order != NULL && order->type != RMQ_JSON_NULL && order->type != RMQ_JSON_BOOL) {
        snprintf(why, whylen, "%s: topic %.64s: order is not a boolean", where, name->str);
        return RMQ_EPROTO;
    }
    const rmq_json_t *ft = rmq_json_get(tc, "topicFilterType");
    if (ft != NULL && ft->type != RMQ_JSON_NULL && (ft->type != RMQ_JSON_STRING || !rmq_topic_filter_type_valid(ft->str))) {
        snprintf(why, whylen, "%s: topic %.64s: topicFilterType is not SINGLE_TAG or MULTI_TAG", where, name->str);
        return RMQ_EPROTO;
    }
    out->order = order != NULL && order->type == RMQ_JSON_BOOL && strcmp(order->str, "true") == 0;
    return RMQ_OK;
}
