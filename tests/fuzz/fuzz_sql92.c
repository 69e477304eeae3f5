/* fuzz_sql92.c: libFuzzer target for the SQL92 filter (rmq_sql92.h), whose
 * expressions come from consumers (heartbeats, pulls, CHECK_CLIENT_CONFIG).
 * The input is an expression, a NUL, then a message's properties string:
 * the expression is compiled and, when it compiles, matched against the
 * properties. A refusal must carry a message naming its line and column;
 * nothing may crash, leak or read outside the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_sql92.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const uint8_t *nul = memchr(data, 0, size);
    size_t elen = nul ? (size_t)(nul - data) : size;
    char *expr = malloc(elen + 1);
    if (!expr)
        return 0;
    memcpy(expr, data, elen);
    expr[elen] = 0;
    char why[256] = "";
    rmq_sql92_t *q = NULL;
    rmq_err_t rc = rmq_sql92_compile(expr, &q, why, sizeof(why));
    if (rc == RMQ_EINVAL && strstr(why, "line ") == NULL)
        abort();
    if (rc == RMQ_OK) {
        rmq_sql92_props_t p = {nul ? (const char *)nul + 1 : NULL, nul ? size - elen - 1 : 0};
        (void)rmq_sql92_match(q, rmq_sql92_props_get, &p);
        rmq_sql92_free(q);
    }
    free(expr);
    return 0;
}
