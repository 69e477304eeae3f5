/* rmq_http.h: a small HTTP server over libevent's evhttp for the daemons'
 * metrics and console port. It runs on the daemon's own event base (no
 * thread of its own): handlers run on the loop thread and must not block.
 * GET and HEAD only; other methods get 405 from evhttp. Routes match the
 * path exactly (query string excluded); everything else goes to the
 * fallback handler (404 when none). A handler answers at once with
 * rmq_http_reply, or keeps the request and answers later on the same
 * thread (evhttp frees it once answered).
 *
 * Security (rmq_http_secure): with the daemon's TLS on (tlsMode permissive
 * or enforcing) the port speaks HTTPS only, with the same server context as
 * the RPC port (evhttp cannot sniff TLS and plaintext on one port). With
 * access control on, each route says who may use it (rmq_http_access_t):
 * the request must carry HTTP Basic credentials, access key and secret key
 * of an ACL account, checked by rmq_acl_check (whitelists, the account's
 * allowed addresses, constant-time comparison) through a probe request
 * signed with the presented secret. Missing or wrong: 401 with
 * WWW-Authenticate; valid but without the right: 403. Basic auth is never
 * offered over plaintext: access control without TLS is refused.
 *
 * Also the JSON string escaping the console API needs. */
#ifndef RMQ_HTTP_H
#define RMQ_HTTP_H

#include <stddef.h>

#include <event2/buffer.h>
#include <event2/event.h>
#include <event2/http.h>

#include "rmq_err.h"
#include "rmq_security.h"

typedef struct rmq_http rmq_http_t;
typedef void (*rmq_http_fn)(struct evhttp_request *req, void *arg);

/* Creates a server on base, not listening yet; name is used in log lines.
 * NULL on ENOMEM. Owner: caller (rmq_http_free). Loop thread. */
rmq_http_t *rmq_http_new(struct event_base *base, const char *name);

/* Who may use a route when access control is on (with it off, anyone). */
typedef enum rmq_http_access {
    RMQ_HTTP_PUBLIC = 0,       /* anyone who reaches the port */
    RMQ_HTTP_ACCOUNT,          /* any valid account */
    RMQ_HTTP_ADMIN,            /* an admin account (account.<ak>.admin=true) */
} rmq_http_access_t;

/* Takes the daemon's TLS context and ACL from sec (borrowed, must outlive
 * h). RMQ_EINVAL with one line naming the keys in err when the ACL is on
 * and TLS is not: Basic credentials would cross the network in the clear.
 * Before rmq_http_listen. Loop thread. */
rmq_err_t rmq_http_secure(rmq_http_t *h, const rmq_security_t *sec, char *err, size_t errlen);

/* Binds and listens on host:port (port 0: ephemeral). On failure writes
 * "cannot listen on host:port: <errno text>" into err. The wildcard host
 * (0.0.0.0, ::) takes IPv4 and IPv6 clients (rmq_listen_socket). */
rmq_err_t rmq_http_listen(rmq_http_t *h, const char *host, int port, char *err, size_t errlen);

/* The bound port after rmq_http_listen, 0 before. */
int rmq_http_port(const rmq_http_t *h);

/* Routes GET path (exact, e.g. "/metrics") to fn for callers allowed
 * access. RMQ_EEXIST if taken, RMQ_ENOMEM past RMQ_HTTP_MAX_ROUTES. */
#define RMQ_HTTP_MAX_ROUTES 16
rmq_err_t rmq_http_route(rmq_http_t *h, const char *path, rmq_http_access_t access,
                         rmq_http_fn fn, void *arg);

/* Handler for every path without a route, for callers allowed access. */
void rmq_http_fallback(rmq_http_t *h, rmq_http_access_t access, rmq_http_fn fn, void *arg);

/* The credentials req was authorized with, into cred; 0 when it carries
 * none (access control off, or a whitelisted address without them). For
 * handlers that act on the caller's behalf (signing their broker calls). */
int rmq_http_account(struct evhttp_request *req, rmq_acl_credentials_t *cred);

/* Parses an Authorization header value "Basic base64(accessKey:secretKey)"
 * into cred. 0 ok; -1 when it is not one (other scheme, bad base64, no
 * colon, empty access key, NUL bytes, fields too long). Any thread. */
int rmq_http_basic_parse(const char *value, rmq_acl_credentials_t *cred);

/* Closes the listener and every connection; requests still kept by a
 * handler are freed with their connections, so drop them first. */
void rmq_http_free(rmq_http_t *h);

/* Answers req with status code, Content-Type ctype and body (may be NULL;
 * its contents are moved out). Loop thread. */
void rmq_http_reply(struct evhttp_request *req, int code, const char *ctype, struct evbuffer *body);

/* Answers req with a text/plain body formatted from fmt. */
void rmq_http_replyf(struct evhttp_request *req, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* The decoded value of query parameter key into buf (truncated to len-1).
 * Returns 1 when present, 0 when absent (buf set to ""). */
int rmq_http_query(struct evhttp_request *req, const char *key, char *buf, size_t len);

/* Appends s[0..n) as a JSON string literal (quotes included). Bytes below
 * 0x20, quote and backslash are escaped; invalid UTF-8 becomes U+FFFD. */
void rmq_json_strn(struct evbuffer *out, const char *s, size_t n);
void rmq_json_str(struct evbuffer *out, const char *s);

#endif
