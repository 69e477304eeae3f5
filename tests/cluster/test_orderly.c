/* test_orderly.c: ordered consumption with real processes: three orderly
 * push consumers of one group share a topic's queues; per key (one queue per
 * key, chosen by the producer's selector) messages are first consumed in
 * send order, a reconsume-later retries the same message without anything
 * of its queue overtaking it, no queue is ever consumed by two callbacks at
 * once (every callback's (queue, consumer, start, end) is recorded and the
 * intervals of one queue must not overlap), and after one consumer leaves
 * the other two take over its queues (a rebalance) with order kept. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "rmq/rmq.h"
#include "rmq_time.h"

#define TOPIC "TopicOrd"
#define GROUP "ord_group"
#define NKEYS 8
#define NQUEUES 4
#define MAX_RECS 8000

static const char *case_dir;
static char ns_addr[64];
static hn_daemon_t ns_d, broker_d;

typedef struct rec {
    int queue, consumer, key, seq, ok;
    int64_t start_us, end_us;
} rec_t;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static rec_t recs[MAX_RECS];
static int nrecs;
static int seen[NKEYS][1000];          /* successful consumptions per (key, seq) */
static int later_done;                 /* the one reconsume-later was answered */

static void setup(void)
{
    case_dir = hn_case_begin("orderly");
    nrecs = 0;
    later_done = 0;
    memset(seen, 0, sizeof(seen));
}

static void teardown(void)
{
    hn_case_end();
}

static void cluster_start(void)
{
    char props[2048];

    ck_assert_int_eq(hn_daemon_start_conf(&ns_d, case_dir, "namesrv/mqnamesrv", "namesrv",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store\n"
             "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\n"
             "defaultTopicQueueNums=%d\nregisterNameServerPeriod=1000\n",
             case_dir, ns_addr, NQUEUES);
    ck_assert_int_eq(hn_daemon_start_conf(&broker_d, case_dir, "broker/mqbroker", "broker", props, NULL, 0), 0);
}

typedef struct cons_arg {
    int idx;
} cons_arg_t;

static rmq_consume_result_t on_message(const rmq_message_ext_t *m, void *arg)
{
    cons_arg_t *ca = arg;
    char buf[32];
    int key = atoi(m->keys + 1), seq = atoi(rmq_message_ext_property(m, "seq", buf, sizeof buf) ?: "-1");
    int64_t start = rmq_mono_us();
    int ok = 1;

    usleep(1000);
    pthread_mutex_lock(&mu);
    if (key == 1 && seq == 5 && !later_done) {
        later_done = 1;              /* once: the queue must retry seq 5 before 6 */
        ok = 0;
    }
    if (nrecs < MAX_RECS)
        recs[nrecs++] = (rec_t){m->queue_id, ca->idx, key, seq, ok, start, rmq_mono_us()};
    if (ok && key >= 0 && key < NKEYS && seq >= 0 && seq < 1000)
        seen[key][seq]++;
    pthread_mutex_unlock(&mu);
    return ok ? RMQ_CONSUME_SUCCESS : RMQ_CONSUME_LATER;
}

static rmq_push_consumer_t *consumer_start(cons_arg_t *ca)
{
    rmq_error_t e;
    char inst[32];

    snprintf(inst, sizeof inst, "ord%d", ca->idx);
    rmq_push_consumer_opts_t o = {.group = GROUP, .namesrv = ns_addr, .on_message = on_message, .arg = ca,
                                  .consume_from = RMQ_CONSUME_FROM_FIRST, .orderly = 1, .consume_threads = 4,
                                  .rebalance_interval_ms = 1000, .heartbeat_interval_ms = 1000,
                                  .commit_interval_ms = 500, .reconsume_delay_ms = 300, .lock_renew_ms = 2000,
                                  .suspend_ms = 1000, .instance_name = inst};
    rmq_push_consumer_t *c = rmq_push_consumer_new(&o, &e);
    ck_assert_msg(c != NULL, "%s", e.text);
    ck_assert_int_eq(rmq_push_consumer_subscribe(c, TOPIC, "*"), RMQ_OK);
    ck_assert_int_eq(rmq_push_consumer_start(c), RMQ_OK);
    return c;
}

static int key_selector(int nqueues, const rmq_message_t *msg, void *arg)
{
    return atoi(msg->keys + 1) % nqueues;
}

static void send_range(rmq_producer_t *p, int from, int to)
{
    for (int seq = from; seq < to; seq++)
        for (int k = 0; k < NKEYS; k++) {
            char key[16], s[16];
            rmq_send_result_t res;

            snprintf(key, sizeof key, "k%d", k);
            snprintf(s, sizeof s, "%d", seq);
            rmq_property_t prop = {"seq", s};
            rmq_message_t m = {.topic = TOPIC, .keys = key, .body = "x", .body_len = 1, .props = &prop, .nprops = 1};
            ck_assert_msg(rmq_producer_send_select(p, &m, key_selector, NULL, 0, &res) == RMQ_OK, "%s",
                          res.error.text);
        }
}

static int all_seen(void *arg)
{
    int upto = *(int *)arg, ok = 1;

    pthread_mutex_lock(&mu);
    for (int k = 0; k < NKEYS && ok; k++)
        for (int s = 0; s < upto && ok; s++)
            ok = seen[k][s] > 0;
    pthread_mutex_unlock(&mu);
    return ok;
}

static int consumer_busy_since(int idx, int64_t since_us, int queue)
{
    int n = 0;

    pthread_mutex_lock(&mu);
    for (int i = 0; i < nrecs; i++)
        n += recs[i].consumer == idx && recs[i].start_us > since_us && (queue < 0 || recs[i].queue == queue);
    pthread_mutex_unlock(&mu);
    return n;
}

static int cmp_start(const void *a, const void *b)
{
    const rec_t *x = a, *y = b;
    return x->queue != y->queue ? x->queue - y->queue : (x->start_us > y->start_us) - (x->start_us < y->start_us);
}

START_TEST(test_three_consumers_order_and_exclusion)
{
    enum { PART1 = 30, PART2 = 60, PART3 = 90 };
    rmq_error_t e;
    cons_arg_t a1 = {1}, a2 = {2}, a3 = {3};
    int upto;

    cluster_start();
    rmq_producer_opts_t po = {.group = "ord_producer", .namesrv = ns_addr, .send_timeout_ms = 10000};
    rmq_producer_t *p = rmq_producer_new(&po, &e);
    ck_assert_msg(p != NULL, "%s", e.text);
    ck_assert_int_eq(rmq_producer_start(p), RMQ_OK);
    send_range(p, 0, PART1);
    rmq_push_consumer_t *c1 = consumer_start(&a1);
    usleep(500 * 1000);
    rmq_push_consumer_t *c2 = consumer_start(&a2);
    rmq_push_consumer_t *c3 = consumer_start(&a3);
    send_range(p, PART1, PART2);
    upto = PART2;
    ck_assert_msg(hn_wait_until(all_seen, &upto, 30000), "not every message of part 2 was consumed");
    int64_t t_both = rmq_mono_us();
    ck_assert_msg(consumer_busy_since(1, 0, -1) > 0 && consumer_busy_since(2, 0, -1) > 0 &&
                      consumer_busy_since(3, 0, -1) > 0,
                  "every consumer should have consumed (c1 %d, c2 %d, c3 %d)", consumer_busy_since(1, 0, -1),
                  consumer_busy_since(2, 0, -1), consumer_busy_since(3, 0, -1));
    /* c1 leaves: c2 and c3 take every queue over */
    rmq_push_consumer_free(c1);
    int64_t t_left = rmq_mono_us();
    send_range(p, PART2, PART3);
    upto = PART3;
    ck_assert_msg(hn_wait_until(all_seen, &upto, 30000), "not every message of part 3 was consumed");
    for (int q = 0; q < NQUEUES; q++)
        ck_assert_msg(consumer_busy_since(2, t_left, q) + consumer_busy_since(3, t_left, q) > 0,
                      "neither c2 nor c3 took over queue %d", q);
    ck_assert_int_eq(consumer_busy_since(1, t_left, -1), 0);
    rmq_push_consumer_free(c2);
    rmq_push_consumer_free(c3);
    rmq_producer_free(p);
    (void)t_both;

    pthread_mutex_lock(&mu);
    ck_assert_int_eq(later_done, 1);
    /* exclusion: the callbacks of one queue never overlap */
    qsort(recs, (size_t)nrecs, sizeof(recs[0]), cmp_start);
    for (int i = 1; i < nrecs; i++)
        if (recs[i].queue == recs[i - 1].queue)
            ck_assert_msg(recs[i].start_us >= recs[i - 1].end_us,
                          "queue %d: consumer %d started at %lld while consumer %d ran until %lld", recs[i].queue,
                          recs[i].consumer, (long long)recs[i].start_us, recs[i - 1].consumer,
                          (long long)recs[i - 1].end_us);
    /* order: per key, the first successful consumption of seq s comes after
     * that of s - 1 (a redelivery after a takeover may repeat older ones) */
    int first[NKEYS][PART3];
    int dups = 0;
    memset(first, -1, sizeof(first));
    for (int i = 0; i < nrecs; i++) {
        if (!recs[i].ok)
            continue;
        if (first[recs[i].key][recs[i].seq] >= 0) {
            dups++;
            continue;
        }
        first[recs[i].key][recs[i].seq] = i;
    }
    for (int k = 0; k < NKEYS; k++)
        for (int s = 1; s < PART3; s++)
            ck_assert_msg(first[k][s] > first[k][s - 1], "key %d: seq %d consumed before seq %d", k, s, s - 1);
    /* the reconsume-later of k1/5 came before its first success, and no
     * later message of that queue ran in between */
    int fail_at = -1;
    for (int i = 0; i < nrecs && fail_at < 0; i++)
        if (!recs[i].ok)
            fail_at = i;
    ck_assert_int_ge(fail_at, 0);
    for (int i = fail_at + 1; i < first[1][5]; i++)
        ck_assert_msg(recs[i].queue != recs[fail_at].queue, "queue %d consumed %d/%d while k1/5 was suspended",
                      recs[i].queue, recs[i].key, recs[i].seq);
    pthread_mutex_unlock(&mu);
    fprintf(stderr, "orderly: %d callbacks, %d redeliveries after rebalances\n", nrecs, dups);
    hn_case_passed();
}
END_TEST

static Suite *orderly_suite(void)
{
    Suite *s = suite_create("orderly");
    TCase *tc = tcase_create("process");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_three_consumers_order_and_exclusion);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(orderly_suite());
}
