/* rmq_sql92.h: RocketMQ's SQL92 message filter (its filter module's
 * SelectorParser grammar of 4.9.7 and the expression classes' semantics),
 * compiled once per subscription and evaluated over a message's properties.
 *
 * Grammar: OR < AND < = <> IS [NOT] NULL < > >= < <= [NOT] BETWEEN x AND y,
 * [NOT] IN ('s', ...) < unary + - NOT (so NOT binds tighter than a
 * comparison: "NOT a = 1" is "(NOT a) = 1", as in RocketMQ); literals
 * 'str' ('' escapes a quote), 12 / 12L, 1.5 / .5 / 5. / 1E3, TRUE, FALSE,
 * NULL; names [A-Za-z_$][A-Za-z0-9_$]*; keywords in any case; -- and
 * block comments. Like RocketMQ, the parse stops after the first complete
 * expression: what follows its next token is not read.
 *
 * Semantics: property values are strings; a comparison converts a string
 * to the other side's type (Integer, Long, Double, Boolean) and two strings
 * to numbers for > >= < <=; a missing property makes a comparison unknown
 * (NULL), AND/OR are three-valued, and a message matches only when the whole
 * expression is TRUE. A value that cannot be converted ('abc' = 3) makes
 * the whole evaluation fail, so the message does not match (RocketMQ's
 * exception). */
#ifndef RMQ_SQL92_H
#define RMQ_SQL92_H

#include <stddef.h>

#include "rmq_err.h"

/* Bounds of one expression: nesting of parentheses and prefix operators,
 * and nodes of the compiled form (so evaluation depth too). */
#define RMQ_SQL92_MAX_DEPTH 64
#define RMQ_SQL92_MAX_NODES 1024

/* A subscription's expressionType (RocketMQ's ExpressionType): NULL, ""
 * and "TAG" are TAG, "SQL92" is SQL92, anything else is unknown. */
typedef enum rmq_expr_type {
    RMQ_EXPR_TAG = 0,
    RMQ_EXPR_SQL92,
    RMQ_EXPR_UNKNOWN,
} rmq_expr_type_t;

rmq_expr_type_t rmq_expr_type_of(const char *name);

typedef struct rmq_sql92 rmq_sql92_t;

/* Compiles expr into *out. RMQ_EINVAL with a message naming the line and
 * column in why (RocketMQ's parse errors: syntax, a constant that cannot be
 * compared, an illegal BETWEEN, a number out of range, too deep or too
 * large); RMQ_ENOMEM. */
rmq_err_t rmq_sql92_compile(const char *expr, rmq_sql92_t **out, char *why, size_t whylen);
void rmq_sql92_free(rmq_sql92_t *q);

/* A message property's value (NUL-terminated name), NULL when the message
 * has none; *vlen set. */
typedef const char *(*rmq_sql92_get_fn)(void *arg, const char *name, size_t *vlen);

/* 1 when the message whose properties get reads matches q. */
int rmq_sql92_match(const rmq_sql92_t *q, rmq_sql92_get_fn get, void *arg);

/* rmq_sql92_get_fn over a properties string (rmq_message.h's format);
 * arg is an rmq_sql92_props_t. */
typedef struct rmq_sql92_props {
    const char *props;
    size_t len;
} rmq_sql92_props_t;
const char *rmq_sql92_props_get(void *arg, const char *name, size_t *vlen);

#endif
