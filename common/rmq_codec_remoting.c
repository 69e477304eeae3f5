/* rmq_codec_remoting.c: RocketMQ's remoting protocol over the transport
 * (see rmq_codec_remoting.h): the probe, the frame and both header
 * decoders, the encoders, the handler table by request code, and the ACL
 * 1.0 check with the table of what each code needs. Loop thread. */
#include "rmq_codec_remoting.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "rmq_http.h"
#include "rmq_json.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define REMOTING_PREFIX 8          /* length word + type/header-length word */
#define REMOTING_CODE_MAX 32767    /* codes travel as i16 in the binary header */
#define LANGUAGE_OTHER 7

/* The codec's state on one server. */
typedef struct remoting {
    rmq_server_t *srv;
    struct {
        rmq_remoting_handler_fn fn;
        void *arg;
    } *handlers;                   /* indexed by code, nhandlers long */
    size_t nhandlers;
    rmq_acl_t *acl;                /* NULL: no signature check */
    rmq_remoting_needs_fn needs;   /* NULL: code_needs below */
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

/* ---- decoding ------------------------------------------------------------ */

void rmq_remoting_request_clear(rmq_remoting_request_t *req)
{
    for (size_t i = 0; i < req->n_fields; i++) {
        free(req->fields[i].key);
        free(req->fields[i].value);
    }
    free(req->fields);
    free(req->remark);
    memset(req, 0, sizeof(*req));
}

const char *rmq_remoting_field(const rmq_remoting_request_t *req, const char *key)
{
    for (size_t i = 0; i < req->n_fields; i++)
        if (strcmp(req->fields[i].key, key) == 0)
            return req->fields[i].value;
    return NULL;
}

/* Appends a copy of key[0..klen) = value[0..vlen) to req; -1 on ENOMEM. */
static int add_field(rmq_remoting_request_t *req, const char *key, size_t klen,
                     const char *value, size_t vlen)
{
    rmq_remoting_field_t *grown = realloc(req->fields, (req->n_fields + 1) * sizeof(*grown));

    if (grown == NULL)
        return -1;
    req->fields = grown;
    char *k = strndup(key, klen), *v = strndup(value, vlen);
    if (k == NULL || v == NULL) {
        free(k);
        free(v);
        return -1;
    }
    req->fields[req->n_fields++] = (rmq_remoting_field_t){ k, v };
    return 0;
}

/* An integer member of the JSON header (absent: dflt). -1 when present but bad. */
static int json_int_member(const rmq_json_t *h, const char *key, int64_t min, int64_t max,
                           int64_t dflt, int64_t *out)
{
    const rmq_json_t *v = rmq_json_get(h, key);

    *out = dflt;
    if (v == NULL || v->type == RMQ_JSON_NULL)
        return 0;
    return rmq_json_int(v, min, max, out);
}

/* language: a name ("JAVA") or its number; anything else is OTHER. */
static int json_language(const rmq_json_t *h)
{
    const rmq_json_t *v = rmq_json_get(h, "language");
    int64_t n;

    if (v != NULL && v->type == RMQ_JSON_STRING)
        for (size_t i = 0; i < LANGUAGES; i++)
            if (strcmp(v->str, language_names[i]) == 0)
                return (int)i;
    if (v != NULL && rmq_json_int(v, 0, 255, &n) == 0)
        return (int)n;
    return LANGUAGE_OTHER;
}

/* extFields: string, number and boolean values are kept as text; null skipped. */
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

static rmq_err_t decode_json_header(const uint8_t *p, size_t len, rmq_remoting_request_t *req,
                                    const char **why)
{
    char err[128];
    int64_t code, opaque, flag, version;
    rmq_err_t rc = RMQ_EPROTO;
    rmq_json_t *h = rmq_json_parse((const char *)p, len, err, sizeof(err));

    if (h == NULL || h->type != RMQ_JSON_OBJECT) {
        *why = "JSON header does not parse as an object";
        goto out;
    }
    if (rmq_json_int(rmq_json_get(h, "code"), 0, REMOTING_CODE_MAX, &code) != 0 ||
        json_int_member(h, "opaque", INT32_MIN, INT32_MAX, 0, &opaque) != 0 ||
        json_int_member(h, "flag", INT32_MIN, INT32_MAX, 0, &flag) != 0 ||
        json_int_member(h, "version", INT32_MIN, INT32_MAX, 0, &version) != 0) {
        *why = "JSON header: code, opaque, flag or version missing or not an integer";
        goto out;
    }
    req->code = (int)code;
    req->opaque = (int32_t)opaque;
    req->flags = (int32_t)flag;
    req->version = (int)version;
    req->language = json_language(h);
    const char *remark = rmq_json_scalar(rmq_json_get(h, "remark"));
    if ((req->remark = strdup(remark != NULL ? remark : "")) == NULL) {
        *why = "out of memory";
        rc = RMQ_ENOMEM;
        goto out;
    }
    rc = json_fields(rmq_json_get(h, "extFields"), req, why);
out:
    rmq_json_free(h);
    return rc;
}

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
    const uint8_t *end = p + len, *s, *ext_end;
    size_t n;

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
    if ((req->remark = strndup((const char *)s, n)) == NULL)
        goto nomem;
    if (read_str(&p, end, 4, &s, &n) != 0)
        return RMQ_EPROTO;
    ext_end = s + n;
    for (p = s; p < ext_end;) {
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

rmq_err_t rmq_remoting_encode(struct evbuffer *out, int type, int code, int32_t opaque,
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

/* What each code needs beyond a valid signature (name-server codes; the
 * broker's join this table as their handlers arrive). */
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

/* What req needs: rm's needs function, else the table (admin or any account). */
static int request_needs(const remoting_t *rm, const rmq_remoting_request_t *req, rmq_acl_need_t *needs,
                         size_t cap)
{
    if (rm->needs != NULL)
        return rm->needs(req, needs, cap);
    return code_shape(req->code) == NEED_ADMIN ? -1 : 0;
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
    rmq_acl_need_t needs[4] = { { RMQ_ACL_ADMIN, 0, NULL } };
    int n = request_needs(rm, req, needs, sizeof(needs) / sizeof(needs[0]));
    if (n < 0) {
        needs[0] = (rmq_acl_need_t){ RMQ_ACL_ADMIN, 0, NULL };
        n = 1;
    }
    return rmq_acl_allows(a, needs, (size_t)n, op, remark, remarklen);
}

/* ---- dispatch ------------------------------------------------------------ */

static void dispatch(remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req)
{
    char remark[512];

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
    if ((size_t)req->code >= rm->nhandlers || rm->handlers[req->code].fn == NULL) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED,
                            "request code %d not supported by %s", req->code,
                            rmq_server_name(rm->srv));
        return;
    }
    rm->handlers[req->code].fn(conn, req, rm->handlers[req->code].arg);
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

    if (rm == NULL || code < 0 || code > REMOTING_CODE_MAX)
        return RMQ_EINVAL;
    if ((size_t)code >= rm->nhandlers) {
        void *grown = realloc(rm->handlers, ((size_t)code + 1) * sizeof(rm->handlers[0]));
        if (grown == NULL)
            return RMQ_ENOMEM;
        rm->handlers = grown;
        memset(&rm->handlers[rm->nhandlers], 0,
               ((size_t)code + 1 - rm->nhandlers) * sizeof(rm->handlers[0]));
        rm->nhandlers = (size_t)code + 1;
    }
    rm->handlers[code].fn = fn;
    rm->handlers[code].arg = arg;
    return RMQ_OK;
}

void rmq_remoting_set_acl(rmq_server_t *srv, rmq_acl_t *acl)
{
    remoting_t *rm = rmq_server_codec_state(srv, &rmq_codec_remoting);

    if (rm != NULL)
        rm->acl = acl;
}

void rmq_remoting_set_needs(rmq_server_t *srv, rmq_remoting_needs_fn fn)
{
    remoting_t *rm = rmq_server_codec_state(srv, &rmq_codec_remoting);

    if (rm != NULL)
        rm->needs = fn;
}
