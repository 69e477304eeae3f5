/* test_tx.c: transactional messages end to end: a committed message is
 * consumed exactly once, a rolled-back one never; an outcome left unknown
 * is decided by the broker's check-back (commit -> consumed, rollback ->
 * never); a broker restart between the half message and its commit still
 * commits; resolved outcomes survive a restart (no check-back for them,
 * nothing resurrected); a half left unknown across a restart is checked
 * back by the restarted broker; a half that stays unknown is checked
 * transactionCheckMax times, then rolled back. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "rmq/rmq.h"
#include "rmq_time.h"

#define TOPIC "TopicTx"
#define NKEYS 16

static const char *case_dir;
static char ns_addr[64];
static hn_daemon_t ns_d, broker_d;
static char props_path[PATH_MAX];
static int broker_port;

static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static const char *keys[NKEYS] = {"c1", "r1", "u-commit-1", "u-rollback-1", "x-restart-commit", "c2",
                                  "r2", "u-commit-2", "u-forever"};
static int consumed[NKEYS], checked[NKEYS];

static int key_index(const char *k)
{
    for (int i = 0; i < NKEYS && keys[i]; i++)
        if (!strcmp(keys[i], k))
            return i;
    return -1;
}

static void setup(void)
{
    case_dir = hn_case_begin("tx");
    memset(consumed, 0, sizeof consumed);
    memset(checked, 0, sizeof checked);
}

static void teardown(void)
{
    hn_case_end();
}

static void broker_start(int port)
{
    char bin[PATH_MAX], props[2048];

    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=%d\nhaListenPort=0\nstorePathRootDir=%s/store\n"
             "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\n"
             "defaultTopicQueueNums=2\nregisterNameServerPeriod=1000\n"
             "transactionTimeOut=1000\ntransactionCheckInterval=300\ntransactionCheckMax=3\n",
             port, case_dir, ns_addr);
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "broker.properties", props, props_path, sizeof props_path));
    const char *bargs[] = {"-c", props_path, NULL};
    ck_assert_int_eq(hn_daemon_start(&broker_d, hn_build_path("broker/mqbroker", bin, sizeof bin), "broker",
                                     bargs, HN_READY_TIMEOUT_MS), 0);
    broker_port = hn_daemon_port(&broker_d, "listenPort");
}

static void broker_restart(void)
{
    ck_assert_int_eq(hn_daemon_stop(&broker_d, HN_STOP_TIMEOUT_MS), 0);
    broker_start(broker_port);
}

static void cluster_start(void)
{
    ck_assert_int_eq(hn_daemon_start_conf(&ns_d, case_dir, "namesrv/mqnamesrv", "namesrv",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    broker_start(0);
}

static rmq_consume_result_t on_message(const rmq_message_ext_t *m, void *arg)
{
    int k = key_index(m->keys);

    pthread_mutex_lock(&mu);
    if (k >= 0)
        consumed[k]++;
    pthread_mutex_unlock(&mu);
    return RMQ_CONSUME_SUCCESS;
}

static rmq_tx_state_t on_check(const rmq_message_ext_t *m, void *arg)
{
    int k = key_index(m->keys);

    pthread_mutex_lock(&mu);
    if (k >= 0)
        checked[k]++;
    pthread_mutex_unlock(&mu);
    if (!strncmp(m->keys, "u-commit", 8))
        return RMQ_TX_COMMIT;
    if (!strncmp(m->keys, "u-rollback", 10))
        return RMQ_TX_ROLLBACK;
    return RMQ_TX_UNKNOWN;
}

static rmq_tx_state_t exec_by_key(const rmq_message_t *m, void *ctx)
{
    if (m->keys[0] == 'c')
        return RMQ_TX_COMMIT;
    if (m->keys[0] == 'r')
        return RMQ_TX_ROLLBACK;
    if (m->keys[0] == 'x') {
        broker_restart();            /* between the half message and END_TRANSACTION */
        return RMQ_TX_COMMIT;
    }
    return RMQ_TX_UNKNOWN;
}

static void tx_send(rmq_tx_producer_t *tp, const char *key, rmq_tx_state_t want)
{
    rmq_message_t m = {.topic = TOPIC, .keys = key, .body = key, .body_len = strlen(key)};
    rmq_tx_state_t st;
    rmq_send_result_t res;
    rmq_err_t err = rmq_tx_producer_send(tp, &m, exec_by_key, NULL, &st, &res);

    ck_assert_msg(err == RMQ_OK, "tx send %s: %s", key, res.error.text);
    ck_assert_int_eq(st, want);
}

typedef struct until_count {
    int *arr;
    int k, want;
} until_count_t;

static int count_is(void *arg)
{
    until_count_t *u = arg;
    int v;

    pthread_mutex_lock(&mu);
    v = u->arr[u->k];
    pthread_mutex_unlock(&mu);
    return v >= u->want;
}

static void wait_count(int *arr, const char *key, int want)
{
    until_count_t u = {arr, key_index(key), want};

    ck_assert_msg(hn_wait_until(count_is, &u, 20000), "%s of %s never reached %d",
                  arr == consumed ? "consumption" : "check", key, want);
}

static int get(int *arr, const char *key)
{
    int v;

    pthread_mutex_lock(&mu);
    v = arr[key_index(key)];
    pthread_mutex_unlock(&mu);
    return v;
}

START_TEST(test_commit_rollback_checkback_restart)
{
    rmq_error_t e;

    cluster_start();
    rmq_tx_producer_opts_t to = {.producer = {.group = "tx_group", .namesrv = ns_addr, .send_timeout_ms = 10000},
                                 .check = on_check, .heartbeat_interval_ms = 500};
    rmq_tx_producer_t *tp = rmq_tx_producer_new(&to, &e);
    ck_assert_msg(tp != NULL, "%s", e.text);
    ck_assert_int_eq(rmq_tx_producer_start(tp), RMQ_OK);
    rmq_push_consumer_opts_t co = {.group = "tx_consumer", .namesrv = ns_addr, .on_message = on_message,
                                   .consume_from = RMQ_CONSUME_FROM_FIRST, .rebalance_interval_ms = 1000,
                                   .heartbeat_interval_ms = 1000, .suspend_ms = 1000};
    rmq_push_consumer_t *c = rmq_push_consumer_new(&co, &e);
    ck_assert_msg(c != NULL, "%s", e.text);
    ck_assert_int_eq(rmq_push_consumer_subscribe(c, TOPIC, "*"), RMQ_OK);

    tx_send(tp, "c1", RMQ_TX_COMMIT);
    tx_send(tp, "r1", RMQ_TX_ROLLBACK);
    tx_send(tp, "u-commit-1", RMQ_TX_UNKNOWN);
    tx_send(tp, "u-rollback-1", RMQ_TX_UNKNOWN);
    tx_send(tp, "u-forever", RMQ_TX_UNKNOWN);
    ck_assert_int_eq(rmq_push_consumer_start(c), RMQ_OK);
    wait_count(consumed, "c1", 1);
    wait_count(checked, "u-commit-1", 1);
    wait_count(consumed, "u-commit-1", 1);
    wait_count(checked, "u-rollback-1", 1);
    wait_count(checked, "u-forever", 3);
    usleep(1000 * 1000);             /* the next rounds roll it back (check counts live in memory) */

    /* a restart between the half message and its commit */
    tx_send(tp, "x-restart-commit", RMQ_TX_COMMIT);
    wait_count(consumed, "x-restart-commit", 1);

    /* resolved outcomes survive a restart; an unknown half is checked by
     * the restarted broker */
    tx_send(tp, "c2", RMQ_TX_COMMIT);
    tx_send(tp, "r2", RMQ_TX_ROLLBACK);
    tx_send(tp, "u-commit-2", RMQ_TX_UNKNOWN);
    wait_count(consumed, "c2", 1);
    broker_restart();
    wait_count(checked, "u-commit-2", 1);
    wait_count(consumed, "u-commit-2", 1);
    usleep(2500 * 1000);             /* several check rounds after the restart */

    ck_assert_int_eq(get(consumed, "c1"), 1);
    ck_assert_int_eq(get(consumed, "c2"), 1);
    ck_assert_int_eq(get(consumed, "u-commit-1"), 1);
    ck_assert_int_eq(get(consumed, "u-commit-2"), 1);
    ck_assert_int_eq(get(consumed, "x-restart-commit"), 1);
    ck_assert_int_eq(get(consumed, "r1"), 0);
    ck_assert_int_eq(get(consumed, "r2"), 0);
    ck_assert_int_eq(get(consumed, "u-rollback-1"), 0);
    ck_assert_int_eq(get(checked, "c1"), 0);
    ck_assert_int_eq(get(checked, "c2"), 0);
    ck_assert_int_eq(get(checked, "r1"), 0);
    ck_assert_int_eq(get(checked, "r2"), 0);
    ck_assert_int_eq(get(checked, "x-restart-commit"), 0);
    ck_assert_int_eq(get(checked, "u-commit-1"), 1);
    ck_assert_int_eq(get(checked, "u-rollback-1"), 1);
    ck_assert_int_eq(get(checked, "u-forever"), 3);   /* then rolled back: never checked again */
    ck_assert_int_eq(get(consumed, "u-forever"), 0);
    rmq_push_consumer_free(c);
    rmq_tx_producer_free(tp);
    hn_case_passed();
}
END_TEST

static Suite *tx_suite(void)
{
    Suite *s = suite_create("tx");
    TCase *tc = tcase_create("process");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_commit_rollback_checkback_restart);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(tx_suite());
}
