/* rmq_remoting_client.h: the calling side of RocketMQ's remoting protocol
 * (rmq_codec_remoting.h): one connection to one peer, requests in JSON
 * headers, answers matched by opaque, each with its own timeout. What a
 * broker needs to register with an Apache RocketMQ name server. TCP to a
 * numeric host:port, in TLS when given a client context (the daemon's own,
 * rmq_security_t.client_ctx: tlsMode not disabled), each request signed
 * with RocketMQ ACL 1.0 (extFields AccessKey and Signature,
 * rmq_remoting_sign) when given credentials. The connection opens on the
 * first call and again on the call after it failed. Loop thread only. */
#ifndef RMQ_REMOTING_CLIENT_H
#define RMQ_REMOTING_CLIENT_H

#include <event2/event.h>

#include <openssl/ssl.h>

#include "rmq_acl.h"
#include "rmq_codec_remoting.h"

typedef struct rmq_rclient rmq_rclient_t;

/* The answer to a call: err RMQ_OK with resp (valid during the call only;
 * resp->code is RocketMQ's response code), or RMQ_ETIMEDOUT, RMQ_ECLOSED,
 * RMQ_EPROTO (the peer sent a bad frame; the connection is closed) or
 * RMQ_ESHUTDOWN (the client is being freed) with resp NULL. */
typedef void (*rmq_rclient_fn)(rmq_err_t err, const rmq_remoting_request_t *resp, void *arg);

/* How a client connects and signs; both borrowed, outliving the client. */
typedef struct rmq_rclient_opts {
    int connect_timeout_ms;
    SSL_CTX *ssl_ctx;                      /* NULL: plaintext */
    const rmq_acl_credentials_t *cred;     /* NULL: requests unsigned */
} rmq_rclient_opts_t;

/* A client for addr ("a.b.c.d:port"); NULL on a bad address or no memory. */
rmq_rclient_t *rmq_rclient_new(struct event_base *base, const char *addr, const rmq_rclient_opts_t *opts);
/* Fails what is pending with RMQ_ESHUTDOWN and frees (inside one of this
 * client's callbacks too: the memory goes when it returns). */
void rmq_rclient_free(rmq_rclient_t *c);

/* Sends request code with extFields fields[0..n) and body[0..len)
 * (copied); cb(arg) runs once with the answer or the failure, never before
 * this returns. RMQ_ENOMEM / RMQ_ECONNECT: not sent, cb never runs. */
rmq_err_t rmq_rclient_call(rmq_rclient_t *c, int code, const rmq_remoting_field_t *fields, size_t n,
                           const void *body, size_t len, int timeout_ms, rmq_rclient_fn cb, void *arg);

#endif
