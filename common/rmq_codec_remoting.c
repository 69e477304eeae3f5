/* rmq_codec_remoting.c: RocketMQ's remoting protocol over the transport
 * (see rmq_codec_remoting.h): the probe, the frame and both header
 * decoders, the encoders, the handler table by request code, and the ACL
 * 1.0 check with the table of what each code needs. Loop thread. */
#include "rmq_codec_remoting.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "rmq_fmt.h"
#include "rmq_http.h"
#include "rmq_json.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define REMOTING_PREFIX 8          /* length word + type/header-length word */
#define REMOTING_CODE_MAX INT32_MAX /* a JSON header's code is Java's int (RocketMQ 5's pop codes are
                                      * 200050...); the binary header's is an i16 */
#define LANGUAGE_OTHER 7

/* The codec's state on one server. */
typedef struct remoting {
    rmq_server_t *srv;
    struct remoting_handler {
        int code;
        rmq_remoting_handler_fn fn;
        void *arg;
    } *handlers;                   /* by ascending code, nhandlers long */
    size_t nhandlers;
    rmq_acl_t *acl;                /* NULL: no signature check */
    rmq_acl_scope_t scope;         /* what the check decides */
    rmq_remoting_handler_fn on_response; /* answers to requests the server sent; NULL: dropped */
    void *on_response_arg;
} remoting_t;

static const char *const language_names[] = {
    "JAVA", "CPP", "DOTNET", "PYTHON", "DELPHI", "ERLANG", "RUBY",
    "OTHER", "HTTP", "GO", "PHP", "OMS", "RUST",
};
#define LANGUAGES (sizeof(language_names) / sizeof(language_names[0]))

const char *rmq_remoting_language_name(int code)
{
    return code >= 0 && (size_t)code < LANGUAGES ? language_names[code] : language_names[LANGUAGE_OTHER];
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint16_t be16(const uint8_t *p)
{
    return (uint16_t)(p[0] << 8 | p[1]);
}

/* ---- the probe ----------------------------------------------------------- */

/* A remoting frame: a length within max_frame holding its header length,
 * and serialize type 1 in byte 4, or type 0 with a non-empty header whose
 * first byte is '{'. The rmq probe says NO to both (it takes only byte 4 ==
 * 0, and then an empty header or one not opening with '{'), so the two can
 * never both claim the same bytes. A prefix no remoting frame may have is
 * NO at once: the default codec refuses it with its reason. */
static rmq_codec_probe_t remoting_probe(const uint8_t *data, size_t len, uint32_t max_frame)
{
    if (len < REMOTING_PREFIX)
        return RMQ_CODEC_MORE;
    uint32_t frame_len = be32(data), header_len = be32(data + 4) & 0xffffff;
    if (frame_len > max_frame || frame_len < 4 || header_len > frame_len - 4)
        return RMQ_CODEC_NO;
    if (data[4] == RMQ_REMOTING_ROCKETMQ)
        return RMQ_CODEC_YES;
    if (data[4] != RMQ_REMOTING_JSON || header_len == 0)
        return RMQ_CODEC_NO;
    if (len < REMOTING_PREFIX + 1)
        return RMQ_CODEC_MORE;
    return data[REMOTING_PREFIX] == '{' ? RMQ_CODEC_YES : RMQ_CODEC_NO;
}

/* ---- the request's arena and its key table -------------------------------- */

/* A decoded request's one allocation (req->arena): the table that finds a
 * key, the fields array, and the NUL-terminated copies of the remark and of
 * every key and value. */
typedef struct arena {
    size_t mask;                   /* table slots - 1: a power of two over 2 * cap */
    size_t cap;                    /* fields the array holds */
    char *text, *next, *end;       /* the string space, its free part */
    uint16_t *slot;                /* field index + 1 by key hash (keys but a..z); 0: empty */
    uint16_t letter[26];           /* field index + 1 of the key "a".."z"; 0: none */
} arena_t;

/* The letter slot of a one-letter key a..z (SEND_MESSAGE_V2's names), or -1. */
static int key_letter(const char *k)
{
    return k[0] >= 'a' && k[0] <= 'z' && k[1] == '\0' ? k[0] - 'a' : -1;
}

/* A key's slot before probing. */
static size_t key_hash(const char *k, size_t n)
{
    return n == 0 ? 0 : n * 131 + (unsigned char)k[0] * 31 + (unsigned char)k[n - 1] * 6;
}

/* strcmp(a, b) == 0, without a call for the one- and two-letter keys. */
static int key_eq(const char *a, const char *b)
{
    return a[0] == b[0] && (a[0] == '\0' || (a[1] == b[1] && (a[1] == '\0' || strcmp(a + 2, b + 2) == 0)));
}

/* Gives req an arena of cap fields and text bytes of strings; -1 on ENOMEM. */
static int arena_new(rmq_remoting_request_t *req, size_t cap, size_t text)
{
    size_t slots = 16;

    while (slots <= 2 * cap)
        slots *= 2;
    size_t table = (slots * sizeof(uint16_t) + 7) & ~(size_t)7;
    size_t head = (sizeof(arena_t) + 7) & ~(size_t)7;
    arena_t *a = malloc(head + table + cap * sizeof(rmq_remoting_field_t) + text);

    if (a == NULL)
        return -1;
    a->mask = slots - 1;
    a->cap = cap;
    a->slot = (uint16_t *)((char *)a + head);
    req->fields = (rmq_remoting_field_t *)((char *)a->slot + table);
    a->text = (char *)(req->fields + cap);
    a->end = a->text + text;
    req->arena = a;
    req->n_fields = 0;
    a->next = a->text;
    memset(a->slot, 0, slots * sizeof(uint16_t));
    memset(a->letter, 0, sizeof(a->letter));
    return 0;
}

/* Empties req's arena: no fields, no strings. */
static void arena_reset(rmq_remoting_request_t *req)
{
    arena_t *a = req->arena;

    req->n_fields = 0;
    req->remark = NULL;
    a->next = a->text;
    memset(a->slot, 0, (a->mask + 1) * sizeof(uint16_t));
    memset(a->letter, 0, sizeof(a->letter));
}

/* A copy of s[0..n) in the arena, or NULL when it has no room. */
static char *arena_str(arena_t *a, const char *s, size_t n)
{
    if ((size_t)(a->end - a->next) < n + 1)
        return NULL;
    char *c = a->next;
    memcpy(c, s, n);
    c[n] = '\0';
    a->next += n + 1;
    return c;
}

/* Appends key = value (strings in req's arena) to req and to the letter
 * index (keys a..z, which rmq_remoting_field looks up there only) or the
 * table (any other key); a repeated key stays found at its first place. -1
 * when the array is full. */
__attribute__((always_inline)) static inline int field_put(rmq_remoting_request_t *req, char *key, size_t klen,
                                                            char *value)
{
    arena_t *a = req->arena;
    uint16_t *at;

    if (req->n_fields == a->cap)
        return -1;
    if (klen == 1 && key[0] >= 'a' && key[0] <= 'z') {
        at = &a->letter[key[0] - 'a'];
    } else {
        size_t i = key_hash(key, klen) & a->mask;
        for (; a->slot[i] != 0; i = (i + 1) & a->mask)
            if (key_eq(req->fields[a->slot[i] - 1].key, key))
                break;
        at = &a->slot[i];
    }
    if (*at == 0)
        *at = (uint16_t)(req->n_fields + 1);
    req->fields[req->n_fields++] = (rmq_remoting_field_t){ key, value };
    return 0;
}

/* Appends a copy of key[0..klen) = value[0..vlen) to req; -1 when full. */
static int add_field(rmq_remoting_request_t *req, const char *key, size_t klen,
                     const char *value, size_t vlen)
{
    char *k = arena_str(req->arena, key, klen), *v = arena_str(req->arena, value, vlen);

    return k == NULL || v == NULL ? -1 : field_put(req, k, klen, v);
}

void rmq_remoting_request_clear(rmq_remoting_request_t *req)
{
    free(req->arena);
    memset(req, 0, sizeof(*req));
}

const char *rmq_remoting_field(const rmq_remoting_request_t *req, const char *key)
{
    const arena_t *a = req->arena;

    if (a == NULL) {            /* built by hand, not decoded */
        for (size_t i = 0; i < req->n_fields; i++)
            if (strcmp(req->fields[i].key, key) == 0)
                return req->fields[i].value;
        return NULL;
    }
    int l = key_letter(key);
    if (l >= 0)
        return a->letter[l] != 0 ? req->fields[a->letter[l] - 1].value : NULL;
    size_t n = key[0] == '\0' ? 0 : key[1] == '\0' ? 1 : strlen(key);
    for (size_t i = key_hash(key, n) & a->mask; a->slot[i] != 0; i = (i + 1) & a->mask) {
        const rmq_remoting_field_t *f = &req->fields[a->slot[i] - 1];
        if (key_eq(f->key, key))
            return f->value;
    }
    return NULL;
}

/* ---- the JSON header ------------------------------------------------------ */

/* The header members the decoder reads (NULL: absent), from either reader. */
typedef struct json_members {
    const rmq_json_t *code, *opaque, *flag, *version, *language, *remark;
} json_members_t;

/* An integer member of the JSON header (absent: dflt). -1 when present but bad. */
static int json_int_member(const rmq_json_t *v, int64_t min, int64_t max, int64_t dflt,
                           int64_t *out)
{
    *out = dflt;
    if (v == NULL || v->type == RMQ_JSON_NULL)
        return 0;
    return rmq_json_int(v, min, max, out);
}

/* language: a name ("JAVA") or its number; anything else is OTHER. */
static int json_language(const rmq_json_t *v)
{
    int64_t n;

    if (v != NULL && v->type == RMQ_JSON_STRING)
        for (size_t i = 0; i < LANGUAGES; i++)
            if (strcmp(v->str, language_names[i]) == 0)
                return (int)i;
    if (v != NULL && rmq_json_int(v, 0, 255, &n) == 0)
        return (int)n;
    return LANGUAGE_OTHER;
}

/* Reads code, opaque, flag, version, language and the remark (copied into
 * the arena unless it is there already: in_arena) from m into req. */
static rmq_err_t json_apply(const json_members_t *m, int in_arena, rmq_remoting_request_t *req,
                            const char **why)
{
    int64_t code, opaque, flag, version;
    const char *remark = rmq_json_scalar(m->remark);

    if (rmq_json_int(m->code, 0, REMOTING_CODE_MAX, &code) != 0 ||
        json_int_member(m->opaque, INT32_MIN, INT32_MAX, 0, &opaque) != 0 ||
        json_int_member(m->flag, INT32_MIN, INT32_MAX, 0, &flag) != 0 ||
        json_int_member(m->version, INT32_MIN, INT32_MAX, 0, &version) != 0) {
        *why = "JSON header: code, opaque, flag or version missing or not an integer";
        return RMQ_EPROTO;
    }
    req->code = (int)code;
    req->opaque = (int32_t)opaque;
    req->flags = (int32_t)flag;
    req->version = (int)version;
    req->language = json_language(m->language);
    if (remark != NULL && in_arena)
        req->remark = (char *)remark;
    else
        req->remark = arena_str(req->arena, remark != NULL ? remark : "", remark != NULL ? m->remark->len : 0);
    if (req->remark == NULL) {
        *why = "out of memory";
        return RMQ_ENOMEM;
    }
    return RMQ_OK;
}

/* extFields from rmq_json's tree: string, number and boolean values are
 * kept as text; null skipped. */
static rmq_err_t json_fields(const rmq_json_t *ext, rmq_remoting_request_t *req,
                             const char **why)
{
    if (ext == NULL || ext->type == RMQ_JSON_NULL)
        return RMQ_OK;
    if (ext->type != RMQ_JSON_OBJECT) {
        *why = "extFields is not an object";
        return RMQ_EPROTO;
    }
    if (ext->n > RMQ_REMOTING_FIELDS_MAX) {
        *why = "too many extFields";
        return RMQ_EPROTO;
    }
    for (size_t i = 0; i < ext->n; i++) {
        const rmq_json_t *v = ext->items[i];
        if (v->type == RMQ_JSON_NULL)
            continue;
        const char *s = rmq_json_scalar(v);
        if (s == NULL) {
            *why = "an extFields value is an array or an object";
            return RMQ_EPROTO;
        }
        if (add_field(req, ext->keys[i], strlen(ext->keys[i]), s, v->len) != 0) {
            *why = "out of memory";
            return RMQ_ENOMEM;
        }
    }
    return RMQ_OK;
}

/* The general reader: the header through rmq_json's tree. */
static rmq_err_t json_header_tree(const uint8_t *p, size_t len, rmq_remoting_request_t *req,
                                  const char **why)
{
    char err[128];
    rmq_err_t rc = RMQ_EPROTO;
    rmq_json_t *h = rmq_json_parse((const char *)p, len, err, sizeof(err));

    if (h == NULL || h->type != RMQ_JSON_OBJECT) {
        *why = "JSON header does not parse as an object";
        goto out;
    }
    json_members_t m = {
        rmq_json_get(h, "code"), rmq_json_get(h, "opaque"), rmq_json_get(h, "flag"),
        rmq_json_get(h, "version"), rmq_json_get(h, "language"), rmq_json_get(h, "remark"),
    };
    if ((rc = json_apply(&m, 0, req, why)) == RMQ_OK)
        rc = json_fields(rmq_json_get(h, "extFields"), req, why);
out:
    rmq_json_free(h);
    return rc;
}

/* The fast reader: one pass over the text straight into the arena, for
 * the headers clients send (scalar members, an extFields object of
 * scalars). It reads what the tree reader would read, or declines (-1):
 * then that reader decides, and names what is wrong. */
typedef struct jscan {
    const char *p, *end;
    arena_t *a;
} jscan_t;

static void js_ws_skip(jscan_t *s)
{
    while (s->p < s->end && (*s->p == ' ' || *s->p == '\t' || *s->p == '\n' || *s->p == '\r'))
        s->p++;
}

/* Whitespace skipped; the common case, none, is one test where it is called. */
__attribute__((always_inline)) static inline void js_ws(jscan_t *s)
{
    if (s->p >= s->end || (unsigned char)*s->p <= ' ')
        js_ws_skip(s);
}

__attribute__((always_inline)) static inline int js_peek(const jscan_t *s, char c)
{
    return s->p < s->end && *s->p == c;
}

static int js_hex4(const char *p, unsigned *cp)
{
    *cp = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10) : 16;
        if (d == 16)
            return -1;
        *cp = *cp << 4 | d;
    }
    return 0;
}

/* Bytes that end a run of a JSON string copied as it is: controls, the
 * quote, the backslash (1), and bytes over 0x7f (2: UTF-8 to check). */
static const uint8_t js_stop[256] = {
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
    ['"'] = 1, ['\\'] = 1,
    [0x80 ... 0xff] = 2,
};

#define JS_ONES 0x0101010101010101ull
#define JS_LOWS (JS_ONES * 0x7f)

/* The 8 bytes at p as a word whose low byte is p[0]. */
static uint64_t js_load8(const void *p)
{
    uint64_t x;

    memcpy(&x, p, 8);
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    x = __builtin_bswap64(x);
#endif
    return x;
}

/* 0x80 in each byte of x that js_stop names. Each byte is tested on its
 * own: with the top bits cleared, adding 0x60 (0x7f) carries into bit 7
 * exactly when a byte is at least 0x20 (not zero), and never into the next
 * byte. */
static uint64_t js_stop8(uint64_t x)
{
    uint64_t t = x & JS_LOWS;
    uint64_t ok = (t + JS_ONES * 0x60) & ((t ^ (JS_ONES * '"')) + JS_LOWS) & ((t ^ (JS_ONES * '\\')) + JS_LOWS);

    return (~ok | x) & ~JS_LOWS;
}

/* How many bytes of s[0..n) pass before one that js_stop names (n: none),
 * a word at a time while 8 bytes remain. */
static size_t js_plain_run(const unsigned char *s, size_t n)
{
    size_t i = 0;

    for (; n - i >= 8; i += 8) {
        uint64_t m = js_stop8(js_load8(s + i));
        if (m != 0)
            return i + (size_t)__builtin_ctzll(m) / 8;
    }
    while (i < n && !js_stop[s[i]])
        i++;
    return i;
}

/* One escape at s->p (its backslash) decoded to o; bytes written, 0: declined
 * (surrogates and \u0000 are left to the tree reader). */
static size_t js_escape(jscan_t *s, char *o)
{
    unsigned cp;

    if (s->end - s->p < 2)
        return 0;
    switch (s->p[1]) {
    case '"': case '\\': case '/': *o = s->p[1]; break;
    case 'b': *o = '\b'; break;
    case 'f': *o = '\f'; break;
    case 'n': *o = '\n'; break;
    case 'r': *o = '\r'; break;
    case 't': *o = '\t'; break;
    case 'u':
        if (s->end - s->p < 6 || js_hex4(s->p + 2, &cp) != 0 || cp == 0 || (cp >= 0xd800 && cp <= 0xdfff))
            return 0;
        s->p += 6;
        if (cp < 0x80) {
            o[0] = (char)cp;
            return 1;
        }
        if (cp < 0x800) {
            o[0] = (char)(0xc0 | cp >> 6);
            o[1] = (char)(0x80 | (cp & 0x3f));
            return 2;
        }
        o[0] = (char)(0xe0 | cp >> 12);
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3f));
        o[2] = (char)(0x80 | (cp & 0x3f));
        return 3;
    default:
        return 0;
    }
    s->p += 2;
    return 1;
}

/* The string's bytes from *qp on copied to *op up to its closing quote:
 * plain runs a word at a time, escapes decoded, runs of bytes over 0x7f
 * checked (a run must be whole UTF-8 sequences, as an ASCII byte cannot
 * continue one). *qp is left at the quote, *op after the copy; -1: declined. */
static int js_str_copy(jscan_t *s, const unsigned char **qp, char **op)
{
    const unsigned char *q = *qp, *e = (const unsigned char *)s->end;
    char *o = *op;

    for (;;) {
        size_t n = 0;
        while (e - q >= 8) {
            uint64_t x = js_load8(q), m = js_stop8(x);
            memcpy(o, q, 8);
            if (m != 0) {
                n = (size_t)__builtin_ctzll(m) / 8;
                break;
            }
            q += 8;
            o += 8;
        }
        if (e - q < 8) {
            n = js_plain_run(q, (size_t)(e - q));
            memcpy(o, q, n);
        }
        q += n;
        o += n;
        if (q == e || *q < 0x20)
            return -1;              /* unterminated, or a control character */
        if (*q == '"')
            break;
        if (*q >= 0x80) {
            const unsigned char *run = q;
            while (q < e && *q >= 0x80)
                *o++ = (char)*q++;
            if (!rmq_json_utf8_valid((const char *)run, (size_t)(q - run)))
                return -1;
            continue;
        }
        s->p = (const char *)q;
        size_t k = js_escape(s, o);
        if (k == 0)
            return -1;
        o += k;
        q = (const unsigned char *)s->p;
    }
    *qp = q;
    *op = o;
    return 0;
}

/* A string at s->p (its quote) copied into the arena as *str, *len bytes;
 * -1: declined. An escape decodes to at most its own length and every
 * token before left at least as much arena as source, so one check makes
 * room for the string, and for the word-wide copy of each plain run (8
 * bytes stored while at least 8 remain). A string that ends within its
 * first word with no byte to decode (the usual key and short value) is
 * taken here, anything else by js_str_copy. */
__attribute__((always_inline)) static inline int js_string(jscan_t *s, char **str, size_t *len)
{
    char *o = s->a->next;
    const unsigned char *q = (const unsigned char *)s->p + 1, *e = (const unsigned char *)s->end;
    uint64_t m;

    if (!js_peek(s, '"') || (size_t)(s->a->end - o) <= (size_t)(e - q))
        return -1;
    if (e - q >= 8 && (m = js_stop8(js_load8(q))) != 0 && q[__builtin_ctzll(m) / 8] == '"') {
        size_t n = (size_t)__builtin_ctzll(m) / 8;
        memcpy(o, q, 8);
        q += n;
        o += n;
    } else if (js_str_copy(s, &q, &o) != 0) {
        return -1;
    }
    s->p = (const char *)q + 1;
    *o = '\0';
    *str = s->a->next;
    *len = (size_t)(o - s->a->next);
    s->a->next = o + 1;
    return 0;
}

static int js_digits(jscan_t *s)
{
    const char *from = s->p;

    while (s->p < s->end && *s->p >= '0' && *s->p <= '9')
        s->p++;
    return s->p > from ? 0 : -1;
}

/* true, false or null at s->p as v; -1: none of them. */
static int js_literal(jscan_t *s, rmq_json_t *v)
{
    const char *text = *s->p == 't' ? "true" : *s->p == 'f' ? "false" : "null";
    size_t n = *s->p == 'f' ? 5 : 4;

    if ((size_t)(s->end - s->p) < n || memcmp(s->p, text, n) != 0)
        return -1;
    s->p += n;
    v->type = *text == 'n' ? RMQ_JSON_NULL : RMQ_JSON_BOOL;
    return 0;
}

/* A number (RFC 8259's grammar), true, false or null at s->p as v (its
 * type, and but for null its text and length). */
static int js_atom(jscan_t *s, rmq_json_t *v)
{
    const char *from = s->p;

    if (s->p >= s->end)
        return -1;
    if (*s->p == 't' || *s->p == 'f' || *s->p == 'n') {
        if (js_literal(s, v) != 0)
            return -1;
        if (v->type == RMQ_JSON_NULL)
            return 0;
    } else {
        v->type = RMQ_JSON_NUMBER;
        if (js_peek(s, '-'))
            s->p++;
        if (js_peek(s, '0'))
            s->p++;
        else if (s->p >= s->end || *s->p < '1' || *s->p > '9' || js_digits(s) != 0)
            return -1;
        if (js_peek(s, '.') && (s->p++, js_digits(s) != 0))
            return -1;
        if (js_peek(s, 'e') || js_peek(s, 'E')) {
            s->p++;
            if (js_peek(s, '+') || js_peek(s, '-'))
                s->p++;
            if (js_digits(s) != 0)
                return -1;
        }
    }
    v->len = (size_t)(s->p - from);
    return (v->str = arena_str(s->a, from, v->len)) != NULL ? 0 : -1;
}

/* A scalar value: a string or an atom (v's type, text and length). */
__attribute__((always_inline)) static inline int js_scalar(jscan_t *s, rmq_json_t *v)
{
    if (!js_peek(s, '"'))
        return js_atom(s, v);
    v->type = RMQ_JSON_STRING;
    return js_string(s, &v->str, &v->len);
}

/* After a member: 0 at ',' (consumed), 1 at '}' (consumed), -1 otherwise. */
__attribute__((always_inline)) static inline int js_next(jscan_t *s)
{
    js_ws(s);
    if (js_peek(s, ',') || js_peek(s, '}')) {
        s->p++;
        js_ws(s);
        return s->p[-1] == '}';
    }
    return -1;
}

/* An object's opening: 0 before its first member, 1 when empty, -1 not one. */
static int js_open(jscan_t *s)
{
    if (!js_peek(s, '{'))
        return -1;
    s->p++;
    js_ws(s);
    if (js_peek(s, '}')) {
        s->p++;
        js_ws(s);
        return 1;
    }
    return 0;
}

/* A member's key and colon; the key as *k, *klen bytes. */
__attribute__((always_inline)) static inline int js_key(jscan_t *s, char **k, size_t *klen)
{
    if (js_string(s, k, klen) != 0)
        return -1;
    js_ws(s);
    if (!js_peek(s, ':'))
        return -1;
    s->p++;
    js_ws(s);
    return 0;
}

/* The extFields object into req's fields (null values skipped). */
static int js_ext(jscan_t *s, rmq_remoting_request_t *req)
{
    size_t members = 0;
    int r = js_open(s);

    while (r == 0) {
        rmq_json_t v;
        char *mark = s->a->next, *k;
        size_t klen;
        if (++members > RMQ_REMOTING_FIELDS_MAX || js_key(s, &k, &klen) != 0 || js_scalar(s, &v) != 0)
            return -1;
        if (v.type == RMQ_JSON_NULL)
            s->a->next = mark;
        else if (field_put(req, k, klen, v.str) != 0)
            return -1;
        r = js_next(s);
    }
    return r < 0 ? -1 : 0;
}

#define JS_MEMBERS_MAX 64          /* top-level members the fast reader takes */
#define JS_EXT 6                   /* js_member: extFields */

/* Which header member k[0..len) names: 0..5 code, opaque, flag, version,
 * language, remark (json_members_t's order), JS_EXT, or 7: another. */
static size_t js_member(const char *k, size_t len)
{
    static const struct {
        const char *name;
        size_t len;
    } names[] = { { "code", 4 }, { "opaque", 6 }, { "flag", 4 }, { "version", 7 },
                  { "language", 8 }, { "remark", 6 }, { "extFields", 9 } };

    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (len == names[i].len && k[0] == names[i].name[0] && memcmp(k, names[i].name, len) == 0)
            return i;
    return 7;
}

/* The header object: members of m filled (each at most once), extFields
 * into req; nodes holds m's values. */
static int js_header(jscan_t *s, json_members_t *m, rmq_json_t nodes[6], rmq_remoting_request_t *req)
{
    const rmq_json_t **slots[6] = { &m->code, &m->opaque, &m->flag, &m->version, &m->language, &m->remark };
    int ext_seen = 0, r, members = 0;

    js_ws(s);
    r = js_open(s);
    while (r == 0) {
        rmq_json_t other;
        char *k;
        size_t i, klen;
        if (++members > JS_MEMBERS_MAX || js_key(s, &k, &klen) != 0)
            return -1;
        if ((i = js_member(k, klen)) == JS_EXT) {
            if (ext_seen++ || js_ext(s, req) != 0)
                return -1;
        } else {
            if (i < 6 && *slots[i] != NULL)
                return -1;          /* repeated: the tree reader keeps the first */
            if (js_scalar(s, i < 6 ? &nodes[i] : &other) != 0)
                return -1;
            if (i < 6)
                *slots[i] = &nodes[i];
        }
        r = js_next(s);
    }
    return r < 0 || s->p != s->end ? -1 : 0;
}

static rmq_err_t decode_json_header(const uint8_t *p, size_t len, rmq_remoting_request_t *req,
                                    const char **why)
{
    /* each member takes 5 bytes at least ("":0 and its comma); every string
     * fits in the bytes of its source and the byte after it */
    size_t cap = len / 5 + 1;
    if (cap > RMQ_REMOTING_FIELDS_MAX)
        cap = RMQ_REMOTING_FIELDS_MAX;
    if (arena_new(req, cap, len + 2) != 0) {
        *why = "out of memory";
        return RMQ_ENOMEM;
    }
    jscan_t s = { (const char *)p, (const char *)p + len, req->arena };
    json_members_t m = { 0 };
    rmq_json_t nodes[6];
    if (js_header(&s, &m, nodes, req) == 0)
        return json_apply(&m, 1, req, why);
    arena_reset(req);
    return json_header_tree(p, len, req, why);
}

/* ---- the binary header ---------------------------------------------------- */

/* Reads a length-prefixed string (lenbytes 2 or 4) at *p within end. */
static int read_str(const uint8_t **p, const uint8_t *end, int lenbytes, const uint8_t **s,
                    size_t *n)
{
    if (end - *p < lenbytes)
        return -1;
    *n = lenbytes == 2 ? be16(*p) : be32(*p);
    *p += lenbytes;
    if ((size_t)(end - *p) < *n)
        return -1;
    *s = *p;
    *p += *n;
    return 0;
}

/* A string from the wire must hold no NUL: handlers see C strings. */
static int has_nul(const uint8_t *s, size_t n)
{
    return memchr(s, 0, n) != NULL;
}

static rmq_err_t decode_binary_header(const uint8_t *p, size_t len, rmq_remoting_request_t *req,
                                      const char **why)
{
    const uint8_t *end = p + len, *s, *ext, *ext_end;
    size_t n, ext_len;

    *why = "binary header truncated";
    if (len < 13)
        return RMQ_EPROTO;
    req->code = (int16_t)be16(p);
    req->language = p[2];
    req->version = (int16_t)be16(p + 3);
    req->opaque = (int32_t)be32(p + 5);
    req->flags = (int32_t)be32(p + 9);
    p += 13;
    if (req->code < 0) {
        *why = "negative request code";
        return RMQ_EPROTO;
    }
    if (read_str(&p, end, 4, &s, &n) != 0)
        return RMQ_EPROTO;
    if (has_nul(s, n)) {
        *why = "NUL in the remark";
        return RMQ_EPROTO;
    }
    if (read_str(&p, end, 4, &ext, &ext_len) != 0)
        return RMQ_EPROTO;
    /* an entry takes 6 bytes at least; its length words make room for the NULs */
    size_t cap = ext_len / 6;
    if (cap > RMQ_REMOTING_FIELDS_MAX)
        cap = RMQ_REMOTING_FIELDS_MAX;
    if (arena_new(req, cap, len + 1) != 0 ||
        (req->remark = arena_str(req->arena, (const char *)s, n)) == NULL)
        goto nomem;
    ext_end = ext + ext_len;
    for (p = ext; p < ext_end;) {
        const uint8_t *k, *v;
        size_t kn, vn;
        if (read_str(&p, ext_end, 2, &k, &kn) != 0 || read_str(&p, ext_end, 4, &v, &vn) != 0) {
            *why = "extFields truncated";
            return RMQ_EPROTO;
        }
        if (req->n_fields == RMQ_REMOTING_FIELDS_MAX) {
            *why = "too many extFields";
            return RMQ_EPROTO;
        }
        if (has_nul(k, kn) || has_nul(v, vn)) {
            *why = "NUL in an extFields key or value";
            return RMQ_EPROTO;
        }
        if (add_field(req, (const char *)k, kn, (const char *)v, vn) != 0)
            goto nomem;
    }
    return RMQ_OK;
nomem:
    *why = "out of memory";
    return RMQ_ENOMEM;
}

rmq_err_t rmq_remoting_decode(const uint8_t *data, size_t len, uint32_t max_frame,
                              rmq_remoting_request_t *req, size_t *used, const char **why)
{
    rmq_err_t err;

    memset(req, 0, sizeof(*req));
    if (len < REMOTING_PREFIX)
        return RMQ_EAGAIN;
    uint32_t frame_len = be32(data), word = be32(data + 4);
    uint32_t type = word >> 24, header_len = word & 0xffffff;
    if (frame_len > max_frame) {
        *why = "frame over maxFrameSize";
        return RMQ_ETOOBIG;
    }
    if (frame_len < 4 || header_len > frame_len - 4) {
        *why = "header length over the frame length";
        return RMQ_EPROTO;
    }
    if (len - 4 < frame_len)
        return RMQ_EAGAIN;
    if (type == RMQ_REMOTING_JSON)
        err = decode_json_header(data + REMOTING_PREFIX, header_len, req, why);
    else if (type == RMQ_REMOTING_ROCKETMQ)
        err = decode_binary_header(data + REMOTING_PREFIX, header_len, req, why);
    else {
        *why = "unknown serialize type";
        err = RMQ_EPROTO;
    }
    if (err != RMQ_OK) {
        rmq_remoting_request_clear(req);
        return err;
    }
    req->serialize_type = (int)type;
    req->body = data + REMOTING_PREFIX + header_len;
    req->body_len = frame_len - 4 - header_len;
    *used = (size_t)frame_len + 4;
    return RMQ_OK;
}

/* ---- encoding ------------------------------------------------------------ */

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* 1 if s[0..n) needs no JSON escape (what rmq_json_strn copies as it is). */
static int json_plain(const char *s, size_t n)
{
    return js_plain_run((const unsigned char *)s, n) == n;
}

/* s may be NULL when n is 0 (no remark, no body). */
static char *put_bytes(char *o, const void *s, size_t n)
{
    if (n > 0)
        memcpy(o, s, n);
    return o + n;
}

static char *put_quoted(char *o, const char *s, size_t n)
{
    *o++ = '"';
    o = put_bytes(o, s, n);
    *o++ = '"';
    return o;
}

/* The header's bytes at most (a JSON header: -1 when a string needs an
 * escape, which the evbuffer writer below does; the fields are not looked
 * at for one when the reply says they need none). The remark and every
 * key and value are measured once into len[0..2 * n_fields]. */
static int header_bound(int type, const rmq_remoting_reply_t *rep, size_t *len, size_t *bound)
{
    const char *remark = rep->remark != NULL ? rep->remark : "";
    size_t b = 13 + 4 + 4 + (len[0] = strlen(remark));

    if (type != RMQ_REMOTING_ROCKETMQ && !json_plain(remark, len[0]))
        return -1;
    for (size_t i = 0; i < rep->n_fields; i++) {
        len[1 + 2 * i] = strlen(rep->fields[i].key);
        len[2 + 2 * i] = strlen(rep->fields[i].value);
        if (type == RMQ_REMOTING_ROCKETMQ && len[1 + 2 * i] > UINT16_MAX)
            return -1;
        if (type != RMQ_REMOTING_ROCKETMQ && !rep->fields_plain &&
            (!json_plain(rep->fields[i].key, len[1 + 2 * i]) || !json_plain(rep->fields[i].value, len[2 + 2 * i])))
            return -1;
        b += 6 + len[1 + 2 * i] + len[2 + 2 * i];
    }
    /* JSON: the fixed members with four integers (164 bytes at most with
     * the remark's and extFields' wrapping), beyond the binary layout's b */
    *bound = b + 164;
    return 0;
}

/* The JSON header at o (strings plain, measured in len); its end. */
static char *put_json_header(char *o, int code, int32_t opaque, int32_t flags, int version,
                             const rmq_remoting_reply_t *rep, const size_t *len)
{
    static const char language[] = ",\"language\":\"OTHER\",\"opaque\":";
    static const char rpc[] = ",\"serializeTypeCurrentRPC\":\"JSON\",\"version\":";

    o = put_bytes(o, "{\"code\":", 8);
    o += rmq_fmt_i64(o, code);
    o = put_bytes(o, ",\"flag\":", 8);
    o += rmq_fmt_i64(o, flags);
    o = put_bytes(o, language, sizeof(language) - 1);
    o += rmq_fmt_i64(o, opaque);
    o = put_bytes(o, rpc, sizeof(rpc) - 1);
    o += rmq_fmt_i64(o, version);
    if (len[0] > 0)
        o = put_quoted(put_bytes(o, ",\"remark\":", 10), rep->remark, len[0]);
    if (rep->n_fields > 0) {
        o = put_bytes(o, ",\"extFields\":{", 14);
        for (size_t i = 0; i < rep->n_fields; i++) {
            if (i > 0)
                *o++ = ',';
            o = put_quoted(o, rep->fields[i].key, len[1 + 2 * i]);
            *o++ = ':';
            o = put_quoted(o, rep->fields[i].value, len[2 + 2 * i]);
        }
        *o++ = '}';
    }
    *o++ = '}';
    return o;
}

static char *put_be(char *o, uint32_t v, int bytes)
{
    for (int i = bytes - 1; i >= 0; i--)
        *o++ = (char)(v >> (8 * i));
    return o;
}

/* The binary header at o (strings measured in len); its end. */
static char *put_binary_header(char *o, int code, int32_t opaque, int32_t flags, int version,
                               const rmq_remoting_reply_t *rep, const size_t *len)
{
    size_t ext = 0;

    o = put_be(o, (uint32_t)code, 2);
    *o++ = LANGUAGE_OTHER;
    o = put_be(o, (uint32_t)version, 2);
    o = put_be(o, (uint32_t)opaque, 4);
    o = put_be(o, (uint32_t)flags, 4);
    o = put_be(o, (uint32_t)len[0], 4);
    o = put_bytes(o, rep->remark, len[0]);
    for (size_t i = 0; i < rep->n_fields; i++)
        ext += 6 + len[1 + 2 * i] + len[2 + 2 * i];
    o = put_be(o, (uint32_t)ext, 4);
    for (size_t i = 0; i < rep->n_fields; i++) {
        o = put_bytes(put_be(o, (uint32_t)len[1 + 2 * i], 2), rep->fields[i].key, len[1 + 2 * i]);
        o = put_bytes(put_be(o, (uint32_t)len[2 + 2 * i], 4), rep->fields[i].value, len[2 + 2 * i]);
    }
    return o;
}

#define ENCODE_DIRECT_FIELDS 32    /* replies with more fields go through a buffer */
#define ENCODE_DIRECT_MAX 65536    /* and so do headers that may be longer */

/* Writes the frame's prefix and header straight into out's free space: 0,
 * or -1 when rep is not for this path (nothing written). */
static int encode_direct(struct evbuffer *out, int type, int code, int32_t opaque, int32_t flags,
                         int version, const rmq_remoting_reply_t *rep)
{
    size_t len[1 + 2 * ENCODE_DIRECT_FIELDS], bound;
    struct evbuffer_iovec v;

    if (rep->n_fields > ENCODE_DIRECT_FIELDS || header_bound(type, rep, len, &bound) != 0 ||
        bound > ENCODE_DIRECT_MAX || rep->body_len > UINT32_MAX - 4 - bound ||
        evbuffer_reserve_space(out, (ev_ssize_t)(REMOTING_PREFIX + bound), &v, 1) != 1)
        return -1;
    char *h = (char *)v.iov_base + REMOTING_PREFIX;
    char *end = type == RMQ_REMOTING_ROCKETMQ
                    ? put_binary_header(h, code, opaque, flags, version, rep, len)
                    : put_json_header(h, code, opaque, flags, version, rep, len);
    size_t hlen = (size_t)(end - h);
    put_be32(v.iov_base, (uint32_t)(4 + hlen + rep->body_len));
    put_be32((uint8_t *)v.iov_base + 4, (uint32_t)type << 24 | (uint32_t)hlen);
    v.iov_len = REMOTING_PREFIX + hlen;
    return evbuffer_commit_space(out, &v, 1) == 0 ? 0 : -1;
}

/* The general writer: the header in its own buffer, escaping strings. */
static rmq_err_t encode_json_header(struct evbuffer *h, int code, int32_t opaque, int32_t flags,
                                    int version, const rmq_remoting_reply_t *rep)
{
    int rc = evbuffer_add_printf(h, "{\"code\":%d,\"flag\":%d,\"language\":\"%s\",\"opaque\":%d,"
                                 "\"serializeTypeCurrentRPC\":\"JSON\",\"version\":%d",
                                 code, (int)flags, language_names[LANGUAGE_OTHER], (int)opaque,
                                 version);
    if (rep->remark != NULL && rep->remark[0] != '\0') {
        evbuffer_add(h, ",\"remark\":", 10);
        rmq_json_str(h, rep->remark);
    }
    if (rep->n_fields > 0) {
        evbuffer_add(h, ",\"extFields\":{", 14);
        for (size_t i = 0; i < rep->n_fields; i++) {
            if (i > 0)
                evbuffer_add(h, ",", 1);
            rmq_json_str(h, rep->fields[i].key);
            evbuffer_add(h, ":", 1);
            rmq_json_str(h, rep->fields[i].value);
        }
        evbuffer_add(h, "}", 1);
    }
    return rc < 0 || evbuffer_add(h, "}", 1) != 0 ? RMQ_ENOMEM : RMQ_OK;
}

static void add_be32(struct evbuffer *h, uint32_t v)
{
    uint8_t b[4];

    put_be32(b, v);
    evbuffer_add(h, b, 4);
}

static void add_str(struct evbuffer *h, const char *s, int lenbytes)
{
    size_t n = strlen(s);

    if (lenbytes == 2) {
        uint8_t b[2] = { (uint8_t)(n >> 8), (uint8_t)n };
        evbuffer_add(h, b, 2);
    } else {
        add_be32(h, (uint32_t)n);
    }
    evbuffer_add(h, s, n);
}

static rmq_err_t encode_binary_header(struct evbuffer *h, int code, int32_t opaque,
                                      int32_t flags, int version, const rmq_remoting_reply_t *rep)
{
    uint8_t fixed[13] = { (uint8_t)(code >> 8), (uint8_t)code, LANGUAGE_OTHER,
                          (uint8_t)(version >> 8), (uint8_t)version };
    size_t ext = 0;

    put_be32(fixed + 5, (uint32_t)opaque);
    put_be32(fixed + 9, (uint32_t)flags);
    evbuffer_add(h, fixed, sizeof(fixed));
    add_str(h, rep->remark != NULL ? rep->remark : "", 4);
    for (size_t i = 0; i < rep->n_fields; i++) {
        if (strlen(rep->fields[i].key) > UINT16_MAX)
            return RMQ_ETOOBIG;
        ext += 6 + strlen(rep->fields[i].key) + strlen(rep->fields[i].value);
    }
    if (ext > UINT32_MAX)
        return RMQ_ETOOBIG;
    add_be32(h, (uint32_t)ext);
    for (size_t i = 0; i < rep->n_fields; i++) {
        add_str(h, rep->fields[i].key, 2);
        add_str(h, rep->fields[i].value, 4);
    }
    return RMQ_OK;
}

/* The general path: the header in a buffer of its own, then the frame. */
static rmq_err_t encode_buffered(struct evbuffer *out, int type, int code, int32_t opaque,
                                 int32_t flags, int version, const rmq_remoting_reply_t *rep)
{
    struct evbuffer *h = evbuffer_new();
    rmq_err_t err = RMQ_ENOMEM;
    uint8_t prefix[REMOTING_PREFIX];

    if (h == NULL)
        return RMQ_ENOMEM;
    err = type == RMQ_REMOTING_ROCKETMQ ? encode_binary_header(h, code, opaque, flags, version, rep)
                                        : encode_json_header(h, code, opaque, flags, version, rep);
    size_t hlen = evbuffer_get_length(h);
    if (err == RMQ_OK && (hlen > 0xffffff || hlen + rep->body_len > UINT32_MAX - 4))
        err = RMQ_ETOOBIG;
    if (err != RMQ_OK)
        goto out;
    put_be32(prefix, (uint32_t)(4 + hlen + rep->body_len));
    put_be32(prefix + 4, (uint32_t)type << 24 | (uint32_t)hlen);
    if (evbuffer_add(out, prefix, sizeof(prefix)) != 0 || evbuffer_add_buffer(out, h) != 0 ||
        (rep->body_len > 0 && evbuffer_add(out, rep->body, rep->body_len) != 0))
        err = RMQ_ENOMEM;
out:
    evbuffer_free(h);
    return err;
}

rmq_err_t rmq_remoting_encode(struct evbuffer *out, int type, int code, int32_t opaque,
                              int32_t flags, int version, const rmq_remoting_reply_t *rep)
{
    if (type == RMQ_REMOTING_ROCKETMQ && (code < INT16_MIN || code > INT16_MAX))
        return RMQ_EINVAL;
    if (encode_direct(out, type, code, opaque, flags, version, rep) != 0)
        return encode_buffered(out, type, code, opaque, flags, version, rep);
    if (rep->body_len > 0 && evbuffer_add(out, rep->body, rep->body_len) != 0)
        return RMQ_ENOMEM;
    return RMQ_OK;
}

/* ---- replies ------------------------------------------------------------- */

rmq_err_t rmq_remoting_reply(rmq_conn_t *conn, const rmq_remoting_request_t *req,
                             const rmq_remoting_reply_t *rep)
{
    struct evbuffer *out;

    if (req->flags & RMQ_REMOTING_FLAG_ONEWAY)
        return RMQ_OK;
    if ((out = rmq_conn_output(conn)) == NULL)
        return RMQ_ECLOSED;
    if (rmq_conn_codec(conn) != &rmq_codec_remoting)
        return RMQ_EPROTO;
    rmq_err_t err = rmq_remoting_encode(out, req->serialize_type, rep->code, req->opaque,
                                        RMQ_REMOTING_FLAG_RESPONSE, req->version, rep);
    rmq_conn_output_done(conn);
    return err;
}

rmq_err_t rmq_remoting_replyf(rmq_conn_t *conn, const rmq_remoting_request_t *req, int code,
                              const char *fmt, ...)
{
    char remark[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(remark, sizeof(remark), fmt, ap);
    va_end(ap);
    rmq_remoting_reply_t rep = { .code = code, .remark = remark };
    return rmq_remoting_reply(conn, req, &rep);
}

/* ---- access control ------------------------------------------------------ */

static int field_index_cmp(const void *a, const void *b, void *arg)
{
    const rmq_remoting_field_t *f = arg;
    return strcmp(f[*(const size_t *)a].key, f[*(const size_t *)b].key);
}

void rmq_remoting_sign(const rmq_remoting_request_t *req, const char *secret, char sig[29])
{
    size_t order[RMQ_REMOTING_FIELDS_MAX], n = 0, total = req->body_len, off = 0;
    uint8_t mac[EVP_MAX_MD_SIZE];
    unsigned maclen = 0;

    sig[0] = '\0';
    for (size_t i = 0; i < req->n_fields && n < RMQ_REMOTING_FIELDS_MAX; i++)
        if (strcmp(req->fields[i].key, "Signature") != 0) {
            order[n++] = i;
            total += strlen(req->fields[i].value);
        }
    qsort_r(order, n, sizeof(order[0]), field_index_cmp, req->fields);
    uint8_t *text = malloc(total + 1);
    if (text == NULL)
        return;            /* no signature matches "" */
    for (size_t i = 0; i < n; i++) {
        const char *v = req->fields[order[i]].value;
        size_t vn = strlen(v);
        memcpy(text + off, v, vn);
        off += vn;
    }
    if (req->body_len > 0)
        memcpy(text + off, req->body, req->body_len);
    if (HMAC(EVP_sha1(), secret, (int)strlen(secret), text, total, mac, &maclen) != NULL &&
        maclen == 20)
        EVP_EncodeBlock((uint8_t *)sig, mac, 20);
    free(text);
}

typedef enum need_shape {
    NEED_ADMIN = 0,        /* the default for codes not listed */
    NEED_SIGNED,           /* any valid account */
} need_shape_t;

/* What each name-server code needs beyond a valid signature (the broker's
 * handlers ask its core: RMQ_ACL_SIGNER_ONLY). */
static const struct {
    int code;
    need_shape_t shape;
} code_needs[] = {
    { 101, NEED_SIGNED },  /* GET_KV_CONFIG */
    { 105, NEED_SIGNED },  /* GET_ROUTEINFO_BY_TOPIC */
    { 106, NEED_SIGNED },  /* GET_BROKER_CLUSTER_INFO */
    { 206, NEED_SIGNED },  /* GET_ALL_TOPIC_LIST_FROM_NAMESERVER */
    { 224, NEED_SIGNED },  /* GET_TOPICS_BY_CLUSTER */
    { 304, NEED_SIGNED },  /* GET_SYSTEM_TOPIC_LIST_FROM_NS */
};

static need_shape_t code_shape(int code)
{
    for (size_t i = 0; i < sizeof(code_needs) / sizeof(code_needs[0]); i++)
        if (code_needs[i].code == code)
            return code_needs[i].shape;
    return NEED_ADMIN;
}

/* 1 if req may run; 0 with a remark otherwise. now_ms: the wall clock. */
static int remoting_acl_check(const remoting_t *rm, rmq_acl_t *acl, const char *peer,
                              const rmq_remoting_request_t *req, int64_t now_ms, char *remark,
                              size_t remarklen)
{
    const rmq_acl_account_t *a = NULL;
    char op[32], sig[29];

    snprintf(op, sizeof(op), "request code %d", req->code);
    /* ACL 1.0 signs no time: the signing time given is now (see the header). */
    int rc = rmq_acl_authenticate(acl, peer, rmq_remoting_field(req, "AccessKey"), now_ms, now_ms,
                                  op, &a, remark, remarklen);
    if (rc != 0)
        return rc > 0;
    const char *given = rmq_remoting_field(req, "Signature");
    rmq_remoting_sign(req, rmq_acl_account_secret(a), sig);
    if (!rmq_acl_sig_equal(sig, given != NULL ? given : "")) {
        snprintf(remark, remarklen, "no permission: account %s: signature of %s does not match "
                 "its extFields and body", rmq_acl_account_key(a), op);
        return 0;
    }
    if (rm->scope == RMQ_ACL_SIGNER_ONLY || code_shape(req->code) == NEED_SIGNED)
        return 1;
    rmq_acl_need_t admin = { RMQ_ACL_ADMIN, 0, NULL };
    return rmq_acl_allows(a, &admin, 1, op, remark, remarklen);
}

/* Where code's handler is in rm->handlers, or where it would go. */
static size_t handler_at(const remoting_t *rm, int code)
{
    size_t lo = 0, hi = rm->nhandlers;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (rm->handlers[mid].code < code)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* ---- dispatch ------------------------------------------------------------ */

static void dispatch(remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req)
{
    char remark[512];

    if ((req->flags & RMQ_REMOTING_FLAG_RESPONSE) && rm->on_response != NULL) {
        rm->on_response(conn, req, rm->on_response_arg);
        return;
    }
    if (req->flags & RMQ_REMOTING_FLAG_RESPONSE) {
        LOG_WARN_RL("%s: ignoring a remoting response (code %d, opaque %d) from %s",
                    rmq_server_name(rm->srv), req->code, (int)req->opaque, rmq_conn_peer(conn));
        return;
    }
    if (rm->acl != NULL &&
        !remoting_acl_check(rm, rm->acl, rmq_conn_peer(conn), req, rmq_wall_ms(), remark,
                            sizeof(remark))) {
        LOG_WARN_RL("refused remoting request code %d from %s: %s", req->code,
                    rmq_conn_peer(conn), remark);
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_NO_PERMISSION, "%s", remark);
        return;
    }
    size_t at = handler_at(rm, req->code);
    if (at == rm->nhandlers || rm->handlers[at].code != req->code) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED,
                            "request code %d not supported by %s", req->code,
                            rmq_server_name(rm->srv));
        return;
    }
    rm->handlers[at].fn(conn, req, rm->handlers[at].arg);
}

/* Decodes one whole frame from in (made contiguous first) and dispatches it. */
static rmq_err_t remoting_serve(rmq_conn_t *conn, struct evbuffer *in, void *state,
                                const char **why)
{
    remoting_t *rm = state;
    uint8_t prefix[REMOTING_PREFIX];
    rmq_remoting_request_t req;
    size_t used;

    if (evbuffer_copyout(in, prefix, sizeof(prefix)) < (ev_ssize_t)sizeof(prefix))
        return RMQ_EAGAIN;
    uint32_t frame_len = be32(prefix);
    if (frame_len > rmq_server_max_frame(rm->srv)) {
        *why = "frame over maxFrameSize";
        return RMQ_ETOOBIG;
    }
    if (evbuffer_get_length(in) < (size_t)frame_len + 4)
        return RMQ_EAGAIN;
    const uint8_t *data = evbuffer_pullup(in, (ev_ssize_t)frame_len + 4);
    if (data == NULL) {
        *why = "out of memory";
        return RMQ_ENOMEM;
    }
    rmq_err_t err = rmq_remoting_decode(data, (size_t)frame_len + 4, rmq_server_max_frame(rm->srv),
                                        &req, &used, why);
    if (err != RMQ_OK)
        return err;
    dispatch(rm, conn, &req);
    rmq_remoting_request_clear(&req);
    evbuffer_drain(in, used);
    return RMQ_OK;
}

static void remoting_free_state(void *state)
{
    remoting_t *rm = state;

    free(rm->handlers);
    free(rm);
}

const rmq_codec_t rmq_codec_remoting = {
    .name = "remoting",
    .probe = remoting_probe,
    .serve = remoting_serve,
    .free_state = remoting_free_state,
};

/* ---- set-up -------------------------------------------------------------- */

rmq_err_t rmq_remoting_install(rmq_server_t *srv)
{
    remoting_t *rm = calloc(1, sizeof(*rm));

    if (rm == NULL)
        return RMQ_ENOMEM;
    rm->srv = srv;
    rmq_err_t err = rmq_server_add_codec(srv, &rmq_codec_remoting, rm);
    if (err != RMQ_OK)
        free(rm);
    return err;
}

rmq_err_t rmq_remoting_handle(rmq_server_t *srv, int code, rmq_remoting_handler_fn fn, void *arg)
{
    remoting_t *rm = rmq_server_codec_state(srv, &rmq_codec_remoting);

    if (rm == NULL || code < 0)
        return RMQ_EINVAL;
    size_t at = handler_at(rm, code);
    if (at == rm->nhandlers || rm->handlers[at].code != code) {
        void *grown = realloc(rm->handlers, (rm->nhandlers + 1) * sizeof(rm->handlers[0]));
        if (grown == NULL)
            return RMQ_ENOMEM;
        rm->handlers = grown;
        memmove(&rm->handlers[at + 1], &rm->handlers[at], (rm->nhandlers - at) * sizeof(rm->handlers[0]));
        rm->nhandlers++;
    }
    rm->handlers[at] = (struct remoting_handler){.code = code, .fn = fn, .arg = arg};
    return RMQ_OK;
}

void rmq_remoting_on_response(rmq_server_t *srv, rmq_remoting_handler_fn fn, void *arg)
{
    remoting_t *rm = rmq_server_codec_state(srv, &rmq_codec_remoting);

    if (rm != NULL) {
        rm->on_response = fn;
        rm->on_response_arg = arg;
    }
}

void rmq_remoting_set_acl(rmq_server_t *srv, rmq_acl_t *acl, rmq_acl_scope_t scope)
{
    remoting_t *rm = rmq_server_codec_state(srv, &rmq_codec_remoting);

    if (rm != NULL) {
        rm->acl = acl;
        rm->scope = scope;
    }
}
