/* test_remoting_admin.c: the administration codes of the broker's remoting
 * front (broker/front/remoting/fr_remoting_admin.c, fr_remoting_query.c)
 * with real mqnamesrv / mqbroker processes on loopback and the blocking
 * remoting client of remwire.h; the JSON answers are read back with the
 * project's JSON reader where they are JSON (TopicStatsTable and
 * ConsumeStats key their maps with MessageQueue objects, as fastjson
 * writes them, so those are matched as text).
 *
 * topics: UPDATE_AND_CREATE_TOPIC, GET_TOPIC_CONFIG, GET_ALL_TOPIC_CONFIG,
 * GET_TOPIC_STATS_INFO after a send, QUERY_MESSAGE by key (the record in
 * MessageDecoder's layout; an unknown key QUERY_NOT_FOUND), then
 * DELETE_TOPIC_IN_BROKER: the topic is gone (TOPIC_NOT_EXIST).
 *
 * groups: UPDATE_AND_CREATE_SUBSCRIPTIONGROUP with a SubscriptionGroupConfig
 * body, read back by GET_ALL_SUBSCRIPTIONGROUP_CONFIG, then
 * DELETE_SUBSCRIPTIONGROUP (twice: SUBSCRIPTION_GROUP_NOT_EXIST).
 *
 * consumers: a heartbeat's client listed by GET_CONSUMER_CONNECTION_LIST
 * with its address, subscription tags and settings; QUERY_TOPIC_CONSUME_BY_WHO
 * names its group; GET_CONSUME_STATS shows its committed offset, and a pop
 * group's message in flight as pullOffset past consumerOffset; an
 * unknown group is CONSUMER_NOT_ONLINE. GET_PRODUCER_CONNECTION_LIST lists
 * a producer's heartbeat (client id, address, language, version); a group
 * with no producer is SYSTEM_ERROR naming it; GET_ALL_PRODUCER_INFO has it
 * under its group with its heartbeat's time.
 *
 * ask_client: GET_CONSUMER_RUNNING_INFO and CONSUME_MESSAGE_DIRECTLY put
 * through the broker to a live consumer (fr_remoting_diag.c): the client
 * receives the question with the group and its client id (309: the stored
 * message too), and its body comes back to the operator; its refusal comes
 * back as SYSTEM_ERROR naming its code; a client that does not answer
 * gets SYSTEM_ERROR "did not answer within 10000 ms" in about that time;
 * a client id not in the group is "not online".
 *
 * lists: UPDATE_AND_CREATE_TOPIC_LIST (18) and
 * UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST (225) create every entry; a bad
 * entry is named and a list with a bad group name writes none of it.
 *
 * clone_and_time_span: CLONE_GROUP_OFFSET (314) copies a group's offsets
 * (one topic, or all of them); QUERY_CONSUME_TIME_SPAN (303) gives each
 * queue's first, last and last consumed store times and the delay.
 *
 * consumer_status: INVOKE_BROKER_TO_GET_CONSUMER_STATUS (223) asks the
 * group's client GET_CONSUMER_STATUS_FROM_CLIENT (221) and answers its
 * offsets under its client id; a group with no client is SYSTEM_ERROR.
 *
 * broker: GET_BROKER_RUNTIME_INFO (KVTable), GET_BROKER_CONFIG (properties
 * text), UPDATE_BROKER_CONFIG refused naming why.
 *
 * attributes: RocketMQ 5's topic attributes through UPDATE_AND_CREATE_TOPIC's
 * "attributes" field: created with "+message.type=FIFO,+queue.type=SimpleCQ",
 * read back by GET_TOPIC_CONFIG and GET_ALL_TOPIC_CONFIG as an "attributes"
 * map; a change of the unchangeable queue.type, a value not in the set and
 * a delete of an absent key refused with RocketMQ's texts; message.type
 * changed; an update without the field keeps them; they survive a broker
 * restart; the name server's gRPC route accepts only the type message.type
 * names (grpc_front_probe.py --types, argv[1]).
 *
 * system_topics: RocketMQ's system topics (TopicValidator's list, the
 * rmq_sys_ prefix, the cluster's and the broker's names, the reply topic,
 * msgTraceTopicName with traceTopicEnable) refused by
 * UPDATE_AND_CREATE_TOPIC, its list (no entry written) and
 * DELETE_TOPIC_IN_BROKER with INVALID_PARAMETER and RocketMQ's text;
 * GET_SYSTEM_TOPIC_LIST_FROM_BROKER lists them; with
 * validateSystemTopicWhenUpdateTopic=false one is changed.
 *
 * mixed_type: message.type=MIXED refused (INVALID_PARAMETER, RocketMQ's
 * text) by UPDATE_AND_CREATE_TOPIC and its list, allowed with
 * enableMixedMessageType=true.
 *
 * bad_input: a body that is no JSON, a group without groupName, a field of
 * the wrong type, a missing or non-numeric topic field, an illegal topic
 * name, a missing query field: each a clear code and a remark naming it. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "remwire.h"
#include "rmq_json.h"
#include "rmq_message.h"
#include "rmq_time.h"

static const char *case_dir;
static const char *probe_script;    /* grpc_front_probe.py (argv[1]) */
static char ns_addr[64], bk_addr[64];
static hn_daemon_t ns, bk;

/* Starts broker-a with extra properties (its store in the case's
 * directory: a restart keeps it). */
static void broker_start(const char *extra)
{
    char props[2048];
    int n = snprintf(props, sizeof props,
                     "brokerClusterName=AdmCluster\nbrokerName=broker-a\nbrokerId=0\nlistenPort=0\n"
                     "haListenPort=0\nbrokerRole=ASYNC_MASTER\nstorePathRootDir=%s/store\n"
                     "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\n%s", case_dir, ns_addr,
                     extra);
    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "broker properties do not fit");
    ck_assert_int_eq(hn_daemon_start_conf(&bk, case_dir, "broker/mqbroker", "broker-a", props, bk_addr,
                                          sizeof bk_addr), 0);
}

static void setup(void)
{
    case_dir = hn_case_begin("remoting_admin");
    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr), 0);
    broker_start("");
}

static void teardown(void)
{
    hn_case_end();
}

/* One request on connection fd; returns the response code (pushed requests skipped). */
static int call_on(int fd, int code, const rmq_remoting_field_t *f, size_t n, const char *body, rem_resp_t *r)
{
    rem_send(fd, RMQ_REMOTING_JSON, code, 9, 0, f, n, body, body ? strlen(body) : 0);
    for (;;) {
        ck_assert_int_eq(rem_recv_frame(fd, r, 20000), 0);
        if (r->msg.flags & RMQ_REMOTING_FLAG_RESPONSE)
            break;
        rem_resp_clear(r);
    }
    ck_assert_int_eq(r->msg.opaque, 9);
    return r->msg.code;
}

/* The same on a fresh connection. */
static int call(int code, const rmq_remoting_field_t *f, size_t n, const char *body, rem_resp_t *r)
{
    int fd = rem_connect(bk_addr);
    int rc = call_on(fd, code, f, n, body, r);
    close(fd);
    return rc;
}

/* Asserts the remark of r mentions what, and clears r. */
static void remark_has(rem_resp_t *r, const char *what)
{
    ck_assert_msg(strstr(r->msg.remark, what) != NULL, "remark '%s' does not name '%s'", r->msg.remark, what);
    rem_resp_clear(r);
}

/* Asserts the body of r contains text. */
static void body_has(const rem_resp_t *r, const char *text)
{
    ck_assert_msg(r->msg.body_len && memmem(r->msg.body, r->msg.body_len, text, strlen(text)) != NULL,
                  "body '%.*s' lacks '%s'", (int)r->msg.body_len, (const char *)r->msg.body, text);
}

/* The body of r as JSON (asserted to parse). Owner: caller. */
static rmq_json_t *body_json(const rem_resp_t *r)
{
    char err[128];
    rmq_json_t *d = rmq_json_parse((const char *)r->msg.body, r->msg.body_len, err, sizeof err);
    ck_assert_msg(d != NULL, "body is no JSON: %s", err);
    return d;
}

/* The scalar at path a.b.c of d (a NULL key ends the path early), asserted present. */
static const char *json_at(const rmq_json_t *d, const char *a, const char *b, const char *c)
{
    const char *keys[] = {a, b, c};
    const rmq_json_t *v = d;
    for (size_t i = 0; i < 3 && keys[i]; i++) {
        v = rmq_json_get(v, keys[i]);
        ck_assert_msg(v != NULL, "no member %s", keys[i]);
    }
    ck_assert_ptr_nonnull(rmq_json_scalar(v));
    return rmq_json_scalar(v);
}

/* UPDATE_AND_CREATE_TOPIC of topic with 4 queues, perm 6; the response code. */
static int create_topic(const char *topic, rem_resp_t *r)
{
    rmq_remoting_field_t f[] = {{"topic", (char *)topic}, {"defaultTopic", "TBW102"}, {"readQueueNums", "4"},
                                {"writeQueueNums", "4"}, {"perm", "6"}, {"topicFilterType", "SINGLE_TAG"},
                                {"topicSysFlag", "0"}, {"order", "false"}};
    return call(17, f, sizeof f / sizeof f[0], NULL, r);
}

/* SEND_MESSAGE_V2 of one message with keys to topic queue 1. */
static void send_one(const char *topic, const char *keys)
{
    char props[128];
    rem_resp_t r;
    snprintf(props, sizeof props, "TAGS\001TagA\002KEYS\001%s\002", keys);
    rmq_remoting_field_t f[] = {{"a", "adm_pg"}, {"b", (char *)topic}, {"c", "TBW102"}, {"d", "4"}, {"e", "1"},
                                {"f", "0"}, {"g", "1700000000000"}, {"h", "0"}, {"i", props}, {"j", "0"},
                                {"k", "false"}, {"m", "false"}};
    ck_assert_int_eq(call(310, f, sizeof f / sizeof f[0], "admin-body", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
}

/* A connection that stays open as consumer client_id of group, subscribed
 * to AdmTopic with expression sub (TAG), its heartbeat answered. */
static int consumer_connect(const char *client_id, const char *group, const char *sub)
{
    char hb[1024];
    rem_resp_t r;
    int n = snprintf(hb, sizeof hb,
                     "{\"clientID\":\"%s\",\"producerDataSet\":[],\"consumerDataSet\":[{\"groupName\":\"%s\","
                     "\"consumeType\":\"CONSUME_PASSIVELY\",\"messageModel\":\"CLUSTERING\","
                     "\"consumeFromWhere\":\"CONSUME_FROM_FIRST_OFFSET\",\"unitMode\":false,\"subscriptionDataSet\":["
                     "{\"topic\":\"AdmTopic\",\"subString\":\"%s\",\"subVersion\":1,\"tagsSet\":[],"
                     "\"codeSet\":[],\"expressionType\":\"TAG\"}]}]}", client_id, group, sub);
    ck_assert(n > 0 && (size_t)n < sizeof hb);
    int fd = rem_connect(bk_addr);
    ck_assert_int_eq(call_on(fd, 34, NULL, 0, hb, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    return fd;
}

START_TEST(topics)
{
    rem_resp_t r;
    ck_assert_int_eq(create_topic("AdmTopic", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    rmq_remoting_field_t t = {"topic", "AdmTopic"};
    ck_assert_int_eq(call(351, &t, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    ck_assert_str_eq(json_at(d, "topicName", NULL, NULL), "AdmTopic");
    ck_assert_str_eq(json_at(d, "readQueueNums", NULL, NULL), "4");
    ck_assert_str_eq(json_at(d, "perm", NULL, NULL), "6");
    rmq_json_free(d);
    rem_resp_clear(&r);
    ck_assert_int_eq(call(21, NULL, 0, NULL, &r), RMQ_REMOTING_SUCCESS);
    d = body_json(&r);
    ck_assert_str_eq(json_at(d, "topicConfigTable", "AdmTopic", "writeQueueNums"), "4");
    ck_assert_ptr_nonnull(rmq_json_get(rmq_json_get(d, "dataVersion"), "counter"));
    rmq_json_free(d);
    rem_resp_clear(&r);

    send_one("AdmTopic", "k1 k2");
    ck_assert_int_eq(call(202, &t, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    body_has(&r, "{\"brokerName\":\"broker-a\",\"queueId\":1,\"topic\":\"AdmTopic\"}:{\"lastUpdateTimestamp\":");
    body_has(&r, "\"maxOffset\":1,\"minOffset\":0}");
    body_has(&r, "{\"brokerName\":\"broker-a\",\"queueId\":3,\"topic\":\"AdmTopic\"}:");
    rem_resp_clear(&r);

    rmq_remoting_field_t q[] = {{"topic", "AdmTopic"}, {"key", "k2"}, {"maxNum", "32"}, {"beginTimestamp", "0"},
                                {"endTimestamp", "9223372036854775807"}};
    ck_assert_int_eq(call(12, q, 5, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_record_t rec;
    ck_assert_int_eq(rmq_record_decode(r.msg.body, r.msg.body_len, 0, &rec), RMQ_OK);
    ck_assert_uint_eq(rec.total_size, r.msg.body_len);
    ck_assert(rec.body_len == 10 && memcmp(rec.body, "admin-body", 10) == 0);
    ck_assert_int_ge(atoll(rem_field(&r, "indexLastUpdateTimestamp")), rec.store_timestamp);
    rem_resp_clear(&r);
    q[1].value = "nosuchkey";
    ck_assert_int_eq(call(12, q, 5, NULL, &r), RMQ_REMOTING_QUERY_NOT_FOUND);
    rem_resp_clear(&r);

    ck_assert_int_eq(call(215, &t, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(call(351, &t, 1, NULL, &r), RMQ_REMOTING_TOPIC_NOT_EXIST);
    remark_has(&r, "AdmTopic");
    ck_assert_int_eq(call(202, &t, 1, NULL, &r), RMQ_REMOTING_TOPIC_NOT_EXIST);
    rem_resp_clear(&r);
    hn_case_passed();
}
END_TEST

/* UPDATE_AND_CREATE_TOPIC of AttrTopic with attributes modification attrs
 * (NULL: no such field); the response code (r kept for the caller). */
static int update_attrs(const char *attrs, rem_resp_t *r)
{
    rmq_remoting_field_t f[] = {{"topic", "AttrTopic"}, {"readQueueNums", "2"}, {"writeQueueNums", "2"},
                                {"perm", "6"}, {"attributes", (char *)attrs}};
    return call(17, f, attrs ? 5 : 4, NULL, r);
}

/* GET_TOPIC_CONFIG of AttrTopic: its attribute key, or "" when absent. */
static void attr_is(const char *key, const char *want)
{
    rem_resp_t r;
    rmq_remoting_field_t t = {"topic", "AttrTopic"};
    ck_assert_int_eq(call(351, &t, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    const rmq_json_t *attrs = rmq_json_get(d, "attributes");
    ck_assert_msg(attrs && attrs->type == RMQ_JSON_OBJECT, "no attributes map: %.*s", (int)r.msg.body_len,
                  (const char *)r.msg.body);
    const char *got = rmq_json_scalar(rmq_json_get(attrs, key));
    ck_assert_str_eq(got ? got : "", want);
    rmq_json_free(d);
    rem_resp_clear(&r);
}

typedef struct types_wait {
    const char *addr;
    const char *types;
} types_wait_t;

/* 1 once AttrTopic's gRPC route on w->addr accepts exactly w->types. */
static int route_accepts(void *arg)
{
    types_wait_t *w = arg;
    const char *argv[] = {"/usr/bin/python3", probe_script, "--types", w->addr, "AttrTopic", w->types, NULL};
    hn_result_t res;
    int ok = hn_run(argv, 60000, &res) == 0 && res.status == 0;
    hn_result_free(&res);
    return ok;
}

START_TEST(attributes)
{
    rem_resp_t r;
    ck_assert_int_eq(update_attrs("+message.type=FIFO,+queue.type=SimpleCQ", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    attr_is("message.type", "FIFO");
    attr_is("queue.type", "SimpleCQ");
    ck_assert_int_eq(call(21, NULL, 0, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    const rmq_json_t *attrs = rmq_json_get(rmq_json_get(rmq_json_get(d, "topicConfigTable"), "AttrTopic"),
                                           "attributes");
    ck_assert_str_eq(rmq_json_scalar(rmq_json_get(attrs, "message.type")), "FIFO");
    rmq_json_free(d);
    rem_resp_clear(&r);
    types_wait_t fifo = {ns_addr, "2"};
    ck_assert_msg(hn_wait_until(route_accepts, &fifo, 40000), "the route never accepted FIFO only");

    ck_assert_int_eq(update_attrs("+queue.type=BatchCQ", &r), RMQ_REMOTING_SYSTEM_ERROR);
    ck_assert_str_eq(r.msg.remark, "attempt to update an unchangeable attribute. key: queue.type");
    rem_resp_clear(&r);
    ck_assert_int_eq(update_attrs("+message.type=BOGUS", &r), RMQ_REMOTING_SYSTEM_ERROR);
    ck_assert_str_eq(r.msg.remark, "value is not in set: [UNSPECIFIED, NORMAL, FIFO, DELAY, TRANSACTION, MIXED]");
    rem_resp_clear(&r);
    ck_assert_int_eq(update_attrs("-reserve.time", &r), RMQ_REMOTING_SYSTEM_ERROR);
    ck_assert_str_eq(r.msg.remark, "attempt to delete a nonexistent key: reserve.time");
    rem_resp_clear(&r);
    attr_is("message.type", "FIFO");

    ck_assert_int_eq(update_attrs("+message.type=NORMAL", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(update_attrs(NULL, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    attr_is("message.type", "NORMAL");
    attr_is("queue.type", "SimpleCQ");

    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    broker_start("");
    attr_is("message.type", "NORMAL");
    attr_is("queue.type", "SimpleCQ");
    types_wait_t normal = {ns_addr, "1"};
    ck_assert_msg(hn_wait_until(route_accepts, &normal, 40000), "the route never accepted NORMAL only");
    hn_case_passed();
}
END_TEST

START_TEST(groups)
{
    rem_resp_t r;
    const char *cfg = "{\"brokerId\":0,\"consumeBroadcastEnable\":false,\"consumeEnable\":true,"
                      "\"consumeFromMinEnable\":false,\"groupName\":\"adm_grp\",\"notifyConsumerIdsChangedEnable\":true,"
                      "\"retryMaxTimes\":5,\"retryQueueNums\":1,\"whichBrokerWhenConsumeSlowly\":1}";
    ck_assert_int_eq(call(200, NULL, 0, cfg, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(call(201, NULL, 0, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    ck_assert_str_eq(json_at(d, "subscriptionGroupTable", "adm_grp", "retryMaxTimes"), "5");
    ck_assert_str_eq(json_at(d, "subscriptionGroupTable", "adm_grp", "consumeBroadcastEnable"), "false");
    ck_assert_str_eq(json_at(d, "subscriptionGroupTable", "adm_grp", "groupName"), "adm_grp");
    rmq_json_free(d);
    rem_resp_clear(&r);
    rmq_remoting_field_t g = {"groupName", "adm_grp"};
    ck_assert_int_eq(call(207, &g, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(call(207, &g, 1, NULL, &r), 26);   /* SUBSCRIPTION_GROUP_NOT_EXIST */
    remark_has(&r, "adm_grp");
    hn_case_passed();
}
END_TEST

START_TEST(consumers)
{
    rem_resp_t r;
    ck_assert_int_eq(create_topic("AdmTopic", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    send_one("AdmTopic", "k1");
    int fd = consumer_connect("10.0.0.1@adm", "adm_cg", "TagA || TagB");   /* stays connected */

    rmq_remoting_field_t cg = {"consumerGroup", "adm_cg"};
    ck_assert_int_eq(call(203, &cg, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    const rmq_json_t *set = rmq_json_get(d, "connectionSet");
    ck_assert(set && set->type == RMQ_JSON_ARRAY && set->n == 1);
    ck_assert_str_eq(rmq_json_scalar(rmq_json_get(set->items[0], "clientId")), "10.0.0.1@adm");
    ck_assert(strncmp(rmq_json_scalar(rmq_json_get(set->items[0], "clientAddr")), "127.0.0.1:", 10) == 0);
    ck_assert_str_eq(rmq_json_scalar(rmq_json_get(set->items[0], "language")), "OTHER");
    ck_assert_str_eq(json_at(d, "consumeFromWhere", NULL, NULL), "CONSUME_FROM_FIRST_OFFSET");
    ck_assert_str_eq(json_at(d, "consumeType", NULL, NULL), "CONSUME_PASSIVELY");
    ck_assert_str_eq(json_at(d, "messageModel", NULL, NULL), "CLUSTERING");
    ck_assert_str_eq(json_at(d, "subscriptionTable", "AdmTopic", "subString"), "TagA || TagB");
    const rmq_json_t *tags = rmq_json_get(rmq_json_get(rmq_json_get(d, "subscriptionTable"), "AdmTopic"), "tagsSet");
    ck_assert(tags && tags->n == 2 && strcmp(tags->items[0]->str, "TagA") == 0 &&
              strcmp(tags->items[1]->str, "TagB") == 0);
    rmq_json_free(d);
    rem_resp_clear(&r);

    rmq_remoting_field_t t = {"topic", "AdmTopic"};
    ck_assert_int_eq(call(300, &t, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    body_has(&r, "{\"groupList\":[");
    body_has(&r, "\"adm_cg\"");
    rem_resp_clear(&r);

    rmq_remoting_field_t u[] = {{"consumerGroup", "adm_cg"}, {"topic", "AdmTopic"}, {"queueId", "1"},
                                {"commitOffset", "1"}};
    ck_assert_int_eq(call(15, u, 4, NULL, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    rmq_remoting_field_t cs[] = {{"consumerGroup", "adm_cg"}, {"topic", "AdmTopic"}};
    ck_assert_int_eq(call(208, cs, 2, NULL, &r), RMQ_REMOTING_SUCCESS);
    body_has(&r, "{\"brokerName\":\"broker-a\",\"queueId\":1,\"topic\":\"AdmTopic\"}:{\"brokerOffset\":1,"
                 "\"consumerOffset\":1,\"pullOffset\":1,\"lastTimestamp\":");
    body_has(&r, "\"consumeTps\":");
    rem_resp_clear(&r);

    /* a pop group's message in flight: pullOffset - consumerOffset, RocketMQ 5's #Inflight */
    rmq_remoting_field_t pop[] = {{"consumerGroup", "adm_pop"}, {"topic", "AdmTopic"}, {"queueId", "-1"},
                                  {"maxMsgNums", "32"}, {"invisibleTime", "60000"}, {"pollTime", "0"},
                                  {"expType", "TAG"}, {"exp", "*"}};
    ck_assert_int_eq(call(200050, pop, sizeof pop / sizeof pop[0], NULL, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    rmq_remoting_field_t ps[] = {{"consumerGroup", "adm_pop"}, {"topic", "AdmTopic"}};
    ck_assert_int_eq(call(208, ps, 2, NULL, &r), RMQ_REMOTING_SUCCESS);
    body_has(&r, "{\"brokerName\":\"broker-a\",\"queueId\":1,\"topic\":\"AdmTopic\"}:{\"brokerOffset\":1,"
                 "\"consumerOffset\":0,\"pullOffset\":1,\"lastTimestamp\":");
    rem_resp_clear(&r);

    rmq_remoting_field_t other = {"consumerGroup", "adm_nobody"};
    ck_assert_int_eq(call(203, &other, 1, NULL, &r), 206);   /* CONSUMER_NOT_ONLINE */
    remark_has(&r, "adm_nobody");

    int pfd = rem_connect(bk_addr);         /* a producer stays connected */
    const char *phb = "{\"clientID\":\"10.0.0.3@prod\",\"producerDataSet\":[{\"groupName\":\"adm_pg\"}],"
                      "\"consumerDataSet\":[]}";
    ck_assert_int_eq(call_on(pfd, 34, NULL, 0, phb, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    rmq_remoting_field_t pg = {"producerGroup", "adm_pg"};
    ck_assert_int_eq(call(204, &pg, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    d = body_json(&r);
    set = rmq_json_get(d, "connectionSet");
    ck_assert(set && set->type == RMQ_JSON_ARRAY && set->n == 1);
    ck_assert_str_eq(rmq_json_scalar(rmq_json_get(set->items[0], "clientId")), "10.0.0.3@prod");
    ck_assert(strncmp(rmq_json_scalar(rmq_json_get(set->items[0], "clientAddr")), "127.0.0.1:", 10) == 0);
    ck_assert_str_eq(rmq_json_scalar(rmq_json_get(set->items[0], "language")), "OTHER");
    rmq_json_free(d);
    rem_resp_clear(&r);
    rmq_remoting_field_t nopg = {"producerGroup", "adm_nopg"};
    ck_assert_int_eq(call(204, &nopg, 1, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "the producer group[adm_nopg] not exist");
    ck_assert_int_eq(call(328, NULL, 0, NULL, &r), RMQ_REMOTING_SUCCESS);
    d = body_json(&r);
    set = rmq_json_get(rmq_json_get(d, "data"), "adm_pg");
    ck_assert(set && set->type == RMQ_JSON_ARRAY && set->n == 1);
    ck_assert_str_eq(rmq_json_scalar(rmq_json_get(set->items[0], "clientId")), "10.0.0.3@prod");
    ck_assert(strncmp(rmq_json_scalar(rmq_json_get(set->items[0], "remoteIP")), "127.0.0.1:", 10) == 0);
    long long seen = atoll(rmq_json_scalar(rmq_json_get(set->items[0], "lastUpdateTimestamp")));
    ck_assert_msg(seen > rmq_wall_ms() - 60000 && seen <= rmq_wall_ms(), "lastUpdateTimestamp %lld is not now", seen);
    rmq_json_free(d);
    rem_resp_clear(&r);
    close(pfd);
    close(fd);
    hn_case_passed();
}
END_TEST

/* The next request the broker pushes to fd (oneway notices skipped): it must be code. */
static void recv_question(int fd, int code, rem_resp_t *q)
{
    for (;;) {
        ck_assert_int_eq(rem_recv_frame(fd, q, 5000), 0);
        if (!(q->msg.flags & RMQ_REMOTING_FLAG_ONEWAY))
            break;
        rem_resp_clear(q);
    }
    ck_assert_int_eq(q->msg.code, code);
    ck_assert(!(q->msg.flags & RMQ_REMOTING_FLAG_RESPONSE));
    ck_assert_str_eq(rem_field(q, "consumerGroup"), "adm_dg");
    ck_assert_str_eq(rem_field(q, "clientId"), "10.0.0.2@diag");
}

/* The operator asks code of client id on adm with fields f[0..n) (opaque 11). */
static void ask(int adm, int code, const rmq_remoting_field_t *f, size_t n)
{
    rem_send(adm, RMQ_REMOTING_JSON, code, 11, 0, f, n, NULL, 0);
}

/* The operator asks code with f[0..n) on adm and is answered SYSTEM_ERROR naming why. */
static void ask_refused(int adm, int code, const rmq_remoting_field_t *f, size_t n, const char *why)
{
    rem_resp_t r;
    ask(adm, code, f, n);
    ck_assert_int_eq(rem_recv(adm, &r, 5000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, why);
}

START_TEST(ask_client)
{
    rem_resp_t r, q;
    ck_assert_int_eq(create_topic("AdmTopic", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    char props[128];
    snprintf(props, sizeof props, "TAGS\001TagA\002");
    rmq_remoting_field_t sf[] = {{"a", "adm_pg"}, {"b", "AdmTopic"}, {"c", "TBW102"}, {"d", "4"}, {"e", "1"},
                                 {"f", "0"}, {"g", "1700000000000"}, {"h", "0"}, {"i", props}, {"j", "0"},
                                 {"k", "false"}, {"m", "false"}};
    ck_assert_int_eq(call(310, sf, sizeof sf / sizeof sf[0], "direct-body", &r), RMQ_REMOTING_SUCCESS);
    char msg_id[64];
    snprintf(msg_id, sizeof msg_id, "%s", rem_field(&r, "msgId"));
    rem_resp_clear(&r);
    int fd = consumer_connect("10.0.0.2@diag", "adm_dg", "*"), adm = rem_connect(bk_addr);

    /* answered: the client's body comes back */
    rmq_remoting_field_t f[] = {{"consumerGroup", "adm_dg"}, {"clientId", "10.0.0.2@diag"},
                                {"jstackEnable", "false"}};
    ask(adm, 307, f, 3);
    recv_question(fd, 307, &q);
    ck_assert_str_eq(rem_field(&q, "jstackEnable"), "false");
    const char *info = "{\"properties\":{\"consumeType\":\"CONSUME_PASSIVELY\"},\"subscriptionSet\":[]}";
    rem_send(fd, RMQ_REMOTING_JSON, RMQ_REMOTING_SUCCESS, q.msg.opaque, RMQ_REMOTING_FLAG_RESPONSE, NULL, 0, info,
             strlen(info));
    rem_resp_clear(&q);
    ck_assert_int_eq(rem_recv(adm, &r, 5000), 0);
    ck_assert_int_eq(r.msg.opaque, 11);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    ck_assert(r.msg.body_len == strlen(info) && memcmp(r.msg.body, info, r.msg.body_len) == 0);
    rem_resp_clear(&r);

    /* refused by the client: its code named */
    ask(adm, 307, f, 3);
    recv_question(fd, 307, &q);
    rem_send(fd, RMQ_REMOTING_JSON, RMQ_REMOTING_SYSTEM_ERROR, q.msg.opaque, RMQ_REMOTING_FLAG_RESPONSE, NULL, 0,
             NULL, 0);
    rem_resp_clear(&q);
    ck_assert_int_eq(rem_recv(adm, &r, 5000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "answered code 1");

    /* CONSUME_MESSAGE_DIRECTLY: the client gets the stored message */
    rmq_remoting_field_t d[] = {{"consumerGroup", "adm_dg"}, {"clientId", "10.0.0.2@diag"}, {"msgId", msg_id},
                                {"brokerName", "broker-a"}};
    ask(adm, 309, d, 4);
    recv_question(fd, 309, &q);
    ck_assert_str_eq(rem_field(&q, "msgId"), msg_id);
    ck_assert_msg(q.msg.body_len && memmem(q.msg.body, q.msg.body_len, "direct-body", 11) != NULL,
                  "309 to the client lacks the stored message");
    const char *res = "{\"order\":false,\"autoCommit\":true,\"consumeResult\":\"CR_SUCCESS\"}";
    rem_send(fd, RMQ_REMOTING_JSON, RMQ_REMOTING_SUCCESS, q.msg.opaque, RMQ_REMOTING_FLAG_RESPONSE, NULL, 0, res,
             strlen(res));
    rem_resp_clear(&q);
    ck_assert_int_eq(rem_recv(adm, &r, 5000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    body_has(&r, "CR_SUCCESS");
    rem_resp_clear(&r);

    /* not answered: a clear error once the broker stops waiting */
    ask(adm, 307, f, 3);
    recv_question(fd, 307, &q);
    rem_resp_clear(&q);
    long long t0 = hn_now_ms();
    ck_assert_int_eq(rem_recv(adm, &r, 20000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SYSTEM_ERROR);
    ck_assert_int_ge(hn_now_ms() - t0, 8000);
    remark_has(&r, "did not answer within 10000 ms");

    rmq_remoting_field_t other[] = {{"consumerGroup", "adm_dg"}, {"clientId", "10.0.0.9@nobody"}};
    ask_refused(adm, 307, other, 2, "not online");
    close(adm);
    close(fd);
    hn_case_passed();
}
END_TEST

/* GET_TOPIC_CONFIG of topic: the value of its field key. */
static void topic_field_is(const char *topic, const char *key, const char *want)
{
    rem_resp_t r;
    rmq_remoting_field_t t = {"topic", (char *)topic};
    ck_assert_int_eq(call(351, &t, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    ck_assert_str_eq(json_at(d, key, NULL, NULL), want);
    rmq_json_free(d);
    rem_resp_clear(&r);
}

START_TEST(lists)
{
    rem_resp_t r;
    const char *topic_list = "{\"topicConfigList\":[{\"topicName\":\"AdmL1\",\"readQueueNums\":2,\"writeQueueNums\":2,"
                         "\"perm\":6,\"topicFilterType\":\"SINGLE_TAG\",\"topicSysFlag\":0,\"order\":false},"
                         "{\"topicName\":\"AdmL2\",\"readQueueNums\":3,\"writeQueueNums\":3,\"perm\":4,"
                         "\"attributes\":{\"+message.type\":\"FIFO\"}}]}";
    ck_assert_int_eq(call(18, NULL, 0, topic_list, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    topic_field_is("AdmL1", "writeQueueNums", "2");
    topic_field_is("AdmL2", "writeQueueNums", "3");
    topic_field_is("AdmL2", "perm", "4");
    rmq_remoting_field_t l2 = {"topic", "AdmL2"};
    ck_assert_int_eq(call(351, &l2, 1, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *a = body_json(&r);
    ck_assert_str_eq(json_at(a, "attributes", "message.type", NULL), "FIFO");
    rmq_json_free(a);
    rem_resp_clear(&r);
    ck_assert_int_eq(call(18, NULL, 0, "{\"topicConfigList\":[{\"topicName\":\"AdmL5\",\"readQueueNums\":1,"
                                       "\"writeQueueNums\":1,\"perm\":6,\"attributes\":{\"+no.such\":\"x\"}}]}", &r),
                     RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "no.such");
    ck_assert_int_eq(call(18, NULL, 0, "{\"topicConfigList\":[{\"topicName\":\"AdmL3\",\"readQueueNums\":\"x\","
                                       "\"writeQueueNums\":1,\"perm\":6}]}", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "topicConfigList[0]: topic AdmL3: readQueueNums is bad");
    ck_assert_int_eq(call(18, NULL, 0, "{\"topicConfigList\":[]}", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "1 to 1024 are allowed");
    ck_assert_int_eq(call(18, NULL, 0, "{\"topicConfigList\":[{\"topicName\":\"Adm L4\",\"readQueueNums\":1,"
                                       "\"writeQueueNums\":1,\"perm\":6}]}", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "Adm L4");

    const char *group_list = "{\"groupConfigList\":[{\"groupName\":\"adm_l1\",\"retryMaxTimes\":3},"
                         "{\"groupName\":\"adm_l2\",\"consumeBroadcastEnable\":false}]}";
    ck_assert_int_eq(call(225, NULL, 0, group_list, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(call(225, NULL, 0, "{\"groupConfigList\":[{\"groupName\":\"adm_l3\"},{\"groupName\":\"bad g\"}]}",
                          &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "bad g");
    ck_assert_int_eq(call(201, NULL, 0, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    ck_assert_str_eq(json_at(d, "subscriptionGroupTable", "adm_l1", "retryMaxTimes"), "3");
    ck_assert_str_eq(json_at(d, "subscriptionGroupTable", "adm_l2", "consumeBroadcastEnable"), "false");
    ck_assert_msg(!rmq_json_get(rmq_json_get(d, "subscriptionGroupTable"), "adm_l3"),
                  "a list with a bad name wrote its good entry");
    rmq_json_free(d);
    rem_resp_clear(&r);
    hn_case_passed();
}
END_TEST

/* UPDATE_AND_CREATE_TOPIC (17) and DELETE_TOPIC_IN_BROKER (215) of topic:
 * both refused with RocketMQ's code and text for a system topic. */
static void system_topic_refused(const char *topic)
{
    rem_resp_t r;
    char want[256];
    snprintf(want, sizeof want, "The topic[%s] is conflict with system topic.", topic);
    ck_assert_int_eq(create_topic(topic, &r), RMQ_REMOTING_INVALID_PARAMETER);
    ck_assert_str_eq(r.msg.remark, want);
    rem_resp_clear(&r);
    rmq_remoting_field_t t = {"topic", (char *)topic};
    ck_assert_int_eq(call(215, &t, 1, NULL, &r), RMQ_REMOTING_INVALID_PARAMETER);
    ck_assert_str_eq(r.msg.remark, want);
    rem_resp_clear(&r);
}

/* Asserts GET_SYSTEM_TOPIC_LIST_FROM_BROKER (305) lists topic (want 1) or not (want 0). */
static void system_list_has(const char *topic, int want)
{
    rem_resp_t r;
    ck_assert_int_eq(call(305, NULL, 0, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    const rmq_json_t *l = rmq_json_get(d, "topicList");
    ck_assert_msg(l && l->type == RMQ_JSON_ARRAY, "no topicList array: %.*s", (int)r.msg.body_len,
                  (const char *)r.msg.body);
    int found = 0;
    for (size_t i = 0; i < l->n; i++)
        found += rmq_json_scalar(l->items[i]) && strcmp(rmq_json_scalar(l->items[i]), topic) == 0;
    ck_assert_msg(found == want, "topicList %.*s holds %s %d times", (int)r.msg.body_len, (const char *)r.msg.body,
                  topic, found);
    rmq_json_free(d);
    rem_resp_clear(&r);
}

/* Restarts broker-a with extra properties. */
static void broker_restart(const char *extra)
{
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    broker_start(extra);
}

START_TEST(system_topics)
{
    rem_resp_t r;
    const char *refused[] = {"RMQ_SYS_TRACE_TOPIC", "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRANS_HALF_TOPIC", "TBW102",
                             "rmq_sys_anything", "AdmCluster", "broker-a", "AdmCluster_REPLY_TOPIC"};
    for (size_t i = 0; i < sizeof refused / sizeof refused[0]; i++)
        system_topic_refused(refused[i]);
    topic_field_is("AdmCluster_REPLY_TOPIC", "writeQueueNums", "1");    /* made at start, kept */
    ck_assert_int_eq(call(18, NULL, 0, "{\"topicConfigList\":[{\"topicName\":\"AdmSysOk\",\"readQueueNums\":1,"
                                       "\"writeQueueNums\":1,\"perm\":6},{\"topicName\":\"RMQ_SYS_TRACE_TOPIC\","
                                       "\"readQueueNums\":1,\"writeQueueNums\":1,\"perm\":6}]}", &r),
                     RMQ_REMOTING_INVALID_PARAMETER);
    remark_has(&r, "The topic[RMQ_SYS_TRACE_TOPIC] is conflict with system topic.");
    rmq_remoting_field_t ok = {"topic", "AdmSysOk"};
    ck_assert_int_eq(call(351, &ok, 1, NULL, &r), RMQ_REMOTING_TOPIC_NOT_EXIST);
    rem_resp_clear(&r);
    const char *listed[] = {"TBW102", "SCHEDULE_TOPIC_XXXX", "RMQ_SYS_TRACE_TOPIC", "OFFSET_MOVED_EVENT",
                            "AdmCluster", "broker-a", "AdmCluster_REPLY_TOPIC"};
    for (size_t i = 0; i < sizeof listed / sizeof listed[0]; i++)
        system_list_has(listed[i], 1);
    system_list_has("AppTraceTopic", 0);

    /* traceTopicEnable: the broker makes msgTraceTopicName, a system topic now */
    broker_restart("traceTopicEnable=true\nmsgTraceTopicName=AppTraceTopic\n");
    topic_field_is("AppTraceTopic", "writeQueueNums", "1");
    system_topic_refused("AppTraceTopic");
    system_list_has("AppTraceTopic", 1);

    /* validateSystemTopicWhenUpdateTopic=false: RocketMQ's switch lets them change */
    broker_restart("validateSystemTopicWhenUpdateTopic=false\n");
    ck_assert_int_eq(create_topic("RMQ_SYS_TRACE_TOPIC", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    topic_field_is("RMQ_SYS_TRACE_TOPIC", "writeQueueNums", "4");
    hn_case_passed();
}
END_TEST

START_TEST(mixed_type)
{
    rem_resp_t r;
    ck_assert_int_eq(update_attrs("+message.type=MIXED", &r), RMQ_REMOTING_INVALID_PARAMETER);
    ck_assert_str_eq(r.msg.remark, "MIXED message type is not supported.");
    rem_resp_clear(&r);
    ck_assert_int_eq(call(18, NULL, 0, "{\"topicConfigList\":[{\"topicName\":\"AttrTopic\",\"readQueueNums\":1,"
                                       "\"writeQueueNums\":1,\"perm\":6,\"attributes\":{\"+message.type\":\"MIXED\"}}]}",
                          &r), RMQ_REMOTING_INVALID_PARAMETER);
    remark_has(&r, "MIXED message type is not supported.");
    rmq_remoting_field_t t = {"topic", "AttrTopic"};
    ck_assert_int_eq(call(351, &t, 1, NULL, &r), RMQ_REMOTING_TOPIC_NOT_EXIST);
    rem_resp_clear(&r);

    broker_restart("enableMixedMessageType=true\n");
    ck_assert_int_eq(update_attrs("+message.type=MIXED", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    attr_is("message.type", "MIXED");
    hn_case_passed();
}
END_TEST

/* QUERY_CONSUMER_OFFSET of group on AdmTopic queue 1: the response code, the offset into *offset. */
static int offset_of(const char *group, long long *offset)
{
    rem_resp_t r;
    rmq_remoting_field_t q[] = {{"consumerGroup", (char *)group}, {"topic", "AdmTopic"}, {"queueId", "1"}};
    int code = call(14, q, 3, NULL, &r);
    *offset = code == RMQ_REMOTING_SUCCESS ? atoll(rem_field(&r, "offset")) : -1;
    rem_resp_clear(&r);
    return code;
}

START_TEST(clone_and_time_span)
{
    rem_resp_t r;
    long long off;
    ck_assert_int_eq(create_topic("AdmTopic", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    for (int i = 0; i < 3; i++)
        send_one("AdmTopic", "span");
    rmq_remoting_field_t u[] = {{"consumerGroup", "adm_src"}, {"topic", "AdmTopic"}, {"queueId", "1"},
                                {"commitOffset", "2"}};
    ck_assert_int_eq(call(15, u, 4, NULL, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);

    rmq_remoting_field_t c[] = {{"srcGroup", "adm_src"}, {"destGroup", "adm_dst"}, {"topic", "AdmTopic"},
                                {"offline", "false"}};
    ck_assert_int_eq(call(314, c, 4, NULL, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(offset_of("adm_dst", &off), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(off, 2);
    rmq_remoting_field_t all[] = {{"srcGroup", "adm_src"}, {"destGroup", "adm_dst2"}, {"offline", "true"}};
    ck_assert_int_eq(call(314, all, 3, NULL, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(offset_of("adm_dst2", &off), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(off, 2);
    rmq_remoting_field_t bad[] = {{"srcGroup", "adm_src"}, {"destGroup", "bad group"}};
    ck_assert_int_eq(call(314, bad, 2, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "bad group");

    rmq_remoting_field_t ts[] = {{"topic", "AdmTopic"}, {"group", "adm_src"}};
    long long before = rmq_wall_ms();
    ck_assert_int_eq(call(303, ts, 2, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    const rmq_json_t *set = rmq_json_get(d, "consumeTimeSpanSet");
    ck_assert(set && set->type == RMQ_JSON_ARRAY && set->n == 4);
    const rmq_json_t *q1 = set->items[1];
    ck_assert_str_eq(json_at(q1, "messageQueue", "queueId", NULL), "1");
    ck_assert_str_eq(json_at(q1, "messageQueue", "brokerName", NULL), "broker-a");
    long long min = atoll(json_at(q1, "minTimeStamp", NULL, NULL)), max = atoll(json_at(q1, "maxTimeStamp", NULL, NULL));
    long long consumed = atoll(json_at(q1, "consumeTimeStamp", NULL, NULL));
    long long delay = atoll(json_at(q1, "delayTime", NULL, NULL));
    ck_assert_msg(min > before - 60000 && min <= consumed && consumed <= max && max <= before,
                  "time span min %lld consumed %lld max %lld", min, consumed, max);
    ck_assert_msg(delay >= 0 && delay <= before - max + 60000, "delayTime %lld", delay);
    ck_assert_str_eq(json_at(set->items[0], "delayTime", NULL, NULL), "0");
    rmq_json_free(d);
    rem_resp_clear(&r);
    rmq_remoting_field_t none[] = {{"topic", "AdmNone"}, {"group", "adm_src"}};
    ck_assert_int_eq(call(303, none, 2, NULL, &r), RMQ_REMOTING_TOPIC_NOT_EXIST);
    remark_has(&r, "topic[AdmNone] not exist");
    hn_case_passed();
}
END_TEST

START_TEST(consumer_status)
{
    rem_resp_t r, q;
    ck_assert_int_eq(create_topic("AdmTopic", &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    int fd = consumer_connect("10.0.0.4@st", "adm_sg", "*"), adm = rem_connect(bk_addr);

    rmq_remoting_field_t f[] = {{"topic", "AdmTopic"}, {"group", "adm_sg"}};
    ask(adm, 223, f, 2);
    for (;;) {
        ck_assert_int_eq(rem_recv_frame(fd, &q, 5000), 0);
        if (!(q.msg.flags & RMQ_REMOTING_FLAG_ONEWAY))
            break;
        rem_resp_clear(&q);
    }
    ck_assert_int_eq(q.msg.code, 221);
    ck_assert_str_eq(rem_field(&q, "topic"), "AdmTopic");
    ck_assert_str_eq(rem_field(&q, "group"), "adm_sg");
    const char *status = "{\"consumerTable\":{},\"messageQueueTable\":{{\"brokerName\":\"broker-a\",\"queueId\":1,"
                         "\"topic\":\"AdmTopic\"}:7}}";
    rem_send(fd, RMQ_REMOTING_JSON, RMQ_REMOTING_SUCCESS, q.msg.opaque, RMQ_REMOTING_FLAG_RESPONSE, NULL, 0, status,
             strlen(status));
    rem_resp_clear(&q);
    ck_assert_int_eq(rem_recv(adm, &r, 5000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    const char *want = "{\"consumerTable\":{\"10.0.0.4@st\":{{\"brokerName\":\"broker-a\",\"queueId\":1,"
                       "\"topic\":\"AdmTopic\"}:7}},\"messageQueueTable\":{}}";
    ck_assert_msg(r.msg.body_len == strlen(want) && memcmp(r.msg.body, want, r.msg.body_len) == 0,
                  "consumer status '%.*s'", (int)r.msg.body_len, (const char *)r.msg.body);
    rem_resp_clear(&r);

    rmq_remoting_field_t other[] = {{"topic", "AdmTopic"}, {"group", "adm_sg"}, {"clientAddr", "10.0.0.9@x"}};
    ask(adm, 223, other, 3);
    ck_assert_int_eq(rem_recv(adm, &r, 5000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    body_has(&r, "{\"consumerTable\":{},");
    rem_resp_clear(&r);
    rmq_remoting_field_t nobody[] = {{"topic", "AdmTopic"}, {"group", "adm_nobody"}};
    ask_refused(adm, 223, nobody, 2, "No Any Consumer online in the consumer group: [adm_nobody]");
    close(adm);
    close(fd);
    hn_case_passed();
}
END_TEST

START_TEST(broker)
{
    rem_resp_t r;
    ck_assert_int_eq(call(28, NULL, 0, NULL, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *d = body_json(&r);
    ck_assert_str_eq(json_at(d, "table", "brokerAddr", NULL), bk_addr);
    ck_assert_str_eq(json_at(d, "table", "brokerRole", NULL), "ASYNC_MASTER");
    ck_assert_str_eq(json_at(d, "table", "pullThreadPoolQueueSize", NULL), "0");
    ck_assert_ptr_nonnull(rmq_json_get(rmq_json_get(d, "table"), "putTps"));
    rmq_json_free(d);
    rem_resp_clear(&r);
    ck_assert_int_eq(call(26, NULL, 0, NULL, &r), RMQ_REMOTING_SUCCESS);
    body_has(&r, "brokerName=broker-a\n");
    body_has(&r, "brokerClusterName=AdmCluster\n");
    rem_resp_clear(&r);
    ck_assert_int_eq(call(25, NULL, 0, "flushIntervalCommitLog=1000\n", &r),
                     RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED);
    remark_has(&r, "properties file");
    hn_case_passed();
}
END_TEST

START_TEST(bad_input)
{
    rem_resp_t r;
    ck_assert_int_eq(call(200, NULL, 0, "{\"groupName\":", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "no JSON");
    ck_assert_int_eq(call(200, NULL, 0, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "no JSON");
    ck_assert_int_eq(call(200, NULL, 0, "{\"retryMaxTimes\":3}", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "groupName");
    ck_assert_int_eq(call(200, NULL, 0, "{\"groupName\":\"g\",\"retryMaxTimes\":\"many\"}", &r),
                     RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "retryMaxTimes");
    ck_assert_int_eq(call(200, NULL, 0, "{\"groupName\":\"g\",\"consumeEnable\":1}", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "consumeEnable");
    ck_assert_int_eq(call(200, NULL, 0, "{\"groupName\":\"g/h\"}", &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "groupName");

    rmq_remoting_field_t nop[] = {{"topic", "AdmBad"}, {"readQueueNums", "4"}, {"writeQueueNums", "4"}};
    ck_assert_int_eq(call(17, nop, 3, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "perm");
    rmq_remoting_field_t nan[] = {{"topic", "AdmBad"}, {"readQueueNums", "four"}, {"writeQueueNums", "4"},
                                  {"perm", "6"}};
    ck_assert_int_eq(call(17, nan, 4, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "readQueueNums");
    rmq_remoting_field_t bad[] = {{"topic", "Adm/Bad"}, {"readQueueNums", "4"}, {"writeQueueNums", "4"},
                                  {"perm", "6"}};
    ck_assert_int_eq(call(17, bad, 4, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "Adm/Bad");
    rmq_remoting_field_t many[] = {{"topic", "AdmBad"}, {"readQueueNums", "100000"}, {"writeQueueNums", "4"},
                                   {"perm", "6"}};
    ck_assert_int_eq(call(17, many, 4, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "AdmBad");

    ck_assert_int_eq(call(202, NULL, 0, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "topic");
    ck_assert_int_eq(call(208, NULL, 0, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "consumerGroup");
    ck_assert_int_eq(call(207, NULL, 0, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "groupName");
    rmq_remoting_field_t q[] = {{"topic", "AdmTopic"}, {"maxNum", "32"}, {"beginTimestamp", "0"},
                                {"endTimestamp", "0"}};
    ck_assert_int_eq(call(12, q, 4, NULL, &r), RMQ_REMOTING_SYSTEM_ERROR);
    remark_has(&r, "key");
    hn_case_passed();
}
END_TEST

static Suite *remoting_admin_suite(void)
{
    Suite *s = suite_create("remoting_admin");
    TCase *tc = tcase_create("remoting_admin");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, topics);
    tcase_add_test(tc, attributes);
    tcase_add_test(tc, groups);
    tcase_add_test(tc, consumers);
    tcase_add_test(tc, ask_client);
    tcase_add_test(tc, broker);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, lists);
    tcase_add_test(tc, system_topics);
    tcase_add_test(tc, mixed_type);
    tcase_add_test(tc, clone_and_time_span);
    tcase_add_test(tc, consumer_status);
    suite_add_tcase(s, tc);
    return s;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: test_remoting_admin PATH/grpc_front_probe.py\n");
        return 1;
    }
    probe_script = argv[1];
    return hn_run_suite(remoting_admin_suite());
}
