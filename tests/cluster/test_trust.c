/* test_trust.c: what a client names is not trusted (issue 20 items 4 and
 * 6). A transactional send carrying its own REAL_TOPIC lands, once
 * committed, in the topic it was sent to; a send to SCHEDULE_TOPIC_XXXX is
 * refused NO_PERMISSION with a remark naming it; a delayed message whose
 * queue no longer exists when it is due (and a direct schedule entry naming
 * queue 77) creates no queue directory in the store. With ACL on: an
 * account with PUB on one topic cannot reach another through REAL_TOPIC nor
 * send to the broker's own topics; an account without PUB on a half
 * message's topic cannot commit or roll it back, and one without PUB on its
 * producer group cannot register as that group's producer, so it never
 * receives the group's check-backs (which carry the whole message). */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/event.h>

#include "harness.h"
#include "rmq_acl.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "rmq_time.h"
#include "wire.h"

#define TOPIC "TrustTopic"
#define SECRET "TrustSecret"
#define PRODUCER "trust_producer"
#define GROUP "trust_group"

static const char *case_dir;

static void setup(void)
{
    case_dir = hn_case_begin("trust");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

static int create_topic(const char *addr, const char *topic, int queues)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, topic, queues);
    return wire_call(addr, &req, NULL, 0, NULL);
}

/* Sends body to topic's queue q with props; returns the status, the
 * remark in remark and the commit-log offset in *phys (SUCCESS). */
static int send_one(const char *addr, const char *topic, int q, const char *body, char *props, long long *phys,
                    char *remark, size_t rlen)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    rmq_frame_t resp = { 0 };
    wire_send_hdr(&req, &h, PRODUCER, topic, q, props);
    int st = wire_call(addr, &req, body, strlen(body), &resp);
    if (resp.cmd) {
        snprintf(remark, rlen, "%s", resp.cmd->remark ? resp.cmd->remark : "");
        if (st == RMQ__STATUS__SUCCESS && phys)
            *phys = strtoll(resp.cmd->send_resp->msg_id + 16, NULL, 16);
    }
    rmq_frame_clear(&resp);
    return st;
}

/* 1 if the store holds a consume-queue directory for topic/q. */
static int queue_dir_exists(const char *topic, int q)
{
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/store/consumequeue/%s/%d", case_dir, topic, q);
    return stat(path, &st) == 0;
}

START_TEST(test_client_cannot_choose_destination)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], addr[64], props[2048], remark[512];
    char half[] = "TRAN_MSG\001true\002PGROUP\001" PRODUCER "\002REAL_TOPIC\001" SECRET "\002REAL_QID\0010\002";
    char sched[] = "REAL_TOPIC\001" TOPIC "\002REAL_QID\00177\002";
    char delayed[] = "DELAY\0011\002";
    long long phys = -1;

    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "namesrv",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store\n"
             "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\n"
             "messageDelayLevel=1s 2s\nautoCreateTopicEnable=false\n", case_dir, ns_addr);
    ck_assert_int_eq(hn_daemon_start_conf(&bk, case_dir, "broker/mqbroker", "broker", props, addr, sizeof addr), 0);
    ck_assert_int_eq(create_topic(addr, TOPIC, 4), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(create_topic(addr, SECRET, 1), RMQ__STATUS__SUCCESS);

    /* A half message naming its own REAL_TOPIC: committed into TOPIC. */
    ck_assert_int_eq(send_one(addr, TOPIC, 0, "H", half, &phys, remark, sizeof remark), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(wire_commit(addr, PRODUCER, phys), RMQ__STATUS__SUCCESS);
    wire_want_body_t w = { addr, GROUP, TOPIC, "H", 0 }, secret = { addr, GROUP, SECRET, "H", 0 };
    ck_assert_msg(hn_wait_until(wire_queue_has, &w, 5000), "the committed message is not in %s", TOPIC);
    ck_assert_msg(!wire_queue_has(&secret), "the committed message went to the topic it named");

    /* The broker's own topics take no client sends. */
    ck_assert_int_eq(send_one(addr, "SCHEDULE_TOPIC_XXXX", 0, "S", sched, NULL, remark, sizeof remark),
                     RMQ__STATUS__NO_PERMISSION);
    ck_assert_msg(strstr(remark, "SCHEDULE_TOPIC_XXXX") != NULL, "remark: %s", remark);
    ck_assert_int_eq(send_one(addr, "RMQ_SYS_TRANS_HALF_TOPIC", 0, "T", half, NULL, remark, sizeof remark),
                     RMQ__STATUS__NO_PERMISSION);
    ck_assert_msg(strstr(remark, "RMQ_SYS_TRANS_HALF_TOPIC") != NULL, "remark: %s", remark);
    char no_props[] = "";
    ck_assert_int_eq(send_one(addr, "OFFSET_MOVED_EVENT", 0, "O", no_props, NULL, remark, sizeof remark),
                     RMQ__STATUS__NO_PERMISSION);
    ck_assert_msg(strstr(remark, "OFFSET_MOVED_EVENT") != NULL, "remark: %s", remark);

    /* A delayed message for queue 3, due after TOPIC shrank to 2 queues:
     * dropped at delivery, no queue directory made. */
    ck_assert_int_eq(send_one(addr, TOPIC, 3, "D", delayed, NULL, remark, sizeof remark), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(create_topic(addr, TOPIC, 2), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(send_one(addr, TOPIC, 1, "L", delayed, NULL, remark, sizeof remark), RMQ__STATUS__SUCCESS);
    wire_want_body_t later = { addr, GROUP, TOPIC, "L", 1 };
    ck_assert_msg(hn_wait_until(wire_queue_has, &later, 10000), "the delayed message for queue 1 was not delivered");
    usleep(500 * 1000);
    ck_assert_msg(!queue_dir_exists(TOPIC, 3), "a due message made a queue directory past the topic's queues");
    ck_assert_msg(!queue_dir_exists(TOPIC, 77), "a schedule entry named by a client made queue directory 77");
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- with access control ----------------------------------------------------- */

static const char acl_text[] =
    "account.admin.secretKey=admin-secret-1\n"
    "account.admin.admin=true\n"
    "account.alice.secretKey=alice-secret-1\n"
    "account.alice.topicPerms=" TOPIC "=PUB\n"
    "account.alice.groupPerms=" PRODUCER "=PUB\n"
    "account.bob.secretKey=bob-secret-1\n"
    "account.bob.topicPerms=" SECRET "=PUB|SUB\n"
    "account.carol.secretKey=carol-secret-1\n"
    "account.carol.defaultTopicPerm=PUB\n";

/* A blocking call signed as ak/sk. */
static int signed_call(const char *addr, const char *ak, const char *sk, Rmq__Command *req, const void *body,
                       size_t len, rmq_frame_t *keep)
{
    rmq_acl_credentials_t cr;
    snprintf(cr.access_key, sizeof cr.access_key, "%s", ak);
    snprintf(cr.secret_key, sizeof cr.secret_key, "%s", sk);
    wire_link_t ln = {
        .opts = { .connect_timeout_ms = 3000, .name = "test", .sign = rmq_acl_signer, .sign_arg = &cr },
        .timeout_ms = WIRE_RPC_TIMEOUT_MS,
    };
    return wire_call_with(&ln, addr, req, body, len, keep);
}

/* A signed send of body to topic queue 0 with props; phys and remark as send_one. */
static int signed_send(const char *addr, const char *ak, const char *sk, const char *topic, const char *body,
                       char *props, long long *phys, char *remark, size_t rlen)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    rmq_frame_t resp = { 0 };
    wire_send_hdr(&req, &h, PRODUCER, topic, 0, props);
    int st = signed_call(addr, ak, sk, &req, body, strlen(body), &resp);
    remark[0] = '\0';
    if (resp.cmd) {
        snprintf(remark, rlen, "%s", resp.cmd->remark ? resp.cmd->remark : "");
        if (st == RMQ__STATUS__SUCCESS && phys)
            *phys = strtoll(resp.cmd->send_resp->msg_id + 16, NULL, 16);
    }
    rmq_frame_clear(&resp);
    return st;
}

/* END_TRANSACTION as PRODUCER, signed as ak/sk. */
static int signed_end(const char *addr, const char *ak, const char *sk, long long phys, Rmq__TransactionState state)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__EndTransactionRequest h = RMQ__END_TRANSACTION_REQUEST__INIT;
    h.producer_group = (char *)PRODUCER;
    h.commit_log_offset = phys;
    h.state = state;
    req.code = RMQ__REQUEST_CODE__END_TRANSACTION;
    req.header_case = RMQ__COMMAND__HEADER_END_TRANSACTION;
    req.end_transaction = &h;
    return signed_call(addr, ak, sk, &req, NULL, 0, NULL);
}

/* The max offset of topic's queue 0 (asked as admin), or -1. */
static long long max_offset(const char *addr, const char *topic)
{
    Rmq__Command req;
    Rmq__QueueRequest qr;
    rmq_frame_t resp = { 0 };
    long long off = -1;
    wire_max_offset_request(&req, &qr, topic, 0);
    if (signed_call(addr, "admin", "admin-secret-1", &req, NULL, 0, &resp) == RMQ__STATUS__SUCCESS)
        off = wire_resp_offset(&resp);
    rmq_frame_clear(&resp);
    return off;
}

typedef struct max_at_least {
    const char *addr, *topic;
    long long want;
} max_at_least_t;

static int has_max_offset(void *arg)
{
    max_at_least_t *m = arg;
    return max_offset(m->addr, m->topic) >= m->want;
}

/* A producer connection of PRODUCER signed as one account: its heartbeat's
 * status and the check-backs pushed to it. */
typedef struct pusher {
    struct event_base *base;
    rmq_client_t *cli;
    rmq_acl_credentials_t cr;
    int hb_status;
    int checks;
} pusher_t;

static void pusher_request(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    pusher_t *p = arg;
    if (req->cmd->code == RMQ__REQUEST_CODE__CHECK_TRANSACTION_STATE)
        p->checks++;
}

static void pusher_hb_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    pusher_t *p = arg;
    p->hb_status = err == RMQ_OK ? resp->cmd->status : -1;
}

/* Connects to addr as ak/sk and sends a heartbeat naming PRODUCER as its producer group. */
static void pusher_start(pusher_t *p, const char *addr, const char *ak, const char *sk)
{
    memset(p, 0, sizeof(*p));
    p->hb_status = -2;
    snprintf(p->cr.access_key, sizeof p->cr.access_key, "%s", ak);
    snprintf(p->cr.secret_key, sizeof p->cr.secret_key, "%s", sk);
    rmq_client_opts_t o = { .connect_timeout_ms = 3000, .name = ak, .sign = rmq_acl_signer, .sign_arg = &p->cr };
    ck_assert_ptr_nonnull(p->base = event_base_new());
    ck_assert_ptr_nonnull(p->cli = rmq_client_new(p->base, addr, &o));
    rmq_client_on_request(p->cli, pusher_request, p);
    char *groups[] = { (char *)PRODUCER };
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__HeartbeatData hb = RMQ__HEARTBEAT_DATA__INIT;
    hb.client_id = (char *)ak;
    hb.producer_groups = groups;
    hb.n_producer_groups = 1;
    req.code = RMQ__REQUEST_CODE__HEART_BEAT;
    req.header_case = RMQ__COMMAND__HEADER_HEARTBEAT;
    req.heartbeat = &hb;
    ck_assert_int_eq(rmq_client_call(p->cli, &req, NULL, 0, WIRE_RPC_TIMEOUT_MS, pusher_hb_done, p), RMQ_OK);
}

/* Runs p's loop for ms. */
static void pusher_run(pusher_t *p, int ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    event_base_loopexit(p->base, &tv);
    event_base_dispatch(p->base);
}

static void pusher_free(pusher_t *p)
{
    rmq_client_free(p->cli);
    event_base_loop(p->base, EVLOOP_NONBLOCK);
    event_base_free(p->base);
}

START_TEST(test_acl_accounts_cannot_hijack)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], addr[64], props[8192], acl_path[PATH_MAX], remark[512];
    char half[] = "TRAN_MSG\001true\002PGROUP\001" PRODUCER "\002REAL_TOPIC\001" SECRET "\002REAL_QID\0010\002";
    char half2[] = "TRAN_MSG\001true\002PGROUP\001" PRODUCER "\002";
    char sched[] = "REAL_TOPIC\001" TOPIC "\002REAL_QID\0010\002";
    long long phys = -1, phys2 = -1;
    Rmq__Command req;
    Rmq__TopicConfig tc;

    ck_assert_ptr_nonnull(hn_write_file(case_dir, "acl.properties", acl_text, acl_path, sizeof acl_path));
    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "namesrv",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/acl-store\n"
             "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\nautoCreateTopicEnable=false\n"
             "aclEnable=true\naclFile=%.1000s\ntransactionTimeOut=100\ntransactionCheckInterval=300\n",
             case_dir, ns_addr, acl_path);
    ck_assert_int_eq(hn_daemon_start_conf(&bk, case_dir, "broker/mqbroker", "acl-broker", props, addr, sizeof addr), 0);
    wire_topic_request(&req, &tc, TOPIC, 1);
    ck_assert_int_eq(signed_call(addr, "admin", "admin-secret-1", &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
    wire_topic_request(&req, &tc, SECRET, 1);
    ck_assert_int_eq(signed_call(addr, "admin", "admin-secret-1", &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);

    /* PUB on TOPIC only: REAL_TOPIC does not take a committed half to SECRET. */
    ck_assert_int_eq(signed_send(addr, "alice", "alice-secret-1", TOPIC, "H", half, &phys, remark, sizeof remark),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(signed_end(addr, "alice", "alice-secret-1", phys, RMQ__TRANSACTION_STATE__TX_COMMIT),
                     RMQ__STATUS__SUCCESS);
    max_at_least_t landed = { addr, TOPIC, 1 };
    ck_assert_msg(hn_wait_until(has_max_offset, &landed, 5000), "the committed message is not in %s", TOPIC);
    ck_assert_int_eq(max_offset(addr, SECRET), 0);

    /* The broker's own topics: refused by the ACL, and by the broker for an account the ACL lets through. */
    ck_assert_int_eq(signed_send(addr, "alice", "alice-secret-1", "SCHEDULE_TOPIC_XXXX", "S", sched, NULL, remark,
                                 sizeof remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_int_eq(signed_send(addr, "carol", "carol-secret-1", "SCHEDULE_TOPIC_XXXX", "S", sched, NULL, remark,
                                 sizeof remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_msg(strstr(remark, "SCHEDULE_TOPIC_XXXX") != NULL, "remark: %s", remark);
    ck_assert_int_eq(signed_send(addr, "carol", "carol-secret-1", "RMQ_SYS_TRANS_HALF_TOPIC", "T", half, NULL,
                                 remark, sizeof remark), RMQ__STATUS__NO_PERMISSION);

    /* bob (PUB elsewhere, nothing on TOPIC or PRODUCER) cannot end alice's half. */
    ck_assert_int_eq(signed_send(addr, "alice", "alice-secret-1", TOPIC, "H2", half2, &phys2, remark, sizeof remark),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(signed_end(addr, "bob", "bob-secret-1", phys2, RMQ__TRANSACTION_STATE__TX_COMMIT),
                     RMQ__STATUS__NO_PERMISSION);
    ck_assert_int_eq(signed_end(addr, "bob", "bob-secret-1", phys2, RMQ__TRANSACTION_STATE__TX_ROLLBACK),
                     RMQ__STATUS__NO_PERMISSION);
    usleep(300 * 1000);
    ck_assert_int_eq(max_offset(addr, TOPIC), 1);

    /* bob cannot register as PRODUCER's producer, so the check-backs of
     * alice's open half go to alice's connection only. */
    pusher_t bob, alice;
    pusher_start(&bob, addr, "bob", "bob-secret-1");
    pusher_run(&bob, 500);
    ck_assert_int_eq(bob.hb_status, RMQ__STATUS__NO_PERMISSION);
    pusher_run(&bob, 1500);          /* several check rounds */
    ck_assert_int_eq(bob.checks, 0);
    pusher_start(&alice, addr, "alice", "alice-secret-1");
    for (int i = 0; i < 10 && alice.checks == 0; i++)
        pusher_run(&alice, 300);
    ck_assert_int_eq(alice.hb_status, RMQ__STATUS__SUCCESS);
    ck_assert_msg(alice.checks > 0, "the producer group's own account got no check-back");
    pusher_run(&bob, 600);
    ck_assert_int_eq(bob.checks, 0);
    ck_assert_int_eq(signed_end(addr, "alice", "alice-secret-1", phys2, RMQ__TRANSACTION_STATE__TX_ROLLBACK),
                     RMQ__STATUS__SUCCESS);
    pusher_free(&bob);
    pusher_free(&alice);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *trust_suite(void)
{
    Suite *s = suite_create("trust");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_client_cannot_choose_destination);
    tcase_add_test(tc, test_acl_accounts_cannot_hijack);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return hn_run_suite(trust_suite());
}
