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
#include "rmq_acl_policy.h"
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

/* Creates a name server on base; cfg is borrowed and must outlive it (the
 * keys ns_config_update may change are changed in place).
 * Not listening yet. NULL on ENOMEM. Owner: caller. */
ns_server_t *ns_server_new(struct event_base *base, ns_config_t *cfg);

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

/* The embedded controller (ns_controller.h), NULL when
 * enableControllerInNamesrv is off. Loop thread. */
struct ns_controller *ns_server_controller(ns_server_t *ns);

/* ---- operations: what every protocol front-end calls (loop thread) ---- */

/* Registers (or refreshes) a broker over connection conn_id from peer;
 * counts it, logs a refusal, re-arms the expiry timer. ns_route_register's
 * results and errors (why set on a refusal). */
rmq_err_t ns_server_register(ns_server_t *ns, const Rmq__RegisterBrokerRequest *rb,
                             uint64_t conn_id, const char *peer, ns_register_result_t *res,
                             char *why, size_t whylen);
/* QUERY_DATA_VERSION from a broker over conn_id: 0 when the route table
 * holds rb's data version for its address and epoch (liveness refreshed,
 * expiry re-armed, res filled), 1 when the broker must register its whole
 * table. */
int ns_server_query_version(ns_server_t *ns, const Rmq__RegisterBrokerRequest *rb, uint64_t conn_id,
                            ns_register_result_t *res);
/* The access-control accounts (NULL: access control off). */
const rmq_acl_t *ns_server_acl(const ns_server_t *ns);
/* A topic's route, counted (ns_route_topic's result; caller frees it). */
Rmq__TopicRouteData *ns_server_route_query(ns_server_t *ns, const char *topic, rmq_err_t *err);
/* Removes a topic from the route, or only its queues in cluster when not
 * NULL (ns_route_delete_topic; RMQ_ENOTFOUND if absent), logged with peer. */
rmq_err_t ns_server_delete_topic(ns_server_t *ns, const char *topic, const char *cluster, const char *peer);
/* Wipes (wipe 1) or adds the write permission of a broker name in every
 * topic; returns how many topics changed, logged with peer. */
size_t ns_server_write_perm(ns_server_t *ns, const char *broker_name, int wipe,
                            const char *peer);
/* Puts / deletes a KV config entry and saves the KV file (kvConfigPath);
 * when the save fails the change is undone and RMQ_EIO returned. Also
 * RMQ_EINVAL (bad namespace or key), RMQ_ENOTFOUND (delete of a missing
 * entry), RMQ_ENOMEM; why names the reason for all but ENOMEM. */
rmq_err_t ns_server_kv_put(ns_server_t *ns, const char *space, const char *key,
                           const char *value, char *why, size_t whylen);
rmq_err_t ns_server_kv_delete(ns_server_t *ns, const char *space, const char *key, char *why,
                              size_t whylen);

/* UPDATE_NAMESRV_CONFIG from peer: applies properties text[0..len) with
 * ns_config_update (its errors, why set) and puts the new values to work
 * (log level, expiry timer); logged. */
rmq_err_t ns_server_config_update(ns_server_t *ns, const char *text, size_t len, const char *peer,
                                  char *why, size_t whylen);

/* Closes every connection, stops the timer and frees the table. */
void ns_server_free(ns_server_t *ns);

#endif
