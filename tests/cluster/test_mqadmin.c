/* test_mqadmin.c: mqadmin against a real mqnamesrv and mqbroker
 * (autoCreateTopicEnable=false) on ephemeral loopback ports. A topic is
 * created, written, read and deleted with mqadmin alone, and every output is
 * checked against what was sent; offsets are committed by the test over the
 * protocol. Errors must name what failed and exit 1; a system topic's
 * change is refused as RocketMQ's broker refuses it. consumerProgress shows
 * the group's consume TPS, and clusterList a true HA address per role. */
#include <check.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rmq_rpc.h"
#include "rmq_time.h"

#define RPC_TIMEOUT_MS 5000
#define CMD_TIMEOUT_MS 30000
#define CLUSTER "AdminCluster"
#define TOPIC "AdminTopic"
#define GROUP "adminGroup"
#define QUEUES 8
#define SENT 10

static const char *case_dir;

/* ---- daemons ----------------------------------------------------------------- */

static void ns_start(hn_daemon_t *d, char *addr, size_t len)
{
    char path[PATH_MAX], bin[PATH_MAX];
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "ns.properties", "listenPort=0\nbindAddress=127.0.0.1\n",
                                        path, sizeof path));
    const char *args[] = { "-c", path, NULL };
    ck_assert_int_eq(hn_daemon_start(d, hn_build_path("namesrv/mqnamesrv", bin, sizeof bin), "ns", args,
                                     HN_READY_TIMEOUT_MS), 0);
    snprintf(addr, len, "127.0.0.1:%d", hn_daemon_port(d, "listenPort"));
}

/* Starts mqbroker NAME of broker-a in CLUSTER with extra properties. */
static void broker_start(hn_daemon_t *d, const char *name, const char *ns, const char *extra, char *addr,
                         size_t len)
{
    char props[2048], file[96], path[PATH_MAX], bin[PATH_MAX];
    snprintf(props, sizeof props,
             "brokerClusterName=%s\nbrokerName=broker-a\nlistenPort=0\nhaListenPort=0\n"
             "storePathRootDir=%s/%s-store\nmapedFileSizeCommitLog=1048576\nmapedFileSizeConsumeQueue=6000000\n"
             "maxMessageSize=262144\nautoCreateTopicEnable=false\nnamesrvAddr=%s\n%s",
             CLUSTER, case_dir, name, ns, extra);
    snprintf(file, sizeof file, "%s.properties", name);
    ck_assert_ptr_nonnull(hn_write_file(case_dir, file, props, path, sizeof path));
    const char *args[] = { "-c", path, NULL };
    ck_assert_int_eq(hn_daemon_start(d, hn_build_path("broker/mqbroker", bin, sizeof bin), name, args,
                                     HN_READY_TIMEOUT_MS), 0);
    snprintf(addr, len, "127.0.0.1:%d", hn_daemon_port(d, "listenPort"));
}

/* ---- running mqadmin ------------------------------------------------------------ */

/* Runs mqadmin CMD with the NULL-terminated arguments in ap. */
static void admin_va(hn_result_t *res, const char *cmd, va_list ap)
{
    char bin[PATH_MAX];
    const char *argv[24] = { hn_build_path("tools/mqadmin", bin, sizeof bin), cmd };
    size_t n = 2;

    for (const char *a = va_arg(ap, const char *); a; a = va_arg(ap, const char *)) {
        ck_assert_uint_lt(n, sizeof argv / sizeof argv[0] - 1);
        argv[n++] = a;
    }
    argv[n] = NULL;
    ck_assert_int_eq(hn_run(argv, CMD_TIMEOUT_MS, res), 0);
}

/* Runs mqadmin with the NULL-terminated arguments after the command name. */
static void admin(hn_result_t *res, const char *cmd, ...)
{
    va_list ap;

    va_start(ap, cmd);
    admin_va(res, cmd, ap);
    va_end(ap);
}

/* Same, and requires exit status 0 (printing stderr if not). */
static void admin_ok(hn_result_t *res, const char *cmd, ...)
{
    va_list ap;

    va_start(ap, cmd);
    admin_va(res, cmd, ap);
    va_end(ap);
    if (res->status != 0)
        fprintf(stderr, "mqadmin %s failed (%d): %s\n", cmd, res->status, res->err);
    ck_assert_int_eq(res->status, 0);
}

/* The line of text (1-based), copied into buf; NULL past the end. */
static const char *nth_line(const char *text, int n, char *buf, size_t len)
{
    for (int i = 1; text && *text; i++) {
        const char *end = strchr(text, '\n');
        size_t l = end ? (size_t)(end - text) : strlen(text);
        if (i == n) {
            snprintf(buf, len, "%.*s", (int)(l < len ? l : len - 1), text);
            return buf;
        }
        text = end ? end + 1 : NULL;
    }
    return NULL;
}

/* Number of lines containing w1 (and w2 when not NULL). */
static int lines_with(const char *text, const char *w1, const char *w2)
{
    char buf[8192];
    int n = 0;

    for (int i = 1; nth_line(text, i, buf, sizeof buf); i++)
        if (strstr(buf, w1) && (!w2 || strstr(buf, w2)))
            n++;
    return n;
}

/* The integer in column col of row (a table line), located by where the
 * header names col: the columns of a table line up. */
static int64_t cell_int(const char *header, const char *row, const char *col)
{
    const char *at = strstr(header, col);
    ck_assert_ptr_nonnull(at);
    ck_assert_uint_gt(strlen(row), (size_t)(at - header));
    ck_assert(at == header || row[at - header - 1] == ' ');
    return strtoll(row + (at - header), NULL, 10);
}

/* The text of column col in row (up to the next space) into buf. */
static const char *cell_str(const char *header, const char *row, const char *col, char *buf, size_t len)
{
    const char *at = strstr(header, col);
    ck_assert_ptr_nonnull(at);
    ck_assert_uint_gt(strlen(row), (size_t)(at - header));
    const char *s = row + (at - header);
    snprintf(buf, len, "%.*s", (int)strcspn(s, " "), s);
    return buf;
}

/* The value after "key" at the start of a line of a KEY VALUE table, or -1. */
static int64_t kv_int(const char *text, const char *key)
{
    char buf[1024];

    for (int i = 1; nth_line(text, i, buf, sizeof buf); i++)
        if (strncmp(buf, key, strlen(key)) == 0 && buf[strlen(key)] == ' ')
            return strtoll(buf + strlen(key), NULL, 10);
    return -1;
}

/* ---- protocol helpers ---------------------------------------------------------- */

static int commit_offset(const char *addr, int queue_id, int64_t offset)
{
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "test" };
    rmq_sync_t *s = rmq_sync_new(&opts);
    Rmq__ConsumerOffsetRequest h = RMQ__CONSUMER_OFFSET_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    ck_assert_ptr_nonnull(s);
    h.consumer_group = (char *)GROUP;
    h.topic = (char *)TOPIC;
    h.queue_id = queue_id;
    h.commit_offset = offset;
    req.code = RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET;
    req.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
    req.consumer_offset = &h;
    ck_assert_int_eq(rmq_sync_call(s, addr, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
    int status = resp.cmd->status;
    rmq_frame_clear(&resp);
    rmq_sync_free(s);
    return status;
}

/* ---- waiting for the name server ------------------------------------------------ */

typedef struct route_probe {
    const char *ns;
    const char *topic;
    const char *want;             /* text the route must show; NULL: no route at all */
    const char *absent;           /* text it must not show, or NULL */
} route_probe_t;

static int route_matches(void *arg)
{
    route_probe_t *p = arg;
    hn_result_t res;
    int ok;

    admin(&res, "topicRoute", "-n", p->ns, "-t", p->topic, NULL);
    if (p->want)
        ok = res.status == 0 && strstr(res.out, p->want) && !(p->absent && strstr(res.out, p->absent));
    else
        ok = res.status == 1;
    hn_result_free(&res);
    return ok;
}

/* ---- fixtures -------------------------------------------------------------------- */

static void setup(void)
{
    case_dir = hn_case_begin("mqadmin");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

/* ---- cases ------------------------------------------------------------------------ */

/* Sends message i with sendMessage; its id into id, its queue into *queue. */
static void send_one(const char *ns, int i, char id[33], int *queue)
{
    char body[32], keys[32], header[512], row[512];
    hn_result_t res;

    snprintf(body, sizeof body, "body-%d", i);
    snprintf(keys, sizeof keys, "key-%d", i);
    admin_ok(&res, "sendMessage", "-n", ns, "-t", TOPIC, "-p", body, "-c", "TagA", "-k", keys, NULL);
    ck_assert_ptr_nonnull(nth_line(res.out, 1, header, sizeof header));
    ck_assert_ptr_nonnull(nth_line(res.out, 2, row, sizeof row));
    ck_assert_ptr_nonnull(strstr(row, "SEND_OK"));
    ck_assert_ptr_nonnull(strstr(row, "broker-a"));
    *queue = (int)cell_int(header, row, "QUEUE");
    ck_assert(*queue >= 0 && *queue < QUEUES);
    const char *at = row + (strstr(header, "MSG_ID") - header);
    ck_assert_int_eq(sscanf(at, "%32s", id), 1);
    ck_assert_uint_eq(strlen(id), 32);
    hn_result_free(&res);
}

/* Reads topicStatus into max[QUEUES] and returns the sum of max offsets. */
static int64_t topic_status_max(const char *ns, int64_t max[QUEUES])
{
    char header[512], row[512];
    hn_result_t res;
    int64_t sum = 0;

    admin_ok(&res, "topicStatus", "-n", ns, "-t", TOPIC, NULL);
    ck_assert_ptr_nonnull(nth_line(res.out, 1, header, sizeof header));
    ck_assert_int_eq(lines_with(res.out, "broker-a", NULL), QUEUES);
    for (int i = 2; nth_line(res.out, i, row, sizeof row); i++) {
        int q = (int)cell_int(header, row, "QUEUE");
        ck_assert(q >= 0 && q < QUEUES);
        ck_assert_int_eq(cell_int(header, row, "MIN_OFFSET"), 0);
        max[q] = cell_int(header, row, "MAX_OFFSET");
        sum += max[q];
    }
    hn_result_free(&res);
    return sum;
}

START_TEST(test_topic_round_trip)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], bk_addr[64], ids[SENT][33], want[128];
    int queues[SENT];
    int64_t max[QUEUES] = { 0 };
    hn_result_t res;

    ns_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&bk, "broker", ns_addr, "", bk_addr, sizeof bk_addr);

    /* updateTopic -c reaches the cluster's master once it has registered */
    for (int i = 0; i < 100; i++) {
        admin(&res, "updateTopic", "-n", ns_addr, "-c", CLUSTER, "-t", TOPIC, NULL);
        int ok = res.status == 0;
        if (ok) {
            ck_assert_int_eq(lines_with(res.out, bk_addr, "updated"), 1);
            ck_assert_int_eq(lines_with(res.out, "broker-a", NULL), 1);
        }
        hn_result_free(&res);
        if (ok)
            break;
        ck_assert_int_lt(i, 99);
        rmq_sleep_ms(100);
    }
    route_probe_t shown = { ns_addr, TOPIC, "RW-", NULL };
    ck_assert(hn_wait_until(route_matches, &shown, 10000));
    admin_ok(&res, "topicRoute", "-n", ns_addr, "-t", TOPIC, NULL);
    ck_assert_int_eq(lines_with(res.out, "broker-a", bk_addr), 1);
    ck_assert_int_eq(lines_with(res.out, "broker-a", " 8 "), 1);
    hn_result_free(&res);

    for (int i = 0; i < SENT; i++)
        send_one(ns_addr, i, ids[i], &queues[i]);
    ck_assert_int_eq(topic_status_max(ns_addr, max), SENT);

    /* queryMsgById finds each message by its id alone */
    admin_ok(&res, "queryMsgById", "-n", ns_addr, "-i", ids[3], NULL);
    ck_assert_int_eq(lines_with(res.out, "Topic:", TOPIC), 1);
    ck_assert_int_eq(lines_with(res.out, "Tags:", "TagA"), 1);
    ck_assert_int_eq(lines_with(res.out, "Keys:", "key-3"), 1);
    snprintf(want, sizeof want, "Body (text):\nbody-3\n");
    ck_assert_ptr_nonnull(strstr(res.out, want));
    ck_assert_int_eq(kv_int(res.out, "Queue Id:"), queues[3]);
    ck_assert_int_eq(kv_int(res.out, "Body Size:"), 6);
    hn_result_free(&res);

    /* consumeMessage prints every body once, with the ids sendMessage gave */
    admin_ok(&res, "consumeMessage", "-n", ns_addr, "-t", TOPIC, "-c", "100", NULL);
    for (int i = 0; i < SENT; i++) {
        char body[32], keys[32];
        snprintf(body, sizeof body, "body-%d", i);
        snprintf(keys, sizeof keys, "key-%d", i);
        ck_assert_int_eq(lines_with(res.out, ids[i], body), 1);
        ck_assert_int_eq(lines_with(res.out, keys, "TagA"), 1);
    }
    ck_assert_int_eq(lines_with(res.out, "body-", NULL), SENT);
    hn_result_free(&res);
    admin_ok(&res, "consumeMessage", "-n", ns_addr, "-t", TOPIC, "-i", "0", "-c", "100", NULL);
    ck_assert_int_eq(lines_with(res.out, "body-", NULL), max[0]);
    hn_result_free(&res);
    {
        char q[16];
        snprintf(q, sizeof q, "%d", queues[0]);
        admin_ok(&res, "consumeMessage", "-n", ns_addr, "-t", TOPIC, "-b", "broker-a", "-i", q, "-o", "1", NULL);
        ck_assert_int_eq(lines_with(res.out, "body-", NULL), max[queues[0]] - 1);
        ck_assert_int_eq(lines_with(res.out, ids[0], NULL), 0);
        hn_result_free(&res);
    }
    admin_ok(&res, "consumeMessage", "-n", ns_addr, "-t", TOPIC, "-c", "3", NULL);
    ck_assert_int_eq(lines_with(res.out, "body-", NULL), 3);
    hn_result_free(&res);

    /* consumerProgress shows the committed offset and the diff */
    ck_assert_int_eq(commit_offset(bk_addr, queues[0], 1), RMQ__STATUS__SUCCESS);
    admin_ok(&res, "consumerProgress", "-n", ns_addr, "-g", GROUP, "-t", TOPIC, NULL);
    {
        char header[512], row[512];
        ck_assert_ptr_nonnull(nth_line(res.out, 1, header, sizeof header));
        ck_assert_ptr_nonnull(nth_line(res.out, 2, row, sizeof row));
        ck_assert_int_eq(cell_int(header, row, "QUEUE"), queues[0]);
        ck_assert_int_eq(cell_int(header, row, "BROKER_OFFSET"), max[queues[0]]);
        ck_assert_int_eq(cell_int(header, row, "CONSUMER_OFFSET"), 1);
        ck_assert_int_eq(cell_int(header, row, "DIFF"), max[queues[0]] - 1);
        snprintf(want, sizeof want, "Diff Total: %" PRId64 "\n", max[queues[0]] - 1);
        ck_assert_ptr_nonnull(strstr(res.out, want));
    }
    hn_result_free(&res);
    admin_ok(&res, "consumerProgress", "-n", ns_addr, "-g", GROUP, NULL);
    ck_assert_int_eq(lines_with(res.out, TOPIC, "broker-a"), 1);
    hn_result_free(&res);

    /* brokerStatus and clusterList read the broker's runtime info */
    admin_ok(&res, "brokerStatus", "-n", ns_addr, "-b", bk_addr, NULL);
    ck_assert_int_gt(kv_int(res.out, "commitLogMaxOffset"), 0);
    ck_assert_int_eq(lines_with(res.out, "brokerRole", "ASYNC_MASTER"), 1);
    hn_result_free(&res);
    admin_ok(&res, "brokerStatus", "-n", ns_addr, "-c", CLUSTER, NULL);
    ck_assert_int_eq(lines_with(res.out, "============", bk_addr), 1);
    ck_assert_int_gt(kv_int(res.out, "commitLogMaxOffset"), 0);
    hn_result_free(&res);
    admin_ok(&res, "clusterList", "-n", ns_addr, NULL);
    ck_assert_int_eq(lines_with(res.out, bk_addr, "MASTER"), 1);
    ck_assert_int_eq(lines_with(res.out, bk_addr, CLUSTER), 1);
    hn_result_free(&res);

    /* a system topic: the broker refuses its change with RocketMQ's text,
     * and deleteTopic then leaves the name servers alone */
    admin(&res, "updateTopic", "-n", ns_addr, "-b", bk_addr, "-t", "RMQ_SYS_TRACE_TOPIC", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "The topic[RMQ_SYS_TRACE_TOPIC] is conflict with system topic."));
    hn_result_free(&res);
    admin(&res, "deleteTopic", "-n", ns_addr, "-t", "SCHEDULE_TOPIC_XXXX", "-c", CLUSTER, NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "The topic[SCHEDULE_TOPIC_XXXX] is conflict with system topic."));
    ck_assert_int_eq(lines_with(res.out, ns_addr, NULL), 0);
    hn_result_free(&res);

    /* deleteTopic -c removes it from the broker and the route (the
     * broker's registration may have taken it out of the route first) */
    admin_ok(&res, "deleteTopic", "-n", ns_addr, "-t", TOPIC, "-c", CLUSTER, NULL);
    ck_assert_int_eq(lines_with(res.out, bk_addr, "deleted"), 1);
    ck_assert_int_eq(lines_with(res.out, ns_addr, "deleted") + lines_with(res.out, ns_addr, "not present"), 1);
    hn_result_free(&res);
    route_probe_t gone = { ns_addr, TOPIC, NULL, NULL };
    ck_assert(hn_wait_until(route_matches, &gone, 5000));

    /* updateTopic -b targets one broker directly */
    admin_ok(&res, "updateTopic", "-n", ns_addr, "-b", bk_addr, "-t", TOPIC, "-r", "2", "-w", "2", NULL);
    ck_assert_int_eq(lines_with(res.out, bk_addr, "updated"), 1);
    hn_result_free(&res);
    ck_assert(hn_wait_until(route_matches, &shown, 10000));
    admin_ok(&res, "topicRoute", "-n", ns_addr, "-t", TOPIC, NULL);
    {
        char header[512], row[512];
        int n = 1;
        while (nth_line(res.out, n, header, sizeof header) && !strstr(header, "READ_QUEUES"))
            n++;
        ck_assert_ptr_nonnull(nth_line(res.out, n + 1, row, sizeof row));
        ck_assert_int_eq(cell_int(header, row, "READ_QUEUES"), 2);
        ck_assert_int_eq(cell_int(header, row, "WRITE_QUEUES"), 2);
    }
    hn_result_free(&res);

    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

START_TEST(test_errors_name_what_failed)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], bk_addr[64];
    hn_result_t res;

    ns_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&bk, "broker", ns_addr, "", bk_addr, sizeof bk_addr);

    admin(&res, "topicStatus", "-n", ns_addr, "-t", "NoSuchTopic", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "TOPIC_NOT_EXIST"));
    ck_assert_ptr_nonnull(strstr(res.err, "NoSuchTopic"));
    hn_result_free(&res);

    /* a dead broker address: the address and the reason, exit 1 */
    admin(&res, "brokerStatus", "-n", ns_addr, "-b", "127.0.0.1:1", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "127.0.0.1:1"));
    ck_assert_str_eq(res.out, "");
    hn_result_free(&res);
    admin(&res, "updateTopic", "-n", ns_addr, "-b", "127.0.0.1:1", "-t", TOPIC, NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "127.0.0.1:1"));
    hn_result_free(&res);
    admin(&res, "queryMsgById", "-n", ns_addr, "-i", "7F000001000000010000000000000000", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "127.0.0.1:1"));
    hn_result_free(&res);

    /* the broker's refusals carry its status name and remark */
    admin(&res, "updateTopic", "-n", ns_addr, "-b", bk_addr, "-t", "bad topic", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "NAME_ILLEGAL"));
    ck_assert_ptr_nonnull(strstr(res.err, bk_addr));
    hn_result_free(&res);
    admin(&res, "queryMsgById", "-n", ns_addr, "-i", "7F00000100002A9F00000000000F0000", NULL);
    ck_assert_int_eq(res.status, 1);
    hn_result_free(&res);
    admin(&res, "consumerProgress", "-n", ns_addr, "-g", "nobodyGroup", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "nobodyGroup"));
    hn_result_free(&res);
    admin(&res, "sendMessage", "-n", ns_addr, "-t", "NoSuchTopic", "-p", "x", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "TOPIC_NOT_EXIST"));
    hn_result_free(&res);

    /* bad usage */
    admin(&res, "queryMsgById", "-n", ns_addr, "-i", "not-an-id", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "not-an-id"));
    hn_result_free(&res);
    admin(&res, "updateTopic", "-n", ns_addr, "-t", TOPIC, NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "-c CLUSTER"));
    hn_result_free(&res);
    admin(&res, "updateTopic", "-n", ns_addr, "-b", bk_addr, "-t", TOPIC, "-r", "many", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "-r 'many'"));
    hn_result_free(&res);
    admin(&res, "sendMessage", "-n", ns_addr, "-t", TOPIC, NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "-p BODY is required"));
    hn_result_free(&res);
    admin(&res, "topicStatus", "-n", ns_addr, "-t", TOPIC, "--full", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "usage"));
    hn_result_free(&res);

    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* 1 when clusterList shows probe->want (an address) with probe->role. */
typedef struct cluster_probe {
    const char *ns;
    const char *want;
    const char *role;
} cluster_probe_t;

static int cluster_shows(void *arg)
{
    cluster_probe_t *p = arg;
    hn_result_t res;
    int ok;

    admin(&res, "clusterList", "-n", p->ns, NULL);
    ok = res.status == 0 && lines_with(res.out, p->want, p->role) == 1;
    hn_result_free(&res);
    return ok;
}

/* 1 when clusterList's HA_ADDR cell in the row of broker address addr is want. */
typedef struct ha_probe {
    const char *ns;
    const char *addr;
    const char *want;
} ha_probe_t;

static int cluster_ha_is(void *arg)
{
    ha_probe_t *p = arg;
    hn_result_t res;
    char header[1024], row[1024], cell[160];
    int ok = 0;

    admin(&res, "clusterList", "-n", p->ns, NULL);
    if (res.status == 0 && nth_line(res.out, 1, header, sizeof header))
        for (int i = 2; !ok && nth_line(res.out, i, row, sizeof row); i++)
            if (strcmp(cell_str(header, row, "ADDR", cell, sizeof cell), p->addr) == 0)
                ok = strcmp(cell_str(header, row, "HA_ADDR", cell, sizeof cell), p->want) == 0;
    hn_result_free(&res);
    return ok;
}

START_TEST(test_slave_serves_status_while_master_is_down)
{
    hn_daemon_t ns, ma, sl;
    char ns_addr[64], ma_addr[64], sl_addr[64], ma_ha[64], follows[96], lost[112];
    hn_result_t res;

    ns_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&ma, "master", ns_addr, "", ma_addr, sizeof ma_addr);
    broker_start(&sl, "slave", ns_addr, "brokerId=1\nbrokerRole=SLAVE\nregisterNameServerPeriod=1000\n", sl_addr,
                 sizeof sl_addr);
    cluster_probe_t master_shown = { ns_addr, ma_addr, "MASTER" }, slave_shown = { ns_addr, sl_addr, "SLAVE" };
    ck_assert(hn_wait_until(cluster_shows, &master_shown, 10000));
    ck_assert(hn_wait_until(cluster_shows, &slave_shown, 10000));

    /* HA_ADDR: the master's HA listener; the slave (it has none) the master HA address it follows */
    snprintf(ma_ha, sizeof ma_ha, "127.0.0.1:%d", hn_daemon_port(&ma, "haListenPort"));
    snprintf(follows, sizeof follows, "->%s", ma_ha);
    snprintf(lost, sizeof lost, "->%s(down)", ma_ha);
    ha_probe_t master_listens = { ns_addr, ma_addr, ma_ha }, slave_follows = { ns_addr, sl_addr, follows };
    ck_assert(hn_wait_until(cluster_ha_is, &slave_follows, 15000));
    ck_assert(cluster_ha_is(&master_listens));
    admin_ok(&res, "clusterList", "-n", ns_addr, NULL);
    ck_assert_ptr_null(strstr(res.out, ":0 "));
    ck_assert_ptr_null(strstr(res.out, ":0\n"));
    hn_result_free(&res);

    /* the topic on both (directly: topic config replication is not assumed) */
    admin_ok(&res, "updateTopic", "-n", ns_addr, "-b", ma_addr, "-t", TOPIC, NULL);
    hn_result_free(&res);
    admin_ok(&res, "updateTopic", "-n", ns_addr, "-b", sl_addr, "-t", TOPIC, NULL);
    hn_result_free(&res);
    route_probe_t both = { ns_addr, TOPIC, sl_addr, NULL };
    ck_assert(hn_wait_until(route_matches, &both, 10000));

    /* sends go to the master only; topicStatus reads the master */
    for (int i = 0; i < 5; i++) {
        admin_ok(&res, "sendMessage", "-n", ns_addr, "-t", TOPIC, "-p", "to-master", NULL);
        ck_assert_int_eq(lines_with(res.out, ma_addr, "SEND_OK"), 1);
        hn_result_free(&res);
    }
    admin_ok(&res, "topicStatus", "-n", ns_addr, "-t", TOPIC, NULL);
    ck_assert_int_eq(lines_with(res.out, ma_addr, "broker-a"), QUEUES);
    ck_assert_int_eq(lines_with(res.out, "(slave)", NULL), 0);
    hn_result_free(&res);

    /* the master dies: its queues are read at the slave, changes fail */
    hn_daemon_kill9(&ma);
    route_probe_t slave_only = { ns_addr, TOPIC, sl_addr, ma_addr };
    ck_assert(hn_wait_until(route_matches, &slave_only, 10000));
    cluster_probe_t master_gone = { ns_addr, "broker-a", "MASTER" };
    ck_assert(!cluster_shows(&master_gone));
    ha_probe_t slave_lost = { ns_addr, sl_addr, lost };
    ck_assert(hn_wait_until(cluster_ha_is, &slave_lost, 15000));
    admin_ok(&res, "topicStatus", "-n", ns_addr, "-t", TOPIC, NULL);
    ck_assert_int_eq(lines_with(res.out, sl_addr, "(slave)"), QUEUES);
    hn_result_free(&res);
    admin(&res, "sendMessage", "-n", ns_addr, "-t", TOPIC, "-p", "x", NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "no writable queue on a master"));
    hn_result_free(&res);
    admin(&res, "updateTopic", "-n", ns_addr, "-c", CLUSTER, "-t", TOPIC, NULL);
    ck_assert_int_eq(res.status, 1);
    ck_assert_ptr_nonnull(strstr(res.err, "broker-a has no master"));
    hn_result_free(&res);
    admin_ok(&res, "brokerStatus", "-n", ns_addr, "-c", CLUSTER, NULL);
    ck_assert_int_eq(lines_with(res.out, "brokerRole", "SLAVE"), 1);
    hn_result_free(&res);

    ck_assert_int_eq(hn_daemon_stop(&sl, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* The consume TPS consumerProgress prints for GROUP (on TOPIC, or on every
 * topic when all_topics), or -1 if it printed none. */
static double consume_tps(const char *ns, int all_topics)
{
    hn_result_t res;
    double tps = -1;

    if (all_topics)
        admin(&res, "consumerProgress", "-n", ns, "-g", GROUP, NULL);
    else
        admin(&res, "consumerProgress", "-n", ns, "-g", GROUP, "-t", TOPIC, NULL);
    const char *at = res.status == 0 ? strstr(res.out, "Consume TPS: ") : NULL;
    if (at)
        tps = strtod(at + strlen("Consume TPS: "), NULL);
    hn_result_free(&res);
    return tps;
}

typedef struct tps_probe {
    const char *ns;
    double below;                 /* tps_dropped: the rate to fall under */
    double tps;                   /* the last rate read */
} tps_probe_t;

/* Consumes the whole topic once more as GROUP; 1 when consumerProgress
 * shows a TPS above 0. */
static int consuming_shows_tps(void *arg)
{
    tps_probe_t *p = arg;
    hn_result_t res;

    admin_ok(&res, "consumeMessage", "-n", p->ns, "-t", TOPIC, "-g", GROUP, "-c", "100", NULL);
    ck_assert_int_eq(lines_with(res.out, "body-", NULL), SENT);
    hn_result_free(&res);
    p->tps = consume_tps(p->ns, 0);
    return p->tps > 0;
}

/* 1 when consumerProgress shows a TPS below p->below. */
static int tps_dropped(void *arg)
{
    tps_probe_t *p = arg;

    p->tps = consume_tps(p->ns, 0);
    return p->tps >= 0 && p->tps < p->below;
}

/* consumeTps is what the group pulled per second over the last minute (or
 * the broker's age when younger): 0 before anything was pulled, above 0
 * while consuming, falling once consumption stops. */
START_TEST(test_consumer_progress_tps)
{
    hn_daemon_t ns, bk;
    char ns_addr[64], bk_addr[64], id[33];
    int queue;
    hn_result_t res;

    ns_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&bk, "broker", ns_addr, "", bk_addr, sizeof bk_addr);
    admin_ok(&res, "updateTopic", "-n", ns_addr, "-b", bk_addr, "-t", TOPIC, NULL);
    hn_result_free(&res);
    route_probe_t shown = { ns_addr, TOPIC, "RW-", NULL };
    ck_assert(hn_wait_until(route_matches, &shown, 10000));
    for (int i = 0; i < SENT; i++)
        send_one(ns_addr, i, id, &queue);
    ck_assert_int_eq(commit_offset(bk_addr, queue, 0), RMQ__STATUS__SUCCESS);
    ck_assert(consume_tps(ns_addr, 0) == 0);

    tps_probe_t p = { ns_addr, 0, 0 };
    ck_assert(hn_wait_until(consuming_shows_tps, &p, 30000));
    ck_assert(consume_tps(ns_addr, 1) > 0);

    /* stopped: once the last pulls are sampled, the rate only falls */
    rmq_sleep_ms(1500);
    p.below = consume_tps(ns_addr, 0);
    ck_assert(p.below > 0);
    ck_assert(hn_wait_until(tps_dropped, &p, 75000));

    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *mqadmin_suite(void)
{
    Suite *s = suite_create("mqadmin");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_topic_round_trip);
    tcase_add_test(tc, test_errors_name_what_failed);
    tcase_add_test(tc, test_slave_serves_status_while_master_is_down);
    suite_add_tcase(s, tc);
    TCase *tps = tcase_create("tps");
    tcase_add_checked_fixture(tps, setup, teardown);
    tcase_set_timeout(tps, 180);
    tcase_add_test(tps, test_consumer_progress_tps);
    suite_add_tcase(s, tps);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(mqadmin_suite());
    srunner_set_fork_status(sr, CK_NOFORK);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    hn_cleanup();
    return failed ? 1 : 0;
}
