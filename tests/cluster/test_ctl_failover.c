/* test_ctl_failover.c: controller mode end to end with real processes: a
 * private etcd, a name server running the controller, and two mqbroker
 * replicas of broker-a with enableControllerMode (SYNC_MASTER when
 * elected). The controller elects one master, which grows the sync state
 * set once the other catches up; kill -9 of the master under load promotes
 * the slave within the heartbeat timeout, every message acknowledged
 * before the kill is read back from the new master, the route shows it as
 * brokerId 0, the console (/api/controller) shows the raised epoch and the
 * election, and the old master restarted rejoins as its slave. A slave
 * promoted with a partial record at its end (1 KiB HA chunks) trims it:
 * killed -9 in turn and restarted it keeps what it acknowledged, and the
 * old master replicates its log past that point. A master
 * cut off from the controller (name server frozen) stops acknowledging
 * writes within the timeout and takes them again once confirmed. No new
 * master acknowledges while the old one's lease may run: not after a kill
 * -9 (a refused port may be a firewall), not when the controller leader
 * is partitioned off with the master (relays of scripts/chaos-proxy.py).
 * A slave lagging behind acknowledged writes joins the sync state set only
 * once it has them. A pull held on a master that is deposed with a record
 * no slave confirmed is never answered with that record. The ack rules
 * (allAckInSyncStateSet, inSyncReplicas, minInSyncReplicas) answer as
 * RocketMQ's: a missing set member holds sends, too small a set refuses
 * them. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ctlgroup.h"
#include "harness.h"
#include "rmq_json.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "wire.h"

#define TOPIC "CtlFailTopic"
#define PRODUCER "ctl_producer"
#define CONSUMER "ctl_consumer"
#define HB_TIMEOUT_MS 2000
#define WAIT_MS 30000

static const char *case_dir;
static const wire_flow_t FLOW = { .topic = TOPIC, .producer_group = PRODUCER, .consumer_group = CONSUMER };
static const cg_settings_t FAST = { .hb_timeout_ms = HB_TIMEOUT_MS, .hb_interval_ms = 200, .check_ms = 300,
                                    .catchup_ms = 3000, .lease_s = 2 };
static cg_group_t grp;

static int route_is_master(void *arg)
{
    char got[64];
    cg_route_addr(grp.ns_addr, TOPIC, 0, got, sizeof got);
    return strcmp(got, arg) == 0;
}

static void setup(void)
{
    case_dir = hn_case_begin("ctlfail");
    ck_assert_ptr_nonnull(case_dir);
    ck_assert_msg(hn_etcd_available(), "etcd is not on PATH (scripts/bootstrap.sh installs etcd-server)");
    memset(&grp, 0, sizeof grp);
}

static void teardown(void)
{
    hn_etcd_kill(&grp.etcd);
    hn_case_end();
}

/* The console's /api/controller, parsed (rmq_json_free). */
static rmq_json_t *console_controller(void)
{
    static char buf[65536];
    char err[128];

    ck_assert_int_gt(hn_http_get(grp.console_port, "/api/controller", buf, sizeof buf), 0);
    const char *body = strstr(buf, "\r\n\r\n");
    ck_assert_msg(strncmp(buf, "HTTP/1.", 7) == 0 && strncmp(buf + 8, " 200 ", 5) == 0 && body,
                  "/api/controller: %.200s", buf);
    rmq_json_t *doc = rmq_json_parse(body + 4, strlen(body + 4), err, sizeof err);
    ck_assert_msg(doc, "/api/controller is not JSON (%s): %.2000s", err, body + 4);
    return doc;
}

static int64_t json_i64(const rmq_json_t *obj, const char *key)
{
    int64_t v = 0;
    ck_assert_msg(rmq_json_int(rmq_json_get(obj, key), INT64_MIN, INT64_MAX, &v) == 0, "no integer %s", key);
    return v;
}

static const char *json_s(const rmq_json_t *obj, const char *key)
{
    const char *v = rmq_json_scalar(rmq_json_get(obj, key));
    ck_assert_msg(v != NULL, "no %s", key);
    return v;
}

/* The console's broker-a: master replica id master (addr), both replicas
 * in sync, master the MASTER and the other one's role other_role; returns
 * its master epoch. */
static int64_t console_group_is(const rmq_json_t *doc, int master, const char *other_role)
{
    const rmq_json_t *groups = rmq_json_get(doc, "groups");
    ck_assert_msg(groups && groups->n == 1, "want one group");
    const rmq_json_t *g = groups->items[0], *set = rmq_json_get(g, "syncStateSet");
    const rmq_json_t *reps = rmq_json_get(g, "replicas");
    ck_assert_str_eq(json_s(g, "broker"), "broker-a");
    ck_assert_int_eq(json_i64(g, "masterBrokerId"), master + 1);
    ck_assert_str_eq(json_s(g, "masterAddress"), grp.addr[master]);
    ck_assert_msg(set && reps && reps->n == CG_REPLICAS, "want %d replicas", CG_REPLICAS);
    for (size_t i = 0; i < reps->n; i++) {
        int64_t id = json_i64(reps->items[i], "brokerId");
        ck_assert_str_eq(json_s(reps->items[i], "role"), id == master + 1 ? "MASTER" : other_role);
        ck_assert_str_eq(json_s(reps->items[i], "addr"), grp.addr[id - 1]);
    }
    return json_i64(g, "masterEpoch");
}

/* ---- cases --------------------------------------------------------------------------- */

/* kill -9 of the master under load: the in-sync slave takes over with every
 * acknowledged message; the old master rejoins as its slave. */
START_TEST(test_kill_master_promotes_slave)
{
    cg_settings_t set = FAST;
    set.console = 1;
    ck_assert_int_eq(cg_start(&grp, case_dir, &set), 0);
    int m = cg_wait_master(&grp, WAIT_MS), s = 1 - m;
    ck_assert_int_ge(m, 0);
    ck_assert(cg_wait_runtime(grp.addr[s], "brokerRole", "SLAVE", WAIT_MS));
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never joined the sync state set");
    long long epoch = cg_probe_epoch(grp.addr[m]);
    ck_assert_int_ge(epoch, 1);       /* the master stamps its epoch on each SEND_OK */

    rmq_json_t *doc = console_controller();
    ck_assert_str_eq(json_s(doc, "leader"), "true");
    int64_t epoch0 = console_group_is(doc, m, "SLAVE");
    ck_assert_int_ge(epoch0, 1);
    const rmq_json_t *set0 = rmq_json_get(rmq_json_get(doc, "groups")->items[0], "syncStateSet");
    ck_assert_msg(set0->n == CG_REPLICAS, "the console's in-sync set has %zu ids", set0->n);
    rmq_json_free(doc);

    wire_sender_t sd;
    long long t_kill = hn_now_ms() + 1500;
    wire_send_kill9(grp.addr[m], &sd, &FLOW, 1000000, 64, &grp.rep[m], 1500);
    ck_assert_int_gt(sd.acked, 50);
    ck_assert_msg(cg_until_send_ok(grp.addr[s], WAIT_MS) >= 0, "the slave %s never took writes", grp.addr[s]);
    long long took = hn_now_ms() - t_kill;
    fprintf(stderr, "# controller mode: kill -9 master -> first SEND_OK on the new master in %lld ms "
            "(controllerHeartBeatTimeoutMills=%d), %d acknowledged before the kill\n", took, HB_TIMEOUT_MS, sd.acked);
    ck_assert_int_lt(took, HB_TIMEOUT_MS + 8000);
    ck_assert_int_ge(wire_assert_acked_on(grp.addr[s], &FLOW, sd.acked_map, sd.total), sd.acked);
    ck_assert_int_gt(cg_probe_epoch(grp.addr[s]), epoch);
    wire_sender_deinit(&sd);
    ck_assert_msg(hn_wait_until(route_is_master, grp.addr[s], WAIT_MS), "the route never showed %s as brokerId 0",
                  grp.addr[s]);

    /* the console: the new master at a higher epoch, the killed one DOWN,
     * the election listed first */
    doc = console_controller();
    int64_t epoch1 = console_group_is(doc, s, "DOWN");
    ck_assert_int_gt(epoch1, epoch0);
    const rmq_json_t *el = rmq_json_get(doc, "elections");
    ck_assert_msg(el && el->n >= 2, "the console lists %zu elections", el ? el->n : 0);
    ck_assert_int_eq(json_i64(el->items[0], "oldMasterId"), m + 1);
    ck_assert_int_eq(json_i64(el->items[0], "newMasterId"), s + 1);
    ck_assert_int_eq(json_i64(el->items[0], "masterEpoch"), epoch1);
    ck_assert_str_eq(json_s(el->items[0], "newMasterAddress"), grp.addr[s]);
    ck_assert_int_ge(json_i64(doc, "electionsTotal"), 2);
    rmq_json_free(doc);

    /* the old master, restarted over its own store, truncates its
     * unacknowledged tail to the last common epoch and follows the new one */
    ck_assert_int_eq(cg_replica_start(&grp, m, 0), 0);
    ck_assert_msg(cg_wait_runtime(grp.addr[m], "haConnected", "true", WAIT_MS),
                  "the old master never followed the new one");
    ck_assert(cg_runtime_is(grp.addr[m], "brokerRole", "SLAVE"));
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[s], WAIT_MS), "the old master never rejoined the set");
    ck_assert_int_eq(cg_probe_send(grp.addr[s], NULL, 0), RMQ__STATUS__SUCCESS);
    hn_case_passed();
}
END_TEST

/* 1 once the replica at arg (a grp.addr entry) holds the other replica's
 * log to its end, every record of it dispatched. */
static int replica_caught_up(void *arg)
{
    const char *addr = arg, *other = strcmp(addr, grp.addr[0]) == 0 ? grp.addr[1] : grp.addr[0];
    char mine[32], theirs[32];

    return cg_runtime_get(addr, "commitLogMaxOffset", mine, sizeof mine) == 0 &&
           cg_runtime_get(other, "commitLogMaxOffset", theirs, sizeof theirs) == 0 && strcmp(mine, theirs) == 0 &&
           cg_runtime_is(addr, "dispatchBehindBytes", "0");
}

/* kill -9 of the master under load leaves the slave partway through a
 * record (the master acknowledges alone, so the slave lags; 1 KiB HA
 * chunks, records up to 4 KiB); promoted, it trims that tail before its
 * epoch, so the messages it acknowledges survive its own kill -9 and the
 * old master, restarted, replicates past the point. What the first master
 * acknowledged alone may be lost by design (inSyncReplicas=1). */
START_TEST(test_promoted_slave_trims_torn_tail)
{
    static const wire_flow_t flow2 = { .topic = "CtlTornTopic", .producer_group = PRODUCER,
                                       .consumer_group = CONSUMER };
    cg_settings_t set = FAST;
    set.acks = "allAckInSyncStateSet=false\ninSyncReplicas=1\nhaTransferBatchSize=1024\n";
    ck_assert_int_eq(cg_start(&grp, case_dir, &set), 0);
    int m = cg_wait_master(&grp, WAIT_MS), s = 1 - m;
    ck_assert_int_ge(m, 0);
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never joined the sync state set");

    wire_sender_t sd1, sd2;
    wire_send_kill9(grp.addr[m], &sd1, &FLOW, 1000000, 64, &grp.rep[m], 1500);
    ck_assert_int_gt(sd1.acked, 50);
    ck_assert_msg(cg_wait_runtime(grp.addr[s], "brokerRole", "SYNC_MASTER", WAIT_MS), "the slave was not promoted");
    int torn = hn_daemon_log_has(&grp.rep[s], "trimming the log's torn tail");
    fprintf(stderr, "# promoted slave: %s\n", torn ? "trimmed a torn tail" : "no torn tail this run");
    wire_send_kill9(grp.addr[s], &sd2, &flow2, 1000000, 64, &grp.rep[s], 700);
    ck_assert_int_gt(sd2.acked, 0);

    ck_assert_int_eq(cg_replica_start(&grp, s, 0), 0);
    ck_assert_msg(cg_wait_runtime(grp.addr[s], "brokerRole", "SYNC_MASTER", WAIT_MS), "the new master never came back");
    ck_assert_int_ge(wire_assert_acked_on(grp.addr[s], &flow2, sd2.acked_map, sd2.total), sd2.acked);

    ck_assert_int_eq(cg_replica_start(&grp, m, 0), 0);
    ck_assert_msg(cg_wait_runtime(grp.addr[m], "haConnected", "true", WAIT_MS),
                  "the old master never followed the new one");
    ck_assert_int_eq(cg_probe_send(grp.addr[s], NULL, 0), RMQ__STATUS__SUCCESS);
    ck_assert_msg(hn_wait_until(replica_caught_up, grp.addr[m], WAIT_MS),
                  "the old master never replicated the new master's log past the old end");
    wire_sender_deinit(&sd2);
    wire_sender_deinit(&sd1);
    hn_case_passed();
}
END_TEST

/* The master cut off from the controller (name server frozen) stops
 * acknowledging within the timeout; writes resume once it is confirmed. */
START_TEST(test_cut_off_master_fences_itself)
{
    char why[256] = "";

    ck_assert_int_eq(cg_start(&grp, case_dir, &FAST), 0);
    int m = cg_wait_master(&grp, WAIT_MS);
    ck_assert_int_ge(m, 0);
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);

    ck_assert_int_eq(kill(grp.ns.pid, SIGSTOP), 0);
    long long t0 = hn_now_ms(), fenced = -1;
    while (hn_now_ms() - t0 < 3 * HB_TIMEOUT_MS) {
        if (cg_probe_send(grp.addr[m], why, sizeof why) != RMQ__STATUS__SUCCESS) {
            fenced = hn_now_ms() - t0;
            break;
        }
        hn_sleep_ms(20);
    }
    fprintf(stderr, "# controller mode: name server frozen -> master stops acknowledging in %lld ms "
            "(timeout %d ms): %s\n", fenced, HB_TIMEOUT_MS, why);
    ck_assert_msg(fenced >= 0 && fenced <= HB_TIMEOUT_MS, "the cut-off master still acknowledged after %lld ms",
                  hn_now_ms() - t0);
    ck_assert_ptr_nonnull(strstr(why, "fenced"));
    ck_assert(cg_runtime_is(grp.addr[m], "controllerFenced", "true"));

    ck_assert_int_eq(kill(grp.ns.pid, SIGCONT), 0);
    long long back = -1;
    for (long long end = hn_now_ms() + WAIT_MS; back < 0 && hn_now_ms() < end; hn_sleep_ms(50))
        for (int i = 0; i < CG_REPLICAS && back < 0; i++)
            if (cg_probe_send(grp.addr[i], NULL, 0) == RMQ__STATUS__SUCCESS)
                back = hn_now_ms() - t0;
    ck_assert_msg(back >= 0, "no replica took writes after the name server resumed");
    hn_case_passed();
}
END_TEST

/* Default timeout (controllerHeartBeatTimeoutMills 10000): kill -9 closes
 * the master's controller connection and its port refuses, but a port
 * refusing may as well be a firewall resetting a live master, so the slave
 * takes writes only once the master's lease surely lapsed: not before its
 * last heartbeat + 10 s less the 1 s margin (a heartbeat is at most a
 * second old at the kill, even on a loaded machine). */
START_TEST(test_kill_master_elects_after_lease)
{
    const cg_settings_t dflt = { .hb_interval_ms = 200, .check_ms = 300, .catchup_ms = 3000, .lease_s = 2 };

    ck_assert_int_eq(cg_start(&grp, case_dir, &dflt), 0);
    int m = cg_wait_master(&grp, WAIT_MS), s = 1 - m;
    ck_assert_int_ge(m, 0);
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never joined the sync state set");
    long long t0 = hn_now_ms();
    ck_assert_int_eq(kill(grp.rep[m].pid, SIGKILL), 0);
    long long took = cg_until_send_ok(grp.addr[s], WAIT_MS), after = hn_now_ms() - t0;
    fprintf(stderr, "# controller mode: kill -9 -> SEND_OK on the new master in %lld ms (timeout 10000)\n",
            took < 0 ? -1 : after);
    ck_assert_msg(took >= 0, "the slave never took writes");
    ck_assert_msg(after >= 10000 - 1000 - 1000, "the slave acknowledged %lld ms after the kill, while the killed "
                  "master's lease may run until 8000 ms at least", after);
    ck_assert_msg(after < 10000 + 5000, "the slave took %lld ms to take writes", after);
    hn_case_passed();
}
END_TEST

/* A runtime-info value of addr as a number (-1 when absent). */
static long long runtime_ll(const char *addr, const char *key)
{
    char v[64];
    return cg_runtime_get(addr, key, v, sizeof v) == 0 && v[0] ? atoll(v) : -1;
}

/* A slave behind acknowledged writes does not enter the sync state set
 * before it has them. Frozen (SIGSTOP) once it acked the log end, the
 * master's previous check saw it caught up; the master, alone in the set,
 * then acknowledges more: the slave must stay out while frozen. Resumed, it
 * joins, and after kill -9 of the master it serves every acknowledged
 * message. */
START_TEST(test_lagging_slave_joins_only_with_acked)
{
    cg_settings_t set = FAST;
    char self[16], got[64] = "";

    set.check_ms = 1000;
    set.catchup_ms = 2000;
    ck_assert_int_eq(cg_start(&grp, case_dir, &set), 0);
    int m = cg_wait_master(&grp, WAIT_MS), s = 1 - m;
    ck_assert_int_ge(m, 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never joined the sync state set");
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);

    /* frozen, it falls behind the (unacknowledged) sends and out of the set */
    ck_assert_int_eq(kill(grp.rep[s].pid, SIGSTOP), 0);
    snprintf(self, sizeof self, "%d", m + 1);
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);
    ck_assert_msg(cg_wait_runtime(grp.addr[m], "controllerSyncStateSet", self, WAIT_MS), "the set never shrank");

    /* resumed until it acked the log end (the confirm offset of a set of
     * one), then frozen there */
    ck_assert_int_eq(kill(grp.rep[s].pid, SIGCONT), 0);
    long long acked = -1, end = 0;
    for (long long until = hn_now_ms() + WAIT_MS; hn_now_ms() < until && acked != end;) {
        acked = runtime_ll(grp.addr[m], "haSlave0.ackedOffset");
        end = runtime_ll(grp.addr[m], "haConfirmOffset");
    }
    ck_assert_int_eq(kill(grp.rep[s].pid, SIGSTOP), 0);
    ck_assert_msg(acked == end && end > 0, "the slave never caught up (acked %lld of %lld)", acked, end);

    /* the master acknowledges more while the slave stays at acked */
    wire_sender_t sd;
    wire_send_all(grp.addr[m], &sd, &FLOW, 64, 64);
    long long frontier = runtime_ll(grp.addr[m], "haConfirmOffset");
    for (long long until = hn_now_ms() + 3 * set.check_ms + 1000; hn_now_ms() < until && !strchr(got, ',');
         hn_sleep_ms(20))
        cg_runtime_get(grp.addr[m], "controllerSyncStateSet", got, sizeof got);
    fprintf(stderr, "# lagging slave: frozen at %lld, %d sends acknowledged up to %lld, sync state set {%s}\n",
            acked, sd.acked, frontier, got);
    ck_assert_msg(sd.acked == 0 || !strchr(got, ','),
                  "the slave joined the sync state set {%s} at acked offset %lld while %d messages up to %lld "
                  "had been acknowledged without it", got, acked, sd.acked, frontier);

    /* resumed, it catches up and joins; the master killed, it has every
     * acknowledged message */
    ck_assert_int_eq(kill(grp.rep[s].pid, SIGCONT), 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never rejoined the set");
    hn_daemon_kill9(&grp.rep[m]);
    ck_assert_msg(cg_until_send_ok(grp.addr[s], WAIT_MS) >= 0, "the slave never took over");
    ck_assert_int_ge(wire_assert_acked_on(grp.addr[s], &FLOW, sd.acked_map, sd.total), sd.acked);
    wire_sender_deinit(&sd);
    hn_case_passed();
}
END_TEST

#define UNCONFIRMED "unconfirmed-record"

/* In a child: one PULL_MESSAGE of CG_PROBE_TOPIC queue 0 at offset on
 * addr, held up to hold_ms; exits 1 when the answer holds the record
 * whose body is UNCONFIRMED, 0 otherwise. */
static void held_pull_child(const char *addr, long long offset, int hold_ms)
{
    Rmq__Command req;
    Rmq__PullMessageRequest h;
    rmq_frame_t resp = { 0 };
    wire_link_t ln = { .opts = { .connect_timeout_ms = 3000 }, .timeout_ms = hold_ms + 10000 };
    int saw = 0;

    wire_pull_hdr(&req, &h, CONSUMER, CG_PROBE_TOPIC, 0, offset);
    h.sys_flag = RMQ__PULL_FLAG__PULL_SUSPEND;
    h.suspend_timeout_millis = hold_ms;
    int st = wire_call_with(&ln, addr, &req, NULL, 0, &resp);
    if (st == RMQ__STATUS__SUCCESS && resp.body) {
        size_t len = evbuffer_get_length(resp.body), off = 0;
        const uint8_t *data = evbuffer_pullup(resp.body, (ssize_t)len);
        rmq_record_t rec;
        for (; off < len && rmq_record_decode(data + off, len - off, 1, &rec) == RMQ_OK; off += rec.total_size)
            saw |= rec.body_len == strlen(UNCONFIRMED) && memcmp(rec.body, UNCONFIRMED, rec.body_len) == 0;
    }
    fprintf(stderr, "# held pull at %lld answered %d%s\n", offset, st, saw ? " with the unconfirmed record" : "");
    rmq_frame_clear(&resp);
    _exit(saw);
}

/* In a child: one send of UNCONFIRMED to CG_PROBE_TOPIC queue 0 on addr
 * (it waits for a slave that is frozen). */
static void unconfirmed_send_child(const char *addr)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    wire_link_t ln = { .opts = { .connect_timeout_ms = 1000 }, .timeout_ms = 30000 };

    wire_send_hdr(&req, &h, PRODUCER, CG_PROBE_TOPIC, 0, (char *)"");
    _exit(wire_call_with(&ln, addr, &req, UNCONFIRMED, strlen(UNCONFIRMED), NULL) < 0);
}

static pid_t fork_child(void)
{
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    return pid;
}

/* The max offset of CG_PROBE_TOPIC queue 0 on addr (-1 when unknown). */
static long long probe_max_offset(const char *addr)
{
    Rmq__Command req;
    Rmq__QueueRequest qr;
    rmq_frame_t resp = { 0 };
    long long off = -1;

    wire_max_offset_request(&req, &qr, CG_PROBE_TOPIC, 0);
    if (wire_call(addr, &req, NULL, 0, &resp) == RMQ__STATUS__SUCCESS)
        off = wire_resp_offset(&resp);
    rmq_frame_clear(&resp);
    return off;
}

/* A pull held on the master is never answered with a record no slave
 * confirmed, also when that master is deposed: its slave frozen, a send
 * appends a record the slave never reads, a pull is held past it, the
 * master is frozen, the slave killed -9 (the unread record dies with it)
 * and restarted is promoted past the master's lease without the record,
 * and resumed the old master becomes a slave and truncates it
 * (before the fix, freeing its master HA lifted the read limit and
 * answered the held pull with it; chaos_ctl under ASan). */
START_TEST(test_deposed_master_keeps_unconfirmed_from_held_pulls)
{
    cg_settings_t set = FAST;
    int st;

    set.catchup_ms = 60000;                     /* the set keeps the frozen slave */
    ck_assert_int_eq(cg_start(&grp, case_dir, &set), 0);
    int m = cg_wait_master(&grp, WAIT_MS), s = 1 - m;
    ck_assert_int_ge(m, 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never joined the sync state set");
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);
    long long end = probe_max_offset(grp.addr[m]);
    ck_assert_int_gt(end, 0);

    ck_assert_int_eq(kill(grp.rep[s].pid, SIGSTOP), 0);
    pid_t sender = fork_child();
    if (sender == 0)
        unconfirmed_send_child(grp.addr[m]);
    hn_sleep_ms(300);
    pid_t puller = fork_child();
    if (puller == 0)
        held_pull_child(grp.addr[m], end, 20000);
    hn_sleep_ms(300);
    ck_assert_int_eq(kill(grp.rep[m].pid, SIGSTOP), 0);
    hn_daemon_kill9(&grp.rep[s]);               /* the record it never read dies with it */
    ck_assert_int_eq(cg_replica_start(&grp, s, 0), 0);
    ck_assert_msg(cg_wait_runtime(grp.addr[s], "brokerRole", "SYNC_MASTER", WAIT_MS), "the slave was not promoted");
    ck_assert_int_eq(kill(grp.rep[m].pid, SIGCONT), 0);
    ck_assert_msg(cg_wait_runtime(grp.addr[m], "brokerRole", "SLAVE", WAIT_MS), "the deposed master never became a slave");

    int pull_st = 0;
    ck_assert_int_eq(waitpid(puller, &pull_st, 0), puller);
    kill(sender, SIGKILL);
    waitpid(sender, &st, 0);
    ck_assert_msg(probe_max_offset(grp.addr[s]) == end, "the promoted slave has the record: nothing was unconfirmed");
    ck_assert_msg(WIFEXITED(pull_st) && WEXITSTATUS(pull_st) == 0,
                  "a pull held on the deposed master was answered with the record its slave never had");
    hn_case_passed();
}
END_TEST

/* Cuts the relays named in cuts ("NAME both" lines; "" heals), atomically
 * for chaos-proxy.py's reader. */
static void relays_cut(const char *state, const char *cuts)
{
    char tmp[PATH_MAX];
    snprintf(tmp, sizeof tmp, "%s.tmp", state);
    FILE *f = fopen(tmp, "w");
    ck_assert_ptr_nonnull(f);
    fputs(cuts, f);
    ck_assert_int_eq(fclose(f), 0);
    ck_assert_int_eq(rename(tmp, state), 0);
}

/* The controller leader partitioned off with the master: {master, ns1} |
 * {ns2, slave, etcd}, by cutting the relays ns1 reaches etcd and the
 * master reaches ns2 through. ns1 confirms the master until its own etcd
 * lease may have run out; ns2, leader after that, has not heard the master
 * since the cut (or never: started after it, late_ns2), yet must not elect
 * the slave while the lease ns1 renewed may still run. The master
 * acknowledges without its slave (allAckInSyncStateSet=false,
 * inSyncReplicas=1), so any overlap would show: no send issued after the
 * new master acknowledged one may be acknowledged by the old master.
 * Timings: controller lease 6 s, the brokers' heartbeat timeout 6 s; an
 * election at the cut + 6 s (the master silent for its timeout) would
 * overlap the lease by about 2 s. ns_timeout_ms (0: the default) is the
 * name servers' own controllerHeartBeatTimeoutMills: a late ns2 with a
 * shorter one than the master's must still wait out the master's, which
 * the group state keeps. */
static void partition_run(int late_ns2, int ns_timeout_ms)
{
    cg_settings_t set = { .hb_timeout_ms = 6000, .hb_interval_ms = 200, .check_ms = 300, .catchup_ms = 3000,
                          .lease_s = 6, .acks = "allAckInSyncStateSet=false\n" };
    hn_daemon_t ns2, relay;
    char props[1024], ns2_addr[64], state[PATH_MAX], script[PATH_MAX], specs[3][64], ctl[CG_REPLICAS][160];
    char cut[64], ns_timeout[64] = "";
    int ns2_relay[CG_REPLICAS];
    const char *src = getenv("RMQ_SOURCE_ROOT");
    int ns2_port = hn_free_port(), etcd_relay = hn_free_port();

    ck_assert_ptr_nonnull(src);
    if (ns_timeout_ms)
        snprintf(ns_timeout, sizeof ns_timeout, "controllerHeartBeatTimeoutMills=%d\n", ns_timeout_ms);
    grp.dir = case_dir;
    ck_assert_int_eq(hn_etcd_start(&grp.etcd, case_dir, 1, 30000), 0);
    snprintf(state, sizeof state, "%s/cuts", case_dir);
    snprintf(script, sizeof script, "%s/scripts/chaos-proxy.py", src);
    snprintf(specs[0], sizeof specs[0], "ns1etcd:%d:%d", etcd_relay, grp.etcd.client_port[0]);
    for (int i = 0; i < CG_REPLICAS; i++) {
        ns2_relay[i] = hn_free_port();
        snprintf(specs[1 + i], sizeof specs[1 + i], "b%dns2:%d:%d", i + 1, ns2_relay[i], ns2_port);
    }
    const char *args[] = { script, state, specs[0], specs[1], specs[2], NULL };
    ck_assert_int_eq(hn_daemon_spawn(&relay, "/usr/bin/python3", "relay", args), 0);
    hn_log_wait_t listening = { &relay, "chaos-proxy: listening" };
    ck_assert_msg(hn_wait_until(hn_log_wait_cond, &listening, WAIT_MS), "the relays never listened");

    /* ns1 first, through its relay to etcd, so that it leads */
    snprintf(props, sizeof props,
             "listenPort=0\nbindAddress=127.0.0.1\nenableControllerInNamesrv=true\ncontrollerType=etcd\n"
             "controllerEtcdEndpoints=127.0.0.1:%d\ncontrollerEtcdPrefix=/ctlgroup\ncontrollerLeaseTtlSeconds=6\n%s",
             etcd_relay, ns_timeout);
    ck_assert_int_eq(hn_daemon_start_conf(&grp.ns, case_dir, "namesrv/mqnamesrv", "ns1", props, grp.ns_addr,
                                          sizeof grp.ns_addr), 0);
    hn_log_wait_t leads = { &grp.ns, "leader (token" };
    ck_assert_msg(hn_wait_until(hn_log_wait_cond, &leads, WAIT_MS), "ns1 never led");
    snprintf(props, sizeof props,
             "listenPort=%d\nbindAddress=127.0.0.1\nenableControllerInNamesrv=true\ncontrollerType=etcd\n"
             "controllerEtcdEndpoints=%s\ncontrollerEtcdPrefix=/ctlgroup\ncontrollerLeaseTtlSeconds=6\n%s",
             ns2_port, grp.etcd.endpoints, ns_timeout);
    if (!late_ns2)
        ck_assert_int_eq(hn_daemon_start_conf(&ns2, case_dir, "namesrv/mqnamesrv", "ns2", props, ns2_addr,
                                              sizeof ns2_addr), 0);
    for (int i = 0; i < CG_REPLICAS; i++) {
        snprintf(ctl[i], sizeof ctl[i], "%s;127.0.0.1:%d", grp.ns_addr, ns2_relay[i]);
        set.controller_addr[i] = ctl[i];
    }
    grp.set = set;
    for (int i = 0; i < CG_REPLICAS; i++)
        ck_assert_int_eq(cg_replica_start(&grp, i, 0), 0);
    int m = cg_wait_master(&grp, WAIT_MS), s = 1 - m;
    ck_assert_int_ge(m, 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never joined the sync state set");
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);

    snprintf(cut, sizeof cut, "ns1etcd both\nb%dns2 both\n", m + 1);
    relays_cut(state, cut);
    if (late_ns2)
        ck_assert_int_eq(hn_daemon_start_conf(&ns2, case_dir, "namesrv/mqnamesrv", "ns2", props, ns2_addr,
                                              sizeof ns2_addr), 0);
    long long t_cut = hn_now_ms(), old_last_ok = -1, new_first_ok = -1, overlap_sent = -1;
    while (hn_now_ms() - t_cut < 40000) {
        long long sent = hn_now_ms();
        int old_st = cg_probe_send(grp.addr[m], NULL, 0);
        if (old_st == RMQ__STATUS__SUCCESS) {
            old_last_ok = sent - t_cut;
            if (new_first_ok >= 0 && overlap_sent < 0)
                overlap_sent = sent - t_cut;
        }
        if (new_first_ok >= 0 && old_st != RMQ__STATUS__SUCCESS)
            break;
        if (new_first_ok < 0 && cg_probe_send(grp.addr[s], NULL, 0) == RMQ__STATUS__SUCCESS)
            new_first_ok = hn_now_ms() - t_cut;
        hn_sleep_ms(20);
    }
    fprintf(stderr, "# partition {master, leader} | {controller%s, etcd}: the old master acknowledged until %lld ms "
            "after the cut, the new one from %lld ms\n", late_ns2 ? " started after the cut" : "", old_last_ok,
            new_first_ok);
    ck_assert_msg(new_first_ok >= 0, "no new master within 40 s of the cut");
    ck_assert_msg(overlap_sent < 0, "two masters acknowledged: the old one a send issued %lld ms after the cut, the "
                  "new one had acknowledged one %lld ms after it", overlap_sent, new_first_ok);
    relays_cut(state, "");
}

START_TEST(test_partition_new_leader_waits_for_lease)
{
    partition_run(0, 0);
    hn_case_passed();
}
END_TEST

/* A leader that never heard the master, with a shorter heartbeat timeout
 * (2 s) than the master's (6 s). */
START_TEST(test_partition_late_leader_waits_for_masters_timeout)
{
    partition_run(1, 2000);
    hn_case_passed();
}
END_TEST

/* allAckInSyncStateSet with minInSyncReplicas=2: a set member gone holds
 * sends (SLAVE_NOT_AVAILABLE); once the set shrank to the master they are
 * refused IN_SYNC_REPLICAS_NOT_ENOUGH; the member back in the set, they
 * succeed again. */
START_TEST(test_all_ack_and_min_in_sync)
{
    cg_settings_t set = FAST;
    char why[256] = "", self[16];

    set.acks = "allAckInSyncStateSet=true\nminInSyncReplicas=2\n";
    ck_assert_int_eq(cg_start(&grp, case_dir, &set), 0);
    int m = cg_wait_master(&grp, WAIT_MS), s = 1 - m;
    ck_assert_int_ge(m, 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never joined the sync state set");
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);

    hn_daemon_kill9(&grp.rep[s]);
    int st = cg_probe_send(grp.addr[m], why, sizeof why);
    ck_assert_msg(st == RMQ__STATUS__SLAVE_NOT_AVAILABLE || st == RMQ__STATUS__FLUSH_SLAVE_TIMEOUT,
                  "a send without the set's slave answered %d: %s", st, why);
    snprintf(self, sizeof self, "%d", m + 1);
    ck_assert_msg(cg_wait_runtime(grp.addr[m], "controllerSyncStateSet", self, WAIT_MS), "the set never shrank");
    ck_assert_int_eq(cg_probe_send(grp.addr[m], why, sizeof why), RMQ__STATUS__IN_SYNC_REPLICAS_NOT_ENOUGH);
    ck_assert_ptr_nonnull(strstr(why, "minInSyncReplicas is 2"));

    ck_assert_int_eq(cg_replica_start(&grp, s, 0), 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never rejoined the set");
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);
    hn_case_passed();
}
END_TEST

/* inSyncReplicas=2 without allAckInSyncStateSet: a send waits for a
 * slave's ack (a frozen slave times it out). */
START_TEST(test_in_sync_replicas)
{
    cg_settings_t set = FAST;
    char why[256] = "";

    set.acks = "allAckInSyncStateSet=false\ninSyncReplicas=2\n";
    ck_assert_int_eq(cg_start(&grp, case_dir, &set), 0);
    int m = cg_wait_master(&grp, WAIT_MS), s = 1 - m;
    ck_assert_int_ge(m, 0);
    ck_assert_msg(cg_wait_sync_set_full(grp.addr[m], WAIT_MS), "the slave never joined the sync state set");
    ck_assert_int_ge(cg_until_send_ok(grp.addr[m], WAIT_MS), 0);
    ck_assert_int_eq(kill(grp.rep[s].pid, SIGSTOP), 0);
    int st = cg_probe_send(grp.addr[m], why, sizeof why);
    ck_assert_int_eq(kill(grp.rep[s].pid, SIGCONT), 0);
    ck_assert_msg(st == RMQ__STATUS__FLUSH_SLAVE_TIMEOUT, "a send with the slave frozen answered %d: %s", st, why);
    hn_case_passed();
}
END_TEST

/* Controllers with an epoch set by hand (controllerModeStartEpoch), or without a replica id, are a clear startup error. */
START_TEST(test_config_errors)
{
    hn_daemon_t d;
    char addr[64], log[8192] = "";

    ck_assert_int_ne(hn_daemon_start_conf(&d, case_dir, "broker/mqbroker", "bad",
                                          "enableControllerMode=true\ncontrollerAddr=127.0.0.1:1\nbrokerId=1\n"
                                          "controllerModeStartEpoch=3\nlistenPort=0\n", addr, sizeof addr), 0);
    FILE *f = fopen(d.log_path, "r");
    ck_assert_ptr_nonnull(f);
    log[fread(log, 1, sizeof log - 1, f)] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(log, "controllerModeStartEpoch=3: the controllers name the epochs"));
    ck_assert_int_ne(hn_daemon_start_conf(&d, case_dir, "broker/mqbroker", "bad0",
                                          "enableControllerMode=true\ncontrollerAddr=127.0.0.1:1\nlistenPort=0\n",
                                          addr, sizeof addr), 0);
    f = fopen(d.log_path, "r");
    ck_assert_ptr_nonnull(f);
    log[fread(log, 1, sizeof log - 1, f)] = '\0';
    fclose(f);
    ck_assert_ptr_nonnull(strstr(log, "brokerId=0: enableControllerMode=true needs"));
    hn_case_passed();
}
END_TEST

static Suite *ctl_failover_suite(void)
{
    Suite *s = suite_create("ctl_failover");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_kill_master_promotes_slave);
    tcase_add_test(tc, test_promoted_slave_trims_torn_tail);
    tcase_add_test(tc, test_cut_off_master_fences_itself);
    tcase_add_test(tc, test_kill_master_elects_after_lease);
    tcase_add_test(tc, test_lagging_slave_joins_only_with_acked);
    tcase_add_test(tc, test_deposed_master_keeps_unconfirmed_from_held_pulls);
    tcase_add_test(tc, test_partition_new_leader_waits_for_lease);
    tcase_add_test(tc, test_partition_late_leader_waits_for_masters_timeout);
    tcase_add_test(tc, test_all_ack_and_min_in_sync);
    tcase_add_test(tc, test_in_sync_replicas);
    tcase_add_test(tc, test_config_errors);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(ctl_failover_suite());
}
