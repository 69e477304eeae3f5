/* bk_ha.c: replication wiring. A master opens its HA listener right after
 * the store (haListenPort, 0: ephemeral) and streams every topic and group
 * change to its slaves as it happens; a slave follows the master HA address
 * from haMasterAddress or, failing that, the name server's register answer,
 * and hands the streamed changes to its metadata copy (bk_metasync). Runtime
 * info lists the role and each slave's (or the slave's own) replication
 * state. */
#include "bk_ha.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "bk_metasync.h"
#include "ha_master.h"
#include "ha_slave.h"
#include "rmq_log.h"

#define HA_INFO_MAX_SLAVES 8

struct bk_ha {
    bk_broker_t *bk;
    ha_config_t cfg;
    ha_master_t *master;
    ha_slave_t *slave;
    bk_metasync_t *metasync;      /* slave: metadata copy from the master */
};

/* haListenPort, else listenPort + 1 (0 stays ephemeral). */
static int ha_port(const bk_config_t *c)
{
    if (c->ha_listen_port >= 0)
        return (int)c->ha_listen_port;
    return c->listen_port > 0 && c->listen_port < 65535 ? (int)c->listen_port + 1 : 0;
}

/* Fills the HA settings from the broker's properties. */
static void ha_cfg_fill(const bk_config_t *c, ha_config_t *hc)
{
    *hc = (ha_config_t){
        .cluster_name = c->broker_cluster_name,
        .broker_name = c->broker_name,
        .broker_id = c->broker_id,
        .listen_port = ha_port(c),
        .transfer_batch_size = (uint32_t)c->ha_transfer_batch_size,
        .housekeeping_interval_ms = (int)c->ha_housekeeping_interval,
        .slave_fallbehind_max = c->ha_slave_fallbehind_max,
    };
}

/* Streams one change to the slaves (logged if it cannot be). */
static void ha_push_meta(bk_ha_t *ha, Rmq__HaMeta *meta, const char *what, const char *name)
{
    rmq_err_t rc = ha_master_push_meta(ha->master, meta);
    if (rc != RMQ_OK)
        LOG_WARN_RL("HA: cannot stream %s %s to the slaves (%s); they get it from the periodic sync",
                    what, name, rmq_strerror(rc));
}

/* bk_topics item observer on a master. */
static void ha_topic_changed(void *arg, const char *name, const bk_topic_t *topic)
{
    bk_ha_t *ha = arg;
    Rmq__HaMeta meta = RMQ__HA_META__INIT;
    Rmq__TopicConfig tc;
    Rmq__DataVersion dv;
    bk_topics_version(ha->bk->topics, &dv);
    meta.version = &dv;
    if (topic) {
        bk_topic_to_pb(topic, &tc);
        meta.change_case = RMQ__HA_META__CHANGE_TOPIC;
        meta.topic = &tc;
    } else {
        meta.change_case = RMQ__HA_META__CHANGE_DELETED_TOPIC;
        meta.deleted_topic = (char *)name;
    }
    ha_push_meta(ha, &meta, "topic", name);
}

/* bk_groups item observer on a master. */
static void ha_group_changed(void *arg, const char *name, const bk_group_t *grp)
{
    bk_ha_t *ha = arg;
    Rmq__HaMeta meta = RMQ__HA_META__INIT;
    Rmq__SubscriptionGroupConfig gc;
    Rmq__DataVersion dv;
    bk_groups_version(ha->bk->groups, &dv);
    meta.version = &dv;
    if (grp) {
        bk_group_to_pb(grp, &gc);
        meta.change_case = RMQ__HA_META__CHANGE_GROUP;
        meta.group = &gc;
    } else {
        meta.change_case = RMQ__HA_META__CHANGE_DELETED_GROUP;
        meta.deleted_group = (char *)name;
    }
    ha_push_meta(ha, &meta, "subscription group", name);
}

/* ha_slave metadata callback: the slave's copy applies it. */
static int ha_meta_arrived(const Rmq__HaMeta *meta, void *arg, char *why, size_t whylen)
{
    return bk_metasync_apply(arg, meta, why, whylen);
}

bk_ha_t *bk_ha_new(bk_broker_t *bk, char *err, size_t errlen)
{
    bk_ha_t *ha = calloc(1, sizeof(*ha));
    if (!ha) {
        snprintf(err, errlen, "HA: out of memory");
        return NULL;
    }
    ha->bk = bk;
    ha_cfg_fill(bk->cfg, &ha->cfg);
    ha->cfg.ssl_ctx = bk_broker_role(bk) != BK_SLAVE ? bk->sec.server_ctx : bk->sec.client_ctx;
    ha->cfg.tls_mode = bk->sec.tls_mode;
    ha->cfg.acl = bk->sec.acl;
    if (bk->sec.signs) {
        ha->cfg.access_key = bk->sec.cred.access_key;
        ha->cfg.secret_key = bk->sec.cred.secret_key;
    }
    if (bk_broker_role(bk) != BK_SLAVE) {
        char why[256] = "";
        if (!(ha->master = ha_master_new(bk->base, bk->store, &ha->cfg, why, sizeof(why)))) {
            snprintf(err, errlen, "haListenPort=%d: %s", ha->cfg.listen_port, why);
            free(ha);
            return NULL;
        }
        bk_topics_on_item(bk->topics, ha_topic_changed, ha);
        bk_groups_on_item(bk->groups, ha_group_changed, ha);
        return ha;
    }
    ha->slave = ha_slave_new(bk->base, bk->store, &ha->cfg);
    ha->metasync = bk_metasync_new(bk);
    if (!ha->slave || !ha->metasync) {
        snprintf(err, errlen, "HA: cannot create the slave");
        bk_ha_free(ha);
        return NULL;
    }
    ha_slave_on_meta(ha->slave, ha_meta_arrived, ha->metasync);
    if (bk->cfg->ha_master_address[0])
        ha_slave_set_master(ha->slave, bk->cfg->ha_master_address);
    return ha;
}

void bk_ha_free(bk_ha_t *ha)
{
    if (!ha)
        return;
    if (ha->master) {
        bk_topics_on_item(ha->bk->topics, NULL, NULL);
        bk_groups_on_item(ha->bk->groups, NULL, NULL);
        ha_master_free(ha->master);
    }
    if (ha->slave)
        ha_slave_free(ha->slave);
    bk_metasync_free(ha->metasync);
    free(ha);
}

int bk_ha_port(const bk_ha_t *ha)
{
    return ha && ha->master ? ha_master_port(ha->master) : 0;
}

void bk_ha_notify_append(bk_ha_t *ha)
{
    if (ha && ha->master)
        ha_master_notify_append(ha->master);
}

ha_sync_t *bk_ha_sync(bk_ha_t *ha)
{
    return ha && ha->master && bk_broker_role(ha->bk) == BK_SYNC_MASTER ? ha_master_sync(ha->master) : NULL;
}

void bk_ha_offset_committed(bk_ha_t *ha, const char *topic, const char *group, int32_t queue_id)
{
    if (ha && ha->metasync)
        bk_metasync_note_commit(ha->metasync, topic, group, queue_id);
}

size_t bk_ha_slaves(bk_ha_t *ha, ha_slave_info_t *out, size_t n)
{
    return ha && ha->master ? ha_master_slaves(ha->master, out, n) : 0;
}

/* Minimal version (controller broker side): ctl-epoch's body, which appends
 * <epoch, log end> to the epoch file, replaces it at merge. */
rmq_err_t bk_ha_epoch_begin(bk_ha_t *ha, int64_t epoch, char *err, size_t errlen)
{
    (void)err;
    (void)errlen;
    LOG_INFO("HA: master epoch %" PRId64 " begins on %s", epoch, ha->bk->addr);
    return RMQ_OK;
}

void bk_ha_follow(bk_ha_t *ha, const char *ha_addr)
{
    if (ha && ha->slave && ha_addr[0])
        ha_slave_set_master(ha->slave, ha_addr);
}

void bk_ha_master_seen(bk_ha_t *ha, const char *ha_addr)
{
    if (ha && ha->slave && !ha->bk->cfg->ha_master_address[0] && ha_addr[0])
        ha_slave_set_master(ha->slave, ha_addr);
}

/* Master: slave count, then haSlaveN.{addr,brokerId,ackedOffset,lagBytes,inSync,connectedSince}. */
static void describe_master(bk_ha_t *ha, void (*add)(const char *, const char *, void *), void *arg)
{
    ha_slave_info_t info[HA_INFO_MAX_SLAVES];
    size_t n = ha_master_slaves(ha->master, info, HA_INFO_MAX_SLAVES);
    char key[64], val[96];
    snprintf(val, sizeof(val), "%zu", n);
    add("haSlaveCount", val, arg);
    for (size_t i = 0; i < n && i < HA_INFO_MAX_SLAVES; i++) {
        snprintf(key, sizeof(key), "haSlave%zu.addr", i);
        add(key, info[i].addr, arg);
        snprintf(key, sizeof(key), "haSlave%zu.brokerId", i);
        snprintf(val, sizeof(val), "%" PRId64, info[i].broker_id);
        add(key, val, arg);
        snprintf(key, sizeof(key), "haSlave%zu.ackedOffset", i);
        snprintf(val, sizeof(val), "%" PRId64, info[i].acked_offset);
        add(key, val, arg);
        snprintf(key, sizeof(key), "haSlave%zu.lagBytes", i);
        snprintf(val, sizeof(val), "%" PRId64, info[i].lag_bytes);
        add(key, val, arg);
        snprintf(key, sizeof(key), "haSlave%zu.inSync", i);
        add(key, info[i].in_sync ? "true" : "false", arg);
        snprintf(key, sizeof(key), "haSlave%zu.connectedSince", i);
        snprintf(val, sizeof(val), "%" PRId64, info[i].connected_since_ms);
        add(key, val, arg);
    }
}

/* Slave: master HA address, link state, acknowledged offset, last error. */
static void describe_slave(bk_ha_t *ha, void (*add)(const char *, const char *, void *), void *arg)
{
    ha_slave_state_t s;
    char val[64];
    ha_slave_state(ha->slave, &s);
    add("haMasterAddr", s.master_addr, arg);
    add("haConnected", s.connected ? "true" : "false", arg);
    snprintf(val, sizeof(val), "%" PRId64, s.acked_offset);
    add("haAckedOffset", val, arg);
    snprintf(val, sizeof(val), "%" PRId64, s.connects);
    add("haConnects", val, arg);
    add("haLastError", s.last_error, arg);
    snprintf(val, sizeof(val), "%lld", bk_metasync_count(ha->metasync));
    add("slaveSyncCount", val, arg);
}

void bk_ha_describe(bk_ha_t *ha, void (*add)(const char *key, const char *value, void *arg), void *arg)
{
    if (!ha)
        return;
    if (ha->master)
        describe_master(ha, add, arg);
    else
        describe_slave(ha, add, arg);
}
