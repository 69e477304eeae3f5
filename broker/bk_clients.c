/* bk_clients.c: consumer group membership. A map of groups, each a map of
 * clients by id; a client keeps its session (referenced), the monotonic
 * time of its last heartbeat and its subscriptions (topic -> expression). */
#include "bk_clients.h"

#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "rmq_log.h"
#include "rmq_time.h"

typedef struct bk_client {
    char *id;
    bk_session_t *ss;
    int64_t last_ms;
    bk_map_t *subs;       /* topic -> strdup'ed expression */
} bk_client_t;

typedef struct bk_cgroup {
    char *name;
    bk_map_t *clients;    /* client id -> bk_client_t */
} bk_cgroup_t;

struct bk_clients {
    bk_map_t *groups;     /* group name -> bk_cgroup_t */
    int64_t expire_ms;
};

static void client_free(void *p)
{
    bk_client_t *cl = p;
    if (!cl)
        return;
    bk_session_unref(cl->ss);
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

bk_clients_t *bk_clients_new(int64_t expire_ms)
{
    bk_clients_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    if (!(c->groups = bk_map_new())) {
        free(c);
        return NULL;
    }
    c->expire_ms = expire_ms;
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

/* Replaces a client's subscriptions with those in cd. */
static void client_set_subs(bk_client_t *cl, const Rmq__ConsumerData *cd)
{
    bk_map_t *subs = bk_map_new();
    if (!subs)
        return;
    for (size_t i = 0; i < cd->n_subscriptions; i++) {
        const Rmq__SubscriptionData *sd = cd->subscriptions[i];
        char *expr = strdup(sd->sub_string[0] ? sd->sub_string : "*");
        if (!expr || bk_map_put(subs, sd->topic, strlen(sd->topic), expr) != RMQ_OK)
            free(expr);
    }
    bk_map_free(cl->subs, free);
    cl->subs = subs;
}

/* Records client_id in the group of cd; returns 1 if membership changed. */
static int cgroup_touch(bk_clients_t *c, bk_session_t *ss, const char *client_id,
                        const Rmq__ConsumerData *cd, int64_t now)
{
    bk_cgroup_t *grp = cgroup_get(c, cd->group_name);
    if (!grp)
        return 0;
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
    if (cl->ss != ss) {
        bk_session_ref(ss);
        bk_session_unref(cl->ss);
        cl->ss = ss;
    }
    cl->last_ms = now;
    client_set_subs(cl, cd);
    if (changed)
        cgroup_notify(grp);
    return changed;
}

int bk_clients_heartbeat(bk_clients_t *c, bk_session_t *ss, const Rmq__HeartbeatData *hb)
{
    int64_t now = rmq_mono_ms();
    int changed = 0;
    for (size_t i = 0; i < hb->n_consumers; i++)
        changed += cgroup_touch(c, ss, hb->client_id, hb->consumers[i], now);
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
static int match_id(const bk_client_t *cl, const void *arg)
{
    return strcmp(cl->id, arg) == 0;
}

static int match_session(const bk_client_t *cl, const void *arg)
{
    return cl->ss == arg;
}

static int match_expired(const bk_client_t *cl, const void *arg)
{
    return cl->last_ms < *(const int64_t *)arg;
}

void bk_clients_unregister(bk_clients_t *c, const char *client_id, const char *group)
{
    if (!group || !group[0]) {
        clients_remove_where(c, match_id, client_id);
        return;
    }
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(c->groups, &cursor, &key, &val))
        if (strcmp(key, group) == 0)
            cgroup_remove_where(c, &cursor, val, match_id, client_id);
}

void bk_clients_session_closed(bk_clients_t *c, bk_session_t *ss)
{
    clients_remove_where(c, match_session, ss);
}

void bk_clients_expire(bk_clients_t *c, int64_t now_ms)
{
    int64_t cutoff = now_ms - c->expire_ms;
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

const char *bk_clients_subscription(const bk_clients_t *c, const char *group, const char *topic)
{
    const bk_cgroup_t *grp = bk_map_get(c->groups, group, strlen(group));
    if (!grp)
        return NULL;
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(grp->clients, &cursor, &key, &val)) {
        const char *expr = bk_map_get(((const bk_client_t *)val)->subs, topic, strlen(topic));
        if (expr)
            return expr;
    }
    return NULL;
}
