/* bk_admin.c: offset, metadata and statistics requests: consumer offsets,
 * queue offsets and times, message view, runtime info, topic and
 * subscription-group administration, and the tables slaves and mqadmin read. */
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_broker.h"
#include "bk_ha.h"
#include "bk_meta.h"
#include "bk_sendback.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define NEED(conn, req, kase, name) \
    do { if (!bk_need_header((conn), (req), (kase), (name))) return; } while (0)

/* Replies NAME_ILLEGAL (returns 0) unless name follows the rule. */
static int check_name(rmq_conn_t *conn, const rmq_frame_t *req, const char *what, const char *name)
{
    const char *why;
    if (rmq_name_is_valid(name, strlen(name), &why))
        return 1;
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__NAME_ILLEGAL, "%s: %s '%.200s' %s",
                    rmq_request_name(req->cmd->code), what, name, why);
    return 0;
}

/* Answers SUCCESS with an OffsetResponse header. */
static void reply_offset(rmq_conn_t *conn, const rmq_frame_t *req, int64_t offset, int64_t ts)
{
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__OffsetResponse o = RMQ__OFFSET_RESPONSE__INIT;
    o.offset = offset;
    o.timestamp = ts;
    resp.header_case = RMQ__COMMAND__HEADER_OFFSET_RESP;
    resp.offset_resp = &o;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
}

/* Answers a bare SUCCESS. */
static void reply_ok(rmq_conn_t *conn, const rmq_frame_t *req)
{
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
}

/* ---- consumer offsets --------------------------------------------------- */

/* QUERY_CONSUMER_OFFSET: the stored offset, or QUERY_NOT_FOUND. */
static void h_query_consumer_offset(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    NEED(conn, req, RMQ__COMMAND__HEADER_CONSUMER_OFFSET, "ConsumerOffsetRequest (consumer_offset)");
    const Rmq__ConsumerOffsetRequest *h = req->cmd->consumer_offset;
    int64_t off = bk_offsets_query(bk->offsets, h->topic, h->consumer_group, h->queue_id);
    if (off < 0) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__QUERY_NOT_FOUND,
                        "no offset stored for group %s on %s queue %d", h->consumer_group, h->topic, h->queue_id);
        return;
    }
    reply_offset(conn, req, off, 0);
}

/* UPDATE_CONSUMER_OFFSET: stores the offset (persisted by the tick). */
static void h_update_consumer_offset(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    NEED(conn, req, RMQ__COMMAND__HEADER_CONSUMER_OFFSET, "ConsumerOffsetRequest (consumer_offset)");
    const Rmq__ConsumerOffsetRequest *h = req->cmd->consumer_offset;
    if (!check_name(conn, req, "topic", h->topic) || !check_name(conn, req, "consumer group", h->consumer_group))
        return;
    if (bk_offsets_commit(bk->offsets, h->topic, h->consumer_group, h->queue_id, h->commit_offset) != RMQ_OK) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST,
                        "UPDATE_CONSUMER_OFFSET: bad queueId %d or offset %" PRId64, h->queue_id, h->commit_offset);
        return;
    }
    bk_ha_offset_committed(bk->ha, h->topic, h->consumer_group, h->queue_id);
    reply_ok(conn, req);
}

/* ---- queue offsets and times ------------------------------------------- */

/* GET_MAX/MIN_OFFSET, SEARCH_OFFSET_BY_TIMESTAMP, GET_EARLIEST_MSG_STORETIME. */
static void h_queue_offset(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    NEED(conn, req, RMQ__COMMAND__HEADER_QUEUE, "QueueRequest (queue)");
    const Rmq__QueueRequest *h = req->cmd->queue;
    switch (req->cmd->code) {
    case RMQ__REQUEST_CODE__GET_MAX_OFFSET:
        reply_offset(conn, req, st_store_max_offset(bk->store, h->topic, h->queue_id), 0);
        break;
    case RMQ__REQUEST_CODE__GET_MIN_OFFSET:
        reply_offset(conn, req, st_store_min_offset(bk->store, h->topic, h->queue_id), 0);
        break;
    case RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP:
        reply_offset(conn, req, st_store_offset_by_time(bk->store, h->topic, h->queue_id, h->timestamp), 0);
        break;
    default: {
        int64_t min = st_store_min_offset(bk->store, h->topic, h->queue_id);
        reply_offset(conn, req, min, st_store_time_at(bk->store, h->topic, h->queue_id, min));
        break;
    }
    }
}

/* VIEW_MESSAGE_BY_ID: the raw record at a commit-log offset as the body. */
static void h_view_message(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    NEED(conn, req, RMQ__COMMAND__HEADER_VIEW_MESSAGE, "ViewMessageRequest (view_message)");
    int64_t off = req->cmd->view_message->offset;
    struct evbuffer *body = evbuffer_new();
    rmq_err_t rc = body ? st_store_read_record(bk->store, off, body) : RMQ_ENOMEM;
    if (rc == RMQ_OK)
        rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, body);
    else
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__QUERY_NOT_FOUND,
                        "no message at commit-log offset %" PRId64 ": %s", off, rmq_strerror(rc));
    if (body)
        evbuffer_free(body);
}

/* ---- runtime info ------------------------------------------------------- */

#define KV_MAX 80

typedef struct kv_table {
    Rmq__ConfigEntry items[KV_MAX];
    Rmq__ConfigEntry *ptrs[KV_MAX];
    char keys[KV_MAX][48];
    char vals[KV_MAX][144];
    size_t n;
} kv_table_t;

/* Appends key = printf(fmt) to t (silently full at KV_MAX entries). */
static void kv_add(kv_table_t *t, const char *key, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static void kv_add(kv_table_t *t, const char *key, const char *fmt, ...)
{
    if (t->n == sizeof(t->items) / sizeof(t->items[0]))
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(t->vals[t->n], sizeof(t->vals[0]), fmt, ap);
    va_end(ap);
    rmq__config_entry__init(&t->items[t->n]);
    snprintf(t->keys[t->n], sizeof(t->keys[0]), "%s", key);
    t->items[t->n].key = t->keys[t->n];
    t->items[t->n].value = t->vals[t->n];
    t->ptrs[t->n] = &t->items[t->n];
    t->n++;
}

/* bk_ha_describe sink. */
static void kv_add_ha(const char *key, const char *value, void *arg)
{
    kv_add(arg, key, "%s", value);
}

/* brokerRole as its property value. */
static const char *role_name(int role)
{
    return role == BK_SYNC_MASTER ? "SYNC_MASTER" : role == BK_SLAVE ? "SLAVE" : "ASYNC_MASTER";
}

/* GET_BROKER_RUNTIME_INFO: store and request statistics as a ConfigTable. */
static void h_runtime_info(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    st_store_stats_t st;
    st_store_stats(bk->store, &st);
    kv_table_t *t = calloc(1, sizeof(*t));
    if (!t) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    char tps[64];
    kv_add(t, "brokerVersionDesc", "rmq 0.1.0");
    kv_add(t, "brokerAddr", "%s", bk->addr);
    kv_add(t, "brokerRole", "%s", role_name(bk->cfg->broker_role));
    kv_add(t, "bootTimestamp", "%" PRId64, bk->boot_ms);
    kv_add(t, "runtime", "%" PRId64 " s", (rmq_wall_ms() - bk->boot_ms) / 1000);
    kv_add(t, "commitLogMinOffset", "%" PRId64, st.commitlog_min_offset);
    kv_add(t, "commitLogMaxOffset", "%" PRId64, st.commitlog_max_offset);
    kv_add(t, "flushedOffset", "%" PRId64, st.flushed_offset);
    kv_add(t, "dispatchBehindBytes", "%" PRId64, st.commitlog_max_offset - st.dispatched_offset);
    kv_add(t, "remainHowManyDataToFlush", "%" PRId64, st.commitlog_max_offset - st.flushed_offset);
    kv_add(t, "commitLogDiskRatio", "%.4f", st.disk_used_ratio);
    kv_add(t, "diskRatio", "%.4f", st.disk_used_ratio);
    kv_add(t, "storeState", "%s", st.write_error ? "WRITE_ERROR" : st.disk_full ? "DISK_FULL" :
                                  st.writable ? "WRITABLE" : "READ_ONLY");
    kv_add(t, "earliestMessageTimeStamp", "%" PRId64, st.earliest_store_time);
    kv_add(t, "putMessageTimesTotal", "%" PRId64, st.put_count);
    kv_add(t, "putMessageSizeTotal", "%" PRId64, st.put_bytes);
    kv_add(t, "putMessageEntireTimeMax", "%" PRId64, st.put_latency_max_us / 1000);
    kv_add(t, "msgPutTotalTodayNow", "%" PRId64, bk->stats.total[BK_STAT_PUT]);
    kv_add(t, "msgGetTotalTodayNow", "%" PRId64, bk->stats.total[BK_STAT_GET_FOUND]);
    kv_add(t, "sendThreadPoolQueueSize", "%zu", bk_send_waiting(bk->send));
    kv_add(t, "sendThreadPoolQueueCapacity", "%" PRId64, bk->cfg->send_queue_capacity);
    kv_add(t, "sendBusyTotal", "%" PRId64, bk->stats.total[BK_STAT_BUSY]);
    kv_add(t, "pullHoldCount", "%zu", bk_pull_held(bk->pull));
    kv_add(t, "connectionCount", "%zu", rmq_server_conn_count(bk->srv));
    bk_stats_tps(&bk->stats, BK_STAT_PUT, tps, sizeof(tps));
    kv_add(t, "putTps", "%s", tps);
    bk_stats_tps(&bk->stats, BK_STAT_GET_FOUND, tps, sizeof(tps));
    kv_add(t, "getFoundTps", "%s", tps);
    bk_stats_tps(&bk->stats, BK_STAT_GET_MISS, tps, sizeof(tps));
    kv_add(t, "getMissTps", "%s", tps);
    bk_stats_tps2(&bk->stats, BK_STAT_GET_FOUND, BK_STAT_GET_MISS, tps, sizeof(tps));
    kv_add(t, "getTotalTps", "%s", tps);
    bk_stats_tps(&bk->stats, BK_STAT_GET_TRANSFERRED, tps, sizeof(tps));
    kv_add(t, "getTransferedTps", "%s", tps);
    bk_ha_describe(bk->ha, kv_add_ha, t);
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__ConfigTable ct = RMQ__CONFIG_TABLE__INIT;
    ct.entries = t->ptrs;
    ct.n_entries = t->n;
    resp.header_case = RMQ__COMMAND__HEADER_CONFIG;
    resp.config = &ct;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    free(t);
}

/* ---- topics ------------------------------------------------------------- */

/* DELETE_TOPIC_IN_BROKER: config, consume queues and consumer offsets. */
static void h_delete_topic(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    NEED(conn, req, RMQ__COMMAND__HEADER_TOPIC, "TopicRequest (topic)");
    const char *name = req->cmd->topic->topic;
    if (!check_name(conn, req, "topic", name))
        return;
    rmq_err_t rc = bk_meta_delete_topic(bk, name);
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS,
                   rc == RMQ_ENOTFOUND ? "topic was not present" : NULL, NULL);
}

/* GET_ALL_TOPIC_CONFIG: the whole table with its data version. */
static void h_all_topics(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    Rmq__TopicConfigTable *tab = bk_topics_table_new(bk->topics);
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
static void h_topic_stats(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    NEED(conn, req, RMQ__COMMAND__HEADER_TOPIC, "TopicRequest (topic)");
    const char *name = req->cmd->topic->topic;
    const bk_topic_t *topic = bk_topics_get(bk->topics, name, strlen(name));
    if (!topic) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__TOPIC_NOT_EXIST,
                        "topic %.200s does not exist on broker %s", name, bk->addr);
        return;
    }
    size_t n = (size_t)(topic->write_queues > topic->read_queues ? topic->write_queues : topic->read_queues);
    Rmq__QueueStats *qs = calloc(n ? n : 1, sizeof(*qs));
    Rmq__QueueStats **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    if (!qs || !ptrs) {
        free(qs);
        free(ptrs);
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    for (size_t i = 0; i < n; i++) {
        rmq__queue_stats__init(&qs[i]);
        qs[i].queue_id = (int32_t)i;
        qs[i].min_offset = st_store_min_offset(bk->store, topic->name, (int32_t)i);
        qs[i].max_offset = st_store_max_offset(bk->store, topic->name, (int32_t)i);
        if (qs[i].max_offset > 0)
            qs[i].last_update_timestamp = st_store_time_at(bk->store, topic->name, (int32_t)i, qs[i].max_offset - 1);
        ptrs[i] = &qs[i];
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__TopicStats ts = RMQ__TOPIC_STATS__INIT;
    ts.topic = (char *)topic->name;
    ts.queues = ptrs;
    ts.n_queues = n;
    resp.header_case = RMQ__COMMAND__HEADER_TOPIC_STATS;
    resp.topic_stats = &ts;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    free(qs);
    free(ptrs);
}

/* ---- subscription groups and offsets tables ---------------------------- */

/* UPDATE_AND_CREATE_SUBSCRIPTIONGROUP. */
static void h_update_group(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    NEED(conn, req, RMQ__COMMAND__HEADER_SUBSCRIPTION_GROUP, "SubscriptionGroupConfig (subscription_group)");
    if (!check_name(conn, req, "group", req->cmd->subscription_group->group_name))
        return;
    if (bk_groups_update(bk->groups, req->cmd->subscription_group) != RMQ_OK) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    bk_sendback_retry_topic(bk, req->cmd->subscription_group->group_name);   /* the group's retry topic with it */
    reply_ok(conn, req);
}

/* DELETE_SUBSCRIPTIONGROUP: SUBSCRIPTION_GROUP_NOT_EXIST if absent. */
static void h_delete_group(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    NEED(conn, req, RMQ__COMMAND__HEADER_GROUP, "GroupRequest (group)");
    const char *name = req->cmd->group->consumer_group;
    if (bk_groups_delete(bk->groups, name) != RMQ_OK) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SUBSCRIPTION_GROUP_NOT_EXIST,
                        "subscription group %.200s does not exist", name);
        return;
    }
    reply_ok(conn, req);
}

/* GET_ALL_SUBSCRIPTIONGROUP_CONFIG. */
static void h_all_groups(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    Rmq__SubscriptionGroupTable *tab = bk_groups_table_new(bk->groups);
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

/* GET_ALL_CONSUMER_OFFSET. */
static void h_all_offsets(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    Rmq__ConsumerOffsetTable *tab = bk_offsets_table_new(bk->offsets, NULL);
    if (!tab) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    resp.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET_TABLE;
    resp.consumer_offset_table = tab;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    bk_offsets_table_free(tab);
}

/* Fills one per-queue consume stat. */
static void consume_stat(bk_broker_t *bk, Rmq__QueueConsumeStats *q, const char *topic, int32_t queue_id,
                         int64_t consumer_offset)
{
    rmq__queue_consume_stats__init(q);
    q->topic = (char *)topic;
    q->queue_id = queue_id;
    q->broker_offset = st_store_max_offset(bk->store, topic, queue_id);
    q->consumer_offset = consumer_offset;
    if (consumer_offset > 0)
        q->last_timestamp = st_store_time_at(bk->store, topic, queue_id, consumer_offset - 1);
}

/* GET_CONSUME_STATS: broker vs consumer offset per queue of a group, and
 * the messages per second it pulled over the last minute. */
static void h_consume_stats(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    NEED(conn, req, RMQ__COMMAND__HEADER_CONSUME_STATS_REQ, "ConsumeStatsRequest (consume_stats_req)");
    const Rmq__ConsumeStatsRequest *h = req->cmd->consume_stats_req;
    Rmq__ConsumerOffsetTable *tab = bk_offsets_table_new(bk->offsets, h->consumer_group);
    size_t n = 0;
    for (size_t i = 0; tab && i < tab->n_entries; i++)
        if (!h->topic[0] || strcmp(h->topic, tab->entries[i]->topic) == 0)
            n += tab->entries[i]->n_offsets;
    Rmq__QueueConsumeStats *qs = calloc(n ? n : 1, sizeof(*qs));
    Rmq__QueueConsumeStats **ptrs = calloc(n ? n : 1, sizeof(*ptrs));
    if (!tab || !qs || !ptrs) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        goto out;
    }
    size_t k = 0;
    for (size_t i = 0; i < tab->n_entries; i++) {
        const Rmq__TopicGroupOffsets *e = tab->entries[i];
        if (h->topic[0] && strcmp(h->topic, e->topic) != 0)
            continue;
        for (size_t j = 0; j < e->n_offsets; j++, k++) {
            consume_stat(bk, &qs[k], e->topic, e->offsets[j]->queue_id, e->offsets[j]->offset);
            ptrs[k] = &qs[k];
        }
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__ConsumeStats cs = RMQ__CONSUME_STATS__INIT;
    cs.queues = ptrs;
    cs.n_queues = k;
    cs.consume_tps = bk_groupstats_tps(bk->groupstats, h->consumer_group, h->topic);
    resp.header_case = RMQ__COMMAND__HEADER_CONSUME_STATS;
    resp.consume_stats = &cs;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
out:
    free(qs);
    free(ptrs);
    bk_offsets_table_free(tab);
}

void bk_admin_install(bk_broker_t *bk)
{
    static const struct { int code; rmq_handler_fn fn; } table[] = {
        {RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, h_query_consumer_offset},
        {RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET, h_update_consumer_offset},
        {RMQ__REQUEST_CODE__GET_MAX_OFFSET, h_queue_offset},
        {RMQ__REQUEST_CODE__GET_MIN_OFFSET, h_queue_offset},
        {RMQ__REQUEST_CODE__GET_EARLIEST_MSG_STORETIME, h_queue_offset},
        {RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP, h_queue_offset},
        {RMQ__REQUEST_CODE__VIEW_MESSAGE_BY_ID, h_view_message},
        {RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO, h_runtime_info},
        {RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER, h_delete_topic},
        {RMQ__REQUEST_CODE__GET_ALL_TOPIC_CONFIG, h_all_topics},
        {RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO, h_topic_stats},
        {RMQ__REQUEST_CODE__UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, h_update_group},
        {RMQ__REQUEST_CODE__DELETE_SUBSCRIPTIONGROUP, h_delete_group},
        {RMQ__REQUEST_CODE__GET_ALL_SUBSCRIPTIONGROUP_CONFIG, h_all_groups},
        {RMQ__REQUEST_CODE__GET_ALL_CONSUMER_OFFSET, h_all_offsets},
        {RMQ__REQUEST_CODE__GET_CONSUME_STATS, h_consume_stats},
    };
    for (size_t i = 0; i < sizeof(table) / sizeof(table[0]); i++)
        rmq_server_handle(bk->srv, table[i].code, table[i].fn, bk);
}
