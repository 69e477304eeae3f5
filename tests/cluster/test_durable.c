/* test_durable.c: every message the broker stores itself is acknowledged
 * only once it is durable as configured. On a SYNC_MASTER + SYNC_FLUSH
 * master with its slave frozen, a consumer's send-back (to the dead-letter
 * queue) and a committed transaction are not answered SUCCESS (they wait
 * for the slave, then FLUSH_SLAVE_TIMEOUT); with the slave running they are
 * answered SUCCESS, the master is killed with kill -9 right after, and both
 * messages are read back from the slave. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "wire.h"

#define TOPIC "DurableTopic"
#define GROUP "durable_group"
#define DLQ "%DLQ%durable_group"
#define PRODUCER "durable_producer"
#define CONNECT_WAIT_MS 15000

static const char *case_dir;

static void setup(void)
{
    case_dir = hn_case_begin("durable");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

/* Starts mqbroker `name` over case_dir/name. */
static void broker_start(hn_daemon_t *d, const char *name, const char *extra, char *addr, size_t len)
{
    char props[2048];
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/%s\n"
             "mapedFileSizeCommitLog=16777216\nsyncFlushTimeout=1500\n%s",
             case_dir, name, extra);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", name, props, addr, len), 0);
}

static long long runtime_ll(const char *addr, const char *key)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    char v[160];
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (wire_call(addr, &req, NULL, 0, &resp) != RMQ__STATUS__SUCCESS)
        return -1;
    wire_runtime_value(&resp, key, v, sizeof v);
    rmq_frame_clear(&resp);
    return v[0] ? atoll(v) : -1;
}

static int slave_connected(void *arg)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    char v[32];
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (wire_call(arg, &req, NULL, 0, &resp) != RMQ__STATUS__SUCCESS)
        return 0;
    wire_runtime_value(&resp, "haConnected", v, sizeof v);
    rmq_frame_clear(&resp);
    return strcmp(v, "true") == 0;
}

typedef struct pair {
    const char *master, *slave;
} pair_t;

static int caught_up(void *arg)
{
    pair_t *p = arg;
    long long m = runtime_ll(p->master, "commitLogMaxOffset");
    return m > 0 && m == runtime_ll(p->slave, "commitLogMaxOffset");
}

static int create_topic(const char *addr, const char *topic)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, topic, 1);
    return wire_call(addr, &req, NULL, 0, NULL);
}

/* Sends body to TOPIC queue 0 with props; *phys gets its commit-log offset. */
static void send_one(const char *addr, const char *body, char *props, long long *phys)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    rmq_frame_t resp = { 0 };
    wire_send_hdr(&req, &h, PRODUCER, TOPIC, 0, props);
    ck_assert_int_eq(wire_call(addr, &req, body, strlen(body), &resp), RMQ__STATUS__SUCCESS);
    const char *id = resp.cmd->send_resp->msg_id;
    ck_assert_uint_eq(strlen(id), 32);
    *phys = strtoll(id + 16, NULL, 16);
    rmq_frame_clear(&resp);
}

/* CONSUMER_SEND_MSG_BACK of the message at phys straight to the DLQ. */
static int send_back(const char *addr, long long phys)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__ConsumerSendMsgBackRequest h = RMQ__CONSUMER_SEND_MSG_BACK_REQUEST__INIT;
    h.offset = phys;
    h.group = (char *)GROUP;
    h.delay_level = -1;
    h.origin_topic = (char *)TOPIC;
    req.code = RMQ__REQUEST_CODE__CONSUMER_SEND_MSG_BACK;
    req.header_case = RMQ__COMMAND__HEADER_SEND_BACK;
    req.send_back = &h;
    return wire_call(addr, &req, NULL, 0, NULL);
}

START_TEST(test_sendback_and_commit_durable_on_slave)
{
    hn_daemon_t master, slave;
    char maddr[64], saddr[64], extra[256];
    char half_props[] = "TRAN_MSG\001true\002PGROUP\001" PRODUCER "\002";
    long long a, h1, c, h2;
    broker_start(&master, "master", "brokerRole=SYNC_MASTER\nflushDiskType=SYNC_FLUSH\n", maddr, sizeof maddr);
    snprintf(extra, sizeof extra, "brokerRole=SLAVE\nbrokerId=1\nhaMasterAddress=127.0.0.1:%d\n",
             hn_daemon_port(&master, "haListenPort"));
    broker_start(&slave, "slave", extra, saddr, sizeof saddr);
    ck_assert_msg(hn_wait_until(slave_connected, saddr, CONNECT_WAIT_MS), "slave never connected");
    ck_assert_int_eq(create_topic(maddr, TOPIC), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(create_topic(saddr, TOPIC), RMQ__STATUS__SUCCESS);
    send_one(maddr, "A", (char *)"", &a);
    send_one(maddr, "H1", half_props, &h1);

    /* The slave frozen: neither is acknowledged before a slave has it. */
    ck_assert_int_eq(kill(slave.pid, SIGSTOP), 0);
    ck_assert_int_eq(send_back(maddr, a), RMQ__STATUS__FLUSH_SLAVE_TIMEOUT);
    ck_assert_int_eq(wire_commit(maddr, PRODUCER, h1), RMQ__STATUS__FLUSH_SLAVE_TIMEOUT);
    ck_assert_int_eq(kill(slave.pid, SIGCONT), 0);
    pair_t p = { maddr, saddr };
    ck_assert_msg(hn_wait_until(caught_up, &p, 10000), "slave did not catch up");
    ck_assert_int_eq(create_topic(saddr, DLQ), RMQ__STATUS__SUCCESS);

    /* Acknowledged, then kill -9: both are on the slave. */
    send_one(maddr, "C", (char *)"", &c);
    send_one(maddr, "H2", half_props, &h2);
    ck_assert_int_eq(send_back(maddr, c), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(wire_commit(maddr, PRODUCER, h2), RMQ__STATUS__SUCCESS);
    hn_daemon_kill9(&master);
    wire_want_body_t back = { saddr, GROUP, DLQ, "C", 0 }, committed = { saddr, GROUP, TOPIC, "H2", 0 };
    ck_assert_msg(hn_wait_until(wire_queue_has, &back, 5000), "the acknowledged send-back is not on the slave");
    ck_assert_msg(hn_wait_until(wire_queue_has, &committed, 5000), "the acknowledged commit is not on the slave");
    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *durable_suite(void)
{
    Suite *s = suite_create("durable");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_sendback_and_commit_durable_on_slave);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(durable_suite());
}
