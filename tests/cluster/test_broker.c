/* test_broker.c: mqbroker as a real process (with mqnamesrv) on ephemeral
 * loopback ports and small commit-log files. Messages are sent with
 * pipelined asynchronous requests over one rmq_client and pulled back on
 * the same event loop (wire.c); every body is regenerated from its index (carried
 * in the KEYS property) and compared byte for byte. Also measures send and
 * pull throughput (printed to stderr, not asserted). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <event2/event.h>

#include "harness.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "wire.h"

#define RPC_TIMEOUT_MS WIRE_RPC_TIMEOUT_MS
#define TOPIC "BenchTopic"
#define GROUP "test_group"
#define PRODUCER "test_producer"
#define QUEUES WIRE_QUEUES
#define BODY_MAX WIRE_BODY_MAX
#define BIG_TOTAL 100000
#define BK_TBW "TBW102"

static const char *case_dir;
/* SYSTEM_BUSY answers are counted apart: the flow-control case expects them. */
static const wire_flow_t FLOW = {
    .topic = TOPIC, .producer_group = PRODUCER, .consumer_group = GROUP, .count_busy = 1,
};

/* ---- daemons --------------------------------------------------------------- */

static void ns_start(hn_daemon_t *d, char *addr, size_t len)
{
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", addr, len), 0);
}

/* Starts mqbroker over case_dir/store with 1 MiB commit-log files plus extra
 * properties. Sends may wait 60 s in the send queue: the cases count every ack,
 * and on a loaded machine (ASan, two suites at once) the default 200 ms
 * answered a few sends SYSTEM_BUSY. */
static void broker_start(hn_daemon_t *d, const char *ns, const char *extra, char *addr, size_t len)
{
    char props[2048];
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store\n"
             "mapedFileSizeCommitLog=1048576\nmapedFileSizeConsumeQueue=6000000\nmaxMessageSize=262144\n"
             "maxTransferCountOnMessageInMemory=1024\nmaxTransferBytesOnMessageInMemory=4194304\n"
             "logLevel=info\nwaitTimeMillsInSendQueue=60000\nnamesrvAddr=%s\n%s",
             case_dir, ns ? ns : "", extra ? extra : "");
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", "broker", props, addr, len), 0);
}

/* ---- blocking requests ------------------------------------------------------ */

/* Sends req (+ body) to addr and returns the status; resp kept if wanted. */
static int call(const char *addr, Rmq__Command *req, const void *body, size_t len, rmq_frame_t *keep)
{
    int status = wire_call(addr, req, body, len, keep);
    ck_assert_msg(status >= 0, "no answer from %s", addr);
    return status;
}

static int create_topic(const char *addr, const char *topic, int queues)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, topic, queues);
    return call(addr, &req, NULL, 0, NULL);
}

static int send_sync(const char *addr, const char *topic, int queue_id, const void *body, size_t len)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    wire_send_hdr(&req, &h, PRODUCER, topic, queue_id, (char *)"");
    return call(addr, &req, body, len, NULL);
}

static int offset_call(const char *addr, int code, const char *topic, int q, int64_t commit, int64_t *out)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__ConsumerOffsetRequest h = RMQ__CONSUMER_OFFSET_REQUEST__INIT;
    rmq_frame_t resp = { 0 };
    h.consumer_group = (char *)GROUP;
    h.topic = (char *)topic;
    h.queue_id = q;
    h.commit_offset = commit;
    req.code = code;
    req.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
    req.consumer_offset = &h;
    int status = call(addr, &req, NULL, 0, &resp);
    if (status == RMQ__STATUS__SUCCESS && out) {
        ck_assert_int_eq(resp.cmd->header_case, RMQ__COMMAND__HEADER_OFFSET_RESP);
        *out = resp.cmd->offset_resp->offset;
    }
    rmq_frame_clear(&resp);
    return status;
}

/* ---- fixtures ---------------------------------------------------------------- */

static void setup(void)
{
    case_dir = hn_case_begin("broker");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

/* ---- cases ------------------------------------------------------------------- */

/* Registration, 100k messages of 1 B..4 KiB sent pipelined and pulled back. */
START_TEST(test_send_pull_100k)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], addr[64];
    ns_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&bk, ns_addr, NULL, addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);

    /* the new topic's route shows up at the name server */
    Rmq__Command req;
    Rmq__TopicRequest tr;
    wire_topic_query(&req, &tr, RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC, TOPIC);
    int found = 0;
    for (int tries = 0; tries < 50 && !found; tries++) {
        rmq_frame_t resp = { 0 };
        if (call(ns_addr, &req, NULL, 0, &resp) == RMQ__STATUS__SUCCESS &&
            resp.cmd->header_case == RMQ__COMMAND__HEADER_TOPIC_ROUTE &&
            resp.cmd->topic_route->n_broker_datas == 1 && resp.cmd->topic_route->broker_datas[0]->n_addrs == 1)
            found = strcmp(resp.cmd->topic_route->broker_datas[0]->addrs[0]->addr, addr) == 0;
        rmq_frame_clear(&resp);
        if (!found)
            usleep(100 * 1000);
    }
    ck_assert_msg(found, "route of %s does not name broker %s", TOPIC, addr);

    wire_sender_t sd;
    double ssecs = wire_send_all(addr, &sd, &FLOW, BIG_TOTAL, 256);
    ck_assert_msg(sd.failed == 0, "%d sends failed, first status %d", sd.failed, sd.first_fail);
    ck_assert_int_eq(sd.acked, BIG_TOTAL);

    wire_puller_t pl;
    double psecs = wire_pull_all(addr, &pl, &FLOW, BIG_TOTAL);
    ck_assert_int_eq(pl.errors, 0);
    ck_assert_int_eq(pl.bad, 0);
    ck_assert_int_eq(pl.dup, 0);
    ck_assert_int_eq(pl.count, BIG_TOTAL);
    fprintf(stderr, "# throughput: send %d msgs (%.1f MiB) in %.2f s = %.0f msg/s, %.1f MiB/s (window 256)\n",
            BIG_TOTAL, (double)sd.bytes / 1048576.0, ssecs, BIG_TOTAL / ssecs,
            (double)sd.bytes / 1048576.0 / ssecs);
    fprintf(stderr, "# throughput: pull %d msgs (%.1f MiB) in %.2f s = %.0f msg/s, %.1f MiB/s (4 queues, 1024/pull)\n",
            pl.count, (double)pl.bytes / 1048576.0, psecs, pl.count / psecs, (double)pl.bytes / 1048576.0 / psecs);
    free(pl.seen);
    wire_sender_deinit(&sd);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    /* a clean stop unregisters: the route is gone at once */
    ck_assert_int_eq(call(ns_addr, &req, NULL, 0, NULL), RMQ__STATUS__TOPIC_NOT_EXIST);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- long polling ------------------------------------------------------------ */

typedef struct lp {
    struct event_base *base;
    rmq_client_t *cli;
    long long t_pull, t_answer;
    int status, count;
    int send_status;
} lp_t;

static void lp_pulled(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    lp_t *lp = arg;
    lp->t_answer = hn_now_ms();
    lp->status = err == RMQ_OK ? resp->cmd->status : -1;
    if (err == RMQ_OK && resp->cmd->header_case == RMQ__COMMAND__HEADER_PULL_RESP)
        lp->count = resp->cmd->pull_resp->msg_count;
    event_base_loopbreak(lp->base);
}

static void lp_sent(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    lp_t *lp = arg;
    lp->send_status = err == RMQ_OK ? resp->cmd->status : -1;
}

static void lp_send_timer(evutil_socket_t fd, short what, void *arg)
{
    lp_t *lp = arg;
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    wire_send_hdr(&req, &h, PRODUCER, TOPIC, 1, (char *)"TAGS\001TagA\002");
    ck_assert_int_eq(rmq_client_call(lp->cli, &req, "wake", 4, RPC_TIMEOUT_MS, lp_sent, lp), RMQ_OK);
}

START_TEST(test_long_polling_wakes)
{
    hn_daemon_t bk;
    char addr[64];
    broker_start(&bk, NULL, NULL, addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    lp_t lp = { 0 };
    lp.base = event_base_new();
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "lp" };
    lp.cli = rmq_client_new(lp.base, addr, &opts);
    Rmq__Command req;
    Rmq__PullMessageRequest h;
    wire_pull_hdr(&req, &h, GROUP, TOPIC, 1, 0);
    h.sys_flag = RMQ__PULL_FLAG__PULL_SUSPEND;
    h.suspend_timeout_millis = 10000;
    h.subscription = (char *)"TagA || TagB";
    lp.t_pull = hn_now_ms();
    ck_assert_int_eq(rmq_client_call(lp.cli, &req, NULL, 0, 20000, lp_pulled, &lp), RMQ_OK);
    struct event *t = evtimer_new(lp.base, lp_send_timer, &lp);
    struct timeval tv = { 0, 500 * 1000 };
    evtimer_add(t, &tv);
    event_base_dispatch(lp.base);
    long long waited = lp.t_answer - lp.t_pull;
    fprintf(stderr, "# long poll answered after %lld ms (message sent at 500 ms, suspend 10000 ms)\n", waited);
    ck_assert_int_eq(lp.status, RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(lp.count, 1);
    ck_assert_int_ge(waited, 400);
    ck_assert_int_lt(waited, 3000);

    /* an empty long poll answers PULL_NOT_FOUND at its deadline */
    wire_pull_hdr(&req, &h, GROUP, TOPIC, 2, 0);
    h.sys_flag = RMQ__PULL_FLAG__PULL_SUSPEND;
    h.suspend_timeout_millis = 700;
    lp.t_pull = hn_now_ms();
    ck_assert_int_eq(rmq_client_call(lp.cli, &req, NULL, 0, 20000, lp_pulled, &lp), RMQ_OK);
    event_base_dispatch(lp.base);
    waited = lp.t_answer - lp.t_pull;
    ck_assert_int_eq(lp.status, RMQ__STATUS__PULL_NOT_FOUND);
    ck_assert_int_ge(waited, 600);
    ck_assert_int_lt(waited, 3000);
    event_free(t);
    rmq_client_free(lp.cli);
    event_base_free(lp.base);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- durability --------------------------------------------------------------- */

START_TEST(test_kill9_sync_flush_keeps_acked)
{
    hn_daemon_t bk;
    char addr[64];
    broker_start(&bk, NULL, "flushDiskType=SYNC_FLUSH\n", addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    wire_sender_t sd;
    wire_send_kill9(addr, &sd, &FLOW, 1000000, 128, &bk, 1500);
    fprintf(stderr, "# kill -9 under SYNC_FLUSH load: %d acked in 1.5 s (~%.0f msg/s, window 128), "
            "%d in flight failed with the connection\n", sd.acked, sd.acked / 1.5, sd.failed);
    ck_assert_int_gt(sd.acked, 100);
    broker_start(&bk, NULL, "flushDiskType=SYNC_FLUSH\n", addr, sizeof addr);
    wire_assert_acked_on(addr, &FLOW, sd.acked_map, sd.total);
    wire_sender_deinit(&sd);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

START_TEST(test_clean_restart_async_flush)
{
    hn_daemon_t bk;
    char addr[64];
    broker_start(&bk, NULL, NULL, addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    wire_sender_t sd;
    wire_send_all(addr, &sd, &FLOW, 20000, 256);
    ck_assert_int_eq(sd.acked, 20000);
    int64_t off = -1;
    ck_assert_int_eq(offset_call(addr, RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET, TOPIC, 2, 4242, NULL),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(offset_call(addr, RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, TOPIC, 2, 0, &off),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(off, 4242);
    ck_assert_int_eq(offset_call(addr, RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, TOPIC, 3, 0, NULL),
                     RMQ__STATUS__QUERY_NOT_FOUND);
    /* SIGTERMs keep coming while it flushes and stops: still a clean stop */
    ck_assert_int_eq(hn_daemon_stop_burst(&bk, HN_STOP_TIMEOUT_MS), 0);

    broker_start(&bk, NULL, NULL, addr, sizeof addr);
    wire_assert_acked_on(addr, &FLOW, sd.acked_map, sd.total);
    off = -1;
    ck_assert_int_eq(offset_call(addr, RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, TOPIC, 2, 0, &off),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(off, 4242);
    wire_sender_deinit(&sd);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- bad requests ---------------------------------------------------------------- */

START_TEST(test_bad_requests_get_their_status)
{
    hn_daemon_t bk;
    char addr[64];
    broker_start(&bk, NULL, "autoCreateTopicEnable=false\nmaxMessageSize=1024\n", addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    static uint8_t big[2048];

    ck_assert_int_eq(send_sync(addr, "NoSuchTopic", 0, "x", 1), RMQ__STATUS__TOPIC_NOT_EXIST);
    ck_assert_int_eq(send_sync(addr, TOPIC, 0, big, sizeof big), RMQ__STATUS__MESSAGE_ILLEGAL);
    ck_assert_int_eq(send_sync(addr, "bad topic!", 0, "x", 1), RMQ__STATUS__NAME_ILLEGAL);
    ck_assert_int_eq(send_sync(addr, TOPIC, QUEUES, "x", 1), RMQ__STATUS__BAD_REQUEST);

    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = 9999;
    ck_assert_int_eq(call(addr, &req, NULL, 0, NULL), RMQ__STATUS__REQUEST_CODE_NOT_SUPPORTED);
    rmq_frame_t resp = { 0 };
    req.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    ck_assert_int_eq(call(addr, &req, "x", 1, &resp), RMQ__STATUS__BAD_REQUEST);
    ck_assert_ptr_nonnull(strstr(resp.cmd->remark, "SendMessageRequest"));
    rmq_frame_clear(&resp);
    req.code = RMQ__REQUEST_CODE__PULL_MESSAGE;
    ck_assert_int_eq(call(addr, &req, NULL, 0, NULL), RMQ__STATUS__BAD_REQUEST);
    req.code = RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET;
    ck_assert_int_eq(call(addr, &req, NULL, 0, NULL), RMQ__STATUS__BAD_REQUEST);

    /* still serving: a good send and the runtime info */
    ck_assert_int_eq(send_sync(addr, TOPIC, 0, "ok", 2), RMQ__STATUS__SUCCESS);
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    ck_assert_int_eq(call(addr, &req, NULL, 0, &resp), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(resp.cmd->header_case, RMQ__COMMAND__HEADER_CONFIG);
    int seen = 0;
    for (size_t i = 0; i < resp.cmd->config->n_entries; i++)
        seen += strcmp(resp.cmd->config->entries[i]->key, "commitLogMaxOffset") == 0 &&
                atoll(resp.cmd->config->entries[i]->value) > 0;
    ck_assert_int_eq(seen, 1);
    rmq_frame_clear(&resp);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* -p prints the effective configuration; a bad value names key, value and rule. */
START_TEST(test_config_print_and_errors)
{
    char path[PATH_MAX], bin[PATH_MAX];
    hn_result_t res;
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "p.properties", "brokerName=broker-x\nmappedFileSizeCommitLog=2097152\n",
                                        path, sizeof path));
    const char *argv[] = { hn_build_path("broker/mqbroker", bin, sizeof bin), "-c", path, "-n", "127.0.0.1:1", "-p",
                           NULL };
    ck_assert_int_eq(hn_run(argv, 10000, &res), 0);
    ck_assert_int_eq(res.status, 0);
    ck_assert_ptr_nonnull(strstr(res.out, "brokerName=broker-x"));
    ck_assert_ptr_nonnull(strstr(res.out, "mapedFileSizeCommitLog=2097152"));
    ck_assert_ptr_nonnull(strstr(res.out, "namesrvAddr=127.0.0.1:1"));
    hn_result_free(&res);
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "bad.properties", "brokerRole=BOSS\n", path, sizeof path));
    const char *argv2[] = { bin, "-c", path, "-p", NULL };
    ck_assert_int_eq(hn_run(argv2, 10000, &res), 0);
    ck_assert_int_eq(res.status, 2);
    ck_assert_ptr_nonnull(strstr(res.err, "brokerRole=BOSS"));
    ck_assert_ptr_nonnull(strstr(res.err, "SYNC_MASTER"));
    hn_result_free(&res);
    hn_case_passed();
}
END_TEST

/* ---- batches ------------------------------------------------------------------- */

/* Commit-log offset of a message id (last 16 hex digits). */
static int64_t id_offset(const char *id)
{
    char hex[17];
    memcpy(hex, id + 16, 16);
    hex[16] = '\0';
    return (int64_t)strtoull(hex, NULL, 16);
}

START_TEST(test_batch_send_and_view)
{
    hn_daemon_t bk;
    char addr[64];
    enum { N = 10 };
    broker_start(&bk, NULL, NULL, addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(send_sync(addr, TOPIC, 3, "first", 5), RMQ__STATUS__SUCCESS);
    uint8_t bodies[N][BODY_MAX], batch[N * (BODY_MAX + 64)];
    size_t lens[N], off = 0;
    char props[N][32];
    for (int i = 0; i < N; i++) {
        lens[i] = wire_body_gen(i, bodies[i]);
        snprintf(props[i], sizeof props[i], "KEYS\001%d\002", i);
        rmq_batch_entry_t e = { .flag = i, .body = bodies[i], .body_len = (uint32_t)lens[i],
                                .properties = props[i], .properties_len = (uint16_t)strlen(props[i]) };
        off += rmq_batch_encode(&e, batch + off);
    }
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    wire_send_hdr(&req, &h, PRODUCER, TOPIC, 3, (char *)"TAGS\001TagB\002");
    req.code = RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE;
    h.batch = 1;
    rmq_frame_t resp = { 0 };
    ck_assert_int_eq(call(addr, &req, batch, off, &resp), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(resp.cmd->header_case, RMQ__COMMAND__HEADER_SEND_RESP);
    const Rmq__SendMessageResponse *sr = resp.cmd->send_resp;
    ck_assert_int_eq(sr->count, N);
    ck_assert_int_eq(sr->queue_id, 3);
    ck_assert_int_eq(sr->queue_offset, 1);
    ck_assert_uint_eq(strlen(sr->msg_id), N * 33 - 1);
    for (int i = 0; i < N; i++) {
        Rmq__Command vreq = RMQ__COMMAND__INIT;
        Rmq__ViewMessageRequest vm = RMQ__VIEW_MESSAGE_REQUEST__INIT;
        vm.offset = id_offset(sr->msg_id + i * 33);
        vreq.code = RMQ__REQUEST_CODE__VIEW_MESSAGE_BY_ID;
        vreq.header_case = RMQ__COMMAND__HEADER_VIEW_MESSAGE;
        vreq.view_message = &vm;
        rmq_frame_t vresp = { 0 };
        ck_assert_int_eq(call(addr, &vreq, NULL, 0, &vresp), RMQ__STATUS__SUCCESS);
        size_t len = evbuffer_get_length(vresp.body);
        rmq_record_t rec;
        ck_assert_int_eq(rmq_record_decode(evbuffer_pullup(vresp.body, (ssize_t)len), len, 1, &rec), RMQ_OK);
        ck_assert_uint_eq(rec.body_len, lens[i]);
        ck_assert_int_eq(memcmp(rec.body, bodies[i], lens[i]), 0);
        ck_assert_int_eq(rec.queue_offset, 1 + i);
        ck_assert_int_eq(rec.flag, i);
        size_t vlen;
        ck_assert_ptr_nonnull(rmq_props_get(rec.properties, rec.properties_len, "TAGS", &vlen));
        ck_assert_ptr_nonnull(rmq_props_get(rec.properties, rec.properties_len, "KEYS", &vlen));
        rmq_frame_clear(&vresp);
    }
    rmq_frame_clear(&resp);
    /* a malformed batch body is refused and the broker keeps serving */
    ck_assert_int_eq(call(addr, &req, batch, 7, NULL), RMQ__STATUS__MESSAGE_ILLEGAL);
    ck_assert_int_eq(send_sync(addr, TOPIC, 3, "after", 5), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- flow control --------------------------------------------------------------- */

START_TEST(test_flow_control_answers_busy)
{
    hn_daemon_t bk;
    char addr[64];
    broker_start(&bk, NULL, "flushDiskType=SYNC_FLUSH\nsendQueueCapacity=8\n", addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    wire_sender_t sd;
    wire_send_all(addr, &sd, &FLOW, 5000, 256);
    fprintf(stderr, "# flow control: %d acked, %d SYSTEM_BUSY of 5000 (sendQueueCapacity=8, window 256)\n",
            sd.acked, sd.busy);
    ck_assert_msg(sd.failed == 0, "%d sends failed, first status %d", sd.failed, sd.first_fail);
    ck_assert_int_eq(sd.acked + sd.busy, 5000);
    ck_assert_int_gt(sd.busy, 0);
    ck_assert_int_gt(sd.acked, 0);
    ck_assert_int_eq(send_sync(addr, TOPIC, 0, "ok", 2), RMQ__STATUS__SUCCESS);
    wire_sender_deinit(&sd);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- consumer groups ------------------------------------------------------------ */

typedef struct member {
    struct event_base *base;
    rmq_client_t *cli;
    int notified;
    int status;
} member_t;

static void member_pushed(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    member_t *m = arg;
    if (req->cmd->code == RMQ__REQUEST_CODE__NOTIFY_CONSUMER_IDS_CHANGED)
        m->notified++;
}

static void member_answered(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    member_t *m = arg;
    m->status = err == RMQ_OK ? resp->cmd->status : -1;
    event_base_loopbreak(m->base);
}

static void heartbeat_hdr(Rmq__Command *req, Rmq__HeartbeatData *hb, Rmq__ConsumerData *cd,
                          Rmq__ConsumerData **cdp, Rmq__SubscriptionData *sub, Rmq__SubscriptionData **subp,
                          const char *client_id)
{
    rmq__command__init(req);
    rmq__heartbeat_data__init(hb);
    rmq__consumer_data__init(cd);
    rmq__subscription_data__init(sub);
    sub->topic = (char *)TOPIC;
    sub->sub_string = (char *)"TagA";
    *subp = sub;
    cd->group_name = (char *)GROUP;
    cd->subscriptions = subp;
    cd->n_subscriptions = 1;
    *cdp = cd;
    hb->client_id = (char *)client_id;
    hb->consumers = cdp;
    hb->n_consumers = 1;
    req->code = RMQ__REQUEST_CODE__HEART_BEAT;
    req->header_case = RMQ__COMMAND__HEADER_HEARTBEAT;
    req->heartbeat = hb;
}

/* Number of consumers the broker lists for GROUP (0 when none are online). */
static int consumer_count(const char *addr)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__GroupRequest g = RMQ__GROUP_REQUEST__INIT;
    rmq_frame_t resp = { 0 };
    g.consumer_group = (char *)GROUP;
    req.code = RMQ__REQUEST_CODE__GET_CONSUMER_LIST_BY_GROUP;
    req.header_case = RMQ__COMMAND__HEADER_GROUP;
    req.group = &g;
    int status = call(addr, &req, NULL, 0, &resp);
    int n = status == RMQ__STATUS__SUCCESS ? (int)resp.cmd->consumer_list->n_client_ids : 0;
    if (status != RMQ__STATUS__SUCCESS)
        ck_assert_int_eq(status, RMQ__STATUS__CONSUMER_NOT_ONLINE);
    rmq_frame_clear(&resp);
    return n;
}

/* Runs m's loop for ms milliseconds (requests and pushes are handled meanwhile). */
static void member_run(member_t *m, int ms)
{
    struct timeval tv = { ms / 1000, (ms % 1000) * 1000 };
    event_base_loopexit(m->base, &tv);
    event_base_dispatch(m->base);
}

START_TEST(test_consumer_group_membership)
{
    hn_daemon_t bk;
    char addr[64];
    broker_start(&bk, NULL, NULL, addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    member_t a = { 0 };
    a.base = event_base_new();
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "member-a" };
    a.cli = rmq_client_new(a.base, addr, &opts);
    rmq_client_on_request(a.cli, member_pushed, &a);
    Rmq__Command req;
    Rmq__HeartbeatData hb;
    Rmq__ConsumerData cd, *cdp;
    Rmq__SubscriptionData sub, *subp;
    heartbeat_hdr(&req, &hb, &cd, &cdp, &sub, &subp, "10.0.0.1@a");
    ck_assert_int_eq(rmq_client_call(a.cli, &req, NULL, 0, RPC_TIMEOUT_MS, member_answered, &a), RMQ_OK);
    event_base_dispatch(a.base);
    ck_assert_int_eq(a.status, RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(consumer_count(addr), 1);

    /* a second member joins over its own connection: the first is told */
    rmq_client_opts_t bopts = { .connect_timeout_ms = 3000, .name = "member-b" };
    rmq_sync_t *b = rmq_sync_new(&bopts);
    rmq_frame_t resp = { 0 };
    heartbeat_hdr(&req, &hb, &cd, &cdp, &sub, &subp, "10.0.0.2@b");
    ck_assert_int_eq(rmq_sync_call(b, addr, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    ck_assert_int_eq(resp.cmd->status, RMQ__STATUS__SUCCESS);
    rmq_frame_clear(&resp);
    int before = a.notified;
    member_run(&a, 300);
    ck_assert_int_gt(a.notified, before);
    ck_assert_int_eq(consumer_count(addr), 2);

    /* its connection closes: it leaves the group and the first is told again */
    rmq_sync_free(b);
    before = a.notified;
    for (int i = 0; i < 20 && consumer_count(addr) != 1; i++)
        member_run(&a, 100);
    ck_assert_int_eq(consumer_count(addr), 1);
    member_run(&a, 200);
    ck_assert_int_gt(a.notified, before);

    /* UNREGISTER_CLIENT empties the group */
    Rmq__UnregisterClientRequest ur = RMQ__UNREGISTER_CLIENT_REQUEST__INIT;
    rmq__command__init(&req);
    ur.client_id = (char *)"10.0.0.1@a";
    ur.consumer_group = (char *)GROUP;
    req.code = RMQ__REQUEST_CODE__UNREGISTER_CLIENT;
    req.header_case = RMQ__COMMAND__HEADER_UNREGISTER_CLIENT;
    req.unregister_client = &ur;
    ck_assert_int_eq(rmq_client_call(a.cli, &req, NULL, 0, RPC_TIMEOUT_MS, member_answered, &a), RMQ_OK);
    event_base_dispatch(a.base);
    ck_assert_int_eq(a.status, RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(consumer_count(addr), 0);
    rmq_client_free(a.cli);
    event_base_free(a.base);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- pull statuses ----------------------------------------------------------------- */

/* Pulls synchronously; returns the status and fills next / count. */
static int pull_sync(const char *addr, int q, int64_t offset, int max, const char *sub, int flags,
                     int64_t commit, int64_t *next, int *count)
{
    Rmq__Command req;
    Rmq__PullMessageRequest h;
    rmq_frame_t resp = { 0 };
    wire_pull_hdr(&req, &h, GROUP, TOPIC, q, offset);
    h.max_msg_nums = max;
    h.subscription = (char *)sub;
    h.sys_flag = flags;
    h.commit_offset = commit;
    int status = call(addr, &req, NULL, 0, &resp);
    *next = -1;
    *count = 0;
    if (resp.cmd->header_case == RMQ__COMMAND__HEADER_PULL_RESP) {
        *next = resp.cmd->pull_resp->next_begin_offset;
        *count = resp.cmd->pull_resp->msg_count;
    }
    rmq_frame_clear(&resp);
    return status;
}

START_TEST(test_pull_statuses_and_commit)
{
    hn_daemon_t bk;
    char addr[64];
    int64_t next, off;
    int count;
    broker_start(&bk, NULL, NULL, addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    for (int i = 0; i < 5; i++) {
        Rmq__Command req;
        Rmq__SendMessageRequest h;
        wire_send_hdr(&req, &h, PRODUCER, TOPIC, 0, (char *)(i % 2 ? "TAGS\001TagB\002" : "TAGS\001TagA\002"));
        ck_assert_int_eq(call(addr, &req, "m", 1, NULL), RMQ__STATUS__SUCCESS);
    }
    ck_assert_int_eq(pull_sync(addr, 0, 0, 2, "*", 0, 0, &next, &count), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(count, 2);
    ck_assert_int_eq(next, 2);
    ck_assert_int_eq(pull_sync(addr, 0, 0, 32, "TagB", 0, 0, &next, &count), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(count, 2);
    ck_assert_int_eq(pull_sync(addr, 0, 0, 32, "TagZ", 0, 0, &next, &count), RMQ__STATUS__PULL_RETRY_IMMEDIATELY);
    ck_assert_int_eq(next, 5);
    ck_assert_int_eq(pull_sync(addr, 0, 5, 32, "*", 0, 0, &next, &count), RMQ__STATUS__PULL_NOT_FOUND);
    ck_assert_int_eq(next, 5);
    ck_assert_int_eq(pull_sync(addr, 0, 100, 32, "*", 0, 0, &next, &count), RMQ__STATUS__PULL_OFFSET_MOVED);
    ck_assert_int_eq(next, 5);
    ck_assert_int_eq(pull_sync(addr, 1, 0, 32, "*", 0, 0, &next, &count), RMQ__STATUS__PULL_NOT_FOUND);
    ck_assert_int_eq(pull_sync(addr, QUEUES, 0, 32, "*", 0, 0, &next, &count), RMQ__STATUS__BAD_REQUEST);
    ck_assert_int_eq(pull_sync(addr, 0, 3, 32, "*", RMQ__PULL_FLAG__PULL_COMMIT_OFFSET, 3, &next, &count),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(offset_call(addr, RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, TOPIC, 0, 0, &off),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(off, 3);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* A slave refuses sends with its own status; a read-only broker answers NO_PERMISSION. */
START_TEST(test_slave_and_readonly_refuse_writes)
{
    hn_daemon_t bk;
    char addr[64];
    broker_start(&bk, NULL, "brokerRole=SLAVE\nbrokerId=1\n", addr, sizeof addr);
    ck_assert_int_eq(send_sync(addr, BK_TBW, 0, "x", 1), RMQ__STATUS__SERVICE_NOT_AVAILABLE_SLAVE);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    broker_start(&bk, NULL, "brokerPermission=4\n", addr, sizeof addr);
    ck_assert_int_eq(send_sync(addr, BK_TBW, 0, "x", 1), RMQ__STATUS__NO_PERMISSION);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- admin requests ------------------------------------------------------------- */

/* A request with a QueueRequest header; returns the status, offset and timestamp. */
static int queue_call(const char *addr, int code, int q, int64_t ts, int64_t *offset, int64_t *stamp)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__QueueRequest h = RMQ__QUEUE_REQUEST__INIT;
    rmq_frame_t resp = { 0 };
    h.topic = (char *)TOPIC;
    h.queue_id = q;
    h.timestamp = ts;
    req.code = code;
    req.header_case = RMQ__COMMAND__HEADER_QUEUE;
    req.queue = &h;
    int status = call(addr, &req, NULL, 0, &resp);
    if (status == RMQ__STATUS__SUCCESS) {
        ck_assert_int_eq(resp.cmd->header_case, RMQ__COMMAND__HEADER_OFFSET_RESP);
        *offset = resp.cmd->offset_resp->offset;
        *stamp = resp.cmd->offset_resp->timestamp;
    }
    rmq_frame_clear(&resp);
    return status;
}

/* 1 if GET_ALL_TOPIC_CONFIG lists name. */
static int topic_listed(const char *addr, const char *name)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    req.code = RMQ__REQUEST_CODE__GET_ALL_TOPIC_CONFIG;
    ck_assert_int_eq(call(addr, &req, NULL, 0, &resp), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(resp.cmd->header_case, RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE);
    int found = 0;
    for (size_t i = 0; i < resp.cmd->topic_config_table->n_topics; i++)
        found |= strcmp(resp.cmd->topic_config_table->topics[i]->topic_name, name) == 0;
    rmq_frame_clear(&resp);
    return found;
}

START_TEST(test_admin_requests)
{
    hn_daemon_t bk;
    char addr[64];
    int64_t off, ts;
    broker_start(&bk, NULL, NULL, addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    int64_t before = (int64_t)time(NULL) * 1000 - 1000;
    for (int i = 0; i < 5; i++)
        ck_assert_int_eq(send_sync(addr, TOPIC, 0, "m", 1), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(queue_call(addr, RMQ__REQUEST_CODE__GET_MAX_OFFSET, 0, 0, &off, &ts), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(off, 5);
    ck_assert_int_eq(queue_call(addr, RMQ__REQUEST_CODE__GET_MIN_OFFSET, 0, 0, &off, &ts), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(off, 0);
    ck_assert_int_eq(queue_call(addr, RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP, 0, before, &off, &ts),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(off, 0);
    ck_assert_int_eq(queue_call(addr, RMQ__REQUEST_CODE__GET_EARLIEST_MSG_STORETIME, 0, 0, &off, &ts),
                     RMQ__STATUS__SUCCESS);
    ck_assert_int_ge(ts, before);
    ck_assert_int_eq(offset_call(addr, RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET, TOPIC, 0, 3, NULL),
                     RMQ__STATUS__SUCCESS);

    /* topic stats and consume stats */
    Rmq__Command req;
    Rmq__TopicRequest tr;
    rmq_frame_t resp = { 0 };
    wire_topic_query(&req, &tr, RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO, TOPIC);
    ck_assert_int_eq(call(addr, &req, NULL, 0, &resp), RMQ__STATUS__SUCCESS);
    ck_assert_uint_eq(resp.cmd->topic_stats->n_queues, QUEUES);
    ck_assert_int_eq(resp.cmd->topic_stats->queues[0]->max_offset, 5);
    ck_assert_int_ge(resp.cmd->topic_stats->queues[0]->last_update_timestamp, before);
    rmq_frame_clear(&resp);
    Rmq__ConsumeStatsRequest csr = RMQ__CONSUME_STATS_REQUEST__INIT;
    rmq__command__init(&req);
    csr.consumer_group = (char *)GROUP;
    csr.topic = (char *)TOPIC;
    req.code = RMQ__REQUEST_CODE__GET_CONSUME_STATS;
    req.header_case = RMQ__COMMAND__HEADER_CONSUME_STATS_REQ;
    req.consume_stats_req = &csr;
    ck_assert_int_eq(call(addr, &req, NULL, 0, &resp), RMQ__STATUS__SUCCESS);
    ck_assert_uint_eq(resp.cmd->consume_stats->n_queues, 1);
    ck_assert_int_eq(resp.cmd->consume_stats->queues[0]->broker_offset, 5);
    ck_assert_int_eq(resp.cmd->consume_stats->queues[0]->consumer_offset, 3);
    rmq_frame_clear(&resp);
    rmq__command__init(&req);
    req.code = RMQ__REQUEST_CODE__GET_ALL_CONSUMER_OFFSET;
    ck_assert_int_eq(call(addr, &req, NULL, 0, &resp), RMQ__STATUS__SUCCESS);
    ck_assert_uint_eq(resp.cmd->consumer_offset_table->n_entries, 1);
    rmq_frame_clear(&resp);

    /* subscription groups */
    Rmq__SubscriptionGroupConfig sg = RMQ__SUBSCRIPTION_GROUP_CONFIG__INIT;
    sg.group_name = (char *)"admin_group";
    sg.consume_enable = 0;
    sg.retry_max_times = 3;
    rmq__command__init(&req);
    req.code = RMQ__REQUEST_CODE__UPDATE_AND_CREATE_SUBSCRIPTIONGROUP;
    req.header_case = RMQ__COMMAND__HEADER_SUBSCRIPTION_GROUP;
    req.subscription_group = &sg;
    ck_assert_int_eq(call(addr, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
    rmq__command__init(&req);
    req.code = RMQ__REQUEST_CODE__GET_ALL_SUBSCRIPTIONGROUP_CONFIG;
    ck_assert_int_eq(call(addr, &req, NULL, 0, &resp), RMQ__STATUS__SUCCESS);
    int found = 0;
    for (size_t i = 0; i < resp.cmd->subscription_group_table->n_groups; i++)
        found |= strcmp(resp.cmd->subscription_group_table->groups[i]->group_name, "admin_group") == 0 &&
                 resp.cmd->subscription_group_table->groups[i]->retry_max_times == 3;
    ck_assert(found);
    rmq_frame_clear(&resp);
    Rmq__Command preq;
    Rmq__PullMessageRequest ph;
    wire_pull_hdr(&preq, &ph, GROUP, TOPIC, 0, 0);
    ph.consumer_group = (char *)"admin_group";
    ck_assert_int_eq(call(addr, &preq, NULL, 0, NULL), RMQ__STATUS__NO_PERMISSION);
    Rmq__GroupRequest gr = RMQ__GROUP_REQUEST__INIT;
    gr.consumer_group = (char *)"admin_group";
    rmq__command__init(&req);
    req.code = RMQ__REQUEST_CODE__DELETE_SUBSCRIPTIONGROUP;
    req.header_case = RMQ__COMMAND__HEADER_GROUP;
    req.group = &gr;
    ck_assert_int_eq(call(addr, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(call(addr, &req, NULL, 0, NULL), RMQ__STATUS__SUBSCRIPTION_GROUP_NOT_EXIST);

    /* delete the topic */
    ck_assert(topic_listed(addr, TOPIC));
    rmq__command__init(&req);
    req.code = RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER;
    req.header_case = RMQ__COMMAND__HEADER_TOPIC;
    req.topic = &tr;
    ck_assert_int_eq(call(addr, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
    ck_assert(!topic_listed(addr, TOPIC));
    ck_assert_int_eq(offset_call(addr, RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, TOPIC, 0, 0, NULL),
                     RMQ__STATUS__QUERY_NOT_FOUND);
    ck_assert_int_eq(create_topic(addr, "bad name", QUEUES), RMQ__STATUS__NAME_ILLEGAL);
    ck_assert_int_eq(create_topic(addr, "Zero", 0), RMQ__STATUS__BAD_REQUEST);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *broker_suite(void)
{
    Suite *s = suite_create("broker");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_config_print_and_errors);
    tcase_add_test(tc, test_bad_requests_get_their_status);
    tcase_add_test(tc, test_long_polling_wakes);
    tcase_add_test(tc, test_batch_send_and_view);
    tcase_add_test(tc, test_pull_statuses_and_commit);
    tcase_add_test(tc, test_admin_requests);
    tcase_add_test(tc, test_slave_and_readonly_refuse_writes);
    tcase_add_test(tc, test_flow_control_answers_busy);
    tcase_add_test(tc, test_consumer_group_membership);
    tcase_add_test(tc, test_clean_restart_async_flush);
    tcase_add_test(tc, test_kill9_sync_flush_keeps_acked);
    tcase_add_test(tc, test_send_pull_100k);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(broker_suite());
}
