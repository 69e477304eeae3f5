/* bk_admin_ops.c: topic, group and runtime-info requests over the tables and
 * the store (see bk_admin_ops.h). */
#include "bk_admin_ops.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define QUEUES_MAX 1024
#define PERM_MAX 7

#define OWN_SYSTEM_MAX 4             /* cluster, broker name, reply topic, trace topic */

struct bk_admin_ops {
    bk_admin_ops_config_t cfg;
    char reply_topic[RMQ_TOPIC_MAX + sizeof(RMQ_REPLY_TOPIC_SUFFIX)];
    const char *own_system[OWN_SYSTEM_MAX]; /* this broker's additions to the system topics */
    size_t n_own_system;
};

/* Lists the system topics this broker adds, as RocketMQ's TopicConfigManager does. */
static void own_system_init(bk_admin_ops_t *a)
{
    if (a->cfg.cluster) {
        a->own_system[a->n_own_system++] = a->cfg.cluster;
        if (rmq_reply_topic(a->cfg.cluster, a->reply_topic, sizeof(a->reply_topic)))
            a->own_system[a->n_own_system++] = a->reply_topic;
    }
    if (a->cfg.broker_name)
        a->own_system[a->n_own_system++] = a->cfg.broker_name;
    if (a->cfg.trace_topic)
        a->own_system[a->n_own_system++] = a->cfg.trace_topic;
}

bk_admin_ops_t *bk_admin_ops_new(const bk_admin_ops_config_t *cfg)
{
    bk_admin_ops_t *a = calloc(1, sizeof(*a));
    if (a) {
        a->cfg = *cfg;
        own_system_init(a);
    }
    return a;
}

int bk_admin_topic_is_system(const bk_admin_ops_t *a, const char *name)
{
    for (size_t i = 0; i < a->n_own_system; i++)
        if (strcmp(a->own_system[i], name) == 0)
            return 1;
    return rmq_topic_in_system_set(name);
}

size_t bk_admin_system_topics(const bk_admin_ops_t *a, const char *names[BK_SYSTEM_TOPICS_MAX])
{
    size_t n = 0;
    for (const char *const *t = rmq_topics_system; *t && n < BK_SYSTEM_TOPICS_MAX; t++)
        names[n++] = *t;
    for (size_t i = 0; i < a->n_own_system && n < BK_SYSTEM_TOPICS_MAX; i++)
        if (!rmq_topic_in_system_set(a->own_system[i]))
            names[n++] = a->own_system[i];
    return n;
}

/* BK_OK unless validateSystemTopicWhenUpdateTopic and topic is a system
 * topic: BK_INVALID_PARAMETER with RocketMQ's text. */
static bk_status_t system_topic_check(const bk_admin_ops_t *a, const char *topic, bk_result_t *r)
{
    if (a->cfg.validate_system_topic && bk_admin_topic_is_system(a, topic))
        return bk_result_set(r, BK_INVALID_PARAMETER, "The topic[%s] is conflict with system topic.", topic);
    return BK_OK;
}

void bk_admin_ops_set_role(bk_admin_ops_t *a, const char *role)
{
    a->cfg.role = role;
}

void bk_admin_ops_free(bk_admin_ops_t *a)
{
    free(a);
}

/* BK_OK if name follows the naming rule, else BK_NAME_ILLEGAL with r set. */
static bk_status_t name_check(const char *cmd, const char *what, const char *name, bk_result_t *r)
{
    const char *why;
    if (rmq_name_is_valid(name, strlen(name), &why))
        return bk_result_ok(r);
    return bk_result_set(r, BK_NAME_ILLEGAL, "%s: %s '%.200s' %s", cmd, what, name, why);
}

/* The checks of one topic config: its name, queue counts and perm. */
static bk_status_t topic_check(const char *cmd, const bk_topic_t *topic, bk_result_t *r)
{
    if (name_check(cmd, "topic", topic->name, r) != BK_OK)
        return r->status;
    if (topic->read_queues < 1 || topic->read_queues > QUEUES_MAX || topic->write_queues < 1 ||
        topic->write_queues > QUEUES_MAX || topic->perm < 0 || topic->perm > PERM_MAX)
        return bk_result_set(r, BK_BAD_REQUEST,
                             "%s: topic %.200s: queues must be 1..%d and perm 0..%d (got read %d write %d perm %d)",
                             cmd, topic->name, QUEUES_MAX, PERM_MAX, topic->read_queues, topic->write_queues,
                             topic->perm);
    return BK_OK;
}

/* Sets topic's attributes: those the table's topic of its name has (none
 * for a new topic) with modification mod applied (RocketMQ's rules; a mod
 * setting message.type MIXED only with enableMixedMessageType). */
static bk_status_t topic_attrs_apply(const bk_admin_ops_t *a, bk_topic_t *topic, const char *mod, bk_result_t *r)
{
    char why[256];
    size_t len = mod ? strlen(mod) : 0;
    const bk_topic_t *cur = bk_topics_get(a->cfg.topics, topic->name, strlen(topic->name));
    if (rmq_topic_attrs_alter(cur ? cur->attributes : "", !cur, mod, len, topic->attributes,
                              sizeof(topic->attributes), why, sizeof(why)) != RMQ_OK)
        return bk_result_set(r, BK_BAD_REQUEST, "%s", why);
    if (!a->cfg.mixed_message_type && rmq_topic_attrs_mod_msg_type(mod, len) == RMQ_TOPIC_MSG_MIXED)
        return bk_result_set(r, BK_INVALID_PARAMETER, "MIXED message type is not supported.");
    return BK_OK;
}

bk_status_t bk_admin_topics_update(bk_admin_ops_t *a, const char *cmd, bk_topic_t *topics,
                                   const char *const *attr_mods, size_t n, bk_topics_durable_fn durable, void *arg,
                                   bk_result_t *r)
{
    if (n < 1 || n > BK_TOPIC_LIST_MAX)
        return bk_result_set(r, BK_BAD_REQUEST, "%s: 1..%d topics per request (got %zu)", cmd, BK_TOPIC_LIST_MAX,
                             n);
    for (size_t i = 0; i < n; i++)
        if (topic_check(cmd, &topics[i], r) != BK_OK || system_topic_check(a, topics[i].name, r) != BK_OK ||
            topic_attrs_apply(a, &topics[i], attr_mods ? attr_mods[i] : NULL, r) != BK_OK) {
            if (n > 1)
                snprintf(r->why + strlen(r->why), sizeof(r->why) - strlen(r->why),
                         " (entry %zu; no topic was changed)", i);
            return r->status;
        }
    for (size_t i = 0; i < n; i++)
        if (bk_topics_update(a->cfg.topics, &topics[i]) != RMQ_OK)
            return bk_result_set(r, BK_SYSTEM_ERROR, "%s: out of memory at topic %zu of %zu", cmd, i, n);
    if (bk_topics_wait_durable(a->cfg.topics, durable, arg) != RMQ_OK)
        return bk_result_set(r, BK_SYSTEM_ERROR, "%s: out of memory", cmd);
    return bk_result_ok(r);
}

rmq_err_t bk_admin_topic_purge(bk_topics_t *topics, st_store_t *store, bk_offsets_t *offsets, const char *name)
{
    rmq_err_t rc = bk_topics_delete(topics, name);
    st_store_delete_topic(store, name);
    bk_offsets_delete_topic(offsets, name);
    return rc;
}

bk_status_t bk_admin_topic_delete(bk_admin_ops_t *a, const char *name, bk_topics_durable_fn durable, void *arg,
                                  int *existed, bk_result_t *r)
{
    *existed = 0;
    if (name_check("DELETE_TOPIC_IN_BROKER", "topic", name, r) != BK_OK ||
        system_topic_check(a, name, r) != BK_OK)
        return r->status;
    *existed = bk_admin_topic_purge(a->cfg.topics, a->cfg.store, a->cfg.offsets, name) != RMQ_ENOTFOUND;
    if (*existed && bk_topics_wait_durable(a->cfg.topics, durable, arg) != RMQ_OK) {
        *existed = 0;
        return bk_result_set(r, BK_SYSTEM_ERROR, "DELETE_TOPIC_IN_BROKER: out of memory");
    }
    return BK_OK;
}

/* The groups of a topic, collected once each (bk_admin_topic_groups). */
typedef struct topic_groups {
    bk_map_t *seen;
    const char *topic;
    rmq_err_t rc;
} topic_groups_t;

/* bk_clients_name_fn: adds group to the set. */
static void topic_group_add(void *arg, const char *group)
{
    topic_groups_t *tg = arg;
    if (tg->rc == RMQ_OK && !bk_map_get(tg->seen, group, strlen(group)))
        tg->rc = bk_map_put(tg->seen, group, strlen(group), tg);
}

/* bk_offsets_fn: adds the group of an offset stored on the topic. */
static void topic_offset_add(void *arg, const char *topic, const char *group, int32_t queue_id, int64_t offset)
{
    (void)queue_id;
    (void)offset;
    if (strcmp(topic, ((topic_groups_t *)arg)->topic) == 0)
        topic_group_add(arg, group);
}

bk_status_t bk_admin_topic_groups(bk_admin_ops_t *a, const char *topic, bk_clients_name_fn fn, void *arg,
                                  bk_result_t *r)
{
    topic_groups_t tg = {bk_map_new(), topic, RMQ_OK};
    size_t cursor = 0;
    const char *group;
    void *val;
    if (!tg.seen)
        return bk_result_set(r, BK_SYSTEM_ERROR, "out of memory");
    if (a->cfg.clients)
        bk_clients_groups_of(a->cfg.clients, topic, topic_group_add, &tg);
    bk_offsets_each(a->cfg.offsets, NULL, topic_offset_add, &tg);
    while (tg.rc == RMQ_OK && bk_map_next(tg.seen, &cursor, &group, &val))
        fn(arg, group);
    bk_map_free(tg.seen, NULL);
    if (tg.rc != RMQ_OK)
        return bk_result_set(r, BK_SYSTEM_ERROR, "out of memory");
    return bk_result_ok(r);
}

bk_status_t bk_admin_topic_stats(bk_admin_ops_t *a, const char *name, bk_topic_stats_t *out, bk_result_t *r)
{
    memset(out, 0, sizeof(*out));
    const bk_topic_t *topic = bk_topics_get(a->cfg.topics, name, strlen(name));
    if (!topic)
        return bk_result_set(r, BK_TOPIC_NOT_EXIST, "topic %.200s does not exist on broker %s", name, a->cfg.addr);
    size_t n = (size_t)(topic->write_queues > topic->read_queues ? topic->write_queues : topic->read_queues);
    if (!(out->queues = calloc(n ? n : 1, sizeof(*out->queues))))
        return bk_result_set(r, BK_SYSTEM_ERROR, "out of memory");
    out->topic = topic->name;
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        bk_queue_stat_t *q = &out->queues[i];
        q->queue_id = (int32_t)i;
        q->min_offset = st_store_min_offset(a->cfg.store, topic->name, q->queue_id);
        q->max_offset = st_store_max_offset(a->cfg.store, topic->name, q->queue_id);
        if (q->max_offset > 0)
            q->last_update_timestamp = st_store_time_at(a->cfg.store, topic->name, q->queue_id, q->max_offset - 1);
    }
    return bk_result_ok(r);
}

void bk_topic_stats_clear(bk_topic_stats_t *out)
{
    free(out->queues);
    out->queues = NULL;
    out->n = 0;
}

bk_status_t bk_admin_group_update(bk_admin_ops_t *a, const bk_group_t *grp, bk_result_t *r)
{
    if (name_check("UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", "group", grp->name, r) != BK_OK)
        return r->status;
    if (bk_groups_put(a->cfg.groups, grp) != RMQ_OK)
        return bk_result_set(r, BK_SYSTEM_ERROR, "out of memory");
    if (a->cfg.group_updated)
        a->cfg.group_updated(a->cfg.arg, grp->name);
    return BK_OK;
}

bk_status_t bk_admin_group_delete(bk_admin_ops_t *a, const char *name, bk_result_t *r)
{
    if (bk_groups_delete(a->cfg.groups, name) != RMQ_OK)
        return bk_result_set(r, BK_GROUP_NOT_EXIST, "subscription group %.200s does not exist", name);
    return bk_result_ok(r);
}

/* Calls add(key, printf(fmt)) through a bounded buffer. */
static void kv(bk_kv_fn add, void *arg, const char *key, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

static void kv(bk_kv_fn add, void *arg, const char *key, const char *fmt, ...)
{
    char val[144];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(val, sizeof(val), fmt, ap);
    va_end(ap);
    add(key, val, arg);
}

/* The store's state as runtime info names it. */
static const char *store_state(const st_store_stats_t *st)
{
    return st->write_error ? "WRITE_ERROR" : st->disk_full ? "DISK_FULL" : st->writable ? "WRITABLE" : "READ_ONLY";
}

/* Adds the 10 s / 1 min / 10 min rates of one counter (or of two summed). */
static void kv_tps(bk_admin_ops_t *a, bk_kv_fn add, void *arg, const char *key, enum bk_stat s, int also,
                   enum bk_stat s2)
{
    char tps[64];
    if (also)
        bk_stats_tps2(a->cfg.stats, s, s2, tps, sizeof(tps));
    else
        bk_stats_tps(a->cfg.stats, s, tps, sizeof(tps));
    add(key, tps, arg);
}

void bk_admin_runtime_info(bk_admin_ops_t *a, const bk_runtime_live_t *live, bk_kv_fn add, void *arg)
{
    st_store_stats_t st;
    const bk_stats_t *s = a->cfg.stats;
    st_store_stats(a->cfg.store, &st);
    kv(add, arg, "brokerVersionDesc", "rmq 0.1.0");
    kv(add, arg, "brokerAddr", "%s", a->cfg.addr);
    kv(add, arg, "brokerRole", "%s", a->cfg.role);
    kv(add, arg, "bootTimestamp", "%" PRId64, a->cfg.boot_ms);
    kv(add, arg, "runtime", "%" PRId64 " s", (rmq_wall_ms() - a->cfg.boot_ms) / 1000);
    kv(add, arg, "commitLogMinOffset", "%" PRId64, st.commitlog_min_offset);
    kv(add, arg, "commitLogMaxOffset", "%" PRId64, st.commitlog_max_offset);
    kv(add, arg, "flushedOffset", "%" PRId64, st.flushed_offset);
    kv(add, arg, "commitLogSyncTimes", "%" PRId64, st.flush_syncs);
    kv(add, arg, "commitLogSyncTimeTotalMicros", "%" PRId64, st.flush_sync_us);
    kv(add, arg, "dispatchBehindBytes", "%" PRId64, st.commitlog_max_offset - st.dispatched_offset);
    kv(add, arg, "remainHowManyDataToFlush", "%" PRId64, st.commitlog_max_offset - st.flushed_offset);
    kv(add, arg, "commitLogDiskRatio", "%.4f", st.disk_used_ratio);
    kv(add, arg, "diskRatio", "%.4f", st.disk_used_ratio);
    kv(add, arg, "storeState", "%s", store_state(&st));
    kv(add, arg, "earliestMessageTimeStamp", "%" PRId64, st.earliest_store_time);
    kv(add, arg, "putMessageTimesTotal", "%" PRId64, st.put_count);
    kv(add, arg, "putMessageSizeTotal", "%" PRId64, st.put_bytes);
    kv(add, arg, "putMessageEntireTimeMax", "%" PRId64, st.put_latency_max_us / 1000);
    kv(add, arg, "msgPutTotalTodayNow", "%" PRId64, s->total[BK_STAT_PUT]);
    kv(add, arg, "msgGetTotalTodayNow", "%" PRId64, s->total[BK_STAT_GET_FOUND]);
    kv(add, arg, "sendThreadPoolQueueSize", "%zu", live->send_waiting);
    kv(add, arg, "sendThreadPoolQueueCapacity", "%" PRId64, a->cfg.send_queue_capacity);
    kv(add, arg, "sendBusyTotal", "%" PRId64, s->total[BK_STAT_BUSY]);
    /* Requests are handled on the loop thread as they arrive: none waits in
     * a thread pool's queue, and no append holds the log while this runs. */
    kv(add, arg, "sendThreadPoolQueueHeadWaitTimeMills", "0");
    kv(add, arg, "pullThreadPoolQueueSize", "0");
    kv(add, arg, "pullThreadPoolQueueHeadWaitTimeMills", "0");
    kv(add, arg, "pageCacheLockTimeMills", "0");
    kv(add, arg, "pullHoldCount", "%zu", live->pull_held);
    kv(add, arg, "connectionCount", "%zu", live->conn_count);
    kv_tps(a, add, arg, "putTps", BK_STAT_PUT, 0, 0);
    kv_tps(a, add, arg, "getFoundTps", BK_STAT_GET_FOUND, 0, 0);
    kv_tps(a, add, arg, "getMissTps", BK_STAT_GET_MISS, 0, 0);
    kv_tps(a, add, arg, "getTotalTps", BK_STAT_GET_FOUND, 1, BK_STAT_GET_MISS);
    kv_tps(a, add, arg, "getTransferedTps", BK_STAT_GET_TRANSFERRED, 0, 0);
    if (a->cfg.describe)
        a->cfg.describe(a->cfg.arg, add, arg);
}
