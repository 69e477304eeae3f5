/* test_index.c: the key index end to end: messages sent with KEYS through
 * librmq to two brokers are found by `mqadmin queryMsgByKey` (by a KEYS
 * word and by the UNIQ_KEY; `queryMsgById -t` by the UNIQ_KEY too), the
 * time range filters, and the index answers
 * the same after a clean restart of one broker and a kill -9 of the other
 * (rebuilt from the commit log). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "rmq/rmq.h"
#include "rmq_time.h"

#define TOPIC "TopicIdx"

static const char *case_dir;
static char ns_addr[64];
static hn_daemon_t ns_d;
static hn_daemon_t brokers[2];
static char props_path[2][PATH_MAX];

static void setup(void)
{
    case_dir = hn_case_begin("index");
}

static void teardown(void)
{
    hn_case_end();
}

static void broker_start(int i)
{
    char bin[PATH_MAX];
    const char *bargs[] = {"-c", props_path[i], NULL};

    ck_assert_int_eq(hn_daemon_start(&brokers[i], hn_build_path("broker/mqbroker", bin, sizeof bin),
                                     i ? "broker-b" : "broker-a", bargs, HN_READY_TIMEOUT_MS), 0);
}

static void cluster_start(void)
{
    char props[2048], file[64];

    ck_assert_int_eq(hn_daemon_start_conf(&ns_d, case_dir, "namesrv/mqnamesrv", "namesrv",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    for (int i = 0; i < 2; i++) {
        const char *name = i == 0 ? "broker-a" : "broker-b";
        snprintf(props, sizeof props,
                 "brokerName=%s\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store-%s\n"
                 "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\n"
                 "maxHashSlotNum=64\nmaxIndexNum=100\nregisterNameServerPeriod=1000\n",
                 name, case_dir, name, ns_addr);
        snprintf(file, sizeof file, "%s.properties", name);
        ck_assert_ptr_nonnull(hn_write_file(case_dir, file, props, props_path[i], sizeof props_path[i]));
        broker_start(i);
    }
}

/* Runs mqadmin queryMsgByKey; returns the number of message rows (-1 if it
 * failed) and copies stdout into out when given. */
static int query(const char *key, long long begin, long long end, char *out, size_t cap)
{
    char bin[PATH_MAX], b[32], e[32];
    hn_result_t r;
    int rows = 0;

    snprintf(b, sizeof b, "%lld", begin);
    snprintf(e, sizeof e, "%lld", end);
    const char *argv[] = {hn_build_path("tools/mqadmin", bin, sizeof bin), "queryMsgByKey", "-n", ns_addr, "-t",
                          TOPIC, "-k", key, "-b", b, "-e", e, NULL};
    ck_assert_int_eq(hn_run(argv, 20000, &r), 0);
    if (r.status != 0) {
        hn_result_free(&r);
        return -1;
    }
    for (const char *p = r.out; p && *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);

        if (len > 32 && strspn(p, "0123456789ABCDEF") == 32)
            rows++;
        p = nl ? nl + 1 : p + len;
    }
    if (out)
        snprintf(out, cap, "%s", r.out);
    hn_result_free(&r);
    return rows;
}

typedef struct until_rows {
    const char *key;
    long long begin, end;
    int want;
} until_rows_t;

static int rows_are(void *arg)
{
    until_rows_t *u = arg;

    return query(u->key, u->begin, u->end, NULL, 0) == u->want;
}

static void expect_rows(const char *key, long long begin, long long end, int want)
{
    until_rows_t u = {key, begin, end, want};

    ck_assert_msg(hn_wait_until(rows_are, &u, 20000), "queryMsgByKey -k %s [%lld, %lld]: %d rows, want %d", key,
                  begin, end, query(key, begin, end, NULL, 0), want);
}

/* Sends n messages with keys "k-<i> <common>" through a selector that
 * spreads them over both brokers' queues. */
static void send_keyed(rmq_producer_t *p, int from, int n, const char *common, char uniq[][33])
{
    for (int i = from; i < from + n; i++) {
        char keys[64];
        rmq_send_result_t res;

        snprintf(keys, sizeof keys, "k-%d %s", i, common);
        rmq_message_t m = {.topic = TOPIC, .tags = "T", .keys = keys, .body = "payload", .body_len = 7};
        ck_assert_msg(rmq_producer_send(p, &m, 0, &res) == RMQ_OK, "send %d: %s", i, res.error.text);
        if (uniq)
            memcpy(uniq[i], res.msg_id, 33);
    }
}

START_TEST(test_query_by_key_across_restarts)
{
    rmq_error_t e;
    char uniq[40][33], out[16384];

    cluster_start();
    rmq_producer_opts_t o = {.group = "idx_producer", .namesrv = ns_addr, .send_timeout_ms = 10000};
    rmq_producer_t *p = rmq_producer_new(&o, &e);
    ck_assert_msg(p != NULL, "%s", e.text);
    ck_assert_int_eq(rmq_producer_start(p), RMQ_OK);
    /* the topic is auto-created on the broker the first send reaches; warm
     * both so the later sends spread */
    send_keyed(p, 0, 20, "early", uniq);
    usleep(1200 * 1000);
    long long mid = rmq_wall_ms();
    usleep(50 * 1000);
    send_keyed(p, 20, 20, "late", uniq);
    rmq_producer_free(p);

    expect_rows("early", 0, 0, 20);
    expect_rows("late", 0, 0, 20);
    expect_rows("k-7", 0, 0, 1);
    expect_rows("nothing", 0, 0, 0);
    ck_assert_int_eq(query("k-33", 0, 0, out, sizeof out), 1);
    ck_assert_msg(strstr(out, uniq[33]) != NULL, "row of k-33 lacks its unique key %s:\n%s", uniq[33], out);
    ck_assert_msg(strstr(out, "#Message ID") && strstr(out, "#Keys") && strstr(out, "k-33 late"), "%s", out);
    expect_rows(uniq[12], 0, 0, 1);                 /* by UNIQ_KEY */
    {
        /* queryMsgById with a topic takes the producer's unique id */
        char bin[PATH_MAX];
        hn_result_t r;
        const char *argv[] = {hn_build_path("tools/mqadmin", bin, sizeof bin), "queryMsgById", "-n", ns_addr,
                              "-i", uniq[12], "-t", TOPIC, NULL};
        ck_assert_int_eq(hn_run(argv, 20000, &r), 0);
        ck_assert_msg(r.status == 0 && strstr(r.out, "k-12 early") && strstr(r.out, "Body"), "%s%s", r.out, r.err);
        hn_result_free(&r);
    }
    /* time range: only the late ones are after mid, only early ones before */
    expect_rows("k-25", mid, 0, 1);
    expect_rows("k-5", mid, 0, 0);
    expect_rows("k-5", 0, mid, 1);
    expect_rows("late", 0, mid, 0);

    /* clean restart of broker-a, kill -9 of broker-b: both answer again */
    ck_assert_int_eq(hn_daemon_stop(&brokers[0], HN_STOP_TIMEOUT_MS), 0);
    hn_daemon_kill9(&brokers[1]);
    broker_start(0);
    broker_start(1);
    expect_rows("early", 0, 0, 20);
    expect_rows("late", 0, 0, 20);
    expect_rows(uniq[39], 0, 0, 1);
    expect_rows("k-25", mid, 0, 1);
    hn_case_passed();
}
END_TEST

static Suite *index_suite(void)
{
    Suite *s = suite_create("index");
    TCase *tc = tcase_create("process");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_query_by_key_across_restarts);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(index_suite());
}
