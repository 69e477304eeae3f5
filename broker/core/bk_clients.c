/* bk_clients.c: consumer group membership. A map of groups, each a map of
 * clients by id; a client keeps its session (referenced), the monotonic
 * time of its last heartbeat and its subscriptions (topic -> type and expression). */
#include "bk_clients.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "bk_perm.h"
#include "bk_tx.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_subexpr.h"
#include "rmq_time.h"

typedef struct bk_client {
    char *id;
    bk_session_t *ss;
    int64_t last_ms;
    bk_map_t *subs;       /* topic -> sub_t (malloc'ed) */
    char language[16];    /* of its latest heartbeat */
    int32_t version;
} bk_client_t;

typedef struct bk_cgroup {
    char *name;
    bk_map_t *clients;    /* client id -> bk_client_t */
    bk_group_view_t view; /* settings of the latest heartbeat */
} bk_cgroup_t;

struct bk_clients {
    bk_map_t *groups;     /* group name -> bk_cgroup_t */
    bk_clients_config_t cfg;
};

/* Moves cl to session ss (may be NULL), keeping each session's group count. */
static void client_set_session(bk_client_t *cl, bk_session_t *ss)
{
    if (cl->ss == ss)
        return;
    if (ss) {
        bk_session_ref(ss);
        ss->groups++;
    }
    if (cl->ss) {
        cl->ss->groups--;
        bk_session_unref(cl->ss);
    }
    cl->ss = ss;
}

static void client_free(void *p)
{
    bk_client_t *cl = p;
    if (!cl)
        return;
    client_set_session(cl, NULL);
    bk_map_free(cl->subs, free);
    free(cl->id);
    free(cl);
}

static void cgroup_free(void *p)
{
    bk_cgroup_t *grp = p;
    if (!grp)
        return;
    bk_map_free(grp->clients, client_free);
    free(grp->name);
    free(grp);
}

bk_clients_t *bk_clients_new(const bk_clients_config_t *cfg)
{
    bk_clients_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if (!(c->groups = bk_map_new())) {
        free(c);
        return NULL;
    }
    c->cfg = *cfg;
    return c;
}

void bk_clients_free(bk_clients_t *c)
{
    if (!c)
        return;
    bk_map_free(c->groups, cgroup_free);
    free(c);
}

/* Tells every member of grp that its member list changed. */
static void cgroup_notify(bk_cgroup_t *grp)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(grp->clients, &cursor, &key, &val)) {
        bk_client_t *cl = val;
        if (bk_session_is_open(cl->ss))
            bk_session_notify_ids_changed(cl->ss, grp->name);
    }
    LOG_INFO("consumer group %s: %zu clients", grp->name, bk_map_count(grp->clients));
}

size_t bk_clients_reset_offset(const bk_clients_t *c, const bk_offset_reset_t *rs)
{
    bk_cgroup_t *grp = bk_map_get(c->groups, rs->group, strlen(rs->group));
    size_t cursor = 0, told = 0;
    const char *key;
    void *val;
    while (grp && bk_map_next(grp->clients, &cursor, &key, &val)) {
        bk_client_t *cl = val;
        if (bk_session_is_open(cl->ss) && bk_session_reset_offset(cl->ss, rs) == RMQ_OK)
            told++;
    }
    LOG_INFO("consumer group %s: offsets on %s reset to %" PRId64 ", %zu clients told", rs->group, rs->topic,
             rs->timestamp, told);
    return told;
}

/* The group named name, created if absent. */
static bk_cgroup_t *cgroup_get(bk_clients_t *c, const char *name)
{
    size_t len = strlen(name);
    bk_cgroup_t *grp = bk_map_get(c->groups, name, len);
    if (grp)
        return grp;
    if (!(grp = calloc(1, sizeof(*grp))) || !(grp->name = strdup(name)) ||
        !(grp->clients = bk_map_new()) || bk_map_put(c->groups, name, len, grp) != RMQ_OK) {
        cgroup_free(grp);
        return NULL;
    }
    return grp;
}

/* A recorded subscription: its type and expression. */
typedef struct sub {
    rmq_expr_type_t type;
    char expr[];
} sub_t;

/* A copy of sd's type and expression ("" means "*"); NULL when out of memory. */
static sub_t *sub_new(const bk_hb_sub_t *sd)
{
    const char *expr = sd->expr && sd->expr[0] ? sd->expr : RMQ_SUB_ALL;
    size_t len = strlen(expr) + 1;
    sub_t *s = malloc(sizeof(*s) + len);
    if (s) {
        s->type = sd->type;
        memcpy(s->expr, expr, len);
    }
    return s;
}

/* Replaces a client's subscriptions with those in cd. */
static void client_set_subs(bk_client_t *cl, const bk_hb_consumer_t *cd)
{
    bk_map_t *subs = bk_map_new();
    if (!subs)
        return;
    for (size_t i = 0; i < cd->nsubs; i++) {
        const bk_hb_sub_t *sd = &cd->subs[i];
        sub_t *s = sub_new(sd);
        if (!s || bk_map_put(subs, sd->topic, strlen(sd->topic), s) != RMQ_OK)
            free(s);
    }
    bk_map_free(cl->subs, free);
    cl->subs = subs;
}

/* Records hb's client in the group of cd; returns 1 if membership changed. */
static int cgroup_touch(bk_clients_t *c, bk_session_t *ss, const bk_heartbeat_t *hb,
                        const bk_hb_consumer_t *cd, int64_t now)
{
    const char *client_id = hb->client_id;
    bk_cgroup_t *grp = cgroup_get(c, cd->group);
    if (!grp)
        return 0;
    grp->view = (bk_group_view_t){cd->clustering, cd->pull_mode, cd->consume_from};
    size_t len = strlen(client_id);
    bk_client_t *cl = bk_map_get(grp->clients, client_id, len);
    int changed = 0;
    if (!cl) {
        if (!(cl = calloc(1, sizeof(*cl))) || !(cl->id = strdup(client_id)) ||
            bk_map_put(grp->clients, client_id, len, cl) != RMQ_OK) {
            client_free(cl);
            return 0;
        }
        changed = 1;
    }
    client_set_session(cl, ss);
    cl->last_ms = now;
    snprintf(cl->language, sizeof(cl->language), "%s", hb->language ? hb->language : "");
    cl->version = hb->version;
    client_set_subs(cl, cd);
    if (changed)
        cgroup_notify(grp);
    return changed;
}

/* 1 if client_id is a member of group through session ss already. */
static int is_member(const bk_clients_t *c, const bk_session_t *ss, const char *client_id, const char *group)
{
    const bk_cgroup_t *grp = bk_map_get(c->groups, group, strlen(group));
    const bk_client_t *cl = grp ? bk_map_get(grp->clients, client_id, strlen(client_id)) : NULL;
    return cl && cl->ss == ss;
}

/* 1 if hb may be recorded: a client id, within the caps, valid names; else 0 with r set. */
static int heartbeat_check(const bk_clients_t *c, const bk_session_t *ss, const bk_heartbeat_t *hb, bk_result_t *r)
{
    const char *why;
    size_t fresh = 0;
    if (!hb->client_id || !hb->client_id[0])
        return bk_result_set(r, BK_BAD_REQUEST, "HEART_BEAT: empty client_id"), 0;
    if ((int64_t)(hb->nconsumers + hb->nproducers) > c->cfg.max_groups_per_heartbeat)
        return bk_result_set(r, BK_BAD_REQUEST, "HEART_BEAT: %zu consumer and %zu producer groups, over "
                             "maxHeartbeatGroups=%lld", hb->nconsumers, hb->nproducers,
                             (long long)c->cfg.max_groups_per_heartbeat), 0;
    for (size_t i = 0; i < hb->nconsumers; i++) {
        const char *g = hb->consumers[i].group;
        if (!rmq_name_is_valid(g, strlen(g), &why))
            return bk_result_set(r, BK_NAME_ILLEGAL, "HEART_BEAT: consumer group '%.100s' %s", g, why), 0;
        if (!is_member(c, ss, hb->client_id, g))
            fresh++;
    }
    for (size_t i = 0; i < hb->nproducers; i++)
        if (!rmq_name_is_valid(hb->producer_groups[i], strlen(hb->producer_groups[i]), &why))
            return bk_result_set(r, BK_NAME_ILLEGAL, "HEART_BEAT: producer group '%.100s' %s",
                                 hb->producer_groups[i], why), 0;
    if (fresh && (int64_t)(ss->groups + fresh) > c->cfg.max_groups_per_conn)
        return bk_result_set(r, BK_BAD_REQUEST, "HEART_BEAT: %zu more consumer groups would make %zu on this "
                             "connection, over maxConnectionGroups=%lld", fresh, ss->groups + fresh,
                             (long long)c->cfg.max_groups_per_conn), 0;
    return 1;
}

int bk_clients_heartbeat(bk_clients_t *c, bk_session_t *ss, const bk_caller_t *who, const bk_heartbeat_t *hb,
                         bk_result_t *r)
{
    int64_t now = rmq_mono_ms();
    int changed = 0;
    if (!heartbeat_check(c, ss, hb, r) || !bk_perm_check_heartbeat(who, hb, r))
        return -1;
    if (c->cfg.tx && hb->nproducers && !bk_tx_heartbeat(c->cfg.tx, ss, hb, r))
        return -1;   /* producer groups: where transaction checks go */
    for (size_t i = 0; i < hb->nconsumers; i++) {
        if (c->cfg.consumer_group)
            c->cfg.consumer_group(c->cfg.arg, hb->consumers[i].group, hb->consumers[i].clustering);
        changed += cgroup_touch(c, ss, hb, &hb->consumers[i], now);
    }
    return changed;
}

/* Removes clients of grp matching the predicate; notifies if any left. Frees an empty group. */
static void cgroup_remove_where(bk_clients_t *c, size_t *gcursor, bk_cgroup_t *grp,
                                int (*match)(const bk_client_t *cl, const void *arg), const void *arg)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    int removed = 0;
    while (bk_map_next(grp->clients, &cursor, &key, &val)) {
        if (match(val, arg)) {
            client_free(bk_map_del_current(grp->clients, &cursor));
            removed++;
        }
    }
    if (!removed)
        return;
    if (bk_map_count(grp->clients) == 0) {
        LOG_INFO("consumer group %s: no clients left", grp->name);
        cgroup_free(bk_map_del_current(c->groups, gcursor));
        return;
    }
    cgroup_notify(grp);
}

/* Applies cgroup_remove_where to every group. */
static void clients_remove_where(bk_clients_t *c, int (*match)(const bk_client_t *cl, const void *arg),
                                 const void *arg)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(c->groups, &cursor, &key, &val))
        cgroup_remove_where(c, &cursor, val, match, arg);
}

/* Predicates for cgroup_remove_where. */
typedef struct own_client {
    const bk_session_t *ss;
    const char *id;
} own_client_t;

static int match_own_id(const bk_client_t *cl, const void *arg)
{
    const own_client_t *own = arg;
    return cl->ss == own->ss && strcmp(cl->id, own->id) == 0;
}

static int match_session(const bk_client_t *cl, const void *arg)
{
    return cl->ss == arg;
}

static int match_expired(const bk_client_t *cl, const void *arg)
{
    return cl->last_ms < *(const int64_t *)arg;
}

void bk_clients_unregister(bk_clients_t *c, bk_session_t *ss, const char *client_id, const char *group)
{
    own_client_t own = {ss, client_id};
    if (!group || !group[0]) {
        clients_remove_where(c, match_own_id, &own);
        return;
    }
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(c->groups, &cursor, &key, &val))
        if (strcmp(key, group) == 0)
            cgroup_remove_where(c, &cursor, val, match_own_id, &own);
}

void bk_clients_session_closed(bk_clients_t *c, bk_session_t *ss)
{
    clients_remove_where(c, match_session, ss);
}

void bk_clients_expire(bk_clients_t *c, int64_t now_ms)
{
    int64_t cutoff = now_ms - c->cfg.expire_ms;
    clients_remove_where(c, match_expired, &cutoff);
}

size_t bk_clients_ids(const bk_clients_t *c, const char *group, const char **ids, size_t cap)
{
    const bk_cgroup_t *grp = bk_map_get(c->groups, group, strlen(group));
    if (!grp)
        return 0;
    size_t cursor = 0, n = 0;
    const char *key;
    void *val;
    while (bk_map_next(grp->clients, &cursor, &key, &val)) {
        if (n < cap)
            ids[n] = ((const bk_client_t *)val)->id;
        n++;
    }
    return n;
}

bk_status_t bk_clients_ask(const bk_clients_t *c, const bk_client_ask_t *q, bk_client_answer_fn fn, void *arg,
                           bk_result_t *r)
{
    const bk_cgroup_t *grp = bk_map_get(c->groups, q->group, strlen(q->group));
    const bk_client_t *cl = grp ? bk_map_get(grp->clients, q->client_id, strlen(q->client_id)) : NULL;
    if (!cl || !bk_session_is_open(cl->ss))
        return bk_result_set(r, BK_SYSTEM_ERROR, "The Consumer <%.200s> <%.200s> not online", q->group,
                             q->client_id);
    rmq_err_t err = bk_session_ask(cl->ss, q, fn, arg);
    if (err == RMQ_EINVAL)
        return bk_result_set(r, BK_SYSTEM_ERROR, "The Consumer <%.200s> <%.200s> speaks a protocol the broker "
                             "cannot put questions to", q->group, q->client_id);
    if (err != RMQ_OK)
        return bk_result_set(r, BK_SYSTEM_ERROR, "invoke consumer <%.200s> <%.200s>: %s", q->group, q->client_id,
                             rmq_strerror(err));
    return BK_OK;
}

const char *bk_clients_subscription(const bk_clients_t *c, const char *group, const char *topic,
                                    rmq_expr_type_t *type)
{
    const bk_cgroup_t *grp = bk_map_get(c->groups, group, strlen(group));
    if (!grp)
        return NULL;
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(grp->clients, &cursor, &key, &val)) {
        const sub_t *s = bk_map_get(((const bk_client_t *)val)->subs, topic, strlen(topic));
        if (s) {
            if (type)
                *type = s->type;
            return s->expr;
        }
    }
    return NULL;
}

/* ---- views for administration ------------------------------------------- */

int bk_clients_group(const bk_clients_t *c, const char *group, bk_group_view_t *out)
{
    const bk_cgroup_t *grp = bk_map_get(c->groups, group, strlen(group));
    if (!grp || bk_map_count(grp->clients) == 0)
        return 0;
    *out = grp->view;
    return 1;
}

void bk_clients_each_client(const bk_clients_t *c, const char *group, bk_client_view_fn fn, void *arg)
{
    const bk_cgroup_t *grp = bk_map_get(c->groups, group, strlen(group));
    size_t cursor = 0;
    const char *key;
    void *val;
    while (grp && bk_map_next(grp->clients, &cursor, &key, &val)) {
        const bk_client_t *cl = val;
        const char *peer = bk_session_is_open(cl->ss) ? bk_session_peer(cl->ss) : NULL;
        bk_client_view_t v = {cl->id, peer ? peer : "", cl->language, cl->version,
                              rmq_wall_ms() - (rmq_mono_ms() - cl->last_ms), cl->ss->ops->protocol};
        fn(arg, &v);
    }
}

rmq_err_t bk_clients_each_sub(const bk_clients_t *c, const char *group, bk_clients_sub_fn fn, void *arg)
{
    const bk_cgroup_t *grp = bk_map_get(c->groups, group, strlen(group));
    bk_map_t *seen = bk_map_new();
    size_t cursor = 0;
    const char *key;
    void *val;
    rmq_err_t rc = seen ? RMQ_OK : RMQ_ENOMEM;
    while (rc == RMQ_OK && grp && bk_map_next(grp->clients, &cursor, &key, &val)) {
        const bk_client_t *cl = val;
        size_t sc = 0;
        const char *topic;
        void *val_sub;
        while (rc == RMQ_OK && cl->subs && bk_map_next(cl->subs, &sc, &topic, &val_sub)) {
            const sub_t *s = val_sub;
            if (bk_map_get(seen, topic, strlen(topic)))
                continue;
            rc = bk_map_put(seen, topic, strlen(topic), val_sub);
            if (rc == RMQ_OK)
                fn(arg, topic, s->expr, s->type);
        }
    }
    bk_map_free(seen, NULL);
    return rc;
}

void bk_clients_groups_of(const bk_clients_t *c, const char *topic, bk_clients_name_fn fn, void *arg)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(c->groups, &cursor, &key, &val)) {
        const bk_cgroup_t *grp = val;
        size_t cc = 0;
        const char *id;
        void *cl;
        while (bk_map_next(grp->clients, &cc, &id, &cl)) {
            const bk_map_t *subs = ((const bk_client_t *)cl)->subs;
            if (subs && bk_map_get(subs, topic, strlen(topic))) {
                fn(arg, grp->name);
                break;
            }
        }
    }
}
