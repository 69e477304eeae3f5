/* rmq_json.c: the strict JSON reader (rmq_json.h): a recursive-descent
 * parser bounded in depth and value count, building a tree of rmq_json_t. */
#include "rmq_json.h"
#include "rmq_fmt.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct parser {
    const char *p;
    const char *start;
    const char *end;
    int depth;
    size_t nodes;
    char *err;
    size_t errlen;
} parser_t;

static rmq_json_t *parse_value(parser_t *ps);

/* Records the first error at the current offset; returns NULL. */
static void *fail(parser_t *ps, const char *what)
{
    if (ps->err != NULL && ps->err[0] == '\0')
        snprintf(ps->err, ps->errlen, "offset %zu: %s", (size_t)(ps->p - ps->start), what);
    return NULL;
}

/* fail() for functions returning a length: 0. */
static size_t fail_n(parser_t *ps, const char *what)
{
    fail(ps, what);
    return 0;
}

static void skip_ws(parser_t *ps)
{
    while (ps->p < ps->end &&
           (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
        ps->p++;
}

static rmq_json_t *node_new(parser_t *ps, rmq_json_type_t type)
{
    if (++ps->nodes > RMQ_JSON_NODES_MAX)
        return fail(ps, "too many values");
    rmq_json_t *v = calloc(1, sizeof(*v));
    if (v == NULL)
        return fail(ps, "out of memory");
    v->type = type;
    return v;
}

void rmq_json_free(rmq_json_t *v)
{
    if (v == NULL)
        return;
    for (size_t i = 0; i < v->n; i++) {
        rmq_json_free(v->items[i]);
        if (v->keys != NULL)
            free(v->keys[i]);
    }
    free(v->items);
    free(v->keys);
    free(v->str);
    free(v);
}

static int hex4(const char *s, unsigned *out)
{
    unsigned v = 0;

    for (int i = 0; i < 4; i++) {
        char c = s[i];
        v <<= 4;
        if (c >= '0' && c <= '9')
            v |= (unsigned)(c - '0');
        else if (c >= 'a' && c <= 'f')
            v |= (unsigned)(c - 'a' + 10);
        else if (c >= 'A' && c <= 'F')
            v |= (unsigned)(c - 'A' + 10);
        else
            return -1;
    }
    *out = v;
    return 0;
}

static size_t utf8_put(char *o, unsigned cp)
{
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xc0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3f));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xe0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    }
    o[0] = (char)(0xf0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3f));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3f));
    o[3] = (char)(0x80 | (cp & 0x3f));
    return 4;
}

int rmq_json_utf8_valid(const char *str, size_t n)
{
    const unsigned char *s = (const unsigned char *)str, *end = s + n;

    while (s < end) {
        unsigned c = *s++, need, cp;
        if (c < 0x80)
            continue;
        if (c >= 0xc2 && c <= 0xdf)
            need = 1, cp = c & 0x1f;
        else if (c >= 0xe0 && c <= 0xef)
            need = 2, cp = c & 0x0f;
        else if (c >= 0xf0 && c <= 0xf4)
            need = 3, cp = c & 0x07;
        else
            return 0;
        if ((size_t)(end - s) < need)
            return 0;
        for (unsigned i = 0; i < need; i++, s++) {
            if ((*s & 0xc0) != 0x80)
                return 0;
            cp = cp << 6 | (*s & 0x3f);
        }
        if ((need == 2 && (cp < 0x800 || (cp >= 0xd800 && cp <= 0xdfff))) ||
            (need == 3 && (cp < 0x10000 || cp > 0x10ffff)))
            return 0;
    }
    return 1;
}

/* Decodes a \u escape (ps->p after the 'u') into o; returns bytes written or 0. */
static size_t parse_uescape(parser_t *ps, char *o)
{
    unsigned cp, lo;

    if (ps->end - ps->p < 4 || hex4(ps->p, &cp) != 0)
        return fail_n(ps, "bad \\u escape");
    ps->p += 4;
    if (cp >= 0xdc00 && cp <= 0xdfff)
        return fail_n(ps, "lone low surrogate");
    if (cp >= 0xd800 && cp <= 0xdbff) {
        if (ps->end - ps->p < 6 || ps->p[0] != '\\' || ps->p[1] != 'u' ||
            hex4(ps->p + 2, &lo) != 0 || lo < 0xdc00 || lo > 0xdfff)
            return fail_n(ps, "high surrogate without its low half");
        ps->p += 6;
        cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
    }
    if (cp == 0)
        return fail_n(ps, "\\u0000 in a string");
    return utf8_put(o, cp);
}

/* Parses a string (ps->p at its opening quote) into a new C string. */
static char *parse_string(parser_t *ps, size_t *lenp)
{
    const char *q = ++ps->p;

    while (q < ps->end && *q != '"') /* escaped bytes are at most as long as their escape */
        q += (*q == '\\' && q + 1 < ps->end) ? 2 : 1;
    if (q >= ps->end)
        return fail(ps, "unterminated string");
    if (!rmq_json_utf8_valid(ps->p, (size_t)(q - ps->p)))
        return fail(ps, "invalid UTF-8 in a string");
    char *s = malloc((size_t)(q - ps->p) + 1), *o = s;
    if (s == NULL)
        return fail(ps, "out of memory");
    while (*ps->p != '"') {
        unsigned char c = (unsigned char)*ps->p++;
        if (c < 0x20)
            goto bad_control;
        if (c != '\\') {
            *o++ = (char)c;
            continue;
        }
        char e = *ps->p++;
        switch (e) {
        case '"': case '\\': case '/': *o++ = e; break;
        case 'b': *o++ = '\b'; break;
        case 'f': *o++ = '\f'; break;
        case 'n': *o++ = '\n'; break;
        case 'r': *o++ = '\r'; break;
        case 't': *o++ = '\t'; break;
        case 'u': {
            size_t n = parse_uescape(ps, o);
            if (n == 0)
                goto out_bad;
            o += n;
            break;
        }
        default:
            fail(ps, "bad escape");
            goto out_bad;
        }
    }
    ps->p++;
    *o = '\0';
    *lenp = (size_t)(o - s);
    return s;
bad_control:
    fail(ps, "control character in a string");
out_bad:
    free(s);
    return NULL;
}

static int is_digit(const parser_t *ps)
{
    return ps->p < ps->end && *ps->p >= '0' && *ps->p <= '9';
}

/* Parses a number by RFC 8259's grammar, keeping its text. */
static rmq_json_t *parse_number(parser_t *ps)
{
    const char *from = ps->p;

    if (ps->p < ps->end && *ps->p == '-')
        ps->p++;
    if (!is_digit(ps))
        return fail(ps, "bad number");
    if (*ps->p == '0')
        ps->p++;
    else
        while (is_digit(ps))
            ps->p++;
    if (ps->p < ps->end && *ps->p == '.') {
        ps->p++;
        if (!is_digit(ps))
            return fail(ps, "bad fraction");
        while (is_digit(ps))
            ps->p++;
    }
    if (ps->p < ps->end && (*ps->p == 'e' || *ps->p == 'E')) {
        ps->p++;
        if (ps->p < ps->end && (*ps->p == '+' || *ps->p == '-'))
            ps->p++;
        if (!is_digit(ps))
            return fail(ps, "bad exponent");
        while (is_digit(ps))
            ps->p++;
    }
    rmq_json_t *v = node_new(ps, RMQ_JSON_NUMBER);
    if (v == NULL)
        return NULL;
    v->len = (size_t)(ps->p - from);
    v->str = strndup(from, v->len);
    if (v->str == NULL) {
        rmq_json_free(v);
        return fail(ps, "out of memory");
    }
    return v;
}

/* Parses the literal word as a value of type (str kept for booleans). */
static rmq_json_t *parse_word(parser_t *ps, const char *word, rmq_json_type_t type)
{
    size_t n = strlen(word);

    if ((size_t)(ps->end - ps->p) < n || memcmp(ps->p, word, n) != 0)
        return fail(ps, "unexpected character");
    ps->p += n;
    rmq_json_t *v = node_new(ps, type);
    if (v == NULL || type != RMQ_JSON_BOOL)
        return v;
    v->len = n;
    if ((v->str = strdup(word)) == NULL) {
        rmq_json_free(v);
        return fail(ps, "out of memory");
    }
    return v;
}

/* Makes room for one more member of v, doubling its capacity. -1 on ENOMEM. */
static int grow(rmq_json_t *v)
{
    if (v->n < v->cap)
        return 0;
    size_t cap = v->cap ? 2 * v->cap : 4;
    rmq_json_t **items = realloc(v->items, cap * sizeof(*items));
    if (items == NULL)
        return -1;
    v->items = items;
    if (v->type == RMQ_JSON_OBJECT) {
        char **keys = realloc(v->keys, cap * sizeof(*keys));
        if (keys == NULL)
            return -1;
        v->keys = keys;
    }
    v->cap = cap;
    return 0;
}

/* Appends item (and key, for objects) to v; frees both on ENOMEM. */
static int add_member(parser_t *ps, rmq_json_t *v, char *key, rmq_json_t *item)
{
    if (grow(v) != 0) {
        free(key);
        rmq_json_free(item);
        fail(ps, "out of memory");
        return -1;
    }
    v->items[v->n] = item;
    if (v->keys != NULL)
        v->keys[v->n] = key;
    v->n++;
    return 0;
}

/* Parses an array or an object (ps->p at its opening bracket). */
static rmq_json_t *parse_container(parser_t *ps, rmq_json_type_t type)
{
    char close = type == RMQ_JSON_OBJECT ? '}' : ']';
    rmq_json_t *v;

    if (++ps->depth > RMQ_JSON_DEPTH_MAX)
        return fail(ps, "nested too deep");
    ps->p++;
    if ((v = node_new(ps, type)) == NULL)
        return NULL;
    skip_ws(ps);
    if (ps->p < ps->end && *ps->p == close)
        goto done;
    for (;;) {
        char *key = NULL;
        size_t klen;
        skip_ws(ps);
        if (type == RMQ_JSON_OBJECT) {
            if (ps->p >= ps->end || *ps->p != '"')
                goto bad_key;
            if ((key = parse_string(ps, &klen)) == NULL)
                goto err;
            skip_ws(ps);
            if (ps->p >= ps->end || *ps->p != ':') {
                free(key);
                fail(ps, "':' expected after a key");
                goto err;
            }
            ps->p++;
        }
        rmq_json_t *item = parse_value(ps);
        if (item == NULL) {
            free(key);
            goto err;
        }
        if (add_member(ps, v, key, item) != 0)
            goto err;
        skip_ws(ps);
        if (ps->p < ps->end && *ps->p == ',') {
            ps->p++;
            continue;
        }
        if (ps->p < ps->end && *ps->p == close)
            break;
        fail(ps, type == RMQ_JSON_OBJECT ? "',' or '}' expected" : "',' or ']' expected");
        goto err;
    }
done:
    ps->p++;
    ps->depth--;
    return v;
bad_key:
    fail(ps, "a quoted key expected");
err:
    rmq_json_free(v);
    return NULL;
}

static rmq_json_t *parse_value(parser_t *ps)
{
    skip_ws(ps);
    if (ps->p >= ps->end)
        return fail(ps, "value expected");
    switch (*ps->p) {
    case '{':
        return parse_container(ps, RMQ_JSON_OBJECT);
    case '[':
        return parse_container(ps, RMQ_JSON_ARRAY);
    case '"': {
        rmq_json_t *v = node_new(ps, RMQ_JSON_STRING);
        if (v != NULL && (v->str = parse_string(ps, &v->len)) == NULL) {
            rmq_json_free(v);
            return NULL;
        }
        return v;
    }
    case 't':
        return parse_word(ps, "true", RMQ_JSON_BOOL);
    case 'f':
        return parse_word(ps, "false", RMQ_JSON_BOOL);
    case 'n':
        return parse_word(ps, "null", RMQ_JSON_NULL);
    default:
        return parse_number(ps);
    }
}

rmq_json_t *rmq_json_parse(const char *text, size_t len, char *err, size_t errlen)
{
    parser_t ps = { text, text, text + len, 0, 0, err, errlen };

    if (err != NULL && errlen > 0)
        err[0] = '\0';
    rmq_json_t *v = parse_value(&ps);
    if (v == NULL)
        return NULL;
    skip_ws(&ps);
    if (ps.p != ps.end) {
        rmq_json_free(v);
        return fail(&ps, "data after the value");
    }
    return v;
}

const rmq_json_t *rmq_json_get(const rmq_json_t *obj, const char *key)
{
    if (obj == NULL || obj->type != RMQ_JSON_OBJECT)
        return NULL;
    for (size_t i = 0; i < obj->n; i++)
        if (strcmp(obj->keys[i], key) == 0)
            return obj->items[i];
    return NULL;
}

const char *rmq_json_scalar(const rmq_json_t *v)
{
    if (v == NULL || v->type == RMQ_JSON_NULL || v->type == RMQ_JSON_ARRAY ||
        v->type == RMQ_JSON_OBJECT)
        return NULL;
    return v->str;
}

int rmq_json_int(const rmq_json_t *v, int64_t min, int64_t max, int64_t *out)
{
    const char *s = v != NULL && (v->type == RMQ_JSON_NUMBER || v->type == RMQ_JSON_STRING)
                        ? v->str : NULL;
    int64_t n;

    if (s == NULL || rmq_parse_i64(s, &n) != 0 || n < min || n > max)
        return -1;
    *out = n;
    return 0;
}
