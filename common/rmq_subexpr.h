/* rmq_subexpr.h: the one subscription-expression rule, for the broker's
 * tag filter and the client's re-check. RocketMQ's FilterAPI: an empty
 * expression or "*" means every message; otherwise the expression is split
 * at "||" and each piece trimmed of white space and control characters
 * (bytes <= 0x20, like Java's String.trim), empty pieces skipped; a "*"
 * inside a list is a literal tag. An expression that is only white space
 * around "*" also means every message; one that names no tag at all
 * ("||") is refused. */
#ifndef RMQ_SUBEXPR_H
#define RMQ_SUBEXPR_H

#include <stddef.h>

#include "rmq_err.h"

#define RMQ_SUB_ALL "*"

/* Called for each tag of an expression, in order (tag[0..len), not
 * NUL-terminated). A non-RMQ_OK return stops the parse and is returned. */
typedef rmq_err_t (*rmq_subexpr_fn)(const char *tag, size_t len, void *arg);

/* Parses expr (NULL: everything). RMQ_OK with *all = 1 when it means every
 * message (fn not called), or with *all = 0 after fn ran for each tag;
 * RMQ_EINVAL when it names no tag; or fn's error. */
rmq_err_t rmq_subexpr_parse(const char *expr, int *all, rmq_subexpr_fn fn, void *arg);

#endif
