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
 * for its suspendTimeoutMillis, and is answered at once when a message
 * arrives.
 *
 * bad_requests: a missing or non-numeric field, a queue id out of range,
 * an illegal topic name, an oversize body, a malformed batch body, an
 * unknown code, a bad heartbeat body each get a clear code and a remark
 * naming what was wrong; a frame over maxFrameSize closes the connection.
 *
 * clients: consumer offsets (QUERY_NOT_FOUND, then what was committed),
 * GET_MAX_OFFSET, heartbeats of two clients of one group listed by
 * GET_CONSUMER_LIST_BY_GROUP, the first told NOTIFY_CONSUMER_IDS_CHANGED
 * when the second joins, and UNREGISTER_CLIENT leaving the group.
 *
 * acl: with aclEnable, ACL 1.0 signatures are checked against what each
 * code needs: a send needs PUB on its topic, a pull SUB on its topic and
 * its group; a heartbeat any account; unsigned requests and codes without
 * a handler (admin) are refused with NO_PERMISSION.
 *
 * send_busy: with SYNC_FLUSH and sendQueueCapacity=8, a window of 256
 * pipelined sends on one connection is answered partly SYSTEM_BUSY (2,
 * RocketMQ's "[OVERLOAD]" remark), as the native front answers its sends;
 * every send gets an answer, none fails otherwise, and a send after the
 * burst succeeds. */
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

static void setup(void)
{
    case_dir = hn_case_begin("remoting_broker");
    daemons_start("");
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, "RemTopic", QUEUES);
    ck_assert_int_eq(wire_call(bk_addr, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
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
                                        "account.sub.groupPerms=rem_cg=SUB\n",
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

static int pull(int fd, const char *qid, const char *offset, const char *sys_flag, const char *suspend_ms,
                rem_resp_t *r)
{
    rmq_remoting_field_t f[] = {
        {"consumerGroup", "rem_cg"}, {"topic", "RemTopic"}, {"queueId", (char *)qid},
        {"queueOffset", (char *)offset}, {"maxMsgNums", "32"}, {"sysFlag", (char *)sys_flag},
        {"commitOffset", "0"}, {"suspendTimeoutMillis", (char *)suspend_ms}, {"subVersion", "0"},
        {"expressionType", "TAG"},
    };
    return call_on(fd, RMQ_REMOTING_JSON, 11, f, sizeof f / sizeof f[0], NULL, 0, r);
}

/* ---- send and pull ---------------------------------------------------------- */

/* Checks one pulled message against what was sent: V1 layout, body CRC. */
static size_t check_message(const uint8_t *p, size_t len, const char *body, int64_t qoff)
{
    rmq_record_t rec;
    ck_assert_int_eq(rmq_record_decode(p, len, 0, &rec), RMQ_OK);
    ck_assert_uint_eq(rec.total_size, rmq_record_size(rec.body_len, rec.topic_len, rec.properties_len));
    ck_assert_int_eq((int32_t)rec.crc, fr_rm_body_crc(rec.body, rec.body_len));
    ck_assert_int_eq(rec.sys_flag & (FR_RM_SYSFLAG_BORNHOST_V6 | FR_RM_SYSFLAG_STOREHOST_V6), 0);
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
    uint32_t ip;
    uint16_t port;
    int64_t phys;
    ck_assert_int_eq(st_msg_id_parse(msg_id, &ip, &port, &phys), RMQ_OK);
    char host[64];
    snprintf(host, sizeof host, "%u.%u.%u.%u:%u", ip >> 24, (ip >> 16) & 255, (ip >> 8) & 255, ip & 255, port);
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

    /* a batch of three */
    uint8_t batch[512];
    size_t blen = 0;
    const char *bodies[] = {"b0", "b1", "b2"};
    for (int i = 0; i < 3; i++) {
        rmq_batch_entry_t e = {0, (const uint8_t *)bodies[i], 2, "TAGS\001TagB", 9};
        blen += fr_rm_batch_encode(&e, batch + blen);
    }
    rmq_remoting_field_t bf[] = V2_FIELDS("1", "");
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
    for (int i = 0; i < 3; i++)
        at += check_message(r.msg.body + at, r.msg.body_len - at, bodies[i], 1 + i);
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
    ck_assert_int_eq(call(RMQ_REMOTING_JSON, 14, q, 3, NULL, 0, &r), RMQ_REMOTING_QUERY_NOT_FOUND);
    remark_has(&r, "rem_cg");
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

/* ---- access control ------------------------------------------------------------ */

#define SIGNED_MAX 16

/* A request signed by account key/secret (NULL: unsigned); returns its code. */
static int signed_call(int code, const rmq_remoting_field_t *f, size_t n, const char *body, const char *key,
                       const char *secret)
{
    rmq_remoting_field_t all[SIGNED_MAX + 2];
    char sig[29];
    rem_resp_t r;
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
    int rc = call(RMQ_REMOTING_JSON, code, all, n, body, body ? strlen(body) : 0, &r);
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
    ck_assert_int_eq(signed_call(9999, NULL, 0, NULL, "sub", "subsecret1"), RMQ_REMOTING_NO_PERMISSION);
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

static Suite *remoting_broker_suite(void)
{
    Suite *s = suite_create("remoting_broker");
    TCase *tc = tcase_create("remoting_broker");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, send_pull);
    tcase_add_test(tc, bad_requests);
    tcase_add_test(tc, clients);
    suite_add_tcase(s, tc);
    TCase *ta = tcase_create("remoting_broker_acl");
    tcase_add_checked_fixture(ta, acl_setup, teardown);
    tcase_set_timeout(ta, 120);
    tcase_add_test(ta, acl);
    suite_add_tcase(s, ta);
    TCase *tb = tcase_create("remoting_broker_busy");
    tcase_add_checked_fixture(tb, busy_setup, teardown);
    tcase_set_timeout(tb, 120);
    tcase_add_test(tb, send_busy);
    suite_add_tcase(s, tb);
    return s;
}

int main(void)
{
    return hn_run_suite(remoting_broker_suite());
}
