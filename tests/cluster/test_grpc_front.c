/* test_grpc_front.c: the RocketMQ 5 gRPC fronts on real daemons (issue
 * 30): a name server and a broker on loopback, a writable topic and a
 * read-only one made with mqadmin, then grpc_front_probe.py (gRPC core,
 * python3-grpcio: an independent client) checks QueryRoute on both
 * daemons, the producer's RPCs on the broker and their error statuses
 * (unknown topic, bad bytes, no client id, no permission, bad delay,
 * unknown transaction). */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "harness.h"

#define TOPIC "GrpcFrontTopic"
#define RO_TOPIC "GrpcReadOnlyTopic"
#define CMD_TIMEOUT_MS 30000

static const char *case_dir;
static const char *probe_script;    /* grpc_front_probe.py (argv[1]) */

static void setup(void)
{
    case_dir = hn_case_begin("grpc_front");
}

static void teardown(void)
{
    hn_case_end();
}

/* Runs mqadmin with the NULL-terminated argv tail; requires exit 0. */
static void admin_ok(const char *const *tail)
{
    char bin[PATH_MAX];
    const char *argv[24] = { hn_build_path("tools/mqadmin", bin, sizeof bin) };
    size_t n = 1;
    for (; tail[n - 1]; n++)
        argv[n] = tail[n - 1];
    argv[n] = NULL;
    hn_result_t res;
    ck_assert_int_eq(hn_run(argv, CMD_TIMEOUT_MS, &res), 0);
    ck_assert_msg(res.status == 0, "mqadmin %s: exit %d: %s", tail[0], res.status, res.err);
    hn_result_free(&res);
}

typedef struct route_wait {
    const char *ns;
    const char *topic;
} route_wait_t;

/* 1 once the name server routes the topic to broker-a. */
static int topic_routed(void *arg)
{
    route_wait_t *w = arg;
    char bin[PATH_MAX];
    const char *argv[] = { hn_build_path("tools/mqadmin", bin, sizeof bin), "topicRoute", "-n", w->ns, "-t",
                           w->topic, NULL };
    hn_result_t res;
    int ok = hn_run(argv, CMD_TIMEOUT_MS, &res) == 0 && res.status == 0 && strstr(res.out, "broker-a") != NULL;
    hn_result_free(&res);
    return ok;
}

static void create_topic(const char *ns_addr, const char *bk_addr, const char *topic, const char *perm)
{
    const char *update[] = { "updateTopic", "-n", ns_addr, "-b", bk_addr, "-t", topic, "-r", "4", "-w", "4", "-p", perm, NULL };
    admin_ok(update);
    route_wait_t rw = { ns_addr, topic };
    ck_assert_msg(hn_wait_until(topic_routed, &rw, 40000), "topic %s never routed", topic);
}

START_TEST(test_grpc_front_producer)
{
    hn_daemon_t ns, broker;
    char props[4096], ns_addr[64], b_addr[64];

    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/broker\n"
             "namesrvAddr=%s\nmapedFileSizeCommitLog=1048576\nmaxMessageSize=262144\nbrokerRole=ASYNC_MASTER\n"
             "autoCreateTopicEnable=false\n",
             case_dir, ns_addr);
    ck_assert_int_eq(hn_daemon_start_conf(&broker, case_dir, "broker/mqbroker", "broker", props, b_addr,
                                          sizeof b_addr), 0);
    create_topic(ns_addr, b_addr, TOPIC, "6");
    create_topic(ns_addr, b_addr, RO_TOPIC, "4");

    const char *argv[] = { "/usr/bin/python3", probe_script, ns_addr, b_addr, TOPIC, RO_TOPIC, NULL };
    hn_result_t res;
    ck_assert_int_eq(hn_run(argv, 120000, &res), 0);
    ck_assert_msg(res.status == 0, "grpc_front_probe.py: exit %d\n%s%s", res.status, res.out ? res.out : "",
                  res.err ? res.err : "");
    hn_result_free(&res);

    ck_assert_int_eq(hn_daemon_stop(&broker, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_grpc_front PATH/grpc_front_probe.py\n");
        return 1;
    }
    probe_script = argv[1];
    Suite *s = suite_create("grpc_front");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_grpc_front_producer);
    suite_add_tcase(s, tc);
    return hn_run_suite(s);
}
