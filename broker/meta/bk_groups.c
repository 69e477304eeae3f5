/* bk_groups.c: the subscription group table: a map of heap bk_group_t,
 * load from and persist to config/subscriptionGroup.pb. */
#include "bk_groups_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "rmq_log.h"
#include "rmq_time.h"
#include "rmq_file.h"

struct bk_groups {
    bk_map_t *map;
    char *path;
    bk_persist_t *persist;
    int auto_create;
    int64_t dv_timestamp;
    int64_t dv_counter;
    bk_groups_item_fn item;
    void *item_arg;
};

void bk_group_from_pb(bk_group_t *grp, const Rmq__SubscriptionGroupConfig *pb)
{
    memset(grp, 0, sizeof(*grp));
    snprintf(grp->name, sizeof(grp->name), "%s", pb->group_name);
    grp->consume_enable = pb->consume_enable;
    grp->consume_broadcast_enable = pb->consume_broadcast_enable;
    grp->retry_queue_nums = pb->retry_queue_nums;
    grp->retry_max_times = pb->retry_max_times;
    grp->broker_id = pb->broker_id;
    grp->which_broker_when_consume_slowly = pb->which_broker_when_consume_slowly;
    grp->consume_orderly = pb->consume_message_orderly;
}

void bk_group_to_pb(const bk_group_t *grp, Rmq__SubscriptionGroupConfig *pb)
{
    rmq__subscription_group_config__init(pb);
    pb->group_name = (char *)grp->name;
    pb->consume_enable = grp->consume_enable;
    pb->consume_broadcast_enable = grp->consume_broadcast_enable;
    pb->retry_queue_nums = grp->retry_queue_nums;
    pb->retry_max_times = grp->retry_max_times;
    pb->broker_id = grp->broker_id;
    pb->which_broker_when_consume_slowly = grp->which_broker_when_consume_slowly;
    pb->consume_message_orderly = grp->consume_orderly;
}

/* Inserts or overwrites a group without persisting. */
static bk_group_t *groups_put(bk_groups_t *g, const bk_group_t *grp)
{
    size_t len = strlen(grp->name);
    bk_group_t *cur = bk_map_get(g->map, grp->name, len);
    if (cur) {
        *cur = *grp;
        return cur;
    }
    if (!(cur = malloc(sizeof(*cur))))
        return NULL;
    *cur = *grp;
    if (bk_map_put(g->map, cur->name, len, cur) != RMQ_OK) {
        free(cur);
        return NULL;
    }
    return cur;
}

/* Reads subscriptionGroup.pb into the table; a missing file is an empty table. */
static rmq_err_t groups_load(bk_groups_t *g, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    rmq_err_t rc = rmq_file_read_all(g->path, &data, &len);
    if (rc == RMQ_ENOTFOUND)
        return RMQ_OK;
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "%s: %s", g->path, rmq_strerror(rc));
        return rc;
    }
    Rmq__SubscriptionGroupTable *tab =
        rmq__subscription_group_table__unpack(NULL, len, (const uint8_t *)data);
    free(data);
    if (!tab) {
        snprintf(err, errlen, "%s: not a valid SubscriptionGroupTable", g->path);
        return RMQ_ECORRUPT;
    }
    for (size_t i = 0; i < tab->n_groups && rc == RMQ_OK; i++) {
        bk_group_t grp;
        bk_group_from_pb(&grp, tab->groups[i]);
        if (!groups_put(g, &grp))
            rc = RMQ_ENOMEM;
    }
    if (tab->data_version) {
        g->dv_timestamp = tab->data_version->timestamp;
        g->dv_counter = tab->data_version->counter;
    }
    rmq__subscription_group_table__free_unpacked(tab, NULL);
    return rc;
}

/* Bumps the version, queues a write of the table and tells the observer
 * that group name became grp (NULL: deleted). */
static void groups_changed(bk_groups_t *g, const char *name, const bk_group_t *grp)
{
    g->dv_counter++;
    g->dv_timestamp = rmq_wall_ms();
    Rmq__SubscriptionGroupTable *tab = bk_groups_table_new(g);
    uint8_t *buf = NULL;
    size_t len = 0;
    if (tab) {
        len = rmq__subscription_group_table__get_packed_size(tab);
        if ((buf = malloc(len ? len : 1)))
            rmq__subscription_group_table__pack(tab, buf);
        bk_groups_table_free(tab);
    }
    if (buf)
        bk_persist_submit(g->persist, g->path, buf, len);
    else
        LOG_ERROR_RL("groups: out of memory persisting %s", g->path);
    if (g->item)
        g->item(g->item_arg, name, grp);
}

bk_groups_t *bk_groups_new(const char *dir, bk_persist_t *persist, int auto_create,
                           char *err, size_t errlen)
{
    bk_groups_t *g = calloc(1, sizeof(*g));
    if (!g || !(g->map = bk_map_new()) || asprintf(&g->path, "%s/subscriptionGroup.pb", dir) < 0) {
        snprintf(err, errlen, "groups: out of memory");
        if (g)
            g->path = NULL;
        bk_groups_free(g);
        return NULL;
    }
    g->persist = persist;
    g->auto_create = auto_create;
    g->dv_timestamp = rmq_wall_ms();
    if (groups_load(g, err, errlen) != RMQ_OK) {
        bk_groups_free(g);
        return NULL;
    }
    return g;
}

static void group_free(void *p)
{
    free(p);
}

void bk_groups_free(bk_groups_t *g)
{
    if (!g)
        return;
    bk_map_free(g->map, group_free);
    free(g->path);
    free(g);
}

void bk_groups_on_item(bk_groups_t *g, bk_groups_item_fn fn, void *arg)
{
    g->item = fn;
    g->item_arg = arg;
}

void bk_groups_version(const bk_groups_t *g, Rmq__DataVersion *dv)
{
    rmq__data_version__init(dv);
    dv->timestamp = g->dv_timestamp;
    dv->counter = g->dv_counter;
}

const bk_group_t *bk_groups_get(const bk_groups_t *g, const char *name, size_t len)
{
    return bk_map_get(g->map, name, len);
}

const bk_group_t *bk_groups_use(bk_groups_t *g, const char *name, size_t len)
{
    const bk_group_t *cur = bk_map_get(g->map, name, len);
    if (cur || !g->auto_create || len >= sizeof(cur->name))
        return cur;
    bk_group_t grp = {.consume_enable = 1, .consume_broadcast_enable = 1, .retry_queue_nums = 1,
                      .retry_max_times = 16, .which_broker_when_consume_slowly = 1};
    memcpy(grp.name, name, len);
    cur = groups_put(g, &grp);
    if (cur) {
        LOG_INFO("subscription group %s auto-created", cur->name);
        groups_changed(g, cur->name, cur);
    }
    return cur;
}

rmq_err_t bk_groups_put(bk_groups_t *g, const bk_group_t *grp)
{
    const bk_group_t *cur = groups_put(g, grp);
    if (!cur)
        return RMQ_ENOMEM;
    groups_changed(g, cur->name, cur);
    return RMQ_OK;
}

rmq_err_t bk_groups_update(bk_groups_t *g, const Rmq__SubscriptionGroupConfig *pb)
{
    bk_group_t grp;
    bk_group_from_pb(&grp, pb);
    return bk_groups_put(g, &grp);
}

rmq_err_t bk_groups_delete(bk_groups_t *g, const char *name)
{
    bk_group_t *cur = bk_map_del(g->map, name, strlen(name));
    if (!cur)
        return RMQ_ENOTFOUND;
    free(cur);
    groups_changed(g, name, NULL);
    return RMQ_OK;
}

typedef struct groups_snapshot {
    Rmq__SubscriptionGroupTable tab;
    Rmq__DataVersion dv;
    Rmq__SubscriptionGroupConfig **ptrs;
    Rmq__SubscriptionGroupConfig items[];
} groups_snapshot_t;

Rmq__SubscriptionGroupTable *bk_groups_table_new(const bk_groups_t *g)
{
    size_t n = bk_map_count(g->map);
    groups_snapshot_t *s = malloc(sizeof(*s) + n * sizeof(s->items[0]));
    Rmq__SubscriptionGroupConfig **ptrs = malloc((n ? n : 1) * sizeof(*ptrs));
    if (!s || !ptrs) {
        free(s);
        free(ptrs);
        return NULL;
    }
    rmq__subscription_group_table__init(&s->tab);
    bk_groups_version(g, &s->dv);
    s->ptrs = ptrs;
    size_t cursor = 0, i = 0;
    const char *key;
    void *val;
    while (i < n && bk_map_next(g->map, &cursor, &key, &val)) {
        bk_group_to_pb(val, &s->items[i]);
        ptrs[i] = &s->items[i];
        i++;
    }
    s->tab.n_groups = i;
    s->tab.groups = ptrs;
    s->tab.data_version = &s->dv;
    return &s->tab;
}

void bk_groups_table_free(Rmq__SubscriptionGroupTable *tab)
{
    if (!tab)
        return;
    groups_snapshot_t *s = (groups_snapshot_t *)tab;
    free(s->ptrs);
    free(s);
}
