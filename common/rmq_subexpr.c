/* rmq_subexpr.c: the subscription-expression rule (see rmq_subexpr.h). */
#include "rmq_subexpr.h"

#include <string.h>

/* Java's String.trim: every byte <= 0x20 is white space. */
static int is_space(char c)
{
    return (unsigned char)c <= 0x20;
}

/* Trims [*b, *e) in place. */
static void trim(const char **b, const char **e)
{
    while (*b < *e && is_space(**b))
        (*b)++;
    while (*e > *b && is_space((*e)[-1]))
        (*e)--;
}

rmq_err_t rmq_subexpr_parse(const char *expr, int *all, rmq_subexpr_fn fn, void *arg)
{
    const char *b = expr ? expr : "", *e = b + strlen(b);
    size_t n = 0;
    *all = 0;
    trim(&b, &e);
    if (b == e || (e - b == 1 && *b == '*')) {
        *all = 1;
        return RMQ_OK;
    }
    while (b < e) {
        const char *sep = strstr(b, "||");
        const char *pe = sep && sep < e ? sep : e, *pb = b;
        trim(&pb, &pe);
        if (pe > pb) {
            rmq_err_t rc = fn(pb, (size_t)(pe - pb), arg);
            if (rc != RMQ_OK)
                return rc;
            n++;
        }
        b = sep && sep < e ? sep + 2 : e;
    }
    return n ? RMQ_OK : RMQ_EINVAL;
}
