/* failover_bench.c: the driver of scripts/failover-bench.sh. One controller
 * group (ctlgroup.h); FB_REPS times (default 20): wait for a master with a
 * full sync state set, load it (pipelined sends, one fresh topic per
 * repetition) and kill -9 it after a second, then probe the other replica
 * until a send answers SEND_OK; the time from the kill to that answer is
 * the repetition's figure. Every message acknowledged before the kill must
 * be read back from the new master; the killed replica is restarted over
 * an empty store (see test_ctl_failover.c) and must rejoin as slave before
 * the next repetition. Timings come from
 * FB_HB_TIMEOUT, FB_HB_INTERVAL, FB_CHECK, FB_CATCHUP (ms) and FB_LEASE (s),
 * unset meaning the defaults. Prints one "# rep" line per repetition and a
 * last line "failover: reps=N median_ms=M worst_ms=W". */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ctlgroup.h"
#include "harness.h"
#include "wire.h"

#define FB_REPS_MAX 1000
#define FB_LOAD_MS 1000
#define FB_WAIT_MS 120000

static int env_int(const char *name, int def)
{
    const char *v = getenv(name);
    return v && v[0] ? atoi(v) : def;
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* One repetition: returns the kill -> first SEND_OK time in ms. */
static long long one_failover(cg_group_t *g, int rep)
{
    char topic[64];
    int m = cg_wait_master(g, FB_WAIT_MS), s = 1 - m;

    ck_assert_msg(m >= 0, "rep %d: no master", rep);
    ck_assert_msg(cg_wait_sync_set_full(g->addr[m], FB_WAIT_MS), "rep %d: the slave never joined the set", rep);
    snprintf(topic, sizeof topic, "FbTopic%d", rep);
    wire_flow_t flow = { .topic = topic, .producer_group = "fb_producer", .consumer_group = "fb_consumer" };
    wire_sender_t sd;
    long long t_kill = hn_now_ms() + FB_LOAD_MS;
    wire_send_kill9(g->addr[m], &sd, &flow, 10000000, 64, &g->rep[m], FB_LOAD_MS);
    ck_assert_msg(cg_until_send_ok(g->addr[s], FB_WAIT_MS) >= 0, "rep %d: %s never took writes", rep, g->addr[s]);
    long long took = hn_now_ms() - t_kill;
    ck_assert_int_ge(wire_assert_acked_on(g->addr[s], &flow, sd.acked_map, sd.total), sd.acked);
    fprintf(stderr, "# rep %d: kill -9 %s -> first SEND_OK on %s in %lld ms (%d acknowledged before the kill, "
            "all read back)\n", rep, g->addr[m], g->addr[s], took, sd.acked);
    wire_sender_deinit(&sd);
    ck_assert_int_eq(cg_replica_start(g, m, 1), 0);
    ck_assert_msg(cg_wait_runtime(g->addr[m], "haConnected", "true", FB_WAIT_MS), "rep %d: no rejoin", rep);
    return took;
}

START_TEST(test_failover_bench)
{
    static long long took[FB_REPS_MAX];
    static cg_group_t grp;
    cg_settings_t set = {
        .hb_timeout_ms = env_int("FB_HB_TIMEOUT", 0),
        .hb_interval_ms = env_int("FB_HB_INTERVAL", 0),
        .check_ms = env_int("FB_CHECK", 0),
        .catchup_ms = env_int("FB_CATCHUP", 0),
        .lease_s = env_int("FB_LEASE", 0),
    };
    int reps = env_int("FB_REPS", 20);
    const char *dir = hn_case_begin("failbench");

    ck_assert_ptr_nonnull(dir);
    ck_assert_msg(reps > 0 && reps <= FB_REPS_MAX, "FB_REPS=%d: must be 1..%d", reps, FB_REPS_MAX);
    ck_assert_int_eq(cg_start(&grp, dir, &set), 0);
    for (int i = 0; i < reps; i++)
        took[i] = one_failover(&grp, i + 1);
    qsort(took, (size_t)reps, sizeof took[0], cmp_ll);
    long long median = reps % 2 ? took[reps / 2] : (took[reps / 2 - 1] + took[reps / 2]) / 2;
    printf("failover: reps=%d median_ms=%lld worst_ms=%lld best_ms=%lld\n", reps, median, took[reps - 1], took[0]);
    fflush(stdout);
    hn_etcd_kill(&grp.etcd);
    hn_case_passed();
    hn_case_end();
}
END_TEST

int main(void)
{
    Suite *s = suite_create("failover_bench");
    TCase *tc = tcase_create("bench");
    tcase_set_timeout(tc, 7200);
    tcase_add_test(tc, test_failover_bench);
    suite_add_tcase(s, tc);
    return hn_run_suite(s);
}
