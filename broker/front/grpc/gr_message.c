/* gr_message.c: v2 Message <-> stored message (see gr_message.h): the
 * send-side checks a RocketMQ 5 proxy makes (SendMessageActivity), the 4.x
 * properties they become, and the delivered Message rebuilt from a record
 * (GrpcConverter's order and rules). */
#include "gr_message.h"

#include <ctype.h>
#include <inttypes.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_props.h"
#include "rmq_fmt.h"
#include "rmq_inflate.h"

#define SP(x) APACHE__ROCKETMQ__V2__SYSTEM_PROPERTIES___##x
#define CODE(x) APACHE__ROCKETMQ__V2__CODE__##x
#define MSG_TYPE(x) APACHE__ROCKETMQ__V2__MESSAGE_TYPE__##x

/* The longest orphaned_transaction_recovery_duration a send may ask for
 * (the proxy's maxTransactionRecoverySecond). */
#define TX_RECOVERY_MAX_SEC 3600

/* ---- the system's property names ------------------------------------------- */

static const char *const system_props[] = {
    /* RocketMQ MessageConst.STRING_HASH_SET */
    "TRACE_ON", "MSG_REGION", RMQ_PROP_KEYS, RMQ_PROP_TAGS, RMQ_PROP_WAIT, RMQ_PROP_DELAY,
    RMQ_PROP_RETRY_TOPIC, RMQ_PROP_REAL_TOPIC, RMQ_PROP_REAL_QID, RMQ_PROP_TRAN_MSG,
    RMQ_PROP_PRODUCER_GROUP, "MIN_OFFSET", "MAX_OFFSET", "BUYER_ID", RMQ_PROP_ORIGIN_MESSAGE_ID,
    "TRANSFER_FLAG", "CORRECTION_FLAG", "MQ2_FLAG", RMQ_PROP_RECONSUME_TIME, RMQ_PROP_UNIQ_KEY,
    "MAX_RECONSUME_TIMES", "CONSUME_START_TIME", "POP_CK", "POP_CK_OFFSET", "1ST_POP_TIME",
    "TRAN_PREPARED_QUEUE_OFFSET", "DUP_INFO", "EXTEND_UNIQ_INFO", "INSTANCE_ID", "CORRELATION_ID",
    "REPLY_TO_CLIENT", "TTL", "ARRIVE_TIME", "PUSH_REPLY_TIME", "CLUSTER", "MSG_TYPE",
    "INNER_MULTI_QUEUE_OFFSET", RMQ_PROP_TIMER_DELAY_MS, RMQ_PROP_TIMER_DELAY_SEC,
    RMQ_PROP_TIMER_DELIVER_MS, "TIMER_ENQUEUE_MS", "TIMER_DEQUEUE_MS", "TIMER_ROLL_TIMES",
    "TIMER_OUT_MS", "TIMER_DEL_UNIQKEY", "TIMER_DELAY_LEVEL", RMQ_PROP_BORN_HOST,
    RMQ_PROP_BORN_TIMESTAMP, RMQ_PROP_DLQ_ORIGIN_TOPIC, RMQ_PROP_DLQ_ORIGIN_MESSAGE_ID, "__CRC32#",
    /* set by the system, mapped to SystemProperties */
    RMQ_PROP_SHARDING_KEY, RMQ_PROP_TRACE_CONTEXT, RMQ_PROP_CHECK_IMMUNITY_SEC, "__transactionId__",
    RMQ_PROP_TX_CHECK_TIMES,
    /* rmq's own */
    RMQ_PROP_DELIVER_AT,
    NULL,
};

int gr_prop_is_system(const char *name, size_t len)
{
    for (const char *const *s = system_props; *s; s++)
        if (strlen(*s) == len && memcmp(*s, name, len) == 0)
            return 1;
    return 0;
}

/* ---- time ------------------------------------------------------------------ */

void gr_duration_set_ms(Google__Protobuf__Duration *du, int64_t ms)
{
    google__protobuf__duration__init(du);
    du->seconds = ms / 1000;
    du->nanos = (int32_t)(ms % 1000) * 1000000;
}

int64_t gr_duration_ms(const Google__Protobuf__Duration *du)
{
    if (du->seconds > INT64_MAX / 1000 - 1)
        return INT64_MAX;
    if (du->seconds < INT64_MIN / 1000 + 1)
        return INT64_MIN;
    return du->seconds * 1000 + du->nanos / 1000000;
}

void gr_timestamp_set_ms(Google__Protobuf__Timestamp *ts, int64_t ms)
{
    google__protobuf__timestamp__init(ts);
    ts->seconds = ms / 1000;
    ts->nanos = (int32_t)(ms % 1000) * 1000000;
    if (ts->nanos < 0) {
        ts->seconds -= 1;
        ts->nanos += 1000000000;
    }
}

/* ---- small checks ---------------------------------------------------------- */

static int has_control(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 1;
    return 0;
}

static int is_blank(const char *s)
{
    for (; *s; s++)
        if (!isspace((unsigned char)*s))
            return 0;
    return 1;
}

static int64_t timestamp_ms(const Google__Protobuf__Timestamp *ts)
{
    return ts->seconds * 1000 + ts->nanos / 1000000;
}

/* 1 if ts is a wall-clock time whose milliseconds fit an int64. */
static int timestamp_is_sane(const Google__Protobuf__Timestamp *ts)
{
    return ts->seconds >= 0 && ts->seconds <= INT64_MAX / 1000 - 1 && ts->nanos >= 0 && ts->nanos < 1000000000;
}

/* Inflates in[0..len) (zlib or gzip) into *buf (replacing what it held)
 * up to max bytes; *out_len its size. RMQ_ECORRUPT when it is not one
 * whole stream or inflates to more than max; RMQ_ENOMEM. */
static rmq_err_t inflate_body(const uint8_t *in, size_t len, size_t max, uint8_t **buf, size_t *out_len)
{
    char why[160];
    uint8_t *out;
    rmq_err_t rc = rmq_inflate(in, len, 15 + 32, max, &out, out_len, why, sizeof why);

    if (rc == RMQ_OK) {
        free(*buf);
        *buf = out;
    }
    return rc;
}

/* ---- send: v2 -> stored ---------------------------------------------------- */

void gr_store_msg_deinit(gr_store_msg_t *sm)
{
    rmq_props_buf_free(&sm->props);
    free(sm->body);
    sm->body = NULL;
}

/* Checks the user properties, the tag and the keys as the proxy does and
 * appends the user properties to pb. 1, or 0 with *st. */
static int put_user_part(const Apache__Rocketmq__V2__Message *msg, const Apache__Rocketmq__V2__SystemProperties *sys,
                         rmq_props_buf_t *pb, gr_status_t *st)
{
    size_t bytes = 0;

    if (msg->n_user_properties > GR_USER_PROPS_MAX)
        return gr_status_set(st, CODE(MESSAGE_PROPERTIES_TOO_LARGE), "too many user properties: %zu, max is %d",
                             msg->n_user_properties, GR_USER_PROPS_MAX);
    for (size_t i = 0; i < msg->n_user_properties; i++) {
        const char *k = msg->user_properties[i]->key, *v = msg->user_properties[i]->value;
        if (gr_prop_is_system(k, strlen(k)))
            return gr_status_set(st, CODE(ILLEGAL_MESSAGE_PROPERTY_KEY), "property is used by system: %s", k);
        if (!*k || has_control(k))
            return gr_status_set(st, CODE(ILLEGAL_MESSAGE_PROPERTY_KEY),
                                 "the key of a property cannot be empty or contain control characters");
        if (has_control(v))
            return gr_status_set(st, CODE(ILLEGAL_MESSAGE_PROPERTY_KEY),
                                 "the value of property %s contains control characters", k);
        bytes += strlen(k) + strlen(v);
        if (rmq_props_buf_put(pb, k, v) != RMQ_OK)
            return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    }
    if (sys->_tag_case && *sys->tag) {
        if (is_blank(sys->tag) || strchr(sys->tag, '|') || has_control(sys->tag))
            return gr_status_set(st, CODE(ILLEGAL_MESSAGE_TAG),
                                 "a tag cannot be blank or contain '|' or control characters");
        bytes += strlen(sys->tag);
    }
    for (size_t i = 0; i < sys->n_keys; i++) {
        if (*sys->keys[i] && (is_blank(sys->keys[i]) || has_control(sys->keys[i])))
            return gr_status_set(st, CODE(ILLEGAL_MESSAGE_KEY), "a key cannot be blank or contain control characters");
        bytes += strlen(sys->keys[i]);
    }
    if (bytes > GR_USER_PROPS_BYTES_MAX)
        return gr_status_set(st, CODE(MESSAGE_PROPERTIES_TOO_LARGE),
                             "the user properties, tag and keys take %zu bytes, max is %d", bytes,
                             GR_USER_PROPS_BYTES_MAX);
    return 1;
}

/* KEYS: the non-empty keys joined by a space. */
static rmq_err_t put_keys(const Apache__Rocketmq__V2__SystemProperties *sys, rmq_props_buf_t *pb)
{
    size_t len = 0, at = 0;
    char *joined;
    rmq_err_t rc;

    for (size_t i = 0; i < sys->n_keys; i++)
        len += strlen(sys->keys[i]) + 1;
    if (len == 0)
        return RMQ_OK;
    joined = malloc(len);
    if (!joined)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < sys->n_keys; i++) {
        size_t kl = strlen(sys->keys[i]);
        if (kl == 0)
            continue;
        if (at)
            joined[at++] = ' ';
        memcpy(joined + at, sys->keys[i], kl);
        at += kl;
    }
    rc = at ? rmq_props_buf_append(pb, RMQ_PROP_KEYS, strlen(RMQ_PROP_KEYS), joined, at) : RMQ_OK;
    free(joined);
    return rc;
}

static int put_int(rmq_props_buf_t *pb, const char *name, int64_t v)
{
    char num[RMQ_FMT_I64_LEN];
    rmq_fmt_i64(num, v);
    return rmq_props_buf_put(pb, name, num) == RMQ_OK;
}

/* delivery_timestamp: TIMER_DELIVER_MS (as the proxy stores it) and
 * __STARTDELIVERTIME (what rmq's scheduler delivers by). 1, or 0 with *st. */
static int put_delivery_time(const Apache__Rocketmq__V2__SystemProperties *sys, const gr_send_ctx_t *ctx,
                             rmq_props_buf_t *pb, gr_status_t *st)
{
    if (!sys->_delivery_timestamp_case || !sys->delivery_timestamp)
        return 1;
    if (!timestamp_is_sane(sys->delivery_timestamp))
        return gr_status_set(st, CODE(ILLEGAL_DELIVERY_TIME), "delivery timestamp out of range");
    int64_t at = timestamp_ms(sys->delivery_timestamp);
    if (ctx->max_delay_ms > 0 && at - ctx->now_ms > ctx->max_delay_ms)
        return gr_status_set(st, CODE(ILLEGAL_DELIVERY_TIME),
                             "the delivery time is too far ahead: the max delay is %" PRId64 " ms", ctx->max_delay_ms);
    if (!put_int(pb, RMQ_PROP_TIMER_DELIVER_MS, at) || !put_int(pb, RMQ_PROP_DELIVER_AT, at))
        return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    return 1;
}

/* TRANSACTION: TRAN_MSG=true, PGROUP = the topic (the proxy's producer
 * group), CHECK_IMMUNITY_TIME_IN_SECONDS. 1, or 0 with *st. */
static int put_transaction(const Apache__Rocketmq__V2__SystemProperties *sys, const char *topic,
                           rmq_props_buf_t *pb, gr_status_t *st)
{
    if (rmq_props_buf_put(pb, RMQ_PROP_TRAN_MSG, "true") != RMQ_OK ||
        rmq_props_buf_put(pb, RMQ_PROP_PRODUCER_GROUP, topic) != RMQ_OK)
        return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    if (sys->_orphaned_transaction_recovery_duration_case && sys->orphaned_transaction_recovery_duration) {
        int64_t sec = sys->orphaned_transaction_recovery_duration->seconds;
        if (sec < 0 || sec > TX_RECOVERY_MAX_SEC)
            return gr_status_set(st, CODE(BAD_REQUEST), "orphaned transaction recovery duration %" PRId64
                                 " s is out of range 0..%d", sec, TX_RECOVERY_MAX_SEC);
        if (!put_int(pb, RMQ_PROP_CHECK_IMMUNITY_SEC, sec))
            return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    }
    return 1;
}

/* The remaining system properties of a send. 1, or 0 with *st. */
static int put_system_part(const Apache__Rocketmq__V2__Message *msg, const Apache__Rocketmq__V2__SystemProperties *sys,
                           const gr_send_ctx_t *ctx, rmq_props_buf_t *pb, gr_status_t *st)
{
    const char *group = sys->_message_group_case ? sys->message_group : "";
    const char *born = sys->born_host && !is_blank(sys->born_host) ? sys->born_host : ctx->peer_host;

    if ((sys->_tag_case && *sys->tag && rmq_props_buf_put(pb, RMQ_PROP_TAGS, sys->tag) != RMQ_OK) ||
        put_keys(sys, pb) != RMQ_OK || rmq_props_buf_put(pb, RMQ_PROP_UNIQ_KEY, sys->message_id) != RMQ_OK)
        return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    if (*group) {
        if (is_blank(group) || strlen(group) >= GR_MESSAGE_GROUP_MAX || has_control(group))
            return gr_status_set(st, CODE(ILLEGAL_MESSAGE_GROUP), "a message group must be 1..%d bytes, not blank, "
                                 "without control characters", GR_MESSAGE_GROUP_MAX - 1);
        if (rmq_props_buf_put(pb, RMQ_PROP_SHARDING_KEY, group) != RMQ_OK)
            return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    }
    if (!put_delivery_time(sys, ctx, pb, st))
        return 0;
    if (sys->message_type == MSG_TYPE(TRANSACTION) && !put_transaction(sys, msg->topic->name, pb, st))
        return 0;
    if ((sys->_trace_context_case && *sys->trace_context &&
         rmq_props_buf_put(pb, RMQ_PROP_TRACE_CONTEXT, sys->trace_context) != RMQ_OK) ||
        (born && *born && rmq_props_buf_put(pb, RMQ_PROP_BORN_HOST, born) != RMQ_OK) ||
        (sys->born_timestamp && timestamp_is_sane(sys->born_timestamp) &&
         !put_int(pb, RMQ_PROP_BORN_TIMESTAMP, timestamp_ms(sys->born_timestamp))))
        return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    return 1;
}

/* The checks on a message's frame: topic, id, type, body, and no control
 * characters (the properties string's separators among them) in the
 * values stored as they came. 1, or 0 with *st. */
static int check_frame(const Apache__Rocketmq__V2__Message *msg, gr_status_t *st)
{
    const Apache__Rocketmq__V2__SystemProperties *sys = msg->system_properties;

    if (!msg->topic || !*msg->topic->name)
        return gr_status_set(st, CODE(ILLEGAL_TOPIC), "the message names no topic");
    if (strlen(msg->topic->name) > RMQ_TOPIC_MAX || has_control(msg->topic->name))
        return gr_status_set(st, CODE(ILLEGAL_TOPIC), "a topic has at most %u bytes, no control characters",
                             RMQ_TOPIC_MAX);
    if (!sys || is_blank(sys->message_id))
        return gr_status_set(st, CODE(ILLEGAL_MESSAGE_ID), "message id cannot be empty");
    if (has_control(sys->message_id))
        return gr_status_set(st, CODE(ILLEGAL_MESSAGE_ID), "message id cannot contain control characters");
    if (has_control(sys->born_host) || (sys->_trace_context_case && has_control(sys->trace_context)))
        return gr_status_set(st, CODE(BAD_REQUEST), "born host and trace context cannot contain control characters");
    if (sys->message_type == MSG_TYPE(LITE) || sys->message_type == MSG_TYPE(PRIORITY) || sys->_lite_topic_case ||
        sys->_priority_case)
        return gr_status_set(st, CODE(UNSUPPORTED), "lite and priority messages are not supported");
    if (msg->body.len == 0)
        return gr_status_set(st, CODE(MESSAGE_BODY_EMPTY), "message body is empty");
    return 1;
}

/* The body to store: as sent, or a GZIP body inflated into sm. */
static int store_body(const Apache__Rocketmq__V2__Message *msg, const gr_send_ctx_t *ctx, gr_store_msg_t *sm,
                      st_msg_t *m, gr_status_t *st)
{
    rmq_err_t rc;

    m->body = msg->body.data;
    m->body_len = msg->body.len;
    if (msg->system_properties->body_encoding != APACHE__ROCKETMQ__V2__ENCODING__GZIP)
        return 1;
    rc = inflate_body(msg->body.data, msg->body.len, ctx->max_body_size, &sm->body, &m->body_len);
    if (rc == RMQ_ENOMEM)
        return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    if (rc != RMQ_OK)
        return gr_status_set(st, CODE(MESSAGE_CORRUPTED), "a GZIP body that does not inflate to at most %zu bytes",
                             ctx->max_body_size);
    m->body = sm->body;
    return 1;
}

int gr_message_to_store(const Apache__Rocketmq__V2__Message *msg, const gr_send_ctx_t *ctx, gr_store_msg_t *sm,
                        st_msg_t *m, gr_status_t *st)
{
    const Apache__Rocketmq__V2__SystemProperties *sys = msg->system_properties;

    memset(m, 0, sizeof(*m));
    sm->props.len = 0;
    if (!check_frame(msg, st) || !store_body(msg, ctx, sm, m, st) || !put_user_part(msg, sys, &sm->props, st) ||
        !put_system_part(msg, sys, ctx, &sm->props, st))
        return 0;
    if (sm->props.len > RMQ_PROPS_MAX)
        return gr_status_set(st, CODE(MESSAGE_PROPERTIES_TOO_LARGE), "properties take %zu bytes, max is %u",
                             sm->props.len, RMQ_PROPS_MAX);
    m->topic = msg->topic->name;
    m->topic_len = strlen(msg->topic->name);
    m->queue_id = sys->queue_id;
    if (sys->message_type == MSG_TYPE(TRANSACTION))
        m->sys_flag |= GR_SYSFLAG_TX_PREPARED;
    m->born_timestamp = sys->born_timestamp && timestamp_is_sane(sys->born_timestamp)
                            ? timestamp_ms(sys->born_timestamp) : ctx->now_ms;
    if (sys->_delivery_attempt_case && sys->delivery_attempt > 1)
        m->reconsume_times = sys->delivery_attempt - 1;
    m->properties = sm->props.data;
    m->properties_len = sm->props.len;
    if (sys->_tag_case && *sys->tag)
        m->tag_code = st_tag_hash(sys->tag, strlen(sys->tag));
    st->code = CODE(OK);
    st->message[0] = '\0';
    return 1;
}

/* ---- delivery: stored -> v2 --------------------------------------------------- */

/* A bump allocator for d's strings, sized up front. */
typedef struct text {
    char *at;
    char *end;
} text_t;

static char *text_put(text_t *t, const char *s, size_t n)
{
    char *out = t->at;
    if ((size_t)(t->end - t->at) < n + 1)
        return NULL;                                /* sized by gr_message_from_record: not reached */
    memcpy(out, s, n);
    out[n] = '\0';
    t->at += n + 1;
    return out;
}

/* The value of name in rec's properties as a string in t, or NULL. */
static char *prop_text(const rmq_record_t *rec, const char *name, text_t *t)
{
    size_t vl = 0;
    const char *v = rmq_props_get(rec->properties, rec->properties_len, name, &vl);
    return v ? text_put(t, v, vl) : NULL;
}

static int has_prop(const rmq_record_t *rec, const char *name)
{
    size_t vl;
    return rmq_props_get(rec->properties, rec->properties_len, name, &vl) != NULL;
}

/* Every non-system property as a user property. */
static rmq_err_t fill_user_props(const rmq_record_t *rec, gr_delivered_t *d, text_t *t)
{
    size_t pos = 0, n = 0;
    rmq_prop_t p;

    while (rmq_props_next(rec->properties, rec->properties_len, &pos, &p))
        n += !gr_prop_is_system(p.name, p.name_len);
    if (n == 0)
        return RMQ_OK;
    d->user = calloc(n, sizeof(*d->user));
    d->user_ptrs = calloc(n, sizeof(*d->user_ptrs));
    if (!d->user || !d->user_ptrs)
        return RMQ_ENOMEM;
    pos = 0;
    n = 0;
    while (rmq_props_next(rec->properties, rec->properties_len, &pos, &p)) {
        if (gr_prop_is_system(p.name, p.name_len))
            continue;
        apache__rocketmq__v2__message__user_properties_entry__init(&d->user[n]);
        d->user[n].key = text_put(t, p.name, p.name_len);
        d->user[n].value = text_put(t, p.value, p.value_len);
        d->user_ptrs[n] = &d->user[n];
        n++;
    }
    d->msg.n_user_properties = n;
    d->msg.user_properties = d->user_ptrs;
    return RMQ_OK;
}

/* KEYS split on spaces, empty pieces dropped. */
static rmq_err_t fill_keys(const rmq_record_t *rec, gr_delivered_t *d, text_t *t)
{
    size_t vl = 0, n = 0;
    const char *v = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_KEYS, &vl);

    if (!v || vl == 0)
        return RMQ_OK;
    d->keys = calloc(vl / 2 + 1, sizeof(*d->keys));
    if (!d->keys)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < vl;) {
        size_t j = i;
        while (j < vl && v[j] != ' ')
            j++;
        if (j > i)
            d->keys[n++] = text_put(t, v + i, j - i);
        i = j + 1;
    }
    d->sys.n_keys = n;
    d->sys.keys = d->keys;
    return RMQ_OK;
}

/* The v2 type of rec (GrpcConverter's order, rmq_props_msg_type). */
static Apache__Rocketmq__V2__MessageType message_type(const rmq_record_t *rec)
{
    switch (rmq_props_msg_type(rec->properties, rec->properties_len)) {
    case RMQ_MSG_TRANSACTION:
        return MSG_TYPE(TRANSACTION);
    case RMQ_MSG_DELAY:
        return MSG_TYPE(DELAY);
    case RMQ_MSG_FIFO:
        return MSG_TYPE(FIFO);
    default:
        return MSG_TYPE(NORMAL);
    }
}

/* The delivery time a timer message asked for, or -1. */
static int64_t delivery_ms(const rmq_record_t *rec)
{
    const char *p = rec->properties;
    size_t n = rec->properties_len;
    int64_t v;

    if ((v = bk_props_int(p, n, RMQ_PROP_TIMER_DELIVER_MS, -1, NULL)) >= 0)
        return v;
    if ((v = bk_props_int(p, n, RMQ_PROP_DELIVER_AT, -1, NULL)) >= 0)
        return v;
    if ((v = bk_props_int(p, n, RMQ_PROP_TIMER_DELAY_SEC, -1, NULL)) >= 0 && v <= INT32_MAX)
        v *= 1000;
    else
        v = bk_props_int(p, n, RMQ_PROP_TIMER_DELAY_MS, -1, NULL);
    if (v < 0 || __builtin_add_overflow(rec->store_timestamp, v, &v))
        return -1;
    return v;
}

/* born_host: __BORNHOST, else the record's born address without its port. */
static char *born_host(const rmq_record_t *rec, text_t *t)
{
    char host[RMQ_HOST_TEXT_MAX];
    size_t vl = 0;
    const char *v = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_BORN_HOST, &vl);
    char *colon, *start = host;

    if (v && vl)
        return text_put(t, v, vl);
    rmq_record_host_text(rec, 0, host, sizeof host);
    colon = strrchr(host, ':');
    if (colon)
        *colon = '\0';
    if (*start == '[') {
        start++;
        start[strcspn(start, "]")] = '\0';
    }
    return text_put(t, start, strlen(start));
}

/* The topic a client sees: a retry copy's original topic (RETRY_TOPIC), and
 * for a record in the broker's own topics (a transaction's half message
 * checked back, a delayed message) the topic it was sent to (REAL_TOPIC). */
static char *delivered_topic(const rmq_record_t *rec, text_t *t)
{
    size_t pl = strlen(RMQ_RETRY_PREFIX), vl = 0;
    const char *orig = NULL;

    if (rec->topic_len > pl && memcmp(rec->topic, RMQ_RETRY_PREFIX, pl) == 0)
        orig = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_RETRY_TOPIC, &vl);
    else if (rmq_topic_send_forbidden(rec->topic, rec->topic_len))
        orig = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_REAL_TOPIC, &vl);
    if (orig && vl)
        return text_put(t, orig, vl);
    return text_put(t, rec->topic, rec->topic_len);
}

static rmq_err_t fill_body(const rmq_record_t *rec, const gr_deliver_ctx_t *ctx, gr_delivered_t *d, text_t *t)
{
    uint8_t md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    char hex[2 * EVP_MAX_MD_SIZE + 1];
    size_t len = rec->body_len;
    const uint8_t *body = rec->body;

    if (rec->sys_flag & GR_SYSFLAG_COMPRESSED) {
        rmq_err_t rc = inflate_body(rec->body, rec->body_len, ctx->max_body_size, &d->body, &len);
        if (rc != RMQ_OK)
            return rc;
        body = d->body;
    }
    if (!EVP_Digest(body, len, md, &mdlen, EVP_md5(), NULL))
        return RMQ_ENOMEM;
    rmq_hex_upper(md, mdlen, hex);
    apache__rocketmq__v2__digest__init(&d->digest);
    d->digest.type = APACHE__ROCKETMQ__V2__DIGEST_TYPE__MD5;
    d->digest.checksum = text_put(t, hex, strlen(hex));
    d->sys.body_digest = &d->digest;
    d->sys.body_encoding = APACHE__ROCKETMQ__V2__ENCODING__IDENTITY;
    d->msg.body.data = (uint8_t *)body;
    d->msg.body.len = len;
    return RMQ_OK;
}

/* The optional system properties a record may carry. */
static void fill_optional(const rmq_record_t *rec, gr_delivered_t *d, text_t *t)
{
    Apache__Rocketmq__V2__SystemProperties *sys = &d->sys;
    int64_t at = delivery_ms(rec), immune;
    char *s;

    if ((s = prop_text(rec, RMQ_PROP_TAGS, t))) {
        sys->_tag_case = SP(TAG_TAG);
        sys->tag = s;
    }
    if (at >= 0) {
        gr_timestamp_set_ms(&d->deliver_ts, at);
        sys->_delivery_timestamp_case = SP(DELIVERY_TIMESTAMP_DELIVERY_TIMESTAMP);
        sys->delivery_timestamp = &d->deliver_ts;
    }
    if ((s = prop_text(rec, RMQ_PROP_SHARDING_KEY, t))) {
        sys->_message_group_case = SP(MESSAGE_GROUP_MESSAGE_GROUP);
        sys->message_group = s;
    }
    if ((s = prop_text(rec, RMQ_PROP_TRACE_CONTEXT, t))) {
        sys->_trace_context_case = SP(TRACE_CONTEXT_TRACE_CONTEXT);
        sys->trace_context = s;
    }
    immune = bk_props_int(rec->properties, rec->properties_len, RMQ_PROP_CHECK_IMMUNITY_SEC, -1, NULL);
    if (immune >= 0 && immune <= INT32_MAX) {
        gr_duration_set_ms(&d->orphan, immune * 1000);
        sys->_orphaned_transaction_recovery_duration_case =
            SP(ORPHANED_TRANSACTION_RECOVERY_DURATION_ORPHANED_TRANSACTION_RECOVERY_DURATION);
        sys->orphaned_transaction_recovery_duration = &d->orphan;
    }
    if (has_prop(rec, RMQ_PROP_DLQ_ORIGIN_TOPIC) && has_prop(rec, RMQ_PROP_DLQ_ORIGIN_MESSAGE_ID)) {
        apache__rocketmq__v2__dead_letter_queue__init(&d->dlq);
        d->dlq.topic = prop_text(rec, RMQ_PROP_DLQ_ORIGIN_TOPIC, t);
        d->dlq.message_id = prop_text(rec, RMQ_PROP_DLQ_ORIGIN_MESSAGE_ID, t);
        sys->_dead_letter_queue_case = SP(DEAD_LETTER_QUEUE_DEAD_LETTER_QUEUE);
        sys->dead_letter_queue = &d->dlq;
    }
}

/* What the pop side adds: receipt handle, invisibility, attempt. */
static void fill_delivery(const rmq_record_t *rec, const gr_deliver_ctx_t *ctx, gr_delivered_t *d, text_t *t)
{
    Apache__Rocketmq__V2__SystemProperties *sys = &d->sys;

    if (ctx->receipt_handle) {
        sys->_receipt_handle_case = SP(RECEIPT_HANDLE_RECEIPT_HANDLE);
        sys->receipt_handle = text_put(t, ctx->receipt_handle, strlen(ctx->receipt_handle));
    }
    if (ctx->invisible_ms >= 0) {
        gr_duration_set_ms(&d->invisible, ctx->invisible_ms);
        sys->_invisible_duration_case = SP(INVISIBLE_DURATION_INVISIBLE_DURATION);
        sys->invisible_duration = &d->invisible;
    }
    sys->_delivery_attempt_case = SP(DELIVERY_ATTEMPT_DELIVERY_ATTEMPT);
    if (ctx->delivery_attempt > 0)
        sys->delivery_attempt = ctx->delivery_attempt;
    else if (rec->reconsume_times < 0)
        sys->delivery_attempt = 1;
    else if (rec->reconsume_times == INT32_MAX)
        sys->delivery_attempt = INT32_MAX;          /* a record's count at the limit */
    else
        sys->delivery_attempt = rec->reconsume_times + 1;
    sys->queue_id = rec->queue_id;
    sys->_queue_offset_case = SP(QUEUE_OFFSET_QUEUE_OFFSET);
    sys->queue_offset = rec->queue_offset;
}

/* The message id (UNIQ_KEY, else the offset id), hosts and timestamps. */
static void fill_identity(const rmq_record_t *rec, gr_delivered_t *d, text_t *t)
{
    Apache__Rocketmq__V2__SystemProperties *sys = &d->sys;
    char id[RMQ_MSG_ID_MAX + 1], host[RMQ_HOST_TEXT_MAX];

    sys->message_id = prop_text(rec, RMQ_PROP_UNIQ_KEY, t);
    if (!sys->message_id) {
        rmq_record_msg_id(rec, id);
        sys->message_id = text_put(t, id, strlen(id));
    }
    sys->message_type = message_type(rec);
    gr_timestamp_set_ms(&d->born_ts, rec->born_timestamp);
    sys->born_timestamp = &d->born_ts;
    sys->born_host = born_host(rec, t);
    gr_timestamp_set_ms(&d->store_ts, rec->store_timestamp);
    sys->_store_timestamp_case = SP(STORE_TIMESTAMP_STORE_TIMESTAMP);
    sys->store_timestamp = &d->store_ts;
    rmq_record_host_text(rec, 1, host, sizeof host);
    sys->store_host = text_put(t, host, strlen(host));
}

rmq_err_t gr_message_from_record(const rmq_record_t *rec, const gr_deliver_ctx_t *ctx, gr_delivered_t *d)
{
    /* every string is a copy of a property piece, the topic, the handle or
     * a fixed-size text, each NUL-terminated: this bounds them all */
    size_t cap = 2 * (size_t)rec->properties_len + rec->topic_len + 4 * RMQ_HOST_TEXT_MAX + RMQ_MSG_ID_MAX +
                 2 * EVP_MAX_MD_SIZE + 64 + (ctx->receipt_handle ? strlen(ctx->receipt_handle) + 1 : 0);
    text_t t;
    rmq_err_t rc;

    memset(d, 0, sizeof(*d));
    d->text = malloc(cap);
    if (!d->text)
        return RMQ_ENOMEM;
    t.at = d->text;
    t.end = d->text + cap;
    apache__rocketmq__v2__message__init(&d->msg);
    apache__rocketmq__v2__resource__init(&d->topic);
    apache__rocketmq__v2__system_properties__init(&d->sys);
    d->topic.name = delivered_topic(rec, &t);
    d->msg.topic = &d->topic;
    d->msg.system_properties = &d->sys;
    if ((rc = fill_user_props(rec, d, &t)) != RMQ_OK || (rc = fill_keys(rec, d, &t)) != RMQ_OK ||
        (rc = fill_body(rec, ctx, d, &t)) != RMQ_OK) {
        gr_delivered_deinit(d);
        return rc;
    }
    fill_identity(rec, d, &t);
    fill_optional(rec, d, &t);
    fill_delivery(rec, ctx, d, &t);
    return RMQ_OK;
}

void gr_delivered_deinit(gr_delivered_t *d)
{
    free(d->user);
    free(d->user_ptrs);
    free(d->keys);
    free(d->text);
    free(d->body);
    memset(d, 0, sizeof(*d));
}
