/* bk_register_remoting.c: the broker registering with Apache RocketMQ name
 * servers over remoting (bk_register_remoting.h). Each name server has one
 * client (rmq_remoting_client.h) and at most one request in flight; what is
 * owed meanwhile (a full registration after a change) goes next. Headers
 * are RocketMQ's RegisterBrokerRequestHeader (brokerName, brokerAddr,
 * clusterName, haServerAddr, brokerId, compressed, bodyCrc32),
 * QueryDataVersionRequestHeader and UnRegisterBrokerRequestHeader
 * (brokerName, brokerAddr, clusterName, brokerId). The connections follow
 * the broker's rules for every connection it makes: TLS unless
 * tlsMode=disabled (RocketMQ's broker: tls.enable, by default when its
 * tls.server.mode is enforcing), and with aclAccessKey / aclSecretKey each
 * request signed with ACL 1.0, as a RocketMQ 5 broker signs with its
 * innerClientAuthenticationCredentials (a 4.9 broker signs none). */
#include "bk_register_remoting.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include <event2/buffer.h>

#include "bk_ha.h"
#include "bk_reground.h"
#include "bk_topics_pb.h"
#include "bk_unregister.h"
#include "fr_remoting_admin_wire.h"
#include "rmq_http.h"
#include "rmq_log.h"
#include "rmq_remoting_client.h"


typedef struct regrem_ns {
    bk_regrem_t *r;
    char addr[128];
    rmq_rclient_t *cli;
    int ok;                    /* the last request was accepted */
    int inflight;
    int need_full;             /* the next request is REGISTER_BROKER */
    int unreg_pending;
} regrem_ns_t;

struct bk_regrem {
    const bk_node_t *node;
    regrem_ns_t *ns;
    size_t n_ns;
    bk_reground_t rounds;      /* periodic version queries, and what changes owe */
    bk_unreg_t unreg;          /* answers to UNREGISTER_BROKER at stop */
    char master_addr[128];
    char ha_addr[128];
    uint64_t bytes_sent;
};

/* The extFields every request carries: brokerName, brokerAddr,
 * clusterName, brokerId (id must hold 24 bytes). Returns how many. */
static size_t regrem_fields(const bk_regrem_t *r, rmq_remoting_field_t *f, char *id)
{
    const bk_node_t *node = r->node;
    snprintf(id, 24, "%" PRId64, bk_node_id(node));
    f[0] = (rmq_remoting_field_t){"brokerName", node->cfg->broker_name};
    f[1] = (rmq_remoting_field_t){"brokerAddr", node->addr};
    f[2] = (rmq_remoting_field_t){"clusterName", node->cfg->broker_cluster_name};
    f[3] = (rmq_remoting_field_t){"brokerId", id};
    return 4;
}

/* Appends a big-endian i32 and then s[0..len). */
static int put_sized(struct evbuffer *b, const void *s, size_t len)
{
    uint8_t be[4] = {(uint8_t)(len >> 24), (uint8_t)(len >> 16), (uint8_t)(len >> 8), (uint8_t)len};
    return evbuffer_add(b, be, 4) || evbuffer_add(b, s, len);
}

/* RegisterBrokerBody.encode(true) before the zlib pass: i32-sized
 * DataVersion JSON, i32 topic count, i32-sized "name read write perm
 * SINGLE_TAG" per topic, i32-sized filter-server list "[]". */
static int regrem_body_raw(const bk_topics_t *topics, const Rmq__DataVersion *dv, struct evbuffer *raw)
{
    char line[256];
    int n = snprintf(line, sizeof(line), "{\"counter\":%" PRId64 ",\"timestamp\":%" PRId64 "}", dv->counter,
                     dv->timestamp);
    size_t count = 0, cursor = 0;
    const bk_topic_t *t;
    while (bk_topics_next(topics, &cursor, &t))
        count++;
    uint8_t be[4] = {(uint8_t)(count >> 24), (uint8_t)(count >> 16), (uint8_t)(count >> 8), (uint8_t)count};
    if (put_sized(raw, line, (size_t)n) || evbuffer_add(raw, be, 4))
        return -1;
    for (cursor = 0; bk_topics_next(topics, &cursor, &t);) {
        n = snprintf(line, sizeof(line), "%s %" PRId32 " %" PRId32 " %" PRId32 " SINGLE_TAG", t->name,
                     t->read_queues, t->write_queues, t->perm);
        if (put_sized(raw, line, (size_t)n))
            return -1;
    }
    return put_sized(raw, "[]", 2);
}

/* RegisterBrokerBody.encode(false): fastjson's view of the class. */
static int regrem_body_json(const bk_topics_t *topics, const Rmq__DataVersion *dv, struct evbuffer *out)
{
    const bk_topic_t *t;
    size_t cursor = 0;
    if (FR_RM_ADD(out, "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":"))
        return -1;
    fr_rm_data_version_json(out, dv->counter, dv->timestamp);
    if (FR_RM_ADD(out, ",\"topicConfigTable\":{"))
        return -1;
    for (int first = 1; bk_topics_next(topics, &cursor, &t); first = 0) {
        if ((!first && FR_RM_ADD(out, ",")))
            return -1;
        rmq_json_str(out, t->name);
        if (FR_RM_ADD(out, ":"))
            return -1;
        fr_rm_topic_json(out, t);
    }
    return FR_RM_ADD(out, "}}}");
}

/* Appends RocketMQ's RegisterBrokerBody for topics at version dv to out:
 * the JSON form, or with compressed the zlib one. RMQ_ENOMEM. */
static rmq_err_t regrem_body(const bk_topics_t *topics, const Rmq__DataVersion *dv, int compressed,
                             struct evbuffer *out)
{
    if (!compressed)
        return regrem_body_json(topics, dv, out) ? RMQ_ENOMEM : RMQ_OK;
    rmq_err_t err = RMQ_ENOMEM;
    struct evbuffer *raw = evbuffer_new();
    uint8_t *z = NULL;
    if (!raw || regrem_body_raw(topics, dv, raw))
        goto out;
    size_t raw_len = evbuffer_get_length(raw);
    uLongf zlen = compressBound(raw_len);
    if (!(z = malloc(zlen)) || compress2(z, &zlen, evbuffer_pullup(raw, -1), raw_len, Z_BEST_SPEED) != Z_OK ||
        evbuffer_add(out, z, zlen))
        goto out;
    err = RMQ_OK;
out:
    free(z);
    if (raw)
        evbuffer_free(raw);
    return err;
}

static void regrem_pump(regrem_ns_t *t);

/* Keeps the master / HA addresses an answer names (a slave's). */
static void regrem_seen(bk_regrem_t *r, const rmq_remoting_request_t *resp)
{
    const char *master = rmq_remoting_field(resp, "masterAddr"), *ha = rmq_remoting_field(resp, "haServerAddr");
    if (bk_config_controlled(r->node->cfg) || bk_node_id(r->node) == 0)
        return;                    /* the controller names it, or this is the master */
    if (master && master[0])
        snprintf(r->master_addr, sizeof(r->master_addr), "%s", master);
    if (ha && ha[0])
        snprintf(r->ha_addr, sizeof(r->ha_addr), "%s", ha);
    bk_ha_master_seen(bk_node_ha(r->node), r->ha_addr);
}

/* The answer to a REGISTER_BROKER or QUERY_DATA_VERSION. */
static void regrem_done(rmq_err_t err, const rmq_remoting_request_t *resp, void *arg)
{
    regrem_ns_t *t = arg;
    int was_ok = t->ok;
    t->inflight = 0;
    if (err == RMQ_ESHUTDOWN)
        return;
    if (err != RMQ_OK || resp->code != RMQ_REMOTING_SUCCESS) {
        LOG_WARN_RL("register with RocketMQ name server %s failed: %s", t->addr,
                    err != RMQ_OK ? rmq_strerror(err) : resp->remark);
        t->ok = 0;
        t->need_full = 1;
        return;                    /* the next period retries */
    }
    const char *changed = rmq_remoting_field(resp, "changed");
    if (changed && strcmp(changed, "true") == 0) {
        t->need_full = 1;          /* the name server lacks this version (or the broker) */
    } else {
        t->ok = 1;
        if (!was_ok)
            LOG_INFO("registered with RocketMQ name server %s", t->addr);
        regrem_seen(t->r, resp);
    }
    regrem_pump(t);
}

/* Sends code with fields and body to t; on success it is in flight. */
static void regrem_call(regrem_ns_t *t, int code, const rmq_remoting_field_t *f, size_t n, struct evbuffer *body)
{
    size_t len = evbuffer_get_length(body);
    int timeout_ms = (int)t->r->node->cfg->register_broker_timeout_mills;
    if (rmq_rclient_call(t->cli, code, f, n, evbuffer_pullup(body, -1), len, timeout_ms, regrem_done, t) != RMQ_OK) {
        LOG_WARN_RL("register: cannot send to RocketMQ name server %s", t->addr);
        t->need_full = 1;
        return;
    }
    t->inflight = 1;
    t->r->bytes_sent += len;
}

/* REGISTER_BROKER with the whole table. */
static void regrem_full(regrem_ns_t *t)
{
    bk_regrem_t *r = t->r;
    const bk_node_t *node = r->node;
    rmq_remoting_field_t f[7];
    char id[24], ha[96] = "", crc[16];
    size_t n = regrem_fields(r, f, id);
    Rmq__DataVersion dv;
    bk_topics_version(node->topics, &dv);
    struct evbuffer *body = evbuffer_new();
    if (!body || regrem_body(node->topics, &dv, node->cfg->compressed_register, body) != RMQ_OK) {
        LOG_ERROR_RL("register: out of memory");
        goto out;
    }
    if (bk_ha_port(bk_node_ha(node)) > 0)
        snprintf(ha, sizeof(ha), "%s:%d", node->cfg->broker_ip1, bk_ha_port(bk_node_ha(node)));
    /* RocketMQ's UtilAll.crc32: CRC-32 with the top bit cleared */
    uLong c = crc32(0L, evbuffer_pullup(body, -1), (uInt)evbuffer_get_length(body)) & 0x7fffffff;
    snprintf(crc, sizeof(crc), "%lu", (unsigned long)c);
    f[n++] = (rmq_remoting_field_t){"haServerAddr", ha};
    f[n++] = (rmq_remoting_field_t){"compressed", node->cfg->compressed_register ? "true" : "false"};
    f[n++] = (rmq_remoting_field_t){"bodyCrc32", crc};
    t->need_full = 0;
    regrem_call(t, RMQ_REMOTING_REGISTER_BROKER, f, n, body);
out:
    if (body)
        evbuffer_free(body);
}

/* QUERY_DATA_VERSION: the broker's DataVersion JSON as the body. */
static void regrem_query(regrem_ns_t *t)
{
    rmq_remoting_field_t f[4];
    char id[24];
    size_t n = regrem_fields(t->r, f, id);
    Rmq__DataVersion dv;
    bk_topics_version(t->r->node->topics, &dv);
    struct evbuffer *body = evbuffer_new();
    if (!body)
        return;
    fr_rm_data_version_json(body, dv.counter, dv.timestamp);
    regrem_call(t, RMQ_REMOTING_QUERY_DATA_VERSION, f, n, body);
    evbuffer_free(body);
}

/* Sends what t is owed, if nothing is in flight. */
static void regrem_pump(regrem_ns_t *t)
{
    if (!t->inflight && !bk_node_stopping(t->r->node) && t->need_full)
        regrem_full(t);
}

/* ---- the remoting wire as the rounds drive it (bk_reground.h) ---- */

static int wire_idle(void *arg, size_t i)
{
    return !((bk_regrem_t *)arg)->ns[i].inflight;
}

static int wire_owed(void *arg, size_t i)
{
    return ((bk_regrem_t *)arg)->ns[i].need_full;
}

static void wire_send_owed(void *arg, size_t i)
{
    regrem_pump(&((bk_regrem_t *)arg)->ns[i]);
}

static void wire_send_query(void *arg, size_t i)
{
    regrem_query(&((bk_regrem_t *)arg)->ns[i]);
}

static const bk_reground_wire_t regrem_wire = {NULL, wire_idle, wire_owed, wire_send_owed, wire_send_query};

bk_regrem_t *bk_regrem_new(const bk_node_t *node, const char *const *addrs, size_t n, char *err, size_t errlen)
{
    bk_regrem_t *r = calloc(1, sizeof(*r));
    if (!r || !(r->ns = calloc(n ? n : 1, sizeof(*r->ns))))
        goto nomem;
    r->node = node;
    bk_unreg_init(&r->unreg, node->base, "RocketMQ name server");
    /* the daemon's own outgoing rules: TLS unless tlsMode=disabled, signed when aclAccessKey is set */
    rmq_rclient_opts_t copts = {.connect_timeout_ms = (int)node->cfg->register_broker_timeout_mills,
                                .ssl_ctx = node->sec->client_ctx, .cred = node->sec->signs ? &node->sec->cred : NULL};
    for (; r->n_ns < n; r->n_ns++) {
        regrem_ns_t *t = &r->ns[r->n_ns];
        t->r = r;
        t->need_full = 1;
        snprintf(t->addr, sizeof(t->addr), "%s", addrs[r->n_ns]);
        if (!(t->cli = rmq_rclient_new(node->base, t->addr, &copts))) {
            snprintf(err, errlen, "namesrvProtocol=remoting: name server '%s' is not a numeric host:port",
                     t->addr);
            bk_regrem_free(r);
            return NULL;
        }
    }
    if (bk_reground_init(&r->rounds, node, r->n_ns, &regrem_wire, r) != RMQ_OK)
        goto nomem;
    return r;
nomem:
    snprintf(err, errlen, "register: out of memory");
    bk_regrem_free(r);
    return NULL;
}

void bk_regrem_free(bk_regrem_t *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n_ns; i++)
        rmq_rclient_free(r->ns[i].cli);
    bk_reground_deinit(&r->rounds);
    bk_unreg_deinit(&r->unreg);
    free(r->ns);
    free(r);
}

void bk_regrem_start(bk_regrem_t *r)
{
    bk_reground_start(&r->rounds);
}

/* Owes every name server a full registration, sent at the end of this pass. */
static void regrem_owe_all(bk_regrem_t *r)
{
    for (size_t i = 0; i < r->n_ns; i++)
        r->ns[i].need_full = 1;
    bk_reground_soon(&r->rounds);
}

void bk_regrem_changed(bk_regrem_t *r)
{
    regrem_owe_all(r);
}

void bk_regrem_role_changed(bk_regrem_t *r, const char *master_addr, const char *ha_addr)
{
    snprintf(r->master_addr, sizeof(r->master_addr), "%s", master_addr);
    snprintf(r->ha_addr, sizeof(r->ha_addr), "%s", ha_addr);
    regrem_owe_all(r);
}

static void regrem_unreg_done(rmq_err_t err, const rmq_remoting_request_t *resp, void *arg)
{
    regrem_ns_t *t = arg;
    int ok = err == RMQ_OK && resp->code == RMQ_REMOTING_SUCCESS;
    bk_unreg_answered(&t->r->unreg, &t->unreg_pending, t->addr, ok, err != RMQ_OK ? rmq_strerror(err) : resp->remark);
}

void bk_regrem_stop(bk_regrem_t *r, int timeout_ms, void (*done)(void *arg), void *arg)
{
    bk_reground_stop(&r->rounds);
    rmq_remoting_field_t f[4];
    char id[24];
    size_t n = regrem_fields(r, f, id);
    for (size_t i = 0; i < r->n_ns; i++) {
        regrem_ns_t *t = &r->ns[i];
        if (rmq_rclient_call(t->cli, RMQ_REMOTING_UNREGISTER_BROKER, f, n, NULL, 0, timeout_ms, regrem_unreg_done, t) ==
            RMQ_OK)
            bk_unreg_sent(&r->unreg, &t->unreg_pending);
    }
    bk_unreg_wait(&r->unreg, timeout_ms, done, arg);
}

const char *bk_regrem_master_addr(const bk_regrem_t *r)
{
    return r->master_addr;
}

const char *bk_regrem_ha_addr(const bk_regrem_t *r)
{
    return r->ha_addr;
}

size_t bk_regrem_ok_count(const bk_regrem_t *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_ns; i++)
        n += r->ns[i].ok;
    return n;
}

uint64_t bk_regrem_bytes_sent(const bk_regrem_t *r)
{
    return r->bytes_sent;
}
