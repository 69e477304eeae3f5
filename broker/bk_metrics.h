/* bk_metrics.h: the broker's Prometheus families (rmq_broker_*) on
 * metricsPort, served by evhttp on the broker's own loop. Counters are fed
 * by the request paths (front/rmq/fr_send.c, fr_pull.c) through the calls below and
 * by an rmq_server reply observer (results by status, latencies); gauges
 * (store, HA, consumer lag, connections, queues) are read at scrape time.
 * Every feeding call accepts m == NULL and then does nothing. Loop thread. */
#ifndef BK_METRICS_H
#define BK_METRICS_H

#include <stddef.h>
#include <stdint.h>

typedef struct bk_broker bk_broker_t;
typedef struct bk_metrics bk_metrics_t;

/* Creates the broker's metrics and, when metricsPort > 0, listens on
 * 0.0.0.0:metricsPort. Call once the broker's server and store exist. NULL with err filled ("metricsPort=N: cannot listen ...: <errno text>")
 * or on ENOMEM. Owner: the broker (bk_metrics_free). */
bk_metrics_t *bk_metrics_start(bk_broker_t *bk, char *err, size_t errlen);

/* Closes the listener and frees. NULL ok. */
void bk_metrics_free(bk_metrics_t *m);

/* The bound HTTP port, 0 when off. */
int bk_metrics_port(const bk_metrics_t *m);

/* msgs messages of bytes total were stored for topic (a send or batch). */
void bk_metrics_messages_in(bk_metrics_t *m, const char *topic, uint64_t msgs, uint64_t bytes);

/* A pull returned msgs messages of bytes total from topic. */
void bk_metrics_messages_out(bk_metrics_t *m, const char *topic, uint64_t msgs, uint64_t bytes);

/* A send request waited wait_us in the send queue before processing. */
void bk_metrics_send_queue_wait(bk_metrics_t *m, int64_t wait_us);

/* A SYNC_MASTER wait for slave acknowledgement ended after wait_us;
 * ok 0 when it failed (timeout, no slave). */
void bk_metrics_sync_wait(bk_metrics_t *m, int64_t wait_us, int ok);

#endif
