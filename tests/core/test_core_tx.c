/* test_core_tx.c: transactions and the client registry in the broker core,
 * without any wire protocol: a real store in a temp dir, the append path,
 * the producer's send with the transaction divert. A table of
 * end-transaction scenarios (commit, rollback, unknown, a second end, the
 * wrong group, no half message, an ACL account with and without PUB on the
 * real topic -> neutral status and where the message went); the check-back
 * through the fake session once the half is older than the timeout, and no
 * more once it is resolved; heartbeats registering producer and consumer
 * groups, the caps, the ids-changed notice and unregistering. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "bk_append.h"
#include "bk_clients.h"
#include "bk_produce.h"
#include "bk_topics.h"
#include "bk_tx.h"
#include "core_base.h"
#include "rmq_acl_policy.h"
#include "rmq_loop.h"
#include "rmq_time.h"
#include "test_store_util.h"

#define TOPIC "TxTopic"
#define PGROUP "tx_pg"

static const char acl_text[] =
    "account.pub.secretKey=pub-secret-1\n"
    "account.pub.topicPerms=" TOPIC "=PUB\n"
    "account.nopub.secretKey=nopub-secret-1\n"
    "account.nopub.topicPerms=Other=PUB\n";

/* The broker state of one test. */
typedef struct fixture {
    struct event_base *base;         /* core_base()'s */
    st_store_t *st;                  /* core_base()'s */
    bk_append_t *ap;
    bk_produce_t *p;
    bk_tx_t *tx;
    bk_clients_t *clients;
    rmq_acl_t *acl;
} fixture_t;

static fixture_t fx;

static rmq_err_t tx_divert(void *arg, st_msg_t *m, const char **why)
{
    return bk_tx_divert(fx.tx, m, why);
}

/* After core_base()'s own set-up (the loop, the temp dir): the store and the
 * tables of one test. */
static void setup(void)
{
    char err[256];
    core_base_t *cb = core_base();
    memset(&fx, 0, sizeof fx);
    cb->env.cfg.max_message_size = 4096;
    core_base_open(cb, 0);
    fx.base = cb->base;
    fx.st = cb->st;
    core_topic_add(cb->topics, TOPIC, 1);
    bk_append_config_t ac = {.store = fx.st, .sync_flush_timeout_ms = 5000, .permission = 6, .addr = "127.0.0.1:0"};
    ck_assert_ptr_nonnull(fx.ap = bk_append_new(&ac));
    bk_produce_config_t pc = {.append = fx.ap, .topics = cb->topics, .max_message_size = 4096,
                              .addr = "127.0.0.1:0", .divert = tx_divert};
    ck_assert_ptr_nonnull(fx.p = bk_produce_new(&pc));
    bk_tx_config_t tc = {.base = fx.base, .store = fx.st, .append = fx.ap, .produce = fx.p, .addr = "127.0.0.1:0",
                         .check_interval_ms = 3600000, .time_out_ms = 100, .check_max = 3,
                         .producer_expire_ms = 120000, .max_groups_per_conn = 4};
    ck_assert_ptr_nonnull(fx.tx = bk_tx_new(&tc));
    bk_clients_config_t cc = {.expire_ms = 120000, .max_groups_per_heartbeat = 3, .max_groups_per_conn = 4,
                              .tx = fx.tx};
    ck_assert_ptr_nonnull(fx.clients = bk_clients_new(&cc));
    fx.acl = rmq_acl_parse(acl_text, strlen(acl_text), "test acl", err, sizeof err);
    ck_assert_msg(fx.acl != NULL, "%s", err);
}

static void teardown(void)
{
    bk_clients_free(fx.clients);
    bk_tx_free(fx.tx);
    bk_produce_free(fx.p);
    core_base_close(core_base());
    bk_append_free(fx.ap);
    rmq_acl_free(fx.acl);
}

/* Stores a half message of PGROUP for TOPIC; returns its commit-log offset. */
static int64_t half_send(void)
{
    static const char props[] = "TRAN_MSG\001true\002PGROUP\001" PGROUP "\002UNIQ_KEY\001u1";
    bk_produce_req_t req = {.cmd = "SEND", .topic = TOPIC, .producer_group = PGROUP, .default_topic = "TBW102",
                            .default_topic_queue_nums = 1, .queue_id = 0, .body_len = 4};
    bk_produce_target_t tgt;
    bk_append_out_t out;
    bk_result_t r;
    st_msg_t m = {.body = "body", .body_len = 4, .properties = props, .properties_len = strlen(props),
                  .born_timestamp = rmq_wall_ms()};
    ck_assert_msg(bk_produce_check(fx.p, &req, &tgt, &r), "%s", r.why);
    ck_assert_int_eq(bk_produce_store(fx.p, &tgt, &m, 1, &out, NULL, NULL), 1);
    ck_assert_msg(out.r.status == BK_OK, "%s", out.r.why);
    return out.put.phys_offset;
}

/* The ACL account named key. */
static const rmq_acl_account_t *account(const char *key)
{
    const rmq_acl_account_t *a = NULL;
    char remark[256];
    int64_t now = rmq_wall_ms();
    ck_assert_int_eq(rmq_acl_authenticate(fx.acl, "127.0.0.1:1", key, now, now, "test", &a, remark, sizeof remark),
                     0);
    return a;
}

/* ---- ending a transaction ------------------------------------------------------ */

enum { AT_HALF = 0, AT_NOWHERE, AT_COMMITTED };

typedef struct end_scenario {
    const char *name;
    int first;                       /* -1: none; else a state ending the half first */
    int state;
    const char *group;
    int at;                          /* which offset the request names */
    const char *account;             /* NULL: trusted */
    bk_status_t want;
    int64_t want_in_topic;           /* messages in TOPIC afterwards */
} end_scenario_t;

static const end_scenario_t ends[] = {
    {"commit", -1, BK_TX_COMMIT, PGROUP, AT_HALF, NULL, BK_OK, 1},
    {"rollback", -1, BK_TX_ROLLBACK, PGROUP, AT_HALF, NULL, BK_OK, 0},
    {"unknown leaves it open", -1, BK_TX_UNKNOWN, PGROUP, AT_HALF, NULL, BK_OK, 0},
    {"commit after rollback is a no-op", BK_TX_ROLLBACK, BK_TX_COMMIT, PGROUP, AT_HALF, NULL, BK_OK, 0},
    {"second commit stores nothing more", BK_TX_COMMIT, BK_TX_COMMIT, PGROUP, AT_HALF, NULL, BK_OK, 1},
    {"another group", -1, BK_TX_COMMIT, "other_pg", AT_HALF, NULL, BK_BAD_REQUEST, 0},
    {"no half message there", -1, BK_TX_COMMIT, PGROUP, AT_NOWHERE, NULL, BK_TRANSACTION_FAILED, 0},
    {"a committed message is no half", BK_TX_COMMIT, BK_TX_COMMIT, PGROUP, AT_COMMITTED, NULL, BK_BAD_REQUEST, 1},
    {"bad state", -1, 7, PGROUP, AT_HALF, NULL, BK_BAD_REQUEST, 0},
    {"account with PUB on the real topic", -1, BK_TX_COMMIT, PGROUP, AT_HALF, "pub", BK_OK, 1},
    {"account without PUB commits", -1, BK_TX_COMMIT, PGROUP, AT_HALF, "nopub", BK_NO_PERMISSION, 0},
    {"account without PUB rolls back", -1, BK_TX_ROLLBACK, PGROUP, AT_HALF, "nopub", BK_NO_PERMISSION, 0},
};

/* Ends half at phys as state; the outcome (answered at once under ASYNC_FLUSH). */
static bk_append_out_t end_tx(int64_t phys, int state, const char *group, const rmq_acl_account_t *a)
{
    bk_caller_t who = {a};
    bk_tx_end_req_t req = {.producer_group = group, .commit_log_offset = phys, .state = state, .who = &who};
    bk_append_out_t out;
    ck_assert_int_eq(bk_tx_end(fx.tx, &req, &out, NULL, NULL), 1);
    return out;
}

START_TEST(test_end_scenarios)
{
    const end_scenario_t *sc = &ends[_i];
    int64_t phys = half_send();
    if (sc->first >= 0)
        ck_assert_int_eq(end_tx(phys, sc->first, PGROUP, NULL).r.status, BK_OK);
    int64_t at = sc->at == AT_NOWHERE ? phys + 100000 : phys;
    if (sc->at == AT_COMMITTED) {
        ck_assert_int_eq(st_store_max_offset(fx.st, TOPIC, 0), 1);
        /* the committed copy follows the half in the log */
        struct evbuffer *b = evbuffer_new();
        ck_assert_int_eq(st_store_read_record(fx.st, phys, b), RMQ_OK);
        at = phys + (int64_t)evbuffer_get_length(b);
        evbuffer_free(b);
    }
    bk_append_out_t out = end_tx(at, sc->state, sc->group, sc->account ? account(sc->account) : NULL);
    ck_assert_msg(out.r.status == sc->want, "%s: %s (%s), want %s", sc->name, bk_status_name(out.r.status), out.r.why,
                  bk_status_name(sc->want));
    if (sc->want == BK_NO_PERMISSION)
        ck_assert_msg(strstr(out.r.why, TOPIC) && strstr(out.r.why, sc->account), "%s: %s", sc->name, out.r.why);
    ck_assert_int_eq(st_store_max_offset(fx.st, TOPIC, 0), sc->want_in_topic);
}
END_TEST

/* ---- check-back ------------------------------------------------------------------ */

START_TEST(test_check_back)
{
    core_fake_session_t f;
    bk_result_t r;
    const char *groups[] = {PGROUP};
    core_fake_session_init(&f);
    bk_heartbeat_t hb = {.client_id = "tx-client", .producer_groups = groups, .nproducers = 1};
    ck_assert_int_eq(bk_tx_heartbeat(fx.tx, &f.base, &hb, &r), 1);
    int64_t phys = half_send();
    bk_tx_check_now(fx.tx);
    ck_assert_int_eq(f.checked, 0);          /* younger than transactionTimeOut */
    usleep(150 * 1000);
    bk_tx_check_now(fx.tx);
    ck_assert_int_eq(f.checked, 1);
    ck_assert_int_eq(f.check_offset, phys);
    bk_tx_check_now(fx.tx);
    ck_assert_int_eq(f.checked, 2);          /* still open: asked again */
    ck_assert_int_eq(end_tx(phys, BK_TX_COMMIT, PGROUP, NULL).r.status, BK_OK);
    bk_tx_check_now(fx.tx);
    ck_assert_int_eq(f.checked, 2);          /* resolved: never asked again */
    ck_assert_int_eq(st_store_max_offset(fx.st, TOPIC, 0), 1);

    /* an unresolved half is rolled back after check_max checks */
    int64_t phys2 = half_send();
    usleep(150 * 1000);
    for (int i = 0; i < 5; i++)
        bk_tx_check_now(fx.tx);
    ck_assert_int_eq(f.checked, 5);          /* 3 checks, then the rollback */
    ck_assert_int_eq(end_tx(phys2, BK_TX_COMMIT, PGROUP, NULL).r.status, BK_OK);
    ck_assert_int_eq(st_store_max_offset(fx.st, TOPIC, 0), 1);   /* the rolled-back half stays out */

    /* a closed session gets no check-back and is forgotten */
    half_send();
    usleep(150 * 1000);
    bk_session_close(&f.base, "test");
    bk_tx_check_now(fx.tx);
    ck_assert_int_eq(f.checked, 5);
    ck_assert_uint_eq(bk_tx_producer_count(fx.tx), 0);
    ck_assert_uint_eq(f.base.groups, 0);
    bk_session_unref(&f.base);
    ck_assert_int_eq(f.freed, 1);
}
END_TEST

/* ---- heartbeats -------------------------------------------------------------------- */

START_TEST(test_heartbeat_register_unregister)
{
    core_fake_session_t a, b;
    bk_result_t r;
    bk_hb_sub_t subs[] = {{TOPIC, "tagA || tagB"}};
    bk_hb_consumer_t cons[] = {{"cg", 1, subs, 1}};
    const char *pgs[] = {PGROUP, RMQ_INNER_PRODUCER_GROUP};   /* the second: a Java client's own, not recorded */
    bk_heartbeat_t hb = {"client-a", pgs, 2, cons, 1};
    const char *ids[4];
    core_fake_session_init(&a);
    core_fake_session_init(&b);

    ck_assert_int_eq(bk_clients_heartbeat(fx.clients, &a.base, NULL, &hb, &r), 1);
    ck_assert_int_eq(a.notified, 1);                     /* the group changed: its member is told */
    ck_assert_str_eq(a.group, "cg");
    ck_assert_uint_eq(bk_clients_ids(fx.clients, "cg", ids, 4), 1);
    ck_assert_str_eq(ids[0], "client-a");
    ck_assert_str_eq(bk_clients_subscription(fx.clients, "cg", TOPIC, NULL), "tagA || tagB");
    ck_assert_uint_eq(bk_tx_producer_count(fx.tx), 1);
    ck_assert_int_eq(bk_clients_heartbeat(fx.clients, &a.base, NULL, &hb, &r), 0);   /* again: nothing changed */
    ck_assert_int_eq(a.notified, 1);
    ck_assert_uint_eq(a.base.groups, 2);

    bk_heartbeat_t hb2 = {"client-b", NULL, 0, cons, 1};
    ck_assert_int_eq(bk_clients_heartbeat(fx.clients, &b.base, NULL, &hb2, &r), 1);
    ck_assert_int_eq(a.notified, 2);
    ck_assert_int_eq(b.notified, 1);
    ck_assert_uint_eq(bk_clients_ids(fx.clients, "cg", ids, 4), 2);

    bk_clients_unregister(fx.clients, &a.base, "client-b", "cg");    /* not a's to remove */
    bk_clients_unregister(fx.clients, &a.base, "client-b", "");
    ck_assert_uint_eq(bk_clients_ids(fx.clients, "cg", ids, 4), 2);
    bk_clients_unregister(fx.clients, &b.base, "client-b", "cg");
    ck_assert_uint_eq(bk_clients_ids(fx.clients, "cg", ids, 4), 1);
    ck_assert_int_eq(a.notified, 3);                     /* told again when b left */
    ck_assert_uint_eq(b.base.groups, 0);

    bk_clients_session_closed(fx.clients, &a.base);
    bk_tx_session_closed(fx.tx, &a.base);
    ck_assert_uint_eq(bk_clients_ids(fx.clients, "cg", ids, 4), 0);
    ck_assert_uint_eq(bk_tx_producer_count(fx.tx), 0);
    ck_assert_uint_eq(a.base.groups, 0);
    bk_session_unref(&a.base);
    bk_session_unref(&b.base);
    ck_assert_int_eq(a.freed, 1);
    ck_assert_int_eq(b.freed, 1);
}
END_TEST

START_TEST(test_heartbeat_caps)
{
    core_fake_session_t a;
    bk_result_t r;
    const char *four[] = {"p1", "p2", "p3", "p4"}, *two[] = {"p5", "p6"};
    bk_hb_consumer_t bad[] = {{"bad group!", 1, NULL, 0}};
    core_fake_session_init(&a);

    bk_heartbeat_t over = {"c", four, 4, NULL, 0};
    ck_assert_int_eq(bk_clients_heartbeat(fx.clients, &a.base, NULL, &over, &r), -1);
    ck_assert_int_eq(r.status, BK_BAD_REQUEST);
    ck_assert_msg(strstr(r.why, "maxHeartbeatGroups=3") != NULL, "%s", r.why);
    ck_assert_uint_eq(bk_tx_producer_count(fx.tx), 0);   /* nothing recorded */

    bk_heartbeat_t first = {"c", four, 3, NULL, 0}, second = {"c", two, 2, NULL, 0};
    ck_assert_int_eq(bk_clients_heartbeat(fx.clients, &a.base, NULL, &first, &r), 0);
    ck_assert_int_eq(bk_clients_heartbeat(fx.clients, &a.base, NULL, &second, &r), -1);
    ck_assert_msg(strstr(r.why, "maxConnectionGroups=4") != NULL, "%s", r.why);
    ck_assert_uint_eq(bk_tx_producer_count(fx.tx), 3);
    ck_assert_int_eq(bk_clients_heartbeat(fx.clients, &a.base, NULL, &first, &r), 0);   /* known groups: fine */

    bk_heartbeat_t named = {"c", NULL, 0, bad, 1}, anonymous = {"", NULL, 0, NULL, 0};
    ck_assert_int_eq(bk_clients_heartbeat(fx.clients, &a.base, NULL, &named, &r), -1);
    ck_assert_int_eq(r.status, BK_NAME_ILLEGAL);
    ck_assert_int_eq(bk_clients_heartbeat(fx.clients, &a.base, NULL, &anonymous, &r), -1);
    ck_assert_int_eq(r.status, BK_BAD_REQUEST);

    bk_tx_session_closed(fx.tx, &a.base);
    ck_assert_uint_eq(a.base.groups, 0);
    bk_session_unref(&a.base);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_tx");
    TCase *tc = core_scenarios_tcase(s, "tx", test_end_scenarios, (int)(sizeof ends / sizeof ends[0]));
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_check_back);
    tcase_add_test(tc, test_heartbeat_register_unregister);
    tcase_add_test(tc, test_heartbeat_caps);
    return core_suite_run(s);
}
