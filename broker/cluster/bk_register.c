/* bk_register.c: the broker's side of the name-server protocol. One client
 * pool holds a client per name server. Each name server has at most one
 * request in flight; what changes meanwhile waits in its target and goes in
 * the next request, built from the table as it is then:
 *   - a full registration: the whole table, zlib-compressed in the body
 *     (inline for a name server that does not know QUERY_DATA_VERSION);
 *   - a delta: only the topics changed or deleted since the version that
 *     name server holds (up to half the table's names are remembered,
 *     within [REG_DELTA_MIN, REG_DELTA_MAX]; past that, full: a complete
 *     table, so the name server drops what it lacks);
 *   - every registerNameServerPeriod, QUERY_DATA_VERSION: the name server
 *     refreshes the broker's liveness and says whether it needs the table.
 * So creating N topics costs what changed, not N whole tables, and the
 * memory held is one name set and one encoded table, whatever the rate. */
#include "bk_register.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bk_controller.h"
#include "bk_ha.h"
#include "bk_map.h"
#include "bk_register_remoting.h"
#include "bk_reground.h"
#include "bk_topics_pb.h"
#include "bk_unregister.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define REG_DELTA_MIN 4096       /* changed names remembered per name server, at least, */
#define REG_DELTA_MAX 16384      /* and at most: a delta goes in the request header (RMQ_REQUEST_HEADER_MAX) */

typedef enum reg_kind { REG_QUERY, REG_FULL, REG_DELTA } reg_kind_t;

typedef struct ns_target {
    bk_register_t *reg;
    char addr[128];
    int ok;                    /* last request accepted */
    int unreg_pending;
    int inflight;              /* a request is out; its answer sends the next */
    reg_kind_t kind;           /* of the request in flight */
    Rmq__DataVersion sent;     /* data version of the request in flight */
    Rmq__DataVersion base;     /* version this name server holds (has_base) */
    int has_base;
    int need_full;             /* the next registration sends the whole table */
    int legacy;                /* no QUERY_DATA_VERSION: full, inline tables */
    int backoff;               /* failed: wait for the next period */
    bk_map_t *delta;           /* names changed since base (keys owned by values) */
} ns_target_t;

struct bk_register {
    const bk_node_t *node;
    rmq_client_pool_t *pool;
    ns_target_t *ns;
    size_t n_ns;
    bk_reground_t rounds;      /* periodic version queries, and what changes owe */
    bk_unreg_t unreg;          /* answers to UNREGISTER_BROKER at stop */
    char master_addr[128];
    char ha_addr[128];
    uint8_t *full;             /* the compressed table of version full_dv */
    size_t full_len;
    Rmq__DataVersion full_dv;
    uint64_t bytes_sent;
    bk_regrem_t *rem;          /* namesrvProtocol=remoting: it registers instead */
};

static void target_delta_clear(ns_target_t *t)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(t->delta, &cursor, &key, &val))
        free(bk_map_del_current(t->delta, &cursor));
}

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
            if (!(t->delta = bk_map_new()))
                return snprintf(err, errlen, "namesrvAddr: out of memory"), -1;
            r->n_ns++;
        }
        p += len;
        if (*p == ';')
            p++;
    }
    return 0;
}

/* The fields every registration and version query carry. ha must hold 96 bytes. */
static void register_header(bk_register_t *r, Rmq__RegisterBrokerRequest *rb, Rmq__DataVersion *dv, char *ha)
{
    const bk_node_t *node = r->node;
    ha[0] = '\0';                  /* a slave has no HA listener: registers none */
    if (bk_ha_port(bk_node_ha(node)) > 0)
        snprintf(ha, 96, "%s:%d", node->cfg->broker_ip1, bk_ha_port(bk_node_ha(node)));
    rmq__register_broker_request__init(rb);
    bk_topics_version(node->topics, dv);
    rb->cluster_name = node->cfg->broker_cluster_name;
    rb->broker_name = node->cfg->broker_name;
    rb->broker_addr = node->addr;
    rb->broker_id = bk_node_id(node);
    rb->ha_server_addr = ha;
    rb->data_version = dv;
    rb->broker_perm = (int32_t)node->cfg->broker_permission;
    rb->epoch = node->boot_ms;
    const bk_controller_t *ctl = node->ops->ctl(node->arg);
    rb->master_epoch = ctl ? bk_controller_epoch(ctl) : 0;
}

/* The whole table, packed and compressed, as of dv (cached per version, so
 * every name server gets the same bytes). NULL when out of memory. */
static const uint8_t *register_full_body(bk_register_t *r, const Rmq__DataVersion *dv, size_t *len)
{
    if (r->full && r->full_dv.timestamp == dv->timestamp && r->full_dv.counter == dv->counter) {
        *len = r->full_len;
        return r->full;
    }
    free(r->full);
    r->full = NULL;
    Rmq__TopicConfigTable *tab = bk_topics_table_new(r->node->topics);
    size_t raw_len = tab ? rmq__topic_config_table__get_packed_size(tab) : 0;
    uint8_t *raw = tab ? malloc(raw_len ? raw_len : 1) : NULL;
    uLongf zlen = compressBound(raw_len);
    uint8_t *z = raw ? malloc(zlen) : NULL;
    if (z) {
        rmq__topic_config_table__pack(tab, raw);
        if (compress2(z, &zlen, raw, raw_len, Z_BEST_SPEED) == Z_OK) {
            r->full = z;
            r->full_len = zlen;
            r->full_dv = *dv;
            z = NULL;
            LOG_DEBUG("register: table of %zu topics, %zu bytes, %zu compressed", tab->n_topics,
                      raw_len, r->full_len);
        }
    }
    free(z);
    free(raw);
    bk_topics_table_free(tab);
    *len = r->full_len;
    return r->full;
}

static void target_done(rmq_err_t err, rmq_frame_t *resp, void *arg);

/* Sends cmd (body may be NULL) to t; on success t has it in flight. */
static void target_call(ns_target_t *t, reg_kind_t kind, Rmq__Command *cmd, const Rmq__DataVersion *dv,
                        const void *body, size_t len)
{
    bk_register_t *r = t->reg;
    rmq_client_t *cli = rmq_client_pool_get(r->pool, t->addr);
    int timeout_ms = (int)r->node->cfg->register_broker_timeout_mills;
    if (!cli || rmq_client_call(cli, cmd, body, len, timeout_ms, target_done, t) != RMQ_OK) {
        LOG_WARN_RL("register: cannot send to name server %s", t->addr);
        t->need_full = kind != REG_QUERY || t->need_full;
        t->backoff = 1;
        return;
    }
    t->inflight = 1;
    t->kind = kind;
    t->sent = *dv;
    r->bytes_sent += len + rmq__command__get_packed_size(cmd);
}

/* QUERY_DATA_VERSION: the register_broker header without topics. */
static void target_query(ns_target_t *t)
{
    Rmq__RegisterBrokerRequest rb;
    Rmq__DataVersion dv;
    char ha[96];
    register_header(t->reg, &rb, &dv, ha);
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    cmd.code = RMQ__REQUEST_CODE__QUERY_DATA_VERSION;
    cmd.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER;
    cmd.register_broker = &rb;
    target_call(t, REG_QUERY, &cmd, &dv, NULL, 0);
}

/* REGISTER_BROKER with the whole table: compressed in the body, or inline
 * for a legacy name server. */
static void target_full(ns_target_t *t)
{
    bk_register_t *r = t->reg;
    Rmq__RegisterBrokerRequest rb;
    Rmq__DataVersion dv;
    char ha[96];
    register_header(r, &rb, &dv, ha);
    rb.complete = 1;
    Rmq__TopicConfigTable *tab = NULL;
    const uint8_t *body = NULL;
    size_t len = 0;
    if (t->legacy) {
        tab = bk_topics_table_new(r->node->topics);
        if (tab) {
            rb.topics = tab->topics;
            rb.n_topics = tab->n_topics;
        }
    } else {
        body = register_full_body(r, &dv, &len);
        rb.topics_in_body = 1;
    }
    if (t->legacy ? !tab : !body) {
        LOG_ERROR_RL("register: out of memory");
        t->backoff = 1;
        return;
    }
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    cmd.code = RMQ__REQUEST_CODE__REGISTER_BROKER;
    cmd.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER;
    cmd.register_broker = &rb;
    target_delta_clear(t);
    t->need_full = 0;
    target_call(t, REG_FULL, &cmd, &dv, body, len);
    bk_topics_table_free(tab);
}

/* REGISTER_BROKER with only the topics changed since t->base, and the
 * names of those deleted since. */
static void target_delta(ns_target_t *t)
{
    bk_register_t *r = t->reg;
    size_t n = bk_map_count(t->delta), k = 0, gone = 0, cursor = 0;
    Rmq__TopicConfig *items = malloc((n ? n : 1) * sizeof(*items));
    Rmq__TopicConfig **ptrs = malloc((n ? n : 1) * sizeof(*ptrs));
    char **deleted = malloc((n ? n : 1) * sizeof(*deleted));
    if (!items || !ptrs || !deleted) {
        free(items);
        free(ptrs);
        free(deleted);
        t->need_full = 1;
        t->backoff = 1;
        return;
    }
    const char *key;
    void *val;
    while (bk_map_next(t->delta, &cursor, &key, &val)) {
        const bk_topic_t *topic = bk_topics_get(r->node->topics, key, strlen(key));
        if (topic) {
            bk_topic_to_pb(topic, &items[k]);
            ptrs[k] = &items[k];
            k++;
        } else {
            deleted[gone++] = (char *)key;
        }
    }
    Rmq__RegisterBrokerRequest rb;
    Rmq__DataVersion dv;
    char ha[96];
    register_header(r, &rb, &dv, ha);
    rb.delta = 1;
    rb.base_version = &t->base;
    rb.topics = ptrs;
    rb.n_topics = k;
    rb.deleted_topics = deleted;
    rb.n_deleted_topics = gone;
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    cmd.code = RMQ__REQUEST_CODE__REGISTER_BROKER;
    cmd.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER;
    cmd.register_broker = &rb;
    target_call(t, REG_DELTA, &cmd, &dv, NULL, 0);
    target_delta_clear(t);       /* before: names are the packed topics' keys */
    free(items);
    free(ptrs);
    free(deleted);
}

/* Sends what t is owed, if nothing is in flight: the whole table, a
 * version query when it is new, or the changes since the version it holds. */
static void target_pump(ns_target_t *t)
{
    if (t->inflight || t->backoff || bk_node_stopping(t->reg->node))
        return;
    if (t->need_full)
        target_full(t);
    else if (!t->has_base)
        target_query(t);           /* learns whether it needs the table, and its dialect */
    else if (bk_map_count(t->delta))
        t->legacy ? target_full(t) : target_delta(t);
}

/* Keeps the master / HA addresses a registration or version-query answer
 * names (a slave's). */
static void register_seen(bk_register_t *r, const rmq_frame_t *resp)
{
    const char *master, *ha;
    if (resp->cmd->header_case == RMQ__COMMAND__HEADER_REGISTER_BROKER_RESP) {
        master = resp->cmd->register_broker_resp->master_addr;
        ha = resp->cmd->register_broker_resp->ha_server_addr;
    } else if (resp->cmd->header_case == RMQ__COMMAND__HEADER_QUERY_DATA_VERSION_RESP) {
        master = resp->cmd->query_data_version_resp->master_addr;
        ha = resp->cmd->query_data_version_resp->ha_server_addr;
    } else {
        return;
    }
    if (bk_config_controlled(r->node->cfg))
        return;                    /* the controller names the master (bk_register_role_changed) */
    if (master[0])
        snprintf(r->master_addr, sizeof(r->master_addr), "%s", master);
    if (ha[0])
        snprintf(r->ha_addr, sizeof(r->ha_addr), "%s", ha);
    bk_ha_master_seen(bk_node_ha(r->node), r->ha_addr);
}

/* The answer to t's request in flight; sends the next one it is owed. */
static void target_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    ns_target_t *t = arg;
    bk_register_t *r = t->reg;
    int was_ok = t->ok, status = err == RMQ_OK ? resp->cmd->status : -1;
    t->inflight = 0;
    if (err == RMQ_ESHUTDOWN)
        return;
    if (t->kind == REG_QUERY && status == RMQ__STATUS__REQUEST_CODE_NOT_SUPPORTED) {
        LOG_INFO("name server %s has no QUERY_DATA_VERSION: registering whole tables", t->addr);
        t->legacy = 1;
        t->need_full = 1;
    } else if (status != RMQ__STATUS__SUCCESS) {
        t->ok = 0;
        t->need_full = 1;
        t->backoff = status != RMQ__STATUS__DATA_VERSION_MISMATCH;
        if (t->backoff && (was_ok || err != RMQ_OK))
            LOG_WARN_RL("register with name server %s failed: %s", t->addr,
                        err != RMQ_OK ? rmq_strerror(err) : resp->cmd->remark);
    } else if (t->kind == REG_QUERY && resp->cmd->header_case == RMQ__COMMAND__HEADER_QUERY_DATA_VERSION_RESP &&
               resp->cmd->query_data_version_resp->changed) {
        t->need_full = 1;
    } else {
        t->ok = 1;
        t->base = t->sent;
        t->has_base = 1;
        if (!was_ok)
            LOG_INFO("registered with name server %s", t->addr);
        register_seen(r, resp);
    }
    target_pump(t);
}

/* ---- the native wire as the rounds drive it (bk_reground.h) ---- */

static void wire_period(void *arg, size_t i)
{
    ((bk_register_t *)arg)->ns[i].backoff = 0;
}

static int wire_idle(void *arg, size_t i)
{
    return !((bk_register_t *)arg)->ns[i].inflight;
}

/* A legacy name server (no version queries, no deltas) is owed the whole
 * table whenever it is sent anything. */
static int wire_owed(void *arg, size_t i)
{
    const ns_target_t *t = &((bk_register_t *)arg)->ns[i];
    return t->legacy || t->need_full || bk_map_count(t->delta);
}

static void wire_send_owed(void *arg, size_t i)
{
    ns_target_t *t = &((bk_register_t *)arg)->ns[i];
    if (t->legacy && !t->inflight)
        t->need_full = 1;
    target_pump(t);
}

static void wire_send_query(void *arg, size_t i)
{
    target_query(&((bk_register_t *)arg)->ns[i]);
}

static const bk_reground_wire_t register_wire = {wire_period, wire_idle, wire_owed, wire_send_owed,
                                                 wire_send_query};

/* namesrvProtocol=remoting: r's name servers registered by bk_register_remoting.c. */
static int register_remoting(bk_register_t *r, char *err, size_t errlen)
{
    const char **addrs = malloc((r->n_ns ? r->n_ns : 1) * sizeof(*addrs));
    if (!addrs)
        return snprintf(err, errlen, "register: out of memory"), -1;
    for (size_t i = 0; i < r->n_ns; i++)
        addrs[i] = r->ns[i].addr;
    r->rem = bk_regrem_new(r->node, addrs, r->n_ns, err, errlen);
    free(addrs);
    return r->rem ? 0 : -1;
}

bk_register_t *bk_register_new(const bk_node_t *node, const char *addrs, char *err, size_t errlen)
{
    bk_register_t *r = calloc(1, sizeof(*r));
    if (!r) {
        snprintf(err, errlen, "register: out of memory");
        return NULL;
    }
    r->node = node;
    bk_unreg_init(&r->unreg, node->base, "name server");
    if (register_parse(r, addrs ? addrs : "", err, errlen) != 0) {
        bk_register_free(r);
        return NULL;
    }
    if (node->cfg->namesrv_protocol == BK_NS_REMOTING && register_remoting(r, err, errlen) != 0) {
        bk_register_free(r);
        return NULL;
    }
    rmq_client_opts_t opts = {.connect_timeout_ms = 3000, .name = "namesrv"};
    rmq_security_client_opts(node->sec, &opts);
    r->pool = rmq_client_pool_new(node->base, &opts);
    if (bk_reground_init(&r->rounds, node, r->n_ns, &register_wire, r) != RMQ_OK || !r->pool) {
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
    bk_regrem_free(r->rem);
    if (r->pool)
        rmq_client_pool_free(r->pool);
    bk_reground_deinit(&r->rounds);
    bk_unreg_deinit(&r->unreg);
    for (size_t i = 0; i < r->n_ns; i++) {
        if (r->ns[i].delta) {
            target_delta_clear(&r->ns[i]);
            bk_map_free(r->ns[i].delta, NULL);
        }
    }
    free(r->full);
    free(r->ns);
    free(r);
}

void bk_register_start(bk_register_t *r)
{
    if (r->rem) {
        bk_regrem_start(r->rem);
        return;
    }
    bk_reground_start(&r->rounds);
}

/* How many changed names a delta may carry: a delta costs the name server
 * in proportion to its names, a full registration to the whole table, so
 * up to half the table goes as a delta (batched creation of many topics
 * keeps to deltas), bounded so one fits a request header. */
static size_t register_delta_limit(const bk_register_t *r)
{
    size_t half = bk_topics_count(r->node->topics) / 2;
    return half < REG_DELTA_MIN ? REG_DELTA_MIN : half > REG_DELTA_MAX ? REG_DELTA_MAX : half;
}

void bk_register_topic_changed(bk_register_t *r, const char *name)
{
    if (r->rem) {
        bk_regrem_changed(r->rem);
        return;
    }
    size_t limit = register_delta_limit(r);
    for (size_t i = 0; i < r->n_ns; i++) {
        ns_target_t *t = &r->ns[i];
        size_t len = strlen(name);
        if (t->need_full || bk_map_get(t->delta, name, len))
            continue;            /* the whole table goes next anyway, or the name is noted */
        char *copy = bk_map_count(t->delta) < limit ? strdup(name) : NULL;
        if (!copy || bk_map_put(t->delta, copy, len, copy) != RMQ_OK) {
            free(copy);
            target_delta_clear(t);     /* too many (or no memory): the whole table */
            t->need_full = 1;
        }
    }
    bk_reground_soon(&r->rounds);
}

void bk_register_role_changed(bk_register_t *r, const char *master_addr, const char *ha_addr)
{
    if (r->rem) {
        bk_regrem_role_changed(r->rem, master_addr, ha_addr);
        return;
    }
    snprintf(r->master_addr, sizeof(r->master_addr), "%s", master_addr);
    snprintf(r->ha_addr, sizeof(r->ha_addr), "%s", ha_addr);
    for (size_t i = 0; i < r->n_ns; i++) {
        r->ns[i].need_full = 1;
        r->ns[i].backoff = 0;
    }
    bk_reground_soon(&r->rounds);
}

uint64_t bk_register_bytes_sent(const bk_register_t *r)
{
    if (r->rem)
        return bk_regrem_bytes_sent(r->rem);
    return r->bytes_sent;
}

static void unregister_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    ns_target_t *t = arg;
    int ok = err == RMQ_OK && resp->cmd->status == RMQ__STATUS__SUCCESS;
    bk_unreg_answered(&t->reg->unreg, &t->unreg_pending, t->addr, ok,
                      err != RMQ_OK ? rmq_strerror(err) : resp->cmd->remark);
}

void bk_register_stop(bk_register_t *r, int timeout_ms, void (*done)(void *arg), void *arg)
{
    if (r->rem) {
        bk_regrem_stop(r->rem, timeout_ms, done, arg);
        return;
    }
    const bk_node_t *node = r->node;
    bk_reground_stop(&r->rounds);
    Rmq__UnregisterBrokerRequest ub = RMQ__UNREGISTER_BROKER_REQUEST__INIT;
    ub.cluster_name = node->cfg->broker_cluster_name;
    ub.broker_name = node->cfg->broker_name;
    ub.broker_addr = node->addr;
    ub.broker_id = bk_node_id(node);
    ub.epoch = node->boot_ms;
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    cmd.code = RMQ__REQUEST_CODE__UNREGISTER_BROKER;
    cmd.header_case = RMQ__COMMAND__HEADER_UNREGISTER_BROKER;
    cmd.unregister_broker = &ub;
    for (size_t i = 0; i < r->n_ns; i++) {
        rmq_client_t *cli = rmq_client_pool_get(r->pool, r->ns[i].addr);
        if (cli && rmq_client_call(cli, &cmd, NULL, 0, timeout_ms, unregister_done, &r->ns[i]) == RMQ_OK)
            bk_unreg_sent(&r->unreg, &r->ns[i].unreg_pending);
    }
    bk_unreg_wait(&r->unreg, timeout_ms, done, arg);
}

const char *bk_register_master_addr(const bk_register_t *r)
{
    if (r->rem)
        return bk_regrem_master_addr(r->rem);
    return r->master_addr;
}

const char *bk_register_ha_addr(const bk_register_t *r)
{
    if (r->rem)
        return bk_regrem_ha_addr(r->rem);
    return r->ha_addr;
}

size_t bk_register_ok_count(const bk_register_t *r)
{
    if (r->rem)
        return bk_regrem_ok_count(r->rem);
    size_t n = 0;
    for (size_t i = 0; i < r->n_ns; i++)
        n += r->ns[i].ok;
    return n;
}
