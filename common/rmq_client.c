/* rmq_client.c: the RPC client for one remote address. Owns the connection
 * (connected on demand, with a connect timeout, optionally TLS), and the
 * pending requests: a hash map by opaque for matching responses and a
 * min-heap by deadline under one timer for timeouts. Every callback runs
 * exactly once on the loop thread; a callback may free the client or issue
 * new calls (the client is refcounted across callbacks). A failed or lost
 * connection leaves a readable reason (a TLS handshake's OpenSSL reason, a
 * plaintext connection closed before any answer) for the tools to print.
 * Loop thread only. */
#include "rmq_rpc.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <event2/util.h>
#include <openssl/err.h>

#include "rmq_acl.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define CONNECT_TIMEOUT_DEFAULT_MS 3000
#define HOST_MAX 256
#define MAP_MIN_BUCKETS 64
#define WHY_MAX 256

typedef struct pending {
    uint32_t opaque;
    int64_t deadline_ms;
    size_t heap_idx;
    rmq_response_fn cb;
    void *arg;
    struct pending *next;         /* hash chain */
} pending_t;

typedef enum conn_state { CLI_IDLE, CLI_CONNECTING, CLI_CONNECTED } conn_state_t;

struct rmq_client {
    struct event_base *base;
    char *addr;
    char *name;
    char host[HOST_MAX];
    int port;
    rmq_client_opts_t opts;
    struct bufferevent *bev;
    conn_state_t state;
    int answered;                 /* this connection has received bytes */
    char why[WHY_MAX];            /* the last connection failure; "" if none */
    struct event *connect_timer;
    struct event *req_timer;
    pending_t **buckets;          /* by opaque; nbuckets is a power of two */
    size_t nbuckets;
    pending_t **heap;             /* by deadline; also the list of all pending */
    size_t npending;
    size_t heap_cap;
    uint32_t next_opaque;
    rmq_handler_fn on_request;
    void *on_request_arg;
    void (*on_close)(rmq_client_t *cli, void *arg);
    void *on_close_arg;
    int refs;                     /* the owner's + one per running callback */
    int freed;
};

static void client_unref(rmq_client_t *cli);

/* ---- pending table: hash by opaque ------------------------------------------ */

static pending_t **map_slot(rmq_client_t *cli, uint32_t opaque)
{
    return &cli->buckets[opaque & (cli->nbuckets - 1)];
}

/* Doubles the bucket array when the load passes 1; keeps it on failure. */
static void map_grow(rmq_client_t *cli)
{
    size_t n = cli->nbuckets * 2;
    pending_t **nb = calloc(n, sizeof(*nb));

    if (nb == NULL)
        return;
    for (size_t i = 0; i < cli->nbuckets; i++) {
        pending_t *p = cli->buckets[i], *next;
        for (; p != NULL; p = next) {
            next = p->next;
            p->next = nb[p->opaque & (n - 1)];
            nb[p->opaque & (n - 1)] = p;
        }
    }
    free(cli->buckets);
    cli->buckets = nb;
    cli->nbuckets = n;
}

/* Unlinks and returns the pending request for opaque, or NULL. */
static pending_t *map_take(rmq_client_t *cli, uint32_t opaque)
{
    for (pending_t **pp = map_slot(cli, opaque); *pp != NULL; pp = &(*pp)->next) {
        pending_t *p = *pp;
        if (p->opaque == opaque) {
            *pp = p->next;
            return p;
        }
    }
    return NULL;
}

/* ---- pending table: min-heap by deadline ------------------------------------ */

static void heap_set(rmq_client_t *cli, size_t i, pending_t *p)
{
    cli->heap[i] = p;
    p->heap_idx = i;
}

static void heap_up(rmq_client_t *cli, size_t i)
{
    pending_t *p = cli->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (cli->heap[parent]->deadline_ms <= p->deadline_ms)
            break;
        heap_set(cli, i, cli->heap[parent]);
        i = parent;
    }
    heap_set(cli, i, p);
}

static void heap_down(rmq_client_t *cli, size_t i)
{
    pending_t *p = cli->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= cli->npending)
            break;
        if (child + 1 < cli->npending &&
            cli->heap[child + 1]->deadline_ms < cli->heap[child]->deadline_ms)
            child++;
        if (p->deadline_ms <= cli->heap[child]->deadline_ms)
            break;
        heap_set(cli, i, cli->heap[child]);
        i = child;
    }
    heap_set(cli, i, p);
}

static void heap_remove(rmq_client_t *cli, pending_t *p)
{
    size_t i = p->heap_idx;
    pending_t *last = cli->heap[--cli->npending];

    if (last == p)
        return;
    heap_set(cli, i, last);
    heap_up(cli, i);
    heap_down(cli, last->heap_idx);
}

/* Arms the timer for the earliest deadline (or stops it). */
static void arm_timer(rmq_client_t *cli)
{
    if (cli->npending == 0) {
        evtimer_del(cli->req_timer);
        return;
    }
    int64_t wait = cli->heap[0]->deadline_ms - rmq_mono_ms();
    if (wait < 0)
        wait = 0;
    struct timeval tv = { (time_t)(wait / 1000), (suseconds_t)((wait % 1000) * 1000) };
    evtimer_add(cli->req_timer, &tv);
}

/* Registers a request; RMQ_ENOMEM leaves nothing behind. */
static rmq_err_t pending_add(rmq_client_t *cli, int timeout_ms, rmq_response_fn cb, void *arg,
                             uint32_t *opaque)
{
    if (cli->npending == cli->heap_cap) {
        size_t cap = cli->heap_cap ? cli->heap_cap * 2 : 64;
        pending_t **h = realloc(cli->heap, cap * sizeof(*h));
        if (h == NULL)
            return RMQ_ENOMEM;
        cli->heap = h;
        cli->heap_cap = cap;
    }
    pending_t *p = calloc(1, sizeof(*p));
    if (p == NULL)
        return RMQ_ENOMEM;
    do {
        p->opaque = cli->next_opaque++;
    } while (p->opaque == 0);
    p->deadline_ms = rmq_mono_ms() + timeout_ms;
    p->cb = cb;
    p->arg = arg;
    pending_t **slot = map_slot(cli, p->opaque);
    p->next = *slot;
    *slot = p;
    cli->heap[cli->npending++] = p;
    heap_up(cli, cli->npending - 1);
    if (cli->npending > cli->nbuckets)
        map_grow(cli);
    if (p->heap_idx == 0)
        arm_timer(cli);
    *opaque = p->opaque;
    return RMQ_OK;
}

/* Removes and returns the request for opaque (NULL if timed out or unknown). */
static pending_t *pending_take(rmq_client_t *cli, uint32_t opaque)
{
    pending_t *p = map_take(cli, opaque);
    if (p != NULL)
        heap_remove(cli, p);
    return p;
}

/* Runs a callback holding a client reference; returns 0 if the client was
 * freed meanwhile (the caller must stop touching it). */
static int run_cb(rmq_client_t *cli, pending_t *p, rmq_err_t err, rmq_frame_t *resp)
{
    int alive;

    cli->refs++;
    p->cb(err, resp, p->arg);
    free(p);
    alive = !cli->freed;
    client_unref(cli);
    return alive;
}

/* Fails every pending request with err. The whole set is detached first, so
 * callbacks may issue new calls (which reconnect) or free the client. */
static void fail_all(rmq_client_t *cli, rmq_err_t err)
{
    pending_t **list = cli->heap;
    size_t n = cli->npending;

    if (n == 0)
        return;
    cli->heap = NULL;
    cli->heap_cap = 0;
    cli->npending = 0;
    memset(cli->buckets, 0, cli->nbuckets * sizeof(*cli->buckets));
    evtimer_del(cli->req_timer);
    cli->refs++;
    for (size_t i = 0; i < n; i++) {
        list[i]->cb(err, NULL, list[i]->arg);
        free(list[i]);
    }
    free(list);
    client_unref(cli);
}

static void req_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    rmq_client_t *cli = arg;
    int64_t now = rmq_mono_ms();

    while (cli->npending > 0 && cli->heap[0]->deadline_ms <= now) {
        pending_t *p = pending_take(cli, cli->heap[0]->opaque);
        if (!run_cb(cli, p, RMQ_ETIMEDOUT, NULL))
            return;
    }
    arm_timer(cli);
}

/* ---- connection ------------------------------------------------------------- */

/* Drops the connection (if any) and fails what is pending with err; then
 * on_close if the connection had been established. Callbacks may free cli. */
static void drop_connection(rmq_client_t *cli, rmq_err_t err)
{
    int was_connected = cli->state == CLI_CONNECTED;

    if (cli->bev != NULL)
        bufferevent_free(cli->bev);
    cli->bev = NULL;
    cli->state = CLI_IDLE;
    evtimer_del(cli->connect_timer);
    cli->refs++;
    fail_all(cli, err);
    if (was_connected && !cli->freed && cli->on_close != NULL)
        cli->on_close(cli, cli->on_close_arg);
    client_unref(cli);
}

/* Delivers one decoded frame: a response to its pending request, a request
 * to on_request (conn NULL: pushes are oneway). Callbacks may free cli. */
static void deliver(rmq_client_t *cli, rmq_frame_t *f)
{
    const Rmq__Command *cmd = f->cmd;

    if (!(cmd->flags & RMQ__COMMAND_FLAG__FLAG_RESPONSE)) {
        if (cli->on_request == NULL) {
            LOG_WARN_RL("%s: %s pushed request code %d with no handler", cli->name, cli->addr,
                        cmd->code);
            return;
        }
        cli->on_request(NULL, f, cli->on_request_arg);
        return;
    }
    pending_t *p = pending_take(cli, cmd->opaque);
    if (p == NULL) {
        LOG_DEBUG("%s: late or unknown response opaque %u from %s", cli->name, cmd->opaque,
                  cli->addr);
        return;
    }
    run_cb(cli, p, RMQ_OK, f);
}

static void read_cb(struct bufferevent *bev, void *arg)
{
    rmq_client_t *cli = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    cli->answered = 1;
    cli->refs++;
    while (!cli->freed && cli->bev == bev) {
        rmq_frame_t f = { 0 };
        const char *why = NULL;
        rmq_err_t err = rmq_frame_decode(in, cli->opts.max_frame, &f, &why);

        if (err == RMQ_EAGAIN)
            break;
        if (err != RMQ_OK) {
            LOG_WARN_RL("%s: bad frame from %s: %s; closing", cli->name, cli->addr, why);
            drop_connection(cli, RMQ_EPROTO);
            break;
        }
        deliver(cli, &f);
        rmq_frame_clear(&f);
    }
    client_unref(cli);
}

/* Writes OpenSSL's reason for e into buf, with the certificate check's
 * verdict when verification is what failed. */
static void tls_reason(struct bufferevent *bev, unsigned long e, char *buf, size_t len)
{
    SSL *ssl = bufferevent_openssl_get_ssl(bev);
    const char *reason = ERR_reason_error_string(e);
    long verify = ssl != NULL ? SSL_get_verify_result(ssl) : X509_V_OK;

    if (reason == NULL) {
        ERR_error_string_n(e, buf, len);
        return;
    }
    if (verify != X509_V_OK)
        snprintf(buf, len, "%s: %s", reason, X509_verify_cert_error_string(verify));
    else
        snprintf(buf, len, "%s", reason);
}

/* 1 if a TLS handshake ended because the peer closed the connection (what
 * a plaintext-only server does with a ClientHello), per OpenSSL's error e,
 * the bufferevent event and the socket error. */
static int handshake_cut(unsigned long e, short what, int sock_err)
{
    if (e != 0)
        return ERR_GET_LIB(e) == ERR_LIB_SSL && ERR_GET_REASON(e) == SSL_R_UNEXPECTED_EOF_WHILE_READING;
    return (what & BEV_EVENT_EOF) || sock_err == ECONNRESET || sock_err == EPIPE;
}

/* Notes in cli->why (and logs) why the connection failed or ended: what
 * happened (EOF/error) while connecting or connected. Returns the error the
 * pending requests get: RMQ_ETLS for a failed TLS handshake. */
static rmq_err_t note_failure(rmq_client_t *cli, struct bufferevent *bev, short what)
{
    unsigned long e = cli->opts.ssl_ctx != NULL ? bufferevent_get_openssl_error(bev) : 0;
    int sock_err = EVUTIL_SOCKET_ERROR();
    int connected = cli->state == CLI_CONNECTED;
    rmq_err_t err = connected ? RMQ_ECLOSED : RMQ_ECONNECT;
    char reason[WHY_MAX - 64];

    if (!connected && cli->opts.ssl_ctx != NULL && handshake_cut(e, what, sock_err)) {
        snprintf(cli->why, sizeof cli->why,
                 "TLS handshake failed: the peer closed the connection (does it speak TLS? "
                 "tlsMode=disabled there?)");
        err = RMQ_ETLS;
    } else if (e != 0) {
        tls_reason(bev, e, reason, sizeof reason);
        snprintf(cli->why, sizeof cli->why, "%s: %s", connected ? "TLS" : "TLS handshake failed", reason);
        err = connected ? err : RMQ_ETLS;
    } else if (connected && !cli->answered && cli->opts.ssl_ctx == NULL && cli->npending > 0) {
        snprintf(cli->why, sizeof cli->why,
                 "the peer closed the connection before any answer (a server with "
                 "tlsMode=enforcing closes plaintext connections: configure TLS?)");
    } else if (what & BEV_EVENT_EOF) {
        snprintf(cli->why, sizeof cli->why, "the peer closed the connection");
    } else {
        snprintf(cli->why, sizeof cli->why, "%s", evutil_socket_error_to_string(sock_err));
    }
    if (!connected || (what & BEV_EVENT_ERROR))
        LOG_WARN_RL("%s: %s %s: %s", cli->name, connected ? "connection to" : "cannot connect to",
                    cli->addr, cli->why);
    return err;
}

static void event_cb(struct bufferevent *bev, short what, void *arg)
{
    rmq_client_t *cli = arg;

    if (what & BEV_EVENT_CONNECTED) {
        int one = 1;
        cli->state = CLI_CONNECTED;
        cli->why[0] = '\0';
        evtimer_del(cli->connect_timer);
        setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        return;
    }
    if (!(what & (BEV_EVENT_EOF | BEV_EVENT_ERROR | BEV_EVENT_TIMEOUT)))
        return;
    drop_connection(cli, note_failure(cli, bev, what));
}

static void connect_timer_cb(evutil_socket_t fd, short what, void *arg)
{
    rmq_client_t *cli = arg;

    snprintf(cli->why, sizeof cli->why, "connect timed out%s",
             cli->opts.ssl_ctx != NULL ? " (TCP connect or TLS handshake)" : "");
    LOG_WARN_RL("%s: connect to %s timed out; pending requests fail, next request reconnects", cli->name,
                cli->addr);
    drop_connection(cli, RMQ_ECONNECT);
}

/* Creates the bufferevent (TLS if configured), unconnected. */
static struct bufferevent *make_bev(rmq_client_t *cli, int numeric)
{
    int opts = BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS;

    if (cli->opts.ssl_ctx == NULL)
        return bufferevent_socket_new(cli->base, -1, opts);
    SSL *ssl = SSL_new(cli->opts.ssl_ctx);
    if (ssl == NULL)
        return NULL;
    if (!numeric)
        SSL_set_tlsext_host_name(ssl, cli->host);
    struct bufferevent *bev = bufferevent_openssl_socket_new(cli->base, -1, ssl,
                                                             BUFFEREVENT_SSL_CONNECTING, opts);
    if (bev == NULL) {
        SSL_free(ssl);
        return NULL;
    }
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
}

/* Starts connecting unless connected or connecting. A numeric address is
 * connected without a lookup; a host name is resolved with a blocking
 * getaddrinfo (tools and start-up; daemons use numeric addresses). */
static rmq_err_t ensure_connection(rmq_client_t *cli)
{
    struct sockaddr_storage ss;
    int sslen = sizeof(ss);

    if (cli->state != CLI_IDLE)
        return RMQ_OK;
    int numeric = rmq_addr_sockaddr(cli->addr, &ss, &sslen) == RMQ_OK;
    cli->bev = make_bev(cli, numeric);
    if (cli->bev == NULL)
        return RMQ_ENOMEM;
    cli->answered = 0;
    bufferevent_setcb(cli->bev, read_cb, NULL, event_cb, cli);
    bufferevent_enable(cli->bev, EV_READ | EV_WRITE);
    int rc = numeric
        ? bufferevent_socket_connect(cli->bev, (struct sockaddr *)&ss, sslen)
        : bufferevent_socket_connect_hostname(cli->bev, NULL, AF_UNSPEC, cli->host, cli->port);
    if (rc != 0) {
        snprintf(cli->why, sizeof cli->why, "cannot start connecting: %s",
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
        LOG_WARN_RL("%s: %s %s; the request fails, next one retries", cli->name, cli->why, cli->addr);
        bufferevent_free(cli->bev);
        cli->bev = NULL;
        return RMQ_ECONNECT;
    }
    int ms = cli->opts.connect_timeout_ms > 0 ? cli->opts.connect_timeout_ms
                                              : CONNECT_TIMEOUT_DEFAULT_MS;
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    evtimer_add(cli->connect_timer, &tv);
    cli->state = CLI_CONNECTING;
    return RMQ_OK;
}

/* ---- client ----------------------------------------------------------------- */

/* Creates a client for addr; copies addr and opts. Owner: caller. Loop thread. */
rmq_client_t *rmq_client_new(struct event_base *base, const char *addr,
                             const rmq_client_opts_t *opts)
{
    rmq_client_t *cli = calloc(1, sizeof(*cli));

    if (cli == NULL)
        return NULL;
    cli->base = base;
    cli->refs = 1;
    cli->next_opaque = 1;
    if (opts != NULL)
        cli->opts = *opts;
    cli->addr = strdup(addr);
    cli->name = strdup(cli->opts.name != NULL ? cli->opts.name : "client");
    cli->opts.name = cli->name;
    cli->nbuckets = MAP_MIN_BUCKETS;
    cli->buckets = calloc(cli->nbuckets, sizeof(*cli->buckets));
    cli->connect_timer = evtimer_new(base, connect_timer_cb, cli);
    cli->req_timer = evtimer_new(base, req_timer_cb, cli);
    if (cli->addr == NULL || cli->name == NULL || cli->buckets == NULL ||
        cli->connect_timer == NULL || cli->req_timer == NULL)
        goto err;
    if (rmq_addr_split(addr, cli->host, sizeof(cli->host), &cli->port) != RMQ_OK) {
        LOG_ERROR("%s: bad address '%s' (want host:port)", cli->name, addr);
        goto err;
    }
    return cli;
err:
    client_unref(cli);
    return NULL;
}

static void client_unref(rmq_client_t *cli)
{
    if (--cli->refs > 0)
        return;
    if (cli->connect_timer != NULL)
        event_free(cli->connect_timer);
    if (cli->req_timer != NULL)
        event_free(cli->req_timer);
    free(cli->buckets);
    free(cli->heap);
    free(cli->addr);
    free(cli->name);
    free(cli);
}

/* Fails pending requests with RMQ_ESHUTDOWN now, closes, and releases the
 * client (memory goes when the last running callback returns). Loop thread;
 * allowed inside this client's callbacks. */
void rmq_client_free(rmq_client_t *cli)
{
    if (cli == NULL || cli->freed)
        return;
    cli->freed = 1;
    cli->on_close = NULL;
    drop_connection(cli, RMQ_ESHUTDOWN);
    client_unref(cli);
}

const char *rmq_client_addr(const rmq_client_t *cli)
{
    return cli->addr;
}

const char *rmq_client_last_error(const rmq_client_t *cli)
{
    return cli->why;
}

int rmq_client_is_connected(const rmq_client_t *cli)
{
    return cli->state == CLI_CONNECTED;
}

void rmq_client_on_request(rmq_client_t *cli, rmq_handler_fn fn, void *arg)
{
    cli->on_request = fn;
    cli->on_request_arg = arg;
}

void rmq_client_on_close(rmq_client_t *cli, void (*fn)(rmq_client_t *cli, void *arg), void *arg)
{
    cli->on_close = fn;
    cli->on_close_arg = arg;
}

size_t rmq_client_pending(const rmq_client_t *cli)
{
    return cli->npending;
}

/* Queues one frame: connects if needed, registers a pending request unless
 * cb is NULL (oneway), encodes (copying body or moving buf). */
static rmq_err_t send_frame(rmq_client_t *cli, Rmq__Command *req, const void *body, size_t len,
                            struct evbuffer *buf, int timeout_ms, rmq_response_fn cb, void *arg)
{
    uint32_t opaque = 0;
    rmq_err_t err;

    if (cli->freed)
        return RMQ_ESHUTDOWN;
    if (cb != NULL && timeout_ms <= 0)
        return RMQ_EINVAL;
    err = ensure_connection(cli);
    if (err != RMQ_OK)
        return err;
    if (cb != NULL) {
        err = pending_add(cli, timeout_ms, cb, arg, &opaque);
        if (err != RMQ_OK)
            return err;
    }
    req->opaque = opaque;
    req->flags = cb != NULL ? RMQ__COMMAND_FLAG__FLAG_NONE : RMQ__COMMAND_FLAG__FLAG_ONEWAY;
    req->version = RMQ_PROTOCOL_VERSION;
    rmq_signature_t sig;
    if (cli->opts.sign != NULL) {
        uint8_t digest[32];
        if (buf != NULL)
            rmq_acl_body_digest_buf(buf, digest);
        else
            rmq_acl_body_digest(body, len, digest);
        req->auth = NULL;
        cli->opts.sign(req, digest, &sig, cli->opts.sign_arg);
        req->auth = &sig.auth;
    }
    struct evbuffer *out = bufferevent_get_output(cli->bev);
    err = buf != NULL ? rmq_frame_encode_buf(out, req, buf) : rmq_frame_encode(out, req, body, len);
    if (cli->opts.sign != NULL)
        req->auth = NULL;
    if (err != RMQ_OK && cb != NULL) {
        free(pending_take(cli, opaque));
        arm_timer(cli);
    }
    return err;
}

rmq_err_t rmq_client_call(rmq_client_t *cli, Rmq__Command *req, const void *body, size_t len,
                          int timeout_ms, rmq_response_fn cb, void *arg)
{
    if (cb == NULL)
        return RMQ_EINVAL;
    return send_frame(cli, req, body, len, NULL, timeout_ms, cb, arg);
}

rmq_err_t rmq_client_call_buf(rmq_client_t *cli, Rmq__Command *req, struct evbuffer *body,
                              int timeout_ms, rmq_response_fn cb, void *arg)
{
    if (cb == NULL)
        return RMQ_EINVAL;
    return send_frame(cli, req, NULL, 0, body, timeout_ms, cb, arg);
}

rmq_err_t rmq_client_oneway(rmq_client_t *cli, Rmq__Command *req, const void *body, size_t len)
{
    return send_frame(cli, req, body, len, NULL, 0, NULL, NULL);
}
