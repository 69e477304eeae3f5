/* test_grpc_transport.c: the gRPC transport on the real daemons' ports.
 * A name server and a broker run with tlsMode=permissive (a PKI from
 * scripts/gen-test-certs.sh); an nghttp2 client session (the unit test's
 * grpc_client.c) speaks HTTP/2 to each over plaintext with prior knowledge
 * and over TLS offering ALPN "h2": the server selects h2 and answers an
 * RPC it does not serve (QueryOffset, which no shipped client calls) with
 * grpc-status 12 UNIMPLEMENTED, trailers-only, many streams on one
 * connection. The native
 * protocol (plaintext and TLS without ALPN) and remoting keep working on
 * the same port. A clean stop of either daemon sends GOAWAY. gRPC core
 * itself (python3-grpcio, grpc_probe.py) sees UNIMPLEMENTED for a unary and
 * a server-streaming call, over h2c and TLS. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "grpc_client.h"
#include "harness.h"
#include "remwire.h"
#include "rmq_codec_grpc.h"
#include "rmq_rpc.h"
#include "wire.h"

#define UNSERVED "/apache.rocketmq.v2.MessagingService/QueryOffset"   /* an RPC no front serves */
#define REMOTING_GET_BROKER_CLUSTER_INFO 106

static const char *case_dir;

static void setup(void)
{
    case_dir = hn_case_begin("grpc_transport");
}

static void teardown(void)
{
    hn_case_end();
}

static void tls_props(char *buf, size_t len)
{
    char cert[PATH_MAX], key[PATH_MAX];
    snprintf(buf, len, "tlsMode=permissive\ntlsCertPath=%.300s\ntlsKeyPath=%.300s\n",
             hn_pki_path("server.pem", cert, sizeof cert), hn_pki_path("server.key", key, sizeof key));
}

static int port_of(const char *addr)
{
    const char *colon = strrchr(addr, ':');
    ck_assert_ptr_nonnull(colon);
    return atoi(colon + 1);
}

/* n QueryOffset calls on one HTTP/2 connection to addr (ctx NULL: h2c);
 * every one must come back UNIMPLEMENTED, trailers-only. */
static void expect_unimplemented(const char *addr, SSL_CTX *ctx, int n)
{
    int alpn_ok = 0;
    uint8_t framed[16];
    size_t len = gc_frame((const uint8_t *)"\x0a\x00", 2, framed);
    gc_client_t *c = gc_connect(port_of(addr), ctx, &alpn_ok);

    ck_assert_msg(c != NULL, "no HTTP/2 connection to %s", addr);
    if (ctx != NULL)
        ck_assert_msg(alpn_ok, "%s did not select ALPN h2", addr);
    gc_stream_t *s[64];
    for (int i = 0; i < n; i++) {
        s[i] = gc_request(c, UNSERVED, "application/grpc", "3S", framed, len, 0);
        ck_assert_ptr_nonnull(s[i]);
    }
    ck_assert_msg(gc_run(c, 10000) == 0, "streams to %s did not all close", addr);
    for (int i = 0; i < n; i++) {
        ck_assert_int_eq(s[i]->http_status, 200);
        ck_assert_msg(s[i]->grpc_status == RMQ_GRPC_UNIMPLEMENTED, "%s: grpc-status %d",
                      addr, s[i]->grpc_status);
        ck_assert_uint_eq(s[i]->body_len, 0);
    }
    ck_assert_uint_ge(gc_remote_max_streams(c), 1000);
    gc_close(c);
}

/* An h2c connection to addr that has finished one call. */
static gc_client_t *open_h2(const char *addr)
{
    uint8_t framed[16];
    size_t len = gc_frame((const uint8_t *)"\x0a\x00", 2, framed);
    gc_client_t *c = gc_connect(port_of(addr), NULL, NULL);

    ck_assert_ptr_nonnull(c);
    ck_assert_ptr_nonnull(gc_request(c, UNSERVED, "application/grpc", "3S", framed, len, 0));
    ck_assert_int_eq(gc_run(c, 5000), 0);
    return c;
}

/* GET_BROKER_CLUSTER_INFO over the native protocol (ctx NULL: plaintext):
 * the status, or -1 when no answer came (a broker answers with a status
 * of its own: the code is the name server's). */
static int native_cluster_info(const char *addr, SSL_CTX *ctx)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    wire_link_t ln = {
        .opts = { .connect_timeout_ms = 3000, .name = "test", .ssl_ctx = ctx },
        .timeout_ms = 5000,
    };
    req.code = RMQ__REQUEST_CODE__GET_BROKER_CLUSTER_INFO;
    return wire_call_with(&ln, addr, &req, NULL, 0, NULL);
}

/* GET_BROKER_CLUSTER_INFO over remoting (plaintext); the response code. */
static int remoting_cluster_info(const char *addr)
{
    rem_resp_t r = { 0 };
    int fd = rem_connect(addr);

    rem_send(fd, RMQ_REMOTING_JSON, REMOTING_GET_BROKER_CLUSTER_INFO, 7, 0, NULL, 0, NULL, 0);
    int rc = rem_recv(fd, &r, 5000);
    close(fd);
    ck_assert_int_eq(rc, 0);
    int code = r.msg.code;
    rem_resp_clear(&r);
    return code;
}

static const char *probe_script;   /* grpc_probe.py (argv[2]) */

/* Runs grpc_probe.py (python3-grpcio, gRPC core: an independent client)
 * against addr over h2c and TLS; it must see UNIMPLEMENTED everywhere. */
static void grpc_core_probe(const char *addr)
{
    char ca[PATH_MAX];
    const char *argv[] = { "/usr/bin/python3", probe_script, addr,
                           hn_pki_path("ca.pem", ca, sizeof ca), NULL };
    hn_result_t res;

    ck_assert_int_eq(hn_run(argv, 30000, &res), 0);
    ck_assert_msg(res.status == 0, "grpc_probe.py %s: exit %d\n%s%s", addr, res.status,
                  res.out ? res.out : "", res.err ? res.err : "");
    hn_result_free(&res);
}

START_TEST(test_grpc_on_daemon_ports)
{
    hn_daemon_t ns, broker;
    char tls[2048], props[8192], ns_addr[64], b_addr[64];

    tls_props(tls, sizeof tls);
    snprintf(props, sizeof props, "listenPort=0\nbindAddress=127.0.0.1\n%s", tls);
    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "ns", props,
                                          ns_addr, sizeof ns_addr), 0);
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/broker\n"
             "namesrvAddr=%s\nmapedFileSizeCommitLog=1048576\nmaxMessageSize=262144\nbrokerRole=ASYNC_MASTER\n%s",
             case_dir, ns_addr, tls);
    ck_assert_int_eq(hn_daemon_start_conf(&broker, case_dir, "broker/mqbroker", "broker", props,
                                          b_addr, sizeof b_addr), 0);
    SSL_CTX *h2_tls = SSL_CTX_new(TLS_client_method());   /* any certificate, as Java's */
    char ca[PATH_MAX], err[256];
    SSL_CTX *native_tls = rmq_tls_client_ctx_new(hn_pki_path("ca.pem", ca, sizeof ca), NULL, NULL,
                                                 err, sizeof err);
    ck_assert_msg(native_tls != NULL, "%s", err);

    const char *addrs[] = { ns_addr, b_addr };
    for (int i = 0; i < 2; i++) {
        expect_unimplemented(addrs[i], NULL, 50);
        expect_unimplemented(addrs[i], h2_tls, 50);
        ck_assert_int_ge(native_cluster_info(addrs[i], NULL), 0);
        ck_assert_int_ge(native_cluster_info(addrs[i], native_tls), 0);
        grpc_core_probe(addrs[i]);
    }
    ck_assert_int_eq(native_cluster_info(ns_addr, NULL), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(native_cluster_info(ns_addr, native_tls), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(remoting_cluster_info(ns_addr), RMQ_REMOTING_SUCCESS);

    SSL_CTX_free(h2_tls);
    SSL_CTX_free(native_tls);
    /* a clean stop says GOAWAY to the HTTP/2 connections it has */
    gc_client_t *to_broker = open_h2(b_addr), *to_ns = open_h2(ns_addr);
    ck_assert_int_eq(hn_daemon_stop(&broker, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    gc_pump(to_broker, 200);
    gc_pump(to_ns, 200);
    ck_assert_msg(gc_goaway_received(to_broker), "no GOAWAY from the stopping broker");
    ck_assert_msg(gc_goaway_received(to_ns), "no GOAWAY from the stopping name server");
    gc_close(to_broker);
    gc_close(to_ns);
    hn_case_passed();
}
END_TEST

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: test_grpc_transport PATH/gen-test-certs.sh PATH/grpc_probe.py\n");
        return 1;
    }
    probe_script = argv[2];
    if (hn_pki_make(argv[1], "grpc") != 0)
        return 1;
    Suite *s = suite_create("grpc_transport");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_grpc_on_daemon_ports);
    suite_add_tcase(s, tc);
    int status = hn_run_suite(s);
    hn_pki_remove();
    return status;
}
