/* rmq_fmt.h: integers to decimal text and back for hot paths, where
 * vfprintf's and strtoll's generality costs more than the digits. Any
 * thread. */
#ifndef RMQ_FMT_H
#define RMQ_FMT_H

#include <stddef.h>
#include <stdint.h>

#define RMQ_FMT_I64_LEN 21          /* "-9223372036854775808" and its NUL */

/* v in decimal (as "%" PRId64 prints it) into out[RMQ_FMT_I64_LEN],
 * NUL-terminated; returns the digits' length (the NUL not counted). */
size_t rmq_fmt_i64(char *out, int64_t v);

/* The whole of s read as strtoll(s, &end, 10) reads it (leading white
 * space, an optional sign, digits, nothing after) into *out: 0, or -1 when
 * s holds no such integer or it is out of int64's range. */
int rmq_parse_i64(const char *s, int64_t *out);

#endif
