/* remwire.h: a blocking RocketMQ remoting client over plain sockets for the
 * cluster tests (frames built by the codec's own encoder, responses read
 * back with its decoder), asserting with Check on anything unexpected. */
#ifndef REMWIRE_H
#define REMWIRE_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_codec_remoting.h"

/* A response: the decoded header and body (pointing into raw). */
typedef struct rem_resp {
    rmq_remoting_request_t msg;
    uint8_t *raw;
} rem_resp_t;

void rem_resp_clear(rem_resp_t *r);
/* A connected socket to a numeric address: "ip:port", "[v6]:port" or "v6:port". */
int rem_connect(const char *addr);
void write_all(int fd, const void *data, size_t len);
/* Reads exactly len bytes within timeout_ms; 0, or -1 on close or timeout. */
int read_exact(int fd, uint8_t *buf, size_t len, int timeout_ms);
/* Sends one request: extFields fields[0..n), body[0..len). */
void rem_send(int fd, int type, int code, int32_t opaque, int32_t flags, const rmq_remoting_field_t *fields,
              size_t n, const void *body, size_t len);
/* Receives one frame (a response, or a request the server pushes); 0, or
 * -1 when the connection closed or timed out. */
int rem_recv_frame(int fd, rem_resp_t *r, int timeout_ms);
/* Receives one frame that must be a response. */
int rem_recv(int fd, rem_resp_t *r, int timeout_ms);
/* The value of extField key of a response, or "" (never NULL). */
const char *rem_field(const rem_resp_t *r, const char *key);

#endif
