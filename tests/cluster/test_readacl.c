/* test_readacl.c: a message named by offset or id is read only by who may
 * read its topic (issue 20 item 5). With aclEnable=true, account B (SUB on
 * its own topic and group only) can neither copy a message of topic A into
 * its group's retry or dead-letter topic by commit-log offset
 * (CONSUMER_SEND_MSG_BACK) nor view it by id (VIEW_MESSAGE_BY_ID): both are
 * NO_PERMISSION with a remark naming account B and topic A, and nothing
 * reaches B's dead-letter topic. Account A can do both with the same
 * offset, and B can still send back its own messages. */
#include <check.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "rmq_acl.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "wire.h"

#define TOPIC_A "ReadTopicA"
#define TOPIC_B "ReadTopicB"
#define GROUP_A "read_group_a"
#define GROUP_B "read_group_b"

static const char acl_text[] =
    "account.admin.secretKey=admin-secret-1\n"
    "account.admin.admin=true\n"
    "account.a.secretKey=a-secret-123\n"
    "account.a.topicPerms=" TOPIC_A "=PUB|SUB\n"
    "account.a.groupPerms=" GROUP_A "=SUB\n"
    "account.b.secretKey=b-secret-123\n"
    "account.b.topicPerms=" TOPIC_B "=PUB|SUB\n"
    "account.b.groupPerms=" GROUP_B "=SUB\n";

static const char *case_dir;

static void setup(void)
{
    case_dir = hn_case_begin("readacl");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

/* Calls addr signed as cr; the status, the remark and (SUCCESS, keep
 * non-NULL) the response. */
static int call(const char *addr, rmq_acl_credentials_t *cr, Rmq__Command *req, const char *body, char *remark,
                size_t rlen, rmq_frame_t *keep)
{
    wire_link_t ln = { .opts = { .connect_timeout_ms = 3000, .name = "test", .sign = rmq_acl_signer,
                                 .sign_arg = cr },
                       .timeout_ms = WIRE_RPC_TIMEOUT_MS };
    rmq_frame_t resp = { 0 };
    remark[0] = '\0';
    int st = wire_call_with(&ln, addr, req, body, body ? strlen(body) : 0, &resp);
    if (resp.cmd)
        snprintf(remark, rlen, "%s", resp.cmd->remark ? resp.cmd->remark : "");
    if (keep && st == RMQ__STATUS__SUCCESS)
        *keep = resp;
    else
        rmq_frame_clear(&resp);
    return st;
}

/* Sends body to topic queue 0 as cr; its commit-log offset. */
static long long send_as(const char *addr, rmq_acl_credentials_t *cr, const char *topic, const char *body)
{
    Rmq__Command req;
    Rmq__SendMessageRequest h;
    rmq_frame_t resp = { 0 };
    char remark[512];
    wire_send_hdr(&req, &h, "read_producer", topic, 0, (char *)"");
    ck_assert_msg(call(addr, cr, &req, body, remark, sizeof remark, &resp) == RMQ__STATUS__SUCCESS, "send: %s",
                  remark);
    long long phys = strtoll(resp.cmd->send_resp->msg_id + 16, NULL, 16);
    rmq_frame_clear(&resp);
    return phys;
}

/* CONSUMER_SEND_MSG_BACK of phys for group, straight to its DLQ. */
static int send_back(const char *addr, rmq_acl_credentials_t *cr, const char *group, long long phys, char *remark,
                     size_t rlen)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__ConsumerSendMsgBackRequest h = RMQ__CONSUMER_SEND_MSG_BACK_REQUEST__INIT;
    h.offset = phys;
    h.group = (char *)group;
    h.delay_level = -1;
    req.code = RMQ__REQUEST_CODE__CONSUMER_SEND_MSG_BACK;
    req.header_case = RMQ__COMMAND__HEADER_SEND_BACK;
    req.send_back = &h;
    return call(addr, cr, &req, NULL, remark, rlen, NULL);
}

/* VIEW_MESSAGE_BY_ID of phys; on SUCCESS the body must hold want. */
static int view(const char *addr, rmq_acl_credentials_t *cr, long long phys, const char *want, char *remark,
                size_t rlen)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__ViewMessageRequest vm = RMQ__VIEW_MESSAGE_REQUEST__INIT;
    rmq_frame_t resp = { 0 };
    vm.offset = phys;
    req.code = RMQ__REQUEST_CODE__VIEW_MESSAGE_BY_ID;
    req.header_case = RMQ__COMMAND__HEADER_VIEW_MESSAGE;
    req.view_message = &vm;
    int st = call(addr, cr, &req, NULL, remark, rlen, &resp);
    if (st == RMQ__STATUS__SUCCESS) {
        size_t len = evbuffer_get_length(resp.body);
        rmq_record_t rec;
        ck_assert_int_eq(rmq_record_decode(evbuffer_pullup(resp.body, (ssize_t)len), len, 1, &rec), RMQ_OK);
        ck_assert_uint_eq(rec.body_len, strlen(want));
        ck_assert_int_eq(memcmp(rec.body, want, rec.body_len), 0);
    }
    rmq_frame_clear(&resp);
    return st;
}

/* GET_MAX_OFFSET of topic queue 0 as cr, or -1. */
static long long max_offset(const char *addr, rmq_acl_credentials_t *cr, const char *topic)
{
    Rmq__Command req;
    Rmq__QueueRequest qr;
    rmq_frame_t resp = { 0 };
    char remark[512];
    wire_max_offset_request(&req, &qr, topic, 0);
    long long off = call(addr, cr, &req, NULL, remark, sizeof remark, &resp) == RMQ__STATUS__SUCCESS
                        ? wire_resp_offset(&resp) : -1;
    rmq_frame_clear(&resp);
    return off;
}

#define EXPECT_REFUSED(status, remark, want)                                                     \
    do {                                                                                          \
        ck_assert_int_eq((status), RMQ__STATUS__NO_PERMISSION);                                  \
        ck_assert_msg(strstr((remark), (want)) != NULL, "remark '%s' lacks '%s'", (remark), (want)); \
    } while (0)

START_TEST(test_offset_names_only_readable_messages)
{
    hn_daemon_t bk;
    char acl[PATH_MAX], props[8192], addr[64], remark[512];
    rmq_acl_credentials_t admin = { "admin", "admin-secret-1" }, a = { "a", "a-secret-123" },
                          b = { "b", "b-secret-123" };
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "acl.properties", acl_text, acl, sizeof acl));
    snprintf(props, sizeof props,
             "brokerName=broker-a\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store\n"
             "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=\nmessageDelayLevel=1s 2s\n"
             "aclEnable=true\naclFile=%s\naclAccessKey=admin\naclSecretKey=admin-secret-1\n",
             case_dir, acl);
    ck_assert_int_eq(hn_daemon_start_conf(&bk, case_dir, "broker/mqbroker", "broker", props, addr, sizeof addr), 0);
    const char *topics[] = { TOPIC_A, TOPIC_B };
    for (int i = 0; i < 2; i++) {
        Rmq__Command req;
        Rmq__TopicConfig tc;
        wire_topic_request(&req, &tc, topics[i], 1);
        ck_assert_int_eq(call(addr, &admin, &req, NULL, remark, sizeof remark, NULL), RMQ__STATUS__SUCCESS);
    }
    long long pa = send_as(addr, &a, TOPIC_A, "secret-of-a");
    long long pb = send_as(addr, &b, TOPIC_B, "own-of-b");

    /* B names A's message by offset: refused, nothing copied. */
    EXPECT_REFUSED(send_back(addr, &b, GROUP_B, pa, remark, sizeof remark), remark,
                   "account b has DENY on topic " TOPIC_A);
    EXPECT_REFUSED(view(addr, &b, pa, "secret-of-a", remark, sizeof remark), remark,
                   "account b has DENY on topic " TOPIC_A);
    ck_assert_int_eq(max_offset(addr, &admin, "%DLQ%" GROUP_B), 0);

    /* B's own message, and A's with A's rights: allowed. */
    ck_assert_int_eq(view(addr, &b, pb, "own-of-b", remark, sizeof remark), RMQ__STATUS__SUCCESS);
    ck_assert_msg(send_back(addr, &b, GROUP_B, pb, remark, sizeof remark) == RMQ__STATUS__SUCCESS, "%s", remark);
    ck_assert_int_eq(max_offset(addr, &admin, "%DLQ%" GROUP_B), 1);
    ck_assert_int_eq(view(addr, &a, pa, "secret-of-a", remark, sizeof remark), RMQ__STATUS__SUCCESS);
    ck_assert_msg(send_back(addr, &a, GROUP_A, pa, remark, sizeof remark) == RMQ__STATUS__SUCCESS, "%s", remark);
    ck_assert_int_eq(max_offset(addr, &admin, "%DLQ%" GROUP_A), 1);
    ck_assert_int_eq(view(addr, &admin, pa, "secret-of-a", remark, sizeof remark), RMQ__STATUS__SUCCESS);

    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *readacl_suite(void)
{
    Suite *s = suite_create("readacl");
    TCase *tc = tcase_create("process");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_offset_names_only_readable_messages);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    return hn_run_suite(readacl_suite());
}
