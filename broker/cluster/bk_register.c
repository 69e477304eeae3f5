/* bk_register.c: the broker's side of the name-server protocol. One client
 * pool holds a client per name server; each registration sends the whole
 * topic table with its data version and the broker's epoch (start time). */
#include "bk_register.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_ha.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define REG_TIMEOUT_MS 3000

typedef struct ns_target {
    bk_register_t *reg;
    char addr[128];
    int ok;                    /* last registration accepted */
    int unreg_pending;
} ns_target_t;

struct bk_register {
    bk_broker_t *bk;
    rmq_client_pool_t *pool;
    ns_target_t *ns;
    size_t n_ns;
    struct event *period;
    struct event *soon;
    struct event *unreg_timer;
    size_t unreg_pending;
    void (*done)(void *arg);
    void *done_arg;
    char master_addr[128];
    char ha_addr[128];
};

/* Splits "a;b" into targets; -1 on a malformed address. */
static int register_parse(bk_register_t *r, const char *addrs, char *err, size_t errlen)
{
    const char *p = addrs;
    while (*p) {
        size_t len = strcspn(p, ";");
        const char *s = p, *e = p + len;
        while (s < e && (*s == ' ' || *s == '\t'))
            s++;
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        if (e > s) {
            ns_target_t *ns = realloc(r->ns, (r->n_ns + 1) * sizeof(*ns));
            if (!ns)
                return snprintf(err, errlen, "namesrvAddr: out of memory"), -1;
            r->ns = ns;
            ns_target_t *t = &r->ns[r->n_ns];
            memset(t, 0, sizeof(*t));
            t->reg = r;
            snprintf(t->addr, sizeof(t->addr), "%.*s", (int)(e - s), s);
            char host[128];
            int port = 0;
            if ((size_t)(e - s) >= sizeof(t->addr) ||
                rmq_addr_split(t->addr, host, sizeof(host), &port) != RMQ_OK || port <= 0 || port > 65535)
                return snprintf(err, errlen, "namesrvAddr=%s: '%.*s' is not host:port", addrs,
                                (int)(e - s), s), -1;
            r->n_ns++;
        }
        p += len;
        if (*p == ';')
            p++;
    }
    return 0;
}

/* Response to REGISTER_BROKER from one name server. */
static void register_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    ns_target_t *t = arg;
    bk_register_t *r = t->reg;
    int was_ok = t->ok;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS) {
        t->ok = 0;
        if (was_ok || err != RMQ_ESHUTDOWN)
            LOG_WARN_RL("register with name server %s failed: %s", t->addr,
                        err != RMQ_OK ? rmq_strerror(err) : resp->cmd->remark);
        return;
    }
    t->ok = 1;
    if (!was_ok)
        LOG_INFO("registered with name server %s", t->addr);
    if (resp->cmd->header_case == RMQ__COMMAND__HEADER_REGISTER_BROKER_RESP) {
        const Rmq__RegisterBrokerResponse *rr = resp->cmd->register_broker_resp;
        if (rr->master_addr[0])
            snprintf(r->master_addr, sizeof(r->master_addr), "%s", rr->master_addr);
        if (rr->ha_server_addr[0])
            snprintf(r->ha_addr, sizeof(r->ha_addr), "%s", rr->ha_server_addr);
        bk_ha_master_seen(r->bk->ha, r->ha_addr);
    }
}

/* Sends REGISTER_BROKER with the whole topic table to every name server. */
static void register_all(bk_register_t *r)
{
    bk_broker_t *bk = r->bk;
    if (r->n_ns == 0 || bk->stopping)
        return;
    Rmq__TopicConfigTable *tab = bk_topics_table_new(bk->topics);
    if (!tab) {
        LOG_ERROR_RL("register: out of memory");
        return;
    }
    char ha[96] = "";                /* a slave has no HA listener: registers none */
    if (bk_broker_ha_port(bk) > 0)
        snprintf(ha, sizeof(ha), "%s:%d", bk->cfg->broker_ip1, bk_broker_ha_port(bk));
    Rmq__RegisterBrokerRequest rb = RMQ__REGISTER_BROKER_REQUEST__INIT;
    rb.cluster_name = bk->cfg->broker_cluster_name;
    rb.broker_name = bk->cfg->broker_name;
    rb.broker_addr = bk->addr;
    rb.broker_id = bk->cfg->broker_id;
    rb.ha_server_addr = ha;
    rb.data_version = tab->data_version;
    rb.topics = tab->topics;
    rb.n_topics = tab->n_topics;
    rb.broker_perm = (int32_t)bk->cfg->broker_permission;
    rb.epoch = bk->boot_ms;
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    cmd.code = RMQ__REQUEST_CODE__REGISTER_BROKER;
    cmd.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER;
    cmd.register_broker = &rb;
    for (size_t i = 0; i < r->n_ns; i++) {
        rmq_client_t *cli = rmq_client_pool_get(r->pool, r->ns[i].addr);
        if (!cli || rmq_client_call(cli, &cmd, NULL, 0, REG_TIMEOUT_MS, register_done, &r->ns[i]) != RMQ_OK)
            LOG_WARN_RL("register: cannot send to name server %s", r->ns[i].addr);
    }
    bk_topics_table_free(tab);
}

static void register_tick(evutil_socket_t fd, short what, void *arg)
{
    register_all(arg);
}

bk_register_t *bk_register_new(bk_broker_t *bk, const char *addrs, char *err, size_t errlen)
{
    bk_register_t *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "register: out of memory");
        return NULL;
    }
    r->bk = bk;
    if (register_parse(r, addrs ? addrs : "", err, errlen) != 0) {
        bk_register_free(r);
        return NULL;
    }
    rmq_client_opts_t opts = {.connect_timeout_ms = 3000, .name = "namesrv"};
    rmq_security_client_opts(&bk->sec, &opts);
    r->pool = rmq_client_pool_new(bk->base, &opts);
    r->period = event_new(bk->base, -1, EV_PERSIST, register_tick, r);
    r->soon = event_new(bk->base, -1, 0, register_tick, r);
    if (!r->pool || !r->period || !r->soon) {
        snprintf(err, errlen, "register: out of memory");
        bk_register_free(r);
        return NULL;
    }
    return r;
}

void bk_register_free(bk_register_t *r)
{
    if (!r)
        return;
    if (r->pool)
        rmq_client_pool_free(r->pool);
    if (r->period)
        event_free(r->period);
    if (r->soon)
        event_free(r->soon);
    if (r->unreg_timer)
        event_free(r->unreg_timer);
    free(r->ns);
    free(r);
}

void bk_register_start(bk_register_t *r)
{
    int64_t ms = r->bk->cfg->register_name_server_period;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    event_add(r->period, &tv);
    register_all(r);
}

void bk_register_soon(bk_register_t *r)
{
    if (r->n_ns && !event_pending(r->soon, EV_TIMEOUT, NULL))
        event_active(r->soon, EV_TIMEOUT, 0);
}

/* Calls the stop callback once. */
static void unregister_finish(bk_register_t *r)
{
    void (*done)(void *) = r->done;
    r->done = NULL;
    if (r->unreg_timer)
        event_del(r->unreg_timer);
    if (done)
        done(r->done_arg);
}

static void unregister_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    ns_target_t *t = arg;
    bk_register_t *r = t->reg;
    if (!t->unreg_pending)
        return;
    t->unreg_pending = 0;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS)
        LOG_WARN("unregister from name server %s failed: %s", t->addr,
                 err != RMQ_OK ? rmq_strerror(err) : resp->cmd->remark);
    else
        LOG_INFO("unregistered from name server %s", t->addr);
    if (--r->unreg_pending == 0)
        unregister_finish(r);
}

static void unregister_timeout(evutil_socket_t fd, short what, void *arg)
{
    bk_register_t *r = arg;
    LOG_WARN("unregister: %zu name servers did not answer in time", r->unreg_pending);
    unregister_finish(r);
}

void bk_register_stop(bk_register_t *r, int timeout_ms, void (*done)(void *arg), void *arg)
{
    bk_broker_t *bk = r->bk;
    event_del(r->period);
    event_del(r->soon);
    r->done = done;
    r->done_arg = arg;
    Rmq__UnregisterBrokerRequest ub = RMQ__UNREGISTER_BROKER_REQUEST__INIT;
    ub.cluster_name = bk->cfg->broker_cluster_name;
    ub.broker_name = bk->cfg->broker_name;
    ub.broker_addr = bk->addr;
    ub.broker_id = bk->cfg->broker_id;
    ub.epoch = bk->boot_ms;
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    cmd.code = RMQ__REQUEST_CODE__UNREGISTER_BROKER;
    cmd.header_case = RMQ__COMMAND__HEADER_UNREGISTER_BROKER;
    cmd.unregister_broker = &ub;
    for (size_t i = 0; i < r->n_ns; i++) {
        rmq_client_t *cli = rmq_client_pool_get(r->pool, r->ns[i].addr);
        if (cli && rmq_client_call(cli, &cmd, NULL, 0, timeout_ms, unregister_done, &r->ns[i]) == RMQ_OK) {
            r->ns[i].unreg_pending = 1;
            r->unreg_pending++;
        }
    }
    if (r->unreg_pending == 0) {
        unregister_finish(r);
        return;
    }
    struct timeval tv = {(time_t)(timeout_ms / 1000), (suseconds_t)(timeout_ms % 1000) * 1000};
    r->unreg_timer = evtimer_new(bk->base, unregister_timeout, r);
    if (r->unreg_timer)
        evtimer_add(r->unreg_timer, &tv);
}

const char *bk_register_master_addr(const bk_register_t *r)
{
    return r->master_addr;
}

const char *bk_register_ha_addr(const bk_register_t *r)
{
    return r->ha_addr;
}

size_t bk_register_ok_count(const bk_register_t *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_ns; i++)
        n += r->ns[i].ok;
    return n;
}
