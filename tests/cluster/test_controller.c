/* test_controller.c: the controller in the name server
 * (enableControllerInNamesrv, controllerType=etcd) against a private etcd,
 * with fake brokers speaking the native protocol: the first replica to
 * register becomes master; a master's sync state set grows only through
 * AlterSyncStateSet with the right epochs; when the master's heartbeats
 * stop, the live in-sync slave is elected with a higher epoch and the
 * name server's route shows it as brokerId 0 at once; an out-of-sync
 * replica is never elected; a standby controller takes over when the
 * leader is killed, and a leader frozen past its lease stops acting; a new
 * leader deposes no master before the lease its predecessor renewed
 * lapsed; configuration errors are clear. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcdproc.h"
#include "harness.h"
#include "rmq_frame.h"
#include "rmq_rpc.h"

#define CLUSTER "DefaultCluster"
#define GROUP "broker-a"
#define TOPIC "CtlTopic"
#define RPC_TIMEOUT_MS 5000
#define HB_TIMEOUT_MS 1000
#define LEASE_S 2
#define WAIT_MS 20000

static const char *case_dir;
static hn_etcd_t etcd;

/* A replica that only speaks to name servers: registration and heartbeats. */
typedef struct fake {
    int64_t id;                   /* controller id, >= 1 */
    char addr[64];
    int64_t epoch, max_offset;
    rmq_sync_t *sync;             /* one connection: the route entry lives as long */
} fake_t;

static void fake_init(fake_t *f, int64_t id, int port)
{
    rmq_client_opts_t opts = { 0 };

    memset(f, 0, sizeof *f);
    f->id = id;
    snprintf(f->addr, sizeof f->addr, "127.0.0.1:%d", port);
    f->sync = rmq_sync_new(&opts);
    ck_assert_ptr_nonnull(f->sync);
}

/* What a controller answered. */
typedef struct ctl_answer {
    int status;
    int64_t master_id, master_epoch, sse_epoch;
    size_t n_sync;
    char master_addr[64];
} ctl_answer_t;

static int call(fake_t *f, const char *ns, Rmq__Command *req, ctl_answer_t *a)
{
    rmq_frame_t resp = { 0 };

    memset(a, 0, sizeof *a);
    a->status = -1;
    if (rmq_sync_call(f->sync, ns, req, NULL, 0, RPC_TIMEOUT_MS, &resp) != RMQ_OK)
        return -1;
    a->status = resp.cmd->status;
    if (resp.cmd->header_case == RMQ__COMMAND__HEADER_REPLICA_INFO) {
        const Rmq__ReplicaInfo *ri = resp.cmd->replica_info;
        a->master_id = ri->master_broker_id;
        a->master_epoch = ri->master_epoch;
        a->sse_epoch = ri->sync_state_set_epoch;
        a->n_sync = ri->n_sync_state_set;
        snprintf(a->master_addr, sizeof a->master_addr, "%s", ri->master_addr);
    }
    rmq_frame_clear(&resp);
    return a->status;
}

static int heartbeat(fake_t *f, const char *ns, ctl_answer_t *a)
{
    Rmq__ControllerBrokerRequest cb = RMQ__CONTROLLER_BROKER_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;

    cb.cluster_name = (char *)CLUSTER;
    cb.broker_name = (char *)GROUP;
    cb.broker_addr = f->addr;
    cb.broker_id = f->id;
    cb.epoch = f->epoch;
    cb.max_offset = f->max_offset;
    cb.heartbeat_timeout_ms = HB_TIMEOUT_MS;
    req.code = RMQ__REQUEST_CODE__BROKER_HEARTBEAT;
    req.header_case = RMQ__COMMAND__HEADER_CONTROLLER_BROKER;
    req.controller_broker = &cb;
    return call(f, ns, &req, a);
}

static int alter(fake_t *f, const char *ns, int64_t master_epoch, int64_t sse_epoch, const int64_t *ids,
                 size_t n, ctl_answer_t *a)
{
    Rmq__AlterSyncStateSetRequest as = RMQ__ALTER_SYNC_STATE_SET_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;

    as.cluster_name = (char *)CLUSTER;
    as.broker_name = (char *)GROUP;
    as.master_broker_id = f->id;
    as.master_epoch = master_epoch;
    as.sync_state_set_epoch = sse_epoch;
    as.sync_state_set = (int64_t *)ids;
    as.n_sync_state_set = n;
    req.code = RMQ__REQUEST_CODE__CONTROLLER_ALTER_SYNC_STATE_SET;
    req.header_case = RMQ__COMMAND__HEADER_ALTER_SYNC_STATE_SET;
    req.alter_sync_state_set = &as;
    return call(f, ns, &req, a);
}

/* REGISTER_BROKER of f to ns as broker id route_id, with TOPIC. */
static void ns_register(fake_t *f, const char *ns, int64_t route_id)
{
    Rmq__RegisterBrokerRequest rb = RMQ__REGISTER_BROKER_REQUEST__INIT;
    Rmq__DataVersion dv = RMQ__DATA_VERSION__INIT;
    Rmq__TopicConfig tc = RMQ__TOPIC_CONFIG__INIT, *tcp = &tc;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    rb.cluster_name = (char *)CLUSTER;
    rb.broker_name = (char *)GROUP;
    rb.broker_addr = f->addr;
    rb.broker_id = route_id;
    rb.ha_server_addr = (char *)"";
    rb.epoch = 1;
    dv.timestamp = 1;
    dv.counter = 1;
    rb.data_version = &dv;
    tc.topic_name = (char *)TOPIC;
    tc.read_queue_nums = tc.write_queue_nums = 4;
    tc.perm = RMQ__PERM__PERM_READ | RMQ__PERM__PERM_WRITE;
    rb.topics = &tcp;
    rb.n_topics = 1;
    req.code = RMQ__REQUEST_CODE__REGISTER_BROKER;
    req.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER;
    req.register_broker = &rb;
    ck_assert_int_eq(rmq_sync_call(f->sync, ns, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    ck_assert_int_eq(resp.cmd->status, RMQ__STATUS__SUCCESS);
    rmq_frame_clear(&resp);
}

/* The address the route of TOPIC gives for broker id want in GROUP, into out ("" if none). */
static void route_addr(const char *ns, int64_t want, char *out, size_t len)
{
    rmq_client_opts_t opts = { 0 };
    rmq_sync_t *s = rmq_sync_new(&opts);
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    out[0] = '\0';
    tr.topic = (char *)TOPIC;
    req.code = RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC;
    req.header_case = RMQ__COMMAND__HEADER_TOPIC;
    req.topic = &tr;
    ck_assert_int_eq(rmq_sync_call(s, ns, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    if (resp.cmd->status == RMQ__STATUS__SUCCESS)
        for (size_t i = 0; i < resp.cmd->topic_route->n_broker_datas; i++) {
            const Rmq__BrokerData *bd = resp.cmd->topic_route->broker_datas[i];
            for (size_t j = 0; j < bd->n_addrs; j++)
                if (bd->addrs[j]->broker_id == want)
                    snprintf(out, len, "%s", bd->addrs[j]->addr);
        }
    rmq_frame_clear(&resp);
    rmq_sync_free(s);
}

static void ns_start(hn_daemon_t *d, const char *name, const char *prefix, char *addr, size_t len)
{
    char props[1024];

    snprintf(props, sizeof props,
             "listenPort=0\nbindAddress=127.0.0.1\nenableControllerInNamesrv=true\ncontrollerType=etcd\n"
             "controllerEtcdEndpoints=%s\ncontrollerEtcdPrefix=%s\ncontrollerLeaseTtlSeconds=%d\n"
             "controllerHeartBeatTimeoutMills=%d\n",
             etcd.endpoints, prefix, LEASE_S, HB_TIMEOUT_MS);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", name, props, addr, len), 0);
}

/* Heartbeats f to ns until the answer has status want and master want_master
 * (-2: any), or WAIT_MS passes; keeps the others in keep[] alive meanwhile. */
static int wait_answer(fake_t *f, const char *ns, int want, int64_t want_master, fake_t **keep, size_t nkeep,
                       ctl_answer_t *a)
{
    long long deadline = hn_now_ms() + WAIT_MS;

    do {
        for (size_t i = 0; i < nkeep; i++) {
            ctl_answer_t ignored;
            heartbeat(keep[i], ns, &ignored);
        }
        if (heartbeat(f, ns, a) == want && (want_master == -2 || a->master_id == want_master))
            return 1;
        usleep(100 * 1000);
    } while (hn_now_ms() < deadline);
    return 0;
}

static void setup(void)
{
    case_dir = hn_case_begin("controller");
    ck_assert_ptr_nonnull(case_dir);
    ck_assert_msg(hn_etcd_available(), "etcd is not on PATH (scripts/bootstrap.sh installs etcd-server)");
    ck_assert_int_eq(hn_etcd_start(&etcd, case_dir, 1, 30000), 0);
}

static void teardown(void)
{
    hn_etcd_kill(&etcd);
    hn_case_end();
}

/* First master, sync state set growth, failover to the in-sync slave only. */
START_TEST(test_failover_to_in_sync_slave)
{
    hn_daemon_t ns;
    char ns_addr[64], addr[64];
    fake_t a, b, c;
    ctl_answer_t ans;

    ns_start(&ns, "ns", "/t1", ns_addr, sizeof ns_addr);
    fake_init(&a, 1, 20001);
    fake_init(&b, 2, 20002);
    fake_init(&c, 3, 20003);
    a.max_offset = 1000;
    ns_register(&a, ns_addr, 0);
    ns_register(&b, ns_addr, 2);
    ns_register(&c, ns_addr, 3);
    route_addr(ns_addr, 0, addr, sizeof addr);
    ck_assert_str_eq(addr, a.addr);

    /* the first replica heard becomes master, epoch 1, alone in the set */
    ck_assert_msg(wait_answer(&a, ns_addr, RMQ__STATUS__SUCCESS, 1, NULL, 0, &ans), "no first master");
    ck_assert_int_eq(ans.master_epoch, 1);
    ck_assert_uint_eq(ans.n_sync, 1);
    ck_assert_int_eq(heartbeat(&b, ns_addr, &ans), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(ans.master_id, 1);
    /* c is alive and has more data than b, but never joins the set */
    c.max_offset = 5000;
    c.epoch = 1;
    ck_assert_int_eq(heartbeat(&c, ns_addr, &ans), RMQ__STATUS__SUCCESS);

    /* only the master may grow the set, with the current epochs */
    int64_t set[] = { 1, 2 };
    ck_assert_int_eq(alter(&b, ns_addr, 1, 1, set, 2, &ans), RMQ__STATUS__CONTROLLER_INVALID_MASTER);
    ck_assert_int_eq(alter(&a, ns_addr, 0, 1, set, 2, &ans), RMQ__STATUS__CONTROLLER_FENCED_MASTER_EPOCH);
    int64_t no_master[] = { 2 };
    ck_assert_int_eq(alter(&a, ns_addr, 1, 1, no_master, 1, &ans), RMQ__STATUS__CONTROLLER_INVALID_REPLICAS);
    ck_assert_int_eq(alter(&a, ns_addr, 1, 1, set, 2, &ans), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(ans.sse_epoch, 2);
    fake_t *others[] = { &b, &c };
    ck_assert(wait_answer(&a, ns_addr, RMQ__STATUS__SUCCESS, 1, others, 2, &ans));
    for (long long end = hn_now_ms() + WAIT_MS; ans.n_sync != 2 && hn_now_ms() < end; usleep(50 * 1000))
        heartbeat(&a, ns_addr, &ans);
    ck_assert_uint_eq(ans.n_sync, 2);
    ck_assert_int_eq(alter(&a, ns_addr, 1, 1, set, 2, &ans), RMQ__STATUS__CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH);

    /* the master falls silent: b (in sync) is elected, not c; epoch 2 */
    b.epoch = 1;
    b.max_offset = 1000;
    long long t0 = hn_now_ms();
    fake_t *keep_c[] = { &c };
    ck_assert_msg(wait_answer(&b, ns_addr, RMQ__STATUS__SUCCESS, 2, keep_c, 1, &ans), "b was not elected");
    long long took = hn_now_ms() - t0;
    ck_assert_int_eq(ans.master_epoch, 2);
    ck_assert_str_eq(ans.master_addr, b.addr);
    ck_assert_uint_eq(ans.n_sync, 1);
    fprintf(stderr, "controller: master silent -> new master committed in %lld ms (heartbeat timeout %d ms)\n",
            took, HB_TIMEOUT_MS);
    /* the name server's route shows b as brokerId 0 without b re-registering */
    route_addr(ns_addr, 0, addr, sizeof addr);
    ck_assert_str_eq(addr, b.addr);
    route_addr(ns_addr, 2, addr, sizeof addr);
    ck_assert_str_eq(addr, "");

    /* b falls silent too: c is out of sync, so nobody is elected */
    for (int i = 0; i < 30; i++) {
        heartbeat(&c, ns_addr, &ans);
        usleep(100 * 1000);
    }
    ck_assert_int_eq(ans.master_id, 2);
    ck_assert_int_eq(ans.master_epoch, 2);

    rmq_sync_free(a.sync);
    rmq_sync_free(b.sync);
    rmq_sync_free(c.sync);
    hn_case_passed();
}
END_TEST

/* Two controllers: one leads; kill -9 it and the standby leads with the
 * state it reads from etcd; a leader frozen past its lease stops acting. */
START_TEST(test_standby_takes_over)
{
    hn_daemon_t ns1, ns2;
    char addr1[64], addr2[64];
    fake_t a;
    ctl_answer_t ans;

    ns_start(&ns1, "ns1", "/t2", addr1, sizeof addr1);
    fake_init(&a, 1, 20011);
    ck_assert(wait_answer(&a, addr1, RMQ__STATUS__SUCCESS, 1, NULL, 0, &ans));
    ns_start(&ns2, "ns2", "/t2", addr2, sizeof addr2);
    ck_assert_int_eq(heartbeat(&a, addr2, &ans), RMQ__STATUS__CONTROLLER_NOT_LEADER);

    long long t0 = hn_now_ms();
    hn_daemon_kill9(&ns1);
    ck_assert_msg(wait_answer(&a, addr2, RMQ__STATUS__SUCCESS, 1, NULL, 0, &ans), "the standby never led");
    fprintf(stderr, "controller: leader killed -> standby leads in %lld ms (lease %d s)\n",
            hn_now_ms() - t0, LEASE_S);
    ck_assert_int_eq(ans.master_epoch, 1);

    /* freeze the leader past its lease: a new one takes over; the old one,
     * thawed, refuses to act before it has campaigned again */
    ns_start(&ns1, "ns1b", "/t2", addr1, sizeof addr1);
    ck_assert_int_eq(kill(ns2.pid, SIGSTOP), 0);
    ck_assert(wait_answer(&a, addr1, RMQ__STATUS__SUCCESS, 1, NULL, 0, &ans));
    ck_assert_int_eq(kill(ns2.pid, SIGCONT), 0);
    ck_assert_int_eq(heartbeat(&a, addr2, &ans), RMQ__STATUS__CONTROLLER_NOT_LEADER);

    rmq_sync_free(a.sync);
    hn_case_passed();
}
END_TEST

/* A new leader deposes no master before the lease an earlier leader may
 * have renewed surely lapsed: the master's heartbeat timeout after the
 * leadership began, even when the last heartbeat it heard from the master
 * is older (the master cut off from it while the old leader confirmed
 * it). Its first answer still names the master; the slave is elected about
 * a timeout later. */
START_TEST(test_new_leader_waits_for_master_lease)
{
    hn_daemon_t ns1, ns2;
    char addr1[64], addr2[64];
    fake_t a, b;
    ctl_answer_t ans, ignored;
    int64_t both[] = { 1, 2 };

    ns_start(&ns1, "ns1", "/t3", addr1, sizeof addr1);
    fake_init(&a, 1, 20021);
    fake_init(&b, 2, 20022);
    ck_assert(wait_answer(&a, addr1, RMQ__STATUS__SUCCESS, 1, NULL, 0, &ans));
    ck_assert_int_eq(heartbeat(&b, addr1, &ans), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(alter(&a, addr1, 1, 1, both, 2, &ans), RMQ__STATUS__SUCCESS);
    ns_start(&ns2, "ns2", "/t3", addr2, sizeof addr2);
    ck_assert_int_eq(heartbeat(&a, addr2, &ans), RMQ__STATUS__CONTROLLER_NOT_LEADER);

    /* a reaches ns1 alone, which keeps confirming it, past its timeout */
    for (long long end = hn_now_ms() + 2 * HB_TIMEOUT_MS; hn_now_ms() < end; usleep(100 * 1000)) {
        ck_assert_int_eq(heartbeat(&a, addr1, &ans), RMQ__STATUS__SUCCESS);
        ck_assert_int_eq(ans.master_id, 1);
        heartbeat(&b, addr1, &ignored);
        heartbeat(&b, addr2, &ignored);
    }
    hn_daemon_kill9(&ns1);
    long long led = -1, elected = -1;
    for (long long end = hn_now_ms() + WAIT_MS; elected < 0 && hn_now_ms() < end; usleep(50 * 1000)) {
        if (heartbeat(&b, addr2, &ans) != RMQ__STATUS__SUCCESS)
            continue;
        if (led < 0) {
            led = hn_now_ms();
            ck_assert_msg(ans.master_id == 1, "the new leader's first answer names master %lld at epoch %lld: it "
                          "deposed a master whose lease may still run", (long long)ans.master_id,
                          (long long)ans.master_epoch);
        }
        if (ans.master_id == 2)
            elected = hn_now_ms();
    }
    ck_assert_msg(elected >= 0, "the slave was never elected");
    fprintf(stderr, "controller: new leader -> slave elected after %lld ms (heartbeat timeout %d ms)\n",
            elected - led, HB_TIMEOUT_MS);
    ck_assert_int_ge(elected - led, HB_TIMEOUT_MS - 300);
    rmq_sync_free(a.sync);
    rmq_sync_free(b.sync);
    hn_case_passed();
}
END_TEST

/* A controller without etcd endpoints is a startup error naming the key;
 * without enableControllerInNamesrv the controller requests are refused. */
START_TEST(test_config_errors)
{
    hn_daemon_t ns;
    char addr[64], log[8192] = "";
    fake_t a;
    ctl_answer_t ans;

    ck_assert_int_ne(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "nsbad",
                                          "listenPort=0\nbindAddress=127.0.0.1\nenableControllerInNamesrv=true\n",
                                          addr, sizeof addr), 0);
    FILE *f = fopen(ns.log_path, "r");
    ck_assert_ptr_nonnull(f);
    log[fread(log, 1, sizeof log - 1, f)] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(log, "enableControllerInNamesrv=true: controllerEtcdEndpoints: empty"));

    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "nsoff",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", addr, sizeof addr), 0);
    fake_init(&a, 1, 20021);
    ck_assert_int_eq(heartbeat(&a, addr, &ans), RMQ__STATUS__REQUEST_CODE_NOT_SUPPORTED);
    rmq_sync_free(a.sync);
    hn_case_passed();
}
END_TEST

static Suite *controller_suite(void)
{
    Suite *s = suite_create("controller");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_failover_to_in_sync_slave);
    tcase_add_test(tc, test_standby_takes_over);
    tcase_add_test(tc, test_new_leader_waits_for_master_lease);
    tcase_add_test(tc, test_config_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(controller_suite());
}
