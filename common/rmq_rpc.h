/* rmq_rpc.h: request/response over libevent bufferevents.
 *
 * Server: the native rmq codec over the transport (rmq_transport.h: the
 * listener, the connections, codec choice by first bytes, TLS):
 * dispatch by request code. Handlers run on the loop thread. A connection is freed outside its own
 * callbacks (marked closing, freed on the next loop pass), so a handler may
 * close it or keep a reference (rmq_conn_ref) to answer later (long polls,
 * group commit, SYNC_MASTER waits).
 *
 * Client: one remote address, connected on demand with a connect timeout and
 * reconnected after a failure; many requests in flight matched by opaque,
 * each with its own timeout; callbacks on the loop thread, exactly once.
 *
 * Blocking wrapper (rmq_sync): its own event base, for tools and tests.
 *
 * TLS through bufferevent_openssl when an SSL_CTX is given; off by default. */
#ifndef RMQ_RPC_H
#define RMQ_RPC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include <event2/event.h>
#include <openssl/ssl.h>

#include "rmq_frame.h"

typedef struct rmq_server rmq_server_t;
typedef struct rmq_conn rmq_conn_t;
typedef struct rmq_client rmq_client_t;
typedef struct rmq_client_pool rmq_client_pool_t;
typedef struct rmq_sync rmq_sync_t;

/* ---- server --------------------------------------------------------- */

typedef enum rmq_tls_mode {
    RMQ_TLS_DISABLED = 0,
    RMQ_TLS_PERMISSIVE = 1,   /* TLS and plaintext on one port */
    RMQ_TLS_ENFORCING = 2,
} rmq_tls_mode_t;

typedef struct rmq_server_opts {
    uint32_t max_frame;        /* 0: RMQ_FRAME_MAX_DEFAULT */
    int idle_timeout_ms;       /* close a connection silent this long; 0: never */
    size_t max_conns;          /* 0: unlimited */
    size_t max_output_bytes;   /* stop reading from a peer whose replies pile up; 0: 64 MiB */
    SSL_CTX *ssl_ctx;          /* needed unless tls_mode is DISABLED */
    rmq_tls_mode_t tls_mode;
    const char *name;          /* for log lines, e.g. "namesrv" */
} rmq_server_opts_t;

/* A request handler. req->cmd and req->body belong to the server and are
 * freed after the handler returns, unless the handler takes them (sets the
 * fields to NULL). Loop thread. */
typedef void (*rmq_handler_fn)(rmq_conn_t *conn, rmq_frame_t *req, void *arg);
typedef void (*rmq_conn_fn)(rmq_conn_t *conn, void *arg);

/* Creates a server on base with the rmq codec registered (not listening
 * yet); more codecs: rmq_server_add_codec. Owner: caller. */
rmq_server_t *rmq_server_new(struct event_base *base, const rmq_server_opts_t *opts);
/* Binds and listens on host:port (port 0: ephemeral); a second call adds
 * another port serving the same (the broker's VIP channel), up to
 * RMQ_SERVER_LISTENERS_MAX. */
#define RMQ_SERVER_LISTENERS_MAX 2
rmq_err_t rmq_server_listen(rmq_server_t *srv, const char *host, int port);
/* The first listener's bound port, after listen. */
int rmq_server_port(const rmq_server_t *srv);
/* Routes request code to fn. Codes without a handler get REQUEST_CODE_NOT_SUPPORTED. */
void rmq_server_handle(rmq_server_t *srv, int code, rmq_handler_fn fn, void *arg);
/* Called once per connection as it closes (before it is freed). */
void rmq_server_on_close(rmq_server_t *srv, rmq_conn_fn fn, void *arg);
/* Access check run before every request's handler (rmq_acl_attach): returns
 * 1 to dispatch, or 0 after answering the request itself. Loop thread. */
typedef int (*rmq_auth_fn)(rmq_conn_t *conn, rmq_frame_t *req, void *arg);
void rmq_server_set_auth(rmq_server_t *srv, rmq_auth_fn fn, void *arg);
size_t rmq_server_conn_count(const rmq_server_t *srv);
/* Stops listening and closes every connection. Run the base once more
 * (EVLOOP_NONBLOCK) before freeing it: libevent finishes freeing a
 * bufferevent with a deferred callback queued on the next loop pass. */
void rmq_server_free(rmq_server_t *srv);

/* ---- connections (server side) --------------------------------------- */

/* "ip:port" of the peer. Valid while the connection is referenced. */
const char *rmq_conn_peer(const rmq_conn_t *conn);
/* The peer's IPv4 address and port in host order, kept from the accept;
 * both 0 when the peer is not IPv4. */
void rmq_conn_peer_ipv4(const rmq_conn_t *conn, uint32_t *ip, uint16_t *port);
/* The peer's 16-byte IPv6 address (valid while the connection is
 * referenced) and *port, kept from the accept; NULL (*port untouched) when
 * the peer is IPv4 or IPv4-mapped (rmq_conn_peer_ipv4 has it then). */
const uint8_t *rmq_conn_peer_ipv6(const rmq_conn_t *conn, uint16_t *port);
/* Local address "ip:port" the peer connected to. */
const char *rmq_conn_local(const rmq_conn_t *conn);
/* Unique id for the life of the process. */
uint64_t rmq_conn_id(const rmq_conn_t *conn);
/* 1 until the connection starts closing. */
int rmq_conn_is_open(const rmq_conn_t *conn);
void rmq_conn_ref(rmq_conn_t *conn);
void rmq_conn_unref(rmq_conn_t *conn);
/* The same for a holder that keeps a connection as void * (a send waiting
 * in the core, broker/core/bk_send.c). */
void rmq_conn_ref_any(void *conn);
void rmq_conn_unref_any(void *conn);
/* One user pointer per connection (not freed by the server). */
void rmq_conn_set_data(rmq_conn_t *conn, void *data);
void *rmq_conn_get_data(const rmq_conn_t *conn);
/* Starts an asynchronous close; reason is logged. */
void rmq_conn_close(rmq_conn_t *conn, const char *reason);
/* Bytes waiting to be written to this peer. */
size_t rmq_conn_output_len(const rmq_conn_t *conn);

/* What a reply needs from its request, kept by deferred answers. */
typedef struct rmq_reply_to {
    int32_t code;
    uint32_t opaque;
    uint32_t flags;
    int64_t start_us;          /* monotonic time rmq_reply_to() was taken; 0: unknown */
} rmq_reply_to_t;

/* Observes every answer a server gives (oneway requests included, though
 * nothing is sent for them): request code, status, and microseconds since
 * the rmq_reply_to() of the request (-1 if unknown). For metrics; must not
 * reply or close. Loop thread. */
typedef void (*rmq_reply_fn)(rmq_conn_t *conn, int32_t code, int status, int64_t elapsed_us, void *arg);
void rmq_server_on_reply(rmq_server_t *srv, rmq_reply_fn fn, void *arg);

rmq_reply_to_t rmq_reply_to(const Rmq__Command *req);

/* Answers a request: fills resp's code, opaque, flags, status and remark
 * (resp may be NULL for a bare status) and moves body (may be NULL) into the
 * output. Does nothing for a oneway request or a closing connection (body is
 * drained either way). Loop thread. */
rmq_err_t rmq_conn_reply(rmq_conn_t *conn, rmq_reply_to_t to, Rmq__Command *resp,
                         int status, const char *remark, struct evbuffer *body);
/* Bare status reply with a printf-style remark. */
rmq_err_t rmq_conn_replyf(rmq_conn_t *conn, rmq_reply_to_t to, int status,
                          const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Sends a request to the peer (server push, e.g. NOTIFY_CONSUMER_IDS_CHANGED), oneway. */
rmq_err_t rmq_conn_send_oneway(rmq_conn_t *conn, Rmq__Command *req, const void *body, size_t len);

/* ---- client ---------------------------------------------------------- */

/* A request signature (access control, rmq_acl.h) built into the caller's
 * storage: auth.signature points at hex. */
typedef struct rmq_signature {
    Rmq__Auth auth;
    char hex[65];
} rmq_signature_t;
/* Signs req (auth unset; code, opaque, flags and header final) and the
 * SHA-256 of its body (rmq_acl_body_digest) into sig. */
typedef void (*rmq_sign_fn)(const Rmq__Command *req, const uint8_t body_sha256[32],
                            rmq_signature_t *sig, void *arg);

typedef struct rmq_client_opts {
    int connect_timeout_ms;    /* 0: 3000 */
    uint32_t max_frame;        /* 0: RMQ_FRAME_MAX_DEFAULT */
    SSL_CTX *ssl_ctx;          /* NULL: plaintext */
    const char *name;
    rmq_sign_fn sign;          /* NULL: requests go unsigned */
    void *sign_arg;            /* borrowed; outlives the clients */
} rmq_client_opts_t;

/* Called exactly once per request on the loop thread. err is RMQ_OK with resp
 * filled (check resp->cmd->status), or RMQ_ETIMEDOUT, RMQ_ECLOSED,
 * RMQ_ECONNECT, RMQ_ETLS (handshake failed), RMQ_ESHUTDOWN, RMQ_EPROTO with
 * resp NULL (rmq_client_last_error says why the connection failed). The callback may take
 * resp->cmd / resp->body (set them to NULL); the rest is freed after it returns. */
typedef void (*rmq_response_fn)(rmq_err_t err, rmq_frame_t *resp, void *arg);

/* Creates a client for addr "host:port". Connects on first use. Owner: caller. */
rmq_client_t *rmq_client_new(struct event_base *base, const char *addr,
                             const rmq_client_opts_t *opts);
/* Fails every pending request with RMQ_ESHUTDOWN (callbacks run now), closes. */
void rmq_client_free(rmq_client_t *cli);
const char *rmq_client_addr(const rmq_client_t *cli);
/* Why the last connection attempt failed or the connection was lost, in one
 * line naming TLS when TLS was the cause (OpenSSL's reason); "" while
 * connected or if it never failed. */
const char *rmq_client_last_error(const rmq_client_t *cli);
int rmq_client_is_connected(const rmq_client_t *cli);
/* Requests the peer sends to this client (server push) go to fn, with conn
 * NULL: pushes are oneway, so there is nothing to answer. */
void rmq_client_on_request(rmq_client_t *cli, rmq_handler_fn fn, void *arg);
/* Called when an established connection closes. */
void rmq_client_on_close(rmq_client_t *cli, void (*fn)(rmq_client_t *cli, void *arg), void *arg);

/* Sends req (code and header set by the caller; opaque and flags are set
 * here) with a copy of body. timeout_ms counts from now and includes the
 * connect. Returns RMQ_OK if queued (cb will run), an error otherwise (cb
 * will not run). Loop thread. */
rmq_err_t rmq_client_call(rmq_client_t *cli, Rmq__Command *req, const void *body, size_t len,
                          int timeout_ms, rmq_response_fn cb, void *arg);
/* Same, moving body's contents without a copy. */
rmq_err_t rmq_client_call_buf(rmq_client_t *cli, Rmq__Command *req, struct evbuffer *body,
                              int timeout_ms, rmq_response_fn cb, void *arg);
/* Fire and forget (FLAG_ONEWAY). */
rmq_err_t rmq_client_oneway(rmq_client_t *cli, Rmq__Command *req, const void *body, size_t len);
size_t rmq_client_pending(const rmq_client_t *cli);

/* A set of clients keyed by address, created on demand. Loop thread. */
rmq_client_pool_t *rmq_client_pool_new(struct event_base *base, const rmq_client_opts_t *opts);
rmq_client_t *rmq_client_pool_get(rmq_client_pool_t *pool, const char *addr);
/* Frees the client for addr (pending requests fail with RMQ_ESHUTDOWN). */
void rmq_client_pool_drop(rmq_client_pool_t *pool, const char *addr);
void rmq_client_pool_free(rmq_client_pool_t *pool);

/* ---- blocking wrapper ------------------------------------------------ */

/* Owns an event base used only inside rmq_sync_call, on the calling thread. */
rmq_sync_t *rmq_sync_new(const rmq_client_opts_t *opts);
void rmq_sync_free(rmq_sync_t *s);
/* Sends req to addr and waits for the answer or the timeout. On RMQ_OK the
 * caller owns *resp (rmq_frame_clear). The status inside is not checked. */
rmq_err_t rmq_sync_call(rmq_sync_t *s, const char *addr, Rmq__Command *req,
                        const void *body, size_t len, int timeout_ms, rmq_frame_t *resp);
/* After a failed rmq_sync_call: why its connection failed (see
 * rmq_client_last_error), or "" if the connection was not the cause. */
const char *rmq_sync_last_error(const rmq_sync_t *s);

/* ---- addresses and TLS ----------------------------------------------- */

/* Splits "host:port" (host may be "[v6]", or a bare IPv6 literal as
 * RocketMQ writes one: "::1:10911"); host copied into host (cap hostlen). */
rmq_err_t rmq_addr_split(const char *addr, char *host, size_t hostlen, int *port);
/* Reads a numeric addr (any rmq_addr_split form with an IPv4 or IPv6
 * literal host) into ss / *sslen; RMQ_EINVAL for a host name or bad text. */
rmq_err_t rmq_addr_sockaddr(const char *addr, struct sockaddr_storage *ss, int *sslen);
/* 1 if addresses a and b are the same (numeric ones in any form). */
int rmq_addr_equal(const char *a, const char *b);
/* Writes sa into out, an IPv4-mapped IPv6 address as the plain IPv4 one;
 * returns its length. */
socklen_t rmq_sockaddr_unmap(const struct sockaddr *sa, struct sockaddr_storage *out);
/* "ip:port" or "[ip6]:port" of sa (an IPv4-mapped one as plain IPv4). */
void rmq_sockaddr_text(const struct sockaddr *sa, char *out, size_t outlen);
/* The port of an AF_INET / AF_INET6 address, else -1. */
int rmq_sockaddr_port(const struct sockaddr *sa);
/* A listening non-blocking socket on host:port (port 0: ephemeral); the
 * wildcard host (NULL, "", 0.0.0.0, ::) is one dual-stack [::] socket, or
 * IPv4 only (logged) on a host without IPv6. -1 with err on failure;
 * what names the listener in logs. Owner: caller. Start-up only. */
int rmq_listen_socket(const char *what, const char *host, int port, int backlog, char *err,
                      size_t errlen);
/* The port listening socket fd is bound to, or -1. */
int rmq_listen_port(int fd);

/* Makes a server context select ALPN "h2" (gRPC) for clients offering it
 * on connections marked by rmq_tls_offer_h2 (the transport's: the broker's
 * and name server's ports); on any other connection of the context (the
 * HTTP console and metrics, HA) no ALPN is chosen, so a browser speaks
 * HTTP/1.1. Clients offering no ALPN are served as before. Every server
 * context gets it (rmq_tls_server_ctx_new, rmq_tls_config_server_ctx). */
void rmq_tls_select_h2(SSL_CTX *ctx);
void rmq_tls_offer_h2(SSL *ssl);

/* Server / client TLS contexts from PEM files (ca may be NULL). On error
 * writes the OpenSSL reason into err and returns NULL. Caller frees with SSL_CTX_free. */
SSL_CTX *rmq_tls_server_ctx_new(const char *cert, const char *key, const char *ca,
                                int verify_client, char *err, size_t errlen);
SSL_CTX *rmq_tls_client_ctx_new(const char *ca, const char *cert, const char *key,
                                char *err, size_t errlen);

#endif
