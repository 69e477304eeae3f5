/* grpc_client.c: the blocking nghttp2 test client of grpc_client.h. One
 * socket, poll() with short timeouts, nghttp2's send/recv callbacks over
 * the socket or an SSL. Test code: failures return errors, never abort. */
#include "grpc_client.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <nghttp2/nghttp2.h>

#ifdef RMQ_NGHTTP2_SSIZE2
typedef nghttp2_ssize gc_ssize_t;
typedef nghttp2_data_provider2 gc_provider_t;
#define gc_submit_request nghttp2_submit_request2
#define gc_callbacks_set_send nghttp2_session_callbacks_set_send_callback2
#define gc_callbacks_set_recv nghttp2_session_callbacks_set_recv_callback2
#else
typedef ssize_t gc_ssize_t;
typedef nghttp2_data_provider gc_provider_t;
#define gc_submit_request nghttp2_submit_request
#define gc_callbacks_set_send nghttp2_session_callbacks_set_send_callback
#define gc_callbacks_set_recv nghttp2_session_callbacks_set_recv_callback
#endif

typedef struct gc_body {
    const uint8_t *data;          /* the caller's, copied at gc_request */
    uint8_t *own;
    size_t len, off;
    int keep_open;
} gc_body_t;

struct gc_client {
    int fd;
    SSL *ssl;
    nghttp2_session *h2;
    gc_stream_t streams[GC_STREAMS_MAX];
    gc_body_t bodies[GC_STREAMS_MAX];
    int nstreams;
    int broken;
    int goaway;
    const char *extra[4][2];      /* gc_add_header */
    int nextra;
    const char *method;           /* gc_set_method; NULL: POST */
};

static long long now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static gc_ssize_t send_cb(nghttp2_session *h2, const uint8_t *data, size_t len, int flags,
                          void *user_data)
{
    gc_client_t *c = user_data;
    ssize_t n;

    if (c->ssl != NULL) {
        n = SSL_write(c->ssl, data, (int)len);
        if (n <= 0)
            return SSL_get_error(c->ssl, (int)n) == SSL_ERROR_WANT_WRITE
                   ? NGHTTP2_ERR_WOULDBLOCK : NGHTTP2_ERR_CALLBACK_FAILURE;
        return n;
    }
    n = send(c->fd, data, len, MSG_NOSIGNAL);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? NGHTTP2_ERR_WOULDBLOCK
                                                       : NGHTTP2_ERR_CALLBACK_FAILURE;
    return n;
}

static gc_ssize_t recv_cb(nghttp2_session *h2, uint8_t *buf, size_t len, int flags,
                          void *user_data)
{
    gc_client_t *c = user_data;
    ssize_t n;

    if (c->ssl != NULL) {
        n = SSL_read(c->ssl, buf, (int)len);
        if (n <= 0) {
            int e = SSL_get_error(c->ssl, (int)n);
            if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE)
                return NGHTTP2_ERR_WOULDBLOCK;
            return NGHTTP2_ERR_EOF;
        }
        return n;
    }
    n = recv(c->fd, buf, len, 0);
    if (n < 0)
        return errno == EAGAIN || errno == EWOULDBLOCK ? NGHTTP2_ERR_WOULDBLOCK
                                                       : NGHTTP2_ERR_CALLBACK_FAILURE;
    return n == 0 ? NGHTTP2_ERR_EOF : n;
}

static int on_header(nghttp2_session *h2, const nghttp2_frame *frame, const uint8_t *name,
                     size_t namelen, const uint8_t *value, size_t valuelen, uint8_t flags,
                     void *user_data)
{
    gc_stream_t *s = nghttp2_session_get_stream_user_data(h2, frame->hd.stream_id);

    if (s == NULL)
        return 0;
    if (namelen == 7 && memcmp(name, ":status", 7) == 0)
        s->http_status = atoi((const char *)value);
    else if (namelen == 11 && memcmp(name, "grpc-status", 11) == 0)
        s->grpc_status = atoi((const char *)value);
    else if (namelen == 20 && memcmp(name, "grpc-accept-encoding", 20) == 0)
        snprintf(s->grpc_accept_encoding, sizeof(s->grpc_accept_encoding), "%.*s",
                 (int)valuelen, (const char *)value);
    else if (namelen == 12 && memcmp(name, "grpc-message", 12) == 0) {
        size_t n = valuelen < sizeof(s->grpc_message) - 1 ? valuelen : sizeof(s->grpc_message) - 1;
        memcpy(s->grpc_message, value, n);
        s->grpc_message[n] = '\0';
    }
    return 0;
}

static int on_data(nghttp2_session *h2, uint8_t flags, int32_t stream_id, const uint8_t *data,
                   size_t len, void *user_data)
{
    gc_stream_t *s = nghttp2_session_get_stream_user_data(h2, stream_id);
    uint8_t *grown;

    if (s == NULL)
        return 0;
    grown = realloc(s->body, s->body_len + len);
    if (grown == NULL)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    memcpy(grown + s->body_len, data, len);
    s->body = grown;
    s->body_len += len;
    return 0;
}

static int on_close(nghttp2_session *h2, int32_t stream_id, uint32_t code, void *user_data)
{
    gc_stream_t *s = nghttp2_session_get_stream_user_data(h2, stream_id);

    if (s != NULL) {
        s->closed = 1;
        s->rst_code = code;
    }
    return 0;
}

static int on_frame(nghttp2_session *h2, const nghttp2_frame *frame, void *user_data)
{
    gc_client_t *c = user_data;

    if (frame->hd.type == NGHTTP2_GOAWAY)
        c->goaway = 1;
    return 0;
}

static gc_ssize_t body_read(nghttp2_session *h2, int32_t stream_id, uint8_t *buf, size_t len,
                            uint32_t *flags, nghttp2_data_source *source, void *user_data)
{
    gc_body_t *b = source->ptr;
    size_t n = b->len - b->off < len ? b->len - b->off : len;

    memcpy(buf, b->data + b->off, n);
    b->off += n;
    if (b->off == b->len) {
        *flags |= NGHTTP2_DATA_FLAG_EOF;
        if (b->keep_open)
            *flags |= NGHTTP2_DATA_FLAG_NO_END_STREAM;
    }
    return (gc_ssize_t)n;
}

/* Makes a TLS connection over fd offering ALPN "h2". */
static SSL *tls_start(int fd, SSL_CTX *ctx, int *alpn_ok)
{
    static const unsigned char alpn[] = "\x02h2";
    const unsigned char *chosen = NULL;
    unsigned int chosen_len = 0;
    SSL *ssl = SSL_new(ctx);

    if (ssl == NULL)
        return NULL;
    SSL_set_alpn_protos(ssl, alpn, sizeof(alpn) - 1);
    SSL_set_fd(ssl, fd);
    if (SSL_connect(ssl) != 1) {
        SSL_free(ssl);
        return NULL;
    }
    SSL_get0_alpn_selected(ssl, &chosen, &chosen_len);
    if (alpn_ok != NULL)
        *alpn_ok = chosen_len == 2 && memcmp(chosen, "h2", 2) == 0;
    return ssl;
}

gc_client_t *gc_connect(int port, SSL_CTX *ssl_ctx, int *alpn_ok)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    nghttp2_session_callbacks *cbs;
    gc_client_t *c = calloc(1, sizeof(*c));
    int one = 1;

    if (c == NULL)
        return NULL;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    c->fd = socket(AF_INET, SOCK_STREAM, 0);
    if (c->fd < 0 || connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        goto fail;
    setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (ssl_ctx != NULL && (c->ssl = tls_start(c->fd, ssl_ctx, alpn_ok)) == NULL)
        goto fail;
    fcntl(c->fd, F_SETFL, O_NONBLOCK);
    if (nghttp2_session_callbacks_new(&cbs) != 0)
        goto fail;
    gc_callbacks_set_send(cbs, send_cb);
    gc_callbacks_set_recv(cbs, recv_cb);
    nghttp2_session_callbacks_set_on_header_callback(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_close);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame);
    int rc = nghttp2_session_client_new(&c->h2, cbs, c);
    nghttp2_session_callbacks_del(cbs);
    if (rc != 0)
        goto fail;
    nghttp2_settings_entry settings[] = { { NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, 1 << 24 } };
    nghttp2_submit_settings(c->h2, NGHTTP2_FLAG_NONE, settings, 1);
    nghttp2_session_set_local_window_size(c->h2, NGHTTP2_FLAG_NONE, 0, 1 << 26);
    return c;
fail:
    gc_close(c);
    return NULL;
}

void gc_close(gc_client_t *c)
{
    if (c == NULL)
        return;
    if (c->h2 != NULL)
        nghttp2_session_del(c->h2);
    if (c->ssl != NULL)
        SSL_free(c->ssl);
    if (c->fd >= 0)
        close(c->fd);
    for (int i = 0; i < c->nstreams; i++) {
        free(c->streams[i].body);
        free(c->bodies[i].own);
    }
    free(c);
}

gc_stream_t *gc_request(gc_client_t *c, const char *path, const char *content_type,
                        const char *grpc_timeout, const uint8_t *body, size_t len, int keep_open)
{
#define GC_NV(n, v) { (uint8_t *)(n), (uint8_t *)(v), strlen(n), strlen(v), NGHTTP2_NV_FLAG_NONE }
    nghttp2_nv nva[11] = {
        GC_NV(":method", c->method != NULL ? c->method : "POST"),
        GC_NV(":scheme", c->ssl ? "https" : "http"),
        GC_NV(":path", path), GC_NV(":authority", "127.0.0.1"), GC_NV("te", "trailers"),
        GC_NV("content-type", content_type),
    };
    size_t nnv = 6;

    if (c->nstreams == GC_STREAMS_MAX)
        return NULL;
    if (grpc_timeout != NULL)
        nva[nnv++] = (nghttp2_nv)GC_NV("grpc-timeout", grpc_timeout);
    for (int i = 0; i < c->nextra; i++)
        nva[nnv++] = (nghttp2_nv)GC_NV(c->extra[i][0], c->extra[i][1]);
    gc_stream_t *s = &c->streams[c->nstreams];
    gc_body_t *b = &c->bodies[c->nstreams];
    memset(s, 0, sizeof(*s));
    s->grpc_status = -1;
    b->own = malloc(len ? len : 1);
    if (b->own == NULL)
        return NULL;
    memcpy(b->own, body, len);
    b->data = b->own;
    b->len = len;
    b->keep_open = keep_open;
    gc_provider_t prd = { .source.ptr = b, .read_callback = body_read };
    s->id = gc_submit_request(c->h2, NULL, nva, nnv, &prd, s);
    if (s->id < 0)
        return NULL;
    c->nstreams++;
    return s;
}

void gc_add_header(gc_client_t *c, const char *name, const char *value)
{
    if (c->nextra == 4)
        return;
    c->extra[c->nextra][0] = name;
    c->extra[c->nextra][1] = value;
    c->nextra++;
}

void gc_clear_headers(gc_client_t *c)
{
    c->nextra = 0;
}

void gc_set_method(gc_client_t *c, const char *method)
{
    c->method = method;
}

/* One round: sends what is queued, waits up to wait_ms for input, reads it. */
static void gc_round(gc_client_t *c, int wait_ms)
{
    struct pollfd pfd = { .fd = c->fd, .events = POLLIN };

    if (c->broken)
        return;
    if (nghttp2_session_send(c->h2) != 0) {
        c->broken = 1;
        return;
    }
    if ((c->ssl == NULL || SSL_pending(c->ssl) == 0) && poll(&pfd, 1, wait_ms) <= 0)
        return;
    if (nghttp2_session_recv(c->h2) != 0)
        c->broken = 1;
}

static int all_closed(const gc_client_t *c)
{
    for (int i = 0; i < c->nstreams; i++)
        if (!c->streams[i].closed)
            return 0;
    return 1;
}

int gc_run(gc_client_t *c, int timeout_ms)
{
    long long end = now_ms() + timeout_ms;

    while (!all_closed(c) && !c->broken && now_ms() < end)
        gc_round(c, 20);
    return all_closed(c) ? 0 : -1;
}

void gc_pump(gc_client_t *c, int ms)
{
    long long end = now_ms() + ms;

    while (!c->broken && now_ms() < end)
        gc_round(c, 10);
}

int gc_goaway_received(const gc_client_t *c)
{
    return c->goaway;
}

uint32_t gc_remote_max_streams(gc_client_t *c)
{
    return nghttp2_session_get_remote_settings(c->h2, NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS);
}

void gc_cancel(gc_client_t *c, gc_stream_t *s)
{
    nghttp2_submit_rst_stream(c->h2, NGHTTP2_FLAG_NONE, s->id, NGHTTP2_CANCEL);
}

size_t gc_frame(const uint8_t *msg, size_t len, uint8_t *out)
{
    out[0] = 0;
    out[1] = (uint8_t)(len >> 24);
    out[2] = (uint8_t)(len >> 16);
    out[3] = (uint8_t)(len >> 8);
    out[4] = (uint8_t)len;
    memcpy(out + 5, msg, len);
    return len + 5;
}

int gc_message(const gc_stream_t *s, int n, const uint8_t **msg, size_t *len)
{
    size_t off = 0;

    for (int i = 0; off + 5 <= s->body_len; i++) {
        size_t l = (size_t)s->body[off + 1] << 24 | (size_t)s->body[off + 2] << 16 |
                   (size_t)s->body[off + 3] << 8 | s->body[off + 4];
        if (off + 5 + l > s->body_len)
            return -1;
        if (i == n) {
            *msg = s->body + off + 5;
            *len = l;
            return 0;
        }
        off += 5 + l;
    }
    return -1;
}
