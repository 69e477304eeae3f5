/* test_perm.c: one permission table for every front-end (issue 33 items
 * 4-8), against a real broker with aclEnable=true.
 *
 * every_remoting_code, every_native_code: each code a front serves (its
 * table: fr_remoting.c, fr_routes.c) maps to a core operation whose right
 * is declared (bk_perm.c), and an account with no right at all, asking it
 * of a topic, a group and a record that exist, is refused NO_PERMISSION
 * unless that right is only a valid signature; an admin is never refused.
 * Every code 0..1023 a front answers with anything but "not supported" is
 * in its table. A code served without a declared permission fails here.
 *
 * send_checks_the_stored_topic (item 4): a remoting send naming topic=T
 * and the V2 alias b=V is checked on V, where it would be stored (codes
 * 10, 310, 320), and V is not auto-created.
 * heartbeat_needs_its_groups (item 5): SUB on each consumer group, PUB on
 * each producer group, as the native front asks.
 * unregister_only_own (item 6): UNREGISTER_CLIENT from another connection
 * leaves a client of another session registered.
 * reads_need_rights (item 7): codes 21, 29-31, 41/42, 201-203, 208, 300
 * and 351 are refused to an account without SUB there (admin for the
 * listings), allowed with it.
 * batch_refuses_tx_and_delay (item 8): a batch holding a TRAN_MSG, DELAY
 * or delivery-time message is refused MESSAGE_ILLEGAL with a remark naming
 * it, over remoting and over the native protocol; nothing is stored. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bk_perm.h"
#include "fr_remoting.h"
#include "fr_remoting_wire.h"
#include "fr_routes.h"
#include "harness.h"
#include "remwire.h"
#include "rmq_acl.h"
#include "rmq_message.h"
#include "wire.h"

#define TOPIC "PermTopic"
#define CG "perm_cg"
#define PG "perm_pg"
#define CODES_PROBED 1024
#define FIELDS_MAX 48
#define RM_MESSAGE_ILLEGAL 13         /* RocketMQ ResponseCode.MESSAGE_ILLEGAL */

static const char acl_text[] =
    "account.adm.secretKey=adm-secret-1\n"
    "account.adm.admin=true\n"
    "account.none.secretKey=none-secret-1\n"
    "account.pub.secretKey=pub-secret-1\n"
    "account.pub.topicPerms=" TOPIC "=PUB\n"
    "account.pub.groupPerms=" PG "=PUB\n"
    "account.sub.secretKey=sub-secret-1\n"
    "account.sub.topicPerms=" TOPIC "=SUB\n"
    "account.sub.groupPerms=" CG "=SUB\n";

static const char *case_dir;
static char ns_addr[64], bk_addr[64];
static hn_daemon_t ns, bk;
static char half_off[24];            /* commit-log offset of a half message of PG to TOPIC */

/* ---- remoting calls ------------------------------------------------------------- */

/* One remoting request on fd signed as key (NULL: unsigned); its code, the
 * response in *r (the caller clears it). */
static int rm_call_on(int fd, int code, const rmq_remoting_field_t *f, size_t n, const void *body, size_t len,
                      const char *key, rem_resp_t *r)
{
    rmq_remoting_field_t all[FIELDS_MAX + 2];
    char secret[64], sig[29];
    ck_assert_uint_le(n, FIELDS_MAX);
    if (n)
        memcpy(all, f, n * sizeof(*f));
    if (key) {
        snprintf(secret, sizeof secret, "%s-secret-1", key);
        all[n++] = (rmq_remoting_field_t){"AccessKey", (char *)key};
        rmq_remoting_request_t req = {.fields = all, .n_fields = n, .body = body, .body_len = len};
        rmq_remoting_sign(&req, secret, sig);
        all[n++] = (rmq_remoting_field_t){"Signature", sig};
    }
    rem_send(fd, RMQ_REMOTING_JSON, code, 9, 0, all, n, body, len);
    for (;;) {
        ck_assert_int_eq(rem_recv_frame(fd, r, 20000), 0);
        if (r->msg.flags & RMQ_REMOTING_FLAG_RESPONSE)
            return r->msg.code;
        rem_resp_clear(r);           /* a notice pushed to a consumer */
    }
}

static int rm_call(int code, const rmq_remoting_field_t *f, size_t n, const void *body, size_t len,
                   const char *key, rem_resp_t *r)
{
    int fd = rem_connect(bk_addr);
    int rc = rm_call_on(fd, code, f, n, body, len, key, r);
    close(fd);
    return rc;
}

/* The same, the response dropped. */
static int rm_code(int code, const rmq_remoting_field_t *f, size_t n, const void *body, size_t len,
                   const char *key)
{
    rem_resp_t r;
    int rc = rm_call(code, f, n, body, len, key, &r);
    rem_resp_clear(&r);
    return rc;
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* SEND_MESSAGE_V2 fields to topic (b) with props (i). */
#define V2(topic, props)                                                                                   \
    {{"a", PG}, {"b", (char *)(topic)}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"}, {"f", "0"},                \
     {"g", "1700000000000"}, {"h", "0"}, {"i", (char *)(props)}, {"j", "0"}}

static const char *heartbeat_body(const char *client, const char *cgroup, const char *pgroup, char *buf,
                                  size_t len)
{
    snprintf(buf, len,
             "{\"clientID\":\"%s\",\"producerDataSet\":[%s%s%s],\"consumerDataSet\":[{\"groupName\":\"%s\","
             "\"consumeType\":\"CONSUME_PASSIVELY\",\"messageModel\":\"CLUSTERING\","
             "\"consumeFromWhere\":\"CONSUME_FROM_FIRST_OFFSET\",\"unitMode\":false,"
             "\"subscriptionDataSet\":[{\"topic\":\"" TOPIC "\",\"subString\":\"*\",\"subVersion\":1,"
             "\"tagsSet\":[],\"codeSet\":[],\"expressionType\":\"TAG\"}]}]}",
             client, pgroup ? "{\"groupName\":\"" : "", pgroup ? pgroup : "", pgroup ? "\"}" : "", cgroup);
    return buf;
}

/* HEART_BEAT of client (consumer group cgroup, producer group pgroup or
 * NULL) signed as key, on fd (-1: a fresh connection); its code, the
 * response in *r (the caller clears it). */
static int hb_call(int fd, const char *client, const char *cgroup, const char *pgroup, const char *key,
                   rem_resp_t *r)
{
    char hb[1024];
    heartbeat_body(client, cgroup, pgroup, hb, sizeof hb);
    if (fd >= 0)
        return rm_call_on(fd, 34, NULL, 0, hb, strlen(hb), key, r);
    return rm_call(34, NULL, 0, hb, strlen(hb), key, r);
}

/* ---- set-up ------------------------------------------------------------------- */

static void setup(void)
{
    char acl[4096], props[8192];
    case_dir = hn_case_begin("perm");
    ck_assert_ptr_nonnull(hn_write_file(case_dir, "acl.properties", acl_text, acl, sizeof acl));
    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    int n = snprintf(props, sizeof props,
                     "brokerClusterName=PermCluster\nbrokerName=broker-a\nbrokerId=0\nlistenPort=0\n"
                     "haListenPort=0\nbrokerRole=ASYNC_MASTER\nstorePathRootDir=%s/store\n"
                     "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\n"
                     "aclEnable=true\naclFile=%s\naclAccessKey=adm\naclSecretKey=adm-secret-1\nrecallMessageEnable=true\n",
                     case_dir, ns_addr, acl);
    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "broker properties do not fit");
    ck_assert_int_eq(hn_daemon_start_conf(&bk, case_dir, "broker/mqbroker", "broker-a", props, bk_addr,
                                          sizeof bk_addr), 0);
    rmq_remoting_field_t tf[] = {{"topic", TOPIC}, {"readQueueNums", "4"}, {"writeQueueNums", "4"},
                                 {"perm", "6"}};
    ck_assert_int_eq(rm_code(17, tf, N(tf), NULL, 0, "adm"), RMQ_REMOTING_SUCCESS);
    rem_resp_t r;
    rmq_remoting_field_t hf[] = V2(TOPIC, "TRAN_MSG\001true\002PGROUP\001" PG);
    ck_assert_int_eq(rm_call(310, hf, N(hf), "half", 4, "adm", &r), RMQ_REMOTING_SUCCESS);
    char host[RMQ_HOST_TEXT_MAX];
    int64_t phys;
    ck_assert_int_eq(rmq_msg_id_parse(rem_field(&r, "msgId"), host, sizeof host, &phys), RMQ_OK);
    snprintf(half_off, sizeof half_off, "%lld", (long long)phys);
    rem_resp_clear(&r);
}

static void teardown(void)
{
    hn_case_end();
}

/* ---- every code of the remoting front ---------------------------------------------- */

/* What a request of any remoting code names, all at once: the topic, the
 * groups, a queue, the half message, names of a new topic and group. */
#define ALL_FIELDS                                                                                           \
    {{"topic", TOPIC}, {"consumerGroup", CG}, {"group", CG}, {"groupName", CG}, {"producerGroup", PG},        \
     {"a", PG}, {"b", TOPIC}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"}, {"f", "0"}, {"g", "0"}, {"h", "0"},    \
     {"i", ""}, {"j", "0"}, {"defaultTopic", "TBW102"}, {"defaultTopicQueueNums", "4"}, {"queueId", "0"},     \
     {"sysFlag", "0"}, {"bornTimestamp", "0"}, {"flag", "0"}, {"properties", ""}, {"reconsumeTimes", "0"},    \
     {"queueOffset", "0"}, {"maxMsgNums", "1"}, {"commitOffset", "0"}, {"offset", half_off},                 \
     {"key", "k"}, {"maxNum", "1"}, {"beginTimestamp", "0"}, {"endTimestamp", "0"}, {"timestamp", "0"},       \
     {"clientID", "walker"}, {"clientId", "walker"}, {"delayLevel", "0"}, {"tranStateTableOffset", "0"},     \
     {"commitLogOffset", half_off}, {"commitOrRollback", "8"}, {"msgId", "m"}, {"readQueueNums", "4"},       \
     {"writeQueueNums", "4"}, {"perm", "6"}, {"invisibleTime", "60000"}, {"pollTime", "0"},                   \
     {"extraInfo", "0 1 60000 0 0 broker-a 0 0 0"}, {"recallHandle", "h"}, {"srcGroup", CG}, {"destGroup", CG}}

/* The body a request of code carries (a heartbeat, a lock, a group, a batch). */
static size_t code_body(int code, char *buf, size_t cap)
{
    switch (code) {
    case 34:
        heartbeat_body("walker", CG, PG, buf, cap);
        break;
    case 41:
    case 42:
        snprintf(buf, cap, "{\"clientId\":\"walker\",\"consumerGroup\":\"" CG "\",\"mqSet\":[{\"brokerName\":"
                 "\"broker-a\",\"queueId\":0,\"topic\":\"" TOPIC "\"}],\"onlyThisBroker\":false}");
        break;
    case 200:
        snprintf(buf, cap, "{\"groupName\":\"" CG "\",\"consumeEnable\":true}");
        break;
    case 400:
        snprintf(buf, cap, "{\"topic\":\"" TOPIC "\",\"consumerGroup\":\"" CG "\",\"clientId\":\"walker\","
                 "\"strategyName\":\"AVG\",\"messageModel\":\"CLUSTERING\"}");
        break;
    case 401:
        snprintf(buf, cap, "{\"topic\":\"" TOPIC "\",\"consumerGroup\":\"" CG "\",\"mode\":\"POP\","
                 "\"popShareQueueNum\":0}");
        break;
    case 200151:
        snprintf(buf, cap, "{\"acks\":[{\"consumerGroup\":\"" CG "\",\"topic\":\"" TOPIC "\",\"retry\":\"0\","
                 "\"startOffset\":0,\"queueId\":0,\"reviveQueueId\":0,\"popTime\":1,\"invisibleTime\":2,"
                 "\"bitSet\":\"AQ==\"}]}");
        break;
    case 320: {
        rmq_batch_entry_t e = {0, (const uint8_t *)"m", 1, "", 0};
        return fr_rm_batch_encode(&e, (uint8_t *)buf);
    }
    default:
        snprintf(buf, cap, "m");
        break;
    }
    return strlen(buf);
}

START_TEST(every_remoting_code)
{
    rmq_remoting_field_t f[] = ALL_FIELDS;
    char body[1024];
    size_t served = 0;
    for (size_t i = 0; fr_rm_route_at(i); i++, served++) {
        const fr_rm_route_t *rt = fr_rm_route_at(i);
        const bk_perm_t *p = bk_perm_of(rt->op);
        ck_assert_msg(rt->op != BK_OP_UNDECLARED && p->needs != BK_RIGHT_UNDECLARED,
                      "remoting code %d serves no operation with a declared permission", rt->code);
        size_t len = code_body(rt->code, body, sizeof body);
        rem_resp_t r;
        int code = rm_call(rt->code, f, N(f), body, len, "none", &r);
        if (p->needs == BK_RIGHT_SIGNED)
            ck_assert_msg(code != RMQ_REMOTING_NO_PERMISSION, "remoting code %d (%s) refused: %s", rt->code,
                          p->name, r.msg.remark);
        else
            ck_assert_msg(code == RMQ_REMOTING_NO_PERMISSION && strstr(r.msg.remark, "account none"),
                          "remoting code %d (%s) answered %d to an account without rights: %s", rt->code, p->name,
                          code, r.msg.remark);
        rem_resp_clear(&r);
        if (rt->code != 207 && rt->code != 215)    /* the admin keeps the group and topic for what follows */
            ck_assert_int_ne(rm_code(rt->code, f, N(f), body, len, "adm"), RMQ_REMOTING_NO_PERMISSION);
    }
    for (int code = 0; code < CODES_PROBED; code++) {
        if (fr_rm_op(code) != BK_OP_UNDECLARED)
            continue;
        ck_assert_msg(rm_code(code, NULL, 0, NULL, 0, "none") == RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED,
                      "remoting code %d is served but not in the front's table", code);
    }
    ck_assert_uint_gt(served, 30);
    hn_case_passed();
}
END_TEST

/* ---- every code of the native front ------------------------------------------------- */

/* Every header a native request may carry, filled for the topic, group and half message. */
typedef struct native_req {
    Rmq__SendMessageRequest send;
    Rmq__PullMessageRequest pull;
    Rmq__ConsumerOffsetRequest offset;
    Rmq__QueueRequest queue;
    Rmq__ViewMessageRequest view;
    Rmq__TopicConfig tc;
    Rmq__TopicConfigTable tct;
    Rmq__TopicRequest topic;
    Rmq__SubscriptionGroupConfig sg;
    Rmq__GroupRequest group;
    Rmq__ConsumeStatsRequest stats;
    Rmq__HeartbeatData hb;
    Rmq__ConsumerData cd;
    Rmq__ConsumerData *cds[1];
    char *pgs[1];
    Rmq__UnregisterClientRequest unreg;
    Rmq__EndTransactionRequest end;
    Rmq__ConsumerSendMsgBackRequest back;
    Rmq__LockBatchRequest lock;
    Rmq__MessageQueue mq;
    Rmq__MessageQueue *mqs[1];
    Rmq__QueryMessageRequest query;
} native_req_t;

/* Fills cmd as a request of code with the header it needs. */
static void native_request(int code, Rmq__Command *cmd, native_req_t *q, long long half)
{
    rmq__command__init(cmd);
    cmd->code = code;
    switch (code) {
    case RMQ__REQUEST_CODE__SEND_MESSAGE:
    case RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE:
        rmq__send_message_request__init(&q->send);
        q->send.topic = TOPIC;
        q->send.producer_group = PG;
        q->send.default_topic = "TBW102";
        cmd->header_case = RMQ__COMMAND__HEADER_SEND;
        cmd->send = &q->send;
        break;
    case RMQ__REQUEST_CODE__PULL_MESSAGE:
        wire_pull_hdr(cmd, &q->pull, CG, TOPIC, 0, 0);
        cmd->pull->suspend_timeout_millis = 0;
        cmd->pull->sys_flag = 0;
        break;
    case RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET:
    case RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET:
        rmq__consumer_offset_request__init(&q->offset);
        q->offset.topic = TOPIC;
        q->offset.consumer_group = CG;
        cmd->header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
        cmd->consumer_offset = &q->offset;
        break;
    case RMQ__REQUEST_CODE__GET_MAX_OFFSET:
    case RMQ__REQUEST_CODE__GET_MIN_OFFSET:
    case RMQ__REQUEST_CODE__GET_EARLIEST_MSG_STORETIME:
    case RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP:
        wire_max_offset_request(cmd, &q->queue, TOPIC, 0);
        cmd->code = code;
        break;
    case RMQ__REQUEST_CODE__VIEW_MESSAGE_BY_ID:
        rmq__view_message_request__init(&q->view);
        q->view.offset = half;
        cmd->header_case = RMQ__COMMAND__HEADER_VIEW_MESSAGE;
        cmd->view_message = &q->view;
        break;
    case RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC:
        wire_topic_request(cmd, &q->tc, TOPIC, 4);
        break;
    case RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC_LIST:
        rmq__topic_config_table__init(&q->tct);
        cmd->header_case = RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE;
        cmd->topic_config_table = &q->tct;
        break;
    case RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER:
    case RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO:
        wire_topic_query(cmd, &q->topic, code, TOPIC);
        break;
    case RMQ__REQUEST_CODE__UPDATE_AND_CREATE_SUBSCRIPTIONGROUP:
        rmq__subscription_group_config__init(&q->sg);
        q->sg.group_name = CG;
        q->sg.consume_enable = 1;
        cmd->header_case = RMQ__COMMAND__HEADER_SUBSCRIPTION_GROUP;
        cmd->subscription_group = &q->sg;
        break;
    case RMQ__REQUEST_CODE__DELETE_SUBSCRIPTIONGROUP:
    case RMQ__REQUEST_CODE__GET_CONSUMER_LIST_BY_GROUP:
        rmq__group_request__init(&q->group);
        q->group.consumer_group = CG;
        cmd->header_case = RMQ__COMMAND__HEADER_GROUP;
        cmd->group = &q->group;
        break;
    case RMQ__REQUEST_CODE__GET_CONSUME_STATS:
        rmq__consume_stats_request__init(&q->stats);
        q->stats.consumer_group = CG;
        cmd->header_case = RMQ__COMMAND__HEADER_CONSUME_STATS_REQ;
        cmd->consume_stats_req = &q->stats;
        break;
    case RMQ__REQUEST_CODE__HEART_BEAT:
        rmq__heartbeat_data__init(&q->hb);
        rmq__consumer_data__init(&q->cd);
        q->cd.group_name = CG;
        q->cds[0] = &q->cd;
        q->pgs[0] = PG;
        q->hb.client_id = "walker";
        q->hb.consumers = q->cds;
        q->hb.n_consumers = 1;
        q->hb.producer_groups = q->pgs;
        q->hb.n_producer_groups = 1;
        cmd->header_case = RMQ__COMMAND__HEADER_HEARTBEAT;
        cmd->heartbeat = &q->hb;
        break;
    case RMQ__REQUEST_CODE__UNREGISTER_CLIENT:
        rmq__unregister_client_request__init(&q->unreg);
        q->unreg.client_id = "walker";
        q->unreg.consumer_group = CG;
        cmd->header_case = RMQ__COMMAND__HEADER_UNREGISTER_CLIENT;
        cmd->unregister_client = &q->unreg;
        break;
    case RMQ__REQUEST_CODE__END_TRANSACTION:
        rmq__end_transaction_request__init(&q->end);
        q->end.producer_group = PG;
        q->end.commit_log_offset = half;
        q->end.state = RMQ__TRANSACTION_STATE__TX_ROLLBACK;
        cmd->header_case = RMQ__COMMAND__HEADER_END_TRANSACTION;
        cmd->end_transaction = &q->end;
        break;
    case RMQ__REQUEST_CODE__CONSUMER_SEND_MSG_BACK:
        rmq__consumer_send_msg_back_request__init(&q->back);
        q->back.group = CG;
        q->back.offset = half;
        cmd->header_case = RMQ__COMMAND__HEADER_SEND_BACK;
        cmd->send_back = &q->back;
        break;
    case RMQ__REQUEST_CODE__LOCK_BATCH_MQ:
    case RMQ__REQUEST_CODE__UNLOCK_BATCH_MQ:
        rmq__lock_batch_request__init(&q->lock);
        rmq__message_queue__init(&q->mq);
        q->mq.topic = TOPIC;
        q->mq.broker_name = "broker-a";
        q->mqs[0] = &q->mq;
        q->lock.consumer_group = CG;
        q->lock.client_id = "walker";
        q->lock.mqs = q->mqs;
        q->lock.n_mqs = 1;
        cmd->header_case = RMQ__COMMAND__HEADER_LOCK_BATCH;
        cmd->lock_batch = &q->lock;
        break;
    case RMQ__REQUEST_CODE__QUERY_MESSAGE:
        rmq__query_message_request__init(&q->query);
        q->query.topic = TOPIC;
        q->query.key = "k";
        q->query.max_num = 1;
        cmd->header_case = RMQ__COMMAND__HEADER_QUERY_MESSAGE;
        cmd->query_message = &q->query;
        break;
    default:                         /* the listings carry no header */
        break;
    }
}

/* A native call signed as cr; the status and remark. */
static int native_call(rmq_acl_credentials_t *cr, Rmq__Command *cmd, char *remark, size_t rlen)
{
    wire_link_t ln = {.opts = {.connect_timeout_ms = 3000, .name = "test", .sign = rmq_acl_signer, .sign_arg = cr},
                      .timeout_ms = WIRE_RPC_TIMEOUT_MS};
    rmq_frame_t resp = {0};
    remark[0] = '\0';
    int st = wire_call_with(&ln, bk_addr, cmd, "m", 1, &resp);
    if (resp.cmd)
        snprintf(remark, rlen, "%s", resp.cmd->remark ? resp.cmd->remark : "");
    rmq_frame_clear(&resp);
    return st;
}

START_TEST(every_native_code)
{
    rmq_acl_credentials_t none = {"none", "none-secret-1"}, adm = {"adm", "adm-secret-1"};
    long long half = atoll(half_off);
    char remark[512];
    size_t served = 0;
    for (size_t i = 0; fr_route_at(i); i++, served++) {
        const fr_route_t *rt = fr_route_at(i);
        const bk_perm_t *p = bk_perm_of(rt->op);
        ck_assert_msg(rt->op != BK_OP_UNDECLARED && p->needs != BK_RIGHT_UNDECLARED,
                      "native code %d serves no operation with a declared permission", rt->code);
        Rmq__Command cmd;
        native_req_t q;
        native_request(rt->code, &cmd, &q, half);
        int st = native_call(&none, &cmd, remark, sizeof remark);
        if (p->needs == BK_RIGHT_SIGNED)
            ck_assert_msg(st != RMQ__STATUS__NO_PERMISSION, "native %s (%s) refused: %s",
                          rmq_request_name(rt->code), p->name, remark);
        else
            ck_assert_msg(st == RMQ__STATUS__NO_PERMISSION && strstr(remark, "account none"),
                          "native %s (%s) answered %d to an account without rights: %s", rmq_request_name(rt->code),
                          p->name, st, remark);
        if (rt->code != RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER &&
            rt->code != RMQ__REQUEST_CODE__DELETE_SUBSCRIPTIONGROUP) {
            native_request(rt->code, &cmd, &q, half);
            ck_assert_int_ne(native_call(&adm, &cmd, remark, sizeof remark), RMQ__STATUS__NO_PERMISSION);
        }
    }
    for (int code = 0; code < CODES_PROBED; code++) {
        if (fr_routes_op(code) != BK_OP_UNDECLARED || !rmq_request_name(code))
            continue;
        Rmq__Command cmd;
        rmq__command__init(&cmd);
        cmd.code = code;
        int st = native_call(&none, &cmd, remark, sizeof remark);
        ck_assert_msg(st == RMQ__STATUS__REQUEST_CODE_NOT_SUPPORTED, "native %s is answered %d (%s) but is not in "
                      "the front's table", rmq_request_name(code), st, remark);
    }
    ck_assert_uint_gt(served, 25);
    hn_case_passed();
}
END_TEST

/* ---- issue 33 items 4-8 over remoting ------------------------------------------------- */

/* Item 4: the send is checked on the topic it is stored in. */
START_TEST(send_checks_the_stored_topic)
{
    rmq_remoting_field_t v1[] = {{"producerGroup", PG}, {"topic", TOPIC}, {"b", "PermVictim"},
                                 {"defaultTopic", "TBW102"}, {"defaultTopicQueueNums", "4"}, {"queueId", "0"},
                                 {"sysFlag", "0"}, {"bornTimestamp", "0"}, {"flag", "0"}, {"reconsumeTimes", "0"}};
    uint8_t batch[64];
    rmq_batch_entry_t e = {0, (const uint8_t *)"m", 1, "", 0};
    size_t blen = fr_rm_batch_encode(&e, batch);
    ck_assert_int_eq(rm_code(10, v1, N(v1), "m", 1, "pub"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(rm_code(310, v1, N(v1), "m", 1, "pub"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(rm_code(320, v1, N(v1), batch, blen, "pub"), RMQ_REMOTING_NO_PERMISSION);
    rmq_remoting_field_t tf = {"topic", "PermVictim"};
    ck_assert_int_eq(rm_code(351, &tf, 1, NULL, 0, "adm"), RMQ_REMOTING_TOPIC_NOT_EXIST);   /* not auto-created */
    rmq_remoting_field_t ok[] = V2(TOPIC, "");
    ck_assert_int_eq(rm_code(310, ok, N(ok), "m", 1, "pub"), RMQ_REMOTING_SUCCESS);
    hn_case_passed();
}
END_TEST

/* Item 5: a heartbeat needs SUB on its consumer groups and PUB on its producer groups. */
START_TEST(heartbeat_needs_its_groups)
{
    rem_resp_t r;
    ck_assert_int_eq(hb_call(-1, "intruder", CG, NULL, "pub", &r), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_msg(strstr(r.msg.remark, "group " CG), "%s", r.msg.remark);
    rem_resp_clear(&r);
    ck_assert_int_eq(hb_call(-1, "intruder", CG, PG, "sub", &r), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_msg(strstr(r.msg.remark, "group " PG), "%s", r.msg.remark);
    rem_resp_clear(&r);
    ck_assert_int_eq(hb_call(-1, "member", CG, NULL, "sub", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    rmq_remoting_field_t gf = {"consumerGroup", CG};
    ck_assert_int_eq(rm_code(38, &gf, 1, NULL, 0, "adm"), RMQ_REMOTING_SYSTEM_ERROR);   /* nobody joined */
    hn_case_passed();
}
END_TEST

/* Item 6: UNREGISTER_CLIENT removes only the calling connection's clients. */
START_TEST(unregister_only_own)
{
    rem_resp_t r;
    int member = rem_connect(bk_addr), other = rem_connect(bk_addr);
    ck_assert_int_eq(hb_call(member, "victim", CG, NULL, "sub", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    rmq_remoting_field_t uf[] = {{"clientID", "victim"}, {"consumerGroup", CG}};
    ck_assert_int_eq(rm_call_on(other, 35, uf, N(uf), NULL, 0, "sub", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    rmq_remoting_field_t gf = {"consumerGroup", CG};
    ck_assert_int_eq(rm_call_on(other, 38, &gf, 1, NULL, 0, "sub", &r), RMQ_REMOTING_SUCCESS);
    ck_assert_msg(r.msg.body_len && memmem(r.msg.body, r.msg.body_len, "victim", 6), "victim was evicted");
    rem_resp_clear(&r);
    ck_assert_int_eq(rm_call_on(member, 35, uf, N(uf), NULL, 0, "sub", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(rm_call_on(other, 38, &gf, 1, NULL, 0, "sub", &r), RMQ_REMOTING_SYSTEM_ERROR);   /* it left */
    rem_resp_clear(&r);
    close(member);
    close(other);
    hn_case_passed();
}
END_TEST

/* Item 7: reads of topics, groups, offsets and consumers need the rights the native front asks. */
START_TEST(reads_need_rights)
{
    static const struct {
        int code;
        const char *allowed;         /* account allowed ("adm": admin only) */
    } reads[] = {
        {21, "adm"}, {29, "sub"}, {30, "sub"}, {31, "sub"}, {41, "sub"}, {42, "sub"}, {201, "adm"},
        {202, "sub"}, {203, "sub"}, {208, "sub"}, {300, "sub"}, {351, "sub"},
    };
    rmq_remoting_field_t f[] = ALL_FIELDS;
    char body[1024];
    int member = rem_connect(bk_addr);
    rem_resp_t r;
    ck_assert_int_eq(hb_call(member, "walker", CG, NULL, "sub", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    for (size_t i = 0; i < N(reads); i++) {
        size_t len = code_body(reads[i].code, body, sizeof body);
        ck_assert_msg(rm_code(reads[i].code, f, N(f), body, len, "pub") == RMQ_REMOTING_NO_PERMISSION,
                      "code %d answered to an account without SUB", reads[i].code);
        ck_assert_msg(rm_code(reads[i].code, f, N(f), body, len, reads[i].allowed) != RMQ_REMOTING_NO_PERMISSION,
                      "code %d refused to %s", reads[i].code, reads[i].allowed);
    }
    close(member);
    hn_case_passed();
}
END_TEST

/* Item 8: a batch holding a transactional or delayed message is refused. */
START_TEST(batch_refuses_tx_and_delay)
{
    static const char *const props[] = {"TRAN_MSG\001true\002PGROUP\001" PG, "DELAY\0012",
                                        "__STARTDELIVERTIME\0019999999999999"};
    rmq_remoting_field_t mf[] = {{"topic", TOPIC}, {"queueId", "1"}};
    rem_resp_t r;
    for (size_t i = 0; i < N(props); i++) {
        uint8_t batch[256];
        rmq_batch_entry_t plain = {0, (const uint8_t *)"p", 1, "", 0};
        rmq_batch_entry_t odd = {0, (const uint8_t *)"x", 1, props[i], strlen(props[i])};
        size_t blen = fr_rm_batch_encode(&plain, batch);
        blen += fr_rm_batch_encode(&odd, batch + blen);
        rmq_remoting_field_t bf[] = {{"a", PG}, {"b", TOPIC}, {"c", "TBW102"}, {"d", "4"}, {"e", "1"}, {"f", "0"},
                                     {"g", "0"}, {"h", "0"}, {"i", ""}, {"j", "0"}};
        ck_assert_int_eq(rm_call(320, bf, N(bf), batch, blen, "pub", &r), RM_MESSAGE_ILLEGAL);
        ck_assert_msg(strstr(r.msg.remark, "message 2 of 2") && strstr(r.msg.remark, "batch"), "%s",
                      r.msg.remark);
        rem_resp_clear(&r);
    }
    /* the native front's batch goes through the same core path */
    rmq_acl_credentials_t pub = {"pub", "pub-secret-1"};
    uint8_t nbatch[256];
    rmq_batch_entry_t plain = {0, (const uint8_t *)"p", 1, "", 0};
    rmq_batch_entry_t tran = {0, (const uint8_t *)"x", 1, props[0], strlen(props[0])};
    size_t nlen = rmq_batch_encode(&plain, nbatch);
    nlen += rmq_batch_encode(&tran, nbatch + nlen);
    Rmq__Command cmd;
    Rmq__SendMessageRequest h;
    char remark[512];
    wire_send_hdr(&cmd, &h, PG, TOPIC, 1, "");
    cmd.code = RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE;
    wire_link_t ln = {.opts = {.connect_timeout_ms = 3000, .name = "test", .sign = rmq_acl_signer, .sign_arg = &pub},
                      .timeout_ms = WIRE_RPC_TIMEOUT_MS};
    rmq_frame_t resp = {0};
    ck_assert_int_eq(wire_call_with(&ln, bk_addr, &cmd, nbatch, nlen, &resp), RMQ__STATUS__MESSAGE_ILLEGAL);
    snprintf(remark, sizeof remark, "%s", resp.cmd && resp.cmd->remark ? resp.cmd->remark : "");
    rmq_frame_clear(&resp);
    ck_assert_msg(strstr(remark, "message 2 of 2"), "%s", remark);

    ck_assert_int_eq(rm_call(30, mf, N(mf), NULL, 0, "sub", &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "offset"), "0");                 /* nothing stored */
    rem_resp_clear(&r);
    hn_case_passed();
}
END_TEST

static Suite *perm_suite(void)
{
    Suite *s = suite_create("perm");
    TCase *tc = tcase_create("perm");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, every_remoting_code);
    tcase_add_test(tc, every_native_code);
    tcase_add_test(tc, send_checks_the_stored_topic);
    tcase_add_test(tc, heartbeat_needs_its_groups);
    tcase_add_test(tc, unregister_only_own);
    tcase_add_test(tc, reads_need_rights);
    tcase_add_test(tc, batch_refuses_tx_and_delay);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(perm_suite());
}
