/* grpc_client.h: a blocking test client for the gRPC transport: an
 * nghttp2 CLIENT session over a real TCP socket (h2c with prior knowledge,
 * or TLS offering ALPN "h2"), sending gRPC requests and collecting each
 * stream's :status, grpc-status, grpc-message, response messages and reset
 * code. For tests only (tests/unit/test_grpc.c, tests/cluster). */
#ifndef GRPC_CLIENT_H
#define GRPC_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/ssl.h>

#define GC_STREAMS_MAX 512

typedef struct gc_stream {
    int32_t id;
    int http_status;              /* :status, 0 before the headers */
    int grpc_status;              /* -1 until trailers (or trailers-only) carry it */
    char grpc_message[256];
    char grpc_accept_encoding[64];
    uint8_t *body;                /* the DATA bytes received, prefixes included */
    size_t body_len;
    int closed;
    uint32_t rst_code;            /* the close's error code */
} gc_stream_t;

typedef struct gc_client gc_client_t;

/* Connects to 127.0.0.1:port; with ssl_ctx (not NULL) over TLS offering
 * ALPN "h2", and *alpn_ok says whether the server selected it. NULL on
 * failure. */
gc_client_t *gc_connect(int port, SSL_CTX *ssl_ctx, int *alpn_ok);
void gc_close(gc_client_t *c);

/* Starts a request on path with content_type and (optional) grpc_timeout,
 * sending body as is (already framed) and ending the stream unless
 * keep_open. Returns the stream's slot or NULL. */
gc_stream_t *gc_request(gc_client_t *c, const char *path, const char *content_type,
                        const char *grpc_timeout, const uint8_t *body, size_t len,
                        int keep_open);

/* Adds header name: value to the requests started from now on (up to 4;
 * the strings must outlive them). */
void gc_add_header(gc_client_t *c, const char *name, const char *value);

/* Drops the headers gc_add_header added. */
void gc_clear_headers(gc_client_t *c);

/* The :method of the requests started from now on (NULL: POST; the
 * string must outlive them). */
void gc_set_method(gc_client_t *c, const char *method);

/* Runs the session until every stream started is closed, or until
 * timeout_ms; 0 when all closed. */
int gc_run(gc_client_t *c, int timeout_ms);

/* Runs the session for ms (sends what is queued, reads what comes). */
void gc_pump(gc_client_t *c, int ms);

/* The server's SETTINGS_MAX_CONCURRENT_STREAMS. */
uint32_t gc_remote_max_streams(gc_client_t *c);

/* 1 once the server sent GOAWAY. */
int gc_goaway_received(const gc_client_t *c);

/* Resets a stream (RST_STREAM CANCEL). */
void gc_cancel(gc_client_t *c, gc_stream_t *s);

/* Frames one gRPC message (flag 0) into out (len + 5 bytes). */
size_t gc_frame(const uint8_t *msg, size_t len, uint8_t *out);

/* The n-th message of a stream's body into *msg / *len; 0 if present. */
int gc_message(const gc_stream_t *s, int n, const uint8_t **msg, size_t *len);

#endif
