/* bk_metrics.h: the broker's Prometheus families on metricsPort, served by
 * evhttp on the broker's own loop: rmq's own (rmq_broker_*) and, on the
 * same page, RocketMQ 5's (rocketmq_*, with its labels cluster, node_type,
 * node_id, topic, consumer_group, message_type), each metric spelled in
 * one table row with both names. Counters are fed by the core through
 * bk_counts_t (messages in and out, dead letters, transactions: every
 * front alike), by the native front's send path (queue and SYNC_MASTER
 * waits) and by an rmq_server reply observer (results by status,
 * latencies); gauges (store, HA, consumer lag, connections) are read at
 * scrape time through the node (bk_node.h), and what the core owns (queue
 * depths, messages in flight) through the readers registered below.
 * Every feeding call accepts m == NULL and then does nothing. Loop thread. */
#ifndef BK_METRICS_H
#define BK_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "bk_counts.h"
#include "bk_node.h"
#include "bk_stats.h"
#include "rmq_rpc.h"

typedef struct bk_metrics bk_metrics_t;

/* The gauges metrics reads from their owners at scrape time. */
typedef enum bk_metrics_gauge {
    BK_GAUGE_SEND_QUEUE_DEPTH,        /* sends queued or waiting for flush/replication */
    BK_GAUGE_PULLS_HELD,              /* long-polling pulls waiting for messages */
    BK_GAUGE_COUNT
} bk_metrics_gauge_t;

/* Reads a gauge's current value from its owner arg. */
typedef uint64_t (*bk_metrics_read_fn)(const void *arg);

/* One count of a (consumer group, topic) pair. */
typedef void (*bk_metrics_pair_fn)(const char *group, const char *topic, int64_t n, void *arg);
/* Calls fn for each pair its owner counts (a pair may come more than once:
 * the counts are summed). */
typedef void (*bk_metrics_each_fn)(const void *owner, bk_metrics_pair_fn fn, void *arg);

/* Creates the broker's metrics over node, srv's replies and stats (all
 * borrowed) and, when metricsPort > 0, listens on 0.0.0.0:metricsPort.
 * Call once the server and store exist. NULL with err filled
 * ("metricsPort=N: cannot listen ...: <errno text>") or on ENOMEM. Owner:
 * the broker (bk_metrics_free). */
bk_metrics_t *bk_metrics_start(const bk_node_t *node, rmq_server_t *srv, const bk_stats_t *stats, char *err,
                               size_t errlen);

/* From now on gauge g reads read(arg) at scrape time (0 until registered). */
void bk_metrics_register_gauge(bk_metrics_t *m, bk_metrics_gauge_t g, bk_metrics_read_fn read, const void *arg);

/* From now on the messages in flight per (group, topic) (popped, not yet
 * acknowledged) are read with each(owner) at scrape time (none until then). */
void bk_metrics_register_inflight(bk_metrics_t *m, bk_metrics_each_fn each, const void *owner);

/* One topic's counters of messages in, kept as long as m: a caller may
 * keep the pointer and count into it with bk_metrics_topic_stored. */
typedef struct bkm_topic bk_metrics_topic_t;

/* The counters of topic (those of every topic past the metrics' topic
 * limit together); NULL when m is NULL. */
bk_metrics_topic_t *bk_metrics_topic(bk_metrics_t *m, const char *topic);

/* A send's count messages of type, body_len bytes, stored on the topic of
 * t (NULL: nothing). */
void bk_metrics_topic_stored(bk_metrics_topic_t *t, rmq_msg_type_t type, int32_t count, size_t body_len);

/* Fills c so that the core's counts feed m (c->arg = m). */
void bk_metrics_counts(bk_metrics_t *m, bk_counts_t *c);

/* Closes the listener and frees. NULL ok. */
void bk_metrics_free(bk_metrics_t *m);

/* The bound HTTP port, 0 when off. */
int bk_metrics_port(const bk_metrics_t *m);

/* A send request waited wait_us in the send queue before processing. */
void bk_metrics_send_queue_wait(bk_metrics_t *m, int64_t wait_us);

/* A SYNC_MASTER wait for slave acknowledgement ended after wait_us;
 * ok 0 when it failed (timeout, no slave). */
void bk_metrics_sync_wait(bk_metrics_t *m, int64_t wait_us, int ok);

#endif
