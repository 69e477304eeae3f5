/* rmq_msgcodec.c: the client's view of messages: validation, unique ids,
 * the properties string of an outgoing message, and owned copies of pulled
 * records (rmq_message_ext_t) with client-side tag filtering. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "rmq_client_int.h"
#include "rmq_time.h"

static pthread_once_t uniq_once = PTHREAD_ONCE_INIT;
static uint8_t uniq_prefix[10];
static _Atomic uint32_t uniq_counter;

/* Fixes the per-process id prefix: random(4) | pid(2) | random(4). */
static void uniq_init(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t seed = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 20) ^ (uint64_t)getpid() << 40;
    for (int i = 0; i < 10; i++) {
        seed = seed * 6364136223846793005ull + 1442695040888963407ull;
        uniq_prefix[i] = (uint8_t)(seed >> 56);
    }
    pid_t pid = getpid();
    uniq_prefix[4] = (uint8_t)(pid >> 8);
    uniq_prefix[5] = (uint8_t)pid;
}

void rmq_msg_uniq_id(char out[33])
{
    pthread_once(&uniq_once, uniq_init);
    uint8_t raw[16];
    memcpy(raw, uniq_prefix, 10);
    uint32_t ms = (uint32_t)rmq_wall_ms();
    uint32_t ctr = atomic_fetch_add(&uniq_counter, 1);
    raw[10] = (uint8_t)(ms >> 24);
    raw[11] = (uint8_t)(ms >> 16);
    raw[12] = (uint8_t)(ms >> 8);
    raw[13] = (uint8_t)ms;
    raw[14] = (uint8_t)(ctr >> 8);
    raw[15] = (uint8_t)ctr;
    rmq_hex_upper(raw, sizeof(raw), out);
}

/* 1 if s contains a property separator byte. */
static int has_separator(const char *s)
{
    return s && (strchr(s, '\x01') || strchr(s, '\x02'));
}

rmq_err_t rmq_msg_validate(const rmq_message_t *msg, size_t max_body, rmq_error_t *e)
{
    if (!msg || !msg->topic || !msg->topic[0])
        return rmq_error_set(e, RMQ_EINVAL, 0, "message has no topic");
    if (strlen(msg->topic) > RMQ_TOPIC_MAX)
        return rmq_error_set(e, RMQ_EINVAL, 0, "topic longer than %u bytes", RMQ_TOPIC_MAX);
    if (!msg->body || msg->body_len == 0)
        return rmq_error_set(e, RMQ_EINVAL, 0, "message body is empty");
    if (msg->body_len > max_body)
        return rmq_error_set(e, RMQ_ETOOBIG, 0, "body of %zu bytes over the %zu limit",
                             msg->body_len, max_body);
    if (has_separator(msg->tags) || has_separator(msg->keys))
        return rmq_error_set(e, RMQ_EINVAL, 0, "tags or keys contain byte 0x01 or 0x02");
    for (size_t i = 0; i < msg->nprops; i++) {
        const rmq_property_t *p = &msg->props[i];
        if (!p->name || !p->name[0] || !p->value || has_separator(p->name) ||
            has_separator(p->value))
            return rmq_error_set(e, RMQ_EINVAL, 0, "property %zu is empty or contains 0x01/0x02", i);
    }
    return RMQ_OK;
}

rmq_err_t rmq_msg_props_build(const rmq_message_t *msg, const char *uniq, rmq_props_buf_t *pb)
{
    rmq_err_t err = RMQ_OK;
    if (msg->tags && msg->tags[0])
        err = rmq_props_buf_put(pb, RMQ_PROP_TAGS, msg->tags);
    if (err == RMQ_OK && msg->keys && msg->keys[0])
        err = rmq_props_buf_put(pb, RMQ_PROP_KEYS, msg->keys);
    if (err == RMQ_OK && uniq)
        err = rmq_props_buf_put(pb, RMQ_PROP_UNIQ_KEY, uniq);
    for (size_t i = 0; err == RMQ_OK && i < msg->nprops; i++)
        err = rmq_props_buf_put(pb, msg->props[i].name, msg->props[i].value);
    if (err == RMQ_OK && pb->len > RMQ_PROPS_MAX)
        err = RMQ_ETOOBIG;
    return err;
}

/* Copies len bytes of s into *cursor as a NUL-terminated string; returns it. */
static const char *put_str(char **cursor, const char *s, size_t len)
{
    char *out = *cursor;
    if (len)
        memcpy(out, s, len);
    out[len] = '\0';
    *cursor += len + 1;
    return out;
}

rmq_message_ext_t *rmq_msg_ext_from_record(const rmq_record_t *rec, const char *broker_name)
{
    size_t tl = 0, kl = 0, ul = 0;
    const char *tags = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_TAGS, &tl);
    const char *keys = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_KEYS, &kl);
    const char *uniq = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_UNIQ_KEY, &ul);
    size_t bl = strlen(broker_name);
    size_t total = sizeof(rmq_message_ext_t) + rec->body_len + 1 + rec->topic_len + 1 + tl + 1 +
                   kl + 1 + ul + 1 + bl + 1 + rec->properties_len + 1;
    rmq_message_ext_t *m = malloc(total);
    if (!m)
        return NULL;
    char *cur = (char *)(m + 1);
    m->body = put_str(&cur, (const char *)rec->body, rec->body_len);
    m->body_len = rec->body_len;
    m->topic = put_str(&cur, rec->topic, rec->topic_len);
    m->tags = put_str(&cur, tags, tags ? tl : 0);
    m->keys = put_str(&cur, keys, keys ? kl : 0);
    m->msg_id = put_str(&cur, uniq, uniq ? ul : 0);
    m->broker_name = put_str(&cur, broker_name, bl);
    m->properties = put_str(&cur, rec->properties, rec->properties_len);
    m->properties_len = rec->properties_len;
    m->queue_id = rec->queue_id;
    m->flag = rec->flag;
    m->queue_offset = rec->queue_offset;
    m->commit_log_offset = rec->phys_offset;
    m->born_timestamp = rec->born_timestamp;
    m->store_timestamp = rec->store_timestamp;
    m->reconsume_times = rec->reconsume_times;
    return m;
}

rmq_err_t rmq_msg_decode_pulled(const uint8_t *data, size_t len, const char *broker_name,
                                const rmq_tags_t *tags, rmq_message_ext_t ***msgs, size_t *n)
{
    size_t pos = 0;
    while (pos < len) {
        rmq_record_t rec;
        rmq_err_t err = rmq_record_decode(data + pos, len - pos, 1, &rec);   /* CRC checked */
        if (err != RMQ_OK)
            return err == RMQ_EAGAIN || err == RMQ_ENOTFOUND ? RMQ_EPROTO : err;
        pos += rec.total_size;
        size_t tl = 0;
        const char *tag = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_TAGS, &tl);
        if (tags && !rmq_tags_match(tags, tag ? tag : "", tag ? tl : 0))
            continue;
        rmq_message_ext_t **grown = realloc(*msgs, (*n + 1) * sizeof *grown);
        if (!grown)
            return RMQ_ENOMEM;
        *msgs = grown;
        grown[*n] = rmq_msg_ext_from_record(&rec, broker_name);
        if (!grown[*n])
            return RMQ_ENOMEM;
        (*n)++;
    }
    return RMQ_OK;
}

const char *rmq_message_ext_property(const rmq_message_ext_t *msg, const char *name, char *buf,
                                     size_t cap)
{
    size_t vl = 0;
    const char *v = rmq_props_get(msg->properties, msg->properties_len, name, &vl);
    if (!v || cap == 0)
        return NULL;
    size_t take = vl < cap - 1 ? vl : cap - 1;
    memcpy(buf, v, take);
    buf[take] = '\0';
    return buf;
}
