/* rmq_server.c: the RPC server. Owns the listener, the table of
 * connections, dispatch of decoded frames by request code, replies, and the
 * life of a connection: accepted (optionally sniffed for TLS), open, closing
 * (unlinked, on_close fired, callbacks cut), then freed by the reaper on the
 * next loop pass and released when the last reference drops. Back-pressure
 * stops reading from a peer whose unsent replies pile up. Loop thread only. */
#include "rmq_rpc.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/listener.h>
#include <event2/util.h>
#include <openssl/err.h>

#include "rmq_log.h"
#include "rmq_time.h"

#define SNIFF_TIMEOUT_MS 10000
#define MAX_OUTPUT_DEFAULT ((size_t)64 << 20)
#define ADDR_MAX 64

typedef struct handler {
    int code;
    rmq_handler_fn fn;
    void *arg;
} handler_t;

struct rmq_conn {
    TAILQ_ENTRY(rmq_conn) link;
    rmq_server_t *srv;            /* NULL once the conn has left the server */
    struct bufferevent *bev;      /* NULL while sniffing and after the reaper */
    struct event *sniff_ev;       /* TLS modes: waiting for the first byte */
    evutil_socket_t fd;
    uint64_t id;
    int refs;                     /* the server's own ref + deferred answers */
    int closing;
    int read_paused;              /* back-pressure */
    void *data;
    char peer[ADDR_MAX];
    char local[ADDR_MAX];
};

TAILQ_HEAD(conn_list, rmq_conn);

struct rmq_server {
    struct event_base *base;
    rmq_server_opts_t opts;
    char *name;
    struct evconnlistener *lis;
    int port;
    handler_t *handlers;          /* sorted by code */
    size_t nhandlers;
    struct conn_list conns;
    size_t nconns;
    struct conn_list closing;     /* waiting for the reaper */
    struct event *reaper;
    rmq_conn_fn on_close;
    void *on_close_arg;
    rmq_reply_fn on_reply;        /* metrics observer; NULL: none */
    void *on_reply_arg;
    rmq_auth_fn auth;             /* access check before handlers; NULL: none */
    void *auth_arg;
};

static _Atomic uint64_t next_conn_id = 1;

static void conn_read_cb(struct bufferevent *bev, void *arg);
static void conn_write_cb(struct bufferevent *bev, void *arg);
static void conn_event_cb(struct bufferevent *bev, short what, void *arg);

/* ---- addresses ---------------------------------------------------------- */

static void format_addr(const struct sockaddr *sa, char *out, size_t outlen)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    int port = 0;

    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        evutil_inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
        port = ntohs(in->sin_port);
        snprintf(out, outlen, "%s:%d", ip, port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        evutil_inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
        port = ntohs(in6->sin6_port);
        snprintf(out, outlen, "[%s]:%d", ip, port);
    } else {
        snprintf(out, outlen, "?");
    }
}

static int sockaddr_port(const struct sockaddr_storage *ss)
{
    if (ss->ss_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)ss)->sin_port);
    if (ss->ss_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)ss)->sin6_port);
    return -1;
}

/* ---- connection life ------------------------------------------------------ */

void rmq_conn_ref(rmq_conn_t *conn)
{
    conn->refs++;
}

/* Drops a reference; the last one frees the struct (its socket is already
 * gone, the reaper frees it). Loop thread. */
void rmq_conn_unref(rmq_conn_t *conn)
{
    if (--conn->refs > 0)
        return;
    free(conn);
}

/* Closes the socket side now: the sniff event, then the bufferevent, which
 * owns the socket once it exists (else the raw fd is closed). Never called
 * from inside this connection's own callbacks. */
static void conn_release_io(rmq_conn_t *conn)
{
    if (conn->sniff_ev != NULL) {
        event_free(conn->sniff_ev);
        conn->sniff_ev = NULL;
    }
    if (conn->bev != NULL) {
        bufferevent_free(conn->bev);
        conn->bev = NULL;
    } else if (conn->fd >= 0) {
        evutil_closesocket(conn->fd);
    }
    conn->fd = -1;
}

/* Frees every connection waiting on the closing list. Loop thread. */
static void reap(rmq_server_t *srv)
{
    rmq_conn_t *conn;

    while ((conn = TAILQ_FIRST(&srv->closing)) != NULL) {
        TAILQ_REMOVE(&srv->closing, conn, link);
        conn->srv = NULL;
        conn_release_io(conn);
        rmq_conn_unref(conn);
    }
}

static void reaper_cb(evutil_socket_t fd, short what, void *arg)
{
    reap(arg);
}

/* Starts closing: cuts callbacks, moves conn to the closing list, fires
 * on_close once and schedules the reaper. Safe from any callback. */
void rmq_conn_close(rmq_conn_t *conn, const char *reason)
{
    rmq_server_t *srv = conn->srv;

    if (conn->closing || srv == NULL)
        return;
    conn->closing = 1;
    if (reason != NULL)
        LOG_INFO("%s: closing connection %s (id %llu): %s", srv->name, conn->peer,
                 (unsigned long long)conn->id, reason);
    if (conn->bev != NULL) {
        bufferevent_setcb(conn->bev, NULL, NULL, NULL, NULL);
        bufferevent_disable(conn->bev, EV_READ | EV_WRITE);
    }
    if (conn->sniff_ev != NULL)
        event_del(conn->sniff_ev);
    TAILQ_REMOVE(&srv->conns, conn, link);
    srv->nconns--;
    TAILQ_INSERT_TAIL(&srv->closing, conn, link);
    if (srv->on_close != NULL)
        srv->on_close(conn, srv->on_close_arg);
    event_active(srv->reaper, EV_TIMEOUT, 0);
}

const char *rmq_conn_peer(const rmq_conn_t *conn)
{
    return conn->peer;
}

const char *rmq_conn_local(const rmq_conn_t *conn)
{
    return conn->local;
}

uint64_t rmq_conn_id(const rmq_conn_t *conn)
{
    return conn->id;
}

int rmq_conn_is_open(const rmq_conn_t *conn)
{
    return !conn->closing && conn->srv != NULL;
}

void rmq_conn_set_data(rmq_conn_t *conn, void *data)
{
    conn->data = data;
}

void *rmq_conn_get_data(const rmq_conn_t *conn)
{
    return conn->data;
}

size_t rmq_conn_output_len(const rmq_conn_t *conn)
{
    if (conn->bev == NULL)
        return 0;
    return evbuffer_get_length(bufferevent_get_output(conn->bev));
}

/* ---- back-pressure ---------------------------------------------------- */

static size_t max_output(const rmq_server_t *srv)
{
    return srv->opts.max_output_bytes ? srv->opts.max_output_bytes : MAX_OUTPUT_DEFAULT;
}

/* Stops reading from conn while its output is over the limit. Loop thread. */
static void conn_check_output(rmq_conn_t *conn)
{
    if (conn->read_paused || conn->closing || conn->bev == NULL)
        return;
    if (rmq_conn_output_len(conn) <= max_output(conn->srv))
        return;
    conn->read_paused = 1;
    bufferevent_disable(conn->bev, EV_READ);
    LOG_WARN_RL("%s: %s has %zu bytes unsent; pausing reads", conn->srv->name, conn->peer,
                rmq_conn_output_len(conn));
}

/* ---- dispatch ------------------------------------------------------------- */

static int handler_cmp(const void *key, const void *elem)
{
    int code = *(const int *)key;
    const handler_t *h = elem;
    return (code > h->code) - (code < h->code);
}

static const handler_t *find_handler(const rmq_server_t *srv, int code)
{
    if (srv->nhandlers == 0)
        return NULL;
    return bsearch(&code, srv->handlers, srv->nhandlers, sizeof(handler_t), handler_cmp);
}

/* Runs the handler for one request frame; the frame is cleared after. */
static void dispatch(rmq_conn_t *conn, rmq_frame_t *req)
{
    rmq_server_t *srv = conn->srv;
    const Rmq__Command *cmd = req->cmd;

    if (cmd->flags & RMQ__COMMAND_FLAG__FLAG_RESPONSE) {
        LOG_WARN_RL("%s: ignoring a response (code %d, opaque %u) from %s", srv->name,
                    cmd->code, cmd->opaque, conn->peer);
        return;
    }
    if (srv->auth != NULL && !srv->auth(conn, req, srv->auth_arg))
        return;
    const handler_t *h = find_handler(srv, cmd->code);
    if (h == NULL) {
        rmq_conn_replyf(conn, rmq_reply_to(cmd), RMQ__STATUS__REQUEST_CODE_NOT_SUPPORTED,
                        "request code %d (%s) not supported by %s", cmd->code,
                        rmq_request_name(cmd->code), srv->name);
        return;
    }
    h->fn(conn, req, h->arg);
}

/* Decodes and dispatches every whole frame in the input, stopping when the
 * connection starts closing or pauses for back-pressure. Loop thread. */
static void conn_process_input(rmq_conn_t *conn)
{
    struct evbuffer *in = bufferevent_get_input(conn->bev);
    uint32_t max_frame = conn->srv->opts.max_frame;

    rmq_conn_ref(conn);
    while (!conn->closing && !conn->read_paused) {
        rmq_frame_t f = { 0 };
        const char *why = NULL;
        rmq_err_t err = rmq_frame_decode(in, max_frame, &f, &why);

        if (err == RMQ_EAGAIN)
            break;
        if (err != RMQ_OK) {
            LOG_WARN_RL("%s: bad frame from %s: %s (%s)", conn->srv->name, conn->peer, why,
                        rmq_strerror(err));
            rmq_conn_close(conn, why);
            break;
        }
        dispatch(conn, &f);
        rmq_frame_clear(&f);
    }
    rmq_conn_unref(conn);
}

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
    conn_process_input(arg);
}

/* Called when output drains to half the limit: resumes a paused reader. */
static void conn_write_cb(struct bufferevent *bev, void *arg)
{
    rmq_conn_t *conn = arg;

    if (!conn->read_paused || conn->closing)
        return;
    conn->read_paused = 0;
    bufferevent_enable(bev, EV_READ);
    conn_process_input(conn);
}

static const char *ssl_reason(struct bufferevent *bev, char *buf, size_t len)
{
    unsigned long e = bufferevent_get_openssl_error(bev);
    if (e == 0)
        return NULL;
    ERR_error_string_n(e, buf, len);
    return buf;
}

static void conn_event_cb(struct bufferevent *bev, short what, void *arg)
{
    rmq_conn_t *conn = arg;
    char buf[256];
    const char *reason = "peer closed";

    if (what & BEV_EVENT_TIMEOUT) {
        reason = "idle timeout";
    } else if (what & BEV_EVENT_ERROR) {
        reason = ssl_reason(bev, buf, sizeof(buf));
        if (reason == NULL) {
            snprintf(buf, sizeof(buf), "socket error: %s",
                     evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
            reason = buf;
        }
    } else if (!(what & BEV_EVENT_EOF)) {
        return;
    }
    rmq_conn_close(conn, reason);
}

/* ---- accept ----------------------------------------------------------------- */

/* Wraps conn's socket in a bufferevent (TLS if tls) and starts reading. */
static rmq_err_t conn_start(rmq_conn_t *conn, int tls)
{
    rmq_server_t *srv = conn->srv;
    int opts = BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS;

    if (tls) {
        SSL *ssl = SSL_new(srv->opts.ssl_ctx);
        if (ssl == NULL)
            return RMQ_ETLS;
        conn->bev = bufferevent_openssl_socket_new(srv->base, conn->fd, ssl,
                                                   BUFFEREVENT_SSL_ACCEPTING, opts);
        if (conn->bev == NULL) {
            SSL_free(ssl);
            return RMQ_ENOMEM;
        }
        bufferevent_openssl_set_allow_dirty_shutdown(conn->bev, 1);
    } else {
        conn->bev = bufferevent_socket_new(srv->base, conn->fd, opts);
        if (conn->bev == NULL)
            return RMQ_ENOMEM;
    }
    bufferevent_setcb(conn->bev, conn_read_cb, conn_write_cb, conn_event_cb, conn);
    bufferevent_setwatermark(conn->bev, EV_WRITE, max_output(srv) / 2, 0);
    if (srv->opts.idle_timeout_ms > 0) {
        struct timeval tv = { srv->opts.idle_timeout_ms / 1000,
                              (srv->opts.idle_timeout_ms % 1000) * 1000 };
        bufferevent_set_timeouts(conn->bev, &tv, NULL);
    }
    bufferevent_enable(conn->bev, EV_READ | EV_WRITE);
    return RMQ_OK;
}

/* PERMISSIVE: peeks at the first byte; 0x16 (TLS handshake record) means TLS.
 * No valid frame starts with 0x16 since max_frame stays below 0x16000000. */
static void sniff_cb(evutil_socket_t fd, short what, void *arg)
{
    rmq_conn_t *conn = arg;
    unsigned char first;

    if (what & EV_TIMEOUT) {
        rmq_conn_close(conn, "no data before the TLS sniff timeout");
        return;
    }
    ssize_t n = recv(fd, &first, 1, MSG_PEEK);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    if (n <= 0) {
        rmq_conn_close(conn, n == 0 ? "peer closed" : strerror(errno));
        return;
    }
    event_free(conn->sniff_ev);
    conn->sniff_ev = NULL;
    if (first != 0x16 && conn->srv->opts.tls_mode == RMQ_TLS_ENFORCING) {
        LOG_WARN_RL("%s: refusing plaintext connection from %s (tlsMode=enforcing)",
                    conn->srv->name, conn->peer);
        rmq_conn_close(conn, "plaintext refused: tlsMode=enforcing");
        return;
    }
    if (conn_start(conn, first == 0x16) != RMQ_OK)
        rmq_conn_close(conn, "cannot start the connection");
}

static rmq_conn_t *conn_new(rmq_server_t *srv, evutil_socket_t fd, const struct sockaddr *sa)
{
    rmq_conn_t *conn = calloc(1, sizeof(*conn));
    struct sockaddr_storage local;
    socklen_t locallen = sizeof(local);
    int one = 1;

    if (conn == NULL)
        return NULL;
    conn->srv = srv;
    conn->fd = fd;
    conn->refs = 1;
    conn->id = atomic_fetch_add(&next_conn_id, 1);
    format_addr(sa, conn->peer, sizeof(conn->peer));
    if (getsockname(fd, (struct sockaddr *)&local, &locallen) == 0)
        format_addr((struct sockaddr *)&local, conn->local, sizeof(conn->local));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    TAILQ_INSERT_TAIL(&srv->conns, conn, link);
    srv->nconns++;
    return conn;
}

/* Starts the sniff wait (PERMISSIVE) or the bufferevent for a new conn. */
static rmq_err_t conn_begin(rmq_conn_t *conn)
{
    rmq_server_t *srv = conn->srv;

    if (srv->opts.tls_mode == RMQ_TLS_DISABLED)
        return conn_start(conn, 0);
    struct timeval tv = { SNIFF_TIMEOUT_MS / 1000, 0 };
    conn->sniff_ev = event_new(srv->base, conn->fd, EV_READ | EV_PERSIST, sniff_cb, conn);
    if (conn->sniff_ev == NULL || event_add(conn->sniff_ev, &tv) != 0)
        return RMQ_ENOMEM;
    return RMQ_OK;
}

static void accept_cb(struct evconnlistener *lis, evutil_socket_t fd, struct sockaddr *sa,
                      int salen, void *arg)
{
    rmq_server_t *srv = arg;
    char peer[ADDR_MAX];

    if (srv->opts.max_conns > 0 && srv->nconns >= srv->opts.max_conns) {
        format_addr(sa, peer, sizeof(peer));
        LOG_WARN_RL("%s: refusing %s: %zu connections open (limit)", srv->name, peer,
                    srv->nconns);
        evutil_closesocket(fd);
        return;
    }
    rmq_conn_t *conn = conn_new(srv, fd, sa);
    if (conn == NULL) {
        format_addr(sa, peer, sizeof(peer));
        LOG_ERROR_RL("%s: out of memory accepting a connection from %s; closing it", srv->name, peer);
        evutil_closesocket(fd);
        return;
    }
    if (conn_begin(conn) != RMQ_OK)
        rmq_conn_close(conn, "cannot start the connection");
}

static void accept_error_cb(struct evconnlistener *lis, void *arg)
{
    rmq_server_t *srv = arg;
    int err = EVUTIL_SOCKET_ERROR();
    LOG_ERROR_RL("%s: accept failed: %s; still listening, the next connection is tried", srv->name,
                 evutil_socket_error_to_string(err));
}

/* ---- server ----------------------------------------------------------------- */

/* Creates a server on base; opts copied (name too). Owner: caller. Loop thread. */
rmq_server_t *rmq_server_new(struct event_base *base, const rmq_server_opts_t *opts)
{
    rmq_server_t *srv = calloc(1, sizeof(*srv));

    if (srv == NULL)
        return NULL;
    srv->base = base;
    if (opts != NULL)
        srv->opts = *opts;
    srv->name = strdup(srv->opts.name != NULL ? srv->opts.name : "rpc");
    srv->opts.name = srv->name;
    srv->port = -1;
    TAILQ_INIT(&srv->conns);
    TAILQ_INIT(&srv->closing);
    srv->reaper = event_new(base, -1, 0, reaper_cb, srv);
    if (srv->name == NULL || srv->reaper == NULL ||
        (srv->opts.tls_mode != RMQ_TLS_DISABLED && srv->opts.ssl_ctx == NULL)) {
        if (srv->opts.tls_mode != RMQ_TLS_DISABLED && srv->opts.ssl_ctx == NULL)
            LOG_ERROR("%s: TLS mode set but no SSL context given", srv->name);
        rmq_server_free(srv);
        return NULL;
    }
    return srv;
}

/* Binds host:port (NULL or "" host: all addresses; port 0: ephemeral).
 * Start-up only: a host name is resolved with a blocking lookup. */
rmq_err_t rmq_server_listen(rmq_server_t *srv, const char *host, int port)
{
    struct addrinfo hints = { 0 }, *ai = NULL;
    char portstr[16];
    struct sockaddr_storage bound;
    socklen_t boundlen = sizeof(bound);

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE | AI_NUMERICSERV;
    snprintf(portstr, sizeof(portstr), "%d", port);
    if (host != NULL && host[0] == '\0')
        host = NULL;
    int rc = getaddrinfo(host, portstr, &hints, &ai);
    if (rc != 0) {
        LOG_ERROR("%s: cannot resolve listen address %s:%d: %s", srv->name,
                  host ? host : "*", port, gai_strerror(rc));
        return RMQ_EINVAL;
    }
    srv->lis = evconnlistener_new_bind(srv->base, accept_cb, srv,
                                       LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE, -1,
                                       ai->ai_addr, (int)ai->ai_addrlen);
    freeaddrinfo(ai);
    if (srv->lis == NULL) {
        LOG_ERROR("%s: cannot listen on %s:%d: %s", srv->name, host ? host : "*", port,
                  strerror(errno));
        return RMQ_EIO;
    }
    evconnlistener_set_error_cb(srv->lis, accept_error_cb);
    if (getsockname(evconnlistener_get_fd(srv->lis), (struct sockaddr *)&bound, &boundlen) == 0)
        srv->port = sockaddr_port(&bound);
    return RMQ_OK;
}

int rmq_server_port(const rmq_server_t *srv)
{
    return srv->port;
}

/* Routes code to fn (replacing an earlier route). Loop thread, set-up time. */
void rmq_server_handle(rmq_server_t *srv, int code, rmq_handler_fn fn, void *arg)
{
    handler_t *h = (handler_t *)find_handler(srv, code);

    if (h != NULL) {
        h->fn = fn;
        h->arg = arg;
        return;
    }
    handler_t *grown = realloc(srv->handlers, (srv->nhandlers + 1) * sizeof(*grown));
    if (grown == NULL) {
        LOG_ERROR("%s: out of memory adding a handler for code %d", srv->name, code);
        return;
    }
    srv->handlers = grown;
    size_t i = srv->nhandlers;
    while (i > 0 && srv->handlers[i - 1].code > code) {
        srv->handlers[i] = srv->handlers[i - 1];
        i--;
    }
    srv->handlers[i] = (handler_t){ code, fn, arg };
    srv->nhandlers++;
}

void rmq_server_set_auth(rmq_server_t *srv, rmq_auth_fn fn, void *arg)
{
    srv->auth = fn;
    srv->auth_arg = arg;
}

void rmq_server_on_close(rmq_server_t *srv, rmq_conn_fn fn, void *arg)
{
    srv->on_close = fn;
    srv->on_close_arg = arg;
}

size_t rmq_server_conn_count(const rmq_server_t *srv)
{
    return srv->nconns;
}

/* Stops listening, closes every connection (on_close fires for each) and
 * frees the server; connections still referenced live on, closed. Loop
 * thread, not from inside a handler. */
void rmq_server_free(rmq_server_t *srv)
{
    rmq_conn_t *conn;

    if (srv == NULL)
        return;
    if (srv->lis != NULL)
        evconnlistener_free(srv->lis);
    while ((conn = TAILQ_FIRST(&srv->conns)) != NULL)
        rmq_conn_close(conn, NULL);
    reap(srv);
    if (srv->reaper != NULL)
        event_free(srv->reaper);
    free(srv->handlers);
    free(srv->name);
    free(srv);
}

/* ---- replies ---------------------------------------------------------------- */

rmq_reply_to_t rmq_reply_to(const Rmq__Command *req)
{
    return (rmq_reply_to_t){ req->code, req->opaque, req->flags, rmq_mono_us() };
}

/* Encodes a response to `to` into conn's output; see rmq_rpc.h. resp's remark
 * is only borrowed for the encode. Loop thread. */
rmq_err_t rmq_conn_reply(rmq_conn_t *conn, rmq_reply_to_t to, Rmq__Command *resp,
                         int status, const char *remark, struct evbuffer *body)
{
    Rmq__Command bare = RMQ__COMMAND__INIT;
    rmq_err_t err = RMQ_OK;
    char *saved_remark;

    if (to.flags & RMQ__COMMAND_FLAG__FLAG_ONEWAY)
        goto out;
    if (!rmq_conn_is_open(conn) || conn->bev == NULL) {
        err = RMQ_ECLOSED;
        goto out;
    }
    if (resp == NULL)
        resp = &bare;
    saved_remark = resp->remark;
    resp->code = to.code;
    resp->opaque = to.opaque;
    resp->flags = RMQ__COMMAND_FLAG__FLAG_RESPONSE;
    resp->status = status;
    resp->version = RMQ_PROTOCOL_VERSION;
    if (remark != NULL)
        resp->remark = (char *)remark;
    err = rmq_frame_encode_buf(bufferevent_get_output(conn->bev), resp, body);
    resp->remark = saved_remark;
    conn_check_output(conn);
out:
    if (body != NULL)
        evbuffer_drain(body, evbuffer_get_length(body));
    if (conn->srv && conn->srv->on_reply)
        conn->srv->on_reply(conn, to.code, status, to.start_us ? rmq_mono_us() - to.start_us : -1,
                            conn->srv->on_reply_arg);
    return err;
}

void rmq_server_on_reply(rmq_server_t *srv, rmq_reply_fn fn, void *arg)
{
    srv->on_reply = fn;
    srv->on_reply_arg = arg;
}

rmq_err_t rmq_conn_replyf(rmq_conn_t *conn, rmq_reply_to_t to, int status, const char *fmt, ...)
{
    char remark[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(remark, sizeof(remark), fmt, ap);
    va_end(ap);
    return rmq_conn_reply(conn, to, NULL, status, remark, NULL);
}

/* Pushes a oneway request to the peer; req's opaque and flags are set here. */
rmq_err_t rmq_conn_send_oneway(rmq_conn_t *conn, Rmq__Command *req, const void *body, size_t len)
{
    if (!rmq_conn_is_open(conn) || conn->bev == NULL)
        return RMQ_ECLOSED;
    req->opaque = 0;
    req->flags = RMQ__COMMAND_FLAG__FLAG_ONEWAY;
    req->version = RMQ_PROTOCOL_VERSION;
    rmq_err_t err = rmq_frame_encode(bufferevent_get_output(conn->bev), req, body, len);
    conn_check_output(conn);
    return err;
}
