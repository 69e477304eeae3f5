/* rmq_fmt.c: integers to decimal text and back, and joined keys (see
 * rmq_fmt.h). */
#include "rmq_fmt.h"

#include <string.h>

size_t rmq_fmt_i64(char *out, int64_t v)
{
    char tmp[RMQ_FMT_I64_LEN];
    uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v;
    size_t n = 0, len = 0;

    do {
        tmp[n++] = (char)('0' + u % 10);
        u /= 10;
    } while (u != 0);
    if (v < 0)
        out[len++] = '-';
    while (n > 0)
        out[len++] = tmp[--n];
    out[len] = '\0';
    return len;
}

int rmq_parse_i64(const char *s, int64_t *out)
{
    uint64_t u = 0, limit = INT64_MAX;
    int neg = 0;

    while (*s == ' ' || (*s >= '\t' && *s <= '\r'))
        s++;
    if (*s == '-' || *s == '+')
        neg = *s++ == '-';
    if (neg)
        limit++;
    if (*s < '0' || *s > '9')
        return -1;
    /* 18 digits cannot overflow: only the ones after are checked */
    for (const char *first = s; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (s - first >= 18 && u > (limit - d) / 10)
            return -1;
        u = u * 10 + d;
    }
    if (*s != '\0')
        return -1;
    *out = neg ? (int64_t)(0 - u) : (int64_t)u;
    return 0;
}

void rmq_join_init(rmq_join_t *j, char *buf, size_t cap)
{
    j->buf = buf;
    j->cap = cap;
    j->len = 0;
    j->over = cap == 0;
    if (cap > 0)
        buf[0] = '\0';
}

/* Appends n bytes of s when they fit with the NUL, else marks the join over. */
static void join_bytes(rmq_join_t *j, const char *s, size_t n)
{
    if (j->over || n >= j->cap - j->len) {
        j->over = 1;
        return;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

void rmq_join_str(rmq_join_t *j, const char *s)
{
    join_bytes(j, s, strlen(s));
}

void rmq_join_char(rmq_join_t *j, char c)
{
    join_bytes(j, &c, 1);
}

void rmq_join_i64(rmq_join_t *j, int64_t v)
{
    char digits[RMQ_FMT_I64_LEN];
    join_bytes(j, digits, rmq_fmt_i64(digits, v));
}

size_t rmq_join_end(const rmq_join_t *j)
{
    return j->over ? 0 : j->len;
}
