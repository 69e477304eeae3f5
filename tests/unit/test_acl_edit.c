/* test_acl_edit.c: the ACL file written back and read again (comments
 * dropped, escapes kept, the same policy), RocketMQ's admin edits (an
 * account put, updated, deleted; the global whitelist replaced; bad edits
 * refused with the policy untouched) and the replacement in place that
 * every holder of the policy sees. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_acl_policy.h"

static const char file_text[] =
    "# operators' comment, dropped on write-back\n"
    "globalWhiteRemoteAddresses=10.10.*;192.168.0.7\n"
    "replayWindowMs=30000\n"
    "account.admin.secretKey=admin-secret\n"
    "account.admin.admin=true\n"
    "account.app1.secretKey=with\\ blank=and\\\\slash\n"
    "account.app1.whiteRemoteAddress=127.0.0.*\n"
    "account.app1.defaultGroupPerm=SUB\n"
    "account.app1.topicPerms=Orders=PUB;Audit=PUB|SUB\n"
    "account.app1.groupPerms=billing=SUB;other=DENY\n";

static rmq_acl_t *parse(const char *text)
{
    char err[256] = "";
    rmq_acl_t *acl = rmq_acl_parse(text, strlen(text), "t.properties", err, sizeof err);
    ck_assert_msg(acl != NULL, "%s", err);
    return acl;
}

/* rmq_acl_format of acl, as a string owned by the caller. */
static char *format(const rmq_acl_t *acl)
{
    size_t len = 0;
    char *text = rmq_acl_format(acl, &len);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(strlen(text), len);
    return text;
}

/* 1 if account ak of acl may do what needs (one topic or group need). */
static int may(const rmq_acl_t *acl, const char *ak, rmq_acl_resource_t res, int perm, const char *name)
{
    const rmq_acl_account_t *a = NULL;
    char remark[256];
    if (rmq_acl_account_of(acl, "1.2.3.4:5", ak, &a) != 0)
        return 0;
    rmq_acl_need_t need = {res, perm, name};
    return rmq_acl_allows(a, &need, 1, "op", remark, sizeof remark);
}

START_TEST(test_round_trip)
{
    rmq_acl_t *acl = parse(file_text);
    char *once = format(acl);
    ck_assert_ptr_null(strstr(once, "#"));
    rmq_acl_t *again = parse(once);
    char *twice = format(again);
    ck_assert_str_eq(once, twice);
    ck_assert_uint_eq(rmq_acl_account_count(again), 2);
    ck_assert_int_eq(rmq_acl_window_ms(again), 30000);
    ck_assert_str_eq(rmq_acl_global_white(again), "10.10.*;192.168.0.7");
    rmq_acl_account_view_t v;
    rmq_acl_account_view(rmq_acl_account_at(again, 1), &v);
    ck_assert_str_eq(v.access_key, "app1");
    ck_assert_str_eq(v.secret_key, "with blank=and\\slash");
    ck_assert_str_eq(v.white, "127.0.0.*");
    ck_assert_int_eq(v.admin, 0);
    ck_assert_str_eq(v.default_topic_perm, "DENY");
    ck_assert_str_eq(v.default_group_perm, "SUB");
    ck_assert_uint_eq(v.ntopics, 2);
    const char *perm = NULL;
    ck_assert_str_eq(rmq_acl_account_perm(rmq_acl_account_at(again, 1), 0, 1, &perm), "Audit");
    ck_assert_str_eq(perm, "PUB|SUB");
    ck_assert_ptr_null(rmq_acl_account_perm(rmq_acl_account_at(again, 1), 1, 2, &perm));
    ck_assert_ptr_null(rmq_acl_account_at(again, 2));
    free(once);
    free(twice);
    rmq_acl_free(again);
    rmq_acl_free(acl);
}
END_TEST

START_TEST(test_edits)
{
    char err[256] = "";
    rmq_acl_t *acl = parse(file_text);
    rmq_acl_edit_t put = {
        .kind = RMQ_ACL_EDIT_PUT, .access_key = "newbie", .secret_key = "newbie-secret",
        .default_topic_perm = "DENY", .topic_perms = "AclTopic=PUB,Other=SUB",
    };
    rmq_acl_t *next = rmq_acl_edit(acl, &put, err, sizeof err);
    ck_assert_msg(next != NULL, "%s", err);
    ck_assert_uint_eq(rmq_acl_account_count(next), 3);
    ck_assert(may(next, "newbie", RMQ_ACL_TOPIC, RMQ_ACL_PERM_PUB, "AclTopic"));
    ck_assert(!may(next, "newbie", RMQ_ACL_TOPIC, RMQ_ACL_PERM_PUB, "Other"));
    ck_assert(!may(acl, "newbie", RMQ_ACL_TOPIC, RMQ_ACL_PERM_PUB, "AclTopic"));

    /* an update changes what it names and keeps the rest */
    rmq_acl_edit_t update = {.kind = RMQ_ACL_EDIT_PUT, .access_key = "app1", .topic_perms = "Orders=SUB"};
    rmq_acl_t *updated = rmq_acl_edit(next, &update, err, sizeof err);
    ck_assert_msg(updated != NULL, "%s", err);
    ck_assert(!may(updated, "app1", RMQ_ACL_TOPIC, RMQ_ACL_PERM_PUB, "Orders"));
    ck_assert(!may(updated, "app1", RMQ_ACL_TOPIC, RMQ_ACL_PERM_SUB, "Audit"));
    ck_assert(may(updated, "app1", RMQ_ACL_GROUP, RMQ_ACL_PERM_SUB, "billing"));

    rmq_acl_edit_t del = {.kind = RMQ_ACL_EDIT_DELETE, .access_key = "newbie"};
    rmq_acl_t *deleted = rmq_acl_edit(updated, &del, err, sizeof err);
    ck_assert_msg(deleted != NULL, "%s", err);
    ck_assert_uint_eq(rmq_acl_account_count(deleted), 2);
    ck_assert(!may(deleted, "newbie", RMQ_ACL_TOPIC, RMQ_ACL_PERM_PUB, "AclTopic"));

    rmq_acl_edit_t white = {.kind = RMQ_ACL_EDIT_GLOBAL_WHITE, .global_white = "10.9.*,1.2.3.4"};
    rmq_acl_t *whitened = rmq_acl_edit(deleted, &white, err, sizeof err);
    ck_assert_msg(whitened != NULL, "%s", err);
    ck_assert_str_eq(rmq_acl_global_white(whitened), "10.9.*;1.2.3.4");
    const rmq_acl_account_t *who = NULL;
    ck_assert_int_eq(rmq_acl_account_of(whitened, "1.2.3.4:9", NULL, &who), 1);

    rmq_acl_free(whitened);
    rmq_acl_free(deleted);
    rmq_acl_free(updated);
    rmq_acl_free(next);
    rmq_acl_free(acl);
}
END_TEST

START_TEST(test_bad_edits_refused)
{
    char err[256] = "";
    rmq_acl_t *acl = parse(file_text);
    rmq_acl_edit_t short_secret = {.kind = RMQ_ACL_EDIT_PUT, .access_key = "x1", .secret_key = "short"};
    ck_assert_ptr_null(rmq_acl_edit(acl, &short_secret, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "secret keys need at least 8 characters"));
    rmq_acl_edit_t no_secret = {.kind = RMQ_ACL_EDIT_PUT, .access_key = "x2"};
    ck_assert_ptr_null(rmq_acl_edit(acl, &no_secret, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "account.x2.secretKey: missing"));
    rmq_acl_edit_t bad_perm = {.kind = RMQ_ACL_EDIT_PUT, .access_key = "app1", .topic_perms = "T=ALL"};
    ck_assert_ptr_null(rmq_acl_edit(acl, &bad_perm, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "topicPerms"));
    rmq_acl_edit_t bad_key = {.kind = RMQ_ACL_EDIT_PUT, .access_key = "a=b", .secret_key = "long-enough"};
    ck_assert_ptr_null(rmq_acl_edit(acl, &bad_key, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "accessKey 'a=b'"));
    rmq_acl_edit_t unknown = {.kind = RMQ_ACL_EDIT_DELETE, .access_key = "nobody"};
    ck_assert_ptr_null(rmq_acl_edit(acl, &unknown, err, sizeof err));
    ck_assert_str_eq(err, "accessKey nobody: no such account");
    ck_assert_uint_eq(rmq_acl_account_count(acl), 2);
    rmq_acl_free(acl);
}
END_TEST

START_TEST(test_replace_in_place)
{
    char err[256] = "";
    rmq_acl_t *held = parse(file_text);      /* the pointer the codecs keep */
    rmq_acl_edit_t put = {.kind = RMQ_ACL_EDIT_PUT, .access_key = "late", .secret_key = "late-secret",
                          .default_topic_perm = "PUB"};
    rmq_acl_t *fresh = rmq_acl_edit(held, &put, err, sizeof err);
    ck_assert_msg(fresh != NULL, "%s", err);
    ck_assert(!may(held, "late", RMQ_ACL_TOPIC, RMQ_ACL_PERM_PUB, "Any"));
    rmq_acl_replace(held, fresh);
    ck_assert(may(held, "late", RMQ_ACL_TOPIC, RMQ_ACL_PERM_PUB, "Any"));
    ck_assert_uint_eq(rmq_acl_account_count(held), 3);
    rmq_acl_free(held);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("acl_edit");
    TCase *tc = tcase_create("edit");
    tcase_add_test(tc, test_round_trip);
    tcase_add_test(tc, test_edits);
    tcase_add_test(tc, test_bad_edits_refused);
    tcase_add_test(tc, test_replace_in_place);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
