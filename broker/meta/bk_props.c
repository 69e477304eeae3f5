/* bk_props.c: copy-with-edits of message properties strings (see
 * bk_props.h), over the shared reader and buffer in rmq_message.c. */
#include "bk_props.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

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
    if (rmq_props_buf_reserve(pb, len) != RMQ_OK)
        return RMQ_ENOMEM;
    pb->data[0] = '\0';
    size_t pos = 0;
    rmq_prop_t p;
    while (rmq_props_next(props, len, &pos, &p)) {
        if (p.name_len == 0 || name_dropped(p.name, p.name_len, drop))
            continue;
        if (rmq_props_buf_append(pb, p.name, p.name_len, p.value, p.value_len) != RMQ_OK)
            return RMQ_ENOMEM;
    }
    return RMQ_OK;
}

rmq_err_t bk_props_put(bk_props_buf_t *pb, const char *name, const char *value)
{
    return rmq_props_buf_put(pb, name, value);
}

rmq_err_t bk_props_put_int(bk_props_buf_t *pb, const char *name, int64_t value)
{
    char v[24];
    snprintf(v, sizeof(v), "%" PRId64, value);
    return rmq_props_buf_put(pb, name, v);
}

void bk_props_buf_free(bk_props_buf_t *pb)
{
    rmq_props_buf_free(pb);
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
