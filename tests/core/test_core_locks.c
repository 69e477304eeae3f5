/* test_core_locks.c: the core's queue locks of ordered consumption
 * (core/bk_lock.c) on neutral batch requests, with an injected clock: a
 * table of scenarios, each starting from one lock that client "A" of group
 * "g" took on queue 0 at t = 1000 ms (or none), then one batch request
 * (lock or unlock queues 0 and 1) and a probe: may another client lock
 * queue 0 right after? A front-end test can run the same table through its
 * codec. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "bk_lock.h"
#include "core_base.h"

#define TOPIC "OrderTopic"
#define LIVE_MS 60000                /* rebalanceLockMaxLiveTime */
#define T0 1000                      /* when A took its lock */

typedef struct scenario {
    const char *name;
    int held_by_a;                   /* A holds g/TOPIC/0 since T0 */
    int unlock;                      /* the request unlocks instead of locking */
    const char *group;
    const char *client;
    int64_t now_ms;
    bk_status_t want;
    uint8_t want_held[2];            /* lock: queues 0 and 1 held by client afterwards */
    const char *probe;               /* a client that then tries queue 0 of group g at now_ms */
    int want_probe;                  /* 1: the probe gets the lock */
} scenario_t;

static const scenario_t scenarios[] = {
    {"lock free queues", 0, 0, "g", "A", 2000, BK_OK, {1, 1}, "B", 0},
    {"renew own lock", 1, 0, "g", "A", 2000, BK_OK, {1, 1}, "B", 0},
    {"a lock held by another client", 1, 0, "g", "B", 2000, BK_OK, {0, 1}, "C", 0},
    {"still held at exactly the max live time", 1, 0, "g", "B", T0 + LIVE_MS, BK_OK, {0, 1}, "C", 0},
    {"expired after rebalanceLockMaxLiveTime", 1, 0, "g", "B", T0 + LIVE_MS + 1, BK_OK, {1, 1}, "A", 0},
    {"another group locks independently", 1, 0, "g2", "B", 2000, BK_OK, {1, 1}, "C", 0},
    {"lock without a group", 0, 0, "", "A", 2000, BK_BAD_REQUEST, {0, 0}, "B", 1},
    {"lock without a client id", 0, 0, "g", "", 2000, BK_BAD_REQUEST, {0, 0}, "B", 1},
    {"unlock by the owner", 1, 1, "g", "A", 2000, BK_OK, {0, 0}, "B", 1},
    {"unlock by a non-owner", 1, 1, "g", "B", 2000, BK_OK, {0, 0}, "B", 0},
    {"unlock of a free queue", 0, 1, "g", "A", 2000, BK_OK, {0, 0}, "B", 1},
    {"unlock without a client id", 1, 1, "g", "", 2000, BK_BAD_REQUEST, {0, 0}, "B", 0},
};

/* Runs one scenario on a fresh lock table. */
static void run_scenario(const scenario_t *sc)
{
    bk_lock_t *lk = bk_lock_new(LIVE_MS);
    ck_assert_ptr_nonnull(lk);
    if (sc->held_by_a)
        ck_assert_int_eq(bk_lock_try(lk, "g", TOPIC, 0, "A", T0), 1);
    bk_lock_mq_t mqs[2] = {{TOPIC, 0}, {TOPIC, 1}};
    bk_lock_batch_req_t req = {.cmd = "LOCK_BATCH_MQ", .group = sc->group, .client_id = sc->client, .mqs = mqs,
                               .n_mqs = 2, .now_ms = sc->now_ms};
    uint8_t held[2] = {9, 9};
    bk_result_t r = {BK_OK, ""};
    if (sc->unlock) {
        req.cmd = "UNLOCK_BATCH_MQ";
        bk_unlock_batch(lk, &req, &r);
    } else {
        bk_lock_batch(lk, &req, held, &r);
    }
    ck_assert_msg(r.status == sc->want, "%s: status %s (%s), want %s", sc->name, bk_status_name(r.status), r.why,
                  bk_status_name(sc->want));
    if (r.status != BK_OK)
        ck_assert_msg(strstr(r.why, req.cmd) != NULL, "%s: reason '%s' does not name the request", sc->name, r.why);
    if (!sc->unlock && r.status == BK_OK)
        ck_assert_msg(held[0] == sc->want_held[0] && held[1] == sc->want_held[1], "%s: held %d %d, want %d %d",
                      sc->name, held[0], held[1], sc->want_held[0], sc->want_held[1]);
    if (sc->probe)
        ck_assert_msg(bk_lock_try(lk, "g", TOPIC, 0, sc->probe, sc->now_ms) == sc->want_probe,
                      "%s: probe %s", sc->name, sc->probe);
    bk_lock_free(lk);
}

START_TEST(test_scenarios)
{
    run_scenario(&scenarios[_i]);
}
END_TEST

/* Renewal moves expiry: a lock renewed at t keeps others out until t + live. */
START_TEST(test_renewal_extends)
{
    bk_lock_t *lk = bk_lock_new(LIVE_MS);
    bk_lock_mq_t mq = {TOPIC, 0};
    uint8_t held;
    bk_result_t r;
    bk_lock_batch_req_t a = {.cmd = "LOCK_BATCH_MQ", .group = "g", .client_id = "A", .mqs = &mq, .n_mqs = 1,
                             .now_ms = T0};
    ck_assert_int_eq(bk_lock_batch(lk, &a, &held, &r), BK_OK);
    ck_assert_int_eq(held, 1);
    a.now_ms = T0 + LIVE_MS;                              /* renewal just in time */
    ck_assert_int_eq(bk_lock_batch(lk, &a, &held, &r), BK_OK);
    ck_assert_int_eq(held, 1);
    bk_lock_batch_req_t b = a;
    b.client_id = "B";
    b.now_ms = T0 + LIVE_MS + 10;                         /* past the first expiry, not the renewed one */
    ck_assert_int_eq(bk_lock_batch(lk, &b, &held, &r), BK_OK);
    ck_assert_int_eq(held, 0);
    ck_assert_uint_eq(bk_lock_count(lk, b.now_ms), 1);
    b.now_ms = T0 + 2 * LIVE_MS + 1;
    ck_assert_uint_eq(bk_lock_count(lk, b.now_ms), 0);
    ck_assert_int_eq(bk_lock_batch(lk, &b, &held, &r), BK_OK);
    ck_assert_int_eq(held, 1);
    bk_lock_free(lk);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_locks");
    TCase *tc = tcase_create("locks");
    tcase_add_loop_test(tc, test_scenarios, 0, (int)(sizeof scenarios / sizeof scenarios[0]));
    tcase_add_test(tc, test_renewal_extends);
    suite_add_tcase(s, tc);
    return core_suite_run(s);
}
