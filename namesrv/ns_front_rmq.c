/* ns_front_rmq.c: the name server's native-protocol front-end. Each handler
 * checks its rmq header, calls the name server's operation (ns_server.h) or
 * reads the route table, and answers with the status matching the outcome
 * and a remark naming what was wrong. A second protocol gets its own front
 * file over the same operations. Loop thread; arg is the ns_server_t. */
#include "ns_front_rmq.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_controller.h"
#include "ns_regbody.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define NS_WHY_MAX 512

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

/* Maps a refused registration to its status: a stale delta is told apart so
 * the broker sends its whole table. */
static int register_status(rmq_err_t err)
{
    return err == RMQ_ENOTFOUND ? RMQ__STATUS__DATA_VERSION_MISMATCH : RMQ__STATUS__BAD_REQUEST;
}

static void handle_register(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__RegisterBrokerResponse rr = RMQ__REGISTER_BROKER_RESPONSE__INIT;
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__RegisterBrokerRequest view;
    Rmq__TopicConfigTable *tab = NULL;
    ns_register_result_t res;
    char why[NS_WHY_MAX];

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_REGISTER_BROKER, "register_broker"))
        return;
    rmq_err_t err = ns_regbody_view(req->cmd->register_broker, req->body, &view, &tab, why, sizeof why);
    if (err == RMQ_OK)
        err = ns_server_register(ns, &view, rmq_conn_id(conn), rmq_conn_peer(conn), &res, why, sizeof why);
    else if (err == RMQ_EPROTO)
        LOG_WARN_RL("REGISTER_BROKER from %s refused: %s", rmq_conn_peer(conn), why);
    if (tab)
        rmq__topic_config_table__free_unpacked(tab, NULL);
    if (err == RMQ_ENOMEM) {
        reply_nomem(conn, req);
        return;
    }
    if (err != RMQ_OK) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), register_status(err), "%s", why);
        return;
    }
    rr.master_addr = res.master_addr;
    rr.ha_server_addr = res.master_ha_addr;
    resp.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER_RESP;
    resp.register_broker_resp = &rr;
    reply_ok(conn, req, &resp);
}

/* QUERY_DATA_VERSION: whether the broker must send its whole table. */
static void handle_query_version(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__QueryDataVersionResponse qr = RMQ__QUERY_DATA_VERSION_RESPONSE__INIT;
    Rmq__Command resp = RMQ__COMMAND__INIT;
    ns_register_result_t res;

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_REGISTER_BROKER, "register_broker"))
        return;
    qr.changed = ns_server_query_version(ns, req->cmd->register_broker, rmq_conn_id(conn), &res);
    qr.master_addr = res.master_addr;
    qr.ha_server_addr = res.master_ha_addr;
    resp.header_case = RMQ__COMMAND__HEADER_QUERY_DATA_VERSION_RESP;
    resp.query_data_version_resp = &qr;
    reply_ok(conn, req, &resp);
}

static void handle_unregister(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    char why[NS_WHY_MAX];

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_UNREGISTER_BROKER, "unregister_broker"))
        return;
    rmq_err_t err = ns_route_unregister(ns_server_route(ns), req->cmd->unregister_broker, why, sizeof why);
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
    Rmq__TopicRouteData *rd = ns_server_route_query(ns, topic, &err);
    if (err == RMQ_ENOTFOUND) {
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
    Rmq__ClusterInfo *ci = ns_route_cluster_info(ns_server_route(ns), rmq_mono_ms(), rmq_wall_ms());

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
    Rmq__TopicList *tl = ns_route_topic_list(ns_server_route(ns));

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
    if (ns_server_delete_topic(ns, topic, NULL, rmq_conn_peer(conn)) != RMQ_OK) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__TOPIC_NOT_EXIST,
                        "topic %s is not in the route", topic);
        return;
    }
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
    size_t n = ns_server_write_perm(ns, name, wipe, rmq_conn_peer(conn));
    pr.topic_count = (int32_t)n;
    resp.header_case = RMQ__COMMAND__HEADER_BROKER_PERM_RESP;
    resp.broker_perm_resp = &pr;
    reply_ok(conn, req, &resp);
}

/* Answers a KV change: OK, or the status matching err with why. */
static void reply_kv_change(rmq_conn_t *conn, const rmq_frame_t *req, rmq_err_t err,
                            const char *why)
{
    if (err == RMQ_OK)
        reply_ok(conn, req, NULL);
    else if (err == RMQ_ENOMEM)
        reply_nomem(conn, req);
    else
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd),
                        err == RMQ_EINVAL      ? RMQ__STATUS__BAD_REQUEST
                        : err == RMQ_ENOTFOUND ? RMQ__STATUS__QUERY_NOT_FOUND
                                               : RMQ__STATUS__SYSTEM_ERROR,
                        "%s", why);
}

static void handle_kv_put(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    char why[NS_WHY_MAX] = "";

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_KV, "kv"))
        return;
    const Rmq__KvConfig *kv = req->cmd->kv;
    rmq_err_t err = ns_server_kv_put(arg, kv->namespace_, kv->key, kv->value, why, sizeof why);
    reply_kv_change(conn, req, err, why);
}

static void handle_kv_get(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__KvConfig out = RMQ__KV_CONFIG__INIT;
    Rmq__Command resp = RMQ__COMMAND__INIT;

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_KV, "kv"))
        return;
    const Rmq__KvConfig *kv = req->cmd->kv;
    const char *value = ns_route_kv_get(ns_server_route(ns), kv->namespace_, kv->key);
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
    char why[NS_WHY_MAX] = "";

    if (!has_header(conn, req, RMQ__COMMAND__HEADER_KV, "kv"))
        return;
    const Rmq__KvConfig *kv = req->cmd->kv;
    rmq_err_t err = ns_server_kv_delete(arg, kv->namespace_, kv->key, why, sizeof why);
    reply_kv_change(conn, req, err, why);
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

    if (build_config_table(ns_server_config(ns), &ct) != RMQ_OK) {
        config_table_free(&ct);
        reply_nomem(conn, req);
        return;
    }
    resp.header_case = RMQ__COMMAND__HEADER_CONFIG;
    resp.config = &ct;
    reply_ok(conn, req, &resp);
    config_table_free(&ct);
}

/* ---- controller (enableControllerInNamesrv) ------------------------------ */

/* The controller, or NULL after answering that it is off. */
static ns_controller_t *controller_of(rmq_conn_t *conn, const rmq_frame_t *req, ns_server_t *ns)
{
    ns_controller_t *ctl = ns_server_controller(ns);

    if (!ctl)
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__REQUEST_CODE_NOT_SUPPORTED,
                        "%s: this name server runs no controller (enableControllerInNamesrv=false)",
                        rmq_request_name(req->cmd->code));
    return ctl;
}

/* Answers with st as a ReplicaInfo: SUCCESS from the leader, else
 * CONTROLLER_NOT_LEADER carrying what this standby last knew. */
static void reply_replica_info(rmq_conn_t *conn, const rmq_frame_t *req, const ns_controller_t *ctl,
                               const char *cluster, const char *name, const ns_ctl_state_t *st, int leader)
{
    Rmq__ReplicaInfo ri = RMQ__REPLICA_INFO__INIT;
    Rmq__Command resp = RMQ__COMMAND__INIT;
    int64_t ids[NS_CTL_MAX_REPLICAS];

    ri.cluster_name = (char *)cluster;
    ri.broker_name = (char *)name;
    ri.master_broker_id = st->master_id;
    ri.master_addr = (char *)st->master_addr;
    ri.master_ha_addr = (char *)ns_controller_ha_addr(ctl, cluster, name, st->master_id);
    ri.master_epoch = st->master_epoch;
    memcpy(ids, st->sync_set, st->n_sync * sizeof ids[0]);
    ri.sync_state_set = ids;
    ri.n_sync_state_set = st->n_sync;
    ri.sync_state_set_epoch = st->sync_set_epoch;
    resp.header_case = RMQ__COMMAND__HEADER_REPLICA_INFO;
    resp.replica_info = &ri;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp,
                   leader ? RMQ__STATUS__SUCCESS : RMQ__STATUS__CONTROLLER_NOT_LEADER,
                   leader ? "" : "this controller stands by; ask the leader", NULL);
}

/* CONTROLLER_REGISTER_BROKER and BROKER_HEARTBEAT. */
static void handle_ctl_heartbeat(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_controller_t *ctl = controller_of(conn, req, arg);
    ns_ctl_state_t st;
    char why[NS_WHY_MAX];

    if (!ctl || !has_header(conn, req, RMQ__COMMAND__HEADER_CONTROLLER_BROKER, "controller_broker"))
        return;
    const Rmq__ControllerBrokerRequest *cb = req->cmd->controller_broker;
    rmq_err_t err = ns_controller_heartbeat(ctl, cb, rmq_conn_id(conn), &st, why, sizeof why);
    if (err == RMQ_ENOMEM)
        reply_nomem(conn, req);
    else if (err == RMQ_EINVAL)
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST, "%s", why);
    else
        reply_replica_info(conn, req, ctl, cb->cluster_name, cb->broker_name, &st, err == RMQ_OK);
}

static void handle_ctl_replica_info(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_controller_t *ctl = controller_of(conn, req, arg);
    ns_ctl_state_t st;

    if (!ctl || !has_header(conn, req, RMQ__COMMAND__HEADER_REPLICA_INFO, "replica_info"))
        return;
    const Rmq__ReplicaInfo *q = req->cmd->replica_info;
    rmq_err_t err = ns_controller_replica_info(ctl, q->cluster_name, q->broker_name, &st);
    if (err == RMQ_ENOTFOUND)
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BROKER_NOT_FOUND,
                        "the controller knows no group %s in cluster %s", q->broker_name, q->cluster_name);
    else
        reply_replica_info(conn, req, ctl, q->cluster_name, q->broker_name, &st, err == RMQ_OK);
}

/* Accepted changes answer SUCCESS with the state being committed. */
static void handle_ctl_alter(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    ns_controller_t *ctl = controller_of(conn, req, arg);
    ns_ctl_state_t st;
    char why[NS_WHY_MAX];
    int status;

    if (!ctl || !has_header(conn, req, RMQ__COMMAND__HEADER_ALTER_SYNC_STATE_SET, "alter_sync_state_set"))
        return;
    const Rmq__AlterSyncStateSetRequest *a = req->cmd->alter_sync_state_set;
    if (ns_controller_alter_sync_state_set(ctl, a, &st, &status, why, sizeof why) == RMQ_ESTATUS) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), status, "%s", why);
        return;
    }
    reply_replica_info(conn, req, ctl, a->cluster_name, a->broker_name, &st, 1);
}

/* ---- installation ------------------------------------------------------ */

void ns_front_rmq_install(ns_server_t *ns, rmq_server_t *srv)
{
    static const struct {
        int code;
        rmq_handler_fn fn;
    } handlers[] = {
        { RMQ__REQUEST_CODE__REGISTER_BROKER, handle_register },
        { RMQ__REQUEST_CODE__UNREGISTER_BROKER, handle_unregister },
        { RMQ__REQUEST_CODE__QUERY_DATA_VERSION, handle_query_version },
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
        { RMQ__REQUEST_CODE__CONTROLLER_REGISTER_BROKER, handle_ctl_heartbeat },
        { RMQ__REQUEST_CODE__BROKER_HEARTBEAT, handle_ctl_heartbeat },
        { RMQ__REQUEST_CODE__CONTROLLER_GET_REPLICA_INFO, handle_ctl_replica_info },
        { RMQ__REQUEST_CODE__CONTROLLER_ALTER_SYNC_STATE_SET, handle_ctl_alter },
    };

    for (size_t i = 0; i < sizeof handlers / sizeof handlers[0]; i++)
        rmq_server_handle(srv, handlers[i].code, handlers[i].fn, ns);
}
