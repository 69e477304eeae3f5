/* rmq_http.c: the evhttp wrapper behind the metrics and console port. */
#include "rmq_http.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <netinet/in.h>

#include <event2/keyvalq_struct.h>

#include "rmq_log.h"

#define HTTP_MAX_HEADERS 16384
#define HTTP_MAX_BODY 16384
#define HTTP_TIMEOUT_S 30

struct rmq_http {
    struct event_base *base;
    struct evhttp *http;
    int port;
    rmq_http_fn fallback;
    void *fallback_arg;
    char name[32];
};

static void on_unrouted(struct evhttp_request *req, void *arg)
{
    rmq_http_t *h = arg;
    if (h->fallback) {
        h->fallback(req, h->fallback_arg);
        return;
    }
    rmq_http_replyf(req, 404, "not found: %s\n", evhttp_request_get_uri(req));
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
    errno = 0;
    struct evhttp_bound_socket *bs = evhttp_bind_socket_with_handle(h->http, host, (ev_uint16_t)port);
    if (!bs) {
        snprintf(err, errlen, "cannot listen on %s:%d: %s", host, port,
                 errno ? strerror(errno) : "address not usable");
        return RMQ_EIO;
    }
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    if (getsockname(evhttp_bound_socket_get_fd(bs), (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET)
            h->port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
        else if (ss.ss_family == AF_INET6)
            h->port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
    }
    LOG_INFO("%s: HTTP listening on %s:%d", h->name, host, h->port);
    return RMQ_OK;
}

int rmq_http_port(const rmq_http_t *h)
{
    return h->port;
}

rmq_err_t rmq_http_route(rmq_http_t *h, const char *path, rmq_http_fn fn, void *arg)
{
    int rc = evhttp_set_cb(h->http, path, fn, arg);
    return rc == 0 ? RMQ_OK : rc == -1 ? RMQ_EEXIST : RMQ_ENOMEM;
}

void rmq_http_fallback(rmq_http_t *h, rmq_http_fn fn, void *arg)
{
    h->fallback = fn;
    h->fallback_arg = arg;
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
    const char *reason = code == 200 ? "OK" : code == 400 ? "Bad Request" : code == 404 ? "Not Found"
                       : code == 502 ? "Bad Gateway" : code == 503 ? "Service Unavailable" : "Error";
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
