/* fr_remoting_admin.c: the remoting front of the administration requests
 * RocketMQ's mqadmin sends to a broker: topics (UPDATE_AND_CREATE_TOPIC 17,
 * UPDATE_AND_CREATE_TOPIC_LIST 18, DELETE_TOPIC_IN_BROKER 215, GET_ALL_TOPIC_CONFIG 21, GET_TOPIC_CONFIG
 * 351, GET_TOPIC_STATS_INFO 202, QUERY_TOPIC_CONSUME_BY_WHO 300,
 * GET_SYSTEM_TOPIC_LIST_FROM_BROKER 305), subscription groups (200, 201,
 * 207, the list 225), consumers
 * (GET_CONSUMER_CONNECTION_LIST 203, GET_CONSUME_STATS 208,
 * GET_BROKER_CONSUME_STATS 317, QUERY_CONSUME_TIME_SPAN 303,
 * INVOKE_BROKER_TO_RESET_OFFSET 222, CLONE_GROUP_OFFSET 314), producers (GET_PRODUCER_CONNECTION_LIST
 * 204, GET_ALL_PRODUCER_INFO 328) and the broker itself (its statistics
 * items VIEW_BROKER_STATS_DATA 315, GET_BROKER_RUNTIME_INFO
 * 28, GET_BROKER_CONFIG 26; UPDATE_BROKER_CONFIG 25 is refused: an rmq
 * broker reads its configuration once, from its properties file). Each
 * handler reads its extFields (or its JSON body,
 * fr_remoting_admin_wire.h), calls the same core operation as the native
 * front (core/bk_admin_ops.c, core/bk_offset_ops.c, core/bk_clients.c; the
 * stats items of meta/bk_statsitems.h) and
 * writes RocketMQ's JSON answer; the reads of that one shape are rows of
 * one table (json_reads). Loop thread. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_admin_ops.h"
#include "bk_groups_pb.h"
#include "bk_offset_ops.h"
#include "bk_topics_pb.h"
#include "fr_remoting.h"
#include "fr_remoting_admin_wire.h"
#include "fr_remoting_wire.h"
#include "rmq_http.h"
#include "rmq_log.h"
#include "rmq_subexpr.h"
#include "rmq_time.h"
#include "rmq_topic_json.h"

#define CODE_CONSUMER_NOT_ONLINE 206

/* Answers SUCCESS, or r's failure. */
static void reply_result(rmq_conn_t *conn, const rmq_remoting_request_t *req, const bk_result_t *r)
{
    if (r->status == BK_OK)
        fr_rm_reply_body(conn, req, NULL);
    else
        fr_rm_reply_result(conn, req, r);
}

/* Writes an answer's JSON body into b from what the handler read (arg):
 * BK_OK, or the failure, set in r. */
typedef bk_status_t (*body_fn)(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r);

/* The shape of every answer with a JSON body: fn writes it into a fresh
 * buffer; answers SUCCESS with it, or fn's failure (SYSTEM_ERROR when out
 * of memory). */
static void reply_json(const fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req, body_fn fn,
                       const void *arg)
{
    struct evbuffer *b = evbuffer_new();
    bk_result_t r;
    if (!b)
        bk_result_set(&r, BK_SYSTEM_ERROR, "request code %d: out of memory", req->code);
    if (!b || fn(rm, b, arg, &r) != BK_OK)
        fr_rm_reply_result(conn, req, &r);
    else
        fr_rm_reply_body(conn, req, b);
    if (b)
        evbuffer_free(b);
}

/* The names a read's request gave (NULL: not named). */
typedef struct names {
    const char *topic;
    const char *group;
} names_t;

/* A JSON array or object under construction (GroupList, tagsSet, KVTable...). */
typedef struct json_list {
    struct evbuffer *b;
    int n;
} json_list_t;

/* Starts the next item of l: a comma after the first. */
static void list_next(json_list_t *l)
{
    if (l->n++)
        FR_RM_ADD(l->b, ",");
}

/* Starts the next member of the JSON object l: "key": */
static void list_key(json_list_t *l, const char *key)
{
    list_next(l);
    rmq_json_str(l->b, key);
    FR_RM_ADD(l->b, ":");
}

/* ---- topics --------------------------------------------------------------- */

/* A topic change's answer held until the table is on disk. */
typedef struct topic_ack {
    rmq_conn_t *conn;                /* referenced */
    fr_rm_to_t to;
    int code;                        /* the request's, for an error's remark */
} topic_ack_t;

/* The held answer of req on conn; NULL after answering SYSTEM_ERROR. */
static topic_ack_t *topic_ack_new(rmq_conn_t *conn, const rmq_remoting_request_t *req)
{
    topic_ack_t *ack = malloc(sizeof(*ack));
    if (!ack) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: out of memory", req->code);
        return NULL;
    }
    *ack = (topic_ack_t){conn, fr_rm_to(req), req->code};
    rmq_conn_ref(conn);
    return ack;
}

static void topic_ack_free(topic_ack_t *ack)
{
    rmq_conn_unref(ack->conn);
    free(ack);
}

/* bk_topics_durable_fn: answers the held request, drops the reference. */
static void topic_ack_done(void *arg, rmq_err_t rc)
{
    topic_ack_t *ack = arg;
    if (rc == RMQ_OK) {
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS};
        fr_rm_reply_to(ack->conn, &ack->to, &rep);
    } else if (rc != RMQ_ESHUTDOWN) {
        char why[160];
        snprintf(why, sizeof(why), "request code %d: the topic table could not be written: %s", ack->code,
                 rmq_strerror(rc));
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SYSTEM_ERROR, .remark = why};
        fr_rm_reply_to(ack->conn, &ack->to, &rep);
    }
    topic_ack_free(ack);
}

/* Reads the topic extField into name (checked to fit); 0, or -1 after answering. */
static int topic_name(rmq_conn_t *conn, const rmq_remoting_request_t *req, char *name, size_t cap)
{
    const char *v = fr_rm_str(conn, req, "topic", NULL, 1, NULL);
    if (!v)
        return -1;
    if (strlen(v) >= cap) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: topic '%.64s...' is longer "
                            "than %zu characters", req->code, v, cap - 1);
        return -1;
    }
    snprintf(name, cap, "%s", v);
    return 0;
}

/* UPDATE_AND_CREATE_TOPIC: extFields topic, readQueueNums, writeQueueNums,
 * perm (required, as RocketMQ's header has them), topicSysFlag, order,
 * attributes (RocketMQ 5's "+key=value,-key"). */
void fr_rm_handle_update_topic(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_topic_t t = {0};
    int64_t rq, wq, perm, sys = 0;
    bk_result_t r;
    if (!fr_rm_allowed(rm, conn, req, NULL, NULL) || topic_name(conn, req, t.name, sizeof(t.name)) != 0 ||
        fr_rm_int(conn, req, "readQueueNums", NULL, 1, INT32_MIN, INT32_MAX, 0, &rq) != 0 ||
        fr_rm_int(conn, req, "writeQueueNums", NULL, 1, INT32_MIN, INT32_MAX, 0, &wq) != 0 ||
        fr_rm_int(conn, req, "perm", NULL, 1, INT32_MIN, INT32_MAX, 0, &perm) != 0 ||
        fr_rm_int(conn, req, "topicSysFlag", NULL, 0, INT32_MIN, INT32_MAX, 0, &sys) != 0)
        return;
    t.read_queues = (int32_t)rq;
    t.write_queues = (int32_t)wq;
    t.perm = (int32_t)perm;
    t.sys_flag = (int32_t)sys;
    t.order = strcmp(fr_rm_str(conn, req, "order", NULL, 0, "false"), "true") == 0;
    const char *attr_mod = fr_rm_str(conn, req, "attributes", NULL, 0, "");
    topic_ack_t *ack = topic_ack_new(conn, req);
    if (!ack || bk_admin_topics_update(rm->fe->admin_ops, "UPDATE_AND_CREATE_TOPIC", &t, &attr_mod, 1, topic_ack_done,
                                       ack, &r) == BK_OK)
        return;
    topic_ack_free(ack);
    fr_rm_reply_result(conn, req, &r);
}

/* UPDATE_AND_CREATE_TOPIC_LIST: a CreateTopicListRequestBody; every topic
 * created or replaced at once, answered once the table is on disk. */
void fr_rm_handle_update_topic_list(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    fr_rm_topic_item_t *items;
    size_t n;
    char why[256];
    bk_result_t r;
    if (!fr_rm_allowed(rm, conn, req, NULL, NULL))
        return;
    rmq_err_t rc = fr_rm_topic_list_parse(req->body, req->body_len, &items, &n, why, sizeof why);
    bk_topic_t *topics = rc == RMQ_OK ? malloc(n * sizeof(*topics)) : NULL;
    const char **mods = topics ? malloc(n * sizeof(*mods)) : NULL;
    if (!mods) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "UPDATE_AND_CREATE_TOPIC_LIST: %s",
                            rc == RMQ_EPROTO ? why : "out of memory");
        free(items);
        free(topics);
        return;
    }
    for (size_t i = 0; i < n; i++) {
        topics[i] = items[i].topic;
        mods[i] = items[i].attr_mod;
    }
    topic_ack_t *ack = topic_ack_new(conn, req);
    if (ack && bk_admin_topics_update(rm->fe->admin_ops, "UPDATE_AND_CREATE_TOPIC_LIST", topics, mods, n,
                                      topic_ack_done, ack, &r) != BK_OK) {
        topic_ack_free(ack);
        fr_rm_reply_result(conn, req, &r);
    }
    free(items);
    free(topics);
    free(mods);
}

/* DELETE_TOPIC_IN_BROKER: config, consume queues and consumer offsets;
 * answered once the deletion is on disk. */
void fr_rm_handle_delete_topic(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    const char *topic = fr_rm_str(conn, req, "topic", NULL, 1, NULL);
    bk_result_t r;
    int existed;
    if (!topic || !fr_rm_allowed(rm, conn, req, topic, NULL))
        return;
    topic_ack_t *ack = topic_ack_new(conn, req);
    if (!ack)
        return;
    bk_status_t st = bk_admin_topic_delete(rm->fe->admin_ops, topic, topic_ack_done, ack, &existed, &r);
    if (st == BK_OK)
        LOG_INFO("DELETE_TOPIC_IN_BROKER from %s: %s%s", rmq_conn_peer(conn), topic, existed ? "" : " (absent)");
    if (st == BK_OK && existed)
        return;
    topic_ack_free(ack);
    reply_result(conn, req, &r);
}

/* TopicList of the broker's system topics (body_fn). */
static bk_status_t system_topics_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    const char *names[BK_SYSTEM_TOPICS_MAX];
    size_t n = bk_admin_system_topics(rm->fe->admin_ops, names);
    rmq_topic_list_json(b, names, n, NULL);
    return BK_OK;
}

/* TopicConfigSerializeWrapper {topicConfigTable, dataVersion} (body_fn). */
static bk_status_t all_topics_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    const bk_topic_t *t;
    size_t cursor = 0;
    Rmq__DataVersion dv;
    json_list_t l = {b, 0};
    FR_RM_ADD(b, "{\"topicConfigTable\":{");
    while (bk_topics_next(rm->fe->node->topics, &cursor, &t)) {
        list_key(&l, t->name);
        fr_rm_topic_json(b, t);
    }
    bk_topics_version(rm->fe->node->topics, &dv);
    FR_RM_ADD(b, "},\"dataVersion\":");
    fr_rm_data_version_json(b, dv.counter, dv.timestamp);
    FR_RM_ADD(b, "}");
    return BK_OK;
}

/* One TopicConfig, of the named topic, or TOPIC_NOT_EXIST (body_fn). */
static bk_status_t topic_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    const names_t *n = arg;
    const bk_topic_t *t = bk_topics_get(rm->fe->node->topics, n->topic, strlen(n->topic));
    if (!t)
        return bk_result_set(r, BK_TOPIC_NOT_EXIST, "No topic %.200s in broker %s", n->topic, rm->fe->node->addr);
    fr_rm_topic_json(b, t);
    return BK_OK;
}

/* TopicStatsTable {offsetTable: {MessageQueue: {lastUpdateTimestamp,
 * maxOffset, minOffset}}} of the named topic (body_fn). */
static bk_status_t topic_stats_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    const names_t *n = arg;
    bk_topic_stats_t stats, *ts = &stats;
    if (bk_admin_topic_stats(rm->fe->admin_ops, n->topic, ts, r) != BK_OK)
        return r->status;
    json_list_t l = {b, 0};
    FR_RM_ADD(b, "{\"offsetTable\":{");
    for (size_t i = 0; i < ts->n; i++) {
        const bk_queue_stat_t *q = &ts->queues[i];
        list_next(&l);
        fr_rm_mq_json(b, ts->topic, rm->fe->node->cfg->broker_name, q->queue_id);
        evbuffer_add_printf(b, ":{\"lastUpdateTimestamp\":%" PRId64 ",\"maxOffset\":%" PRId64
                            ",\"minOffset\":%" PRId64 "}", q->last_update_timestamp, q->max_offset,
                            q->min_offset);
    }
    FR_RM_ADD(b, "}}");
    bk_topic_stats_clear(ts);
    return BK_OK;
}

/* bk_clients_name_fn: appends name to the list. */
static void list_add(void *arg, const char *name)
{
    json_list_t *l = arg;
    list_next(l);
    rmq_json_str(l->b, name);
}

/* GroupList {groupList: [...]} of the groups consuming the named topic (body_fn). */
static bk_status_t consume_by_who_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    const names_t *n = arg;
    json_list_t l = {b, 0};
    FR_RM_ADD(b, "{\"groupList\":[");
    if (bk_admin_topic_groups(rm->fe->admin_ops, n->topic, list_add, &l, r) != BK_OK)
        return r->status;
    FR_RM_ADD(b, "]}");
    return BK_OK;
}

/* ---- subscription groups -------------------------------------------------- */

/* UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: a SubscriptionGroupConfig body. */
void fr_rm_handle_update_group(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_group_t grp;
    bk_result_t r;
    char why[256];
    if (!fr_rm_allowed(rm, conn, req, NULL, NULL))
        return;
    if (fr_rm_group_parse(req->body, req->body_len, &grp, why, sizeof(why)) != RMQ_OK) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP: %s", why);
        return;
    }
    bk_admin_group_update(rm->fe->admin_ops, &grp, &r);
    reply_result(conn, req, &r);
}

/* UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST: a SubscriptionGroupList; every
 * name is checked before any group is written, as RocketMQ does. */
void fr_rm_handle_update_group_list(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    bk_group_t *groups;
    size_t n;
    char why[256];
    bk_result_t r = {.status = BK_OK};
    if (!fr_rm_allowed(rm, conn, req, NULL, NULL))
        return;
    rmq_err_t rc = fr_rm_group_list_parse(req->body, req->body_len, &groups, &n, why, sizeof why);
    if (rc != RMQ_OK) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST: %s",
                            rc == RMQ_ENOMEM ? "out of memory" : why);
        return;
    }
    for (size_t i = 0; r.status == BK_OK && i < n; i++)
        bk_admin_group_update(rm->fe->admin_ops, &groups[i], &r);
    free(groups);
    reply_result(conn, req, &r);
}

/* DELETE_SUBSCRIPTIONGROUP: extField groupName. */
void fr_rm_handle_delete_group(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    const char *group = fr_rm_str(conn, req, "groupName", NULL, 1, NULL);
    bk_result_t r;
    if (!group || !fr_rm_allowed(rm, conn, req, NULL, group))
        return;
    bk_admin_group_delete(rm->fe->admin_ops, group, &r);
    reply_result(conn, req, &r);
}

/* SubscriptionGroupWrapper {subscriptionGroupTable, dataVersion} (body_fn). */
static bk_status_t all_groups_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    Rmq__SubscriptionGroupTable *tab = bk_groups_table_new(rm->fe->node->groups);
    json_list_t l = {b, 0};
    if (!tab)
        return bk_result_set(r, BK_SYSTEM_ERROR, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG: out of memory");
    FR_RM_ADD(b, "{\"subscriptionGroupTable\":{");
    for (size_t i = 0; i < tab->n_groups; i++) {
        bk_group_t grp;
        bk_group_from_pb(&grp, tab->groups[i]);
        list_key(&l, grp.name);
        fr_rm_group_json(b, &grp);
    }
    FR_RM_ADD(b, "},\"dataVersion\":");
    fr_rm_data_version_json(b, tab->data_version ? tab->data_version->counter : 0,
                            tab->data_version ? tab->data_version->timestamp : 0);
    FR_RM_ADD(b, "}");
    bk_groups_table_free(tab);
    return BK_OK;
}

/* ---- consumers ------------------------------------------------------------- */

/* bk_client_view_fn: appends one Connection {clientAddr, clientId, language, version}. */
static void connection_add(void *arg, const bk_client_view_t *cl)
{
    json_list_t *l = arg;
    list_next(l);
    FR_RM_ADD(l->b, "{\"clientAddr\":");
    rmq_json_str(l->b, cl->addr);
    FR_RM_ADD(l->b, ",\"clientId\":");
    rmq_json_str(l->b, cl->client_id);
    FR_RM_ADD(l->b, ",\"language\":");
    rmq_json_str(l->b, cl->language[0] ? cl->language : "OTHER");
    evbuffer_add_printf(l->b, ",\"version\":%" PRId32 "}", cl->version);
}

/* rmq_subexpr_fn: appends one tag to a tagsSet. */
static rmq_err_t tag_add(const char *tag, size_t len, void *arg)
{
    json_list_t *l = arg;
    list_next(l);
    rmq_json_strn(l->b, tag, len);
    return RMQ_OK;
}

/* bk_clients_sub_fn: appends topic: SubscriptionData {classFilterMode,
 * codeSet, expressionType, subString, subVersion, tagsSet, topic}. */
static void subscription_add(void *arg, const char *topic, const char *expr, rmq_expr_type_t type)
{
    json_list_t *l = arg;
    int all;
    list_key(l, topic);
    FR_RM_ADD(l->b, "{\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":");
    rmq_json_str(l->b, type == RMQ_EXPR_SQL92 ? "SQL92" : "TAG");
    FR_RM_ADD(l->b, ",\"subString\":");
    rmq_json_str(l->b, expr);
    FR_RM_ADD(l->b, ",\"subVersion\":0,\"tagsSet\":[");
    json_list_t tags = {l->b, 0};
    if (type != RMQ_EXPR_SQL92)
        rmq_subexpr_parse(expr, &all, tag_add, &tags);
    FR_RM_ADD(l->b, "],\"topic\":");
    rmq_json_str(l->b, topic);
    FR_RM_ADD(l->b, "}");
}

/* ProducerConnection {connectionSet} of the producer group named (body_fn);
 * SYSTEM_ERROR as RocketMQ's broker answers when it has no producer. */
static bk_status_t producer_connections_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg,
                                             bk_result_t *r)
{
    const names_t *n = arg;
    json_list_t conns = {b, 0};
    FR_RM_ADD(b, "{\"connectionSet\":[");
    bk_tx_each_producer(rm->fe->tx, n->group, connection_add, &conns);
    FR_RM_ADD(b, "]}");
    if (conns.n == 0)
        return bk_result_set(r, BK_SYSTEM_ERROR, "the producer group[%.200s] not exist", n->group);
    return BK_OK;
}

/* Where GET_ALL_PRODUCER_INFO's body is being written. */
typedef struct producers_json {
    json_list_t groups;
    json_list_t producers;
    const fr_remoting_t *rm;
} producers_json_t;

/* bk_client_view_fn: appends one ProducerInfo {clientId, language,
 * lastUpdateTimestamp, remoteIP, version}. */
static void producer_info_add(void *arg, const bk_client_view_t *cl)
{
    json_list_t *l = arg;
    list_next(l);
    FR_RM_ADD(l->b, "{\"clientId\":");
    rmq_json_str(l->b, cl->client_id);
    FR_RM_ADD(l->b, ",\"language\":");
    rmq_json_str(l->b, cl->language[0] ? cl->language : "OTHER");
    evbuffer_add_printf(l->b, ",\"lastUpdateTimestamp\":%" PRId64 ",\"remoteIP\":", cl->last_heartbeat_ms);
    rmq_json_str(l->b, cl->addr);
    evbuffer_add_printf(l->b, ",\"version\":%" PRId32 "}", cl->version);
}

/* bk_clients_name_fn: appends group: [ProducerInfo...]. */
static void producer_group_add(void *arg, const char *group)
{
    producers_json_t *pj = arg;
    list_key(&pj->groups, group);
    FR_RM_ADD(pj->groups.b, "[");
    pj->producers.n = 0;
    bk_tx_each_producer(pj->rm->fe->tx, group, producer_info_add, &pj->producers);
    FR_RM_ADD(pj->groups.b, "]");
}

/* ProducerTableInfo {data: {group: [ProducerInfo]}} of every producer group (body_fn). */
static bk_status_t all_producers_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    producers_json_t pj = {{b, 0}, {b, 0}, rm};
    (void)arg;
    (void)r;
    FR_RM_ADD(b, "{\"data\":{");
    bk_tx_each_group(rm->fe->tx, producer_group_add, &pj);
    FR_RM_ADD(b, "}}");
    return BK_OK;
}

/* A consumer group as GET_CONSUMER_CONNECTION_LIST reads it. */
typedef struct group_ref {
    const char *name;
    bk_group_view_t gv;
} group_ref_t;

/* ConsumerConnection {connectionSet, subscriptionTable, consumeType,
 * messageModel, consumeFromWhere} of arg, a group_ref_t (body_fn). */
static bk_status_t consumer_connections_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg,
                                             bk_result_t *r)
{
    const group_ref_t *g = arg;
    json_list_t conns = {b, 0}, subs = {b, 0};
    FR_RM_ADD(b, "{\"connectionSet\":[");
    bk_clients_each_client(rm->fe->clients, g->name, connection_add, &conns);
    evbuffer_add_printf(b, "],\"consumeFromWhere\":\"%s\",\"consumeType\":\"%s\",\"messageModel\":\"%s\","
                        "\"subscriptionTable\":{", fr_rm_consume_from_name(g->gv.consume_from),
                        g->gv.pull_mode ? "CONSUME_ACTIVELY" : "CONSUME_PASSIVELY",
                        g->gv.clustering ? "CLUSTERING" : "BROADCASTING");
    if (bk_clients_each_sub(rm->fe->clients, g->name, subscription_add, &subs) != RMQ_OK)
        return bk_result_set(r, BK_SYSTEM_ERROR, "GET_CONSUMER_CONNECTION_LIST: out of memory");
    FR_RM_ADD(b, "}}");
    return BK_OK;
}

/* GET_CONSUMER_CONNECTION_LIST: the clients and subscriptions of
 * consumerGroup, or CONSUMER_NOT_ONLINE when none of its clients is
 * connected. */
void fr_rm_handle_consumer_connections(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    group_ref_t g = {fr_rm_str(conn, req, "consumerGroup", NULL, 1, NULL)};
    if (!g.name || !fr_rm_allowed(rm, conn, req, NULL, g.name))
        return;
    if (!bk_clients_group(rm->fe->clients, g.name, &g.gv)) {
        rmq_remoting_replyf(conn, req, CODE_CONSUMER_NOT_ONLINE, "the consumer group[%.200s] not online", g.name);
        return;
    }
    reply_json(rm, conn, req, consumer_connections_body, &g);
}

/* INVOKE_BROKER_TO_RESET_OFFSET (mqadmin resetOffsetByTime,
 * skipAccumulatedMessage): the group's offsets on the topic reset to the
 * time (-1: the end) and pushed to its live consumers; answers the
 * ResetOffsetBody, or CONSUMER_NOT_ONLINE with nothing changed when the
 * group has no live consumer (the tool then commits the offsets itself). */
void fr_rm_handle_reset_offset(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    const char *topic = fr_rm_str(conn, req, "topic", NULL, 1, NULL);
    const char *group = topic ? fr_rm_str(conn, req, "group", NULL, 1, NULL) : NULL;
    int64_t ts;
    int force;
    bk_group_view_t gv;
    if (!group || fr_rm_int(conn, req, "timestamp", NULL, 1, -1, INT64_MAX, 0, &ts) != 0 ||
        fr_rm_bool(conn, req, "isForce", 0, 1, &force) != 0 || !fr_rm_allowed(rm, conn, req, topic, group))
        return;
    if (!bk_clients_group(rm->fe->clients, group, &gv)) {
        rmq_remoting_replyf(conn, req, CODE_CONSUMER_NOT_ONLINE,
                            "Consumer not online, so can not reset offset, Group: %.200s Topic: %.200s Timestamp: %"
                            PRId64, group, topic, ts);
        return;
    }
    bk_offset_reset_t reset;
    size_t told;
    bk_result_t r;
    struct evbuffer *b = evbuffer_new();
    if (!b) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "INVOKE_BROKER_TO_RESET_OFFSET: out of memory");
        return;
    }
    if (bk_offset_reset(rm->fe->offset_ops, topic, group, ts, force, &reset, &told, &r) != BK_OK) {
        fr_rm_reply_result(conn, req, &r);
    } else {
        fr_rm_reset_offset_json(b, &reset, rm->fe->node->cfg->broker_name);
        fr_rm_reply_body(conn, req, b);
        bk_offset_reset_clear(&reset);
    }
    evbuffer_free(b);
}

/* CLONE_GROUP_OFFSET (mqadmin cloneGroupOffset): srcGroup, destGroup,
 * topic (absent or empty: every topic srcGroup has offsets on), offline. */
void fr_rm_handle_clone_offset(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    if (!fr_rm_allowed(rm, conn, req, NULL, NULL))
        return;
    const char *src = fr_rm_str(conn, req, "srcGroup", NULL, 1, NULL);
    const char *dest = src ? fr_rm_str(conn, req, "destGroup", NULL, 1, NULL) : NULL;
    const char *topic = dest ? fr_rm_str(conn, req, "topic", NULL, 0, "") : NULL;
    int offline;
    size_t copied;
    bk_result_t r;
    if (!topic || fr_rm_bool(conn, req, "offline", 0, 0, &offline) != 0)
        return;
    if (bk_offset_clone(rm->fe->offset_ops, src, dest, topic, offline, &copied, &r) == BK_OK)
        LOG_INFO("CLONE_GROUP_OFFSET from %s: %s -> %s on %s: %zu queues", rmq_conn_peer(conn), src, dest,
                 topic[0] ? topic : "every topic", copied);
    reply_result(conn, req, &r);
}

/* Appends ConsumeStats {consumeTps, offsetTable: {MessageQueue:
 * {brokerOffset, consumerOffset, pullOffset, lastTimestamp}}} of group's
 * queues of cp on topic (NULL: every one), and adds their lag to *diff. */
static void consume_stats_json(const fr_remoting_t *rm, struct evbuffer *b, const bk_consume_progress_t *cp,
                               const char *group, const char *topic, double tps, int64_t *diff)
{
    json_list_t l = {b, 0};
    evbuffer_add_printf(b, "{\"consumeTps\":%.2f,\"offsetTable\":{", tps);
    for (size_t i = 0; i < cp->n; i++) {
        const bk_queue_progress_t *q = &cp->queues[i];
        if (topic && strcmp(q->topic, topic) != 0)
            continue;
        list_next(&l);
        fr_rm_mq_json(b, q->topic, rm->fe->node->cfg->broker_name, q->queue_id);
        evbuffer_add_printf(b, ":{\"brokerOffset\":%" PRId64 ",\"consumerOffset\":%" PRId64
                            ",\"pullOffset\":%" PRId64 ",\"lastTimestamp\":%" PRId64 "}", q->broker_offset,
                            q->consumer_offset,
                            bk_pop_pull_offset(rm->fe->pop, group, q->topic, q->queue_id, q->consumer_offset),
                            q->last_timestamp);
        *diff += q->broker_offset - q->consumer_offset;
    }
    FR_RM_ADD(b, "}}");
}

/* ConsumeStats of the named group on the named topic ("": every topic it
 * has offsets on) (body_fn). */
static bk_status_t consume_stats_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    const names_t *n = arg;
    bk_consume_progress_t cp;
    int64_t diff = 0;
    if (bk_offset_progress(rm->fe->offset_ops, n->group, n->topic, &cp, r) != BK_OK)
        return r->status;
    consume_stats_json(rm, b, &cp, n->group, NULL, cp.consume_tps, &diff);
    bk_consume_progress_clear(&cp);
    return BK_OK;
}

/* GET_BROKER_CONSUME_STATS under construction: the request's isOrder, the
 * answer, the lag so far, the first failure. */
typedef struct broker_consume {
    const fr_remoting_t *rm;
    int order_only;
    json_list_t groups;
    int64_t diff;
    bk_result_t r;
} broker_consume_t;

/* Whether the progress queue at i opens a topic of the answer: its first
 * queue there, on a topic this broker has (an order topic when asked). */
static int topic_opens(const broker_consume_t *bc, const bk_consume_progress_t *cp, size_t i)
{
    const char *topic = cp->queues[i].topic;
    for (size_t j = 0; j < i; j++)
        if (strcmp(cp->queues[j].topic, topic) == 0)
            return 0;
    const bk_topic_t *t = bk_topics_get(bc->rm->fe->node->topics, topic, strlen(topic));
    return t && (!bc->order_only || t->order);
}

/* Appends {group: [ConsumeStats of each topic]} of the group named name. */
static void group_consume_add(broker_consume_t *bc, const char *name)
{
    bk_consume_progress_t cp;
    if (bc->r.status != BK_OK || bk_offset_progress(bc->rm->fe->offset_ops, name, "", &cp, &bc->r) != BK_OK)
        return;
    struct evbuffer *b = bc->groups.b;
    json_list_t stats = {b, 0};
    list_next(&bc->groups);
    FR_RM_ADD(b, "{");
    rmq_json_str(b, name);
    FR_RM_ADD(b, ":[");
    for (size_t i = 0; i < cp.n; i++) {
        if (!topic_opens(bc, &cp, i))
            continue;
        list_next(&stats);
        consume_stats_json(bc->rm, b, &cp, name, cp.queues[i].topic,
                           bk_groupstats_tps(bc->rm->fe->groupstats, name, cp.queues[i].topic), &bc->diff);
    }
    FR_RM_ADD(b, "]}");
    bk_consume_progress_clear(&cp);
}

/* ConsumeStatsList {brokerAddr, consumeStatsList: [{group: [ConsumeStats]}],
 * totalDiff, totalInflightDiff} of every subscription group (body_fn; arg:
 * the request's isOrder). */
static bk_status_t broker_consume_stats_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg,
                                             bk_result_t *r)
{
    broker_consume_t bc = {.rm = rm, .order_only = *(const int *)arg, .groups = {b, 0}};
    Rmq__SubscriptionGroupTable *tab = bk_groups_table_new(rm->fe->node->groups);
    if (!tab)
        return bk_result_set(r, BK_SYSTEM_ERROR, "GET_BROKER_CONSUME_STATS: out of memory");
    bk_result_ok(&bc.r);
    FR_RM_ADD(b, "{\"brokerAddr\":");
    rmq_json_str(b, rm->fe->node->addr);
    FR_RM_ADD(b, ",\"consumeStatsList\":[");
    for (size_t i = 0; i < tab->n_groups; i++)
        group_consume_add(&bc, tab->groups[i]->group_name);
    bk_groups_table_free(tab);
    if (bc.r.status != BK_OK)
        return *r = bc.r, r->status;
    evbuffer_add_printf(b, "],\"totalDiff\":%" PRId64 ",\"totalInflightDiff\":0}", bc.diff);
    return BK_OK;
}

/* GET_BROKER_CONSUME_STATS (mqadmin brokerConsumeStats): every group's
 * consumption of every topic it has offsets on (only order topics with
 * isOrder=true). */
void fr_rm_handle_broker_consume_stats(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    int order_only;
    if (fr_rm_allowed(arg, conn, req, NULL, NULL) && fr_rm_bool(conn, req, "isOrder", 0, 0, &order_only) == 0)
        reply_json(arg, conn, req, broker_consume_stats_body, &order_only);
}

/* The request of VIEW_BROKER_STATS_DATA: the item's kind and key. */
typedef struct stats_item_req {
    const char *name, *key;
    int kind;
} stats_item_req_t;

/* Appends a BrokerStatsItem {sum, tps, avgpt}. */
static void stats_item_json(struct evbuffer *b, const bk_si_snapshot_t *ss)
{
    evbuffer_add_printf(b, "{\"sum\":%" PRId64 ",\"tps\":%.4f,\"avgpt\":%.4f}", ss->sum, ss->tps, ss->avgpt);
}

/* BrokerStatsData {statsMinute, statsHour, statsDay} of the stats item, or
 * SYSTEM_ERROR naming it as RocketMQ does when it is not kept (body_fn). */
static bk_status_t broker_stats_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    const stats_item_req_t *q = arg;
    bk_si_snapshot_t ss[BK_SI_WINDOW_COUNT];
    if (q->kind < 0 || !bk_statsitems_view(rm->fe->statsitems, (bk_si_kind_t)q->kind, q->key, ss))
        return bk_result_set(r, BK_SYSTEM_ERROR, "The stats <%.100s> <%.300s> not exist", q->name, q->key);
    FR_RM_ADD(b, "{\"statsMinute\":");
    stats_item_json(b, &ss[BK_SI_MINUTE]);
    FR_RM_ADD(b, ",\"statsHour\":");
    stats_item_json(b, &ss[BK_SI_HOUR]);
    FR_RM_ADD(b, ",\"statsDay\":");
    stats_item_json(b, &ss[BK_SI_DAY]);
    FR_RM_ADD(b, "}");
    return BK_OK;
}

/* VIEW_BROKER_STATS_DATA (mqadmin statsAll): one stats item's minute, hour
 * and day (statsName TOPIC_PUT_NUMS..., statsKey a topic, "topic@group" or
 * the cluster name). */
void fr_rm_handle_broker_stats(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    stats_item_req_t q = {NULL, NULL, -1};
    if (!fr_rm_allowed(arg, conn, req, NULL, NULL) || !(q.name = fr_rm_str(conn, req, "statsName", NULL, 1, NULL)) ||
        !(q.key = fr_rm_str(conn, req, "statsKey", NULL, 1, NULL)))
        return;
    q.kind = bk_statsitems_kind(q.name);
    reply_json(arg, conn, req, broker_stats_body, &q);
}

/* ---- the broker ------------------------------------------------------------ */

/* bk_kv_fn: appends "key":"value" to a KVTable under construction. */
static void kv_add(const char *key, const char *value, void *arg)
{
    json_list_t *l = arg;
    list_key(l, key);
    rmq_json_str(l->b, value);
}

/* KVTable {table: {key: value}} of the core's runtime keys (body_fn). */
static bk_status_t runtime_info_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    bk_front_t *fe = rm->fe;
    bk_runtime_live_t live = {.send_waiting = bk_send_waiting(fe->send), .pull_held = bk_consume_held(fe->consume),
                              .conn_count = rmq_server_conn_count(fe->srv)};
    json_list_t l = {b, 0};
    FR_RM_ADD(b, "{\"table\":{");
    bk_admin_runtime_info(fe->admin_ops, &live, kv_add, &l);
    FR_RM_ADD(b, "}}");
    return BK_OK;
}

/* ---- reads of one shape: names in, the core asked, a JSON body out ------- */

/* QueryConsumeTimeSpanBody {consumeTimeSpanSet: [QueueTimeSpan
 * {messageQueue, minTimeStamp, maxTimeStamp, consumeTimeStamp,
 * delayTime}]} of the named group on each write queue of the named topic
 * (body_fn). */
static bk_status_t time_span_body(const fr_remoting_t *rm, struct evbuffer *b, const void *arg, bk_result_t *r)
{
    const names_t *n = arg;
    bk_time_span_t *spans;
    size_t count;
    if (bk_offset_time_span(rm->fe->offset_ops, n->topic, n->group, rmq_wall_ms(), &spans, &count, r) != BK_OK)
        return r->status;
    json_list_t l = {b, 0};
    FR_RM_ADD(b, "{\"consumeTimeSpanSet\":[");
    for (size_t i = 0; i < count; i++) {
        const bk_time_span_t *s = &spans[i];
        list_next(&l);
        evbuffer_add_printf(b, "{\"consumeTimeStamp\":%" PRId64 ",\"delayTime\":%" PRId64
                            ",\"maxTimeStamp\":%" PRId64 ",\"messageQueue\":", s->consume_time, s->delay_ms,
                            s->max_time);
        fr_rm_mq_json(b, n->topic, rm->fe->node->cfg->broker_name, s->queue_id);
        evbuffer_add_printf(b, ",\"minTimeStamp\":%" PRId64 "}", s->min_time);
    }
    FR_RM_ADD(b, "]}");
    free(spans);
    return BK_OK;
}

/* A read: the request code, the extFields naming its topic and group (NULL:
 * it names none; group_key first, required; topic_key required unless
 * topic_optional, then ""), and the body it answers. */
typedef struct json_read {
    int code;
    const char *group_key;
    const char *topic_key;
    int topic_optional;
    body_fn body;
} json_read_t;

static const json_read_t json_reads[] = {
    {21, NULL, NULL, 0, all_topics_body},                      /* GET_ALL_TOPIC_CONFIG */
    {305, NULL, NULL, 0, system_topics_body},                  /* GET_SYSTEM_TOPIC_LIST_FROM_BROKER */
    {28, NULL, NULL, 0, runtime_info_body},                    /* GET_BROKER_RUNTIME_INFO */
    {201, NULL, NULL, 0, all_groups_body},                     /* GET_ALL_SUBSCRIPTIONGROUP_CONFIG */
    {204, "producerGroup", NULL, 0, producer_connections_body}, /* GET_PRODUCER_CONNECTION_LIST */
    {202, NULL, "topic", 0, topic_stats_body},                 /* GET_TOPIC_STATS_INFO */
    {208, "consumerGroup", "topic", 1, consume_stats_body},    /* GET_CONSUME_STATS */
    {300, NULL, "topic", 0, consume_by_who_body},              /* QUERY_TOPIC_CONSUME_BY_WHO */
    {303, "group", "topic", 0, time_span_body},                /* QUERY_CONSUME_TIME_SPAN */
    {328, NULL, NULL, 0, all_producers_body},                  /* GET_ALL_PRODUCER_INFO */
    {351, NULL, "topic", 0, topic_body},                       /* GET_TOPIC_CONFIG */
};

void fr_rm_handle_json_read(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    const json_read_t *row = NULL;
    names_t n = {NULL, NULL};
    for (size_t i = 0; !row && i < sizeof(json_reads) / sizeof(json_reads[0]); i++)
        if (json_reads[i].code == req->code)
            row = &json_reads[i];
    if (!row) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED, "request code %d is not a read",
                            req->code);
        return;
    }
    if (row->group_key && !(n.group = fr_rm_str(conn, req, row->group_key, NULL, 1, NULL)))
        return;
    if (row->topic_key && !(n.topic = fr_rm_str(conn, req, row->topic_key, NULL, !row->topic_optional, "")))
        return;
    if (fr_rm_allowed(arg, conn, req, n.topic, n.group))
        reply_json(arg, conn, req, row->body, &n);
}

/* GET_BROKER_CONFIG: the effective configuration as properties text
 * (key=value lines), what MixAll.string2Properties reads. */
void fr_rm_handle_broker_config(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    char *text = NULL;
    size_t len = 0;
    if (!fr_rm_allowed(rm, conn, req, NULL, NULL))
        return;
    FILE *f = open_memstream(&text, &len);
    if (f) {
        bk_config_print(rm->fe->node->cfg, f);
        fclose(f);
    }
    if (!f || !text) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "GET_BROKER_CONFIG: out of memory");
    } else {
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .body = text, .body_len = len};
        rmq_remoting_reply(conn, req, &rep);
    }
    free(text);
}

/* UPDATE_BROKER_CONFIG: refused, naming why (no runtime configuration change). */
void fr_rm_handle_update_broker_config(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    if (!fr_rm_allowed(arg, conn, req, NULL, NULL))
        return;
    rmq_remoting_replyf(conn, req, RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED,
                        "UPDATE_BROKER_CONFIG (25) is not supported: an rmq broker reads its configuration once, "
                        "from its properties file; change the file and restart the broker");
}
