/* bk_controller.c: the controllers' client (bk_controller.h). One request
 * in flight per controller: a heartbeat every brokerHeartbeatInterval
 * (the first one a registration); the leader's answer carries the group's
 * committed state, which drives the broker's role and, for a master, its
 * lease (renewed from the send time of each confirming heartbeat). A
 * master also checks its slaves every checkSyncStateSetPeriod: a slave
 * whose acked offset reached the log end of the previous check is caught
 * up; a member stays in the set while it caught up within
 * haMaxTimeSlaveNotCatchup, a slave outside joins it only once it holds
 * every message the master may have acknowledged (may_join), and until
 * then a caught-up one is counted in the acks. A SYNC_MASTER's sends
 * follow RocketMQ's rules (CommitLog.asyncPutMessage,
 * GroupTransferService): refused while
 * the set (the larger one while an expansion is pending, as
 * AutoSwitchHAService.inSyncReplicasNums) is below minInSyncReplicas;
 * with allAckInSyncStateSet acknowledged once every member of the set
 * (the committed one and any member being added) has them, so a set only
 * shrinks after the controller committed it and every acknowledged message
 * is on every replica the controller may elect; otherwise once
 * inSyncReplicas replicas (the master counted) have them. */
#include "bk_controller.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_ha.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define CTL_MAX_TARGETS 16
#define CTL_MAX_REPLICAS 16       /* the controller's limit per group */
#define CTL_ADDR_MAX 255
#define CTL_CALL_TIMEOUT_MS 3000

typedef struct ctl_target {
    bk_controller_t *c;
    char addr[128];
    int registered;               /* answered once: heartbeats from now on */
    int inflight;
    int leader;                   /* its last answer was the leader's */
    int64_t sent_ms;              /* of the request in flight */
} ctl_target_t;

/* A slave's catch-up record (master only). */
typedef struct ctl_caught {
    int64_t id;
    int64_t caught_ms;            /* last check it had reached the previous log end */
    int64_t counted_from;         /* outside the set: the log end when acks began to count it; -1: not counted */
} ctl_caught_t;

struct bk_controller {
    const bk_node_t *node;
    rmq_client_pool_t *pool;
    ctl_target_t targets[CTL_MAX_TARGETS];
    size_t n_targets;
    struct event *beat;           /* heartbeats, every brokerHeartbeatInterval */
    struct event *check;          /* master: the sync state set, every checkSyncStateSetPeriod */
    /* the group as the leader last answered */
    int known;
    int64_t master_id, master_epoch, sse_epoch;
    int64_t sync_set[CTL_MAX_REPLICAS];
    size_t n_sync;
    char master_addr[CTL_ADDR_MAX + 1];
    char master_ha[CTL_ADDR_MAX + 1];
    /* what the broker acts on */
    int64_t applied_epoch;        /* the master epoch of its current role */
    char following[CTL_ADDR_MAX + 1];
    int64_t lease_until_ms;       /* master: acknowledges writes before this */
    int fenced_logged;
    int altering;                 /* an ALTER_SYNC_STATE_SET in flight */
    int expanding;                /* the counted set adds a slave the committed one lacks */
    int64_t wanted[CTL_MAX_REPLICAS]; /* the set acks count (wanted_set), while expanding */
    size_t n_wanted;
    ctl_caught_t caught[CTL_MAX_REPLICAS];
    size_t n_caught;
    int64_t prev_log_end;         /* the log end at the previous check */
    int64_t switches, beats_ok;
};

int64_t bk_controller_lease_margin_ms(int64_t timeout_ms)
{
    int64_t m = timeout_ms / 4;
    return m < 1000 ? m : 1000;
}

static void evtimer_add_ms(struct event *ev, int64_t ms)
{
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    evtimer_add(ev, &tv);
}

/* The commit log's write position. */
static int64_t log_end(const bk_node_t *node)
{
    st_store_stats_t ss;
    st_store_stats(node->store, &ss);
    return ss.commitlog_max_offset;
}

static int set_has(const int64_t *ids, size_t n, int64_t id)
{
    for (size_t i = 0; i < n; i++)
        if (ids[i] == id)
            return 1;
    return 0;
}

/* ---- role ------------------------------------------------------------------ */

/* The kind of master this broker becomes when elected. */
static bk_role_t master_kind(const bk_controller_t *c)
{
    return c->node->cfg->broker_role == BK_SYNC_MASTER ? BK_SYNC_MASTER : BK_ASYNC_MASTER;
}

/* The set acks count against: the committed one, plus the members being
 * added while an expansion is pending (RocketMQ #5663). Its size. */
static size_t ack_set(const bk_controller_t *c, int64_t *ids)
{
    size_t n = c->n_sync;

    memcpy(ids, c->sync_set, n * sizeof ids[0]);
    for (size_t i = 0; c->expanding && i < c->n_wanted; i++)
        if (!set_has(ids, n, c->wanted[i]) && n < 2 * CTL_MAX_REPLICAS)
            ids[n++] = c->wanted[i];
    return n;
}

/* A master's ack rule from allAckInSyncStateSet, inSyncReplicas and
 * minInSyncReplicas over the set; its confirm offset follows the committed
 * set. */
static void acks_update(bk_controller_t *c)
{
    const bk_node_t *node = c->node;
    const bk_config_t *cfg = node->cfg;
    int64_t ids[2 * CTL_MAX_REPLICAS];
    size_t n = ack_set(c, ids);
    int all = cfg->all_ack_in_sync_state_set;
    int need = (int)cfg->in_sync_replicas - 1;   /* slaves: the master counts itself */

    if (bk_node_role(node) == BK_SLAVE)
        return;
    bk_ha_set_acks(bk_node_ha(node), need, all, ids, n);
    node->ops->set_sync_acks(node->arg, all ? n > 1 : need > 0);
    bk_append_set_in_sync(node->append, bk_node_role(node) == BK_SYNC_MASTER ? (int64_t)n : 0,
                          bk_node_role(node) == BK_SYNC_MASTER ? cfg->min_in_sync_replicas : 0);
    if (c->n_sync)
        bk_ha_set_sync_state_set(bk_node_ha(node), c->sync_set, c->n_sync);
}

static void beat_all(bk_controller_t *c);

/* Switches the broker to what the leader's state says, if it differs. */
static void role_follow(bk_controller_t *c)
{
    const bk_node_t *node = c->node;
    char err[512] = "";
    int me = c->master_id == node->cfg->broker_id;
    bk_role_t want = me ? master_kind(c) : BK_SLAVE;

    if (c->master_id < 0 && bk_node_role(node) == BK_SLAVE)
        return;                   /* no master yet: wait for the election */
    if (bk_node_role(node) == want && c->applied_epoch == c->master_epoch &&
        (me || strcmp(c->following, c->master_ha) == 0))
        return;
    c->expanding = 0;
    c->n_caught = 0;
    if (node->ops->switch_role(node->arg, want, c->master_epoch, me ? "" : c->master_addr, me ? "" : c->master_ha, err,
                              sizeof err) != RMQ_OK) {
        LOG_ERROR_RL("controller: cannot act as %s at epoch %" PRId64 ": %s", bk_role_name(want), c->master_epoch,
                     err);
        return;
    }
    c->switches++;
    c->applied_epoch = c->master_epoch;
    snprintf(c->following, sizeof c->following, "%s", me ? "" : c->master_ha);
    if (me) {
        c->prev_log_end = log_end(node);
        acks_update(c);
        beat_all(c);              /* the controllers learn the new HA address at once */
    }
}

/* Takes a leader's ReplicaInfo sent at sent_ms: the state, the lease, the role. */
static void state_take(bk_controller_t *c, const Rmq__ReplicaInfo *ri, int64_t sent_ms)
{
    const bk_node_t *node = c->node;

    if (ri->master_epoch < c->master_epoch || ri->n_sync_state_set > CTL_MAX_REPLICAS) {
        LOG_WARN_RL("controller: ignored a state at master epoch %" PRId64 " (known %" PRId64 ", %zu in sync)",
                    ri->master_epoch, c->master_epoch, ri->n_sync_state_set);
        return;
    }
    c->known = 1;
    c->master_id = ri->master_broker_id;
    c->master_epoch = ri->master_epoch;
    c->sse_epoch = ri->sync_state_set_epoch;
    c->n_sync = ri->n_sync_state_set;
    if (c->n_sync)
        memcpy(c->sync_set, ri->sync_state_set, c->n_sync * sizeof c->sync_set[0]);
    snprintf(c->master_addr, sizeof c->master_addr, "%s", ri->master_addr ? ri->master_addr : "");
    snprintf(c->master_ha, sizeof c->master_ha, "%s", ri->master_ha_addr ? ri->master_ha_addr : "");
    if (c->master_id == node->cfg->broker_id) {
        int64_t timeout = node->cfg->controller_heart_beat_timeout_mills;
        int64_t until = sent_ms + timeout - bk_controller_lease_margin_ms(timeout);
        if (until > c->lease_until_ms)
            c->lease_until_ms = until;
        if (c->fenced_logged)
            LOG_WARN("controller: %s confirmed as master again; writes resume", node->addr);
        c->fenced_logged = 0;
    } else {
        c->lease_until_ms = 0;
    }
    role_follow(c);
    if (bk_node_role(node) != BK_SLAVE) {
        bk_append_set_lease(node->append, c->lease_until_ms);
        acks_update(c);
    }
}

/* ---- heartbeats -------------------------------------------------------------- */

static void beat_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    ctl_target_t *t = arg;
    bk_controller_t *c = t->c;

    t->inflight = 0;
    if (err == RMQ_ESHUTDOWN)
        return;
    if (err != RMQ_OK) {
        LOG_WARN_RL("controller %s: heartbeat failed: %s", t->addr, rmq_strerror(err));
        t->leader = 0;
        return;
    }
    int status = resp->cmd->status;
    t->registered = status == RMQ__STATUS__SUCCESS || status == RMQ__STATUS__CONTROLLER_NOT_LEADER;
    t->leader = status == RMQ__STATUS__SUCCESS;
    if (status == RMQ__STATUS__SUCCESS && resp->cmd->header_case == RMQ__COMMAND__HEADER_REPLICA_INFO) {
        c->beats_ok++;
        state_take(c, resp->cmd->replica_info, t->sent_ms);
    } else if (status != RMQ__STATUS__SUCCESS && status != RMQ__STATUS__CONTROLLER_NOT_LEADER) {
        LOG_WARN_RL("controller %s: heartbeat refused (%d): %s", t->addr, status, resp->cmd->remark);
    }
}

/* Sends t the broker's registration or heartbeat, unless one is in flight. */
static void beat_one(ctl_target_t *t)
{
    bk_controller_t *c = t->c;
    const bk_node_t *node = c->node;
    Rmq__ControllerBrokerRequest cb = RMQ__CONTROLLER_BROKER_REQUEST__INIT;
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    char ha[96] = "";

    if (t->inflight || bk_node_stopping(node))
        return;
    if (bk_ha_port(bk_node_ha(node)) > 0)
        snprintf(ha, sizeof ha, "%s:%d", node->cfg->broker_ip1, bk_ha_port(bk_node_ha(node)));
    cb.cluster_name = node->cfg->broker_cluster_name;
    cb.broker_name = node->cfg->broker_name;
    cb.broker_addr = node->addr;
    cb.broker_id = node->cfg->broker_id;
    cb.ha_server_addr = ha;
    cb.epoch = c->applied_epoch;
    cb.max_offset = log_end(node);
    cb.election_priority = node->cfg->broker_election_priority;
    cb.heartbeat_timeout_ms = node->cfg->controller_heart_beat_timeout_mills;
    cmd.code = t->registered ? RMQ__REQUEST_CODE__BROKER_HEARTBEAT : RMQ__REQUEST_CODE__CONTROLLER_REGISTER_BROKER;
    cmd.header_case = RMQ__COMMAND__HEADER_CONTROLLER_BROKER;
    cmd.controller_broker = &cb;
    rmq_client_t *cli = rmq_client_pool_get(c->pool, t->addr);
    t->sent_ms = rmq_mono_ms();
    if (cli && rmq_client_call(cli, &cmd, NULL, 0, CTL_CALL_TIMEOUT_MS, beat_done, t) == RMQ_OK)
        t->inflight = 1;
    else
        LOG_WARN_RL("controller %s: cannot send a heartbeat", t->addr);
}

static void beat_all(bk_controller_t *c)
{
    for (size_t i = 0; i < c->n_targets; i++)
        beat_one(&c->targets[i]);
}

/* Every brokerHeartbeatInterval: heartbeats, and a log line when the lease lapsed. */
static void on_beat(evutil_socket_t fd, short what, void *arg)
{
    bk_controller_t *c = arg;
    const bk_node_t *node = c->node;

    if (bk_node_role(node) != BK_SLAVE && rmq_mono_ms() >= c->lease_until_ms && !c->fenced_logged) {
        LOG_WARN("controller: %s fenced: no controller confirmed it as master within "
                 "controllerHeartBeatTimeoutMills=%lld less %lld ms; writes refused",
                 node->addr, (long long)node->cfg->controller_heart_beat_timeout_mills,
                 (long long)bk_controller_lease_margin_ms(node->cfg->controller_heart_beat_timeout_mills));
        c->fenced_logged = 1;
    }
    beat_all(c);
    evtimer_add_ms(c->beat, node->cfg->broker_heartbeat_interval);
}

/* ---- the sync state set (master) --------------------------------------------- */

static void alter_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    bk_controller_t *c = arg;

    if (err == RMQ_ESHUTDOWN)
        return;
    c->altering = 0;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS)
        LOG_WARN_RL("controller: sync state set change refused: %s",
                    err != RMQ_OK ? rmq_strerror(err) : resp->cmd->remark);
}

/* The slave's catch-up record, created when new; NULL when full. */
static ctl_caught_t *caught_get(bk_controller_t *c, int64_t id)
{
    for (size_t i = 0; i < c->n_caught; i++)
        if (c->caught[i].id == id)
            return &c->caught[i];
    if (c->n_caught == CTL_MAX_REPLICAS)
        return NULL;
    c->caught[c->n_caught] = (ctl_caught_t){.id = id, .caught_ms = INT64_MIN / 2, .counted_from = -1};
    return &c->caught[c->n_caught++];
}

/* Whether a slave outside the set, at acked, holds every message the
 * master may have acknowledged, so that it may become electable. Those end
 * at or below the confirm offset (the lowest ack of the set's members; the
 * log end while the set is the master alone): with allAckInSyncStateSet a
 * SYNC_MASTER acknowledges only what every member has, otherwise nothing
 * better is promised and the rule keeps a newcomer no further behind than
 * the members (RocketMQ: slaveMaxOffset >= confirmOffset). A SYNC_MASTER
 * with allAckInSyncStateSet that counted the slave's acks since the log
 * ended at counted_from acknowledged nothing past it without the slave, so
 * there acked >= counted_from suffices: a slave that keeps up with a busy
 * log joins too. */
static int may_join(const bk_controller_t *c, const ctl_caught_t *cg, int64_t acked)
{
    const bk_node_t *node = c->node;
    int counted = bk_node_role(node) == BK_SYNC_MASTER && node->cfg->all_ack_in_sync_state_set && cg->counted_from >= 0;

    return acked >= bk_ha_confirm_offset(bk_node_ha(node)) || (counted && acked >= cg->counted_from);
}

/* The set the master asks for into ids (its size): itself, the members
 * caught up recently and the slaves that may join. Into c->wanted the set
 * its acks count from now on: those and the slaves caught up recently that
 * may not join yet (RocketMQ #5663: an expansion counts before it is
 * committed). */
static size_t wanted_set(bk_controller_t *c, int64_t *ids)
{
    const bk_node_t *node = c->node;
    ha_slave_info_t info[CTL_MAX_REPLICAS];
    size_t n = bk_ha_slaves(bk_node_ha(node), info, CTL_MAX_REPLICAS), k = 0;
    int64_t now = rmq_mono_ms(), end = log_end(node);

    ids[k++] = c->wanted[0] = node->cfg->broker_id;
    c->n_wanted = 1;
    for (size_t i = 0; i < n && i < CTL_MAX_REPLICAS; i++) {
        ctl_caught_t *cg = info[i].broker_id != node->cfg->broker_id ? caught_get(c, info[i].broker_id) : NULL;
        if (!cg || set_has(c->wanted, c->n_wanted, cg->id))
            continue;
        if (info[i].acked_offset >= c->prev_log_end)
            cg->caught_ms = now;
        if (now - cg->caught_ms > node->cfg->ha_max_time_slave_not_catchup)
            continue;
        if (set_has(c->sync_set, c->n_sync, cg->id) || may_join(c, cg, info[i].acked_offset))
            ids[k++] = cg->id;
        else if (cg->counted_from < 0)
            cg->counted_from = end;
        c->wanted[c->n_wanted++] = cg->id;
    }
    for (size_t i = 0; i < c->n_caught; i++)
        if (!set_has(c->wanted, c->n_wanted, c->caught[i].id))
            c->caught[i].counted_from = -1;   /* acks go on without it: counting starts over */
    c->prev_log_end = end;
    return k;
}

/* Sends the leader the wanted set when it differs from the committed one. */
static void on_check(evutil_socket_t fd, short what, void *arg)
{
    bk_controller_t *c = arg;
    const bk_node_t *node = c->node;
    int64_t ids[CTL_MAX_REPLICAS];
    ctl_target_t *leader = NULL;

    evtimer_add_ms(c->check, node->cfg->check_sync_state_set_period);
    if (bk_node_role(node) == BK_SLAVE || c->master_id != node->cfg->broker_id)
        return;
    size_t n = wanted_set(c, ids), same = n == c->n_sync;
    int adds = 0;
    for (size_t i = 0; i < n; i++)
        same = same && set_has(c->sync_set, c->n_sync, ids[i]);
    for (size_t i = 0; i < c->n_wanted; i++)
        adds |= !set_has(c->sync_set, c->n_sync, c->wanted[i]);
    c->expanding = adds;
    if (!adds)
        c->n_wanted = 0;
    acks_update(c);               /* before the request: acks count the larger set */
    for (size_t i = 0; i < c->n_targets && !leader; i++)
        if (c->targets[i].leader)
            leader = &c->targets[i];
    if (same || c->altering || !leader)
        return;
    Rmq__AlterSyncStateSetRequest as = RMQ__ALTER_SYNC_STATE_SET_REQUEST__INIT;
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    as.cluster_name = node->cfg->broker_cluster_name;
    as.broker_name = node->cfg->broker_name;
    as.master_broker_id = node->cfg->broker_id;
    as.master_epoch = c->master_epoch;
    as.sync_state_set_epoch = c->sse_epoch;
    as.sync_state_set = ids;
    as.n_sync_state_set = n;
    cmd.code = RMQ__REQUEST_CODE__CONTROLLER_ALTER_SYNC_STATE_SET;
    cmd.header_case = RMQ__COMMAND__HEADER_ALTER_SYNC_STATE_SET;
    cmd.alter_sync_state_set = &as;
    rmq_client_t *cli = rmq_client_pool_get(c->pool, leader->addr);
    if (cli && rmq_client_call(cli, &cmd, NULL, 0, CTL_CALL_TIMEOUT_MS, alter_done, c) == RMQ_OK) {
        c->altering = 1;
        LOG_INFO("controller: %s asks for a sync state set of %zu replicas (had %zu, epoch %" PRId64 ")", node->addr,
                 n, c->n_sync, c->sse_epoch);
    }
}

/* ---- lifetime ---------------------------------------------------------------- */

/* Splits controllerAddr ("a:p;b:p", checked by bk_config_check) into targets. */
static rmq_err_t targets_parse(bk_controller_t *c, const char *addrs, char *err, size_t errlen)
{
    for (const char *p = addrs; *p;) {
        size_t len = strcspn(p, ";");
        if (len > 0) {
            if (c->n_targets == CTL_MAX_TARGETS || len >= sizeof c->targets[0].addr) {
                snprintf(err, errlen, "controllerAddr=%s: at most %d addresses of at most %zu characters", addrs,
                         CTL_MAX_TARGETS, sizeof c->targets[0].addr - 1);
                return RMQ_EINVAL;
            }
            ctl_target_t *t = &c->targets[c->n_targets++];
            t->c = c;
            snprintf(t->addr, sizeof t->addr, "%.*s", (int)len, p);
        }
        p += len;
        if (*p == ';')
            p++;
    }
    return RMQ_OK;
}

bk_controller_t *bk_controller_new(const bk_node_t *node, char *err, size_t errlen)
{
    bk_controller_t *c = calloc(1, sizeof *c);
    rmq_client_opts_t opts = {.connect_timeout_ms = CTL_CALL_TIMEOUT_MS, .name = "controller"};

    if (!c) {
        snprintf(err, errlen, "controller: out of memory");
        return NULL;
    }
    c->node = node;
    c->master_id = -1;
    if (targets_parse(c, node->cfg->controller_addr, err, errlen) != RMQ_OK)
        goto fail;
    rmq_security_client_opts(node->sec, &opts);
    c->pool = rmq_client_pool_new(node->base, &opts);
    c->beat = evtimer_new(node->base, on_beat, c);
    c->check = evtimer_new(node->base, on_check, c);
    if (!c->pool || !c->beat || !c->check) {
        snprintf(err, errlen, "controller: out of memory");
        goto fail;
    }
    return c;
fail:
    bk_controller_free(c);
    return NULL;
}

void bk_controller_start(bk_controller_t *c)
{
    LOG_INFO("controller mode: %s (replica %lld of %s) registers with %s", c->node->addr,
             (long long)c->node->cfg->broker_id, c->node->cfg->broker_name, c->node->cfg->controller_addr);
    on_beat(-1, 0, c);
    evtimer_add_ms(c->check, c->node->cfg->check_sync_state_set_period);
}

void bk_controller_free(bk_controller_t *c)
{
    if (!c)
        return;
    if (c->pool)
        rmq_client_pool_free(c->pool);    /* callbacks see RMQ_ESHUTDOWN */
    if (c->beat)
        event_free(c->beat);
    if (c->check)
        event_free(c->check);
    free(c);
}

int64_t bk_controller_epoch(const bk_controller_t *c)
{
    return c->applied_epoch;
}

void bk_controller_describe(const bk_controller_t *c, void (*add)(const char *key, const char *value, void *arg),
                            void *arg)
{
    char val[CTL_MAX_REPLICAS * 24 + 1];
    size_t off = 0;

    snprintf(val, sizeof val, "%" PRId64, c->master_id);
    add("controllerMasterId", val, arg);
    add("controllerMasterAddr", c->master_addr, arg);
    snprintf(val, sizeof val, "%" PRId64, c->master_epoch);
    add("controllerMasterEpoch", val, arg);
    val[0] = '\0';
    for (size_t i = 0; i < c->n_sync; i++)
        off += (size_t)snprintf(val + off, sizeof val - off, "%s%" PRId64, i ? "," : "", c->sync_set[i]);
    add("controllerSyncStateSet", val, arg);
    snprintf(val, sizeof val, "%" PRId64, c->sse_epoch);
    add("controllerSyncStateSetEpoch", val, arg);
    add("controllerFenced",
        bk_node_role(c->node) != BK_SLAVE && rmq_mono_ms() >= c->lease_until_ms ? "true" : "false", arg);
    snprintf(val, sizeof val, "%" PRId64, c->switches);
    add("controllerRoleSwitches", val, arg);
}
