/* test_client_security.c: TLS and request signing configured through the
 * client library's rmq_security_opts_t and the tools' --client-config, with
 * no RMQ_* environment variable set. A test PKI is generated at start
 * (scripts/gen-test-certs.sh). Against a name server and broker with
 * tlsMode=enforcing and tlsVerifyClient=true, a producer, a push consumer
 * and a pull consumer given only options send and consume over TLS, and
 * mqadmin / mqbench with --client-config work while mqadmin without it
 * fails cleanly. Bad settings (missing or invalid files, a key without its
 * certificate, an access key without its secret) are clear errors from the
 * constructors and the tools. Against an ACL-enabled name server and
 * broker, requests signed through the options go through, and a SUB-only
 * account gets NO_PERMISSION on send. */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <rmq/rmq.h>

#include "harness.h"

#define TOPIC "SecOptsTopic"
#define MSGS 50
#define CMD_TIMEOUT_MS 30000

static const char *case_dir;

static const char acl_text[] =
    "replayWindowMs=60000\n"
    "account.admin.secretKey=admin-secret-1\n"
    "account.admin.admin=true\n"
    "account.producer.secretKey=producer-secret-1\n"
    "account.producer.topicPerms=" TOPIC "=PUB\n"
    "account.consumer.secretKey=consumer-secret-1\n"
    "account.consumer.topicPerms=" TOPIC "=SUB\n";

static void setup(void)
{
    case_dir = hn_case_begin("clientsec");
}

static void teardown(void)
{
    hn_case_end();
}

/* ---- daemons ------------------------------------------------------------------ */

/* The servers' security keys: enforcing mutual TLS, or ACL (tls 0). */
static void server_props(char *buf, size_t len, int tls)
{
    char cert[PATH_MAX], key[PATH_MAX], ca[PATH_MAX], acl[PATH_MAX];
    if (tls) {
        snprintf(buf, len, "tlsMode=enforcing\ntlsCertPath=%.300s\ntlsKeyPath=%.300s\n"
                 "tlsCaPath=%.300s\ntlsVerifyClient=true\n", hn_pki_path("server.pem", cert, sizeof cert),
                 hn_pki_path("server.key", key, sizeof key), hn_pki_path("ca.pem", ca, sizeof ca));
        return;
    }
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "acl.properties", acl_text, acl, sizeof acl));
    snprintf(buf, len, "aclEnable=true\naclFile=%.300s\n", acl);
}

/* Starts a name server and a master broker with the security keys sec. */
static void cluster_start(hn_daemon_t *ns, hn_daemon_t *bk, const char *sec, char *ns_addr,
                          char *bk_addr, size_t len)
{
    char props[8192], path[PATH_MAX], bin[PATH_MAX];
    const char *args[] = { "-c", path, NULL };

    snprintf(props, sizeof props, "listenPort=0\nbindAddress=127.0.0.1\n%s", sec);
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "ns.properties", props, path, sizeof path));
    ck_assert_int_eq(hn_daemon_start(ns, hn_build_path("namesrv/mqnamesrv", bin, sizeof bin), "ns", args,
                                     HN_READY_TIMEOUT_MS), 0);
    snprintf(ns_addr, len, "127.0.0.1:%d", hn_daemon_port(ns, "listenPort"));
    const char *signs = strstr(sec, "aclEnable") ? "aclAccessKey=admin\naclSecretKey=admin-secret-1\n" : "";
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/broker\n"
             "namesrvAddr=%s\nmapedFileSizeCommitLog=1048576\nmaxMessageSize=262144\n"
             "registerNameServerPeriod=1000\n%s%s",
             case_dir, ns_addr, sec, signs);
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "broker.properties", props, path, sizeof path));
    ck_assert_int_eq(hn_daemon_start(bk, hn_build_path("broker/mqbroker", bin, sizeof bin), "broker", args,
                                     HN_READY_TIMEOUT_MS), 0);
    snprintf(bk_addr, len, "127.0.0.1:%d", hn_daemon_port(bk, "listenPort"));
}

static void cluster_stop(hn_daemon_t *ns, hn_daemon_t *bk)
{
    ck_assert_int_eq(hn_daemon_stop(bk, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(ns, HN_STOP_TIMEOUT_MS), 0);
}

/* ---- tools -------------------------------------------------------------------------- */

/* Writes a client properties file name with text; its path in buf. */
static const char *client_config(const char *name, const char *text, char *buf, size_t len)
{
    ck_assert_ptr_nonnull(hn_write_file(case_dir, name, text, buf, len));
    return buf;
}

/* The client properties of the test PKI's client identity. */
static const char *tls_client_config(char *buf, size_t len)
{
    char text[4096], ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
    snprintf(text, sizeof text,
             "# client side\ntlsMode=enforcing\ntlsCaPath=%.300s\ntlsCertPath=%.300s\ntlsKeyPath=%.300s\n",
             hn_pki_path("ca.pem", ca, sizeof ca), hn_pki_path("client.pem", cert, sizeof cert),
             hn_pki_path("client.key", key, sizeof key));
    return client_config("client-tls.properties", text, buf, len);
}

/* Runs tool (a build path) with the NULL-terminated argv tail. */
static void run_tool(hn_result_t *res, const char *tool, const char *const *tail)
{
    char bin[PATH_MAX];
    const char *argv[24] = { hn_build_path(tool, bin, sizeof bin) };
    size_t n = 1;
    for (; tail[n - 1]; n++) {
        ck_assert_uint_lt(n, sizeof argv / sizeof argv[0] - 1);
        argv[n] = tail[n - 1];
    }
    argv[n] = NULL;
    ck_assert_int_eq(hn_run(argv, CMD_TIMEOUT_MS, res), 0);
}

/* Runs mqadmin and requires exit status 0. */
static void admin_ok(const char *const *tail)
{
    hn_result_t res;
    run_tool(&res, "tools/mqadmin", tail);
    ck_assert_msg(res.status == 0, "mqadmin %s: exit %d: %s", tail[0], res.status, res.err);
    hn_result_free(&res);
}

/* Runs a tool and requires exit status want and want_err in its stderr. */
static void tool_fails(const char *tool, const char *const *tail, int want, const char *want_err)
{
    hn_result_t res;
    run_tool(&res, tool, tail);
    ck_assert_msg(res.status == want, "%s %s: exit %d, want %d: %s", tool, tail[0], res.status, want,
                  res.err);
    ck_assert_msg(strstr(res.err, want_err) != NULL, "%s %s: stderr lacks '%s': %s", tool, tail[0],
                  want_err, res.err);
    hn_result_free(&res);
}

typedef struct route_wait {
    const char *ns;
    const char *config;
} route_wait_t;

/* 1 once mqadmin topicRoute (with the client config) finds TOPIC. */
static int topic_routed(void *arg)
{
    route_wait_t *w = arg;
    hn_result_t res;
    const char *tail[] = { "topicRoute", "-n", w->ns, "-t", TOPIC, "--client-config", w->config, NULL };
    run_tool(&res, "tools/mqadmin", tail);
    int ok = res.status == 0 && strstr(res.out, "broker-a") != NULL;
    hn_result_free(&res);
    return ok;
}

/* Creates TOPIC on the broker and waits for its route, through mqadmin with config. */
static void create_topic(const char *ns_addr, const char *bk_addr, const char *config)
{
    const char *update[] = { "updateTopic", "-n", ns_addr, "-b", bk_addr, "-t", TOPIC, "-r", "2", "-w", "2",
                             "--client-config", config, NULL };
    admin_ok(update);
    route_wait_t rw = { ns_addr, config };
    ck_assert_msg(hn_wait_until(topic_routed, &rw, 20000), "topic never routed");
}

/* ---- library ---------------------------------------------------------------------- */

/* The test PKI's client identity as options. */
static rmq_security_opts_t tls_opts(char *ca, char *cert, char *key)
{
    return (rmq_security_opts_t){
        .tls_mode = RMQ_CLIENT_TLS_ENFORCING,
        .tls_ca_path = hn_pki_path("ca.pem", ca, PATH_MAX),
        .tls_cert_path = hn_pki_path("client.pem", cert, PATH_MAX),
        .tls_key_path = hn_pki_path("client.key", key, PATH_MAX),
    };
}

/* Sends n messages through a producer built with sec; the first error
 * (RMQ_OK if all were stored) with its rmq_error_t in e. */
static rmq_err_t send_n(const char *ns_addr, const rmq_security_opts_t *sec, int n, rmq_error_t *e)
{
    rmq_producer_opts_t po = { .group = "sec_producer", .namesrv = ns_addr, .send_timeout_ms = 10000,
                               .security = sec };
    rmq_producer_t *p = rmq_producer_new(&po, e);
    ck_assert_msg(p != NULL, "producer: %s", e->text);
    ck_assert_int_eq(rmq_producer_start(p), RMQ_OK);
    rmq_err_t err = RMQ_OK;
    for (int i = 0; i < n && err == RMQ_OK; i++) {
        char body[64];
        int len = snprintf(body, sizeof body, "sec-body-%d", i);
        rmq_message_t m = { .topic = TOPIC, .body = body, .body_len = (size_t)len };
        rmq_send_result_t r;
        err = rmq_producer_send(p, &m, 10000, &r);
        *e = r.error;
    }
    rmq_producer_free(p);
    return err;
}

static _Atomic int consumed;

static rmq_consume_result_t on_message(const rmq_message_ext_t *msg, void *arg)
{
    (void)arg;
    if (msg->body_len > 9 && memcmp(msg->body, "sec-body-", 9) == 0)
        atomic_fetch_add(&consumed, 1);
    return RMQ_CONSUME_SUCCESS;
}

static int all_consumed(void *arg)
{
    (void)arg;
    return atomic_load(&consumed) >= MSGS;
}

/* Consumes TOPIC from the first offset with a push consumer built with sec. */
static void push_consume(const char *ns_addr, const rmq_security_opts_t *sec)
{
    rmq_error_t e = { 0 };
    rmq_push_consumer_opts_t co = {
        .group = "sec_push", .namesrv = ns_addr, .on_message = on_message,
        .consume_from = RMQ_CONSUME_FROM_FIRST, .consume_threads = 2, .rebalance_interval_ms = 2000,
        .suspend_ms = 2000, .pull_timeout_ms = 5000, .security = sec,
    };
    atomic_store(&consumed, 0);
    rmq_push_consumer_t *c = rmq_push_consumer_new(&co, &e);
    ck_assert_msg(c != NULL, "push consumer: %s", e.text);
    ck_assert_int_eq(rmq_push_consumer_subscribe(c, TOPIC, "*"), RMQ_OK);
    ck_assert_int_eq(rmq_push_consumer_start(c), RMQ_OK);
    ck_assert_msg(hn_wait_until(all_consumed, NULL, 60000), "consumed %d of %d over TLS",
                  atomic_load(&consumed), MSGS);
    rmq_push_consumer_free(c);
}

/* Pulls every message of TOPIC with a pull consumer built with sec. */
static int pull_all(const char *ns_addr, const rmq_security_opts_t *sec)
{
    rmq_error_t e = { 0 };
    rmq_pull_consumer_opts_t o = { .group = "sec_pull", .namesrv = ns_addr, .security = sec };
    rmq_pull_consumer_t *pc = rmq_pull_consumer_new_opts(&o, &e);
    ck_assert_msg(pc != NULL, "pull consumer: %s", e.text);
    ck_assert_int_eq(rmq_pull_consumer_start(pc), RMQ_OK);
    rmq_queue_t *qs = NULL;
    size_t nq = 0;
    ck_assert_msg(rmq_pull_consumer_queues(pc, TOPIC, &qs, &nq, &e) == RMQ_OK, "queues: %s", e.text);
    int seen = 0;
    for (size_t qi = 0; qi < nq; qi++) {
        rmq_pull_result_t res = { .status = RMQ_PULL_FOUND };
        for (int64_t off = 0; res.status == RMQ_PULL_FOUND; off = res.next_offset) {
            rmq_err_t err = rmq_pull_consumer_pull(pc, &qs[qi], "*", off, 64, 0, &res, &e);
            ck_assert_msg(err == RMQ_OK, "pull: %s", e.text);
            seen += res.status == RMQ_PULL_FOUND ? (int)res.count : 0;
            rmq_pull_result_clear(&res);
        }
    }
    free(qs);
    rmq_pull_consumer_free(pc);
    return seen;
}

/* ---- cases ------------------------------------------------------------------------ */

START_TEST(test_tls_through_options)
{
    hn_daemon_t ns, bk;
    char sec[4096], ns_addr[64], bk_addr[64], cfg[PATH_MAX], ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX];
    server_props(sec, sizeof sec, 1);
    cluster_start(&ns, &bk, sec, ns_addr, bk_addr, sizeof ns_addr);
    tls_client_config(cfg, sizeof cfg);

    /* mqadmin: with --client-config it talks TLS; without it fails cleanly */
    create_topic(ns_addr, bk_addr, cfg);
    const char *list[] = { "clusterList", "-n", ns_addr, "--client-config", cfg, NULL };
    admin_ok(list);
    const char *plain[] = { "clusterList", "-n", ns_addr, NULL };
    tool_fails("tools/mqadmin", plain, 1, "mqadmin: no name server answered");
    const char *route[] = { "topicRoute", "-n", ns_addr, "-t", TOPIC, NULL };
    tool_fails("tools/mqadmin", route, 1, "mqadmin: no name server answered");
    /* ... and the error says TLS may be why; mqbench's too (it counts failures, exit 0) */
    tool_fails("tools/mqadmin", plain, 1, "closes plaintext connections");
    const char *bench_plain[] = { "producer", "-n", ns_addr, "-t", TOPIC, "-w", "1", "-q", "1", NULL };
    tool_fails("tools/mqbench", bench_plain, 0, "mqbench: send failed: ");
    tool_fails("tools/mqbench", bench_plain, 0, "closes plaintext connections");

    /* a server certificate the client cannot verify: the error names TLS and OpenSSL's reason */
    char untrusted[PATH_MAX], text[PATH_MAX + 64], leaf[PATH_MAX];
    snprintf(text, sizeof text, "tlsMode=enforcing\ntlsCaPath=%s\n", hn_pki_path("client.pem", leaf, sizeof leaf));
    client_config("client-untrusted.properties", text, untrusted, sizeof untrusted);
    const char *unverified[] = { "clusterList", "-n", ns_addr, "--client-config", untrusted, NULL };
    tool_fails("tools/mqadmin", unverified, 1, "TLS handshake failed: certificate verify failed: ");
    const char *bench_unverified[] = { "producer", "-n", ns_addr, "-t", TOPIC, "-w", "1", "-q", "1",
                                       "--client-config", untrusted, NULL };
    tool_fails("tools/mqbench", bench_unverified, 0, "TLS handshake failed: certificate verify failed: ");

    /* the library, configured only through options */
    rmq_security_opts_t so = tls_opts(ca, cert, key);
    rmq_error_t e = { 0 };
    ck_assert_msg(send_n(ns_addr, &so, MSGS, &e) == RMQ_OK, "send over TLS: %s", e.text);
    push_consume(ns_addr, &so);
    ck_assert_int_eq(pull_all(ns_addr, &so), MSGS);

    /* a client without a certificate is refused by tlsVerifyClient: the send fails, nothing aborts */
    rmq_security_opts_t nocert = { .tls_mode = RMQ_CLIENT_TLS_ENFORCING, .tls_ca_path = so.tls_ca_path };
    ck_assert_int_ne(send_n(ns_addr, &nocert, 1, &e), RMQ_OK);

    /* mqbench takes the same file */
    const char *bench[] = { "producer", "-n", ns_addr, "-t", TOPIC, "-w", "2", "-q", "20",
                            "--client-config", cfg, NULL };
    hn_result_t res;
    run_tool(&res, "tools/mqbench", bench);
    ck_assert_msg(res.status == 0, "mqbench exit %d: %s", res.status, res.err);
    hn_result_free(&res);
    ck_assert_int_eq(pull_all(ns_addr, &so), MSGS + 20);

    cluster_stop(&ns, &bk);
    hn_case_passed();
}
END_TEST

/* rmq_producer_new fails with err and a text holding want. */
static void producer_refused(const rmq_security_opts_t *so, rmq_err_t err, const char *want)
{
    rmq_error_t e = { 0 };
    rmq_producer_opts_t po = { .group = "bad", .namesrv = "127.0.0.1:1", .security = so };
    rmq_producer_t *p = rmq_producer_new(&po, &e);
    ck_assert_msg(p == NULL, "producer accepted a bad setting (%s)", want);
    ck_assert_msg(e.err == err, "error %d (%s), want %d", e.err, e.text, err);
    ck_assert_msg(strstr(e.text, want) != NULL, "error lacks '%s': %s", want, e.text);
}

START_TEST(test_bad_settings)
{
    char ca[PATH_MAX], cert[PATH_MAX], key[PATH_MAX], other[PATH_MAX], cfg[PATH_MAX], text[4096];
    rmq_security_opts_t good = tls_opts(ca, cert, key);

    /* the library: one clear error per mistake, from the constructors */
    rmq_security_opts_t so = good;
    so.tls_ca_path = "/nonexistent/ca.pem";
    producer_refused(&so, RMQ_ETLS, "security opts: tls_ca_path=/nonexistent/ca.pem: cannot load the CA bundle");
    so = good;
    so.tls_cert_path = NULL;
    producer_refused(&so, RMQ_EINVAL, "tls_cert_path=: required with tls_mode=enforcing when tls_key_path is set");
    so = good;
    so.tls_cert_path = good.tls_key_path;   /* a key is not a certificate */
    producer_refused(&so, RMQ_ETLS, "tls_cert_path=");
    so = good;
    so.tls_key_path = hn_pki_path("other-client.key", other, sizeof other);
    producer_refused(&so, RMQ_ETLS, "tls_key_path=");
    so = (rmq_security_opts_t){ .access_key = "producer" };
    producer_refused(&so, RMQ_EINVAL, "access_key is set but secret_key is not");
    so = (rmq_security_opts_t){ .secret_key = "producer-secret-1" };
    producer_refused(&so, RMQ_EINVAL, "secret_key is set but access_key is not");
    so = (rmq_security_opts_t){ .tls_mode = (rmq_client_tls_mode_t)1 };
    producer_refused(&so, RMQ_EINVAL, "tls_mode=1");

    so = good;
    so.tls_ca_path = "/nonexistent/ca.pem";
    rmq_error_t e = { 0 };
    rmq_push_consumer_opts_t co = { .group = "bad", .namesrv = "127.0.0.1:1", .on_message = on_message,
                                    .security = &so };
    ck_assert_ptr_null(rmq_push_consumer_new(&co, &e));
    ck_assert_msg(strstr(e.text, "tls_ca_path=/nonexistent/ca.pem") != NULL, "push consumer: %s", e.text);
    rmq_pull_consumer_opts_t po = { .group = "bad", .namesrv = "127.0.0.1:1", .security = &so };
    ck_assert_ptr_null(rmq_pull_consumer_new_opts(&po, &e));
    ck_assert_msg(strstr(e.text, "tls_ca_path=/nonexistent/ca.pem") != NULL, "pull consumer: %s", e.text);

    /* the tools: exit 2 with a line naming the file's key */
    const char *missing[] = { "clusterList", "-n", "127.0.0.1:1", "--client-config",
                              "/nonexistent/client.properties", NULL };
    tool_fails("tools/mqadmin", missing, 2, "/nonexistent/client.properties: cannot open");
    snprintf(text, sizeof text, "tlsMode=enforcing\ntlsCaPath=/nonexistent/ca.pem\n");
    client_config("bad-ca.properties", text, cfg, sizeof cfg);
    const char *bad_ca[] = { "clusterList", "-n", "127.0.0.1:1", "--client-config", cfg, NULL };
    tool_fails("tools/mqadmin", bad_ca, 2, "tlsCaPath=/nonexistent/ca.pem: cannot load the CA bundle");
    const char *bench_ca[] = { "producer", "-n", "127.0.0.1:1", "--client-config", cfg, NULL };
    tool_fails("tools/mqbench", bench_ca, 2, "tlsCaPath=/nonexistent/ca.pem: cannot load the CA bundle");
    client_config("no-secret.properties", "accessKey=producer\n", cfg, sizeof cfg);
    tool_fails("tools/mqadmin", bad_ca, 2, "accessKey is set but secretKey is not");
    client_config("bad-mode.properties", "tlsMode=sometimes\n", cfg, sizeof cfg);
    tool_fails("tools/mqadmin", bad_ca, 2, "tlsMode=sometimes");
    hn_case_passed();
}
END_TEST

START_TEST(test_signing_through_options)
{
    hn_daemon_t ns, bk;
    char sec[4096], ns_addr[64], bk_addr[64], cfg[PATH_MAX];
    server_props(sec, sizeof sec, 0);
    cluster_start(&ns, &bk, sec, ns_addr, bk_addr, sizeof ns_addr);

    /* mqadmin signs as the admin account from --client-config (the broker's key names work too) */
    client_config("admin.properties", "aclAccessKey=admin\naclSecretKey=admin-secret-1\n", cfg, sizeof cfg);
    create_topic(ns_addr, bk_addr, cfg);
    const char *plain[] = { "clusterList", "-n", ns_addr, NULL };
    tool_fails("tools/mqadmin", plain, 1, "NO_PERMISSION");

    /* the library signs through options: PUB goes through, SUB-only is refused */
    rmq_security_opts_t producer = { .access_key = "producer", .secret_key = "producer-secret-1" };
    rmq_error_t e = { 0 };
    ck_assert_msg(send_n(ns_addr, &producer, 10, &e) == RMQ_OK, "signed send: %s", e.text);
    rmq_security_opts_t consumer = { .access_key = "consumer", .secret_key = "consumer-secret-1" };
    ck_assert_int_eq(send_n(ns_addr, &consumer, 1, &e), RMQ_ESTATUS);
    ck_assert_str_eq(rmq_status_name(e.status), "NO_PERMISSION");
    ck_assert_msg(strstr(e.text, "account consumer has SUB on topic " TOPIC) != NULL, "remark: %s", e.text);
    rmq_security_opts_t unsigned_opts = { 0 };
    ck_assert_int_ne(send_n(ns_addr, &unsigned_opts, 1, &e), RMQ_OK);

    cluster_stop(&ns, &bk);
    hn_case_passed();
}
END_TEST

static Suite *client_security_suite(void)
{
    Suite *s = suite_create("client_security");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_tls_through_options);
    tcase_add_test(tc, test_bad_settings);
    tcase_add_test(tc, test_signing_through_options);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    static const char *const env[] = { "RMQ_TLS", "RMQ_TLS_CA", "RMQ_TLS_CERT", "RMQ_TLS_KEY",
                                       "RMQ_ACCESS_KEY", "RMQ_SECRET_KEY" };
    if (argc < 2) {
        fprintf(stderr, "usage: test_client_security PATH/gen-test-certs.sh\n");
        return 1;
    }
    for (size_t i = 0; i < sizeof env / sizeof env[0]; i++)
        unsetenv(env[i]);       /* options only, for the library and the tools */
    if (hn_pki_make(argv[1], "clientsec") != 0)
        return 1;

    SRunner *sr = srunner_create(client_security_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    hn_cleanup();
    hn_pki_remove();
    return failed ? 1 : 0;
}
