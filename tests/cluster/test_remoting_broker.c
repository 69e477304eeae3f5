/* test_remoting_broker.c: RocketMQ's remoting protocol on the broker's port
 * (broker/front/remoting/), with real mqnamesrv / mqbroker processes on
 * loopback and the blocking remoting client of remwire.h.
 *
 * send_pull: SEND_MESSAGE_V2 in the binary header encoding answers
 * msgId / queueId / queueOffset; the msgId names the broker's host, port
 * and commit-log offset and VIEW_MESSAGE_BY_ID resolves it back to the
 * message; SEND_BATCH_MESSAGE answers one msgId per message; PULL_MESSAGE
 * returns them in MessageDecoder's V1 layout (body CRC, topic, properties)
 * with nextBeginOffset / minOffset / maxOffset; past the end is
 * PULL_NOT_FOUND, far past it PULL_OFFSET_MOVED; a suspended pull waits
 * for its suspendTimeoutMillis (counted in the broker's pullHoldCount
 * meanwhile), and is answered at once when a message
 * arrives.
 *
 * bad_requests: a missing or non-numeric field, a queue id out of range,
 * an illegal topic name, an oversize body, a malformed batch body, an
 * unknown code, a bad heartbeat body each get a clear code and a remark
 * naming what was wrong; a frame over maxFrameSize closes the connection.
 *
 * clients: consumer offsets (0 for a new group on an empty queue, then
 * what was committed),
 * GET_MAX_OFFSET, heartbeats of two clients of one group listed by
 * GET_CONSUMER_LIST_BY_GROUP, the first told NOTIFY_CONSUMER_IDS_CHANGED
 * when the second joins, and UNREGISTER_CLIENT leaving the group.
 *
 * locks: LOCK_BATCH_MQ answers the queues a client holds (renewals too,
 * never queues of a missing topic or past its queues, never another live
 * client's); UNLOCK_BATCH_MQ frees only the client's own; bad bodies (no
 * JSON, missing fields, bad queue ids) get SYSTEM_ERROR naming the field.
 *
 * queries: QUERY_MESSAGE by a KEYS word and by UNIQ_KEY (_UNIQUE_KEY_QUERY)
 * answers the messages newest first in MessageDecoder's layout with the
 * index's last update, maxNum honoured; no match is QUERY_NOT_FOUND; a
 * missing or bad field is SYSTEM_ERROR naming it.
 *
 * acl: with aclEnable, ACL 1.0 signatures are checked against what each
 * code needs (the core's table, broker/core/bk_perm.c): a send needs PUB on
 * its topic, a pull SUB on its topic and its group; a heartbeat SUB on its
 * consumer groups; unsigned requests are refused with NO_PERMISSION, a
 * signed one of a code without a handler REQUEST_CODE_NOT_SUPPORTED.
 * acl_queries: a query by key needs SUB on its topic, a view by id SUB on
 * its record's topic, queue locks SUB on their group. acl_tx: a send-back needs SUB on its group, then
 * SUB on the topic of the message it names; ending a transaction PUB on the
 * half message's real topic.
 *
 * send_back_retry_dlq: CONSUMER_SEND_MSG_BACK with delayLevel 0 goes to
 * %RETRY%group through delay level 3 + reconsumeTimes, with
 * reconsumeTimes + 1, RETRY_TOPIC and ORIGIN_MESSAGE_ID; past
 * maxReconsumeTimes, or with a negative level, to %DLQ%group at once; a
 * level given is used. Missing and malformed fields, an offset with no
 * message and a bad group name get SYSTEM_ERROR naming them.
 *
 * end_transaction: a producer that heartbeats its group; half messages stay
 * invisible; commit (8) delivers once (twice is harmless), rollback (12)
 * never; unknown (0) is checked back with CHECK_TRANSACTION_STATE pushed on
 * the producer's connection (offsets, msgId, the message in MessageDecoder's
 * layout under its real topic), whose oneway commit with fromTransactionCheck delivers it and
 * stops the checks. Missing fields, a bad state or offset, a message that
 * is not a half of that group get SYSTEM_ERROR naming them; a oneway
 * request is never answered.
 *
 * send_busy: with SYNC_FLUSH and sendQueueCapacity=8, a window of 256
 * pipelined sends on one connection is answered partly SYSTEM_BUSY (2,
 * RocketMQ's "[OVERLOAD]" remark), as the native front answers its sends;
 * every send gets an answer, none fails otherwise, and a send after the
 * burst succeeds.
 *
 * offset_query_new_group: as RocketMQ's broker, QUERY_CONSUMER_OFFSET of a
 * group with nothing stored answers 0 while the queue's head is in memory
 * (empty, or its first message within accessMessageInMemoryMaxRatio of the
 * log's end; 0 here) and QUERY_NOT_FOUND naming the group once it is not.
 *
 * sql92: with enablePropertyFilter, CHECK_CLIENT_CONFIG (46) answers
 * SUCCESS for a TAG or a valid SQL92 subscription and
 * SUBSCRIPTION_PARSE_FAILED naming the line and column of a malformed one;
 * a pull with its own SQL92 subscription, and one by a group whose
 * heartbeat subscribed with SQL92, return exactly the messages whose
 * properties match (missing properties, numbers against strings).
 * sql92_disabled: without it, as RocketMQ's broker, CHECK_CLIENT_CONFIG of a
 * SQL92 subscription and a SQL92 pull are SYSTEM_ERROR "The broker does not
 * support consumer to filter message by SQL92"; TAG ones still succeed. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fr_remoting_wire.h"
#include "harness.h"
#include "remwire.h"
#include "rmq_message.h"
#include "st_store.h"
#include "wire.h"

#define QUEUES 4
#define BK_MAX_FRAME 65536
#define BK_MAX_MESSAGE 4096

static const char *case_dir;
static char ns_addr[64], bk_addr[64];
static hn_daemon_t ns, bk;

/* Starts the name server and the broker with extra properties. */
static void daemons_start(const char *extra)
{
    char props[2048];
    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    int n = snprintf(props, sizeof props,
                     "brokerClusterName=RemCluster\nbrokerName=broker-a\nbrokerId=0\nlistenPort=0\n"
                     "haListenPort=0\nbrokerRole=ASYNC_MASTER\nstorePathRootDir=%s/store\n"
                     "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\n"
                     "maxFrameSize=%d\nmaxMessageSize=%d\n%s", case_dir, ns_addr, BK_MAX_FRAME, BK_MAX_MESSAGE,
                     extra);
    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "broker properties do not fit");
    ck_assert_int_eq(hn_daemon_start_conf(&bk, case_dir, "broker/mqbroker", "broker-a", props, bk_addr,
                                          sizeof bk_addr), 0);
}

/* Creates RemTopic with QUEUES queues over the native protocol. */
static void topic_create(void)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, "RemTopic", QUEUES);
    ck_assert_int_eq(wire_call(bk_addr, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
}

static void setup(void)
{
    case_dir = hn_case_begin("remoting_broker");
    daemons_start("");
    topic_create();
}

static void acl_setup(void)
{
    char path[4096], props[4200];
    case_dir = hn_case_begin("remoting_broker_acl");
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "plain.acl",
                                        "account.pub.secretKey=pubsecret1\n"
                                        "account.pub.topicPerms=RemTopic=PUB\n"
                                        "account.sub.secretKey=subsecret1\n"
                                        "account.sub.topicPerms=RemTopic=SUB\n"
                                        "account.sub.groupPerms=rem_cg=SUB\n"
                                        "account.back.secretKey=backsecret1\n"
                                        "account.back.groupPerms=rem_cg=SUB\n",
                                        path, sizeof path));
    int n = snprintf(props, sizeof props, "aclEnable=true\naclFile=%s\n", path);
    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "ACL properties do not fit");
    daemons_start(props);
}

static void busy_setup(void)
{
    case_dir = hn_case_begin("remoting_broker_busy");
    daemons_start("flushDiskType=SYNC_FLUSH\nsendQueueCapacity=8\n");
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, "RemTopic", QUEUES);
    ck_assert_int_eq(wire_call(bk_addr, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
}

static void cold_setup(void)
{
    case_dir = hn_case_begin("remoting_broker_cold");
    daemons_start("accessMessageInMemoryMaxRatio=0\n");
    topic_create();
}

static void sql92_setup(void)
{
    case_dir = hn_case_begin("remoting_broker_sql92");
    daemons_start("enablePropertyFilter=true\n");
    topic_create();
}

static void teardown(void)
{
    hn_case_end();
}

/* Pushed NOTIFY_CONSUMER_IDS_CHANGED requests seen while waiting for responses. */
static int notices;

/* One request on connection fd (opaque 7); returns the response code. */
static int call_on(int fd, int type, int code, const rmq_remoting_field_t *f, size_t n, const void *body,
                   size_t len, rem_resp_t *r)
{
    rem_send(fd, type, code, 7, 0, f, n, body, len);
    for (;;) {
        ck_assert_int_eq(rem_recv_frame(fd, r, 20000), 0);
        if (r->msg.flags & RMQ_REMOTING_FLAG_RESPONSE)
            break;
        ck_assert_int_eq(r->msg.code, 40);
        notices++;
        rem_resp_clear(r);
    }
    ck_assert_int_eq(r->msg.opaque, 7);
    ck_assert_int_eq(r->msg.serialize_type, type);
    return r->msg.code;
}

/* The same on a fresh connection. */
static int call(int type, int code, const rmq_remoting_field_t *f, size_t n, const void *body, size_t len,
                rem_resp_t *r)
{
    int fd = rem_connect(bk_addr);
    int rc = call_on(fd, type, code, f, n, body, len, r);
    close(fd);
    return rc;
}

/* Asserts the remark of r mentions what. */
static void remark_has(const rem_resp_t *r, const char *what)
{
    ck_assert_msg(strstr(r->msg.remark, what) != NULL, "remark '%s' does not name '%s'", r->msg.remark, what);
}

/* SEND_MESSAGE_V2 fields of one message to RemTopic queue qid. */
#define V2_FIELDS(qid, props)                                                                     \
    {{"a", "rem_pg"}, {"b", "RemTopic"}, {"c", "TBW102"}, {"d", "4"}, {"e", (char *)(qid)}, {"f", "0"}, \
     {"g", "1700000000000"}, {"h", "0"}, {"i", (char *)(props)}, {"j", "0"}, {"k", "false"}, {"m", "false"}}

static int send_one(int type, const char *qid, const char *props, const char *body, rem_resp_t *r)
{
    rmq_remoting_field_t f[] = V2_FIELDS(qid, props);
    return call(type, 310, f, sizeof f / sizeof f[0], body, strlen(body), r);
}

/* PULL_MESSAGE of topic by rem_cg on connection fd. */
static int pull_topic(int fd, const char *topic, const char *qid, const char *offset, const char *sys_flag,
                      const char *suspend_ms, rem_resp_t *r)
{
    rmq_remoting_field_t f[] = {
        {"consumerGroup", "rem_cg"}, {"topic", (char *)topic}, {"queueId", (char *)qid},
        {"queueOffset", (char *)offset}, {"maxMsgNums", "32"}, {"sysFlag", (char *)sys_flag},
        {"commitOffset", "0"}, {"suspendTimeoutMillis", (char *)suspend_ms}, {"subVersion", "0"},
        {"expressionType", "TAG"},
    };
    return call_on(fd, RMQ_REMOTING_JSON, 11, f, sizeof f / sizeof f[0], NULL, 0, r);
}

static int pull(int fd, const char *qid, const char *offset, const char *sys_flag, const char *suspend_ms,
                rem_resp_t *r)
{
    return pull_topic(fd, "RemTopic", qid, offset, sys_flag, suspend_ms, r);
}

/* ---- send and pull ---------------------------------------------------------- */

/* Checks one pulled message against what was sent: V1 layout, body CRC. */
static size_t check_message(const uint8_t *p, size_t len, const char *body, int64_t qoff)
{
    rmq_record_t rec;
    ck_assert_int_eq(rmq_record_decode_rocketmq(p, len, &rec), RMQ_OK);
    ck_assert_uint_eq(rec.total_size, rmq_record_size(rec.sys_flag, rec.body_len, rec.topic_len, rec.properties_len));
    ck_assert_int_eq((int32_t)rec.crc, fr_rm_body_crc(rec.body, rec.body_len));
    ck_assert_int_eq(rec.sys_flag & RMQ_SYSFLAG_HOSTS_V6, 0);     /* an IPv4 client and broker */
    ck_assert_int_eq(rec.queue_offset, qoff);
    ck_assert_uint_eq(rec.body_len, strlen(body));
    ck_assert(memcmp(rec.body, body, rec.body_len) == 0);
    ck_assert_uint_eq(rec.topic_len, strlen("RemTopic"));
    ck_assert(memcmp(rec.topic, "RemTopic", rec.topic_len) == 0);
    return rec.total_size;
}

START_TEST(send_pull)
{
    rem_resp_t r;
    char props[64];
    snprintf(props, sizeof props, "TAGS\001TagA\002KEYS\001k1\002UNIQ_KEY\001U1");
    ck_assert_int_eq(send_one(RMQ_REMOTING_ROCKETMQ, "1", props, "hello", &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "queueId"), "1");
    ck_assert_str_eq(rem_field(&r, "queueOffset"), "0");
    char msg_id[64];
    snprintf(msg_id, sizeof msg_id, "%s", rem_field(&r, "msgId"));
    rem_resp_clear(&r);
    int64_t phys;
    char host[RMQ_HOST_TEXT_MAX];
    ck_assert_int_eq(rmq_msg_id_parse(msg_id, host, sizeof host, &phys), RMQ_OK);
    ck_assert_str_eq(host, bk_addr);

    char off[24];
    snprintf(off, sizeof off, "%lld", (long long)phys);
    rmq_remoting_field_t vf = {"offset", off};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 33, &vf, 1, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    check_message(r.msg.body, r.msg.body_len, "hello", 0);
    rem_resp_clear(&r);
    rmq_remoting_field_t bad_off = {"offset", "999999999"};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 33, &bad_off, 1, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "999999999");
    rem_resp_clear(&r);

    /* a batch of three, each message with its own UNIQ_KEY and the batch
     * with one of its own (as the 5.x client sends it), which no message takes */
    uint8_t batch[512];
    size_t blen = 0;
    const char *bodies[] = {"b0", "b1", "b2"};
    const char *bprops[] = {"TAGS\001TagB\002UNIQ_KEY\001B0", "TAGS\001TagB\002UNIQ_KEY\001B1",
                            "TAGS\001TagB\002UNIQ_KEY\001B2"};
    for (int i = 0; i < 3; i++) {
        rmq_batch_entry_t e = {0, (const uint8_t *)bodies[i], 2, bprops[i], strlen(bprops[i])};
        blen += fr_rm_batch_encode(&e, batch + blen);
    }
    rmq_remoting_field_t bf[] = V2_FIELDS("1", "UNIQ_KEY\001BATCH\002WAIT\001true");
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 320, bf, sizeof bf / sizeof bf[0], batch, blen, &r),
                     RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "queueOffset"), "1");
    ck_assert_uint_eq(strlen(rem_field(&r, "msgId")), 3 * 32 + 2);
    rem_resp_clear(&r);

    int fd = rem_connect(bk_addr);
    ck_assert_int_eq(pull(fd, "1", "0", "0", "0", &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "nextBeginOffset"), "4");
    ck_assert_str_eq(rem_field(&r, "minOffset"), "0");
    ck_assert_str_eq(rem_field(&r, "maxOffset"), "4");
    ck_assert_str_eq(rem_field(&r, "suggestWhichBrokerId"), "0");
    size_t at = check_message(r.msg.body, r.msg.body_len, "hello", 0);
    for (int i = 0; i < 3; i++) {
        rmq_record_t rec;
        size_t vl = 0;
        ck_assert_int_eq(rmq_record_decode(r.msg.body + at, r.msg.body_len - at, 0, &rec), RMQ_OK);
        const char *uniq = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_UNIQ_KEY, &vl);
        ck_assert_msg(uniq && vl == 2 && memcmp(uniq, bprops[i] + strlen(bprops[i]) - 2, 2) == 0,
                      "batch message %d: UNIQ_KEY '%.*s'", i, uniq ? (int)vl : 6, uniq ? uniq : "absent");
        ck_assert_ptr_nonnull(rmq_props_get(rec.properties, rec.properties_len, "WAIT", &vl));
        size_t pos = 0, uniqs = 0;   /* Java's reader keeps a repeated name's last value */
        for (rmq_prop_t pr; rmq_props_next(rec.properties, rec.properties_len, &pos, &pr);)
            uniqs += pr.name_len == strlen(RMQ_PROP_UNIQ_KEY) && memcmp(pr.name, RMQ_PROP_UNIQ_KEY, pr.name_len) == 0;
        ck_assert_uint_eq(uniqs, 1);
        at += check_message(r.msg.body + at, r.msg.body_len - at, bodies[i], 1 + i);
    }
    ck_assert_uint_eq(at, r.msg.body_len);
    rem_resp_clear(&r);

    ck_assert_int_eq(pull(fd, "1", "4", "0", "0", &r), 19);
    ck_assert_str_eq(rem_field(&r, "nextBeginOffset"), "4");
    rem_resp_clear(&r);
    ck_assert_int_eq(pull(fd, "1", "100", "0", "0", &r), 21);
    ck_assert_str_eq(rem_field(&r, "nextBeginOffset"), "4");
    rem_resp_clear(&r);

    /* suspended: waits for its timeout, then PULL_NOT_FOUND */
    long long t0 = hn_now_ms();
    ck_assert_int_eq(pull(fd, "1", "4", "2", "1000", &r), 19);
    ck_assert_int_ge(hn_now_ms() - t0, 900);
    rem_resp_clear(&r);

    /* suspended for 15 s, woken by a send */
    rmq_remoting_field_t pf[] = {
        {"consumerGroup", "rem_cg"}, {"topic", "RemTopic"}, {"queueId", "1"}, {"queueOffset", "4"},
        {"maxMsgNums", "32"}, {"sysFlag", "2"}, {"suspendTimeoutMillis", "15000"},
    };
    t0 = hn_now_ms();
    rem_send(fd, RMQ_REMOTING_ROCKETMQ, 11, 9, 0, pf, sizeof pf / sizeof pf[0], NULL, 0);
    usleep(200 * 1000);
    /* the broker's held pulls count it (GET_BROKER_RUNTIME_INFO pullHoldCount) */
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 28, NULL, 0, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_msg(r.msg.body && memmem(r.msg.body, r.msg.body_len, "\"pullHoldCount\":\"1\"", 19),
                  "runtime info without pullHoldCount 1: %.*s", (int)r.msg.body_len, (const char *)r.msg.body);
    rem_resp_clear(&r);
    ck_assert_int_eq(send_one(RMQ_REMOTING_JSON, "1", "", "late", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(rem_recv(fd, &r, 20000), 0);
    ck_assert_int_eq(r.msg.opaque, 9);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    ck_assert_int_lt(hn_now_ms() - t0, 10000);
    check_message(r.msg.body, r.msg.body_len, "late", 4);
    rem_resp_clear(&r);
    close(fd);
    hn_case_passed();
}
END_TEST

/* ---- bad requests ------------------------------------------------------------- */

START_TEST(bad_requests)
{
    rem_resp_t r;
    rmq_remoting_field_t no_topic[] = {{"a", "rem_pg"}, {"e", "0"}};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 310, no_topic, 2, "x", 1, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "topic");
    rem_resp_clear(&r);

    ck_assert_int_eq(send_one(RMQ_REMOTING_JSON, "abc", "", "x", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "queueId");
    rem_resp_clear(&r);
    ck_assert_int_eq(send_one(RMQ_REMOTING_ROCKETMQ, "99", "", "x", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "99");
    rem_resp_clear(&r);

    rmq_remoting_field_t bad_name[] = {{"topic", "bad topic!"}, {"queueId", "0"}};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 10, bad_name, 2, "x", 1, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "bad topic!");
    rem_resp_clear(&r);

    char *big = malloc(BK_MAX_MESSAGE + 100);
    memset(big, 'z', BK_MAX_MESSAGE + 99);
    big[BK_MAX_MESSAGE + 99] = '\0';
    ck_assert_int_eq(send_one(RMQ_REMOTING_JSON, "0", "", big, &r), 13);
    rem_resp_clear(&r);
    free(big);

    uint8_t junk[30] = {0, 0, 0, 200};
    rmq_remoting_field_t bf[] = V2_FIELDS("0", "");
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 320, bf, sizeof bf / sizeof bf[0], junk, sizeof junk, &r), 13);
    remark_has(&r, "totalSize");
    rem_resp_clear(&r);

    ck_assert_int_eq(call(RMQ_REMOTING_ROCKETMQ, 9999, NULL, 0, NULL, 0, &r), RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED);
    remark_has(&r, "9999");
    rem_resp_clear(&r);

    int fd = rem_connect(bk_addr);
    rmq_remoting_field_t pf[] = {{"consumerGroup", "rem_cg"}, {"topic", "RemTopic"}, {"queueId", "0"},
                                 {"queueOffset", "0"}, {"maxMsgNums", "0"}, {"sysFlag", "0"}};
    ck_assert_int_eq(call_on(fd, RMQ_REMOTING_JSON, 11, pf, 6, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "maxMsgNums");
    rem_resp_clear(&r);
    ck_assert_int_eq(call_on(fd, RMQ_REMOTING_JSON, 34, NULL, 0, "{\"clientID\":", 12, &r),
                     RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "JSON");
    rem_resp_clear(&r);
    close(fd);

    /* a frame over maxFrameSize: the connection closes without an answer */
    fd = rem_connect(bk_addr);
    uint8_t head[8] = {0, 2, 0, 0, 1, 0, 0, 0};
    write_all(fd, head, sizeof head);
    ck_assert_int_eq(rem_recv(fd, &r, 5000), -1);
    close(fd);
    hn_case_passed();
}
END_TEST

/* ---- SQL92 filters ------------------------------------------------------------ */

/* CHECK_CLIENT_CONFIG of a subscription of type to RemTopic; the code. */
static int check_client(const char *type, const char *expr, rem_resp_t *r)
{
    char body[512];
    snprintf(body, sizeof body,
             "{\"clientId\":\"c1\",\"group\":\"rem_cg\",\"subscriptionData\":{\"classFilterMode\":false,"
             "\"codeSet\":[],\"expressionType\":\"%s\",\"subString\":\"%s\",\"subVersion\":1,\"tagsSet\":[],"
             "\"topic\":\"RemTopic\"}}", type, expr);
    return call(RMQ_REMOTING_JSON, 46, NULL, 0, body, strlen(body), r);
}

/* PULL_MESSAGE of queue 0 from offset 0 by rem_cg with subscription expr
 * of type (the subscription flag set when expr is not NULL). */
static int pull_sql(int fd, const char *type, const char *expr, rem_resp_t *r)
{
    rmq_remoting_field_t f[] = {
        {"consumerGroup", "rem_cg"}, {"topic", "RemTopic"}, {"queueId", "0"}, {"queueOffset", "0"},
        {"maxMsgNums", "32"}, {"sysFlag", expr ? "4" : "0"}, {"commitOffset", "0"},
        {"suspendTimeoutMillis", "0"}, {"subVersion", "0"}, {"expressionType", (char *)type},
        {"subscription", expr ? (char *)expr : ""},
    };
    return call_on(fd, RMQ_REMOTING_JSON, 11, f, sizeof f / sizeof f[0], NULL, 0, r);
}

/* The bodies of a pull's messages joined with ',' into out. */
static const char *pulled_bodies(const rem_resp_t *r, char *out, size_t cap)
{
    size_t at = 0, n = 0;
    out[0] = 0;
    while (at < r->msg.body_len) {
        rmq_record_t rec;
        ck_assert_int_eq(rmq_record_decode_rocketmq(r->msg.body + at, r->msg.body_len - at, &rec), RMQ_OK);
        n += (size_t)snprintf(out + n, cap - n, "%s%.*s", n ? "," : "", (int)rec.body_len, (const char *)rec.body);
        at += rec.total_size;
    }
    return out;
}

/* Messages m0..m5 on queue 0, their properties chosen for the expression below. */
static void sql_messages(void)
{
    static const char *const props[] = {
        "TAGS\001TagA\002a\0016\002s\001x",      /* m0: matches */
        "TAGS\001TagA\002a\0015\002s\001x",      /* m1: a not > 5 */
        "TAGS\001TagB\002a\00110\002s\001y",     /* m2: matches */
        "TAGS\001TagA\002s\001x",                /* m3: no a: unknown */
        "TAGS\001TagA\002a\001abc\002s\001x",    /* m4: a is no number: no match */
        "TAGS\001TagA\002a\0017\002s\001z",      /* m5: s not in the list */
    };
    rem_resp_t r;
    for (int i = 0; i < 6; i++) {
        char body[8];
        snprintf(body, sizeof body, "m%d", i);
        ck_assert_int_eq(send_one(RMQ_REMOTING_JSON, "0", props[i], body, &r), RMQ_REMOTING_SUCCESS);
        rem_resp_clear(&r);
    }
}

#define SQL_EXPR "a > 5 AND s IN ('x', 'y')"

START_TEST(sql92)
{
    rem_resp_t r;
    char got[256], hb[1024];
    sql_messages();
    ck_assert_int_eq(check_client("SQL92", SQL_EXPR, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(check_client("TAG", "TagA || TagB", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(check_client("SQL92", "a > 5 AND", &r), 23);
    remark_has(&r, "line 1, column 10");
    rem_resp_clear(&r);

    int fd = rem_connect(bk_addr);
    ck_assert_int_eq(pull_sql(fd, "SQL92", SQL_EXPR, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(pulled_bodies(&r, got, sizeof got), "m0,m2");
    rem_resp_clear(&r);
    ck_assert_int_eq(pull_sql(fd, "SQL92", "a IS NULL OR TAGS = 'TagB'", &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(pulled_bodies(&r, got, sizeof got), "m2,m3");
    rem_resp_clear(&r);
    ck_assert_int_eq(pull_sql(fd, "SQL92", "a > 5 AND s IN ('x'", &r), 23);
    remark_has(&r, "line 1, column 20");
    rem_resp_clear(&r);

    /* the group's heartbeat subscribes with SQL92; its pulls carry none */
    snprintf(hb, sizeof hb,
             "{\"clientID\":\"c1\",\"producerDataSet\":[],\"consumerDataSet\":[{\"groupName\":\"rem_cg\","
             "\"consumeType\":\"CONSUME_PASSIVELY\",\"messageModel\":\"CLUSTERING\","
             "\"consumeFromWhere\":\"CONSUME_FROM_FIRST_OFFSET\",\"unitMode\":false,"
             "\"subscriptionDataSet\":[{\"topic\":\"RemTopic\",\"subString\":\"%s\",\"subVersion\":1,"
             "\"tagsSet\":[],\"codeSet\":[],\"expressionType\":\"SQL92\"}]}]}", SQL_EXPR);
    ck_assert_int_eq(call_on(fd, RMQ_REMOTING_JSON, 34, NULL, 0, hb, strlen(hb), &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(pull_sql(fd, "SQL92", NULL, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(pulled_bodies(&r, got, sizeof got), "m0,m2");
    rem_resp_clear(&r);
    close(fd);
    hn_case_passed();
}
END_TEST

START_TEST(sql92_disabled)
{
    rem_resp_t r;
    ck_assert_int_eq(check_client("SQL92", SQL_EXPR, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "The broker does not support consumer to filter message by SQL92");
    rem_resp_clear(&r);
    ck_assert_int_eq(check_client("TAG", "*", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    int fd = rem_connect(bk_addr);
    ck_assert_int_eq(pull_sql(fd, "SQL92", SQL_EXPR, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "does not support consumer to filter message by SQL92");
    rem_resp_clear(&r);
    close(fd);
    hn_case_passed();
}
END_TEST

/* ---- consumer-side requests --------------------------------------------------- */

static const char *heartbeat(const char *client, char *buf, size_t len)
{
    snprintf(buf, len,
             "{\"clientID\":\"%s\",\"producerDataSet\":[],\"consumerDataSet\":[{\"groupName\":\"rem_cg\","
             "\"consumeType\":\"CONSUME_PASSIVELY\",\"messageModel\":\"CLUSTERING\","
             "\"consumeFromWhere\":\"CONSUME_FROM_FIRST_OFFSET\",\"unitMode\":false,"
             "\"subscriptionDataSet\":[{\"topic\":\"RemTopic\",\"subString\":\"*\",\"subVersion\":1,"
             "\"tagsSet\":[],\"codeSet\":[],\"expressionType\":\"TAG\"}]}]}", client);
    return buf;
}

START_TEST(clients)
{
    rem_resp_t r;
    char hb[1024];
    rmq_remoting_field_t q[] = {{"consumerGroup", "rem_cg"}, {"topic", "RemTopic"}, {"queueId", "2"}};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 14, q, 3, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "offset"), "0");     /* a new group, an empty queue */
    rem_resp_clear(&r);
    rmq_remoting_field_t u[] = {{"consumerGroup", "rem_cg"}, {"topic", "RemTopic"}, {"queueId", "2"},
                                {"commitOffset", "3"}};
    ck_assert_int_eq(call(RMQ_REMOTING_ROCKETMQ, 15, u, 4, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 14, q, 3, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "offset"), "3");
    rem_resp_clear(&r);
    rmq_remoting_field_t mq[] = {{"topic", "RemTopic"}, {"queueId", "2"}};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 30, mq, 2, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "offset"), "0");
    rem_resp_clear(&r);

    int a = rem_connect(bk_addr), b = rem_connect(bk_addr);
    heartbeat("client-a", hb, sizeof hb);
    notices = 0;
    ck_assert_int_eq(call_on(a, RMQ_REMOTING_JSON, 34, NULL, 0, hb, strlen(hb), &r), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(notices, 1);       /* told of its own arrival */
    rem_resp_clear(&r);
    heartbeat("client-b", hb, sizeof hb);
    ck_assert_int_eq(call_on(b, RMQ_REMOTING_ROCKETMQ, 34, NULL, 0, hb, strlen(hb), &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);

    /* client-a is told its group changed: a oneway request, not a response */
    uint8_t len4[4];
    ck_assert_int_eq(read_exact(a, len4, 4, 10000), 0);
    uint32_t len = (uint32_t)len4[0] << 24 | (uint32_t)len4[1] << 16 | (uint32_t)len4[2] << 8 | len4[3];
    uint8_t *raw = malloc(len + 4);
    memcpy(raw, len4, 4);
    ck_assert_int_eq(read_exact(a, raw + 4, len, 10000), 0);
    rmq_remoting_request_t note;
    size_t used;
    const char *why = "";
    ck_assert_int_eq(rmq_remoting_decode(raw, len + 4, UINT32_MAX, &note, &used, &why), RMQ_OK);
    ck_assert_int_eq(note.code, 40);
    ck_assert(note.flags & RMQ_REMOTING_FLAG_ONEWAY);
    ck_assert_int_eq(note.serialize_type, RMQ_REMOTING_JSON);
    ck_assert_str_eq(rmq_remoting_field(&note, "consumerGroup"), "rem_cg");
    rmq_remoting_request_clear(&note);
    free(raw);

    rmq_remoting_field_t g = {"consumerGroup", "rem_cg"};
    ck_assert_int_eq(call_on(a, RMQ_REMOTING_JSON, 38, &g, 1, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_ptr_nonnull(memmem(r.msg.body, r.msg.body_len, "\"client-a\"", 10));
    ck_assert_ptr_nonnull(memmem(r.msg.body, r.msg.body_len, "\"client-b\"", 10));
    rem_resp_clear(&r);

    rmq_remoting_field_t un[] = {{"clientID", "client-b"}, {"consumerGroup", "rem_cg"}};
    ck_assert_int_eq(call_on(b, RMQ_REMOTING_JSON, 35, un, 2, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    rmq_remoting_field_t other = {"consumerGroup", "rem_nobody"};
    ck_assert_int_eq(call_on(b, RMQ_REMOTING_JSON, 38, &other, 1, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "rem_nobody");
    rem_resp_clear(&r);
    ck_assert_int_eq(call_on(b, RMQ_REMOTING_JSON, 38, &g, 1, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_ptr_null(memmem(r.msg.body, r.msg.body_len, "\"client-b\"", 10));
    rem_resp_clear(&r);
    close(a);
    close(b);
    hn_case_passed();
}
END_TEST

/* ---- queue locks and queries ---------------------------------------------------- */

/* A LockBatchRequestBody of client for RemTopic queues "q0,q1,..." (mqs is JSON array items). */
static const char *lock_body(const char *client, const char *mqs, char *buf, size_t len)
{
    snprintf(buf, len, "{\"clientId\":\"%s\",\"consumerGroup\":\"rem_cg\",\"mqSet\":[%s],\"onlyThisBroker\":false}",
             client, mqs);
    return buf;
}

#define MQ(topic, qid) "{\"brokerName\":\"broker-a\",\"queueId\":" #qid ",\"topic\":\"" topic "\"}"

/* LOCK_BATCH_MQ of client for mqs; asserts SUCCESS and returns how many
 * queues lockOKMQSet holds, each checked to name broker-a. */
static size_t lock_call(int type, const char *client, const char *mqs, const char *want_held)
{
    char body[1024], err[128];
    rem_resp_t r;
    lock_body(client, mqs, body, sizeof body);
    ck_assert_int_eq(call(type, 41, NULL, 0, body, strlen(body), &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *doc = rmq_json_parse((const char *)r.msg.body, r.msg.body_len, err, sizeof err);
    ck_assert_msg(doc != NULL, "lock answer is no JSON: %s", err);
    const rmq_json_t *set = rmq_json_get(doc, "lockOKMQSet");
    ck_assert(set && set->type == RMQ_JSON_ARRAY);
    char held[64] = "";
    for (size_t i = 0; i < set->n; i++) {
        int64_t qid;
        ck_assert_str_eq(rmq_json_scalar(rmq_json_get(set->items[i], "topic")), "RemTopic");
        ck_assert_str_eq(rmq_json_scalar(rmq_json_get(set->items[i], "brokerName")), "broker-a");
        ck_assert_int_eq(rmq_json_int(rmq_json_get(set->items[i], "queueId"), 0, 99, &qid), 0);
        snprintf(held + strlen(held), sizeof held - strlen(held), "%s%d", i ? "," : "", (int)qid);
    }
    ck_assert_str_eq(held, want_held);
    size_t n = set->n;
    rmq_json_free(doc);
    rem_resp_clear(&r);
    return n;
}

START_TEST(locks)
{
    rem_resp_t r;
    char body[1024];
    /* queues of a missing topic and past the topic's queues are never locked */
    lock_call(RMQ_REMOTING_JSON, "client-a", MQ("RemTopic", 0) "," MQ("RemTopic", 1) "," MQ("RemTopic", 9) ","
              MQ("NoSuchTopic", 0), "0,1");
    lock_call(RMQ_REMOTING_ROCKETMQ, "client-b", MQ("RemTopic", 1) "," MQ("RemTopic", 2), "2");
    lock_call(RMQ_REMOTING_JSON, "client-a", MQ("RemTopic", 0) "," MQ("RemTopic", 1), "0,1");   /* renewal */

    lock_body("client-a", MQ("RemTopic", 1), body, sizeof body);
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 42, NULL, 0, body, strlen(body), &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    lock_body("client-b", MQ("RemTopic", 0), body, sizeof body);                  /* not b's: stays a's */
    ck_assert_int_eq(call(RMQ_REMOTING_ROCKETMQ, 42, NULL, 0, body, strlen(body), &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    lock_call(RMQ_REMOTING_JSON, "client-b", MQ("RemTopic", 0) "," MQ("RemTopic", 1) "," MQ("RemTopic", 2), "1,2");

    /* bad bodies: a clear SYSTEM_ERROR naming what was wrong */
    static const struct {
        const char *body, *what;
    } bad[] = {
        {"", "no JSON"},
        {"{\"clientId\":", "no JSON"},
        {"[1,2]", "consumerGroup"},
        {"{\"consumerGroup\":\"rem_cg\",\"mqSet\":[]}", "clientId"},
        {"{\"consumerGroup\":\"rem_cg\",\"clientId\":\"c\",\"mqSet\":{}}", "mqSet"},
        {"{\"consumerGroup\":\"rem_cg\",\"clientId\":\"c\",\"mqSet\":[{\"topic\":\"RemTopic\"}]}", "queueId"},
        {"{\"consumerGroup\":\"rem_cg\",\"clientId\":\"c\",\"mqSet\":[{\"topic\":\"RemTopic\",\"queueId\":-1}]}",
         "queueId"},
        {"{\"consumerGroup\":\"rem_cg\",\"clientId\":\"c\",\"mqSet\":[{\"queueId\":1}]}", "topic"},
        {"{\"consumerGroup\":\"rem_cg\",\"clientId\":\"c\",\"mqSet\":[7]}", "topic"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        for (int code = 41; code <= 42; code++) {
            ck_assert_int_eq(call(RMQ_REMOTING_JSON, code, NULL, 0, bad[i].body, strlen(bad[i].body), &r),
                             RMQ_REMOTING_SYSTEM_ERROR);
            remark_has(&r, bad[i].what);
            remark_has(&r, code == 41 ? "LOCK_BATCH_MQ" : "UNLOCK_BATCH_MQ");
            rem_resp_clear(&r);
        }
    }
    /* the broker still answers */
    lock_call(RMQ_REMOTING_JSON, "client-b", MQ("RemTopic", 3), "3");
    hn_case_passed();
}
END_TEST

/* QUERY_MESSAGE of key on RemTopic (uniq: _UNIQUE_KEY_QUERY); returns the code. */
static int query_call(const char *key, int uniq, const char *max_num, rem_resp_t *r)
{
    rmq_remoting_field_t f[] = {{"topic", "RemTopic"}, {"key", (char *)key}, {"maxNum", (char *)max_num},
                                {"beginTimestamp", "0"}, {"endTimestamp", "9223372036854775807"},
                                {"_UNIQUE_KEY_QUERY", uniq ? "true" : "false"}};
    return call(RMQ_REMOTING_JSON, 12, f, sizeof f / sizeof f[0], NULL, 0, r);
}

/* Asserts r's body holds n messages (V1 layout, body CRC) with these bodies, newest first. */
static void check_query_body(const rem_resp_t *r, size_t n, const char *const *bodies)
{
    size_t off = 0;
    for (size_t i = 0; i < n; i++) {
        rmq_record_t rec;
        ck_assert_int_eq(rmq_record_decode(r->msg.body + off, r->msg.body_len - off, 0, &rec), RMQ_OK);
        ck_assert_int_eq((int32_t)rec.crc, fr_rm_body_crc(rec.body, rec.body_len));
        ck_assert_uint_eq(rec.body_len, strlen(bodies[i]));
        ck_assert(memcmp(rec.body, bodies[i], rec.body_len) == 0);
        off += rec.total_size;
    }
    ck_assert_uint_eq(off, r->msg.body_len);
    ck_assert_int_gt(atoll(rem_field(r, "indexLastUpdatePhyoffset")), 0);
    ck_assert_int_gt(atoll(rem_field(r, "indexLastUpdateTimestamp")), 0);
}

START_TEST(queries)
{
    rem_resp_t r;
    ck_assert_int_eq(send_one(RMQ_REMOTING_JSON, "0", "KEYS\001order-1 shared\002UNIQ_KEY\001UQ1", "first", &r),
                     RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(send_one(RMQ_REMOTING_ROCKETMQ, "1", "KEYS\001shared\002UNIQ_KEY\001UQ2", "second", &r),
                     RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);

    /* the key index is built on dispatch: wait for it */
    int code = RMQ_REMOTING_QUERY_NOT_FOUND;
    for (int i = 0; i < 100 && code == RMQ_REMOTING_QUERY_NOT_FOUND; i++) {
        if ((code = query_call("shared", 0, "32", &r)) == RMQ_REMOTING_QUERY_NOT_FOUND) {
            rem_resp_clear(&r);
            usleep(50000);
        }
    }
    ck_assert_int_eq(code, RMQ_REMOTING_SUCCESS);
    check_query_body(&r, 2, (const char *const[]){"second", "first"});
    rem_resp_clear(&r);
    ck_assert_int_eq(query_call("shared", 0, "1", &r), RMQ_REMOTING_SUCCESS);     /* maxNum honoured */
    check_query_body(&r, 1, (const char *const[]){"second"});
    rem_resp_clear(&r);
    ck_assert_int_eq(query_call("order-1", 0, "32", &r), RMQ_REMOTING_SUCCESS);
    check_query_body(&r, 1, (const char *const[]){"first"});
    rem_resp_clear(&r);
    ck_assert_int_eq(query_call("UQ2", 1, "0", &r), RMQ_REMOTING_SUCCESS);        /* by UNIQ_KEY */
    check_query_body(&r, 1, (const char *const[]){"second"});
    rem_resp_clear(&r);

    ck_assert_int_eq(query_call("nobody", 0, "32", &r), RMQ_REMOTING_QUERY_NOT_FOUND);
    remark_has(&r, "nobody");
    ck_assert_int_gt(atoll(rem_field(&r, "indexLastUpdatePhyoffset")), 0);
    rem_resp_clear(&r);
    ck_assert_int_eq(query_call("shared", 0, "many", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "maxNum");
    rem_resp_clear(&r);
    rmq_remoting_field_t no_key[] = {{"topic", "RemTopic"}, {"maxNum", "32"}};
    ck_assert_int_eq(call(RMQ_REMOTING_ROCKETMQ, 12, no_key, 2, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "key");
    rem_resp_clear(&r);
    rmq_remoting_field_t no_end[] = {{"topic", "RemTopic"}, {"key", "shared"}, {"maxNum", "32"},
                                     {"beginTimestamp", "0"}};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 12, no_end, 4, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "endTimestamp");
    rem_resp_clear(&r);
    hn_case_passed();
}
END_TEST

/* ---- access control ------------------------------------------------------------ */

#define SIGNED_MAX 16

/* A request signed by account key/secret (NULL: unsigned); returns its
 * code, the response in *r (the caller clears it). */
static int signed_call_r(int code, const rmq_remoting_field_t *f, size_t n, const char *body, const char *key,
                         const char *secret, rem_resp_t *r)
{
    rmq_remoting_field_t all[SIGNED_MAX + 2];
    char sig[29];
    ck_assert_uint_le(n, SIGNED_MAX);
    if (n)
        memcpy(all, f, n * sizeof(*f));
    if (key) {
        all[n++] = (rmq_remoting_field_t){"AccessKey", (char *)key};
        rmq_remoting_request_t req = {.fields = all, .n_fields = n, .body = (const uint8_t *)body,
                                      .body_len = body ? strlen(body) : 0};
        rmq_remoting_sign(&req, secret, sig);
        all[n++] = (rmq_remoting_field_t){"Signature", sig};
    }
    return call(RMQ_REMOTING_JSON, code, all, n, body, body ? strlen(body) : 0, r);
}

/* The same, the response dropped. */
static int signed_call(int code, const rmq_remoting_field_t *f, size_t n, const char *body, const char *key,
                       const char *secret)
{
    rem_resp_t r;
    int rc = signed_call_r(code, f, n, body, key, secret, &r);
    rem_resp_clear(&r);
    return rc;
}

START_TEST(acl)
{
    rmq_remoting_field_t sf[] = V2_FIELDS("0", "");
    size_t nsf = sizeof sf / sizeof sf[0];
    ck_assert_int_eq(signed_call(310, sf, nsf, "m", "pub", "pubsecret1"), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(signed_call(310, sf, nsf, "m", "sub", "subsecret1"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(310, sf, nsf, "m", "pub", "wrongsecret"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(310, sf, nsf, "m", NULL, NULL), RMQ_REMOTING_NO_PERMISSION);

    rmq_remoting_field_t pf[] = {{"consumerGroup", "rem_cg"}, {"topic", "RemTopic"}, {"queueId", "0"},
                                 {"queueOffset", "0"}, {"maxMsgNums", "32"}, {"sysFlag", "0"}};
    ck_assert_int_eq(signed_call(11, pf, 6, NULL, "sub", "subsecret1"), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(signed_call(11, pf, 6, NULL, "pub", "pubsecret1"), RMQ_REMOTING_NO_PERMISSION);
    rmq_remoting_field_t other[] = {{"consumerGroup", "rem_other"}, {"topic", "RemTopic"}, {"queueId", "0"},
                                    {"queueOffset", "0"}, {"maxMsgNums", "32"}, {"sysFlag", "0"}};
    ck_assert_int_eq(signed_call(11, other, 6, NULL, "sub", "subsecret1"), RMQ_REMOTING_NO_PERMISSION);

    char hb[1024];
    ck_assert_int_eq(signed_call(34, NULL, 0, heartbeat("client-s", hb, sizeof hb), "sub", "subsecret1"),
                     RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(signed_call(9999, NULL, 0, NULL, NULL, NULL), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(9999, NULL, 0, NULL, "sub", "subsecret1"), RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED);
    hn_case_passed();
}
END_TEST

/* With ACL: a query by key needs SUB on its topic; a view by id SUB on the
 * topic of the record it names; queue locks SUB on their group. */
START_TEST(acl_queries)
{
    rmq_remoting_field_t sf[] = V2_FIELDS("0", "KEYS\001acl-key");
    rem_resp_t r;
    ck_assert_int_eq(signed_call_r(310, sf, sizeof sf / sizeof sf[0], "m", "pub", "pubsecret1", &r),
                     RMQ_REMOTING_SUCCESS);
    char host[RMQ_HOST_TEXT_MAX];
    int64_t phys;
    ck_assert_int_eq(rmq_msg_id_parse(rem_field(&r, "msgId"), host, sizeof host, &phys), RMQ_OK);
    rem_resp_clear(&r);

    rmq_remoting_field_t qf[] = {{"topic", "RemTopic"}, {"key", "acl-key"}, {"maxNum", "32"},
                                 {"beginTimestamp", "0"}, {"endTimestamp", "0"}};
    int code = RMQ_REMOTING_QUERY_NOT_FOUND;
    for (int i = 0; i < 100 && code == RMQ_REMOTING_QUERY_NOT_FOUND; i++)
        if ((code = signed_call(12, qf, 5, NULL, "sub", "subsecret1")) == RMQ_REMOTING_QUERY_NOT_FOUND)
            usleep(50000);
    ck_assert_int_eq(code, RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(signed_call(12, qf, 5, NULL, "pub", "pubsecret1"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(12, qf, 5, NULL, NULL, NULL), RMQ_REMOTING_NO_PERMISSION);

    char off[24];
    snprintf(off, sizeof off, "%lld", (long long)phys);
    rmq_remoting_field_t vf = {"offset", off};
    ck_assert_int_eq(signed_call(33, &vf, 1, NULL, "sub", "subsecret1"), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(signed_call(33, &vf, 1, NULL, "pub", "pubsecret1"), RMQ_REMOTING_NO_PERMISSION);

    char body[512];
    lock_body("client-s", MQ("RemTopic", 0), body, sizeof body);
    ck_assert_int_eq(signed_call(41, NULL, 0, body, "sub", "subsecret1"), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(signed_call(42, NULL, 0, body, "sub", "subsecret1"), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(signed_call(41, NULL, 0, body, "pub", "pubsecret1"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(42, NULL, 0, body, "pub", "pubsecret1"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(41, NULL, 0, body, NULL, NULL), RMQ_REMOTING_NO_PERMISSION);
    hn_case_passed();
}
END_TEST

/* ---- send-back and transactions ------------------------------------------------ */

static void tx_setup(void)
{
    case_dir = hn_case_begin("remoting_broker_tx");
    daemons_start("transactionTimeOut=1000\ntransactionCheckInterval=300\nmessageDelayLevel=1s 1s 1s 1s 1s 1s\n");
    topic_create();
}

/* The commit-log offset named by the msgId of a send response, as text. */
static void sent_offset(const rem_resp_t *r, char *off, size_t len)
{
    char host[RMQ_HOST_TEXT_MAX];
    int64_t phys;
    ck_assert_int_eq(rmq_msg_id_parse(rem_field(r, "msgId"), host, sizeof host, &phys), RMQ_OK);
    snprintf(off, len, "%lld", (long long)phys);
}

/* Sends body to RemTopic queue 0 with props; its commit-log offset (and,
 * when qoff is not NULL, its queue offset) as text. */
static void send_msg(const char *props, const char *body, char off[24], char *qoff)
{
    rem_resp_t r;
    ck_assert_int_eq(send_one(RMQ_REMOTING_JSON, "0", props, body, &r), RMQ_REMOTING_SUCCESS);
    sent_offset(&r, off, 24);
    if (qoff)
        snprintf(qoff, 24, "%s", rem_field(&r, "queueOffset"));
    rem_resp_clear(&r);
}

/* GET_MAX_OFFSET of topic queue qid. */
static long long max_offset(const char *topic, const char *qid)
{
    rem_resp_t r;
    rmq_remoting_field_t f[] = {{"topic", (char *)topic}, {"queueId", (char *)qid}};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 30, f, 2, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    long long v = atoll(rem_field(&r, "offset"));
    rem_resp_clear(&r);
    return v;
}

/* Pulls the message at offset of topic queue 0, waiting up to 10 s for it
 * (a delayed copy); *rec points into r (the caller clears it). */
static void pull_wait(const char *topic, const char *offset, rem_resp_t *r, rmq_record_t *rec)
{
    int fd = rem_connect(bk_addr);
    long long t0 = hn_now_ms();
    while (pull_topic(fd, topic, "0", offset, "0", "0", r) != RMQ_REMOTING_SUCCESS) {
        ck_assert_msg(hn_now_ms() - t0 < 10000, "no message at %s of %s: %d %s", offset, topic, r->msg.code,
                      r->msg.remark);
        rem_resp_clear(r);
        hn_sleep_ms(200);
    }
    close(fd);
    ck_assert_int_eq(rmq_record_decode(r->msg.body, r->msg.body_len, 0, rec), RMQ_OK);
}

/* Asserts property name of rec is value. */
static void prop_is(const rmq_record_t *rec, const char *name, const char *value)
{
    size_t vl = 0;
    const char *v = rmq_props_get(rec->properties, rec->properties_len, name, &vl);
    ck_assert_msg(v && vl == strlen(value) && memcmp(v, value, vl) == 0, "property %s is '%.*s', not '%s'", name,
                  v ? (int)vl : 6, v ? v : "absent", value);
}

/* CONSUMER_SEND_MSG_BACK of the message at off for rem_cg. */
static int send_back(const char *off, const char *level, const char *max, rem_resp_t *r)
{
    rmq_remoting_field_t f[] = {{"offset", (char *)off}, {"group", "rem_cg"}, {"delayLevel", (char *)level},
                                {"originMsgId", "SB1"}, {"originTopic", "RemTopic"}, {"unitMode", "false"},
                                {"maxReconsumeTimes", (char *)max}};
    return call(RMQ_REMOTING_ROCKETMQ, 36, f, sizeof f / sizeof f[0], NULL, 0, r);
}

START_TEST(send_back_retry_dlq)
{
    rem_resp_t r, p;
    rmq_record_t rec;
    char off[24], retry1[24], retry2[24];
    send_msg("TAGS\001TagA\002UNIQ_KEY\001SB1", "retry me", off, NULL);

    /* delayLevel 0, never consumed again yet: level 3 + 0, onto %RETRY%rem_cg */
    ck_assert_int_eq(send_back(off, "0", "2", &r), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(r.msg.serialize_type, RMQ_REMOTING_ROCKETMQ);
    rem_resp_clear(&r);
    ck_assert_int_eq(max_offset(RMQ_TOPIC_SCHEDULE, "2"), 1);
    pull_wait("%RETRY%rem_cg", "0", &p, &rec);
    ck_assert_int_eq(rec.reconsume_times, 1);
    ck_assert_uint_eq(rec.body_len, 8);
    ck_assert(memcmp(rec.body, "retry me", 8) == 0);
    prop_is(&rec, RMQ_PROP_RETRY_TOPIC, "RemTopic");
    prop_is(&rec, RMQ_PROP_ORIGIN_MESSAGE_ID, "SB1");
    prop_is(&rec, RMQ_PROP_TAGS, "TagA");
    snprintf(retry1, sizeof retry1, "%lld", (long long)rec.phys_offset);
    rem_resp_clear(&p);

    /* the retry copy fails again: level 3 + 1 */
    ck_assert_int_eq(send_back(retry1, "0", "2", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(max_offset(RMQ_TOPIC_SCHEDULE, "3"), 1);
    pull_wait("%RETRY%rem_cg", "1", &p, &rec);
    ck_assert_int_eq(rec.reconsume_times, 2);
    prop_is(&rec, RMQ_PROP_RETRY_TOPIC, "RemTopic");
    snprintf(retry2, sizeof retry2, "%lld", (long long)rec.phys_offset);
    rem_resp_clear(&p);

    /* consumed twice, maxReconsumeTimes 2: the dead-letter topic, at once */
    ck_assert_int_eq(send_back(retry2, "0", "2", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(max_offset("%DLQ%rem_cg", "0"), 1);
    pull_wait("%DLQ%rem_cg", "0", &p, &rec);
    ck_assert_int_eq(rec.reconsume_times, 3);
    ck_assert(memcmp(rec.body, "retry me", 8) == 0);
    prop_is(&rec, RMQ_PROP_RETRY_TOPIC, "RemTopic");
    prop_is(&rec, RMQ_PROP_ORIGIN_MESSAGE_ID, "SB1");
    rem_resp_clear(&p);

    /* a negative level: straight to the DLQ; a level given: that level */
    ck_assert_int_eq(send_back(off, "-1", "16", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(max_offset("%DLQ%rem_cg", "0"), 2);
    ck_assert_int_eq(send_back(off, "2", "16", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(max_offset(RMQ_TOPIC_SCHEDULE, "1"), 1);
    hn_case_passed();
}
END_TEST

START_TEST(send_back_bad_requests)
{
    rem_resp_t r;
    char off[24];
    send_msg("", "x", off, NULL);
    rmq_remoting_field_t no_group[] = {{"offset", off}, {"delayLevel", "0"}};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 36, no_group, 2, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "group");
    rem_resp_clear(&r);
    rmq_remoting_field_t no_level[] = {{"offset", off}, {"group", "rem_cg"}};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 36, no_level, 2, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "delayLevel");
    rem_resp_clear(&r);
    ck_assert_int_eq(send_back("abc", "0", "2", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "offset");
    rem_resp_clear(&r);
    ck_assert_int_eq(send_back("-5", "0", "2", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "offset");
    rem_resp_clear(&r);
    ck_assert_int_eq(send_back(off, "0", "many", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "maxReconsumeTimes");
    rem_resp_clear(&r);
    ck_assert_int_eq(send_back("999999999", "0", "2", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "999999999");
    rem_resp_clear(&r);
    rmq_remoting_field_t bad_group[] = {{"offset", off}, {"group", "bad group!"}, {"delayLevel", "0"}};
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 36, bad_group, 3, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "bad group!");
    rem_resp_clear(&r);
    ck_assert_int_eq(max_offset("%RETRY%rem_cg", "0"), 0);
    hn_case_passed();
}
END_TEST

#define HALF_PROPS(uniq) "TRAN_MSG\001true\002PGROUP\001rem_txg\002UNIQ_KEY\001" uniq

/* END_TRANSACTION fields (fromTransactionCheck from_check, commitOrRollback type). */
#define END_FIELDS(group, qoff, off, type, from_check, msg_id)                                                  \
    {{"producerGroup", (char *)(group)}, {"tranStateTableOffset", (char *)(qoff)}, {"commitLogOffset", (char *)(off)}, \
     {"commitOrRollback", (char *)(type)}, {"fromTransactionCheck", (char *)(from_check)}, {"msgId", (char *)(msg_id)}}

static int end_tx(const char *group, const char *qoff, const char *off, const char *type, const char *msg_id,
                  rem_resp_t *r)
{
    rmq_remoting_field_t f[] = END_FIELDS(group, qoff, off, type, "false", msg_id);
    return call(RMQ_REMOTING_JSON, 37, f, sizeof f / sizeof f[0], NULL, 0, r);
}

/* Waits up to 10 s for a CHECK_TRANSACTION_STATE pushed on fd (nothing else may arrive). */
static void check_back_wait(int fd, rem_resp_t *r)
{
    ck_assert_int_eq(rem_recv_frame(fd, r, 10000), 0);
    ck_assert_int_eq(r->msg.code, 39);
    ck_assert(r->msg.flags & RMQ_REMOTING_FLAG_ONEWAY);
    ck_assert(!(r->msg.flags & RMQ_REMOTING_FLAG_RESPONSE));
}

START_TEST(end_transaction)
{
    rem_resp_t r;
    rmq_record_t rec;
    char commit[24], commit_q[24], roll[24], roll_q[24], unk[24], unk_q[24];
    const char *hb = "{\"clientID\":\"tx-producer\",\"producerDataSet\":[{\"groupName\":\"rem_txg\"}],"
                     "\"consumerDataSet\":[]}";
    int producer = rem_connect(bk_addr);
    ck_assert_int_eq(call_on(producer, RMQ_REMOTING_JSON, 34, NULL, 0, hb, strlen(hb), &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);

    send_msg(HALF_PROPS("TXC"), "commit me", commit, commit_q);
    send_msg(HALF_PROPS("TXR"), "roll me back", roll, roll_q);
    send_msg(HALF_PROPS("TXU"), "ask me later", unk, unk_q);
    ck_assert_int_eq(max_offset("RemTopic", "0"), 0);        /* halves are invisible */

    ck_assert_int_eq(end_tx("rem_txg", commit_q, commit, "8", "TXC", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(max_offset("RemTopic", "0"), 1);
    pull_wait("RemTopic", "0", &r, &rec);
    ck_assert_uint_eq(rec.body_len, 9);
    ck_assert(memcmp(rec.body, "commit me", 9) == 0);
    prop_is(&rec, RMQ_PROP_UNIQ_KEY, "TXC");
    rem_resp_clear(&r);
    /* again: nothing new */
    ck_assert_int_eq(end_tx("rem_txg", commit_q, commit, "8", "TXC", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(end_tx("rem_txg", roll_q, roll, "12", "TXR", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(end_tx("rem_txg", unk_q, unk, "0", "TXU", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(max_offset("RemTopic", "0"), 1);

    /* the unknown one is checked back on the producer's connection, in its encoding */
    check_back_wait(producer, &r);
    ck_assert_int_eq(r.msg.serialize_type, RMQ_REMOTING_JSON);
    ck_assert_str_eq(rem_field(&r, "commitLogOffset"), unk);
    ck_assert_str_eq(rem_field(&r, "tranStateTableOffset"), unk_q);
    ck_assert_str_eq(rem_field(&r, "msgId"), "TXU");
    ck_assert_int_eq(rmq_record_decode(r.msg.body, r.msg.body_len, 0, &rec), RMQ_OK);
    ck_assert_int_eq((int32_t)rec.crc, fr_rm_body_crc(rec.body, rec.body_len));
    ck_assert(memcmp(rec.body, "ask me later", 12) == 0);
    prop_is(&rec, RMQ_PROP_PRODUCER_GROUP, "rem_txg");
    ck_assert_uint_eq(rec.topic_len, strlen("RemTopic"));       /* under its real topic, as RocketMQ sends it */
    ck_assert(memcmp(rec.topic, "RemTopic", rec.topic_len) == 0);
    ck_assert_int_eq(rec.queue_id, 0);
    rem_resp_clear(&r);

    /* the producer answers oneway, as the Java client does: committed, no response */
    rmq_remoting_field_t ans[] = END_FIELDS("rem_txg", unk_q, unk, "8", "true", "TXU");
    rem_send(producer, RMQ_REMOTING_JSON, 37, 11, RMQ_REMOTING_FLAG_ONEWAY, ans, sizeof ans / sizeof ans[0], NULL, 0);
    long long t0 = hn_now_ms();
    while (max_offset("RemTopic", "0") < 2 && hn_now_ms() - t0 < 10000)
        hn_sleep_ms(100);
    ck_assert_int_eq(max_offset("RemTopic", "0"), 2);
    pull_wait("RemTopic", "1", &r, &rec);
    ck_assert(memcmp(rec.body, "ask me later", 12) == 0);
    rem_resp_clear(&r);
    /* resolved: no more check-backs, no response to the oneway answer */
    ck_assert_int_eq(rem_recv_frame(producer, &r, 1500), -1);
    close(producer);
    ck_assert_int_eq(max_offset("RemTopic", "0"), 2);         /* the rolled-back one never appears */
    hn_case_passed();
}
END_TEST

START_TEST(end_transaction_bad_requests)
{
    rem_resp_t r;
    char half[24], half_q[24], plain[24];
    send_msg(HALF_PROPS("TXB"), "b", half, half_q);
    send_msg("", "plain", plain, NULL);
    static const char *const need[] = {"producerGroup", "tranStateTableOffset", "commitLogOffset",
                                       "commitOrRollback", "msgId"};
    for (size_t i = 0; i < sizeof need / sizeof need[0]; i++) {
        rmq_remoting_field_t f[] = END_FIELDS("rem_txg", half_q, half, "8", "false", "TXB");
        rmq_remoting_field_t keep[6];
        size_t n = 0;
        for (size_t j = 0; j < 6; j++)
            if (strcmp(f[j].key, need[i]) != 0)
                keep[n++] = f[j];
        ck_assert_int_eq(call(RMQ_REMOTING_ROCKETMQ, 37, keep, n, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
        remark_has(&r, need[i]);
        rem_resp_clear(&r);
    }
    ck_assert_int_eq(end_tx("rem_txg", half_q, "-1", "8", "TXB", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "commitLogOffset");
    rem_resp_clear(&r);
    ck_assert_int_eq(end_tx("rem_txg", half_q, half, "5", "TXB", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "commitOrRollback");
    rem_resp_clear(&r);
    rmq_remoting_field_t maybe[] = END_FIELDS("rem_txg", half_q, half, "8", "maybe", "TXB");
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 37, maybe, 6, NULL, 0, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "fromTransactionCheck");
    rem_resp_clear(&r);
    ck_assert_int_eq(end_tx("rem_txg", half_q, "999999999", "8", "TXB", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "no half message");
    rem_resp_clear(&r);
    ck_assert_int_eq(end_tx("rem_txg", "0", plain, "8", "TXB", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "not a half message");
    rem_resp_clear(&r);
    ck_assert_int_eq(end_tx("rem_other", half_q, half, "8", "TXB", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "rem_other");
    rem_resp_clear(&r);

    /* a oneway request gets no answer, not even an error: the next answer on
     * the connection is the next request's */
    int fd = rem_connect(bk_addr);
    rmq_remoting_field_t bad[] = END_FIELDS("rem_txg", half_q, half, "5", "false", "TXB");
    rem_send(fd, RMQ_REMOTING_JSON, 37, 21, RMQ_REMOTING_FLAG_ONEWAY, bad, 6, NULL, 0);
    rem_send(fd, RMQ_REMOTING_JSON, 37, 22, 0, bad, 6, NULL, 0);
    ck_assert_int_eq(rem_recv(fd, &r, 10000), 0);
    ck_assert_int_eq(r.msg.opaque, 22);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SYSTEM_ERROR);
    rem_resp_clear(&r);
    close(fd);
    ck_assert_int_eq(max_offset("RemTopic", "0"), 1);         /* only the plain message */
    hn_case_passed();
}
END_TEST

/* Under ACL: a send-back needs SUB on its group, then SUB on the topic of
 * the message it names; ending a transaction needs PUB on the half's real topic. */
START_TEST(acl_tx)
{
    rem_resp_t r;
    char off[24], half[24], half_q[24];
    rmq_remoting_field_t sf[] = V2_FIELDS("0", "");
    ck_assert_int_eq(signed_call_r(310, sf, sizeof sf / sizeof sf[0], "m", "pub", "pubsecret1", &r),
                     RMQ_REMOTING_SUCCESS);
    sent_offset(&r, off, sizeof off);
    rem_resp_clear(&r);
    rmq_remoting_field_t bf[] = {{"offset", off}, {"group", "rem_cg"}, {"delayLevel", "0"}};
    ck_assert_int_eq(signed_call(36, bf, 3, NULL, "pub", "pubsecret1"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call_r(36, bf, 3, NULL, "back", "backsecret1", &r), RMQ_REMOTING_NO_PERMISSION);
    remark_has(&r, "RemTopic");
    rem_resp_clear(&r);
    ck_assert_int_eq(signed_call(36, bf, 3, NULL, "sub", "subsecret1"), RMQ_REMOTING_SUCCESS);

    rmq_remoting_field_t hf[] = V2_FIELDS("0", HALF_PROPS("TXA"));
    ck_assert_int_eq(signed_call_r(310, hf, sizeof hf / sizeof hf[0], "h", "pub", "pubsecret1", &r),
                     RMQ_REMOTING_SUCCESS);
    sent_offset(&r, half, sizeof half);
    snprintf(half_q, sizeof half_q, "%s", rem_field(&r, "queueOffset"));
    rem_resp_clear(&r);
    rmq_remoting_field_t ef[] = END_FIELDS("rem_txg", half_q, half, "8", "false", "TXA");
    ck_assert_int_eq(signed_call_r(37, ef, 6, NULL, "sub", "subsecret1", &r), RMQ_REMOTING_NO_PERMISSION);
    remark_has(&r, "RemTopic");
    rem_resp_clear(&r);
    ck_assert_int_eq(signed_call(37, ef, 6, NULL, NULL, NULL), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(37, ef, 6, NULL, "pub", "pubsecret1"), RMQ_REMOTING_SUCCESS);
    hn_case_passed();
}
END_TEST

/* ---- back-pressure ----------------------------------------------------------- */

#define BUSY_TOTAL 3000
#define BUSY_WINDOW 256

START_TEST(send_busy)
{
    rmq_remoting_field_t f[] = V2_FIELDS("0", "");
    int fd = rem_connect(bk_addr), sent = 0, answered = 0, acked = 0, busy = 0;
    rem_resp_t r;
    while (answered < BUSY_TOTAL) {
        while (sent < BUSY_TOTAL && sent - answered < BUSY_WINDOW)
            rem_send(fd, RMQ_REMOTING_JSON, 310, sent++, 0, f, sizeof f / sizeof f[0], "burst", 5);
        ck_assert_int_eq(rem_recv(fd, &r, 20000), 0);
        if (r.msg.code == RMQ_REMOTING_SUCCESS) {
            acked++;
        } else {
            ck_assert_int_eq(r.msg.code, 2);
            remark_has(&r, "[OVERLOAD]");
            remark_has(&r, "sendQueueCapacity=8");
            busy++;
        }
        answered++;
        rem_resp_clear(&r);
    }
    close(fd);
    fprintf(stderr, "# remoting flow control: %d acked, %d SYSTEM_BUSY of %d (sendQueueCapacity=8, window %d)\n",
            acked, busy, BUSY_TOTAL, BUSY_WINDOW);
    ck_assert_int_gt(busy, 0);
    ck_assert_int_gt(acked, 0);
    ck_assert_int_eq(send_one(RMQ_REMOTING_ROCKETMQ, "1", "", "after", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    hn_case_passed();
}
END_TEST

/* QUERY_CONSUMER_OFFSET of rem_cg on RemTopic queue 1. */
static int offset_query(rem_resp_t *r)
{
    rmq_remoting_field_t q[] = {{"consumerGroup", "rem_cg"}, {"topic", "RemTopic"}, {"queueId", "1"}};
    return call(RMQ_REMOTING_JSON, 14, q, 3, NULL, 0, r);
}

START_TEST(offset_query_new_group)
{
    rem_resp_t r;
    ck_assert_int_eq(offset_query(&r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "offset"), "0");
    rem_resp_clear(&r);
    ck_assert_int_eq(send_one(RMQ_REMOTING_JSON, "1", "", "first", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(offset_query(&r), RMQ_REMOTING_SUCCESS);   /* its head ends the log */
    ck_assert_str_eq(rem_field(&r, "offset"), "0");
    rem_resp_clear(&r);
    /* with accessMessageInMemoryMaxRatio=0, a head behind the log's end is
     * "in disk": the client chooses where a new group starts */
    ck_assert_int_eq(send_one(RMQ_REMOTING_JSON, "1", "", "second", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    int code = RMQ_REMOTING_SUCCESS;
    for (int i = 0; i < 100 && code == RMQ_REMOTING_SUCCESS; i++) {      /* until dispatched */
        if ((code = offset_query(&r)) == RMQ_REMOTING_SUCCESS) {
            rem_resp_clear(&r);
            usleep(50 * 1000);
        }
    }
    ck_assert_int_eq(code, RMQ_REMOTING_QUERY_NOT_FOUND);
    remark_has(&r, "rem_cg");
    rem_resp_clear(&r);
    hn_case_passed();
}
END_TEST

static Suite *remoting_broker_suite(void)
{
    Suite *s = suite_create("remoting_broker");
    TCase *tc = tcase_create("remoting_broker");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, send_pull);
    tcase_add_test(tc, bad_requests);
    tcase_add_test(tc, clients);
    tcase_add_test(tc, locks);
    tcase_add_test(tc, queries);
    tcase_add_test(tc, sql92_disabled);
    suite_add_tcase(s, tc);
    TCase *ta = tcase_create("remoting_broker_acl");
    tcase_add_checked_fixture(ta, acl_setup, teardown);
    tcase_set_timeout(ta, 120);
    tcase_add_test(ta, acl);
    tcase_add_test(ta, acl_queries);
    tcase_add_test(ta, acl_tx);
    suite_add_tcase(s, ta);
    TCase *tt = tcase_create("remoting_broker_tx");
    tcase_add_checked_fixture(tt, tx_setup, teardown);
    tcase_set_timeout(tt, 120);
    tcase_add_test(tt, send_back_retry_dlq);
    tcase_add_test(tt, send_back_bad_requests);
    tcase_add_test(tt, end_transaction);
    tcase_add_test(tt, end_transaction_bad_requests);
    suite_add_tcase(s, tt);
    TCase *tb = tcase_create("remoting_broker_busy");
    tcase_add_checked_fixture(tb, busy_setup, teardown);
    tcase_set_timeout(tb, 120);
    tcase_add_test(tb, send_busy);
    suite_add_tcase(s, tb);
    TCase *tq = tcase_create("remoting_broker_sql92");
    tcase_add_checked_fixture(tq, sql92_setup, teardown);
    tcase_set_timeout(tq, 120);
    tcase_add_test(tq, sql92);
    suite_add_tcase(s, tq);

    TCase *to = tcase_create("remoting_broker_cold");
    tcase_add_checked_fixture(to, cold_setup, teardown);
    tcase_set_timeout(to, 120);
    tcase_add_test(to, offset_query_new_group);
    suite_add_tcase(s, to);
    return s;
}

int main(void)
{
    return hn_run_suite(remoting_broker_suite());
}
