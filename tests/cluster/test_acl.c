/* test_acl.c: access control with real processes on loopback. Name server,
 * SYNC_MASTER and slave run with aclEnable=true and one ACL file; the
 * brokers sign their registration, slave sync and HA handshake as the admin
 * account. Unsigned, wrongly signed, unknown-account, replayed (outside the
 * window, or byte for byte inside it), body-altered and out-of-place
 * requests get NO_PERMISSION with a remark naming
 * the account and the resource; a SUB-only account cannot send; a non-admin
 * cannot administer; SEND_OK from the SYNC_MASTER proves the slave
 * replicates with ACL on; the client library signs from RMQ_ACCESS_KEY /
 * RMQ_SECRET_KEY; an unsigned slave is refused on the HA port. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rmq/rmq.h>

#include "harness.h"
#include "rmq_acl.h"
#include "rmq_rpc.h"
#include "rmq_time.h"
#include "wire.h"

#define RPC_TIMEOUT_MS 5000
#define TOPIC "AclTopic"
#define GROUP "acl_group"

static const char *case_dir;

static const char acl_text[] =
    "# test accounts\n"
    "replayWindowMs=30000\n"
    "account.admin.secretKey=admin-secret-1\n"
    "account.admin.admin=true\n"
    "account.producer.secretKey=producer-secret-1\n"
    "account.producer.topicPerms=" TOPIC "=PUB\n"
    "account.consumer.secretKey=consumer-secret-1\n"
    "account.consumer.topicPerms=" TOPIC "=SUB\n"
    "account.consumer.groupPerms=" GROUP "=SUB\n"
    "account.remote.secretKey=remote-secret-1\n"
    "account.remote.admin=true\n"
    "account.remote.whiteRemoteAddress=10.1.2.*\n";

static void setup(void)
{
    case_dir = hn_case_begin("acl");
}

static void teardown(void)
{
    hn_case_end();
}

/* ---- daemons ------------------------------------------------------------------ */

static void acl_props(char *buf, size_t len, int signs)
{
    char path[PATH_MAX];
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "acl.properties", acl_text, path, sizeof path));
    snprintf(buf, len, "aclEnable=true\naclFile=%.300s\n%s", path,
             signs ? "aclAccessKey=admin\naclSecretKey=admin-secret-1\n" : "");
}

static void ns_start(hn_daemon_t *d, char *addr, size_t len)
{
    char props[4096], acl[1024];
    acl_props(acl, sizeof acl, 0);
    snprintf(props, sizeof props, "listenPort=0\nbindAddress=127.0.0.1\n%s", acl);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", "ns", props, addr, len), 0);
}

static void broker_start(hn_daemon_t *d, const char *name, const char *ns_addr, const char *extra,
                         char *addr, size_t len)
{
    char props[8192];
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/%s\n"
             "namesrvAddr=%s\nmapedFileSizeCommitLog=1048576\nmaxMessageSize=262144\n"
             "syncFlushTimeout=3000\nregisterNameServerPeriod=1000\nslaveSyncInterval=500\n%s",
             case_dir, name, ns_addr, extra);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", name, props, addr, len), 0);
}

/* ---- signed requests ---------------------------------------------------------------- */

enum { SIGN_NORMAL = 0, SIGN_REPLAY, SIGN_TAMPER };

typedef struct signer {
    const char *ak;
    const char *sk;
    int64_t skew_ms;              /* added to the wall clock: replay tests */
    int mode;                     /* SIGN_REPLAY: reuse the first signature;
                                   * SIGN_TAMPER: sign another body */
    int have;
    rmq_signature_t saved;
} signer_t;

static void test_sign(const Rmq__Command *cmd, const uint8_t body_sha256[32],
                      rmq_signature_t *sig, void *arg)
{
    signer_t *s = arg;
    uint8_t other[32];

    if (s->mode == SIGN_REPLAY && s->have) {
        *sig = s->saved;
        sig->auth.signature = sig->hex;
        return;
    }
    if (s->mode == SIGN_TAMPER) {
        rmq_acl_body_digest("not the body sent", 17, other);
        body_sha256 = other;
    }
    rmq_acl_sign(s->ak, s->sk, rmq_wall_ms() + s->skew_ms, cmd, body_sha256, sig);
    if (s->mode == SIGN_REPLAY) {
        s->saved = *sig;
        s->have = 1;
    }
}

/* Sends req (+ body) as signer (NULL: unsigned); returns the status (-1:
 * transport failure) and the remark in remark. */
static int call(const char *addr, signer_t *signer, Rmq__Command *req, const char *body,
                char *remark, size_t remarklen, rmq_frame_t *keep)
{
    wire_link_t ln = { .opts = { .connect_timeout_ms = 3000, .name = "test" }, .timeout_ms = RPC_TIMEOUT_MS };
    if (signer) {
        ln.opts.sign = test_sign;
        ln.opts.sign_arg = signer;
    }
    rmq_frame_t resp = { 0 };
    if (remark)
        remark[0] = '\0';
    int status = wire_call_with(&ln, addr, req, body, body ? strlen(body) : 0, &resp);
    if (status >= 0 && remark)
        snprintf(remark, remarklen, "%s", resp.cmd->remark ? resp.cmd->remark : "");
    if (keep && status == RMQ__STATUS__SUCCESS)   /* callers keep only successes */
        *keep = resp;
    else
        rmq_frame_clear(&resp);
    return status;
}

static int cluster_info(const char *addr, signer_t *sg, char *remark, size_t len)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__GET_BROKER_CLUSTER_INFO;
    return call(addr, sg, &req, NULL, remark, len, NULL);
}

static int create_topic(const char *addr, signer_t *sg, char *remark, size_t len)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, TOPIC, 1);
    return call(addr, sg, &req, NULL, remark, len, NULL);
}

static int send_msg(const char *addr, signer_t *sg, const char *body, char *remark, size_t len)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    wire_send_hdr(&req, &h, "acl_producer", TOPIC, 0, (char *)"");
    h.default_topic_queue_nums = 1;
    return call(addr, sg, &req, body, remark, len, NULL);
}

/* GET_MAX_OFFSET of queue 0: the status (remark set) and *off. */
static int max_offset_call(const char *addr, signer_t *sg, long long *off, char *remark, size_t len)
{
    Rmq__Command req;
    Rmq__QueueRequest qr;
    rmq_frame_t resp = { 0 };
    wire_max_offset_request(&req, &qr, TOPIC, 0);
    *off = -1;
    int status = call(addr, sg, &req, NULL, remark, len, &resp);
    if (status != RMQ__STATUS__SUCCESS)
        return status;
    *off = wire_resp_offset(&resp);
    rmq_frame_clear(&resp);
    return status;
}

static long long max_offset(const char *addr, signer_t *sg)
{
    long long off;
    return max_offset_call(addr, sg, &off, NULL, 0) == RMQ__STATUS__SUCCESS ? off : -1;
}

#define EXPECT_REFUSED(status, remark, want)                                                     \
    do {                                                                                          \
        ck_assert_int_eq((status), RMQ__STATUS__NO_PERMISSION);                                  \
        ck_assert_msg(strstr((remark), (want)) != NULL, "remark '%s' lacks '%s'", (remark), (want)); \
    } while (0)

typedef struct wait_arg {
    const char *addr;
    signer_t *sg;
    long long want;
} wait_arg_t;

static int routed(void *arg)
{
    wait_arg_t *w = arg;
    Rmq__Command req;
    Rmq__TopicRequest tr;
    wire_topic_query(&req, &tr, RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC, TOPIC);
    return call(w->addr, w->sg, &req, NULL, NULL, 0, NULL) == RMQ__STATUS__SUCCESS;
}

static int slave_at(void *arg)
{
    wait_arg_t *w = arg;
    return max_offset(w->addr, w->sg) == w->want;
}

static int log_has(const char *name, const char *text)
{
    char cmd[PATH_MAX + 256];
    snprintf(cmd, sizeof cmd, "grep -q -- '%s' %s/%s.log", text, case_dir, name);
    return system(cmd) == 0;
}

typedef struct log_wait {
    const char *name;
    const char *text;
} log_wait_t;

static int log_wait(void *arg)
{
    log_wait_t *w = arg;
    return log_has(w->name, w->text);
}

START_TEST(test_acl_cluster)
{
    hn_daemon_t ns, master, slave, rogue;
    char acl[1024], extra[4096], ns_addr[64], m_addr[64], s_addr[64], r_addr[64], remark[512];
    signer_t admin = { "admin", "admin-secret-1", 0 };
    signer_t producer = { "producer", "producer-secret-1", 0 };
    signer_t consumer = { "consumer", "consumer-secret-1", 0 };
    signer_t wrong = { "producer", "not-the-secret", 0 };
    signer_t nobody = { "nobody", "whatever-secret", 0 };
    signer_t remote = { "remote", "remote-secret-1", 0 };
    signer_t replayed = { "admin", "admin-secret-1", -120000 };

    ns_start(&ns, ns_addr, sizeof ns_addr);
    acl_props(acl, sizeof acl, 1);
    snprintf(extra, sizeof extra, "brokerRole=SYNC_MASTER\nflushDiskType=SYNC_FLUSH\n%s", acl);
    broker_start(&master, "master", ns_addr, extra, m_addr, sizeof m_addr);
    snprintf(extra, sizeof extra, "brokerRole=SLAVE\nbrokerId=1\n%s", acl);
    broker_start(&slave, "slave", ns_addr, extra, s_addr, sizeof s_addr);

    /* identity */
    EXPECT_REFUSED(cluster_info(ns_addr, NULL, remark, sizeof remark), remark, "is not signed");
    EXPECT_REFUSED(cluster_info(m_addr, NULL, remark, sizeof remark), remark, "is not signed");
    EXPECT_REFUSED(cluster_info(ns_addr, &wrong, remark, sizeof remark), remark,
                   "account producer: signature of GET_BROKER_CLUSTER_INFO does not match");
    EXPECT_REFUSED(cluster_info(ns_addr, &nobody, remark, sizeof remark), remark, "unknown accessKey nobody");
    EXPECT_REFUSED(cluster_info(ns_addr, &replayed, remark, sizeof remark), remark, "outside the replay window");
    EXPECT_REFUSED(cluster_info(ns_addr, &remote, remark, sizeof remark), remark,
                   "account remote may not connect from 127.0.0.1");
    ck_assert_int_eq(cluster_info(ns_addr, &admin, remark, sizeof remark), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(cluster_info(ns_addr, &producer, remark, sizeof remark), RMQ__STATUS__SUCCESS);

    /* administration */
    EXPECT_REFUSED(create_topic(m_addr, &producer, remark, sizeof remark), remark,
                   "UPDATE_AND_CREATE_TOPIC is an admin operation and account producer is not an admin");
    ck_assert_int_eq(create_topic(m_addr, &admin, remark, sizeof remark), RMQ__STATUS__SUCCESS);
    wait_arg_t rw = { ns_addr, &admin, 0 };
    ck_assert_msg(hn_wait_until(routed, &rw, 15000), "topic never routed: signed registration failed?");

    /* permissions */
    EXPECT_REFUSED(send_msg(m_addr, &consumer, "x", remark, sizeof remark), remark,
                   "account consumer has SUB on topic " TOPIC ", SEND_MESSAGE needs PUB");
    EXPECT_REFUSED(send_msg(m_addr, NULL, "x", remark, sizeof remark), remark, "is not signed");
    signer_t replay_send = { "producer", "producer-secret-1", 60000 };
    EXPECT_REFUSED(send_msg(m_addr, &replay_send, "x", remark, sizeof remark), remark, "replay window");
    for (int i = 0; i < 20; i++)
        ck_assert_msg(send_msg(m_addr, &producer, "acl-body", remark, sizeof remark) == RMQ__STATUS__SUCCESS,
                      "send %d: %s", i, remark);    /* SYNC_MASTER: the slave acked with ACL on */
    ck_assert_int_eq(max_offset(m_addr, &consumer), 20);
    long long off;
    EXPECT_REFUSED(max_offset_call(m_addr, &producer, &off, remark, sizeof remark), remark,
                   "account producer has PUB on topic " TOPIC ", GET_MAX_OFFSET needs SUB");

    /* the body is signed, and a request replayed byte for byte is refused */
    signer_t tamper = { "producer", "producer-secret-1", 0, SIGN_TAMPER };
    EXPECT_REFUSED(send_msg(m_addr, &tamper, "acl-body", remark, sizeof remark), remark,
                   "signature of SEND_MESSAGE does not match its header and body");
    signer_t again = { "consumer", "consumer-secret-1", 0, SIGN_REPLAY };
    ck_assert_int_eq(max_offset_call(m_addr, &again, &off, remark, sizeof remark), RMQ__STATUS__SUCCESS);
    EXPECT_REFUSED(max_offset_call(m_addr, &again, &off, remark, sizeof remark), remark,
                   "GET_MAX_OFFSET replayed");
    ck_assert_int_eq(max_offset(m_addr, &consumer), 20);

    /* the client library signs from the environment */
    rmq_error_t e = { 0 };
    rmq_producer_opts_t po = { .group = "acl_producer", .namesrv = ns_addr, .send_timeout_ms = 10000 };
    rmq_producer_t *p = rmq_producer_new(&po, &e);
    ck_assert_msg(p != NULL, "producer: %s", e.text);
    ck_assert_int_eq(rmq_producer_start(p), RMQ_OK);
    for (int i = 0; i < 10; i++) {
        rmq_message_t m = { .topic = TOPIC, .body = "lib-body", .body_len = 8 };
        rmq_send_result_t r;
        ck_assert_msg(rmq_producer_send(p, &m, 10000, &r) == RMQ_OK, "library send %d: %s", i, r.error.text);
        ck_assert_int_eq(r.status, RMQ_SEND_OK);
    }
    rmq_producer_free(p);

    /* replication with ACL on: the slave holds every message */
    wait_arg_t sw = { s_addr, &admin, 30 };
    ck_assert_msg(hn_wait_until(slave_at, &sw, 15000), "slave at %lld, want 30", max_offset(s_addr, &admin));

    /* a slave without credentials is refused on the HA port */
    snprintf(extra, sizeof extra, "brokerRole=SLAVE\nbrokerId=2\nhaMasterAddress=127.0.0.1:%d\n",
             hn_daemon_port(&master, "haListenPort"));
    broker_start(&rogue, "rogue", "", extra, r_addr, sizeof r_addr);
    log_wait_t lw = { "master", "HA handshake from 127.0.0.1 is not signed" };
    ck_assert_msg(hn_wait_until(log_wait, &lw, 10000), "master did not refuse the unsigned slave");

    ck_assert_int_eq(hn_daemon_stop(&rogue, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* The ACL file parser: rules, and the error line for a bad file. */
/* For hn_wait_until: GET_BROKER_CLUSTER_INFO signed by w->sg succeeds on w->addr. */
static int admitted(void *arg)
{
    wait_arg_t *w = arg;
    return cluster_info(w->addr, w->sg, NULL, 0) == RMQ__STATUS__SUCCESS;
}

/* Appends text to the case's ACL file (as an operator's editor would). */
static void acl_file_append(const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/acl.properties", case_dir);
    FILE *f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    ck_assert_int_eq(fclose(f), 0);
}

/* The name server's policy changes without a restart: SIGHUP reloads the
 * file, a bad file is refused with its line logged and the policy kept,
 * and an edit without a signal is picked up from the file's change. */
START_TEST(test_acl_ns_reload)
{
    hn_daemon_t ns;
    char ns_addr[64], remark[512];
    signer_t late = { "late", "late-secret-1", 0 };
    signer_t watched = { "watched", "watched-secret-1", 0 };
    ns_start(&ns, ns_addr, sizeof ns_addr);
    EXPECT_REFUSED(cluster_info(ns_addr, &late, remark, sizeof remark), remark, "unknown accessKey late");

    acl_file_append("account.late.secretKey=late-secret-1\n");
    ck_assert_int_eq(kill(ns.pid, SIGHUP), 0);
    wait_arg_t w = { ns_addr, &late, 0 };
    ck_assert_msg(hn_wait_until(admitted, &w, 10000), "late never admitted after SIGHUP");
    ck_assert(hn_daemon_log_has(&ns, "SIGHUP: reloading the ACL"));

    acl_file_append("account.late.topicPerms=A=WRITE\n");
    ck_assert_int_eq(kill(ns.pid, SIGHUP), 0);
    hn_log_wait_t refused = { &ns, "ACL reload refused, the policy in force is kept" };
    ck_assert_msg(hn_wait_until(hn_log_wait_cond, &refused, 10000), "the bad file's refusal is not logged");
    ck_assert(hn_daemon_log_has(&ns, "acl.properties:14: account.late.topicPerms=A=WRITE"));
    ck_assert_int_eq(cluster_info(ns_addr, &late, remark, sizeof remark), RMQ__STATUS__SUCCESS);

    hn_sleep_ms(1100);      /* a new modification time for the watch to see */
    char good[4096];
    snprintf(good, sizeof good, "%saccount.watched.secretKey=watched-secret-1\n", acl_text);
    char path[PATH_MAX];
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "acl.properties", good, path, sizeof path));
    w.sg = &watched;
    ck_assert_msg(hn_wait_until(admitted, &w, 10000), "an edited file is never picked up without a signal");
    EXPECT_REFUSED(cluster_info(ns_addr, &late, remark, sizeof remark), remark, "unknown accessKey late");
    ck_assert_int_eq(kill(ns.pid, 0), 0);
    hn_case_passed();
}
END_TEST

START_TEST(test_acl_file)
{
    char err[512];
    rmq_acl_t *acl = rmq_acl_parse(acl_text, strlen(acl_text), "acl", err, sizeof err);
    ck_assert_msg(acl != NULL, "%s", err);
    ck_assert_uint_eq(rmq_acl_account_count(acl), 4);
    rmq_acl_free(acl);
    static const char bad[] = "account.x.secretKey=long-enough\naccount.x.topicPerms=A=WRITE\n";
    ck_assert_ptr_null(rmq_acl_parse(bad, strlen(bad), "acl", err, sizeof err));
    ck_assert_msg(strstr(err, "acl:2: account.x.topicPerms=A=WRITE:") != NULL, "%s", err);
    static const char nosecret[] = "account.y.admin=true\n";
    ck_assert_ptr_null(rmq_acl_parse(nosecret, strlen(nosecret), "acl", err, sizeof err));
    ck_assert_msg(strstr(err, "account.y.secretKey: missing") != NULL, "%s", err);

    char path[PATH_MAX], bin[PATH_MAX], props[1024];
    snprintf(props, sizeof props, "listenPort=0\naclEnable=true\naclFile=%s/missing.acl\n", case_dir);
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "ns.properties", props, path, sizeof path));
    const char *argv[] = { hn_build_path("namesrv/mqnamesrv", bin, sizeof bin), "-c", path, NULL };
    hn_result_t res;
    ck_assert_int_eq(hn_run(argv, 10000, &res), 0);
    ck_assert_int_eq(res.status, 2);
    ck_assert_msg(strstr(res.err, "aclFile=") != NULL, "%s", res.err);
    hn_result_free(&res);
    hn_case_passed();
}
END_TEST

static Suite *acl_suite(void)
{
    Suite *s = suite_create("acl");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_acl_file);
    tcase_add_test(tc, test_acl_ns_reload);
    tcase_add_test(tc, test_acl_cluster);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    /* the client library reads these once, at its first instance */
    setenv("RMQ_ACCESS_KEY", "producer", 1);
    setenv("RMQ_SECRET_KEY", "producer-secret-1", 1);
    return hn_run_suite(acl_suite());
}
