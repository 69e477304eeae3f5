/* fr_admin.c: the rmq front-end of the administration requests: runtime
 * info, topic create/update, delete and stats, subscription-group
 * create/update and delete (decoded into the core's neutral requests,
 * core/bk_admin_ops.c), and the whole topic and group tables (their own
 * protobuf views). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_admin_ops.h"
#include "bk_front.h"
#include "bk_groups_pb.h"
#include "bk_topics_pb.h"
#include "fr_routes.h"
#include "fr_perm.h"
#include "fr_status.h"
#include "rmq_log.h"

#define KV_MAX 100
#define HOT_TOPICS 10                /* busiest topics named in runtime info */

/* Runtime info as a ConfigTable under construction. */
typedef struct kv_table {
    Rmq__ConfigEntry items[KV_MAX];
    Rmq__ConfigEntry *ptrs[KV_MAX];
    char keys[KV_MAX][48];
    char vals[KV_MAX][144];
    size_t n;
} kv_table_t;

/* bk_kv_fn: appends key = value (silently full at KV_MAX entries). */
static void kv_add(const char *key, const char *value, void *arg)
{
    kv_table_t *t = arg;
    if (t->n == KV_MAX)
        return;
    rmq__config_entry__init(&t->items[t->n]);
    snprintf(t->keys[t->n], sizeof(t->keys[0]), "%s", key);
    snprintf(t->vals[t->n], sizeof(t->vals[0]), "%s", value);
    t->items[t->n].key = t->keys[t->n];
    t->items[t->n].value = t->vals[t->n];
    t->ptrs[t->n] = &t->items[t->n];
    t->n++;
}

/* Answers SUCCESS without a header, or r's failure. */
static void reply_result(rmq_conn_t *conn, const rmq_frame_t *req, const bk_result_t *r)
{
    if (r->status == BK_OK)
        rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
    else
        fr_reply_result(conn, rmq_reply_to(req->cmd), r, NULL);
}

/* Adds hotTopic<i>.name and hotTopic<i>.putNums (messages stored since the
 * item was first counted) of the HOT_TOPICS topics that stored most over
 * the last minute, busiest first: the name server's console charts their
 * rates from the differences (ns_console.c). */
static void hot_topics_add(const bk_statsitems_t *si, kv_table_t *t)
{
    bk_si_top_t top[HOT_TOPICS];
    size_t n = bk_statsitems_top(si, BK_SI_TOPIC_PUT_NUMS, top, HOT_TOPICS);
    for (size_t i = 0; i < n; i++) {
        char key[48], val[32];
        snprintf(key, sizeof(key), "hotTopic%zu.name", i);
        kv_add(key, top[i].key, t);
        snprintf(key, sizeof(key), "hotTopic%zu.putNums", i);
        snprintf(val, sizeof(val), "%" PRId64, top[i].value);
        kv_add(key, val, t);
    }
}

/* GET_BROKER_RUNTIME_INFO: store and request statistics as a ConfigTable,
 * then the busiest topics (hot_topics_add). */
void fr_runtime_info(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_allowed(fe, conn, req, NULL, NULL))
        return;
    kv_table_t *t = calloc(1, sizeof(*t));
    if (!t) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    bk_runtime_live_t live = {.send_waiting = bk_send_waiting(fe->send), .pull_held = bk_consume_held(fe->consume),
                              .conn_count = rmq_server_conn_count(fe->srv)};
    bk_admin_runtime_info(fe->admin_ops, &live, kv_add, t);
    hot_topics_add(fe->statsitems, t);
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__ConfigTable ct = RMQ__CONFIG_TABLE__INIT;
    ct.entries = t->ptrs;
    ct.n_entries = t->n;
    resp.header_case = RMQ__COMMAND__HEADER_CONFIG;
    resp.config = &ct;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    free(t);
}

/* A topic request's answer, held until the table is on disk. */
typedef struct topic_ack {
    rmq_conn_t *conn;                /* referenced */
    rmq_reply_to_t to;
} topic_ack_t;

/* bk_topics_durable_fn: answers the held request, drops the reference. */
static void topic_ack_done(void *arg, rmq_err_t rc)
{
    topic_ack_t *ack = arg;
    if (rc == RMQ_OK)
        rmq_conn_reply(ack->conn, ack->to, NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
    else if (rc != RMQ_ESHUTDOWN)
        rmq_conn_replyf(ack->conn, ack->to, RMQ__STATUS__SYSTEM_ERROR, "%s: the topic table could not be written: %s",
                        rmq_request_name(ack->to.code), rmq_strerror(rc));
    rmq_conn_unref(ack->conn);
    free(ack);
}

/* The core's topic from a request's TopicConfig; its attributes field is
 * the modification ("+key=value,-key", as in RocketMQ's requests), into
 * *attr_mod (borrowed from tc). */
static void topic_from_request(const Rmq__TopicConfig *tc, bk_topic_t *t, const char **attr_mod)
{
    char unused[8];
    bk_topic_from_pb(tc, 0, t, unused, sizeof(unused));
    *attr_mod = tc->attributes;
}

/* Creates or replaces topics[0..n) through the core with the attribute
 * modifications attr_mods[0..n); answers SUCCESS once the table is durable
 * (registration follows at once), or the refusal. */
static void topics_update(bk_front_t *fe, rmq_conn_t *conn, const rmq_frame_t *req, bk_topic_t *topics,
                          const char *const *attr_mods, size_t n)
{
    bk_result_t r;
    if (!fr_allowed(fe, conn, req, NULL, NULL))
        return;
    topic_ack_t *ack = malloc(sizeof(*ack));
    if (!ack) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    *ack = (topic_ack_t){conn, rmq_reply_to(req->cmd)};
    rmq_conn_ref(conn);
    if (bk_admin_topics_update(fe->admin_ops, rmq_request_name(req->cmd->code), topics, attr_mods, n,
                               topic_ack_done, ack, &r) == BK_OK)
        return;
    rmq_conn_unref(conn);
    free(ack);
    reply_result(conn, req, &r);
}

/* UPDATE_AND_CREATE_TOPIC: creates or replaces one topic. */
void fr_update_topic(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_topic_t topic;
    const char *attr_mod;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_TOPIC_CONFIG, "TopicConfig (topic_config)"))
        return;
    topic_from_request(req->cmd->topic_config, &topic, &attr_mod);
    topics_update(arg, conn, req, &topic, &attr_mod, 1);
}

/* UPDATE_AND_CREATE_TOPIC_LIST: creates or replaces many topics in one
 * table write and one registration; one bad entry refuses them all. */
void fr_update_topic_list(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE, "TopicConfigTable (topic_config_table)"))
        return;
    const Rmq__TopicConfigTable *tab = req->cmd->topic_config_table;
    size_t n = tab->n_topics <= BK_TOPIC_LIST_MAX ? tab->n_topics : BK_TOPIC_LIST_MAX + 1;
    bk_topic_t *topics = calloc(n ? n : 1, sizeof(*topics));
    const char **attr_mods = calloc(n ? n : 1, sizeof(*attr_mods));
    if (!topics || !attr_mods) {
        free(topics);
        free(attr_mods);
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    for (size_t i = 0; i < n && i < tab->n_topics; i++)
        topic_from_request(tab->topics[i], &topics[i], &attr_mods[i]);
    LOG_INFO("UPDATE_AND_CREATE_TOPIC_LIST from %s: %zu topics", rmq_conn_peer(conn), tab->n_topics);
    topics_update(arg, conn, req, topics, attr_mods, n);
    free(topics);
    free(attr_mods);
}

/* DELETE_TOPIC_IN_BROKER: config, consume queues and consumer offsets;
 * answered once the deletion is on disk. */
void fr_delete_topic(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_TOPIC, "TopicRequest (topic)") ||
        !fr_allowed(fe, conn, req, req->cmd->topic->topic, NULL))
        return;
    bk_result_t r;
    int existed;
    topic_ack_t *ack = malloc(sizeof(*ack));
    if (!ack) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    *ack = (topic_ack_t){conn, rmq_reply_to(req->cmd)};
    rmq_conn_ref(conn);
    bk_status_t st = bk_admin_topic_delete(fe->admin_ops, req->cmd->topic->topic, topic_ack_done, ack, &existed, &r);
    if (st == BK_OK && existed)
        return;
    rmq_conn_unref(conn);
    free(ack);
    if (st != BK_OK)
        fr_reply_result(conn, rmq_reply_to(req->cmd), &r, NULL);
    else
        rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, "topic was not present", NULL);
}

/* GET_ALL_TOPIC_CONFIG: the whole table with its data version. */
void fr_all_topics(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_allowed(fe, conn, req, NULL, NULL))
        return;
    Rmq__TopicConfigTable *tab = bk_topics_table_new(fe->node->topics);
    if (!tab) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    resp.header_case = RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE;
    resp.topic_config_table = tab;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    bk_topics_table_free(tab);
}

/* GET_TOPIC_STATS_INFO: min/max offset and last store time per queue. */
void fr_topic_stats(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_TOPIC, "TopicRequest (topic)") ||
        !fr_allowed(fe, conn, req, req->cmd->topic->topic, NULL))
        return;
    bk_topic_stats_t ts;
    bk_result_t r;
    Rmq__QueueStats *qs = NULL;
    Rmq__QueueStats **ptrs = NULL;
    if (bk_admin_topic_stats(fe->admin_ops, req->cmd->topic->topic, &ts, &r) != BK_OK) {
        fr_reply_result(conn, rmq_reply_to(req->cmd), &r, NULL);
        return;
    }
    qs = calloc(ts.n ? ts.n : 1, sizeof(*qs));
    ptrs = calloc(ts.n ? ts.n : 1, sizeof(*ptrs));
    if (!qs || !ptrs) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        goto out;
    }
    for (size_t i = 0; i < ts.n; i++) {
        rmq__queue_stats__init(&qs[i]);
        qs[i].queue_id = ts.queues[i].queue_id;
        qs[i].min_offset = ts.queues[i].min_offset;
        qs[i].max_offset = ts.queues[i].max_offset;
        qs[i].last_update_timestamp = ts.queues[i].last_update_timestamp;
        ptrs[i] = &qs[i];
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__TopicStats pb = RMQ__TOPIC_STATS__INIT;
    pb.topic = (char *)ts.topic;
    pb.queues = ptrs;
    pb.n_queues = ts.n;
    resp.header_case = RMQ__COMMAND__HEADER_TOPIC_STATS;
    resp.topic_stats = &pb;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
out:
    free(qs);
    free(ptrs);
    bk_topic_stats_clear(&ts);
}

/* UPDATE_AND_CREATE_SUBSCRIPTIONGROUP (the group's retry topic with it). */
void fr_update_group(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_SUBSCRIPTION_GROUP,
                        "SubscriptionGroupConfig (subscription_group)") ||
        !fr_allowed(fe, conn, req, NULL, NULL))
        return;
    bk_group_t grp;
    bk_result_t r;
    bk_group_from_pb(&grp, req->cmd->subscription_group);
    bk_admin_group_update(fe->admin_ops, &grp, &r);
    reply_result(conn, req, &r);
}

/* DELETE_SUBSCRIPTIONGROUP: SUBSCRIPTION_GROUP_NOT_EXIST if absent. */
void fr_delete_group(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_GROUP, "GroupRequest (group)") ||
        !fr_allowed(fe, conn, req, NULL, req->cmd->group->consumer_group))
        return;
    bk_result_t r;
    bk_admin_group_delete(fe->admin_ops, req->cmd->group->consumer_group, &r);
    reply_result(conn, req, &r);
}

/* GET_ALL_SUBSCRIPTIONGROUP_CONFIG. */
void fr_all_groups(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_allowed(fe, conn, req, NULL, NULL))
        return;
    Rmq__SubscriptionGroupTable *tab = bk_groups_table_new(fe->node->groups);
    if (!tab) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    resp.header_case = RMQ__COMMAND__HEADER_SUBSCRIPTION_GROUP_TABLE;
    resp.subscription_group_table = tab;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    bk_groups_table_free(tab);
}
