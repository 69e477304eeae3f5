/* rmq_etcd.c: the etcd v3 JSON-gateway client (rmq_etcd.h): request
 * bodies, the answer decoder, and the calls over evhttp with failover
 * between endpoints. */
#include "rmq_etcd.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <openssl/evp.h>

#include "rmq_base64.h"
#include "rmq_json.h"
#include "rmq_rpc.h"

/* ---- base64 -------------------------------------------------------------- */

/* Appends the base64 of s[0..n) to out, quoted. */
static rmq_err_t b64_quoted(struct evbuffer *out, const char *s, size_t n)
{
    if (n > RMQ_ETCD_ANSWER_MAX)
        return RMQ_ETOOBIG;
    unsigned char *enc = malloc(4 * ((n + 2) / 3) + 1);
    if (!enc)
        return RMQ_ENOMEM;
    int len = EVP_EncodeBlock(enc, (const unsigned char *)s, (int)n);
    int rc = evbuffer_add(out, "\"", 1) | evbuffer_add(out, enc, (size_t)len) |
             evbuffer_add(out, "\"", 1);
    free(enc);
    return rc == 0 ? RMQ_OK : RMQ_ENOMEM;
}


/* ---- request bodies ------------------------------------------------------ */

/* Appends "name":"<base64 of key>" (key non-empty). */
static rmq_err_t put_key(struct evbuffer *out, const char *name, const char *key)
{
    if (!key || !*key)
        return RMQ_EINVAL;
    if (evbuffer_add_printf(out, "\"%s\":", name) < 0)
        return RMQ_ENOMEM;
    return b64_quoted(out, key, strlen(key));
}

rmq_err_t rmq_etcd_encode_range(struct evbuffer *out, const char *key, int prefix)
{
    rmq_err_t rc;

    if (evbuffer_add(out, "{", 1) != 0)
        return RMQ_ENOMEM;
    if ((rc = put_key(out, "key", key)) != RMQ_OK)
        return rc;
    if (prefix) {
        /* range_end: the key with its last byte raised by one ("\0": all keys
         * from key on when every byte is 0xff) */
        size_t n = strlen(key);
        char *end = strdup(key);
        if (!end)
            return RMQ_ENOMEM;
        while (n > 0 && (unsigned char)end[n - 1] == 0xff)
            n--;
        if (n > 0)
            end[n - 1] = (char)((unsigned char)end[n - 1] + 1);
        rc = evbuffer_add(out, ",\"range_end\":", 13) == 0 ? b64_quoted(out, end, n ? n : 1)
                                                             : RMQ_ENOMEM;
        free(end);
        if (rc != RMQ_OK)
            return rc;
    }
    return evbuffer_add(out, "}", 1) == 0 ? RMQ_OK : RMQ_ENOMEM;
}

/* Appends the fields of a put (no braces). */
static rmq_err_t put_fields(struct evbuffer *out, const char *key, const char *value,
                            size_t value_len, int64_t lease)
{
    rmq_err_t rc = put_key(out, "key", key);

    if (rc != RMQ_OK)
        return rc;
    if (evbuffer_add(out, ",\"value\":", 9) != 0)
        return RMQ_ENOMEM;
    if ((rc = b64_quoted(out, value ? value : "", value ? value_len : 0)) != RMQ_OK)
        return rc;
    if (lease && evbuffer_add_printf(out, ",\"lease\":\"%lld\"", (long long)lease) < 0)
        return RMQ_ENOMEM;
    return RMQ_OK;
}

rmq_err_t rmq_etcd_encode_put(struct evbuffer *out, const char *key, const char *value,
                              size_t value_len, int64_t lease)
{
    rmq_err_t rc;

    if (evbuffer_add(out, "{", 1) != 0)
        return RMQ_ENOMEM;
    if ((rc = put_fields(out, key, value, value_len, lease)) != RMQ_OK)
        return rc;
    return evbuffer_add(out, "}", 1) == 0 ? RMQ_OK : RMQ_ENOMEM;
}

static rmq_err_t encode_cmp(struct evbuffer *out, const rmq_etcd_cmp_t *c)
{
    static const char *const target[] = { "CREATE", "MOD", "VALUE" };
    rmq_err_t rc;

    if ((unsigned)c->target > RMQ_ETCD_CMP_VALUE)
        return RMQ_EINVAL;
    if (evbuffer_add_printf(out, "{\"result\":\"EQUAL\",\"target\":\"%s\",", target[c->target]) < 0)
        return RMQ_ENOMEM;
    if ((rc = put_key(out, "key", c->key)) != RMQ_OK)
        return rc;
    if (c->target == RMQ_ETCD_CMP_VALUE) {
        if (evbuffer_add(out, ",\"value\":", 9) != 0)
            return RMQ_ENOMEM;
        rc = b64_quoted(out, c->value ? c->value : "", c->value ? c->value_len : 0);
    } else {
        rc = evbuffer_add_printf(out, ",\"%s\":\"%lld\"",
                                 c->target == RMQ_ETCD_CMP_CREATE ? "create_revision" : "mod_revision",
                                 (long long)c->revision) < 0 ? RMQ_ENOMEM : RMQ_OK;
    }
    if (rc != RMQ_OK)
        return rc;
    return evbuffer_add(out, "}", 1) == 0 ? RMQ_OK : RMQ_ENOMEM;
}

static rmq_err_t encode_op(struct evbuffer *out, const rmq_etcd_op_t *op)
{
    static const char *const name[] = { "request_put", "request_range", "request_delete_range" };
    rmq_err_t rc;

    if ((unsigned)op->type > RMQ_ETCD_OP_DELETE)
        return RMQ_EINVAL;
    if (evbuffer_add_printf(out, "{\"%s\":{", name[op->type]) < 0)
        return RMQ_ENOMEM;
    rc = op->type == RMQ_ETCD_OP_PUT ? put_fields(out, op->key, op->value, op->value_len, op->lease)
                                     : put_key(out, "key", op->key);
    if (rc != RMQ_OK)
        return rc;
    return evbuffer_add(out, "}}", 2) == 0 ? RMQ_OK : RMQ_ENOMEM;
}

/* Appends ,"name":[ops...] (nothing when n is 0). */
static rmq_err_t encode_ops(struct evbuffer *out, const char *name, const rmq_etcd_op_t *ops, size_t n)
{
    rmq_err_t rc;

    if (n == 0)
        return RMQ_OK;
    if (evbuffer_add_printf(out, ",\"%s\":[", name) < 0)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < n; i++) {
        if (i && evbuffer_add(out, ",", 1) != 0)
            return RMQ_ENOMEM;
        if ((rc = encode_op(out, &ops[i])) != RMQ_OK)
            return rc;
    }
    return evbuffer_add(out, "]", 1) == 0 ? RMQ_OK : RMQ_ENOMEM;
}

rmq_err_t rmq_etcd_encode_txn(struct evbuffer *out, const rmq_etcd_txn_t *txn)
{
    rmq_err_t rc;

    if (evbuffer_add(out, "{\"compare\":[", 12) != 0)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < txn->n_cmp; i++) {
        if (i && evbuffer_add(out, ",", 1) != 0)
            return RMQ_ENOMEM;
        if ((rc = encode_cmp(out, &txn->cmp[i])) != RMQ_OK)
            return rc;
    }
    if (evbuffer_add(out, "]", 1) != 0)
        return RMQ_ENOMEM;
    if ((rc = encode_ops(out, "success", txn->success, txn->n_success)) != RMQ_OK ||
        (rc = encode_ops(out, "failure", txn->failure, txn->n_failure)) != RMQ_OK)
        return rc;
    return evbuffer_add(out, "}", 1) == 0 ? RMQ_OK : RMQ_ENOMEM;
}

rmq_err_t rmq_etcd_encode_grant(struct evbuffer *out, int64_t ttl_s)
{
    if (ttl_s <= 0)
        return RMQ_EINVAL;
    return evbuffer_add_printf(out, "{\"TTL\":\"%lld\"}", (long long)ttl_s) < 0 ? RMQ_ENOMEM : RMQ_OK;
}

rmq_err_t rmq_etcd_encode_lease(struct evbuffer *out, int64_t id)
{
    if (id == 0)
        return RMQ_EINVAL;
    return evbuffer_add_printf(out, "{\"ID\":\"%lld\"}", (long long)id) < 0 ? RMQ_ENOMEM : RMQ_OK;
}

/* ---- answers ------------------------------------------------------------- */

void rmq_etcd_result_clear(rmq_etcd_result_t *res)
{
    for (size_t i = 0; i < res->n_kvs; i++) {
        free(res->kvs[i].key);
        free(res->kvs[i].value);
    }
    free(res->kvs);
    memset(res, 0, sizeof *res);
}

/* Sets res->err = err with a formatted message; returns err. */
__attribute__((format(printf, 3, 4)))
static rmq_err_t fail(rmq_etcd_result_t *res, rmq_err_t err, const char *fmt, ...)
{
    va_list ap;

    res->err = err;
    va_start(ap, fmt);
    vsnprintf(res->msg, sizeof res->msg, fmt, ap);
    va_end(ap);
    return err;
}

/* obj.name as an integer >= 0 into out (absent: 0, etcd omits zeros). */
static int get_int(const rmq_json_t *obj, const char *name, int64_t *out)
{
    const rmq_json_t *v = rmq_json_get(obj, name);

    *out = 0;
    if (!v)
        return 0;
    return rmq_json_int(v, 0, INT64_MAX, out);
}

/* obj.name, base64, into a heap copy (absent: "" when optional, else -1). */
static int get_b64(const rmq_json_t *obj, const char *name, int optional, char **out, size_t *len)
{
    const rmq_json_t *v = rmq_json_get(obj, name);

    *out = NULL;
    *len = 0;
    if (!v)
        return optional ? ((*out = calloc(1, 1)) ? 0 : -1) : -1;
    if (v->type != RMQ_JSON_STRING)
        return -1;
    return rmq_base64_decode(v->str, v->len, RMQ_ETCD_ANSWER_MAX, out, len);
}

/* Appends the pairs of arr (a "kvs" array, or absent) to res. */
static rmq_err_t decode_kvs(const rmq_json_t *arr, rmq_etcd_result_t *res)
{
    if (!arr)
        return RMQ_OK;
    if (arr->type != RMQ_JSON_ARRAY)
        return fail(res, RMQ_EPROTO, "etcd answer: %s is no array", "kvs");
    if (arr->n == 0)
        return RMQ_OK;
    rmq_etcd_kv_t *grown = realloc(res->kvs, (res->n_kvs + arr->n) * sizeof *grown);
    if (!grown)
        return fail(res, RMQ_ENOMEM, "etcd answer: %s", "out of memory");
    res->kvs = grown;
    for (size_t i = 0; i < arr->n; i++) {
        const rmq_json_t *o = arr->items[i];
        rmq_etcd_kv_t *kv = &res->kvs[res->n_kvs];
        memset(kv, 0, sizeof *kv);
        if (o->type != RMQ_JSON_OBJECT)
            return fail(res, RMQ_EPROTO, "etcd answer: %s", "a kv is no object");
        res->n_kvs++;
        if (get_b64(o, "key", 0, &kv->key, &kv->key_len) != 0)
            return fail(res, RMQ_EPROTO, "etcd answer: kv %s missing or not base64", "key");
        if (get_b64(o, "value", 1, &kv->value, &kv->value_len) != 0)
            return fail(res, RMQ_EPROTO, "etcd answer: kv %s not base64", "value");
        if (get_int(o, "create_revision", &kv->create_revision) || get_int(o, "mod_revision", &kv->mod_revision) ||
            get_int(o, "version", &kv->version) || get_int(o, "lease", &kv->lease))
            return fail(res, RMQ_EPROTO, "etcd answer: kv %s", "revision, version or lease is no integer");
    }
    return RMQ_OK;
}

/* The words of an error answer: "error" (a string, or an object with
 * "message") or "message", and "code" / error.grpc_code. */
static rmq_err_t decode_error(const rmq_json_t *doc, int http_status, rmq_etcd_result_t *res)
{
    const rmq_json_t *e = doc ? rmq_json_get(doc, "error") : NULL;
    const rmq_json_t *code = doc ? rmq_json_get(doc, "code") : NULL;
    const char *words = NULL;
    int64_t c = 0;

    if (e && e->type == RMQ_JSON_OBJECT) {
        code = rmq_json_get(e, "grpc_code");
        e = rmq_json_get(e, "message");
    }
    words = rmq_json_scalar(e);
    if (!words && doc)
        words = rmq_json_scalar(rmq_json_get(doc, "message"));
    if (code && rmq_json_int(code, 0, 1000, &c) == 0)
        res->code = (int)c;
    res->err = RMQ_ESTATUS;
    snprintf(res->msg, sizeof res->msg, "etcd refused the call (HTTP %d, code %d): %s", http_status,
             res->code, words && *words ? words : "no reason given");
    return res->err;
}

static rmq_err_t decode_txn(const rmq_json_t *doc, rmq_etcd_result_t *res)
{
    const rmq_json_t *ok = rmq_json_get(doc, "succeeded");
    const rmq_json_t *resp = rmq_json_get(doc, "responses");

    if (ok && ok->type != RMQ_JSON_BOOL)
        return fail(res, RMQ_EPROTO, "etcd answer: %s is no boolean", "succeeded");
    res->succeeded = ok && strcmp(ok->str, "true") == 0;
    if (!resp)
        return RMQ_OK;
    if (resp->type != RMQ_JSON_ARRAY)
        return fail(res, RMQ_EPROTO, "etcd answer: %s is no array", "responses");
    for (size_t i = 0; i < resp->n; i++) {
        if (resp->items[i]->type != RMQ_JSON_OBJECT)
            return fail(res, RMQ_EPROTO, "etcd answer: %s", "a txn response is no object");
        const rmq_json_t *range = rmq_json_get(resp->items[i], "response_range");
        if (range && range->type != RMQ_JSON_OBJECT)
            return fail(res, RMQ_EPROTO, "etcd answer: %s is no object", "response_range");
        if (range && decode_kvs(rmq_json_get(range, "kvs"), res) != RMQ_OK)
            return res->err;
    }
    return RMQ_OK;
}

/* A lease answer: grant's fields at the top, keepalive's under "result". */
static rmq_err_t decode_lease(rmq_etcd_call_t call, const rmq_json_t *doc, rmq_etcd_result_t *res)
{
    const rmq_json_t *o = doc;

    if (call == RMQ_ETCD_KEEPALIVE) {
        o = rmq_json_get(doc, "result");
        if (!o || o->type != RMQ_JSON_OBJECT)
            return fail(res, RMQ_EPROTO, "etcd answer: %s missing", "keepalive result");
    }
    const char *words = rmq_json_scalar(rmq_json_get(o, "error"));
    if (words && *words)
        return decode_error(o, 200, res);
    if (get_int(o, "ID", &res->lease_id) || get_int(o, "TTL", &res->ttl))
        return fail(res, RMQ_EPROTO, "etcd answer: lease %s", "ID or TTL is no integer");
    if (call == RMQ_ETCD_KEEPALIVE && res->ttl == 0)
        return fail(res, RMQ_ENOTFOUND, "etcd: lease %s (expired or revoked)", "not found");
    if (res->lease_id == 0)
        return fail(res, RMQ_EPROTO, "etcd answer: lease %s missing", "ID");
    return RMQ_OK;
}

/* The answer's JSON: the whole body, or a keepalive stream's first line. */
static rmq_json_t *parse_body(rmq_etcd_call_t call, const char *body, size_t len, char *err, size_t errlen)
{
    if (call == RMQ_ETCD_KEEPALIVE) {
        const char *nl = memchr(body, '\n', len);
        if (nl)
            len = (size_t)(nl - body);
    }
    return rmq_json_parse(body, len, err, errlen);
}

rmq_err_t rmq_etcd_decode(rmq_etcd_call_t call, int http_status, const char *body, size_t len,
                          rmq_etcd_result_t *res)
{
    char jerr[128];
    rmq_json_t *doc;

    memset(res, 0, sizeof *res);
    if (len > RMQ_ETCD_ANSWER_MAX)
        return fail(res, RMQ_EPROTO, "etcd answer: %s", "over 4 MiB");
    doc = parse_body(call, body ? body : "", body ? len : 0, jerr, sizeof jerr);
    if (http_status != 200) {
        decode_error(doc && doc->type == RMQ_JSON_OBJECT ? doc : NULL, http_status, res);
        goto out;
    }
    if (!doc) {
        fail(res, RMQ_EPROTO, "etcd answer is no JSON: %s", jerr);
        goto out;
    }
    if (doc->type != RMQ_JSON_OBJECT) {
        fail(res, RMQ_EPROTO, "etcd answer: %s", "no JSON object");
        goto out;
    }
    const rmq_json_t *hdr = rmq_json_get(call == RMQ_ETCD_KEEPALIVE ? rmq_json_get(doc, "result") : doc,
                                         "header");
    if (hdr && (hdr->type != RMQ_JSON_OBJECT || get_int(hdr, "revision", &res->revision))) {
        fail(res, RMQ_EPROTO, "etcd answer: %s", "header.revision is no integer");
        goto out;
    }
    switch (call) {
    case RMQ_ETCD_RANGE:
        decode_kvs(rmq_json_get(doc, "kvs"), res);
        break;
    case RMQ_ETCD_TXN:
        decode_txn(doc, res);
        break;
    case RMQ_ETCD_GRANT:
    case RMQ_ETCD_KEEPALIVE:
        decode_lease(call, doc, res);
        break;
    case RMQ_ETCD_PUT:
    case RMQ_ETCD_REVOKE:
        if (!hdr)
            fail(res, RMQ_EPROTO, "etcd answer: %s missing", "header");
        break;
    }
out:
    rmq_json_free(doc);
    if (res->err != RMQ_OK) {
        /* no half-decoded pairs behind an error */
        rmq_etcd_result_t keep = *res;
        keep.kvs = NULL;
        keep.n_kvs = 0;
        rmq_etcd_result_clear(res);
        *res = keep;
    }
    return res->err;
}

/* ---- the client ---------------------------------------------------------- */

typedef struct etcd_endpoint {
    char host[256];
    int port;
    char name[300];               /* "host:port" */
    struct evhttp_connection *conn;
} etcd_endpoint_t;

typedef struct etcd_req etcd_req_t;

struct rmq_etcd {
    struct event_base *base;
    etcd_endpoint_t ep[RMQ_ETCD_MAX_ENDPOINTS];
    size_t n_ep;
    size_t cur;                   /* the endpoint calls go to */
    int timeout_ms;
    int closing;                  /* in rmq_etcd_free: no new calls */
    etcd_req_t *inflight;         /* doubly linked */
};

/* One call: its body is kept so it can be sent again to the next endpoint. */
struct etcd_req {
    rmq_etcd_t *e;
    rmq_etcd_call_t call;
    struct evbuffer *body;
    size_t ep;                    /* endpoint of the attempt in flight */
    size_t tried;                 /* endpoints tried so far */
    struct evhttp_request *http;  /* NULL between attempts */
    int timed_out;
    struct event *later;          /* the next attempt, or the failure, off the caller's stack */
    rmq_etcd_cb cb;
    void *arg;
    etcd_req_t *prev, *next;
};

static const char *const etcd_paths[] = {
    [RMQ_ETCD_RANGE] = "/v3/kv/range",
    [RMQ_ETCD_PUT] = "/v3/kv/put",
    [RMQ_ETCD_TXN] = "/v3/kv/txn",
    [RMQ_ETCD_GRANT] = "/v3/lease/grant",
    [RMQ_ETCD_KEEPALIVE] = "/v3/lease/keepalive",
    [RMQ_ETCD_REVOKE] = "/v3/lease/revoke",
};

/* Parses one endpoint "[http://]host:port" into ep. */
static int endpoint_parse(const char *text, size_t n, etcd_endpoint_t *ep)
{
    char buf[300];

    if (n >= 7 && strncmp(text, "http://", 7) == 0) {
        text += 7;
        n -= 7;
    }
    if (n == 0 || n >= sizeof buf)
        return -1;
    memcpy(buf, text, n);
    buf[n] = '\0';
    if (n && buf[n - 1] == '/')
        buf[--n] = '\0';
    if (rmq_addr_split(buf, ep->host, sizeof ep->host, &ep->port) != RMQ_OK)
        return -1;
    snprintf(ep->name, sizeof ep->name, "%s", buf);
    return 0;
}

rmq_etcd_t *rmq_etcd_new(struct event_base *base, const char *endpoints, int timeout_ms,
                         char *err, size_t errlen)
{
    rmq_etcd_t *e = calloc(1, sizeof *e);
    const char *p = endpoints ? endpoints : "";

    if (!e) {
        snprintf(err, errlen, "controllerEtcdEndpoints: out of memory");
        return NULL;
    }
    e->base = base;
    e->timeout_ms = timeout_ms > 0 ? timeout_ms : 3000;
    while (*p) {
        size_t n = strcspn(p, ",;");
        while (n && (*p == ' ' || *p == '\t')) {
            p++;
            n--;
        }
        size_t t = n;
        while (t && (p[t - 1] == ' ' || p[t - 1] == '\t'))
            t--;
        if (t && (e->n_ep == RMQ_ETCD_MAX_ENDPOINTS || endpoint_parse(p, t, &e->ep[e->n_ep]) != 0)) {
            snprintf(err, errlen, "controllerEtcdEndpoints: '%.*s' is %s", (int)t, p,
                     e->n_ep == RMQ_ETCD_MAX_ENDPOINTS ? "one endpoint too many (at most 8)"
                                                       : "no host:port");
            goto fail;
        }
        e->n_ep += t != 0;
        p += n + (p[n] != '\0');
    }
    if (e->n_ep == 0) {
        snprintf(err, errlen, "controllerEtcdEndpoints: empty; want host:port[,host:port...]");
        goto fail;
    }
    return e;
fail:
    free(e);
    return NULL;
}

const char *rmq_etcd_endpoint(const rmq_etcd_t *e)
{
    return e->ep[e->cur].name;
}

static void req_free(etcd_req_t *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else
        r->e->inflight = r->next;
    if (r->next)
        r->next->prev = r->prev;
    if (r->later)
        event_free(r->later);
    evbuffer_free(r->body);
    free(r);
}

/* Hands res to the caller and ends the call. */
static void req_finish(etcd_req_t *r, rmq_etcd_result_t *res)
{
    rmq_etcd_cb cb = r->cb;
    void *arg = r->arg;

    req_free(r);
    cb(res, arg);
    rmq_etcd_result_clear(res);
}

static void req_attempt(etcd_req_t *r);

/* The attempt on r->ep failed without an answer: the client moves on to the
 * next endpoint, and r is sent there unless every endpoint was tried. */
static void req_failover(etcd_req_t *r)
{
    rmq_etcd_t *e = r->e;

    if (e->cur == r->ep)
        e->cur = (r->ep + 1) % e->n_ep;
    if (++r->tried < e->n_ep) {
        req_attempt(r);
        return;
    }
    rmq_etcd_result_t res = { 0 };
    res.err = r->timed_out ? RMQ_ETIMEDOUT : RMQ_ECONNECT;
    snprintf(res.msg, sizeof res.msg, "etcd: no endpoint answered %s (%zu tried, last %s: %s)",
             etcd_paths[r->call], r->tried, e->ep[r->ep].name,
             r->timed_out ? "timed out" : "connection failed");
    req_finish(r, &res);
}

static void req_error_cb(enum evhttp_request_error error, void *arg)
{
    etcd_req_t *r = arg;

    r->timed_out = error == EVREQ_HTTP_TIMEOUT;
}

static void req_done_cb(struct evhttp_request *http, void *arg)
{
    etcd_req_t *r = arg;
    int status = http ? evhttp_request_get_response_code(http) : 0;

    r->http = NULL;
    /* 503: this member has no leader or is stopping; another may serve */
    if (status == 0 || status == 503) {
        req_failover(r);
        return;
    }
    struct evbuffer *in = evhttp_request_get_input_buffer(http);
    size_t len = evbuffer_get_length(in);
    rmq_etcd_result_t res;
    if (len > RMQ_ETCD_ANSWER_MAX) {
        memset(&res, 0, sizeof res);
        fail(&res, RMQ_EPROTO, "etcd answer: %s", "over 4 MiB");
    } else {
        rmq_etcd_decode(r->call, status, (const char *)evbuffer_pullup(in, -1), len, &res);
    }
    req_finish(r, &res);
}

static void req_later_cb(evutil_socket_t fd, short what, void *arg)
{
    req_failover(arg);
}

/* Sends r to e->cur; a failure to even queue it is handled off this stack. */
static void req_attempt(etcd_req_t *r)
{
    rmq_etcd_t *e = r->e;
    etcd_endpoint_t *ep = &e->ep[e->cur];
    struct timeval tv = { e->timeout_ms / 1000, (e->timeout_ms % 1000) * 1000 };

    r->ep = e->cur;
    r->timed_out = 0;
    if (!ep->conn) {
        ep->conn = evhttp_connection_base_new(e->base, NULL, ep->host, (unsigned short)ep->port);
        if (ep->conn) {
            evhttp_connection_set_timeout_tv(ep->conn, &tv);
            evhttp_connection_set_retries(ep->conn, 0);
        }
    }
    struct evhttp_request *http = ep->conn ? evhttp_request_new(req_done_cb, r) : NULL;
    if (!http)
        goto later;
    evhttp_request_set_error_cb(http, req_error_cb);
    struct evkeyvalq *h = evhttp_request_get_output_headers(http);
    evhttp_add_header(h, "Host", ep->name);
    evhttp_add_header(h, "Content-Type", "application/json");
    if (evbuffer_add(evhttp_request_get_output_buffer(http), evbuffer_pullup(r->body, -1),
                     evbuffer_get_length(r->body)) != 0) {
        evhttp_request_free(http);
        goto later;
    }
    if (evhttp_make_request(ep->conn, http, EVHTTP_REQ_POST, etcd_paths[r->call]) != 0)
        goto later;
    r->http = http;
    return;
later:
    event_active(r->later, EV_TIMEOUT, 0);
}

/* Starts a call whose body is in body (taken; NULL when it could not be
 * made), rc the result of encoding it. */
static rmq_err_t req_start(rmq_etcd_t *e, rmq_etcd_call_t call, struct evbuffer *body, rmq_err_t rc,
                           rmq_etcd_cb cb, void *arg)
{
    etcd_req_t *r = NULL;

    if (rc == RMQ_OK && e->closing)
        rc = RMQ_ESHUTDOWN;
    if (rc != RMQ_OK)
        goto fail;
    rc = RMQ_ENOMEM;
    if (!(r = calloc(1, sizeof *r)))
        goto fail;
    r->later = evtimer_new(e->base, req_later_cb, r);
    if (!r->later)
        goto fail;
    r->e = e;
    r->call = call;
    r->body = body;
    r->cb = cb;
    r->arg = arg;
    r->next = e->inflight;
    if (e->inflight)
        e->inflight->prev = r;
    e->inflight = r;
    req_attempt(r);
    return RMQ_OK;
fail:
    free(r);
    if (body)
        evbuffer_free(body);
    return rc;
}

rmq_err_t rmq_etcd_range(rmq_etcd_t *e, const char *key, int prefix, rmq_etcd_cb cb, void *arg)
{
    struct evbuffer *b = evbuffer_new();

    return req_start(e, RMQ_ETCD_RANGE, b, b ? rmq_etcd_encode_range(b, key, prefix) : RMQ_ENOMEM,
                     cb, arg);
}

rmq_err_t rmq_etcd_put(rmq_etcd_t *e, const char *key, const char *value, size_t value_len,
                       int64_t lease, rmq_etcd_cb cb, void *arg)
{
    struct evbuffer *b = evbuffer_new();

    return req_start(e, RMQ_ETCD_PUT, b,
                     b ? rmq_etcd_encode_put(b, key, value, value_len, lease) : RMQ_ENOMEM, cb, arg);
}

rmq_err_t rmq_etcd_txn(rmq_etcd_t *e, const rmq_etcd_txn_t *txn, rmq_etcd_cb cb, void *arg)
{
    struct evbuffer *b = evbuffer_new();

    return req_start(e, RMQ_ETCD_TXN, b, b ? rmq_etcd_encode_txn(b, txn) : RMQ_ENOMEM, cb, arg);
}

rmq_err_t rmq_etcd_lease_grant(rmq_etcd_t *e, int64_t ttl_s, rmq_etcd_cb cb, void *arg)
{
    struct evbuffer *b = evbuffer_new();

    return req_start(e, RMQ_ETCD_GRANT, b, b ? rmq_etcd_encode_grant(b, ttl_s) : RMQ_ENOMEM, cb, arg);
}

rmq_err_t rmq_etcd_lease_keepalive(rmq_etcd_t *e, int64_t id, rmq_etcd_cb cb, void *arg)
{
    struct evbuffer *b = evbuffer_new();

    return req_start(e, RMQ_ETCD_KEEPALIVE, b, b ? rmq_etcd_encode_lease(b, id) : RMQ_ENOMEM, cb, arg);
}

rmq_err_t rmq_etcd_lease_revoke(rmq_etcd_t *e, int64_t id, rmq_etcd_cb cb, void *arg)
{
    struct evbuffer *b = evbuffer_new();

    return req_start(e, RMQ_ETCD_REVOKE, b, b ? rmq_etcd_encode_lease(b, id) : RMQ_ENOMEM, cb, arg);
}

void rmq_etcd_free(rmq_etcd_t *e)
{
    if (!e)
        return;
    e->closing = 1;
    /* freeing a connection frees its queued requests without their callbacks */
    for (size_t i = 0; i < e->n_ep; i++)
        if (e->ep[i].conn)
            evhttp_connection_free(e->ep[i].conn);
    while (e->inflight) {
        rmq_etcd_result_t res = { .err = RMQ_ESHUTDOWN };
        snprintf(res.msg, sizeof res.msg, "etcd client closed before %s was answered",
                 etcd_paths[e->inflight->call]);
        req_finish(e->inflight, &res);
    }
    free(e);
}
