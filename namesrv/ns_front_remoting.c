/* ns_front_remoting.c: the name server's RocketMQ remoting front-end. Each
 * handler reads its request's extFields, calls the name server's operation
 * (ns_server.h) or reads the route table, and answers with RocketMQ's
 * response code and JSON body: TopicRouteData for routes, ClusterInfo,
 * TopicList, KV values in extFields, the configuration as properties text.
 * Map keys that RocketMQ's name server writes unquoted (broker ids) are
 * written quoted, which is valid JSON and what its clients accept. Loop
 * thread; arg is the ns_server_t. */
#include "ns_front_remoting.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_http.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define NS_WHY_MAX 512

enum {
    CODE_PUT_KV_CONFIG = 100,
    CODE_GET_KV_CONFIG = 101,
    CODE_DELETE_KV_CONFIG = 102,
    CODE_GET_ROUTEINFO_BY_TOPIC = 105,
    CODE_GET_BROKER_CLUSTER_INFO = 106,
    CODE_GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206,
    CODE_GET_TOPICS_BY_CLUSTER = 224,
    CODE_GET_SYSTEM_TOPIC_LIST_FROM_NS = 304,
    CODE_GET_NAMESRV_CONFIG = 319,
};

/* ---- replies ------------------------------------------------------------ */

static void reply_nomem(rmq_conn_t *conn, const rmq_remoting_request_t *req)
{
    LOG_ERROR_RL("remoting request code %d: out of memory", req->code);
    rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "out of memory");
}

/* Answers SUCCESS with body's bytes (NULL: none); body is freed. */
static void reply_body(rmq_conn_t *conn, const rmq_remoting_request_t *req,
                       struct evbuffer *body)
{
    rmq_remoting_reply_t rep = { .code = RMQ_REMOTING_SUCCESS };

    if (body != NULL) {
        rep.body_len = evbuffer_get_length(body);
        rep.body = evbuffer_pullup(body, -1);
        if (rep.body == NULL && rep.body_len > 0) {
            evbuffer_free(body);
            reply_nomem(conn, req);
            return;
        }
    }
    rmq_remoting_reply(conn, req, &rep);
    if (body != NULL)
        evbuffer_free(body);
}

/* A required extField; answers SYSTEM_ERROR naming it and returns NULL when absent. */
static const char *need_field(rmq_conn_t *conn, const rmq_remoting_request_t *req,
                              const char *key)
{
    const char *v = rmq_remoting_field(req, key);

    if (v == NULL)
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR,
                            "request code %d needs extField %s", req->code, key);
    return v;
}

/* ---- JSON bodies ------------------------------------------------------------ */

static void json_key(struct evbuffer *out, const char *key, int comma)
{
    if (comma)
        evbuffer_add(out, ",", 1);
    rmq_json_str(out, key);
    evbuffer_add(out, ":", 1);
}

/* {"cluster":..,"brokerName":..,"brokerAddrs":{"0":"addr",...}} */
static void json_broker_data(struct evbuffer *out, const Rmq__BrokerData *bd)
{
    evbuffer_add(out, "{", 1);
    json_key(out, "cluster", 0);
    rmq_json_str(out, bd->cluster);
    json_key(out, "brokerName", 1);
    rmq_json_str(out, bd->broker_name);
    json_key(out, "brokerAddrs", 1);
    evbuffer_add(out, "{", 1);
    for (size_t i = 0; i < bd->n_addrs; i++) {
        char id[24];
        snprintf(id, sizeof(id), "%lld", (long long)bd->addrs[i]->broker_id);
        json_key(out, id, i > 0);
        rmq_json_str(out, bd->addrs[i]->addr);
    }
    evbuffer_add(out, "}}", 2);
}

/* TopicRouteData: queueDatas, brokerDatas, filterServerTable (and
 * orderTopicConf for an ordered topic). */
static void json_route(struct evbuffer *out, const Rmq__TopicRouteData *rd,
                       const char *order_conf)
{
    evbuffer_add(out, "{", 1);
    if (order_conf != NULL) {
        json_key(out, "orderTopicConf", 0);
        rmq_json_str(out, order_conf);
        evbuffer_add(out, ",", 1);
    }
    json_key(out, "queueDatas", 0);
    evbuffer_add(out, "[", 1);
    for (size_t i = 0; i < rd->n_queue_datas; i++) {
        const Rmq__QueueData *q = rd->queue_datas[i];
        if (i > 0)
            evbuffer_add(out, ",", 1);
        evbuffer_add(out, "{", 1);
        json_key(out, "brokerName", 0);
        rmq_json_str(out, q->broker_name);
        evbuffer_add_printf(out, ",\"readQueueNums\":%d,\"writeQueueNums\":%d,\"perm\":%d,"
                            "\"topicSysFlag\":%d}", q->read_queue_nums, q->write_queue_nums,
                            q->perm, q->topic_sys_flag);
    }
    evbuffer_add(out, "],", 2);
    json_key(out, "brokerDatas", 0);
    evbuffer_add(out, "[", 1);
    for (size_t i = 0; i < rd->n_broker_datas; i++) {
        if (i > 0)
            evbuffer_add(out, ",", 1);
        json_broker_data(out, rd->broker_datas[i]);
    }
    evbuffer_add(out, "],\"filterServerTable\":{}}", 25);
}

/* TopicList: {"topicList":[...]} plus "brokerAddr" when given. */
static void json_topic_list(struct evbuffer *out, char *const *topics, size_t n,
                            const char *broker_addr)
{
    evbuffer_add(out, "{", 1);
    if (broker_addr != NULL) {
        json_key(out, "brokerAddr", 0);
        rmq_json_str(out, broker_addr);
        evbuffer_add(out, ",", 1);
    }
    json_key(out, "topicList", 0);
    evbuffer_add(out, "[", 1);
    for (size_t i = 0; i < n; i++) {
        if (i > 0)
            evbuffer_add(out, ",", 1);
        rmq_json_str(out, topics[i]);
    }
    evbuffer_add(out, "]}", 2);
}

/* ClusterInfo: brokerAddrTable {name: BrokerData}, clusterAddrTable {cluster: [names]}. */
static void json_cluster_info(struct evbuffer *out, const Rmq__ClusterInfo *ci)
{
    evbuffer_add(out, "{", 1);
    json_key(out, "brokerAddrTable", 0);
    evbuffer_add(out, "{", 1);
    for (size_t i = 0; i < ci->n_brokers; i++) {
        json_key(out, ci->brokers[i]->broker_name, i > 0);
        json_broker_data(out, ci->brokers[i]);
    }
    evbuffer_add(out, "},", 2);
    json_key(out, "clusterAddrTable", 0);
    evbuffer_add(out, "{", 1);
    for (size_t i = 0; i < ci->n_clusters; i++) {
        const Rmq__ClusterEntry *ce = ci->clusters[i];
        json_key(out, ce->cluster_name, i > 0);
        evbuffer_add(out, "[", 1);
        for (size_t j = 0; j < ce->n_broker_names; j++) {
            if (j > 0)
                evbuffer_add(out, ",", 1);
            rmq_json_str(out, ce->broker_names[j]);
        }
        evbuffer_add(out, "]", 1);
    }
    evbuffer_add(out, "}}", 2);
}

/* ---- handlers (loop thread; arg is the ns_server_t) --------------------- */

static void handle_get_route(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    const char *topic = need_field(conn, req, "topic");
    rmq_err_t err;

    if (topic == NULL)
        return;
    Rmq__TopicRouteData *rd = ns_server_route_query(ns, topic, &err);
    if (err == RMQ_ENOTFOUND) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_TOPIC_NOT_EXIST,
                            "No topic route info in name server for the topic: %s", topic);
        return;
    }
    struct evbuffer *body = rd != NULL ? evbuffer_new() : NULL;
    if (body == NULL) {
        if (rd != NULL)
            rmq__topic_route_data__free_unpacked(rd, NULL);
        reply_nomem(conn, req);
        return;
    }
    json_route(body, rd, rd->order_topic ? ns_route_kv_get(ns_server_route(ns), NS_ORDER_TOPIC_NS,
                                                           topic) : NULL);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    reply_body(conn, req, body);
}

static void handle_cluster_info(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__ClusterInfo *ci = ns_route_cluster_info(ns_server_route(ns), rmq_mono_ms(), rmq_wall_ms());
    struct evbuffer *body = ci != NULL ? evbuffer_new() : NULL;

    if (body == NULL) {
        if (ci != NULL)
            rmq__cluster_info__free_unpacked(ci, NULL);
        reply_nomem(conn, req);
        return;
    }
    json_cluster_info(body, ci);
    rmq__cluster_info__free_unpacked(ci, NULL);
    reply_body(conn, req, body);
}

/* 206 (every topic) and 224 (extField cluster's topics). */
static void handle_topic_list(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    const char *cluster = NULL;

    if (req->code == CODE_GET_TOPICS_BY_CLUSTER && (cluster = need_field(conn, req, "cluster")) == NULL)
        return;
    Rmq__TopicList *tl = ns_route_topic_list_cluster(ns_server_route(ns), cluster);
    struct evbuffer *body = tl != NULL ? evbuffer_new() : NULL;
    if (body == NULL) {
        if (tl != NULL)
            rmq__topic_list__free_unpacked(tl, NULL);
        reply_nomem(conn, req);
        return;
    }
    json_topic_list(body, tl->topics, tl->n_topics, NULL);
    rmq__topic_list__free_unpacked(tl, NULL);
    reply_body(conn, req, body);
}

/* RocketMQ's system topics: every cluster name and broker name (the
 * topics its brokers create for themselves), with one master address. */
static void handle_system_topics(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__ClusterInfo *ci = ns_route_cluster_info(ns_server_route(ns), rmq_mono_ms(), rmq_wall_ms());
    struct evbuffer *body = ci != NULL ? evbuffer_new() : NULL;
    char **names = ci != NULL ? calloc(ci->n_clusters + ci->n_brokers + 1, sizeof(*names)) : NULL;
    const char *addr = NULL;
    size_t n = 0;

    if (body == NULL || names == NULL) {
        reply_nomem(conn, req);
        goto out;
    }
    for (size_t i = 0; i < ci->n_clusters; i++)
        names[n++] = ci->clusters[i]->cluster_name;
    for (size_t i = 0; i < ci->n_brokers; i++) {
        names[n++] = ci->brokers[i]->broker_name;
        if (addr == NULL && ci->brokers[i]->n_addrs > 0)
            addr = ci->brokers[i]->addrs[0]->addr;
    }
    json_topic_list(body, names, n, addr);
    reply_body(conn, req, body);
    body = NULL;
out:
    free(names);
    if (body != NULL)
        evbuffer_free(body);
    if (ci != NULL)
        rmq__cluster_info__free_unpacked(ci, NULL);
}

static void handle_kv_get(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    const char *space = need_field(conn, req, "namespace"), *key;

    if (space == NULL || (key = need_field(conn, req, "key")) == NULL)
        return;
    const char *value = ns_route_kv_get(ns_server_route(ns), space, key);
    if (value == NULL) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_QUERY_NOT_FOUND,
                            "No config item, Namespace: %s Key: %s", space, key);
        return;
    }
    rmq_remoting_field_t f = { "value", (char *)value };
    rmq_remoting_reply_t rep = { .code = RMQ_REMOTING_SUCCESS, .fields = &f, .n_fields = 1 };
    rmq_remoting_reply(conn, req, &rep);
}

/* 100 and 102. Like RocketMQ, deleting an absent entry succeeds. */
static void handle_kv_change(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    const char *space = need_field(conn, req, "namespace"), *key;
    char why[NS_WHY_MAX] = "";
    rmq_err_t err;

    if (space == NULL || (key = need_field(conn, req, "key")) == NULL)
        return;
    if (req->code == CODE_PUT_KV_CONFIG) {
        const char *value = rmq_remoting_field(req, "value");
        err = ns_server_kv_put(ns, space, key, value != NULL ? value : "", why, sizeof why);
    } else {
        err = ns_server_kv_delete(ns, space, key, why, sizeof why);
        if (err == RMQ_ENOTFOUND)
            err = RMQ_OK;
    }
    if (err == RMQ_ENOMEM)
        reply_nomem(conn, req);
    else if (err != RMQ_OK)
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "%s", why);
    else
        reply_body(conn, req, NULL);
}

/* The effective configuration as properties text, one key=value a line. */
static void handle_get_config(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    if (f == NULL) {
        reply_nomem(conn, req);
        return;
    }
    rmq_config_print(ns_config_table(), ns_server_config(ns), f);
    if (fclose(f) != 0) {
        free(text);
        reply_nomem(conn, req);
        return;
    }
    rmq_remoting_reply_t rep = { .code = RMQ_REMOTING_SUCCESS, .body = text, .body_len = len };
    rmq_remoting_reply(conn, req, &rep);
    free(text);
}

/* ---- installation ------------------------------------------------------ */

rmq_err_t ns_front_remoting_install(ns_server_t *ns, rmq_server_t *srv)
{
    static const struct {
        int code;
        rmq_remoting_handler_fn fn;
    } handlers[] = {
        { CODE_PUT_KV_CONFIG, handle_kv_change },
        { CODE_GET_KV_CONFIG, handle_kv_get },
        { CODE_DELETE_KV_CONFIG, handle_kv_change },
        { CODE_GET_ROUTEINFO_BY_TOPIC, handle_get_route },
        { CODE_GET_BROKER_CLUSTER_INFO, handle_cluster_info },
        { CODE_GET_ALL_TOPIC_LIST_FROM_NAMESERVER, handle_topic_list },
        { CODE_GET_TOPICS_BY_CLUSTER, handle_topic_list },
        { CODE_GET_SYSTEM_TOPIC_LIST_FROM_NS, handle_system_topics },
        { CODE_GET_NAMESRV_CONFIG, handle_get_config },
    };
    rmq_err_t err = rmq_remoting_install(srv);

    for (size_t i = 0; err == RMQ_OK && i < sizeof handlers / sizeof handlers[0]; i++)
        err = rmq_remoting_handle(srv, handlers[i].code, handlers[i].fn, ns);
    return err;
}
