/* ns_route.h: the name server's route table as pure data and functions.
 *
 * Tables (RocketMQ's RouteInfoManager):
 *   broker name -> {cluster, address by broker id}   (id 0 is the master)
 *   topic       -> queue data per broker name {read/write queue nums, perm, sysflag}
 *   broker addr -> liveness {last update, data version, epoch, HA addr, conn id}
 *   namespace + key -> value                          (KV config)
 * cluster -> broker names is derived from the broker sets, so it can never
 * disagree with them.
 *
 * Every address in a broker set has exactly one liveness entry and the other
 * way round. When an address leaves (unregister, expiry, connection closed)
 * only that address goes; a broker name, its topic queue data and its cluster
 * go only when its last address does. So when a master leaves, its slaves
 * and the topic's queues stay in the route and consumers can read from them.
 *
 * No clock is read here: callers pass the monotonic time in. No locking:
 * one thread (the name server's loop) owns a table. Query results are
 * protobuf-c messages the caller owns and frees with the matching
 * rmq__*__free_unpacked(msg, NULL). */
#ifndef NS_ROUTE_H
#define NS_ROUTE_H

#include <stddef.h>
#include <stdint.h>

#include "namesrv.pb-c.h"
#include "rmq_err.h"

#define NS_NAME_MAX 255        /* longest topic, cluster, broker name or address */
#define NS_ORDER_TOPIC_NS "ORDER_TOPIC_CONFIG"

typedef struct ns_route ns_route_t;

/* What a registration answers: for a slave whose master is live, the
 * master's client and HA addresses; empty strings otherwise. */
typedef struct ns_register_result {
    char master_addr[NS_NAME_MAX + 1];
    char master_ha_addr[NS_NAME_MAX + 1];
} ns_register_result_t;

/* An empty table. Owner: caller (ns_route_free). */
ns_route_t *ns_route_new(void);
void ns_route_free(ns_route_t *rt);

/* Registers (or refreshes) the broker at req->broker_addr, seen on
 * connection conn_id (0: none) at monotonic time now_ms. A master whose data
 * version changed (or that is new) rewrites its broker name's queue data
 * for every topic it sends and drops it for every topic a delta deletes
 * (req->deleted_topics) or a complete table (req->complete) leaves out, a
 * topic left with no queue data leaving the table; slaves never change
 * queue data. An address moving to another id of its own broker set keeps
 * the set and its queue data.
 * RMQ_OK: res filled. RMQ_EINVAL: a bad field, named in why.
 * RMQ_EEXIST: req->epoch is older than the epoch registered for that
 * address, or another live address holds req's id at a newer master epoch
 * (req->master_epoch, controller mode), or the controller made req's
 * address master at a newer master epoch than req's and req names another
 * id (sent before the broker applied its promotion); nothing changed, why
 * says so. A delta registration (req->delta: only changed topics) needs
 * the address registered with the same name, id and epoch at
 * req->base_version, else RMQ_ENOTFOUND (the broker must send its whole
 * table). RMQ_ENOMEM. */
rmq_err_t ns_route_register(ns_route_t *rt, const Rmq__RegisterBrokerRequest *req,
                            uint64_t conn_id, int64_t now_ms, ns_register_result_t *res,
                            char *why, size_t whylen);

/* Makes addr, registered as a slave of broker_name, its master (id 0) at
 * master epoch epoch at once, as the controller elected it: the address
 * held at id 0 leaves the route. RMQ_ENOTFOUND when addr is not registered
 * under broker_name; RMQ_ENOMEM (addr then leaves the route; its next
 * registration restores it). */
rmq_err_t ns_route_set_master(ns_route_t *rt, const char *broker_name, const char *addr, int64_t epoch);

/* QUERY_DATA_VERSION: 0 if req's address is registered with its broker
 * name, id and epoch at req->data_version (its liveness is then refreshed
 * at now_ms on conn_id and res filled, as a registration would), 1 if the
 * broker must register its whole table. */
int ns_route_query_version(ns_route_t *rt, const Rmq__RegisterBrokerRequest *req,
                           uint64_t conn_id, int64_t now_ms, ns_register_result_t *res);

/* Removes the broker at req->broker_addr. RMQ_ENOTFOUND: not registered
 * (or registered under another broker name or id). RMQ_EEXIST: req->epoch is
 * older than the registered one, so this unregister is stale and the newer
 * registration stays. why names the reason on error. */
rmq_err_t ns_route_unregister(ns_route_t *rt, const Rmq__UnregisterBrokerRequest *req,
                              char *why, size_t whylen);

/* Removes every broker silent for more than timeout_ms at now_ms; returns
 * how many left. */
size_t ns_route_expire(ns_route_t *rt, int64_t now_ms, int64_t timeout_ms);

/* The monotonic time at which the next broker would expire, or INT64_MAX
 * when no broker is registered. */
int64_t ns_route_next_expiry(const ns_route_t *rt, int64_t timeout_ms);

/* Removes every broker that registered over connection conn_id (non-zero);
 * returns how many left. */
size_t ns_route_remove_conn(ns_route_t *rt, uint64_t conn_id);

/* The route of topic, or NULL when the topic is unknown (*err RMQ_ENOTFOUND)
 * or memory ran out (*err RMQ_ENOMEM). Owner: caller. */
Rmq__TopicRouteData *ns_route_topic(const ns_route_t *rt, const char *topic, rmq_err_t *err);

/* Broker sets, clusters and liveness; last_update_ms is converted to wall
 * time with the pair (now_ms monotonic, wall_ms). NULL on ENOMEM. Owner: caller. */
Rmq__ClusterInfo *ns_route_cluster_info(const ns_route_t *rt, int64_t now_ms, int64_t wall_ms);

/* Every topic name, sorted. NULL on ENOMEM. Owner: caller. */
Rmq__TopicList *ns_route_topic_list(const ns_route_t *rt);
/* The topics with a queue on a broker name of cluster (NULL: every topic),
 * sorted. NULL on ENOMEM. Owner: caller. */
Rmq__TopicList *ns_route_topic_list_cluster(const ns_route_t *rt, const char *cluster);

/* Drops topic from the route, or with cluster (non-NULL) only its queue
 * data on that cluster's broker names (the topic goes when none is left).
 * RMQ_ENOTFOUND if unknown. */
rmq_err_t ns_route_delete_topic(ns_route_t *rt, const char *topic, const char *cluster);

/* Clears (wipe) or sets (add) the write bit of broker_name's queue data in
 * every topic; returns how many topics broker_name serves. A later
 * registration with an unchanged data version keeps the change. */
size_t ns_route_wipe_write_perm(ns_route_t *rt, const char *broker_name);
size_t ns_route_add_write_perm(ns_route_t *rt, const char *broker_name);

/* KV config. put copies its arguments (RMQ_EINVAL for empty or over-long
 * ones); get returns the value, valid until the next change, or NULL;
 * delete returns RMQ_ENOTFOUND when absent. */
rmq_err_t ns_route_kv_put(ns_route_t *rt, const char *ns, const char *key, const char *value);
const char *ns_route_kv_get(const ns_route_t *rt, const char *ns, const char *key);
rmq_err_t ns_route_kv_delete(ns_route_t *rt, const char *ns, const char *key);

/* Calls fn for every KV entry in (namespace, key) order; stops at and
 * returns the first non-zero value fn returns. */
typedef int (*ns_kv_fn)(const char *ns, const char *key, const char *value, void *arg);
int ns_route_kv_foreach(const ns_route_t *rt, ns_kv_fn fn, void *arg);

/* Table sizes, for logs and tests. */
size_t ns_route_live_count(const ns_route_t *rt);
size_t ns_route_broker_name_count(const ns_route_t *rt);
size_t ns_route_topic_count(const ns_route_t *rt);

#endif
