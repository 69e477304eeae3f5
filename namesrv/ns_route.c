/* ns_route.c: the name server's route table (see ns_route.h): broker sets,
 * topic queue data, broker liveness and KV config, kept consistent by
 * cascading removals, plus the builders of the query answers. */
#include "ns_route.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_vec.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_topic_attr.h"

#define NS_PERM_MAX 15

typedef struct ns_baddr {
    int64_t id;
    char *addr;
} ns_baddr_t;

typedef struct ns_bset {
    char *name;              /* key */
    char *cluster;
    ns_vec_t addrs;          /* ns_baddr_t by id */
} ns_bset_t;

typedef struct ns_queue {
    char *broker_name;       /* key */
    int32_t read_queue_nums;
    int32_t write_queue_nums;
    int32_t perm;
    int32_t sysflag;
    int32_t message_type;    /* the topic's message.type: rmq_topic_msg_type_t */
} ns_queue_t;

typedef struct ns_topic {
    char *name;              /* key */
    ns_vec_t queues;         /* ns_queue_t by broker name */
} ns_topic_t;

typedef struct ns_live {
    char *addr;              /* key */
    char *broker_name;
    int64_t broker_id;
    int64_t last_ms;         /* monotonic */
    int64_t dv_timestamp;
    int64_t dv_counter;
    int64_t epoch;
    int64_t master_epoch;    /* controller mode: of the role it registered in */
    char *ha_addr;
    uint64_t conn_id;
} ns_live_t;

typedef struct ns_kv {
    char *ns;                /* key, with key */
    char *key;
    char *value;
} ns_kv_t;

typedef struct ns_kv_key {
    const char *ns;
    const char *key;
} ns_kv_key_t;

struct ns_route {
    ns_vec_t bsets;          /* ns_bset_t */
    ns_vec_t topics;         /* ns_topic_t */
    ns_vec_t live;           /* ns_live_t */
    ns_vec_t kv;             /* ns_kv_t */
};

/* ---- comparisons ------------------------------------------------------ */

/* Elements whose first member is their char * key. */
static int name_cmp(const void *item, const void *key)
{
    return strcmp(*(char *const *)item, (const char *)key);
}

static int id_cmp(const void *item, const void *key)
{
    int64_t a = ((const ns_baddr_t *)item)->id, b = *(const int64_t *)key;
    return (a > b) - (a < b);
}

static int kv_cmp(const void *item, const void *key)
{
    const ns_kv_t *kv = item;
    const ns_kv_key_t *k = key;
    int c = strcmp(kv->ns, k->ns);
    return c ? c : strcmp(kv->key, k->key);
}

/* ---- element lifetimes ------------------------------------------------ */

static void bset_free(ns_bset_t *bset)
{
    for (size_t i = 0; i < bset->addrs.len; i++)
        free(((ns_baddr_t *)ns_vec_at(&bset->addrs, i))->addr);
    ns_vec_deinit(&bset->addrs);
    free(bset->name);
    free(bset->cluster);
}

static void topic_free(ns_topic_t *topic)
{
    for (size_t i = 0; i < topic->queues.len; i++)
        free(((ns_queue_t *)ns_vec_at(&topic->queues, i))->broker_name);
    ns_vec_deinit(&topic->queues);
    free(topic->name);
}

static void live_free(ns_live_t *live)
{
    free(live->addr);
    free(live->broker_name);
    free(live->ha_addr);
}

static void kv_free(ns_kv_t *kv)
{
    free(kv->ns);
    free(kv->key);
    free(kv->value);
}

ns_route_t *ns_route_new(void)
{
    ns_route_t *rt = calloc(1, sizeof *rt);

    if (!rt)
        return NULL;
    ns_vec_init(&rt->bsets, sizeof(ns_bset_t));
    ns_vec_init(&rt->topics, sizeof(ns_topic_t));
    ns_vec_init(&rt->live, sizeof(ns_live_t));
    ns_vec_init(&rt->kv, sizeof(ns_kv_t));
    return rt;
}

void ns_route_free(ns_route_t *rt)
{
    if (!rt)
        return;
    for (size_t i = 0; i < rt->bsets.len; i++)
        bset_free(ns_vec_at(&rt->bsets, i));
    for (size_t i = 0; i < rt->topics.len; i++)
        topic_free(ns_vec_at(&rt->topics, i));
    for (size_t i = 0; i < rt->live.len; i++)
        live_free(ns_vec_at(&rt->live, i));
    for (size_t i = 0; i < rt->kv.len; i++)
        kv_free(ns_vec_at(&rt->kv, i));
    ns_vec_deinit(&rt->bsets);
    ns_vec_deinit(&rt->topics);
    ns_vec_deinit(&rt->live);
    ns_vec_deinit(&rt->kv);
    free(rt);
}

/* Replaces *slot with a copy of s; RMQ_ENOMEM leaves *slot as it was. */
static rmq_err_t str_set(char **slot, const char *s)
{
    char *copy = strdup(s);

    if (!copy)
        return RMQ_ENOMEM;
    free(*slot);
    *slot = copy;
    return RMQ_OK;
}

/* ---- removals, cascading ---------------------------------------------- */

/* Which queue data of one broker name a pass over the topics drops. */
typedef struct queue_drop {
    const char *broker_name;
    const char **names;      /* sorted topic names; NULL: every topic */
    size_t n;
    size_t next;             /* names before it sort before the topics visited */
    int listed;              /* drop the topics names lists (1) or those it does not (0) */
} queue_drop_t;

static int str_ptr_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Whether d's sorted names list name; the topics come in order, so one
 * cursor walks the names once over the whole pass. */
static int drop_listed(queue_drop_t *d, const char *name)
{
    while (d->next < d->n && strcmp(d->names[d->next], name) < 0)
        d->next++;
    return d->next < d->n && strcmp(d->names[d->next], name) == 0;
}

/* ns_vec_filter step: drops d's broker name from one topic, and the topic
 * when that leaves it empty. */
static int topic_keep(void *item, void *arg)
{
    ns_topic_t *topic = item;
    queue_drop_t *d = arg;
    int found;

    if (d->names && drop_listed(d, topic->name) != d->listed)
        return 1;
    size_t qi = ns_vec_search(&topic->queues, name_cmp, d->broker_name, &found);
    if (!found)
        return 1;
    free(((ns_queue_t *)ns_vec_at(&topic->queues, qi))->broker_name);
    ns_vec_remove_at(&topic->queues, qi);
    if (topic->queues.len > 0)
        return 1;
    topic_free(topic);
    return 0;
}

/* Drops broker_name's queue data from every topic and topics left empty. */
static void drop_queues_of(ns_route_t *rt, const char *broker_name)
{
    queue_drop_t d = {broker_name, NULL, 0, 0, 0};

    ns_vec_filter(&rt->topics, topic_keep, &d);
}

/* Frees liveness entry li after taking its address out of its broker set's
 * slot; the set stays, even when that leaves it empty. */
static void unslot_live_at(ns_route_t *rt, size_t li)
{
    ns_live_t *live = ns_vec_at(&rt->live, li);
    ns_bset_t *bset = ns_vec_find(&rt->bsets, name_cmp, live->broker_name);
    int found;

    if (bset) {
        size_t ai = ns_vec_search(&bset->addrs, id_cmp, &live->broker_id, &found);
        ns_baddr_t *ba = found ? ns_vec_at(&bset->addrs, ai) : NULL;
        if (ba && strcmp(ba->addr, live->addr) == 0) {
            free(ba->addr);
            ns_vec_remove_at(&bset->addrs, ai);
        }
    }
    live_free(live);
    ns_vec_remove_at(&rt->live, li);
}

/* Removes broker set name, with its queue data, when it has no address left
 * (its cluster goes with it). */
static void drop_set_if_empty(ns_route_t *rt, const char *name)
{
    int found;
    size_t bi = ns_vec_search(&rt->bsets, name_cmp, name, &found);
    ns_bset_t *bset = found ? ns_vec_at(&rt->bsets, bi) : NULL;

    if (!bset || bset->addrs.len > 0)
        return;
    drop_queues_of(rt, bset->name);
    bset_free(bset);
    ns_vec_remove_at(&rt->bsets, bi);
}

/* Removes liveness entry li and its address from its broker set; a broker
 * set left empty goes with its queue data. */
static void remove_live_at(ns_route_t *rt, size_t li)
{
    ns_live_t *live = ns_vec_at(&rt->live, li);
    const ns_bset_t *bset = ns_vec_find(&rt->bsets, name_cmp, live->broker_name);

    unslot_live_at(rt, li);
    if (bset)
        drop_set_if_empty(rt, bset->name);
}

/* Removes addr's liveness entry only (its broker-set slot was taken over). */
static void drop_live_only(ns_route_t *rt, const char *addr)
{
    int found;
    size_t li = ns_vec_search(&rt->live, name_cmp, addr, &found);

    if (found) {
        live_free(ns_vec_at(&rt->live, li));
        ns_vec_remove_at(&rt->live, li);
    }
}

/* ---- registration ----------------------------------------------------- */

static int name_ok(const char *s)
{
    return s && s[0] && strlen(s) <= NS_NAME_MAX;
}

/* Checks the fields a registration needs; names the first bad one in why. */
static rmq_err_t check_register(const Rmq__RegisterBrokerRequest *req, char *why, size_t whylen)
{
    if (!name_ok(req->cluster_name) || !name_ok(req->broker_name) || !name_ok(req->broker_addr)) {
        snprintf(why, whylen, "cluster_name, broker_name and broker_addr must be 1..%d characters",
                 NS_NAME_MAX);
        return RMQ_EINVAL;
    }
    if (req->broker_id < 0) {
        snprintf(why, whylen, "broker_id %" PRId64 " is negative", req->broker_id);
        return RMQ_EINVAL;
    }
    if (req->ha_server_addr && strlen(req->ha_server_addr) > NS_NAME_MAX) {
        snprintf(why, whylen, "ha_server_addr is longer than %d characters", NS_NAME_MAX);
        return RMQ_EINVAL;
    }
    for (size_t i = 0; i < req->n_topics; i++) {
        const Rmq__TopicConfig *tc = req->topics[i];
        if (!name_ok(tc->topic_name)) {
            snprintf(why, whylen, "topic %zu: topic_name must be 1..%d characters", i, NS_NAME_MAX);
            return RMQ_EINVAL;
        }
        if (tc->read_queue_nums < 0 || tc->read_queue_nums > RMQ_QUEUE_NUMS_MAX ||
            tc->write_queue_nums < 0 || tc->write_queue_nums > RMQ_QUEUE_NUMS_MAX ||
            tc->perm < 0 || tc->perm > NS_PERM_MAX) {
            snprintf(why, whylen, "topic %s: queue nums must be 0..%d and perm 0..%d",
                     tc->topic_name, RMQ_QUEUE_NUMS_MAX, NS_PERM_MAX);
            return RMQ_EINVAL;
        }
        char reason[160];
        if (tc->attributes &&
            rmq_topic_attrs_check(tc->attributes, strlen(tc->attributes), reason, sizeof(reason)) != RMQ_OK) {
            snprintf(why, whylen, "topic %s: %s", tc->topic_name, reason);
            return RMQ_EINVAL;
        }
    }
    for (size_t i = 0; i < req->n_deleted_topics; i++) {
        if (!name_ok(req->deleted_topics[i])) {
            snprintf(why, whylen, "deleted_topics %zu: a topic name must be 1..%d characters", i, NS_NAME_MAX);
            return RMQ_EINVAL;
        }
    }
    return RMQ_OK;
}

/* The broker set called name, created empty in cluster when missing. */
static ns_bset_t *bset_get(ns_route_t *rt, const char *name, const char *cluster, int *created)
{
    int found;
    size_t bi = ns_vec_search(&rt->bsets, name_cmp, name, &found);
    ns_bset_t *bset;

    *created = !found;
    if (found) {
        bset = ns_vec_at(&rt->bsets, bi);
        if (strcmp(bset->cluster, cluster) != 0 && str_set(&bset->cluster, cluster) != RMQ_OK)
            return NULL;
        return bset;
    }
    char *name_copy = strdup(name), *cluster_copy = strdup(cluster);
    bset = name_copy && cluster_copy ? ns_vec_insert_at(&rt->bsets, bi) : NULL;
    if (!bset) {
        free(name_copy);
        free(cluster_copy);
        return NULL;
    }
    bset->name = name_copy;
    bset->cluster = cluster_copy;
    ns_vec_init(&bset->addrs, sizeof(ns_baddr_t));
    return bset;
}

/* RMQ_EEXIST (why) when req would take its id's slot from another live
 * address that registered at a newer master epoch: a master the
 * controllers replaced, still registering as one. */
static rmq_err_t check_takeover(const ns_route_t *rt, const Rmq__RegisterBrokerRequest *req, char *why,
                                size_t whylen)
{
    const ns_bset_t *bset = ns_vec_find(&rt->bsets, name_cmp, req->broker_name);
    const ns_baddr_t *ba = bset ? ns_vec_find(&bset->addrs, id_cmp, &req->broker_id) : NULL;
    const ns_live_t *holder = ba ? ns_vec_find(&rt->live, name_cmp, ba->addr) : NULL;

    if (!holder || strcmp(holder->addr, req->broker_addr) == 0 || holder->master_epoch <= req->master_epoch)
        return RMQ_OK;
    snprintf(why, whylen, "registration of %s as %s id %" PRId64 " refused: %s holds it at master epoch %"
             PRId64 ", newer than %" PRId64, req->broker_addr, req->broker_name, req->broker_id, ba->addr,
             holder->master_epoch, req->master_epoch);
    return RMQ_EEXIST;
}

/* RMQ_EEXIST (why) when req would move live, which the controller made its
 * set's master at a newer master epoch than req's, back to another id: a
 * registration the broker sent before it applied its promotion (the
 * controller's placement stands until the broker registers in it). */
static rmq_err_t check_placement(const ns_live_t *live, const Rmq__RegisterBrokerRequest *req, char *why,
                                 size_t whylen)
{
    if (live->broker_id != 0 || req->broker_id == 0 || req->master_epoch >= live->master_epoch ||
        strcmp(live->broker_name, req->broker_name) != 0)
        return RMQ_OK;
    snprintf(why, whylen, "registration of %s as %s id %" PRId64 " refused: the controller made it master at "
             "master epoch %" PRId64 ", newer than %" PRId64, req->broker_addr, req->broker_name, req->broker_id,
             live->master_epoch, req->master_epoch);
    return RMQ_EEXIST;
}

/* Puts req's address at its id in its broker set. *first is set when the
 * set or that id's slot was new (or held another address, whose liveness
 * entry is dropped: the slot was taken over). */
static rmq_err_t bset_put_addr(ns_route_t *rt, const Rmq__RegisterBrokerRequest *req, int *first)
{
    int created, found;
    ns_bset_t *bset = bset_get(rt, req->broker_name, req->cluster_name, &created);

    if (!bset)
        return RMQ_ENOMEM;
    size_t ai = ns_vec_search(&bset->addrs, id_cmp, &req->broker_id, &found);
    if (found) {
        ns_baddr_t *ba = ns_vec_at(&bset->addrs, ai);
        *first = created || strcmp(ba->addr, req->broker_addr) != 0;
        if (!*first)
            return RMQ_OK;
        LOG_WARN("%s id %" PRId64 ": %s takes the place of %s", req->broker_name,
                 req->broker_id, req->broker_addr, ba->addr);
        char *old = ba->addr;
        ba->addr = NULL;
        rmq_err_t err = str_set(&ba->addr, req->broker_addr);
        if (err != RMQ_OK) {
            ba->addr = old;
            return err;
        }
        drop_live_only(rt, old);
        free(old);
        return RMQ_OK;
    }
    *first = 1;
    char *addr = strdup(req->broker_addr);
    ns_baddr_t *ba = addr ? ns_vec_insert_at(&bset->addrs, ai) : NULL;
    if (!ba) {
        free(addr);
        return RMQ_ENOMEM;
    }
    ba->id = req->broker_id;
    ba->addr = addr;
    return RMQ_OK;
}

/* The queue data of broker_name in topic, created zeroed when missing. */
static ns_queue_t *topic_queue_get(ns_topic_t *topic, const char *broker_name)
{
    int found;
    size_t qi = ns_vec_search(&topic->queues, name_cmp, broker_name, &found);
    if (found)
        return ns_vec_at(&topic->queues, qi);
    char *bname = strdup(broker_name);
    ns_queue_t *q = bname ? ns_vec_insert_at(&topic->queues, qi) : NULL;
    if (!q) {
        free(bname);
        return NULL;
    }
    q->broker_name = bname;
    return q;
}

/* Orders pointers into a request's topic array by name, then by position,
 * so of one topic named twice the later config wins, as in request order. */
static int tc_ref_cmp(const void *a, const void *b)
{
    const Rmq__TopicConfig *const *x = *(const Rmq__TopicConfig *const *const *)a;
    const Rmq__TopicConfig *const *y = *(const Rmq__TopicConfig *const *const *)b;
    int c = strcmp((*x)->topic_name, (*y)->topic_name);

    return c ? c : (x > y) - (x < y);
}

static int topic_cmp_at(const ns_route_t *rt, size_t i, const char *name)
{
    return strcmp(((const ns_topic_t *)ns_vec_at(&rt->topics, i))->name, name);
}

/* The index of the first topic of rt not before name, searched from at
 * (every topic before at sorts before name) by galloping: O(log distance),
 * so a walk of sorted names costs O(names) over a dense stretch of the
 * table and O(log table) a name over a sparse one. */
static size_t topics_seek(const ns_route_t *rt, size_t at, const char *name)
{
    size_t len = rt->topics.len, lo = at, hi = at, step = 1;

    while (hi < len && topic_cmp_at(rt, hi, name) < 0) {
        lo = hi + 1;
        hi += step;
        step *= 2;
    }
    if (hi > len)
        hi = len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (topic_cmp_at(rt, mid, name) < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int topic_at_is(const ns_route_t *rt, size_t at, const char *name)
{
    return at < rt->topics.len && topic_cmp_at(rt, at, name) == 0;
}

/* Adds, in one merge, an empty entry for every topic of sorted (n configs
 * in name order) not yet in the table. */
static rmq_err_t add_missing_topics(ns_route_t *rt, const Rmq__TopicConfig *const **sorted, size_t n)
{
    ns_topic_t *fresh = NULL;
    size_t k = 0, at = 0;
    rmq_err_t err = RMQ_ENOMEM;

    for (size_t i = 0; i < n; i++) {
        const char *name = (*sorted[i])->topic_name;
        at = topics_seek(rt, at, name);
        if (topic_at_is(rt, at, name) || (k > 0 && strcmp(fresh[k - 1].name, name) == 0))
            continue;            /* known, or the same topic twice in one request */
        if (!fresh && !(fresh = malloc((n - i) * sizeof *fresh)))
            return RMQ_ENOMEM;
        fresh[k].name = strdup(name);
        if (!fresh[k].name)
            goto out;
        ns_vec_init(&fresh[k].queues, sizeof(ns_queue_t));
        k++;
    }
    err = ns_vec_merge(&rt->topics, fresh, k, name_cmp);
out:
    if (err != RMQ_OK)
        for (size_t i = 0; i < k; i++)
            free(fresh[i].name);
    free(fresh);
    return err;
}

/* Writes a master's topic configs (sorted: in name order) into the queue
 * data of its broker name. */
static rmq_err_t upsert_queues(ns_route_t *rt, const Rmq__RegisterBrokerRequest *req,
                               const Rmq__TopicConfig *const **sorted)
{
    rmq_err_t err = add_missing_topics(rt, sorted, req->n_topics);
    size_t at = 0;

    if (err != RMQ_OK)
        return err;
    for (size_t i = 0; i < req->n_topics; i++) {
        const Rmq__TopicConfig *tc = *sorted[i];
        at = topics_seek(rt, at, tc->topic_name);
        ns_queue_t *q = topic_queue_get(ns_vec_at(&rt->topics, at), req->broker_name);
        if (!q)
            return RMQ_ENOMEM;
        q->read_queue_nums = tc->read_queue_nums;
        q->write_queue_nums = tc->write_queue_nums;
        q->perm = tc->perm;
        q->sysflag = tc->topic_sys_flag;
        q->message_type = (int32_t)rmq_topic_attrs_msg_type(tc->attributes ? tc->attributes : "");
    }
    return RMQ_OK;
}

/* Drops req's broker name's queue data of the topics a delta deletes, or,
 * for a complete table, of those it does not name (sorted: its configs in
 * name order): one pass over the table. */
static rmq_err_t drop_queues(ns_route_t *rt, const Rmq__RegisterBrokerRequest *req,
                             const Rmq__TopicConfig *const **sorted)
{
    size_t n = req->delta ? req->n_deleted_topics : req->n_topics;

    if (req->delta ? n == 0 : !req->complete)
        return RMQ_OK;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < n; i++)
        names[i] = req->delta ? req->deleted_topics[i] : (*sorted[i])->topic_name;
    if (req->delta)
        qsort(names, n, sizeof *names, str_ptr_cmp);
    queue_drop_t d = {req->broker_name, names, n, 0, req->delta};
    ns_vec_filter(&rt->topics, topic_keep, &d);
    free(names);
    return RMQ_OK;
}

/* A master's (first or changed) topics into the table: its configs sorted
 * once, then merged, written and pruned in walks over the sorted table. */
static rmq_err_t apply_topics(ns_route_t *rt, const Rmq__RegisterBrokerRequest *req)
{
    size_t n = req->n_topics;
    const Rmq__TopicConfig *const **sorted = malloc((n ? n : 1) * sizeof *sorted);

    if (!sorted)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < n; i++)
        sorted[i] = (const Rmq__TopicConfig *const *)&req->topics[i];
    qsort(sorted, n, sizeof *sorted, tc_ref_cmp);
    rmq_err_t err = upsert_queues(rt, req, sorted);
    if (err == RMQ_OK)
        err = drop_queues(rt, req, sorted);
    free(sorted);
    return err;
}

/* Creates or refreshes the liveness entry of req's address. */
static rmq_err_t live_put(ns_route_t *rt, const Rmq__RegisterBrokerRequest *req,
                          uint64_t conn_id, int64_t now_ms)
{
    int found;
    size_t li = ns_vec_search(&rt->live, name_cmp, req->broker_addr, &found);
    ns_live_t *live;

    if (found) {
        live = ns_vec_at(&rt->live, li);
    } else {
        char *addr = strdup(req->broker_addr), *bname = strdup(req->broker_name);
        live = addr && bname ? ns_vec_insert_at(&rt->live, li) : NULL;
        if (!live) {
            free(addr);
            free(bname);
            return RMQ_ENOMEM;
        }
        live->addr = addr;
        live->broker_name = bname;
        live->broker_id = req->broker_id;
    }
    if (str_set(&live->ha_addr, req->ha_server_addr ? req->ha_server_addr : "") != RMQ_OK) {
        if (!found)
            remove_live_at(rt, li);
        return RMQ_ENOMEM;
    }
    live->last_ms = now_ms;
    live->dv_timestamp = req->data_version ? req->data_version->timestamp : 0;
    live->dv_counter = req->data_version ? req->data_version->counter : 0;
    live->epoch = req->epoch;
    live->master_epoch = req->master_epoch;
    live->conn_id = conn_id;
    return RMQ_OK;
}

/* Fills res with the master of a slave's broker set, when that master is live. */
static void find_master(const ns_route_t *rt, const char *broker_name, ns_register_result_t *res)
{
    const ns_bset_t *bset = ns_vec_find(&rt->bsets, name_cmp, broker_name);
    int64_t master_id = 0;
    const ns_baddr_t *ba = bset ? ns_vec_find(&bset->addrs, id_cmp, &master_id) : NULL;
    const ns_live_t *live = ba ? ns_vec_find(&rt->live, name_cmp, ba->addr) : NULL;

    if (!live)
        return;
    snprintf(res->master_addr, sizeof res->master_addr, "%s", live->addr);
    snprintf(res->master_ha_addr, sizeof res->master_ha_addr, "%s", live->ha_addr);
}

/* 1 unless live holds dv (a missing dv is version 0/0). */
static int dv_differs(const ns_live_t *live, const Rmq__DataVersion *dv)
{
    int64_t ts = dv ? dv->timestamp : 0;
    int64_t counter = dv ? dv->counter : 0;
    return live->dv_timestamp != ts || live->dv_counter != counter;
}

rmq_err_t ns_route_set_master(ns_route_t *rt, const char *broker_name, const char *addr, int64_t epoch)
{
    int found;
    ns_bset_t *bset = ns_vec_find(&rt->bsets, name_cmp, broker_name);
    ns_live_t *live = ns_vec_find(&rt->live, name_cmp, addr);

    if (!bset || !live || strcmp(live->broker_name, broker_name) != 0)
        return RMQ_ENOTFOUND;
    if (live->broker_id == 0) {
        live->master_epoch = epoch;
        return RMQ_OK;
    }
    int64_t master_id = 0;
    ns_baddr_t *old = ns_vec_find(&bset->addrs, id_cmp, &master_id);
    if (old) {
        size_t li = ns_vec_search(&rt->live, name_cmp, old->addr, &found);
        if (found)
            remove_live_at(rt, li);    /* the address stays: addr keeps the set alive */
        live = ns_vec_find(&rt->live, name_cmp, addr);
    }
    size_t ai = ns_vec_search(&bset->addrs, id_cmp, &live->broker_id, &found);
    if (!found)
        return RMQ_ENOTFOUND;
    ns_baddr_t moved = *(ns_baddr_t *)ns_vec_at(&bset->addrs, ai);
    ns_vec_remove_at(&bset->addrs, ai);
    ns_baddr_t *slot = ns_vec_insert_at(&bset->addrs, ns_vec_search(&bset->addrs, id_cmp, &master_id, &found));
    if (!slot) {
        free(moved.addr);
        remove_live_at(rt, ns_vec_search(&rt->live, name_cmp, addr, &found));
        return RMQ_ENOMEM;
    }
    moved.id = 0;
    *slot = moved;
    LOG_INFO("%s: %s (id %" PRId64 ") is master now at epoch %" PRId64, broker_name, addr, live->broker_id,
             epoch);
    live->broker_id = 0;
    live->master_epoch = epoch;
    return RMQ_OK;
}

/* 1 if live is req's address registered as req's broker name, id and epoch. */
static int live_matches(const ns_live_t *live, const Rmq__RegisterBrokerRequest *req)
{
    return strcmp(live->broker_name, req->broker_name) == 0 && live->broker_id == req->broker_id &&
           live->epoch == req->epoch && live->master_epoch == req->master_epoch;
}

/* A delta registration applies only over the version it was computed from. */
static rmq_err_t check_delta(const ns_route_t *rt, const Rmq__RegisterBrokerRequest *req,
                             char *why, size_t whylen)
{
    const ns_live_t *live = ns_vec_find(&rt->live, name_cmp, req->broker_addr);

    if (live && live_matches(live, req) && !dv_differs(live, req->base_version))
        return RMQ_OK;
    snprintf(why, whylen, "delta registration of %s: base version is not the one registered "
             "(send the whole table)", req->broker_addr);
    return RMQ_ENOTFOUND;
}

rmq_err_t ns_route_register(ns_route_t *rt, const Rmq__RegisterBrokerRequest *req,
                            uint64_t conn_id, int64_t now_ms, ns_register_result_t *res,
                            char *why, size_t whylen)
{
    rmq_err_t err;
    int found, first = 0, changed = 1;

    memset(res, 0, sizeof *res);
    err = check_register(req, why, whylen);
    if (err == RMQ_OK && req->delta)
        err = check_delta(rt, req, why, whylen);
    if (err == RMQ_OK)
        err = check_takeover(rt, req, why, whylen);
    if (err != RMQ_OK)
        return err;
    size_t li = ns_vec_search(&rt->live, name_cmp, req->broker_addr, &found);
    if (found) {
        ns_live_t *live = ns_vec_at(&rt->live, li);
        if (req->epoch < live->epoch) {
            snprintf(why, whylen, "stale registration of %s: epoch %" PRId64
                     " is older than the registered epoch %" PRId64,
                     req->broker_addr, req->epoch, live->epoch);
            return RMQ_EEXIST;
        }
        if ((err = check_placement(live, req, why, whylen)) != RMQ_OK)
            return err;
        if (strcmp(live->broker_name, req->broker_name) != 0 || live->broker_id != req->broker_id) {
            LOG_INFO("%s moves from %s id %" PRId64 " to %s id %" PRId64, live->addr,
                     live->broker_name, live->broker_id, req->broker_name, req->broker_id);
            if (strcmp(live->broker_name, req->broker_name) == 0)
                unslot_live_at(rt, li);    /* to another id of its set: the set's queue data stay */
            else
                remove_live_at(rt, li);
        } else {
            changed = dv_differs(live, req->data_version);
        }
    }
    err = bset_put_addr(rt, req, &first);
    if (err == RMQ_OK && req->broker_id == 0 && (first || changed))
        err = apply_topics(rt, req);
    if (err == RMQ_OK)
        err = live_put(rt, req, conn_id, now_ms);
    if (err != RMQ_OK) {
        drop_set_if_empty(rt, req->broker_name);   /* a move within the set that did not land */
        snprintf(why, whylen, "out of memory");
        return err;
    }
    if (req->broker_id != 0)
        find_master(rt, req->broker_name, res);
    return RMQ_OK;
}

int ns_route_query_version(ns_route_t *rt, const Rmq__RegisterBrokerRequest *req,
                           uint64_t conn_id, int64_t now_ms, ns_register_result_t *res)
{
    ns_live_t *live = req->broker_addr ? ns_vec_find(&rt->live, name_cmp, req->broker_addr) : NULL;

    memset(res, 0, sizeof *res);
    if (!live || !req->broker_name || !live_matches(live, req) || dv_differs(live, req->data_version))
        return 1;
    live->last_ms = now_ms;
    live->conn_id = conn_id;
    if (req->broker_id != 0)
        find_master(rt, req->broker_name, res);
    return 0;
}

/* ---- unregister, expiry, connection loss ------------------------------ */

rmq_err_t ns_route_unregister(ns_route_t *rt, const Rmq__UnregisterBrokerRequest *req,
                              char *why, size_t whylen)
{
    int found;
    const char *addr = req->broker_addr ? req->broker_addr : "";
    size_t li = ns_vec_search(&rt->live, name_cmp, addr, &found);

    if (!found) {
        snprintf(why, whylen, "broker %s is not registered", addr);
        return RMQ_ENOTFOUND;
    }
    ns_live_t *live = ns_vec_at(&rt->live, li);
    if (!req->broker_name || strcmp(live->broker_name, req->broker_name) != 0 ||
        live->broker_id != req->broker_id) {
        snprintf(why, whylen, "%s is registered as %s id %" PRId64 ", not %s id %" PRId64, addr,
                 live->broker_name, live->broker_id, req->broker_name ? req->broker_name : "",
                 req->broker_id);
        return RMQ_ENOTFOUND;
    }
    if (req->epoch < live->epoch) {
        snprintf(why, whylen, "stale unregister of %s: epoch %" PRId64
                 " is older than the registered epoch %" PRId64, addr, req->epoch, live->epoch);
        return RMQ_EEXIST;
    }
    LOG_INFO("broker %s (%s id %" PRId64 ") unregistered", addr, live->broker_name,
             live->broker_id);
    remove_live_at(rt, li);
    return RMQ_OK;
}

size_t ns_route_expire(ns_route_t *rt, int64_t now_ms, int64_t timeout_ms)
{
    size_t n = 0;

    for (size_t i = rt->live.len; i-- > 0;) {
        ns_live_t *live = ns_vec_at(&rt->live, i);
        if (now_ms - live->last_ms <= timeout_ms)
            continue;
        LOG_WARN("broker %s (%s id %" PRId64 ") silent for %" PRId64 " ms, removed", live->addr,
                 live->broker_name, live->broker_id, now_ms - live->last_ms);
        remove_live_at(rt, i);
        n++;
    }
    return n;
}

int64_t ns_route_next_expiry(const ns_route_t *rt, int64_t timeout_ms)
{
    int64_t next = INT64_MAX;

    for (size_t i = 0; i < rt->live.len; i++) {
        const ns_live_t *live = ns_vec_at(&rt->live, i);
        if (live->last_ms + timeout_ms < next)
            next = live->last_ms + timeout_ms;
    }
    return next;
}

size_t ns_route_remove_conn(ns_route_t *rt, uint64_t conn_id)
{
    size_t n = 0;

    if (conn_id == 0)
        return 0;
    for (size_t i = rt->live.len; i-- > 0;) {
        ns_live_t *live = ns_vec_at(&rt->live, i);
        if (live->conn_id != conn_id)
            continue;
        LOG_INFO("broker %s (%s id %" PRId64 ") connection closed, removed", live->addr,
                 live->broker_name, live->broker_id);
        remove_live_at(rt, i);
        n++;
    }
    return n;
}

/* ---- queries ---------------------------------------------------------- */

static Rmq__BrokerData *build_broker_data(const ns_bset_t *bset)
{
    Rmq__BrokerData *bd = malloc(sizeof *bd);

    if (!bd)
        return NULL;
    rmq__broker_data__init(bd);
    bd->cluster = strdup(bset->cluster);
    bd->broker_name = strdup(bset->name);
    bd->addrs = calloc(bset->addrs.len + 1, sizeof *bd->addrs);
    if (!bd->cluster || !bd->broker_name || !bd->addrs)
        goto err;
    for (size_t i = 0; i < bset->addrs.len; i++) {
        const ns_baddr_t *ba = ns_vec_at(&bset->addrs, i);
        Rmq__BrokerAddr *out = malloc(sizeof *out);
        if (!out)
            goto err;
        rmq__broker_addr__init(out);
        bd->addrs[bd->n_addrs++] = out;
        out->broker_id = ba->id;
        out->addr = strdup(ba->addr);
        if (!out->addr)
            goto err;
    }
    return bd;
err:
    rmq__broker_data__free_unpacked(bd, NULL);
    return NULL;
}

static Rmq__QueueData *build_queue_data(const ns_queue_t *q)
{
    Rmq__QueueData *qd = malloc(sizeof *qd);

    if (!qd)
        return NULL;
    rmq__queue_data__init(qd);
    qd->broker_name = strdup(q->broker_name);
    if (!qd->broker_name) {
        free(qd);
        return NULL;
    }
    qd->read_queue_nums = q->read_queue_nums;
    qd->write_queue_nums = q->write_queue_nums;
    qd->perm = q->perm;
    qd->topic_sys_flag = q->sysflag;
    qd->message_type = q->message_type;
    return qd;
}

Rmq__TopicRouteData *ns_route_topic(const ns_route_t *rt, const char *topic_name, rmq_err_t *err)
{
    const ns_topic_t *topic = ns_vec_find(&rt->topics, name_cmp, topic_name);
    Rmq__TopicRouteData *rd;

    *err = RMQ_ENOTFOUND;
    if (!topic)
        return NULL;
    *err = RMQ_ENOMEM;
    rd = malloc(sizeof *rd);
    if (!rd)
        return NULL;
    rmq__topic_route_data__init(rd);
    rd->queue_datas = calloc(topic->queues.len + 1, sizeof *rd->queue_datas);
    rd->broker_datas = calloc(topic->queues.len + 1, sizeof *rd->broker_datas);
    if (!rd->queue_datas || !rd->broker_datas)
        goto err;
    for (size_t i = 0; i < topic->queues.len; i++) {
        const ns_queue_t *q = ns_vec_at(&topic->queues, i);
        const ns_bset_t *bset = ns_vec_find(&rt->bsets, name_cmp, q->broker_name);
        Rmq__QueueData *qd = build_queue_data(q);
        if (!qd)
            goto err;
        rd->queue_datas[rd->n_queue_datas++] = qd;
        if (!bset)
            continue;
        Rmq__BrokerData *bd = build_broker_data(bset);
        if (!bd)
            goto err;
        rd->broker_datas[rd->n_broker_datas++] = bd;
    }
    rd->order_topic = ns_route_kv_get(rt, NS_ORDER_TOPIC_NS, topic_name) != NULL;
    *err = RMQ_OK;
    return rd;
err:
    rmq__topic_route_data__free_unpacked(rd, NULL);
    return NULL;
}

/* Fills ci->clusters: one entry per distinct cluster, its broker names sorted. */
static rmq_err_t build_clusters(const ns_route_t *rt, Rmq__ClusterInfo *ci)
{
    ci->clusters = calloc(rt->bsets.len + 1, sizeof *ci->clusters);
    if (!ci->clusters)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < rt->bsets.len; i++) {
        const ns_bset_t *bset = ns_vec_at(&rt->bsets, i);
        Rmq__ClusterEntry *ce = NULL;
        for (size_t c = 0; c < ci->n_clusters && !ce; c++)
            if (strcmp(ci->clusters[c]->cluster_name, bset->cluster) == 0)
                ce = ci->clusters[c];
        if (!ce) {
            ce = malloc(sizeof *ce);
            if (!ce)
                return RMQ_ENOMEM;
            rmq__cluster_entry__init(ce);
            ci->clusters[ci->n_clusters++] = ce;
            ce->cluster_name = strdup(bset->cluster);
            ce->broker_names = calloc(rt->bsets.len, sizeof *ce->broker_names);
            if (!ce->cluster_name || !ce->broker_names)
                return RMQ_ENOMEM;
        }
        char *name = strdup(bset->name);
        if (!name)
            return RMQ_ENOMEM;
        ce->broker_names[ce->n_broker_names++] = name;
    }
    return RMQ_OK;
}

static Rmq__BrokerLive *build_live(const ns_live_t *live, int64_t now_ms, int64_t wall_ms)
{
    Rmq__BrokerLive *bl = malloc(sizeof *bl);

    if (!bl)
        return NULL;
    rmq__broker_live__init(bl);
    bl->last_update_ms = wall_ms - (now_ms - live->last_ms);
    bl->broker_addr = strdup(live->addr);
    bl->ha_server_addr = strdup(live->ha_addr);
    bl->data_version = malloc(sizeof *bl->data_version);
    if (bl->data_version)
        rmq__data_version__init(bl->data_version);
    if (!bl->broker_addr || !bl->ha_server_addr || !bl->data_version) {
        rmq__broker_live__free_unpacked(bl, NULL);
        return NULL;
    }
    bl->data_version->timestamp = live->dv_timestamp;
    bl->data_version->counter = live->dv_counter;
    return bl;
}

Rmq__ClusterInfo *ns_route_cluster_info(const ns_route_t *rt, int64_t now_ms, int64_t wall_ms)
{
    Rmq__ClusterInfo *ci = malloc(sizeof *ci);

    if (!ci)
        return NULL;
    rmq__cluster_info__init(ci);
    ci->brokers = calloc(rt->bsets.len + 1, sizeof *ci->brokers);
    ci->live = calloc(rt->live.len + 1, sizeof *ci->live);
    if (!ci->brokers || !ci->live || build_clusters(rt, ci) != RMQ_OK)
        goto err;
    for (size_t i = 0; i < rt->bsets.len; i++) {
        Rmq__BrokerData *bd = build_broker_data(ns_vec_at(&rt->bsets, i));
        if (!bd)
            goto err;
        ci->brokers[ci->n_brokers++] = bd;
    }
    for (size_t i = 0; i < rt->live.len; i++) {
        Rmq__BrokerLive *bl = build_live(ns_vec_at(&rt->live, i), now_ms, wall_ms);
        if (!bl)
            goto err;
        ci->live[ci->n_live++] = bl;
    }
    return ci;
err:
    rmq__cluster_info__free_unpacked(ci, NULL);
    return NULL;
}

/* 1 if queue data q is on a broker name of cluster. */
static int queue_in_cluster(const ns_route_t *rt, const ns_queue_t *q, const char *cluster)
{
    int found;
    size_t bi = ns_vec_search(&rt->bsets, name_cmp, q->broker_name, &found);

    return found && strcmp(((const ns_bset_t *)ns_vec_at(&rt->bsets, bi))->cluster, cluster) == 0;
}

/* 1 if one of topic's queues is on a broker name of cluster. */
static int topic_in_cluster(const ns_route_t *rt, const ns_topic_t *topic, const char *cluster)
{
    for (size_t i = 0; i < topic->queues.len; i++)
        if (queue_in_cluster(rt, ns_vec_at(&topic->queues, i), cluster))
            return 1;
    return 0;
}

Rmq__TopicList *ns_route_topic_list_cluster(const ns_route_t *rt, const char *cluster)
{
    Rmq__TopicList *tl = malloc(sizeof *tl);

    if (!tl)
        return NULL;
    rmq__topic_list__init(tl);
    tl->topics = calloc(rt->topics.len + 1, sizeof *tl->topics);
    if (!tl->topics)
        goto err;
    for (size_t i = 0; i < rt->topics.len; i++) {
        const ns_topic_t *topic = ns_vec_at(&rt->topics, i);
        if (cluster && !topic_in_cluster(rt, topic, cluster))
            continue;
        char *name = strdup(topic->name);
        if (!name)
            goto err;
        tl->topics[tl->n_topics++] = name;
    }
    return tl;
err:
    rmq__topic_list__free_unpacked(tl, NULL);
    return NULL;
}

Rmq__TopicList *ns_route_topic_list(const ns_route_t *rt)
{
    return ns_route_topic_list_cluster(rt, NULL);
}

/* ---- admin ------------------------------------------------------------ */

rmq_err_t ns_route_delete_topic(ns_route_t *rt, const char *topic_name, const char *cluster)
{
    int found;
    size_t ti = ns_vec_search(&rt->topics, name_cmp, topic_name, &found);

    if (!found)
        return RMQ_ENOTFOUND;
    ns_topic_t *topic = ns_vec_at(&rt->topics, ti);
    for (size_t qi = topic->queues.len; cluster && qi-- > 0;) {
        ns_queue_t *q = ns_vec_at(&topic->queues, qi);
        if (queue_in_cluster(rt, q, cluster)) {
            free(q->broker_name);
            ns_vec_remove_at(&topic->queues, qi);
        }
    }
    if (cluster == NULL || topic->queues.len == 0) {
        topic_free(topic);
        ns_vec_remove_at(&rt->topics, ti);
    }
    return RMQ_OK;
}

/* Sets (set = 1) or clears the write bit of broker_name's queues. */
static size_t change_write_perm(ns_route_t *rt, const char *broker_name, int set)
{
    size_t n = 0;

    for (size_t i = 0; i < rt->topics.len; i++) {
        ns_topic_t *topic = ns_vec_at(&rt->topics, i);
        ns_queue_t *q = ns_vec_find(&topic->queues, name_cmp, broker_name);
        if (!q)
            continue;
        q->perm = set ? q->perm | RMQ__PERM__PERM_WRITE : q->perm & ~RMQ__PERM__PERM_WRITE;
        n++;
    }
    return n;
}

size_t ns_route_wipe_write_perm(ns_route_t *rt, const char *broker_name)
{
    return change_write_perm(rt, broker_name, 0);
}

size_t ns_route_add_write_perm(ns_route_t *rt, const char *broker_name)
{
    return change_write_perm(rt, broker_name, 1);
}

/* ---- KV config -------------------------------------------------------- */

rmq_err_t ns_route_kv_put(ns_route_t *rt, const char *ns, const char *key, const char *value)
{
    ns_kv_key_t k = { ns, key };
    int found;

    if (!name_ok(ns) || !name_ok(key) || !value)
        return RMQ_EINVAL;
    size_t i = ns_vec_search(&rt->kv, kv_cmp, &k, &found);
    if (found)
        return str_set(&((ns_kv_t *)ns_vec_at(&rt->kv, i))->value, value);
    char *ns_copy = strdup(ns), *key_copy = strdup(key), *value_copy = strdup(value);
    ns_kv_t *kv = ns_copy && key_copy && value_copy ? ns_vec_insert_at(&rt->kv, i) : NULL;
    if (!kv) {
        free(ns_copy);
        free(key_copy);
        free(value_copy);
        return RMQ_ENOMEM;
    }
    kv->ns = ns_copy;
    kv->key = key_copy;
    kv->value = value_copy;
    return RMQ_OK;
}

const char *ns_route_kv_get(const ns_route_t *rt, const char *ns, const char *key)
{
    ns_kv_key_t k = { ns, key };
    const ns_kv_t *kv = ns_vec_find(&rt->kv, kv_cmp, &k);

    return kv ? kv->value : NULL;
}

rmq_err_t ns_route_kv_delete(ns_route_t *rt, const char *ns, const char *key)
{
    ns_kv_key_t k = { ns, key };
    int found;
    size_t i = ns_vec_search(&rt->kv, kv_cmp, &k, &found);

    if (!found)
        return RMQ_ENOTFOUND;
    kv_free(ns_vec_at(&rt->kv, i));
    ns_vec_remove_at(&rt->kv, i);
    return RMQ_OK;
}

int ns_route_kv_foreach(const ns_route_t *rt, ns_kv_fn fn, void *arg)
{
    for (size_t i = 0; i < rt->kv.len; i++) {
        const ns_kv_t *kv = ns_vec_at(&rt->kv, i);
        int rc = fn(kv->ns, kv->key, kv->value, arg);
        if (rc)
            return rc;
    }
    return 0;
}

size_t ns_route_live_count(const ns_route_t *rt)
{
    return rt->live.len;
}

size_t ns_route_broker_name_count(const ns_route_t *rt)
{
    return rt->bsets.len;
}

size_t ns_route_topic_count(const ns_route_t *rt)
{
    return rt->topics.len;
}
