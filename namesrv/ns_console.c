/* ns_console.c: the HTTP side of the name server on metricsPort.
 *
 *   /metrics                 Prometheus text (ns_metrics)
 *   /, /index.html, ...      the console's static files, embedded
 *   /api/cluster             topology: clusters, broker sets, each address's
 *                            role, runtime info and (slaves) replication lag
 *   /api/tps                 the last hour (ns_hist): in/out TPS per broker
 *                            address, put TPS of the busiest topics
 *   /api/topics              topics with the queue counts of each broker set
 *   /api/topic?name=T        per broker set: queues with min/max offsets
 *   /api/groups[?group=G]    consumer groups (from every master's offset
 *                            table) or one group's lag and pop messages in
 *                            flight per queue, its clients and its lag over
 *                            the last hour
 *   /api/message?id=ID       one message by its offset message id
 *   /api/controller          with enableControllerInNamesrv: each broker
 *                            group's master, epoch, in-sync set, replicas
 *                            and the recent elections (ns_console_ctl)
 *
 * Broker data is gathered asynchronously with rmq_client on this loop:
 * a "snapshot" (GET_BROKER_RUNTIME_INFO from every live address) serves
 * /api/cluster and /api/tps, is reused for CON_FRESH_MS and refreshed every
 * second while the console is in use. Whether or not anyone watches, every
 * history period (consoleHistoryPeriodMs) opens a slot of the hour's
 * history and refreshes the snapshot: each broker's first answer in a slot
 * gives its rates since its previous slot, and those of the topics it names
 * busiest (hotTopic<i> in runtime info); the groups the history keeps are
 * asked GET_CONSUME_STATS for their lag, and the groups in each broker
 * set's offset table (GET_ALL_CONSUMER_OFFSET) that it does not keep yet
 * too, so that a group's lag history starts before anybody opens it. The other API calls fan out to the brokers they need (a "job")
 * and answer when every call returned or timed out. HTTP requests waiting
 * for broker answers are dropped if their connection closes.
 *
 * With aclEnable=true the port speaks HTTPS (rmq_http.h) and asks for an
 * account: /metrics any valid one, the console (its files and its API) an
 * admin, since what it shows comes from admin requests (runtime info, every
 * group's offsets, message bodies of any topic). Its broker calls are then
 * signed as the account of the HTTP request that caused them; the snapshot,
 * refreshed by a timer, as the last account that used the API. */
#include "ns_console.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/http.h>
#include <openssl/crypto.h>

#include "ns_console_ctl.h"
#include "ns_hist.h"
#include "ns_metrics.h"
#include "ns_route.h"
#include "ns_server.h"
#include "rmq_http.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "rmq_security.h"
#include "rmq_time.h"

/* Appends a string literal (length from sizeof, so it cannot be miscounted). */
#define ADD_LIT(buf, lit) evbuffer_add((buf), (lit), sizeof(lit) - 1)

#define CON_MAX_BROKERS 128
#define CON_HOT_TOPICS 10           /* hotTopic<i> read from a broker's runtime info */
#define CON_RPC_TIMEOUT_MS 2000
#define CON_FRESH_MS 900
#define CON_ACTIVE_MS 60000         /* keep refreshing this long after the last API call */
#define CON_MAX_TOPICS 5000
#define CON_BODY_SHOWN 4096

/* A topic's count of messages stored on one broker (hotTopic<i>). */
typedef struct con_topic_count {
    char name[RMQ_TOPIC_MAX + 1];
    int64_t put_nums;
} con_topic_count_t;

/* What the console knows about one broker address. */
typedef struct con_broker {
    char addr[NS_NAME_MAX + 1];
    char cluster[NS_NAME_MAX + 1];
    char name[NS_NAME_MAX + 1];
    int64_t id;
    int64_t last_update_ms;          /* wall clock of its last registration */
    int ok;                          /* the last runtime-info call succeeded */
    char error[200];
    struct evbuffer *info;           /* JSON object of the last runtime info */
    int64_t put_total, get_total;    /* from the last answer; -1 unknown */
    int64_t max_offset;              /* commitLogMaxOffset; -1 unknown */
    int64_t sample_ms;               /* monotonic time of put_total/get_total */
    double in_tps, out_tps;
    uint64_t hist_slot;              /* the history slot of its last sample; 0: none */
    int64_t hist_ms;                 /* monotonic time of that sample */
    int64_t hist_put, hist_get;      /* its totals then */
    con_topic_count_t hot[CON_HOT_TOPICS]; /* its busiest topics then */
    size_t n_hot;
    int seen;
} con_broker_t;

enum con_kind { CON_CLUSTER, CON_TPS, CON_TOPIC, CON_GROUPS, CON_GROUP, CON_MESSAGE };

/* An HTTP request waiting for broker answers: for the snapshot (calls
 * counted in the console) or for its own fan-out (pending calls). */
typedef struct con_job {
    struct con_job *next, *prev;
    ns_console_t *con;
    struct evhttp_request *req;      /* NULL once the client went away */
    struct evhttp_connection *evcon; /* compared only, never dereferenced after close */
    enum con_kind kind;
    int pending;                     /* own broker calls outstanding */
    int waits_snapshot;
    int first;                       /* no array element written yet */
    struct evbuffer *out;            /* JSON under construction */
    struct evbuffer *clients;        /* CON_GROUP: its clients' JSON objects, comma-separated */
    int64_t lag_total;               /* CON_GROUP: its lag over the broker sets answered; -1: none */
    rmq_acl_credentials_t cred;      /* the caller's account; empty: none */
    char arg[NS_NAME_MAX + 1];
} con_job_t;

/* One broker call of a job or of the snapshot. */
typedef struct con_call {
    ns_console_t *con;
    con_job_t *job;                  /* NULL: snapshot call */
    char addr[NS_NAME_MAX + 1];
    char broker_name[NS_NAME_MAX + 1];
    char group[NS_NAME_MAX + 1];     /* a history sample's group (job NULL) */
} con_call_t;

struct ns_console {
    ns_server_t *ns;
    struct event_base *base;
    rmq_http_t *http;
    rmq_client_pool_t *pool;
    con_broker_t *brokers;           /* CON_MAX_BROKERS slots, n_brokers used */
    size_t n_brokers;
    int snapshot_pending;            /* runtime-info calls outstanding */
    int64_t refreshed_ms;            /* monotonic; 0: never */
    int64_t last_api_ms;
    con_job_t *jobs;
    struct event *timer;
    ns_hist_t *hist;                 /* the last hour */
    int64_t hist_period_ms;          /* consoleHistoryPeriodMs: one slot each */
    uint64_t hist_slot;              /* slots opened so far */
    struct event *hist_timer;        /* every history period */
    int closing;
    const rmq_security_t *sec;       /* the name server's TLS and ACL (borrowed) */
    rmq_acl_credentials_t signer;    /* the account of the broker call being sent */
    rmq_acl_credentials_t snap_cred; /* the last API caller's, for snapshot refreshes */
    ns_metrics_extra_t extra;
};

/* ---- jobs --------------------------------------------------------------- */

/* rmq_client_call signed as cred when access control is on: the pool's
 * signer reads con->signer while the call is encoded, then it is wiped. */
static rmq_err_t signed_call(ns_console_t *con, rmq_client_t *cli, Rmq__Command *req,
                             const rmq_acl_credentials_t *cred, rmq_response_fn cb, void *arg)
{
    con->signer = *cred;
    rmq_err_t err = rmq_client_call(cli, req, NULL, 0, CON_RPC_TIMEOUT_MS, cb, arg);
    OPENSSL_cleanse(&con->signer, sizeof(con->signer));
    return err;
}

static void on_http_close(struct evhttp_connection *evcon, void *arg)
{
    ns_console_t *con = arg;
    for (con_job_t *j = con->jobs; j; j = j->next)
        if (j->evcon == evcon)
            j->req = NULL;
}

/* Takes req into a new job (NULL on ENOMEM, after answering 503). */
static con_job_t *job_new(ns_console_t *con, struct evhttp_request *req, enum con_kind kind)
{
    con_job_t *j = calloc(1, sizeof(*j));
    if (j)
        j->out = evbuffer_new();
    if (!j || !j->out) {
        free(j);
        rmq_http_replyf(req, 503, "out of memory\n");
        return NULL;
    }
    j->con = con;
    j->req = req;
    j->kind = kind;
    j->first = 1;
    rmq_http_account(req, &j->cred);
    j->evcon = evhttp_request_get_connection(req);
    if (j->evcon)
        evhttp_connection_set_closecb(j->evcon, on_http_close, con);
    j->next = con->jobs;
    if (con->jobs)
        con->jobs->prev = j;
    con->jobs = j;
    return j;
}

/* Answers the job's request with its JSON (when the client is still there)
 * and frees the job. */
static void job_finish(con_job_t *j, int code)
{
    ns_console_t *con = j->con;
    if (j->req && !con->closing)
        rmq_http_reply(j->req, code, "application/json", j->out);
    if (j->prev)
        j->prev->next = j->next;
    else
        con->jobs = j->next;
    if (j->next)
        j->next->prev = j->prev;
    evbuffer_free(j->out);
    if (j->clients)
        evbuffer_free(j->clients);
    OPENSSL_cleanse(&j->cred, sizeof(j->cred));
    free(j);
}

/* Writes a comma before every array element but the first. */
static void job_sep(con_job_t *j)
{
    if (!j->first)
        ADD_LIT(j->out, ",");
    j->first = 0;
}

/* ---- snapshot ------------------------------------------------------------ */

static con_broker_t *broker_find(ns_console_t *con, const char *addr)
{
    for (size_t i = 0; i < con->n_brokers; i++)
        if (strcmp(con->brokers[i].addr, addr) == 0)
            return &con->brokers[i];
    return NULL;
}

static void broker_clear(con_broker_t *b)
{
    if (b->info)
        evbuffer_free(b->info);
    memset(b, 0, sizeof(*b));
}

/* Value of key in a runtime-info table, or NULL. */
static const char *info_get(const Rmq__ConfigTable *ct, const char *key)
{
    for (size_t i = 0; i < ct->n_entries; i++)
        if (strcmp(ct->entries[i]->key, key) == 0)
            return ct->entries[i]->value;
    return NULL;
}

static int64_t info_i64(const Rmq__ConfigTable *ct, const char *key)
{
    const char *v = info_get(ct, key);
    return v && *v ? strtoll(v, NULL, 10) : -1;
}

/* The hotTopic<i> pairs of a runtime-info answer (fr_admin.c) into hot;
 * how many. */
static size_t hot_topics_read(const Rmq__ConfigTable *ct, con_topic_count_t *hot)
{
    size_t n = 0;
    for (; n < CON_HOT_TOPICS; n++) {
        char key[48];
        snprintf(key, sizeof(key), "hotTopic%zu.name", n);
        const char *name = info_get(ct, key);
        snprintf(key, sizeof(key), "hotTopic%zu.putNums", n);
        int64_t put = info_i64(ct, key);
        if (!name || put < 0)
            break;
        snprintf(hot[n].name, sizeof(hot[n].name), "%s", name);
        hot[n].put_nums = put;
    }
    return n;
}

/* Messages stored on topic at b's previous history sample, or -1. */
static int64_t hot_topic_before(const con_broker_t *b, const char *topic)
{
    for (size_t i = 0; i < b->n_hot; i++)
        if (strcmp(b->hot[i].name, topic) == 0)
            return b->hot[i].put_nums;
    return -1;
}

/* b's first answer in the current history slot: its put and get rates and
 * those of its busiest topics since its previous sample go into the
 * history (nothing at its first sample, nor for a topic new among its
 * busiest or whose count went back: a restart or a forgotten item). */
static void broker_hist_sample(ns_console_t *con, con_broker_t *b, const Rmq__ConfigTable *ct, int64_t put,
                               int64_t get, int64_t now)
{
    con_topic_count_t hot[CON_HOT_TOPICS];
    if (b->hist_slot == con->hist_slot)
        return;
    size_t n_hot = hot_topics_read(ct, hot);
    if (b->hist_slot && now > b->hist_ms && put >= b->hist_put && b->hist_put >= 0) {
        double dt = (double)(now - b->hist_ms) / 1000.0;
        double out = get >= b->hist_get && b->hist_get >= 0 ? (double)(get - b->hist_get) / dt : 0;
        ns_hist_add(con->hist, NS_HIST_BROKER, b->addr, (double)(put - b->hist_put) / dt, out);
        for (size_t i = 0; i < n_hot; i++) {
            int64_t before = hot_topic_before(b, hot[i].name);
            if (before >= 0 && hot[i].put_nums >= before)
                ns_hist_add(con->hist, NS_HIST_TOPIC, hot[i].name, (double)(hot[i].put_nums - before) / dt, 0);
        }
    }
    b->hist_slot = con->hist_slot;
    b->hist_ms = now;
    b->hist_put = put;
    b->hist_get = get;
    memcpy(b->hot, hot, n_hot * sizeof(hot[0]));
    b->n_hot = n_hot;
}

/* Stores a runtime-info answer in b, derives its TPS from the totals and
 * samples it for the history. */
static void broker_update(ns_console_t *con, con_broker_t *b, const Rmq__ConfigTable *ct, int64_t now)
{
    if (!b->info)
        b->info = evbuffer_new();
    if (!b->info)
        return;
    evbuffer_drain(b->info, evbuffer_get_length(b->info));
    ADD_LIT(b->info, "{");
    for (size_t i = 0; i < ct->n_entries; i++) {
        if (i)
            ADD_LIT(b->info, ",");
        rmq_json_str(b->info, ct->entries[i]->key);
        ADD_LIT(b->info, ":");
        rmq_json_str(b->info, ct->entries[i]->value);
    }
    ADD_LIT(b->info, "}");
    int64_t put = info_i64(ct, "msgPutTotalTodayNow");
    int64_t get = info_i64(ct, "msgGetTransferredTotalNow");
    if (get < 0)
        get = info_i64(ct, "msgGetTotalTodayNow");
    b->max_offset = info_i64(ct, "commitLogMaxOffset");
    broker_hist_sample(con, b, ct, put, get, now);
    if (b->sample_ms > 0 && now - b->sample_ms < CON_FRESH_MS)
        return; /* too close to the last sample for a steady rate: keep that one */
    if (b->sample_ms > 0 && put >= b->put_total && b->put_total >= 0) {
        double dt = (double)(now - b->sample_ms) / 1000.0;
        b->in_tps = (double)(put - b->put_total) / dt;
        b->out_tps = get >= b->get_total && b->get_total >= 0 ? (double)(get - b->get_total) / dt : 0;
    }
    b->put_total = put;
    b->get_total = get;
    b->sample_ms = now;
}

static void render_cluster(ns_console_t *con, struct evbuffer *out);
static void render_tps(ns_console_t *con, struct evbuffer *out);

/* Every snapshot call returned: answer the jobs that waited for it. */
static void snapshot_done(ns_console_t *con)
{
    con->refreshed_ms = rmq_mono_ms();
    con_job_t *j = con->jobs;
    while (j) {
        con_job_t *next = j->next;
        if (j->waits_snapshot) {
            if (j->kind == CON_CLUSTER)
                render_cluster(con, j->out);
            else
                render_tps(con, j->out);
            job_finish(j, 200);
        }
        j = next;
    }
}

static void on_runtime_info(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    con_call_t *call = arg;
    ns_console_t *con = call->con;
    con_broker_t *b = con->closing ? NULL : broker_find(con, call->addr);
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS ||
        resp->cmd->header_case != RMQ__COMMAND__HEADER_CONFIG)
        con->extra.broker_call_errors_total++;
    if (b) {
        if (err != RMQ_OK) {
            b->ok = 0;
            snprintf(b->error, sizeof(b->error), "GET_BROKER_RUNTIME_INFO: %s", rmq_strerror(err));
        } else if (resp->cmd->status != RMQ__STATUS__SUCCESS ||
                   resp->cmd->header_case != RMQ__COMMAND__HEADER_CONFIG) {
            b->ok = 0;
            snprintf(b->error, sizeof(b->error), "GET_BROKER_RUNTIME_INFO: status %d %.150s",
                     resp->cmd->status, resp->cmd->remark ? resp->cmd->remark : "");
        } else {
            b->ok = 1;
            b->error[0] = '\0';
            broker_update(con, b, resp->cmd->config, rmq_mono_ms());
        }
    }
    free(call);
    if (--con->snapshot_pending == 0 && !con->closing)
        snapshot_done(con);
}

/* Sends GET_BROKER_RUNTIME_INFO to addr as part of the snapshot. */
static void snapshot_call(ns_console_t *con, const char *addr)
{
    con_call_t *call = calloc(1, sizeof(*call));
    rmq_client_t *cli = rmq_client_pool_get(con->pool, addr);
    Rmq__Command req = RMQ__COMMAND__INIT;
    if (!call || !cli) {
        free(call);
        LOG_WARN_RL("console: cannot query broker %s: out of memory; its data stays stale", addr);
        return;
    }
    call->con = con;
    snprintf(call->addr, sizeof(call->addr), "%s", addr);
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    con->extra.broker_calls_total++;
    rmq_err_t err = signed_call(con, cli, &req, &con->snap_cred, on_runtime_info, call);
    if (err != RMQ_OK) {
        con_broker_t *b = broker_find(con, addr);
        if (b) {
            b->ok = 0;
            snprintf(b->error, sizeof(b->error), "GET_BROKER_RUNTIME_INFO not sent: %s", rmq_strerror(err));
        }
        con->extra.broker_call_errors_total++;
        free(call);
        return;
    }
    con->snapshot_pending++;
}

/* Starts a refresh unless one is running: syncs the broker list with the
 * route and asks every live address for its runtime info. */
static void snapshot_refresh(ns_console_t *con)
{
    if (con->snapshot_pending > 0)
        return;
    Rmq__ClusterInfo *ci = ns_route_cluster_info(ns_server_route(con->ns), rmq_mono_ms(), rmq_wall_ms());
    if (!ci) {
        LOG_WARN_RL("console: cannot read the route: out of memory; serving the previous snapshot");
        snapshot_done(con);
        return;
    }
    for (size_t i = 0; i < con->n_brokers; i++)
        con->brokers[i].seen = 0;
    for (size_t i = 0; i < ci->n_brokers; i++) {
        const Rmq__BrokerData *bd = ci->brokers[i];
        for (size_t k = 0; k < bd->n_addrs; k++) {
            con_broker_t *b = broker_find(con, bd->addrs[k]->addr);
            if (!b) {
                if (con->n_brokers == CON_MAX_BROKERS)
                    continue;
                b = &con->brokers[con->n_brokers++];
                memset(b, 0, sizeof(*b));
                snprintf(b->addr, sizeof(b->addr), "%s", bd->addrs[k]->addr);
                b->put_total = b->get_total = b->max_offset = b->hist_put = b->hist_get = -1;
            }
            snprintf(b->cluster, sizeof(b->cluster), "%s", bd->cluster);
            snprintf(b->name, sizeof(b->name), "%s", bd->broker_name);
            b->id = bd->addrs[k]->broker_id;
            b->seen = 1;
        }
    }
    for (size_t i = 0; i < ci->n_live; i++) {
        con_broker_t *b = broker_find(con, ci->live[i]->broker_addr);
        if (b)
            b->last_update_ms = ci->live[i]->last_update_ms;
    }
    rmq__cluster_info__free_unpacked(ci, NULL);
    for (size_t i = 0; i < con->n_brokers;) {
        if (con->brokers[i].seen) {
            i++;
            continue;
        }
        rmq_client_pool_drop(con->pool, con->brokers[i].addr);
        broker_clear(&con->brokers[i]);
        con->brokers[i] = con->brokers[--con->n_brokers];
        memset(&con->brokers[con->n_brokers], 0, sizeof(con->brokers[0]));
    }
    for (size_t i = 0; i < con->n_brokers; i++)
        snapshot_call(con, con->brokers[i].addr);
    if (con->snapshot_pending == 0)
        snapshot_done(con);
}

/* 1 s timer: keeps the snapshot (and the TPS history) fresh while the
 * console is in use; goes quiet CON_ACTIVE_MS after the last API call. */
static void on_timer(evutil_socket_t fd, short what, void *arg)
{
    ns_console_t *con = arg;
    if (rmq_mono_ms() - con->last_api_ms > CON_ACTIVE_MS) {
        OPENSSL_cleanse(&con->snap_cred, sizeof(con->snap_cred)); /* idle: keep no secret */
        return;
    }
    snapshot_refresh(con);
    struct timeval tv = {1, 0};
    evtimer_add(con->timer, &tv);
}

/* Marks the console in use and starts the refresh timer if it was idle. */
static void console_touch(ns_console_t *con)
{
    con->last_api_ms = rmq_mono_ms();
    if (!evtimer_pending(con->timer, NULL)) {
        struct timeval tv = {1, 0};
        evtimer_add(con->timer, &tv);
    }
}

/* ---- the history -------------------------------------------------------------- */

static int64_t consume_stats_lag(const Rmq__ConsumeStats *cs);

/* A history sample of a group's lag on one broker set: added to the slot. */
static void on_group_lag(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    con_call_t *call = arg;
    ns_console_t *con = call->con;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS ||
        resp->cmd->header_case != RMQ__COMMAND__HEADER_CONSUME_STATS)
        con->extra.broker_call_errors_total++;
    else if (!con->closing)
        ns_hist_add(con->hist, NS_HIST_GROUP, call->group,
                    (double)consume_stats_lag(resp->cmd->consume_stats), 0);
    free(call);
}

/* The route's broker sets while one history slot's group samples are sent. */
typedef struct lag_round {
    ns_console_t *con;
    const Rmq__ClusterInfo *ci;
} lag_round_t;

static const char *preferred_addr(const Rmq__BrokerData *bd);

/* Sends cmd to addr for the history (signed as the snapshot), cb's call
 * naming addr and group ("" for none). */
static void history_call(ns_console_t *con, const char *addr, const char *group, Rmq__Command *cmd,
                         rmq_response_fn cb)
{
    rmq_client_t *cli = rmq_client_pool_get(con->pool, addr);
    con_call_t *call = cli ? calloc(1, sizeof(*call)) : NULL;
    if (!call)
        return;
    call->con = con;
    snprintf(call->addr, sizeof(call->addr), "%s", addr);
    snprintf(call->group, sizeof(call->group), "%s", group);
    con->extra.broker_calls_total++;
    if (signed_call(con, cli, cmd, &con->snap_cred, cb, call) != RMQ_OK) {
        con->extra.broker_call_errors_total++;
        free(call);
    }
}

/* Asks addr for group's consume stats; the answer goes into the group's
 * history slot. */
static void ask_group_lag(ns_console_t *con, const char *addr, const char *group)
{
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    Rmq__ConsumeStatsRequest csr = RMQ__CONSUME_STATS_REQUEST__INIT;
    csr.consumer_group = (char *)group;
    csr.topic = "";
    cmd.code = RMQ__REQUEST_CODE__GET_CONSUME_STATS;
    cmd.header_case = RMQ__COMMAND__HEADER_CONSUME_STATS_REQ;
    cmd.consume_stats_req = &csr;
    history_call(con, addr, group, &cmd, on_group_lag);
}

/* Asks every broker set for a kept group's lag. */
static void group_lag_sample(const char *group, void *arg)
{
    lag_round_t *r = arg;
    for (size_t i = 0; i < r->ci->n_brokers; i++) {
        const char *addr = preferred_addr(r->ci->brokers[i]);
        if (addr)
            ask_group_lag(r->con, addr, group);
    }
}

/* 1 if group is among the n names of asked. */
static int group_asked(const char *const *asked, size_t n, const char *group)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(asked[i], group) == 0)
            return 1;
    return 0;
}

/* One broker set's consumer offset table: the groups in it that the history
 * does not keep are asked for their lag there, so that a group's history
 * starts before anybody opens it (its first slot counts the broker sets
 * that answer before it is kept). At most NS_HIST_GROUPS a table and
 * period, where the previous period's stopped. */
static void on_group_discovery(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    con_call_t *call = arg;
    ns_console_t *con = call->con;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS ||
        resp->cmd->header_case != RMQ__COMMAND__HEADER_CONSUMER_OFFSET_TABLE) {
        con->extra.broker_call_errors_total++;
        free(call);
        return;
    }
    const Rmq__ConsumerOffsetTable *t = resp->cmd->consumer_offset_table;
    const char *asked[NS_HIST_GROUPS];
    size_t n_asked = 0, start = t->n_entries ? (size_t)(con->hist_slot * NS_HIST_GROUPS % t->n_entries) : 0;
    for (size_t k = 0; !con->closing && k < t->n_entries && n_asked < NS_HIST_GROUPS; k++) {
        const char *group = t->entries[(start + k) % t->n_entries]->group;
        if (ns_hist_kept(con->hist, NS_HIST_GROUP, group) || group_asked(asked, n_asked, group))
            continue;
        asked[n_asked++] = group;
        ask_group_lag(con, call->addr, group);
    }
    free(call);
}

/* Asks every broker set for its consumer offset table (on_group_discovery). */
static void discover_groups(const lag_round_t *r)
{
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    cmd.code = RMQ__REQUEST_CODE__GET_ALL_CONSUMER_OFFSET;
    for (size_t i = 0; i < r->ci->n_brokers; i++) {
        const char *addr = preferred_addr(r->ci->brokers[i]);
        if (addr)
            history_call(r->con, addr, "", &cmd, on_group_discovery);
    }
}

/* Every history period, watched or not: opens the next slot, refreshes the
 * snapshot (brokers' and topics' rates), samples the kept groups' lag and
 * looks for groups not kept yet. */
static void on_hist_timer(evutil_socket_t fd, short what, void *arg)
{
    ns_console_t *con = arg;
    ns_hist_tick(con->hist, rmq_wall_ms());
    con->hist_slot++;
    snapshot_refresh(con);
    lag_round_t r = {con, ns_route_cluster_info(ns_server_route(con->ns), rmq_mono_ms(), rmq_wall_ms())};
    if (!r.ci)
        return;
    ns_hist_each(con->hist, NS_HIST_GROUP, group_lag_sample, &r);
    discover_groups(&r);
    rmq__cluster_info__free_unpacked((Rmq__ClusterInfo *)r.ci, NULL);
}

/* ---- rendering the snapshot ----------------------------------------------- */

static void json_kv_str(struct evbuffer *out, const char *key, const char *value, int comma)
{
    evbuffer_add_printf(out, "%s\"%s\":", comma ? "," : "", key);
    rmq_json_str(out, value);
}

/* The master of b's broker set (id 0), or NULL. */
static const con_broker_t *master_of(const ns_console_t *con, const con_broker_t *b)
{
    for (size_t i = 0; i < con->n_brokers; i++)
        if (con->brokers[i].id == 0 && strcmp(con->brokers[i].name, b->name) == 0 &&
            strcmp(con->brokers[i].cluster, b->cluster) == 0)
            return &con->brokers[i];
    return NULL;
}

/* A slave's replication lag in bytes: the master's own report for that
 * broker id if it has one, else the difference of commit-log max offsets; -1 unknown. */
static int64_t slave_lag(const ns_console_t *con, const con_broker_t *b)
{
    const con_broker_t *m = master_of(con, b);
    if (!m || !m->ok || !b->ok)
        return -1;
    size_t len = evbuffer_get_length(m->info);
    char *text = (char *)evbuffer_pullup(m->info, (ev_ssize_t)len);
    for (int k = 0; k < 16 && text; k++) {
        char key[64], *at;
        snprintf(key, sizeof(key), "\"haSlave%d.brokerId\":\"", k);
        if (!(at = memmem(text, len, key, strlen(key))))
            break;
        if (strtoll(at + strlen(key), NULL, 10) != b->id)
            continue;
        snprintf(key, sizeof(key), "\"haSlave%d.lagBytes\":\"", k);
        if ((at = memmem(text, len, key, strlen(key))))
            return strtoll(at + strlen(key), NULL, 10);
    }
    if (m->max_offset >= 0 && b->max_offset >= 0)
        return m->max_offset > b->max_offset ? m->max_offset - b->max_offset : 0;
    return -1;
}

static void render_cluster(ns_console_t *con, struct evbuffer *out)
{
    ns_route_t *rt = ns_server_route(con->ns);
    evbuffer_add_printf(out,
                        "{\"namesrv\":{\"brokersLive\":%zu,\"brokerNames\":%zu,\"topics\":%zu,"
                        "\"connections\":%zu},\"nowMs\":%" PRId64 ",\"brokers\":[",
                        ns_route_live_count(rt), ns_route_broker_name_count(rt), ns_route_topic_count(rt),
                        ns_server_conn_count(con->ns), rmq_wall_ms());
    for (size_t i = 0; i < con->n_brokers; i++) {
        const con_broker_t *b = &con->brokers[i];
        if (i)
            ADD_LIT(out, ",");
        ADD_LIT(out, "{");
        json_kv_str(out, "cluster", b->cluster, 0);
        json_kv_str(out, "name", b->name, 1);
        json_kv_str(out, "addr", b->addr, 1);
        evbuffer_add_printf(out, ",\"id\":%" PRId64 ",\"ok\":%s,\"lastUpdateMs\":%" PRId64, b->id,
                            b->ok ? "true" : "false", b->last_update_ms);
        json_kv_str(out, "error", b->error, 1);
        evbuffer_add_printf(out, ",\"inTps\":%.2f,\"outTps\":%.2f", b->in_tps, b->out_tps);
        if (b->id != 0)
            evbuffer_add_printf(out, ",\"lagBytes\":%" PRId64, slave_lag(con, b));
        evbuffer_add_printf(out, ",\"info\":");
        if (b->info && evbuffer_get_length(b->info))
            evbuffer_add(out, evbuffer_pullup(b->info, -1), evbuffer_get_length(b->info));
        else
            ADD_LIT(out, "{}");
        ADD_LIT(out, "}");
    }
    ADD_LIT(out, "]}");
}

/* One topic of the history as {"name":..,"points":[[t,tps],...]}. */
typedef struct tps_topics {
    const ns_console_t *con;
    struct evbuffer *out;
    size_t n;
} tps_topics_t;

static void render_tps_topic(const char *name, void *arg)
{
    tps_topics_t *t = arg;
    evbuffer_add_printf(t->out, "%s{", t->n++ ? "," : "");
    json_kv_str(t->out, "name", name, 0);
    ADD_LIT(t->out, ",\"points\":");
    ns_hist_render(t->con->hist, NS_HIST_TOPIC, name, 1, t->out);
    ADD_LIT(t->out, "}");
}

/* /api/tps: the hour's history of each broker address and of the topics kept. */
static void render_tps(ns_console_t *con, struct evbuffer *out)
{
    tps_topics_t topics = {con, out, 0};
    evbuffer_add_printf(out, "{\"nowMs\":%" PRId64 ",\"periodMs\":%" PRId64 ",\"slots\":%d,\"brokers\":[",
                        rmq_wall_ms(), con->hist_period_ms, NS_HIST_SLOTS);
    for (size_t i = 0; i < con->n_brokers; i++) {
        const con_broker_t *b = &con->brokers[i];
        if (i)
            ADD_LIT(out, ",");
        ADD_LIT(out, "{");
        json_kv_str(out, "name", b->name, 0);
        json_kv_str(out, "addr", b->addr, 1);
        evbuffer_add_printf(out, ",\"id\":%" PRId64 ",\"points\":", b->id);
        ns_hist_render(con->hist, NS_HIST_BROKER, b->addr, 0, out);
        ADD_LIT(out, "}");
    }
    evbuffer_add_printf(out, "],\"topicsKept\":%zu,\"topicsMax\":%d,\"topics\":[",
                        ns_hist_count(con->hist, NS_HIST_TOPIC), NS_HIST_TOPICS);
    ns_hist_each(con->hist, NS_HIST_TOPIC, render_tps_topic, &topics);
    ADD_LIT(out, "]}");
}

/* /api/cluster and /api/tps: from the snapshot, refreshed first if stale. */
static void h_snapshot(struct evhttp_request *req, ns_console_t *con, enum con_kind kind)
{
    con_job_t *j = job_new(con, req, kind);
    if (!j)
        return;
    if (con->refreshed_ms && rmq_mono_ms() - con->refreshed_ms < CON_FRESH_MS && con->snapshot_pending == 0) {
        if (kind == CON_CLUSTER)
            render_cluster(con, j->out);
        else
            render_tps(con, j->out);
        job_finish(j, 200);
        return;
    }
    j->waits_snapshot = 1;
    snapshot_refresh(con);
}

/* ---- per-request fan-out ---------------------------------------------------- */

/* Closes one group's JSON: its brokers, then its clients and its lag over
 * the history, which it joins (at its lag now) unless it is kept already. */
static void group_finish(con_job_t *j)
{
    ns_hist_t *h = j->con->hist;
    if (j->lag_total >= 0 && !ns_hist_kept(h, NS_HIST_GROUP, j->arg))
        ns_hist_add(h, NS_HIST_GROUP, j->arg, (double)j->lag_total, 0);
    ADD_LIT(j->out, "],\"clients\":[");
    evbuffer_add_buffer(j->out, j->clients);
    ADD_LIT(j->out, "],\"lagHistory\":");
    ns_hist_render(h, NS_HIST_GROUP, j->arg, 1, j->out);
    ADD_LIT(j->out, "}");
}

static void job_call_done(con_job_t *j)
{
    if (--j->pending > 0)
        return;
    if (j->kind == CON_MESSAGE) {
        job_finish(j, 200);
        return;
    }
    if (j->kind == CON_GROUP)
        group_finish(j);
    else
        ADD_LIT(j->out, "]}");
    job_finish(j, 200);
}

/* Writes {"name":..,"addr":..,"ok":false,"error":..} for a failed call. */
static void job_call_error(con_job_t *j, const con_call_t *call, const char *what, rmq_err_t err,
                           const rmq_frame_t *resp)
{
    char why[300];
    if (err != RMQ_OK)
        snprintf(why, sizeof(why), "%s: %s", what, rmq_strerror(err));
    else
        snprintf(why, sizeof(why), "%s: status %d %.200s", what, resp->cmd->status,
                 resp->cmd->remark ? resp->cmd->remark : "");
    j->con->extra.broker_call_errors_total++;
    if (j->kind == CON_MESSAGE) {
        ADD_LIT(j->out, "{\"found\":false,");
        json_kv_str(j->out, "addr", call->addr, 0);
        json_kv_str(j->out, "error", why, 1);
        ADD_LIT(j->out, "}");
        return;
    }
    job_sep(j);
    ADD_LIT(j->out, "{");
    json_kv_str(j->out, "name", call->broker_name, 0);
    json_kv_str(j->out, "addr", call->addr, 1);
    ADD_LIT(j->out, ",\"ok\":false");
    json_kv_str(j->out, "error", why, 1);
    ADD_LIT(j->out, "}");
}

static void on_topic_stats(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    con_call_t *call = arg;
    con_job_t *j = call->job;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS ||
        resp->cmd->header_case != RMQ__COMMAND__HEADER_TOPIC_STATS) {
        job_call_error(j, call, "GET_TOPIC_STATS_INFO", err, resp);
    } else {
        const Rmq__TopicStats *ts = resp->cmd->topic_stats;
        job_sep(j);
        ADD_LIT(j->out, "{");
        json_kv_str(j->out, "name", call->broker_name, 0);
        json_kv_str(j->out, "addr", call->addr, 1);
        ADD_LIT(j->out, ",\"ok\":true,\"queues\":[");
        for (size_t i = 0; i < ts->n_queues; i++)
            evbuffer_add_printf(j->out,
                                "%s{\"queueId\":%d,\"minOffset\":%" PRId64 ",\"maxOffset\":%" PRId64
                                ",\"lastUpdateMs\":%" PRId64 "}",
                                i ? "," : "", ts->queues[i]->queue_id, ts->queues[i]->min_offset,
                                ts->queues[i]->max_offset, ts->queues[i]->last_update_timestamp);
        ADD_LIT(j->out, "]}");
    }
    free(call);
    job_call_done(j);
}

/* Messages of q the group has not committed. */
static int64_t queue_lag(const Rmq__QueueConsumeStats *q)
{
    return q->broker_offset > q->consumer_offset ? q->broker_offset - q->consumer_offset : 0;
}

/* Messages of q a pop consumer holds: popped, not acked. */
static int64_t queue_inflight(const Rmq__QueueConsumeStats *q)
{
    return q->pull_offset > q->consumer_offset ? q->pull_offset - q->consumer_offset : 0;
}

/* The group's lag over every queue of one broker's answer. */
static int64_t consume_stats_lag(const Rmq__ConsumeStats *cs)
{
    int64_t lag = 0;
    for (size_t i = 0; i < cs->n_queues; i++)
        lag += queue_lag(cs->queues[i]);
    return lag;
}

static void on_consume_stats(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    con_call_t *call = arg;
    con_job_t *j = call->job;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS ||
        resp->cmd->header_case != RMQ__COMMAND__HEADER_CONSUME_STATS) {
        job_call_error(j, call, "GET_CONSUME_STATS", err, resp);
    } else {
        const Rmq__ConsumeStats *cs = resp->cmd->consume_stats;
        job_sep(j);
        ADD_LIT(j->out, "{");
        json_kv_str(j->out, "name", call->broker_name, 0);
        json_kv_str(j->out, "addr", call->addr, 1);
        ADD_LIT(j->out, ",\"ok\":true,\"queues\":[");
        j->lag_total = (j->lag_total < 0 ? 0 : j->lag_total) + consume_stats_lag(cs);
        for (size_t i = 0; i < cs->n_queues; i++) {
            const Rmq__QueueConsumeStats *q = cs->queues[i];
            evbuffer_add(j->out, i ? ",{" : "{", i ? 2 : 1);
            json_kv_str(j->out, "topic", q->topic, 0);
            evbuffer_add_printf(j->out,
                                ",\"queueId\":%d,\"brokerOffset\":%" PRId64 ",\"consumerOffset\":%" PRId64
                                ",\"lag\":%" PRId64 ",\"inflight\":%" PRId64 ",\"lastTimestampMs\":%" PRId64 "}",
                                q->queue_id, q->broker_offset, q->consumer_offset, queue_lag(q), queue_inflight(q),
                                q->last_timestamp);
        }
        ADD_LIT(j->out, "]}");
    }
    free(call);
    job_call_done(j);
}

/* Appends client c to the group's clients unless one with its id is there
 * (a consumer heartbeats to every broker set). */
static void client_json(con_job_t *j, const Rmq__ConsumerClient *c)
{
    struct evbuffer *id = evbuffer_new();
    if (!id)
        return;
    ADD_LIT(id, "{\"clientId\":");
    rmq_json_str(id, c->client_id);
    size_t idlen = evbuffer_get_length(id), have = evbuffer_get_length(j->clients);
    const char *text = have ? (const char *)evbuffer_pullup(j->clients, -1) : NULL;
    if (!text || !memmem(text, have, evbuffer_pullup(id, -1), idlen)) {
        if (have)
            ADD_LIT(j->clients, ",");
        evbuffer_add_buffer(j->clients, id);
        json_kv_str(j->clients, "host", c->addr, 1);
        json_kv_str(j->clients, "language", c->language, 1);
        evbuffer_add_printf(j->clients, ",\"version\":%d", c->version);
        json_kv_str(j->clients, "protocol", c->protocol, 1);
        evbuffer_add_printf(j->clients, ",\"lastHeartbeatMs\":%" PRId64 "}", c->last_heartbeat_ms);
    }
    evbuffer_free(id);
}

/* GET_CONSUMER_LIST_BY_GROUP's answer: the group's clients on one broker
 * set (none online there is no error). */
static void on_consumer_list(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    con_call_t *call = arg;
    con_job_t *j = call->job;
    if (err == RMQ_OK && resp->cmd->status == RMQ__STATUS__SUCCESS &&
        resp->cmd->header_case == RMQ__COMMAND__HEADER_CONSUMER_LIST) {
        for (size_t i = 0; i < resp->cmd->consumer_list->n_clients; i++)
            client_json(j, resp->cmd->consumer_list->clients[i]);
    } else if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__CONSUMER_NOT_ONLINE) {
        job_call_error(j, call, "GET_CONSUMER_LIST_BY_GROUP", err, resp);
    }
    free(call);
    job_call_done(j);
}

static void on_all_offsets(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    con_call_t *call = arg;
    con_job_t *j = call->job;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS ||
        resp->cmd->header_case != RMQ__COMMAND__HEADER_CONSUMER_OFFSET_TABLE) {
        job_call_error(j, call, "GET_ALL_CONSUMER_OFFSET", err, resp);
    } else {
        const Rmq__ConsumerOffsetTable *t = resp->cmd->consumer_offset_table;
        job_sep(j);
        ADD_LIT(j->out, "{");
        json_kv_str(j->out, "name", call->broker_name, 0);
        json_kv_str(j->out, "addr", call->addr, 1);
        ADD_LIT(j->out, ",\"ok\":true,\"entries\":[");
        for (size_t i = 0; i < t->n_entries; i++) {
            evbuffer_add(j->out, i ? ",{" : "{", i ? 2 : 1);
            json_kv_str(j->out, "group", t->entries[i]->group, 0);
            json_kv_str(j->out, "topic", t->entries[i]->topic, 1);
            evbuffer_add_printf(j->out, ",\"queues\":%zu}", t->entries[i]->n_offsets);
        }
        ADD_LIT(j->out, "]}");
    }
    free(call);
    job_call_done(j);
}

/* Appends the decoded record (or why not) to the job's JSON. */
static void message_json(con_job_t *j, const con_call_t *call, const uint8_t *data, size_t len)
{
    rmq_record_t rec;
    rmq_err_t err = rmq_record_decode(data, len, 1, &rec);
    if (err != RMQ_OK) {
        ADD_LIT(j->out, "{\"found\":false,");
        json_kv_str(j->out, "addr", call->addr, 0);
        char why[128];
        snprintf(why, sizeof(why), "the record does not decode: %s", rmq_strerror(err));
        json_kv_str(j->out, "error", why, 1);
        ADD_LIT(j->out, "}");
        return;
    }
    ADD_LIT(j->out, "{\"found\":true,");
    json_kv_str(j->out, "addr", call->addr, 0);
    ADD_LIT(j->out, ",\"topic\":");
    rmq_json_strn(j->out, rec.topic, rec.topic_len);
    size_t vlen = 0;
    const char *v = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_TAGS, &vlen);
    ADD_LIT(j->out, ",\"tags\":");
    rmq_json_strn(j->out, v ? v : "", v ? vlen : 0);
    v = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_KEYS, &vlen);
    ADD_LIT(j->out, ",\"keys\":");
    rmq_json_strn(j->out, v ? v : "", v ? vlen : 0);
    char born[RMQ_HOST_TEXT_MAX];
    rmq_record_host_text(&rec, 0, born, sizeof born);
    evbuffer_add_printf(j->out,
                        ",\"queueId\":%d,\"queueOffset\":%" PRId64 ",\"commitLogOffset\":%" PRId64
                        ",\"bornTimestampMs\":%" PRId64 ",\"storeTimestampMs\":%" PRId64
                        ",\"bornHost\":\"%s\",\"reconsumeTimes\":%d,\"sysFlag\":%d,\"bodyLength\":%u",
                        rec.queue_id, rec.queue_offset, rec.phys_offset, rec.born_timestamp, rec.store_timestamp,
                        born, rec.reconsume_times, rec.sys_flag, rec.body_len);
    /* properties: name \x01 value \x02 ...; shown as one readable string */
    ADD_LIT(j->out, ",\"properties\":");
    char props[2048];
    size_t n = rec.properties_len < sizeof(props) - 1 ? rec.properties_len : sizeof(props) - 1;
    for (size_t i = 0; i < n; i++)
        props[i] = rec.properties[i] == 1 ? '=' : rec.properties[i] == 2 ? ';' : rec.properties[i];
    rmq_json_strn(j->out, props, n);
    ADD_LIT(j->out, ",\"body\":");
    rmq_json_strn(j->out, (const char *)rec.body, rec.body_len < CON_BODY_SHOWN ? rec.body_len : CON_BODY_SHOWN);
    evbuffer_add_printf(j->out, ",\"bodyTruncated\":%s}", rec.body_len > CON_BODY_SHOWN ? "true" : "false");
}

static void on_view_message(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    con_call_t *call = arg;
    con_job_t *j = call->job;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS || !resp->body) {
        job_call_error(j, call, "VIEW_MESSAGE_BY_ID", err, resp);
    } else {
        size_t len = evbuffer_get_length(resp->body);
        message_json(j, call, evbuffer_pullup(resp->body, (ev_ssize_t)len), len);
    }
    free(call);
    job_call_done(j);
}

/* Sends req to addr for job j; the answer goes to cb. Failure to send is
 * written as that broker's error at once. */
static void job_call(con_job_t *j, const char *addr, const char *broker_name, Rmq__Command *req,
                     rmq_response_fn cb)
{
    con_call_t *call = calloc(1, sizeof(*call));
    rmq_client_t *cli = rmq_client_pool_get(j->con->pool, addr);
    if (call) {
        call->con = j->con;
        call->job = j;
        snprintf(call->addr, sizeof(call->addr), "%s", addr);
        snprintf(call->broker_name, sizeof(call->broker_name), "%s", broker_name);
    }
    j->con->extra.broker_calls_total++;
    rmq_err_t err = call && cli ? signed_call(j->con, cli, req, &j->cred, cb, call) : RMQ_ENOMEM;
    if (err != RMQ_OK) {
        if (call)
            job_call_error(j, call, rmq_request_name(req->code), err, NULL);
        free(call);
        return;
    }
    j->pending++;
}

/* The address to ask for broker set bd: its master, else its lowest id. */
static const char *preferred_addr(const Rmq__BrokerData *bd)
{
    const Rmq__BrokerAddr *best = NULL;
    for (size_t i = 0; i < bd->n_addrs; i++)
        if (!best || bd->addrs[i]->broker_id < best->broker_id)
            best = bd->addrs[i];
    return best ? best->addr : NULL;
}

/* Sends req to one address per broker set in ci (all sets) and finishes
 * the job when all answered. */
static void job_fan_out(con_job_t *j, const Rmq__BrokerData *const *bds, size_t n, Rmq__Command *req,
                        rmq_response_fn cb)
{
    j->pending = 1; /* held until every call is queued */
    for (size_t i = 0; i < n; i++) {
        const char *addr = preferred_addr(bds[i]);
        if (addr)
            job_call(j, addr, bds[i]->broker_name, req, cb);
    }
    job_call_done(j);
}

static void h_topic(struct evhttp_request *req, ns_console_t *con)
{
    char name[NS_NAME_MAX + 1];
    rmq_err_t err;
    if (!rmq_http_query(req, "name", name, sizeof(name)) || !name[0]) {
        rmq_http_replyf(req, 400, "/api/topic needs ?name=TOPIC\n");
        return;
    }
    Rmq__TopicRouteData *rd = ns_route_topic(ns_server_route(con->ns), name, &err);
    if (!rd) {
        rmq_http_replyf(req, err == RMQ_ENOTFOUND ? 404 : 503, "topic %s: %s\n", name,
                        err == RMQ_ENOTFOUND ? "not in the route" : "out of memory");
        return;
    }
    con_job_t *j = job_new(con, req, CON_TOPIC);
    if (j) {
        Rmq__Command cmd = RMQ__COMMAND__INIT;
        Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
        tr.topic = name;
        cmd.code = RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO;
        cmd.header_case = RMQ__COMMAND__HEADER_TOPIC;
        cmd.topic = &tr;
        ADD_LIT(j->out, "{\"topic\":");
        rmq_json_str(j->out, name);
        ADD_LIT(j->out, ",\"queueData\":[");
        for (size_t i = 0; i < rd->n_queue_datas; i++) {
            const Rmq__QueueData *qd = rd->queue_datas[i];
            evbuffer_add(j->out, i ? ",{" : "{", i ? 2 : 1);
            json_kv_str(j->out, "name", qd->broker_name, 0);
            evbuffer_add_printf(j->out, ",\"readQueues\":%d,\"writeQueues\":%d,\"perm\":%d}", qd->read_queue_nums,
                                qd->write_queue_nums, qd->perm);
        }
        ADD_LIT(j->out, "],\"brokers\":[");
        job_fan_out(j, (const Rmq__BrokerData *const *)rd->broker_datas, rd->n_broker_datas, &cmd, on_topic_stats);
    }
    rmq__topic_route_data__free_unpacked(rd, NULL);
}

/* One group: per broker set its consume stats and its clients (two calls
 * each), answered together. */
static void group_fan_out(con_job_t *j, const Rmq__ClusterInfo *ci)
{
    Rmq__Command stats = RMQ__COMMAND__INIT, list = RMQ__COMMAND__INIT;
    Rmq__ConsumeStatsRequest csr = RMQ__CONSUME_STATS_REQUEST__INIT;
    Rmq__GroupRequest gr = RMQ__GROUP_REQUEST__INIT;
    csr.consumer_group = gr.consumer_group = j->arg;
    csr.topic = "";
    stats.code = RMQ__REQUEST_CODE__GET_CONSUME_STATS;
    stats.header_case = RMQ__COMMAND__HEADER_CONSUME_STATS_REQ;
    stats.consume_stats_req = &csr;
    list.code = RMQ__REQUEST_CODE__GET_CONSUMER_LIST_BY_GROUP;
    list.header_case = RMQ__COMMAND__HEADER_GROUP;
    list.group = &gr;
    j->lag_total = -1;
    ADD_LIT(j->out, "{\"group\":");
    rmq_json_str(j->out, j->arg);
    ADD_LIT(j->out, ",\"brokers\":[");
    j->pending = 1; /* held until every call is queued */
    for (size_t i = 0; i < ci->n_brokers; i++) {
        const char *addr = preferred_addr(ci->brokers[i]);
        if (!addr)
            continue;
        job_call(j, addr, ci->brokers[i]->broker_name, &stats, on_consume_stats);
        job_call(j, addr, ci->brokers[i]->broker_name, &list, on_consumer_list);
    }
    job_call_done(j);
}

static void h_groups(struct evhttp_request *req, ns_console_t *con)
{
    char group[NS_NAME_MAX + 1];
    int one = rmq_http_query(req, "group", group, sizeof(group)) && group[0];
    Rmq__ClusterInfo *ci = ns_route_cluster_info(ns_server_route(con->ns), rmq_mono_ms(), rmq_wall_ms());
    if (!ci) {
        rmq_http_replyf(req, 503, "out of memory\n");
        return;
    }
    con_job_t *j = job_new(con, req, one ? CON_GROUP : CON_GROUPS);
    if (j && one && !(j->clients = evbuffer_new())) {
        rmq_http_replyf(req, 503, "out of memory\n");
        j->req = NULL;
        job_finish(j, 503);
        j = NULL;
    }
    if (j && one) {
        snprintf(j->arg, sizeof(j->arg), "%s", group);
        group_fan_out(j, ci);
    } else if (j) {
        Rmq__Command cmd = RMQ__COMMAND__INIT;
        cmd.code = RMQ__REQUEST_CODE__GET_ALL_CONSUMER_OFFSET;
        ADD_LIT(j->out, "{\"brokers\":[");
        job_fan_out(j, (const Rmq__BrokerData *const *)ci->brokers, ci->n_brokers, &cmd, on_all_offsets);
    }
    rmq__cluster_info__free_unpacked(ci, NULL);
}

static void h_message(struct evhttp_request *req, ns_console_t *con)
{
    char id[64], addr[64];
    int64_t offset;
    if (!rmq_http_query(req, "id", id, sizeof(id)) || rmq_msg_id_parse(id, addr, sizeof(addr), &offset) != RMQ_OK) {
        rmq_http_replyf(req, 400, "/api/message needs ?id= with an offset message id (32 or 56 hex digits)\n");
        return;
    }
    /* Only ask addresses the route knows: the console must not become a
     * way to make the name server connect anywhere. */
    int known = 0;
    Rmq__ClusterInfo *ci = ns_route_cluster_info(ns_server_route(con->ns), rmq_mono_ms(), rmq_wall_ms());
    for (size_t i = 0; ci && i < ci->n_brokers; i++)
        for (size_t k = 0; k < ci->brokers[i]->n_addrs; k++)
            known |= rmq_addr_equal(ci->brokers[i]->addrs[k]->addr, addr);
    if (ci)
        rmq__cluster_info__free_unpacked(ci, NULL);
    if (!known) {
        rmq_http_replyf(req, 404, "message id %s names broker %s, which is not in the route\n", id, addr);
        return;
    }
    con_job_t *j = job_new(con, req, CON_MESSAGE);
    if (!j)
        return;
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    Rmq__ViewMessageRequest vm = RMQ__VIEW_MESSAGE_REQUEST__INIT;
    vm.offset = offset;
    cmd.code = RMQ__REQUEST_CODE__VIEW_MESSAGE_BY_ID;
    cmd.header_case = RMQ__COMMAND__HEADER_VIEW_MESSAGE;
    cmd.view_message = &vm;
    j->pending = 1;
    job_call(j, addr, "", &cmd, on_view_message);
    job_call_done(j);
}

/* /api/topics: every topic with its broker sets' queue counts, from the route. */
static void h_topics(struct evhttp_request *req, ns_console_t *con)
{
    ns_route_t *rt = ns_server_route(con->ns);
    Rmq__TopicList *tl = ns_route_topic_list(rt);
    struct evbuffer *out = evbuffer_new();
    if (!tl || !out) {
        if (tl)
            rmq__topic_list__free_unpacked(tl, NULL);
        if (out)
            evbuffer_free(out);
        rmq_http_replyf(req, 503, "out of memory\n");
        return;
    }
    evbuffer_add_printf(out, "{\"count\":%zu,\"topics\":[", tl->n_topics);
    for (size_t i = 0; i < tl->n_topics && i < CON_MAX_TOPICS; i++) {
        rmq_err_t err;
        Rmq__TopicRouteData *rd = ns_route_topic(rt, tl->topics[i], &err);
        evbuffer_add(out, i ? ",{" : "{", i ? 2 : 1);
        json_kv_str(out, "name", tl->topics[i], 0);
        ADD_LIT(out, ",\"brokers\":[");
        for (size_t k = 0; rd && k < rd->n_queue_datas; k++) {
            const Rmq__QueueData *qd = rd->queue_datas[k];
            evbuffer_add(out, k ? ",{" : "{", k ? 2 : 1);
            json_kv_str(out, "name", qd->broker_name, 0);
            evbuffer_add_printf(out, ",\"readQueues\":%d,\"writeQueues\":%d,\"perm\":%d}", qd->read_queue_nums,
                                qd->write_queue_nums, qd->perm);
        }
        ADD_LIT(out, "]}");
        if (rd)
            rmq__topic_route_data__free_unpacked(rd, NULL);
    }
    ADD_LIT(out, "]}");
    rmq__topic_list__free_unpacked(tl, NULL);
    rmq_http_reply(req, 200, "application/json", out);
    evbuffer_free(out);
}

/* /api/controller: the embedded controller's view; 404 without one. */
static void h_controller(struct evhttp_request *req, ns_console_t *con)
{
    const ns_controller_t *ctl = ns_server_controller(con->ns);
    struct evbuffer *out;

    if (!ctl) {
        rmq_http_replyf(req, 404, "no controller in this name server (enableControllerInNamesrv=false)\n");
        return;
    }
    if (!(out = evbuffer_new())) {
        rmq_http_replyf(req, 503, "out of memory\n");
        return;
    }
    ns_console_ctl_render(ctl, out);
    rmq_http_reply(req, 200, "application/json", out);
    evbuffer_free(out);
}

/* ---- HTTP entry points -------------------------------------------------------- */

static void h_metrics(struct evhttp_request *req, void *arg)
{
    ns_console_t *con = arg;
    struct evbuffer *out = evbuffer_new();
    con->extra.http_requests_total++;
    if (!out) {
        rmq_http_replyf(req, 503, "out of memory\n");
        return;
    }
    ns_metrics_render(con->ns, &con->extra, out);
    rmq_http_reply(req, 200, "text/plain; version=0.0.4; charset=utf-8", out);
    evbuffer_free(out);
}

static void h_api(struct evhttp_request *req, void *arg)
{
    ns_console_t *con = arg;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    rmq_acl_credentials_t cred;
    con->extra.http_requests_total++;
    console_touch(con);
    if (rmq_http_account(req, &cred)) {
        con->snap_cred = cred;
        OPENSSL_cleanse(&cred, sizeof(cred));
    }
    if (strcmp(path, "/api/cluster") == 0)
        h_snapshot(req, con, CON_CLUSTER);
    else if (strcmp(path, "/api/tps") == 0)
        h_snapshot(req, con, CON_TPS);
    else if (strcmp(path, "/api/topics") == 0)
        h_topics(req, con);
    else if (strcmp(path, "/api/topic") == 0)
        h_topic(req, con);
    else if (strcmp(path, "/api/groups") == 0)
        h_groups(req, con);
    else if (strcmp(path, "/api/message") == 0)
        h_message(req, con);
    else if (strcmp(path, "/api/controller") == 0)
        h_controller(req, con);
    else
        rmq_http_replyf(req, 404, "no such API: %s\n", path);
}

/* Static files: "/" is index.html. */
static void h_static(struct evhttp_request *req, void *arg)
{
    ns_console_t *con = arg;
    const char *path = evhttp_uri_get_path(evhttp_request_get_evhttp_uri(req));
    con->extra.http_requests_total++;
    if (!path || strcmp(path, "/") == 0 || path[0] == '\0')
        path = "/index.html";
    for (size_t i = 0; i < ns_console_asset_count; i++) {
        const ns_asset_t *a = &ns_console_assets[i];
        if (strcmp(a->path, path) != 0)
            continue;
        struct evbuffer *out = evbuffer_new();
        if (!out) {
            rmq_http_replyf(req, 503, "out of memory\n");
            return;
        }
        evbuffer_add_reference(out, a->data, a->len, NULL, NULL);
        rmq_http_reply(req, 200, a->content_type, out);
        evbuffer_free(out);
        return;
    }
    rmq_http_replyf(req, 404, "not found: %s\n", path);
}

/* Every /api/... path goes through h_api; evhttp routes are exact, so each is listed. */
static const char *const api_paths[] = {"/api/cluster", "/api/tps", "/api/topics", "/api/topic",
                                        "/api/groups", "/api/message", "/api/controller"};

ns_console_t *ns_console_new(ns_server_t *ns, struct event_base *base, const rmq_security_t *sec,
                             int64_t hist_period_ms)
{
    ns_console_t *con = calloc(1, sizeof(*con));
    rmq_client_opts_t copts = {0};
    if (!con)
        return NULL;
    copts.ssl_ctx = sec->client_ctx;
    if (sec->acl) {
        copts.sign = rmq_acl_signer;
        copts.sign_arg = &con->signer;
    }
    con->ns = ns;
    con->base = base;
    con->extra.start_wall_ms = rmq_wall_ms();
    copts.name = "console";
    copts.connect_timeout_ms = 1000;
    con->brokers = calloc(CON_MAX_BROKERS, sizeof(*con->brokers));
    con->http = rmq_http_new(base, "namesrv");
    con->pool = rmq_client_pool_new(base, &copts);
    con->timer = evtimer_new(base, on_timer, con);
    con->hist = ns_hist_new();
    con->hist_period_ms = hist_period_ms;
    con->hist_timer = event_new(base, -1, EV_PERSIST, on_hist_timer, con);
    if (!con->brokers || !con->http || !con->pool || !con->timer || !con->hist || !con->hist_timer) {
        ns_console_free(con);
        return NULL;
    }
    con->sec = sec;
    rmq_http_route(con->http, "/metrics", RMQ_HTTP_ACCOUNT, h_metrics, con);
    for (size_t i = 0; i < sizeof(api_paths) / sizeof(api_paths[0]); i++)
        rmq_http_route(con->http, api_paths[i], RMQ_HTTP_ADMIN, h_api, con);
    rmq_http_fallback(con->http, RMQ_HTTP_ADMIN, h_static, con);
    return con;
}

rmq_err_t ns_console_start(ns_console_t *con, const char *host, int port, char *err, size_t errlen)
{
    struct timeval period = {con->hist_period_ms / 1000, (con->hist_period_ms % 1000) * 1000};
    rmq_err_t rc = rmq_http_secure(con->http, con->sec, err, errlen);
    if (rc == RMQ_OK)
        rc = rmq_http_listen(con->http, host, port, err, errlen);
    if (rc == RMQ_OK) {
        evtimer_add(con->hist_timer, &period);
        on_hist_timer(-1, 0, con); /* the first slot now: the brokers' first totals */
    }
    return rc;
}

int ns_console_port(const ns_console_t *con)
{
    return rmq_http_port(con->http);
}

void ns_console_free(ns_console_t *con)
{
    if (!con)
        return;
    con->closing = 1;
    if (con->pool)
        rmq_client_pool_free(con->pool);   /* pending calls fail now; jobs finish without replying */
    while (con->jobs)
        job_finish(con->jobs, 503);
    if (con->timer)
        event_free(con->timer);
    if (con->hist_timer)
        event_free(con->hist_timer);
    ns_hist_free(con->hist);
    rmq_http_free(con->http);
    for (size_t i = 0; con->brokers && i < con->n_brokers; i++)
        broker_clear(&con->brokers[i]);
    free(con->brokers);
    OPENSSL_cleanse(con, sizeof(*con));
    free(con);
}
