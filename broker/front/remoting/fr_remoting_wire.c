/* fr_remoting_wire.c: RocketMQ's body layouts (see fr_remoting_wire.h). */
#include "fr_remoting_wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "bk_props.h"
#include "rmq_http.h"

#define BATCH_FIXED 22u              /* totalSize, magic, bodyCRC, flag, bodyLen, propertiesLen */
#define REC_MAGIC_AT 4
#define REC_CRC_AT 8                 /* the third word of a record */
#define REC_SYSFLAG_AT 36

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void wr32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

int32_t fr_rm_body_crc(const void *buf, size_t len)
{
    /* a body's length is a record's 32-bit field: it fits zlib's uInt */
    return (int32_t)(crc32(0L, buf, (uInt)len) & 0x7fffffffu);
}

/* ---- batch bodies -------------------------------------------------------- */

size_t fr_rm_batch_entry_size(size_t body_len, size_t props_len)
{
    return BATCH_FIXED + body_len + props_len;
}

rmq_err_t fr_rm_batch_decode(const uint8_t *data, size_t len, rmq_batch_entry_t *e, size_t *used,
                             const char **why)
{
    if (len < BATCH_FIXED)
        return *why = "batch entry shorter than its fixed fields", RMQ_EPROTO;
    uint32_t total = rd32(data), body_len = rd32(data + 16);
    if (total < BATCH_FIXED || total > len)
        return *why = "batch entry totalSize outside the body", RMQ_EPROTO;
    if (body_len > total - BATCH_FIXED)
        return *why = "batch entry bodyLen past its totalSize", RMQ_EPROTO;
    const uint8_t *pp = data + 20 + body_len;
    uint16_t props_len = (uint16_t)(pp[0] << 8 | pp[1]);
    if ((size_t)BATCH_FIXED + body_len + props_len != total)
        return *why = "batch entry lengths do not add up to its totalSize", RMQ_EPROTO;
    e->flag = (int32_t)rd32(data + 12);
    e->body = data + 20;
    e->body_len = body_len;
    e->properties = (const char *)pp + 2;
    e->properties_len = props_len;
    *used = total;
    return RMQ_OK;
}

size_t fr_rm_batch_encode(const rmq_batch_entry_t *e, uint8_t *out)
{
    size_t total = fr_rm_batch_entry_size(e->body_len, e->properties_len);
    wr32(out, (uint32_t)total);
    wr32(out + 4, 0);
    wr32(out + 8, 0);
    wr32(out + 12, (uint32_t)e->flag);
    wr32(out + 16, e->body_len);
    memcpy(out + 20, e->body, e->body_len);
    out[20 + e->body_len] = (uint8_t)(e->properties_len >> 8);
    out[21 + e->body_len] = (uint8_t)e->properties_len;
    memcpy(out + 22 + e->body_len, e->properties, e->properties_len);
    return total;
}

/* ---- pulled messages ----------------------------------------------------- */

/* Turns the record r, copied at m, into MessageDecoder's V1: RocketMQ's
 * magic (ours marks a record with an IPv6 host), body CRC, and the sysFlag
 * as decoded, whose IPv6 host bits say how the hosts are laid out. */
static void v1_fix(uint8_t *m, const rmq_record_t *r)
{
    wr32(m + REC_MAGIC_AT, RMQ_MAGIC_MESSAGE);
    wr32(m + REC_CRC_AT, (uint32_t)fr_rm_body_crc(r->body, r->body_len));
    wr32(m + REC_SYSFLAG_AT, (uint32_t)r->sys_flag);
}

rmq_err_t fr_rm_messages_encode(const uint8_t *rec, size_t len, uint8_t *out, int32_t *count)
{
    size_t off = 0;
    *count = 0;
    while (off < len) {
        rmq_record_t r;
        if (rmq_record_decode(rec + off, len - off, 0, &r) != RMQ_OK)
            return RMQ_ECORRUPT;
        memcpy(out + off, rec + off, r.total_size);
        v1_fix(out + off, &r);
        off += r.total_size;
        (*count)++;
    }
    return RMQ_OK;
}

rmq_err_t fr_rm_records_encode(struct evbuffer *body, uint8_t **out, size_t *len)
{
    int32_t count;
    *len = evbuffer_get_length(body);
    const uint8_t *rec = evbuffer_pullup(body, -1);
    *out = rec ? malloc(*len) : NULL;
    if (!*out)
        return RMQ_ENOMEM;
    rmq_err_t rc = fr_rm_messages_encode(rec, *len, *out, &count);
    if (rc != RMQ_OK) {
        free(*out);
        *out = NULL;
    }
    return rc;
}

rmq_err_t fr_rm_check_message_encode(const uint8_t *rec, size_t len, uint8_t **out, size_t *out_len)
{
    rmq_record_t r;
    size_t tlen = 0;
    *out = NULL;
    *out_len = 0;
    if (rmq_record_decode(rec, len, 0, &r) != RMQ_OK || r.total_size != len)
        return RMQ_ECORRUPT;
    const char *topic = rmq_props_get(r.properties, r.properties_len, RMQ_PROP_REAL_TOPIC, &tlen);
    int64_t qid = bk_props_int(r.properties, r.properties_len, RMQ_PROP_REAL_QID, -1, NULL);
    if (topic && tlen > 0 && tlen <= RMQ_TOPIC_MAX) {
        r.topic = topic;
        r.topic_len = (uint8_t)tlen;
    }
    if (qid >= 0 && qid <= INT32_MAX)
        r.queue_id = (int32_t)qid;
    size_t n = rmq_record_size(r.sys_flag, r.body_len, r.topic_len, r.properties_len);
    uint8_t *m = malloc(n);
    if (!m)
        return RMQ_ENOMEM;
    rmq_record_encode(&r, m);
    v1_fix(m, &r);
    *out = m;
    *out_len = n;
    return RMQ_OK;
}

/* ---- heartbeat ----------------------------------------------------------- */

/* RocketMQ's ConsumeFromWhere names, by the core's value. */
static const char *const consume_from_names[] = {
    [BK_CONSUME_FROM_LAST] = "CONSUME_FROM_LAST_OFFSET",
    [BK_CONSUME_FROM_FIRST] = "CONSUME_FROM_FIRST_OFFSET",
    [BK_CONSUME_FROM_TIMESTAMP] = "CONSUME_FROM_TIMESTAMP",
};

bk_consume_from_t fr_rm_consume_from_parse(const char *name)
{
    if (strcmp(name, "CONSUME_FROM_FIRST_OFFSET") == 0 || strcmp(name, "CONSUME_FROM_MIN_OFFSET") == 0)
        return BK_CONSUME_FROM_FIRST;
    if (strcmp(name, "CONSUME_FROM_TIMESTAMP") == 0)
        return BK_CONSUME_FROM_TIMESTAMP;
    return BK_CONSUME_FROM_LAST;
}

const char *fr_rm_consume_from_name(bk_consume_from_t from)
{
    return (unsigned)from < sizeof(consume_from_names) / sizeof(consume_from_names[0]) ? consume_from_names[from]
                                                                                        : consume_from_names[0];
}

void fr_rm_heartbeat_clear(fr_rm_heartbeat_t *h)
{
    rmq_json_free(h->doc);
    free(h->producers);
    free(h->consumers);
    free(h->subs);
    memset(h, 0, sizeof(*h));
}

/* The array member key of obj (absent or null: empty); NULL if it is something else. */
static const rmq_json_t *json_array(const rmq_json_t *obj, const char *key, const rmq_json_t *empty)
{
    const rmq_json_t *v = rmq_json_get(obj, key);
    if (!v || v->type == RMQ_JSON_NULL)
        return empty;
    return v->type == RMQ_JSON_ARRAY ? v : NULL;
}

/* The string member key of obj, or dflt when absent. */
static const char *json_text(const rmq_json_t *obj, const char *key, const char *dflt)
{
    const char *s = rmq_json_scalar(rmq_json_get(obj, key));
    return s ? s : dflt;
}

/* Reads one ConsumerData into c, its subscriptions from h->subs[*next_sub]. */
static rmq_err_t heartbeat_consumer(fr_rm_heartbeat_t *h, const rmq_json_t *cd, bk_hb_consumer_t *c,
                                    size_t *next_sub, char *why, size_t whylen)
{
    static const rmq_json_t empty = {.type = RMQ_JSON_ARRAY};
    const rmq_json_t *subs = cd->type == RMQ_JSON_OBJECT ? json_array(cd, "subscriptionDataSet", &empty) : NULL;
    const char *group = cd->type == RMQ_JSON_OBJECT ? rmq_json_scalar(rmq_json_get(cd, "groupName")) : NULL;
    if (!subs || !group)
        return snprintf(why, whylen, "consumerDataSet entry needs groupName and a subscriptionDataSet array"),
               RMQ_EPROTO;
    c->group = group;
    c->clustering = strcmp(json_text(cd, "messageModel", "CLUSTERING"), "BROADCASTING") != 0;
    c->pull_mode = strcmp(json_text(cd, "consumeType", "CONSUME_PASSIVELY"), "CONSUME_ACTIVELY") == 0;
    c->consume_from = fr_rm_consume_from_parse(json_text(cd, "consumeFromWhere", ""));
    c->subs = h->subs + *next_sub;
    c->nsubs = 0;
    for (size_t i = 0; i < subs->n; i++) {
        const rmq_json_t *sd = subs->items[i];
        const char *topic = sd->type == RMQ_JSON_OBJECT ? rmq_json_scalar(rmq_json_get(sd, "topic")) : NULL;
        if (!topic)
            return snprintf(why, whylen, "group %.100s: subscription entry %zu has no topic", group, i), RMQ_EPROTO;
        h->subs[(*next_sub)++] = (bk_hb_sub_t){topic, json_text(sd, "subString", "*"),
                                               rmq_expr_type_of(json_text(sd, "expressionType", NULL))};
        c->nsubs++;
    }
    return RMQ_OK;
}

/* Counts the subscriptions of every well-formed consumer entry. */
static size_t heartbeat_sub_count(const rmq_json_t *consumers)
{
    size_t n = 0;
    for (size_t i = 0; i < consumers->n; i++) {
        const rmq_json_t *cd = consumers->items[i];
        const rmq_json_t *s = cd->type == RMQ_JSON_OBJECT ? rmq_json_get(cd, "subscriptionDataSet") : NULL;
        if (s && s->type == RMQ_JSON_ARRAY)
            n += s->n;
    }
    return n;
}

rmq_err_t fr_rm_check_client_parse(const uint8_t *body, size_t len, fr_rm_check_client_t *out, char *why,
                                   size_t whylen)
{
    char err[128];
    memset(out, 0, sizeof(*out));
    if (!(out->doc = rmq_json_parse((const char *)body, len, err, sizeof(err)))) {
        snprintf(why, whylen, "CheckClientRequestBody is no JSON: %s", err);
        return RMQ_EPROTO;
    }
    int obj = out->doc->type == RMQ_JSON_OBJECT;
    out->group = obj ? json_text(out->doc, "group", "") : "";
    const rmq_json_t *sd = obj ? rmq_json_get(out->doc, "subscriptionData") : NULL;
    if (sd && sd->type == RMQ_JSON_OBJECT) {
        out->has_sub = 1;
        out->expr = json_text(sd, "subString", "");
        out->type = json_text(sd, "expressionType", NULL);
    }
    return RMQ_OK;
}

rmq_err_t fr_rm_heartbeat_parse(const uint8_t *body, size_t len, fr_rm_heartbeat_t *out, char *why,
                                size_t whylen)
{
    static const rmq_json_t empty = {.type = RMQ_JSON_ARRAY};
    char err[128];
    rmq_err_t rc = RMQ_EPROTO;
    memset(out, 0, sizeof(*out));
    if (!(out->doc = rmq_json_parse((const char *)body, len, err, sizeof(err)))) {
        snprintf(why, whylen, "HeartbeatData body is no JSON: %s", err);
        return RMQ_EPROTO;
    }
    const rmq_json_t *d = out->doc;
    const rmq_json_t *prods = d->type == RMQ_JSON_OBJECT ? json_array(d, "producerDataSet", &empty) : NULL;
    const rmq_json_t *cons = d->type == RMQ_JSON_OBJECT ? json_array(d, "consumerDataSet", &empty) : NULL;
    const char *client = d->type == RMQ_JSON_OBJECT ? rmq_json_scalar(rmq_json_get(d, "clientID")) : NULL;
    if (!prods || !cons || !client || !client[0]) {
        snprintf(why, whylen, "HeartbeatData needs a clientID and producerDataSet / consumerDataSet arrays");
        goto err;
    }
    size_t nsubs = heartbeat_sub_count(cons);
    out->producers = calloc(prods->n + 1, sizeof(*out->producers));
    out->consumers = calloc(cons->n + 1, sizeof(*out->consumers));
    out->subs = calloc(nsubs + 1, sizeof(*out->subs));
    if (!out->producers || !out->consumers || !out->subs) {
        snprintf(why, whylen, "out of memory");
        rc = RMQ_ENOMEM;
        goto err;
    }
    out->hb.client_id = client;
    for (size_t i = 0; i < prods->n; i++) {
        const rmq_json_t *p = prods->items[i];
        const char *g = p->type == RMQ_JSON_OBJECT ? rmq_json_scalar(rmq_json_get(p, "groupName")) : NULL;
        if (!g) {
            snprintf(why, whylen, "producerDataSet entry %zu has no groupName", i);
            goto err;
        }
        out->producers[out->hb.nproducers++] = g;
    }
    out->hb.producer_groups = out->producers;
    size_t next_sub = 0;
    for (size_t i = 0; i < cons->n; i++) {
        if ((rc = heartbeat_consumer(out, cons->items[i], &out->consumers[i], &next_sub, why, whylen)) != RMQ_OK)
            goto err;
        out->hb.nconsumers++;
    }
    out->hb.consumers = out->consumers;
    return RMQ_OK;
err:
    fr_rm_heartbeat_clear(out);
    return rc;
}

rmq_err_t fr_rm_consumer_list_encode(struct evbuffer *out, const char *const *ids, size_t n)
{
    evbuffer_add(out, "{\"consumerIdList\":[", 19);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            evbuffer_add(out, ",", 1);
        rmq_json_str(out, ids[i]);
    }
    return evbuffer_add(out, "]}", 2) == 0 ? RMQ_OK : RMQ_ENOMEM;
}
