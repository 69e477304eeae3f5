/* ns_server.h: the name server: the route table behind an rmq_server, one
 * handler per request code, route removal when a broker's connection
 * closes, and one timer that expires silent brokers. Everything runs on the
 * thread of the event base it is given. */
#ifndef NS_SERVER_H
#define NS_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "ns_config.h"
#include "ns_route.h"
#include "rmq_err.h"

typedef struct ns_server ns_server_t;

/* Counters since start, for /metrics. Loop thread. */
typedef struct ns_stats {
    uint64_t registrations_total;          /* REGISTER_BROKER accepted */
    uint64_t registrations_refused_total;  /* REGISTER_BROKER refused (bad field, stale epoch) */
    uint64_t route_queries_total;          /* GET_ROUTEINFO_BY_TOPIC answered */
    uint64_t route_not_found_total;        /* ... of which for an unknown topic */
    uint64_t expired_total;                /* brokers removed for silence */
    uint64_t conn_closed_removed_total;    /* brokers removed because their connection closed */
} ns_stats_t;

/* Creates a name server on base; cfg is borrowed and must outlive it.
 * Not listening yet. NULL on ENOMEM. Owner: caller. */
ns_server_t *ns_server_new(struct event_base *base, const ns_config_t *cfg);

/* Loads the KV config from kvConfigPath (when set), then listens on
 * bindAddress:listenPort. Logs why on failure. */
rmq_err_t ns_server_start(ns_server_t *ns);

/* The bound port, after start. */
int ns_server_port(const ns_server_t *ns);

/* The route table (owned by ns), for tests and diagnostics. Loop thread. */
ns_route_t *ns_server_route(ns_server_t *ns);

/* The bound metrics/console port, 0 when metricsPort is 0. */
int ns_server_metrics_port(const ns_server_t *ns);

/* Counters, connection count and configuration, for the metrics page. */
const ns_stats_t *ns_server_stats(const ns_server_t *ns);
size_t ns_server_conn_count(const ns_server_t *ns);
const ns_config_t *ns_server_config(const ns_server_t *ns);

/* Closes every connection, stops the timer and frees the table. */
void ns_server_free(ns_server_t *ns);

#endif
