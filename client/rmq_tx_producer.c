/* rmq_tx_producer.c: the transaction producer (rmq.h). Half messages go
 * through an ordinary producer (with TRAN_MSG=true and PGROUP=<group>);
 * a second client instance of kind "txproducer" heartbeats the group to
 * every master it sent to (so the broker knows where to send
 * CHECK_TRANSACTION_STATE), receives those checks on its loop thread, and
 * sends END_TRANSACTION. Check callbacks run on this object's own
 * threads. Threads: user threads send; the loop heartbeats and takes
 * checks; check threads decide and answer. The masters table is under mu. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_client_int.h"
#include "rmq_log.h"
#include "rmq_workers.h"

#define MAX_MASTERS 64

typedef struct master {
    char broker_name[64];
    char addr[64];
} master_t;

struct rmq_tx_producer {
    rmq_tx_producer_opts_t o;
    char *group;
    rmq_producer_t *p;
    rmq_instance_t *in;
    rmq_workers_t *workers;
    pthread_mutex_t mu;
    master_t masters[MAX_MASTERS];
    size_t nmasters;
    struct event *hb_ev;             /* loop thread */
    int started, stopped;
};

typedef struct check_job {
    rmq_work_t w;
    rmq_message_ext_t *msg;
    int64_t queue_offset, phys;
    char msg_id[128];
    char broker_addr[64];
} check_job_t;

/* ---- END_TRANSACTION ------------------------------------------------------- */

static Rmq__TransactionState wire_state(rmq_tx_state_t s)
{
    return s == RMQ_TX_COMMIT ? RMQ__TRANSACTION_STATE__TX_COMMIT
         : s == RMQ_TX_ROLLBACK ? RMQ__TRANSACTION_STATE__TX_ROLLBACK : RMQ__TRANSACTION_STATE__TX_UNKNOWN;
}

/* Reports an outcome to the broker at addr and waits for its answer. Not the loop thread. */
static rmq_err_t end_tx(rmq_tx_producer_t *tp, const char *addr, int64_t qoff, int64_t phys, const char *msg_id,
                        rmq_tx_state_t state, int from_check, rmq_error_t *e)
{
    Rmq__EndTransactionRequest h = RMQ__END_TRANSACTION_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp;
    rmq_err_t err;

    h.producer_group = tp->group;
    h.tran_state_table_offset = qoff;
    h.commit_log_offset = phys;
    h.state = wire_state(state);
    h.from_transaction_check = from_check;
    h.msg_id = (char *)msg_id;
    h.transaction_id = (char *)msg_id;
    req.code = RMQ__REQUEST_CODE__END_TRANSACTION;
    req.header_case = RMQ__COMMAND__HEADER_END_TRANSACTION;
    req.end_transaction = &h;
    err = rmq_instance_call_sync(tp->in, addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS, &resp);
    int got = err == RMQ_OK;

    err = rmq_error_from_rpc(e, err, got ? &resp : NULL, "END_TRANSACTION");
    if (got)
        rmq_frame_clear(&resp);
    return err;
}

/* ---- heartbeats ------------------------------------------------------------------ */

static void hb_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    rmq_error_t e;

    if (rmq_error_from_rpc(&e, err, resp, "HEART_BEAT") != RMQ_OK && err != RMQ_ESHUTDOWN)
        LOG_WARN_RL("transaction producer: %s", e.text);
}

static void hb_fill(rmq_tx_producer_t *tp, Rmq__HeartbeatData *hb, Rmq__Command *req, char **groups)
{
    groups[0] = tp->group;
    hb->client_id = (char *)rmq_instance_client_id(tp->in);
    hb->producer_groups = groups;
    hb->n_producer_groups = 1;
    req->code = RMQ__REQUEST_CODE__HEART_BEAT;
    req->header_case = RMQ__COMMAND__HEADER_HEARTBEAT;
    req->heartbeat = hb;
}

/* Loop thread: heartbeats every known master. */
static void hb_tick(evutil_socket_t fd, short what, void *arg)
{
    rmq_tx_producer_t *tp = arg;
    master_t copy[MAX_MASTERS];
    size_t n;

    pthread_mutex_lock(&tp->mu);
    n = tp->nmasters;
    memcpy(copy, tp->masters, n * sizeof(copy[0]));
    pthread_mutex_unlock(&tp->mu);
    for (size_t i = 0; i < n; i++) {
        Rmq__HeartbeatData hb = RMQ__HEARTBEAT_DATA__INIT;
        Rmq__Command req = RMQ__COMMAND__INIT;
        char *groups[1];

        hb_fill(tp, &hb, &req, groups);
        rmq_instance_call(tp->in, copy[i].addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS, hb_done, NULL);
    }
}

/* User thread: records addr as the master of broker_name; heartbeats it
 * at once when new (so a check can reach us even for the first half). */
static void remember(rmq_tx_producer_t *tp, const char *broker_name, const char *addr)
{
    int known = 0, changed = 0;

    pthread_mutex_lock(&tp->mu);
    for (size_t k = 0; k < tp->nmasters && !known; k++)
        if (!strcmp(tp->masters[k].broker_name, broker_name)) {
            known = 1;
            changed = strcmp(tp->masters[k].addr, addr) != 0;
            if (changed)
                snprintf(tp->masters[k].addr, sizeof(tp->masters[k].addr), "%s", addr);
        }
    if (!known && tp->nmasters < MAX_MASTERS) {
        snprintf(tp->masters[tp->nmasters].broker_name, 64, "%s", broker_name);
        snprintf(tp->masters[tp->nmasters].addr, 64, "%s", addr);
        tp->nmasters++;
    }
    pthread_mutex_unlock(&tp->mu);
    if (!known || changed) {
        Rmq__HeartbeatData hb = RMQ__HEARTBEAT_DATA__INIT;
        Rmq__Command req = RMQ__COMMAND__INIT;
        char *groups[1];
        rmq_frame_t resp;

        hb_fill(tp, &hb, &req, groups);
        if (rmq_instance_call_sync(tp->in, addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS, &resp) == RMQ_OK)
            rmq_frame_clear(&resp);
    }
}

/* User thread: learns the masters of topic's route (best effort: a topic
 * created by this very send has no route yet). */
static void learn_route(rmq_tx_producer_t *tp, const char *topic)
{
    rmq_route_t *route = NULL;
    rmq_error_t e;

    if (rmq_instance_fetch_route_sync(tp->in, topic, &route, &e) != RMQ_OK)
        return;
    for (size_t i = 0; i < route->nbrokers; i++)
        if (route->brokers[i].master[0])
            remember(tp, route->brokers[i].name, route->brokers[i].master);
    rmq_route_free(route);
}

/* ---- checks ------------------------------------------------------------------------ */

/* Check thread: asks the user, reports a decided outcome. */
static void check_run(rmq_work_t *item, int run, void *arg)
{
    check_job_t *j = (check_job_t *)item;
    rmq_tx_producer_t *tp = arg;

    if (run) {
        rmq_tx_state_t s = tp->o.check(j->msg, tp->o.check_arg);
        rmq_error_t e;

        if (s != RMQ_TX_UNKNOWN &&
            end_tx(tp, j->broker_addr, j->queue_offset, j->phys, j->msg_id, s, 1, &e) != RMQ_OK)
            LOG_WARN_RL("transaction producer: answering a check of %s: %s", j->msg_id, e.text);
    }
    free(j->msg);
    free(j);
}

/* Loop thread: CHECK_TRANSACTION_STATE from a broker (one-way). */
static void on_push(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    rmq_tx_producer_t *tp = arg;
    const Rmq__CheckTransactionStateRequest *h;
    rmq_message_ext_t **msgs = NULL;
    size_t n = 0, len;
    check_job_t *j;

    if (!req->cmd || req->cmd->code != RMQ__REQUEST_CODE__CHECK_TRANSACTION_STATE ||
        req->cmd->header_case != RMQ__COMMAND__HEADER_CHECK_TRANSACTION || !req->body)
        return;
    h = req->cmd->check_transaction;
    len = evbuffer_get_length(req->body);
    if (len == 0 || rmq_msg_decode_pulled(evbuffer_pullup(req->body, -1), len, "", NULL, &msgs, &n) != RMQ_OK ||
        n != 1 || !(j = calloc(1, sizeof(*j)))) {
        LOG_WARN_RL("transaction producer: unusable CHECK_TRANSACTION_STATE from %s", rmq_conn_peer(conn));
        for (size_t i = 0; i < n; i++)
            free(msgs[i]);
        free(msgs);
        return;
    }
    j->msg = msgs[0];
    free(msgs);
    j->queue_offset = h->tran_state_table_offset;
    j->phys = h->commit_log_offset;
    snprintf(j->msg_id, sizeof j->msg_id, "%s", h->msg_id);
    snprintf(j->broker_addr, sizeof j->broker_addr, "%s", h->broker_addr[0] ? h->broker_addr : rmq_conn_peer(conn));
    rmq_workers_push(tp->workers, &j->w);
}

/* ---- lifetime ---------------------------------------------------------------------- */

rmq_tx_producer_t *rmq_tx_producer_new(const rmq_tx_producer_opts_t *opts, rmq_error_t *err)
{
    rmq_tx_producer_t *tp;

    if (!opts || !opts->check || !opts->producer.group || !opts->producer.group[0]) {
        rmq_error_set(err, RMQ_EINVAL, 0, "a producer group and a check callback are required");
        return NULL;
    }
    if (!(tp = calloc(1, sizeof(*tp)))) {
        rmq_error_set(err, RMQ_ENOMEM, 0, "transaction producer");
        return NULL;
    }
    tp->o = *opts;
    if (tp->o.check_threads <= 0)
        tp->o.check_threads = 1;
    if (tp->o.heartbeat_interval_ms <= 0)
        tp->o.heartbeat_interval_ms = 30000;
    pthread_mutex_init(&tp->mu, NULL);
    tp->group = strdup(opts->producer.group);
    tp->p = rmq_producer_new(&opts->producer, err);
    tp->in = tp->p ? rmq_instance_new(opts->producer.namesrv, "txproducer", NULL,
                                      opts->producer.security, err) : NULL;
    if (!tp->group || !tp->p || !tp->in) {
        if (!tp->group)
            rmq_error_set(err, RMQ_ENOMEM, 0, "transaction producer");
        rmq_tx_producer_free(tp);
        return NULL;
    }
    tp->o.producer.group = tp->group;
    tp->o.producer.namesrv = NULL;
    tp->o.producer.security = NULL;
    return tp;
}

static void start_on_loop(void *arg)
{
    rmq_tx_producer_t *tp = arg;

    tp->hb_ev = rmq_instance_timer(tp->in, tp->o.heartbeat_interval_ms, hb_tick, tp);
}

rmq_err_t rmq_tx_producer_start(rmq_tx_producer_t *tp)
{
    rmq_err_t err;

    if (tp->started)
        return tp->stopped ? RMQ_ESHUTDOWN : RMQ_OK;
    tp->started = 1;
    rmq_instance_on_request(tp->in, on_push, tp);
    if (!(tp->workers = rmq_workers_new(tp->o.check_threads, check_run, tp)))
        return RMQ_ENOMEM;
    if ((err = rmq_producer_start(tp->p)) != RMQ_OK || (err = rmq_instance_start(tp->in)) != RMQ_OK)
        return err;
    return rmq_instance_post(tp->in, start_on_loop, tp);
}

static void stop_on_loop(void *arg)
{
    rmq_tx_producer_t *tp = arg;

    if (tp->hb_ev) {
        event_free(tp->hb_ev);
        tp->hb_ev = NULL;
    }
}

void rmq_tx_producer_shutdown(rmq_tx_producer_t *tp)
{
    if (!tp->started || tp->stopped)
        return;
    tp->stopped = 1;
    if (tp->workers)
        rmq_workers_stop(tp->workers);
    rmq_instance_stop(tp->in, stop_on_loop, tp);
    rmq_producer_shutdown(tp->p);
}

void rmq_tx_producer_free(rmq_tx_producer_t *tp)
{
    if (!tp)
        return;
    rmq_tx_producer_shutdown(tp);
    rmq_workers_free(tp->workers);
    rmq_instance_free(tp->in);
    rmq_producer_free(tp->p);
    pthread_mutex_destroy(&tp->mu);
    free(tp->group);
    free(tp);
}

/* ---- send --------------------------------------------------------------------------- */

/* Hex digits id[from, to) as a number; -1 if one is not hex. */
static int64_t hex_field(const char *id, size_t from, size_t to)
{
    uint64_t v = 0;

    for (size_t i = from; i < to; i++) {
        char c = id[i];
        int d = c >= '0' && c <= '9' ? c - '0' : c >= 'A' && c <= 'F' ? c - 'A' + 10 : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;

        if (d < 0)
            return -1;
        v = v << 4 | (uint64_t)d;
    }
    return v > INT64_MAX ? -1 : (int64_t)v;
}

/* Splits an offset message id (store ip, port, commit-log offset; 32 hex
 * digits) into the storing broker's "ip:port" and the offset. -1 if malformed. */
static int id_parse(const char *id, char *addr, size_t len, int64_t *phys)
{
    int64_t ip = strlen(id) == 32 ? hex_field(id, 0, 8) : -1, port = ip >= 0 ? hex_field(id, 8, 16) : -1;

    *phys = port > 0 && port <= 65535 ? hex_field(id, 16, 32) : -1;
    if (*phys < 0)
        return -1;
    snprintf(addr, len, "%u.%u.%u.%u:%u", (unsigned)(ip >> 24) & 255, (unsigned)(ip >> 16) & 255,
             (unsigned)(ip >> 8) & 255, (unsigned)ip & 255, (unsigned)port);
    return 0;
}

rmq_err_t rmq_tx_producer_send(rmq_tx_producer_t *tp, const rmq_message_t *msg, rmq_tx_execute_fn execute,
                               void *ctx, rmq_tx_state_t *state, rmq_send_result_t *res)
{
    rmq_property_t *props;
    rmq_message_t half;
    char addr[64];
    int64_t phys;
    rmq_err_t err;

    *state = RMQ_TX_ROLLBACK;
    memset(res, 0, sizeof(*res));
    if (!execute || !msg || !msg->topic)
        return rmq_error_set(&res->error, RMQ_EINVAL, 0, "a message and an execute callback are required");
    if (!tp->started || tp->stopped)
        return rmq_error_set(&res->error, RMQ_ESHUTDOWN, 0, "transaction producer not running");
    if (!(props = calloc(msg->nprops + 2, sizeof(*props))))
        return rmq_error_set(&res->error, RMQ_ENOMEM, 0, "transaction producer");
    if (msg->nprops)
        memcpy(props, msg->props, msg->nprops * sizeof(*props));
    props[msg->nprops] = (rmq_property_t){RMQ_PROP_TRAN_MSG, "true"};
    props[msg->nprops + 1] = (rmq_property_t){RMQ_PROP_PRODUCER_GROUP, tp->group};
    half = *msg;
    half.props = props;
    half.nprops = msg->nprops + 2;
    learn_route(tp, msg->topic);
    err = rmq_producer_send(tp->p, &half, 0, res);
    free(props);
    if (err != RMQ_OK)
        return err;
    if (id_parse(res->offset_msg_id, addr, sizeof addr, &phys) != 0) {
        *state = RMQ_TX_UNKNOWN;
        return rmq_error_set(&res->error, RMQ_EPROTO, 0, "half message id %s is not an offset id", res->offset_msg_id);
    }
    remember(tp, res->broker_name, addr);    /* the half's broker hears the group before any check */
    *state = execute(msg, ctx);
    return end_tx(tp, addr, res->queue_offset, phys, res->msg_id, *state, 0, &res->error);
}
