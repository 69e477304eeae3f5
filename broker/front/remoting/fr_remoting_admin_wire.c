/* fr_remoting_admin_wire.c: RocketMQ's administration JSON bodies (see
 * fr_remoting_admin_wire.h). */
#include "fr_remoting_admin_wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "rmq_http.h"
#include "rmq_json.h"
#include "rmq_message.h"

/* ---- SubscriptionGroupConfig ------------------------------------------- */

/* Reads boolean member key of obj into *out (left alone when absent or
 * null). 0, or -1 with why set. */
static int group_bool(const rmq_json_t *obj, const char *key, int *out, char *why, size_t whylen)
{
    const rmq_json_t *v = rmq_json_get(obj, key);
    if (!v || v->type == RMQ_JSON_NULL)
        return 0;
    const char *s = v->type == RMQ_JSON_BOOL || v->type == RMQ_JSON_STRING ? v->str : NULL;
    if (s && (strcmp(s, "true") == 0 || strcmp(s, "false") == 0)) {
        *out = s[0] == 't';
        return 0;
    }
    snprintf(why, whylen, "SubscriptionGroupConfig.%s is not a boolean", key);
    return -1;
}

/* Reads integer member key of obj in [min, max] into *out (left alone when
 * absent or null). 0, or -1 with why set. */
static int group_int(const rmq_json_t *obj, const char *key, int64_t min, int64_t max, int64_t *out, char *why,
                     size_t whylen)
{
    const rmq_json_t *v = rmq_json_get(obj, key);
    if (!v || v->type == RMQ_JSON_NULL)
        return 0;
    if ((v->type == RMQ_JSON_NUMBER || v->type == RMQ_JSON_STRING) && rmq_json_int(v, min, max, out) == 0)
        return 0;
    snprintf(why, whylen, "SubscriptionGroupConfig.%s is not an integer in [%" PRId64 ", %" PRId64 "]", key, min,
             max);
    return -1;
}

/* Reads the fields of object d into *out over RocketMQ's defaults. */
static rmq_err_t group_fields(const rmq_json_t *d, bk_group_t *out, char *why, size_t whylen)
{
    const char *name = rmq_json_get(d, "groupName") ? rmq_json_scalar(rmq_json_get(d, "groupName")) : NULL;
    const char *rule;
    int64_t retry_queues = 1, retry_max = 16, broker_id = 0, slow = 1;
    *out = (bk_group_t){.consume_enable = 1, .consume_broadcast_enable = 1};
    if (!name || rmq_json_get(d, "groupName")->type != RMQ_JSON_STRING) {
        snprintf(why, whylen, "SubscriptionGroupConfig needs groupName (a string)");
        return RMQ_EPROTO;
    }
    if (!rmq_name_is_valid(name, strlen(name), &rule)) {
        snprintf(why, whylen, "SubscriptionGroupConfig.groupName '%.100s' %s", name, rule);
        return RMQ_EPROTO;
    }
    if (group_bool(d, "consumeEnable", &out->consume_enable, why, whylen) ||
        group_bool(d, "consumeBroadcastEnable", &out->consume_broadcast_enable, why, whylen) ||
        group_bool(d, "consumeMessageOrderly", &out->consume_orderly, why, whylen) ||
        group_int(d, "retryQueueNums", 0, INT32_MAX, &retry_queues, why, whylen) ||
        group_int(d, "retryMaxTimes", -1, INT32_MAX, &retry_max, why, whylen) ||
        group_int(d, "brokerId", 0, INT64_MAX, &broker_id, why, whylen) ||
        group_int(d, "whichBrokerWhenConsumeSlowly", 0, INT64_MAX, &slow, why, whylen))
        return RMQ_EPROTO;
    snprintf(out->name, sizeof(out->name), "%s", name);
    out->retry_queue_nums = (int32_t)retry_queues;
    out->retry_max_times = (int32_t)retry_max;
    out->broker_id = broker_id;
    out->which_broker_when_consume_slowly = slow;
    return RMQ_OK;
}

rmq_err_t fr_rm_group_parse(const uint8_t *body, size_t len, bk_group_t *out, char *why, size_t whylen)
{
    char err[128];
    rmq_json_t *d = rmq_json_parse((const char *)body, len, err, sizeof(err));
    rmq_err_t rc = RMQ_EPROTO;
    if (!d)
        snprintf(why, whylen, "SubscriptionGroupConfig body is no JSON: %s", err);
    else if (d->type != RMQ_JSON_OBJECT)
        snprintf(why, whylen, "SubscriptionGroupConfig body is not a JSON object");
    else
        rc = group_fields(d, out, why, whylen);
    rmq_json_free(d);
    return rc;
}

/* ---- writers -------------------------------------------------------------- */

static const char *json_bool(int v)
{
    return v ? "true" : "false";
}

void fr_rm_group_json(struct evbuffer *out, const bk_group_t *grp)
{
    evbuffer_add_printf(out, "{\"brokerId\":%" PRId64 ",\"consumeBroadcastEnable\":%s,\"consumeEnable\":%s,"
                        "\"consumeFromMinEnable\":true,\"consumeMessageOrderly\":%s,\"groupName\":", grp->broker_id,
                        json_bool(grp->consume_broadcast_enable), json_bool(grp->consume_enable),
                        json_bool(grp->consume_orderly));
    rmq_json_str(out, grp->name);
    evbuffer_add_printf(out, ",\"notifyConsumerIdsChangedEnable\":true,\"retryMaxTimes\":%" PRId32
                        ",\"retryQueueNums\":%" PRId32 ",\"whichBrokerWhenConsumeSlowly\":%" PRId64 "}",
                        grp->retry_max_times, grp->retry_queue_nums, grp->which_broker_when_consume_slowly);
}

/* RocketMQ 5's "attributes" member of a TopicConfig: {"key":"value",...}. */
static void topic_attrs_json(struct evbuffer *out, const char *attributes)
{
    char key[RMQ_TOPIC_ATTRS_MAX], value[RMQ_TOPIC_ATTRS_MAX];
    size_t cursor = 0;
    FR_RM_ADD(out, "\"attributes\":{");
    for (int n = 0; rmq_topic_attrs_next(attributes, &cursor, key, sizeof(key), value, sizeof(value)); n++) {
        if (n)
            FR_RM_ADD(out, ",");
        rmq_json_str(out, key);
        FR_RM_ADD(out, ":");
        rmq_json_str(out, value);
    }
    FR_RM_ADD(out, "},");
}

void fr_rm_topic_json(struct evbuffer *out, const bk_topic_t *topic)
{
    FR_RM_ADD(out, "{");
    topic_attrs_json(out, topic->attributes);
    evbuffer_add_printf(out, "\"order\":%s,\"perm\":%" PRId32 ",\"readQueueNums\":%" PRId32
                        ",\"topicFilterType\":\"SINGLE_TAG\",\"topicName\":", json_bool(topic->order), topic->perm,
                        topic->read_queues);
    rmq_json_str(out, topic->name);
    evbuffer_add_printf(out, ",\"topicSysFlag\":%" PRId32 ",\"writeQueueNums\":%" PRId32 "}", topic->sys_flag,
                        topic->write_queues);
}

void fr_rm_mq_json(struct evbuffer *out, const char *topic, const char *broker_name, int32_t queue_id)
{
    FR_RM_ADD(out, "{\"brokerName\":");
    rmq_json_str(out, broker_name);
    evbuffer_add_printf(out, ",\"queueId\":%" PRId32 ",\"topic\":", queue_id);
    rmq_json_str(out, topic);
    FR_RM_ADD(out, "}");
}

void fr_rm_reset_offset_json(struct evbuffer *out, const bk_offset_reset_t *rs, const char *broker_name)
{
    FR_RM_ADD(out, "{\"offsetTable\":{");
    for (size_t i = 0; i < rs->n; i++) {
        if (i)
            FR_RM_ADD(out, ",");
        fr_rm_mq_json(out, rs->topic, broker_name, (int32_t)i);
        evbuffer_add_printf(out, ":%" PRId64, rs->offsets[i]);
    }
    FR_RM_ADD(out, "}}");
}

void fr_rm_data_version_json(struct evbuffer *out, int64_t counter, int64_t timestamp)
{
    evbuffer_add_printf(out, "{\"counter\":%" PRId64 ",\"timestamp\":%" PRId64 "}", counter, timestamp);
}
