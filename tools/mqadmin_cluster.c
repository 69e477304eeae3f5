/* mqadmin_cluster.c: cluster-wide views: clusterList (the name server's
 * cluster info joined with each broker's runtime info), brokerStatus (one
 * broker's runtime info, or every broker of a cluster) and
 * getNamesrvConfig. A broker that does not answer clusterList shows "-". */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"
#include "rmq_time.h"

#define RUNTIME_TIMEOUT_MS 3000

/* Looks up addr's liveness entry in ci, or NULL. */
static const Rmq__BrokerLive *find_live(const Rmq__ClusterInfo *ci, const char *addr)
{
    for (size_t i = 0; i < ci->n_live; i++)
        if (strcmp(ci->live[i]->broker_addr, addr) == 0)
            return ci->live[i];
    return NULL;
}

const char *adm_config_value(const Rmq__ConfigTable *ct, const char *key)
{
    for (size_t i = 0; ct && i < ct->n_entries; i++)
        if (strcmp(ct->entries[i]->key, key) == 0)
            return ct->entries[i]->value;
    return NULL;
}

const Rmq__ConfigTable *adm_runtime_quiet(adm_ctx_t *ctx, const char *addr, rmq_frame_t *resp)
{
    Rmq__Command req = RMQ__COMMAND__INIT;

    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (rmq_sync_call(ctx->sync, addr, &req, NULL, 0, RUNTIME_TIMEOUT_MS, resp) != RMQ_OK)
        return NULL;
    if (resp->cmd->status != RMQ__STATUS__SUCCESS || resp->cmd->header_case != RMQ__COMMAND__HEADER_CONFIG)
        return NULL;
    return resp->cmd->config;
}

/* MASTER or SLAVE: the broker's own role when it answered, else its id. */
static const char *role_of(int64_t broker_id, const Rmq__ConfigTable *rt)
{
    const char *role = adm_config_value(rt, "brokerRole");

    if (role)
        return strcmp(role, "SLAVE") == 0 ? "SLAVE" : "MASTER";
    return broker_id == 0 ? "MASTER" : "SLAVE";
}

/* The 10-second rate, the first of the "10s 60s 600s" rates key holds. */
static void tps_cell(const Rmq__ConfigTable *rt, const char *key, char *buf, size_t len)
{
    const char *v = adm_config_value(rt, key);

    snprintf(buf, len, "%.*s", v ? (int)strcspn(v, " ") : 1, v ? v : "-");
}

/* HA_ADDR: the HA listener the broker registered; a slave has none (it
 * registers no address, older brokers port 0), so it shows the master HA
 * address it follows from its own runtime info, "->ADDR", "(down)" while
 * that link is down; else "-". */
static void ha_cell(const Rmq__BrokerLive *bl, const Rmq__ConfigTable *rt, char *buf, size_t len)
{
    const char *colon = bl ? strrchr(bl->ha_server_addr, ':') : NULL;
    const char *maddr = adm_config_value(rt, "haMasterAddr"), *conn = adm_config_value(rt, "haConnected");

    if (colon && atoi(colon + 1) > 0)
        snprintf(buf, len, "%s", bl->ha_server_addr);
    else if (maddr && maddr[0])
        snprintf(buf, len, "->%s%s", maddr, conn && strcmp(conn, "true") == 0 ? "" : "(down)");
    else
        snprintf(buf, len, "-");
}

/* Appends one row for broker address ba of bd (cluster ce) to t. */
static void cluster_row(adm_ctx_t *ctx, adm_table_t *t, const Rmq__ClusterInfo *ci,
                        const Rmq__ClusterEntry *ce, const Rmq__BrokerData *bd, const Rmq__BrokerAddr *ba)
{
    const Rmq__BrokerLive *bl = find_live(ci, ba->addr);
    rmq_frame_t resp = { 0 };
    const Rmq__ConfigTable *rt = adm_runtime_quiet(ctx, ba->addr, &resp);
    const char *version = adm_config_value(rt, "brokerVersionDesc");
    char bid[24], dv[48] = "", age[32] = "", in[32], out[32], ha[160];

    snprintf(bid, sizeof bid, "%" PRId64, ba->broker_id);
    if (bl && bl->data_version)
        snprintf(dv, sizeof dv, "%" PRId64 ".%" PRId64, bl->data_version->timestamp, bl->data_version->counter);
    if (bl)
        snprintf(age, sizeof age, "%.1fs ago", (double)(rmq_wall_ms() - bl->last_update_ms) / 1000);
    tps_cell(rt, "putTps", in, sizeof in);
    tps_cell(rt, "getTransferedTps", out, sizeof out);
    ha_cell(bl, rt, ha, sizeof ha);
    adm_table_row(t, ce->cluster_name, bd->broker_name, bid, ba->addr, role_of(ba->broker_id, rt),
                  version ? version : "-", in, out, ha, dv, age);
    rmq_frame_clear(&resp);
}

static void print_cluster(adm_ctx_t *ctx, const Rmq__ClusterInfo *ci)
{
    adm_table_t t;

    adm_table_init(&t, 11);
    adm_table_row(&t, "CLUSTER", "BROKER_NAME", "BID", "ADDR", "ROLE", "VERSION", "IN_TPS", "OUT_TPS",
                  "HA_ADDR", "DATA_VERSION", "LAST_UPDATE");
    for (size_t c = 0; c < ci->n_clusters; c++) {
        const Rmq__ClusterEntry *ce = ci->clusters[c];
        for (size_t b = 0; b < ce->n_broker_names; b++) {
            const Rmq__BrokerData *bd = adm_find_broker(ci, ce->broker_names[b]);
            for (size_t a = 0; bd && a < bd->n_addrs; a++)
                cluster_row(ctx, &t, ci, ce, bd, bd->addrs[a]);
        }
    }
    adm_table_print(&t, stdout);
    adm_table_free(&t);
}

int adm_cmd_cluster_list(adm_ctx_t *ctx)
{
    rmq_frame_t resp = { 0 };

    if (adm_cluster_info(ctx, &resp) != 0)
        return 1;
    print_cluster(ctx, resp.cmd->cluster_info);
    rmq_frame_clear(&resp);
    return 0;
}

static int entry_cmp(const void *a, const void *b)
{
    const Rmq__ConfigEntry *ea = *(Rmq__ConfigEntry *const *)a;
    const Rmq__ConfigEntry *eb = *(Rmq__ConfigEntry *const *)b;

    return strcmp(ea->key, eb->key);
}

/* Prints ct as a KEY VALUE table sorted by key. */
static void print_config_sorted(const Rmq__ConfigTable *ct)
{
    Rmq__ConfigEntry **sorted = malloc((ct->n_entries ? ct->n_entries : 1) * sizeof *sorted);
    adm_table_t t;

    if (!sorted) {
        fprintf(stderr, "mqadmin: out of memory\n");
        exit(1);
    }
    memcpy(sorted, ct->entries, ct->n_entries * sizeof *sorted);
    qsort(sorted, ct->n_entries, sizeof *sorted, entry_cmp);
    adm_table_init(&t, 2);
    adm_table_row(&t, "KEY", "VALUE");
    for (size_t i = 0; i < ct->n_entries; i++)
        adm_table_row(&t, sorted[i]->key, sorted[i]->value);
    adm_table_print(&t, stdout);
    adm_table_free(&t);
    free(sorted);
}

/* Prints the replication view of a runtime info: a master's "Slaves" table
 * (haSlaveCount, haSlaveN.*) or a slave's link to its master (haMasterAddr...). */
static void print_ha(const Rmq__ConfigTable *ct)
{
    const char *role = adm_config_value(ct, "brokerRole"), *count = adm_config_value(ct, "haSlaveCount");
    const char *maddr = adm_config_value(ct, "haMasterAddr");
    adm_table_t t;

    if (count) {
        long n = atol(count);
        printf("\nSlaves of this %s: %ld connected\n", role ? role : "master", n);
        if (n <= 0)
            return;
        adm_table_init(&t, 6);
        adm_table_row(&t, "#", "SLAVE_ADDR", "BROKER_ID", "ACKED_OFFSET", "LAG_BYTES", "IN_SYNC");
        for (long i = 0; i < n; i++) {
            static const char *const fields[] = { "addr", "brokerId", "ackedOffset", "lagBytes", "inSync" };
            const char *v[5];
            char key[64], idx[24];
            for (size_t f = 0; f < 5; f++) {
                snprintf(key, sizeof key, "haSlave%ld.%s", i, fields[f]);
                v[f] = adm_config_value(ct, key);
                if (!v[f])
                    v[f] = "-";
            }
            snprintf(idx, sizeof idx, "%ld", i);
            adm_table_row(&t, idx, v[0], v[1], v[2], v[3], v[4]);
        }
        adm_table_print(&t, stdout);
        adm_table_free(&t);
    } else if (maddr) {
        const char *conn = adm_config_value(ct, "haConnected"), *acked = adm_config_value(ct, "haAckedOffset");
        printf("\nMaster of this slave:\n");
        adm_table_init(&t, 3);
        adm_table_row(&t, "MASTER_HA_ADDR", "CONNECTED", "ACKED_OFFSET");
        adm_table_row(&t, maddr[0] ? maddr : "-", conn ? conn : "-", acked ? acked : "-");
        adm_table_print(&t, stdout);
        adm_table_free(&t);
    }
}

/* Prints one broker's runtime info (titled when title is not NULL). */
static int broker_status_one(adm_ctx_t *ctx, const char *addr, const char *title)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (adm_broker_call(ctx, addr, &req, NULL, 0, RMQ__COMMAND__HEADER_CONFIG, "config", &resp) != 0)
        return 1;
    if (title)
        printf("============ %s\n", title);
    print_config_sorted(resp.cmd->config);
    print_ha(resp.cmd->config);
    rmq_frame_clear(&resp);
    return 0;
}

/* brokerStatus -c: every broker address of the cluster, masters first. */
static int broker_status_cluster(adm_ctx_t *ctx, const char *cluster)
{
    rmq_frame_t resp = { 0 };
    const Rmq__ClusterEntry *ce;
    int rc = 0, printed = 0;

    if (adm_cluster_info(ctx, &resp) != 0)
        return 1;
    ce = adm_find_cluster(resp.cmd->cluster_info, cluster);
    if (!ce) {
        fprintf(stderr, "mqadmin: %s: cluster %s is not known to the name server\n", ctx->cmd, cluster);
        rmq_frame_clear(&resp);
        return 1;
    }
    for (size_t b = 0; b < ce->n_broker_names; b++) {
        const Rmq__BrokerData *bd = adm_find_broker(resp.cmd->cluster_info, ce->broker_names[b]);
        for (size_t a = 0; bd && a < bd->n_addrs; a++) {
            char title[512];
            snprintf(title, sizeof title, "%s%s id %" PRId64 " %s", printed ? "\n" : "", bd->broker_name,
                     bd->addrs[a]->broker_id, bd->addrs[a]->addr);
            if (broker_status_one(ctx, bd->addrs[a]->addr, title) != 0)
                rc = 1;
            else
                printed = 1;
        }
    }
    rmq_frame_clear(&resp);
    return rc;
}

int adm_cmd_broker_status(adm_ctx_t *ctx)
{
    const char *addr = adm_opt(ctx, 'b'), *cluster = adm_opt(ctx, 'c');

    if (!addr == !cluster) {
        fprintf(stderr, "mqadmin: %s: give either -b BROKERADDR or -c CLUSTER\n", ctx->cmd);
        return 1;
    }
    return addr ? broker_status_one(ctx, addr, NULL) : broker_status_cluster(ctx, cluster);
}

int adm_cmd_get_namesrv_config(adm_ctx_t *ctx)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    char errs[ADM_ERR_MAX] = "";
    size_t answered = 0;
    int rc = 0;

    req.code = RMQ__REQUEST_CODE__GET_NAMESRV_CONFIG;
    for (size_t i = 0; i < ctx->naddrs; i++) {
        rmq_frame_t resp = { 0 };
        rmq_err_t err = rmq_sync_call(ctx->sync, ctx->addrs[i], &req, NULL, 0, ADM_TIMEOUT_MS, &resp);
        if (err != RMQ_OK) {
            adm_note_failure(errs, sizeof errs, ctx->addrs[i], adm_call_error(ctx, err));
            continue;
        }
        answered++;
        if (adm_check_resp(ctx->cmd, &resp, RMQ__COMMAND__HEADER_CONFIG, "config") != 0) {
            rc = 1;
        } else {
            const Rmq__ConfigTable *ct = resp.cmd->config;
            adm_table_t t;
            printf("%s============ %s\n", answered > 1 ? "\n" : "", ctx->addrs[i]);
            adm_table_init(&t, 2);
            adm_table_row(&t, "KEY", "VALUE");
            for (size_t e = 0; e < ct->n_entries; e++)
                adm_table_row(&t, ct->entries[e]->key, ct->entries[e]->value);
            adm_table_print(&t, stdout);
            adm_table_free(&t);
        }
        rmq_frame_clear(&resp);
    }
    if (errs[0])
        fprintf(stderr, "mqadmin: %s (%s)\n",
                answered ? "some name servers did not answer" : "no name server answered", errs);
    return answered ? rc : 1;
}
