/* remwire.c: the blocking remoting client of the cluster tests (remwire.h). */
#include "remwire.h"

#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rmq_rpc.h"

void rem_resp_clear(rem_resp_t *r)
{
    rmq_remoting_request_clear(&r->msg);
    free(r->raw);
    r->raw = NULL;
}

int rem_connect(const char *addr)
{
    struct sockaddr_storage sa;
    int len;

    ck_assert_msg(rmq_addr_sockaddr(addr, &sa, &len) == RMQ_OK, "not a numeric address: %s", addr);
    int fd = socket(sa.ss_family, SOCK_STREAM, 0);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, (socklen_t)len), 0);
    return fd;
}

void write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;

    while (len > 0) {
        ssize_t n = write(fd, p, len);
        ck_assert(n > 0);
        p += n;
        len -= (size_t)n;
    }
}

/* Reads exactly len bytes within timeout_ms; 0, or -1 on close or timeout. */
int read_exact(int fd, uint8_t *buf, size_t len, int timeout_ms)
{
    while (len > 0) {
        struct pollfd pfd = { fd, POLLIN, 0 };
        if (poll(&pfd, 1, timeout_ms) <= 0)
            return -1;
        ssize_t n = read(fd, buf, len);
        if (n <= 0)
            return -1;
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Sends one request: extFields fields[0..n) ("k=v" strings split here), body. */
void rem_send(int fd, int type, int code, int32_t opaque, int32_t flags, const rmq_remoting_field_t *fields,
              size_t n, const void *body, size_t len)
{
    struct evbuffer *b = evbuffer_new();
    rmq_remoting_reply_t rep = { code, NULL, fields, n, body, len };

    ck_assert_int_eq(rmq_remoting_encode(b, type, code, opaque, flags, 395, &rep), RMQ_OK);
    size_t total = evbuffer_get_length(b);
    write_all(fd, evbuffer_pullup(b, -1), total);
    evbuffer_free(b);
}

int rem_recv_frame(int fd, rem_resp_t *r, int timeout_ms)
{
    uint8_t len4[4];
    const char *why = "";
    size_t used;

    memset(r, 0, sizeof *r);
    if (read_exact(fd, len4, 4, timeout_ms) != 0)
        return -1;
    uint32_t len = (uint32_t)len4[0] << 24 | (uint32_t)len4[1] << 16 | (uint32_t)len4[2] << 8 | len4[3];
    ck_assert_uint_le(len, 1u << 24);
    r->raw = malloc(len + 4);
    memcpy(r->raw, len4, 4);
    if (read_exact(fd, r->raw + 4, len, timeout_ms) != 0) {
        free(r->raw);
        r->raw = NULL;
        return -1;
    }
    ck_assert_msg(rmq_remoting_decode(r->raw, len + 4, UINT32_MAX, &r->msg, &used, &why) == RMQ_OK,
                  "frame does not decode: %s", why);
    return 0;
}

int rem_recv(int fd, rem_resp_t *r, int timeout_ms)
{
    if (rem_recv_frame(fd, r, timeout_ms) != 0)
        return -1;
    ck_assert(r->msg.flags & RMQ_REMOTING_FLAG_RESPONSE);
    return 0;
}

const char *rem_field(const rem_resp_t *r, const char *key)
{
    const char *v = rmq_remoting_field(&r->msg, key);
    return v ? v : "";
}
