/* test_tls.c: TLS with real processes on loopback. A test PKI is generated
 * at start (scripts/gen-test-certs.sh: CA, server and client certificates,
 * plus a client certificate from an unrelated CA). Name server, SYNC_MASTER
 * and slave run with tlsMode=enforcing and tlsVerifyClient=true: the client
 * library (RMQ_TLS* environment) sends and pulls over TLS, sends come back
 * SEND_OK only once the slave acknowledged them over the TLS HA link, and
 * the slave holds the same log; plaintext clients, clients without a
 * certificate, with one from another CA, or trusting another CA are refused.
 * permissive takes TLS and plaintext on one port. A broker registering
 * over RocketMQ's remoting protocol (namesrvProtocol=remoting) does so
 * over TLS too, and a plaintext one is refused. A bad key path stops the
 * daemon with exit 2 and one line naming the key. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmq/rmq.h>

#include "harness.h"
#include "rmq_rpc.h"
#include "wire.h"

#define RPC_TIMEOUT_MS 5000
#define TOPIC "TlsTopic"
#define MSGS 200

static const char *case_dir;


static void setup(void)
{
    case_dir = hn_case_begin("tls");
}

static void teardown(void)
{
    hn_case_end();
}

/* ---- daemons ------------------------------------------------------------------ */

/* tls* keys for a daemon in mode (verify: tlsVerifyClient). */
static void tls_props(char *buf, size_t len, const char *mode, int verify)
{
    char cert[PATH_MAX], key[PATH_MAX], ca[PATH_MAX];
    snprintf(buf, len, "tlsMode=%s\ntlsCertPath=%.300s\ntlsKeyPath=%.300s\ntlsCaPath=%.300s\ntlsVerifyClient=%s\n",
             mode, hn_pki_path("server.pem", cert, sizeof cert), hn_pki_path("server.key", key, sizeof key),
             hn_pki_path("ca.pem", ca, sizeof ca), verify ? "true" : "false");
}

static void ns_start(hn_daemon_t *d, const char *tls, char *addr, size_t len)
{
    char props[4096];
    int n = snprintf(props, sizeof props, "listenPort=0\nbindAddress=127.0.0.1\n%s", tls);
    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "name server properties do not fit");
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", "ns", props, addr, len), 0);
}

static void broker_props(char *props, size_t len, const char *name, const char *ns_addr,
                         const char *extra)
{
    int n = snprintf(props, len,
                     "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/%s\n"
                     "namesrvAddr=%s\nmapedFileSizeCommitLog=1048576\nmaxMessageSize=262144\nsyncFlushTimeout=3000\n"
                     "registerNameServerPeriod=1000\n%s",
                     case_dir, name, ns_addr, extra);
    ck_assert_msg(n > 0 && (size_t)n < len, "properties of %s do not fit", name);
}

static void broker_start(hn_daemon_t *d, const char *name, const char *ns_addr, const char *extra,
                         char *addr, size_t len)
{
    char props[8192];
    broker_props(props, sizeof props, name, ns_addr, extra);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", name, props, addr, len), 0);
}

/* ---- raw requests ------------------------------------------------------------------ */

/* A client context: trust ca (NULL: none), present cert/key (NULL: none). */
static SSL_CTX *client_ctx(const char *ca, const char *cert, const char *key)
{
    char a[PATH_MAX], c[PATH_MAX], k[PATH_MAX], err[512];
    SSL_CTX *ctx = rmq_tls_client_ctx_new(ca ? hn_pki_path(ca, a, sizeof a) : NULL,
                                          cert ? hn_pki_path(cert, c, sizeof c) : NULL,
                                          key ? hn_pki_path(key, k, sizeof k) : NULL, err, sizeof err);
    ck_assert_msg(ctx != NULL, "client ctx: %s", err);
    return ctx;
}

/* Sends req to addr over ctx (NULL: plaintext); the status, or -1 on a
 * transport failure (refused handshake, closed connection). */
static int call(const char *addr, SSL_CTX *ctx, Rmq__Command *req, rmq_frame_t *keep)
{
    wire_link_t ln = {
        .opts = { .connect_timeout_ms = 3000, .name = "test", .ssl_ctx = ctx },
        .timeout_ms = RPC_TIMEOUT_MS,
        .keep_successes = 1,
    };
    return wire_call_with(&ln, addr, req, NULL, 0, keep);
}

static int cluster_info(const char *addr, SSL_CTX *ctx)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__GET_BROKER_CLUSTER_INFO;
    return call(addr, ctx, &req, NULL);
}

static int create_topic(const char *addr, SSL_CTX *ctx)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, TOPIC, 2);
    return call(addr, ctx, &req, NULL);
}

/* Max offset of queue q of TOPIC on addr, -1 on failure. */
static long long max_offset(const char *addr, SSL_CTX *ctx, int q)
{
    Rmq__Command req;
    Rmq__QueueRequest qr;
    rmq_frame_t resp = { 0 };
    wire_max_offset_request(&req, &qr, TOPIC, q);
    if (call(addr, ctx, &req, &resp) != RMQ__STATUS__SUCCESS)
        return -1;
    long long off = wire_resp_offset(&resp);
    rmq_frame_clear(&resp);
    return off;
}

/* ---- cases ------------------------------------------------------------------------ */

typedef struct route_wait {
    const char *ns;
    SSL_CTX *ctx;
} route_wait_t;

static int topic_routed(void *arg)
{
    route_wait_t *w = arg;
    Rmq__Command req;
    Rmq__TopicRequest tr;
    wire_topic_query(&req, &tr, RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC, TOPIC);
    return call(w->ns, w->ctx, &req, NULL) == RMQ__STATUS__SUCCESS;
}

typedef struct offsets_wait {
    const char *slave;
    SSL_CTX *ctx;
    long long want[2];
} offsets_wait_t;

static int slave_caught_up(void *arg)
{
    offsets_wait_t *w = arg;
    return max_offset(w->slave, w->ctx, 0) == w->want[0] && max_offset(w->slave, w->ctx, 1) == w->want[1];
}

START_TEST(test_enforcing_cluster)
{
    hn_daemon_t ns, master, slave;
    char tls[4096], ns_addr[64], m_addr[64], s_addr[64], extra[8192];
    tls_props(tls, sizeof tls, "enforcing", 1);
    ns_start(&ns, tls, ns_addr, sizeof ns_addr);
    snprintf(extra, sizeof extra, "brokerRole=SYNC_MASTER\nflushDiskType=SYNC_FLUSH\n%s", tls);
    broker_start(&master, "master", ns_addr, extra, m_addr, sizeof m_addr);
    snprintf(extra, sizeof extra, "brokerRole=SLAVE\nbrokerId=1\n%s", tls);
    broker_start(&slave, "slave", ns_addr, extra, s_addr, sizeof s_addr);

    SSL_CTX *good = client_ctx("ca.pem", "client.pem", "client.key");
    SSL_CTX *nocert = client_ctx("ca.pem", NULL, NULL);
    SSL_CTX *othercert = client_ctx("ca.pem", "other-client.pem", "other-client.key");
    SSL_CTX *othertrust = client_ctx("other-ca.pem", "client.pem", "client.key");

    /* who gets in */
    ck_assert_int_eq(cluster_info(ns_addr, good), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(cluster_info(ns_addr, NULL), -1);          /* plaintext refused */
    ck_assert_int_eq(cluster_info(m_addr, NULL), -1);
    ck_assert_int_eq(cluster_info(ns_addr, nocert), -1);        /* tlsVerifyClient */
    ck_assert_int_eq(cluster_info(m_addr, nocert), -1);
    ck_assert_int_eq(cluster_info(ns_addr, othercert), -1);     /* certificate from another CA */
    ck_assert_int_eq(cluster_info(ns_addr, othertrust), -1);    /* server not trusted by us */

    /* registration over TLS, then the client library over TLS (environment) */
    ck_assert_int_eq(create_topic(m_addr, good), RMQ__STATUS__SUCCESS);
    route_wait_t rw = { ns_addr, good };
    ck_assert_msg(hn_wait_until(topic_routed, &rw, 15000), "topic never routed over TLS");

    rmq_error_t e = { 0 };
    rmq_producer_opts_t po = { .group = "tls_producer", .namesrv = ns_addr, .send_timeout_ms = 10000 };
    rmq_producer_t *p = rmq_producer_new(&po, &e);
    ck_assert_msg(p != NULL, "producer: %s", e.text);
    ck_assert_int_eq(rmq_producer_start(p), RMQ_OK);
    long long want[2] = { 0, 0 };
    for (int i = 0; i < MSGS; i++) {
        char body[64];
        int n = snprintf(body, sizeof body, "tls-body-%d", i);
        rmq_message_t m = { .topic = TOPIC, .body = body, .body_len = (size_t)n };
        rmq_send_result_t r;
        ck_assert_msg(rmq_producer_send(p, &m, 10000, &r) == RMQ_OK, "send %d: %s", i, r.error.text);
        ck_assert_int_eq(r.status, RMQ_SEND_OK);      /* SYNC_MASTER: the slave acked over TLS */
        ck_assert(r.queue_id >= 0 && r.queue_id < 2);
        if (r.queue_offset + 1 > want[r.queue_id])
            want[r.queue_id] = r.queue_offset + 1;
    }
    rmq_producer_free(p);

    rmq_pull_consumer_t *pc = rmq_pull_consumer_new("tls_pull", ns_addr, &e);
    ck_assert_msg(pc != NULL, "pull consumer: %s", e.text);
    ck_assert_int_eq(rmq_pull_consumer_start(pc), RMQ_OK);
    rmq_queue_t *qs = NULL;
    size_t nq = 0;
    ck_assert_msg(rmq_pull_consumer_queues(pc, TOPIC, &qs, &nq, &e) == RMQ_OK, "queues: %s", e.text);
    int seen = 0;
    for (size_t qi = 0; qi < nq; qi++) {
        int64_t off = 0;
        for (;;) {
            rmq_pull_result_t res;
            ck_assert_msg(rmq_pull_consumer_pull(pc, &qs[qi], "*", off, 64, 0, &res, &e) == RMQ_OK, "pull: %s",
                          e.text);
            if (res.status != RMQ_PULL_FOUND) {
                rmq_pull_result_clear(&res);
                break;
            }
            for (size_t k = 0; k < res.count; k++) {
                ck_assert(res.msgs[k]->body_len > 9 && !memcmp(res.msgs[k]->body, "tls-body-", 9));
                seen++;
            }
            off = res.next_offset;
            rmq_pull_result_clear(&res);
        }
    }
    free(qs);
    rmq_pull_consumer_free(pc);
    ck_assert_int_eq(seen, MSGS);

    /* the slave's log is the master's (replicated over TLS) */
    offsets_wait_t ow = { s_addr, good, { want[0], want[1] } };
    ck_assert_msg(hn_wait_until(slave_caught_up, &ow, 15000), "slave offsets %lld/%lld, want %lld/%lld",
                  max_offset(s_addr, good, 0), max_offset(s_addr, good, 1), want[0], want[1]);

    SSL_CTX_free(good);
    SSL_CTX_free(nocert);
    SSL_CTX_free(othercert);
    SSL_CTX_free(othertrust);
    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* A plaintext slave cannot replicate from an enforcing master's HA port. */
START_TEST(test_plaintext_slave_refused)
{
    hn_daemon_t master, slave;
    char tls[4096], m_addr[64], s_addr[64], extra[8192], cmd[PATH_MAX + 64];
    tls_props(tls, sizeof tls, "enforcing", 0);
    snprintf(extra, sizeof extra, "brokerRole=ASYNC_MASTER\n%s", tls);
    broker_start(&master, "master", "", extra, m_addr, sizeof m_addr);
    snprintf(extra, sizeof extra, "brokerRole=SLAVE\nbrokerId=1\nhaMasterAddress=127.0.0.1:%d\n",
             hn_daemon_port(&master, "haListenPort"));
    broker_start(&slave, "slave", "", extra, s_addr, sizeof s_addr);
    snprintf(cmd, sizeof cmd, "grep -q 'HA: refusing plaintext connection' %s/master.log", case_dir);
    long long deadline = hn_now_ms() + 10000;
    while (system(cmd) != 0 && hn_now_ms() < deadline)
        usleep(200 * 1000);
    ck_assert_msg(system(cmd) == 0, "master did not log the refused plaintext HA link");
    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

START_TEST(test_permissive_accepts_both)
{
    hn_daemon_t ns;
    char tls[4096], ns_addr[64];
    tls_props(tls, sizeof tls, "permissive", 0);
    ns_start(&ns, tls, ns_addr, sizeof ns_addr);
    SSL_CTX *ca_only = client_ctx("ca.pem", NULL, NULL);
    ck_assert_int_eq(cluster_info(ns_addr, NULL), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(cluster_info(ns_addr, ca_only), RMQ__STATUS__SUCCESS);
    SSL_CTX_free(ca_only);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* mqbroker with namesrvProtocol=remoting registers with an enforcing name
 * server (tlsVerifyClient=true) over TLS, presenting its certificate, as
 * every connection a daemon makes follows its tlsMode; the same broker with
 * tlsMode=disabled is refused, the name server logging the plaintext
 * connection and the broker the failed registration. */
START_TEST(test_remoting_register_enforcing)
{
    hn_daemon_t ns, master, plain;
    char tls[4096], ns_addr[64], m_addr[64], p_addr[64], extra[8192];
    tls_props(tls, sizeof tls, "enforcing", 1);
    ns_start(&ns, tls, ns_addr, sizeof ns_addr);
    snprintf(extra, sizeof extra, "brokerRole=ASYNC_MASTER\nnamesrvProtocol=remoting\n%s", tls);
    broker_start(&master, "master", ns_addr, extra, m_addr, sizeof m_addr);

    SSL_CTX *good = client_ctx("ca.pem", "client.pem", "client.key");
    ck_assert_int_eq(create_topic(m_addr, good), RMQ__STATUS__SUCCESS);
    route_wait_t rw = { ns_addr, good };
    ck_assert_msg(hn_wait_until(topic_routed, &rw, 15000), "topic never routed: no registration over TLS");
    ck_assert_msg(hn_daemon_log_has(&master, "registered with RocketMQ name server"),
                  "the broker did not log its remoting registration");

    broker_start(&plain, "plain", ns_addr, "brokerName=broker-plain\nbrokerRole=ASYNC_MASTER\nnamesrvProtocol=remoting\n",
                 p_addr, sizeof p_addr);
    hn_log_wait_t refused = { &ns, "refusing plaintext connection from 127.0.0.1:" };
    ck_assert_msg(hn_wait_until(hn_log_wait_cond, &refused, 15000),
                  "the name server did not log a refused plaintext broker");
    hn_log_wait_t failed = { &plain, "register with RocketMQ name server" };
    ck_assert_msg(hn_wait_until(hn_log_wait_cond, &failed, 15000) && !hn_daemon_log_has(&plain, "registered with"),
                  "the plaintext broker did not log its failed registration");

    SSL_CTX_free(good);
    ck_assert_int_eq(hn_daemon_stop(&plain, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* Runs mqbroker -c with props; expects exit 2 and a stderr line with want. */
static void expect_startup_error(const char *binary, const char *props, const char *want)
{
    char path[PATH_MAX], bin[PATH_MAX];
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "bad.properties", props, path, sizeof path));
    const char *argv[] = { hn_build_path(binary, bin, sizeof bin), "-c", path, NULL };
    hn_result_t res;
    ck_assert_int_eq(hn_run(argv, 10000, &res), 0);
    ck_assert_msg(res.status == 2, "%s exit %d, stderr: %s", binary, res.status, res.err);
    ck_assert_msg(strstr(res.err, want) != NULL, "stderr lacks '%s': %s", want, res.err);
    hn_result_free(&res);
}

START_TEST(test_bad_paths_exit_2)
{
    char props[8192], cert[PATH_MAX], key[PATH_MAX];
    hn_pki_path("server.pem", cert, sizeof cert);
    hn_pki_path("client.key", key, sizeof key);
    snprintf(props, sizeof props, "storePathRootDir=%s/bad\nlistenPort=0\ntlsMode=enforcing\n"
             "tlsCertPath=%.300s\ntlsKeyPath=/nonexistent/key.pem\n", case_dir, cert);
    expect_startup_error("broker/mqbroker", props, "tlsKeyPath=/nonexistent/key.pem: cannot load the private key: error:");
    snprintf(props, sizeof props, "listenPort=0\ntlsMode=enforcing\ntlsCertPath=%.300s\ntlsKeyPath=%.300s\n", cert, key);
    expect_startup_error("namesrv/mqnamesrv", props, "tlsKeyPath=");
    snprintf(props, sizeof props, "listenPort=0\ntlsMode=permissive\ntlsCertPath=/nope.pem\ntlsKeyPath=%.300s\n", key);
    expect_startup_error("namesrv/mqnamesrv", props, "tlsCertPath=/nope.pem: cannot load the certificate");
    snprintf(props, sizeof props, "listenPort=0\ntlsMode=enforcing\ntlsCertPath=%.300s\ntlsKeyPath=%.300s\n"
             "tlsVerifyClient=true\n", cert, key);
    expect_startup_error("namesrv/mqnamesrv", props, "tlsCaPath=: required with tlsVerifyClient=true");
    hn_case_passed();
}
END_TEST

static Suite *tls_suite(void)
{
    Suite *s = suite_create("tls");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_enforcing_cluster);
    tcase_add_test(tc, test_plaintext_slave_refused);
    tcase_add_test(tc, test_permissive_accepts_both);
    tcase_add_test(tc, test_remoting_register_enforcing);
    tcase_add_test(tc, test_bad_paths_exit_2);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    char a[PATH_MAX], c[PATH_MAX], k[PATH_MAX];
    if (argc < 2) {
        fprintf(stderr, "usage: test_tls PATH/gen-test-certs.sh\n");
        return 1;
    }
    if (hn_pki_make(argv[1], "tls") != 0)
        return 1;
    /* the client library reads these once, at its first instance */
    setenv("RMQ_TLS", "1", 1);
    setenv("RMQ_TLS_CA", hn_pki_path("ca.pem", a, sizeof a), 1);
    setenv("RMQ_TLS_CERT", hn_pki_path("client.pem", c, sizeof c), 1);
    setenv("RMQ_TLS_KEY", hn_pki_path("client.key", k, sizeof k), 1);

    int status = hn_run_suite(tls_suite());
    hn_pki_remove();
    return status;
}
