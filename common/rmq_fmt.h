/* rmq_fmt.h: integers to decimal text and back, and short keys joined from
 * pieces, for hot paths, where vfprintf's and strtoll's generality costs
 * more than the digits. Any thread. */
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

/* Text joined into buf[cap] piece by piece, as snprintf would print the
 * pieces in a row: a piece that does not fit with the NUL marks the join
 * overflowed, and nothing more is added. */
typedef struct rmq_join {
    char *buf;
    size_t cap;
    size_t len;
    int over;
} rmq_join_t;

void rmq_join_init(rmq_join_t *j, char *buf, size_t cap);
void rmq_join_str(rmq_join_t *j, const char *s);
void rmq_join_char(rmq_join_t *j, char c);
void rmq_join_i64(rmq_join_t *j, int64_t v);

/* The joined text's length, or 0 when it overflowed (buf then holds a
 * NUL-terminated prefix, when cap > 0). */
size_t rmq_join_end(const rmq_join_t *j);

#endif
