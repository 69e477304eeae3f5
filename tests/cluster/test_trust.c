/* test_trust.c: what a client names is not trusted (issue 20 item 4). A
 * transactional send carrying its own REAL_TOPIC lands, once committed, in
 * the topic it was sent to; a send to SCHEDULE_TOPIC_XXXX is refused
 * NO_PERMISSION with a remark naming it; a delayed message whose queue no
 * longer exists when it is due (and a direct schedule entry naming queue
 * 77) creates no queue directory in the store. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
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

static Suite *trust_suite(void)
{
    Suite *s = suite_create("trust");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_client_cannot_choose_destination);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return hn_run_suite(trust_suite());
}
