/* rmq_topic_attr.c: RocketMQ 5's topic attributes, their modification
 * syntax and the text a topic keeps them in (see rmq_topic_attr.h). */
#include "rmq_topic_attr.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define VALUE_MAX 24                 /* longest allowed value (INT64_MAX: 19 digits), NUL included */
#define SHOWN 64                     /* bytes of a peer's key or value quoted in a message */

static const char *const cleanup_policies[] = {"DELETE", "COMPACTION", NULL};
static const char *const message_types[] = {"UNSPECIFIED", "NORMAL", "FIFO", "DELAY", "TRANSACTION", "MIXED", NULL};
static const char *const queue_types[] = {"BatchCQ", "SimpleCQ", NULL};

typedef struct attr_def {
    const char *name;
    int changeable;                  /* may be added, changed or removed after creation */
    const char *const *values;       /* the allowed values; NULL: an integer in [-1, INT64_MAX] */
} attr_def_t;

/* RocketMQ's TopicAttributes.ALL, in key order (the text's order). */
static const attr_def_t defs[] = {
    {"cleanup.policy", 0, cleanup_policies},
    {"message.type", 1, message_types},
    {"queue.type", 0, queue_types},
    {"reserve.time", 1, NULL},
};
#define NDEFS (sizeof(defs) / sizeof(defs[0]))
#define MSG_TYPE_DEF 1

/* A topic's attributes while they are checked or changed. */
typedef struct attr_set {
    int has[NDEFS];
    char value[NDEFS][VALUE_MAX];
} attr_set_t;

/* The index in defs of key[0..len), or -1. */
static int def_find(const char *key, size_t len)
{
    for (size_t i = 0; i < NDEFS; i++)
        if (strlen(defs[i].name) == len && memcmp(defs[i].name, key, len) == 0)
            return (int)i;
    return -1;
}

/* "[A, B, ...]": the allowed values of an enum attribute, for messages. */
static void values_list(const char *const *values, char *buf, size_t cap)
{
    size_t at = (size_t)snprintf(buf, cap, "[");
    for (size_t i = 0; values[i] && at < cap; i++)
        at += (size_t)snprintf(buf + at, cap - at, "%s%s", i ? ", " : "", values[i]);
    if (at < cap)
        snprintf(buf + at, cap - at, "]");
}

/* RocketMQ's LongRangeAttribute.verify: v[0..len) is a decimal integer
 * (Long.parseLong's syntax: an optional sign, digits) in [-1, INT64_MAX]. */
static rmq_err_t long_verify(const char *v, size_t len, char *why, size_t whylen)
{
    size_t digits = len && (v[0] == '+' || v[0] == '-');
    char buf[VALUE_MAX];
    int ok = len > digits && len < sizeof(buf);
    for (size_t i = digits; ok && i < len; i++)
        ok = v[i] >= '0' && v[i] <= '9';
    if (ok) {
        memcpy(buf, v, len);
        buf[len] = 0;
        errno = 0;
        long long x = strtoll(buf, NULL, 10);
        ok = errno != ERANGE;
        if (ok && x < -1) {
            snprintf(why, whylen, "value is not in range(-1, %" PRId64 ")", INT64_MAX);
            return RMQ_EINVAL;
        }
    }
    if (!ok)
        snprintf(why, whylen, "For input string: \"%.*s\"", (int)(len < SHOWN ? len : SHOWN), v);
    return ok ? RMQ_OK : RMQ_EINVAL;
}

/* RocketMQ's Attribute.verify of value v[0..len) for attribute d. */
static rmq_err_t value_verify(const attr_def_t *d, const char *v, size_t len, char *why, size_t whylen)
{
    if (!d->values)
        return long_verify(v, len, why, whylen);
    for (size_t i = 0; d->values[i]; i++)
        if (strlen(d->values[i]) == len && memcmp(d->values[i], v, len) == 0)
            return RMQ_OK;
    char list[128];
    values_list(d->values, list, sizeof(list));
    snprintf(why, whylen, "value is not in set: %s", list);
    return RMQ_EINVAL;
}

/* Reads a kept text[0..len) into *set: "key=value" pairs, comma separated,
 * known keys in defs' order, each once, allowed values. */
static rmq_err_t set_parse(const char *text, size_t len, attr_set_t *set, char *why, size_t whylen)
{
    *set = (attr_set_t){0};
    int last = -1;
    for (size_t at = 0; at < len;) {
        const char *item = text + at;
        const char *comma = memchr(item, ',', len - at);
        size_t n = comma ? (size_t)(comma - item) : len - at;
        const char *eq = memchr(item, '=', n);
        int d = eq ? def_find(item, (size_t)(eq - item)) : -1;
        if (d < 0 || d <= last) {
            snprintf(why, whylen, "topic attributes: '%.*s' is not a known key=value in key order, each key once",
                     (int)(n < SHOWN ? n : SHOWN), item);
            return RMQ_EINVAL;
        }
        size_t vlen = n - (size_t)(eq + 1 - item);
        if (value_verify(&defs[d], eq + 1, vlen, why, whylen) != RMQ_OK)
            return RMQ_EINVAL;
        set->has[d] = 1;
        memcpy(set->value[d], eq + 1, vlen);
        last = d;
        at += n + (comma != NULL);
        if (comma && at == len) {
            snprintf(why, whylen, "topic attributes: a trailing comma");
            return RMQ_EINVAL;
        }
    }
    return RMQ_OK;
}

/* Writes set as a kept text into out[0..cap). */
static void set_write(const attr_set_t *set, char *out, size_t cap)
{
    size_t at = 0;
    out[0] = 0;
    for (size_t i = 0; i < NDEFS && at < cap; i++)
        if (set->has[i])
            at += (size_t)snprintf(out + at, cap - at, "%s%s=%s", at ? "," : "", defs[i].name, set->value[i]);
}

/* A modification's item "+key=value" or "-key" split: sign, real key and
 * value (empty for a removal). RocketMQ's AttributeParser and the
 * format checks of AttributeUtil. */
typedef struct mod_item {
    char sign;
    const char *key;
    size_t klen;
    const char *value;
    size_t vlen;
} mod_item_t;

/* The next comma-separated item of mod[0..len) from *at: 1 with item[0..n)
 * and *at moved past it, 0 at the end. */
static int item_next(const char *mod, size_t len, size_t *at, const char **item, size_t *n)
{
    if (!mod || *at >= len)
        return 0;
    *item = mod + *at;
    const char *comma = memchr(*item, ',', len - *at);
    *n = comma ? (size_t)(comma - *item) : len - *at;
    *at += *n + (comma != NULL);
    return 1;
}

static rmq_err_t item_split(const char *item, size_t n, mod_item_t *it, char *why, size_t whylen)
{
    const char *eq = memchr(item, '=', n);
    size_t klen = eq ? (size_t)(eq - item) : n;
    *it = (mod_item_t){0};
    if (eq && (!memchr(item, '+', klen) || eq + 1 == item + n || memchr(eq + 1, '=', n - klen - 1))) {
        snprintf(why, whylen, "add/alter attribute format is wrong: %.*s", (int)(klen < SHOWN ? klen : SHOWN), item);
        return RMQ_EINVAL;
    }
    if (!eq && !memchr(item, '-', n)) {
        snprintf(why, whylen, "delete attribute format is wrong: %.*s", (int)(n < SHOWN ? n : SHOWN), item);
        return RMQ_EINVAL;
    }
    if (klen < 2 || memchr(item + 1, '+', klen - 1) || memchr(item + 1, '-', klen - 1)) {
        snprintf(why, whylen, "kv string format wrong.");
        return RMQ_EINVAL;
    }
    *it = (mod_item_t){item[0], item + 1, klen - 1, eq ? eq + 1 : "", eq ? n - klen - 1 : 0};
    return RMQ_OK;
}

/* Applies one item to set (seen: the keys earlier items named). */
static rmq_err_t item_apply(const mod_item_t *it, int create, attr_set_t *set, int *seen, char *why, size_t whylen)
{
    int k = (int)(it->klen < SHOWN ? it->klen : SHOWN);
    int d = def_find(it->key, it->klen);
    if (d < 0) {
        snprintf(why, whylen, "unsupported key: %.*s", k, it->key);
        return RMQ_EINVAL;
    }
    if (seen[d]) {
        snprintf(why, whylen, "alter duplication key. key: %.*s", k, it->key);
        return RMQ_EINVAL;
    }
    seen[d] = 1;
    if (create && it->sign != '+') {
        snprintf(why, whylen, "only add attribute is supported while creating topic. key: %.*s", k, it->key);
        return RMQ_EINVAL;
    }
    if (!create && it->sign != '+' && it->sign != '-') {
        snprintf(why, whylen, "wrong format key: %.*s", k, it->key);
        return RMQ_EINVAL;
    }
    if (it->sign == '-' && !set->has[d]) {
        snprintf(why, whylen, "attempt to delete a nonexistent key: %.*s", k, it->key);
        return RMQ_EINVAL;
    }
    if (!create && !defs[d].changeable) {
        snprintf(why, whylen, "attempt to update an unchangeable attribute. key: %.*s", k, it->key);
        return RMQ_EINVAL;
    }
    if (it->sign == '-') {
        set->has[d] = 0;
        return RMQ_OK;
    }
    if (value_verify(&defs[d], it->value, it->vlen, why, whylen) != RMQ_OK)
        return RMQ_EINVAL;
    set->has[d] = 1;
    memset(set->value[d], 0, VALUE_MAX);
    memcpy(set->value[d], it->value, it->vlen);
    return RMQ_OK;
}

rmq_err_t rmq_topic_attrs_alter(const char *current, int create, const char *mod, size_t len, char *out,
                                size_t cap, char *why, size_t whylen)
{
    attr_set_t set;
    int seen[NDEFS] = {0};
    if (set_parse(current, strlen(current), &set, why, whylen) != RMQ_OK)
        return RMQ_EINVAL;
    const char *item;
    size_t n;
    for (size_t at = 0; item_next(mod, len, &at, &item, &n);) {
        mod_item_t it;
        if (item_split(item, n, &it, why, whylen) != RMQ_OK ||
            item_apply(&it, create, &set, seen, why, whylen) != RMQ_OK)
            return RMQ_EINVAL;
    }
    if (cap < RMQ_TOPIC_ATTRS_MAX) {
        snprintf(why, whylen, "topic attributes: no room for the result");
        return RMQ_EINVAL;
    }
    set_write(&set, out, cap);
    return RMQ_OK;
}

rmq_err_t rmq_topic_attrs_check(const char *text, size_t len, char *why, size_t whylen)
{
    attr_set_t set;
    if (memchr(text, 0, len)) {
        snprintf(why, whylen, "topic attributes: a NUL byte");
        return RMQ_EINVAL;
    }
    return set_parse(text, len, &set, why, whylen);
}

int rmq_topic_attrs_next(const char *text, size_t *cursor, char *key, size_t kcap, char *value, size_t vcap)
{
    const char *item = text + *cursor;
    if (!*item)
        return 0;
    size_t n = strcspn(item, ",");
    const char *eq = memchr(item, '=', n);
    size_t klen = eq ? (size_t)(eq - item) : n;
    snprintf(key, kcap, "%.*s", (int)klen, item);
    snprintf(value, vcap, "%.*s", eq ? (int)(n - klen - 1) : 0, eq ? eq + 1 : "");
    *cursor += n + (item[n] == ',');
    return 1;
}

/* The message type value v[0..len) names, or RMQ_TOPIC_MSG_ABSENT. */
static rmq_topic_msg_type_t msg_type_of(const char *v, size_t len)
{
    for (size_t i = 0; message_types[i]; i++)
        if (strlen(message_types[i]) == len && memcmp(message_types[i], v, len) == 0)
            return (rmq_topic_msg_type_t)(RMQ_TOPIC_MSG_UNSPECIFIED + i);
    return RMQ_TOPIC_MSG_ABSENT;
}

rmq_topic_msg_type_t rmq_topic_attrs_msg_type(const char *text)
{
    attr_set_t set;
    char why[8];
    if (set_parse(text, strlen(text), &set, why, sizeof(why)) != RMQ_OK || !set.has[MSG_TYPE_DEF])
        return RMQ_TOPIC_MSG_ABSENT;
    return msg_type_of(set.value[MSG_TYPE_DEF], strlen(set.value[MSG_TYPE_DEF]));
}

rmq_topic_msg_type_t rmq_topic_attrs_mod_msg_type(const char *mod, size_t len)
{
    char why[80];
    const char *item;
    size_t n;
    for (size_t at = 0; item_next(mod, len, &at, &item, &n);) {
        mod_item_t it;
        if (item_split(item, n, &it, why, sizeof(why)) == RMQ_OK && it.sign == '+' &&
            def_find(it.key, it.klen) == MSG_TYPE_DEF)
            return msg_type_of(it.value, it.vlen);
    }
    return RMQ_TOPIC_MSG_ABSENT;
}
