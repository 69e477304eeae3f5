/* rmq_fmt.c: integer-to-text helpers (see rmq_fmt.h). */
#include "rmq_fmt.h"

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
