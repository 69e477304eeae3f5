/* fuzz_grpc.c: libFuzzer target for the HTTP/2 + gRPC input path
 * (rmq_codec_grpc.h). A real server on 127.0.0.1 (the rmq codec first and
 * the gRPC codec, as on the broker's port, with a unary echo and a
 * streaming echo method) gets the HTTP/2 client preface followed by the
 * input over a loopback socket; the loop runs until the server has taken
 * every byte and the client has hung up, and the connection must then be
 * gone: no crash, no leak, no hang. The probe must claim every prefix of
 * the preface and nothing that differs from it. */
#include "rmq_codec_grpc.h"
#include "rmq_rpc.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/event.h>

#define PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define ROUNDS_MAX 20000

static struct event_base *base;
static rmq_server_t *srv;
static int port;

static void unary_echo(rmq_grpc_call_t *call, void *arg)
{
    size_t len;
    const uint8_t *req = rmq_grpc_call_request(call, &len);

    rmq_grpc_reply(call, req, len);
}

static void stream_message(rmq_grpc_call_t *call, const uint8_t *data, size_t len, void *arg)
{
    if (data == NULL)
        rmq_grpc_finish(call, RMQ_GRPC_OK, "done");
    else
        rmq_grpc_write(call, data, len);
}

static void stream_cancel(rmq_grpc_call_t *call, void *arg)
{
    rmq_grpc_finish(call, RMQ_GRPC_CANCELLED, NULL);
}

static void stream_echo(rmq_grpc_call_t *call, void *arg)
{
    rmq_grpc_call_on_message(call, stream_message, NULL);
    rmq_grpc_call_on_cancel(call, stream_cancel, NULL);
}

static const rmq_grpc_method_t methods[] = {
    { "/t/U", RMQ_GRPC_UNARY_REQUEST, unary_echo, NULL },
    { "/t/S", RMQ_GRPC_STREAM_REQUEST, stream_echo, NULL },
};

static void server_start(void)
{
    rmq_server_opts_t opts = { .max_frame = 1u << 20, .name = "fuzz-grpc" };

    base = event_base_new();
    srv = rmq_server_new(base, &opts);
    if (srv == NULL || rmq_grpc_install(srv, methods, 2) != RMQ_OK ||
        rmq_server_listen(srv, "127.0.0.1", 0) != RMQ_OK)
        abort();
    port = rmq_server_port(srv);
}

static int client_connect(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) != 0)
        abort();
    fcntl(fd, F_SETFL, O_NONBLOCK);
    return fd;
}

/* Aborts unless the probe's verdicts on data's prefixes hold. */
static void check_probe(const uint8_t *data, size_t size)
{
    for (size_t len = 0; len <= RMQ_CODEC_PROBE_MAX && len <= size; len++) {
        rmq_codec_probe_t v = rmq_codec_grpc.probe(data, len, 1u << 20);
        int same = memcmp(data, PREFACE, len) == 0;
        if (!same && v != RMQ_CODEC_NO)
            abort();
        if (same && v != (len == RMQ_CODEC_PROBE_MAX ? RMQ_CODEC_YES : RMQ_CODEC_MORE))
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t sink[65536];
    size_t total = sizeof(PREFACE) - 1 + size, sent = 0;
    uint8_t *wire = malloc(total ? total : 1);
    int fd, rounds = 0, hung_up = 0;

    if (base == NULL)
        server_start();
    check_probe(data, size);
    memcpy(wire, PREFACE, sizeof(PREFACE) - 1);
    memcpy(wire + sizeof(PREFACE) - 1, data, size);
    fd = client_connect();
    while (rounds++ < ROUNDS_MAX) {
        if (sent < total) {
            ssize_t n = send(fd, wire + sent, total - sent, MSG_NOSIGNAL);
            if (n > 0)
                sent += (size_t)n;
            else if (n < 0 && errno != EAGAIN)
                sent = total;
        } else if (!hung_up) {
            shutdown(fd, SHUT_WR);
            hung_up = 1;
        }
        event_base_loop(base, EVLOOP_NONBLOCK);
        ssize_t r = recv(fd, sink, sizeof(sink), 0);
        if (r == 0 || (r < 0 && errno != EAGAIN && errno != EWOULDBLOCK))
            break;
    }
    close(fd);
    for (int i = 0; i < 1000 && rmq_server_conn_count(srv) > 0; i++)
        event_base_loop(base, EVLOOP_NONBLOCK);
    if (rmq_server_conn_count(srv) != 0)
        abort();
    free(wire);
    return 0;
}
