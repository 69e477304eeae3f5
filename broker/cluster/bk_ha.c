/* bk_ha.c: replication wiring. A master opens its HA listener right after
 * the store (haListenPort, 0: ephemeral) and streams every topic and group
 * change to its slaves as it happens; a slave follows the master HA address
 * from haMasterAddress or, failing that, the name server's register answer,
 * and hands the streamed changes to its metadata copy (bk_metasync). Runtime
 * info lists the role and each slave's (or the slave's own) replication
 * state. In controller mode (enableControllerMode) it owns the epoch file,
 * and a master limits pulls to the confirm offset: the lowest offset every
 * member of the sync state set has acknowledged, and streams it to its
 * slaves; a slave limits its pulls to the last one it got and keeps it in
 * ROOT/confirmOffset (written off the loop, a value a little old is only
 * more careful), so after a restart it serves no more than it was told. */
#include "bk_ha.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "bk_groups_pb.h"
#include "bk_metasync.h"
#include "bk_topics_pb.h"
#include "rmq_file.h"
#include "ha_confirm.h"
#include "ha_master.h"
#include "ha_slave.h"
#include "rmq_log.h"

#define HA_INFO_MAX_SLAVES 8
#define HA_SYNC_SET_MAX 64

struct bk_ha {
    const bk_node_t *node;
    ha_config_t cfg;
    ha_master_t *master;
    ha_slave_t *slave;
    bk_metasync_t *metasync;      /* slave: metadata copy from the master */
    st_epoch_t *epochs;           /* controller mode: the epoch file; NULL otherwise */
    /* controller mode, master: the sync state set (broker ids) the
     * controller gave; -1 members until it gives one (then every streaming
     * slave counts) */
    int64_t sync_set[HA_SYNC_SET_MAX];
    ssize_t n_sync_set;
    int64_t confirm;              /* last confirm offset (a slave: the master's) */
    int confirm_all;              /* the set is the master alone: its log end */
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
    Rmq__HaMeta meta;
    Rmq__TopicConfig tc;
    Rmq__DataVersion dv;
    bk_topics_change_meta(ha->node->topics, name, topic, &meta, &tc, &dv);
    ha_push_meta(ha, &meta, "topic", name);
}

/* bk_groups item observer on a master. */
static void ha_group_changed(void *arg, const char *name, const bk_group_t *grp)
{
    bk_ha_t *ha = arg;
    Rmq__HaMeta meta = RMQ__HA_META__INIT;
    Rmq__SubscriptionGroupConfig gc;
    Rmq__DataVersion dv;
    bk_groups_version(ha->node->groups, &dv);
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

/* Controller mode: opens the epoch file (storePathEpochFile, else
 * ROOT/epochFileCheckpoint). 0, or -1 with err filled. */
static int ha_epochs_open(bk_ha_t *ha, char *err, size_t errlen)
{
    const bk_config_t *c = ha->node->cfg;
    char path[PATH_MAX], why[PATH_MAX + 200];

    if (!c->enable_controller_mode)
        return 0;
    if (c->store_path_epoch_file[0])
        snprintf(path, sizeof(path), "%s", c->store_path_epoch_file);
    else if (snprintf(path, sizeof(path), "%s/epochFileCheckpoint", c->store_path_root_dir) >= (int)sizeof(path)) {
        snprintf(err, errlen, "storePathRootDir=%s: too long for the epoch file path", c->store_path_root_dir);
        return -1;
    }
    if (!(ha->epochs = st_epoch_open(path, why, sizeof(why)))) {
        snprintf(err, errlen, "storePathEpochFile: %s", why);
        return -1;
    }
    ha->cfg.epochs = ha->epochs;
    return 0;
}

static int64_t ha_log_end(const bk_ha_t *ha)
{
    st_store_stats_t stats;

    st_store_stats(ha->node->store, &stats);
    return stats.commitlog_max_offset;
}

/* The confirm offset from the slaves' acks: the lowest ack of the set's
 * members, the last value while one of them is not connected, or -1 when
 * the set is the master alone. */
static int64_t ha_confirm_compute(bk_ha_t *ha)
{
    ha_slave_info_t info[HA_SYNC_SET_MAX];
    size_t n = ha_master_slaves(ha->master, info, HA_SYNC_SET_MAX);
    int64_t confirm = -1;

    if (n > HA_SYNC_SET_MAX)
        n = HA_SYNC_SET_MAX;
    if (ha->n_sync_set < 0) {            /* no set given: every streaming slave */
        for (size_t i = 0; i < n; i++)
            if (confirm < 0 || info[i].acked_offset < confirm)
                confirm = info[i].acked_offset;
        return confirm;
    }
    for (ssize_t k = 0; k < ha->n_sync_set; k++) {
        size_t i = 0;

        if (ha->sync_set[k] == ha->cfg.broker_id)
            continue;                    /* the master itself has everything */
        while (i < n && info[i].broker_id != ha->sync_set[k])
            i++;
        if (i == n)
            return ha->confirm;          /* a member is not connected: hold still (RocketMQ #6662) */
        if (confirm < 0 || info[i].acked_offset < confirm)
            confirm = info[i].acked_offset;
    }
    return confirm;
}

/* Recomputes the confirm offset and applies it to the store's pulls. */
static void ha_confirm_update(void *arg)
{
    bk_ha_t *ha = arg;
    int64_t c = ha_confirm_compute(ha);

    ha->confirm_all = c < 0;
    ha->confirm = c < 0 ? ha_log_end(ha) : c;
    st_store_set_read_limit(ha->node->store, c);
    ha_master_set_confirm(ha->master, c);
}

/* ROOT/confirmOffset, a slave's last confirm offset from its master. */
static void ha_confirm_path(const bk_ha_t *ha, char *path, size_t len)
{
    snprintf(path, len, "%s/confirmOffset", ha->node->cfg->store_path_root_dir);
}

/* ha_slave confirm callback: serve pulls below the master's confirm
 * offset, and keep it for a restart. */
static void ha_confirm_arrived(int64_t confirm, void *arg)
{
    bk_ha_t *ha = arg;
    char path[PATH_MAX], *text;

    if (confirm == ha->confirm)
        return;
    ha->confirm = confirm;
    st_store_set_read_limit(ha->node->store, confirm);
    ha_confirm_path(ha, path, sizeof path);
    if ((text = malloc(HA_CONFIRM_TEXT_MAX)) &&
        bk_persist_submit(ha->node->persist, path, text, ha_confirm_format(text, confirm)) == RMQ_OK)
        return;
    LOG_WARN_RL("HA: cannot queue the confirm offset %" PRId64 " for %s: out of memory", confirm, path);
}

/* A controller-mode slave starts from its kept confirm offset, or from 0
 * (it serves nothing until its master says) when it has none, or when the
 * file cannot be read or is corrupt: that is logged as an error and the
 * broker starts, since a lower confirm offset only holds consumers back
 * and never exposes a message the master may still truncate. */
static void ha_confirm_load(bk_ha_t *ha)
{
    char path[PATH_MAX], why[128], *text = NULL;
    size_t len = 0;
    rmq_err_t rc;

    ha->confirm = 0;
    ha_confirm_path(ha, path, sizeof path);
    rc = rmq_file_read_all(path, &text, &len);
    if (rc == RMQ_OK)
        rc = ha_confirm_parse(text, len, &ha->confirm, why, sizeof why);
    else if (rc != RMQ_ENOTFOUND)
        snprintf(why, sizeof why, "cannot be read: %s", rmq_strerror(rc));
    if (rc != RMQ_OK && rc != RMQ_ENOTFOUND) {
        ha->confirm = 0;
        LOG_ERROR("HA: %s %s; serving nothing until the master sends its confirm offset", path, why);
    }
    free(text);
    st_store_set_read_limit(ha->node->store, ha->confirm);
}

/* controllerModeStartEpoch: a master begins that epoch now unless its
 * epoch file already ends with it (a restart). */
static rmq_err_t ha_start_epoch(bk_ha_t *ha, char *err, size_t errlen)
{
    int64_t e = ha->node->cfg->controller_mode_start_epoch;
    size_t n = st_epoch_count(ha->epochs);

    if (e == 0 || (n > 0 && st_epoch_entries(ha->epochs)[n - 1].epoch == e))
        return RMQ_OK;
    return bk_ha_epoch_begin(ha, e, err, errlen);
}

bk_ha_t *bk_ha_new(const bk_node_t *node, char *err, size_t errlen)
{
    bk_ha_t *ha = calloc(1, sizeof(*ha));
    if (!ha) {
        snprintf(err, errlen, "HA: out of memory");
        return NULL;
    }
    ha->node = node;
    ha->n_sync_set = -1;
    ha_cfg_fill(node->cfg, &ha->cfg);
    if (ha_epochs_open(ha, err, errlen) != 0) {
        free(ha);
        return NULL;
    }
    ha->cfg.ssl_ctx = bk_node_role(node) != BK_SLAVE ? node->sec->server_ctx : node->sec->client_ctx;
    ha->cfg.tls_mode = node->sec->tls_mode;
    ha->cfg.acl = node->sec->acl;
    if (node->sec->signs) {
        ha->cfg.access_key = node->sec->cred.access_key;
        ha->cfg.secret_key = node->sec->cred.secret_key;
    }
    if (bk_node_role(node) != BK_SLAVE) {
        char why[256] = "";
        if (!(ha->master = ha_master_new(node->base, node->store, &ha->cfg, why, sizeof(why)))) {
            snprintf(err, errlen, "haListenPort=%d: %s", ha->cfg.listen_port, why);
            st_epoch_close(ha->epochs);
            free(ha);
            return NULL;
        }
        if (ha->epochs) {
            ha->confirm = ha_log_end(ha);    /* a new master's log stays */
            ha_master_on_progress(ha->master, ha_confirm_update, ha);
            ha_confirm_update(ha);
            if (ha_start_epoch(ha, err, errlen) != RMQ_OK) {
                bk_ha_free(ha);
                return NULL;
            }
        }
        bk_topics_on_item(node->topics, ha_topic_changed, ha);
        bk_groups_on_item(node->groups, ha_group_changed, ha);
        return ha;
    }
    ha->slave = ha_slave_new(node->base, node->store, &ha->cfg);
    ha->metasync = bk_metasync_new(node);
    if (!ha->slave || !ha->metasync) {
        snprintf(err, errlen, "HA: cannot create the slave");
        bk_ha_free(ha);
        return NULL;
    }
    ha_slave_on_meta(ha->slave, ha_meta_arrived, ha->metasync);
    if (ha->epochs) {
        ha_confirm_load(ha);
        ha_slave_on_confirm(ha->slave, ha_confirm_arrived, ha);
    }
    if (node->cfg->ha_master_address[0])
        ha_slave_set_master(ha->slave, node->cfg->ha_master_address);
    return ha;
}

void bk_ha_free(bk_ha_t *ha)
{
    if (!ha)
        return;
    if (ha->master) {
        bk_topics_on_item(ha->node->topics, NULL, NULL);
        bk_groups_on_item(ha->node->groups, NULL, NULL);
        ha_master_on_progress(ha->master, NULL, NULL);
        ha_master_free(ha->master);
        /* the read limit stays at the confirm offset: lifting it would answer
         * held pulls with records no slave confirmed, in the instant before
         * a deposed master becomes a slave and truncates them (chaos_ctl's
         * SIGSTOP of a master past its lease); the next HA sets its own */
    }
    if (ha->slave) {
        ha_slave_free(ha->slave);
        if (ha->epochs)
            st_store_set_read_limit(ha->node->store, -1);
    }
    bk_metasync_free(ha->metasync);
    st_epoch_close(ha->epochs);
    free(ha);
}

rmq_err_t bk_ha_epoch_begin(bk_ha_t *ha, int64_t epoch, char *err, size_t errlen)
{
    st_store_stats_t stats;
    char why[300];
    rmq_err_t rc;

    if (!ha->epochs || !ha->master) {
        snprintf(err, errlen, "epoch %" PRId64 ": %s", epoch,
                 ha->epochs ? "this broker is not the master" : "enableControllerMode is off");
        return RMQ_EINVAL;
    }
    st_store_stats(ha->node->store, &stats);
    size_t n = st_epoch_count(ha->epochs);
    if (n > 0 && st_epoch_entries(ha->epochs)[n - 1].epoch == epoch) {
        /* the controller names this broker master of the epoch its log ends
         * in: it led that epoch before a restart (a whole-cluster restart
         * keeps the controller's state) and goes on with its own log */
        LOG_INFO("HA: master again at epoch %" PRId64 " (the epoch file ends with it), offset %" PRId64, epoch,
                 stats.commitlog_max_offset);
        return RMQ_OK;
    }
    if ((rc = st_epoch_append(ha->epochs, epoch, stats.commitlog_max_offset, why, sizeof(why))) != RMQ_OK) {
        snprintf(err, errlen, "epoch %" PRId64 " at offset %" PRId64 ": %s", epoch,
                 stats.commitlog_max_offset, why);
        return rc;
    }
    LOG_INFO("HA: master at epoch %" PRId64 " from offset %" PRId64, epoch, stats.commitlog_max_offset);
    return RMQ_OK;
}

int64_t bk_ha_confirm_offset(const bk_ha_t *ha)
{
    if (!ha->epochs)
        return -1;
    return ha->master && ha->confirm_all ? ha_log_end(ha) : ha->confirm;
}

int64_t bk_ha_epoch_at(const bk_ha_t *ha, int64_t phys)
{
    if (!ha || !ha->epochs)
        return 0;
    const st_epoch_entry_t *e = st_epoch_entries(ha->epochs);
    for (size_t i = st_epoch_count(ha->epochs); i > 0; i--)
        if (e[i - 1].start_offset <= phys)
            return e[i - 1].epoch;
    return 0;
}

void bk_ha_set_sync_state_set(bk_ha_t *ha, const int64_t *broker_ids, size_t n)
{
    if (n > HA_SYNC_SET_MAX) {
        LOG_WARN("HA: sync state set of %zu members; counting the first %d", n, HA_SYNC_SET_MAX);
        n = HA_SYNC_SET_MAX;
    }
    for (size_t i = 0; i < n; i++)
        ha->sync_set[i] = broker_ids[i];
    ha->n_sync_set = (ssize_t)n;
    if (ha->epochs && ha->master)
        ha_confirm_update(ha);
}

void bk_ha_set_acks(bk_ha_t *ha, int need, int all_in_set, const int64_t *set, size_t n)
{
    if (ha && ha->master)
        ha_master_set_acks(ha->master, need, all_in_set, set, n);
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
    return ha && ha->master && bk_node_role(ha->node) == BK_SYNC_MASTER ? ha_master_sync(ha->master) : NULL;
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

void bk_ha_follow(bk_ha_t *ha, const char *ha_addr)
{
    if (ha && ha->slave && ha_addr[0])
        ha_slave_set_master(ha->slave, ha_addr);
}

void bk_ha_master_seen(bk_ha_t *ha, const char *ha_addr)
{
    if (ha && ha->slave && !ha->node->cfg->ha_master_address[0] && ha_addr[0])
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

/* Controller mode: the current epoch and the confirm offset (master). */
static void describe_epochs(bk_ha_t *ha, void (*add)(const char *, const char *, void *), void *arg)
{
    size_t n = st_epoch_count(ha->epochs);
    char val[32];

    snprintf(val, sizeof(val), "%" PRId64, n ? st_epoch_entries(ha->epochs)[n - 1].epoch : 0);
    add("haEpoch", val, arg);
    snprintf(val, sizeof(val), "%" PRId64, bk_ha_confirm_offset(ha));
    add("haConfirmOffset", val, arg);
}

void bk_ha_describe(bk_ha_t *ha, void (*add)(const char *key, const char *value, void *arg), void *arg)
{
    if (!ha)
        return;
    if (ha->epochs)
        describe_epochs(ha, add, arg);
    if (ha->master)
        describe_master(ha, add, arg);
    else
        describe_slave(ha, add, arg);
}
