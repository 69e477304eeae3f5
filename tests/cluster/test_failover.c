/* test_failover.c: client failover with real mqnamesrv / mqbroker processes
 * on loopback.
 *
 * consumer: one SYNC_MASTER and its slave, 50k messages; a push consumer
 * is consuming when the master is killed with SIGKILL; it finishes every
 * message from the slave and commits its offsets there; the master comes
 * back on the same ports; its offsets reach the slave's (the slave's
 * metadata sync hands them back, the consumer's commits follow) and no
 * committed offset, sampled on the slave and then on the master, ever goes
 * down; the consumer moves back to the master (new messages arrive); a
 * second consumer of the group started after the first one stopped gets
 * nothing again.
 *
 * producer: two masters (broker-a with a slave); broker-a's master is killed
 * while four threads send; the sends go on through broker-b, failures only
 * in a short window after the kill, and nothing reaches the slave. */
#include <check.h>
#include <pthread.h>
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

#define TOPIC "FailoverTopic"
#define GROUP "failover_group"
#define QUEUES WIRE_QUEUES
#define TOTAL 50000
#define EXTRA 1000
#define RPC_TIMEOUT_MS 5000
#define WAIT_MS 120000

static const char *case_dir;
static char ns_addr[64];

static void setup(void)
{
    case_dir = hn_case_begin("failover");
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

/* A broker of broker set `set` (file and log named `name`) with ports port /
 * ha_port (0: ephemeral) and extra properties; its address into addr. */
static void broker_start(hn_daemon_t *d, const char *name, const char *set, int port, int ha_port,
                         const char *extra, char *addr, size_t len)
{
    char props[2048];
    snprintf(props, sizeof props,
             "brokerClusterName=FailoverCluster\nbrokerName=%s\nlistenPort=%d\nhaListenPort=%d\n"
             "storePathRootDir=%s/store-%s\nmapedFileSizeCommitLog=67108864\nbrokerIP1=127.0.0.1\n"
             "namesrvAddr=%s\nflushConsumerOffsetInterval=1000\nslaveSyncInterval=1000\n%s",
             set, port, ha_port, case_dir, name, ns_addr, extra ? extra : "");
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", name, props, addr, len), 0);
}

/* ---- blocking requests ------------------------------------------------------- */

/* Sends req to addr; the status, or -1 on a transport error. keep: the answer. */
static int call(const char *addr, Rmq__Command *req, rmq_frame_t *keep)
{
    static const wire_link_t ln = {
        .opts = { .connect_timeout_ms = 2000, .name = "test" },
        .timeout_ms = RPC_TIMEOUT_MS,
    };
    return wire_call_with(&ln, addr, req, NULL, 0, keep);
}

static int create_topic(const char *addr, const char *topic)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, topic, QUEUES);
    return call(addr, &req, NULL);
}

/* The queue's max offset at addr, or -1. */
static long long max_offset(const char *addr, const char *topic, int q)
{
    Rmq__Command req;
    Rmq__QueueRequest h;
    rmq_frame_t resp = {0};
    wire_max_offset_request(&req, &h, topic, q);
    if (call(addr, &req, &resp) != RMQ__STATUS__SUCCESS) {
        if (resp.cmd)
            rmq_frame_clear(&resp);
        return -1;
    }
    long long off = wire_resp_offset(&resp);
    rmq_frame_clear(&resp);
    return off;
}

/* The group's committed offset of queue q at addr; -1 if none, -2 if the call failed. */
static long long committed(const char *addr, int q)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__ConsumerOffsetRequest h = RMQ__CONSUMER_OFFSET_REQUEST__INIT;
    rmq_frame_t resp = {0};
    h.consumer_group = (char *)GROUP;
    h.topic = (char *)TOPIC;
    h.queue_id = q;
    req.code = RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET;
    req.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
    req.consumer_offset = &h;
    int st = call(addr, &req, &resp);
    if (st < 0)
        return -2;
    long long off = st == RMQ__STATUS__SUCCESS &&
                            resp.cmd->header_case == RMQ__COMMAND__HEADER_OFFSET_RESP
                        ? resp.cmd->offset_resp->offset : -1;
    rmq_frame_clear(&resp);
    return off;
}

/* The runtime-info value of key at addr into out ("" if absent or unreachable). */
static void runtime_get(const char *addr, const char *key, char *out, size_t len)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = {0};
    out[0] = '\0';
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (call(addr, &req, &resp) != RMQ__STATUS__SUCCESS) {
        if (resp.cmd)
            rmq_frame_clear(&resp);
        return;
    }
    wire_runtime_value(&resp, key, out, len);
    rmq_frame_clear(&resp);
}

static long long runtime_ll(const char *addr, const char *key)
{
    char v[160];
    runtime_get(addr, key, v, sizeof v);
    return v[0] ? atoll(v) : -1;
}

static int slave_connected(void *arg)
{
    char v[32];
    runtime_get(arg, "haConnected", v, sizeof v);
    return strcmp(v, "true") == 0;
}

typedef struct pair {
    const char *a, *b;
} pair_t;

static int caught_up(void *arg)
{
    pair_t *p = arg;
    long long m = runtime_ll(p->a, "commitLogMaxOffset");
    return m > 0 && m == runtime_ll(p->b, "commitLogMaxOffset") &&
           runtime_ll(p->b, "dispatchBehindBytes") == 0;
}

static int has_topic(void *arg)
{
    return max_offset(arg, TOPIC, 0) >= 0;
}

/* ---- sending ------------------------------------------------------------------ */

typedef struct async_count {
    long want;
    _Atomic long ok, failed;
    _Atomic int have_error;
    char first_error[300];
} async_count_t;

static void async_done(const rmq_send_result_t *res, void *arg)
{
    async_count_t *c = arg;
    if (res->error.err == RMQ_OK && res->status == RMQ_SEND_OK)
        atomic_fetch_add(&c->ok, 1);
    else {
        if (atomic_exchange(&c->have_error, 1) == 0)
            snprintf(c->first_error, sizeof c->first_error, "%s (status %d)", res->error.text,
                     (int)res->status);
        atomic_fetch_add(&c->failed, 1);
    }
}

static int async_all_done(void *arg)
{
    async_count_t *c = arg;
    return atomic_load(&c->ok) + atomic_load(&c->failed) >= c->want;
}

/* Sends messages [from, to) of TOPIC (body: the index in decimal); asserts all are SEND_OK. */
static void send_range(long from, long to)
{
    rmq_error_t e;
    rmq_producer_opts_t po = {.group = "failover_producer", .namesrv = ns_addr,
                              .max_in_flight = 1000};
    rmq_producer_t *p = rmq_producer_new(&po, &e);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(rmq_producer_start(p), RMQ_OK);
    async_count_t c = {.want = to - from};
    char body[32];
    for (long i = from; i < to; i++) {
        int n = snprintf(body, sizeof body, "%ld", i);
        rmq_message_t m = {.topic = TOPIC, .body = body, .body_len = (size_t)n};
        rmq_err_t err = rmq_producer_send_async(p, &m, 10000, async_done, &c);
        ck_assert_msg(err == RMQ_OK, "send_async %ld: %s", i, rmq_strerror(err));
    }
    ck_assert(hn_wait_until(async_all_done, &c, WAIT_MS));
    rmq_producer_free(p);
    ck_assert_msg(atomic_load(&c.failed) == 0, "%ld of %ld sends failed, the first: %s",
                  atomic_load(&c.failed), to - from, c.first_error);
}

/* ---- consuming ---------------------------------------------------------------- */

typedef struct seen {
    _Atomic uint32_t count[TOTAL + EXTRA];
    _Atomic long total, distinct, dups, bad;
    _Atomic int slow_us;
} seen_t;

static rmq_consume_result_t on_msg(const rmq_message_ext_t *msg, void *arg)
{
    seen_t *s = arg;
    char buf[32];
    size_t n = msg->body_len < sizeof buf - 1 ? msg->body_len : sizeof buf - 1;
    memcpy(buf, msg->body, n);
    buf[n] = '\0';
    char *end;
    long i = strtol(buf, &end, 10);
    if (*end || i < 0 || i >= TOTAL + EXTRA) {
        atomic_fetch_add(&s->bad, 1);
        return RMQ_CONSUME_SUCCESS;
    }
    if (atomic_fetch_add(&s->count[i], 1) == 0)
        atomic_fetch_add(&s->distinct, 1);
    else
        atomic_fetch_add(&s->dups, 1);
    atomic_fetch_add(&s->total, 1);
    int us = atomic_load(&s->slow_us);
    if (us)
        usleep((useconds_t)us);
    return RMQ_CONSUME_SUCCESS;
}

static rmq_push_consumer_t *consumer_start(seen_t *s)
{
    rmq_error_t e;
    rmq_push_consumer_opts_t co = {
        .group = GROUP, .namesrv = ns_addr, .on_message = on_msg, .arg = s,
        .consume_from = RMQ_CONSUME_FROM_FIRST, .consume_threads = 4,
        .commit_interval_ms = 500, .rebalance_interval_ms = 2000, .suspend_ms = 2000,
        .pull_timeout_ms = 5000,
    };
    rmq_push_consumer_t *c = rmq_push_consumer_new(&co, &e);
    ck_assert_msg(c != NULL, "%s", e.text);
    ck_assert_int_eq(rmq_push_consumer_subscribe(c, TOPIC, "*"), RMQ_OK);
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

/* Samples the committed offsets at addr into last[] and checks that none went
 * down; returns how many queues are at or past want[] (want NULL: 0). */
static int offsets_sample(const char *addr, long long last[QUEUES], const long long *want,
                          const char *who)
{
    int at = 0;
    for (int q = 0; q < QUEUES; q++) {
        long long o = committed(addr, q);
        if (o < 0)
            continue;                 /* unreachable or not known yet */
        ck_assert_msg(o >= last[q], "%s: committed offset of queue %d went down from %lld to %lld",
                      who, q, last[q], o);
        last[q] = o;
        if (want && o >= want[q])
            at++;
    }
    return at;
}

/* ---- consumer failover -------------------------------------------------------- */

START_TEST(test_consumer_failover)
{
    static seen_t seen;               /* 200 KiB: not on the stack */
    memset(&seen, 0, sizeof seen);
    hn_daemon_t ns, master, slave;
    char maddr[64], saddr[64];
    ns_start(&ns);
    broker_start(&master, "broker-a", "broker-a", 0, 0,
                 "brokerId=0\nbrokerRole=SYNC_MASTER\nflushDiskType=ASYNC_FLUSH\n", maddr, sizeof maddr);
    int mport = hn_daemon_port(&master, "listenPort"), mha = hn_daemon_port(&master, "haListenPort");
    ck_assert_int_gt(mport, 0);
    ck_assert_int_gt(mha, 0);
    broker_start(&slave, "broker-a-s", "broker-a", 0, 0, "brokerId=1\nbrokerRole=SLAVE\n", saddr,
                 sizeof saddr);
    ck_assert_msg(hn_wait_until(slave_connected, saddr, 30000), "slave never connected");
    ck_assert_int_eq(create_topic(maddr, TOPIC), RMQ__STATUS__SUCCESS);
    ck_assert_msg(hn_wait_until(has_topic, saddr, 30000), "slave never got the topic");
    ck_assert_msg(probe_wait_route_queues(ns_addr, TOPIC, QUEUES, 30000), "topic never in the route");

    long long t0 = hn_now_ms();
    send_range(0, TOTAL);
    fprintf(stderr, "# consumer failover: %d messages sent (SYNC_MASTER) in %lld ms\n", TOTAL,
            hn_now_ms() - t0);
    pair_t ms = {maddr, saddr};
    ck_assert_msg(hn_wait_until(caught_up, &ms, 30000), "slave never caught up");
    long long qmax[QUEUES];
    for (int q = 0; q < QUEUES; q++) {
        qmax[q] = max_offset(saddr, TOPIC, q);
        ck_assert_int_eq(qmax[q], max_offset(maddr, TOPIC, q));
    }

    /* Slow enough (4 threads x 150 us) that the kill lands mid-way. */
    atomic_store(&seen.slow_us, 150);
    rmq_push_consumer_t *c = consumer_start(&seen);
    at_least_t mid = {&seen.distinct, TOTAL * 2 / 5};
    ck_assert_msg(hn_wait_until(reached, &mid, WAIT_MS), "consumer stuck at %ld",
                  atomic_load(&seen.distinct));
    long at_kill = atomic_load(&seen.distinct);
    hn_daemon_kill9(&master);
    long long t_kill = hn_now_ms();
    ck_assert_msg(at_kill < TOTAL, "the consumer finished before the kill");
    fprintf(stderr, "# consumer failover: master killed at %ld of %d consumed\n", at_kill, TOTAL);

    /* All of it from the slave, commits to the slave; offsets never go down. */
    long long slave_last[QUEUES] = {0}, master_last[QUEUES] = {0};
    at_least_t all = {&seen.distinct, TOTAL};
    while (!reached(&all)) {
        ck_assert_msg(hn_now_ms() - t_kill < WAIT_MS, "consumer stuck at %ld of %d after the kill",
                      atomic_load(&seen.distinct), TOTAL);
        offsets_sample(saddr, slave_last, NULL, "slave");
        rmq_sleep_ms(200);
    }
    fprintf(stderr, "# consumer failover: all %d consumed %lld ms after the kill (%ld duplicates)\n",
            TOTAL, hn_now_ms() - t_kill, atomic_load(&seen.dups));
    atomic_store(&seen.slow_us, 0);
    long long t_end = hn_now_ms();
    while (offsets_sample(saddr, slave_last, qmax, "slave") < QUEUES) {
        ck_assert_msg(hn_now_ms() - t_end < 30000,
                      "slave offsets %lld %lld %lld %lld never reached %lld %lld %lld %lld",
                      slave_last[0], slave_last[1], slave_last[2], slave_last[3], qmax[0], qmax[1],
                      qmax[2], qmax[3]);
        rmq_sleep_ms(200);
    }

    /* The master comes back on its ports; its offsets reach the slave's and never go down. */
    char extra[256];
    snprintf(extra, sizeof extra, "brokerId=0\nbrokerRole=SYNC_MASTER\nflushDiskType=ASYNC_FLUSH\n");
    broker_start(&master, "broker-a", "broker-a", mport, mha, extra, maddr, sizeof maddr);
    ck_assert_msg(hn_wait_until(slave_connected, saddr, 30000), "slave never reconnected");
    long long t_back = hn_now_ms();
    int first = 1;
    while (offsets_sample(maddr, master_last, qmax, "master") < QUEUES) {
        if (first) {
            fprintf(stderr, "# consumer failover: master back with offsets %lld %lld %lld %lld\n",
                    master_last[0], master_last[1], master_last[2], master_last[3]);
            first = 0;
        }
        ck_assert_msg(hn_now_ms() - t_back < 30000,
                      "master offsets %lld %lld %lld %lld never reached %lld %lld %lld %lld",
                      master_last[0], master_last[1], master_last[2], master_last[3], qmax[0],
                      qmax[1], qmax[2], qmax[3]);
        rmq_sleep_ms(200);
    }
    fprintf(stderr, "# consumer failover: master offsets caught up %lld ms after its restart\n",
            hn_now_ms() - t_back);

    /* New messages go to the master; the consumer reads them there. */
    ck_assert(probe_wait_route_queues(ns_addr, TOPIC, QUEUES, 30000));
    send_range(TOTAL, TOTAL + EXTRA);
    at_least_t more = {&seen.distinct, TOTAL + EXTRA};
    long long t_more = hn_now_ms();
    while (!reached(&more)) {
        ck_assert_msg(hn_now_ms() - t_more < 60000, "consumer got %ld of %d after the restart",
                      atomic_load(&seen.distinct) - TOTAL, EXTRA);
        offsets_sample(maddr, master_last, NULL, "master");
        offsets_sample(saddr, slave_last, NULL, "slave");
        rmq_sleep_ms(200);
    }
    for (int i = 0; i < 10; i++) {
        offsets_sample(maddr, master_last, NULL, "master");
        rmq_sleep_ms(200);
    }
    rmq_push_consumer_free(c);
    long dups = atomic_load(&seen.dups);
    ck_assert_int_eq(atomic_load(&seen.bad), 0);
    ck_assert_msg(dups <= 2000, "%ld duplicates: more than an at-least-once window", dups);

    /* A new consumer of the group starts where the first stopped: nothing again. */
    for (int q = 0; q < QUEUES; q++) {
        long long mo = max_offset(maddr, TOPIC, q);
        ck_assert_int_eq(committed(maddr, q), mo);
    }
    long before = atomic_load(&seen.total);
    c = consumer_start(&seen);
    rmq_sleep_ms(4000);
    rmq_push_consumer_free(c);
    long again = atomic_load(&seen.total) - before;
    fprintf(stderr, "# consumer failover: %ld duplicates in all, %ld redelivered to a new consumer\n",
            dups, again);
    ck_assert_int_eq(again, 0);
    for (int q = 0; q < QUEUES; q++)
        ck_assert_int_ge(committed(maddr, q), master_last[q]);

    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- producer failover -------------------------------------------------------- */

#define PTHREADS 4
#define PRUN_MS 9000
#define PKILL_MS 3000
#define MAX_EVENTS 4000000              /* 8 bytes each */

typedef struct pevent {
    int32_t at_ms;                    /* since the start */
    int8_t ok;
    int8_t broker;                    /* 0 broker-a, 1 broker-b, -1 other */
} pevent_t;

typedef struct prun {
    rmq_producer_t *p;
    long long start;
    pevent_t *ev;
    _Atomic long nev;
    _Atomic int stop;
    char first_error[256];
    pthread_mutex_t mu;
} prun_t;

static void *psend_main(void *arg)
{
    prun_t *r = arg;
    char body[64];
    long i = 0;
    while (!atomic_load(&r->stop)) {
        int n = snprintf(body, sizeof body, "producer failover %ld", i++);
        rmq_message_t m = {.topic = TOPIC, .body = body, .body_len = (size_t)n};
        rmq_send_result_t res;
        rmq_err_t err = rmq_producer_send(r->p, &m, 3000, &res);
        long k = atomic_fetch_add(&r->nev, 1);
        if (k < MAX_EVENTS) {           /* past it: sent, not recorded (asserted below) */
            pevent_t *e = &r->ev[k];
            e->at_ms = (int32_t)(hn_now_ms() - r->start);
            e->ok = err == RMQ_OK;
            e->broker = strcmp(res.broker_name, "broker-a") == 0   ? 0
                        : strcmp(res.broker_name, "broker-b") == 0 ? 1
                                                                   : -1;
        }
        if (err != RMQ_OK) {
            pthread_mutex_lock(&r->mu);
            if (!r->first_error[0])
                snprintf(r->first_error, sizeof r->first_error, "%s", res.error.text);
            pthread_mutex_unlock(&r->mu);
            rmq_sleep_ms(20);
        }
    }
    return NULL;
}

START_TEST(test_producer_failover)
{
    hn_daemon_t ns, a, as, b;
    char aaddr[64], asaddr[64], baddr[64];
    ns_start(&ns);
    broker_start(&a, "broker-a", "broker-a", 0, 0, "brokerId=0\nbrokerRole=ASYNC_MASTER\n", aaddr,
                 sizeof aaddr);
    broker_start(&b, "broker-b", "broker-b", 0, 0, "brokerId=0\nbrokerRole=ASYNC_MASTER\n", baddr,
                 sizeof baddr);
    broker_start(&as, "broker-a-s", "broker-a", 0, 0, "brokerId=1\nbrokerRole=SLAVE\n", asaddr,
                 sizeof asaddr);
    ck_assert_msg(hn_wait_until(slave_connected, asaddr, 30000), "slave never connected");
    ck_assert_int_eq(create_topic(aaddr, TOPIC), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(create_topic(baddr, TOPIC), RMQ__STATUS__SUCCESS);
    ck_assert_msg(hn_wait_until(has_topic, asaddr, 30000), "slave never got the topic");
    ck_assert_msg(probe_wait_route_queues(ns_addr, TOPIC, 2 * QUEUES, 30000), "topic never on both brokers");

    prun_t r = {0};
    pthread_mutex_init(&r.mu, NULL);
    r.ev = calloc(MAX_EVENTS, sizeof *r.ev);
    ck_assert_ptr_nonnull(r.ev);
    rmq_error_t e;
    rmq_producer_opts_t po = {.group = "failover_producer", .namesrv = ns_addr};
    r.p = rmq_producer_new(&po, &e);
    ck_assert_ptr_nonnull(r.p);
    ck_assert_int_eq(rmq_producer_start(r.p), RMQ_OK);
    r.start = hn_now_ms();
    pthread_t th[PTHREADS];
    for (int i = 0; i < PTHREADS; i++)
        ck_assert_int_eq(pthread_create(&th[i], NULL, psend_main, &r), 0);
    rmq_sleep_ms(PKILL_MS);
    hn_daemon_kill9(&a);
    int kill_ms = (int)(hn_now_ms() - r.start);
    /* During the run the slave sees no client but these probes. */
    long long slave_conns_max = 0;
    while (hn_now_ms() - r.start < PRUN_MS) {
        long long n = runtime_ll(asaddr, "connectionCount");
        slave_conns_max = n > slave_conns_max ? n : slave_conns_max;
        rmq_sleep_ms(250);
    }
    atomic_store(&r.stop, 1);
    for (int i = 0; i < PTHREADS; i++)
        pthread_join(th[i], NULL);
    rmq_producer_free(r.p);

    long n = atomic_load(&r.nev);
    ck_assert_int_le(n, MAX_EVENTS);
    long ok_before = 0, ok_a_after = 0, ok_b_after = 0, failed = 0, other = 0;
    int first_fail = -1, last_fail = -1, last_ok = 0;
    for (long i = 0; i < n; i++) {
        const pevent_t *ev = &r.ev[i];
        if (ev->ok && ev->broker < 0)
            other++;
        if (!ev->ok) {
            failed++;
            if (first_fail < 0 || ev->at_ms < first_fail)
                first_fail = ev->at_ms;
            if (ev->at_ms > last_fail)
                last_fail = ev->at_ms;
            continue;
        }
        last_ok = ev->at_ms > last_ok ? ev->at_ms : last_ok;
        if (ev->at_ms < kill_ms)
            ok_before++;
        else if (ev->broker == 0)
            ok_a_after++;
        else if (ev->broker == 1)
            ok_b_after++;
    }
    fprintf(stderr,
            "# producer failover: %ld sends, %ld ok before the kill at %d ms, %ld ok after "
            "(broker-a %ld, broker-b %ld), %ld failed in [%d, %d] ms%s%s; slave connections max %lld\n",
            n, ok_before, kill_ms, ok_a_after + ok_b_after, ok_a_after, ok_b_after, failed,
            first_fail, last_fail, failed ? ": " : "", r.first_error, slave_conns_max);
    ck_assert_int_eq(other, 0);
    ck_assert_int_gt(ok_before, 100);
    ck_assert_int_gt(ok_b_after, 100);
    ck_assert_int_ge(last_ok, PRUN_MS - 1000);
    /* broker-a answers nothing sent after the kill (a few answered in flight may land just after). */
    ck_assert_msg(ok_a_after <= PTHREADS, "%ld sends to broker-a succeeded after its kill", ok_a_after);
    if (failed) {
        ck_assert_int_ge(first_fail, kill_ms - 100);
        ck_assert_msg(last_fail - kill_ms <= 4000, "sends failed until %d ms, %d ms after the kill",
                      last_fail, last_fail - kill_ms);
    }
    /* Nothing was sent to the slave: it stored nothing itself and no client but our probes connected. */
    ck_assert_int_le(slave_conns_max, 1);
    ck_assert_int_eq(runtime_ll(asaddr, "msgPutTotalTodayNow"), 0);
    free(r.ev);
    pthread_mutex_destroy(&r.mu);

    ck_assert_int_eq(hn_daemon_stop(&as, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&b, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *failover_suite(void)
{
    Suite *s = suite_create("failover");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_consumer_failover);
    tcase_add_test(tc, test_producer_failover);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(failover_suite());
}
