/* rmq_remoting_client.h: the calling side of RocketMQ's remoting protocol
 * (rmq_codec_remoting.h): one connection to one peer, requests in JSON
 * headers, answers matched by opaque, each with its own timeout. What a
 * broker needs to register with an Apache RocketMQ name server. Plain TCP
 * to a numeric host:port. The connection opens on the first call and
 * again on the call after it failed. Loop thread only. */
#ifndef RMQ_REMOTING_CLIENT_H
#define RMQ_REMOTING_CLIENT_H

#include <event2/event.h>

#include "rmq_codec_remoting.h"

typedef struct rmq_rclient rmq_rclient_t;

/* The answer to a call: err RMQ_OK with resp (valid during the call only;
 * resp->code is RocketMQ's response code), or RMQ_ETIMEDOUT, RMQ_ECLOSED,
 * RMQ_EPROTO (the peer sent a bad frame; the connection is closed) or
 * RMQ_ESHUTDOWN (the client is being freed) with resp NULL. */
typedef void (*rmq_rclient_fn)(rmq_err_t err, const rmq_remoting_request_t *resp, void *arg);

/* A client for addr ("a.b.c.d:port"); NULL on a bad address or no memory. */
rmq_rclient_t *rmq_rclient_new(struct event_base *base, const char *addr, int connect_timeout_ms);
/* Fails what is pending with RMQ_ESHUTDOWN and frees (inside one of this
 * client's callbacks too: the memory goes when it returns). */
void rmq_rclient_free(rmq_rclient_t *c);

/* Sends request code with extFields fields[0..n) and body[0..len)
 * (copied); cb(arg) runs once with the answer or the failure, never before
 * this returns. RMQ_ENOMEM / RMQ_ECONNECT: not sent, cb never runs. */
rmq_err_t rmq_rclient_call(rmq_rclient_t *c, int code, const rmq_remoting_field_t *fields, size_t n,
                           const void *body, size_t len, int timeout_ms, rmq_rclient_fn cb, void *arg);

#endif
