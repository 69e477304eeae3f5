/* bk_metrics.c: the broker's metric families and its /metrics endpoint.
 *
 * Fed as things happen: through the core's counts (bk_counts.h) messages
 * and bytes in per topic, out per (group, topic), dead letters per (group,
 * topic), transactions committed and rolled back per topic; send-queue
 * waits and SYNC_MASTER waits (fr_send.c), and,
 * through the rmq_server reply observer, every send result by status with
 * its latency and every pull's latency (long-polling holds included).
 * Read at scrape time: store offsets and state, HA links, consumer lag per
 * group/topic/queue, connections, queue depths (the registered gauges),
 * messages in flight per (group, topic) (the registered reader), and in
 * controller mode the group's master, epoch and in-sync set
 * (bk_controller_describe). The metrics RocketMQ 5 also has are rows of
 * one table (bkm_names) giving both spellings; each is rendered once per
 * family from the same value, RocketMQ's with its labels. The broker is seen through bk_node.h only.
 * With aclEnable=true a scrape needs a valid account (HTTP Basic, over
 * HTTPS: rmq_http.h). */
#include "bk_metrics.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_controller.h"
#include "bk_ha.h"
#include "bk_map.h"
#include "bk_offsets_pb.h"
#include "rmq_http.h"
#include "rmq_log.h"
#include "rmq_metrics.h"
#include "rmq_time.h"

#define BKM_MAX_TOPICS 10000          /* beyond this, counted under topic="_other" (and pairs alike) */
#define BKM_MAX_STATUSES 64
#define BKM_MAX_SLAVES 16
#define BKM_LABELS 600

typedef struct bkm_topic {
    uint64_t msgs_in[RMQ_MSG_TYPES], bytes_in[RMQ_MSG_TYPES];   /* by message type */
    uint64_t commits, rollbacks;
} bkm_topic_t;

/* The (consumer group, topic) a pair's entry is about: its first member. */
typedef struct bkm_key {
    char *group, *topic;
} bkm_key_t;

/* Counters of a (consumer group, topic) pair. */
typedef struct bkm_pair {
    bkm_key_t k;
    uint64_t msgs_out, bytes_out, dlq;
} bkm_pair_t;

/* A (group, topic) pair's consumption as read at scrape time. */
typedef struct bkm_consumer {
    bkm_key_t k;
    int64_t lag;                      /* messages not yet committed */
    int64_t oldest_ms;                /* store time of the oldest of them (0: none) */
    int64_t inflight;                 /* popped, not acknowledged */
} bkm_consumer_t;

typedef struct bkm_status {
    int status;
    uint64_t count;
} bkm_status_t;

typedef struct bkm_gauge {
    bk_metrics_read_fn read;          /* NULL until registered: reads 0 */
    const void *arg;
} bkm_gauge_t;

struct bk_metrics {
    const bk_node_t *node;
    rmq_server_t *srv;
    const bk_stats_t *stats;
    bkm_gauge_t gauges[BK_GAUGE_COUNT];
    bk_metrics_each_fn inflight;      /* NULL until registered: none */
    const void *inflight_owner;
    rmq_http_t *http;
    bk_map_t *topics;                 /* topic -> bkm_topic_t */
    bkm_topic_t other;                /* topics past BKM_MAX_TOPICS */
    bk_map_t *pairs;                  /* "group\ntopic" -> bkm_pair_t */
    bkm_pair_t other_pair;            /* pairs past BKM_MAX_TOPICS */
    bk_map_t *consumers;              /* "group\ntopic" -> bkm_consumer_t, during a scrape */
    bkm_status_t statuses[BKM_MAX_STATUSES];
    size_t n_statuses;
    rmq_mhist_t send_latency;
    rmq_mhist_t pull_latency;
    rmq_mhist_t queue_wait;
    rmq_mhist_t sync_wait;
    uint64_t sync_failed;
    uint64_t pulls;
    uint64_t scrapes;
};

/* ---- feeding ------------------------------------------------------------- */

static bkm_topic_t *topic_ctr(bk_metrics_t *m, const char *topic)
{
    size_t len = strlen(topic);
    bkm_topic_t *t = bk_map_get(m->topics, topic, len);
    if (t)
        return t;
    if (bk_map_count(m->topics) >= BKM_MAX_TOPICS || !(t = calloc(1, sizeof(*t))))
        return &m->other;
    if (bk_map_put(m->topics, topic, len, t) != RMQ_OK) {
        free(t);
        return &m->other;
    }
    return t;
}

bk_metrics_topic_t *bk_metrics_topic(bk_metrics_t *m, const char *topic)
{
    return m ? topic_ctr(m, topic) : NULL;
}

void bk_metrics_topic_stored(bk_metrics_topic_t *t, rmq_msg_type_t type, int32_t count, size_t body_len)
{
    if (!t || type >= RMQ_MSG_TYPES)
        return;
    t->msgs_in[type] += (uint64_t)count;
    t->bytes_in[type] += body_len;
}

/* The "group\ntopic" key of a pair in buf. */
static size_t pair_key(char *buf, size_t cap, const char *group, const char *topic)
{
    int n = snprintf(buf, cap, "%s\n%s", group, topic);
    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n : cap - 1;
}

/* Frees an entry of a pair map (any struct starting with bkm_key_t). */
static void pair_free(void *v)
{
    bkm_key_t *k = v;
    free(k->group);
    free(k->topic);
    free(v);
}

/* The entry of (group, topic) in map, created zeroed with size bytes on
 * first use; NULL past BKM_MAX_TOPICS entries or out of memory. */
static void *pair_get(bk_map_t *map, const char *group, const char *topic, size_t size)
{
    char key[512];
    size_t len = pair_key(key, sizeof(key), group, topic);
    void *v = bk_map_get(map, key, len);
    if (v || bk_map_count(map) >= BKM_MAX_TOPICS || !(v = calloc(1, size)))
        return v;
    bkm_key_t *k = v;
    if (!(k->group = strdup(group)) || !(k->topic = strdup(topic)) || bk_map_put(map, key, len, v) != RMQ_OK) {
        pair_free(v);
        return NULL;
    }
    return v;
}

static bkm_pair_t *pair_ctr(bk_metrics_t *m, const char *group, const char *topic)
{
    bkm_pair_t *p = pair_get(m->pairs, group, topic, sizeof(*p));
    return p ? p : &m->other_pair;
}

/* bk_counts_t: a send's messages stored. */
static void count_stored(void *arg, const bk_topic_t *topic, rmq_msg_type_t type, int32_t count, size_t body_len)
{
    bk_metrics_topic_stored(bk_metrics_topic(arg, topic->name), type, count, body_len);
}

/* bk_counts_t: a pull's or a pop's messages delivered. */
static void count_delivered(void *arg, const char *group, const char *topic, int64_t msgs, int64_t bytes)
{
    bk_metrics_t *m = arg;
    if (!m)
        return;
    bkm_pair_t *p = pair_ctr(m, group, topic);
    p->msgs_out += (uint64_t)msgs;
    p->bytes_out += (uint64_t)bytes;
}

/* bk_counts_t: a message moved to group's DLQ. */
static void count_dead_lettered(void *arg, const char *group, const char *topic)
{
    bk_metrics_t *m = arg;
    if (m)
        pair_ctr(m, group, topic)->dlq++;
}

/* bk_counts_t: a transaction ended. */
static void count_tx_ended(void *arg, const char *topic, int commit)
{
    bk_metrics_t *m = arg;
    if (!m)
        return;
    bkm_topic_t *t = topic_ctr(m, topic);
    if (commit)
        t->commits++;
    else
        t->rollbacks++;
}

void bk_metrics_counts(bk_metrics_t *m, bk_counts_t *c)
{
    *c = (bk_counts_t){
        .stored = count_stored,
        .delivered = count_delivered,
        .dead_lettered = count_dead_lettered,
        .tx_ended = count_tx_ended,
        .arg = m,
    };
}

void bk_metrics_send_queue_wait(bk_metrics_t *m, int64_t wait_us)
{
    if (m)
        rmq_mhist_observe_us(&m->queue_wait, wait_us);
}

void bk_metrics_sync_wait(bk_metrics_t *m, int64_t wait_us, int ok)
{
    if (!m)
        return;
    rmq_mhist_observe_us(&m->sync_wait, wait_us);
    if (!ok)
        m->sync_failed++;
}

/* rmq_server reply observer: send results by status, send and pull latency. */
static void on_reply(rmq_conn_t *conn, int32_t code, int status, int64_t elapsed_us, void *arg)
{
    bk_metrics_t *m = arg;
    if (code == RMQ__REQUEST_CODE__PULL_MESSAGE) {
        m->pulls++;
        if (elapsed_us >= 0)
            rmq_mhist_observe_us(&m->pull_latency, elapsed_us);
        return;
    }
    if (code != RMQ__REQUEST_CODE__SEND_MESSAGE && code != RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE)
        return;
    if (elapsed_us >= 0)
        rmq_mhist_observe_us(&m->send_latency, elapsed_us);
    for (size_t i = 0; i < m->n_statuses; i++)
        if (m->statuses[i].status == status) {
            m->statuses[i].count++;
            return;
        }
    if (m->n_statuses < BKM_MAX_STATUSES)
        m->statuses[m->n_statuses++] = (bkm_status_t){status, 1};
}

/* ---- rendering ------------------------------------------------------------- */

static void render_identity(bk_metrics_t *m, struct evbuffer *out)
{
    const bk_node_t *node = m->node;
    char lb[BKM_LABELS] = "";
    rmq_metrics_label(lb, sizeof(lb), "cluster", node->cfg->broker_cluster_name);
    rmq_metrics_label(lb, sizeof(lb), "broker", node->cfg->broker_name);
    rmq_metrics_label_int(lb, sizeof(lb), "id", (long long)node->cfg->broker_id);
    rmq_metrics_label(lb, sizeof(lb), "role", bk_role_name(bk_node_role(node)));
    rmq_metrics_label(lb, sizeof(lb), "addr", node->addr);
    rmq_metrics_family(out, "rmq_broker_info", "gauge", "Identity of this broker (always 1).");
    rmq_metrics_sample(out, "rmq_broker_info", lb, 1);
    rmq_metrics_family(out, "rmq_broker_start_time_seconds", "gauge", "Wall-clock start time, Unix seconds.");
    rmq_metrics_sample(out, "rmq_broker_start_time_seconds", NULL, (double)node->boot_ms / 1000.0);
}

/* ---- the metrics both families name --------------------------------------- */

typedef enum bkm_style { BKM_RMQ, BKM_ROCKETMQ, BKM_STYLES } bkm_style_t;

/* What a row reads. */
typedef enum bkm_what {
    BKM_MSGS_IN, BKM_BYTES_IN, BKM_COMMITS, BKM_ROLLBACKS,           /* per topic */
    BKM_MSGS_OUT, BKM_BYTES_OUT, BKM_DLQ,                            /* per (group, topic) */
    BKM_LAG, BKM_LAG_LATENCY, BKM_INFLIGHT, BKM_READY,               /* per (group, topic), at scrape */
    BKM_FLUSH_BEHIND, BKM_DISPATCH_BEHIND, BKM_RESERVE_TIME, BKM_STORAGE_SIZE, /* the store */
} bkm_what_t;

typedef struct bkm_row bkm_row_t;
/* Writes row's samples in style (its family line already written). */
typedef void (*bkm_emit_fn)(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style);

/* One metric: its name in each family, RocketMQ's as BrokerMetricsConstant
 * and DefaultStoreMetricsConstant (apache/rocketmq) spell it. RocketMQ
 * counts time in milliseconds; rmq's family in seconds (rmq_scale). */
struct bkm_row {
    const char *name[BKM_STYLES];
    const char *type;
    const char *help;
    bkm_emit_fn emit;
    bkm_what_t what;
    double rmq_scale;                 /* 0: 1 */
};

static void emit_topics(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style);
static void emit_pairs(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style);
static void emit_consumers(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style);
static void emit_store(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style);

static const bkm_row_t bkm_names[] = {
    {{"rmq_broker_messages_in_total", "rocketmq_messages_in_total"}, "counter",
     "Messages stored by sends, by topic.", emit_topics, BKM_MSGS_IN, 0},
    {{"rmq_broker_bytes_in_total", "rocketmq_throughput_in_total"}, "counter",
     "Send request body bytes stored, by topic.", emit_topics, BKM_BYTES_IN, 0},
    {{"rmq_broker_transaction_commits_total", "rocketmq_commit_messages_total"}, "counter",
     "Half messages committed, by topic.", emit_topics, BKM_COMMITS, 0},
    {{"rmq_broker_transaction_rollbacks_total", "rocketmq_rollback_messages_total"}, "counter",
     "Half messages rolled back, by topic.", emit_topics, BKM_ROLLBACKS, 0},
    {{"rmq_broker_messages_out_total", "rocketmq_messages_out_total"}, "counter",
     "Messages returned to pulls and pops, by consumer group and topic.", emit_pairs, BKM_MSGS_OUT, 0},
    {{"rmq_broker_bytes_out_total", "rocketmq_throughput_out_total"}, "counter",
     "Record bytes returned to pulls and pops, by consumer group and topic.", emit_pairs, BKM_BYTES_OUT, 0},
    {{"rmq_broker_dlq_messages_total", "rocketmq_send_to_dlq_messages_total"}, "counter",
     "Messages moved to the group's dead-letter queue, by consumer group and original topic.", emit_pairs,
     BKM_DLQ, 0},
    {{"rmq_broker_consumer_lag_messages", "rocketmq_consumer_lag_messages"}, "gauge",
     "Messages between a group's committed offset and the queue's max offset.", emit_consumers, BKM_LAG, 0},
    {{"rmq_broker_consumer_lag_latency_seconds", "rocketmq_consumer_lag_latency"}, "gauge",
     "Age of the oldest message a group has not committed (RocketMQ: milliseconds).", emit_consumers,
     BKM_LAG_LATENCY, 0.001},
    {{"rmq_broker_consumer_inflight_messages", "rocketmq_consumer_inflight_messages"}, "gauge",
     "Messages popped and not yet acknowledged.", emit_consumers, BKM_INFLIGHT, 0},
    {{"rmq_broker_consumer_ready_messages", "rocketmq_consumer_ready_messages"}, "gauge",
     "Messages not committed and not in flight: ready to be consumed.", emit_consumers, BKM_READY, 0},
    {{"rmq_broker_store_flush_behind_bytes", "rocketmq_storage_flush_behind_bytes"}, "gauge",
     "Bytes written to the commit log but not yet durable.", emit_store, BKM_FLUSH_BEHIND, 0},
    {{"rmq_broker_store_dispatch_behind_bytes", "rocketmq_storage_dispatch_behind_bytes"}, "gauge",
     "Bytes in the commit log not yet in consume queues.", emit_store, BKM_DISPATCH_BEHIND, 0},
    {{"rmq_broker_store_message_reserve_time_seconds", "rocketmq_storage_message_reserve_time"}, "gauge",
     "Age of the oldest message the store keeps (RocketMQ: milliseconds).", emit_store, BKM_RESERVE_TIME, 0.001},
    {{"rmq_broker_store_size_bytes", "rocketmq_storage_size"}, "gauge",
     "Commit-log bytes retained (write position minus oldest offset).", emit_store, BKM_STORAGE_SIZE, 0},
};

/* Starts lb with the labels every sample of style carries: RocketMQ's
 * cluster, node_type and node_id (its brokerName); none for rmq's. */
static void lb_base(const bk_metrics_t *m, bkm_style_t style, char *lb, size_t cap)
{
    lb[0] = '\0';
    if (style != BKM_ROCKETMQ)
        return;
    rmq_metrics_label(lb, cap, "cluster", m->node->cfg->broker_cluster_name);
    rmq_metrics_label(lb, cap, "node_type", "broker");
    rmq_metrics_label(lb, cap, "node_id", m->node->cfg->broker_name);
}

/* The base labels, then the group (RocketMQ: consumer_group) and topic. */
static void lb_pair(const bk_metrics_t *m, bkm_style_t style, const char *group, const char *topic, char *lb,
                    size_t cap)
{
    lb_base(m, style, lb, cap);
    rmq_metrics_label(lb, cap, style == BKM_ROCKETMQ ? "consumer_group" : "group", group);
    rmq_metrics_label(lb, cap, "topic", topic);
}

static void row_sample(struct evbuffer *out, const bkm_row_t *row, bkm_style_t style, const char *lb, double v)
{
    if (style == BKM_RMQ && row->rmq_scale != 0)
        v *= row->rmq_scale;
    rmq_metrics_sample(out, row->name[style], lb, v);
}

/* A topic's count of what, of message type type (RMQ_MSG_TYPES: all). */
static uint64_t topic_value(const bkm_topic_t *t, bkm_what_t what, rmq_msg_type_t type)
{
    if (what == BKM_COMMITS || what == BKM_ROLLBACKS)
        return what == BKM_COMMITS ? t->commits : t->rollbacks;
    const uint64_t *v = what == BKM_MSGS_IN ? t->msgs_in : t->bytes_in;
    uint64_t sum = 0;
    for (rmq_msg_type_t i = RMQ_MSG_NORMAL; i < RMQ_MSG_TYPES; i++)
        sum += type == RMQ_MSG_TYPES || type == i ? v[i] : 0;
    return sum;
}

/* One topic's samples: RocketMQ's messages in by message_type (NORMAL
 * always, the others once seen), rmq's and the rest one per topic. */
static void emit_topic(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style,
                       const char *topic, const bkm_topic_t *t)
{
    char lb[BKM_LABELS];
    int typed = style == BKM_ROCKETMQ && (row->what == BKM_MSGS_IN || row->what == BKM_BYTES_IN);
    for (rmq_msg_type_t type = RMQ_MSG_NORMAL; type < RMQ_MSG_TYPES; type++) {
        uint64_t v = topic_value(t, row->what, typed ? type : RMQ_MSG_TYPES);
        if (typed && type != RMQ_MSG_NORMAL && v == 0)
            continue;
        lb_base(m, style, lb, sizeof(lb));
        rmq_metrics_label(lb, sizeof(lb), "topic", topic);
        if (typed)
            rmq_metrics_label(lb, sizeof(lb), "message_type", rmq_msg_type_name(type));
        row_sample(out, row, style, lb, (double)v);
        if (!typed)
            return;
    }
}

static void emit_topics(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(m->topics, &cursor, &key, &val))
        emit_topic(m, out, row, style, key, val);
    if (bk_map_count(m->topics) >= BKM_MAX_TOPICS)
        emit_topic(m, out, row, style, "_other", &m->other);
}

static void emit_pair(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style,
                      const bkm_pair_t *p)
{
    char lb[BKM_LABELS];
    uint64_t v = row->what == BKM_MSGS_OUT ? p->msgs_out : row->what == BKM_BYTES_OUT ? p->bytes_out : p->dlq;
    if (row->what == BKM_DLQ && v == 0)
        return;
    lb_pair(m, style, p->k.group ? p->k.group : "_other", p->k.topic ? p->k.topic : "_other", lb, sizeof(lb));
    row_sample(out, row, style, lb, (double)v);
}

static void emit_pairs(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(m->pairs, &cursor, &key, &val))
        emit_pair(m, out, row, style, val);
    if (bk_map_count(m->pairs) >= BKM_MAX_TOPICS)
        emit_pair(m, out, row, style, &m->other_pair);
}

static void render_traffic(bk_metrics_t *m, struct evbuffer *out)
{
    char lb[BKM_LABELS];
    rmq_metrics_family(out, "rmq_broker_send_requests_total", "counter",
                       "SEND_MESSAGE and SEND_BATCH_MESSAGE answers, by wire status.");
    for (size_t i = 0; i < m->n_statuses; i++) {
        lb[0] = '\0';
        rmq_metrics_label(lb, sizeof(lb), "status", rmq_status_name(m->statuses[i].status));
        rmq_metrics_sample_u64(out, "rmq_broker_send_requests_total", lb, m->statuses[i].count);
    }
    rmq_metrics_family(out, "rmq_broker_send_latency_seconds", "histogram",
                       "Send request processing to answer (store, flush and replication waits included).");
    rmq_metrics_hist(out, "rmq_broker_send_latency_seconds", NULL, &m->send_latency);
    rmq_metrics_family(out, "rmq_broker_pull_latency_seconds", "histogram",
                       "Pull request to answer (long-polling holds included).");
    rmq_metrics_hist(out, "rmq_broker_pull_latency_seconds", NULL, &m->pull_latency);
    rmq_metrics_family(out, "rmq_broker_send_queue_wait_seconds", "histogram",
                       "Time send requests waited in the send queue before processing.");
    rmq_metrics_hist(out, "rmq_broker_send_queue_wait_seconds", NULL, &m->queue_wait);
    rmq_metrics_family(out, "rmq_broker_sync_wait_seconds", "histogram",
                       "SYNC_MASTER waits for slave acknowledgement.");
    rmq_metrics_hist(out, "rmq_broker_sync_wait_seconds", NULL, &m->sync_wait);
    rmq_metrics_family(out, "rmq_broker_sync_wait_failures_total", "counter",
                       "SYNC_MASTER waits that ended without an acknowledgement (timeout, no slave).");
    rmq_metrics_sample_u64(out, "rmq_broker_sync_wait_failures_total", NULL, m->sync_failed);
    rmq_metrics_family(out, "rmq_broker_busy_rejections_total", "counter",
                       "Send requests refused with SYSTEM_BUSY (queue full or waited too long).");
    rmq_metrics_sample_i64(out, "rmq_broker_busy_rejections_total", NULL, m->stats->total[BK_STAT_BUSY]);
}

static void emit_store(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style)
{
    st_store_stats_t st;
    char lb[BKM_LABELS];
    int64_t v;
    st_store_stats(m->node->store, &st);
    if (row->what == BKM_FLUSH_BEHIND)
        v = st.commitlog_max_offset - st.flushed_offset;
    else if (row->what == BKM_DISPATCH_BEHIND)
        v = st.commitlog_max_offset - st.dispatched_offset;
    else if (row->what == BKM_RESERVE_TIME)
        v = st.earliest_store_time > 0 ? rmq_wall_ms() - st.earliest_store_time : 0;
    else
        v = st.commitlog_max_offset - st.commitlog_min_offset;
    lb_base(m, style, lb, sizeof(lb));
    row_sample(out, row, style, lb, (double)v);
}

static void render_store(bk_metrics_t *m, struct evbuffer *out)
{
    st_store_stats_t st;
    char lb[BKM_LABELS];
    st_store_stats(m->node->store, &st);
    rmq_metrics_family(out, "rmq_broker_store_max_offset_bytes", "gauge", "Commit-log write position.");
    rmq_metrics_sample_i64(out, "rmq_broker_store_max_offset_bytes", NULL, st.commitlog_max_offset);
    rmq_metrics_family(out, "rmq_broker_store_min_offset_bytes", "gauge", "Commit-log oldest retained offset.");
    rmq_metrics_sample_i64(out, "rmq_broker_store_min_offset_bytes", NULL, st.commitlog_min_offset);
    rmq_metrics_family(out, "rmq_broker_store_commitlog_syncs_total", "counter",
                       "Commit-log syncs (msync or fdatasync; with SYNC_FLUSH, group commits).");
    rmq_metrics_sample_i64(out, "rmq_broker_store_commitlog_syncs_total", NULL, st.flush_syncs);
    rmq_metrics_family(out, "rmq_broker_store_commitlog_sync_seconds_total", "counter",
                       "Time the flush thread spent in commit-log syncs.");
    rmq_metrics_sample(out, "rmq_broker_store_commitlog_sync_seconds_total", NULL, (double)st.flush_sync_us / 1e6);
    rmq_metrics_family(out, "rmq_broker_store_disk_used_ratio", "gauge",
                       "Used fraction (0..1) of the file system holding the commit log.");
    rmq_metrics_sample(out, "rmq_broker_store_disk_used_ratio", NULL, st.disk_used_ratio);
    rmq_metrics_family(out, "rmq_broker_store_state", "gauge",
                       "Store state: 1 for the current state, 0 for the others.");
    const char *cur = st.write_error ? "WRITE_ERROR" : st.disk_full ? "DISK_FULL" : st.writable ? "WRITABLE" : "READ_ONLY";
    static const char *const states[] = {"WRITABLE", "DISK_FULL", "WRITE_ERROR", "READ_ONLY"};
    for (size_t i = 0; i < 4; i++) {
        lb[0] = '\0';
        rmq_metrics_label(lb, sizeof(lb), "state", states[i]);
        rmq_metrics_sample(out, "rmq_broker_store_state", lb, strcmp(cur, states[i]) == 0);
    }
    rmq_metrics_family(out, "rmq_broker_store_puts_total", "counter", "Messages appended to the commit log.");
    rmq_metrics_sample_i64(out, "rmq_broker_store_puts_total", NULL, st.put_count);
    rmq_metrics_family(out, "rmq_broker_store_put_bytes_total", "counter", "Record bytes appended to the commit log.");
    rmq_metrics_sample_i64(out, "rmq_broker_store_put_bytes_total", NULL, st.put_bytes);
}

/* HA runtime info, collected from bk_ha_describe (its keys are its contract). */
typedef struct ha_view {
    int is_master;
    size_t n;
    struct {
        char addr[128];
        int64_t id, acked, lag;
        int in_sync;
    } slaves[BKM_MAX_SLAVES];
    int connected;
    int64_t acked, connects;
    char master[128];
} ha_view_t;

static void ha_collect(const char *key, const char *value, void *arg)
{
    ha_view_t *v = arg;
    unsigned idx;
    char field[32];
    if (strcmp(key, "haSlaveCount") == 0) {
        v->is_master = 1;
    } else if (sscanf(key, "haSlave%u.%31s", &idx, field) == 2 && idx < BKM_MAX_SLAVES) {
        if (idx + 1 > v->n)
            v->n = idx + 1;
        if (strcmp(field, "addr") == 0)
            snprintf(v->slaves[idx].addr, sizeof(v->slaves[idx].addr), "%s", value);
        else if (strcmp(field, "brokerId") == 0)
            v->slaves[idx].id = strtoll(value, NULL, 10);
        else if (strcmp(field, "ackedOffset") == 0)
            v->slaves[idx].acked = strtoll(value, NULL, 10);
        else if (strcmp(field, "lagBytes") == 0)
            v->slaves[idx].lag = strtoll(value, NULL, 10);
        else if (strcmp(field, "inSync") == 0)
            v->slaves[idx].in_sync = strcmp(value, "true") == 0;
    } else if (strcmp(key, "haConnected") == 0) {
        v->connected = strcmp(value, "true") == 0;
    } else if (strcmp(key, "haAckedOffset") == 0) {
        v->acked = strtoll(value, NULL, 10);
    } else if (strcmp(key, "haConnects") == 0) {
        v->connects = strtoll(value, NULL, 10);
    } else if (strcmp(key, "haMasterAddr") == 0) {
        snprintf(v->master, sizeof(v->master), "%s", value);
    }
}

static void render_ha(bk_metrics_t *m, struct evbuffer *out)
{
    ha_view_t v;
    char lb[BKM_LABELS];
    bk_ha_t *ha = bk_node_ha(m->node);
    if (!ha)
        return;
    memset(&v, 0, sizeof(v));
    bk_ha_describe(ha, ha_collect, &v);
    if (v.is_master) {
        rmq_metrics_family(out, "rmq_broker_ha_slaves_connected", "gauge", "Slaves with a live HA link to this master.");
        rmq_metrics_sample_u64(out, "rmq_broker_ha_slaves_connected", NULL, v.n);
        rmq_metrics_family(out, "rmq_broker_ha_slave_acked_offset_bytes", "gauge",
                           "Commit-log offset each slave acknowledged.");
        for (size_t i = 0; i < v.n; i++) {
            lb[0] = '\0';
            rmq_metrics_label(lb, sizeof(lb), "slave", v.slaves[i].addr);
            rmq_metrics_label_int(lb, sizeof(lb), "slave_id", (long long)v.slaves[i].id);
            rmq_metrics_sample_i64(out, "rmq_broker_ha_slave_acked_offset_bytes", lb, v.slaves[i].acked);
        }
        rmq_metrics_family(out, "rmq_broker_ha_slave_lag_bytes", "gauge",
                           "Bytes each slave is behind this master's commit log.");
        for (size_t i = 0; i < v.n; i++) {
            lb[0] = '\0';
            rmq_metrics_label(lb, sizeof(lb), "slave", v.slaves[i].addr);
            rmq_metrics_label_int(lb, sizeof(lb), "slave_id", (long long)v.slaves[i].id);
            rmq_metrics_sample_i64(out, "rmq_broker_ha_slave_lag_bytes", lb, v.slaves[i].lag);
        }
        rmq_metrics_family(out, "rmq_broker_ha_slave_in_sync", "gauge",
                           "1 when the slave is within haSlaveFallbehindMax (counts for SYNC_MASTER).");
        for (size_t i = 0; i < v.n; i++) {
            lb[0] = '\0';
            rmq_metrics_label(lb, sizeof(lb), "slave", v.slaves[i].addr);
            rmq_metrics_label_int(lb, sizeof(lb), "slave_id", (long long)v.slaves[i].id);
            rmq_metrics_sample(out, "rmq_broker_ha_slave_in_sync", lb, v.slaves[i].in_sync);
        }
        return;
    }
    lb[0] = '\0';
    rmq_metrics_label(lb, sizeof(lb), "master", v.master);
    rmq_metrics_family(out, "rmq_broker_ha_connected", "gauge", "1 while this slave streams from its master.");
    rmq_metrics_sample(out, "rmq_broker_ha_connected", lb, v.connected);
    rmq_metrics_family(out, "rmq_broker_ha_acked_offset_bytes", "gauge",
                       "Commit-log offset this slave last acknowledged to its master.");
    rmq_metrics_sample_i64(out, "rmq_broker_ha_acked_offset_bytes", lb, v.acked);
    rmq_metrics_family(out, "rmq_broker_ha_connects_total", "counter", "HA handshakes accepted by a master.");
    rmq_metrics_sample_i64(out, "rmq_broker_ha_connects_total", lb, v.connects);
}

/* Controller-mode runtime info, collected from bk_controller_describe. */
typedef struct ctl_view {
    int64_t master_id, epoch, sse_epoch, switches, n_sync;
    int fenced;
} ctl_view_t;

static void ctl_collect(const char *key, const char *value, void *arg)
{
    ctl_view_t *v = arg;
    if (strcmp(key, "controllerMasterId") == 0)
        v->master_id = strtoll(value, NULL, 10);
    else if (strcmp(key, "controllerMasterEpoch") == 0)
        v->epoch = strtoll(value, NULL, 10);
    else if (strcmp(key, "controllerSyncStateSetEpoch") == 0)
        v->sse_epoch = strtoll(value, NULL, 10);
    else if (strcmp(key, "controllerRoleSwitches") == 0)
        v->switches = strtoll(value, NULL, 10);
    else if (strcmp(key, "controllerFenced") == 0)
        v->fenced = strcmp(value, "true") == 0;
    else if (strcmp(key, "controllerSyncStateSet") == 0)
        for (const char *p = value; *p; p++)
            v->n_sync += p == value || *p == ',';
}

/* enableControllerMode with controllers: the group's state as the leader last
 * answered, and this broker's part in it. */
static void render_controller(bk_metrics_t *m, struct evbuffer *out)
{
    const bk_node_t *node = m->node;
    ctl_view_t v = { .master_id = -1 };
    bk_controller_t *ctl = node->ops->ctl(node->arg);
    if (!ctl)
        return;
    bk_controller_describe(ctl, ctl_collect, &v);
    rmq_metrics_family(out, "rmq_broker_controller_master", "gauge",
                       "1 while the controller names this broker its group's master.");
    rmq_metrics_sample(out, "rmq_broker_controller_master", NULL, v.master_id == node->cfg->broker_id);
    rmq_metrics_family(out, "rmq_broker_controller_master_epoch", "gauge",
                       "The group's master epoch, as the controller last answered.");
    rmq_metrics_sample_i64(out, "rmq_broker_controller_master_epoch", NULL, v.epoch);
    rmq_metrics_family(out, "rmq_broker_controller_master_id", "gauge", "The group's master replica id (-1: none).");
    rmq_metrics_sample_i64(out, "rmq_broker_controller_master_id", NULL, v.master_id);
    rmq_metrics_family(out, "rmq_broker_controller_sync_state_set_size", "gauge", "Replicas in the group's in-sync set.");
    rmq_metrics_sample_i64(out, "rmq_broker_controller_sync_state_set_size", NULL, v.n_sync);
    rmq_metrics_family(out, "rmq_broker_controller_sync_state_set_epoch", "gauge", "The in-sync set's epoch.");
    rmq_metrics_sample_i64(out, "rmq_broker_controller_sync_state_set_epoch", NULL, v.sse_epoch);
    rmq_metrics_family(out, "rmq_broker_controller_fenced", "gauge",
                       "1 while this master refuses writes: no controller confirmed it within its lease.");
    rmq_metrics_sample(out, "rmq_broker_controller_fenced", NULL, v.fenced);
    rmq_metrics_family(out, "rmq_broker_controller_role_switches_total", "counter",
                       "Role changes the controller's answers made this broker take.");
    rmq_metrics_sample_i64(out, "rmq_broker_controller_role_switches_total", NULL, v.switches);
}

/* The scrape's view of (group, topic); NULL as pair_get. */
static bkm_consumer_t *consumer_get(bk_metrics_t *m, const char *group, const char *topic)
{
    return pair_get(m->consumers, group, topic, sizeof(bkm_consumer_t));
}

/* bk_metrics_pair_fn: messages in flight of (group, topic). */
static void consumer_inflight(const char *group, const char *topic, int64_t n, void *arg)
{
    bkm_consumer_t *c = consumer_get(arg, group, topic);
    if (c)
        c->inflight += n;
}

/* Reads each group's lag per topic (and the store time of its oldest
 * uncommitted message) from the committed offsets, and the messages in
 * flight, into m->consumers. */
static void consumers_collect(bk_metrics_t *m)
{
    Rmq__ConsumerOffsetTable *tab = bk_offsets_table_new(m->node->offsets, NULL);
    for (size_t i = 0; tab && i < tab->n_entries; i++) {
        const Rmq__TopicGroupOffsets *e = tab->entries[i];
        bkm_consumer_t *c = consumer_get(m, e->group, e->topic);
        for (size_t k = 0; c && k < e->n_offsets; k++) {
            int32_t qid = e->offsets[k]->queue_id;
            int64_t committed = e->offsets[k]->offset;
            int64_t max = st_store_max_offset(m->node->store, e->topic, qid);
            if (max <= committed)
                continue;
            c->lag += max - committed;
            int64_t t = st_store_time_at(m->node->store, e->topic, qid, committed);
            if (t > 0 && (c->oldest_ms == 0 || t < c->oldest_ms))
                c->oldest_ms = t;
        }
    }
    if (tab)
        bk_offsets_table_free(tab);
    if (m->inflight)
        m->inflight(m->inflight_owner, consumer_inflight, m);
}

/* rmq's lag keeps its queue label: one sample per queue a group committed. */
static void emit_queue_lag(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row)
{
    char lb[BKM_LABELS];
    Rmq__ConsumerOffsetTable *tab = bk_offsets_table_new(m->node->offsets, NULL);
    for (size_t i = 0; tab && i < tab->n_entries; i++) {
        const Rmq__TopicGroupOffsets *e = tab->entries[i];
        for (size_t k = 0; k < e->n_offsets; k++) {
            int64_t max = st_store_max_offset(m->node->store, e->topic, e->offsets[k]->queue_id);
            int64_t lag = max > e->offsets[k]->offset ? max - e->offsets[k]->offset : 0;
            lb_pair(m, BKM_RMQ, e->group, e->topic, lb, sizeof(lb));
            rmq_metrics_label_int(lb, sizeof(lb), "queue", e->offsets[k]->queue_id);
            row_sample(out, row, BKM_RMQ, lb, (double)lag);
        }
    }
    if (tab)
        bk_offsets_table_free(tab);
}

static int64_t consumer_value(const bkm_consumer_t *c, bkm_what_t what, int64_t now_ms)
{
    if (what == BKM_LAG)
        return c->lag;
    if (what == BKM_LAG_LATENCY)
        return c->oldest_ms > 0 && now_ms > c->oldest_ms ? now_ms - c->oldest_ms : 0;
    if (what == BKM_INFLIGHT)
        return c->inflight;
    return c->lag > c->inflight ? c->lag - c->inflight : 0;
}

static void emit_consumers(bk_metrics_t *m, struct evbuffer *out, const bkm_row_t *row, bkm_style_t style)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    char lb[BKM_LABELS];
    int64_t now = rmq_wall_ms();
    if (row->what == BKM_LAG && style == BKM_RMQ) {
        emit_queue_lag(m, out, row);
        return;
    }
    while (bk_map_next(m->consumers, &cursor, &key, &val)) {
        const bkm_consumer_t *c = val;
        lb_pair(m, style, c->k.group, c->k.topic, lb, sizeof(lb));
        row_sample(out, row, style, lb, (double)consumer_value(c, row->what, now));
    }
}

/* Every row of bkm_names, in both families. */
static void render_rows(bk_metrics_t *m, struct evbuffer *out)
{
    consumers_collect(m);
    for (size_t i = 0; i < sizeof(bkm_names) / sizeof(bkm_names[0]); i++)
        for (bkm_style_t st = BKM_RMQ; st < BKM_STYLES; st++) {
            const bkm_row_t *row = &bkm_names[i];
            rmq_metrics_family(out, row->name[st], row->type, row->help);
            row->emit(m, out, row, st);
        }
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(m->consumers, &cursor, &key, &val))
        pair_free(bk_map_del_current(m->consumers, &cursor));
}

static uint64_t gauge_read(const bk_metrics_t *m, bk_metrics_gauge_t g)
{
    return m->gauges[g].read ? m->gauges[g].read(m->gauges[g].arg) : 0;
}

static void render_server(bk_metrics_t *m, struct evbuffer *out)
{
    rmq_metrics_family(out, "rmq_broker_connections", "gauge", "Open client connections.");
    rmq_metrics_sample_u64(out, "rmq_broker_connections", NULL, rmq_server_conn_count(m->srv));
    rmq_metrics_family(out, "rmq_broker_send_queue_depth", "gauge",
                       "Send requests queued or waiting for flush/replication.");
    rmq_metrics_sample_u64(out, "rmq_broker_send_queue_depth", NULL, gauge_read(m, BK_GAUGE_SEND_QUEUE_DEPTH));
    rmq_metrics_family(out, "rmq_broker_send_queue_capacity", "gauge", "sendThreadPoolQueueCapacity.");
    rmq_metrics_sample_i64(out, "rmq_broker_send_queue_capacity", NULL, m->node->cfg->send_queue_capacity);
    rmq_metrics_family(out, "rmq_broker_pulls_held", "gauge", "Long-polling pulls waiting for messages.");
    rmq_metrics_sample_u64(out, "rmq_broker_pulls_held", NULL, gauge_read(m, BK_GAUGE_PULLS_HELD));
    rmq_metrics_family(out, "rmq_broker_pull_requests_total", "counter", "PULL_MESSAGE answers.");
    rmq_metrics_sample_u64(out, "rmq_broker_pull_requests_total", NULL, m->pulls);
    rmq_metrics_family(out, "rmq_broker_metrics_scrapes_total", "counter", "Requests for this page.");
    rmq_metrics_sample_u64(out, "rmq_broker_metrics_scrapes_total", NULL, m->scrapes);
}

static void h_metrics(struct evhttp_request *req, void *arg)
{
    bk_metrics_t *m = arg;
    struct evbuffer *out = evbuffer_new();
    m->scrapes++;
    if (!out) {
        rmq_http_replyf(req, 503, "out of memory\n");
        return;
    }
    render_identity(m, out);
    render_traffic(m, out);
    render_store(m, out);
    render_ha(m, out);
    render_controller(m, out);
    render_rows(m, out);
    render_server(m, out);
    rmq_http_reply(req, 200, "text/plain; version=0.0.4; charset=utf-8", out);
    evbuffer_free(out);
}

/* ---- lifetime -------------------------------------------------------------- */

bk_metrics_t *bk_metrics_start(const bk_node_t *node, rmq_server_t *srv, const bk_stats_t *stats, char *err,
                               size_t errlen)
{
    bk_metrics_t *m = calloc(1, sizeof(*m));
    if (!m || !(m->topics = bk_map_new()) || !(m->pairs = bk_map_new()) || !(m->consumers = bk_map_new())) {
        if (m) {
            bk_map_free(m->topics, free);
            bk_map_free(m->pairs, free);
        }
        snprintf(err, errlen, "metrics: out of memory");
        free(m);
        return NULL;
    }
    m->node = node;
    m->srv = srv;
    m->stats = stats;
    rmq_server_on_reply(srv, on_reply, m);
    if (node->cfg->metrics_port <= 0)
        return m;
    char why[256];
    m->http = rmq_http_new(node->base, "broker");
    if (!m->http) {
        snprintf(err, errlen, "metricsPort=%lld: out of memory for the HTTP server",
                 (long long)node->cfg->metrics_port);
        goto fail;
    }
    if (rmq_http_secure(m->http, node->sec, why, sizeof(why)) != RMQ_OK) {
        snprintf(err, errlen, "metricsPort=%lld: %s", (long long)node->cfg->metrics_port, why);
        goto fail;
    }
    rmq_http_route(m->http, "/metrics", RMQ_HTTP_ACCOUNT, h_metrics, m);
    if (rmq_http_listen(m->http, "0.0.0.0", (int)node->cfg->metrics_port, why, sizeof(why)) != RMQ_OK) {
        snprintf(err, errlen, "metricsPort=%lld: %s", (long long)node->cfg->metrics_port, why);
        goto fail;
    }
    return m;
fail:
    bk_metrics_free(m);
    return NULL;
}

void bk_metrics_free(bk_metrics_t *m)
{
    if (!m)
        return;
    if (m->srv)
        rmq_server_on_reply(m->srv, NULL, NULL);
    rmq_http_free(m->http);
    bk_map_free(m->topics, free);
    bk_map_free(m->pairs, pair_free);
    bk_map_free(m->consumers, pair_free);
    free(m);
}

void bk_metrics_register_gauge(bk_metrics_t *m, bk_metrics_gauge_t g, bk_metrics_read_fn read, const void *arg)
{
    m->gauges[g] = (bkm_gauge_t){.read = read, .arg = arg};
}

void bk_metrics_register_inflight(bk_metrics_t *m, bk_metrics_each_fn each, const void *owner)
{
    m->inflight = each;
    m->inflight_owner = owner;
}

int bk_metrics_port(const bk_metrics_t *m)
{
    return m && m->http ? rmq_http_port(m->http) : 0;
}
