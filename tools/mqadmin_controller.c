/* mqadmin_controller.c: getSyncStateSet, controller mode's view of each
 * broker group (RocketMQ's getSyncStateSet): the controller's committed
 * state (master id, master epoch, in-sync set and its epoch) asked of the
 * controllers (-a, default the -n name servers) with
 * CONTROLLER_GET_REPLICA_INFO, joined with every replica the name server
 * routes (its role and commit-log end from its runtime info, its lag behind
 * the master). One row per replica; an in-sync replica the name server does
 * not route shows as DOWN. The leader's answer wins; with none, a
 * standby's last known state is shown and the command fails. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"

#define CTL_MAX_CONTROLLERS ADM_MAX_NAMESRV
#define CTL_MAX_ROWS 64               /* replicas shown per group */

/* The controllers to ask: -a "a:p;b:p", else the name servers. */
typedef struct ctl_list {
    char buf[4096];
    const char *addr[CTL_MAX_CONTROLLERS];
    size_t n;
} ctl_list_t;

static int controllers_parse(adm_ctx_t *ctx, ctl_list_t *cl)
{
    const char *a = adm_opt(ctx, 'a');
    char *save = NULL;

    cl->n = 0;
    if (!a) {
        for (size_t i = 0; i < ctx->naddrs; i++)
            cl->addr[cl->n++] = ctx->addrs[i];
        return 0;
    }
    snprintf(cl->buf, sizeof cl->buf, "%s", a);
    for (char *p = strtok_r(cl->buf, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
        if (!*p)
            continue;
        if (cl->n == CTL_MAX_CONTROLLERS) {
            fprintf(stderr, "mqadmin: %s: -a: more than %d controllers\n", ctx->cmd, CTL_MAX_CONTROLLERS);
            return -1;
        }
        cl->addr[cl->n++] = p;
    }
    if (cl->n == 0) {
        fprintf(stderr, "mqadmin: %s: -a needs at least one host:port\n", ctx->cmd);
        return -1;
    }
    return 0;
}

/* The group's state from the controllers into *resp: 1 from the leader
 * (*from its address), 0 a standby's view, -1 nobody answered (printed). */
static int replica_info(adm_ctx_t *ctx, const ctl_list_t *cl, const char *cluster, const char *name,
                        rmq_frame_t *resp, const char **from)
{
    Rmq__ReplicaInfo q = RMQ__REPLICA_INFO__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    char errs[ADM_ERR_MAX] = "";
    int got = -1;

    q.cluster_name = (char *)cluster;
    q.broker_name = (char *)name;
    q.master_broker_id = -1;
    req.code = RMQ__REQUEST_CODE__CONTROLLER_GET_REPLICA_INFO;
    req.header_case = RMQ__COMMAND__HEADER_REPLICA_INFO;
    req.replica_info = &q;
    for (size_t i = 0; i < cl->n && got < 1; i++) {
        rmq_frame_t r = { 0 };
        rmq_err_t err = rmq_sync_call(ctx->sync, cl->addr[i], &req, NULL, 0, ADM_TIMEOUT_MS, &r);
        if (err != RMQ_OK) {
            adm_note_failure(errs, sizeof errs, cl->addr[i], adm_call_error(ctx, err));
            continue;
        }
        int status = r.cmd->status, has = r.cmd->header_case == RMQ__COMMAND__HEADER_REPLICA_INFO;
        if (has && (status == RMQ__STATUS__SUCCESS || (status == RMQ__STATUS__CONTROLLER_NOT_LEADER && got < 0))) {
            rmq_frame_clear(resp);
            *resp = r;
            *from = cl->addr[i];
            got = status == RMQ__STATUS__SUCCESS;
            continue;
        }
        adm_note_failure(errs, sizeof errs, cl->addr[i], r.cmd->remark && r.cmd->remark[0] ? r.cmd->remark
                                                                                            : rmq_status_name(status));
        rmq_frame_clear(&r);
    }
    if (got < 0)
        fprintf(stderr, "mqadmin: %s: %s: no controller answered (%s)\n", ctx->cmd, name, errs);
    else if (got == 0)
        fprintf(stderr, "mqadmin: %s: %s: no controller answered as leader (%s); the state %s last knew is shown\n",
                ctx->cmd, name, errs[0] ? errs : "only standbys answered", *from);
    return got;
}

static int id_in(const int64_t *ids, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

/* One replica the name server routes: its replica id (the master registers
 * as 0) and what its runtime info says. */
typedef struct ctl_row {
    int64_t id;
    const char *addr;
    char role[32];
    int64_t max_offset;           /* -1: unknown */
} ctl_row_t;

/* Fills rows[] from bd's addresses; returns how many. */
static size_t rows_collect(adm_ctx_t *ctx, const Rmq__BrokerData *bd, const Rmq__ReplicaInfo *ri,
                           ctl_row_t *rows, size_t max)
{
    size_t n = 0;

    for (size_t a = 0; bd && a < bd->n_addrs && n < max; a++) {
        rmq_frame_t resp = { 0 };
        const Rmq__ConfigTable *rt = adm_runtime_quiet(ctx, bd->addrs[a]->addr, &resp);
        const char *role = adm_config_value(rt, "brokerRole"), *max_off = adm_config_value(rt, "commitLogMaxOffset");
        ctl_row_t *r = &rows[n++];
        r->id = bd->addrs[a]->broker_id == 0 ? ri->master_broker_id : bd->addrs[a]->broker_id;
        r->addr = bd->addrs[a]->addr;
        snprintf(r->role, sizeof r->role, "%s", role ? role : "NO_ANSWER");
        r->max_offset = max_off ? strtoll(max_off, NULL, 10) : -1;
        rmq_frame_clear(&resp);
    }
    return n;
}

/* Appends the group's rows to t. */
static void group_rows(adm_ctx_t *ctx, adm_table_t *t, const Rmq__BrokerData *bd, const char *name,
                       const Rmq__ReplicaInfo *ri)
{
    ctl_row_t rows[CTL_MAX_ROWS];
    size_t n = rows_collect(ctx, bd, ri, rows, CTL_MAX_ROWS);
    char master[24], epoch[24], set[512] = "", set_epoch[24], id[24], in_sync[8], max[24], lag[24];
    size_t off = 0;
    int64_t master_max = -1;

    for (size_t i = 0; i < ri->n_sync_state_set && off < sizeof set; i++)
        off += (size_t)snprintf(set + off, sizeof set - off, "%s%" PRId64, i ? "," : "", ri->sync_state_set[i]);
    snprintf(master, sizeof master, "%" PRId64, ri->master_broker_id);
    snprintf(epoch, sizeof epoch, "%" PRId64, ri->master_epoch);
    snprintf(set_epoch, sizeof set_epoch, "%" PRId64, ri->sync_state_set_epoch);
    for (size_t i = 0; i < n; i++)
        if (rows[i].id == ri->master_broker_id)
            master_max = rows[i].max_offset;
    for (size_t i = 0; i < n; i++) {
        snprintf(id, sizeof id, "%" PRId64, rows[i].id);
        snprintf(in_sync, sizeof in_sync, "%s", id_in(ri->sync_state_set, ri->n_sync_state_set, rows[i].id) ? "yes" : "no");
        snprintf(max, sizeof max, "%" PRId64, rows[i].max_offset);
        snprintf(lag, sizeof lag, "%" PRId64, master_max - rows[i].max_offset);
        adm_table_row(t, name, master, epoch, set[0] ? set : "-", set_epoch, id, rows[i].addr, rows[i].role, in_sync,
                      rows[i].max_offset >= 0 ? max : "-", master_max >= 0 && rows[i].max_offset >= 0 ? lag : "-");
    }
    for (size_t i = 0; i < ri->n_sync_state_set; i++) {
        int routed = 0;
        for (size_t k = 0; k < n; k++)
            routed |= rows[k].id == ri->sync_state_set[i];
        if (routed)
            continue;
        snprintf(id, sizeof id, "%" PRId64, ri->sync_state_set[i]);
        adm_table_row(t, name, master, epoch, set, set_epoch, id, "-", "DOWN", "yes", "-", "-");
    }
}

/* The broker names to show: -b, or -c's, or every cluster's. */
static int group_wanted(const adm_ctx_t *ctx, const char *cluster, const char *name)
{
    const char *b = adm_opt(ctx, 'b'), *c = adm_opt(ctx, 'c');

    return (!b || strcmp(b, name) == 0) && (!c || strcmp(c, cluster) == 0);
}

int adm_cmd_get_sync_state_set(adm_ctx_t *ctx)
{
    rmq_frame_t ci_resp = { 0 };
    ctl_list_t cl;
    adm_table_t t;
    int rc = 0, shown = 0;
    const char *leader = NULL;    /* the controller that answered as leader */

    if (controllers_parse(ctx, &cl) != 0 || adm_cluster_info(ctx, &ci_resp) != 0)
        return 1;
    const Rmq__ClusterInfo *ci = ci_resp.cmd->cluster_info;
    adm_table_init(&t, 11);
    adm_table_row(&t, "GROUP", "MASTER", "EPOCH", "IN_SYNC_SET", "SET_EPOCH", "REPLICA", "ADDR", "ROLE", "IN_SYNC",
                  "MAX_OFFSET", "LAG_BYTES");
    for (size_t c = 0; c < ci->n_clusters; c++) {
        const Rmq__ClusterEntry *ce = ci->clusters[c];
        for (size_t b = 0; b < ce->n_broker_names; b++) {
            const char *name = ce->broker_names[b], *from = NULL;
            rmq_frame_t resp = { 0 };
            if (!group_wanted(ctx, ce->cluster_name, name))
                continue;
            shown++;
            int got = replica_info(ctx, &cl, ce->cluster_name, name, &resp, &from);
            if (got < 0) {
                rc = 1;
                continue;
            }
            if (got == 0)
                rc = 1;
            else
                leader = from;
            group_rows(ctx, &t, adm_find_broker(ci, name), name, resp.cmd->replica_info);
            rmq_frame_clear(&resp);
        }
    }
    adm_table_print(&t, stdout);
    if (leader)
        printf("controller leader: %s\n", leader);
    adm_table_free(&t);
    rmq_frame_clear(&ci_resp);
    if (!shown) {
        fprintf(stderr, "mqadmin: %s: the name server knows no such broker group\n", ctx->cmd);
        return 1;
    }
    return rc;
}
