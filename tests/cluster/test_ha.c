/* test_ha.c: replication with real mqbroker processes on loopback: a
 * master and a slave (HA address from the name server or haMasterAddress),
 * small commit-log files, pipelined sends whose bodies are regenerated from
 * their index (KEYS) and checked byte for byte when pulled back from the
 * slave; SYNC_MASTER statuses with the slave down or frozen; byte-equal
 * commit logs under ASYNC_MASTER; an empty slave catching up; controller
 * mode's epochs, truncation and confirm offset on master and slaves.
 * With RMQ_TEST_TRANSIENT_POOL set (the ha_pool test) every broker runs
 * with transientStorePoolEnable (a classic slave ignores it, as in
 * RocketMQ). */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "harness.h"
#include "rmq_file.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "wire.h"

#define TOPIC "HaTopic"
#define GROUP "ha_group"
#define PRODUCER "ha_producer"
#define QUEUES WIRE_QUEUES
#define CONNECT_WAIT_MS 15000
#define FILE_SIZE 1048576

static const char *case_dir;
/* SYSTEM_BUSY answers count as failed sends. */
static const wire_flow_t FLOW = { .topic = TOPIC, .producer_group = PRODUCER, .consumer_group = GROUP };

/* ---- daemons ------------------------------------------------------------------ */

static void ns_start(hn_daemon_t *d, char *addr, size_t len)
{
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", addr, len), 0);
}

/* Starts mqbroker `name` over case_dir/name with 1 MiB commit-log files.
 * Sends may wait in the queue up to a minute before SYSTEM_BUSY (as in
 * test_broker.c): these cases test replication, not flow control, and a
 * loaded machine under a sanitizer can stall a roll past the 200 ms default. */
static void broker_start(hn_daemon_t *d, const char *name, const char *extra, char *addr, size_t len)
{
    char props[2048];
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/%s\n"
             "mapedFileSizeCommitLog=%d\nmaxMessageSize=262144\nsyncFlushTimeout=1500\n"
             "maxTransferCountOnMessageInMemory=1024\nmaxTransferBytesOnMessageInMemory=4194304\n"
             "waitTimeMillsInSendQueue=60000\n%s%s",
             case_dir, name, FILE_SIZE, getenv("RMQ_TEST_TRANSIENT_POOL") ? "transientStorePoolEnable=true\n" : "",
             extra ? extra : "");
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", name, props, addr, len), 0);
}

/* Starts a slave of the master d_master through haMasterAddress. */
static void slave_start(hn_daemon_t *d, const hn_daemon_t *master, const char *extra, char *addr, size_t len)
{
    char props[512];
    snprintf(props, sizeof props, "brokerRole=SLAVE\nbrokerId=1\nhaMasterAddress=127.0.0.1:%d\n%s",
             hn_daemon_port(master, "haListenPort"), extra ? extra : "");
    broker_start(d, "slave", props, addr, len);
}

/* ---- blocking requests ------------------------------------------------------- */

static int create_topic(const char *addr, const char *topic, int queues)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, topic, queues);
    return wire_call(addr, &req, NULL, 0, NULL);
}

static int send_sync(const char *addr, const char *body)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    wire_send_hdr(&req, &h, PRODUCER, TOPIC, 0, (char *)"");
    return wire_call(addr, &req, body, strlen(body), NULL);
}

/* The runtime-info value of key into out ("" if absent); 0, or -1 if the call failed. */
static int runtime_get(const char *addr, const char *key, char *out, size_t len)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    out[0] = '\0';
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (wire_call(addr, &req, NULL, 0, &resp) != RMQ__STATUS__SUCCESS)
        return -1;
    wire_runtime_value(&resp, key, out, len);
    rmq_frame_clear(&resp);
    return 0;
}

static long long runtime_ll(const char *addr, const char *key)
{
    char v[160];
    return runtime_get(addr, key, v, sizeof v) == 0 && v[0] ? atoll(v) : -1;
}

typedef struct kv_want {
    const char *addr, *key, *value;
} kv_want_t;

static int runtime_is(void *arg)
{
    kv_want_t *w = arg;
    char v[160];
    return runtime_get(w->addr, w->key, v, sizeof v) == 0 && strcmp(v, w->value) == 0;
}

/* 1 once the numeric runtime key w->key of w->addr is below w->value. */
static int runtime_below(void *arg)
{
    kv_want_t *w = arg;
    char v[160];
    return runtime_get(w->addr, w->key, v, sizeof v) == 0 && strtoll(v, NULL, 10) < strtoll(w->value, NULL, 10);
}

typedef struct file_want {
    const char *path, *text;
} file_want_t;

/* 1 once the file w->path holds exactly w->text. */
static int file_holds(void *arg)
{
    file_want_t *w = arg;
    char *got = NULL;
    size_t len = 0;
    int same = rmq_file_read_all(w->path, &got, &len) == RMQ_OK && strcmp(got, w->text) == 0;
    free(got);
    return same;
}

/* Waits until the slave at slave_addr streams from its master. */
static void wait_connected(const char *slave_addr)
{
    kv_want_t w = { slave_addr, "haConnected", "true" };
    ck_assert_msg(hn_wait_until(runtime_is, &w, CONNECT_WAIT_MS), "slave %s never connected", slave_addr);
}

typedef struct caught_up {
    const char *master, *slave;
} caught_up_t;

static int is_caught_up(void *arg)
{
    caught_up_t *c = arg;
    long long m = runtime_ll(c->master, "commitLogMaxOffset");
    return m > 0 && m == runtime_ll(c->slave, "commitLogMaxOffset") && runtime_ll(c->slave, "dispatchBehindBytes") == 0;
}

/* Waits until the slave holds (and has dispatched) the master's whole log. */
static void wait_caught_up(const char *master, const char *slave, int timeout_ms)
{
    caught_up_t c = { master, slave };
    ck_assert_msg(hn_wait_until(is_caught_up, &c, timeout_ms), "slave at %lld of master's %lld",
                  runtime_ll(slave, "commitLogMaxOffset"), runtime_ll(master, "commitLogMaxOffset"));
}

/* ---- commit-log files ------------------------------------------------------------- */

/* Reads up to len bytes of f into buf, zero-filling past its end (or when
 * f is NULL); returns how many real bytes were read. */
static size_t read_padded(FILE *f, char *buf, size_t len)
{
    size_t n = f ? fread(buf, 1, len, f) : 0;
    memset(buf + n, 0, len - n);
    return n;
}

/* 1 if both files hold the same bytes, a missing file or a shorter tail
 * counting as zeros (a preallocated empty file is not data). */
static int same_file(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    static char ba[65536], bb[65536];
    int same = 1;
    for (;;) {
        size_t na = read_padded(fa, ba, sizeof ba), nb = read_padded(fb, bb, sizeof bb);
        if (na == 0 && nb == 0)
            break;
        if (memcmp(ba, bb, sizeof ba) != 0) {
            same = 0;
            break;
        }
    }
    if (fa)
        fclose(fa);
    if (fb)
        fclose(fb);
    return same;
}

/* Adds dir's file names not yet in names (n of them, up to max); returns the new count. */
static int add_names(const char *dir, char **names, int n, int max)
{
    DIR *d = opendir(dir);
    struct dirent *e;
    ck_assert_ptr_nonnull(d);
    while ((e = readdir(d)) && n < max) {
        int seen = e->d_name[0] == '.';
        for (int i = 0; i < n && !seen; i++)
            seen = strcmp(names[i], e->d_name) == 0;
        if (!seen)
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    return n;
}

/* The commit logs of case_dir/a and case_dir/b hold the same bytes at the
 * same offsets; returns how many files were compared. */
static int assert_same_commitlog(const char *a, const char *b)
{
    char da[PATH_MAX], db[PATH_MAX], fa[PATH_MAX + 256], fb[PATH_MAX + 256];
    char *names[1024];
    snprintf(da, sizeof da, "%s/%s/commitlog", case_dir, a);
    snprintf(db, sizeof db, "%s/%s/commitlog", case_dir, b);
    int n = add_names(db, names, add_names(da, names, 0, 1024), 1024);
    for (int i = 0; i < n; i++) {
        snprintf(fa, sizeof fa, "%s/%s", da, names[i]);
        snprintf(fb, sizeof fb, "%s/%s", db, names[i]);
        ck_assert_msg(same_file(fa, fb), "commit-log file %s differs", names[i]);
        free(names[i]);
    }
    return n;
}

/* ---- fixtures --------------------------------------------------------------------- */

static void setup(void)
{
    case_dir = hn_case_begin("ha");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

/* ---- cases ------------------------------------------------------------------------ */

/* SYNC_MASTER (slave found through the name server): kill -9 the master
 * under load; every message answered SUCCESS is on the slave. */
START_TEST(test_sync_master_kill9_slave_has_acked)
{
    hn_daemon_t ns, master, slave;
    char ns_addr[64], maddr[64], saddr[64], extra[256];
    ns_start(&ns, ns_addr, sizeof ns_addr);
    snprintf(extra, sizeof extra, "brokerRole=SYNC_MASTER\nnamesrvAddr=%s\n", ns_addr);
    broker_start(&master, "master", extra, maddr, sizeof maddr);
    snprintf(extra, sizeof extra, "brokerRole=SLAVE\nbrokerId=1\nnamesrvAddr=%s\nregisterNameServerPeriod=1000\n",
             ns_addr);
    broker_start(&slave, "slave", extra, saddr, sizeof saddr);
    wait_connected(saddr);
    ck_assert_int_eq(create_topic(maddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(create_topic(saddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);

    wire_sender_t sd;
    wire_send_kill9(maddr, &sd, &FLOW, 1000000, 128, &master, 1500);
    fprintf(stderr, "# SYNC_MASTER kill -9: %d answered SUCCESS in 1.5 s (window 128), %d failed\n", sd.acked,
            sd.failed);
    ck_assert_int_gt(sd.acked, 100);
    /* the slave dispatches every whole record it has. HA chunks are byte
     * ranges, so a kill can leave the start of one record (shorter than the
     * largest body plus 1 KiB of header and properties) at the slave's
     * tail, never dispatched until a master sends the rest, as in RocketMQ
     * (maxOffset - reputFromOffset) */
    char record_max[32];
    snprintf(record_max, sizeof record_max, "%d", WIRE_BODY_MAX + 1024);
    kv_want_t w = { saddr, "dispatchBehindBytes", record_max };
    ck_assert(hn_wait_until(runtime_below, &w, 20000));
    wire_assert_acked_on(saddr, &FLOW, sd.acked_map, sd.total);
    wire_sender_deinit(&sd);
    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ASYNC_MASTER: once the load stops, the slave's commit log equals the master's. */
START_TEST(test_async_master_logs_equal)
{
    hn_daemon_t master, slave;
    char maddr[64], saddr[64];
    broker_start(&master, "master", "haTransferBatchSize=65536\n", maddr, sizeof maddr);
    ck_assert_int_eq(hn_daemon_port(&master, "haListenPort") > 0, 1);
    slave_start(&slave, &master, NULL, saddr, sizeof saddr);
    wait_connected(saddr);
    ck_assert_int_eq(create_topic(maddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(create_topic(saddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(send_sync(saddr, "to a slave"), RMQ__STATUS__SERVICE_NOT_AVAILABLE_SLAVE);
    wire_sender_t sd;
    wire_send_all(maddr, &sd, &FLOW, 20000, 256);
    ck_assert_msg(sd.failed == 0, "%d sends failed, first status %d", sd.failed, sd.first_fail);
    wait_caught_up(maddr, saddr, 30000);
    char v[160];
    ck_assert_int_eq(runtime_get(maddr, "haSlaveCount", v, sizeof v), 0);
    ck_assert_str_eq(v, "1");
    ck_assert_int_eq(runtime_get(maddr, "haSlave0.lagBytes", v, sizeof v), 0);
    ck_assert_str_eq(v, "0");
    ck_assert_int_eq(runtime_get(maddr, "haSlave0.inSync", v, sizeof v), 0);
    ck_assert_str_eq(v, "true");
    ck_assert_int_eq(runtime_ll(maddr, "haSlave0.ackedOffset"), runtime_ll(maddr, "commitLogMaxOffset"));
    ck_assert_int_eq(wire_assert_acked_on(saddr, &FLOW, sd.acked_map, sd.total), sd.total);
    wire_sender_deinit(&sd);
    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    int files = assert_same_commitlog("master", "slave");
    fprintf(stderr, "# ASYNC_MASTER: %d commit-log files equal byte for byte\n", files);
    ck_assert_int_gt(files, 3);
    hn_case_passed();
}
END_TEST

typedef struct status_want {
    const char *addr;
    int status;
} status_want_t;

static int send_gets(void *arg)
{
    status_want_t *w = arg;
    return send_sync(w->addr, "probe") == w->status;
}

/* Sends until one is answered status (bounded); returns the ms it took. */
static long long expect_status(const char *addr, int status, int timeout_ms)
{
    status_want_t w = { addr, status };
    long long t0 = hn_now_ms();
    ck_assert_msg(hn_wait_until(send_gets, &w, timeout_ms), "never answered status %d", status);
    return hn_now_ms() - t0;
}

/* SYNC_MASTER + SYNC_FLUSH: SLAVE_NOT_AVAILABLE at once without a slave,
 * SUCCESS with one, FLUSH_SLAVE_TIMEOUT while it is frozen, SUCCESS after
 * SIGCONT, SLAVE_NOT_AVAILABLE again once it stopped. */
START_TEST(test_sync_master_statuses)
{
    hn_daemon_t master, slave;
    char maddr[64], saddr[64];
    broker_start(&master, "master", "brokerRole=SYNC_MASTER\nflushDiskType=SYNC_FLUSH\n", maddr, sizeof maddr);
    ck_assert_int_eq(create_topic(maddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    long long t0 = hn_now_ms();
    ck_assert_int_eq(send_sync(maddr, "lonely"), RMQ__STATUS__SLAVE_NOT_AVAILABLE);
    ck_assert_int_lt(hn_now_ms() - t0, 1000);

    slave_start(&slave, &master, NULL, saddr, sizeof saddr);
    wait_connected(saddr);
    ck_assert_int_eq(send_sync(maddr, "replicated"), RMQ__STATUS__SUCCESS);

    ck_assert_int_eq(kill(slave.pid, SIGSTOP), 0);
    t0 = hn_now_ms();
    ck_assert_int_eq(send_sync(maddr, "frozen"), RMQ__STATUS__FLUSH_SLAVE_TIMEOUT);
    long long waited = hn_now_ms() - t0;
    fprintf(stderr, "# FLUSH_SLAVE_TIMEOUT after %lld ms (syncFlushTimeout=1500)\n", waited);
    ck_assert_int_ge(waited, 1300);
    ck_assert_int_lt(waited, 5000);
    ck_assert_int_eq(kill(slave.pid, SIGCONT), 0);
    expect_status(maddr, RMQ__STATUS__SUCCESS, 10000);
    char v[160];
    ck_assert_int_eq(runtime_get(maddr, "haSlave0.inSync", v, sizeof v), 0);
    ck_assert_str_eq(v, "true");

    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    long long ms = expect_status(maddr, RMQ__STATUS__SLAVE_NOT_AVAILABLE, 10000);
    fprintf(stderr, "# SLAVE_NOT_AVAILABLE %lld ms after the slave stopped\n", ms);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* A slave started empty after the master wrote more than three commit-log
 * files copies the whole retained log and serves every message. */
START_TEST(test_empty_slave_catches_up)
{
    hn_daemon_t master, slave;
    char maddr[64], saddr[64];
    broker_start(&master, "master", NULL, maddr, sizeof maddr);
    ck_assert_int_eq(create_topic(maddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    wire_sender_t sd;
    wire_send_all(maddr, &sd, &FLOW, 3000, 128);
    ck_assert_int_eq(sd.acked, 3000);
    ck_assert_int_gt(runtime_ll(maddr, "commitLogMaxOffset"), 3LL * FILE_SIZE);
    slave_start(&slave, &master, NULL, saddr, sizeof saddr);
    ck_assert_int_eq(create_topic(saddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    wait_caught_up(maddr, saddr, 30000);
    ck_assert_int_eq(runtime_ll(saddr, "commitLogMinOffset"), 0);
    ck_assert_int_eq(wire_assert_acked_on(saddr, &FLOW, sd.acked_map, sd.total), sd.total);
    wire_sender_deinit(&sd);
    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_gt(assert_same_commitlog("master", "slave"), 3);
    hn_case_passed();
}
END_TEST

/* ---- metadata sync ------------------------------------------------------------------ */

static int offset_call(const char *addr, int code, int q, int64_t commit, int64_t *out)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__ConsumerOffsetRequest h = RMQ__CONSUMER_OFFSET_REQUEST__INIT;
    rmq_frame_t resp = { 0 };
    h.consumer_group = (char *)GROUP;
    h.topic = (char *)TOPIC;
    h.queue_id = q;
    h.commit_offset = commit;
    req.code = code;
    req.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
    req.consumer_offset = &h;
    int status = wire_call(addr, &req, NULL, 0, &resp);
    if (status == RMQ__STATUS__SUCCESS && out)
        *out = resp.cmd->offset_resp->offset;
    if (status >= 0)
        rmq_frame_clear(&resp);
    return status;
}

static void commit_offset(const char *addr, int q, int64_t off)
{
    ck_assert_int_eq(offset_call(addr, RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET, q, off, NULL),
                     RMQ__STATUS__SUCCESS);
}

typedef struct offset_want {
    const char *addr;
    int q;
    int64_t offset;
} offset_want_t;

static int offset_is(void *arg)
{
    offset_want_t *w = arg;
    int64_t off = -1;
    return offset_call(w->addr, RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, w->q, 0, &off) == RMQ__STATUS__SUCCESS &&
           off == w->offset;
}

/* Waits until addr reports offset for queue q. */
static void wait_offset(const char *addr, int q, int64_t offset)
{
    offset_want_t w = { addr, q, offset };
    ck_assert_msg(hn_wait_until(offset_is, &w, 15000), "%s queue %d never reached offset %lld", addr, q,
                  (long long)offset);
}

static int group_create(const char *addr, const char *group)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__SubscriptionGroupConfig g = RMQ__SUBSCRIPTION_GROUP_CONFIG__INIT;
    g.group_name = (char *)group;
    g.consume_enable = 1;
    g.retry_queue_nums = 1;
    g.retry_max_times = 7;
    g.which_broker_when_consume_slowly = 1;
    req.code = RMQ__REQUEST_CODE__UPDATE_AND_CREATE_SUBSCRIPTIONGROUP;
    req.header_case = RMQ__COMMAND__HEADER_SUBSCRIPTION_GROUP;
    req.subscription_group = &g;
    return wire_call(addr, &req, NULL, 0, NULL);
}

/* 1 if addr's subscription groups include "SyncedGroup" with retry_max_times 7. */
static int has_synced_group(void *arg)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    int found = 0;
    req.code = RMQ__REQUEST_CODE__GET_ALL_SUBSCRIPTIONGROUP_CONFIG;
    if (wire_call(arg, &req, NULL, 0, &resp) != RMQ__STATUS__SUCCESS)
        return 0;
    const Rmq__SubscriptionGroupTable *t = resp.cmd->subscription_group_table;
    for (size_t i = 0; i < t->n_groups; i++)
        found |= strcmp(t->groups[i]->group_name, "SyncedGroup") == 0 && t->groups[i]->retry_max_times == 7;
    rmq_frame_clear(&resp);
    return found;
}

/* A slave copies topics, groups and offsets from its master; offsets never
 * go back, and offsets committed to the slave while the master was down
 * reach the master once it returns. */
START_TEST(test_slave_syncs_metadata)
{
    hn_daemon_t ns, master, slave;
    char ns_addr[64], maddr[64], saddr[64], extra[256];
    ns_start(&ns, ns_addr, sizeof ns_addr);
    snprintf(extra, sizeof extra, "namesrvAddr=%s\n", ns_addr);
    broker_start(&master, "master", extra, maddr, sizeof maddr);
    ck_assert_int_eq(create_topic(maddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(group_create(maddr, "SyncedGroup"), RMQ__STATUS__SUCCESS);
    commit_offset(maddr, 0, 10);
    commit_offset(maddr, 1, 5);
    snprintf(extra, sizeof extra, "brokerRole=SLAVE\nbrokerId=1\nnamesrvAddr=%s\nregisterNameServerPeriod=1000\n"
             "slaveSyncInterval=300\n", ns_addr);
    broker_start(&slave, "slave", extra, saddr, sizeof saddr);
    wait_connected(saddr);
    wait_offset(saddr, 0, 10);
    wait_offset(saddr, 1, 5);
    ck_assert(hn_wait_until(has_synced_group, saddr, 5000));
    ck_assert_int_gt(runtime_ll(saddr, "slaveSyncCount"), 0);
    char v[160];
    ck_assert_int_eq(runtime_get(saddr, "haMasterAddr", v, sizeof v), 0);
    ck_assert_int_eq(atoi(strchr(v, ':') + 1), hn_daemon_port(&master, "haListenPort"));
    wire_sender_t sd;
    wire_send_all(maddr, &sd, &FLOW, 1, 1);
    wait_caught_up(maddr, saddr, 10000);
    ck_assert_int_eq(wire_assert_acked_on(saddr, &FLOW, sd.acked_map, sd.total), 1);
    wire_sender_deinit(&sd);

    /* an older offset on the slave is raised, a newer one reaches the master */
    commit_offset(saddr, 0, 3);
    commit_offset(saddr, 1, 7);
    wait_offset(saddr, 0, 10);
    wait_offset(maddr, 1, 7);

    /* committed to the slave while the master is away, handed over on return */
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    commit_offset(saddr, 2, 42);
    snprintf(extra, sizeof extra, "namesrvAddr=%s\n", ns_addr);
    broker_start(&master, "master", extra, maddr, sizeof maddr);
    wait_offset(maddr, 2, 42);
    wait_offset(maddr, 0, 10);
    wait_connected(saddr);
    ck_assert_int_eq(hn_daemon_stop(&slave, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&master, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- slave reads ------------------------------------------------------------------- */

/* Pulls max messages of queue 0 from offset; returns suggest_which_broker_id (-1 if not found). */
static long long pull_suggest(const char *addr, int64_t offset, int max)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__PullMessageRequest h = RMQ__PULL_MESSAGE_REQUEST__INIT;
    rmq_frame_t resp = { 0 };
    h.consumer_group = (char *)GROUP;
    h.topic = (char *)TOPIC;
    h.queue_offset = offset;
    h.max_msg_nums = max;
    h.subscription = (char *)"*";
    req.code = RMQ__REQUEST_CODE__PULL_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_PULL;
    req.pull = &h;
    if (wire_call(addr, &req, NULL, 0, &resp) != RMQ__STATUS__SUCCESS)
        return -1;
    long long id = resp.cmd->pull_resp->suggest_which_broker_id;
    rmq_frame_clear(&resp);
    return id;
}

/* suggestWhichBrokerId: with slaveReadEnable a pull far behind the log end
 * (accessMessageInMemoryMaxRatio=0: anything behind) is sent to the group's
 * whichBrokerWhenConsumeSlowly, one at the end to its brokerId; without
 * slaveReadEnable always to the master. */
START_TEST(test_pull_suggests_slave)
{
    hn_daemon_t bk;
    char addr[64];
    broker_start(&bk, "master", "slaveReadEnable=true\naccessMessageInMemoryMaxRatio=0\n", addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(group_create(addr, GROUP), RMQ__STATUS__SUCCESS);
    for (int i = 0; i < 10; i++)
        ck_assert_int_eq(send_sync(addr, "m"), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(pull_suggest(addr, 0, 1), 1);
    ck_assert_int_eq(pull_suggest(addr, 9, 1), 0);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);

    broker_start(&bk, "master", "slaveReadEnable=true\n", addr, sizeof addr);
    ck_assert_int_eq(pull_suggest(addr, 0, 1), 0);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    broker_start(&bk, "master", "accessMessageInMemoryMaxRatio=0\n", addr, sizeof addr);
    ck_assert_int_eq(pull_suggest(addr, 0, 1), 0);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

/* ---- controller-mode epochs ------------------------------------------------------ */

#define E1_MSGS 200
#define DIV_MSGS 100
#define E2_MSGS 50

/* Sends n messages "<tag>-<i>" to queue 0 of addr, each answered SUCCESS. */
static void send_tagged(const char *addr, const char *tag, int n)
{
    char body[64];
    for (int i = 0; i < n; i++) {
        snprintf(body, sizeof body, "%s-%d", tag, i);
        ck_assert_int_eq(send_sync(addr, body), RMQ__STATUS__SUCCESS);
    }
}

/* Pulls queue 0 of addr from offset 0 (no suspension); returns how many
 * messages came back and counts in *div those whose body starts "div-". */
static int pull_count(const char *addr, int *div)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__PullMessageRequest h = RMQ__PULL_MESSAGE_REQUEST__INIT;
    rmq_frame_t resp = { 0 };
    int n = 0;
    h.consumer_group = (char *)GROUP;
    h.topic = (char *)TOPIC;
    h.max_msg_nums = 1024;
    h.subscription = (char *)"*";
    req.code = RMQ__REQUEST_CODE__PULL_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_PULL;
    req.pull = &h;
    *div = 0;
    if (wire_call(addr, &req, NULL, 0, &resp) != RMQ__STATUS__SUCCESS)
        return 0;
    size_t len = evbuffer_get_length(resp.body), pos = 0;
    const uint8_t *data = len ? evbuffer_pullup(resp.body, -1) : NULL;
    rmq_record_t rec;
    while (pos < len && rmq_record_decode(data + pos, len - pos, 1, &rec) == RMQ_OK) {
        n++;
        *div += rec.body_len >= 4 && memcmp(rec.body, "div-", 4) == 0;
        pos += rec.total_size;
    }
    rmq_frame_clear(&resp);
    return n;
}

typedef struct pull_want {
    const char *addr;
    int n;
} pull_want_t;

static int pull_sees(void *arg)
{
    pull_want_t *w = arg;
    int div;
    return pull_count(w->addr, &div) == w->n && div == 0;
}

/* Starts `name` in controller mode as slave broker id of master. */
static void epoch_slave_start_id(hn_daemon_t *d, const char *name, int id, const hn_daemon_t *master, char *addr,
                                 size_t len)
{
    char extra[512];
    snprintf(extra, sizeof extra, "enableControllerMode=true\nbrokerRole=SLAVE\nbrokerId=%d\n"
             "haMasterAddress=127.0.0.1:%d\n", id, hn_daemon_port(master, "haListenPort"));
    broker_start(d, name, extra, addr, len);
}

/* Starts `name` in controller mode over its store as a slave of master. */
static void epoch_slave_start(hn_daemon_t *d, const char *name, const hn_daemon_t *master, char *addr, size_t len)
{
    epoch_slave_start_id(d, name, 1, master, addr, len);
}

/* Controller-mode epochs without a controller (controllerModeStartEpoch
 * stands in for its election): A, master at epoch 1, replicates to B; B
 * freezes (SIGSTOP), A takes records B never gets, which consumers of A do
 * not see (confirm offset); both die; B becomes master at epoch 2 and takes
 * more; A rejoins as B's slave, truncates its divergent tail and ends up
 * with B's log and epoch file byte for byte. */
START_TEST(test_epochs_truncate_divergent_tail)
{
    hn_daemon_t a, b;
    char aaddr[64], baddr[64], v[160], fa[PATH_MAX], fb[PATH_MAX];
    int div;
    broker_start(&a, "a", "enableControllerMode=true\ncontrollerModeStartEpoch=1\nhaHousekeepingInterval=60000\n",
                 aaddr, sizeof aaddr);
    epoch_slave_start(&b, "b", &a, baddr, sizeof baddr);
    wait_connected(baddr);
    ck_assert_int_eq(create_topic(aaddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(create_topic(baddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    send_tagged(aaddr, "e1", E1_MSGS);
    wait_caught_up(aaddr, baddr, 30000);
    long long x = runtime_ll(aaddr, "commitLogMaxOffset");
    pull_want_t all1 = { aaddr, E1_MSGS };
    ck_assert(hn_wait_until(pull_sees, &all1, 5000));
    ck_assert_int_eq(runtime_ll(aaddr, "haEpoch"), 1);
    ck_assert_int_eq(runtime_ll(baddr, "haEpoch"), 1);

    ck_assert_int_eq(kill(b.pid, SIGSTOP), 0);
    send_tagged(aaddr, "div", DIV_MSGS);
    ck_assert_int_gt(runtime_ll(aaddr, "commitLogMaxOffset"), x);
    ck_assert_int_eq(runtime_ll(aaddr, "haConfirmOffset"), x);
    ck_assert_int_eq(pull_count(aaddr, &div), E1_MSGS);   /* the unreplicated tail stays unseen */
    ck_assert_int_eq(div, 0);
    hn_daemon_kill9(&a);
    hn_daemon_kill9(&b);

    broker_start(&b, "b", "enableControllerMode=true\ncontrollerModeStartEpoch=2\n", baddr, sizeof baddr);
    ck_assert_int_eq(runtime_ll(baddr, "haEpoch"), 2);
    ck_assert_int_eq(runtime_ll(baddr, "commitLogMaxOffset"), x);
    send_tagged(baddr, "e2", E2_MSGS);
    epoch_slave_start(&a, "a", &b, aaddr, sizeof aaddr);
    wait_connected(aaddr);
    wait_caught_up(baddr, aaddr, 30000);
    ck_assert_int_eq(runtime_ll(aaddr, "haEpoch"), 2);
    ck_assert_int_eq(runtime_get(aaddr, "haLastError", v, sizeof v), 0);
    ck_assert_str_eq(v, "");
    pull_want_t all2 = { aaddr, E1_MSGS + E2_MSGS };    /* once B's confirm offset reached A */
    ck_assert(hn_wait_until(pull_sees, &all2, 5000));
    ck_assert_int_eq(hn_daemon_stop(&a, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&b, HN_STOP_TIMEOUT_MS), 0);
    int files = assert_same_commitlog("a", "b");
    ck_assert_int_ge(files, 1);
    snprintf(fa, sizeof fa, "%s/a/epochFileCheckpoint", case_dir);
    snprintf(fb, sizeof fb, "%s/b/epochFileCheckpoint", case_dir);
    ck_assert_msg(same_file(fa, fb), "epoch files differ");
    fprintf(stderr, "# epochs: A cut its %d-message divergent tail at %lld; %d commit-log files equal\n",
            DIV_MSGS, x, files);
    hn_case_passed();
}
END_TEST

/* The slave side of the confirm offset: A (master, epoch 1) replicates to
 * B and C; C freezes, so A's confirm offset stays where C is while B gets
 * A's later records: consumers of B see none of them (A streams its confirm
 * offset to B), nor after B restarts without a master (B kept it on disk).
 * Then C becomes master at epoch 2 and B, rejoining it, truncates exactly
 * those records: no consumer of B ever saw a record it later lost. */
START_TEST(test_slave_reads_to_confirm)
{
    hn_daemon_t a, b, c;
    char aaddr[64], baddr[64], caddr[64];
    int div;
    broker_start(&a, "a", "enableControllerMode=true\ncontrollerModeStartEpoch=1\nhaHousekeepingInterval=60000\n",
                 aaddr, sizeof aaddr);
    epoch_slave_start_id(&b, "b", 1, &a, baddr, sizeof baddr);
    epoch_slave_start_id(&c, "c", 2, &a, caddr, sizeof caddr);
    wait_connected(baddr);
    wait_connected(caddr);
    ck_assert_int_eq(create_topic(aaddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(create_topic(baddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(create_topic(caddr, TOPIC, QUEUES), RMQ__STATUS__SUCCESS);
    send_tagged(aaddr, "e1", E1_MSGS);
    wait_caught_up(aaddr, baddr, 30000);
    wait_caught_up(aaddr, caddr, 30000);
    long long x = runtime_ll(aaddr, "commitLogMaxOffset");
    pull_want_t all1 = { baddr, E1_MSGS };
    ck_assert_msg(hn_wait_until(pull_sees, &all1, 5000), "slave B never served the confirmed records");

    ck_assert_int_eq(kill(c.pid, SIGSTOP), 0);
    send_tagged(aaddr, "div", DIV_MSGS);
    wait_caught_up(aaddr, baddr, 30000);
    ck_assert_int_eq(runtime_ll(aaddr, "haConfirmOffset"), x);
    ck_assert_int_eq(runtime_ll(baddr, "haConfirmOffset"), x);
    ck_assert_int_eq(pull_count(baddr, &div), E1_MSGS);     /* B holds them, serves none */
    ck_assert_int_eq(div, 0);
    /* B writes its confirm offset off the loop (an older one is only more
     * careful): kill it once the file holds x, so the restart shows x kept */
    char confirm_path[PATH_MAX], confirm_text[32];
    snprintf(confirm_path, sizeof confirm_path, "%s/b/confirmOffset", case_dir);
    snprintf(confirm_text, sizeof confirm_text, "%lld\n", x);
    file_want_t kept = { confirm_path, confirm_text };
    ck_assert_msg(hn_wait_until(file_holds, &kept, 10000), "B never kept the confirm offset %lld", x);
    hn_daemon_kill9(&a);
    hn_daemon_kill9(&b);
    epoch_slave_start_id(&b, "b", 1, &a, baddr, sizeof baddr);   /* A is gone: no master to follow */
    ck_assert_int_eq(runtime_ll(baddr, "haConfirmOffset"), x);
    ck_assert_int_gt(runtime_ll(baddr, "commitLogMaxOffset"), x);
    ck_assert_int_eq(pull_count(baddr, &div), E1_MSGS);
    ck_assert_int_eq(div, 0);

    hn_daemon_kill9(&c);
    broker_start(&c, "c", "enableControllerMode=true\ncontrollerModeStartEpoch=2\n", caddr, sizeof caddr);
    send_tagged(caddr, "e2", E2_MSGS);
    hn_daemon_kill9(&b);
    epoch_slave_start_id(&b, "b", 1, &c, baddr, sizeof baddr);
    wait_connected(baddr);
    wait_caught_up(caddr, baddr, 30000);
    pull_want_t all2 = { baddr, E1_MSGS + E2_MSGS };
    ck_assert_msg(hn_wait_until(pull_sees, &all2, 5000), "B does not serve C's log after rejoining");
    ck_assert_int_eq(runtime_ll(baddr, "haEpoch"), 2);
    hn_case_passed();
}
END_TEST

static Suite *ha_suite(void)
{
    Suite *s = suite_create("ha");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_sync_master_statuses);
    /* these two kill -9 ASYNC_FLUSH controller-mode brokers and expect
     * every replicated byte back; with the pool a process crash loses what
     * was not written yet (ASYNC_FLUSH's window), so they run without it */
    if (!getenv("RMQ_TEST_TRANSIENT_POOL")) {
        tcase_add_test(tc, test_epochs_truncate_divergent_tail);
        tcase_add_test(tc, test_slave_reads_to_confirm);
    }
    tcase_add_test(tc, test_empty_slave_catches_up);
    tcase_add_test(tc, test_async_master_logs_equal);
    tcase_add_test(tc, test_sync_master_kill9_slave_has_acked);
    tcase_add_test(tc, test_slave_syncs_metadata);
    tcase_add_test(tc, test_pull_suggests_slave);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(ha_suite());
}
