/* test_namesrv.c: mqnamesrv as a real process on an ephemeral loopback
 * port. Brokers are played by this test over the real protocol (one rmq_sync,
 * so one connection, per broker); routes are read back with mqadmin. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "rmq_rpc.h"

#define RPC_TIMEOUT_MS 5000
#define CMD_TIMEOUT_MS 20000

static const char *case_dir;

/* ---- a broker played by the test ---------------------------------------- */

typedef struct topic_spec {
    const char *name;
    int queues;
} topic_spec_t;

typedef struct fake_broker {
    const char *name;
    const char *addr;
    const char *ha_addr;
    int64_t id;
    int64_t epoch;
    const topic_spec_t *topics;   /* NULL-name terminated */
    rmq_sync_t *sync;             /* its connections, one per name server */
} fake_broker_t;

static void broker_open(fake_broker_t *b)
{
    rmq_client_opts_t opts = { 0 };

    opts.connect_timeout_ms = 2000;
    opts.name = b->name;
    b->sync = rmq_sync_new(&opts);
    ck_assert_ptr_nonnull(b->sync);
}

/* Closes the broker's connections, as a crashed broker would. */
static void broker_close(fake_broker_t *b)
{
    rmq_sync_free(b->sync);
    b->sync = NULL;
}

/* Sends REGISTER_BROKER to ns; returns the status; copies the master
 * addresses the answer names into master/master_ha (may be NULL). */
static int broker_register(fake_broker_t *b, const char *ns, char *master, char *master_ha)
{
    Rmq__RegisterBrokerRequest rb = RMQ__REGISTER_BROKER_REQUEST__INIT;
    Rmq__DataVersion dv = RMQ__DATA_VERSION__INIT;
    Rmq__TopicConfig tc[8], *tcp[8];
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    rb.cluster_name = (char *)"DefaultCluster";
    rb.broker_name = (char *)b->name;
    rb.broker_addr = (char *)b->addr;
    rb.broker_id = b->id;
    rb.ha_server_addr = (char *)(b->ha_addr ? b->ha_addr : "");
    rb.epoch = b->epoch;
    dv.timestamp = b->epoch;
    dv.counter = 1;
    rb.data_version = &dv;
    for (size_t i = 0; b->topics && b->topics[i].name; i++) {
        rmq__topic_config__init(&tc[i]);
        tc[i].topic_name = (char *)b->topics[i].name;
        tc[i].read_queue_nums = b->topics[i].queues;
        tc[i].write_queue_nums = b->topics[i].queues;
        tc[i].perm = RMQ__PERM__PERM_READ | RMQ__PERM__PERM_WRITE;
        tcp[i] = &tc[i];
        rb.n_topics = i + 1;
    }
    rb.topics = tcp;
    req.code = RMQ__REQUEST_CODE__REGISTER_BROKER;
    req.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER;
    req.register_broker = &rb;
    ck_assert_int_eq(rmq_sync_call(b->sync, ns, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    int status = resp.cmd->status;
    if (status == RMQ__STATUS__SUCCESS) {
        ck_assert_int_eq(resp.cmd->header_case, RMQ__COMMAND__HEADER_REGISTER_BROKER_RESP);
        if (master)
            strcpy(master, resp.cmd->register_broker_resp->master_addr);
        if (master_ha)
            strcpy(master_ha, resp.cmd->register_broker_resp->ha_server_addr);
    }
    rmq_frame_clear(&resp);
    return status;
}

/* Sends UNREGISTER_BROKER with epoch to ns over the broker's connection. */
static int broker_unregister(fake_broker_t *b, const char *ns, int64_t epoch)
{
    Rmq__UnregisterBrokerRequest ub = RMQ__UNREGISTER_BROKER_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    ub.cluster_name = (char *)"DefaultCluster";
    ub.broker_name = (char *)b->name;
    ub.broker_addr = (char *)b->addr;
    ub.broker_id = b->id;
    ub.epoch = epoch;
    req.code = RMQ__REQUEST_CODE__UNREGISTER_BROKER;
    req.header_case = RMQ__COMMAND__HEADER_UNREGISTER_BROKER;
    req.unregister_broker = &ub;
    ck_assert_int_eq(rmq_sync_call(b->sync, ns, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    int status = resp.cmd->status;
    rmq_frame_clear(&resp);
    return status;
}

static const topic_spec_t topics_a[] = { { "TopicA", 4 }, { "Shared", 4 }, { NULL, 0 } };
static const topic_spec_t topics_b[] = { { "TopicB", 2 }, { "Shared", 8 }, { NULL, 0 } };

static fake_broker_t master_a(void)
{
    fake_broker_t b = { "broker-a", "127.0.0.1:10911", "127.0.0.1:10912", 0, 100, topics_a, NULL };
    return b;
}

static fake_broker_t slave_a(void)
{
    fake_broker_t b = { "broker-a", "127.0.0.1:10921", "127.0.0.1:10922", 1, 100, topics_a, NULL };
    return b;
}

static fake_broker_t master_b(void)
{
    fake_broker_t b = { "broker-b", "127.0.0.1:10931", "127.0.0.1:10932", 0, 100, topics_b, NULL };
    return b;
}

/* ---- name servers and mqadmin ------------------------------------------- */

/* Starts mqnamesrv on an ephemeral port with extra properties; fills addr. */
static void ns_start(hn_daemon_t *d, const char *name, const char *extra, char *addr, size_t len)
{
    char props[1024];
    int n = snprintf(props, sizeof props, "listenPort=0\nbindAddress=127.0.0.1\nlogLevel=debug\n%s",
                     extra ? extra : "");

    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "properties of %s do not fit", name);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", name, props, addr, len), 0);
}

static void ns_stop_ok(hn_daemon_t *d)
{
    ck_assert_int_eq(hn_daemon_stop(d, HN_STOP_TIMEOUT_MS), 0);
}

/* Runs mqadmin CMD -n NS with up to two more arguments (NULL when unused). */
static void admin(hn_result_t *res, const char *cmd, const char *ns, const char *a1, const char *a2)
{
    char bin[PATH_MAX];
    const char *argv[] = { hn_build_path("tools/mqadmin", bin, sizeof bin), cmd, "-n", ns, a1, a2,
                           NULL };

    ck_assert_int_eq(hn_run(argv, CMD_TIMEOUT_MS, res), 0);
}

/* Number of lines of text containing every one of the given words. */
static int lines_with(const char *text, const char *w1, const char *w2)
{
    int n = 0;

    for (const char *line = text; line && *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        char buf[1024];
        snprintf(buf, sizeof buf, "%.*s", (int)(len < sizeof buf ? len : sizeof buf - 1), line);
        if (strstr(buf, w1) && (!w2 || strstr(buf, w2)))
            n++;
        line = end ? end + 1 : NULL;
    }
    return n;
}

/* Checks that every line of a table starts its second column at the same offset. */
static void assert_aligned(const char *text)
{
    long col = -1;

    for (const char *line = text; line && *line && *line != '\n';) {
        const char *gap = strstr(line, "  ");
        const char *end = strchr(line, '\n');
        ck_assert_ptr_nonnull(gap);
        while (gap[2] == ' ')
            gap++;
        long at = (long)(gap + 2 - line);
        if (col < 0)
            col = at;
        ck_assert_int_eq(at, col);
        line = end ? end + 1 : NULL;
    }
}

/* ---- fixtures ------------------------------------------------------------ */

static void setup(void)
{
    case_dir = hn_case_begin("namesrv");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

/* ---- cases -------------------------------------------------------------- */

START_TEST(test_routes_via_mqadmin)
{
    hn_daemon_t ns;
    char addr[64], master[256] = "x", master_ha[256] = "x";
    fake_broker_t ma = master_a(), sa = slave_a(), mb = master_b();
    hn_result_t res;

    ns_start(&ns, "ns", NULL, addr, sizeof addr);
    broker_open(&ma);
    broker_open(&sa);
    broker_open(&mb);
    ck_assert_int_eq(broker_register(&ma, addr, master, master_ha), RMQ__STATUS__SUCCESS);
    ck_assert_str_eq(master, "");
    ck_assert_int_eq(broker_register(&sa, addr, master, master_ha), RMQ__STATUS__SUCCESS);
    ck_assert_str_eq(master, "127.0.0.1:10911");
    ck_assert_str_eq(master_ha, "127.0.0.1:10912");
    ck_assert_int_eq(broker_register(&mb, addr, NULL, NULL), RMQ__STATUS__SUCCESS);

    admin(&res, "topicRoute", addr, "-t", "Shared");
    ck_assert_int_eq(res.status, 0);
    ck_assert_int_eq(lines_with(res.out, "broker-a", "127.0.0.1:10911"), 1);
    ck_assert_int_eq(lines_with(res.out, "broker-a", "127.0.0.1:10921"), 1);
    ck_assert_int_eq(lines_with(res.out, "broker-b", "127.0.0.1:10931"), 1);
    ck_assert_int_eq(lines_with(res.out, "broker-b", "RW-"), 1);
    ck_assert_int_eq(lines_with(res.out, "broker-b", " 8 "), 1);
    assert_aligned(res.out);
    hn_result_free(&res);

    admin(&res, "clusterList", addr, NULL, NULL);
    ck_assert_int_eq(res.status, 0);
    ck_assert_int_eq(lines_with(res.out, "DefaultCluster", NULL), 3);
    ck_assert_int_eq(lines_with(res.out, "127.0.0.1:10921", "127.0.0.1:10922"), 1);
    assert_aligned(res.out);
    hn_result_free(&res);

    admin(&res, "topicList", addr, NULL, NULL);
    ck_assert_int_eq(res.status, 0);
    ck_assert_str_eq(res.out, "TOPIC\nShared\nTopicA\nTopicB\n");
    hn_result_free(&res);

    admin(&res, "topicRoute", addr, "-t", "NoSuchTopic");
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "TOPIC_NOT_EXIST"));
    ck_assert_ptr_nonnull(strstr(res.err, "NoSuchTopic"));
    hn_result_free(&res);

    admin(&res, "deleteTopic", addr, "-t", "TopicB");
    ck_assert_int_eq(res.status, 0);
    ck_assert_int_eq(lines_with(res.out, addr, "deleted"), 1);
    hn_result_free(&res);
    admin(&res, "topicRoute", addr, "-t", "TopicB");
    ck_assert_int_eq(res.status, 1);
    hn_result_free(&res);

    admin(&res, "getNamesrvConfig", addr, NULL, NULL);
    ck_assert_int_eq(res.status, 0);
    ck_assert_int_eq(lines_with(res.out, "brokerChannelExpiredTime", "120000"), 1);
    hn_result_free(&res);

    broker_close(&ma);
    broker_close(&sa);
    broker_close(&mb);
    ns_stop_ok(&ns);
    hn_case_passed();
}
END_TEST

START_TEST(test_bad_requests)
{
    hn_daemon_t ns;
    char addr[64];
    rmq_client_opts_t opts = { 0 };
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    ns_start(&ns, "ns", NULL, addr, sizeof addr);
    rmq_sync_t *s = rmq_sync_new(&opts);
    req.code = RMQ__REQUEST_CODE__REGISTER_BROKER;
    ck_assert_int_eq(rmq_sync_call(s, addr, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    ck_assert_int_eq(resp.cmd->status, RMQ__STATUS__BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(resp.cmd->remark, "REGISTER_BROKER needs a register_broker header"));
    rmq_frame_clear(&resp);

    req.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    ck_assert_int_eq(rmq_sync_call(s, addr, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    ck_assert_int_eq(resp.cmd->status, RMQ__STATUS__REQUEST_CODE_NOT_SUPPORTED);
    rmq_frame_clear(&resp);
    rmq_sync_free(s);

    fake_broker_t mb = master_b();
    mb.id = -1;
    broker_open(&mb);
    ck_assert_int_eq(broker_register(&mb, addr, NULL, NULL), RMQ__STATUS__BAD_REQUEST);
    broker_close(&mb);
    ns_stop_ok(&ns);
    hn_case_passed();
}
END_TEST

START_TEST(test_unregister_and_stale_unregister)
{
    hn_daemon_t ns;
    char addr[64];
    fake_broker_t ma = master_a(), mb = master_b();
    hn_result_t res;

    ns_start(&ns, "ns", NULL, addr, sizeof addr);
    broker_open(&ma);
    broker_open(&mb);
    ck_assert_int_eq(broker_register(&ma, addr, NULL, NULL), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(broker_register(&mb, addr, NULL, NULL), RMQ__STATUS__SUCCESS);

    ck_assert_int_eq(broker_unregister(&mb, addr, mb.epoch), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(broker_unregister(&mb, addr, mb.epoch), RMQ__STATUS__BROKER_NOT_FOUND);
    admin(&res, "topicRoute", addr, "-t", "Shared");
    ck_assert_int_eq(res.status, 0);
    ck_assert_int_eq(lines_with(res.out, "broker-b", NULL), 0);
    hn_result_free(&res);
    admin(&res, "topicRoute", addr, "-t", "TopicB");
    ck_assert_int_eq(res.status, 1);
    hn_result_free(&res);

    /* broker-a restarts (newer epoch); the old run's unregister arrives late */
    ma.epoch = 200;
    ck_assert_int_eq(broker_register(&ma, addr, NULL, NULL), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(broker_unregister(&ma, addr, 100), RMQ__STATUS__BAD_REQUEST);
    admin(&res, "topicRoute", addr, "-t", "TopicA");
    ck_assert_int_eq(res.status, 0);
    ck_assert_int_eq(lines_with(res.out, "broker-a", "127.0.0.1:10911"), 1);
    hn_result_free(&res);
    /* and a stale registration is refused */
    ma.epoch = 150;
    ck_assert_int_eq(broker_register(&ma, addr, NULL, NULL), RMQ__STATUS__BAD_REQUEST);

    broker_close(&ma);
    broker_close(&mb);
    ns_stop_ok(&ns);
    hn_case_passed();
}
END_TEST

typedef struct route_probe {
    const char *ns;
    const char *topic;
    const char *w1, *w2;
    int want;                 /* wanted count of lines with w1 and w2 */
} route_probe_t;

/* 1 when mqadmin topicRoute shows probe->want lines with w1 and w2
 * (want -1: when the topic has no route at all). */
static int route_matches(void *arg)
{
    route_probe_t *p = arg;
    hn_result_t res;

    admin(&res, "topicRoute", p->ns, "-t", p->topic);
    int ok = p->want < 0 ? res.status == 1
                         : res.status == 0 && lines_with(res.out, p->w1, p->w2) == p->want;
    hn_result_free(&res);
    return ok;
}

START_TEST(test_closed_connection_leaves_route)
{
    hn_daemon_t ns;
    char addr[64], master[256], master_ha[256];
    fake_broker_t ma = master_a(), sa = slave_a();

    ns_start(&ns, "ns", NULL, addr, sizeof addr);
    broker_open(&ma);
    broker_open(&sa);
    ck_assert_int_eq(broker_register(&ma, addr, NULL, NULL), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(broker_register(&sa, addr, NULL, NULL), RMQ__STATUS__SUCCESS);

    /* the master's connection closes: it leaves at once, the slave and the
     * topic's queues stay so consumers can read from the slave */
    broker_close(&ma);
    route_probe_t gone = { addr, "TopicA", "127.0.0.1:10911", NULL, 0 };
    ck_assert(hn_wait_until(route_matches, &gone, 3000));
    route_probe_t slave = { addr, "TopicA", "broker-a", "127.0.0.1:10921", 1 };
    ck_assert(route_matches(&slave));
    route_probe_t queues = { addr, "TopicA", "broker-a", "RW-", 1 };
    ck_assert(route_matches(&queues));

    /* the slave's answer no longer names a master */
    master[0] = 'x';
    ck_assert_int_eq(broker_register(&sa, addr, master, master_ha), RMQ__STATUS__SUCCESS);
    ck_assert_str_eq(master, "");

    broker_close(&sa);
    route_probe_t none = { addr, "TopicA", NULL, NULL, -1 };
    ck_assert(hn_wait_until(route_matches, &none, 3000));
    ns_stop_ok(&ns);
    hn_case_passed();
}
END_TEST

START_TEST(test_silent_broker_expires)
{
    hn_daemon_t ns;
    char addr[64];
    fake_broker_t ma = master_a(), sa = slave_a();
    hn_result_t res;

    ns_start(&ns, "ns", "brokerChannelExpiredTime=1500\nscanNotActiveBrokerInterval=60000\n", addr,
             sizeof addr);
    broker_open(&ma);
    broker_open(&sa);
    ck_assert_int_eq(broker_register(&ma, addr, NULL, NULL), RMQ__STATUS__SUCCESS);
    long long start = hn_now_ms();
    /* the slave keeps registering, the master stays connected but silent */
    while (hn_now_ms() - start < 3000) {
        ck_assert_int_eq(broker_register(&sa, addr, NULL, NULL), RMQ__STATUS__SUCCESS);
        hn_sleep_ms(100);
    }
    route_probe_t master = { addr, "TopicA", "127.0.0.1:10911", NULL, 0 };
    ck_assert(route_matches(&master));
    route_probe_t slave = { addr, "TopicA", "broker-a", "127.0.0.1:10921", 1 };
    ck_assert(route_matches(&slave));

    /* now the slave goes silent too: expired well before the 60 s scan interval */
    route_probe_t none = { addr, "TopicA", NULL, NULL, -1 };
    ck_assert(hn_wait_until(route_matches, &none, 3500));
    admin(&res, "clusterList", addr, NULL, NULL);
    ck_assert_int_eq(lines_with(res.out, "broker-a", NULL), 0);
    hn_result_free(&res);

    broker_close(&ma);
    broker_close(&sa);
    ns_stop_ok(&ns);
    hn_case_passed();
}
END_TEST

START_TEST(test_two_name_servers)
{
    hn_daemon_t ns1, ns2;
    char addr1[64], addr2[64], both[160];
    fake_broker_t ma = master_a();
    hn_result_t res;

    ns_start(&ns1, "ns1", NULL, addr1, sizeof addr1);
    ns_start(&ns2, "ns2", NULL, addr2, sizeof addr2);
    snprintf(both, sizeof both, "%s;%s", addr1, addr2);
    broker_open(&ma);
    ck_assert_int_eq(broker_register(&ma, addr1, NULL, NULL), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(broker_register(&ma, addr2, NULL, NULL), RMQ__STATUS__SUCCESS);

    admin(&res, "topicRoute", addr2, "-t", "TopicA");
    ck_assert_int_eq(res.status, 0);
    hn_result_free(&res);
    admin(&res, "clusterList", both, NULL, NULL);
    ck_assert_int_eq(res.status, 0);
    ck_assert_int_eq(lines_with(res.out, "broker-a", "127.0.0.1:10911"), 1);
    hn_result_free(&res);

    hn_daemon_kill9(&ns1);
    admin(&res, "topicRoute", both, "-t", "TopicA");
    ck_assert_int_eq(res.status, 0);
    ck_assert_int_eq(lines_with(res.out, "broker-a", "127.0.0.1:10911"), 1);
    hn_result_free(&res);
    /* a change must reach every name server: the dead one is named */
    admin(&res, "deleteTopic", both, "-t", "TopicA");
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, addr1));
    ck_assert_int_eq(lines_with(res.out, addr2, "deleted"), 1);
    hn_result_free(&res);

    broker_close(&ma);
    ns_stop_ok(&ns2);
    hn_case_passed();
}
END_TEST

START_TEST(test_mqadmin_errors)
{
    char bin[PATH_MAX];
    hn_result_t res;

    admin(&res, "clusterList", "127.0.0.1:1", NULL, NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "no name server answered"));
    ck_assert_ptr_nonnull(strstr(res.err, "127.0.0.1:1"));
    ck_assert_str_eq(res.out, "");
    hn_result_free(&res);

    admin(&res, "noSuchCommand", "127.0.0.1:1", NULL, NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "usage"));
    hn_result_free(&res);

    admin(&res, "topicList", "127.0.0.1:1", "-z", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "usage"));
    hn_result_free(&res);

    admin(&res, "topicRoute", "127.0.0.1:1", NULL, NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "-t TOPIC is required"));
    hn_result_free(&res);

    const char *help[] = { hn_build_path("tools/mqadmin", bin, sizeof bin), "topicRoute", "-h", NULL };
    ck_assert_int_eq(hn_run(help, CMD_TIMEOUT_MS, &res), 0);
    ck_assert_int_eq(res.status, 0);
    ck_assert_ptr_nonnull(strstr(res.out, "-t TOPIC"));
    hn_result_free(&res);
    hn_case_passed();
}
END_TEST

START_TEST(test_config_print_and_errors)
{
    char bin[PATH_MAX], path[PATH_MAX];
    hn_result_t res;

    hn_build_path("namesrv/mqnamesrv", bin, sizeof bin);
    hn_write_file(case_dir, "p.properties", "listenPort=12345\n", path, sizeof path);
    const char *print[] = { bin, "-c", path, "-p", NULL };
    ck_assert_int_eq(hn_run(print, CMD_TIMEOUT_MS, &res), 0);
    ck_assert_int_eq(res.status, 0);
    ck_assert_ptr_nonnull(strstr(res.out, "listenPort=12345\n"));
    ck_assert_ptr_nonnull(strstr(res.out, "brokerChannelExpiredTime=120000\n"));
    hn_result_free(&res);

    hn_write_file(case_dir, "bad.properties", "brokerChannelExpiredTime=soon\n", path, sizeof path);
    const char *bad[] = { bin, "-c", path, NULL };
    ck_assert_int_eq(hn_run(bad, CMD_TIMEOUT_MS, &res), 0);
    ck_assert_int_eq(res.status, 2);
    ck_assert_ptr_nonnull(strstr(res.err, "brokerChannelExpiredTime=soon"));
    ck_assert_ptr_nonnull(strstr(res.err, "integer"));
    hn_result_free(&res);

    hn_write_file(case_dir, "range.properties", "listenPort=70000\n", path, sizeof path);
    const char *range[] = { bin, "-c", path, NULL };
    ck_assert_int_eq(hn_run(range, CMD_TIMEOUT_MS, &res), 0);
    ck_assert_int_eq(res.status, 2);
    ck_assert_ptr_nonnull(strstr(res.err, "listenPort=70000"));
    hn_result_free(&res);

    const char *missing[] = { bin, "-c", "/nonexistent/ns.properties", NULL };
    ck_assert_int_eq(hn_run(missing, CMD_TIMEOUT_MS, &res), 0);
    ck_assert_int_ne(res.status, 0);
    hn_result_free(&res);
    hn_case_passed();
}
END_TEST

START_TEST(test_signals_stop_cleanly)
{
    hn_daemon_t ns;
    char addr[64], path[PATH_MAX], extra[PATH_MAX + 16];
    hn_result_t res;
    struct stat st;

    /* logPath gets the log as well as stderr */
    snprintf(path, sizeof path, "%s/ns-file.log", case_dir);
    snprintf(extra, sizeof extra, "logPath=%s\n", path);
    ns_start(&ns, "ns", extra, addr, sizeof addr);
    admin(&res, "topicList", addr, NULL, NULL);
    ck_assert_int_eq(res.status, 0);
    hn_result_free(&res);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_gt(st.st_size, 0);

    ns_start(&ns, "ns", NULL, addr, sizeof addr);
    kill(ns.pid, SIGINT);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    snprintf(path, sizeof path, "%s/ns.ready", case_dir);
    ck_assert_int_ne(access(path, F_OK), 0);

    /* SIGTERMs keep coming while it stops: they do not cut the stop short */
    for (int round = 0; round < 5; round++) {
        ns_start(&ns, "ns", NULL, addr, sizeof addr);
        ck_assert_int_eq(hn_daemon_stop_burst(&ns, HN_STOP_TIMEOUT_MS), 0);
    }
    hn_case_passed();
}
END_TEST

/* Sends a KV request (code) to ns; returns the status and, for a found
 * GET_KV_CONFIG, copies the value into value. */
static int kv_call(rmq_sync_t *s, const char *ns, int code, const char *key, const char *value,
                   char *out, size_t outlen)
{
    Rmq__KvConfig kv = RMQ__KV_CONFIG__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    kv.namespace_ = (char *)"ORDER_TOPIC_CONFIG";
    kv.key = (char *)key;
    kv.value = (char *)(value ? value : "");
    req.code = code;
    req.header_case = RMQ__COMMAND__HEADER_KV;
    req.kv = &kv;
    ck_assert_int_eq(rmq_sync_call(s, ns, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    int status = resp.cmd->status;
    if (out && status == RMQ__STATUS__SUCCESS) {
        ck_assert_int_eq(resp.cmd->header_case, RMQ__COMMAND__HEADER_KV);
        snprintf(out, outlen, "%s", resp.cmd->kv->value);
    }
    rmq_frame_clear(&resp);
    return status;
}

START_TEST(test_kv_config_persists)
{
    hn_daemon_t ns;
    char addr[64], extra[PATH_MAX + 32], value[256];
    rmq_client_opts_t opts = { 0 };
    fake_broker_t ma = master_a();
    hn_result_t res;

    snprintf(extra, sizeof extra, "kvConfigPath=%s/kv.conf\n", case_dir);
    ns_start(&ns, "ns", extra, addr, sizeof addr);
    rmq_sync_t *s = rmq_sync_new(&opts);
    ck_assert_int_eq(kv_call(s, addr, RMQ__REQUEST_CODE__PUT_KV_CONFIG, "TopicA", "broker-a:4", NULL,
                             0), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(kv_call(s, addr, RMQ__REQUEST_CODE__PUT_KV_CONFIG, "Gone", "x", NULL, 0),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(kv_call(s, addr, RMQ__REQUEST_CODE__DELETE_KV_CONFIG, "Gone", NULL, NULL, 0),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(kv_call(s, addr, RMQ__REQUEST_CODE__DELETE_KV_CONFIG, "Gone", NULL, NULL, 0),
                     RMQ__STATUS__QUERY_NOT_FOUND);
    rmq_sync_free(s);
    ns_stop_ok(&ns);

    /* a restarted name server has the KV config, and marks the order topic */
    ns_start(&ns, "ns", extra, addr, sizeof addr);
    s = rmq_sync_new(&opts);
    ck_assert_int_eq(kv_call(s, addr, RMQ__REQUEST_CODE__GET_KV_CONFIG, "TopicA", NULL, value,
                             sizeof value), RMQ__STATUS__SUCCESS);
    ck_assert_str_eq(value, "broker-a:4");
    ck_assert_int_eq(kv_call(s, addr, RMQ__REQUEST_CODE__GET_KV_CONFIG, "Gone", NULL, value,
                             sizeof value), RMQ__STATUS__QUERY_NOT_FOUND);
    rmq_sync_free(s);
    broker_open(&ma);
    ck_assert_int_eq(broker_register(&ma, addr, NULL, NULL), RMQ__STATUS__SUCCESS);
    admin(&res, "topicRoute", addr, "-t", "TopicA");
    ck_assert_int_eq(res.status, 0);
    ck_assert_ptr_nonnull(strstr(res.out, "order topic: yes"));
    hn_result_free(&res);
    broker_close(&ma);
    ns_stop_ok(&ns);
    hn_case_passed();
}
END_TEST

/* Sends WIPE_ or ADD_WRITE_PERM_OF_BROKER for broker_name; returns the
 * topic count the answer names (-1 on a non-success status). */
static int write_perm_call(rmq_sync_t *s, const char *ns, int code, const char *broker_name)
{
    Rmq__BrokerPermRequest bp = RMQ__BROKER_PERM_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    int count = -1;

    bp.broker_name = (char *)broker_name;
    req.code = code;
    req.header_case = RMQ__COMMAND__HEADER_BROKER_PERM;
    req.broker_perm = &bp;
    ck_assert_int_eq(rmq_sync_call(s, ns, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    if (resp.cmd->status == RMQ__STATUS__SUCCESS) {
        ck_assert_int_eq(resp.cmd->header_case, RMQ__COMMAND__HEADER_BROKER_PERM_RESP);
        count = resp.cmd->broker_perm_resp->topic_count;
    }
    rmq_frame_clear(&resp);
    return count;
}

START_TEST(test_write_perm)
{
    hn_daemon_t ns;
    char addr[64];
    rmq_client_opts_t opts = { 0 };
    fake_broker_t ma = master_a();

    ns_start(&ns, "ns", NULL, addr, sizeof addr);
    broker_open(&ma);
    ck_assert_int_eq(broker_register(&ma, addr, NULL, NULL), RMQ__STATUS__SUCCESS);
    rmq_sync_t *s = rmq_sync_new(&opts);
    ck_assert_int_eq(write_perm_call(s, addr, RMQ__REQUEST_CODE__WIPE_WRITE_PERM_OF_BROKER,
                                     "broker-a"), 2);
    route_probe_t wiped = { addr, "TopicA", "broker-a", "R--", 1 };
    ck_assert(route_matches(&wiped));
    /* a re-registration with the same data version keeps the wipe */
    ck_assert_int_eq(broker_register(&ma, addr, NULL, NULL), RMQ__STATUS__SUCCESS);
    ck_assert(route_matches(&wiped));
    ck_assert_int_eq(write_perm_call(s, addr, RMQ__REQUEST_CODE__ADD_WRITE_PERM_OF_BROKER,
                                     "broker-a"), 2);
    route_probe_t writable = { addr, "Shared", "broker-a", "RW-", 1 };
    ck_assert(route_matches(&writable));
    ck_assert_int_eq(write_perm_call(s, addr, RMQ__REQUEST_CODE__WIPE_WRITE_PERM_OF_BROKER,
                                     "broker-x"), 0);
    rmq_sync_free(s);
    broker_close(&ma);
    ns_stop_ok(&ns);
    hn_case_passed();
}
END_TEST

static Suite *namesrv_suite(void)
{
    Suite *s = suite_create("namesrv");
    TCase *tc = tcase_create("process");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_routes_via_mqadmin);
    tcase_add_test(tc, test_bad_requests);
    tcase_add_test(tc, test_unregister_and_stale_unregister);
    tcase_add_test(tc, test_closed_connection_leaves_route);
    tcase_add_test(tc, test_silent_broker_expires);
    tcase_add_test(tc, test_two_name_servers);
    tcase_add_test(tc, test_mqadmin_errors);
    tcase_add_test(tc, test_config_print_and_errors);
    tcase_add_test(tc, test_signals_stop_cleanly);
    tcase_add_test(tc, test_kv_config_persists);
    tcase_add_test(tc, test_write_perm);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(namesrv_suite());
}
