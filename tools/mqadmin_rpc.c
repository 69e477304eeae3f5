/* mqadmin_rpc.c: requests from mqadmin. Queries go to the name servers in
 * order (the first that answers wins); broker requests go to one address
 * and come back checked (transport, status, header type). Also the lookups
 * over cluster info and routes that turn broker names into addresses. */
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"

const char *adm_call_error(const adm_ctx_t *ctx, rmq_err_t err)
{
    const char *why = rmq_sync_last_error(ctx->sync);

    return why[0] ? why : rmq_strerror(err);
}

void adm_note_failure(char *errs, size_t len, const char *addr, const char *reason)
{
    size_t used = strlen(errs);

    snprintf(errs + used, len - used, "%s%s: %s", used ? "; " : "", addr, reason);
}

rmq_err_t adm_query_namesrv(adm_ctx_t *ctx, Rmq__Command *req, rmq_frame_t *resp)
{
    char errs[ADM_ERR_MAX] = "";

    for (size_t i = 0; i < ctx->naddrs; i++) {
        rmq_err_t err = rmq_sync_call(ctx->sync, ctx->addrs[i], req, NULL, 0, ADM_TIMEOUT_MS, resp);
        if (err == RMQ_OK)
            return RMQ_OK;
        adm_note_failure(errs, sizeof errs, ctx->addrs[i], adm_call_error(ctx, err));
    }
    fprintf(stderr, "mqadmin: no name server answered (%s)\n", errs);
    return RMQ_ECONNECT;
}

int adm_check_resp(const char *what, const rmq_frame_t *resp, Rmq__Command__HeaderCase want,
                   const char *header_name)
{
    const Rmq__Command *cmd = resp->cmd;

    if (cmd->status != RMQ__STATUS__SUCCESS) {
        fprintf(stderr, "mqadmin: %s: %s: %s\n", what, rmq_status_name(cmd->status), cmd->remark);
        return -1;
    }
    if (want && cmd->header_case != want) {
        fprintf(stderr, "mqadmin: %s: the answer has no %s header\n", what, header_name);
        return -1;
    }
    return 0;
}

int adm_broker_call(adm_ctx_t *ctx, const char *addr, Rmq__Command *req,
                    const void *body, size_t len, Rmq__Command__HeaderCase want,
                    const char *header_name, rmq_frame_t *resp)
{
    char where[512];
    rmq_err_t err = rmq_sync_call(ctx->sync, addr, req, body, len, ADM_TIMEOUT_MS, resp);

    if (err != RMQ_OK) {
        fprintf(stderr, "mqadmin: %s: broker %s: %s\n", ctx->cmd, addr, adm_call_error(ctx, err));
        return -1;
    }
    snprintf(where, sizeof where, "%s: broker %s", ctx->cmd, addr);
    if (adm_check_resp(where, resp, want, header_name) != 0) {
        rmq_frame_clear(resp);
        return -1;
    }
    return 0;
}

int adm_cluster_info(adm_ctx_t *ctx, rmq_frame_t *resp)
{
    Rmq__Command req = RMQ__COMMAND__INIT;

    req.code = RMQ__REQUEST_CODE__GET_BROKER_CLUSTER_INFO;
    if (adm_query_namesrv(ctx, &req, resp) != RMQ_OK)
        return -1;
    if (adm_check_resp(ctx->cmd, resp, RMQ__COMMAND__HEADER_CLUSTER_INFO, "cluster_info") != 0) {
        rmq_frame_clear(resp);
        return -1;
    }
    return 0;
}

int adm_topic_route(adm_ctx_t *ctx, const char *topic, rmq_frame_t *resp)
{
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;

    tr.topic = (char *)topic;
    req.code = RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC;
    req.header_case = RMQ__COMMAND__HEADER_TOPIC;
    req.topic = &tr;
    if (adm_query_namesrv(ctx, &req, resp) != RMQ_OK)
        return -1;
    if (adm_check_resp(ctx->cmd, resp, RMQ__COMMAND__HEADER_TOPIC_ROUTE, "topic_route") != 0) {
        rmq_frame_clear(resp);
        return -1;
    }
    return 0;
}

const Rmq__BrokerData *adm_find_broker(const Rmq__ClusterInfo *ci, const char *name)
{
    for (size_t i = 0; i < ci->n_brokers; i++)
        if (strcmp(ci->brokers[i]->broker_name, name) == 0)
            return ci->brokers[i];
    return NULL;
}

const Rmq__ClusterEntry *adm_find_cluster(const Rmq__ClusterInfo *ci, const char *name)
{
    for (size_t i = 0; i < ci->n_clusters; i++)
        if (strcmp(ci->clusters[i]->cluster_name, name) == 0)
            return ci->clusters[i];
    return NULL;
}

const char *adm_broker_master(const Rmq__BrokerData *bd)
{
    for (size_t a = 0; a < bd->n_addrs; a++)
        if (bd->addrs[a]->broker_id == 0)
            return bd->addrs[a]->addr;
    return NULL;
}

const char *adm_broker_readable(const Rmq__BrokerData *bd)
{
    const Rmq__BrokerAddr *best = NULL;

    for (size_t a = 0; a < bd->n_addrs; a++)
        if (!best || bd->addrs[a]->broker_id < best->broker_id)
            best = bd->addrs[a];
    return best ? best->addr : NULL;
}

adm_target_t *adm_cluster_masters(const char *what, const Rmq__ClusterInfo *ci, const char *cluster,
                                  size_t *n)
{
    const Rmq__ClusterEntry *ce = adm_find_cluster(ci, cluster);
    adm_target_t *targets;

    if (!ce || ce->n_broker_names == 0) {
        fprintf(stderr, "mqadmin: %s: cluster %s has no brokers at the name server\n", what, cluster);
        return NULL;
    }
    targets = calloc(ce->n_broker_names, sizeof *targets);
    if (!targets) {
        fprintf(stderr, "mqadmin: out of memory\n");
        return NULL;
    }
    for (size_t b = 0; b < ce->n_broker_names; b++) {
        const Rmq__BrokerData *bd = adm_find_broker(ci, ce->broker_names[b]);
        targets[b].name = ce->broker_names[b];
        targets[b].addr = bd ? adm_broker_master(bd) : NULL;
    }
    *n = ce->n_broker_names;
    return targets;
}
