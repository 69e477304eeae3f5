/* rmq_config.c: the table-driven configuration reader. Owns the Java
 * .properties parser (logical lines, comments, separators, escapes), the
 * per-type text <-> field conversions with their validation rules and
 * error wording, alias resolution, and printing in .properties syntax. */
#include "rmq_config.h"
#include "rmq_log.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CONFIG_FILE_MAX (16u * 1024 * 1024)

/* ---- growable byte buffer used by the parser ---- */

typedef struct strbuf {
    char *data;
    size_t len, cap;
} strbuf_t;

/* Appends n bytes; returns RMQ_ENOMEM on failure. Always keeps a NUL after data. */
static int sb_append(strbuf_t *sb, const char *s, size_t n)
{
    if (sb->len + n + 1 > sb->cap) {
        size_t cap = sb->cap ? sb->cap : 64;
        while (cap < sb->len + n + 1)
            cap *= 2;
        char *data = realloc(sb->data, cap);
        if (!data)
            return RMQ_ENOMEM;
        sb->data = data;
        sb->cap = cap;
    }
    memcpy(sb->data + sb->len, s, n);
    sb->len += n;
    sb->data[sb->len] = '\0';
    return RMQ_OK;
}

static int sb_putc(strbuf_t *sb, char c)
{
    return sb_append(sb, &c, 1);
}

/* ---- .properties parsing ---- */

static int is_blank(char c)
{
    return c == ' ' || c == '\t' || c == '\f';
}

/* A cursor over the input, counting natural lines. */
typedef struct prop_cursor {
    const char *text;
    size_t len, pos;
    int line;           /* number of the next natural line */
} prop_cursor_t;

/* Returns the next natural line without its terminator or leading blanks,
 * in [*s, *e); returns 0 at end of input. */
static int next_natural_line(prop_cursor_t *c, const char **s, const char **e)
{
    if (c->pos >= c->len)
        return 0;
    const char *p = c->text + c->pos, *end = c->text + c->len;
    while (p < end && is_blank(*p))
        p++;
    *s = p;
    while (p < end && *p != '\n' && *p != '\r')
        p++;
    *e = p;
    if (p < end && *p == '\r' && p + 1 < end && p[1] == '\n')
        p++;
    if (p < end)
        p++;
    c->pos = (size_t)(p - c->text);
    c->line++;
    return 1;
}

/* Returns 1 if [s, e) ends in an odd number of backslashes (a continuation). */
static int ends_in_continuation(const char *s, const char *e)
{
    size_t n = 0;
    while (e > s && e[-1] == '\\') {
        e--;
        n++;
    }
    return n % 2 == 1;
}

/* Reads one logical line (raw, escapes intact) into sb; returns 1 if one was
 * read, 0 at end of input, or RMQ_ENOMEM. *line is where it started. */
static int next_logical_line(prop_cursor_t *c, strbuf_t *sb, int *line)
{
    const char *s, *e;
    for (;;) {
        *line = c->line;
        if (!next_natural_line(c, &s, &e))
            return 0;
        if (s < e && *s != '#' && *s != '!')
            break;
    }
    sb->len = 0;
    for (;;) {
        int cont = ends_in_continuation(s, e);
        if (sb_append(sb, s, (size_t)(e - s - cont)) != RMQ_OK)
            return RMQ_ENOMEM;
        if (!cont || !next_natural_line(c, &s, &e))
            return 1;
    }
}

static int hex_value(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* Reads the 4 hex digits of a \u escape at *p (just past the 'u'); -1 if malformed. */
static long read_u4(const char **p, const char *e)
{
    if (e - *p < 4)
        return -1;
    long v = 0;
    for (int i = 0; i < 4; i++) {
        int d = hex_value((*p)[i]);
        if (d < 0)
            return -1;
        v = v * 16 + d;
    }
    *p += 4;
    return v;
}

/* Appends code point cp as UTF-8. */
static int put_utf8(strbuf_t *sb, unsigned long cp)
{
    char b[4];
    size_t n;
    if (cp < 0x80) {
        b[0] = (char)cp;
        n = 1;
    } else if (cp < 0x800) {
        b[0] = (char)(0xC0 | (cp >> 6));
        b[1] = (char)(0x80 | (cp & 0x3F));
        n = 2;
    } else if (cp < 0x10000) {
        b[0] = (char)(0xE0 | (cp >> 12));
        b[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[2] = (char)(0x80 | (cp & 0x3F));
        n = 3;
    } else {
        b[0] = (char)(0xF0 | (cp >> 18));
        b[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
        b[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
        b[3] = (char)(0x80 | (cp & 0x3F));
        n = 4;
    }
    return sb_append(sb, b, n);
}

/* Decodes a \uXXXX escape (a surrogate pair takes two) at *p into sb.
 * Returns RMQ_EINVAL if malformed or a lone surrogate. */
static int decode_unicode(const char **p, const char *e, strbuf_t *sb)
{
    long hi = read_u4(p, e);
    if (hi < 0 || (hi >= 0xDC00 && hi <= 0xDFFF))
        return RMQ_EINVAL;
    if (hi < 0xD800 || hi > 0xDBFF)
        return put_utf8(sb, (unsigned long)hi);
    if (e - *p < 2 || (*p)[0] != '\\' || (*p)[1] != 'u')
        return RMQ_EINVAL;
    *p += 2;
    long lo = read_u4(p, e);
    if (lo < 0xDC00 || lo > 0xDFFF)
        return RMQ_EINVAL;
    return put_utf8(sb, 0x10000ul + (((unsigned long)hi - 0xD800) << 10) +
                            ((unsigned long)lo - 0xDC00));
}

/* Decodes the escape at *p (just past the backslash) into sb. */
static int decode_escape(const char **p, const char *e, strbuf_t *sb)
{
    if (*p >= e)
        return RMQ_OK;
    char c = *(*p)++;
    switch (c) {
    case 't': return sb_putc(sb, '\t');
    case 'n': return sb_putc(sb, '\n');
    case 'r': return sb_putc(sb, '\r');
    case 'f': return sb_putc(sb, '\f');
    case 'u': return decode_unicode(p, e, sb);
    default:  return sb_putc(sb, c);
    }
}

/* Unescapes [*p, e) into out, stopping before an unescaped key terminator
 * ('=', ':', blank) when is_key; for values, unescaped trailing blanks are
 * dropped. Returns RMQ_EINVAL on a malformed \u escape, or RMQ_ENOMEM. */
static int unescape(const char **p, const char *e, int is_key, strbuf_t *out)
{
    size_t keep = 0;
    out->len = 0;
    if (sb_append(out, "", 0) != RMQ_OK)
        return RMQ_ENOMEM;
    while (*p < e) {
        char c = **p;
        if (is_key && (c == '=' || c == ':' || is_blank(c)))
            break;
        (*p)++;
        int rc = c == '\\' ? decode_escape(p, e, out) : sb_putc(out, c);
        if (rc != RMQ_OK)
            return rc;
        if (c == '\\' || !is_blank(c))
            keep = out->len;
    }
    if (!is_key) {
        out->len = keep;
        out->data[keep] = '\0';
    }
    return RMQ_OK;
}

/* Splits one raw logical line into key and value and calls fn. */
static int emit_pair(const strbuf_t *raw, int line, strbuf_t *key, strbuf_t *val,
                     rmq_properties_fn fn, void *arg)
{
    const char *p = raw->data, *e = raw->data + raw->len;
    const char *key_start = p;
    int rc = unescape(&p, e, 1, key);
    if (rc == RMQ_ENOMEM)
        return rc;
    if (rc != RMQ_OK) {
        key->len = 0;
        if (sb_append(key, key_start, (size_t)(e - key_start)) != RMQ_OK)
            return RMQ_ENOMEM;
        return fn(key->data, NULL, line, arg);
    }
    while (p < e && is_blank(*p))
        p++;
    if (p < e && (*p == '=' || *p == ':'))
        p++;
    while (p < e && is_blank(*p))
        p++;
    rc = unescape(&p, e, 0, val);
    if (rc == RMQ_ENOMEM)
        return rc;
    return fn(key->data, rc == RMQ_OK ? val->data : NULL, line, arg);
}

int rmq_properties_parse(const char *text, size_t len, rmq_properties_fn fn, void *arg)
{
    prop_cursor_t c = { text, len, 0, 1 };
    strbuf_t raw = { 0 }, key = { 0 }, val = { 0 };
    int line, rc;
    while ((rc = next_logical_line(&c, &raw, &line)) == 1) {
        rc = emit_pair(&raw, line, &key, &val, fn, arg);
        if (rc != 0)
            break;
    }
    free(raw.data);
    free(key.data);
    free(val.data);
    return rc;
}

/* ---- table lookups and field access ---- */

/* Maps an old key name to its current one through the alias table. */
static const char *resolve_alias(const rmq_cfg_table_t *t, const char *key)
{
    if (!t->aliases)
        return key;
    for (const char *const *a = t->aliases; a[0] && a[1]; a += 2)
        if (strcmp(a[0], key) == 0)
            return a[1];
    return key;
}

static const rmq_cfg_entry_t *find_entry(const rmq_cfg_table_t *t, const char *key)
{
    key = resolve_alias(t, key);
    for (size_t i = 0; i < t->count; i++)
        if (strcmp(t->entries[i].key, key) == 0)
            return &t->entries[i];
    return NULL;
}

static void *field_of(const rmq_cfg_entry_t *ent, void *obj)
{
    return (char *)obj + ent->offset;
}

static const void *cfield_of(const rmq_cfg_entry_t *ent, const void *obj)
{
    return (const char *)obj + ent->offset;
}

/* ---- per-type parsing with the rule each one enforces ---- */

/* Parses an optionally signed decimal integer with nothing else around it. */
static int parse_int64(const char *s, int64_t *out)
{
    const char *d = (*s == '-' || *s == '+') ? s + 1 : s;
    if (*d == '\0')
        return -1;
    for (const char *p = d; *p; p++)
        if (!isdigit((unsigned char)*p))
            return -1;
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE)
        return -1;
    *out = v;
    return 0;
}

/* Writes the rule that ent's values must follow into buf. */
static void describe_rule(const rmq_cfg_entry_t *ent, char *buf, size_t len)
{
    switch (ent->type) {
    case RMQ_CFG_INT:
        snprintf(buf, len, "must be an integer between %" PRId64 " and %" PRId64,
                 ent->min, ent->max);
        break;
    case RMQ_CFG_BOOL:
        snprintf(buf, len, "must be true or false");
        break;
    case RMQ_CFG_STR:
        snprintf(buf, len, "must be at most %" PRId64 " bytes long", ent->max);
        break;
    case RMQ_CFG_ENUM: {
        size_t n = (size_t)snprintf(buf, len, "must be one of");
        for (const char *const *c = ent->choices; c && *c && n < len; c++)
            n += (size_t)snprintf(buf + n, len - n, "%s %s", c == ent->choices ? "" : ",", *c);
        break;
    }
    }
}

/* Returns the index of value in ent's choices (case-insensitive), or -1. */
static int enum_index(const rmq_cfg_entry_t *ent, const char *value)
{
    for (int i = 0; ent->choices && ent->choices[i]; i++)
        if (strcasecmp(ent->choices[i], value) == 0)
            return i;
    return -1;
}

/* Converts value and stores it in ent's field; RMQ_EINVAL if it breaks the rule. */
static rmq_err_t store_value(const rmq_cfg_entry_t *ent, void *obj, const char *value)
{
    void *f = field_of(ent, obj);
    switch (ent->type) {
    case RMQ_CFG_INT: {
        int64_t v;
        if (parse_int64(value, &v) != 0 || v < ent->min || v > ent->max)
            return RMQ_EINVAL;
        *(int64_t *)f = v;
        return RMQ_OK;
    }
    case RMQ_CFG_BOOL: {
        int is_true = strcasecmp(value, "true") == 0;
        if (!is_true && strcasecmp(value, "false") != 0)
            return RMQ_EINVAL;
        *(int *)f = is_true;
        return RMQ_OK;
    }
    case RMQ_CFG_STR: {
        if (ent->max > 0 && strlen(value) > (uint64_t)ent->max)
            return RMQ_EINVAL;
        char *copy = strdup(value);
        if (!copy)
            return RMQ_ENOMEM;
        free(*(char **)f);
        *(char **)f = copy;
        return RMQ_OK;
    }
    case RMQ_CFG_ENUM: {
        int idx = enum_index(ent, value);
        if (idx < 0)
            return RMQ_EINVAL;
        *(int *)f = idx;
        return RMQ_OK;
    }
    }
    return RMQ_EINVAL;
}

/* Formats ent's current value as text (unescaped); returns the string. */
static const char *format_value(const rmq_cfg_entry_t *ent, const void *obj,
                                char *buf, size_t len)
{
    const void *f = cfield_of(ent, obj);
    switch (ent->type) {
    case RMQ_CFG_INT:
        snprintf(buf, len, "%" PRId64, *(const int64_t *)f);
        return buf;
    case RMQ_CFG_BOOL:
        return *(const int *)f ? "true" : "false";
    case RMQ_CFG_STR:
        return *(char *const *)f ? *(char *const *)f : "";
    case RMQ_CFG_ENUM: {
        int idx = *(const int *)f;
        for (int i = 0; ent->choices && ent->choices[i]; i++)
            if (i == idx)
                return ent->choices[i];
        return "?";
    }
    }
    return "?";
}

/* ---- public API ---- */

rmq_err_t rmq_config_set(const rmq_cfg_table_t *t, void *obj, const char *key,
                         const char *value, char *err, size_t errlen)
{
    const rmq_cfg_entry_t *ent = find_entry(t, key);
    if (!ent) {
        snprintf(err, errlen, "%s=%s: unknown key", key, value);
        return RMQ_ENOTFOUND;
    }
    rmq_err_t rc = store_value(ent, obj, value);
    if (rc == RMQ_EINVAL) {
        char rule[512];
        describe_rule(ent, rule, sizeof(rule));
        snprintf(err, errlen, "%s=%s: %s", key, value, rule);
    } else if (rc != RMQ_OK) {
        snprintf(err, errlen, "%s=%s: %s", key, value, rmq_strerror(rc));
    }
    return rc;
}

/* STR fields must be NULL or heap strings already owned by obj. */
rmq_err_t rmq_config_defaults(const rmq_cfg_table_t *t, void *obj)
{
    char err[1024];
    for (size_t i = 0; i < t->count; i++) {
        const rmq_cfg_entry_t *ent = &t->entries[i];
        if (!ent->def && ent->type == RMQ_CFG_STR) {
            free(*(char **)field_of(ent, obj));
            *(char **)field_of(ent, obj) = NULL;
            continue;
        }
        if (!ent->def) {
            LOG_ERROR("config table: %s has no default", ent->key);
            return RMQ_EINVAL;
        }
        rmq_err_t rc = rmq_config_set(t, obj, ent->key, ent->def, err, sizeof(err));
        if (rc != RMQ_OK) {
            LOG_ERROR("config table: bad default: %s", err);
            return rc;
        }
    }
    return RMQ_OK;
}

typedef struct load_ctx {
    const rmq_cfg_table_t *t;
    void *obj;
    const char *name;
    char *err;
    size_t errlen;
} load_ctx_t;

/* Properties callback: applies one key, warns about unknown ones. */
static int load_pair(const char *key, const char *value, int line, void *arg)
{
    load_ctx_t *ctx = arg;
    char msg[1024];
    if (!value) {
        snprintf(ctx->err, ctx->errlen, "%s:%d: %s: malformed \\uXXXX escape",
                 ctx->name, line, key);
        return RMQ_EINVAL;
    }
    rmq_err_t rc = rmq_config_set(ctx->t, ctx->obj, key, value, msg, sizeof(msg));
    if (rc == RMQ_ENOTFOUND) {
        LOG_WARN("%s:%d: unknown key %s, ignored", ctx->name, line, key);
        return RMQ_OK;
    }
    if (rc != RMQ_OK)
        snprintf(ctx->err, ctx->errlen, "%s:%d: %s", ctx->name, line, msg);
    return rc;
}

rmq_err_t rmq_config_load_text(const rmq_cfg_table_t *t, void *obj, const char *text,
                               size_t len, const char *name, char *err, size_t errlen)
{
    load_ctx_t ctx = { t, obj, name, err, errlen };
    int rc = rmq_properties_parse(text, len, load_pair, &ctx);
    if (rc == RMQ_ENOMEM)
        snprintf(err, errlen, "%s: out of memory", name);
    return (rmq_err_t)rc;
}

/* Reads the whole file at path into sb (NUL-terminated, caller frees). */
static rmq_err_t read_file(const char *path, strbuf_t *sb, char *err, size_t errlen)
{
    rmq_err_t rc = RMQ_OK;
    char chunk[4096];
    FILE *f = fopen(path, "rb");
    if (!f) {
        int saved = errno;
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(saved));
        return saved == ENOENT ? RMQ_ENOTFOUND : RMQ_EIO;
    }
    size_t n;
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (sb->len + n > CONFIG_FILE_MAX) {
            snprintf(err, errlen, "%s: larger than %u bytes", path, CONFIG_FILE_MAX);
            rc = RMQ_ETOOBIG;
            goto out;
        }
        if (sb_append(sb, chunk, n) != RMQ_OK) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = RMQ_ENOMEM;
            goto out;
        }
    }
    if (ferror(f)) {
        snprintf(err, errlen, "%s: read failed: %s", path, strerror(errno));
        rc = RMQ_EIO;
    }
out:
    fclose(f);
    return rc;
}

rmq_err_t rmq_config_load(const rmq_cfg_table_t *t, void *obj, const char *path,
                          char *err, size_t errlen)
{
    strbuf_t text = { 0 };
    rmq_err_t rc = read_file(path, &text, err, errlen);
    if (rc == RMQ_OK)
        rc = rmq_config_load_text(t, obj, text.data, text.len, path, err, errlen);
    free(text.data);
    return rc;
}

rmq_err_t rmq_config_get(const rmq_cfg_table_t *t, const void *obj, const char *key,
                         char *buf, size_t buflen)
{
    const rmq_cfg_entry_t *ent = find_entry(t, key);
    if (!ent)
        return RMQ_ENOTFOUND;
    char num[32];
    const char *text = format_value(ent, obj, num, sizeof(num));
    int n = snprintf(buf, buflen, "%s", text);
    return (size_t)n < buflen ? RMQ_OK : RMQ_ETOOBIG;
}

void rmq_properties_print(const char *text, int is_key, FILE *out)
{
    size_t len = strlen(text), end = len;
    while (end > 0 && is_blank(text[end - 1]))
        end--;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)text[i];
        switch (c) {
        case '\\': fputs("\\\\", out); break;
        case '\t': fputs("\\t", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\f': fputs("\\f", out); break;
        case ' ':
            fputs(is_key || i == 0 || i >= end ? "\\ " : " ", out);
            break;
        case '=': case ':':
            if (is_key)
                fputc('\\', out);
            fputc(c, out);
            break;
        case '#': case '!':
            if (is_key && i == 0)
                fputc('\\', out);
            fputc(c, out);
            break;
        default:
            if (c < 0x20 || c == 0x7f)
                fprintf(out, "\\u%04X", c);
            else
                fputc(c, out);
        }
    }
}

void rmq_config_print(const rmq_cfg_table_t *t, const void *obj, FILE *out)
{
    char num[32];
    for (size_t i = 0; i < t->count; i++) {
        const rmq_cfg_entry_t *ent = &t->entries[i];
        fprintf(out, "%s=", ent->key);
        rmq_properties_print(format_value(ent, obj, num, sizeof(num)), 0, out);
        fputc('\n', out);
    }
}

void rmq_config_deinit(const rmq_cfg_table_t *t, void *obj)
{
    for (size_t i = 0; i < t->count; i++) {
        const rmq_cfg_entry_t *ent = &t->entries[i];
        if (ent->type != RMQ_CFG_STR)
            continue;
        free(*(char **)field_of(ent, obj));
        *(char **)field_of(ent, obj) = NULL;
    }
}

void rmq_config_log(const rmq_cfg_table_t *t, const void *obj, const char *source)
{
    char num[32];
    LOG_INFO("effective configuration (%zu keys, from %s):", t->count, source ? source : "defaults");
    for (size_t i = 0; i < t->count; i++) {
        const rmq_cfg_entry_t *ent = &t->entries[i];
        const char *v = format_value(ent, obj, num, sizeof(num));
        LOG_INFO("  %s=%s", ent->key, v[0] && strstr(ent->key, "SecretKey") ? "******" : v);
    }
}
