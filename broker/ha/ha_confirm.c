/* ha_confirm.c: reads and writes the text of ROOT/confirmOffset (see
 * ha_confirm.h). The reader accepts only what the writer writes, so a torn
 * or overwritten file is refused instead of read as some other offset. */
#include "ha_confirm.h"

#include <stdio.h>
#include <string.h>

size_t ha_confirm_format(char *out, int64_t confirm)
{
    size_t n = rmq_fmt_i64(out, confirm);

    out[n++] = '\n';
    out[n] = '\0';
    return n;
}

rmq_err_t ha_confirm_parse(const char *data, size_t len, int64_t *confirm, char *why, size_t whylen)
{
    char digits[HA_CONFIRM_TEXT_MAX];
    size_t n = len ? len - 1 : 0;

    if (len == 0 || data[n] != '\n') {
        snprintf(why, whylen, "%s", len ? "does not end with a newline" : "is empty");
        return RMQ_ECORRUPT;
    }
    if (n == 0 || n > RMQ_FMT_I64_LEN - 2) {
        snprintf(why, whylen, "holds %zu digits, not 1 to %d", n, RMQ_FMT_I64_LEN - 2);
        return RMQ_ECORRUPT;
    }
    for (size_t i = 0; i < n; i++)
        if (data[i] < '0' || data[i] > '9') {
            snprintf(why, whylen, "byte %zu is not a decimal digit", i);
            return RMQ_ECORRUPT;
        }
    if (n > 1 && data[0] == '0') {
        snprintf(why, whylen, "has a leading zero");
        return RMQ_ECORRUPT;
    }
    memcpy(digits, data, n);
    digits[n] = '\0';
    if (rmq_parse_i64(digits, confirm) != 0) {
        snprintf(why, whylen, "%s is beyond a 64-bit offset", digits);
        return RMQ_ECORRUPT;
    }
    return RMQ_OK;
}
