/* bk_metrics.c: the broker's metric families and its /metrics endpoint.
 *
 * Fed as things happen: messages and bytes in/out per topic (fr_send.c,
 * fr_pull.c), send-queue waits and SYNC_MASTER waits (fr_send.c), and,
 * through the rmq_server reply observer, every send result by status with
 * its latency and every pull's latency (long-polling holds included).
 * Read at scrape time: store offsets and state, HA links, consumer lag per
 * group/topic/queue, connections, queue depths (the registered gauges),
 * and in controller mode the group's master, epoch and in-sync set
 * (bk_controller_describe). The broker is seen through bk_node.h only.
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

#define BKM_MAX_TOPICS 10000          /* beyond this, counted under topic="_other" */
#define BKM_MAX_STATUSES 64
#define BKM_MAX_SLAVES 16
#define BKM_LABELS 600

typedef struct bkm_topic {
    uint64_t msgs_in, bytes_in, msgs_out, bytes_out;
} bkm_topic_t;

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
    rmq_http_t *http;
    bk_map_t *topics;                 /* topic -> bkm_topic_t */
    bkm_topic_t other;                /* topics past BKM_MAX_TOPICS */
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

void bk_metrics_messages_in(bk_metrics_t *m, const char *topic, uint64_t msgs, uint64_t bytes)
{
    if (!m)
        return;
    bkm_topic_t *t = topic_ctr(m, topic);
    t->msgs_in += msgs;
    t->bytes_in += bytes;
}

void bk_metrics_messages_out(bk_metrics_t *m, const char *topic, uint64_t msgs, uint64_t bytes)
{
    if (!m)
        return;
    bkm_topic_t *t = topic_ctr(m, topic);
    t->msgs_out += msgs;
    t->bytes_out += bytes;
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

/* One per-topic counter family from the map (and "_other"). */
static void render_topic_family(bk_metrics_t *m, struct evbuffer *out, const char *name, const char *help,
                                size_t field)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    char lb[BKM_LABELS];
    rmq_metrics_family(out, name, "counter", help);
    while (bk_map_next(m->topics, &cursor, &key, &val)) {
        lb[0] = '\0';
        rmq_metrics_label(lb, sizeof(lb), "topic", key);
        rmq_metrics_sample_u64(out, name, lb, *(const uint64_t *)((const char *)val + field));
    }
    if (bk_map_count(m->topics) >= BKM_MAX_TOPICS) {
        lb[0] = '\0';
        rmq_metrics_label(lb, sizeof(lb), "topic", "_other");
        rmq_metrics_sample_u64(out, name, lb, *(const uint64_t *)((const char *)&m->other + field));
    }
}

static void render_traffic(bk_metrics_t *m, struct evbuffer *out)
{
    char lb[BKM_LABELS];
    render_topic_family(m, out, "rmq_broker_messages_in_total", "Messages stored, by topic.",
                        offsetof(bkm_topic_t, msgs_in));
    render_topic_family(m, out, "rmq_broker_bytes_in_total", "Send request body bytes stored, by topic.",
                        offsetof(bkm_topic_t, bytes_in));
    render_topic_family(m, out, "rmq_broker_messages_out_total", "Messages returned to pulls, by topic.",
                        offsetof(bkm_topic_t, msgs_out));
    render_topic_family(m, out, "rmq_broker_bytes_out_total", "Record bytes returned to pulls, by topic.",
                        offsetof(bkm_topic_t, bytes_out));

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

static void render_store(bk_metrics_t *m, struct evbuffer *out)
{
    st_store_stats_t st;
    char lb[BKM_LABELS];
    st_store_stats(m->node->store, &st);
    rmq_metrics_family(out, "rmq_broker_store_max_offset_bytes", "gauge", "Commit-log write position.");
    rmq_metrics_sample_i64(out, "rmq_broker_store_max_offset_bytes", NULL, st.commitlog_max_offset);
    rmq_metrics_family(out, "rmq_broker_store_min_offset_bytes", "gauge", "Commit-log oldest retained offset.");
    rmq_metrics_sample_i64(out, "rmq_broker_store_min_offset_bytes", NULL, st.commitlog_min_offset);
    rmq_metrics_family(out, "rmq_broker_store_flush_behind_bytes", "gauge",
                       "Bytes written to the commit log but not yet durable.");
    rmq_metrics_sample_i64(out, "rmq_broker_store_flush_behind_bytes", NULL,
                           st.commitlog_max_offset - st.flushed_offset);
    rmq_metrics_family(out, "rmq_broker_store_commitlog_syncs_total", "counter",
                       "Commit-log syncs (msync or fdatasync; with SYNC_FLUSH, group commits).");
    rmq_metrics_sample_i64(out, "rmq_broker_store_commitlog_syncs_total", NULL, st.flush_syncs);
    rmq_metrics_family(out, "rmq_broker_store_commitlog_sync_seconds_total", "counter",
                       "Time the flush thread spent in commit-log syncs.");
    rmq_metrics_sample(out, "rmq_broker_store_commitlog_sync_seconds_total", NULL, (double)st.flush_sync_us / 1e6);
    rmq_metrics_family(out, "rmq_broker_store_dispatch_behind_bytes", "gauge",
                       "Bytes in the commit log not yet in consume queues.");
    rmq_metrics_sample_i64(out, "rmq_broker_store_dispatch_behind_bytes", NULL,
                           st.commitlog_max_offset - st.dispatched_offset);
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

static void render_consumers(bk_metrics_t *m, struct evbuffer *out)
{
    char lb[BKM_LABELS];
    Rmq__ConsumerOffsetTable *tab = bk_offsets_table_new(m->node->offsets, NULL);
    rmq_metrics_family(out, "rmq_broker_consumer_lag_messages", "gauge",
                       "Messages between a group's committed offset and the queue's max offset.");
    for (size_t i = 0; tab && i < tab->n_entries; i++) {
        const Rmq__TopicGroupOffsets *e = tab->entries[i];
        for (size_t k = 0; k < e->n_offsets; k++) {
            int64_t max = st_store_max_offset(m->node->store, e->topic, e->offsets[k]->queue_id);
            int64_t lag = max > e->offsets[k]->offset ? max - e->offsets[k]->offset : 0;
            lb[0] = '\0';
            rmq_metrics_label(lb, sizeof(lb), "group", e->group);
            rmq_metrics_label(lb, sizeof(lb), "topic", e->topic);
            rmq_metrics_label_int(lb, sizeof(lb), "queue", e->offsets[k]->queue_id);
            rmq_metrics_sample_i64(out, "rmq_broker_consumer_lag_messages", lb, lag);
        }
    }
    if (tab)
        bk_offsets_table_free(tab);
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
    render_consumers(m, out);
    render_server(m, out);
    rmq_http_reply(req, 200, "text/plain; version=0.0.4; charset=utf-8", out);
    evbuffer_free(out);
}

/* ---- lifetime -------------------------------------------------------------- */

bk_metrics_t *bk_metrics_start(const bk_node_t *node, rmq_server_t *srv, const bk_stats_t *stats, char *err,
                               size_t errlen)
{
    bk_metrics_t *m = calloc(1, sizeof(*m));
    if (!m || !(m->topics = bk_map_new())) {
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
    free(m);
}

void bk_metrics_register_gauge(bk_metrics_t *m, bk_metrics_gauge_t g, bk_metrics_read_fn read, const void *arg)
{
    m->gauges[g] = (bkm_gauge_t){.read = read, .arg = arg};
}

int bk_metrics_port(const bk_metrics_t *m)
{
    return m && m->http ? rmq_http_port(m->http) : 0;
}
