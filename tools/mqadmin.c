/* mqadmin.c: the operator CLI. `mqadmin COMMAND -n "host:port[;host:port]"
 * [options]`. Queries ask the name servers in order and use the first that
 * answers; changes (deleteTopic) go to every name server. Results print as
 * tables whose column widths follow their content. Exit status: 0 done,
 * 1 bad usage, no name server answered, or a request was refused. */
#include <getopt.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "rmq_log.h"
#include "rmq_rpc.h"
#include "rmq_time.h"

#define ADM_TIMEOUT_MS 5000
#define ADM_MAX_NAMESRV 16
#define ADM_ERR_MAX 2048
#define ADM_TABLE_COLS 8

/* ---- tables ----------------------------------------------------------- */

/* Rows of text cells, the first row the header; printed column-aligned. */
typedef struct adm_table {
    size_t ncols;
    size_t nrows;
    size_t cap;
    char **cells;            /* nrows * ncols, owned */
} adm_table_t;

static void table_init(adm_table_t *t, size_t ncols)
{
    memset(t, 0, sizeof *t);
    t->ncols = ncols;
}

/* Appends a row of ncols cells, one string argument each (NULL prints as
 * empty). Exits on out of memory (a CLI has nothing to save). */
static void table_row(adm_table_t *t, ...)
{
    va_list ap;

    if (t->nrows == t->cap) {
        t->cap = t->cap ? t->cap * 2 : 16;
        t->cells = realloc(t->cells, t->cap * t->ncols * sizeof *t->cells);
        if (!t->cells) {
            fprintf(stderr, "mqadmin: out of memory\n");
            exit(1);
        }
    }
    va_start(ap, t);
    for (size_t c = 0; c < t->ncols; c++) {
        const char *s = va_arg(ap, const char *);
        char *copy = strdup(s ? s : "");
        if (!copy) {
            fprintf(stderr, "mqadmin: out of memory\n");
            exit(1);
        }
        t->cells[t->nrows * t->ncols + c] = copy;
    }
    va_end(ap);
    t->nrows++;
}

/* Prints t with two spaces between columns, widths from the widest cell.
 * Tables here have at most ADM_TABLE_COLS columns. */
static void table_print(const adm_table_t *t, FILE *out)
{
    size_t width[ADM_TABLE_COLS] = { 0 };

    for (size_t r = 0; r < t->nrows; r++)
        for (size_t c = 0; c < t->ncols; c++) {
            size_t len = strlen(t->cells[r * t->ncols + c]);
            if (len > width[c])
                width[c] = len;
        }
    for (size_t r = 0; r < t->nrows; r++) {
        for (size_t c = 0; c < t->ncols; c++) {
            const char *cell = t->cells[r * t->ncols + c];
            if (c + 1 == t->ncols)
                fprintf(out, "%s\n", cell);
            else
                fprintf(out, "%-*s  ", (int)width[c], cell);
        }
    }
}

static void table_free(adm_table_t *t)
{
    for (size_t i = 0; i < t->nrows * t->ncols; i++)
        free(t->cells[i]);
    free(t->cells);
}

/* ---- name servers ----------------------------------------------------- */

typedef struct adm_ctx {
    char *addrs[ADM_MAX_NAMESRV];
    size_t naddrs;
    const char *topic;
    rmq_sync_t *sync;
} adm_ctx_t;

/* Splits "a:1;b:2" into ctx->addrs (trimmed, empty parts skipped). */
static int parse_namesrv(adm_ctx_t *ctx, const char *list)
{
    char *copy = strdup(list), *save = NULL;

    if (!copy)
        return -1;
    for (char *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
        p += strspn(p, " \t");
        p[strcspn(p, " \t")] = '\0';
        if (!*p)
            continue;
        if (ctx->naddrs == ADM_MAX_NAMESRV) {
            fprintf(stderr, "mqadmin: -n: more than %d name servers\n", ADM_MAX_NAMESRV);
            free(copy);
            return -1;
        }
        ctx->addrs[ctx->naddrs] = strdup(p);
        if (!ctx->addrs[ctx->naddrs]) {
            free(copy);
            return -1;
        }
        ctx->naddrs++;
    }
    free(copy);
    return ctx->naddrs ? 0 : -1;
}

/* Appends "addr: reason" to the list of failures in errs. */
static void note_failure(char *errs, size_t len, const char *addr, const char *reason)
{
    size_t used = strlen(errs);

    snprintf(errs + used, len - used, "%s%s: %s", used ? "; " : "", addr, reason);
}

/* Sends req to the name servers in order until one answers; RMQ_OK with
 * *resp filled (caller clears it; its status is not checked), or an error
 * after printing which name servers failed and why. */
static rmq_err_t query_first(adm_ctx_t *ctx, Rmq__Command *req, rmq_frame_t *resp)
{
    char errs[ADM_ERR_MAX] = "";

    for (size_t i = 0; i < ctx->naddrs; i++) {
        rmq_err_t err = rmq_sync_call(ctx->sync, ctx->addrs[i], req, NULL, 0, ADM_TIMEOUT_MS, resp);
        if (err == RMQ_OK)
            return RMQ_OK;
        note_failure(errs, sizeof errs, ctx->addrs[i], rmq_strerror(err));
    }
    fprintf(stderr, "mqadmin: no name server answered (%s)\n", errs);
    return RMQ_ECONNECT;
}

/* Returns 0 if resp succeeded with a header of type want (named
 * header_name), else prints why. */
static int check_resp(const char *what, const rmq_frame_t *resp, Rmq__Command__HeaderCase want,
                      const char *header_name)
{
    const Rmq__Command *cmd = resp->cmd;

    if (cmd->status != RMQ__STATUS__SUCCESS) {
        fprintf(stderr, "mqadmin: %s: %s: %s\n", what, rmq_status_name(cmd->status), cmd->remark);
        return -1;
    }
    if (cmd->header_case != want) {
        fprintf(stderr, "mqadmin: %s: the answer has no %s header\n", what, header_name);
        return -1;
    }
    return 0;
}

/* ---- commands ----------------------------------------------------------- */

/* Looks up addr's liveness entry in ci, or NULL. */
static const Rmq__BrokerLive *find_live(const Rmq__ClusterInfo *ci, const char *addr)
{
    for (size_t i = 0; i < ci->n_live; i++)
        if (strcmp(ci->live[i]->broker_addr, addr) == 0)
            return ci->live[i];
    return NULL;
}

static const Rmq__BrokerData *find_broker(const Rmq__ClusterInfo *ci, const char *name)
{
    for (size_t i = 0; i < ci->n_brokers; i++)
        if (strcmp(ci->brokers[i]->broker_name, name) == 0)
            return ci->brokers[i];
    return NULL;
}

static void print_cluster(const Rmq__ClusterInfo *ci)
{
    adm_table_t t;
    int64_t now = rmq_wall_ms();

    table_init(&t, 7);
    table_row(&t, "CLUSTER", "BROKER_NAME", "BID", "ADDR", "HA_ADDR", "DATA_VERSION", "LAST_UPDATE");
    for (size_t c = 0; c < ci->n_clusters; c++) {
        const Rmq__ClusterEntry *ce = ci->clusters[c];
        for (size_t b = 0; b < ce->n_broker_names; b++) {
            const Rmq__BrokerData *bd = find_broker(ci, ce->broker_names[b]);
            for (size_t a = 0; bd && a < bd->n_addrs; a++) {
                const Rmq__BrokerLive *bl = find_live(ci, bd->addrs[a]->addr);
                char bid[24], dv[48] = "", age[32] = "";
                snprintf(bid, sizeof bid, "%" PRId64, bd->addrs[a]->broker_id);
                if (bl && bl->data_version)
                    snprintf(dv, sizeof dv, "%" PRId64 ".%" PRId64, bl->data_version->timestamp,
                             bl->data_version->counter);
                if (bl)
                    snprintf(age, sizeof age, "%.1fs ago", (double)(now - bl->last_update_ms) / 1000);
                table_row(&t, ce->cluster_name, bd->broker_name, bid, bd->addrs[a]->addr,
                          bl ? bl->ha_server_addr : "", dv, age);
            }
        }
    }
    table_print(&t, stdout);
    table_free(&t);
}

static int cmd_cluster_list(adm_ctx_t *ctx)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    int rc = 1;

    req.code = RMQ__REQUEST_CODE__GET_BROKER_CLUSTER_INFO;
    if (query_first(ctx, &req, &resp) != RMQ_OK)
        return 1;
    if (check_resp("clusterList", &resp, RMQ__COMMAND__HEADER_CLUSTER_INFO, "cluster_info") == 0) {
        print_cluster(resp.cmd->cluster_info);
        rc = 0;
    }
    rmq_frame_clear(&resp);
    return rc;
}

/* "RW-" style permission string, as RocketMQ's PermName.perm2String. */
static void perm_string(int32_t perm, char out[4])
{
    out[0] = perm & RMQ__PERM__PERM_READ ? 'R' : '-';
    out[1] = perm & RMQ__PERM__PERM_WRITE ? 'W' : '-';
    out[2] = perm & RMQ__PERM__PERM_INHERIT ? 'X' : '-';
    out[3] = '\0';
}

static void print_route(const Rmq__TopicRouteData *rd)
{
    adm_table_t t;

    table_init(&t, 4);
    table_row(&t, "BROKER_NAME", "CLUSTER", "BID", "ADDR");
    for (size_t i = 0; i < rd->n_broker_datas; i++) {
        const Rmq__BrokerData *bd = rd->broker_datas[i];
        for (size_t a = 0; a < bd->n_addrs; a++) {
            char bid[24];
            snprintf(bid, sizeof bid, "%" PRId64, bd->addrs[a]->broker_id);
            table_row(&t, bd->broker_name, bd->cluster, bid, bd->addrs[a]->addr);
        }
    }
    table_print(&t, stdout);
    table_free(&t);
    printf("\n");

    table_init(&t, 5);
    table_row(&t, "BROKER_NAME", "READ_QUEUES", "WRITE_QUEUES", "PERM", "SYSFLAG");
    for (size_t i = 0; i < rd->n_queue_datas; i++) {
        const Rmq__QueueData *qd = rd->queue_datas[i];
        char r[16], w[16], perm[4], sys[16];
        snprintf(r, sizeof r, "%d", qd->read_queue_nums);
        snprintf(w, sizeof w, "%d", qd->write_queue_nums);
        snprintf(sys, sizeof sys, "%d", qd->topic_sys_flag);
        perm_string(qd->perm, perm);
        table_row(&t, qd->broker_name, r, w, perm, sys);
    }
    table_print(&t, stdout);
    table_free(&t);
    if (rd->order_topic)
        printf("\norder topic: yes\n");
}

static int cmd_topic_route(adm_ctx_t *ctx)
{
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    int rc = 1;

    tr.topic = (char *)ctx->topic;
    req.code = RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC;
    req.header_case = RMQ__COMMAND__HEADER_TOPIC;
    req.topic = &tr;
    if (query_first(ctx, &req, &resp) != RMQ_OK)
        return 1;
    if (check_resp("topicRoute", &resp, RMQ__COMMAND__HEADER_TOPIC_ROUTE, "topic_route") == 0) {
        print_route(resp.cmd->topic_route);
        rc = 0;
    }
    rmq_frame_clear(&resp);
    return rc;
}

static int cmd_topic_list(adm_ctx_t *ctx)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    adm_table_t t;
    int rc = 1;

    req.code = RMQ__REQUEST_CODE__GET_ALL_TOPIC_LIST_FROM_NAMESERVER;
    if (query_first(ctx, &req, &resp) != RMQ_OK)
        return 1;
    if (check_resp("topicList", &resp, RMQ__COMMAND__HEADER_TOPIC_LIST, "topic_list") == 0) {
        const Rmq__TopicList *tl = resp.cmd->topic_list;
        table_init(&t, 1);
        table_row(&t, "TOPIC");
        for (size_t i = 0; i < tl->n_topics; i++)
            table_row(&t, tl->topics[i]);
        table_print(&t, stdout);
        table_free(&t);
        rc = 0;
    }
    rmq_frame_clear(&resp);
    return rc;
}

/* Sends DELETE_TOPIC_IN_NAMESRV to every name server; a name server that
 * does not know the topic counts as done. Fails if any did not answer. */
static int cmd_delete_topic(adm_ctx_t *ctx)
{
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    adm_table_t t;
    int rc = 0;

    tr.topic = (char *)ctx->topic;
    req.code = RMQ__REQUEST_CODE__DELETE_TOPIC_IN_NAMESRV;
    req.header_case = RMQ__COMMAND__HEADER_TOPIC;
    req.topic = &tr;
    table_init(&t, 2);
    table_row(&t, "NAMESRV", "RESULT");
    for (size_t i = 0; i < ctx->naddrs; i++) {
        rmq_frame_t resp = { 0 };
        rmq_err_t err = rmq_sync_call(ctx->sync, ctx->addrs[i], &req, NULL, 0, ADM_TIMEOUT_MS, &resp);
        char result[ADM_ERR_MAX];
        if (err != RMQ_OK) {
            snprintf(result, sizeof result, "no answer: %s", rmq_strerror(err));
            fprintf(stderr, "mqadmin: deleteTopic: %s: %s\n", ctx->addrs[i], rmq_strerror(err));
            rc = 1;
        } else if (resp.cmd->status == RMQ__STATUS__SUCCESS) {
            snprintf(result, sizeof result, "deleted");
        } else if (resp.cmd->status == RMQ__STATUS__TOPIC_NOT_EXIST) {
            snprintf(result, sizeof result, "not present");
        } else {
            snprintf(result, sizeof result, "%s: %s", rmq_status_name(resp.cmd->status),
                     resp.cmd->remark);
            rc = 1;
        }
        rmq_frame_clear(&resp);
        table_row(&t, ctx->addrs[i], result);
    }
    table_print(&t, stdout);
    table_free(&t);
    return rc;
}

/* Prints each name server's effective config; fails if none answered. */
static int cmd_get_namesrv_config(adm_ctx_t *ctx)
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
            note_failure(errs, sizeof errs, ctx->addrs[i], rmq_strerror(err));
            continue;
        }
        answered++;
        if (check_resp("getNamesrvConfig", &resp, RMQ__COMMAND__HEADER_CONFIG, "config") != 0) {
            rc = 1;
        } else {
            const Rmq__ConfigTable *ct = resp.cmd->config;
            adm_table_t t;
            printf("%s============ %s\n", answered > 1 ? "\n" : "", ctx->addrs[i]);
            table_init(&t, 2);
            table_row(&t, "KEY", "VALUE");
            for (size_t e = 0; e < ct->n_entries; e++)
                table_row(&t, ct->entries[e]->key, ct->entries[e]->value);
            table_print(&t, stdout);
            table_free(&t);
        }
        rmq_frame_clear(&resp);
    }
    if (errs[0])
        fprintf(stderr, "mqadmin: %s (%s)\n",
                answered ? "some name servers did not answer" : "no name server answered", errs);
    return answered ? rc : 1;
}

/* ---- command line ------------------------------------------------------- */

typedef struct adm_cmd {
    const char *name;
    int needs_topic;
    int (*run)(adm_ctx_t *ctx);
    const char *help;
} adm_cmd_t;

static const adm_cmd_t adm_cmds[] = {
    { "clusterList", 0, cmd_cluster_list, "list clusters, broker names and broker addresses" },
    { "topicRoute", 1, cmd_topic_route, "show the brokers and queues of a topic" },
    { "topicList", 0, cmd_topic_list, "list every topic the name server knows" },
    { "deleteTopic", 1, cmd_delete_topic, "delete a topic from every name server's route" },
    { "getNamesrvConfig", 0, cmd_get_namesrv_config, "print each name server's configuration" },
};

#define ADM_NCMDS (sizeof adm_cmds / sizeof adm_cmds[0])

static void usage(FILE *out)
{
    fprintf(out, "usage: mqadmin COMMAND -n \"host:port[;host:port]\" [options]\n"
                 "       mqadmin COMMAND -h\n\ncommands:\n");
    for (size_t i = 0; i < ADM_NCMDS; i++)
        fprintf(out, "  %-18s %s\n", adm_cmds[i].name, adm_cmds[i].help);
}

static void cmd_usage(const adm_cmd_t *cmd, FILE *out)
{
    fprintf(out, "usage: mqadmin %s -n \"host:port[;host:port]\"%s\n  %s\n"
                 "  -n ADDRS   name servers, separated by ';'\n%s"
                 "  -h         this help\n",
            cmd->name, cmd->needs_topic ? " -t TOPIC" : "", cmd->help,
            cmd->needs_topic ? "  -t TOPIC   the topic\n" : "");
}

static const adm_cmd_t *find_cmd(const char *name)
{
    for (size_t i = 0; i < ADM_NCMDS; i++)
        if (strcmp(adm_cmds[i].name, name) == 0)
            return &adm_cmds[i];
    return NULL;
}

/* Parses the options after the command into ctx; returns -1 after printing
 * usage on error, 1 for -h, 0 otherwise. */
static int parse_cmd_args(const adm_cmd_t *cmd, int argc, char **argv, adm_ctx_t *ctx)
{
    const char *namesrv = NULL;
    int c;

    optind = 1;
    while ((c = getopt(argc, argv, cmd->needs_topic ? "n:t:h" : "n:h")) != -1) {
        switch (c) {
        case 'n':
            namesrv = optarg;
            break;
        case 't':
            ctx->topic = optarg;
            break;
        case 'h':
            cmd_usage(cmd, stdout);
            return 1;
        default:
            cmd_usage(cmd, stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "mqadmin: %s: unexpected argument '%s'\n", cmd->name, argv[optind]);
        cmd_usage(cmd, stderr);
        return -1;
    }
    if (!namesrv)
        namesrv = getenv("NAMESRV_ADDR");
    if (!namesrv || parse_namesrv(ctx, namesrv) != 0) {
        fprintf(stderr, "mqadmin: %s: -n needs at least one host:port (or set NAMESRV_ADDR)\n",
                cmd->name);
        cmd_usage(cmd, stderr);
        return -1;
    }
    if (cmd->needs_topic && (!ctx->topic || !ctx->topic[0])) {
        fprintf(stderr, "mqadmin: %s: -t TOPIC is required\n", cmd->name);
        cmd_usage(cmd, stderr);
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    adm_ctx_t ctx = { 0 };
    rmq_client_opts_t opts = { 0 };
    int rc;

    rmq_log_open("mqadmin", NULL, RMQ_LOG_ERROR);
    if (argc < 2 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0) {
        usage(argc < 2 ? stderr : stdout);
        return argc < 2 ? 1 : 0;
    }
    const adm_cmd_t *cmd = find_cmd(argv[1]);
    if (!cmd) {
        fprintf(stderr, "mqadmin: unknown command '%s'\n", argv[1]);
        usage(stderr);
        return 1;
    }
    rc = parse_cmd_args(cmd, argc - 1, argv + 1, &ctx);
    if (rc == 0) {
        opts.connect_timeout_ms = 3000;
        opts.name = "mqadmin";
        ctx.sync = rmq_sync_new(&opts);
        if (!ctx.sync) {
            fprintf(stderr, "mqadmin: out of memory\n");
            rc = 1;
        } else {
            rc = cmd->run(&ctx);
            rmq_sync_free(ctx.sync);
        }
    } else {
        rc = rc > 0 ? 0 : 1;
    }
    for (size_t i = 0; i < ctx.naddrs; i++)
        free(ctx.addrs[i]);
    return rc;
}
