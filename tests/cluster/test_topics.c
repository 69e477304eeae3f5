/* test_topics.c: a broker with many topics. 20,000 topics are created one
 * per UPDATE_AND_CREATE_TOPIC (pipelined on one connection); every one must
 * reach the name server's route table (registration sends what changed,
 * coalesced). The broker is then killed with kill -9: the name server drops
 * its routes when the connection closes; restarted over the same store,
 * the broker must bring every acknowledged topic back into the routes
 * (topic creates are answered only once their change-log record is on
 * disk). A kill -9 in the middle of a burst of creates keeps every create
 * that was answered. A batch of UPDATE_AND_CREATE_TOPIC_LIST, its refusal
 * of a bad entry, and mqadmin updateTopicList over RocketMQ's JSON list are
 * checked too. */
#include <check.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rmq_rpc.h"
#include "topicload.h"
#include "wire.h"

#define TOPICS 20000
#define QUEUES 8
#define WINDOW 64
#define ROUTE_WAIT_MS 60000

static const char *case_dir;

static void setup(void)
{
    case_dir = hn_case_begin("topics");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

static void namesrv_start(hn_daemon_t *d, char *addr, size_t len)
{
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", addr, len), 0);
}

static void broker_start(hn_daemon_t *d, const char *ns_addr, char *addr, size_t len)
{
    char props[1024];
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/broker\n"
             "namesrvAddr=%s\nmapedFileSizeCommitLog=16777216\nautoCreateTopicEnable=false\n",
             case_dir, ns_addr);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", "broker", props, addr, len), 0);
}

typedef struct route_wait {
    const char *ns_addr;
    long from, to;
    tl_result_t res;
} route_wait_t;

/* 1 once every topic of [from, to) has its route with QUEUES queues. */
static int all_routed(void *arg)
{
    route_wait_t *w = arg;
    tl_routes(w->ns_addr, "ScaleTopic", w->from, w->to, QUEUES, WINDOW, &w->res);
    return w->res.failed == 0;
}

/* 1 once both ListTopic0 and ListTopic1 are routed with QUEUES queues. */
static int list_routed(void *arg)
{
    route_wait_t *w = arg;
    tl_routes(w->ns_addr, "ListTopic", w->from, w->to, QUEUES, 2, &w->res);
    return w->res.failed == 0;
}

/* 0 once the route of ScaleTopic0 is gone (the killed broker's connection closed). */
static int route_gone(void *arg)
{
    route_wait_t *w = arg;
    tl_routes(w->ns_addr, "ScaleTopic", 0, 1, QUEUES, 1, &w->res);
    return w->res.first_error == RMQ__STATUS__TOPIC_NOT_EXIST;
}

static void assert_all_routed(const char *ns_addr, const char *when)
{
    route_wait_t w = {ns_addr, 0, TOPICS, {0}};
    long long t0 = hn_now_ms();
    int ok = hn_wait_until(all_routed, &w, ROUTE_WAIT_MS);
    ck_assert_msg(ok, "%s: %ld topics still without a route after %d ms (first error %d)", when,
                  w.res.failed, ROUTE_WAIT_MS, w.res.first_error);
    ck_assert_int_eq(w.res.ok, TOPICS);
    fprintf(stderr, "# %s: %d routes in %lld ms; lookup p50 %llu us p99 %llu us\n", when, TOPICS,
            hn_now_ms() - t0, (unsigned long long)rmq_histogram_percentile(&w.res.lat_us, 0.5),
            (unsigned long long)rmq_histogram_percentile(&w.res.lat_us, 0.99));
}

START_TEST(test_20k_topics_one_by_one_survive_kill9)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], bk_addr[64];
    tl_result_t res = {0};

    namesrv_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&bk, ns_addr, bk_addr, sizeof bk_addr);
    tl_create(bk_addr, "ScaleTopic", 0, TOPICS, QUEUES, 1, WINDOW, &res);
    fprintf(stderr, "# created %ld topics one per request in %.1f s (p99 %llu us)\n", res.ok, res.secs,
            (unsigned long long)rmq_histogram_percentile(&res.lat_us, 0.99));
    ck_assert_msg(res.failed == 0, "%ld creates failed, first error %d", res.failed, res.first_error);
    ck_assert_int_eq(res.ok, TOPICS);
    assert_all_routed(ns_addr, "after creation");

    hn_daemon_kill9(&bk);
    route_wait_t gone = {ns_addr, 0, 1, {0}};
    ck_assert_msg(hn_wait_until(route_gone, &gone, 30000), "the killed broker's routes stayed");
    broker_start(&bk, ns_addr, bk_addr, sizeof bk_addr);
    assert_all_routed(ns_addr, "after kill -9 and restart");
    hn_case_passed();
}
END_TEST

#define BURST 20000

typedef struct burst {
    const char *bk_addr;
    tl_result_t res;
} burst_t;

static void *burst_main(void *arg)
{
    burst_t *b = arg;
    tl_create(b->bk_addr, "BurstTopic", 0, BURST, QUEUES, 1, WINDOW, &b->res);
    return NULL;
}

typedef struct known_wait {
    const char *bk_addr;
    long topic;
    tl_result_t res;
} known_wait_t;

/* 1 once the broker knows BurstTopic<topic> (the burst is under way). */
static int burst_known(void *arg)
{
    known_wait_t *w = arg;
    tl_stats(w->bk_addr, "BurstTopic", w->topic, w->topic + 1, 1, &w->res);
    return w->res.ok == 1;
}

START_TEST(test_kill9_during_burst_keeps_acked_topics)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], bk_addr[64];
    pthread_t th;
    burst_t b = {bk_addr, {0}};
    tl_result_t present = {0};

    namesrv_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&bk, ns_addr, bk_addr, sizeof bk_addr);
    ck_assert_ptr_nonnull(b.res.ok_map = calloc(BURST, 1));
    ck_assert_ptr_nonnull(present.ok_map = calloc(BURST, 1));
    ck_assert_int_eq(pthread_create(&th, NULL, burst_main, &b), 0);
    known_wait_t w = {bk_addr, 2000, {0}};
    ck_assert_msg(hn_wait_until(burst_known, &w, 60000), "the burst did not reach 2000 topics");
    hn_daemon_kill9(&bk);
    pthread_join(th, NULL);
    fprintf(stderr, "# kill -9 after %ld creates answered, %ld not\n", b.res.ok, b.res.failed);
    ck_assert_int_gt(b.res.ok, 0);

    broker_start(&bk, ns_addr, bk_addr, sizeof bk_addr);
    tl_stats(bk_addr, "BurstTopic", 0, BURST, WINDOW, &present);
    long lost = 0, first_lost = -1;
    for (long i = 0; i < BURST; i++)
        if (b.res.ok_map[i] && !present.ok_map[i] && lost++ == 0)
            first_lost = i;
    ck_assert_msg(lost == 0, "%ld answered creates lost by kill -9 (first BurstTopic%ld)", lost, first_lost);
    fprintf(stderr, "# after restart: %ld topics, every answered one among them\n", present.ok);
    free(b.res.ok_map);
    free(present.ok_map);
    hn_case_passed();
}
END_TEST

START_TEST(test_topic_list_batch)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], bk_addr[64];
    tl_result_t res = {0};

    namesrv_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&bk, ns_addr, bk_addr, sizeof bk_addr);
    tl_create(bk_addr, "ScaleTopic", 0, TOPICS, QUEUES, 1000, 4, &res);
    ck_assert_msg(res.failed == 0, "%ld creates failed, first error %d", res.failed, res.first_error);
    assert_all_routed(ns_addr, "after batches");

    /* one bad entry refuses the whole list, naming it */
    Rmq__TopicConfig good = RMQ__TOPIC_CONFIG__INIT, bad = RMQ__TOPIC_CONFIG__INIT;
    Rmq__TopicConfig *both[] = {&good, &bad};
    Rmq__TopicConfigTable tab = RMQ__TOPIC_CONFIG_TABLE__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = {0};
    good.topic_name = "BatchGood";
    good.read_queue_nums = good.write_queue_nums = 4;
    good.perm = 6;
    bad = good;
    bad.topic_name = "Batch Bad";
    tab.topics = both;
    tab.n_topics = 2;
    req.code = RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC_LIST;
    req.header_case = RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE;
    req.topic_config_table = &tab;
    ck_assert_int_eq(wire_call(bk_addr, &req, NULL, 0, &resp), RMQ__STATUS__NAME_ILLEGAL);
    ck_assert_ptr_nonnull(strstr(resp.cmd->remark, "entry 1"));
    rmq_frame_clear(&resp);
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__Command get = RMQ__COMMAND__INIT;
    wire_topic_query(&get, &tr, RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO, "BatchGood");
    ck_assert_int_eq(wire_call(bk_addr, &get, NULL, 0, NULL), RMQ__STATUS__TOPIC_NOT_EXIST);

    /* mqadmin updateTopicList -f with RocketMQ's JSON list */
    char path[PATH_MAX], bin[PATH_MAX];
    hn_write_file(case_dir, "topics.json",
                  "[{\"topicName\":\"ListTopic0\",\"readQueueNums\":8,\"writeQueueNums\":8,\"perm\":6},\n"
                  " {\"topicName\":\"ListTopic1\",\"order\":false,\"topicFilterType\":\"SINGLE_TAG\"}]\n",
                  path, sizeof path);
    const char *argv[] = {hn_build_path("tools/mqadmin", bin, sizeof bin), "updateTopicList", "-n", ns_addr,
                          "-b", bk_addr, "-f", path, NULL};
    hn_result_t run;
    ck_assert_int_eq(hn_run(argv, 30000, &run), 0);
    ck_assert_msg(run.status == 0, "mqadmin: %s", run.err);
    ck_assert_ptr_nonnull(strstr(run.out, "2 topics updated"));
    hn_result_free(&run);
    route_wait_t w = {ns_addr, 0, 2, {0}};
    ck_assert(hn_wait_until(list_routed, &w, ROUTE_WAIT_MS));
    hn_case_passed();
}
END_TEST

/* 1 once ListTopic0's route is gone. */
static int list_gone(void *arg)
{
    route_wait_t *w = arg;
    tl_routes(w->ns_addr, "ListTopic", 0, 1, QUEUES, 1, &w->res);
    return w->res.first_error == RMQ__STATUS__TOPIC_NOT_EXIST;
}

/* A topic deleted on the broker leaves the name server's routes through
 * the broker's next registration (a delta naming it), with no
 * DELETE_TOPIC_IN_NAMESRV; the other topics stay. */
START_TEST(test_delete_reaches_routes)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], bk_addr[64];
    tl_result_t res = {0};

    namesrv_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&bk, ns_addr, bk_addr, sizeof bk_addr);
    tl_create(bk_addr, "ListTopic", 0, 2, QUEUES, 1, 2, &res);
    ck_assert_int_eq(res.ok, 2);
    route_wait_t w = {ns_addr, 0, 2, {0}};
    ck_assert(hn_wait_until(list_routed, &w, ROUTE_WAIT_MS));
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__Command del = RMQ__COMMAND__INIT;
    wire_topic_query(&del, &tr, RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER, "ListTopic0");
    ck_assert_int_eq(wire_call(bk_addr, &del, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
    ck_assert_msg(hn_wait_until(list_gone, &w, ROUTE_WAIT_MS), "ListTopic0 is still routed");
    tl_routes(ns_addr, "ListTopic", 1, 2, QUEUES, 1, &res);
    ck_assert_int_eq(res.ok, 1);
    hn_case_passed();
}
END_TEST

static Suite *topics_suite(void)
{
    Suite *s = suite_create("topics");
    TCase *tc = tcase_create("topics");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_20k_topics_one_by_one_survive_kill9);
    tcase_add_test(tc, test_kill9_during_burst_keeps_acked_topics);
    tcase_add_test(tc, test_topic_list_batch);
    tcase_add_test(tc, test_delete_reaches_routes);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(topics_suite());
}
