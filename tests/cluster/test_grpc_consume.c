/* test_grpc_consume.c: RocketMQ 5's consumer RPCs on a real broker. A name
 * server and a broker (autoCreateSubscriptionGroup=false) run on loopback;
 * the topic is created with mqadmin and the group over remoting
 * (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP); grpc_consume_probe.py (Debian's
 * python3-grpcio: an independent gRPC client) then calls ReceiveMessage,
 * AckMessage, ChangeInvisibleDuration and ForwardMessageToDeadLetterQueue
 * on the broker's port, on messages it sends with mqadmin: bad bytes,
 * unknown topic and group, a SQL92 filter, bad receipt handles, long
 * polling, a receive cancelled mid poll (it takes nothing), the stream's
 * layout, the TAG filter, ack, change of invisible time with redelivery at
 * attempt 2, and the DLQ on request; a FIFO group (consumeMessageOrderly):
 * its assignments per queue, in-order batches blocking the queue until
 * acked, the same attempt id replayed, an unacked message again in place. */
#include <check.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "remwire.h"

#define TOPIC "GrpcConsumeTopic"
#define GROUP "grpc_consume_group"
#define FIFO_TOPIC "GrpcFifoTopic"
#define FIFO_GROUP "grpc_fifo_group"
#define REMOTING_UPDATE_AND_CREATE_SUBSCRIPTIONGROUP 200

static const char *probe_script;   /* grpc_consume_probe.py (argv[1]) */
static const char *case_dir;

static void setup(void)
{
    case_dir = hn_case_begin("grpc_consume");
}

static void teardown(void)
{
    hn_case_end();
}

/* Creates group (orderly: consumeMessageOrderly) on the broker at addr
 * over remoting. */
static void create_group(const char *addr, const char *group, int orderly)
{
    char cfg[512];
    snprintf(cfg, sizeof cfg, "{\"groupName\":\"%s\",\"consumeEnable\":true,\"retryMaxTimes\":16,"
             "\"retryQueueNums\":1,\"brokerId\":0,\"whichBrokerWhenConsumeSlowly\":1,\"consumeMessageOrderly\":%s}",
             group, orderly ? "true" : "false");
    int fd = rem_connect(addr);
    rem_resp_t r;
    rem_send(fd, RMQ_REMOTING_JSON, REMOTING_UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, 1, 0, NULL, 0, cfg, strlen(cfg));
    ck_assert_int_eq(rem_recv(fd, &r, 20000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    close(fd);
}

/* Runs argv; exit status 0 required, output shown either way. */
static void run_ok(const char *const *argv, int timeout_ms)
{
    hn_result_t res;
    ck_assert_int_eq(hn_run(argv, timeout_ms, &res), 0);
    fprintf(stderr, "%s%s", res.out ? res.out : "", res.err ? res.err : "");
    ck_assert_msg(res.status == 0, "%s: exit %d\n%s%s", argv[1], res.status, res.out ? res.out : "",
                  res.err ? res.err : "");
    hn_result_free(&res);
}

START_TEST(test_grpc_consume_rpcs)
{
    hn_daemon_t ns, broker;
    char props[8192], ns_addr[64], b_addr[64], mqadmin[PATH_MAX];

    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/broker\n"
             "namesrvAddr=%s\nmapedFileSizeCommitLog=1048576\nmaxMessageSize=262144\nbrokerRole=ASYNC_MASTER\n"
             "autoCreateSubscriptionGroup=false\n", case_dir, ns_addr);
    ck_assert_int_eq(hn_daemon_start_conf(&broker, case_dir, "broker/mqbroker", "broker", props,
                                          b_addr, sizeof b_addr), 0);
    hn_build_path("tools/mqadmin", mqadmin, sizeof mqadmin);
    const char *update[] = { mqadmin, "updateTopic", "-n", ns_addr, "-b", b_addr, "-t", TOPIC, "-r", "2", "-w", "2",
                             NULL };
    run_ok(update, 30000);
    update[7] = FIFO_TOPIC;
    run_ok(update, 30000);
    create_group(b_addr, GROUP, 0);
    create_group(b_addr, FIFO_GROUP, 1);
    const char *probe[] = { "/usr/bin/python3", probe_script, b_addr, mqadmin, ns_addr, TOPIC, GROUP, FIFO_TOPIC,
                            FIFO_GROUP, NULL };
    run_ok(probe, 120000);
    ck_assert_int_eq(hn_daemon_stop(&broker, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_grpc_consume PATH/grpc_consume_probe.py\n");
        return 1;
    }
    probe_script = argv[1];
    Suite *s = suite_create("grpc_consume");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_grpc_consume_rpcs);
    suite_add_tcase(s, tc);
    return hn_run_suite(s);
}
