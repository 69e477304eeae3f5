/* test_flood.c: a heartbeat flood does not stall the broker (issue 20 item
 * 7). While connections pipeline heartbeats naming thousands of producer
 * groups (one of 200,000 groups in a ~2 MB header, sixteen connections
 * with five heartbeats of 1,000 groups each, one header over the 4 MiB
 * request-header limit), another connection sends messages one after the
 * other: every send is answered, SUCCESS (or, for at most one in ten,
 * SYSTEM_BUSY: it waited over waitTimeMillsInSendQueue behind the 2 MB
 * header being unpacked, which a slow sanitizer build can take), and none
 * takes longer than 2 s.
 * The 200,000-group heartbeat is refused BAD_REQUEST naming
 * maxHeartbeatGroups, each connection's fifth heartbeat naming
 * maxConnectionGroups, and the oversized header closes its connection. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "harness.h"
#include "rmq_rpc.h"
#include "rmq_time.h"
#include "wire.h"

#define TOPIC "FloodTopic"
#define BIG_GROUPS 200000
#define CONNS 16
#define BEATS 5
#define GROUPS_PER_BEAT 1000
#define MIN_SENDS 200
#define SLOW_US (2 * 1000 * 1000)
#define GROUP_NAME 24

static const char *case_dir;

static void setup(void)
{
    case_dir = hn_case_begin("flood");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

typedef struct flood {
    struct event_base *base;
    rmq_client_t *sender, *big, *huge, *conns[CONNS];
    int pending_beats;               /* heartbeats not answered yet */
    int big_status, huge_err;
    char big_remark[512];
    int refused_conn, accepted, other;
    int sends, send_failures, busy;
    char first_failure[256];
    int64_t send_start_us, slowest_us;
    char props[64];
} flood_t;

/* A heartbeat naming n producer groups prefix-0 .. prefix-(n-1); names in
 * names (n * GROUP_NAME bytes) and pointers in ptrs. */
static void beat_build(Rmq__Command *req, Rmq__HeartbeatData *hb, const char *prefix, int n, char *names,
                       char **ptrs)
{
    for (int i = 0; i < n; i++) {
        ptrs[i] = names + (size_t)i * GROUP_NAME;
        snprintf(ptrs[i], GROUP_NAME, "%.12s-%d", prefix, i);
    }
    rmq__command__init(req);
    rmq__heartbeat_data__init(hb);
    hb->client_id = (char *)prefix;
    hb->producer_groups = ptrs;
    hb->n_producer_groups = (size_t)n;
    req->code = RMQ__REQUEST_CODE__HEART_BEAT;
    req->header_case = RMQ__COMMAND__HEADER_HEARTBEAT;
    req->heartbeat = hb;
}

static void flood_maybe_done(flood_t *f)
{
    if (f->pending_beats == 0 && f->sends >= MIN_SENDS)
        event_base_loopbreak(f->base);
}

static void beat_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    flood_t *f = arg;
    const char *remark = err == RMQ_OK && resp->cmd->remark ? resp->cmd->remark : "";
    if (err == RMQ_OK && resp->cmd->status == RMQ__STATUS__SUCCESS)
        f->accepted++;
    else if (err == RMQ_OK && resp->cmd->status == RMQ__STATUS__BAD_REQUEST && strstr(remark, "maxConnectionGroups"))
        f->refused_conn++;
    else
        f->other++;
    f->pending_beats--;
    flood_maybe_done(f);
}

static void big_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    flood_t *f = arg;
    f->big_status = err == RMQ_OK ? resp->cmd->status : -1;
    snprintf(f->big_remark, sizeof f->big_remark, "%s", err == RMQ_OK && resp->cmd->remark ? resp->cmd->remark : "");
    f->pending_beats--;
    flood_maybe_done(f);
}

static void huge_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    flood_t *f = arg;
    f->huge_err = err;
    f->pending_beats--;
    flood_maybe_done(f);
}

static void send_next(flood_t *f);

static void send_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    flood_t *f = arg;
    int64_t took = rmq_mono_us() - f->send_start_us;
    if (err == RMQ_ESHUTDOWN)
        return;                      /* the test is over */
    if (took > f->slowest_us)
        f->slowest_us = took;
    if (err == RMQ_OK && resp->cmd->status == RMQ__STATUS__SYSTEM_BUSY)
        f->busy++;                   /* waited over waitTimeMillsInSendQueue behind a heartbeat: answered */
    else if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS) {
        if (!f->send_failures++)
            snprintf(f->first_failure, sizeof f->first_failure, "send %d: %s, status %d: %s", f->sends,
                     rmq_strerror(err), err == RMQ_OK ? resp->cmd->status : -1,
                     err == RMQ_OK && resp->cmd->remark ? resp->cmd->remark : "");
    }
    f->sends++;
    flood_maybe_done(f);
    if (f->pending_beats > 0 || f->sends < MIN_SENDS)
        send_next(f);
}

static void send_next(flood_t *f)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    snprintf(f->props, sizeof f->props, "KEYS\001k%d\002", f->sends);
    wire_send_hdr(&req, &h, "flood_producer", TOPIC, 0, f->props);
    f->send_start_us = rmq_mono_us();
    ck_assert_int_eq(rmq_client_call(f->sender, &req, "m", 1, WIRE_RPC_TIMEOUT_MS * 3, send_done, f), RMQ_OK);
}

/* Pipelines every heartbeat of the flood. */
static void flood_start(flood_t *f)
{
    Rmq__Command req;
    Rmq__HeartbeatData hb;
    char *names = malloc((size_t)BIG_GROUPS * GROUP_NAME), **ptrs = malloc(BIG_GROUPS * sizeof(*ptrs));
    char prefix[32];
    ck_assert_ptr_nonnull(names);
    ck_assert_ptr_nonnull(ptrs);

    beat_build(&req, &hb, "big", BIG_GROUPS, names, ptrs);
    ck_assert_int_eq(rmq_client_call(f->big, &req, NULL, 0, 120000, big_done, f), RMQ_OK);
    f->pending_beats++;
    for (int c = 0; c < CONNS; c++)
        for (int b = 0; b < BEATS; b++) {
            snprintf(prefix, sizeof prefix, "c%d-b%d", c, b);
            beat_build(&req, &hb, prefix, GROUPS_PER_BEAT, names, ptrs);
            ck_assert_int_eq(rmq_client_call(f->conns[c], &req, NULL, 0, 120000, beat_done, f), RMQ_OK);
            f->pending_beats++;
        }
    /* one producer group whose name alone is over the request-header limit */
    size_t huge = (5u << 20);
    char *name = malloc(huge + 1);
    ck_assert_ptr_nonnull(name);
    memset(name, 'g', huge);
    name[huge] = '\0';
    ptrs[0] = name;
    hb.n_producer_groups = 1;
    hb.client_id = (char *)"huge";
    ck_assert_int_eq(rmq_client_call(f->huge, &req, NULL, 0, 120000, huge_done, f), RMQ_OK);
    f->pending_beats++;
    free(name);
    free(names);
    free(ptrs);
}

START_TEST(test_heartbeat_flood_keeps_sends_answered)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], addr[64], props[2048];
    Rmq__Command req;
    Rmq__TopicConfig tc;
    flood_t f = { .big_status = -2, .huge_err = RMQ_OK };
    rmq_client_opts_t o = { .connect_timeout_ms = 3000, .name = "flood", .max_frame = 32u << 20 };

    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "namesrv",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    snprintf(props, sizeof props,
             "brokerName=broker-f\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store\n"
             "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\n", case_dir, ns_addr);
    ck_assert_int_eq(hn_daemon_start_conf(&bk, case_dir, "broker/mqbroker", "broker", props, addr, sizeof addr), 0);
    wire_topic_request(&req, &tc, TOPIC, 1);
    ck_assert_int_eq(wire_call(addr, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);

    ck_assert_ptr_nonnull(f.base = event_base_new());
    ck_assert_ptr_nonnull(f.sender = rmq_client_new(f.base, addr, &o));
    ck_assert_ptr_nonnull(f.big = rmq_client_new(f.base, addr, &o));
    ck_assert_ptr_nonnull(f.huge = rmq_client_new(f.base, addr, &o));
    for (int c = 0; c < CONNS; c++)
        ck_assert_ptr_nonnull(f.conns[c] = rmq_client_new(f.base, addr, &o));
    send_next(&f);
    flood_start(&f);
    struct timeval limit = { 100, 0 };
    event_base_loopexit(f.base, &limit);
    event_base_dispatch(f.base);

    ck_assert_msg(f.pending_beats == 0, "%d heartbeats unanswered", f.pending_beats);
    ck_assert_int_ge(f.sends, MIN_SENDS);
    ck_assert_msg(f.send_failures == 0, "%d sends failed, the first: %s", f.send_failures, f.first_failure);
    ck_assert_msg(f.busy * 10 <= f.sends, "%d of %d sends answered SYSTEM_BUSY", f.busy, f.sends);
    ck_assert_msg(f.slowest_us <= SLOW_US, "a send took %lld ms during the flood", (long long)f.slowest_us / 1000);
    ck_assert_int_eq(f.big_status, RMQ__STATUS__BAD_REQUEST);
    ck_assert_msg(strstr(f.big_remark, "maxHeartbeatGroups") != NULL, "remark: %s", f.big_remark);
    ck_assert_int_eq(f.refused_conn, CONNS);
    ck_assert_int_eq(f.accepted, CONNS * (BEATS - 1));
    ck_assert_int_eq(f.other, 0);
    ck_assert_int_ne(f.huge_err, RMQ_OK);
    fprintf(stderr, "flood: %d sends (%d SYSTEM_BUSY), slowest %lld us\n", f.sends, f.busy, (long long)f.slowest_us);

    rmq_client_free(f.sender);
    rmq_client_free(f.big);
    rmq_client_free(f.huge);
    for (int c = 0; c < CONNS; c++)
        rmq_client_free(f.conns[c]);
    event_base_loop(f.base, EVLOOP_NONBLOCK);
    event_base_free(f.base);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *flood_suite(void)
{
    Suite *s = suite_create("flood");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 200);
    tcase_add_test(tc, test_heartbeat_flood_keeps_sends_answered);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return hn_run_suite(flood_suite());
}
