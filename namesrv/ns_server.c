/* ns_server.c: request handlers of the name server over rmq_server. Each
 * handler checks its header, applies it to the route table and answers
 * with the status matching the outcome and a remark naming what was wrong.
 * Broker liveness: a closed connection removes the brokers registered over
 * it at once; a timer armed for the earliest expiry removes silent ones. */
#include "ns_server.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_console.h"
#include "ns_kvstore.h"
#include "rmq_log.h"
#include "rmq_rpc.h"
#include "rmq_security.h"
#include "rmq_time.h"

#define NS_WHY_MAX 512

struct ns_server {
    struct event_base *base;
    const ns_config_t *cfg;
    rmq_server_t *srv;
    ns_route_t *route;
    struct event *expiry_timer;
    ns_stats_t stats;
    ns_console_t *console;        /* metrics and web console; NULL when metricsPort=0 */
    rmq_security_t sec;           /* TLS contexts and ACL (tls*, acl* keys) */
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

    if (n)
        LOG_INFO("connection %s closed: %zu broker(s) left the route", rmq_conn_peer(conn), n);
}

/* ---- replies ---------------------------------------------------------- */

/* Answers BAD_REQUEST unless req carries a header of type want; returns 1 if it does. */
static int has_header(rmq_conn_t *conn, const rmq_frame_t *req, Rmq__Command__HeaderCase want,
                      const char *header_name)
{
    if (req->cmd->header_case == want)
        return 1;
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST, "%s needs a %s header",
                    rmq_request_name(req->cmd->code), header_name);
    return 0;
}

static void reply_ok(rmq_conn_t *conn, const rmq_frame_t *req, Rmq__Command *resp)
{
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), resp, RMQ__STATUS__SUCCESS, "", NULL);
}

static void reply_nomem(rmq_conn_t *conn, const rmq_frame_t *req)
{
    LOG_ERROR_RL("%s: out of memory", rmq_request_name(req->cmd->code));
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "%s: out of memory",
                    rmq_request_name(req->cmd->code));
}

/* ---- handlers (loop thread; arg is the ns_server_t) --------------------- */

static void handle_register(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__RegisterBrokerResponse rr = RMQ__REGISTER_BROKER_RESPONSE__INIT;
    Rmq__Command resp = RMQ__COMMAND__INIT;
    ns_register_result_t res;
    char why[NS_WHY_MAX];

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_REGISTER_BROKER, "register_broker"))
        return;
    const Rmq__RegisterBrokerRequest *rb = req->cmd->register_broker;
    rmq_err_t err = ns_route_register(ns->route, rb, rmq_conn_id(conn), rmq_mono_ms(), &res, why,
                                      sizeof why);
    if (err == RMQ_ENOMEM) {
        reply_nomem(conn, req);
        return;
    }
    if (err != RMQ_OK) {
        ns->stats.registrations_refused_total++;
        LOG_WARN("REGISTER_BROKER from %s refused: %s", rmq_conn_peer(conn), why);
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST, "%s", why);
        return;
    }
    ns->stats.registrations_total++;
    LOG_DEBUG("registered %s %s id %" PRId64 " at %s, %zu topics", rb->cluster_name,
              rb->broker_name, rb->broker_id, rb->broker_addr, rb->n_topics);
    rr.master_addr = res.master_addr;
    rr.ha_server_addr = res.master_ha_addr;
    resp.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER_RESP;
    resp.register_broker_resp = &rr;
    reply_ok(conn, req, &resp);
    expiry_arm(ns);
}

static void handle_unregister(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    char why[NS_WHY_MAX];

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_UNREGISTER_BROKER, "unregister_broker"))
        return;
    rmq_err_t err = ns_route_unregister(ns->route, req->cmd->unregister_broker, why, sizeof why);
    if (err == RMQ_OK) {
        reply_ok(conn, req, NULL);
        return;
    }
    LOG_WARN("UNREGISTER_BROKER from %s refused: %s", rmq_conn_peer(conn), why);
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd),
                    err == RMQ_ENOTFOUND ? RMQ__STATUS__BROKER_NOT_FOUND : RMQ__STATUS__BAD_REQUEST,
                    "%s", why);
}

static void handle_get_route(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__Command resp = RMQ__COMMAND__INIT;
    rmq_err_t err;

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_TOPIC, "topic"))
        return;
    const char *topic = req->cmd->topic->topic;
    Rmq__TopicRouteData *rd = ns_route_topic(ns->route, topic, &err);
    ns->stats.route_queries_total++;
    if (err == RMQ_ENOTFOUND) {
        ns->stats.route_not_found_total++;
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__TOPIC_NOT_EXIST,
                        "no route for topic %s", topic);
        return;
    }
    if (!rd) {
        reply_nomem(conn, req);
        return;
    }
    resp.header_case = RMQ__COMMAND__HEADER_TOPIC_ROUTE;
    resp.topic_route = rd;
    reply_ok(conn, req, &resp);
    rmq__topic_route_data__free_unpacked(rd, NULL);
}

static void handle_cluster_info(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__ClusterInfo *ci = ns_route_cluster_info(ns->route, rmq_mono_ms(), rmq_wall_ms());

    if (!ci) {
        reply_nomem(conn, req);
        return;
    }
    resp.header_case = RMQ__COMMAND__HEADER_CLUSTER_INFO;
    resp.cluster_info = ci;
    reply_ok(conn, req, &resp);
    rmq__cluster_info__free_unpacked(ci, NULL);
}

static void handle_topic_list(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__TopicList *tl = ns_route_topic_list(ns->route);

    if (!tl) {
        reply_nomem(conn, req);
        return;
    }
    resp.header_case = RMQ__COMMAND__HEADER_TOPIC_LIST;
    resp.topic_list = tl;
    reply_ok(conn, req, &resp);
    rmq__topic_list__free_unpacked(tl, NULL);
}

static void handle_delete_topic(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_TOPIC, "topic"))
        return;
    const char *topic = req->cmd->topic->topic;
    if (ns_route_delete_topic(ns->route, topic) != RMQ_OK) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__TOPIC_NOT_EXIST,
                        "topic %s is not in the route", topic);
        return;
    }
    LOG_INFO("topic %s deleted by %s", topic, rmq_conn_peer(conn));
    reply_ok(conn, req, NULL);
}

/* WIPE_WRITE_PERM_OF_BROKER and ADD_WRITE_PERM_OF_BROKER. */
static void handle_write_perm(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__BrokerPermResponse pr = RMQ__BROKER_PERM_RESPONSE__INIT;
    Rmq__Command resp = RMQ__COMMAND__INIT;

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_BROKER_PERM, "broker_perm"))
        return;
    const char *name = req->cmd->broker_perm->broker_name;
    int wipe = req->cmd->code == RMQ__REQUEST_CODE__WIPE_WRITE_PERM_OF_BROKER;
    size_t n = wipe ? ns_route_wipe_write_perm(ns->route, name)
                    : ns_route_add_write_perm(ns->route, name);
    LOG_INFO("%s write permission of %s in %zu topic(s), asked by %s", wipe ? "wiped" : "added",
             name, n, rmq_conn_peer(conn));
    pr.topic_count = (int32_t)n;
    resp.header_case = RMQ__COMMAND__HEADER_BROKER_PERM_RESP;
    resp.broker_perm_resp = &pr;
    reply_ok(conn, req, &resp);
}

/* Saves the KV config when kvConfigPath is set; on failure logs, answers
 * SYSTEM_ERROR and returns -1 (the caller then undoes its change). */
static int kv_save(ns_server_t *ns, rmq_conn_t *conn, const rmq_frame_t *req)
{
    char why[NS_WHY_MAX];

    if (!ns->cfg->kv_config_path[0] ||
        ns_kvstore_save(ns->route, ns->cfg->kv_config_path, why, sizeof why) == RMQ_OK)
        return 0;
    LOG_ERROR_RL("KV config not saved to %s: %s; change undone, request answered SYSTEM_ERROR",
                 ns->cfg->kv_config_path, why);
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR,
                    "KV config not saved, change undone: %s", why);
    return -1;
}

static void handle_kv_put(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_KV, "kv"))
        return;
    const Rmq__KvConfig *kv = req->cmd->kv;
    const char *cur = ns_route_kv_get(ns->route, kv->namespace_, kv->key);
    char *old = cur ? strdup(cur) : NULL;
    rmq_err_t err = cur && !old ? RMQ_ENOMEM
                                : ns_route_kv_put(ns->route, kv->namespace_, kv->key, kv->value);
    if (err == RMQ_EINVAL) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST,
                        "PUT_KV_CONFIG needs a namespace and a key of 1..%d characters",
                        NS_NAME_MAX);
    } else if (err != RMQ_OK) {
        reply_nomem(conn, req);
    } else if (kv_save(ns, conn, req) != 0) {
        if (old)
            ns_route_kv_put(ns->route, kv->namespace_, kv->key, old);
        else
            ns_route_kv_delete(ns->route, kv->namespace_, kv->key);
    } else {
        reply_ok(conn, req, NULL);
    }
    free(old);
}

static void handle_kv_get(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__KvConfig out = RMQ__KV_CONFIG__INIT;
    Rmq__Command resp = RMQ__COMMAND__INIT;

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_KV, "kv"))
        return;
    const Rmq__KvConfig *kv = req->cmd->kv;
    const char *value = ns_route_kv_get(ns->route, kv->namespace_, kv->key);
    if (!value) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__QUERY_NOT_FOUND,
                        "no KV config %s in namespace %s", kv->key, kv->namespace_);
        return;
    }
    out.namespace_ = kv->namespace_;
    out.key = kv->key;
    out.value = (char *)value;
    resp.header_case = RMQ__COMMAND__HEADER_KV;
    resp.kv = &out;
    reply_ok(conn, req, &resp);
}

static void handle_kv_delete(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_KV, "kv"))
        return;
    const Rmq__KvConfig *kv = req->cmd->kv;
    const char *cur = ns_route_kv_get(ns->route, kv->namespace_, kv->key);
    if (!cur) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__QUERY_NOT_FOUND,
                        "no KV config %s in namespace %s", kv->key, kv->namespace_);
        return;
    }
    char *old = strdup(cur);
    if (!old) {
        reply_nomem(conn, req);
        return;
    }
    ns_route_kv_delete(ns->route, kv->namespace_, kv->key);
    if (kv_save(ns, conn, req) != 0)
        ns_route_kv_put(ns->route, kv->namespace_, kv->key, old);
    else
        reply_ok(conn, req, NULL);
    free(old);
}

/* Frees a ConfigTable built by build_config_table (entries' strings included). */
static void config_table_free(Rmq__ConfigTable *ct)
{
    for (size_t i = 0; i < ct->n_entries; i++) {
        free(ct->entries[i]->value);
        free(ct->entries[i]);
    }
    free(ct->entries);
}

/* Fills ct with every key of the effective config; keys point into the static table. */
static rmq_err_t build_config_table(const ns_config_t *cfg, Rmq__ConfigTable *ct)
{
    const rmq_cfg_table_t *t = ns_config_table();
    char buf[4200];

    ct->entries = calloc(t->count, sizeof *ct->entries);
    if (!ct->entries)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < t->count; i++) {
        Rmq__ConfigEntry *ce = malloc(sizeof *ce);
        if (!ce)
            return RMQ_ENOMEM;
        rmq__config_entry__init(ce);
        ct->entries[ct->n_entries++] = ce;
        ce->key = (char *)t->entries[i].key;
        if (rmq_config_get(t, cfg, ce->key, buf, sizeof buf) != RMQ_OK)
            buf[0] = '\0';
        ce->value = strdup(buf);
        if (!ce->value)
            return RMQ_ENOMEM;
    }
    return RMQ_OK;
}

static void handle_get_config(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__ConfigTable ct = RMQ__CONFIG_TABLE__INIT;
    Rmq__Command resp = RMQ__COMMAND__INIT;

    if (build_config_table(ns->cfg, &ct) != RMQ_OK) {
        config_table_free(&ct);
        reply_nomem(conn, req);
        return;
    }
    resp.header_case = RMQ__COMMAND__HEADER_CONFIG;
    resp.config = &ct;
    reply_ok(conn, req, &resp);
    config_table_free(&ct);
}

/* ---- lifetime --------------------------------------------------------- */

static void register_handlers(ns_server_t *ns)
{
    static const struct {
        int code;
        rmq_handler_fn fn;
    } handlers[] = {
        { RMQ__REQUEST_CODE__REGISTER_BROKER, handle_register },
        { RMQ__REQUEST_CODE__UNREGISTER_BROKER, handle_unregister },
        { RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC, handle_get_route },
        { RMQ__REQUEST_CODE__GET_BROKER_CLUSTER_INFO, handle_cluster_info },
        { RMQ__REQUEST_CODE__GET_ALL_TOPIC_LIST_FROM_NAMESERVER, handle_topic_list },
        { RMQ__REQUEST_CODE__DELETE_TOPIC_IN_NAMESRV, handle_delete_topic },
        { RMQ__REQUEST_CODE__WIPE_WRITE_PERM_OF_BROKER, handle_write_perm },
        { RMQ__REQUEST_CODE__ADD_WRITE_PERM_OF_BROKER, handle_write_perm },
        { RMQ__REQUEST_CODE__PUT_KV_CONFIG, handle_kv_put },
        { RMQ__REQUEST_CODE__GET_KV_CONFIG, handle_kv_get },
        { RMQ__REQUEST_CODE__DELETE_KV_CONFIG, handle_kv_delete },
        { RMQ__REQUEST_CODE__GET_NAMESRV_CONFIG, handle_get_config },
    };

    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
        rmq_server_handle(ns->srv, handlers[i].code, handlers[i].fn, ns);
    rmq_server_on_close(ns->srv, on_conn_close, ns);
}

ns_server_t *ns_server_new(struct event_base *base, const ns_config_t *cfg)
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
    rmq_security_server_opts(&ns->sec, &opts);
    ns->route = ns_route_new();
    ns->srv = rmq_server_new(base, &opts);
    ns->expiry_timer = evtimer_new(base, on_expiry_timer, ns);
    if (!ns->route || !ns->srv || !ns->expiry_timer) {
        ns_server_free(ns);
        return NULL;
    }
    register_handlers(ns);
    rmq_acl_attach(ns->srv, ns->sec.acl);
    return ns;
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
    if (ns->cfg->metrics_port > 0) {
        char cerr[256];
        ns->console = ns_console_new(ns, ns->base, &ns->sec);
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

void ns_server_free(ns_server_t *ns)
{
    if (!ns)
        return;
    ns_console_free(ns->console);
    if (ns->srv)
        rmq_server_free(ns->srv);
    if (ns->expiry_timer)
        event_free(ns->expiry_timer);
    ns_route_free(ns->route);
    rmq_security_deinit(&ns->sec);
    free(ns);
}
