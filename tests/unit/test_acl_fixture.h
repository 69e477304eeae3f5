/* test_acl_fixture.h: the one ACL policy the ACL unit tests and the core's
 * permission tests share (accounts adm, none, app with per-topic and
 * per-group rights, whitelists, a 5 s replay window), parsed afresh for
 * each case. */
#ifndef TEST_ACL_FIXTURE_H
#define TEST_ACL_FIXTURE_H

#include "rmq_acl.h"

extern rmq_acl_t *acl;

/* Check fixture: parses the policy into acl / frees it. */
void acl_fixture_setup(void);
void acl_fixture_teardown(void);

#endif
