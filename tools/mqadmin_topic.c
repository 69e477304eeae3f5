/* mqadmin_topic.c: topic commands. topicRoute and topicList read the name
 * servers; updateTopic and deleteTopic change the masters of a cluster (or
 * one broker) and, for deletes, every name server; topicStatus reads each
 * broker name of the route (its master, else a slave while the master is
 * down). A change reports one row per target and fails if any target did. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"

static void print_route(const Rmq__TopicRouteData *rd)
{
    adm_table_t t;

    adm_table_init(&t, 4);
    adm_table_row(&t, "BROKER_NAME", "CLUSTER", "BID", "ADDR");
    for (size_t i = 0; i < rd->n_broker_datas; i++) {
        const Rmq__BrokerData *bd = rd->broker_datas[i];
        for (size_t a = 0; a < bd->n_addrs; a++) {
            char bid[24];
            snprintf(bid, sizeof bid, "%" PRId64, bd->addrs[a]->broker_id);
            adm_table_row(&t, bd->broker_name, bd->cluster, bid, bd->addrs[a]->addr);
        }
    }
    adm_table_print(&t, stdout);
    adm_table_free(&t);
    printf("\n");

    adm_table_init(&t, 5);
    adm_table_row(&t, "BROKER_NAME", "READ_QUEUES", "WRITE_QUEUES", "PERM", "SYSFLAG");
    for (size_t i = 0; i < rd->n_queue_datas; i++) {
        const Rmq__QueueData *qd = rd->queue_datas[i];
        char r[16], w[16], perm[4], sys[16];
        snprintf(r, sizeof r, "%d", qd->read_queue_nums);
        snprintf(w, sizeof w, "%d", qd->write_queue_nums);
        snprintf(sys, sizeof sys, "%d", qd->topic_sys_flag);
        adm_perm_string(qd->perm, perm);
        adm_table_row(&t, qd->broker_name, r, w, perm, sys);
    }
    adm_table_print(&t, stdout);
    adm_table_free(&t);
    if (rd->order_topic)
        printf("\norder topic: yes\n");
}

int adm_cmd_topic_route(adm_ctx_t *ctx)
{
    rmq_frame_t resp = { 0 };

    if (adm_topic_route(ctx, adm_opt(ctx, 't'), &resp) != 0)
        return 1;
    print_route(resp.cmd->topic_route);
    rmq_frame_clear(&resp);
    return 0;
}

int adm_cmd_topic_list(adm_ctx_t *ctx)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    adm_table_t t;
    int rc = 1;

    req.code = RMQ__REQUEST_CODE__GET_ALL_TOPIC_LIST_FROM_NAMESERVER;
    if (adm_query_namesrv(ctx, &req, &resp) != RMQ_OK)
        return 1;
    if (adm_check_resp(ctx->cmd, &resp, RMQ__COMMAND__HEADER_TOPIC_LIST, "topic_list") == 0) {
        const Rmq__TopicList *tl = resp.cmd->topic_list;
        adm_table_init(&t, 1);
        adm_table_row(&t, "TOPIC");
        for (size_t i = 0; i < tl->n_topics; i++)
            adm_table_row(&t, tl->topics[i]);
        adm_table_print(&t, stdout);
        adm_table_free(&t);
        rc = 0;
    }
    rmq_frame_clear(&resp);
    return rc;
}

/* ---- changes ------------------------------------------------------------ */

/* Sends the change req to addr; 0 with result "done" (or "not present"
 * when the target answered TOPIC_NOT_EXIST or said so in its remark), or -1
 * with the failure in result and on stderr. */
static int change_one(adm_ctx_t *ctx, const char *kind, const char *addr, Rmq__Command *req,
                      const char *done, char *result, size_t len)
{
    rmq_frame_t resp = { 0 };
    rmq_err_t err = rmq_sync_call(ctx->sync, addr, req, NULL, 0, ADM_TIMEOUT_MS, &resp);
    int rc = 0;

    if (err != RMQ_OK) {
        snprintf(result, len, "no answer: %s", adm_call_error(ctx, err));
        fprintf(stderr, "mqadmin: %s: %s %s: %s\n", ctx->cmd, kind, addr, adm_call_error(ctx, err));
        return -1;
    }
    if (resp.cmd->status == RMQ__STATUS__TOPIC_NOT_EXIST ||
        (resp.cmd->status == RMQ__STATUS__SUCCESS && strstr(resp.cmd->remark, "not present"))) {
        snprintf(result, len, "not present");
    } else if (resp.cmd->status == RMQ__STATUS__SUCCESS) {
        snprintf(result, len, "%s", done);
    } else {
        snprintf(result, len, "%s: %s", rmq_status_name(resp.cmd->status), resp.cmd->remark);
        fprintf(stderr, "mqadmin: %s: %s %s: %s\n", ctx->cmd, kind, addr, result);
        rc = -1;
    }
    rmq_frame_clear(&resp);
    return rc;
}

/* Sends req to every target, one row each in t (a broker name without a
 * master counts as a failure); 0 if all succeeded. */
static int change_brokers(adm_ctx_t *ctx, const adm_target_t *targets, size_t n, Rmq__Command *req,
                          const char *done, adm_table_t *t)
{
    int rc = 0;

    for (size_t i = 0; i < n; i++) {
        char result[ADM_ERR_MAX];
        if (!targets[i].addr) {
            snprintf(result, sizeof result, "no master registered");
            fprintf(stderr, "mqadmin: %s: broker %s has no master at the name server\n", ctx->cmd,
                    targets[i].name);
            rc = 1;
        } else if (change_one(ctx, "broker", targets[i].addr, req, done, result, sizeof result) != 0) {
            rc = 1;
        }
        adm_table_row(t, targets[i].name, targets[i].addr ? targets[i].addr : "-", result);
    }
    return rc;
}

int adm_change_targets(adm_ctx_t *ctx, Rmq__Command *req, const char *done, adm_table_t *t)
{
    const char *cluster = adm_opt(ctx, 'c');
    rmq_frame_t ci = { 0 };
    adm_target_t one = { "-", adm_opt(ctx, 'b') }, *targets;
    size_t n = 0;
    int rc;

    if (!cluster)
        return change_brokers(ctx, &one, 1, req, done, t);
    if (adm_cluster_info(ctx, &ci) != 0)
        return 1;
    targets = adm_cluster_masters(ctx->cmd, ci.cmd->cluster_info, cluster, &n);
    rc = targets ? change_brokers(ctx, targets, n, req, done, t) : 1;
    free(targets);
    rmq_frame_clear(&ci);
    return rc;
}

int adm_cmd_update_topic(adm_ctx_t *ctx)
{
    Rmq__TopicConfig tc = RMQ__TOPIC_CONFIG__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    int64_t r, w, perm;
    adm_table_t t;
    int rc;

    if (!adm_opt(ctx, 'c') == !adm_opt(ctx, 'b')) {
        fprintf(stderr, "mqadmin: %s: give either -c CLUSTER or -b BROKERADDR\n", ctx->cmd);
        return 1;
    }
    if (adm_opt_int(ctx, 'r', 8, 1, 1024, &r) != 0 || adm_opt_int(ctx, 'w', 8, 1, 1024, &w) != 0 ||
        adm_opt_int(ctx, 'p', 6, 0, 7, &perm) != 0)
        return 1;
    tc.topic_name = (char *)adm_opt(ctx, 't');
    tc.read_queue_nums = (int32_t)r;
    tc.write_queue_nums = (int32_t)w;
    tc.perm = (int32_t)perm;
    if (adm_opt(ctx, 'a'))
        tc.attributes = (char *)adm_opt(ctx, 'a');
    req.code = RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC;
    req.header_case = RMQ__COMMAND__HEADER_TOPIC_CONFIG;
    req.topic_config = &tc;
    adm_table_init(&t, 3);
    adm_table_row(&t, "BROKER_NAME", "ADDR", "RESULT");
    rc = adm_change_targets(ctx, &req, "updated", &t);
    if (t.nrows > 1)
        adm_table_print(&t, stdout);
    adm_table_free(&t);
    return rc;
}

/* deleteTopic: with -c, DELETE_TOPIC_IN_BROKER on the cluster's masters
 * first; then, unless a master failed or refused (a system topic: as
 * RocketMQ's deleteTopic, the route is left alone), DELETE_TOPIC_IN_NAMESRV
 * on every name server. A target that does not know the topic counts as
 * done. */
int adm_cmd_delete_topic(adm_ctx_t *ctx)
{
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    adm_table_t t;
    int rc = 0;

    tr.topic = (char *)adm_opt(ctx, 't');
    req.header_case = RMQ__COMMAND__HEADER_TOPIC;
    req.topic = &tr;
    adm_table_init(&t, 3);
    adm_table_row(&t, "TARGET", "ADDR", "RESULT");
    if (adm_opt(ctx, 'c')) {
        req.code = RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER;
        rc = adm_change_targets(ctx, &req, "deleted", &t);
    }
    int brokers_failed = rc;
    req.code = RMQ__REQUEST_CODE__DELETE_TOPIC_IN_NAMESRV;
    for (size_t i = 0; !brokers_failed && i < ctx->naddrs; i++) {
        char result[ADM_ERR_MAX];
        if (change_one(ctx, "name server", ctx->addrs[i], &req, "deleted", result, sizeof result) != 0)
            rc = 1;
        adm_table_row(&t, "namesrv", ctx->addrs[i], result);
    }
    adm_table_print(&t, stdout);
    adm_table_free(&t);
    return rc;
}

/* ---- status ------------------------------------------------------------- */

/* Appends the queues of one broker name (read at its master, else a slave)
 * to t; 0, or 1 after printing why the broker did not answer. */
static int topic_status_broker(adm_ctx_t *ctx, const char *topic, const Rmq__BrokerData *bd, adm_table_t *t)
{
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    const char *addr = adm_broker_readable(bd);
    char where[300];

    if (!addr) {
        fprintf(stderr, "mqadmin: %s: broker %s has no address in the route\n", ctx->cmd, bd->broker_name);
        return 1;
    }
    tr.topic = (char *)topic;
    req.code = RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO;
    req.header_case = RMQ__COMMAND__HEADER_TOPIC;
    req.topic = &tr;
    if (adm_broker_call(ctx, addr, &req, NULL, 0, RMQ__COMMAND__HEADER_TOPIC_STATS, "topic_stats",
                        &resp) != 0)
        return 1;
    snprintf(where, sizeof where, "%s%s", addr, adm_broker_master(bd) ? "" : " (slave)");
    for (size_t q = 0; q < resp.cmd->topic_stats->n_queues; q++) {
        const Rmq__QueueStats *qs = resp.cmd->topic_stats->queues[q];
        char id[16], min[24], max[24], last[40];
        snprintf(id, sizeof id, "%d", qs->queue_id);
        snprintf(min, sizeof min, "%" PRId64, qs->min_offset);
        snprintf(max, sizeof max, "%" PRId64, qs->max_offset);
        adm_time_format(qs->last_update_timestamp, last, sizeof last);
        adm_table_row(t, bd->broker_name, where, id, min, max, last);
    }
    rmq_frame_clear(&resp);
    return 0;
}

int adm_cmd_topic_status(adm_ctx_t *ctx)
{
    const char *topic = adm_opt(ctx, 't');
    rmq_frame_t route = { 0 };
    adm_table_t t;
    int rc = 0;

    if (adm_topic_route(ctx, topic, &route) != 0)
        return 1;
    adm_table_init(&t, 6);
    adm_table_row(&t, "BROKER_NAME", "ADDR", "QUEUE", "MIN_OFFSET", "MAX_OFFSET", "LAST_UPDATE");
    for (size_t i = 0; i < route.cmd->topic_route->n_broker_datas; i++)
        if (topic_status_broker(ctx, topic, route.cmd->topic_route->broker_datas[i], &t) != 0)
            rc = 1;
    adm_table_print(&t, stdout);
    adm_table_free(&t);
    rmq_frame_clear(&route);
    return rc;
}
