/* test_metasync.c: a slave's copy of its master's metadata, with real
 * mqnamesrv / mqbroker processes on loopback (one SYNC_MASTER and its
 * slave).
 *
 * new_topic_failover: a topic created on the master reaches the slave with
 * the messages and its attributes (message.type FIFO; the periodic sync is
 * an hour away): 1,000 messages sent,
 * the master killed with SIGKILL at once, `mqadmin topicStatus` shows all
 * 1,000 on the slave and a push consumer reads them all through it.
 *
 * delete_recreate: a topic deleted on the master is deleted on the slave
 * with its queues; after it is created again and new messages are sent,
 * a consumer failing over to the slave reads exactly the new ones.
 *
 * offsets_mirror: a consumer's rewind on the master stays (the slave does
 * not push its older, higher copy back); an offset committed on the slave
 * while the master was down reaches the master when it returns.
 *
 * pull_without_config: a slave that holds a topic's records but lost its
 * config (and cannot reach the master) still serves pulls of them. */
#include <check.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "probe.h"
#include "rmq/rmq.h"
#include "rmq_rpc.h"
#include "rmq_time.h"
#include "wire.h"

#define QUEUES WIRE_QUEUES
#define MAX_MSGS 2000
#define WAIT_MS 60000

static const char *case_dir;
static char ns_addr[64];

static void setup(void)
{
    case_dir = hn_case_begin("metasync");
}

static void teardown(void)
{
    hn_case_end();
}

/* ---- daemons ------------------------------------------------------------------ */

static void ns_start(hn_daemon_t *d)
{
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
}

/* A broker of broker-a (file and log named `name`) on ports port / ha_port
 * (0: ephemeral) with extra properties; its address into addr. */
static void broker_start(hn_daemon_t *d, const char *name, int port, int ha_port, const char *extra,
                         char *addr, size_t len)
{
    char props[2048];
    snprintf(props, sizeof props,
             "brokerClusterName=MetaCluster\nbrokerName=broker-a\nlistenPort=%d\nhaListenPort=%d\n"
             "storePathRootDir=%s/store-%s\nmapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\n"
             "namesrvAddr=%s\nflushConsumerOffsetInterval=1000\nregisterNameServerPeriod=2000\n%s",
             port, ha_port, case_dir, name, ns_addr, extra);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", name, props, addr, len), 0);
}

#define MASTER_PROPS "brokerId=0\nbrokerRole=SYNC_MASTER\nflushDiskType=ASYNC_FLUSH\n"

/* The master, and its slave with slaveSyncInterval sync_ms; waits for the HA link. */
static void pair_start(hn_daemon_t *master, char *maddr, hn_daemon_t *slave, char *saddr, int sync_ms);

/* ---- blocking requests ------------------------------------------------------- */

static int call(const char *addr, Rmq__Command *req, rmq_frame_t *keep)
{
    return wire_call(addr, req, NULL, 0, keep);
}

static int create_topic(const char *addr, const char *topic)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, topic, QUEUES);
    return call(addr, &req, NULL);
}

/* CREATE_AND_UPDATE_TOPIC of topic with the attribute modification attrs. */
static int create_topic_attrs(const char *addr, const char *topic, const char *attrs)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, topic, QUEUES);
    tc.attributes = (char *)attrs;
    return call(addr, &req, NULL);
}

/* topic's attributes in addr's GET_ALL_TOPIC_CONFIG into out ("" when absent). */
static void topic_attrs(const char *addr, const char *topic, char *out, size_t len)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = {0};
    out[0] = '\0';
    req.code = RMQ__REQUEST_CODE__GET_ALL_TOPIC_CONFIG;
    if (call(addr, &req, &resp) == RMQ__STATUS__SUCCESS && resp.cmd->topic_config_table)
        for (size_t i = 0; i < resp.cmd->topic_config_table->n_topics; i++) {
            const Rmq__TopicConfig *tc = resp.cmd->topic_config_table->topics[i];
            if (strcmp(tc->topic_name, topic) == 0)
                snprintf(out, len, "%s", tc->attributes);
        }
    if (resp.cmd)
        rmq_frame_clear(&resp);
}

static int delete_topic(const char *addr, const char *topic)
{
    Rmq__Command req;
    Rmq__TopicRequest tr;
    wire_topic_query(&req, &tr, RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER, topic);
    return call(addr, &req, NULL);
}

static void runtime_get(const char *addr, const char *key, char *out, size_t len)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = {0};
    out[0] = '\0';
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (call(addr, &req, &resp) == RMQ__STATUS__SUCCESS)
        wire_runtime_value(&resp, key, out, len);
    if (resp.cmd)
        rmq_frame_clear(&resp);
}

static int slave_connected(void *arg)
{
    char v[32];
    runtime_get(arg, "haConnected", v, sizeof v);
    return strcmp(v, "true") == 0;
}

static void pair_start(hn_daemon_t *master, char *maddr, hn_daemon_t *slave, char *saddr, int sync_ms)
{
    char extra[256];
    broker_start(master, "master", 0, 0, MASTER_PROPS, maddr, 64);
    snprintf(extra, sizeof extra, "brokerId=1\nbrokerRole=SLAVE\nslaveSyncInterval=%d\n", sync_ms);
    broker_start(slave, "slave", 0, 0, extra, saddr, 64);
    ck_assert_msg(hn_wait_until(slave_connected, saddr, 30000), "slave never connected");
}

/* UPDATE_CONSUMER_OFFSET (or QUERY_CONSUMER_OFFSET when off < 0) of group on
 * topic queue q at addr: the status; *out gets a queried offset (-1: none). */
static int offset_call(const char *addr, const char *topic, const char *group, int q, long long off,
                       long long *out)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__ConsumerOffsetRequest h = RMQ__CONSUMER_OFFSET_REQUEST__INIT;
    rmq_frame_t resp = {0};
    h.consumer_group = (char *)group;
    h.topic = (char *)topic;
    h.queue_id = q;
    h.commit_offset = off;
    req.code = off < 0 ? RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET : RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET;
    req.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
    req.consumer_offset = &h;
    int st = call(addr, &req, &resp);
    if (out)
        *out = st == RMQ__STATUS__SUCCESS && resp.cmd->header_case == RMQ__COMMAND__HEADER_OFFSET_RESP
                   ? resp.cmd->offset_resp->offset : -1;
    if (resp.cmd)
        rmq_frame_clear(&resp);
    return st;
}

static long long committed(const char *addr, const char *topic, const char *group, int q)
{
    long long off;
    offset_call(addr, topic, group, q, -1, &off);
    return off;
}

/* ---- sending and consuming --------------------------------------------------- */

typedef struct sent {
    _Atomic long ok, failed;
    long want;
} sent_t;

static void sent_one(const rmq_send_result_t *res, void *arg)
{
    sent_t *s = arg;
    if (res->error.err == RMQ_OK && res->status == RMQ_SEND_OK)
        atomic_fetch_add(&s->ok, 1);
    else
        atomic_fetch_add(&s->failed, 1);
}

static int all_sent(void *arg)
{
    sent_t *s = arg;
    return atomic_load(&s->ok) + atomic_load(&s->failed) >= s->want;
}

/* Sends n messages "<prefix>-<i>" to topic; asserts every one is SEND_OK. */
static void send_n(const char *topic, const char *prefix, long n)
{
    rmq_error_t e;
    rmq_producer_opts_t po = {.group = "meta_producer", .namesrv = ns_addr, .max_in_flight = 256};
    rmq_producer_t *p = rmq_producer_new(&po, &e);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(rmq_producer_start(p), RMQ_OK);
    sent_t s = {.want = n};
    char body[64];
    for (long i = 0; i < n; i++) {
        int len = snprintf(body, sizeof body, "%s-%ld", prefix, i);
        rmq_message_t m = {.topic = topic, .body = body, .body_len = (size_t)len};
        ck_assert_int_eq(rmq_producer_send_async(p, &m, 10000, sent_one, &s), RMQ_OK);
    }
    ck_assert(hn_wait_until(all_sent, &s, WAIT_MS));
    rmq_producer_free(p);
    ck_assert_msg(atomic_load(&s.failed) == 0, "%ld of %ld sends failed", atomic_load(&s.failed), n);
}

/* What a consumer got: per index of "new-<i>" (or "<i>" bodies), and the rest. */
typedef struct got {
    const char *prefix;            /* bodies "<prefix>-<i>" count; others are foreign */
    _Atomic uint32_t count[MAX_MSGS];
    _Atomic long distinct, foreign;
} got_t;

static rmq_consume_result_t on_msg(const rmq_message_ext_t *msg, void *arg)
{
    got_t *g = arg;
    char buf[64];
    size_t n = msg->body_len < sizeof buf - 1 ? msg->body_len : sizeof buf - 1, plen = strlen(g->prefix);
    memcpy(buf, msg->body, n);
    buf[n] = '\0';
    char *end;
    long i = n > plen + 1 && strncmp(buf, g->prefix, plen) == 0 && buf[plen] == '-'
                 ? strtol(buf + plen + 1, &end, 10) : -1;
    if (i < 0 || i >= MAX_MSGS || *end)
        atomic_fetch_add(&g->foreign, 1);
    else if (atomic_fetch_add(&g->count[i], 1) == 0)
        atomic_fetch_add(&g->distinct, 1);
    return RMQ_CONSUME_SUCCESS;
}

static rmq_push_consumer_t *consumer_start(const char *topic, const char *group, got_t *g)
{
    rmq_error_t e;
    rmq_push_consumer_opts_t co = {
        .group = group, .namesrv = ns_addr, .on_message = on_msg, .arg = g,
        .consume_from = RMQ_CONSUME_FROM_FIRST, .consume_threads = 2,
        .commit_interval_ms = 500, .rebalance_interval_ms = 1000, .suspend_ms = 1000,
        .pull_timeout_ms = 3000,
    };
    rmq_push_consumer_t *c = rmq_push_consumer_new(&co, &e);
    ck_assert_msg(c != NULL, "%s", e.text);
    ck_assert_int_eq(rmq_push_consumer_subscribe(c, topic, "*"), RMQ_OK);
    ck_assert_int_eq(rmq_push_consumer_start(c), RMQ_OK);
    return c;
}

typedef struct at_least {
    _Atomic long *v;
    long n;
} at_least_t;

static int reached(void *arg)
{
    at_least_t *a = arg;
    return atomic_load(a->v) >= a->n;
}

/* Consumes topic as a new group until want distinct "<prefix>-<i>" came
 * (asserted), then 3 s more; asserts nothing else came. */
static void consume_exactly(const char *topic, const char *group, const char *prefix, long want)
{
    static got_t g;
    memset(&g, 0, sizeof g);
    g.prefix = prefix;
    rmq_push_consumer_t *c = consumer_start(topic, group, &g);
    at_least_t all = {&g.distinct, want};
    int ok = hn_wait_until(reached, &all, WAIT_MS);
    rmq_sleep_ms(3000);
    rmq_push_consumer_free(c);
    ck_assert_msg(ok, "consumer read %ld of %ld %s messages (and %ld others)", atomic_load(&g.distinct),
                  want, prefix, atomic_load(&g.foreign));
    ck_assert_int_eq(atomic_load(&g.distinct), want);
    ck_assert_msg(atomic_load(&g.foreign) == 0, "consumer read %ld messages that are not %s-*",
                  atomic_load(&g.foreign), prefix);
}

/* ---- mqadmin topicStatus ------------------------------------------------------ */

typedef struct status_probe {
    const char *topic;
    const char *addr;              /* rows of this broker address count */
    long long total;               /* sum of their MAX_OFFSET */
    char out[4096];
} status_probe_t;

/* Runs mqadmin topicStatus; 1 once it succeeds with rows of p->addr. */
static int topic_status(void *arg)
{
    status_probe_t *p = arg;
    char bin[4096];
    const char *argv[] = {hn_build_path("tools/mqadmin", bin, sizeof bin), "topicStatus", "-n", ns_addr,
                          "-t", p->topic, NULL};
    hn_result_t res;
    p->total = -1;
    if (hn_run(argv, 20000, &res) != 0)
        return 0;
    snprintf(p->out, sizeof p->out, "%s%s", res.out ? res.out : "", res.err ? res.err : "");
    int rows = 0;
    long long total = 0;
    char *save = NULL;
    for (char *line = strtok_r(res.out, "\n", &save); res.status == 0 && line;
         line = strtok_r(NULL, "\n", &save)) {
        char *tok[8], *inner = NULL;
        int nt = 0;
        for (char *t = strtok_r(line, " \t", &inner); t && nt < 8; t = strtok_r(NULL, " \t", &inner))
            tok[nt++] = t;
        int at = nt > 2 && strcmp(tok[2], "(slave)") == 0 ? 3 : 2;   /* QUEUE MIN MAX follow ADDR */
        if (nt >= at + 3 && strcmp(tok[1], p->addr) == 0) {
            rows++;
            total += atoll(tok[at + 2]);
        }
    }
    hn_result_free(&res);
    if (rows == QUEUES)
        p->total = total;
    return rows == QUEUES;
}

/* ---- cases ------------------------------------------------------------------- */

START_TEST(test_new_topic_failover)
{
    hn_daemon_t ns, master, slave;
    char maddr[64], saddr[64];
    const long n = 1000;
    ns_start(&ns);
    pair_start(&master, maddr, &slave, saddr, 3600000);
    ck_assert_int_eq(create_topic_attrs(maddr, "NewTopic", "+message.type=FIFO"), RMQ__STATUS__SUCCESS);
    ck_assert(probe_wait_route_queues(ns_addr, "NewTopic", QUEUES, 30000));
    send_n("NewTopic", "m", n);
    char attrs[128];
    topic_attrs(saddr, "NewTopic", attrs, sizeof attrs);
    ck_assert_str_eq(attrs, "message.type=FIFO");
    long long t_kill = hn_now_ms();
    hn_daemon_kill9(&master);
    fprintf(stderr, "# new topic: %ld messages acknowledged by the SYNC_MASTER, killed\n", n);

    status_probe_t sp = {.topic = "NewTopic", .addr = saddr};
    ck_assert_msg(hn_wait_until(topic_status, &sp, 30000), "topicStatus never listed the slave:\n%s", sp.out);
    ck_assert_msg(sp.total == n, "topicStatus on the slave: %lld messages, want %ld:\n%s", sp.total, n, sp.out);
    consume_exactly("NewTopic", "meta_new_group", "m", n);
    fprintf(stderr, "# new topic: all %ld read through the slave %lld ms after the kill\n", n,
            hn_now_ms() - t_kill);

    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

typedef struct queue_probe {
    const char *addr, *topic;
    long long want;                /* sum of the max offsets */
} queue_probe_t;

static int queues_hold(void *arg)
{
    queue_probe_t *p = arg;
    long long sum = 0;
    for (int q = 0; q < QUEUES; q++) {
        Rmq__Command req;
        Rmq__QueueRequest h;
        rmq_frame_t resp = {0};
        wire_max_offset_request(&req, &h, p->topic, q);
        if (call(p->addr, &req, &resp) == RMQ__STATUS__SUCCESS)
            sum += wire_resp_offset(&resp);
        if (resp.cmd)
            rmq_frame_clear(&resp);
    }
    return sum == p->want;
}

START_TEST(test_delete_recreate)
{
    hn_daemon_t ns, master, slave;
    char maddr[64], saddr[64];
    ns_start(&ns);
    pair_start(&master, maddr, &slave, saddr, 500);
    ck_assert_int_eq(create_topic(maddr, "AgainTopic"), RMQ__STATUS__SUCCESS);
    ck_assert(probe_wait_route_queues(ns_addr, "AgainTopic", QUEUES, 30000));
    send_n("AgainTopic", "old", 400);
    queue_probe_t held = {saddr, "AgainTopic", 400};
    ck_assert_msg(hn_wait_until(queues_hold, &held, 30000), "slave never held the 400 old messages");

    ck_assert_int_eq(delete_topic(maddr, "AgainTopic"), RMQ__STATUS__SUCCESS);
    rmq_sleep_ms(1500);                /* past the slave's sync interval */
    ck_assert_int_eq(create_topic(maddr, "AgainTopic"), RMQ__STATUS__SUCCESS);
    ck_assert(probe_wait_route_queues(ns_addr, "AgainTopic", QUEUES, 30000));
    send_n("AgainTopic", "new", 100);
    hn_daemon_kill9(&master);

    queue_probe_t fresh = {saddr, "AgainTopic", 100};
    ck_assert_msg(hn_wait_until(queues_hold, &fresh, 10000),
                  "the slave's queues of the recreated topic do not hold exactly the 100 new messages");
    consume_exactly("AgainTopic", "meta_again_group", "new", 100);

    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

typedef struct offset_probe {
    const char *addr;
    long long want;
} offset_probe_t;

static int offset_is(void *arg)
{
    offset_probe_t *p = arg;
    return committed(p->addr, "OffTopic", "meta_off_group", 0) == p->want;
}

START_TEST(test_offsets_mirror)
{
    hn_daemon_t ns, master, slave;
    char maddr[64], saddr[64];
    ns_start(&ns);
    pair_start(&master, maddr, &slave, saddr, 300);
    int mport = hn_daemon_port(&master, "listenPort"), mha = hn_daemon_port(&master, "haListenPort");
    ck_assert_int_eq(create_topic(maddr, "OffTopic"), RMQ__STATUS__SUCCESS);
    ck_assert(probe_wait_route_queues(ns_addr, "OffTopic", QUEUES, 30000));
    send_n("OffTopic", "o", 800);

    /* The consumer commits 100, then rewinds to 10 on the master: 10 stays. */
    ck_assert_int_eq(offset_call(maddr, "OffTopic", "meta_off_group", 0, 100, NULL), RMQ__STATUS__SUCCESS);
    offset_probe_t on_slave = {saddr, 100};
    ck_assert_msg(hn_wait_until(offset_is, &on_slave, 10000), "the slave never mirrored offset 100");
    ck_assert_int_eq(offset_call(maddr, "OffTopic", "meta_off_group", 0, 10, NULL), RMQ__STATUS__SUCCESS);
    rmq_sleep_ms(2000);                /* several sync intervals */
    ck_assert_int_eq(committed(maddr, "OffTopic", "meta_off_group", 0), 10);
    on_slave.want = 10;
    ck_assert_msg(hn_wait_until(offset_is, &on_slave, 5000), "the slave never mirrored the rewind to 10");

    /* Master down: the consumer commits 150 on the slave; the master gets it back. */
    hn_daemon_kill9(&master);
    ck_assert_int_eq(offset_call(saddr, "OffTopic", "meta_off_group", 0, 150, NULL), RMQ__STATUS__SUCCESS);
    rmq_sleep_ms(1000);
    broker_start(&master, "master", mport, mha, MASTER_PROPS, maddr, sizeof maddr);
    ck_assert_msg(hn_wait_until(slave_connected, saddr, 30000), "slave never reconnected");
    offset_probe_t on_master = {maddr, 150};
    ck_assert_msg(hn_wait_until(offset_is, &on_master, 15000), "the master never got the slave's commit of 150 "
                  "(it has %lld)", committed(maddr, "OffTopic", "meta_off_group", 0));
    rmq_sleep_ms(1500);
    ck_assert_int_eq(committed(maddr, "OffTopic", "meta_off_group", 0), 150);

    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

START_TEST(test_pull_without_config)
{
    static const wire_flow_t flow = {.topic = "HeldTopic", .producer_group = "meta_producer",
                                     .consumer_group = "meta_held_group"};
    hn_daemon_t ns, master, slave;
    char maddr[64], saddr[64], path[4096];
    wire_sender_t sd;
    ns_start(&ns);
    pair_start(&master, maddr, &slave, saddr, 3600000);
    ck_assert_int_eq(create_topic(maddr, flow.topic), RMQ__STATUS__SUCCESS);
    wire_send_all(maddr, &sd, &flow, 200, 32);
    ck_assert_int_eq(sd.acked, 200);
    queue_probe_t held = {saddr, flow.topic, 200};
    ck_assert_msg(hn_wait_until(queues_hold, &held, 30000), "slave never held the 200 messages");

    /* The slave comes back without its topic table while the master is gone. */
    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    hn_daemon_kill9(&master);
    snprintf(path, sizeof path, "%s/store-slave/config/topics.pb", case_dir);
    ck_assert_int_eq(unlink(path), 0);
    broker_start(&slave, "slave", 0, 0, "brokerId=1\nbrokerRole=SLAVE\nslaveSyncInterval=3600000\n", saddr,
                 sizeof saddr);
    ck_assert_int_eq(wire_assert_acked_on(saddr, &flow, sd.acked_map, 200), 200);
    wire_sender_deinit(&sd);

    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *metasync_suite(void)
{
    Suite *s = suite_create("metasync");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_new_topic_failover);
    tcase_add_test(tc, test_delete_recreate);
    tcase_add_test(tc, test_offsets_mirror);
    tcase_add_test(tc, test_pull_without_config);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(metasync_suite());
}
