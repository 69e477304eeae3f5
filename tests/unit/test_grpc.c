/* test_grpc.c: the gRPC codec (rmq_codec_grpc.h) on a real loopback
 * server (the rmq codec first, as on the broker's port) driven by an
 * nghttp2 client session (grpc_client.h): test-only echo methods (unary,
 * a streaming request, server streaming with deferred writes, a held call),
 * unknown methods, content-type, big and split messages, many streams,
 * RST_STREAM and connection close reaching the cancel callback, TLS with
 * ALPN "h2", and the pure grpc-timeout parser and grpc-message encoder. */
#include "rmq_codec_grpc.h"
#include "rmq_rpc.h"

#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>
#include <event2/thread.h>
#include <nghttp2/nghttp2.h>
#include <zlib.h>

#include "grpc_client.h"
#include "rmq_time.h"
#include "test_cert.h"

#define P_UNARY "/test.Echo/Unary"
#define P_STREAM "/test.Echo/Stream"
#define P_DEFERRED "/test.Echo/Deferred"
#define P_HOLD "/test.Echo/Hold"
#define P_WHO "/test.Echo/Who"
#define P_PAIR "/test.Echo/Pair"
#define BIG (4u << 20)

static struct {
    struct event_base *base;
    rmq_server_t *srv;
    pthread_t loop;
    SSL_CTX *server_ssl;
    int port;
} fx;

static atomic_int cancels, held_now, stream_messages;

/* ---- the echo methods (server loop thread) ----------------------------------- */

static void unary_echo(rmq_grpc_call_t *call, void *arg)
{
    size_t len;
    const uint8_t *req = rmq_grpc_call_request(call, &len);

    rmq_grpc_reply(call, req, len);
}

static void stream_message(rmq_grpc_call_t *call, const uint8_t *data, size_t len, void *arg)
{
    if (data == NULL) {
        rmq_grpc_finish(call, RMQ_GRPC_OK, NULL);
        return;
    }
    atomic_fetch_add(&stream_messages, 1);
    rmq_grpc_write(call, data, len);
}

static void stream_echo(rmq_grpc_call_t *call, void *arg)
{
    rmq_grpc_call_on_message(call, stream_message, NULL);
}

/* Server streaming: the request's first byte says how many messages; one
 * goes out per timer tick, after the handler returned. */
typedef struct ticker {
    rmq_grpc_call_t *call;
    struct event *ev;
    int left, sent;
} ticker_t;

static void ticker_end(ticker_t *t, int status)
{
    rmq_grpc_finish(t->call, status, status == RMQ_GRPC_OK ? NULL : "cancelled");
    event_free(t->ev);
    free(t);
}

static void ticker_cb(evutil_socket_t fd, short what, void *arg)
{
    ticker_t *t = arg;
    uint8_t msg[2] = { 'm', (uint8_t)t->sent++ };
    struct timeval tv = { 0, 2000 };

    rmq_grpc_write(t->call, msg, sizeof(msg));
    if (--t->left == 0) {
        ticker_end(t, RMQ_GRPC_OK);
        return;
    }
    event_add(t->ev, &tv);
}

static void ticker_cancel(rmq_grpc_call_t *call, void *arg)
{
    atomic_fetch_add(&cancels, 1);
    ticker_end(arg, RMQ_GRPC_CANCELLED);
}

static void deferred_echo(rmq_grpc_call_t *call, void *arg)
{
    size_t len;
    const uint8_t *req = rmq_grpc_call_request(call, &len);
    ticker_t *t = calloc(1, sizeof(*t));
    struct timeval tv = { 0, 2000 };

    t->call = call;
    t->left = len > 0 ? req[0] : 1;
    t->ev = evtimer_new(fx.base, ticker_cb, t);
    rmq_grpc_call_on_cancel(call, ticker_cancel, t);
    event_add(t->ev, &tv);
}

/* Holds the call until its stream goes away. */
static void hold_cancel(rmq_grpc_call_t *call, void *arg)
{
    atomic_fetch_add(&cancels, 1);
    atomic_fetch_sub(&held_now, 1);
    ck_assert(!rmq_grpc_call_live(call));
    ck_assert_int_eq(rmq_grpc_write(call, (const uint8_t *)"x", 1), RMQ_ECLOSED);
    rmq_grpc_finish(call, RMQ_GRPC_CANCELLED, NULL);
}

static void hold(rmq_grpc_call_t *call, void *arg)
{
    atomic_fetch_add(&held_now, 1);
    rmq_grpc_call_on_cancel(call, hold_cancel, NULL);
}

/* Answers with the x-mq-client-id header and whether a deadline came. */
static void who(rmq_grpc_call_t *call, void *arg)
{
    char answer[128];
    const char *id = rmq_grpc_call_header(call, "x-mq-client-id");
    int64_t left = rmq_grpc_call_deadline_ms(call) - rmq_mono_ms();

    snprintf(answer, sizeof(answer), "%s/%s", id != NULL ? id : "-",
             left > 1000 && left <= 2000 ? "deadline" : "none");
    rmq_grpc_reply(call, (const uint8_t *)answer, strlen(answer));
}

/* Holds the first call of a pair until the second comes, then answers
 * both with whether their x-mq-client-id values are one buffer (the
 * header table's, "shared") or a copy per call ("copied"). */
static rmq_grpc_call_t *pair_first;

static void pair(rmq_grpc_call_t *call, void *arg)
{
    if (pair_first == NULL) {
        pair_first = call;
        return;
    }
    const char *a = rmq_grpc_call_header(pair_first, "x-mq-client-id");
    const char *b = rmq_grpc_call_header(call, "x-mq-client-id");
    const uint8_t *answer = (const uint8_t *)(a != NULL && a == b ? "shared" : "copied");
    rmq_grpc_reply(pair_first, answer, 6);
    rmq_grpc_reply(call, answer, 6);
    pair_first = NULL;
}

static const rmq_grpc_method_t methods[] = {
    { P_WHO, RMQ_GRPC_UNARY_REQUEST, who, NULL },
    { P_PAIR, RMQ_GRPC_UNARY_REQUEST, pair, NULL },
    { P_UNARY, RMQ_GRPC_UNARY_REQUEST, unary_echo, NULL },
    { P_STREAM, RMQ_GRPC_STREAM_REQUEST, stream_echo, NULL },
    { P_DEFERRED, RMQ_GRPC_UNARY_REQUEST, deferred_echo, NULL },
    { P_HOLD, RMQ_GRPC_UNARY_REQUEST, hold, NULL },
};

/* ---- fixture ------------------------------------------------------------------- */

static test_cert_t tls;

static void *loop_main(void *arg)
{
    event_base_loop(fx.base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

/* A server on 127.0.0.1 with the rmq codec and the gRPC codec, TLS
 * permissive (plaintext and TLS on one port), its loop on a thread. */
static void setup(void)
{
    char err[256];
    evthread_use_pthreads();
    test_cert_make(&tls, "grpc");
    fx.server_ssl = rmq_tls_server_ctx_new(tls.cert, tls.key, NULL, 0, err, sizeof(err));
    ck_assert_msg(fx.server_ssl != NULL, "%s", err);
    fx.base = event_base_new();
    rmq_server_opts_t opts = { .max_frame = 8u << 20, .name = "grpc-test",
                               .ssl_ctx = fx.server_ssl, .tls_mode = RMQ_TLS_PERMISSIVE };
    fx.srv = rmq_server_new(fx.base, &opts);
    ck_assert_ptr_nonnull(fx.srv);
    ck_assert_int_eq(rmq_grpc_install(fx.srv, methods, sizeof(methods) / sizeof(methods[0])),
                     RMQ_OK);
    ck_assert_int_eq(rmq_server_listen(fx.srv, "127.0.0.1", 0), RMQ_OK);
    fx.port = rmq_server_port(fx.srv);
    atomic_store(&cancels, 0);
    atomic_store(&held_now, 0);
    atomic_store(&stream_messages, 0);
    ck_assert_int_eq(pthread_create(&fx.loop, NULL, loop_main, NULL), 0);
}

static void break_loop_cb(evutil_socket_t fd, short what, void *arg)
{
    event_base_loopbreak(fx.base);
}

/* Frees the server, then lets the loop run a pass more before it stops: a
 * TLS connection the server closed here (its client's close not read yet,
 * on a loaded machine) has its bufferevent freed by a finalizer the loop
 * runs, which a loop stopped at once would leave unrun (a leak). */
static void free_server_cb(evutil_socket_t fd, short what, void *arg)
{
    struct timeval pass = { 0, 10000 };

    rmq_server_free(fx.srv);
    event_base_once(fx.base, -1, EV_TIMEOUT, break_loop_cb, NULL, &pass);
}

static void teardown(void)
{
    event_base_once(fx.base, -1, EV_TIMEOUT, free_server_cb, NULL, NULL);
    pthread_join(fx.loop, NULL);
    event_base_free(fx.base);
    SSL_CTX_free(fx.server_ssl);
    test_cert_remove(&tls);
}

/* ---- helpers ------------------------------------------------------------------ */

static gc_client_t *connect_plain(void)
{
    gc_client_t *c = gc_connect(fx.port, NULL, NULL);
    ck_assert_ptr_nonnull(c);
    return c;
}

static gc_stream_t *unary(gc_client_t *c, const char *path, const uint8_t *msg, size_t len)
{
    uint8_t *framed = malloc(len + 5);
    size_t n = gc_frame(msg, len, framed);
    gc_stream_t *s = gc_request(c, path, "application/grpc", "3S", framed, n, 0);
    free(framed);
    ck_assert_ptr_nonnull(s);
    return s;
}

/* A unary call of path with the message "?" and grpc-timeout 2S. */
static gc_stream_t *request_2s(gc_client_t *c, const char *path)
{
    uint8_t body[8];
    size_t n = gc_frame((const uint8_t *)"?", 1, body);
    gc_stream_t *s = gc_request(c, path, "application/grpc", "2S", body, n, 0);
    ck_assert_ptr_nonnull(s);
    return s;
}

static void assert_echo(const gc_stream_t *s, const uint8_t *msg, size_t len)
{
    const uint8_t *got;
    size_t got_len;

    ck_assert_int_eq(s->http_status, 200);
    ck_assert_msg(s->grpc_status == 0, "grpc-status %d: %s", s->grpc_status, s->grpc_message);
    ck_assert_int_eq(gc_message(s, 0, &got, &got_len), 0);
    ck_assert_uint_eq(got_len, len);
    ck_assert(memcmp(got, msg, len) == 0);
}

static int wait_for(atomic_int *v, int want, int ms)
{
    int64_t end = rmq_mono_ms() + ms;
    while (atomic_load(v) != want && rmq_mono_ms() < end)
        usleep(2000);
    return atomic_load(v) == want;
}

/* ---- tests --------------------------------------------------------------------- */

START_TEST(test_unary_echo)
{
    gc_client_t *c = connect_plain();
    gc_stream_t *s = unary(c, P_UNARY, (const uint8_t *)"hello", 5);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    assert_echo(s, (const uint8_t *)"hello", 5);
    gc_close(c);
}
END_TEST

START_TEST(test_unknown_method_unimplemented)
{
    gc_client_t *c = connect_plain();
    gc_stream_t *s = unary(c, "/apache.rocketmq.v2.MessagingService/QueryRoute",
                           (const uint8_t *)"x", 1);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(s->http_status, 200);
    ck_assert_int_eq(s->grpc_status, RMQ_GRPC_UNIMPLEMENTED);
    ck_assert_uint_eq(s->body_len, 0);
    gc_close(c);
}
END_TEST

START_TEST(test_bad_content_type_415)
{
    gc_client_t *c = connect_plain();
    uint8_t framed[8];
    size_t n = gc_frame((const uint8_t *)"abc", 3, framed);
    gc_stream_t *s = gc_request(c, P_UNARY, "application/json", NULL, framed, n, 0);
    gc_stream_t *ok = gc_request(c, P_UNARY, "application/grpc+proto", NULL, framed, n, 0);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(s->http_status, 415);
    ck_assert_int_eq(s->grpc_status, -1);
    assert_echo(ok, (const uint8_t *)"abc", 3);
    gc_close(c);
}
END_TEST

/* A request that is no gRPC call gets an HTTP status, no grpc-status: a
 * GET 405, a :path without the leading '/' 404; a call after them works. */
START_TEST(test_not_grpc_refused)
{
    gc_client_t *c = connect_plain();
    uint8_t framed[8];
    size_t n = gc_frame((const uint8_t *)"abc", 3, framed);
    gc_set_method(c, "GET");
    gc_stream_t *get = gc_request(c, P_UNARY, "application/grpc", NULL, framed, n, 0);
    gc_set_method(c, NULL);
    gc_stream_t *rel = gc_request(c, P_UNARY + 1, "application/grpc", NULL, framed, n, 0);
    gc_stream_t *ok = gc_request(c, P_UNARY, "application/grpc", NULL, framed, n, 0);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(get->http_status, 405);
    ck_assert_int_eq(get->grpc_status, -1);
    ck_assert_int_eq(rel->http_status, 404);
    ck_assert_int_eq(rel->grpc_status, -1);
    assert_echo(ok, (const uint8_t *)"abc", 3);
    gc_close(c);
}
END_TEST

/* A 4 MiB message both ways: split over many DATA frames in and out, and
 * more output than the codec's high-water mark (resumed on drain). */
START_TEST(test_big_message)
{
    uint8_t *big = malloc(BIG);
    for (size_t i = 0; i < BIG; i++)
        big[i] = (uint8_t)(i * 7 + (i >> 12));
    gc_client_t *c = connect_plain();
    gc_stream_t *s = unary(c, P_UNARY, big, BIG);
    ck_assert_int_eq(gc_run(c, 20000), 0);
    assert_echo(s, big, BIG);
    gc_close(c);
    free(big);
}
END_TEST

/* Several messages in one DATA frame of a streaming request, each echoed
 * as it arrives. */
START_TEST(test_stream_several_in_one_frame)
{
    uint8_t body[64];
    size_t n = gc_frame((const uint8_t *)"one", 3, body);
    n += gc_frame((const uint8_t *)"two", 3, body + n);
    n += gc_frame((const uint8_t *)"three", 5, body + n);
    gc_client_t *c = connect_plain();
    gc_stream_t *s = gc_request(c, P_STREAM, "application/grpc", "10S", body, n, 0);
    ck_assert_ptr_nonnull(s);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(s->grpc_status, 0);
    const char *want[] = { "one", "two", "three" };
    for (int i = 0; i < 3; i++) {
        const uint8_t *m;
        size_t len;
        ck_assert_int_eq(gc_message(s, i, &m, &len), 0);
        ck_assert_uint_eq(len, strlen(want[i]));
        ck_assert(memcmp(m, want[i], len) == 0);
    }
    ck_assert_int_eq(atomic_load(&stream_messages), 3);
    gc_close(c);
}
END_TEST

START_TEST(test_split_message_across_frames)
{
    /* 40000 bytes: more than one 16 KiB DATA frame, reassembled */
    size_t len = 40000;
    uint8_t *msg = malloc(len);
    memset(msg, 'q', len);
    gc_client_t *c = connect_plain();
    gc_stream_t *s = unary(c, P_UNARY, msg, len);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    assert_echo(s, msg, len);
    gc_close(c);
    free(msg);
}
END_TEST

START_TEST(test_server_streaming_deferred)
{
    uint8_t count = 20;
    gc_client_t *c = connect_plain();
    gc_stream_t *s = unary(c, P_DEFERRED, &count, 1);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(s->grpc_status, 0);
    for (int i = 0; i < count; i++) {
        const uint8_t *m;
        size_t len;
        ck_assert_int_eq(gc_message(s, i, &m, &len), 0);
        ck_assert_uint_eq(len, 2);
        ck_assert_int_eq(m[1], i);
    }
    const uint8_t *m;
    size_t len;
    ck_assert_int_ne(gc_message(s, count, &m, &len), 0);
    gc_close(c);
}
END_TEST

START_TEST(test_200_concurrent_streams)
{
    gc_client_t *c = connect_plain();
    gc_stream_t *s[200];
    char msg[200][16];
    for (int i = 0; i < 200; i++) {
        snprintf(msg[i], sizeof(msg[i]), "call-%d", i);
        s[i] = unary(c, P_UNARY, (const uint8_t *)msg[i], strlen(msg[i]));
    }
    ck_assert_int_eq(gc_run(c, 10000), 0);
    for (int i = 0; i < 200; i++)
        assert_echo(s[i], (const uint8_t *)msg[i], strlen(msg[i]));
    ck_assert_uint_ge(gc_remote_max_streams(c), 1000);
    gc_close(c);
}
END_TEST

/* RST_STREAM of a held call and of a server-streaming call mid-stream both
 * reach the cancel callback; the connection goes on. */
START_TEST(test_rst_stream_cancels)
{
    uint8_t count = 250;
    gc_client_t *c = connect_plain();
    gc_stream_t *h = unary(c, P_HOLD, (const uint8_t *)"h", 1);
    gc_stream_t *d = unary(c, P_DEFERRED, &count, 1);
    gc_pump(c, 100);
    ck_assert(wait_for(&held_now, 1, 5000));
    ck_assert(!d->closed);
    gc_cancel(c, h);
    gc_cancel(c, d);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert(wait_for(&cancels, 2, 5000));
    ck_assert_int_eq(atomic_load(&held_now), 0);
    ck_assert_int_eq(h->rst_code, NGHTTP2_CANCEL);
    gc_stream_t *after = unary(c, P_UNARY, (const uint8_t *)"after", 5);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    assert_echo(after, (const uint8_t *)"after", 5);
    gc_close(c);
}
END_TEST

/* A connection that closes with held calls cancels every one of them. */
START_TEST(test_close_cancels_held_calls)
{
    gc_client_t *c = connect_plain();
    for (int i = 0; i < 3; i++)
        unary(c, P_HOLD, (const uint8_t *)"h", 1);
    gc_pump(c, 50);
    ck_assert(wait_for(&held_now, 3, 5000));
    gc_close(c);
    ck_assert(wait_for(&cancels, 3, 5000));
    ck_assert_int_eq(atomic_load(&held_now), 0);
}
END_TEST

START_TEST(test_unary_needs_one_message)
{
    uint8_t body[16];
    size_t n = gc_frame((const uint8_t *)"a", 1, body);
    n += gc_frame((const uint8_t *)"b", 1, body + n);
    gc_client_t *c = connect_plain();
    gc_stream_t *two = gc_request(c, P_UNARY, "application/grpc", NULL, body, n, 0);
    gc_stream_t *none = gc_request(c, P_UNARY, "application/grpc", NULL, body, 0, 0);
    gc_stream_t *cut = gc_request(c, P_UNARY, "application/grpc", NULL, body, 4, 0);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(two->grpc_status, RMQ_GRPC_INTERNAL);
    ck_assert_int_eq(none->grpc_status, RMQ_GRPC_INTERNAL);
    ck_assert_int_eq(cut->grpc_status, RMQ_GRPC_INTERNAL);
    gc_close(c);
}
END_TEST

/* Metadata and the deadline reach the handler. */
START_TEST(test_metadata_and_deadline)
{
    gc_client_t *c = connect_plain();
    gc_add_header(c, "x-mq-client-id", "client-7");
    gc_stream_t *s = request_2s(c, P_WHO);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    assert_echo(s, (const uint8_t *)"client-7/deadline", 17);
    gc_close(c);
}
END_TEST

/* A header the client sends on every call (indexed by HPACK after the
 * first) is not copied per call: two live calls read one buffer. */
START_TEST(test_repeated_header_not_copied)
{
    gc_client_t *c = connect_plain();
    gc_add_header(c, "x-mq-client-id", "client-7");
    gc_stream_t *first = request_2s(c, P_PAIR);
    gc_stream_t *second = request_2s(c, P_PAIR);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    assert_echo(first, (const uint8_t *)"shared", 6);
    assert_echo(second, (const uint8_t *)"shared", 6);
    gc_close(c);
}
END_TEST

/* Request headers over RMQ_GRPC_HEADERS_MAX reset the stream before any
 * handler runs; the connection goes on. */
START_TEST(test_headers_over_limit)
{
    static char big[RMQ_GRPC_HEADERS_MAX + 100];
    uint8_t body[8];
    size_t n = gc_frame((const uint8_t *)"?", 1, body);
    memset(big, 'b', sizeof(big) - 1);
    gc_client_t *c = connect_plain();
    gc_add_header(c, "x-big", big);
    gc_stream_t *s = gc_request(c, P_HOLD, "application/grpc", NULL, body, n, 0);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(s->http_status, 0);
    ck_assert_int_ne(s->rst_code, 0);
    ck_assert_int_eq(atomic_load(&held_now), 0);
    gc_clear_headers(c);
    s = unary(c, P_UNARY, (const uint8_t *)"fine", 4);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    assert_echo(s, (const uint8_t *)"fine", 4);
    gc_close(c);
}
END_TEST

/* Writes a gzip member of text into out; its length. */
static size_t gzip_text(const char *text, uint8_t *out, size_t cap)
{
    z_stream zs = { 0 };
    ck_assert_int_eq(deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                                  Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (uint8_t *)text;
    zs.avail_in = (uInt)strlen(text);
    zs.next_out = out;
    zs.avail_out = (uInt)cap;
    ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    size_t len = zs.total_out;
    deflateEnd(&zs);
    return len;
}

/* grpc-encoding gzip with the compressed flag is inflated; an encoding
 * we do not have is UNIMPLEMENTED. */
START_TEST(test_gzip_request)
{
    uint8_t gz[256], body[300];
    size_t gzlen = gzip_text("squeezed squeezed squeezed", gz, sizeof(gz));
    size_t n = gc_frame(gz, gzlen, body);
    body[0] = 1;
    gc_client_t *c = connect_plain();
    gc_add_header(c, "grpc-encoding", "gzip");
    gc_stream_t *s = gc_request(c, P_UNARY, "application/grpc", NULL, body, n, 0);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    assert_echo(s, (const uint8_t *)"squeezed squeezed squeezed", 26);
    gc_close(c);
    c = connect_plain();
    gc_add_header(c, "grpc-encoding", "snappy");
    s = gc_request(c, P_UNARY, "application/grpc", NULL, body, n, 0);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(s->grpc_status, RMQ_GRPC_UNIMPLEMENTED);
    ck_assert_str_eq(s->grpc_accept_encoding, "identity,gzip");
    gc_close(c);
}
END_TEST

/* A gzip message with bytes after its stream is refused, with the reason. */
START_TEST(test_gzip_trailing_bytes_refused)
{
    uint8_t gz[256], body[300];
    size_t gzlen = gzip_text("squeezed", gz, sizeof(gz));
    memcpy(gz + gzlen, "junk", 4);
    size_t n = gc_frame(gz, gzlen + 4, body);
    body[0] = 1;
    gc_client_t *c = connect_plain();
    gc_add_header(c, "grpc-encoding", "gzip");
    gc_stream_t *s = gc_request(c, P_UNARY, "application/grpc", NULL, body, n, 0);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(s->grpc_status, RMQ_GRPC_INTERNAL);
    ck_assert_ptr_nonnull(strstr(s->grpc_message, "cannot inflate a gzip request message"));
    gc_close(c);
}
END_TEST

START_TEST(test_bad_timeout_and_compressed_flag)
{
    uint8_t body[16];
    size_t n = gc_frame((const uint8_t *)"a", 1, body);
    gc_client_t *c = connect_plain();
    gc_stream_t *bad = gc_request(c, P_UNARY, "application/grpc", "12x", body, n, 0);
    body[0] = 1;   /* compressed, but no grpc-encoding */
    gc_stream_t *flag = gc_request(c, P_UNARY, "application/grpc", NULL, body, n, 0);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    ck_assert_int_eq(bad->grpc_status, RMQ_GRPC_INTERNAL);
    ck_assert_int_eq(flag->grpc_status, RMQ_GRPC_INTERNAL);
    ck_assert_str_eq(flag->grpc_message, "compressed request message without grpc-encoding");
    gc_close(c);
}
END_TEST

static void goaway_cb(evutil_socket_t fd, short what, void *arg)
{
    rmq_grpc_goaway(fx.srv);
}

/* rmq_grpc_goaway reaches a connected client as a GOAWAY frame. */
START_TEST(test_goaway)
{
    gc_client_t *c = connect_plain();
    gc_stream_t *s = unary(c, P_UNARY, (const uint8_t *)"before", 6);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    assert_echo(s, (const uint8_t *)"before", 6);
    ck_assert(!gc_goaway_received(c));
    event_base_once(fx.base, -1, EV_TIMEOUT, goaway_cb, NULL, NULL);
    for (int i = 0; i < 100 && !gc_goaway_received(c); i++)
        gc_pump(c, 20);
    ck_assert(gc_goaway_received(c));
    gc_close(c);
}
END_TEST

START_TEST(test_tls_alpn_h2)
{
    SSL_CTX *ctx = SSL_CTX_new(TLS_client_method());
    int alpn_ok = 0;
    gc_client_t *c = gc_connect(fx.port, ctx, &alpn_ok);
    ck_assert_ptr_nonnull(c);
    ck_assert(alpn_ok);
    gc_stream_t *s = unary(c, P_UNARY, (const uint8_t *)"secure", 6);
    gc_stream_t *u = unary(c, "/apache.rocketmq.v2.MessagingService/Nope",
                           (const uint8_t *)"x", 1);
    ck_assert_int_eq(gc_run(c, 5000), 0);
    assert_echo(s, (const uint8_t *)"secure", 6);
    ck_assert_int_eq(u->grpc_status, RMQ_GRPC_UNIMPLEMENTED);
    gc_close(c);
    SSL_CTX_free(ctx);
}
END_TEST

START_TEST(test_parse_timeout)
{
    int64_t d;

    ck_assert_int_eq(rmq_grpc_parse_timeout("525600H", 1000, &d), RMQ_OK);
    ck_assert_int_eq(d, 1000 + 525600LL * 3600 * 1000);
    ck_assert_int_eq(rmq_grpc_parse_timeout("99999999H", 1000, &d), RMQ_OK);
    ck_assert_int_eq(d, 1000 + 99999999LL * 3600 * 1000);
    ck_assert_int_eq(rmq_grpc_parse_timeout("99999999H", INT64_MAX - 5, &d), RMQ_OK);
    ck_assert_int_eq(d, RMQ_GRPC_NO_DEADLINE);
    ck_assert_int_eq(rmq_grpc_parse_timeout("3S", 0, &d), RMQ_OK);
    ck_assert_int_eq(d, 3000);
    ck_assert_int_eq(rmq_grpc_parse_timeout("2M", 0, &d), RMQ_OK);
    ck_assert_int_eq(d, 120000);
    ck_assert_int_eq(rmq_grpc_parse_timeout("1500m", 0, &d), RMQ_OK);
    ck_assert_int_eq(d, 1500);
    ck_assert_int_eq(rmq_grpc_parse_timeout("2500u", 0, &d), RMQ_OK);
    ck_assert_int_eq(d, 3);
    ck_assert_int_eq(rmq_grpc_parse_timeout("1n", 0, &d), RMQ_OK);
    ck_assert_int_eq(d, 1);
    ck_assert_int_eq(rmq_grpc_parse_timeout("0S", 0, &d), RMQ_OK);
    ck_assert_int_eq(d, 1);
    const char *bad[] = { "", "S", "123456789S", "12", "1s", "-1S", "1.5S", "1 S", NULL };
    for (int i = 0; bad[i] != NULL; i++)
        ck_assert_msg(rmq_grpc_parse_timeout(bad[i], 0, &d) == RMQ_EINVAL, "%s", bad[i]);
    ck_assert_int_eq(rmq_grpc_parse_timeout(NULL, 0, &d), RMQ_EINVAL);
}
END_TEST

START_TEST(test_percent_encode)
{
    char out[32];

    ck_assert_uint_eq(rmq_grpc_percent_encode("plain text", out, sizeof(out)), 10);
    ck_assert_str_eq(out, "plain text");
    rmq_grpc_percent_encode("100%\n\xc3\xa9", out, sizeof(out));
    ck_assert_str_eq(out, "100%25%0A%C3%A9");
    /* truncates at a whole escape */
    ck_assert_uint_eq(rmq_grpc_percent_encode("ab\n", out, 5), 2);
    ck_assert_str_eq(out, "ab");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("grpc");
    TCase *pure = tcase_create("pure");
    tcase_add_test(pure, test_parse_timeout);
    tcase_add_test(pure, test_percent_encode);
    suite_add_tcase(s, pure);
    TCase *tc = tcase_create("wire");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_unary_echo);
    tcase_add_test(tc, test_unknown_method_unimplemented);
    tcase_add_test(tc, test_bad_content_type_415);
    tcase_add_test(tc, test_not_grpc_refused);
    tcase_add_test(tc, test_big_message);
    tcase_add_test(tc, test_stream_several_in_one_frame);
    tcase_add_test(tc, test_split_message_across_frames);
    tcase_add_test(tc, test_server_streaming_deferred);
    tcase_add_test(tc, test_200_concurrent_streams);
    tcase_add_test(tc, test_rst_stream_cancels);
    tcase_add_test(tc, test_close_cancels_held_calls);
    tcase_add_test(tc, test_unary_needs_one_message);
    tcase_add_test(tc, test_bad_timeout_and_compressed_flag);
    tcase_add_test(tc, test_goaway);
    tcase_add_test(tc, test_metadata_and_deadline);
    tcase_add_test(tc, test_repeated_header_not_copied);
    tcase_add_test(tc, test_gzip_request);
    tcase_add_test(tc, test_gzip_trailing_bytes_refused);
    tcase_add_test(tc, test_headers_over_limit);
    tcase_add_test(tc, test_tls_alpn_h2);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? 0 : 1;
}
