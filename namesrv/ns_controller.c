/* ns_controller.c: the controller in the name server (ns_controller.h):
 * leadership under an etcd lease, the group states behind fenced txns,
 * broker liveness from heartbeats and closed connections, and elections
 * when a master lapses. */
#include "ns_controller.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_ctl_probe.h"
#include "rmq_etcd.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define CTL_KEY_MAX 1024
#define CTL_ETCD_TIMEOUT_MS 2000
#define CTL_TICK_MAX_MS 500
#define CTL_PROBE_DELAY_MS 50
#define CTL_PROBE_TIMEOUT_MS 1000

typedef struct ctl_group ctl_group_t;

/* One replica of a group, as its heartbeats describe it. */
typedef struct ctl_member {
    ns_ctl_member_t m;
    ctl_group_t *g;
    char ha_addr[NS_CTL_ADDR_MAX + 1];
    int64_t last_ms;              /* monotonic time of its last heartbeat */
    uint64_t conn_id;             /* of its last heartbeat; 0 once that connection closed */
    int gone;                     /* its port refused a connection since: dead until it beats again */
    ns_ctl_probe_t *probe;        /* in flight after its connection closed */
} ctl_member_t;

/* A broker group: its committed state (when loaded) and its members. */
struct ctl_group {
    ns_controller_t *ctl;
    char cluster[NS_NAME_MAX + 1];
    char name[NS_NAME_MAX + 1];
    char key[CTL_KEY_MAX + 2 * NS_NAME_MAX + 2];
    ns_ctl_state_t st;
    int64_t mod_rev;              /* of the state key; 0: no key */
    int loaded;                   /* st read under the current leadership */
    int pending;                  /* a txn of this group in flight */
    ns_ctl_state_t proposed;      /* what that txn writes */
    int elect_failed_logged;
    ctl_member_t members[NS_CTL_MAX_REPLICAS];
    size_t n_members;
};

typedef enum ctl_role { CTL_NO_LEASE = 0, CTL_STANDBY, CTL_LEADER } ctl_role_t;

struct ns_controller {
    struct event_base *base;
    const ns_config_t *cfg;
    ns_route_t *route;
    rmq_etcd_t *etcd;
    char node[NS_CTL_ADDR_MAX + 1];
    char leader_key[CTL_KEY_MAX];
    char groups_prefix[CTL_KEY_MAX];
    ctl_role_t role;
    int64_t lease_id;
    int64_t lease_ms;             /* TTL in ms */
    int64_t valid_until_ms;       /* act only before this (monotonic) */
    int64_t token;                /* leader key's create revision while leader */
    int64_t leader_since_ms;
    int granting, campaigning, keeping_alive, loading;
    int closing;                  /* in ns_controller_free: answers are dropped */
    int groups_loaded;            /* every state key read under this leadership */
    uint64_t elections;           /* master changes this controller committed */
    ns_ctl_election_t recent[NS_CTL_ELECTIONS_KEPT];  /* ring of the last ones */
    uint64_t generation;          /* bumped when leadership ends: stale answers are dropped */
    struct event *lease_timer;    /* keepalive / campaign, every TTL/3 */
    struct event *tick_timer;     /* liveness checks */
    ctl_group_t **groups;
    size_t n_groups;
};

/* A call's context: the controller, the leadership it was sent under, and
 * the group it concerns (NULL for leadership calls). */
typedef struct ctl_call {
    ns_controller_t *ctl;
    uint64_t generation;
    ctl_group_t *group;
    int64_t sent_ms;
} ctl_call_t;

static ctl_call_t *call_new(ns_controller_t *ctl, ctl_group_t *g)
{
    ctl_call_t *c = malloc(sizeof *c);

    if (c) {
        c->ctl = ctl;
        c->generation = ctl->generation;
        c->group = g;
        c->sent_ms = rmq_mono_ms();
    }
    return c;
}

/* ---- leadership ---------------------------------------------------------- */

int ns_controller_is_leader(const ns_controller_t *ctl)
{
    return ctl->role == CTL_LEADER && rmq_mono_ms() < ctl->valid_until_ms;
}

int64_t ns_controller_token(const ns_controller_t *ctl)
{
    return ns_controller_is_leader(ctl) ? ctl->token : 0;
}

/* The margin before the lease's end at which a holder stops acting. */
static int64_t lease_margin_ms(const ns_controller_t *ctl)
{
    int64_t m = ctl->lease_ms / 4;
    return m < 1000 ? m : 1000;
}

/* Ends leadership (or the lease): pending answers of the old one are
 * dropped, groups must be read again by the next leadership. */
static void step_down(ns_controller_t *ctl, ctl_role_t to, const char *why)
{
    if (ctl->role == CTL_LEADER)
        LOG_WARN("controller %s: no longer leader (token %" PRId64 "): %s", ctl->node, ctl->token, why);
    ctl->generation++;
    ctl->role = to;
    ctl->token = 0;
    ctl->campaigning = ctl->loading = ctl->groups_loaded = 0;
    for (size_t i = 0; i < ctl->n_groups; i++) {
        ctl->groups[i]->loaded = 0;
        ctl->groups[i]->pending = 0;
    }
    if (to == CTL_NO_LEASE) {
        ctl->lease_id = 0;
        ctl->keeping_alive = 0;
    }
}

static void campaign(ns_controller_t *ctl);
static void groups_load(ns_controller_t *ctl);
static void group_check(ctl_group_t *g);

static void on_grant(const rmq_etcd_result_t *res, void *arg)
{
    ctl_call_t *c = arg;
    ns_controller_t *ctl = c->ctl;

    ctl->granting = 0;
    if (ctl->closing)
        goto out;
    if (res->err != RMQ_OK) {
        LOG_WARN_RL("controller %s: lease grant failed: %s", ctl->node, res->msg);
        goto out;
    }
    ctl->lease_id = res->lease_id;
    ctl->valid_until_ms = c->sent_ms + res->ttl * 1000 - lease_margin_ms(ctl);
    ctl->role = CTL_STANDBY;
    campaign(ctl);
out:
    free(c);
}

static void on_campaign(const rmq_etcd_result_t *res, void *arg)
{
    ctl_call_t *c = arg;
    ns_controller_t *ctl = c->ctl;

    if (ctl->closing || c->generation != ctl->generation)
        goto out;
    ctl->campaigning = 0;
    if (res->err != RMQ_OK) {
        LOG_WARN_RL("controller %s: campaign failed: %s", ctl->node, res->msg);
        goto out;
    }
    /* won, or lost to our own earlier attempt (a txn resent to another endpoint) */
    int64_t token = res->succeeded ? res->revision : 0;
    if (!res->succeeded && res->n_kvs == 1 && res->kvs[0].lease == ctl->lease_id)
        token = res->kvs[0].create_revision;
    if (token == 0 || rmq_mono_ms() >= ctl->valid_until_ms)
        goto out;
    ctl->role = CTL_LEADER;
    ctl->token = token;
    ctl->leader_since_ms = rmq_mono_ms();
    LOG_INFO("controller %s: leader (token %" PRId64 ", lease %" PRId64 ")", ctl->node, token, ctl->lease_id);
    groups_load(ctl);
out:
    free(c);
}

/* Campaigns for the leader key under our lease. */
static void campaign(ns_controller_t *ctl)
{
    rmq_etcd_cmp_t none = { .target = RMQ_ETCD_CMP_CREATE, .key = ctl->leader_key, .revision = 0 };
    rmq_etcd_op_t claim = { .type = RMQ_ETCD_OP_PUT, .key = ctl->leader_key, .value = ctl->node,
                            .value_len = strlen(ctl->node), .lease = ctl->lease_id };
    rmq_etcd_op_t look = { .type = RMQ_ETCD_OP_RANGE, .key = ctl->leader_key };
    rmq_etcd_txn_t txn = { &none, 1, &claim, 1, &look, 1 };
    ctl_call_t *c;

    if (ctl->campaigning || ctl->role != CTL_STANDBY || !(c = call_new(ctl, NULL)))
        return;
    ctl->campaigning = 1;
    if (rmq_etcd_txn(ctl->etcd, &txn, on_campaign, c) != RMQ_OK) {
        ctl->campaigning = 0;
        free(c);
    }
}

static void on_keepalive(const rmq_etcd_result_t *res, void *arg)
{
    ctl_call_t *c = arg;
    ns_controller_t *ctl = c->ctl;

    ctl->keeping_alive = 0;
    if (ctl->closing || (res->lease_id != ctl->lease_id && res->err == RMQ_OK))
        goto out;
    if (res->err == RMQ_ENOTFOUND) {
        step_down(ctl, CTL_NO_LEASE, "lease expired");
    } else if (res->err != RMQ_OK) {
        LOG_WARN_RL("controller %s: keepalive failed: %s", ctl->node, res->msg);
    } else {
        int64_t until = c->sent_ms + res->ttl * 1000 - lease_margin_ms(ctl);
        if (until > ctl->valid_until_ms)
            ctl->valid_until_ms = until;
    }
out:
    free(c);
}

/* Every TTL/3: renew the lease (or get one), campaign while standing by,
 * and stop leading once the lease may have lapsed. */
static void on_lease_timer(evutil_socket_t fd, short what, void *arg)
{
    ns_controller_t *ctl = arg;
    ctl_call_t *c;

    if (ctl->role != CTL_NO_LEASE && rmq_mono_ms() >= ctl->valid_until_ms)
        step_down(ctl, CTL_NO_LEASE, "lease not renewed in time");
    if (ctl->role == CTL_NO_LEASE && !ctl->granting && (c = call_new(ctl, NULL))) {
        ctl->granting = 1;
        if (rmq_etcd_lease_grant(ctl->etcd, ctl->lease_ms / 1000, on_grant, c) != RMQ_OK) {
            ctl->granting = 0;
            free(c);
        }
    } else if (ctl->role != CTL_NO_LEASE && !ctl->keeping_alive && (c = call_new(ctl, NULL))) {
        ctl->keeping_alive = 1;
        if (rmq_etcd_lease_keepalive(ctl->etcd, ctl->lease_id, on_keepalive, c) != RMQ_OK) {
            ctl->keeping_alive = 0;
            free(c);
        }
    }
    if (ctl->role == CTL_STANDBY)
        campaign(ctl);
    struct timeval tv = { (time_t)(ctl->lease_ms / 3000), (suseconds_t)(ctl->lease_ms / 3 % 1000) * 1000 };
    evtimer_add(ctl->lease_timer, &tv);
}

/* ---- groups -------------------------------------------------------------- */

static ctl_group_t *group_find(const ns_controller_t *ctl, const char *cluster, const char *name)
{
    for (size_t i = 0; i < ctl->n_groups; i++)
        if (strcmp(ctl->groups[i]->name, name) == 0 && strcmp(ctl->groups[i]->cluster, cluster) == 0)
            return ctl->groups[i];
    return NULL;
}

static ctl_group_t *group_by_key(const ns_controller_t *ctl, const char *key)
{
    for (size_t i = 0; i < ctl->n_groups; i++)
        if (strcmp(ctl->groups[i]->key, key) == 0)
            return ctl->groups[i];
    return NULL;
}

/* The group (created, unloaded, when new); NULL on ENOMEM. */
static ctl_group_t *group_get(ns_controller_t *ctl, const char *cluster, const char *name)
{
    ctl_group_t *g = group_find(ctl, cluster, name);

    if (g)
        return g;
    ctl_group_t **grown = realloc(ctl->groups, (ctl->n_groups + 1) * sizeof *grown);
    if (!grown)
        return NULL;
    ctl->groups = grown;
    if (!(g = calloc(1, sizeof *g)))
        return NULL;
    g->ctl = ctl;
    snprintf(g->cluster, sizeof g->cluster, "%s", cluster);
    snprintf(g->name, sizeof g->name, "%s", name);
    snprintf(g->key, sizeof g->key, "%s%s/%s", ctl->groups_prefix, cluster, name);
    ns_ctl_state_init(&g->st);
    /* no key under the prefix when it was read: none since (writes are fenced) */
    g->loaded = ctl->groups_loaded;
    ctl->groups[ctl->n_groups++] = g;
    return g;
}

/* Takes a state key's value read from etcd into g. */
static void group_take(ctl_group_t *g, const rmq_etcd_kv_t *kv)
{
    char why[256];

    if (!kv) {
        ns_ctl_state_init(&g->st);
        g->mod_rev = 0;
    } else if (ns_ctl_state_decode(kv->value, kv->value_len, &g->st, why, sizeof why) != RMQ_OK) {
        /* kept unloaded: the controller never overwrites a state it cannot read */
        LOG_ERROR_RL("controller: %s in etcd is unreadable: %s", kv->key, why);
        g->loaded = 0;
        return;
    } else {
        g->mod_rev = kv->mod_revision;
    }
    g->loaded = 1;
}

static void on_groups_loaded(const rmq_etcd_result_t *res, void *arg)
{
    ctl_call_t *c = arg;
    ns_controller_t *ctl = c->ctl;

    if (ctl->closing || c->generation != ctl->generation)
        goto out;
    ctl->loading = 0;
    if (res->err != RMQ_OK) {
        LOG_WARN_RL("controller %s: reading the group states failed: %s", ctl->node, res->msg);
        goto out;
    }
    for (size_t i = 0; i < ctl->n_groups; i++)
        group_take(ctl->groups[i], NULL);
    for (size_t i = 0; i < res->n_kvs; i++) {
        ctl_group_t *g = group_by_key(ctl, res->kvs[i].key);
        const char *rest = res->kvs[i].key + strlen(ctl->groups_prefix);
        const char *slash = strchr(rest, '/');
        if (!g && slash && (size_t)(slash - rest) <= NS_NAME_MAX && strlen(slash + 1) <= NS_NAME_MAX) {
            char cluster[NS_NAME_MAX + 1];
            snprintf(cluster, sizeof cluster, "%.*s", (int)(slash - rest), rest);
            g = group_get(ctl, cluster, slash + 1);
        }
        if (g)
            group_take(g, &res->kvs[i]);
    }
    ctl->groups_loaded = 1;
    LOG_INFO("controller %s: %zu group state(s) loaded at revision %" PRId64, ctl->node, res->n_kvs,
             res->revision);
out:
    free(c);
}

/* Reads every group state (a leader does before acting). */
static void groups_load(ns_controller_t *ctl)
{
    ctl_call_t *c;

    if (ctl->loading || !(c = call_new(ctl, NULL)))
        return;
    ctl->loading = 1;
    if (rmq_etcd_range(ctl->etcd, ctl->groups_prefix, 1, on_groups_loaded, c) != RMQ_OK) {
        ctl->loading = 0;
        free(c);
    }
}

/* Applies a committed master change to this name server's routes. */
static void route_follow(ctl_group_t *g)
{
    if (!g->ctl->route || g->st.master_id < 0 || !g->st.master_addr[0])
        return;
    rmq_err_t err = ns_route_set_master(g->ctl->route, g->name, g->st.master_addr, g->st.master_epoch);
    if (err != RMQ_OK && err != RMQ_ENOTFOUND)
        LOG_WARN("controller: routing %s to its new master %s: %s", g->name, g->st.master_addr,
                 rmq_strerror(err));
}

/* Counts a committed master change of g (from old) and keeps it in the ring. */
static void election_record(ctl_group_t *g, const ns_ctl_state_t *old)
{
    ns_controller_t *ctl = g->ctl;
    ns_ctl_election_t *e = &ctl->recent[ctl->elections++ % NS_CTL_ELECTIONS_KEPT];

    e->wall_ms = rmq_wall_ms();
    snprintf(e->cluster, sizeof e->cluster, "%s", g->cluster);
    snprintf(e->broker_name, sizeof e->broker_name, "%s", g->name);
    e->old_master_id = old->master_id;
    snprintf(e->old_master_addr, sizeof e->old_master_addr, "%s", old->master_addr);
    e->new_master_id = g->st.master_id;
    snprintf(e->new_master_addr, sizeof e->new_master_addr, "%s", g->st.master_addr);
    e->master_epoch = g->st.master_epoch;
}

static void on_group_written(const rmq_etcd_result_t *res, void *arg)
{
    ctl_call_t *c = arg;
    ns_controller_t *ctl = c->ctl;
    ctl_group_t *g = c->group;

    if (ctl->closing || c->generation != ctl->generation)
        goto out;
    g->pending = 0;
    if (res->err != RMQ_OK) {
        LOG_WARN_RL("controller: writing %s failed: %s", g->key, res->msg);
        goto out;
    }
    if (res->succeeded) {
        int moved = g->proposed.master_id != g->st.master_id || g->proposed.master_epoch != g->st.master_epoch;
        ns_ctl_state_t old = g->st;
        g->st = g->proposed;
        g->mod_rev = res->revision;
        LOG_INFO("controller: %s master %" PRId64 " (%s) epoch %" PRId64 ", sync state set of %zu, epoch %" PRId64,
                 g->key, g->st.master_id, g->st.master_addr, g->st.master_epoch, g->st.n_sync,
                 g->st.sync_set_epoch);
        if (moved) {
            election_record(g, &old);
            route_follow(g);
        }
        group_check(g);
        goto out;
    }
    /* refused: the failure ops read the leader key and the state key back */
    const rmq_etcd_kv_t *leader = NULL, *state = NULL;
    for (size_t i = 0; i < res->n_kvs; i++) {
        if (strcmp(res->kvs[i].key, ctl->leader_key) == 0)
            leader = &res->kvs[i];
        else if (strcmp(res->kvs[i].key, g->key) == 0)
            state = &res->kvs[i];
    }
    if (!leader || leader->create_revision != ctl->token) {
        step_down(ctl, ctl->role == CTL_LEADER ? CTL_STANDBY : ctl->role, "the leader key is no longer ours");
        goto out;
    }
    LOG_WARN("controller: %s changed under us; read again", g->key);
    group_take(g, state);
out:
    free(c);
}

/* Commits next as g's state by a txn fenced by the token and g's revision. */
static void group_write(ctl_group_t *g, const ns_ctl_state_t *next)
{
    ns_controller_t *ctl = g->ctl;
    struct evbuffer *val = evbuffer_new();
    ctl_call_t *c = NULL;

    if (!val || ns_ctl_state_encode(next, val) != RMQ_OK || !(c = call_new(ctl, g)))
        goto fail;
    rmq_etcd_cmp_t guard[] = {
        { .target = RMQ_ETCD_CMP_CREATE, .key = ctl->leader_key, .revision = ctl->token },
        { .target = RMQ_ETCD_CMP_MOD, .key = g->key, .revision = g->mod_rev },
    };
    rmq_etcd_op_t put = { .type = RMQ_ETCD_OP_PUT, .key = g->key,
                          .value = (const char *)evbuffer_pullup(val, -1),
                          .value_len = evbuffer_get_length(val) };
    rmq_etcd_op_t reread[] = {
        { .type = RMQ_ETCD_OP_RANGE, .key = ctl->leader_key },
        { .type = RMQ_ETCD_OP_RANGE, .key = g->key },
    };
    rmq_etcd_txn_t txn = { guard, 2, &put, 1, reread, 2 };
    g->proposed = *next;
    g->pending = 1;
    if (rmq_etcd_txn(ctl->etcd, &txn, on_group_written, c) != RMQ_OK) {
        g->pending = 0;
        goto fail;
    }
    evbuffer_free(val);
    return;
fail:
    LOG_ERROR_RL("controller: cannot write %s: out of memory", g->key);
    free(c);
    if (val)
        evbuffer_free(val);
}

/* 1 if mb's port has not refused a probe and its last heartbeat is within
 * its timeout at now. */
static int member_alive(const ctl_member_t *mb, int64_t now)
{
    return !mb->gone && now - mb->last_ms <= mb->m.timeout_ms;
}

/* Marks which members are alive at now. */
static void members_refresh(ctl_group_t *g, int64_t now)
{
    for (size_t i = 0; i < g->n_members; i++)
        g->members[i].m.alive = member_alive(&g->members[i], now);
}

static const ctl_member_t *member_by_id(const ctl_group_t *g, int64_t id)
{
    for (size_t i = 0; i < g->n_members; i++)
        if (g->members[i].m.broker_id == id)
            return &g->members[i];
    return NULL;
}

/* When g's master's lease has surely lapsed (ns_ctl_master_lapse_ms). */
static int64_t master_lapse_ms(const ctl_group_t *g)
{
    const ns_controller_t *ctl = g->ctl;
    const ctl_member_t *master = member_by_id(g, g->st.master_id);

    int64_t unheard_timeout = g->st.master_timeout_ms > ctl->cfg->controller_heartbeat_timeout_ms
                                  ? g->st.master_timeout_ms
                                  : ctl->cfg->controller_heartbeat_timeout_ms;

    if (!master)
        return ns_ctl_master_lapse_ms(NS_CTL_NEVER, ctl->leader_since_ms, unheard_timeout);
    return ns_ctl_master_lapse_ms(master->last_ms, ctl->leader_since_ms, master->m.timeout_ms);
}

/* The leader's check of one group: elects a master when it has none or
 * its master's lease has surely lapsed. */
static void group_check(ctl_group_t *g)
{
    ns_controller_t *ctl = g->ctl;
    int64_t now = rmq_mono_ms();
    ns_ctl_member_t cand[NS_CTL_MAX_REPLICAS];

    if (!ns_controller_is_leader(ctl) || !g->loaded || g->pending || g->n_members == 0)
        return;
    members_refresh(g, now);
    if (g->st.master_id >= 0 && now <= master_lapse_ms(g))
        return;
    for (size_t i = 0; i < g->n_members; i++)
        cand[i] = g->members[i].m;
    int unclean = ctl->cfg->controller_elect_unclean || g->st.master_epoch == 0;
    int w = ns_ctl_elect(&g->st, cand, g->n_members, unclean);
    if (w < 0) {
        if (!g->elect_failed_logged)
            LOG_WARN("controller: %s has no live master and no live in-sync replica to elect", g->key);
        g->elect_failed_logged = 1;
        return;
    }
    g->elect_failed_logged = 0;
    ns_ctl_state_t next;
    ns_ctl_state_promote(&g->st, &cand[w], &next);
    LOG_INFO("controller: %s electing broker %" PRId64 " (%s, epoch %" PRId64 ", offset %" PRId64 ")", g->key,
             cand[w].broker_id, cand[w].addr, cand[w].epoch, cand[w].max_offset);
    group_write(g, &next);
}

/* Reads the group states again if the leader's first read failed, then
 * checks every group. */
static void on_tick(evutil_socket_t fd, short what, void *arg)
{
    ns_controller_t *ctl = arg;

    if (ns_controller_is_leader(ctl) && !ctl->groups_loaded)
        groups_load(ctl);
    for (size_t i = 0; i < ctl->n_groups; i++)
        group_check(ctl->groups[i]);
}

/* ---- requests from brokers ------------------------------------------------ */

static int field_ok(const char *s)
{
    return s && s[0] && strlen(s) <= NS_NAME_MAX;
}

/* The group state keeps its master's heartbeat timeout, so a later leader
 * that never hears the master waits out the master's lease, not its own
 * default (ns_ctl_master_lapse_ms); written when the master announces
 * another than the state has. */
static void master_timeout_keep(ctl_group_t *g, const ctl_member_t *mb)
{
    if (mb->m.broker_id != g->st.master_id || mb->m.timeout_ms == g->st.master_timeout_ms || g->pending ||
        !g->loaded || !ns_controller_is_leader(g->ctl))
        return;
    ns_ctl_state_t next = g->st;
    next.master_timeout_ms = mb->m.timeout_ms;
    LOG_INFO("controller: %s keeps master %" PRId64 "'s heartbeat timeout %" PRId64 " ms", g->key,
             mb->m.broker_id, mb->m.timeout_ms);
    group_write(g, &next);
}

rmq_err_t ns_controller_heartbeat(ns_controller_t *ctl, const Rmq__ControllerBrokerRequest *req,
                                  uint64_t conn_id, ns_ctl_state_t *out, char *why, size_t whylen)
{
    ns_ctl_state_init(out);
    if (!field_ok(req->cluster_name) || !field_ok(req->broker_name) || !field_ok(req->broker_addr) ||
        strlen(req->broker_addr) > NS_CTL_ADDR_MAX ||
        (req->ha_server_addr && strlen(req->ha_server_addr) > NS_CTL_ADDR_MAX)) {
        snprintf(why, whylen, "cluster_name, broker_name and broker_addr must be 1..%d characters",
                 NS_NAME_MAX);
        return RMQ_EINVAL;
    }
    if (req->broker_id < 1 || req->epoch < 0 || req->max_offset < 0 || req->heartbeat_timeout_ms < 0 ||
        req->heartbeat_timeout_ms > NS_CTL_TIMEOUT_MAX_MS) {
        snprintf(why, whylen, "broker_id must be >= 1, epoch and max_offset >= 0, heartbeat_timeout_ms in [0, %d]",
                 NS_CTL_TIMEOUT_MAX_MS);
        return RMQ_EINVAL;
    }
    ctl_group_t *g = group_get(ctl, req->cluster_name, req->broker_name);
    if (!g)
        return RMQ_ENOMEM;
    ctl_member_t *mb = (ctl_member_t *)member_by_id(g, req->broker_id);
    if (!mb) {
        if (g->n_members == NS_CTL_MAX_REPLICAS) {
            snprintf(why, whylen, "group %s has %d replicas already", req->broker_name, NS_CTL_MAX_REPLICAS);
            return RMQ_EINVAL;
        }
        mb = &g->members[g->n_members++];
        memset(mb, 0, sizeof *mb);
        mb->g = g;
        mb->m.broker_id = req->broker_id;
        LOG_INFO("controller: %s/%s replica %" PRId64 " at %s registered", g->cluster, g->name,
                 req->broker_id, req->broker_addr);
    }
    snprintf(mb->m.addr, sizeof mb->m.addr, "%s", req->broker_addr);
    snprintf(mb->ha_addr, sizeof mb->ha_addr, "%s", req->ha_server_addr ? req->ha_server_addr : "");
    mb->m.epoch = req->epoch;
    mb->m.max_offset = req->max_offset;
    mb->m.priority = req->election_priority;
    mb->m.timeout_ms = req->heartbeat_timeout_ms ? req->heartbeat_timeout_ms
                                                 : ctl->cfg->controller_heartbeat_timeout_ms;
    mb->last_ms = rmq_mono_ms();
    mb->conn_id = conn_id;
    mb->gone = 0;
    master_timeout_keep(g, mb);
    group_check(g);
    *out = g->st;
    /* while a new master is being committed nobody is confirmed: the old
     * one would renew its lease past the election */
    if (g->pending && (g->proposed.master_id != g->st.master_id || g->proposed.master_epoch != g->st.master_epoch))
        return RMQ_EAGAIN;
    return ns_controller_is_leader(ctl) && g->loaded ? RMQ_OK : RMQ_EAGAIN;
}

/* A closed member's probe answered: a refused port means the broker
 * process is most likely gone, so it is no candidate until it beats again
 * (a master among them is still replaced only once its lease lapsed: the
 * refusal may come from a firewall); a listening or silent one stays alive
 * until its heartbeat timeout. */
static void on_member_probe(ns_ctl_probe_result_t res, void *arg)
{
    ctl_member_t *mb = arg;
    ctl_group_t *g = mb->g;

    mb->probe = NULL;
    if (mb->conn_id != 0)
        return;                   /* it heartbeat again meanwhile */
    if (res != NS_CTL_PROBE_REFUSED) {
        LOG_INFO("controller: %s/%s replica %" PRId64 " closed its connection but %s: it lapses after its "
                 "heartbeat timeout", g->cluster, g->name, mb->m.broker_id,
                 res == NS_CTL_PROBE_LISTENING ? "still listens" : "did not answer a probe");
        return;
    }
    mb->gone = 1;
    LOG_WARN("controller: %s/%s replica %" PRId64 " at %s is gone (connection closed, port refused)%s", g->cluster,
             g->name, mb->m.broker_id, mb->m.addr,
             mb->m.broker_id == g->st.master_id ? ": a new master once its lease surely lapsed" : "");
    group_check(g);
}

void ns_controller_conn_closed(ns_controller_t *ctl, uint64_t conn_id)
{
    for (size_t i = 0; i < ctl->n_groups; i++) {
        ctl_group_t *g = ctl->groups[i];
        for (size_t k = 0; k < g->n_members; k++) {
            ctl_member_t *mb = &g->members[k];
            if (mb->conn_id != conn_id || conn_id == 0)
                continue;
            mb->conn_id = 0;
            if (!mb->probe)
                mb->probe = ns_ctl_probe_start(ctl->base, mb->m.addr, CTL_PROBE_DELAY_MS, CTL_PROBE_TIMEOUT_MS,
                                               on_member_probe, mb);
        }
    }
}

rmq_err_t ns_controller_replica_info(const ns_controller_t *ctl, const char *cluster,
                                     const char *broker_name, ns_ctl_state_t *out)
{
    const ctl_group_t *g = group_find(ctl, cluster ? cluster : "", broker_name ? broker_name : "");

    ns_ctl_state_init(out);
    if (!g)
        return RMQ_ENOTFOUND;
    *out = g->st;
    return ns_controller_is_leader(ctl) && g->loaded ? RMQ_OK : RMQ_EAGAIN;
}

const char *ns_controller_ha_addr(const ns_controller_t *ctl, const char *cluster, const char *broker_name,
                                  int64_t broker_id)
{
    const ctl_group_t *g = group_find(ctl, cluster ? cluster : "", broker_name ? broker_name : "");
    const ctl_member_t *mb = g ? member_by_id(g, broker_id) : NULL;

    return mb ? mb->ha_addr : "";
}

uint64_t ns_controller_elections(const ns_controller_t *ctl)
{
    return ctl->elections;
}

const ns_ctl_election_t *ns_controller_election(const ns_controller_t *ctl, size_t i)
{
    if (i >= ctl->elections || i >= NS_CTL_ELECTIONS_KEPT)
        return NULL;
    return &ctl->recent[(ctl->elections - 1 - i) % NS_CTL_ELECTIONS_KEPT];
}

size_t ns_controller_members(const ns_controller_t *ctl, const char *cluster, const char *broker_name,
                             ns_ctl_member_t *out, size_t max)
{
    const ctl_group_t *g = group_find(ctl, cluster, broker_name);
    int64_t now = rmq_mono_ms();
    size_t n = 0;

    for (; g && n < g->n_members && n < max; n++) {
        out[n] = g->members[n].m;
        out[n].alive = member_alive(&g->members[n], now);
    }
    return n;
}

void ns_controller_each_group(const ns_controller_t *ctl, ns_ctl_group_fn fn, void *arg)
{
    for (size_t i = 0; i < ctl->n_groups; i++)
        fn(ctl->groups[i]->cluster, ctl->groups[i]->name, &ctl->groups[i]->st, arg);
}

/* Checks a sync state set change against g; the wire status and why on refusal. */
static int alter_check(const ns_controller_t *ctl, const ctl_group_t *g,
                       const Rmq__AlterSyncStateSetRequest *req, char *why, size_t whylen)
{
    if (!ns_controller_is_leader(ctl) || !g || !g->loaded) {
        snprintf(why, whylen, "this controller is not the leader (or has not read the group yet)");
        return RMQ__STATUS__CONTROLLER_NOT_LEADER;
    }
    if (g->pending) {
        snprintf(why, whylen, "another change of %s is being committed", g->name);
        return RMQ__STATUS__SYSTEM_BUSY;
    }
    if (req->master_broker_id != g->st.master_id) {
        snprintf(why, whylen, "broker %" PRId64 " is not the master of %s (%" PRId64 " is)", req->master_broker_id,
                 g->name, g->st.master_id);
        return RMQ__STATUS__CONTROLLER_INVALID_MASTER;
    }
    if (req->master_epoch != g->st.master_epoch) {
        snprintf(why, whylen, "master epoch %" PRId64 " is stale (%" PRId64 ")", req->master_epoch,
                 g->st.master_epoch);
        return RMQ__STATUS__CONTROLLER_FENCED_MASTER_EPOCH;
    }
    if (req->sync_state_set_epoch != g->st.sync_set_epoch) {
        snprintf(why, whylen, "sync state set epoch %" PRId64 " is stale (%" PRId64 ")",
                 req->sync_state_set_epoch, g->st.sync_set_epoch);
        return RMQ__STATUS__CONTROLLER_FENCED_SYNC_STATE_SET_EPOCH;
    }
    int has_master = 0;
    for (size_t i = 0; i < req->n_sync_state_set; i++) {
        has_master |= req->sync_state_set[i] == g->st.master_id;
        for (size_t j = 0; j < i; j++)
            if (req->sync_state_set[j] == req->sync_state_set[i])
                goto bad_set;
        if (!member_by_id(g, req->sync_state_set[i]))
            goto bad_set;
    }
    if (has_master && req->n_sync_state_set <= NS_CTL_MAX_REPLICAS)
        return RMQ__STATUS__SUCCESS;
bad_set:
    snprintf(why, whylen, "the new sync state set must hold the master and only registered replicas, once each");
    return RMQ__STATUS__CONTROLLER_INVALID_REPLICAS;
}

rmq_err_t ns_controller_alter_sync_state_set(ns_controller_t *ctl,
                                             const Rmq__AlterSyncStateSetRequest *req,
                                             ns_ctl_state_t *out, int *status, char *why,
                                             size_t whylen)
{
    ctl_group_t *g = group_find(ctl, req->cluster_name ? req->cluster_name : "",
                                req->broker_name ? req->broker_name : "");

    ns_ctl_state_init(out);
    *status = alter_check(ctl, g, req, why, whylen);
    if (*status != RMQ__STATUS__SUCCESS)
        return RMQ_ESTATUS;
    ns_ctl_state_t next = g->st;
    next.n_sync = req->n_sync_state_set;
    memcpy(next.sync_set, req->sync_state_set, req->n_sync_state_set * sizeof next.sync_set[0]);
    next.sync_set_epoch++;
    group_write(g, &next);
    *out = next;
    return RMQ_EAGAIN;
}

/* ---- lifetime -------------------------------------------------------------- */

ns_controller_t *ns_controller_new(struct event_base *base, const ns_config_t *cfg, ns_route_t *route,
                                   const char *node, char *err, size_t errlen)
{
    ns_controller_t *ctl = calloc(1, sizeof *ctl);

    if (!ctl) {
        snprintf(err, errlen, "controller: out of memory");
        return NULL;
    }
    ctl->base = base;
    ctl->cfg = cfg;
    ctl->route = route;
    ctl->lease_ms = cfg->controller_lease_ttl_s * 1000;
    snprintf(ctl->node, sizeof ctl->node, "%s", node);
    const char *prefix = cfg->controller_etcd_prefix;
    size_t plen = strlen(prefix);
    while (plen > 1 && prefix[plen - 1] == '/')
        plen--;
    snprintf(ctl->leader_key, sizeof ctl->leader_key, "%.*s/leader", (int)plen, prefix);
    snprintf(ctl->groups_prefix, sizeof ctl->groups_prefix, "%.*s/groups/", (int)plen, prefix);
    ctl->etcd = rmq_etcd_new(base, cfg->controller_etcd_endpoints, CTL_ETCD_TIMEOUT_MS, err, errlen);
    ctl->lease_timer = evtimer_new(base, on_lease_timer, ctl);
    ctl->tick_timer = event_new(base, -1, EV_PERSIST, on_tick, ctl);
    if (!ctl->etcd || !ctl->lease_timer || !ctl->tick_timer) {
        if (ctl->etcd)
            snprintf(err, errlen, "controller: out of memory");
        ns_controller_free(ctl);
        return NULL;
    }
    return ctl;
}

rmq_err_t ns_controller_start(ns_controller_t *ctl)
{
    int64_t tick = ctl->cfg->controller_heartbeat_timeout_ms / 5;
    if (tick > CTL_TICK_MAX_MS)
        tick = CTL_TICK_MAX_MS;
    struct timeval tv = { (time_t)(tick / 1000), (suseconds_t)(tick % 1000) * 1000 };

    if (evtimer_add(ctl->tick_timer, &tv) != 0)
        return RMQ_ENOMEM;
    LOG_INFO("controller %s: campaigning for %s on %s (lease %" PRId64 " s)", ctl->node, ctl->leader_key,
             ctl->cfg->controller_etcd_endpoints, ctl->cfg->controller_lease_ttl_s);
    on_lease_timer(-1, EV_TIMEOUT, ctl);
    return RMQ_OK;
}

void ns_controller_free(ns_controller_t *ctl)
{
    if (!ctl)
        return;
    ctl->closing = 1;
    rmq_etcd_free(ctl->etcd);    /* answers calls in flight: their contexts are freed */
    if (ctl->lease_timer)
        event_free(ctl->lease_timer);
    if (ctl->tick_timer)
        event_free(ctl->tick_timer);
    for (size_t i = 0; i < ctl->n_groups; i++) {
        for (size_t k = 0; k < ctl->groups[i]->n_members; k++)
            ns_ctl_probe_cancel(ctl->groups[i]->members[k].probe);
        free(ctl->groups[i]);
    }
    free(ctl->groups);
    free(ctl);
}
