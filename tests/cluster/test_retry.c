/* test_retry.c: retry, dead letters and delayed messages against real
 * mqnamesrv + mqbroker processes with a short messageDelayLevel (level L =
 * L seconds): a failing push-consumer callback sees its message again after
 * the delay of its attempt, then it lands in %DLQ%<group> after
 * max_reconsume_times, where mqadmin queryDlq lists it and resendDlq brings
 * it back; delayed messages (levels and absolute delivery times) are stored
 * in their topic no earlier than due, within a second after, in due order;
 * and a kill -9 of the broker with deliveries pending neither loses nor
 * repeats any. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "rmq/rmq.h"
#include "rmq_time.h"

#define LEVELS "1s 2s 3s 4s 5s 6s 7s 8s 9s 10s 11s 12s 13s 14s 15s 16s 17s 18s"
#define LATE_MS 1000          /* a delivery may be this late */
#define EARLY_MS 20           /* clock granularity between client and broker */

static const char *case_dir;
static char ns_addr[64];
static hn_daemon_t ns_d, broker_d;
static char broker_props[PATH_MAX];

static void setup(void)
{
    case_dir = hn_case_begin("retry");
}

static void teardown(void)
{
    hn_case_end();
}

static int route_ready(void *arg)
{
    rmq_error_t e;
    rmq_pull_consumer_t *pc = rmq_pull_consumer_new("probe", ns_addr, &e);
    rmq_queue_t *qs = NULL;
    size_t n = 0;
    if (!pc || rmq_pull_consumer_start(pc) != RMQ_OK ||
        rmq_pull_consumer_queues(pc, (const char *)arg, &qs, &n, &e) != RMQ_OK)
        n = 0;
    free(qs);
    rmq_pull_consumer_free(pc);
    return n > 0;
}

static void broker_start(void)
{
    char bin[PATH_MAX];
    const char *bargs[] = {"-c", broker_props, NULL};
    ck_assert_int_eq(hn_daemon_start(&broker_d, hn_build_path("broker/mqbroker", bin, sizeof bin), "broker-a",
                                     bargs, HN_READY_TIMEOUT_MS), 0);
}

/* A name server and one broker (fixed client port after the first start). */
static void cluster_start(void)
{
    char props[2048];
    ck_assert_int_eq(hn_daemon_start_conf(&ns_d, case_dir, "namesrv/mqnamesrv", "namesrv",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store\n"
             "mapedFileSizeCommitLog=67108864\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\nmessageDelayLevel=" LEVELS "\n",
             case_dir, ns_addr);
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "broker.properties", props, broker_props, sizeof broker_props));
    broker_start();
    /* Restarts keep the port, so clients and the route stay valid. */
    snprintf(props + strlen(props), sizeof props - strlen(props), "listenPort=%d\n",
             hn_daemon_port(&broker_d, "listenPort"));
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "broker.properties", props, broker_props, sizeof broker_props));
    ck_assert_msg(hn_wait_until(route_ready, "TBW102", 30000), "broker never registered");
}

static rmq_producer_t *producer_new(void)
{
    rmq_error_t e;
    rmq_producer_opts_t o = {.group = "retry_producer", .namesrv = ns_addr, .send_timeout_ms = 10000};
    rmq_producer_t *p = rmq_producer_new(&o, &e);
    ck_assert_msg(p != NULL, "%s", e.text);
    ck_assert_int_eq(rmq_producer_start(p), RMQ_OK);
    return p;
}

static int queue_zero(int nqueues, const rmq_message_t *msg, void *arg)
{
    return 0;
}

/* Sends body with one extra property (name may be NULL) to queue 0 of topic. */
static void send_one(rmq_producer_t *p, const char *topic, const char *body, const char *name, const char *value)
{
    rmq_property_t props[2] = {{"i", body}, {name, value}};
    rmq_message_t m = {.topic = topic, .body = body, .body_len = strlen(body), .props = props,
                       .nprops = name ? 2 : 1};
    rmq_send_result_t res;
    rmq_err_t err = rmq_producer_send_select(p, &m, queue_zero, NULL, 0, &res);
    ck_assert_msg(err == RMQ_OK, "send %s: %s", body, res.error.text);
}

/* ---- what a topic's queue 0 holds ---------------------------------------- */

typedef struct stored {
    char body[32];
    int64_t store_ms;
    int64_t offset;
} stored_t;

/* Reads queue 0 of topic from offset 0: up to cap messages into out. */
static size_t read_queue0(const char *topic, stored_t *out, size_t cap)
{
    rmq_error_t e;
    rmq_pull_consumer_t *pc = rmq_pull_consumer_new("reader", ns_addr, &e);
    ck_assert_ptr_nonnull(pc);
    ck_assert_int_eq(rmq_pull_consumer_start(pc), RMQ_OK);
    rmq_queue_t q = {.queue_id = 0};
    snprintf(q.topic, sizeof q.topic, "%s", topic);
    snprintf(q.broker_name, sizeof q.broker_name, "broker-a");
    size_t n = 0;
    int64_t off = 0;
    for (int guard = 0; guard < 1000 && n < cap; guard++) {
        rmq_pull_result_t res;
        if (rmq_pull_consumer_pull(pc, &q, "*", off, 32, 0, &res, &e) != RMQ_OK)
            break;
        int found = res.status == RMQ_PULL_FOUND;
        for (size_t i = 0; i < res.count && n < cap; i++, n++) {
            snprintf(out[n].body, sizeof out[n].body, "%.*s", (int)res.msgs[i]->body_len,
                     (const char *)res.msgs[i]->body);
            out[n].store_ms = res.msgs[i]->store_timestamp;
            out[n].offset = res.msgs[i]->queue_offset;
        }
        off = res.next_offset;
        rmq_pull_result_clear(&res);
        if (!found)
            break;
    }
    rmq_pull_consumer_free(pc);
    return n;
}

typedef struct until_count {
    const char *topic;
    size_t want;
} until_count_t;

static int queue_has(void *arg)
{
    until_count_t *u = arg;
    stored_t buf[256];
    return read_queue0(u->topic, buf, 256) >= u->want;
}

static const stored_t *find_body(const stored_t *s, size_t n, const char *body, int *count)
{
    const stored_t *first = NULL;
    *count = 0;
    for (size_t i = 0; i < n; i++)
        if (strcmp(s[i].body, body) == 0) {
            if (!first)
                first = &s[i];
            (*count)++;
        }
    return first;
}

/* ---- delayed messages ------------------------------------------------------- */

/* Levels and absolute delivery times: stored no earlier than due, at most
 * LATE_MS after, and in order of due time. */
START_TEST(test_delay_levels_and_deliver_time)
{
    cluster_start();
    rmq_producer_t *p = producer_new();
    send_one(p, "Delayed", "warm", NULL, NULL);
    struct {
        const char *body;
        int level;
        int64_t at_off;
    } plan[] = {
        {"L3", 3, 0}, {"L1", 1, 0}, {"L2", 2, 0}, {"AT2500", 0, 2500}, {"AT1500", 0, 1500}, {"L1b", 1, 0},
    };
    enum { N = sizeof plan / sizeof plan[0] };
    int64_t due[N];
    for (int i = 0; i < N; i++) {
        char v[32];
        int64_t now = rmq_wall_ms();
        if (plan[i].level) {
            snprintf(v, sizeof v, "%d", plan[i].level);
            due[i] = now + plan[i].level * 1000;
            send_one(p, "Delayed", plan[i].body, "DELAY", v);
        } else {
            due[i] = now + plan[i].at_off;
            snprintf(v, sizeof v, "%lld", (long long)due[i]);
            send_one(p, "Delayed", plan[i].body, "__STARTDELIVERTIME", v);
        }
    }
    until_count_t u = {"Delayed", N + 1};
    ck_assert_msg(hn_wait_until(queue_has, &u, 15000), "delayed messages never all arrived");
    stored_t s[64];
    size_t n = read_queue0("Delayed", s, 64);
    ck_assert_uint_eq(n, N + 1);
    int64_t last_due = 0;
    for (size_t k = 1; k < n; k++) {
        int idx = -1, count;
        for (int i = 0; i < N; i++)
            if (strcmp(plan[i].body, s[k].body) == 0)
                idx = i;
        ck_assert_msg(idx >= 0, "unexpected %s", s[k].body);
        find_body(s, n, s[k].body, &count);
        ck_assert_int_eq(count, 1);
        ck_assert_msg(s[k].store_ms >= due[idx] - EARLY_MS, "%s stored %lld ms before due", s[k].body,
                      (long long)(due[idx] - s[k].store_ms));
        ck_assert_msg(s[k].store_ms <= due[idx] + LATE_MS, "%s stored %lld ms after due", s[k].body,
                      (long long)(s[k].store_ms - due[idx]));
        ck_assert_msg(due[idx] + 200 >= last_due, "%s delivered out of due order", s[k].body);
        last_due = due[idx];
    }
    /* A delivery time beyond retention is refused. */
    rmq_property_t props[1] = {{"__STARTDELIVERTIME", "99999999999999"}};
    rmq_message_t m = {.topic = "Delayed", .body = "far", .body_len = 3, .props = props, .nprops = 1};
    rmq_send_result_t res;
    ck_assert_int_ne(rmq_producer_send(p, &m, 0, &res), RMQ_OK);
    rmq_producer_free(p);
    hn_case_passed();
}
END_TEST

/* kill -9 with deliveries pending and some already done: after the restart
 * every message is delivered exactly once, none early. */
START_TEST(test_delay_survives_kill9)
{
    enum { NL = 10, NT = 10, NE = 5 };
    cluster_start();
    rmq_producer_t *p = producer_new();
    send_one(p, "Restart", "warm", NULL, NULL);
    int64_t t0 = rmq_wall_ms();
    char body[32], v[32];
    for (int i = 0; i < NE; i++) {
        snprintf(body, sizeof body, "early%d", i);
        send_one(p, "Restart", body, "DELAY", "1");
    }
    for (int i = 0; i < NL; i++) {
        snprintf(body, sizeof body, "lvl%d", i);
        send_one(p, "Restart", body, "DELAY", "5");
    }
    for (int i = 0; i < NT; i++) {
        snprintf(body, sizeof body, "at%d", i);
        snprintf(v, sizeof v, "%lld", (long long)(t0 + 5500 + 100 * i));
        send_one(p, "Restart", body, "__STARTDELIVERTIME", v);
    }
    until_count_t u = {"Restart", 1 + NE};
    ck_assert_msg(hn_wait_until(queue_has, &u, 10000), "level-1 messages never arrived");
    rmq_sleep_ms(500);                 /* their progress is persisted by now */
    hn_daemon_kill9(&broker_d);
    rmq_sleep_ms(1000);
    broker_start();
    u.want = 1 + NE + NL + NT;
    ck_assert_msg(hn_wait_until(queue_has, &u, 20000), "pending delayed messages lost after kill -9");
    rmq_sleep_ms(1500);
    stored_t s[128];
    size_t n = read_queue0("Restart", s, 128);
    ck_assert_uint_eq(n, 1 + NE + NL + NT);
    for (size_t k = 1; k < n; k++) {
        int count;
        find_body(s, n, s[k].body, &count);
        ck_assert_msg(count == 1, "%s delivered %d times", s[k].body, count);
        if (strncmp(s[k].body, "lvl", 3) == 0)
            ck_assert_msg(s[k].store_ms >= t0 + 5000 - EARLY_MS, "%s early", s[k].body);
        if (strncmp(s[k].body, "at", 2) == 0)
            ck_assert_msg(s[k].store_ms >= t0 + 5500 + 100 * atoi(s[k].body + 2) - EARLY_MS, "%s early", s[k].body);
    }
    rmq_producer_free(p);
    hn_case_passed();
}
END_TEST

/* ---- retry and dead letters -------------------------------------------------- */

typedef struct seen {
    pthread_mutex_t mu;
    int n;
    int64_t at[16];
    int times[16];
    char topic[16][64];
    int succeed;                       /* 1: the callback succeeds from now on */
} seen_t;

static rmq_consume_result_t failing(const rmq_message_ext_t *msg, void *arg)
{
    seen_t *s = arg;
    if (msg->body_len != 6 || memcmp(msg->body, "poison", 6) != 0)
        return RMQ_CONSUME_SUCCESS;
    pthread_mutex_lock(&s->mu);
    int ok = s->succeed;
    if (s->n < 16) {
        s->at[s->n] = rmq_wall_ms();
        s->times[s->n] = msg->reconsume_times;
        snprintf(s->topic[s->n], sizeof s->topic[0], "%s", msg->topic);
        s->n++;
    }
    pthread_mutex_unlock(&s->mu);
    return ok ? RMQ_CONSUME_SUCCESS : RMQ_CONSUME_LATER;
}

static int seen_reached(void *arg)
{
    seen_t *s = arg;
    pthread_mutex_lock(&s->mu);
    int n = s->n;
    pthread_mutex_unlock(&s->mu);
    return n >= s->succeed + 3;
}

static int mqadmin(hn_result_t *r, const char *cmd, const char *a1, const char *a2, const char *a3,
                   const char *a4)
{
    char bin[PATH_MAX];
    const char *argv[] = {hn_build_path("tools/mqadmin", bin, sizeof bin), cmd, "-n", ns_addr, a1, a2, a3, a4, NULL};
    ck_assert_int_eq(hn_run(argv, 20000, r), 0);
    return r->status;
}

static int dlq_listed(void *arg)
{
    hn_result_t r;
    int ok = mqadmin(&r, "queryDlq", "-g", "retry_group", NULL, NULL) == 0 && strstr(r.out, "poison") &&
             strstr(r.out, "RetryMe");
    hn_result_free(&r);
    return ok;
}

/* A failing callback sees the message after the first retry delay (level
 * 3 + 0 = 3 s), again after level 4, then it is in the DLQ (max 2);
 * queryDlq lists it and resendDlq delivers it to the group once more. */
START_TEST(test_retry_then_dlq_and_resend)
{
    cluster_start();
    rmq_producer_t *p = producer_new();
    send_one(p, "RetryMe", "warm", NULL, NULL);
    seen_t s = {.mu = PTHREAD_MUTEX_INITIALIZER};
    rmq_error_t e;
    rmq_push_consumer_opts_t o = {.group = "retry_group", .namesrv = ns_addr, .on_message = failing, .arg = &s,
                                  .consume_from = RMQ_CONSUME_FROM_FIRST, .rebalance_interval_ms = 1000,
                                  .max_reconsume_times = 2};
    rmq_push_consumer_t *c = rmq_push_consumer_new(&o, &e);
    ck_assert_msg(c != NULL, "%s", e.text);
    ck_assert_int_eq(rmq_push_consumer_subscribe(c, "RetryMe", "*"), RMQ_OK);
    ck_assert_int_eq(rmq_push_consumer_start(c), RMQ_OK);
    ck_assert_msg(hn_wait_until(route_ready, "%RETRY%retry_group", 15000), "retry topic never routed");
    send_one(p, "RetryMe", "poison", NULL, NULL);
    ck_assert_msg(hn_wait_until(seen_reached, &s, 30000), "saw the failing message %d times, want 3", s.n);
    ck_assert_msg(hn_wait_until(dlq_listed, NULL, 10000), "the message never showed in queryDlq");
    rmq_sleep_ms(1500);
    pthread_mutex_lock(&s.mu);
    ck_assert_int_eq(s.n, 3);          /* no fourth attempt: it went to the DLQ */
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(s.times[i], i);
        ck_assert_str_eq(s.topic[i], "RetryMe");
    }
    int64_t d1 = s.at[1] - s.at[0], d2 = s.at[2] - s.at[1];
    ck_assert_msg(d1 >= 3000 - EARLY_MS && d1 <= 3000 + 2500, "first retry after %lld ms, want ~3000", (long long)d1);
    ck_assert_msg(d2 >= 4000 - EARLY_MS && d2 <= 4000 + 2500, "second retry after %lld ms, want ~4000", (long long)d2);
    s.succeed = 1;
    pthread_mutex_unlock(&s.mu);

    hn_result_t r;
    ck_assert_int_eq(mqadmin(&r, "queryDlq", "-g", "retry_group", NULL, NULL), 0);
    ck_assert_msg(strstr(r.out, "RECONSUME_TIMES") && strstr(r.out, " 3 "), "queryDlq output:\n%s", r.out);
    hn_result_free(&r);
    ck_assert_int_eq(mqadmin(&r, "resendDlq", "-g", "retry_group", "-i", "00000000000000000000000000000000"), 1);
    hn_result_free(&r);
    ck_assert_int_eq(mqadmin(&r, "resendDlq", "-g", "retry_group", NULL, NULL), 0);
    ck_assert_msg(strstr(r.out, "RESENT") && strstr(r.out, "RetryMe"), "resendDlq output:\n%s", r.out);
    hn_result_free(&r);
    ck_assert_msg(hn_wait_until(seen_reached, &s, 15000), "the resent message never came back");
    pthread_mutex_lock(&s.mu);
    ck_assert_int_eq(s.times[3], 0);
    ck_assert_str_eq(s.topic[3], "RetryMe");
    pthread_mutex_unlock(&s.mu);
    rmq_push_consumer_free(c);
    rmq_producer_free(p);
    hn_case_passed();
}
END_TEST

static Suite *retry_suite(void)
{
    Suite *s = suite_create("retry");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_delay_levels_and_deliver_time);
    tcase_add_test(tc, test_retry_then_dlq_and_resend);
    tcase_add_test(tc, test_delay_survives_kill9);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(retry_suite());
}
