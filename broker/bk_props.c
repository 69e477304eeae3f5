/* bk_props.c: copy-with-edits of message properties strings (see
 * bk_props.h). Parsing follows RocketMQ: split on \x02, split each piece at
 * its first \x01, ignore pieces without one. */
#include "bk_props.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

/* Makes room for need more bytes plus a NUL. */
static rmq_err_t pb_reserve(bk_props_buf_t *pb, size_t need)
{
    if (pb->len + need + 1 <= pb->cap)
        return RMQ_OK;
    size_t cap = pb->cap ? pb->cap : 256;
    while (cap < pb->len + need + 1)
        cap *= 2;
    char *p = realloc(pb->data, cap);
    if (!p)
        return RMQ_ENOMEM;
    pb->data = p;
    pb->cap = cap;
    return RMQ_OK;
}

/* Appends one pair given by lengths. */
static rmq_err_t pb_append(bk_props_buf_t *pb, const char *name, size_t nl, const char *value, size_t vl)
{
    if (pb_reserve(pb, nl + vl + 2) != RMQ_OK)
        return RMQ_ENOMEM;
    if (pb->len)
        pb->data[pb->len++] = '\x02';
    memcpy(pb->data + pb->len, name, nl);
    pb->len += nl;
    pb->data[pb->len++] = '\x01';
    memcpy(pb->data + pb->len, value, vl);
    pb->len += vl;
    pb->data[pb->len] = '\0';
    return RMQ_OK;
}

static int name_dropped(const char *name, size_t nl, const char *const *drop)
{
    for (size_t i = 0; drop && drop[i]; i++)
        if (strlen(drop[i]) == nl && memcmp(drop[i], name, nl) == 0)
            return 1;
    return 0;
}

rmq_err_t bk_props_copy(bk_props_buf_t *pb, const char *props, size_t len, const char *const *drop)
{
    pb->len = 0;
    if (pb_reserve(pb, len) != RMQ_OK)
        return RMQ_ENOMEM;
    pb->data[0] = '\0';
    size_t pos = 0;
    while (props && pos < len) {
        const char *piece = props + pos;
        const char *end = memchr(piece, '\x02', len - pos);
        size_t plen = end ? (size_t)(end - piece) : len - pos;
        pos += plen + 1;
        const char *sep = memchr(piece, '\x01', plen);
        if (!sep || sep == piece)
            continue;
        size_t nl = (size_t)(sep - piece);
        if (name_dropped(piece, nl, drop))
            continue;
        if (pb_append(pb, piece, nl, sep + 1, plen - nl - 1) != RMQ_OK)
            return RMQ_ENOMEM;
    }
    return RMQ_OK;
}

rmq_err_t bk_props_put(bk_props_buf_t *pb, const char *name, const char *value)
{
    return pb_append(pb, name, strlen(name), value, strlen(value));
}

rmq_err_t bk_props_put_int(bk_props_buf_t *pb, const char *name, int64_t value)
{
    char v[24];
    snprintf(v, sizeof(v), "%" PRId64, value);
    return bk_props_put(pb, name, v);
}

void bk_props_buf_free(bk_props_buf_t *pb)
{
    free(pb->data);
    memset(pb, 0, sizeof(*pb));
}

int64_t bk_props_int(const char *props, size_t len, const char *name, int64_t def, int *ok)
{
    size_t vl = 0;
    const char *v = props ? rmq_props_get(props, len, name, &vl) : NULL;
    if (ok)
        *ok = 1;
    if (!v)
        return def;
    char buf[24];
    if (vl == 0 || vl >= sizeof(buf))
        goto bad;
    memcpy(buf, v, vl);
    buf[vl] = '\0';
    char *end = NULL;
    long long x = strtoll(buf, &end, 10);
    if (*end != '\0')
        goto bad;
    return (int64_t)x;
bad:
    if (ok)
        *ok = 0;
    return def;
}
