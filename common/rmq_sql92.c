/* rmq_sql92.c: the SQL92 filter's lexer, parser, compiled form and
 * evaluator (see rmq_sql92.h). */
#include "rmq_sql92.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "rmq_message.h"

/* ---- values: Java's Boolean, Integer, Long, Double, String and null ---- */

typedef enum val_kind { V_NULL, V_BOOL, V_INT, V_LONG, V_DOUBLE, V_STR } val_kind_t;

typedef struct val {
    val_kind_t k;
    int b;
    int64_t i;                       /* V_INT (int32 range) and V_LONG */
    double d;
    const char *s;                   /* V_STR */
    size_t n;
} val_t;

/* ---- the compiled form ---- */

typedef enum op {
    OP_CONST, OP_PROP, OP_NEG, OP_NOT, OP_CAST, OP_AND, OP_OR,
    OP_EQ, OP_GT, OP_GE, OP_LT, OP_LE, OP_IN, OP_NOT_IN,
} op_t;

typedef struct node {
    op_t op;
    int a, b;                        /* operands (node indexes) */
    int is_bool;                     /* RocketMQ's BooleanExpression */
    val_t v;                         /* OP_CONST's value; OP_PROP's name in v.s */
    size_t first, count;             /* OP_IN's strings in q->list */
} node_t;

typedef struct str_ref {
    const char *s;
    size_t n;
} str_ref_t;

struct rmq_sql92 {
    node_t *nodes;
    size_t n_nodes;
    char *arena;                     /* names and unescaped strings, NUL-terminated */
    size_t arena_used;
    str_ref_t *list;                 /* IN lists */
    size_t n_list;
    int root;
};

rmq_expr_type_t rmq_expr_type_of(const char *name)
{
    if (!name || !name[0] || strcmp(name, "TAG") == 0)
        return RMQ_EXPR_TAG;
    return strcmp(name, "SQL92") == 0 ? RMQ_EXPR_SQL92 : RMQ_EXPR_UNKNOWN;
}

/* ---- lexer ---- */

typedef enum tok_kind {
    T_EOF, T_ID, T_STR, T_DEC, T_FLOAT, T_NOT, T_AND, T_OR, T_BETWEEN, T_IN, T_TRUE, T_FALSE, T_NULL,
    T_IS, T_LP, T_RP, T_COMMA, T_EQ, T_NE, T_GT, T_GE, T_LT, T_LE, T_PLUS, T_MINUS, T_BAD,
} tok_kind_t;

typedef struct tok {
    tok_kind_t k;
    size_t pos, len;
} tok_t;

typedef struct parser {
    const char *s;
    size_t len;
    size_t lex_pos;                  /* where the next token is lexed */
    tok_t cur, next;
    int have_next;
    int depth;
    rmq_sql92_t *q;
    char *why;
    size_t whylen;
    int failed;
} parser_t;

static int is_id_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '$';
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* Skips white space and comments (a -- comment needs its line end, as in
 * RocketMQ's grammar); returns the position of the next token. */
static size_t lex_skip(const char *s, size_t len, size_t p)
{
    for (;;) {
        while (p < len && (s[p] == ' ' || s[p] == '\t' || s[p] == '\n' || s[p] == '\r' || s[p] == '\f'))
            p++;
        if (p + 1 < len && s[p] == '-' && s[p + 1] == '-') {
            size_t e = p + 2;
            while (e < len && s[e] != '\n' && s[e] != '\r')
                e++;
            if (e == len)
                return p;
            p = e + 1;
        } else if (p + 1 < len && s[p] == '/' && s[p + 1] == '*') {
            const char *end = NULL;
            for (size_t e = p + 2; e + 1 < len && !end; e++)
                if (s[e] == '*' && s[e + 1] == '/')
                    end = s + e;
            if (!end)
                return p;
            p = (size_t)(end - s) + 2;
        } else {
            return p;
        }
    }
}

/* Length of an exponent (E, a sign, digits) at s[p], 0 if none. */
static size_t lex_exponent(const char *s, size_t len, size_t p)
{
    size_t e = p;
    if (e >= len || (s[e] != 'e' && s[e] != 'E'))
        return 0;
    e++;
    if (e < len && (s[e] == '+' || s[e] == '-'))
        e++;
    if (e >= len || !is_digit(s[e]))
        return 0;
    while (e < len && is_digit(s[e]))
        e++;
    return e - p;
}

/* A number at s[p] (a digit, or '.' before a digit): the longest of
 * DECIMAL_LITERAL and FLOATING_POINT_LITERAL. */
static tok_t lex_number(const char *s, size_t len, size_t p)
{
    size_t e = p;
    while (e < len && is_digit(s[e]))
        e++;
    if (e < len && s[e] == '.') {
        e++;
        while (e < len && is_digit(s[e]))
            e++;
        return (tok_t){T_FLOAT, p, e - p + lex_exponent(s, len, e)};
    }
    size_t ex = e > p ? lex_exponent(s, len, e) : 0;
    if (ex)
        return (tok_t){T_FLOAT, p, e - p + ex};
    if (s[p] == '0')
        return (tok_t){T_DEC, p, 1};
    if (e < len && (s[e] == 'l' || s[e] == 'L'))
        e++;
    return (tok_t){T_DEC, p, e - p};
}

static tok_kind_t keyword(const char *s, size_t n)
{
    static const struct {
        const char *w;
        tok_kind_t k;
    } kw[] = {{"NOT", T_NOT}, {"AND", T_AND}, {"OR", T_OR}, {"BETWEEN", T_BETWEEN}, {"IN", T_IN},
              {"TRUE", T_TRUE}, {"FALSE", T_FALSE}, {"NULL", T_NULL}, {"IS", T_IS}};
    for (size_t i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
        if (strlen(kw[i].w) == n && strncasecmp(kw[i].w, s, n) == 0)
            return kw[i].k;
    return T_ID;
}

/* An operator or punctuation at s[p]; T_BAD if none. */
static tok_t lex_symbol(const char *s, size_t len, size_t p)
{
    char c = s[p], d = p + 1 < len ? s[p + 1] : 0;
    if (c == '<' && d == '>')
        return (tok_t){T_NE, p, 2};
    if ((c == '<' || c == '>') && d == '=')
        return (tok_t){c == '<' ? T_LE : T_GE, p, 2};
    switch (c) {
    case '<': return (tok_t){T_LT, p, 1};
    case '>': return (tok_t){T_GT, p, 1};
    case '=': return (tok_t){T_EQ, p, 1};
    case '(': return (tok_t){T_LP, p, 1};
    case ')': return (tok_t){T_RP, p, 1};
    case ',': return (tok_t){T_COMMA, p, 1};
    case '+': return (tok_t){T_PLUS, p, 1};
    case '-': return (tok_t){T_MINUS, p, 1};
    default: return (tok_t){T_BAD, p, 1};
    }
}

/* The token at s[p] (after white space and comments). */
static tok_t lex_at(const char *s, size_t len, size_t p)
{
    p = lex_skip(s, len, p);
    if (p >= len)
        return (tok_t){T_EOF, p, 0};
    if (s[p] == '\'') {
        size_t e = p + 1;
        for (;;) {
            if (e >= len)
                return (tok_t){T_BAD, p, 1};
            if (s[e] == '\'' && !(e + 1 < len && s[e + 1] == '\''))
                return (tok_t){T_STR, p, e + 1 - p};
            e += s[e] == '\'' ? 2 : 1;
        }
    }
    if (is_digit(s[p]) || (s[p] == '.' && p + 1 < len && is_digit(s[p + 1])))
        return lex_number(s, len, p);
    if (is_id_start(s[p])) {
        size_t e = p + 1;
        while (e < len && (is_id_start(s[e]) || is_digit(s[e])))
            e++;
        return (tok_t){keyword(s + p, e - p), p, e - p};
    }
    return lex_symbol(s, len, p);
}

/* ---- errors ---- */

/* Records the first error, at source position pos. Returns -1. */
static int fail_at(parser_t *ps, size_t pos, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int fail_at(parser_t *ps, size_t pos, const char *fmt, ...)
{
    if (ps->failed)
        return -1;
    ps->failed = 1;
    int line = 1, col = 1;
    for (size_t i = 0; i < pos && i < ps->len; i++) {
        if (ps->s[i] == '\n') {
            line++;
            col = 1;
        } else {
            col++;
        }
    }
    int n = snprintf(ps->why, ps->whylen, "SQL92 expression error at line %d, column %d: ", line, col);
    if (n >= 0 && (size_t)n < ps->whylen) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(ps->why + n, ps->whylen - (size_t)n, fmt, ap);
        va_end(ap);
    }
    return -1;
}

/* Fails at token t: "unexpected <t>, expected <what>". */
static int fail_tok(parser_t *ps, tok_t t, const char *what)
{
    if (t.k == T_EOF)
        return fail_at(ps, t.pos, "unexpected end of expression, expected %s", what);
    if (t.k == T_BAD && ps->s[t.pos] == '\'')
        return fail_at(ps, t.pos, "string literal not terminated (a quote inside one is written '')");
    if (t.k == T_BAD)
        return fail_at(ps, t.pos, "unexpected character '%c' (0x%02x)", ps->s[t.pos] ? ps->s[t.pos] : '?',
                       (unsigned char)ps->s[t.pos]);
    return fail_at(ps, t.pos, "unexpected '%.*s', expected %s", (int)(t.len > 40 ? 40 : t.len), ps->s + t.pos,
                   what);
}

/* ---- token stream: the current token and one of look-ahead ---- */

static tok_t lex_next(parser_t *ps)
{
    tok_t t = lex_at(ps->s, ps->len, ps->lex_pos);
    ps->lex_pos = t.pos + t.len;
    return t;
}

static tok_kind_t peek2(parser_t *ps)
{
    if (!ps->have_next) {
        ps->next = lex_next(ps);
        ps->have_next = 1;
    }
    return ps->next.k;
}

/* Consumes the current token. */
static void advance(parser_t *ps)
{
    ps->cur = ps->have_next ? ps->next : lex_next(ps);
    ps->have_next = 0;
}

/* Consumes a token of kind k, or fails expecting what. */
static int expect(parser_t *ps, tok_kind_t k, const char *what)
{
    if (ps->cur.k != k)
        return fail_tok(ps, ps->cur, what);
    advance(ps);
    return 0;
}

/* ---- building nodes ---- */

static int node_add(parser_t *ps, size_t pos, node_t n)
{
    rmq_sql92_t *q = ps->q;
    if (q->n_nodes == RMQ_SQL92_MAX_NODES)
        return fail_at(ps, pos, "expression too large (more than %d nodes)", RMQ_SQL92_MAX_NODES);
    q->nodes[q->n_nodes] = n;
    return (int)q->n_nodes++;
}

static const node_t *nd(const parser_t *ps, int i)
{
    return &ps->q->nodes[i];
}

/* Copies s[0..n) into the arena (NUL-terminated). */
static const char *arena_put(rmq_sql92_t *q, const char *s, size_t n)
{
    char *d = q->arena + q->arena_used;
    memcpy(d, s, n);
    d[n] = 0;
    q->arena_used += n + 1;
    return d;
}

/* The text of a string literal token, '' unescaped, into the arena. */
static val_t str_literal(parser_t *ps, tok_t t)
{
    rmq_sql92_t *q = ps->q;
    char *d = q->arena + q->arena_used;
    size_t n = 0;
    for (size_t i = t.pos + 1; i < t.pos + t.len - 1; i++) {
        d[n++] = ps->s[i];
        if (ps->s[i] == '\'')
            i++;
    }
    d[n] = 0;
    q->arena_used += n + 1;
    return (val_t){.k = V_STR, .s = d, .n = n};
}

static int is_const(const node_t *n)
{
    return n->op == OP_CONST;
}

static int is_number(val_kind_t k)
{
    return k == V_INT || k == V_LONG || k == V_DOUBLE;
}

/* RocketMQ's asBooleanExpression: a boolean node, or a property cast to one. */
static int as_bool(parser_t *ps, int i, size_t pos)
{
    if (i < 0)
        return -1;
    if (nd(ps, i)->is_bool)
        return i;
    if (nd(ps, i)->op == OP_PROP)
        return node_add(ps, pos, (node_t){.op = OP_CAST, .a = i, .is_bool = 1});
    return fail_at(ps, pos, "expression will not result in a boolean value");
}

static int bool_node(parser_t *ps, size_t pos, op_t op, int a, int b)
{
    if (a < 0 || b < 0)
        return -1;
    return node_add(ps, pos, (node_t){.op = op, .a = a, .b = b, .is_bool = 1});
}

/* checkLessThanOperand: a constant must be a number, no boolean operand. */
static int check_order_operand(parser_t *ps, int i, size_t pos)
{
    const node_t *n = nd(ps, i);
    if ((is_const(n) && !is_number(n->v.k)) || (!is_const(n) && n->is_bool))
        return fail_at(ps, pos, "this operand cannot be compared with > >= < <= or BETWEEN (a number or a property is)");
    return 0;
}

static int order_node(parser_t *ps, size_t pos, op_t op, int a, int b)
{
    if (a < 0 || b < 0 || check_order_operand(ps, a, pos) != 0 || check_order_operand(ps, b, pos) != 0)
        return -1;
    return bool_node(ps, pos, op, a, b);
}

/* createEqual: no NULL constant operand; TRUE/FALSE = non-boolean constant refused. */
static int equal_node(parser_t *ps, size_t pos, int a, int b)
{
    if (a < 0 || b < 0)
        return -1;
    const node_t *l = nd(ps, a), *r = nd(ps, b);
    if ((is_const(l) && l->v.k == V_NULL) || (is_const(r) && r->v.k == V_NULL))
        return fail_at(ps, pos, "NULL cannot be compared with = or <> (use IS NULL)");
    if (is_const(l) && is_const(r) && l->is_bool && !r->is_bool)
        return fail_at(ps, pos, "a boolean constant cannot be compared with a non-boolean constant");
    return bool_node(ps, pos, OP_EQ, a, b);
}

static int not_node(parser_t *ps, size_t pos, int a)
{
    if (a < 0)
        return -1;
    return node_add(ps, pos, (node_t){.op = OP_NOT, .a = a, .is_bool = 1});
}

/* ---- parser: one function per rule of SelectorParser.jj ---- */

static int or_expr(parser_t *ps);
static int unary_expr(parser_t *ps);
static int val_compare(val_t l, val_t r, int *cmp);

static int literal(parser_t *ps)
{
    tok_t t = ps->cur;
    node_t n = {.op = OP_CONST};
    char num[64];
    switch (t.k) {
    case T_STR:
        n.v = str_literal(ps, t);
        break;
    case T_TRUE:
    case T_FALSE:
        n.v = (val_t){.k = V_BOOL, .b = t.k == T_TRUE};
        n.is_bool = 1;
        break;
    case T_NULL:
        n.is_bool = 1;
        break;
    case T_DEC: {
        size_t dl = t.len - (ps->s[t.pos + t.len - 1] == 'l' || ps->s[t.pos + t.len - 1] == 'L');
        if (dl >= sizeof(num))
            return fail_at(ps, t.pos, "number %.40s... out of range", ps->s + t.pos);
        memcpy(num, ps->s + t.pos, dl);
        num[dl] = 0;
        errno = 0;
        long long v = strtoll(num, NULL, 10);
        if (errno == ERANGE)
            return fail_at(ps, t.pos, "number %s is out of range (a Long)", num);
        n.v = (val_t){.k = v <= INT32_MAX ? V_INT : V_LONG, .i = v};
        break;
    }
    case T_FLOAT: {
        char *buf = malloc(t.len + 1);
        if (!buf)
            return fail_at(ps, t.pos, "out of memory");
        memcpy(buf, ps->s + t.pos, t.len);
        buf[t.len] = 0;
        double d = strtod(buf, NULL);
        free(buf);
        if (isinf(d) || d > DBL_MAX)
            return fail_at(ps, t.pos, "%.40s is greater than the largest Double", ps->s + t.pos);
        if (d < 4.9e-324)
            return fail_at(ps, t.pos, "%.40s is less than the smallest positive Double (4.9E-324)", ps->s + t.pos);
        n.v = (val_t){.k = V_DOUBLE, .d = d};
        break;
    }
    default:
        return fail_tok(ps, t, "a literal, a property name or '('");
    }
    advance(ps);
    return node_add(ps, t.pos, n);
}

static int primary_expr(parser_t *ps)
{
    tok_t t = ps->cur;
    if (t.k == T_ID) {
        advance(ps);
        const char *name = arena_put(ps->q, ps->s + t.pos, t.len);
        return node_add(ps, t.pos, (node_t){.op = OP_PROP, .v = {.k = V_STR, .s = name, .n = t.len}});
    }
    if (t.k != T_LP)
        return literal(ps);
    advance(ps);
    int e = or_expr(ps);
    if (e < 0 || expect(ps, T_RP, "')'") != 0)
        return -1;
    return e;
}

static int unary_expr(parser_t *ps)
{
    tok_t t = ps->cur;
    if (t.k != T_PLUS && t.k != T_MINUS && t.k != T_NOT && t.k != T_LP)
        return primary_expr(ps);
    if (++ps->depth > RMQ_SQL92_MAX_DEPTH)
        return fail_at(ps, t.pos, "expression nested too deeply (more than %d levels)", RMQ_SQL92_MAX_DEPTH);
    int e;
    if (t.k == T_LP) {
        e = primary_expr(ps);
    } else {
        advance(ps);
        e = unary_expr(ps);
        if (t.k == T_MINUS && e >= 0)
            e = node_add(ps, t.pos, (node_t){.op = OP_NEG, .a = e});
        else if (t.k == T_NOT)
            e = not_node(ps, t.pos, as_bool(ps, e, t.pos));
    }
    ps->depth--;
    return e;
}

/* IN ('a', 'b', ...) after IN / NOT IN: the strings into q->list. */
static int in_list(parser_t *ps, int left, int negated, size_t pos)
{
    rmq_sql92_t *q = ps->q;
    if (left < 0)
        return -1;
    if (nd(ps, left)->op != OP_PROP)
        return fail_at(ps, pos, "IN needs a property on its left");
    if (expect(ps, T_LP, "'('") != 0)
        return -1;
    size_t first = q->n_list;
    for (;;) {
        if (ps->cur.k != T_STR)
            return fail_tok(ps, ps->cur, "a string literal");
        val_t v = str_literal(ps, ps->cur);
        q->list[q->n_list++] = (str_ref_t){v.s, v.n};
        advance(ps);
        if (ps->cur.k != T_COMMA)
            break;
        advance(ps);
    }
    if (expect(ps, T_RP, "',' or ')'") != 0)
        return -1;
    return node_add(ps, pos, (node_t){.op = negated ? OP_NOT_IN : OP_IN, .a = left, .is_bool = 1,
                                      .first = first, .count = q->n_list - first});
}

/* createBetween's check of two constant bounds: not NULL, low <= high. */
static int between_bounds(parser_t *ps, int lo, int hi, size_t pos)
{
    const node_t *l = nd(ps, lo), *h = nd(ps, hi);
    if (!is_const(l) || !is_const(h))
        return 0;
    if (l->v.k == V_NULL || h->v.k == V_NULL)
        return fail_at(ps, pos, "illegal values of BETWEEN: they cannot be NULL");
    int cmp;
    if (val_compare(h->v, l->v, &cmp) != 0)
        return fail_at(ps, pos, "illegal values of BETWEEN: they cannot be compared");
    if (cmp < 0)
        return fail_at(ps, pos, "illegal values of BETWEEN: the low value must be less than or equal to the high one");
    return 0;
}

/* [NOT] BETWEEN lo AND hi, after BETWEEN: lo <= x AND x <= hi, or
 * x < lo OR x > hi. */
static int between(parser_t *ps, int left, int negated, size_t pos)
{
    int lo = unary_expr(ps);
    if (lo < 0 || expect(ps, T_AND, "AND") != 0)
        return -1;
    int hi = unary_expr(ps);
    if (left < 0 || hi < 0)
        return -1;
    if (negated)
        return bool_node(ps, pos, OP_OR, order_node(ps, pos, OP_LT, left, lo), order_node(ps, pos, OP_GT, left, hi));
    if (between_bounds(ps, lo, hi, pos) != 0)
        return -1;
    return bool_node(ps, pos, OP_AND, order_node(ps, pos, OP_GE, left, lo), order_node(ps, pos, OP_LE, left, hi));
}

static int comparison_expr(parser_t *ps)
{
    static const struct {
        tok_kind_t t;
        op_t op;
    } order[] = {{T_GT, OP_GT}, {T_GE, OP_GE}, {T_LT, OP_LT}, {T_LE, OP_LE}};
    int left = unary_expr(ps);
    while (left >= 0) {
        tok_t t = ps->cur;
        size_t i;
        for (i = 0; i < 4 && order[i].t != t.k; i++)
            ;
        if (i < 4) {
            advance(ps);
            left = order_node(ps, t.pos, order[i].op, left, unary_expr(ps));
        } else if (t.k == T_BETWEEN) {
            advance(ps);
            left = between(ps, left, 0, t.pos);
        } else if (t.k == T_IN) {
            advance(ps);
            left = in_list(ps, left, 0, t.pos);
        } else if (t.k == T_NOT && (peek2(ps) == T_BETWEEN || peek2(ps) == T_IN)) {
            int is_in = ps->next.k == T_IN;
            advance(ps);
            advance(ps);
            left = is_in ? in_list(ps, left, 1, t.pos) : between(ps, left, 1, t.pos);
        } else {
            break;
        }
    }
    return left;
}

/* IS NULL / IS NOT NULL after IS: doCreateEqual(x, NULL), negated. */
static int is_null(parser_t *ps, int left, size_t pos)
{
    int negated = ps->cur.k == T_NOT;
    if (negated)
        advance(ps);
    if (expect(ps, T_NULL, negated ? "NULL" : "NULL or NOT NULL") != 0)
        return -1;
    int null = node_add(ps, pos, (node_t){.op = OP_CONST, .is_bool = 1});
    int eq = bool_node(ps, pos, OP_EQ, left, null);
    return negated ? not_node(ps, pos, eq) : eq;
}

static int equality_expr(parser_t *ps)
{
    int left = comparison_expr(ps);
    while (left >= 0) {
        tok_t t = ps->cur;
        if (t.k == T_EQ || t.k == T_NE) {
            advance(ps);
            left = equal_node(ps, t.pos, left, comparison_expr(ps));
            if (t.k == T_NE)
                left = not_node(ps, t.pos, left);
        } else if (t.k == T_IS) {
            advance(ps);
            left = is_null(ps, left, t.pos);
        } else {
            break;
        }
    }
    return left;
}

static int and_expr(parser_t *ps)
{
    int left = equality_expr(ps);
    while (left >= 0 && ps->cur.k == T_AND) {
        tok_t t = ps->cur;
        advance(ps);
        left = as_bool(ps, left, t.pos);
        left = bool_node(ps, t.pos, OP_AND, left, as_bool(ps, equality_expr(ps), t.pos));
    }
    return left;
}

static int or_expr(parser_t *ps)
{
    int left = and_expr(ps);
    while (left >= 0 && ps->cur.k == T_OR) {
        tok_t t = ps->cur;
        advance(ps);
        left = as_bool(ps, left, t.pos);
        left = bool_node(ps, t.pos, OP_OR, left, as_bool(ps, and_expr(ps), t.pos));
    }
    return left;
}

/* A lexical error anywhere in the tokens read is reported as such. */
static int parse(parser_t *ps)
{
    advance(ps);
    int root = or_expr(ps);
    if (root >= 0 && (ps->cur.k == T_BAD || (ps->have_next && ps->next.k == T_BAD)))
        return fail_tok(ps, ps->cur.k == T_BAD ? ps->cur : ps->next, "");
    return as_bool(ps, root, 0);
}

rmq_err_t rmq_sql92_compile(const char *expr, rmq_sql92_t **out, char *why, size_t whylen)
{
    size_t len = expr ? strlen(expr) : 0;
    rmq_sql92_t *q = calloc(1, sizeof(*q));
    parser_t ps = {.s = expr ? expr : "", .len = len, .q = q, .why = why, .whylen = whylen};
    *out = NULL;
    if (q) {
        q->nodes = malloc(sizeof(node_t) * RMQ_SQL92_MAX_NODES);
        q->arena = malloc(2 * len + 2);
        q->list = malloc(sizeof(str_ref_t) * (len / 2 + 1));
    }
    if (!q || !q->nodes || !q->arena || !q->list) {
        rmq_sql92_free(q);
        return RMQ_ENOMEM;
    }
    q->root = parse(&ps);
    if (q->root < 0) {
        rmq_sql92_free(q);
        return RMQ_EINVAL;
    }
    *out = q;
    return RMQ_OK;
}

void rmq_sql92_free(rmq_sql92_t *q)
{
    if (!q)
        return;
    free(q->nodes);
    free(q->arena);
    free(q->list);
    free(q);
}

/* ---- conversions as Java's valueOf methods do them ---- */

/* Integer.valueOf / Long.valueOf: a sign and decimal digits, in range. */
static int parse_long(const char *s, size_t n, int int32, int64_t *out)
{
    size_t i = n > 0 && (s[0] == '+' || s[0] == '-');
    if (i == n)
        return -1;
    uint64_t v = 0, lim = int32 ? (uint64_t)INT32_MAX + (s[0] == '-') : (uint64_t)INT64_MAX + (s[0] == '-');
    for (; i < n; i++) {
        if (!is_digit(s[i]))
            return -1;
        unsigned dg = (unsigned)(s[i] - '0');
        if (v > (lim - dg) / 10)
            return -1;
        v = v * 10 + dg;
    }
    *out = s[0] == '-' ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

/* Double.valueOf (decimal forms): trimmed, a sign, NaN, Infinity, or
 * digits with a point and an exponent, an optional f/F/d/D suffix. */
static int parse_double(const char *s, size_t n, double *out)
{
    while (n > 0 && (unsigned char)s[0] <= ' ')
        s++, n--;
    while (n > 0 && (unsigned char)s[n - 1] <= ' ')
        n--;
    size_t i = n > 0 && (s[0] == '+' || s[0] == '-');
    int neg = n > 0 && s[0] == '-';
    if (n - i == 3 && memcmp(s + i, "NaN", 3) == 0)
        return *out = NAN, 0;
    if (n - i == 8 && memcmp(s + i, "Infinity", 8) == 0)
        return *out = neg ? -INFINITY : INFINITY, 0;
    size_t body = i, digits = 0;
    while (i < n && is_digit(s[i]))
        i++, digits++;
    if (i < n && s[i] == '.')
        for (i++; i < n && is_digit(s[i]); i++)
            digits++;
    if (digits == 0)
        return -1;
    i += lex_exponent(s, n, i);
    size_t end = i;
    if (i < n && strchr("fFdD", s[i]))
        i++;
    if (i != n || end - body > 1000)
        return -1;
    char buf[1024];
    memcpy(buf, s, end);
    buf[end] = 0;
    *out = strtod(buf, NULL);
    return 0;
}

/* Boolean.valueOf: "true" in any case. */
static int parse_bool(const char *s, size_t n)
{
    return n == 4 && strncasecmp(s, "true", 4) == 0;
}

/* ---- comparison: ComparisonExpression.__compare, converting strings ---- */

static int cmp_double(double a, double b)
{
    if (isnan(a) || isnan(b))
        return isnan(a) ? (isnan(b) ? 0 : 1) : -1;
    if (a == b && a == 0)
        return signbit(a) == signbit(b) ? 0 : (signbit(a) ? -1 : 1);
    return a < b ? -1 : a > b;
}

static int cmp_same(val_t l, val_t r)
{
    switch (l.k) {
    case V_BOOL: return l.b - r.b;
    case V_INT:
    case V_LONG: return l.i < r.i ? -1 : l.i > r.i;
    case V_DOUBLE: return cmp_double(l.d, r.d);
    case V_STR: {
        int c = memcmp(l.s, r.s, l.n < r.n ? l.n : r.n);
        return c ? (c < 0 ? -1 : 1) : (l.n < r.n ? -1 : l.n > r.n);
    }
    default: return 0;
    }
}

/* Converts string s to the kind of other (Integer, Long, Double,
 * Boolean); -1 when it does not parse (RocketMQ's exception). */
static int convert_str(val_t s, val_t other, val_t *out)
{
    out->k = other.k;
    switch (other.k) {
    case V_INT:
    case V_LONG: return parse_long(s.s, s.n, other.k == V_INT, &out->i);
    case V_DOUBLE: return parse_double(s.s, s.n, &out->d);
    case V_BOOL: out->b = parse_bool(s.s, s.n); return 0;
    default: return -1;
    }
}

/* *cmp = l compared with r after RocketMQ's conversions (an unrelated pair
 * compares as -1); -1 returned when a conversion fails. */
static int val_compare(val_t l, val_t r, int *cmp)
{
    *cmp = -1;
    if (l.k == r.k || ((l.k == V_INT || l.k == V_LONG) && (r.k == V_INT || r.k == V_LONG))) {
        *cmp = cmp_same(l, r);
        return 0;
    }
    if (is_number(l.k) && is_number(r.k)) {
        *cmp = cmp_double(l.k == V_DOUBLE ? l.d : (double)l.i, r.k == V_DOUBLE ? r.d : (double)r.i);
        return 0;
    }
    if (l.k == V_BOOL)
        return r.k == V_STR ? -1 : 0;   /* Boolean vs String: RocketMQ's ClassCastException */
    if (is_number(l.k) && r.k == V_STR) {
        val_t c;
        if (convert_str(r, l, &c) != 0)
            return -1;
        return val_compare(l, c, cmp);
    }
    if (l.k == V_STR && r.k != V_NULL) {
        val_t c;
        if (convert_str(l, r, &c) != 0)
            return -1;
        return val_compare(c, r, cmp);
    }
    return 0;
}

/* ---- evaluation ---- */

typedef struct eval_ctx {
    const rmq_sql92_t *q;
    rmq_sql92_get_fn get;
    void *arg;
} eval_ctx_t;

static int eval(const eval_ctx_t *c, int i, val_t *out);

static val_t boolean(int b)
{
    return (val_t){.k = V_BOOL, .b = b != 0};
}

/* > >= < <=: unknown with a missing side, two strings as Doubles. */
static int eval_order(const eval_ctx_t *c, const node_t *n, val_t *out)
{
    val_t l, r;
    int cmp;
    *out = (val_t){.k = V_NULL};
    if (eval(c, n->a, &l) != 0)
        return -1;
    if (l.k == V_NULL)
        return 0;
    if (eval(c, n->b, &r) != 0)
        return -1;
    if (r.k == V_NULL)
        return 0;
    if (l.k == V_STR && r.k == V_STR) {
        double a, b;
        if (parse_double(l.s, l.n, &a) != 0 || parse_double(r.s, r.n, &b) != 0)
            return -1;
        l = (val_t){.k = V_DOUBLE, .d = a};
        r = (val_t){.k = V_DOUBLE, .d = b};
    }
    if (val_compare(l, r, &cmp) != 0)
        return -1;
    switch (n->op) {
    case OP_GT: *out = boolean(cmp > 0); break;
    case OP_GE: *out = boolean(cmp >= 0); break;
    case OP_LT: *out = boolean(cmp < 0); break;
    default: *out = boolean(cmp <= 0); break;
    }
    return 0;
}

/* =: unknown when only the left side is missing, FALSE when only the right. */
static int eval_equal(const eval_ctx_t *c, const node_t *n, val_t *out)
{
    val_t l, r;
    int cmp;
    if (eval(c, n->a, &l) != 0 || eval(c, n->b, &r) != 0)
        return -1;
    if ((l.k == V_NULL) != (r.k == V_NULL)) {
        *out = l.k == V_NULL ? (val_t){.k = V_NULL} : boolean(0);
        return 0;
    }
    if (l.k == V_NULL) {
        *out = boolean(1);
        return 0;
    }
    if (l.k == r.k) {
        *out = boolean(cmp_same(l, r) == 0);
        return 0;
    }
    if (val_compare(l, r, &cmp) != 0)
        return -1;
    *out = boolean(cmp == 0);
    return 0;
}

static int eval_in(const eval_ctx_t *c, const node_t *n, val_t *out)
{
    val_t v;
    if (eval(c, n->a, &v) != 0)
        return -1;
    *out = (val_t){.k = V_NULL};
    if (v.k != V_STR)
        return 0;
    int found = 0;
    for (size_t i = 0; i < n->count && !found; i++) {
        const str_ref_t *s = &c->q->list[n->first + i];
        found = s->n == v.n && memcmp(s->s, v.s, v.n) == 0;
    }
    *out = boolean(found != (n->op == OP_NOT_IN));
    return 0;
}

/* AND / OR, three-valued, the right side only when the left does not decide. */
static int eval_logic(const eval_ctx_t *c, const node_t *n, val_t *out)
{
    int decides = n->op == OP_OR;   /* the value that decides alone */
    val_t l, r;
    if (eval(c, n->a, &l) != 0)
        return -1;
    if (l.k == V_BOOL && l.b == decides)
        return *out = l, 0;
    if (eval(c, n->b, &r) != 0)
        return -1;
    if (r.k == V_BOOL && r.b == decides)
        return *out = r, 0;
    *out = l.k == V_NULL || r.k == V_NULL ? (val_t){.k = V_NULL} : boolean(!decides);
    return 0;
}

static int eval_unary(const eval_ctx_t *c, const node_t *n, val_t *out)
{
    val_t v;
    if (eval(c, n->a, &v) != 0)
        return -1;
    *out = (val_t){.k = V_NULL};
    if (v.k == V_NULL)
        return 0;
    if (n->op == OP_NOT)
        *out = boolean(!v.b);
    else if (n->op == OP_CAST)
        *out = boolean(v.k == V_BOOL && v.b);
    else if (v.k == V_INT || v.k == V_LONG)
        *out = (val_t){.k = v.k, .i = (int64_t)(0 - (uint64_t)v.i)};
    else if (v.k == V_DOUBLE)
        *out = (val_t){.k = V_DOUBLE, .d = -v.d};
    return 0;
}

/* Node i's value into *out; -1 when evaluation fails (no match). */
static int eval(const eval_ctx_t *c, int i, val_t *out)
{
    const node_t *n = &c->q->nodes[i];
    switch (n->op) {
    case OP_CONST:
        *out = n->v;
        return 0;
    case OP_PROP: {
        size_t vlen = 0;
        const char *v = c->get(c->arg, n->v.s, &vlen);
        *out = v ? (val_t){.k = V_STR, .s = v, .n = vlen} : (val_t){.k = V_NULL};
        return 0;
    }
    case OP_NEG:
    case OP_NOT:
    case OP_CAST: return eval_unary(c, n, out);
    case OP_AND:
    case OP_OR: return eval_logic(c, n, out);
    case OP_EQ: return eval_equal(c, n, out);
    case OP_IN:
    case OP_NOT_IN: return eval_in(c, n, out);
    default: return eval_order(c, n, out);
    }
}

int rmq_sql92_match(const rmq_sql92_t *q, rmq_sql92_get_fn get, void *arg)
{
    eval_ctx_t c = {q, get, arg};
    val_t v;
    return eval(&c, q->root, &v) == 0 && v.k == V_BOOL && v.b;
}

const char *rmq_sql92_props_get(void *arg, const char *name, size_t *vlen)
{
    const rmq_sql92_props_t *p = arg;
    return p->props ? rmq_props_get(p->props, p->len, name, vlen) : NULL;
}
