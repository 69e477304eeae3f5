/* ns_front_remoting.c: the name server's RocketMQ remoting front-end. Each
 * handler reads its request's extFields, calls the name server's operation
 * (ns_server.h) or reads the route table, and answers with RocketMQ's
 * response code and JSON body: TopicRouteData for routes, ClusterInfo,
 * TopicList, KV values in extFields, the configuration as properties text.
 * RocketMQ brokers register (103, 104, 322; bodies decoded by ns_rembody)
 * into the same route table and liveness as native brokers: a broker that
 * registered over a connection leaves the route when it closes.
 * Map keys that RocketMQ's name server writes unquoted (broker ids) are
 * written quoted, which is valid JSON and what its clients accept. Loop
 * thread; arg is the ns_server_t. */
#include "ns_front_remoting.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "ns_rembody.h"
#include "rmq_http.h"
#include "rmq_log.h"
#include "rmq_time.h"
#include "rmq_topic_json.h"

#define NS_WHY_MAX 512

enum {
    CODE_PUT_KV_CONFIG = 100,
    CODE_GET_KV_CONFIG = 101,
    CODE_DELETE_KV_CONFIG = 102,
    CODE_GET_ROUTEINFO_BY_TOPIC = 105,
    CODE_GET_BROKER_CLUSTER_INFO = 106,
    CODE_WIPE_WRITE_PERM_OF_BROKER = 205,
    CODE_GET_ALL_TOPIC_LIST_FROM_NAMESERVER = 206,
    CODE_DELETE_TOPIC_IN_NAMESRV = 216,
    CODE_GET_TOPICS_BY_CLUSTER = 224,
    CODE_GET_SYSTEM_TOPIC_LIST_FROM_NS = 304,
    CODE_UPDATE_NAMESRV_CONFIG = 318,
    CODE_GET_NAMESRV_CONFIG = 319,
    CODE_ADD_WRITE_PERM_OF_BROKER = 327,
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

/* A required integer extField in [min, max] into *out; answers
 * SYSTEM_ERROR naming it and returns -1 when absent or bad. */
static int need_int(rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *key,
                    int64_t min, int64_t max, int64_t *out)
{
    const char *v = need_field(conn, req, key);
    char *end;

    if (v == NULL)
        return -1;
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (v[0] != '\0' && *end == '\0' && errno == 0 && n >= min && n <= max) {
        *out = n;
        return 0;
    }
    rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR,
                        "request code %d: extField %s=%.64s is not an integer in [%" PRId64 ", %" PRId64 "]",
                        req->code, key, v, min, max);
    return -1;
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
    rmq_topic_list_json(body, (const char *const *)tl->topics, tl->n_topics, NULL);
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
    const char **names = ci != NULL ? calloc(ci->n_clusters + ci->n_brokers + 1, sizeof(*names)) : NULL;
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
    rmq_topic_list_json(body, names, n, addr);
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

/* ---- broker registration (RocketMQ brokers) ------------------------------- */

/* The extFields naming a broker (clusterName, brokerName, brokerAddr,
 * brokerId) into rb, strings borrowed from req; 0, or -1 after answering
 * which one was missing or bad. */
static int broker_fields(rmq_conn_t *conn, const rmq_remoting_request_t *req,
                         Rmq__RegisterBrokerRequest *rb)
{
    int64_t id;

    rmq__register_broker_request__init(rb);
    if ((rb->cluster_name = (char *)need_field(conn, req, "clusterName")) == NULL ||
        (rb->broker_name = (char *)need_field(conn, req, "brokerName")) == NULL ||
        (rb->broker_addr = (char *)need_field(conn, req, "brokerAddr")) == NULL ||
        need_int(conn, req, "brokerId", 0, INT64_MAX, &id) != 0)
        return -1;
    rb->broker_id = id;
    return 0;
}

typedef struct kv_json {
    struct evbuffer *out;
    size_t n;
} kv_json_t;

/* ns_route_kv_foreach callback: one entry of namespace ORDER_TOPIC_CONFIG. */
static int kv_json_add(const char *space, const char *key, const char *value, void *arg)
{
    kv_json_t *kj = arg;

    if (strcmp(space, NS_ORDER_TOPIC_NS) != 0)
        return 0;
    if (kj->n++ == 0)
        evbuffer_add(kj->out, "{\"table\":{", 10);
    json_key(kj->out, key, kj->n > 1);
    rmq_json_str(kj->out, value);
    return 0;
}

/* REGISTER_BROKER's answer: masterAddr and haServerAddr for a slave whose
 * master is live, and the KVTable of ORDER_TOPIC_CONFIG (no body when it
 * is empty, as RocketMQ). */
static void reply_registered(rmq_conn_t *conn, const rmq_remoting_request_t *req, ns_server_t *ns,
                             const ns_register_result_t *res)
{
    rmq_remoting_field_t f[2];
    rmq_remoting_reply_t rep = { .code = RMQ_REMOTING_SUCCESS, .fields = f };
    kv_json_t kj = { evbuffer_new(), 0 };

    if (kj.out == NULL) {
        reply_nomem(conn, req);
        return;
    }
    if (res->master_addr[0])
        f[rep.n_fields++] = (rmq_remoting_field_t){ "masterAddr", (char *)res->master_addr };
    if (res->master_ha_addr[0])
        f[rep.n_fields++] = (rmq_remoting_field_t){ "haServerAddr", (char *)res->master_ha_addr };
    ns_route_kv_foreach(ns_server_route(ns), kv_json_add, &kj);
    if (kj.n)
        evbuffer_add(kj.out, "}}", 2);
    rep.body_len = evbuffer_get_length(kj.out);
    rep.body = rep.body_len ? evbuffer_pullup(kj.out, -1) : NULL;
    if (rep.body_len && rep.body == NULL)
        reply_nomem(conn, req);
    else
        rmq_remoting_reply(conn, req, &rep);
    evbuffer_free(kj.out);
}

/* 103: RegisterBrokerRequestHeader (+ haServerAddr, compressed,
 * bodyCrc32) and a RegisterBrokerBody, through the native registration. */
static void handle_register(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__RegisterBrokerRequest rb;
    ns_rembody_t body;
    ns_register_result_t res;
    char why[NS_WHY_MAX];
    int64_t crc = 0;

    if (broker_fields(conn, req, &rb) != 0 ||
        (rb.ha_server_addr = (char *)need_field(conn, req, "haServerAddr")) == NULL)
        return;
    if (rmq_remoting_field(req, "bodyCrc32") != NULL &&
        need_int(conn, req, "bodyCrc32", INT32_MIN, INT32_MAX, &crc) != 0)
        return;
    if (crc != 0 && crc != (int64_t)ns_rembody_crc32(req->body, req->body_len)) {
        LOG_WARN_RL("REGISTER_BROKER from %s refused: body CRC does not match bodyCrc32", rmq_conn_peer(conn));
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR,
                            "crc32 not match: bodyCrc32=%" PRId64 " but the %zu-byte body's is %" PRIu32,
                            crc, req->body_len, ns_rembody_crc32(req->body, req->body_len));
        return;
    }
    const char *compressed = rmq_remoting_field(req, "compressed");
    rmq_err_t err = ns_rembody_decode(req->body, req->body_len,
                                      compressed != NULL && strcasecmp(compressed, "true") == 0, &body,
                                      why, sizeof why);
    if (err == RMQ_OK) {
        rb.data_version = &body.version;
        rb.topics = body.topics;
        rb.n_topics = body.n_topics;
        err = ns_server_register(ns, &rb, rmq_conn_id(conn), rmq_conn_peer(conn), &res, why, sizeof why);
        ns_rembody_clear(&body);
    } else if (err == RMQ_EPROTO) {
        LOG_WARN_RL("REGISTER_BROKER from %s refused: %s", rmq_conn_peer(conn), why);
    }
    if (err == RMQ_ENOMEM)
        reply_nomem(conn, req);
    else if (err != RMQ_OK)
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "%s", why);
    else
        reply_registered(conn, req, ns, &res);
}

/* 322: changed=false when the route holds the body's DataVersion for the
 * broker (its liveness is then refreshed); the body echoes that version. */
static void handle_query_version(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__RegisterBrokerRequest rb;
    Rmq__DataVersion dv;
    ns_register_result_t res;
    char why[NS_WHY_MAX];

    if (broker_fields(conn, req, &rb) != 0)
        return;
    if (ns_rembody_version_decode(req->body, req->body_len, &dv, why, sizeof why) != RMQ_OK) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "%s", why);
        return;
    }
    rb.data_version = &dv;
    int changed = ns_server_query_version(ns, &rb, rmq_conn_id(conn), &res);
    struct evbuffer *body = evbuffer_new();
    if (body == NULL) {
        reply_nomem(conn, req);
        return;
    }
    if (!changed)
        ns_rembody_version_encode(body, &dv);
    rmq_remoting_field_t f = { "changed", changed ? "true" : "false" };
    rmq_remoting_reply_t rep = { .code = RMQ_REMOTING_SUCCESS, .fields = &f, .n_fields = 1 };
    rep.body_len = evbuffer_get_length(body);
    rep.body = rep.body_len ? evbuffer_pullup(body, -1) : NULL;
    rmq_remoting_reply(conn, req, &rep);
    evbuffer_free(body);
}

/* 104. Like RocketMQ, unregistering a broker that is not registered succeeds. */
static void handle_unregister(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    Rmq__RegisterBrokerRequest rb;
    Rmq__UnregisterBrokerRequest ub = RMQ__UNREGISTER_BROKER_REQUEST__INIT;
    char why[NS_WHY_MAX];

    if (broker_fields(conn, req, &rb) != 0)
        return;
    ub.cluster_name = rb.cluster_name;
    ub.broker_name = rb.broker_name;
    ub.broker_addr = rb.broker_addr;
    ub.broker_id = rb.broker_id;
    rmq_err_t err = ns_route_unregister(ns_server_route(ns), &ub, why, sizeof why);
    if (err == RMQ_OK)
        LOG_INFO("broker %s (%s id %" PRId64 ") unregistered", ub.broker_addr, ub.broker_name, ub.broker_id);
    else
        LOG_WARN("UNREGISTER_BROKER from %s: %s", rmq_conn_peer(conn), why);
    if (err == RMQ_OK || err == RMQ_ENOTFOUND)
        reply_body(conn, req, NULL);
    else
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "%s", why);
}

/* 205 and 327: answer how many topics the broker name serves. */
static void handle_write_perm(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    ns_server_t *ns = arg;
    const char *name = need_field(conn, req, "brokerName");
    int wipe = req->code == CODE_WIPE_WRITE_PERM_OF_BROKER;
    char count[24];

    if (name == NULL)
        return;
    snprintf(count, sizeof count, "%zu", ns_server_write_perm(ns, name, wipe, rmq_conn_peer(conn)));
    rmq_remoting_field_t f = { wipe ? "wipeTopicCount" : "addTopicCount", count };
    rmq_remoting_reply_t rep = { .code = RMQ_REMOTING_SUCCESS, .fields = &f, .n_fields = 1 };
    rmq_remoting_reply(conn, req, &rep);
}

/* 216: the topic, or with a clusterName only its queues on that cluster's
 * brokers (RocketMQ 4.9.7's mqadmin deleteTopic sends it). Like RocketMQ,
 * deleting a topic the route does not hold succeeds. */
static void handle_delete_topic(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    const char *topic = need_field(conn, req, "topic"), *cluster = rmq_remoting_field(req, "clusterName");

    if (topic == NULL)
        return;
    ns_server_delete_topic(arg, topic, cluster != NULL && cluster[0] ? cluster : NULL, rmq_conn_peer(conn));
    reply_body(conn, req, NULL);
}

/* 318: a properties body; the keys that can change at runtime are applied
 * (all or none), the config paths are refused as RocketMQ does. */
static void handle_update_config(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    char why[NS_WHY_MAX];
    rmq_err_t err = ns_server_config_update(arg, (const char *)req->body, req->body_len,
                                            rmq_conn_peer(conn), why, sizeof why);

    if (err == RMQ_ENOMEM)
        reply_nomem(conn, req);
    else if (err != RMQ_OK)
        rmq_remoting_replyf(conn, req, err == RMQ_EREADONLY ? RMQ_REMOTING_NO_PERMISSION
                                                            : RMQ_REMOTING_SYSTEM_ERROR, "%s", why);
    else
        reply_body(conn, req, NULL);
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
        { RMQ_REMOTING_REGISTER_BROKER, handle_register },
        { RMQ_REMOTING_UNREGISTER_BROKER, handle_unregister },
        { RMQ_REMOTING_QUERY_DATA_VERSION, handle_query_version },
        { CODE_WIPE_WRITE_PERM_OF_BROKER, handle_write_perm },
        { CODE_ADD_WRITE_PERM_OF_BROKER, handle_write_perm },
        { CODE_DELETE_TOPIC_IN_NAMESRV, handle_delete_topic },
        { CODE_UPDATE_NAMESRV_CONFIG, handle_update_config },
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
