/* rmq_codec_grpc.h: gRPC over HTTP/2 as a codec over the transport
 * (rmq_transport.h), so RocketMQ 5 clients share a port with the native and
 * remoting protocols. The probe takes a connection whose first bytes are
 * the HTTP/2 client preface ("PRI * HTTP/2.0\r\n..."), after the transport's
 * TLS sniff; over TLS, ALPN selects "h2" (rmq_tls.c).
 *
 * The codec (rmq_codec_grpc.c) runs one nghttp2 server session per
 * connection on the loop and owns the gRPC layer: header collection,
 * the request's HTTP form (a method but POST gets HTTP 405, a :path not
 * starting with '/' 404, a content-type but application/grpc[+...] 415),
 * grpc-timeout, grpc-encoding (identity, or gzip inflated with zlib),
 * 5-byte-prefixed message reassembly, trailers and trailers-only errors.
 * Fronts see only this API: a method table (path -> handler), a call
 * object (metadata, deadline, request bytes) and reply functions.
 *
 * A call's life: the handler gets it with the whole request (unary
 * request methods) or at its headers (streaming request methods, whose
 * messages then arrive through rmq_grpc_call_on_message). The holder
 * answers at once or later, and must end every call it got with exactly
 * one rmq_grpc_finish (or rmq_grpc_reply), also after its cancel callback
 * ran: a call whose stream or connection is gone (RST_STREAM, close)
 * stays valid until then and drops what is written to it. Unknown paths
 * get grpc-status 12 UNIMPLEMENTED, trailers-only. Loop thread only. */
#ifndef RMQ_CODEC_GRPC_H
#define RMQ_CODEC_GRPC_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_transport.h"

/* gRPC status codes (grpc/status.h numbering) the transport uses. */
#define RMQ_GRPC_OK 0
#define RMQ_GRPC_CANCELLED 1
#define RMQ_GRPC_INVALID_ARGUMENT 3
#define RMQ_GRPC_DEADLINE_EXCEEDED 4
#define RMQ_GRPC_RESOURCE_EXHAUSTED 8
#define RMQ_GRPC_UNIMPLEMENTED 12
#define RMQ_GRPC_INTERNAL 13
#define RMQ_GRPC_UNAVAILABLE 14

#define RMQ_GRPC_HEADERS_MAX (16u << 10)   /* bytes of names + values per request */
#define RMQ_GRPC_MAX_STREAMS 1024          /* SETTINGS_MAX_CONCURRENT_STREAMS */
#define RMQ_GRPC_NO_DEADLINE INT64_MAX

typedef struct rmq_grpc_call rmq_grpc_call_t;

/* A method's handler: call is the holder's until it finishes it. */
typedef void (*rmq_grpc_handler_fn)(rmq_grpc_call_t *call, void *arg);

/* One request message of a streaming request (data NULL, len 0: the
 * client half-closed). data is valid during the call only. */
typedef void (*rmq_grpc_message_fn)(rmq_grpc_call_t *call, const uint8_t *data, size_t len,
                                    void *arg);

/* The stream went away before the holder finished the call (RST_STREAM,
 * the connection closed, the server stopped); the holder still finishes it. */
typedef void (*rmq_grpc_cancel_fn)(rmq_grpc_call_t *call, void *arg);

typedef enum rmq_grpc_kind {
    RMQ_GRPC_UNARY_REQUEST = 0,    /* one request message, then the handler */
    RMQ_GRPC_STREAM_REQUEST = 1,   /* the handler at the headers, then messages */
} rmq_grpc_kind_t;

typedef struct rmq_grpc_method {
    const char *path;              /* "/apache.rocketmq.v2.MessagingService/QueryRoute" */
    rmq_grpc_kind_t kind;
    rmq_grpc_handler_fn fn;
    void *arg;
} rmq_grpc_method_t;

/* Registers the gRPC codec on srv with methods (n of them, copied; the
 * paths must outlive srv). n may be 0: every call is UNIMPLEMENTED. Set-up
 * time, before listen. */
rmq_err_t rmq_grpc_install(rmq_server_t *srv, const rmq_grpc_method_t *methods, size_t n);

/* Sends GOAWAY (the last stream each connection started) on every gRPC
 * connection of srv: clients open no new streams here. Shutdown. */
void rmq_grpc_goaway(rmq_server_t *srv);

/* ---- the call -------------------------------------------------------------- */

/* The connection the call came on (referenced by the call: valid, perhaps
 * closed, until the call is finished). */
rmq_conn_t *rmq_grpc_call_conn(const rmq_grpc_call_t *call);

/* The :path the call named. */
const char *rmq_grpc_call_path(const rmq_grpc_call_t *call);

/* The value of request header name (lower case: "authorization",
 * "x-mq-client-id"), or NULL. */
const char *rmq_grpc_call_header(const rmq_grpc_call_t *call, const char *name);

/* The deadline from grpc-timeout on rmq_mono_ms()'s clock, or
 * RMQ_GRPC_NO_DEADLINE. */
int64_t rmq_grpc_call_deadline_ms(const rmq_grpc_call_t *call);

/* The request message of a unary-request call (len 0 for an empty one). */
const uint8_t *rmq_grpc_call_request(const rmq_grpc_call_t *call, size_t *len);

/* 1 while the stream is open and the call unfinished: writes can reach
 * the client. */
int rmq_grpc_call_live(const rmq_grpc_call_t *call);

/* Sets the receiver of a streaming request's messages (call it in the
 * handler). */
void rmq_grpc_call_on_message(rmq_grpc_call_t *call, rmq_grpc_message_fn fn, void *arg);

/* Sets the callback that runs if the stream goes away before the finish. */
void rmq_grpc_call_on_cancel(rmq_grpc_call_t *call, rmq_grpc_cancel_fn fn, void *arg);

/* Queues one response message (the 5-byte prefix is added); the response
 * headers go first. RMQ_ECLOSED when the call is not live (the message is
 * dropped). */
rmq_err_t rmq_grpc_write(rmq_grpc_call_t *call, const uint8_t *data, size_t len);

/* Ends the call: trailers with grpc-status status and grpc-message message
 * (may be NULL; percent-encoded), trailers-only when nothing was written.
 * After it the call is gone for the holder. Safe on a cancelled call. */
void rmq_grpc_finish(rmq_grpc_call_t *call, int status, const char *message);

/* A unary reply: rmq_grpc_write then rmq_grpc_finish with status 0. */
void rmq_grpc_reply(rmq_grpc_call_t *call, const uint8_t *data, size_t len);

/* ---- pieces with their own tests -------------------------------------------- */

/* Parses a grpc-timeout value (1-8 digits and a unit of H M S m u n) into
 * a deadline now_ms + timeout, saturating at RMQ_GRPC_NO_DEADLINE; a
 * timeout below 1 ms counts as 1 ms. RMQ_EINVAL for anything else. */
rmq_err_t rmq_grpc_parse_timeout(const char *value, int64_t now_ms, int64_t *deadline_ms);

/* Writes message percent-encoded for grpc-message into out (outlen >= 1),
 * truncating at a whole escape; returns the length written. */
size_t rmq_grpc_percent_encode(const char *message, char *out, size_t outlen);

/* The codec itself, for rmq_server_add_codec (rmq_grpc_install does it). */
extern const rmq_codec_t rmq_codec_grpc;

#endif
