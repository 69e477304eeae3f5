/* test_ctl_failover.c: controller mode end to end with real processes: a
 * private etcd, a name server running the controller, and two mqbroker
 * replicas of broker-a with enableControllerMode (SYNC_MASTER when
 * elected). The controller elects one master, which grows the sync state
 * set once the other catches up; kill -9 of the master under load promotes
 * the slave within the heartbeat timeout, every message acknowledged
 * before the kill is read back from the new master, the route shows it as
 * brokerId 0, and the old master restarted rejoins as its slave. A master
 * cut off from the controller (name server frozen) stops acknowledging
 * writes within the timeout and takes them again once confirmed. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "etcdproc.h"
#include "harness.h"
#include "rmq_rpc.h"
#include "wire.h"

#define TOPIC "CtlFailTopic"
#define PROBE_TOPIC "CtlProbeTopic"
#define PRODUCER "ctl_producer"
#define CONSUMER "ctl_consumer"
#define HB_TIMEOUT_MS 2000
#define LEASE_S 2
#define WAIT_MS 30000

static const char *case_dir;
static hn_etcd_t etcd;
static const wire_flow_t FLOW = { .topic = TOPIC, .producer_group = PRODUCER, .consumer_group = CONSUMER };

/* ---- daemons --------------------------------------------------------------------- */

static void ns_start(hn_daemon_t *d, const char *name, char *addr, size_t len)
{
    char props[1024];

    snprintf(props, sizeof props,
             "listenPort=0\nbindAddress=127.0.0.1\nenableControllerInNamesrv=true\ncontrollerType=etcd\n"
             "controllerEtcdEndpoints=%s\ncontrollerEtcdPrefix=/ctlfail\ncontrollerLeaseTtlSeconds=%d\n"
             "controllerHeartBeatTimeoutMills=%d\n",
             etcd.endpoints, LEASE_S, HB_TIMEOUT_MS);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", name, props, addr, len), 0);
}

/* Starts replica id of broker-a as daemon name over case_dir/store<id>. */
static void replica_start(hn_daemon_t *d, const char *name, int id, const char *ns, char *addr, size_t len)
{
    char props[2048];

    snprintf(props, sizeof props,
             "brokerName=broker-a\nbrokerId=%d\nbrokerRole=SYNC_MASTER\nenableControllerMode=true\n"
             "controllerAddr=%s\nnamesrvAddr=%s\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store%d\n"
             "mapedFileSizeCommitLog=1048576\nmaxMessageSize=262144\nsyncFlushTimeout=1500\n"
             "controllerHeartBeatTimeoutMills=%d\nbrokerHeartbeatInterval=200\ncheckSyncStateSetPeriod=300\n"
             "haMaxTimeSlaveNotCatchup=3000\nregisterNameServerPeriod=1000\n"
             "maxTransferCountOnMessageInMemory=1024\nmaxTransferBytesOnMessageInMemory=4194304\n",
             id, ns, ns, case_dir, id, HB_TIMEOUT_MS);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", name, props, addr, len), 0);
}

/* ---- requests ---------------------------------------------------------------------- */

static int runtime_get(const char *addr, const char *key, char *out, size_t len)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    out[0] = '\0';
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (wire_call(addr, &req, NULL, 0, &resp) != RMQ__STATUS__SUCCESS)
        return -1;
    wire_runtime_value(&resp, key, out, len);
    rmq_frame_clear(&resp);
    return 0;
}

typedef struct kv_want {
    const char *addr, *key, *value;
} kv_want_t;

static int runtime_is(void *arg)
{
    kv_want_t *w = arg;
    char v[256];
    return runtime_get(w->addr, w->key, v, sizeof v) == 0 && strcmp(v, w->value) == 0;
}

/* One probe send to PROBE_TOPIC; its status, the remark into why. */
static int probe_send(const char *addr, char *why, size_t len)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    rmq_frame_t resp = { 0 };
    wire_link_t ln = { .opts = { .connect_timeout_ms = 1000 }, .timeout_ms = 3000 };

    wire_send_hdr(&req, &h, PRODUCER, PROBE_TOPIC, 0, (char *)"");
    int st = wire_call_with(&ln, addr, &req, "probe", 5, &resp);
    if (why)
        snprintf(why, len, "%s", st >= 0 && resp.cmd && resp.cmd->remark ? resp.cmd->remark : "");
    rmq_frame_clear(&resp);
    return st;
}

/* The address the route of TOPIC gives broker-a's broker id want, into out. */
static void route_addr(const char *ns, int64_t want, char *out, size_t len)
{
    Rmq__Command req;
    Rmq__TopicRequest tr;
    rmq_frame_t resp = { 0 };

    out[0] = '\0';
    wire_topic_query(&req, &tr, RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC, TOPIC);
    if (wire_call(ns, &req, NULL, 0, &resp) != RMQ__STATUS__SUCCESS)
        return;
    for (size_t i = 0; i < resp.cmd->topic_route->n_broker_datas; i++) {
        const Rmq__BrokerData *bd = resp.cmd->topic_route->broker_datas[i];
        for (size_t j = 0; j < bd->n_addrs; j++)
            if (bd->addrs[j]->broker_id == want)
                snprintf(out, len, "%s", bd->addrs[j]->addr);
    }
    rmq_frame_clear(&resp);
}

typedef struct route_want {
    const char *ns, *addr;
} route_want_t;

static int route_is_master(void *arg)
{
    route_want_t *w = arg;
    char got[64];
    route_addr(w->ns, 0, got, sizeof got);
    return strcmp(got, w->addr) == 0;
}

/* Waits until one of the two replicas reports itself master; returns its index. */
static int wait_master(char addrs[2][64])
{
    for (long long end = hn_now_ms() + WAIT_MS; hn_now_ms() < end; hn_sleep_ms(100))
        for (int i = 0; i < 2; i++) {
            kv_want_t w = { addrs[i], "brokerRole", "SYNC_MASTER" };
            if (runtime_is(&w))
                return i;
        }
    ck_abort_msg("no replica became master within %d ms", WAIT_MS);
    return -1;
}

static int sync_set_full(void *arg)
{
    char v[64];
    return runtime_get(arg, "controllerSyncStateSet", v, sizeof v) == 0 && strchr(v, ',') != NULL;
}

/* Sends probes to addr until one answers SUCCESS; the ms that took, or -1. */
static long long until_send_ok(const char *addr, int timeout_ms)
{
    long long t0 = hn_now_ms();
    while (hn_now_ms() - t0 < timeout_ms) {
        if (probe_send(addr, NULL, 0) == RMQ__STATUS__SUCCESS)
            return hn_now_ms() - t0;
        hn_sleep_ms(20);
    }
    return -1;
}

static void setup(void)
{
    case_dir = hn_case_begin("ctlfail");
    ck_assert_ptr_nonnull(case_dir);
    ck_assert_msg(hn_etcd_available(), "etcd is not on PATH (scripts/bootstrap.sh installs etcd-server)");
    ck_assert_int_eq(hn_etcd_start(&etcd, case_dir, 1, 30000), 0);
}

static void teardown(void)
{
    hn_etcd_kill(&etcd);
    hn_case_end();
}

/* ---- cases --------------------------------------------------------------------------- */

/* kill -9 of the master under load: the in-sync slave takes over with every
 * acknowledged message; the old master rejoins as its slave. */
START_TEST(test_kill_master_promotes_slave)
{
    hn_daemon_t ns, rep[2];
    char ns_addr[64], addrs[2][64];

    ns_start(&ns, "ns", ns_addr, sizeof ns_addr);
    replica_start(&rep[0], "b1", 1, ns_addr, addrs[0], sizeof addrs[0]);
    replica_start(&rep[1], "b2", 2, ns_addr, addrs[1], sizeof addrs[1]);
    int m = wait_master(addrs), s = 1 - m;
    kv_want_t slave_role = { addrs[s], "brokerRole", "SLAVE" };
    ck_assert(hn_wait_until(runtime_is, &slave_role, WAIT_MS));
    ck_assert_int_eq(until_send_ok(addrs[m], WAIT_MS) >= 0, 1);
    ck_assert_msg(hn_wait_until(sync_set_full, addrs[m], WAIT_MS), "the slave never joined the sync state set");
    route_want_t rw = { ns_addr, addrs[m] };

    wire_sender_t sd;
    long long t_kill = hn_now_ms() + 1500;
    wire_send_kill9(addrs[m], &sd, &FLOW, 1000000, 64, &rep[m], 1500);
    ck_assert_int_gt(sd.acked, 50);
    long long took = until_send_ok(addrs[s], WAIT_MS);
    ck_assert_msg(took >= 0, "the slave %s never took writes", addrs[s]);
    took = hn_now_ms() - t_kill;
    fprintf(stderr, "# controller mode: kill -9 master -> first SEND_OK on the new master in %lld ms "
            "(controllerHeartBeatTimeoutMills=%d), %d acknowledged before the kill\n", took, HB_TIMEOUT_MS, sd.acked);
    ck_assert_int_lt(took, HB_TIMEOUT_MS + 8000);
    ck_assert_int_ge(wire_assert_acked_on(addrs[s], &FLOW, sd.acked_map, sd.total), sd.acked);
    wire_sender_deinit(&sd);
    rw.addr = addrs[s];
    ck_assert_msg(hn_wait_until(route_is_master, &rw, WAIT_MS), "the route never showed %s as brokerId 0", addrs[s]);

    /* the old master, restarted over its store, follows the new one */
    char again[64];
    replica_start(&rep[m], m ? "b2r" : "b1r", m + 1, ns_addr, again, sizeof again);
    kv_want_t rejoined = { again, "haConnected", "true" };
    ck_assert_msg(hn_wait_until(runtime_is, &rejoined, WAIT_MS), "the old master never followed the new one");
    kv_want_t role = { again, "brokerRole", "SLAVE" };
    ck_assert(runtime_is(&role));
    ck_assert_msg(hn_wait_until(sync_set_full, addrs[s], WAIT_MS), "the old master never rejoined the set");
    ck_assert_int_eq(probe_send(addrs[s], NULL, 0), RMQ__STATUS__SUCCESS);
    hn_case_passed();
}
END_TEST

/* The master cut off from the controller (name server frozen) stops
 * acknowledging within the timeout; writes resume once it is confirmed. */
START_TEST(test_cut_off_master_fences_itself)
{
    hn_daemon_t ns, rep[2];
    char ns_addr[64], addrs[2][64], why[256] = "";

    ns_start(&ns, "ns", ns_addr, sizeof ns_addr);
    replica_start(&rep[0], "b1", 1, ns_addr, addrs[0], sizeof addrs[0]);
    replica_start(&rep[1], "b2", 2, ns_addr, addrs[1], sizeof addrs[1]);
    int m = wait_master(addrs);
    ck_assert_int_ge(until_send_ok(addrs[m], WAIT_MS), 0);

    ck_assert_int_eq(kill(ns.pid, SIGSTOP), 0);
    long long t0 = hn_now_ms(), fenced = -1;
    while (hn_now_ms() - t0 < 3 * HB_TIMEOUT_MS) {
        if (probe_send(addrs[m], why, sizeof why) != RMQ__STATUS__SUCCESS) {
            fenced = hn_now_ms() - t0;
            break;
        }
        hn_sleep_ms(20);
    }
    fprintf(stderr, "# controller mode: name server frozen -> master stops acknowledging in %lld ms "
            "(timeout %d ms): %s\n", fenced, HB_TIMEOUT_MS, why);
    ck_assert_msg(fenced >= 0 && fenced <= HB_TIMEOUT_MS, "the cut-off master still acknowledged after %lld ms",
                  hn_now_ms() - t0);
    ck_assert_ptr_nonnull(strstr(why, "fenced"));
    kv_want_t w = { addrs[m], "controllerFenced", "true" };
    ck_assert(runtime_is(&w));

    ck_assert_int_eq(kill(ns.pid, SIGCONT), 0);
    long long back = -1;
    for (long long end = hn_now_ms() + WAIT_MS; back < 0 && hn_now_ms() < end; hn_sleep_ms(50))
        for (int i = 0; i < 2 && back < 0; i++)
            if (probe_send(addrs[i], NULL, 0) == RMQ__STATUS__SUCCESS)
                back = hn_now_ms() - t0;
    ck_assert_msg(back >= 0, "no replica took writes after the name server resumed");
    hn_case_passed();
}
END_TEST

/* Controller mode without controllers, or without a replica id, is a clear startup error. */
START_TEST(test_config_errors)
{
    hn_daemon_t d;
    char addr[64], log[8192] = "";

    ck_assert_int_ne(hn_daemon_start_conf(&d, case_dir, "broker/mqbroker", "bad",
                                          "enableControllerMode=true\nbrokerId=1\nlistenPort=0\n", addr,
                                          sizeof addr), 0);
    FILE *f = fopen(d.log_path, "r");
    ck_assert_ptr_nonnull(f);
    log[fread(log, 1, sizeof log - 1, f)] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(log, "controllerAddr: empty"));
    ck_assert_int_ne(hn_daemon_start_conf(&d, case_dir, "broker/mqbroker", "bad0",
                                          "enableControllerMode=true\ncontrollerAddr=127.0.0.1:1\nlistenPort=0\n",
                                          addr, sizeof addr), 0);
    f = fopen(d.log_path, "r");
    ck_assert_ptr_nonnull(f);
    log[fread(log, 1, sizeof log - 1, f)] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(log, "brokerId=0: enableControllerMode=true needs"));
    hn_case_passed();
}
END_TEST

static Suite *ctl_failover_suite(void)
{
    Suite *s = suite_create("ctl_failover");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_kill_master_promotes_slave);
    tcase_add_test(tc, test_cut_off_master_fences_itself);
    tcase_add_test(tc, test_config_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(ctl_failover_suite());
}
