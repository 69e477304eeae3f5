/* rmq_fmt.h: integer-to-text helpers for hot paths, where vfprintf's
 * format parsing costs more than the digits. Any thread. */
#ifndef RMQ_FMT_H
#define RMQ_FMT_H

#include <stddef.h>
#include <stdint.h>

#define RMQ_FMT_I64_LEN 21          /* "-9223372036854775808" and its NUL */

/* v in decimal (as "%" PRId64 prints it) into out[RMQ_FMT_I64_LEN],
 * NUL-terminated; returns the digits' length (the NUL not counted). */
size_t rmq_fmt_i64(char *out, int64_t v);

#endif
