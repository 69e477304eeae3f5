/* ns_server.c: the name server: its transport, the route table behind it,
 * and the operations every protocol front-end calls (registration with its
 * counters and expiry timer, route queries, topic deletion, write
 * permissions, the KV config saved or undone). Front-ends decode requests
 * and encode answers (ns_front_rmq.c for the native protocol,
 * ns_front_remoting.c for RocketMQ's remoting protocol on the same port). Broker
 * liveness: a closed connection removes the brokers registered over it at
 * once; a timer armed for the earliest expiry removes silent ones. */
#include "ns_server.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_console.h"
#include "ns_controller.h"
#include "ns_front_remoting.h"
#include "ns_front_rmq.h"
#include "ns_kvstore.h"
#include "ns_front_grpc.h"
#include "rmq_acl_live.h"
#include "rmq_codec_grpc.h"
#include "rmq_log.h"
#include "rmq_rpc.h"
#include "rmq_security.h"
#include "rmq_time.h"

#define NS_WHY_MAX 512

struct ns_server {
    struct event_base *base;
    ns_config_t *cfg;             /* borrowed; UPDATE_NAMESRV_CONFIG changes its runtime keys */
    rmq_server_t *srv;
    ns_route_t *route;
    struct event *expiry_timer;
    ns_stats_t stats;
    ns_console_t *console;        /* metrics and web console; NULL when metricsPort=0 */
    rmq_security_t sec;           /* TLS contexts and ACL (tls*, acl* keys) */
    rmq_acl_live_t *acl_live;     /* sec.acl reloaded on SIGHUP and file changes; NULL: access control off */
    ns_controller_t *controller;  /* enableControllerInNamesrv; NULL when off */
    ns_front_grpc_t *grpc;        /* QueryRoute and RecallMessage */
};

/* ---- expiry ----------------------------------------------------------- */

/* Arms the expiry timer for the earliest deadline (at most the scan
 * interval away) unless it is already pending or no broker is registered. */
static void expiry_arm(ns_server_t *ns)
{
    int64_t next = ns_route_next_expiry(ns->route, ns->cfg->broker_channel_expired_ms);

    if (next == INT64_MAX || evtimer_pending(ns->expiry_timer, NULL))
        return;
    int64_t delay = next - rmq_mono_ms() + 1;
    if (delay < 0)
        delay = 0;
    if (delay > ns->cfg->scan_interval_ms)
        delay = ns->cfg->scan_interval_ms;
    struct timeval tv = { (time_t)(delay / 1000), (suseconds_t)(delay % 1000) * 1000 };
    evtimer_add(ns->expiry_timer, &tv);
}

static void on_expiry_timer(evutil_socket_t fd, short what, void *arg)
{
    ns_server_t *ns = arg;
    size_t n = ns_route_expire(ns->route, rmq_mono_ms(), ns->cfg->broker_channel_expired_ms);

    ns->stats.expired_total += n;
    if (n)
        LOG_INFO("%zu silent broker(s) expired, %zu left", n, ns_route_live_count(ns->route));
    expiry_arm(ns);
}

static void on_conn_close(rmq_conn_t *conn, void *arg)
{
    ns_server_t *ns = arg;
    size_t n = ns_route_remove_conn(ns->route, rmq_conn_id(conn));
    ns->stats.conn_closed_removed_total += n;

    if (ns->controller)
        ns_controller_conn_closed(ns->controller, rmq_conn_id(conn));
    if (n)
        LOG_INFO("connection %s closed: %zu broker(s) left the route", rmq_conn_peer(conn), n);
}

/* ---- operations (what every front-end calls; loop thread) -------------- */

rmq_err_t ns_server_register(ns_server_t *ns, const Rmq__RegisterBrokerRequest *rb,
                             uint64_t conn_id, const char *peer, ns_register_result_t *res,
                             char *why, size_t whylen)
{
    rmq_err_t err = ns_route_register(ns->route, rb, conn_id, rmq_mono_ms(), res, why, whylen);

    if (err == RMQ_ENOMEM)
        return err;
    if (err != RMQ_OK) {
        ns->stats.registrations_refused_total++;
        LOG_WARN("REGISTER_BROKER from %s refused: %s", peer, why);
        return err;
    }
    ns->stats.registrations_total++;
    LOG_DEBUG("registered %s %s id %" PRId64 " at %s, %zu topics", rb->cluster_name,
              rb->broker_name, rb->broker_id, rb->broker_addr, rb->n_topics);
    expiry_arm(ns);
    return RMQ_OK;
}

int ns_server_query_version(ns_server_t *ns, const Rmq__RegisterBrokerRequest *rb, uint64_t conn_id,
                            ns_register_result_t *res)
{
    int changed = ns_route_query_version(ns->route, rb, conn_id, rmq_mono_ms(), res);

    if (!changed)
        expiry_arm(ns);
    return changed;
}

const rmq_acl_t *ns_server_acl(const ns_server_t *ns)
{
    return ns->sec.acl;
}

Rmq__TopicRouteData *ns_server_route_query(ns_server_t *ns, const char *topic, rmq_err_t *err)
{
    Rmq__TopicRouteData *rd = ns_route_topic(ns->route, topic, err);

    ns->stats.route_queries_total++;
    if (*err == RMQ_ENOTFOUND)
        ns->stats.route_not_found_total++;
    return rd;
}

rmq_err_t ns_server_delete_topic(ns_server_t *ns, const char *topic, const char *cluster, const char *peer)
{
    rmq_err_t err = ns_route_delete_topic(ns->route, topic, cluster);

    if (err == RMQ_OK)
        LOG_INFO("topic %s deleted%s%s by %s", topic, cluster ? " in cluster " : "", cluster ? cluster : "", peer);
    return err;
}

size_t ns_server_write_perm(ns_server_t *ns, const char *broker_name, int wipe, const char *peer)
{
    size_t n = wipe ? ns_route_wipe_write_perm(ns->route, broker_name)
                    : ns_route_add_write_perm(ns->route, broker_name);

    LOG_INFO("%s write permission of %s in %zu topic(s), asked by %s", wipe ? "wiped" : "added",
             broker_name, n, peer);
    return n;
}

rmq_err_t ns_server_config_update(ns_server_t *ns, const char *text, size_t len, const char *peer,
                                  char *why, size_t whylen)
{
    rmq_err_t err = ns_config_update(ns->cfg, text, len, why, whylen);

    if (err != RMQ_OK) {
        LOG_WARN("configuration update from %s refused: %s", peer, why);
        return err;
    }
    rmq_log_set_level((rmq_log_level_t)ns->cfg->log_level);
    evtimer_del(ns->expiry_timer);
    expiry_arm(ns);
    LOG_INFO("configuration updated by %s: brokerChannelExpiredTime=%" PRId64
             " scanNotActiveBrokerInterval=%" PRId64, peer, ns->cfg->broker_channel_expired_ms,
             ns->cfg->scan_interval_ms);
    return RMQ_OK;
}

/* Saves the KV config when kvConfigPath is set; RMQ_EIO with why (logged)
 * when it could not be saved. */
static rmq_err_t kv_save(ns_server_t *ns, char *why, size_t whylen)
{
    char reason[NS_WHY_MAX];

    if (!ns->cfg->kv_config_path[0] ||
        ns_kvstore_save(ns->route, ns->cfg->kv_config_path, reason, sizeof reason) == RMQ_OK)
        return RMQ_OK;
    LOG_ERROR_RL("KV config not saved to %s: %s; change undone, request answered SYSTEM_ERROR",
                 ns->cfg->kv_config_path, reason);
    snprintf(why, whylen, "KV config not saved, change undone: %s", reason);
    return RMQ_EIO;
}

rmq_err_t ns_server_kv_put(ns_server_t *ns, const char *space, const char *key,
                           const char *value, char *why, size_t whylen)
{
    const char *cur = ns_route_kv_get(ns->route, space, key);
    char *old = cur ? strdup(cur) : NULL;
    rmq_err_t err = cur && !old ? RMQ_ENOMEM : ns_route_kv_put(ns->route, space, key, value);

    if (err == RMQ_EINVAL)
        snprintf(why, whylen, "PUT_KV_CONFIG needs a namespace and a key of 1..%d characters",
                 NS_NAME_MAX);
    else if (err == RMQ_OK && (err = kv_save(ns, why, whylen)) != RMQ_OK) {
        if (old)
            ns_route_kv_put(ns->route, space, key, old);
        else
            ns_route_kv_delete(ns->route, space, key);
    }
    free(old);
    return err;
}

rmq_err_t ns_server_kv_delete(ns_server_t *ns, const char *space, const char *key, char *why,
                              size_t whylen)
{
    const char *cur = ns_route_kv_get(ns->route, space, key);

    if (!cur) {
        snprintf(why, whylen, "no KV config %s in namespace %s", key, space);
        return RMQ_ENOTFOUND;
    }
    char *old = strdup(cur);
    if (!old)
        return RMQ_ENOMEM;
    ns_route_kv_delete(ns->route, space, key);
    rmq_err_t err = kv_save(ns, why, whylen);
    if (err != RMQ_OK)
        ns_route_kv_put(ns->route, space, key, old);
    free(old);
    return err;
}

/* ---- lifetime --------------------------------------------------------- */

ns_server_t *ns_server_new(struct event_base *base, ns_config_t *cfg)
{
    ns_server_t *ns = calloc(1, sizeof *ns);
    rmq_server_opts_t opts = { 0 };

    if (!ns)
        return NULL;
    ns->base = base;
    ns->cfg = cfg;
    opts.max_frame = (uint32_t)cfg->max_frame_size;
    opts.idle_timeout_ms = (int)(cfg->idle_timeout_s * 1000);
    opts.name = "namesrv";
    char why[NS_WHY_MAX];
    if (rmq_security_init(&ns->sec, &cfg->tls, &cfg->acl, why, sizeof why) != RMQ_OK) {
        LOG_ERROR("%s", why);
        free(ns);
        return NULL;
    }
    if (ns->sec.acl && !(ns->acl_live = rmq_acl_live_new(base, ns->sec.acl, cfg->acl.file))) {
        LOG_ERROR("aclFile=%s: cannot watch it or arm SIGHUP", cfg->acl.file);
        rmq_security_deinit(&ns->sec);
        free(ns);
        return NULL;
    }
    rmq_security_server_opts(&ns->sec, &opts);
    ns->route = ns_route_new();
    ns->srv = rmq_server_new(base, &opts);
    ns->expiry_timer = evtimer_new(base, on_expiry_timer, ns);
    if (!ns->route || !ns->srv || !ns->expiry_timer) {
        ns_server_free(ns);
        return NULL;
    }
    ns_front_rmq_install(ns, ns->srv);
    /* gRPC (RocketMQ 5) on the same port: QueryRoute and RecallMessage */
    if (ns_front_remoting_install(ns, ns->srv) != RMQ_OK ||
        !(ns->grpc = ns_front_grpc_new(ns, base, ns->sec.client_ctx, ns->srv))) {
        ns_server_free(ns);
        return NULL;
    }
    rmq_remoting_set_acl(ns->srv, ns->sec.acl, RMQ_ACL_SIGNER_AND_NEEDS);
    rmq_server_on_close(ns->srv, on_conn_close, ns);
    rmq_acl_attach(ns->srv, ns->sec.acl, RMQ_ACL_SIGNER_AND_NEEDS);
    return ns;
}

/* Starts the embedded controller, named by this server's address. */
static rmq_err_t controller_start(ns_server_t *ns)
{
    char node[300], why[NS_WHY_MAX];

    snprintf(node, sizeof node, "%s:%d", ns->cfg->bind_address, ns_server_port(ns));
    ns->controller = ns_controller_new(ns->base, ns->cfg, ns->route, node, why, sizeof why);
    if (!ns->controller) {
        LOG_ERROR("enableControllerInNamesrv=true: %s; not starting", why);
        return RMQ_EINVAL;
    }
    return ns_controller_start(ns->controller);
}

rmq_err_t ns_server_start(ns_server_t *ns)
{
    char why[NS_WHY_MAX];
    rmq_err_t err;

    if (ns->cfg->kv_config_path[0]) {
        err = ns_kvstore_load(ns->route, ns->cfg->kv_config_path, why, sizeof why);
        if (err != RMQ_OK) {
            LOG_ERROR("kvConfigPath=%s: cannot load the KV config: %s; not starting",
                      ns->cfg->kv_config_path, why);
            return err;
        }
    }
    err = rmq_server_listen(ns->srv, ns->cfg->bind_address, (int)ns->cfg->listen_port);
    if (err != RMQ_OK) {
        LOG_ERROR("listenPort=%" PRId64 ": cannot listen on %s: %s; not starting", ns->cfg->listen_port,
                  ns->cfg->bind_address, rmq_strerror(err));
        return err;
    }
    LOG_INFO("name server listening on %s:%d", ns->cfg->bind_address, ns_server_port(ns));
    if (ns->cfg->controller_enable && (err = controller_start(ns)) != RMQ_OK)
        return err;
    if (ns->cfg->metrics_port > 0) {
        char cerr[256];
        ns->console = ns_console_new(ns, ns->base, &ns->sec, ns->cfg->console_history_period_ms);
        if (!ns->console) {
            LOG_ERROR("metricsPort=%" PRId64 ": out of memory creating the HTTP server; not starting",
                      ns->cfg->metrics_port);
            return RMQ_ENOMEM;
        }
        err = ns_console_start(ns->console, ns->cfg->bind_address, (int)ns->cfg->metrics_port, cerr,
                               sizeof cerr);
        if (err != RMQ_OK) {
            LOG_ERROR("metricsPort=%" PRId64 ": %s; not starting", ns->cfg->metrics_port, cerr);
            return err;
        }
    }
    return RMQ_OK;
}

int ns_server_port(const ns_server_t *ns)
{
    return rmq_server_port(ns->srv);
}

ns_route_t *ns_server_route(ns_server_t *ns)
{
    return ns->route;
}

int ns_server_metrics_port(const ns_server_t *ns)
{
    return ns->console ? ns_console_port(ns->console) : 0;
}

const ns_stats_t *ns_server_stats(const ns_server_t *ns)
{
    return &ns->stats;
}

size_t ns_server_conn_count(const ns_server_t *ns)
{
    return rmq_server_conn_count(ns->srv);
}

const ns_config_t *ns_server_config(const ns_server_t *ns)
{
    return ns->cfg;
}

ns_controller_t *ns_server_controller(ns_server_t *ns)
{
    return ns->controller;
}

void ns_server_free(ns_server_t *ns)
{
    if (!ns)
        return;
    ns_console_free(ns->console);
    ns_controller_free(ns->controller);
    ns_front_grpc_free(ns->grpc);
    if (ns->srv) {
        rmq_grpc_goaway(ns->srv);
        rmq_server_free(ns->srv);
    }
    if (ns->expiry_timer)
        event_free(ns->expiry_timer);
    ns_route_free(ns->route);
    rmq_acl_live_free(ns->acl_live);
    rmq_security_deinit(&ns->sec);
    free(ns);
}
