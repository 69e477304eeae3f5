/* test_core.c: the broker core in-process, without any wire protocol: a
 * real store in a temp dir, the topic table, the append path and the
 * producer's send, driven by a table of scenarios (request + broker state
 * -> neutral status, stored or not, answered at once or after the disk
 * sync): batches holding a transactional or delayed message are refused,
 * and a send needs PUB on its topic before the topic is looked up or
 * auto-created. A front-end test can run the same table through its codec. Also the
 * fake session (core_fake.c): what the core asks of a client goes through its
 * vtable. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "bk_append.h"
#include "bk_perm.h"
#include "bk_produce.h"
#include "bk_session.h"
#include "bk_topics.h"
#include "core_base.h"
#include "rmq_loop.h"
#include "rmq_time.h"
#include "test_store_util.h"

#define TOPIC "CoreTopic"
#define QUEUES 4

/* One row: broker state, the request, and what the core must answer. */
typedef struct scenario {
    const char *name;
    int sync_flush;                  /* flushDiskType=SYNC_FLUSH */
    int is_slave;
    int64_t permission;              /* brokerPermission (0: 6) */
    int stopping;
    int auto_create;
    const char *topic;
    int32_t queue_id;
    size_t body_len;
    const char *properties;          /* "BAD" makes the fake divert refuse */
    bk_status_t want;
    int want_stored;
    int want_pending;                /* answered after a wait, not at once */
    int lease_ms;                    /* controller lease ends this far from now (0: none) */
    int promoted;                    /* a slave made master at runtime (bk_append_set_role) */
    int batch;                       /* messages in the send (0: 1) */
    const char *account;             /* who sends (ACL below; NULL: trusted) */
} scenario_t;

/* The accounts of the scenarios' sends. */
static const char acl_text[] = "account.pub.secretKey=pub-secret-1\n"
                               "account.pub.defaultTopicPerm=PUB\n"
                               "account.sub.secretKey=sub-secret-1\n"
                               "account.sub.defaultTopicPerm=SUB\n";

#define TRAN "TRAN_MSG\001true\002PGROUP\001pg"

static const scenario_t scenarios[] = {
    {"send async", 0, 0, 0, 0, 0, TOPIC, 1, 100, "", BK_OK, 1, 0},
    {"send sync flush waits for the disk", 1, 0, 0, 0, 0, TOPIC, 2, 100, "", BK_OK, 1, 1},
    {"broker picks the queue", 0, 0, 0, 0, 0, TOPIC, -1, 10, "", BK_OK, 1, 0},
    {"slave refuses", 0, 1, 0, 0, 0, TOPIC, 0, 10, "", BK_NOT_MASTER, 0, 0},
    {"stopping refuses", 0, 0, 0, 1, 0, TOPIC, 0, 10, "", BK_SHUTDOWN, 0, 0},
    {"read-only broker refuses", 0, 0, 4, 0, 0, TOPIC, 0, 10, "", BK_NO_PERMISSION, 0, 0},
    {"bad topic name", 0, 0, 0, 0, 0, "a b", 0, 10, "", BK_NAME_ILLEGAL, 0, 0},
    {"unknown topic", 0, 0, 0, 0, 0, "Nope", 0, 10, "", BK_TOPIC_NOT_EXIST, 0, 0},
    {"unknown topic auto-created", 0, 0, 0, 0, 1, "Auto", 0, 10, "", BK_OK, 1, 0},
    {"queue out of range", 0, 0, 0, 0, 0, TOPIC, QUEUES, 10, "", BK_BAD_REQUEST, 0, 0},
    {"body over maxMessageSize", 0, 0, 0, 0, 0, TOPIC, 0, 5000, "", BK_MESSAGE_TOO_LARGE, 0, 0},
    {"divert refuses bad properties", 0, 0, 0, 0, 0, TOPIC, 0, 10, "BAD", BK_MESSAGE_ILLEGAL, 0, 0},
    {"lapsed controller lease refuses", 0, 0, 0, 0, 0, TOPIC, 0, 10, "", BK_NOT_MASTER, 0, 0, -1, 0},
    {"controller lease held takes writes", 1, 0, 0, 0, 0, TOPIC, 0, 10, "", BK_OK, 1, 1, 60000, 0},
    {"slave promoted at runtime takes writes", 0, 1, 0, 0, 0, TOPIC, 0, 10, "", BK_OK, 1, 0, 0, 1},
    {"master demoted at runtime refuses", 0, 0, 0, 0, 0, TOPIC, 0, 10, "", BK_NOT_MASTER, 0, 0, 0, -1},
    {"batch stored as it is", 0, 0, 0, 0, 0, TOPIC, 0, 10, "KEYS\001k", BK_OK, 1, 0, 0, 0, 3},
    {"batch of transactional messages refused", 0, 0, 0, 0, 0, TOPIC, 0, 10, TRAN, BK_MESSAGE_ILLEGAL, 0, 0, 0, 0, 2},
    {"batch with a delay level refused", 0, 0, 0, 0, 0, TOPIC, 0, 10, "DELAY\0013", BK_MESSAGE_ILLEGAL, 0, 0, 0, 0, 2},
    {"batch with a delivery time refused", 0, 0, 0, 0, 0, TOPIC, 0, 10, "__STARTDELIVERTIME\0019999999999999",
     BK_MESSAGE_ILLEGAL, 0, 0, 0, 0, 2},
    {"batch with delay level 0 stored", 0, 0, 0, 0, 0, TOPIC, 0, 10, "DELAY\0010", BK_OK, 1, 0, 0, 0, 2},
    {"account with PUB sends", 0, 0, 0, 0, 0, TOPIC, 0, 10, "", BK_OK, 1, 0, 0, 0, 0, "pub"},
    {"account without PUB refused", 0, 0, 0, 0, 0, TOPIC, 0, 10, "", BK_NO_PERMISSION, 0, 0, 0, 0, 0, "sub"},
    {"account without PUB creates no topic", 0, 0, 0, 0, 1, "Auto", 0, 10, "", BK_NO_PERMISSION, 0, 0, 0, 0, 0, "sub"},
};

/* The fake divert hook: refuses a message whose properties are "BAD". */
static rmq_err_t fake_divert(void *arg, st_msg_t *m, const char **why)
{
    if (m->properties_len == 3 && memcmp(m->properties, "BAD", 3) == 0) {
        *why = "fake divert: bad properties";
        return RMQ_EINVAL;
    }
    return RMQ_OK;
}

/* Runs one scenario against a fresh store and topic table. */
static void run_scenario(const scenario_t *sc)
{
    core_base_t *cb = core_base();
    cb->env.cfg.flush_type = sc->sync_flush ? ST_SYNC_FLUSH : ST_ASYNC_FLUSH;
    cb->env.cfg.max_message_size = 4096;
    core_base_open(cb, sc->auto_create);
    st_store_t *st = cb->st;
    bk_topics_t *topics = cb->topics;
    core_topic_add(topics, TOPIC, QUEUES);

    bk_append_config_t ac = {.store = st, .sync_flush = sc->sync_flush, .sync_flush_timeout_ms = 5000,
                             .is_slave = sc->is_slave, .permission = sc->permission ? sc->permission : 6,
                             .addr = "127.0.0.1:0"};
    bk_append_t *ap = bk_append_new(&ac);
    ck_assert_ptr_nonnull(ap);
    if (sc->stopping)
        bk_append_stop(ap);
    if (sc->lease_ms)
        bk_append_set_lease(ap, rmq_mono_ms() + sc->lease_ms);
    if (sc->promoted)
        bk_append_set_role(ap, sc->promoted < 0, NULL);
    bk_produce_config_t pc = {.append = ap, .topics = topics, .auto_create_topic = sc->auto_create,
                              .max_message_size = 4096, .addr = "127.0.0.1:0", .divert = fake_divert};
    bk_produce_t *p = bk_produce_new(&pc);
    ck_assert_ptr_nonnull(p);

    uint8_t *body = calloc(1, sc->body_len);
    char err[256];
    rmq_acl_t *acl = rmq_acl_parse(acl_text, strlen(acl_text), "core", err, sizeof err);
    ck_assert_msg(acl != NULL, "%s", err);
    bk_caller_t who = {NULL, NULL, NULL};
    ck_assert_int_eq(sc->account ? rmq_acl_account_of(acl, "127.0.0.1:1", sc->account, &who.account) : 0, 0);
    size_t n = sc->batch ? (size_t)sc->batch : 1;
    bk_produce_req_t req = {.cmd = "SEND", .topic = sc->topic, .producer_group = "pg",
                            .default_topic = "TBW102", .default_topic_queue_nums = 4, .queue_id = sc->queue_id,
                            .body_len = sc->body_len * n, .who = &who};
    bk_produce_target_t tgt;
    bk_result_t r;
    core_appended_t a = {0};
    int pending = 0;
    if (!bk_produce_check(p, &req, &tgt, &r)) {
        a.out.r = r;
    } else {
        st_msg_t m[4];
        for (size_t i = 0; i < n; i++)
            m[i] = (st_msg_t){.body = body, .body_len = sc->body_len, .properties = sc->properties,
                              .properties_len = strlen(sc->properties), .born_timestamp = rmq_wall_ms()};
        if (!bk_produce_store(p, &tgt, m, n, &a.out, core_on_appended, &a)) {
            pending = 1;
            core_loop_until(&a.done, 5000);
            ck_assert_msg(a.done, "%s: no answer after the wait", sc->name);
        }
    }
    ck_assert_msg(a.out.r.status == sc->want, "%s: status %s (%s), want %s", sc->name,
                  bk_status_name(a.out.r.status), a.out.r.why, bk_status_name(sc->want));
    ck_assert_msg(a.out.stored == sc->want_stored, "%s: stored %d", sc->name, a.out.stored);
    ck_assert_msg(pending == sc->want_pending, "%s: pending %d", sc->name, pending);
    if (sc->want_stored)
        ck_assert_int_eq(st_store_max_offset(st, sc->topic, tgt.queue_id), (int64_t)n);
    else if (sc->auto_create && sc->account)
        ck_assert_ptr_null(bk_topics_get(topics, sc->topic, strlen(sc->topic)));
    ck_assert_uint_eq(bk_append_waiting(ap), 0);

    free(body);
    rmq_acl_free(acl);
    bk_produce_free(p);
    core_base_close(cb);
    bk_append_free(ap);
}

START_TEST(test_scenarios)
{
    run_scenario(&scenarios[_i]);
}
END_TEST

/* ---- the fake session ---------------------------------------------------- */

START_TEST(test_fake_session)
{
    core_fake_session_t f;
    core_fake_session_init(&f);
    bk_session_ref(&f.base);         /* a core holder */
    ck_assert_int_eq(bk_session_notify_ids_changed(&f.base, "g1"), RMQ_OK);
    ck_assert_int_eq(f.notified, 1);
    ck_assert_str_eq(f.group, "g1");
    bk_tx_check_t chk = {.commit_log_offset = 42, .producer_group = "pg"};
    ck_assert_int_eq(bk_session_check_transaction(&f.base, &chk), RMQ_OK);
    ck_assert_int_eq(f.checked, 1);
    ck_assert_int_eq(f.check_offset, 42);
    ck_assert_str_eq(bk_session_peer(&f.base), "fake:1");
    ck_assert(bk_session_is_open(&f.base));
    bk_session_close(&f.base, "test");
    ck_assert(!bk_session_is_open(&f.base));
    bk_session_unref(&f.base);       /* the front-end's reference */
    ck_assert_int_eq(f.freed, 0);
    bk_session_unref(&f.base);       /* the holder's: the last */
    ck_assert_int_eq(f.freed, 1);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core");
    core_scenarios_tcase(s, "send", test_scenarios, (int)(sizeof scenarios / sizeof scenarios[0]));
    TCase *ts = tcase_create("session");
    tcase_add_test(ts, test_fake_session);
    suite_add_tcase(s, ts);
    return core_suite_run(s);
}
