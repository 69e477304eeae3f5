/* test_etcd.c: the etcd client (common/rmq_etcd.h) against real etcd
 * members on loopback: a campaign under a lease (CREATE == 0, the key's
 * create revision as fencing token), guarded updates (MOD and VALUE
 * compares), keepalive, revoke deleting the key; and failover between
 * endpoints: a dead endpoint skipped, a killed member left for a live one,
 * a clear error once no member answers. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "etcdproc.h"
#include "harness.h"
#include "rmq_etcd.h"

#define CALL_WAIT_MS 15000
#define ETCD_START_MS 30000

static const char *case_dir;
static struct event_base *base;

/* What one call returned, copied out of its callback. */
typedef struct answer {
    int done;
    rmq_err_t err;
    char msg[256];
    int succeeded;
    int64_t lease_id, ttl, revision;
    size_t n_kvs;
    char value[256];
    int64_t create_revision, mod_revision, lease;
} answer_t;

static void on_answer(const rmq_etcd_result_t *res, void *arg)
{
    answer_t *a = arg;

    a->done = 1;
    a->err = res->err;
    snprintf(a->msg, sizeof a->msg, "%s", res->msg);
    a->succeeded = res->succeeded;
    a->lease_id = res->lease_id;
    a->ttl = res->ttl;
    a->revision = res->revision;
    a->n_kvs = res->n_kvs;
    if (res->n_kvs) {
        snprintf(a->value, sizeof a->value, "%s", res->kvs[0].value);
        a->create_revision = res->kvs[0].create_revision;
        a->mod_revision = res->kvs[0].mod_revision;
        a->lease = res->kvs[0].lease;
    }
}

/* Runs the loop until a is answered (or CALL_WAIT_MS passes: a fails). */
static void wait_answer(answer_t *a)
{
    long long deadline = hn_now_ms() + CALL_WAIT_MS;

    while (!a->done && hn_now_ms() < deadline) {
        event_base_loop(base, EVLOOP_ONCE | EVLOOP_NONBLOCK);
        usleep(1000);
    }
    ck_assert_msg(a->done, "no answer within %d ms", CALL_WAIT_MS);
}

#define CALL(a, expr)                                  \
    do {                                               \
        memset(&(a), 0, sizeof(a));                    \
        ck_assert_int_eq((expr), RMQ_OK);              \
        wait_answer(&(a));                             \
    } while (0)

static void setup(void)
{
    case_dir = hn_case_begin("etcd");
    ck_assert_ptr_nonnull(case_dir);
    ck_assert_msg(hn_etcd_available(), "etcd is not on PATH (scripts/bootstrap.sh installs etcd-server)");
    base = event_base_new();
}

static void teardown(void)
{
    event_base_free(base);
    base = NULL;
    hn_case_end();
}

/* Campaign, guarded update, keepalive, revoke, on one member. */
START_TEST(test_campaign_and_guarded_updates)
{
    hn_etcd_t etcd;
    char err[256];
    answer_t a;

    ck_assert_int_eq(hn_etcd_start(&etcd, case_dir, 1, ETCD_START_MS), 0);
    rmq_etcd_t *e = rmq_etcd_new(base, etcd.endpoints, 3000, err, sizeof err);
    ck_assert_msg(e != NULL, "%s", err);

    CALL(a, rmq_etcd_lease_grant(e, 5, on_answer, &a));
    ck_assert_msg(a.err == RMQ_OK, "%s", a.msg);
    ck_assert_int_eq(a.ttl, 5);
    int64_t lease = a.lease_id;

    /* campaign: create the leader key under the lease if nobody holds it */
    rmq_etcd_cmp_t none = { .target = RMQ_ETCD_CMP_CREATE, .key = "t/leader", .revision = 0 };
    rmq_etcd_op_t claim = { .type = RMQ_ETCD_OP_PUT, .key = "t/leader", .value = "me", .value_len = 2,
                            .lease = lease };
    rmq_etcd_op_t look = { .type = RMQ_ETCD_OP_RANGE, .key = "t/leader" };
    rmq_etcd_txn_t campaign = { &none, 1, &claim, 1, &look, 1 };
    CALL(a, rmq_etcd_txn(e, &campaign, on_answer, &a));
    ck_assert_msg(a.err == RMQ_OK, "%s", a.msg);
    ck_assert_int_eq(a.succeeded, 1);
    /* a second campaign loses and is shown the holder */
    CALL(a, rmq_etcd_txn(e, &campaign, on_answer, &a));
    ck_assert_int_eq(a.succeeded, 0);
    ck_assert_uint_eq(a.n_kvs, 1);
    ck_assert_str_eq(a.value, "me");
    ck_assert_int_eq(a.lease, lease);
    int64_t token = a.create_revision;
    ck_assert_int_gt(token, 0);

    /* a state key changed only while the token holds and the state is unchanged */
    CALL(a, rmq_etcd_put(e, "t/state", "v1", 2, 0, on_answer, &a));
    ck_assert_msg(a.err == RMQ_OK, "%s", a.msg);
    CALL(a, rmq_etcd_range(e, "t/state", 0, on_answer, &a));
    ck_assert_str_eq(a.value, "v1");
    int64_t mod = a.mod_revision;
    rmq_etcd_cmp_t guard[] = {
        { .target = RMQ_ETCD_CMP_CREATE, .key = "t/leader", .revision = token },
        { .target = RMQ_ETCD_CMP_MOD, .key = "t/state", .revision = mod },
    };
    rmq_etcd_op_t write = { .type = RMQ_ETCD_OP_PUT, .key = "t/state", .value = "v2", .value_len = 2 };
    rmq_etcd_txn_t update = { guard, 2, &write, 1, NULL, 0 };
    CALL(a, rmq_etcd_txn(e, &update, on_answer, &a));
    ck_assert_int_eq(a.succeeded, 1);
    /* replayed with the old MOD revision: refused */
    CALL(a, rmq_etcd_txn(e, &update, on_answer, &a));
    ck_assert_msg(a.err == RMQ_OK, "%s", a.msg);
    ck_assert_int_eq(a.succeeded, 0);
    rmq_etcd_cmp_t is_v2 = { .target = RMQ_ETCD_CMP_VALUE, .key = "t/state", .value = "v2", .value_len = 2 };
    rmq_etcd_txn_t check = { &is_v2, 1, NULL, 0, &look, 1 };
    CALL(a, rmq_etcd_txn(e, &check, on_answer, &a));
    ck_assert_int_eq(a.succeeded, 1);

    /* every prefix member */
    CALL(a, rmq_etcd_range(e, "t/", 1, on_answer, &a));
    ck_assert_uint_eq(a.n_kvs, 2);

    CALL(a, rmq_etcd_lease_keepalive(e, lease, on_answer, &a));
    ck_assert_msg(a.err == RMQ_OK, "%s", a.msg);
    ck_assert_int_eq(a.ttl, 5);
    CALL(a, rmq_etcd_lease_revoke(e, lease, on_answer, &a));
    ck_assert_msg(a.err == RMQ_OK, "%s", a.msg);
    /* the revoked lease took the leader key with it; keepalive says so */
    CALL(a, rmq_etcd_range(e, "t/leader", 0, on_answer, &a));
    ck_assert_uint_eq(a.n_kvs, 0);
    CALL(a, rmq_etcd_lease_keepalive(e, lease, on_answer, &a));
    ck_assert_int_eq(a.err, RMQ_ENOTFOUND);
    CALL(a, rmq_etcd_lease_revoke(e, lease, on_answer, &a));
    ck_assert_int_eq(a.err, RMQ_ESTATUS);
    ck_assert_msg(strstr(a.msg, "lease not found") != NULL, "%s", a.msg);

    rmq_etcd_free(e);
    hn_etcd_kill(&etcd);
    hn_case_passed();
}
END_TEST

/* Three members behind a dead endpoint: calls skip it, survive a killed
 * member, and fail with a clear error once none is left. */
START_TEST(test_endpoint_failover)
{
    hn_etcd_t etcd;
    char err[256], endpoints[320];
    answer_t a;

    ck_assert_int_eq(hn_etcd_start(&etcd, case_dir, 3, ETCD_START_MS), 0);
    /* port 1 on loopback: nobody listens there */
    snprintf(endpoints, sizeof endpoints, "127.0.0.1:1,%s", etcd.endpoints);
    rmq_etcd_t *e = rmq_etcd_new(base, endpoints, 2000, err, sizeof err);
    ck_assert_msg(e != NULL, "%s", err);

    CALL(a, rmq_etcd_put(e, "f/k", "1", 1, 0, on_answer, &a));
    ck_assert_msg(a.err == RMQ_OK, "%s", a.msg);
    char want[64];
    snprintf(want, sizeof want, "127.0.0.1:%d", etcd.client_port[0]);
    ck_assert_str_eq(rmq_etcd_endpoint(e), want);

    /* kill the member in use: the next call goes on to another */
    hn_daemon_kill9(&etcd.member[0]);
    CALL(a, rmq_etcd_range(e, "f/k", 0, on_answer, &a));
    ck_assert_msg(a.err == RMQ_OK, "%s", a.msg);
    ck_assert_str_eq(a.value, "1");
    ck_assert_str_ne(rmq_etcd_endpoint(e), want);

    hn_etcd_kill(&etcd);
    CALL(a, rmq_etcd_range(e, "f/k", 0, on_answer, &a));
    ck_assert(a.err == RMQ_ECONNECT || a.err == RMQ_ETIMEDOUT);
    ck_assert_msg(strstr(a.msg, "no endpoint answered /v3/kv/range (4 tried") != NULL, "%s", a.msg);

    rmq_etcd_free(e);
    hn_case_passed();
}
END_TEST

static Suite *etcd_suite(void)
{
    Suite *s = suite_create("etcd");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_campaign_and_guarded_updates);
    tcase_add_test(tc, test_endpoint_failover);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(etcd_suite());
}
