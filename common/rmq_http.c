/* rmq_http.c: the evhttp wrapper behind the metrics and console port: routes
 * with their access level, HTTPS, and HTTP Basic accounts checked against
 * the daemon's ACL (see rmq_http.h). */
#include "rmq_http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <netinet/in.h>
#include <unistd.h>

#include <event2/bufferevent.h>
#include <event2/keyvalq_struct.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>

#include "rmq_log.h"
#include "rmq_rpc.h"
#include "rmq_time.h"

#define HTTP_MAX_HEADERS 16384
#define HTTP_MAX_BODY 16384
#define HTTP_TIMEOUT_S 30

#define HTTP_REALM "Basic realm=\"rmq\", charset=\"UTF-8\""

typedef struct http_route {
    rmq_http_t *h;
    rmq_http_access_t access;
    rmq_http_fn fn;
    void *arg;
} http_route_t;

struct rmq_http {
    struct event_base *base;
    struct evhttp *http;
    int port;
    SSL_CTX *ssl_ctx;                /* borrowed; NULL: plain HTTP */
    const rmq_acl_t *acl;            /* borrowed; NULL: every route public */
    http_route_t routes[RMQ_HTTP_MAX_ROUTES];
    size_t n_routes;
    http_route_t fallback;
    char name[32];
};

/* ---- accounts ------------------------------------------------------------ */

int rmq_http_basic_parse(const char *value, rmq_acl_credentials_t *cred)
{
    unsigned char dec[sizeof(cred->access_key) + sizeof(cred->secret_key) + 4];
    memset(cred, 0, sizeof(*cred));
    if (!value || strncasecmp(value, "Basic ", 6) != 0)
        return -1;
    value += 6;
    while (*value == ' ')
        value++;
    size_t n = strcspn(value, " \t\r\n");
    if (n == 0 || n % 4 != 0 || n / 4 * 3 > sizeof(dec) - 1 || value[n + strspn(value + n, " \t")])
        return -1;
    int len = EVP_DecodeBlock(dec, (const unsigned char *)value, (int)n);
    for (size_t pad = n; len >= 0 && pad > 0 && value[pad - 1] == '='; pad--)
        len--; /* EVP_DecodeBlock counts padding as zero bytes */
    if (len < 0 || memchr(dec, '\0', (size_t)len))
        goto bad;
    const unsigned char *colon = memchr(dec, ':', (size_t)len);
    size_t aklen = colon ? (size_t)(colon - dec) : 0;
    size_t sklen = colon ? (size_t)len - aklen - 1 : 0;
    if (!colon || aklen == 0 || aklen >= sizeof(cred->access_key) || sklen >= sizeof(cred->secret_key))
        goto bad;
    memcpy(cred->access_key, dec, aklen);
    memcpy(cred->secret_key, colon + 1, sklen);
    OPENSSL_cleanse(dec, sizeof(dec));
    return 0;
bad:
    OPENSSL_cleanse(dec, sizeof(dec));
    memset(cred, 0, sizeof(*cred));
    return -1;
}

int rmq_http_account(struct evhttp_request *req, rmq_acl_credentials_t *cred)
{
    const char *v = evhttp_find_header(evhttp_request_get_input_headers(req), "Authorization");
    return v && rmq_http_basic_parse(v, cred) == 0;
}

/* "ip:port" (or "[v6]:port") of req's peer, as the ACL reads peers. */
static void peer_of(struct evhttp_request *req, char *buf, size_t len)
{
    struct evhttp_connection *evcon = evhttp_request_get_connection(req);
    char *host = NULL;
    ev_uint16_t port = 0;
    if (evcon)
        evhttp_connection_get_peer(evcon, &host, &port);
    const char *ip = host ? host : "";
    snprintf(buf, len, strchr(ip, ':') ? "[%s]:%u" : "%s:%u", ip, (unsigned)port);
}

/* 1 if the presented secret equals the account's, in time that depends on
 * neither secret: both are hashed and the digests compared. */
static int secret_matches(const char *want, const char *got)
{
    unsigned char dw[EVP_MAX_MD_SIZE], dg[EVP_MAX_MD_SIZE];
    unsigned int lw = 0, lg = 0;
    int ok = EVP_Digest(want, strlen(want), dw, &lw, EVP_sha256(), NULL) &&
             EVP_Digest(got, strlen(got), dg, &lg, EVP_sha256(), NULL) && lw == lg &&
             CRYPTO_memcmp(dw, dg, lw) == 0;
    OPENSSL_cleanse(dw, sizeof(dw));
    OPENSSL_cleanse(dg, sizeof(dg));
    return ok && want[0] != '\0';
}

/* Asks the ACL's neutral policy whether cred (NULL: none) may use a route
 * that needs admin (or any valid account) from peer: the ACL's own rules
 * decide (whitelists, allowed addresses, the admin flag). 1 if allowed;
 * else 0, why set. */
static int acl_allows(rmq_http_t *h, const char *peer, const rmq_acl_credentials_t *cred,
                      int need_admin, char *why, size_t whylen)
{
    const rmq_acl_account_t *account = NULL;
    const rmq_acl_need_t admin = {.resource = RMQ_ACL_ADMIN};
    int64_t now = rmq_wall_ms();
    int rc = rmq_acl_authenticate(h->acl, peer, cred ? cred->access_key : "", now, now, "HTTP",
                                  &account, why, whylen);
    if (rc == 1)
        return 1;
    if (rc < 0)
        return 0;
    if (!cred || !secret_matches(rmq_acl_account_secret(account), cred->secret_key)) {
        snprintf(why, whylen, "HTTP: wrong secret key for account %s", cred ? cred->access_key : "");
        return 0;
    }
    return rmq_acl_allows(account, &admin, need_admin ? 1 : 0, "HTTP", why, whylen);
}

/* Answers 401 (asking for an account) or 403 with text; logs the ACL's reason. */
static void deny(rmq_http_t *h, struct evhttp_request *req, const char *peer, int code, const char *text,
                 const char *why)
{
    LOG_WARN_RL("%s: refused HTTP %s from %s (%d): %s", h->name, evhttp_request_get_uri(req), peer, code, why);
    if (code == 401)
        evhttp_add_header(evhttp_request_get_output_headers(req), "WWW-Authenticate", HTTP_REALM);
    rmq_http_replyf(req, code, "%s\n", text);
}

/* 1 when req may use a route of level access; else answers 401/403 and returns 0. */
static int authorize(rmq_http_t *h, struct evhttp_request *req, rmq_http_access_t access)
{
    char peer[128], why[512];
    rmq_acl_credentials_t cred;
    if (!h->acl || access == RMQ_HTTP_PUBLIC)
        return 1;
    peer_of(req, peer, sizeof(peer));
    int has = rmq_http_account(req, &cred);
    int ok = acl_allows(h, peer, has ? &cred : NULL, 0, why, sizeof(why));
    if (!ok) {
        deny(h, req, peer, 401,
             has ? "access key or secret key refused (or the account may not connect from this address)"
                 : "an account is needed: HTTP Basic with an access key and its secret key",
             why);
    } else if (access == RMQ_HTTP_ADMIN &&
               !(ok = acl_allows(h, peer, has ? &cred : NULL, 1, why, sizeof(why)))) {
        deny(h, req, peer, 403, "no permission: the console needs an admin account", why);
    }
    OPENSSL_cleanse(&cred, sizeof(cred));
    return ok;
}

/* ---- routing -------------------------------------------------------------- */

static void on_route(struct evhttp_request *req, void *arg)
{
    http_route_t *r = arg;
    if (authorize(r->h, req, r->access))
        r->fn(req, r->arg);
}

static void on_unrouted(struct evhttp_request *req, void *arg)
{
    rmq_http_t *h = arg;
    if (h->fallback.fn) {
        on_route(req, &h->fallback);
        return;
    }
    rmq_http_replyf(req, 404, "not found: %s\n", evhttp_request_get_uri(req));
}

/* evhttp's bufferevent factory on an HTTPS port: TLS, accepting (evhttp sets the fd). */
static struct bufferevent *tls_bev(struct event_base *base, void *arg)
{
    rmq_http_t *h = arg;
    return rmq_tls_bev_accept(base, -1, h->ssl_ctx, 1);
}

rmq_err_t rmq_http_secure(rmq_http_t *h, const rmq_security_t *sec, char *err, size_t errlen)
{
    if (sec->acl && !sec->server_ctx) {
        snprintf(err, errlen, "with aclEnable=true this port takes HTTP Basic passwords, which must not "
                 "travel in plaintext: set tlsMode=permissive or enforcing (the port then speaks HTTPS) "
                 "or turn the port off");
        return RMQ_EINVAL;
    }
    h->acl = sec->acl;
    h->ssl_ctx = sec->server_ctx;
    if (h->ssl_ctx)
        evhttp_set_bevcb(h->http, tls_bev, h);
    return RMQ_OK;
}

rmq_http_t *rmq_http_new(struct event_base *base, const char *name)
{
    rmq_http_t *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->base = base;
    snprintf(h->name, sizeof(h->name), "%s", name ? name : "http");
    h->http = evhttp_new(base);
    if (!h->http) {
        free(h);
        return NULL;
    }
    evhttp_set_allowed_methods(h->http, EVHTTP_REQ_GET | EVHTTP_REQ_HEAD);
    evhttp_set_max_headers_size(h->http, HTTP_MAX_HEADERS);
    evhttp_set_max_body_size(h->http, HTTP_MAX_BODY);
    evhttp_set_timeout(h->http, HTTP_TIMEOUT_S);
    evhttp_set_gencb(h->http, on_unrouted, h);
    return h;
}

rmq_err_t rmq_http_listen(rmq_http_t *h, const char *host, int port, char *err, size_t errlen)
{
    int fd = rmq_listen_socket(h->name, host, port, SOMAXCONN, err, errlen);
    if (fd < 0)
        return RMQ_EIO;
    if (evhttp_accept_socket_with_handle(h->http, fd) == NULL) {
        snprintf(err, errlen, "cannot serve HTTP on %s:%d", host, port);
        close(fd);
        return RMQ_EIO;
    }
    h->port = rmq_listen_port(fd);
    LOG_INFO("%s: %s listening on %s:%d%s", h->name, h->ssl_ctx ? "HTTPS" : "HTTP", host, h->port,
             h->acl ? " (accounts required)" : "");
    return RMQ_OK;
}

int rmq_http_port(const rmq_http_t *h)
{
    return h->port;
}

rmq_err_t rmq_http_route(rmq_http_t *h, const char *path, rmq_http_access_t access,
                         rmq_http_fn fn, void *arg)
{
    if (h->n_routes == RMQ_HTTP_MAX_ROUTES)
        return RMQ_ENOMEM;
    http_route_t *r = &h->routes[h->n_routes];
    *r = (http_route_t){h, access, fn, arg};
    int rc = evhttp_set_cb(h->http, path, on_route, r);
    if (rc == 0)
        h->n_routes++;
    return rc == 0 ? RMQ_OK : rc == -1 ? RMQ_EEXIST : RMQ_ENOMEM;
}

void rmq_http_fallback(rmq_http_t *h, rmq_http_access_t access, rmq_http_fn fn, void *arg)
{
    h->fallback = (http_route_t){h, access, fn, arg};
}

void rmq_http_free(rmq_http_t *h)
{
    if (!h)
        return;
    if (h->http)
        evhttp_free(h->http);
    free(h);
}

void rmq_http_reply(struct evhttp_request *req, int code, const char *ctype, struct evbuffer *body)
{
    struct evkeyvalq *hdr = evhttp_request_get_output_headers(req);
    if (ctype)
        evhttp_add_header(hdr, "Content-Type", ctype);
    evhttp_add_header(hdr, "Cache-Control", "no-store");
    const char *reason = code == 200 ? "OK" : code == 400 ? "Bad Request" : code == 401 ? "Unauthorized"
                       : code == 403 ? "Forbidden" : code == 404 ? "Not Found" : code == 502 ? "Bad Gateway"
                       : code == 503 ? "Service Unavailable" : "Error";
    evhttp_send_reply(req, code, reason, body);
}

void rmq_http_replyf(struct evhttp_request *req, int code, const char *fmt, ...)
{
    struct evbuffer *body = evbuffer_new();
    if (body) {
        va_list ap;
        va_start(ap, fmt);
        evbuffer_add_vprintf(body, fmt, ap);
        va_end(ap);
    }
    rmq_http_reply(req, code, "text/plain; charset=utf-8", body);
    if (body)
        evbuffer_free(body);
}

int rmq_http_query(struct evhttp_request *req, const char *key, char *buf, size_t len)
{
    struct evkeyvalq q;
    const char *query = evhttp_uri_get_query(evhttp_request_get_evhttp_uri(req));
    int found = 0;
    buf[0] = '\0';
    if (!query || evhttp_parse_query_str(query, &q) != 0)
        return 0;
    const char *v = evhttp_find_header(&q, key);
    if (v) {
        snprintf(buf, len, "%s", v);
        found = 1;
    }
    evhttp_clear_headers(&q);
    return found;
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if invalid. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    size_t need;
    unsigned min;
    if (s[0] < 0x80)
        return 1;
    if ((s[0] & 0xE0) == 0xC0) {
        need = 2;
        min = 0x80;
    } else if ((s[0] & 0xF0) == 0xE0) {
        need = 3;
        min = 0x800;
    } else if ((s[0] & 0xF8) == 0xF0) {
        need = 4;
        min = 0x10000;
    } else {
        return 0;
    }
    if (need > n)
        return 0;
    unsigned cp = s[0] & (0x7F >> need);
    for (size_t i = 1; i < need; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return need;
}

void rmq_json_strn(struct evbuffer *out, const char *s, size_t n)
{
    const unsigned char *p = (const unsigned char *)s;
    evbuffer_add(out, "\"", 1);
    size_t i = 0;
    while (i < n) {
        size_t run = i;
        while (run < n && p[run] >= 0x20 && p[run] < 0x80 && p[run] != '"' && p[run] != '\\')
            run++;
        if (run > i) {
            evbuffer_add(out, p + i, run - i);
            i = run;
            continue;
        }
        unsigned char c = p[i];
        if (c == '"' || c == '\\') {
            char esc[2] = {'\\', (char)c};
            evbuffer_add(out, esc, 2);
            i++;
        } else if (c < 0x20) {
            evbuffer_add_printf(out, "\\u%04x", c);
            i++;
        } else {
            size_t l = utf8_len(p + i, n - i);
            if (l == 0) {
                evbuffer_add(out, "\\ufffd", 6);
                i++;
            } else {
                evbuffer_add(out, p + i, l);
                i += l;
            }
        }
    }
    evbuffer_add(out, "\"", 1);
}

void rmq_json_str(struct evbuffer *out, const char *s)
{
    rmq_json_strn(out, s ? s : "", s ? strlen(s) : 0);
}
