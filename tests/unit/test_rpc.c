/* test_rpc.c: the RPC layer over real loopback sockets. A server and
 * clients on one event base (or the server on another thread for the
 * blocking wrapper): request/response, many in flight, oneway, unknown
 * codes, timeouts, connect failures, closes and reconnects, oversized
 * frames, deferred replies, back-pressure, idle timeout, server push,
 * reentrant callbacks, connection limits, TLS (certificate made at run
 * time), and a second codec (a line protocol) sharing the port with rmq. */
#include "rmq_rpc.h"
#include "rmq_transport.h"

#include <arpa/inet.h>
#include <check.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/thread.h>

#include "rmq_log.h"
#include "rmq_time.h"
#include "test_cert.h"

#define CODE_ECHO RMQ__REQUEST_CODE__SEND_MESSAGE
#define CODE_HOLE RMQ__REQUEST_CODE__PULL_MESSAGE
#define CODE_DEFER RMQ__REQUEST_CODE__QUERY_MESSAGE
#define CODE_CLOSE RMQ__REQUEST_CODE__HEART_BEAT
#define CODE_COUNT RMQ__REQUEST_CODE__UNREGISTER_CLIENT
#define CODE_PUSH RMQ__REQUEST_CODE__NOTIFY_CONSUMER_IDS_CHANGED
#define CODE_BIG RMQ__REQUEST_CODE__GET_ALL_TOPIC_CONFIG
#define CODE_PEER RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC
#define CODE_UNKNOWN 9999

/* ---- fixture ---------------------------------------------------------------- */

typedef struct fixture {
    struct event_base *base;
    struct event *tick;
    rmq_server_t *srv;
    char addr[64];
    int oneways;
    int closes;
    rmq_conn_t *held;             /* deferred answer */
    rmq_reply_to_t held_to;
    rmq_err_t held_err;           /* what the deferred rmq_conn_reply returned */
    struct event *defer_ev;
} fixture_t;

static fixture_t fx;

static void echo_handler(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, "echo", req->body);
}

static void hole_handler(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
}

static void close_handler(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    rmq_conn_close(conn, "asked to close");
    ck_assert(!rmq_conn_is_open(conn));
}

static void count_handler(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    fixture_t *f = arg;
    f->oneways++;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
}

static void defer_fire(evutil_socket_t fd, short what, void *arg)
{
    fixture_t *f = arg;
    struct evbuffer *body = evbuffer_new();

    evbuffer_add(body, "later", 5);
    f->held_err = rmq_conn_reply(f->held, f->held_to, NULL, RMQ__STATUS__SUCCESS, NULL, body);
    ck_assert_uint_eq(evbuffer_get_length(body), 0);
    evbuffer_free(body);
    rmq_conn_unref(f->held);
    f->held = NULL;
}

static void defer_handler(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    fixture_t *f = arg;
    struct timeval tv = { 0, 50 * 1000 };

    rmq_conn_ref(conn);
    f->held = conn;
    f->held_to = rmq_reply_to(req->cmd);
    f->defer_ev = evtimer_new(f->base, defer_fire, f);
    evtimer_add(f->defer_ev, &tv);
}

static void push_handler(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    Rmq__Command push = RMQ__COMMAND__INIT;
    push.code = CODE_PUSH;
    ck_assert_int_eq(rmq_conn_send_oneway(conn, &push, "pushed", 6), RMQ_OK);
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
}

/* Answers with the peer as the transport keeps it: remark its text, body
 * "ip4=<hex> v6=<0|1> local=<text>". */
static void peer_handler(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    char text[160];
    uint32_t ip4;
    uint16_t port4, port6 = 0;
    struct evbuffer *body = evbuffer_new();

    rmq_conn_peer_ipv4(conn, &ip4, &port4);
    snprintf(text, sizeof text, "ip4=%08x v6=%d local=%s", (unsigned)ip4,
             rmq_conn_peer_ipv6(conn, &port6) != NULL, rmq_conn_local(conn));
    evbuffer_add(body, text, strlen(text));
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, rmq_conn_peer(conn), body);
    evbuffer_free(body);
}

static void big_handler(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    static char blob[64 * 1024];
    struct evbuffer *body = evbuffer_new();
    evbuffer_add(body, blob, sizeof(blob));
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, body);
    evbuffer_free(body);
}

static void on_server_close(rmq_conn_t *conn, void *arg)
{
    fixture_t *f = arg;
    f->closes++;
}

static void tick_cb(evutil_socket_t fd, short what, void *arg)
{
}

static void add_handlers(rmq_server_t *srv, fixture_t *f)
{
    rmq_server_handle(srv, CODE_ECHO, echo_handler, f);
    rmq_server_handle(srv, CODE_HOLE, hole_handler, f);
    rmq_server_handle(srv, CODE_CLOSE, close_handler, f);
    rmq_server_handle(srv, CODE_COUNT, count_handler, f);
    rmq_server_handle(srv, CODE_DEFER, defer_handler, f);
    rmq_server_handle(srv, CODE_PUSH, push_handler, f);
    rmq_server_handle(srv, CODE_BIG, big_handler, f);
    rmq_server_handle(srv, CODE_PEER, peer_handler, f);
    rmq_server_on_close(srv, on_server_close, f);
}

/* Starts a server on fx.base with opts (NULL: defaults) on 127.0.0.1:0. */
static void start_server(const rmq_server_opts_t *opts)
{
    rmq_server_opts_t o = { .name = "test" };
    if (opts != NULL)
        o = *opts;
    fx.srv = rmq_server_new(fx.base, &o);
    ck_assert_ptr_nonnull(fx.srv);
    add_handlers(fx.srv, &fx);
    ck_assert_int_eq(rmq_server_listen(fx.srv, "127.0.0.1", 0), RMQ_OK);
    ck_assert_int_gt(rmq_server_port(fx.srv), 0);
    snprintf(fx.addr, sizeof(fx.addr), "127.0.0.1:%d", rmq_server_port(fx.srv));
}

static void setup(void)
{
    struct timeval tv = { 0, 10 * 1000 };

    memset(&fx, 0, sizeof(fx));
    rmq_log_set_level(RMQ_LOG_ERROR);
    fx.base = event_base_new();
    fx.tick = event_new(fx.base, -1, EV_PERSIST, tick_cb, NULL);
    event_add(fx.tick, &tv);
}

static void teardown(void)
{
    rmq_server_free(fx.srv);
    if (fx.defer_ev != NULL)
        event_free(fx.defer_ev);
    event_free(fx.tick);
    event_base_loop(fx.base, EVLOOP_NONBLOCK);
    event_base_free(fx.base);
}

/* Runs the loop until *flag reaches want or ms pass; returns 1 if reached. */
static int run_until(int *flag, int want, int ms)
{
    int64_t end = rmq_mono_ms() + ms;
    while (*flag < want && rmq_mono_ms() < end)
        event_base_loop(fx.base, EVLOOP_ONCE);
    return *flag >= want;
}

static void run_for(int ms)
{
    int never = 0;
    run_until(&never, 1, ms);
}

/* ---- response capture ------------------------------------------------------- */

typedef struct result {
    int calls;
    rmq_err_t err;
    int status;
    char remark[256];
    char body[256];
    size_t body_len;
    int64_t at_ms;
} result_t;

static void capture_cb(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    result_t *r = arg;

    r->calls++;
    r->err = err;
    r->at_ms = rmq_mono_ms();
    if (resp == NULL)
        return;
    r->status = resp->cmd->status;
    snprintf(r->remark, sizeof(r->remark), "%s", resp->cmd->remark ? resp->cmd->remark : "");
    r->body_len = evbuffer_get_length(resp->body);
    evbuffer_copyout(resp->body, r->body, sizeof(r->body) - 1);
}

static rmq_err_t call(rmq_client_t *cli, int code, const char *body, int timeout_ms, result_t *r)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = code;
    return rmq_client_call(cli, &req, body, body ? strlen(body) : 0, timeout_ms, capture_cb, r);
}

/* ---- basic calls ------------------------------------------------------------- */

START_TEST(test_request_response)
{
    result_t r = { 0 };

    start_server(NULL);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    ck_assert_ptr_nonnull(cli);
    ck_assert_int_eq(call(cli, CODE_ECHO, "ping", 2000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 3000));
    ck_assert_int_eq(r.err, RMQ_OK);
    ck_assert_int_eq(r.status, RMQ__STATUS__SUCCESS);
    ck_assert_str_eq(r.remark, "echo");
    ck_assert_str_eq(r.body, "ping");
    ck_assert(rmq_client_is_connected(cli));
    ck_assert_uint_eq(rmq_server_conn_count(fx.srv), 1);
    ck_assert_uint_eq(rmq_client_pending(cli), 0);
    rmq_client_free(cli);
    ck_assert_int_eq(r.calls, 1);
}
END_TEST

#define INFLIGHT 1000

typedef struct many {
    int done;
    int bad;
} many_t;

typedef struct many_req {
    many_t *m;
    int i;
} many_req_t;

static void many_cb(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    many_req_t *mr = arg;
    char want[16], got[16] = { 0 };

    snprintf(want, sizeof(want), "%d", mr->i);
    if (err != RMQ_OK) {
        mr->m->bad++;
    } else {
        evbuffer_copyout(resp->body, got, sizeof(got) - 1);
        if (strcmp(got, want) != 0)
            mr->m->bad++;
    }
    mr->m->done++;
}

START_TEST(test_thousand_in_flight)
{
    static many_req_t reqs[INFLIGHT];
    many_t m = { 0 };

    start_server(NULL);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    for (int i = 0; i < INFLIGHT; i++) {
        Rmq__Command req = RMQ__COMMAND__INIT;
        char body[16];
        req.code = CODE_ECHO;
        reqs[i] = (many_req_t){ &m, i };
        snprintf(body, sizeof(body), "%d", i);
        ck_assert_int_eq(rmq_client_call(cli, &req, body, strlen(body), 5000, many_cb, &reqs[i]),
                         RMQ_OK);
    }
    ck_assert_uint_eq(rmq_client_pending(cli), INFLIGHT);
    ck_assert(run_until(&m.done, INFLIGHT, 10000));
    ck_assert_int_eq(m.bad, 0);
    ck_assert_uint_eq(rmq_client_pending(cli), 0);
    ck_assert_uint_eq(rmq_server_conn_count(fx.srv), 1);
    rmq_client_free(cli);
}
END_TEST

START_TEST(test_oneway)
{
    result_t r = { 0 };
    Rmq__Command req = RMQ__COMMAND__INIT;

    start_server(NULL);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    req.code = CODE_COUNT;
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(rmq_client_oneway(cli, &req, NULL, 0), RMQ_OK);
    ck_assert_uint_eq(rmq_client_pending(cli), 0);
    ck_assert_int_eq(call(cli, CODE_ECHO, "after", 2000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 3000));
    ck_assert_int_eq(r.err, RMQ_OK);
    ck_assert_int_eq(fx.oneways, 3);
    rmq_client_free(cli);
}
END_TEST

START_TEST(test_unknown_code)
{
    result_t r = { 0 };

    start_server(NULL);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    ck_assert_int_eq(call(cli, CODE_UNKNOWN, NULL, 2000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 3000));
    ck_assert_int_eq(r.err, RMQ_OK);
    ck_assert_int_eq(r.status, RMQ__STATUS__REQUEST_CODE_NOT_SUPPORTED);
    ck_assert_ptr_nonnull(strstr(r.remark, "9999"));
    rmq_client_free(cli);
}
END_TEST

START_TEST(test_request_timeout)
{
    result_t hole = { 0 }, echo = { 0 };

    start_server(NULL);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    int64_t t0 = rmq_mono_ms();
    ck_assert_int_eq(call(cli, CODE_HOLE, NULL, 150, &hole), RMQ_OK);
    ck_assert_int_eq(call(cli, CODE_ECHO, "x", 5000, &echo), RMQ_OK);
    ck_assert(run_until(&hole.calls, 1, 3000));
    ck_assert_int_eq(hole.err, RMQ_ETIMEDOUT);
    ck_assert_int_ge(hole.at_ms - t0, 140);
    ck_assert_int_lt(hole.at_ms - t0, 1500);
    ck_assert_int_eq(echo.calls, 1);
    ck_assert_int_eq(echo.err, RMQ_OK);
    ck_assert(rmq_client_is_connected(cli));
    rmq_client_free(cli);
    ck_assert_int_eq(hole.calls, 1);
}
END_TEST

/* A loopback port nobody listens on (bound, then closed). */
static int closed_port(void)
{
    struct sockaddr_in sin = { 0 };
    socklen_t len = sizeof(sin);
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_eq(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    getsockname(fd, (struct sockaddr *)&sin, &len);
    close(fd);
    return ntohs(sin.sin_port);
}

START_TEST(test_connect_refused)
{
    result_t r = { 0 };
    char addr[64];

    snprintf(addr, sizeof(addr), "127.0.0.1:%d", closed_port());
    rmq_client_t *cli = rmq_client_new(fx.base, addr, NULL);
    int64_t t0 = rmq_mono_ms();
    ck_assert_int_eq(call(cli, CODE_ECHO, "x", 5000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 3000));
    ck_assert_int_eq(r.err, RMQ_ECONNECT);
    ck_assert_int_lt(r.at_ms - t0, 1000);
    ck_assert(!rmq_client_is_connected(cli));
    rmq_client_free(cli);
}
END_TEST

static int client_closes;

static void on_client_close(rmq_client_t *cli, void *arg)
{
    client_closes++;
}

START_TEST(test_server_close_then_reconnect)
{
    result_t hole = { 0 }, bye = { 0 }, again = { 0 };

    start_server(NULL);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    rmq_client_on_close(cli, on_client_close, NULL);
    client_closes = 0;
    ck_assert_int_eq(call(cli, CODE_HOLE, NULL, 5000, &hole), RMQ_OK);
    ck_assert_int_eq(call(cli, CODE_CLOSE, NULL, 5000, &bye), RMQ_OK);
    ck_assert(run_until(&bye.calls, 1, 3000));
    ck_assert(run_until(&hole.calls, 1, 3000));
    ck_assert_int_eq(hole.err, RMQ_ECLOSED);
    ck_assert_int_eq(bye.err, RMQ_ECLOSED);
    ck_assert_int_eq(client_closes, 1);
    ck_assert_int_eq(fx.closes, 1);
    ck_assert(!rmq_client_is_connected(cli));

    ck_assert_int_eq(call(cli, CODE_ECHO, "again", 2000, &again), RMQ_OK);
    ck_assert(run_until(&again.calls, 1, 3000));
    ck_assert_int_eq(again.err, RMQ_OK);
    ck_assert_str_eq(again.body, "again");
    ck_assert_uint_eq(rmq_server_conn_count(fx.srv), 1);
    rmq_client_free(cli);
    ck_assert_int_eq(hole.calls, 1);
    ck_assert_int_eq(bye.calls, 1);
}
END_TEST

/* Connects a blocking raw socket to the fixture server. */
static int raw_connect(void)
{
    struct sockaddr_in sin = { 0 };
    int fd = socket(AF_INET, SOCK_STREAM, 0);

    sin.sin_family = AF_INET;
    sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    sin.sin_port = htons((uint16_t)rmq_server_port(fx.srv));
    ck_assert_int_eq(connect(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
    return fd;
}

/* Runs the loop until the peer closes fd (recv returns 0); 1 if it did. */
static int run_until_eof(int fd, int ms)
{
    int64_t end = rmq_mono_ms() + ms;
    char c;

    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while (rmq_mono_ms() < end) {
        if (recv(fd, &c, 1, 0) == 0)
            return 1;
        event_base_loop(fx.base, EVLOOP_ONCE);
    }
    return 0;
}

START_TEST(test_oversized_frame_closes_only_that_conn)
{
    result_t r1 = { 0 }, r2 = { 0 };
    rmq_server_opts_t opts = { .name = "test", .max_frame = 4096 };
    uint8_t prefix[8] = { 0x00, 0x10, 0x00, 0x00, 0, 0, 0, 4 };

    start_server(&opts);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    ck_assert_int_eq(call(cli, CODE_ECHO, "one", 2000, &r1), RMQ_OK);
    ck_assert(run_until(&r1.calls, 1, 3000));

    int fd = raw_connect();
    ck_assert_int_eq(send(fd, prefix, sizeof(prefix), 0), 8);
    ck_assert(run_until_eof(fd, 3000));
    close(fd);
    ck_assert_int_eq(fx.closes, 1);

    int garbage = raw_connect();
    ck_assert_int_eq(send(garbage, "\x00\x00\x00\x06\x00\x00\x00\x02\xff\xff", 10, 0), 10);
    ck_assert(run_until_eof(garbage, 3000));
    close(garbage);

    ck_assert_int_eq(call(cli, CODE_ECHO, "two", 2000, &r2), RMQ_OK);
    ck_assert(run_until(&r2.calls, 1, 3000));
    ck_assert_int_eq(r2.err, RMQ_OK);
    ck_assert_str_eq(r2.body, "two");
    ck_assert_uint_eq(rmq_server_conn_count(fx.srv), 1);
    rmq_client_free(cli);
}
END_TEST

START_TEST(test_deferred_reply)
{
    result_t r = { 0 };

    start_server(NULL);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    int64_t t0 = rmq_mono_ms();
    ck_assert_int_eq(call(cli, CODE_DEFER, NULL, 3000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 3000));
    ck_assert_int_eq(r.err, RMQ_OK);
    ck_assert_str_eq(r.body, "later");
    ck_assert_int_ge(r.at_ms - t0, 40);
    ck_assert_int_eq(fx.held_err, RMQ_OK);
    rmq_client_free(cli);
}
END_TEST

START_TEST(test_deferred_reply_after_close)
{
    result_t r = { 0 };

    start_server(NULL);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    ck_assert_int_eq(call(cli, CODE_DEFER, NULL, 3000, &r), RMQ_OK);
    while (fx.held == NULL)
        event_base_loop(fx.base, EVLOOP_ONCE);
    rmq_client_free(cli);
    ck_assert_int_eq(r.err, RMQ_ESHUTDOWN);
    ck_assert(run_until(&fx.closes, 1, 3000));
    ck_assert(!rmq_conn_is_open(fx.held));
    run_for(150);
    ck_assert_ptr_null(fx.held);
    ck_assert_int_eq(fx.held_err, RMQ_ECLOSED);
}
END_TEST

/* ---- back-pressure, idle, push, limits --------------------------------------- */

START_TEST(test_backpressure_drains)
{
    rmq_server_opts_t opts = { .name = "test", .max_output_bytes = 16 * 1024 };
    result_t r[50];

    memset(r, 0, sizeof(r));
    start_server(&opts);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    for (int i = 0; i < 50; i++)
        ck_assert_int_eq(call(cli, CODE_BIG, NULL, 10000, &r[i]), RMQ_OK);
    ck_assert(run_until(&r[49].calls, 1, 10000));
    for (int i = 0; i < 50; i++) {
        ck_assert_int_eq(r[i].err, RMQ_OK);
        ck_assert_uint_eq(r[i].body_len, 64 * 1024);
    }
    rmq_client_free(cli);
}
END_TEST

START_TEST(test_idle_timeout)
{
    rmq_server_opts_t opts = { .name = "test", .idle_timeout_ms = 100 };
    result_t r = { 0 };

    start_server(&opts);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    rmq_client_on_close(cli, on_client_close, NULL);
    client_closes = 0;
    ck_assert_int_eq(call(cli, CODE_ECHO, "x", 2000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 3000));
    ck_assert(run_until(&client_closes, 1, 3000));
    ck_assert_int_eq(fx.closes, 1);
    ck_assert_uint_eq(rmq_server_conn_count(fx.srv), 0);
    rmq_client_free(cli);
}
END_TEST

static int pushes;

static void on_push(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ck_assert_ptr_null(conn);
    ck_assert_int_eq(req->cmd->code, CODE_PUSH);
    ck_assert(req->cmd->flags & RMQ__COMMAND_FLAG__FLAG_ONEWAY);
    ck_assert_uint_eq(evbuffer_get_length(req->body), 6);
    pushes++;
}

START_TEST(test_server_push)
{
    result_t r = { 0 };

    start_server(NULL);
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    rmq_client_on_request(cli, on_push, NULL);
    pushes = 0;
    ck_assert_int_eq(call(cli, CODE_PUSH, NULL, 2000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 3000));
    ck_assert_int_eq(pushes, 1);
    rmq_client_free(cli);
}
END_TEST

START_TEST(test_max_conns)
{
    rmq_server_opts_t opts = { .name = "test", .max_conns = 1 };
    result_t r1 = { 0 }, r2 = { 0 };

    start_server(&opts);
    rmq_client_t *a = rmq_client_new(fx.base, fx.addr, NULL);
    rmq_client_t *b = rmq_client_new(fx.base, fx.addr, NULL);
    ck_assert_int_eq(call(a, CODE_ECHO, "a", 2000, &r1), RMQ_OK);
    ck_assert(run_until(&r1.calls, 1, 3000));
    ck_assert_int_eq(r1.err, RMQ_OK);
    ck_assert_int_eq(call(b, CODE_ECHO, "b", 2000, &r2), RMQ_OK);
    ck_assert(run_until(&r2.calls, 1, 3000));
    ck_assert_int_ne(r2.err, RMQ_OK);
    ck_assert_int_ne(r2.err, RMQ_ETIMEDOUT);
    ck_assert_uint_eq(rmq_server_conn_count(fx.srv), 1);
    rmq_client_free(a);
    rmq_client_free(b);
}
END_TEST

/* ---- reentrancy ---------------------------------------------------------------- */

typedef struct reenter {
    rmq_client_t *cli;
    int calls;
    rmq_err_t errs[8];
    result_t follow;
} reenter_t;

static void free_in_cb(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    reenter_t *re = arg;
    re->errs[re->calls++] = err;
    rmq_client_free(re->cli);
    ck_assert_int_eq(call(re->cli, CODE_ECHO, "x", 1000, &re->follow), RMQ_ESHUTDOWN);
}

static void count_cb(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    reenter_t *re = arg;
    re->errs[re->calls++] = err;
}

START_TEST(test_free_inside_callback)
{
    reenter_t re = { 0 };
    Rmq__Command req = RMQ__COMMAND__INIT;

    start_server(NULL);
    re.cli = rmq_client_new(fx.base, fx.addr, NULL);
    req.code = CODE_ECHO;
    ck_assert_int_eq(rmq_client_call(re.cli, &req, "a", 1, 2000, free_in_cb, &re), RMQ_OK);
    req.code = CODE_HOLE;
    ck_assert_int_eq(rmq_client_call(re.cli, &req, NULL, 0, 2000, count_cb, &re), RMQ_OK);
    ck_assert_int_eq(rmq_client_call(re.cli, &req, NULL, 0, 2000, count_cb, &re), RMQ_OK);
    ck_assert(run_until(&re.calls, 3, 3000));
    ck_assert_int_eq(re.errs[0], RMQ_OK);
    ck_assert_int_eq(re.errs[1], RMQ_ESHUTDOWN);
    ck_assert_int_eq(re.errs[2], RMQ_ESHUTDOWN);
    run_for(50);
    ck_assert_int_eq(re.calls, 3);
}
END_TEST

static void recall_cb(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    reenter_t *re = arg;
    re->errs[re->calls++] = err;
    ck_assert_int_eq(call(re->cli, CODE_ECHO, "retry", 2000, &re->follow), RMQ_OK);
}

START_TEST(test_new_call_from_failure_callback)
{
    reenter_t re = { 0 };
    Rmq__Command req = RMQ__COMMAND__INIT;
    result_t bye = { 0 };

    start_server(NULL);
    re.cli = rmq_client_new(fx.base, fx.addr, NULL);
    req.code = CODE_HOLE;
    ck_assert_int_eq(rmq_client_call(re.cli, &req, NULL, 0, 5000, recall_cb, &re), RMQ_OK);
    ck_assert_int_eq(call(re.cli, CODE_CLOSE, NULL, 5000, &bye), RMQ_OK);
    ck_assert(run_until(&re.follow.calls, 1, 3000));
    ck_assert_int_eq(re.errs[0], RMQ_ECLOSED);
    ck_assert_int_eq(re.follow.err, RMQ_OK);
    ck_assert_str_eq(re.follow.body, "retry");
    rmq_client_free(re.cli);
    ck_assert_int_eq(re.calls, 1);
}
END_TEST

START_TEST(test_pool)
{
    result_t r = { 0 };

    start_server(NULL);
    rmq_client_pool_t *pool = rmq_client_pool_new(fx.base, NULL);
    rmq_client_t *cli = rmq_client_pool_get(pool, fx.addr);
    ck_assert_ptr_eq(rmq_client_pool_get(pool, fx.addr), cli);
    ck_assert_ptr_null(rmq_client_pool_get(pool, "no-port"));
    ck_assert_int_eq(call(cli, CODE_ECHO, "p", 2000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 3000));
    ck_assert_int_eq(r.err, RMQ_OK);
    rmq_client_pool_drop(pool, fx.addr);
    rmq_client_pool_free(pool);
}
END_TEST

START_TEST(test_addr_split)
{
    char host[64];
    int port;

    ck_assert_int_eq(rmq_addr_split("127.0.0.1:9876", host, sizeof(host), &port), RMQ_OK);
    ck_assert_str_eq(host, "127.0.0.1");
    ck_assert_int_eq(port, 9876);
    ck_assert_int_eq(rmq_addr_split("[::1]:10911", host, sizeof(host), &port), RMQ_OK);
    ck_assert_str_eq(host, "::1");
    ck_assert_int_eq(port, 10911);
    ck_assert_int_eq(rmq_addr_split("localhost:1", host, sizeof(host), &port), RMQ_OK);
    ck_assert_int_eq(rmq_addr_split("localhost", host, sizeof(host), &port), RMQ_EINVAL);
    ck_assert_int_eq(rmq_addr_split(":80", host, sizeof(host), &port), RMQ_EINVAL);
    ck_assert_int_eq(rmq_addr_split("h:0", host, sizeof(host), &port), RMQ_EINVAL);
    ck_assert_int_eq(rmq_addr_split("h:65536", host, sizeof(host), &port), RMQ_EINVAL);
    ck_assert_int_eq(rmq_addr_split("h:12x", host, sizeof(host), &port), RMQ_EINVAL);
    ck_assert_int_eq(rmq_addr_split("abcdef:80", host, 4, &port), RMQ_EINVAL);
    /* RocketMQ's IPv6 broker address: the literal without brackets, the port after the last ':' */
    ck_assert_int_eq(rmq_addr_split("::1:80", host, sizeof(host), &port), RMQ_OK);
    ck_assert_str_eq(host, "::1");
    ck_assert_int_eq(port, 80);
    ck_assert_int_eq(rmq_addr_split("2001:db8::1:9876", host, sizeof(host), &port), RMQ_OK);
    ck_assert_str_eq(host, "2001:db8::1");
    ck_assert_int_eq(port, 9876);
    ck_assert_int_eq(rmq_addr_split("a:b:80", host, sizeof(host), &port), RMQ_EINVAL);
    ck_assert_int_eq(rmq_addr_split("::1", host, sizeof(host), &port), RMQ_EINVAL);
    ck_assert_int_eq(rmq_addr_split("[::1]80", host, sizeof(host), &port), RMQ_EINVAL);
}
END_TEST

START_TEST(test_addr_sockaddr_and_equal)
{
    struct sockaddr_storage ss;
    int len;

    ck_assert_int_eq(rmq_addr_sockaddr("::1:9876", &ss, &len), RMQ_OK);
    ck_assert_int_eq(ss.ss_family, AF_INET6);
    ck_assert_int_eq(len, (int)sizeof(struct sockaddr_in6));
    ck_assert_int_eq(rmq_sockaddr_port((struct sockaddr *)&ss), 9876);
    ck_assert_int_eq(rmq_addr_sockaddr("10.0.0.1:1", &ss, &len), RMQ_OK);
    ck_assert_int_eq(ss.ss_family, AF_INET);
    ck_assert_int_eq(rmq_addr_sockaddr("localhost:1", &ss, &len), RMQ_EINVAL);
    ck_assert_int_eq(rmq_addr_sockaddr("10.0.0.1", &ss, &len), RMQ_EINVAL);
    ck_assert(rmq_addr_equal("::1:10911", "[::1]:10911"));
    ck_assert(rmq_addr_equal("[0:0::1]:10911", "::1:10911"));
    ck_assert(!rmq_addr_equal("::1:10911", "[::1]:10912"));
    ck_assert(!rmq_addr_equal("127.0.0.1:10911", "[::1]:10911"));
    ck_assert(rmq_addr_equal("h:1", "h:1"));
    ck_assert(!rmq_addr_equal("h:1", "g:1"));
}
END_TEST

/* An IPv4 peer of a dual-stack socket (::ffff:a.b.c.d) reads as the plain
 * IPv4 address everywhere a peer's address is read. */
START_TEST(test_sockaddr_unmap)
{
    struct sockaddr_in6 mapped = { .sin6_family = AF_INET6, .sin6_port = htons(4242) };
    struct sockaddr_in6 six = { .sin6_family = AF_INET6, .sin6_port = htons(7), .sin6_addr = IN6ADDR_LOOPBACK_INIT };
    struct sockaddr_storage out;
    char text[64];

    ck_assert_int_eq(inet_pton(AF_INET6, "::ffff:10.1.2.3", &mapped.sin6_addr), 1);
    ck_assert_int_eq(rmq_sockaddr_unmap((struct sockaddr *)&mapped, &out), (int)sizeof(struct sockaddr_in));
    ck_assert_int_eq(out.ss_family, AF_INET);
    ck_assert_uint_eq(ntohl(((struct sockaddr_in *)&out)->sin_addr.s_addr), 0x0A010203);
    ck_assert_int_eq(rmq_sockaddr_port((struct sockaddr *)&out), 4242);
    rmq_sockaddr_text((struct sockaddr *)&mapped, text, sizeof text);
    ck_assert_str_eq(text, "10.1.2.3:4242");
    ck_assert_int_eq(rmq_sockaddr_unmap((struct sockaddr *)&six, &out), (int)sizeof(six));
    ck_assert_mem_eq(&out, &six, sizeof(six));
    rmq_sockaddr_text((struct sockaddr *)&six, text, sizeof text);
    ck_assert_str_eq(text, "[::1]:7");
}
END_TEST

/* 1 if this host can bind ::1 (IPv6 loopback configured). */
static int have_ipv6_loopback(void)
{
    char err[128];
    int fd = rmq_listen_socket("ipv6 probe", "::1", 0, 1, err, sizeof(err));

    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

/* Calls CODE_PEER on addr; the answer's remark and body into r. */
static void peer_call(const char *addr, result_t *r)
{
    rmq_client_t *cli = rmq_client_new(fx.base, addr, NULL);

    ck_assert_ptr_nonnull(cli);
    ck_assert_int_eq(call(cli, CODE_PEER, NULL, 2000, r), RMQ_OK);
    ck_assert(run_until(&r->calls, 1, 3000));
    ck_assert_int_eq(r->err, RMQ_OK);
    rmq_client_free(cli);
}

/* The wildcard listener takes IPv4 and IPv6 clients on one port; the IPv4
 * one is seen as plain IPv4 (not ::ffff:127.0.0.1), the IPv6 one as IPv6. */
START_TEST(test_dual_stack_listener)
{
    rmq_server_opts_t o = { .name = "dual" };
    result_t r4 = { 0 }, r6 = { 0 };
    char addr[64];

    fx.srv = rmq_server_new(fx.base, &o);
    add_handlers(fx.srv, &fx);
    ck_assert_int_eq(rmq_server_listen(fx.srv, "0.0.0.0", 0), RMQ_OK);
    int port = rmq_server_port(fx.srv);
    ck_assert_int_gt(port, 0);
    snprintf(addr, sizeof addr, "127.0.0.1:%d", port);
    peer_call(addr, &r4);
    ck_assert_msg(strncmp(r4.remark, "127.0.0.1:", 10) == 0, "IPv4 peer reads %s", r4.remark);
    snprintf(addr, sizeof addr, "ip4=7f000001 v6=0 local=127.0.0.1:%d", port);
    ck_assert_str_eq(r4.body, addr);
    if (!have_ipv6_loopback())
        return;
    snprintf(addr, sizeof addr, "::1:%d", port);
    peer_call(addr, &r6);
    ck_assert_msg(strncmp(r6.remark, "[::1]:", 6) == 0, "IPv6 peer reads %s", r6.remark);
    snprintf(addr, sizeof addr, "ip4=00000000 v6=1 local=[::1]:%d", port);
    ck_assert_str_eq(r6.body, addr);
}
END_TEST

/* A specific address binds just that one: 127.0.0.1 takes no IPv6 client. */
START_TEST(test_specific_listener_is_one_family)
{
    result_t r = { 0 };
    char addr[64];

    if (!have_ipv6_loopback())
        return;
    start_server(NULL);
    snprintf(addr, sizeof addr, "[::1]:%d", rmq_server_port(fx.srv));
    rmq_client_t *cli = rmq_client_new(fx.base, addr, NULL);
    ck_assert_int_eq(call(cli, CODE_PEER, NULL, 2000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 3000));
    ck_assert_int_ne(r.err, RMQ_OK);
    rmq_client_free(cli);
}
END_TEST

/* ---- blocking wrapper against a server on another thread ---------------------- */

typedef struct remote {
    struct event_base *base;
    rmq_server_t *srv;
    pthread_t thread;
} remote_t;

static void *remote_main(void *arg)
{
    remote_t *rm = arg;
    event_base_loop(rm->base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

START_TEST(test_sync_call_other_thread)
{
    remote_t rm = { 0 };
    fixture_t rfx = { 0 };
    rmq_frame_t resp = { 0 };
    rmq_server_opts_t opts = { .name = "remote" };
    char addr[64], dead[64];
    Rmq__Command req = RMQ__COMMAND__INIT;

    rm.base = event_base_new();
    rfx.base = rm.base;
    rm.srv = rmq_server_new(rm.base, &opts);
    add_handlers(rm.srv, &rfx);
    ck_assert_int_eq(rmq_server_listen(rm.srv, "127.0.0.1", 0), RMQ_OK);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", rmq_server_port(rm.srv));
    ck_assert_int_eq(pthread_create(&rm.thread, NULL, remote_main, &rm), 0);

    rmq_sync_t *s = rmq_sync_new(NULL);
    req.code = CODE_ECHO;
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(rmq_sync_call(s, addr, &req, "sync", 4, 2000, &resp), RMQ_OK);
        ck_assert_int_eq(resp.cmd->status, RMQ__STATUS__SUCCESS);
        ck_assert_uint_eq(evbuffer_get_length(resp.body), 4);
        rmq_frame_clear(&resp);
    }
    req.code = CODE_HOLE;
    ck_assert_int_eq(rmq_sync_call(s, addr, &req, NULL, 0, 100, &resp), RMQ_ETIMEDOUT);
    ck_assert_ptr_null(resp.cmd);
    snprintf(dead, sizeof(dead), "127.0.0.1:%d", closed_port());
    ck_assert_int_eq(rmq_sync_call(s, dead, &req, NULL, 0, 2000, &resp), RMQ_ECONNECT);
    rmq_sync_free(s);

    event_base_loopbreak(rm.base);
    pthread_join(rm.thread, NULL);
    rmq_server_free(rm.srv);
    event_base_loop(rm.base, EVLOOP_NONBLOCK);
    event_base_free(rm.base);
}
END_TEST

/* ---- TLS ------------------------------------------------------------------------- */

static test_cert_t tls;

static SSL_CTX *server_ctx(void)
{
    char err[256];
    SSL_CTX *ctx = rmq_tls_server_ctx_new(tls.cert, tls.key, NULL, 0, err, sizeof(err));
    ck_assert_msg(ctx != NULL, "%s", err);
    return ctx;
}

static SSL_CTX *client_ctx(void)
{
    char err[256];
    SSL_CTX *ctx = rmq_tls_client_ctx_new(tls.cert, NULL, NULL, err, sizeof(err));
    ck_assert_msg(ctx != NULL, "%s", err);
    return ctx;
}

/* A client context that verifies the server against an empty trust store. */
static SSL_CTX *untrusting_client_ctx(void)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    ck_assert_ptr_nonnull(ctx);
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    return ctx;
}

/* One echo through a new client with ssl (NULL: plaintext); returns its
 * error, and the client's reason for a failure in why (may be NULL). */
static rmq_err_t echo_once_why(SSL_CTX *ssl, char *why, size_t len)
{
    rmq_client_opts_t copts = { .ssl_ctx = ssl, .name = "tls-test" };
    result_t r = { 0 };

    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, &copts);
    ck_assert_int_eq(call(cli, CODE_ECHO, "secret", 3000, &r), RMQ_OK);
    ck_assert(run_until(&r.calls, 1, 5000));
    if (r.err == RMQ_OK)
        ck_assert_str_eq(r.body, "secret");
    if (why)
        snprintf(why, len, "%s", rmq_client_last_error(cli));
    rmq_client_free(cli);
    return r.err;
}

static rmq_err_t echo_once(SSL_CTX *ssl)
{
    return echo_once_why(ssl, NULL, 0);
}

START_TEST(test_tls_enforcing)
{
    test_cert_make(&tls, "tls");
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    rmq_server_opts_t opts = { .name = "tls", .ssl_ctx = sctx, .tls_mode = RMQ_TLS_ENFORCING };

    start_server(&opts);
    ck_assert_int_eq(echo_once(cctx), RMQ_OK);
    /* plaintext to a TLS-only server: closed unanswered, and the reason says TLS may be why */
    char why[256];
    ck_assert_int_eq(echo_once_why(NULL, why, sizeof why), RMQ_ECLOSED);
    ck_assert_msg(strstr(why, "before any answer") && strstr(why, "tlsMode=enforcing"), "why: %s", why);
    rmq_server_free(fx.srv);
    fx.srv = NULL;
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    test_cert_remove(&tls);
}
END_TEST

START_TEST(test_tls_permissive)
{
    test_cert_make(&tls, "tls");
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    rmq_server_opts_t opts = { .name = "tls", .ssl_ctx = sctx, .tls_mode = RMQ_TLS_PERMISSIVE };

    start_server(&opts);
    ck_assert_int_eq(echo_once(cctx), RMQ_OK);
    ck_assert_int_eq(echo_once(NULL), RMQ_OK);
    ck_assert_int_eq(echo_once(cctx), RMQ_OK);
    rmq_server_free(fx.srv);
    fx.srv = NULL;
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    test_cert_remove(&tls);
}
END_TEST

START_TEST(test_tls_client_plain_server)
{
    test_cert_make(&tls, "tls");
    SSL_CTX *cctx = client_ctx();

    start_server(NULL);
    char why[256];
    ck_assert_int_eq(echo_once_why(cctx, why, sizeof why), RMQ_ETLS);
    ck_assert_msg(strncmp(why, "TLS handshake failed: ", 22) == 0, "why: %s", why);
    ck_assert_int_eq(echo_once(NULL), RMQ_OK);
    SSL_CTX_free(cctx);
    test_cert_remove(&tls);
}
END_TEST

START_TEST(test_tls_verify_failure_named)
{
    test_cert_make(&tls, "tls");
    SSL_CTX *sctx = server_ctx(), *cctx = untrusting_client_ctx();
    rmq_server_opts_t opts = { .name = "tls", .ssl_ctx = sctx, .tls_mode = RMQ_TLS_ENFORCING };
    char why[256];

    start_server(&opts);
    ck_assert_int_eq(echo_once_why(cctx, why, sizeof why), RMQ_ETLS);
    ck_assert_msg(strstr(why, "TLS handshake failed: certificate verify failed: ") == why &&
                      strstr(why, "self-signed certificate"), "why: %s", why);
    rmq_server_free(fx.srv);
    fx.srv = NULL;
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    test_cert_remove(&tls);
}
END_TEST

START_TEST(test_tls_ctx_errors)
{
    char err[256] = "";

    ck_assert_ptr_null(rmq_tls_server_ctx_new("/nonexistent/cert.pem", "/nonexistent/key.pem",
                                              NULL, 0, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/cert.pem"));
    ck_assert_ptr_null(rmq_tls_client_ctx_new("/nonexistent/ca.pem", NULL, NULL, err,
                                              sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "/nonexistent/ca.pem"));
}
END_TEST

/* ---- a second codec on the same port ------------------------------------------ */

/* A minimal line protocol: "ECHO text\n" is answered "text\n". */
typedef struct line_state {
    int served;
    rmq_err_t push_err;           /* an rmq push on a line connection */
} line_state_t;

static rmq_codec_probe_t line_probe(const uint8_t *data, size_t len, uint32_t max_frame)
{
    size_t n = len < 5 ? len : 5;

    if (memcmp(data, "ECHO ", n) != 0)
        return RMQ_CODEC_NO;
    return n == 5 ? RMQ_CODEC_YES : RMQ_CODEC_MORE;
}

static rmq_err_t line_serve(rmq_conn_t *conn, struct evbuffer *in, void *state, const char **why)
{
    line_state_t *st = state;
    size_t n = 0;
    char *line = evbuffer_readln(in, &n, EVBUFFER_EOL_LF);

    if (line == NULL) {
        *why = "line too long";
        return evbuffer_get_length(in) > 1024 ? RMQ_EPROTO : RMQ_EAGAIN;
    }
    if (strncmp(line, "ECHO ", 5) != 0) {
        free(line);
        *why = "not an ECHO line";
        return RMQ_EPROTO;
    }
    Rmq__Command push = RMQ__COMMAND__INIT;
    st->push_err = rmq_conn_send_oneway(conn, &push, NULL, 0);
    evbuffer_add_printf(rmq_conn_output(conn), "%s\n", line + 5);
    rmq_conn_output_done(conn);
    st->served++;
    free(line);
    return RMQ_OK;
}

static const rmq_codec_t line_codec = {
    .name = "line",
    .probe = line_probe,
    .serve = line_serve,
    .free_state = free,
};

/* Adds the line codec to the fixture server; returns its state. */
static line_state_t *add_line_codec(void)
{
    line_state_t *st = calloc(1, sizeof(*st));
    ck_assert_int_eq(rmq_server_add_codec(fx.srv, &line_codec, st), RMQ_OK);
    ck_assert_int_eq(rmq_server_add_codec(fx.srv, &line_codec, st), RMQ_EINVAL);
    ck_assert_ptr_eq(rmq_server_codec_state(fx.srv, &line_codec), st);
    return st;
}

/* Runs the loop until fd (nonblocking) has received want; 1 if it did. */
static int run_until_text(int fd, const char *want, int ms)
{
    int64_t end = rmq_mono_ms() + ms;
    char got[256];
    size_t have = 0;

    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    while (rmq_mono_ms() < end && have < sizeof(got) - 1) {
        ssize_t n = recv(fd, got + have, sizeof(got) - 1 - have, 0);
        if (n > 0) {
            have += (size_t)n;
            got[have] = '\0';
            if (strcmp(got, want) == 0)
                return 1;
            continue;
        }
        if (n == 0)
            return 0;
        event_base_loop(fx.base, EVLOOP_ONCE);
    }
    return 0;
}

/* rmq requests and line requests on one port at once, each connection
 * answered in its own protocol; a connection's codec is fixed by its first
 * bytes (a line connection gets no rmq push); a short first line still
 * reaches its codec. */
START_TEST(test_two_codecs_one_port)
{
    result_t r1 = { 0 }, r2 = { 0 };

    start_server(NULL);
    line_state_t *st = add_line_codec();
    rmq_client_t *cli = rmq_client_new(fx.base, fx.addr, NULL);
    int line = raw_connect();
    int slow = raw_connect();

    ck_assert_int_eq(call(cli, CODE_ECHO, "native", 2000, &r1), RMQ_OK);
    ck_assert_int_eq(send(line, "ECHO one\nECHO two\n", 18, 0), 18);
    ck_assert_int_eq(send(slow, "ECH", 3, 0), 3);
    ck_assert(run_until_text(line, "one\ntwo\n", 3000));
    ck_assert(run_until(&r1.calls, 1, 3000));
    ck_assert_int_eq(r1.err, RMQ_OK);
    ck_assert_str_eq(r1.body, "native");
    ck_assert_int_eq(st->push_err, RMQ_EPROTO);
    ck_assert_int_eq(send(slow, "O x\n", 4, 0), 4);
    ck_assert(run_until_text(slow, "x\n", 3000));
    ck_assert_int_eq(st->served, 3);

    /* the same connection stays rmq: a line on it is a bad rmq frame */
    ck_assert_int_eq(call(cli, CODE_ECHO, "again", 2000, &r2), RMQ_OK);
    ck_assert(run_until(&r2.calls, 1, 3000));
    ck_assert_str_eq(r2.body, "again");
    ck_assert_uint_eq(rmq_server_conn_count(fx.srv), 3);

    /* bytes no codec claims go to the default codec (rmq), which refuses them */
    int junk = raw_connect();
    ck_assert_int_eq(send(junk, "GET / HTTP/1.0\r\n\r\n", 18, 0), 18);
    ck_assert(run_until_eof(junk, 3000));
    close(junk);
    close(line);
    close(slow);
    rmq_client_free(cli);
}
END_TEST

/* TLS permissive with two codecs: the TLS sniff runs first, then the codec
 * is chosen from the plaintext: rmq over TLS, rmq in plaintext and the line
 * protocol in plaintext all on one port. */
START_TEST(test_two_codecs_tls_permissive)
{
    test_cert_make(&tls, "tls");
    SSL_CTX *sctx = server_ctx(), *cctx = client_ctx();
    rmq_server_opts_t opts = { .name = "tls2", .ssl_ctx = sctx, .tls_mode = RMQ_TLS_PERMISSIVE };

    start_server(&opts);
    line_state_t *st = add_line_codec();
    int line = raw_connect();
    ck_assert_int_eq(send(line, "ECHO plain\n", 11, 0), 11);
    ck_assert_int_eq(echo_once(cctx), RMQ_OK);
    ck_assert(run_until_text(line, "plain\n", 3000));
    ck_assert_int_eq(echo_once(NULL), RMQ_OK);
    ck_assert_int_eq(st->served, 1);
    close(line);
    rmq_server_free(fx.srv);
    fx.srv = NULL;
    SSL_CTX_free(sctx);
    SSL_CTX_free(cctx);
    test_cert_remove(&tls);
}
END_TEST

/* A transport does not listen without a codec; with only the line codec,
 * an rmq frame goes to it (the default) and it refuses it. */
START_TEST(test_transport_without_rmq)
{
    rmq_server_opts_t o = { .name = "lineonly" };

    rmq_server_t *none = rmq_transport_new(fx.base, &o);
    ck_assert_int_eq(rmq_server_listen(none, "127.0.0.1", 0), RMQ_EINVAL);
    rmq_server_free(none);
    fx.srv = rmq_transport_new(fx.base, &o);
    ck_assert_ptr_nonnull(fx.srv);
    line_state_t *st = add_line_codec();
    ck_assert_ptr_null(rmq_server_codec_state(fx.srv, &rmq_codec_rmq));
    ck_assert_int_eq(rmq_server_listen(fx.srv, "127.0.0.1", 0), RMQ_OK);
    int line = raw_connect();
    ck_assert_int_eq(send(line, "ECHO solo\n", 10, 0), 10);
    ck_assert(run_until_text(line, "solo\n", 3000));
    int other = raw_connect();
    ck_assert_int_eq(send(other, "\0\0\0\x06\0\0\0\x02\x08\n", 10, 0), 10);
    ck_assert(run_until_eof(other, 3000));
    ck_assert_int_eq(st->served, 1);
    close(other);
    close(line);
}
END_TEST

static Suite *rpc_suite(void)
{
    Suite *s = suite_create("rpc");
    TCase *tc = tcase_create("core");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, test_request_response);
    tcase_add_test(tc, test_thousand_in_flight);
    tcase_add_test(tc, test_oneway);
    tcase_add_test(tc, test_unknown_code);
    tcase_add_test(tc, test_request_timeout);
    tcase_add_test(tc, test_connect_refused);
    tcase_add_test(tc, test_server_close_then_reconnect);
    tcase_add_test(tc, test_oversized_frame_closes_only_that_conn);
    tcase_add_test(tc, test_deferred_reply);
    tcase_add_test(tc, test_deferred_reply_after_close);
    tcase_add_test(tc, test_backpressure_drains);
    tcase_add_test(tc, test_idle_timeout);
    tcase_add_test(tc, test_server_push);
    tcase_add_test(tc, test_max_conns);
    tcase_add_test(tc, test_free_inside_callback);
    tcase_add_test(tc, test_new_call_from_failure_callback);
    tcase_add_test(tc, test_pool);
    tcase_add_test(tc, test_addr_split);
    tcase_add_test(tc, test_addr_sockaddr_and_equal);
    tcase_add_test(tc, test_sockaddr_unmap);
    tcase_add_test(tc, test_dual_stack_listener);
    tcase_add_test(tc, test_specific_listener_is_one_family);
    tcase_add_test(tc, test_sync_call_other_thread);
    tcase_add_test(tc, test_tls_enforcing);
    tcase_add_test(tc, test_tls_permissive);
    tcase_add_test(tc, test_tls_client_plain_server);
    tcase_add_test(tc, test_tls_verify_failure_named);
    tcase_add_test(tc, test_tls_ctx_errors);
    tcase_add_test(tc, test_two_codecs_one_port);
    tcase_add_test(tc, test_two_codecs_tls_permissive);
    tcase_add_test(tc, test_transport_without_rmq);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    evthread_use_pthreads();
    SRunner *sr = srunner_create(rpc_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
