/* rmq_transport.c: the transport under every codec. Owns the listener, the
 * table of connections, the choice of a connection's codec from its first
 * bytes, and the life of a connection: accepted (optionally sniffed for
 * TLS), open, closing (unlinked, on_close fired, callbacks cut), then freed
 * by the reaper on the next loop pass and released when the last reference
 * drops. Back-pressure stops reading from a peer whose unsent output piles
 * up. Output of plaintext connections is written by the transport itself,
 * once per connection per loop pass after the handlers ran (the flusher):
 * every reply a pass produced goes out in one writev, and the socket's
 * write event is armed only while a write left bytes behind, so a reply
 * costs no epoll_ctl and no extra epoll_wait round. Wire formats live in
 * the codecs (rmq_transport.h). Loop thread only. */
#include "rmq_transport.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/queue.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

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
#define RMQ_SERVER_CODECS_MAX 4
#define CONN_READ_MAX ((size_t)64 << 10)   /* bytes one plaintext readv may take */

struct rmq_conn {
    TAILQ_ENTRY(rmq_conn) link;
    rmq_server_t *srv;            /* NULL once the conn has left the server */
    struct bufferevent *bev;      /* NULL while sniffing and after the reaper */
    struct event *sniff_ev;       /* TLS modes: waiting for the first byte */
    struct event *read_ev;        /* plaintext: conn_plain_read's event */
    evutil_socket_t fd;
    uint64_t id;
    int refs;                     /* the server's own ref + deferred answers */
    int closing;
    int read_paused;              /* back-pressure */
    int tls;                      /* libevent's TLS bufferevent writes the output */
    int flush_queued;             /* on the server's flush list */
    TAILQ_ENTRY(rmq_conn) flush_link;
    const rmq_codec_t *codec;     /* NULL until the first bytes chose it */
    void *codec_state;            /* state registered with codec */
    void *codec_data;             /* the codec's own per-connection state */
    void *data;
    char peer[ADDR_MAX];
    char local[ADDR_MAX];
    uint32_t peer_ip4;            /* host order; 0: the peer is not IPv4 */
    uint16_t peer_port4;
    uint8_t peer_ip6[16];         /* the peer's address when peer_is6 */
    uint16_t peer_port6;
    int peer_is6;                 /* an IPv6 peer that is not an IPv4-mapped one */
};

TAILQ_HEAD(conn_list, rmq_conn);

typedef struct rmq_codec_slot {
    const rmq_codec_t *codec;
    void *state;
} rmq_codec_slot_t;

struct rmq_server {
    struct event_base *base;
    rmq_server_opts_t opts;
    char *name;
    struct evconnlistener *lis[RMQ_SERVER_LISTENERS_MAX];
    size_t nlis;
    int port;                     /* the first listener's */
    rmq_codec_slot_t codecs[RMQ_SERVER_CODECS_MAX];  /* probed in this order */
    size_t ncodecs;
    struct conn_list conns;
    size_t nconns;
    struct conn_list closing;     /* waiting for the reaper */
    struct event *reaper;
    struct conn_list flushq;      /* plaintext conns with output to write */
    struct event *flusher;
    rmq_conn_fn on_close;
    void *on_close_arg;
};

static _Atomic uint64_t next_conn_id = 1;

static void conn_read_cb(struct bufferevent *bev, void *arg);
static void conn_write_cb(struct bufferevent *bev, void *arg);
static void conn_event_cb(struct bufferevent *bev, short what, void *arg);

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

void rmq_conn_ref_any(void *conn)
{
    rmq_conn_ref(conn);
}

void rmq_conn_unref_any(void *conn)
{
    rmq_conn_unref(conn);
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
    if (conn->read_ev != NULL) {
        event_free(conn->read_ev);
        conn->read_ev = NULL;
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
    if (conn->read_ev != NULL)
        event_del(conn->read_ev);
    TAILQ_REMOVE(&srv->conns, conn, link);
    srv->nconns--;
    TAILQ_INSERT_TAIL(&srv->closing, conn, link);
    if (conn->codec != NULL && conn->codec->conn_closed != NULL)
        conn->codec->conn_closed(conn, conn->codec_state);
    if (srv->on_close != NULL)
        srv->on_close(conn, srv->on_close_arg);
    event_active(srv->reaper, EV_TIMEOUT, 0);
}

const char *rmq_conn_peer(const rmq_conn_t *conn)
{
    return conn->peer;
}

void rmq_conn_peer_ipv4(const rmq_conn_t *conn, uint32_t *ip, uint16_t *port)
{
    *ip = conn->peer_ip4;
    *port = conn->peer_ip4 ? conn->peer_port4 : 0;
}

const uint8_t *rmq_conn_peer_ipv6(const rmq_conn_t *conn, uint16_t *port)
{
    if (!conn->peer_is6)
        return NULL;
    *port = conn->peer_port6;
    return conn->peer_ip6;
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

/* Arms (on) or disarms conn's reading: a plaintext conn's own read event,
 * with the idle timeout, or a TLS conn's bufferevent. Loop thread. */
static void conn_reading(rmq_conn_t *conn, int on)
{
    const rmq_server_t *srv = conn->srv;
    struct timeval idle = { srv->opts.idle_timeout_ms / 1000, (srv->opts.idle_timeout_ms % 1000) * 1000 };

    if (conn->read_ev == NULL) {
        if (on)
            bufferevent_enable(conn->bev, EV_READ);
        else
            bufferevent_disable(conn->bev, EV_READ);
    } else if (on) {
        event_add(conn->read_ev, srv->opts.idle_timeout_ms > 0 ? &idle : NULL);
    } else {
        event_del(conn->read_ev);
    }
}

/* Stops reading from conn while its output is over the limit. Loop thread. */
static void conn_check_output(rmq_conn_t *conn)
{
    if (conn->read_paused || conn->closing || conn->bev == NULL)
        return;
    if (rmq_conn_output_len(conn) <= max_output(conn->srv))
        return;
    conn->read_paused = 1;
    conn_reading(conn, 0);
    LOG_WARN_RL("%s: %s has %zu bytes unsent; pausing reads", conn->srv->name, conn->peer,
                rmq_conn_output_len(conn));
}

/* ---- output ------------------------------------------------------------ */

/* Queues a plaintext conn's output for the flusher of this loop pass
 * (holding a reference until then). TLS output is libevent's to write. */
static void conn_flush_queue(rmq_conn_t *conn)
{
    if (conn->tls || conn->flush_queued || conn->closing || conn->bev == NULL)
        return;
    conn->flush_queued = 1;
    rmq_conn_ref(conn);
    TAILQ_INSERT_TAIL(&conn->srv->flushq, conn, flush_link);
    event_active(conn->srv->flusher, EV_TIMEOUT, 0);
}

static void conn_output_drained(rmq_conn_t *conn);

/* Writes what a plaintext conn's output holds, in one writev; the write
 * event stays armed only while the socket took less (libevent writes the
 * rest and conn_write_cb disarms it once the output is empty). A write
 * error closes the connection. Loop thread. */
static void conn_flush(rmq_conn_t *conn)
{
    struct evbuffer *out;
    char why[160];

    if (conn->closing || conn->bev == NULL)
        return;
    out = bufferevent_get_output(conn->bev);
    if (evbuffer_get_length(out) == 0)
        return;
    /* libevent freezes the start of a socket bufferevent's output for all
     * but its own writer: thaw it for this write, as its writer does */
    evbuffer_unfreeze(out, 1);
    int n = evbuffer_write(out, conn->fd);
    int err = errno;
    evbuffer_freeze(out, 1);
    if (n < 0) {
        if (err != EAGAIN && err != EWOULDBLOCK && err != EINTR) {
            snprintf(why, sizeof(why), "socket error: %s", strerror(err));
            rmq_conn_close(conn, why);
            return;
        }
    }
    if (evbuffer_get_length(out) > 0) {
        bufferevent_enable(conn->bev, EV_WRITE);
        return;
    }
    bufferevent_disable(conn->bev, EV_WRITE);
    conn_output_drained(conn);
}

/* The flusher (an event made active by the first reply of a pass): writes
 * every queued conn's output. Loop thread. */
static void flusher_cb(evutil_socket_t fd, short what, void *arg)
{
    rmq_server_t *srv = arg;
    rmq_conn_t *conn;

    while ((conn = TAILQ_FIRST(&srv->flushq)) != NULL) {
        TAILQ_REMOVE(&srv->flushq, conn, flush_link);
        conn->flush_queued = 0;
        conn_flush(conn);
        rmq_conn_unref(conn);
    }
}

/* ---- codec choice and input --------------------------------------------- */

/* Shows the first bytes to every codec: the first to answer YES takes conn;
 * else, while one answers MORE, wait; else the first registered codec (the
 * default) takes it and refuses it with its own reason. Returns 1 when conn
 * has a codec, 0 to wait. */
static int conn_choose_codec(rmq_conn_t *conn, struct evbuffer *in)
{
    rmq_server_t *srv = conn->srv;
    size_t len = evbuffer_get_length(in);
    uint8_t head[RMQ_CODEC_PROBE_MAX];
    int more = 0;

    if (len > sizeof(head))
        len = sizeof(head);
    if (evbuffer_copyout(in, head, len) != (ev_ssize_t)len)
        len = 0;
    for (size_t i = 0; i < srv->ncodecs; i++) {
        rmq_codec_probe_t verdict = srv->codecs[i].codec->probe(head, len,
                                                                 rmq_server_max_frame(srv));
        if (verdict == RMQ_CODEC_YES) {
            conn->codec = srv->codecs[i].codec;
            conn->codec_state = srv->codecs[i].state;
            return 1;
        }
        more |= verdict == RMQ_CODEC_MORE;
    }
    if (more && len < sizeof(head))
        return 0;
    conn->codec = srv->codecs[0].codec;
    conn->codec_state = srv->codecs[0].state;
    return 1;
}

/* Hands every whole request in the input to conn's codec (choosing it
 * first), stopping when the connection starts closing or pauses for
 * back-pressure. Loop thread. */
static void conn_process_input(rmq_conn_t *conn)
{
    struct evbuffer *in = bufferevent_get_input(conn->bev);

    rmq_conn_ref(conn);
    if (conn->codec == NULL && !conn_choose_codec(conn, in))
        goto out;
    while (!conn->closing && !conn->read_paused) {
        const char *why = "malformed request";
        rmq_err_t err = conn->codec->serve(conn, in, conn->codec_state, &why);

        if (err == RMQ_EAGAIN)
            break;
        if (err != RMQ_OK) {
            LOG_WARN_RL("%s: bad %s frame from %s: %s (%s)", conn->srv->name, conn->codec->name,
                        conn->peer, why, rmq_strerror(err));
            rmq_conn_close(conn, why);
            break;
        }
    }
out:
    rmq_conn_unref(conn);
}

static void conn_read_cb(struct bufferevent *bev, void *arg)
{
    conn_process_input(arg);
}

/* Commits the n bytes a readv put into the space vec reserved (none for
 * n <= 0) to in. */
static void conn_commit_read(struct evbuffer *in, struct evbuffer_iovec *vec, int nvec, ssize_t n)
{
    size_t left = n > 0 ? (size_t)n : 0;

    for (int i = 0; i < nvec; i++) {
        vec[i].iov_len = left < vec[i].iov_len ? left : vec[i].iov_len;
        left -= vec[i].iov_len;
    }
    evbuffer_commit_space(in, vec, nvec);
}

/* A plaintext conn's read event: one readv of up to CONN_READ_MAX bytes into
 * the input, then its requests; end of stream, a socket error or the idle
 * timeout closes it. Loop thread. */
static void conn_plain_read(evutil_socket_t fd, short what, void *arg)
{
    rmq_conn_t *conn = arg;
    struct evbuffer *in = bufferevent_get_input(conn->bev);
    struct evbuffer_iovec vec[2];
    struct iovec iov[2];
    char why[160];

    if (what & EV_TIMEOUT) {
        rmq_conn_close(conn, "idle timeout");
        return;
    }
    /* a socket bufferevent freezes its input's end for all but its own
     * reader: thaw it for this read, as its reader does */
    evbuffer_unfreeze(in, 0);
    int nvec = evbuffer_reserve_space(in, CONN_READ_MAX, vec, 2);
    ssize_t n = -1;
    int err = ENOMEM;
    if (nvec > 0) {
        for (int i = 0; i < nvec; i++)
            iov[i] = (struct iovec){ vec[i].iov_base, vec[i].iov_len };
        n = readv(fd, iov, nvec);
        err = errno;
        conn_commit_read(in, vec, nvec, n);
    }
    evbuffer_freeze(in, 0);
    if (n > 0) {
        conn_process_input(conn);
        return;
    }
    if (n < 0 && (err == EAGAIN || err == EWOULDBLOCK || err == EINTR))
        return;
    if (n < 0)
        snprintf(why, sizeof(why), "socket error: %s", strerror(err));
    rmq_conn_close(conn, n == 0 ? "peer closed" : why);
}

/* Resumes a reader paused for back-pressure once its output is at or
 * below half the limit. Loop thread. */
static void conn_output_drained(rmq_conn_t *conn)
{
    if (conn->codec != NULL && conn->codec->conn_drained != NULL && !conn->closing &&
        rmq_conn_output_len(conn) <= max_output(conn->srv) / 2)
        conn->codec->conn_drained(conn, conn->codec_state);
    if (!conn->read_paused || conn->closing ||
        rmq_conn_output_len(conn) > max_output(conn->srv) / 2)
        return;
    conn->read_paused = 0;
    conn_reading(conn, 1);
    conn_process_input(conn);
}

/* Called when libevent's writes bring the output to half the limit:
 * disarms a plaintext conn's write event once its output is empty (the
 * flusher writes the next replies) and resumes a paused reader. */
static void conn_write_cb(struct bufferevent *bev, void *arg)
{
    rmq_conn_t *conn = arg;

    if (!conn->tls && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        bufferevent_disable(bev, EV_WRITE);
    conn_output_drained(conn);
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

/* Wraps conn's socket in a bufferevent (TLS if tls) and starts reading. A
 * plaintext conn's bufferevent only holds its buffers: its write event stays
 * off until a flush leaves bytes, and it is read by conn_plain_read, because
 * libevent's evbuffer_read takes at most 4096 bytes per readv however much
 * is waiting (EVBUFFER_MAX_READ; bufferevent_set_max_single_read cannot
 * raise it), an epoll_wait, an ioctl and a readv per 4 KiB (issue 19). */
static rmq_err_t conn_start(rmq_conn_t *conn, int tls)
{
    rmq_server_t *srv = conn->srv;
    int opts = BEV_OPT_CLOSE_ON_FREE | BEV_OPT_DEFER_CALLBACKS;

    conn->tls = tls;
    if (tls) {
        SSL *ssl = SSL_new(srv->opts.ssl_ctx);
        if (ssl == NULL)
            return RMQ_ETLS;
        rmq_tls_offer_h2(ssl);
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
    if (tls) {
        if (srv->opts.idle_timeout_ms > 0) {
            struct timeval tv = { srv->opts.idle_timeout_ms / 1000,
                                  (srv->opts.idle_timeout_ms % 1000) * 1000 };
            bufferevent_set_timeouts(conn->bev, &tv, NULL);
        }
        bufferevent_enable(conn->bev, EV_READ | EV_WRITE);
        return RMQ_OK;
    }
    conn->read_ev = event_new(srv->base, conn->fd, EV_READ | EV_PERSIST, conn_plain_read, conn);
    if (conn->read_ev == NULL)
        return RMQ_ENOMEM;
    conn_reading(conn, 1);
    return RMQ_OK;
}

/* TLS modes: peeks at the first byte; 0x16 (TLS handshake record) means
 * TLS. A codec's first byte is never 0x16: rmq and remoting frames open with
 * a big-endian length below 0x16000000 (the frame maximum). The codec is
 * chosen afterwards, from the first plaintext bytes. */
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

/* Keeps the peer address sa (unmapped: rmq_sockaddr_unmap) as an IPv4 or
 * an IPv6 address for the born host of the messages it sends. */
static void conn_peer_keep(rmq_conn_t *conn, const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
        conn->peer_ip4 = ntohl(in->sin_addr.s_addr);
        conn->peer_port4 = ntohs(in->sin_port);
    } else if (sa->sa_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;
        memcpy(conn->peer_ip6, in6->sin6_addr.s6_addr, 16);
        conn->peer_port6 = ntohs(in6->sin6_port);
        conn->peer_is6 = 1;
    }
}

static rmq_conn_t *conn_new(rmq_server_t *srv, evutil_socket_t fd, const struct sockaddr *sa)
{
    rmq_conn_t *conn = calloc(1, sizeof(*conn));
    struct sockaddr_storage local, peer;
    socklen_t locallen = sizeof(local);
    int one = 1;

    if (conn == NULL)
        return NULL;
    conn->srv = srv;
    conn->fd = fd;
    conn->refs = 1;
    conn->id = atomic_fetch_add(&next_conn_id, 1);
    rmq_sockaddr_text(sa, conn->peer, sizeof(conn->peer));
    rmq_sockaddr_unmap(sa, &peer);
    conn_peer_keep(conn, (struct sockaddr *)&peer);
    if (getsockname(fd, (struct sockaddr *)&local, &locallen) == 0)
        rmq_sockaddr_text((struct sockaddr *)&local, conn->local, sizeof(conn->local));
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
        rmq_sockaddr_text(sa, peer, sizeof(peer));
        LOG_WARN_RL("%s: refusing %s: %zu connections open (limit)", srv->name, peer,
                    srv->nconns);
        evutil_closesocket(fd);
        return;
    }
    rmq_conn_t *conn = conn_new(srv, fd, sa);
    if (conn == NULL) {
        rmq_sockaddr_text(sa, peer, sizeof(peer));
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

/* Creates a transport on base with no codec; opts copied (name too).
 * Owner: caller. Loop thread. */
rmq_server_t *rmq_transport_new(struct event_base *base, const rmq_server_opts_t *opts)
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
    TAILQ_INIT(&srv->flushq);
    srv->reaper = event_new(base, -1, 0, reaper_cb, srv);
    srv->flusher = event_new(base, -1, 0, flusher_cb, srv);
    if (srv->name == NULL || srv->reaper == NULL || srv->flusher == NULL ||
        (srv->opts.tls_mode != RMQ_TLS_DISABLED && srv->opts.ssl_ctx == NULL)) {
        if (srv->opts.tls_mode != RMQ_TLS_DISABLED && srv->opts.ssl_ctx == NULL)
            LOG_ERROR("%s: TLS mode set but no SSL context given", srv->name);
        rmq_server_free(srv);
        return NULL;
    }
    return srv;
}

/* Binds host:port (NULL, "", 0.0.0.0 or ::: every address, IPv4 and IPv6
 * on one socket; port 0: ephemeral); each call adds a listener, whose
 * connections all serve alike; RMQ_EINVAL without a codec or past
 * RMQ_SERVER_LISTENERS_MAX. Start-up only: a host name is resolved with a
 * blocking lookup. */
rmq_err_t rmq_server_listen(rmq_server_t *srv, const char *host, int port)
{
    char why[256];

    if (srv->ncodecs == 0 || srv->nlis == RMQ_SERVER_LISTENERS_MAX) {
        LOG_ERROR("%s: %s; not listening on port %d", srv->name,
                  srv->ncodecs == 0 ? "no codec registered" : "no room for another listener", port);
        return RMQ_EINVAL;
    }
    int fd = rmq_listen_socket(srv->name, host, port, SOMAXCONN, why, sizeof(why));
    if (fd < 0) {
        LOG_ERROR("%s: %s", srv->name, why);
        return RMQ_EIO;
    }
    struct evconnlistener *lis = evconnlistener_new(srv->base, accept_cb, srv, LEV_OPT_CLOSE_ON_FREE, 0, fd);
    if (lis == NULL) {
        LOG_ERROR("%s: cannot watch the listening socket on port %d", srv->name, port);
        evutil_closesocket(fd);
        return RMQ_ENOMEM;
    }
    evconnlistener_set_error_cb(lis, accept_error_cb);
    if (srv->nlis == 0)
        srv->port = rmq_listen_port(fd);
    srv->lis[srv->nlis++] = lis;
    return RMQ_OK;
}

int rmq_server_port(const rmq_server_t *srv)
{
    return srv->port;
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

/* Stops listening, writes what plaintext connections have queued (one
 * non-blocking write each), closes every connection (on_close fires for
 * each) and frees the server; connections still referenced live on, closed. Loop
 * thread, not from inside a handler. */
void rmq_server_free(rmq_server_t *srv)
{
    rmq_conn_t *conn;

    if (srv == NULL)
        return;
    for (size_t i = 0; i < srv->nlis; i++)
        evconnlistener_free(srv->lis[i]);
    flusher_cb(-1, 0, srv);    /* last words (a gRPC GOAWAY) go out if the socket takes them */
    while ((conn = TAILQ_FIRST(&srv->conns)) != NULL)
        rmq_conn_close(conn, NULL);
    reap(srv);
    if (srv->reaper != NULL)
        event_free(srv->reaper);
    if (srv->flusher != NULL)
        event_free(srv->flusher);
    for (size_t i = 0; i < srv->ncodecs; i++)
        if (srv->codecs[i].codec->free_state != NULL)
            srv->codecs[i].codec->free_state(srv->codecs[i].state);
    free(srv->name);
    free(srv);
}

/* ---- codecs ----------------------------------------------------------------- */

rmq_err_t rmq_server_add_codec(rmq_server_t *srv, const rmq_codec_t *codec, void *state)
{
    if (srv->ncodecs == RMQ_SERVER_CODECS_MAX || rmq_server_codec_state(srv, codec) != NULL) {
        LOG_ERROR("%s: cannot register codec %s (already there, or %d codecs)", srv->name,
                  codec->name, RMQ_SERVER_CODECS_MAX);
        return RMQ_EINVAL;
    }
    srv->codecs[srv->ncodecs++] = (rmq_codec_slot_t){ codec, state };
    return RMQ_OK;
}

void *rmq_server_codec_state(const rmq_server_t *srv, const rmq_codec_t *codec)
{
    for (size_t i = 0; i < srv->ncodecs; i++)
        if (srv->codecs[i].codec == codec)
            return srv->codecs[i].state;
    return NULL;
}

const char *rmq_server_name(const rmq_server_t *srv)
{
    return srv->name;
}

uint32_t rmq_server_max_frame(const rmq_server_t *srv)
{
    return srv->opts.max_frame ? srv->opts.max_frame : RMQ_FRAME_MAX_DEFAULT;
}

rmq_server_t *rmq_conn_server(const rmq_conn_t *conn)
{
    return conn->srv;
}

struct event_base *rmq_server_base(const rmq_server_t *srv)
{
    return srv->base;
}

void *rmq_conn_codec_data(const rmq_conn_t *conn)
{
    return conn->codec_data;
}

void rmq_conn_set_codec_data(rmq_conn_t *conn, void *data)
{
    conn->codec_data = data;
}

const rmq_codec_t *rmq_conn_codec(const rmq_conn_t *conn)
{
    return conn->codec;
}

struct evbuffer *rmq_conn_output(rmq_conn_t *conn)
{
    if (!rmq_conn_is_open(conn) || conn->bev == NULL)
        return NULL;
    return bufferevent_get_output(conn->bev);
}

void rmq_conn_output_done(rmq_conn_t *conn)
{
    conn_check_output(conn);
    conn_flush_queue(conn);
}
