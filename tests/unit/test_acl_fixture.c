/* test_acl_fixture.c: the shared ACL policy of the unit and core tests. */
#include <check.h>
#include <string.h>

#include "test_acl_fixture.h"

static const char policy[] =
    "globalWhiteRemoteAddresses=10.9.*\n"
    "replayWindowMs=5000\n"
    "account.adm.secretKey=admin-secret\n"
    "account.adm.admin=true\n"
    "account.none.secretKey=none-secret-1\n"
    "account.app.secretKey=app-secret-1\n"
    "account.app.defaultTopicPerm=SUB\n"
    "account.app.defaultGroupPerm=DENY\n"
    "account.app.topicPerms=Out=PUB;Both=PUB|SUB;Closed=DENY\n"
    "account.app.groupPerms=g1=SUB;pg=PUB\n"
    "account.app.whiteRemoteAddress=127.0.0.*;::1\n";

rmq_acl_t *acl;

void acl_fixture_setup(void)
{
    char err[256];
    acl = rmq_acl_parse(policy, strlen(policy), "t", err, sizeof err);
    ck_assert_msg(acl != NULL, "%s", err);
}

void acl_fixture_teardown(void)
{
    rmq_acl_free(acl);
}
