/* test_core_perm.c: the core's one permission table (bk_perm.c) without
 * sockets: every operation declares what it touches and the right it
 * needs; every code either front serves (fr_routes.c, fr_remoting.c) is
 * an operation with a declared right that an account without it is
 * refused; the rights themselves (PUB and SUB on topics with defaults, a
 * retry or DLQ topic counted as its group, SUB and PUB on a heartbeat's
 * groups (none for a Java client's internal producer group), admin operations, a record's topic read through the reader). */
#include <check.h>
#include <string.h>

#include "bk_perm.h"
#include "fr_remoting.h"
#include "fr_routes.h"
#include "rmq_message.h"
#include "test_acl_fixture.h"

static bk_caller_t caller(const char *key)
{
    bk_caller_t who = {NULL, NULL, "test:1"};
    ck_assert_int_eq(rmq_acl_account_of(acl, "127.0.0.1:1", key, &who.account), 0);
    return who;
}

START_TEST(test_every_operation_declared)
{
    for (int op = BK_OP_UNDECLARED + 1; op < BK_OP_COUNT; op++) {
        const bk_perm_t *p = bk_perm_of((bk_op_t)op);
        ck_assert_msg(p->name && p->needs != BK_RIGHT_UNDECLARED, "operation %d has no declared right", op);
        ck_assert_msg(p->needs == BK_RIGHT_ADMIN || p->touches != BK_TOUCH_BROKER,
                      "%s needs a right on nothing it touches", p->name);
    }
    ck_assert_int_eq(bk_perm_of(BK_OP_COUNT)->needs, BK_RIGHT_UNDECLARED);
}
END_TEST

/* An account with no right is refused op (a record's topic through the
 * reader); an admin never is. */
static void refused_without_right(bk_op_t op, const char *what)
{
    const bk_perm_t *p = bk_perm_of(op);
    bk_caller_t none = caller("none"), adm = caller("adm");
    bk_result_t r;
    ck_assert_msg(op != BK_OP_UNDECLARED && p->needs != BK_RIGHT_UNDECLARED, "%s: no declared permission", what);
    ck_assert_msg(bk_perm_check(&adm, op, "T", "G", &r), "%s refused to an admin", what);
    if (p->needs == BK_RIGHT_SIGNED) {
        ck_assert_msg(bk_perm_check(&none, op, "T", "G", &r), "%s refused to a signer", what);
        return;
    }
    if (p->touches == BK_TOUCH_RECORD) {
        bk_perm_reader_t rd;
        ck_assert_msg(bk_perm_check(&none, op, NULL, NULL, &r), "%s", what);
        ck_assert_msg(!bk_reader_check(bk_perm_reader_init(&rd, &none, op), "T", 1, &r), "%s read T", what);
    } else if (p->touches == BK_TOUCH_GROUPS) {
        bk_hb_consumer_t cons = {.group = "G"};
        bk_heartbeat_t hb = {.client_id = "c", .consumers = &cons, .nconsumers = 1};
        ck_assert_msg(!bk_perm_check_heartbeat(&none, &hb, &r), "%s joined G", what);
    } else {
        ck_assert_msg(!bk_perm_check(&none, op, "T", "G", &r), "%s allowed without a right", what);
    }
    ck_assert_int_eq(r.status, BK_NO_PERMISSION);
    ck_assert_msg(strstr(r.why, "account none"), "%s: %s", what, r.why);
}

START_TEST(test_every_served_code)
{
    char what[64];
    size_t n = 0;
    for (size_t i = 0; fr_route_at(i); i++, n++) {
        snprintf(what, sizeof what, "native %s", rmq_request_name(fr_route_at(i)->code));
        refused_without_right(fr_route_at(i)->op, what);
    }
    for (size_t i = 0; fr_rm_route_at(i); i++, n++) {
        snprintf(what, sizeof what, "remoting code %d", fr_rm_route_at(i)->code);
        refused_without_right(fr_rm_route_at(i)->op, what);
    }
    ck_assert_uint_gt(n, 55);
}
END_TEST

START_TEST(test_rights)
{
    bk_caller_t app = caller("app");
    bk_result_t r;
    ck_assert(!bk_perm_check(&app, BK_OP_SEND, "Other", NULL, &r));          /* default SUB */
    ck_assert_ptr_nonnull(strstr(r.why, "account app has SUB on topic Other, SEND_MESSAGE needs PUB"));
    app.request = "request code 310";
    ck_assert(!bk_perm_check(&app, BK_OP_SEND, "Closed", NULL, &r));
    ck_assert_ptr_nonnull(strstr(r.why, "request code 310 needs PUB"));
    ck_assert(bk_perm_check(&app, BK_OP_SEND, "Both", NULL, &r));
    ck_assert(bk_perm_check(&app, BK_OP_SEND, "%RETRY%g1", NULL, &r));       /* retry topic: SUB on g1 */
    ck_assert(!bk_perm_check(&app, BK_OP_SEND, "%DLQ%g2", NULL, &r));
    ck_assert_ptr_nonnull(strstr(r.why, "group g2"));

    ck_assert(bk_perm_check(&app, BK_OP_PULL, "Other", "g1", &r));
    ck_assert(!bk_perm_check(&app, BK_OP_PULL, "Out", "g1", &r));            /* PUB only */
    ck_assert(!bk_perm_check(&app, BK_OP_PULL, "Other", "g9", &r));          /* default group DENY */
    ck_assert_ptr_nonnull(strstr(r.why, "account app has DENY on group g9"));
    ck_assert(!bk_perm_check(&app, BK_OP_TOPIC_LIST, NULL, NULL, &r));
    ck_assert_ptr_nonnull(strstr(r.why, "admin operation"));
    ck_assert(bk_perm_check(NULL, BK_OP_TOPIC_LIST, NULL, NULL, &r));         /* trusted */

    bk_hb_consumer_t cons[2] = {{.group = "g1"}, {.group = "g9"}};
    const char *producers[] = {"pg", "g1"};
    bk_heartbeat_t hb = {.client_id = "c", .consumers = cons, .nconsumers = 1, .producer_groups = producers,
                         .nproducers = 1};
    ck_assert(bk_perm_check_heartbeat(&app, &hb, &r));
    hb.nconsumers = 2;                                                        /* SUB on g9: no */
    ck_assert(!bk_perm_check_heartbeat(&app, &hb, &r));
    hb.nconsumers = 1;
    hb.nproducers = 2;                                                        /* PUB on g1: no (SUB only) */
    ck_assert(!bk_perm_check_heartbeat(&app, &hb, &r));
    ck_assert_ptr_nonnull(strstr(r.why, "group g1"));
    producers[1] = RMQ_INNER_PRODUCER_GROUP;                                 /* every Java client's: no right */
    ck_assert(bk_perm_check_heartbeat(&app, &hb, &r));

    const char *topics[] = {"Out", "Other"};                                 /* a 5.x gRPC producer's topics */
    bk_heartbeat_t grpc = {.client_id = "c5", .producer_groups = topics, .nproducers = 1, .producers_by_topic = 1};
    ck_assert_msg(bk_perm_check_heartbeat(&app, &grpc, &r), "%s", r.why);    /* PUB on topic Out, none on group Out */
    grpc.nproducers = 2;
    ck_assert(!bk_perm_check_heartbeat(&app, &grpc, &r));                     /* SUB only on topic Other */
    ck_assert_ptr_nonnull(strstr(r.why, "account app has SUB on topic Other"));

    bk_perm_reader_t rd;
    ck_assert(bk_reader_check(bk_perm_reader_init(&rd, &app, BK_OP_VIEW), "Other", 5, &r));
    ck_assert(!bk_reader_check(bk_perm_reader_init(&rd, &app, BK_OP_VIEW), "Out", 3, &r));
    ck_assert(!bk_reader_check(bk_perm_reader_init(&rd, &app, BK_OP_END_TRANSACTION), "Other", 5, &r));
    ck_assert(bk_reader_check(bk_perm_reader_init(&rd, &app, BK_OP_END_TRANSACTION), "Out", 3, &r));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("core_perm");
    TCase *tc = tcase_create("perm");
    tcase_add_checked_fixture(tc, acl_fixture_setup, acl_fixture_teardown);
    tcase_add_test(tc, test_every_operation_declared);
    tcase_add_test(tc, test_every_served_code);
    tcase_add_test(tc, test_rights);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
