/* fr_remoting_admin_wire.c: RocketMQ's administration JSON bodies (see
 * fr_remoting_admin_wire.h). */
#include "fr_remoting_admin_wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_http.h"
#include "rmq_json.h"
#include "rmq_message.h"
#include "rmq_topic_json.h"

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

/* Parses body as a JSON object named what; NULL with why set. */
static rmq_json_t *parse_object(const uint8_t *body, size_t len, const char *what, char *why, size_t whylen)
{
    char err[128];
    rmq_json_t *d = rmq_json_parse((const char *)body, len, err, sizeof(err));
    if (!d)
        snprintf(why, whylen, "%s body is no JSON: %s", what, err);
    else if (d->type != RMQ_JSON_OBJECT)
        snprintf(why, whylen, "%s body is not a JSON object", what);
    else
        return d;
    rmq_json_free(d);
    return NULL;
}

rmq_err_t fr_rm_group_parse(const uint8_t *body, size_t len, bk_group_t *out, char *why, size_t whylen)
{
    rmq_json_t *d = parse_object(body, len, "SubscriptionGroupConfig", why, whylen);
    rmq_err_t rc = d ? group_fields(d, out, why, whylen) : RMQ_EPROTO;
    rmq_json_free(d);
    return rc;
}

/* ---- lists: SubscriptionGroupList, CreateTopicListRequestBody ------------ */

/* Reads one list element into slot i of out (an array of elements). */
typedef rmq_err_t (*item_fn)(const rmq_json_t *item, void *out, size_t i, char *why, size_t whylen);

/* Reads member key of body (a JSON array of objects, at most max) with fn
 * into a fresh array of n elements of size bytes each. */
static rmq_err_t parse_list(const uint8_t *body, size_t len, const char *what, const char *key, size_t size,
                            size_t max, item_fn fn, void **out, size_t *n, char *why, size_t whylen)
{
    rmq_json_t *d = parse_object(body, len, what, why, whylen);
    const rmq_json_t *list = d ? rmq_json_get(d, key) : NULL;
    rmq_err_t rc = RMQ_EPROTO;
    *out = NULL;
    *n = 0;
    if (d && (!list || list->type != RMQ_JSON_ARRAY))
        snprintf(why, whylen, "%s needs %s (an array)", what, key);
    else if (list && (list->n == 0 || list->n > max))
        snprintf(why, whylen, "%s.%s has %zu entries; 1 to %zu are allowed", what, key, list->n, max);
    else if (list && !(*out = calloc(list->n, size)))
        rc = RMQ_ENOMEM;
    else if (list)
        rc = RMQ_OK;
    for (size_t i = 0; rc == RMQ_OK && i < list->n; i++)
        rc = fn(list->items[i], *out, i, why, whylen);
    if (rc == RMQ_OK)
        *n = list->n;
    else {
        free(*out);
        *out = NULL;
    }
    rmq_json_free(d);
    return rc;
}

/* item_fn of SubscriptionGroupList.groupConfigList. */
static rmq_err_t group_item(const rmq_json_t *item, void *out, size_t i, char *why, size_t whylen)
{
    if (item->type == RMQ_JSON_OBJECT)
        return group_fields(item, (bk_group_t *)out + i, why, whylen);
    snprintf(why, whylen, "SubscriptionGroupList.groupConfigList[%zu] is not an object", i);
    return RMQ_EPROTO;
}

rmq_err_t fr_rm_group_list_parse(const uint8_t *body, size_t len, bk_group_t **out, size_t *n, char *why,
                                 size_t whylen)
{
    return parse_list(body, len, "SubscriptionGroupList", "groupConfigList", sizeof(bk_group_t),
                      FR_RM_ADMIN_LIST_MAX, group_item, (void **)out, n, why, whylen);
}

/* A TopicConfig's attributes map as a modification text ("+k=v,-k", the
 * keys carry their sign as in RocketMQ's request) into out[0..cap); an
 * absent or null map leaves out empty (no change). */
static rmq_err_t topic_attr_mod(const rmq_json_t *item, const char *where, char *out, size_t cap, char *why,
                                size_t whylen)
{
    const rmq_json_t *attrs = rmq_json_get(item, "attributes");
    size_t len = 0;
    out[0] = '\0';
    if (!attrs || attrs->type == RMQ_JSON_NULL)
        return RMQ_OK;
    if (attrs->type != RMQ_JSON_OBJECT) {
        snprintf(why, whylen, "%s: attributes is not an object", where);
        return RMQ_EPROTO;
    }
    for (size_t i = 0; i < attrs->n; i++) {
        const char *k = attrs->keys[i];
        const rmq_json_t *v = attrs->items[i];
        int add = k[0] == '+';
        if ((k[0] != '+' && k[0] != '-') || (add && v->type != RMQ_JSON_STRING)) {
            snprintf(why, whylen, "%s: attribute '%.64s' is not +key with a string value or -key", where, k);
            return RMQ_EPROTO;
        }
        int w = snprintf(out + len, cap - len, "%s%s%s%s", len ? "," : "", k, add ? "=" : "", add ? v->str : "");
        if (w < 0 || (size_t)w >= cap - len) {
            snprintf(why, whylen, "%s: attributes longer than %zu bytes", where, cap - 1);
            return RMQ_EPROTO;
        }
        len += (size_t)w;
    }
    return RMQ_OK;
}

/* item_fn of CreateTopicListRequestBody.topicConfigList. */
static rmq_err_t topic_item(const rmq_json_t *item, void *out, size_t i, char *why, size_t whylen)
{
    char where[80];
    rmq_topic_json_t t;
    fr_rm_topic_item_t *it = (fr_rm_topic_item_t *)out + i;
    bk_topic_t *topic = &it->topic;
    snprintf(where, sizeof where, "CreateTopicListRequestBody.topicConfigList[%zu]", i);
    if (rmq_topic_json_read(item, where, &t, why, whylen) != RMQ_OK ||
        topic_attr_mod(item, where, it->attr_mod, sizeof(it->attr_mod), why, whylen) != RMQ_OK)
        return RMQ_EPROTO;
    if (strlen(t.name) >= sizeof(topic->name)) {
        snprintf(why, whylen, "%s: topic '%.64s...' is longer than %zu characters", where, t.name,
                 sizeof(topic->name) - 1);
        return RMQ_EPROTO;
    }
    snprintf(topic->name, sizeof(topic->name), "%s", t.name);
    topic->read_queues = t.read_queues;
    topic->write_queues = t.write_queues;
    topic->perm = t.perm;
    topic->sys_flag = t.sys_flag;
    topic->order = t.order;
    return RMQ_OK;
}

rmq_err_t fr_rm_topic_list_parse(const uint8_t *body, size_t len, fr_rm_topic_item_t **out, size_t *n, char *why,
                                 size_t whylen)
{
    return parse_list(body, len, "CreateTopicListRequestBody", "topicConfigList", sizeof(fr_rm_topic_item_t),
                      FR_RM_ADMIN_LIST_MAX, topic_item, (void **)out, n, why, whylen);
}

/* ---- GetConsumerStatusBody (a client's answer) ----------------------------- */

/* A cursor over fastjson text. */
typedef struct scan {
    const char *p, *end;
} scan_t;

static void skip_space(scan_t *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* Skips a string at s->p (its opening quote); 0, or -1 when unterminated. */
static int skip_string(scan_t *s)
{
    for (s->p++; s->p < s->end; s->p++) {
        if (*s->p == '\\')
            s->p++;
        else if (*s->p == '"') {
            s->p++;
            return 0;
        }
    }
    return -1;
}

/* Skips one value at s->p: a string, or a run up to the next top-level ','
 * or closing bracket, with brackets balanced and matched (fastjson writes
 * map keys as objects, so this does not require strict JSON);
 * *first_close: just past the bracket that first brought the depth back to
 * 0 (NULL: none). 0, or -1 when unbalanced, mismatched or too deep. */
static int skip_value(scan_t *s, const char **first_close)
{
    char closer[RMQ_JSON_DEPTH_MAX];
    int depth = 0;
    *first_close = NULL;
    skip_space(s);
    if (s->p < s->end && *s->p == '"')
        return skip_string(s);
    while (s->p < s->end) {
        char c = *s->p;
        if (c == '"') {
            if (skip_string(s) != 0)
                return -1;
            continue;
        }
        if ((c == ',' || c == '}' || c == ']') && depth == 0)
            return 0;
        if (c == '{' || c == '[') {
            if (depth == RMQ_JSON_DEPTH_MAX)
                return -1;
            closer[depth++] = c == '{' ? '}' : ']';
        } else if (c == '}' || c == ']') {
            if (c != closer[--depth])
                return -1;
            if (depth == 0 && !*first_close)
                *first_close = s->p + 1;
        }
        s->p++;
    }
    return depth == 0 ? 0 : -1;
}

int fr_rm_consumer_status_table(const uint8_t *body, size_t len, const uint8_t **table, size_t *table_len)
{
    static const char key[] = "\"messageQueueTable\"";
    scan_t s = {(const char *)body, (const char *)body + len};
    skip_space(&s);
    if (s.p >= s.end || *s.p++ != '{')
        return -1;
    for (;;) {
        skip_space(&s);
        if (s.p >= s.end || *s.p != '"')
            return -1;
        const char *k = s.p;
        if (skip_string(&s) != 0)
            return -1;
        int wanted = (size_t)(s.p - k) == sizeof(key) - 1 && memcmp(k, key, sizeof(key) - 1) == 0;
        skip_space(&s);
        if (s.p >= s.end || *s.p++ != ':')
            return -1;
        skip_space(&s);
        const char *v = s.p, *closed, *e;
        if (skip_value(&s, &closed) != 0 || s.p >= s.end)
            return -1;
        for (e = s.p; e > v && (e[-1] == ' ' || e[-1] == '\t' || e[-1] == '\n' || e[-1] == '\r'); e--)
            ;
        if (wanted && *v == '{' && closed == e) {
            *table = (const uint8_t *)v;
            *table_len = (size_t)(e - v);
            return 0;
        }
        if (*s.p == '}')
            return -1;
        if (*s.p++ != ',')
            return -1;
    }
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
