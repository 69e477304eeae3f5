/* ns_rembody.c: decoding RocketMQ's RegisterBrokerBody (plain JSON or its
 * compressed binary form) and DataVersion bodies into the route table's
 * types, and RocketMQ's CRC of a body (see ns_rembody.h). Inflating is
 * ns_regbody's bounded inflate; JSON is rmq_json's strict reader. */
#include "ns_rembody.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ns_regbody.h"
#include "ns_route.h"
#include "rmq_json.h"
#include "rmq_topic_attr.h"
#include "rmq_topic_json.h"

#define TOPIC_LINE_MAX (NS_NAME_MAX + 64)   /* "name read write perm filterType" */

/* ---- topics --------------------------------------------------------------- */

/* Appends a topic config to b (its topics array has room); attributes:
 * the kept text (rmq_topic_attr.h), "" for none. */
static rmq_err_t topic_add(ns_rembody_t *b, const char *name, int64_t rq, int64_t wq, int64_t perm,
                           int64_t sysflag, int order, const char *attributes, char *why, size_t whylen)
{
    size_t len = strlen(name);

    if (len == 0 || len > NS_NAME_MAX) {
        snprintf(why, whylen, "RegisterBrokerBody: topic name '%.64s' is empty or longer than %d bytes",
                 name, NS_NAME_MAX);
        return RMQ_EPROTO;
    }
    Rmq__TopicConfig *tc = malloc(sizeof *tc);
    char *copy = strdup(name);
    char *attrs = strdup(attributes);
    if (tc == NULL || copy == NULL || attrs == NULL) {
        free(tc);
        free(copy);
        free(attrs);
        return RMQ_ENOMEM;
    }
    rmq__topic_config__init(tc);
    tc->topic_name = copy;
    tc->attributes = attrs;
    tc->read_queue_nums = (int32_t)rq;
    tc->write_queue_nums = (int32_t)wq;
    tc->perm = (int32_t)perm;
    tc->topic_sys_flag = (int32_t)sysflag;
    tc->order = order;
    b->topics[b->n_topics++] = tc;
    return RMQ_OK;
}

/* The route's part of a TopicConfig's RocketMQ 5 attributes (absent or
 * null: none): message.type, as a kept text into out[0..cap). */
static rmq_err_t topic_attrs(const rmq_json_t *tc, const char *topic, char *out, size_t cap, char *why,
                             size_t whylen)
{
    const rmq_json_t *attrs = rmq_json_get(tc, "attributes");
    out[0] = '\0';
    if (attrs == NULL || attrs->type == RMQ_JSON_NULL)
        return RMQ_OK;
    const rmq_json_t *type = rmq_json_get(attrs, "message.type");
    char mod[64], reason[160];
    if (attrs->type != RMQ_JSON_OBJECT || (type != NULL && type->type != RMQ_JSON_STRING)) {
        snprintf(why, whylen, "RegisterBrokerBody: topic %.64s: attributes is not an object of strings", topic);
        return RMQ_EPROTO;
    }
    if (type == NULL)
        return RMQ_OK;
    snprintf(mod, sizeof(mod), "+message.type=%.40s", type->str);
    if (rmq_topic_attrs_alter("", 1, mod, strlen(mod), out, cap, reason, sizeof(reason)) != RMQ_OK) {
        snprintf(why, whylen, "RegisterBrokerBody: topic %.64s: message.type: %s", topic, reason);
        return RMQ_EPROTO;
    }
    return RMQ_OK;
}

/* One TopicConfig object of the JSON topicConfigTable (key: its map key). */
static rmq_err_t topic_from_json(ns_rembody_t *b, const char *key, const rmq_json_t *tc, char *why,
                                 size_t whylen)
{
    char where[128];
    rmq_topic_json_t t;
    snprintf(where, sizeof where, "RegisterBrokerBody: topicConfigTable.%.64s", key);
    rmq_err_t err = rmq_topic_json_read(tc, where, &t, why, whylen);
    if (err != RMQ_OK)
        return err;
    char attributes[RMQ_TOPIC_ATTRS_MAX];
    if ((err = topic_attrs(tc, t.name, attributes, sizeof(attributes), why, whylen)) != RMQ_OK)
        return err;
    return topic_add(b, t.name, t.read_queues, t.write_queues, t.perm, t.sys_flag, t.order, attributes, why, whylen);
}

/* One compressed-form topic line "name read write perm filterType". */
static rmq_err_t topic_from_line(ns_rembody_t *b, const uint8_t *p, size_t len, char *why, size_t whylen)
{
    char line[TOPIC_LINE_MAX + 1], *field[5];
    int64_t num[3];
    size_t n = 0;

    if (len > TOPIC_LINE_MAX || memchr(p, '\0', len) != NULL) {
        snprintf(why, whylen, "compressed RegisterBrokerBody: a topic entry of %zu bytes is not "
                 "'name read write perm filterType'", len);
        return RMQ_EPROTO;
    }
    memcpy(line, p, len);
    line[len] = '\0';
    for (char *s = line;;) {
        field[n++] = s;
        char *sp = strchr(s, ' ');
        if (sp == NULL)
            break;
        if (n == 5) {
            n = 0;               /* a sixth field */
            break;
        }
        *sp = '\0';
        s = sp + 1;
    }
    for (size_t i = 0; n == 5 && i < 3; i++) {
        char *end;
        errno = 0;
        long long v = strtoll(field[i + 1], &end, 10);
        if (errno != 0 || end == field[i + 1] || *end != '\0' || v < 0 || v > (i == 2 ? 15 : INT32_MAX))
            n = 0;
        num[i] = v;
    }
    if (n != 5 || !rmq_topic_filter_type_valid(field[4])) {
        snprintf(why, whylen, "compressed RegisterBrokerBody: topic entry '%.*s' is not "
                 "'name read write perm SINGLE_TAG|MULTI_TAG'", (int)(len < 64 ? len : 64), (const char *)p);
        return RMQ_EPROTO;
    }
    return topic_add(b, field[0], num[0], num[1], num[2], 0, 0, "", why, whylen);
}

/* ---- data version and filter servers ---------------------------------- */

static rmq_err_t version_from_json(const rmq_json_t *v, Rmq__DataVersion *dv, const char *what,
                                   char *why, size_t whylen)
{
    int64_t ts, counter;

    if (v == NULL || v->type != RMQ_JSON_OBJECT) {
        snprintf(why, whylen, "%s: dataVersion is %s", what, v == NULL ? "missing" : "not an object");
        return RMQ_EPROTO;
    }
    if (rmq_json_int(rmq_json_get(v, "timestamp"), INT64_MIN, INT64_MAX, &ts) != 0 ||
        rmq_json_int(rmq_json_get(v, "counter"), INT64_MIN, INT64_MAX, &counter) != 0) {
        snprintf(why, whylen, "%s: dataVersion needs integers timestamp and counter", what);
        return RMQ_EPROTO;
    }
    rmq__data_version__init(dv);
    dv->timestamp = ts;
    dv->counter = counter;
    return RMQ_OK;
}

/* A filterServerList value (NULL: absent): an array of address strings. */
static rmq_err_t filter_servers(const rmq_json_t *fs, ns_rembody_t *b, const char *what, char *why,
                                size_t whylen)
{
    if (fs == NULL || fs->type == RMQ_JSON_NULL)
        return RMQ_OK;
    int ok = fs->type == RMQ_JSON_ARRAY;
    for (size_t i = 0; ok && i < fs->n; i++)
        ok = fs->items[i]->type == RMQ_JSON_STRING;
    if (!ok) {
        snprintf(why, whylen, "%s: filterServerList is not an array of strings", what);
        return RMQ_EPROTO;
    }
    b->n_filter_servers = fs->n;
    return RMQ_OK;
}

/* Parses text[0..len) as JSON into *doc; RMQ_EPROTO naming what. */
static rmq_err_t parse_json(const uint8_t *text, size_t len, const char *what, rmq_json_t **doc,
                            char *why, size_t whylen)
{
    char perr[160];

    *doc = rmq_json_parse((const char *)text, len, perr, sizeof perr);
    if (*doc != NULL)
        return RMQ_OK;
    snprintf(why, whylen, "%s: not JSON (%s)", what, perr);
    return RMQ_EPROTO;
}

/* ---- the two forms ------------------------------------------------------- */

static rmq_err_t decode_json(const uint8_t *body, size_t len, ns_rembody_t *b, char *why, size_t whylen)
{
    static const char what[] = "RegisterBrokerBody";
    rmq_json_t *doc;
    rmq_err_t err = parse_json(body, len, what, &doc, why, whylen);

    if (err != RMQ_OK)
        return err;
    const rmq_json_t *wrap = rmq_json_get(doc, "topicConfigSerializeWrapper");
    if (wrap == NULL || wrap->type != RMQ_JSON_OBJECT) {
        snprintf(why, whylen, "%s: no topicConfigSerializeWrapper object", what);
        err = RMQ_EPROTO;
        goto out;
    }
    if ((err = version_from_json(rmq_json_get(wrap, "dataVersion"), &b->version, what, why, whylen)) != RMQ_OK ||
        (err = filter_servers(rmq_json_get(doc, "filterServerList"), b, what, why, whylen)) != RMQ_OK)
        goto out;
    const rmq_json_t *table = rmq_json_get(wrap, "topicConfigTable");
    if (table == NULL || table->type == RMQ_JSON_NULL)
        goto out;
    if (table->type != RMQ_JSON_OBJECT) {
        snprintf(why, whylen, "%s: topicConfigTable is not an object", what);
        err = RMQ_EPROTO;
        goto out;
    }
    if ((b->topics = calloc(table->n ? table->n : 1, sizeof *b->topics)) == NULL) {
        err = RMQ_ENOMEM;
        goto out;
    }
    for (size_t i = 0; err == RMQ_OK && i < table->n; i++)
        err = topic_from_json(b, table->keys[i], table->items[i], why, whylen);
out:
    rmq_json_free(doc);
    return err;
}

/* A cursor over the inflated compressed form. */
typedef struct rd {
    const uint8_t *p;
    size_t left;
} rd_t;

/* The next i32 length and that many bytes; -1 when they are not there. */
static int rd_chunk(rd_t *r, const uint8_t **out, size_t *len)
{
    if (r->left < 4)
        return -1;
    int32_t n = (int32_t)((uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3]);
    if (n < 0 || (size_t)n > r->left - 4)
        return -1;
    *out = r->p + 4;
    *len = (size_t)n;
    r->p += 4 + (size_t)n;
    r->left -= 4 + (size_t)n;
    return 0;
}

/* The compressed form's sections, in order. Bytes after the filter-server
 * list are ignored (RocketMQ 5 appends its static-topic mappings there). */
static rmq_err_t decode_sections(rd_t *r, ns_rembody_t *b, char *why, size_t whylen)
{
    static const char what[] = "compressed RegisterBrokerBody";
    const uint8_t *p;
    size_t len;
    rmq_json_t *doc = NULL;
    rmq_err_t err;

    if (rd_chunk(r, &p, &len) != 0) {
        snprintf(why, whylen, "%s: truncated before the data version", what);
        return RMQ_EPROTO;
    }
    if ((err = parse_json(p, len, what, &doc, why, whylen)) != RMQ_OK)
        return err;
    err = version_from_json(doc, &b->version, what, why, whylen);
    rmq_json_free(doc);
    if (err != RMQ_OK)
        return err;
    if (r->left < 4) {
        snprintf(why, whylen, "%s: truncated before the topic count", what);
        return RMQ_EPROTO;
    }
    uint32_t count = (uint32_t)r->p[0] << 24 | (uint32_t)r->p[1] << 16 | (uint32_t)r->p[2] << 8 | r->p[3];
    r->p += 4;
    r->left -= 4;
    if (count > r->left / 4) {
        snprintf(why, whylen, "%s: topic count %" PRIu32 " does not fit in the %zu bytes left", what, count,
                 r->left);
        return RMQ_EPROTO;
    }
    if ((b->topics = calloc(count ? count : 1, sizeof *b->topics)) == NULL)
        return RMQ_ENOMEM;
    for (uint32_t i = 0; i < count; i++) {
        if (rd_chunk(r, &p, &len) != 0) {
            snprintf(why, whylen, "%s: topic %" PRIu32 " of %" PRIu32 " is truncated", what, i + 1, count);
            return RMQ_EPROTO;
        }
        if ((err = topic_from_line(b, p, len, why, whylen)) != RMQ_OK)
            return err;
    }
    if (rd_chunk(r, &p, &len) != 0) {
        snprintf(why, whylen, "%s: truncated before the filter-server list", what);
        return RMQ_EPROTO;
    }
    if ((err = parse_json(p, len, what, &doc, why, whylen)) != RMQ_OK)
        return err;
    err = filter_servers(doc, b, what, why, whylen);
    rmq_json_free(doc);
    return err;
}

static rmq_err_t decode_compressed(const uint8_t *body, size_t len, ns_rembody_t *b, char *why, size_t whylen)
{
    uint8_t *raw = NULL;
    size_t rawlen = 0;
    rmq_err_t err = ns_regbody_inflate(body, len, &raw, &rawlen, why, whylen);

    if (err != RMQ_OK)
        return err;
    rd_t r = { raw, rawlen };
    err = decode_sections(&r, b, why, whylen);
    free(raw);
    return err;
}

rmq_err_t ns_rembody_decode(const uint8_t *body, size_t len, int compressed, ns_rembody_t *out,
                            char *why, size_t whylen)
{
    ns_rembody_t b = { 0 };
    rmq_err_t err = RMQ_OK;

    rmq__data_version__init(&b.version);
    if (len > 0)
        err = compressed ? decode_compressed(body, len, &b, why, whylen) : decode_json(body, len, &b, why, whylen);
    if (err != RMQ_OK) {
        ns_rembody_clear(&b);
        return err;
    }
    *out = b;
    return RMQ_OK;
}

void ns_rembody_clear(ns_rembody_t *b)
{
    for (size_t i = 0; i < b->n_topics; i++) {
        free(b->topics[i]->topic_name);
        free(b->topics[i]->attributes);
        free(b->topics[i]);
    }
    free(b->topics);
    memset(b, 0, sizeof *b);
}

rmq_err_t ns_rembody_version_decode(const uint8_t *body, size_t len, Rmq__DataVersion *dv,
                                    char *why, size_t whylen)
{
    rmq_json_t *doc;
    rmq_err_t err = parse_json(body, len, "DataVersion body", &doc, why, whylen);

    if (err != RMQ_OK)
        return err;
    err = version_from_json(doc, dv, "DataVersion body", why, whylen);
    rmq_json_free(doc);
    return err;
}

void ns_rembody_version_encode(struct evbuffer *out, const Rmq__DataVersion *dv)
{
    evbuffer_add_printf(out, "{\"counter\":%" PRId64 ",\"timestamp\":%" PRId64 "}", dv->counter, dv->timestamp);
}

uint32_t ns_rembody_crc32(const uint8_t *data, size_t len)
{
    return (uint32_t)(crc32_z(0L, data, len) & 0x7fffffffu);
}
