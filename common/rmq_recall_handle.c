/* rmq_recall_handle.c: recall handles both ways (see rmq_recall_handle.h). */
#include "rmq_recall_handle.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_base64.h"

#define HANDLE_V1 "v1"

/* Copies the field [p, end) into out[cap]; 0 when empty or too long. */
static int handle_field(const char *p, const char *end, char *out, size_t cap)
{
    size_t n = (size_t)(end - p);
    if (n == 0 || n >= cap)
        return 0;
    memcpy(out, p, n);
    out[n] = '\0';
    return 1;
}

/* The handle's time as RocketMQ's NumberUtils.toLong(s, -1) reads it. */
static int64_t handle_time(const char *s)
{
    char *end = NULL;
    errno = 0;
    long long v = strtoll(s, &end, 10);
    return *s && !*end && errno == 0 && (s[0] == '-' || s[0] == '+' || (s[0] >= '0' && s[0] <= '9')) ? (int64_t)v : -1;
}

rmq_err_t rmq_recall_handle_parse(const char *text, size_t len, rmq_recall_handle_t *h)
{
    char *raw = NULL, ver[sizeof(HANDLE_V1)], ts[24];
    size_t n = 0;
    memset(h, 0, sizeof(*h));
    if (len == 0 || rmq_base64url_decode(text, len, RMQ_RECALL_HANDLE_MAX, &raw, &n) != 0)
        return RMQ_EINVAL;
    char *const field[] = {ver, h->topic, h->broker_name, ts, h->msg_id};
    const size_t cap[] = {sizeof(ver), sizeof(h->topic), sizeof(h->broker_name), sizeof(ts), sizeof(h->msg_id)};
    int ok = strlen(raw) == n;       /* no NUL inside */
    const char *p = raw;
    for (size_t i = 0; i < 5 && ok; i++) {
        const char *e = strchr(p, ' ');
        if (!e)
            e = raw + n;
        ok = (i == 4 || *e == ' ') && handle_field(p, e, field[i], cap[i]);
        p = e + 1;
    }
    free(raw);
    if (!ok || strcmp(ver, HANDLE_V1) != 0)
        return RMQ_EINVAL;
    h->timestamp = handle_time(ts);
    return RMQ_OK;
}

size_t rmq_recall_handle_format(const rmq_recall_handle_t *h, char *out, size_t cap)
{
    char raw[sizeof(HANDLE_V1) + sizeof(h->topic) + sizeof(h->broker_name) + 24 + sizeof(h->msg_id)];
    int n = snprintf(raw, sizeof(raw), HANDLE_V1 " %s %s %" PRId64 " %s", h->topic, h->broker_name, h->timestamp,
                     h->msg_id);
    if (n < 0 || (size_t)n >= sizeof(raw))
        return 0;
    return rmq_base64url_encode(raw, (size_t)n, out, cap);
}
