/* rmq_route.c: a topic's route as the client uses it: the name server's
 * TopicRouteData flattened into sorted broker and queue arrays (publish
 * queues = writable queues of brokers with a master; subscribe queues =
 * readable queues), plus round-robin queue selection that steers around
 * failed brokers. Pure data, no networking. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_client_int.h"

static int broker_cmp(const void *a, const void *b)
{
    return strcmp(((const rmq_route_broker_t *)a)->name, ((const rmq_route_broker_t *)b)->name);
}

static int mq_cmp(const void *a, const void *b)
{
    const rmq_mq_t *x = a, *y = b;
    int c = strcmp(x->broker_name, y->broker_name);
    if (c)
        return c;
    return (x->queue_id > y->queue_id) - (x->queue_id < y->queue_id);
}

/* Copies src into dst[cap], truncating. */
static void copy_str(char *dst, size_t cap, const char *src)
{
    snprintf(dst, cap, "%s", src ? src : "");
}

/* Fills b from one BrokerData: master (id 0) and the lowest-id slave. */
static void broker_fill(rmq_route_broker_t *b, const Rmq__BrokerData *bd)
{
    copy_str(b->name, sizeof b->name, bd->broker_name);
    int64_t best_slave = INT64_MAX;
    for (size_t i = 0; i < bd->n_addrs; i++) {
        const Rmq__BrokerAddr *a = bd->addrs[i];
        if (a->broker_id == 0)
            copy_str(b->master, sizeof b->master, a->addr);
        else if (a->broker_id < best_slave) {
            best_slave = a->broker_id;
            copy_str(b->slave, sizeof b->slave, a->addr);
        }
    }
}

/* Appends n queues of broker name to *arr. */
static void mqs_add(rmq_mq_t *arr, size_t *len, const char *name, int n)
{
    for (int q = 0; q < n; q++) {
        copy_str(arr[*len].broker_name, sizeof arr[*len].broker_name, name);
        arr[*len].queue_id = q;
        (*len)++;
    }
}

rmq_route_t *rmq_route_from_proto(const Rmq__TopicRouteData *rd)
{
    rmq_route_t *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    size_t maxq = 0;
    for (size_t i = 0; i < rd->n_queue_datas; i++) {
        const Rmq__QueueData *qd = rd->queue_datas[i];
        maxq += (size_t)(qd->read_queue_nums > 0 ? qd->read_queue_nums : 0) +
                (size_t)(qd->write_queue_nums > 0 ? qd->write_queue_nums : 0);
    }
    r->brokers = calloc(rd->n_broker_datas + 1, sizeof *r->brokers);
    r->pub = calloc(maxq + 1, sizeof *r->pub);
    r->sub = calloc(maxq + 1, sizeof *r->sub);
    if (!r->brokers || !r->pub || !r->sub) {
        rmq_route_free(r);
        return NULL;
    }
    for (size_t i = 0; i < rd->n_broker_datas; i++)
        broker_fill(&r->brokers[r->nbrokers++], rd->broker_datas[i]);
    qsort(r->brokers, r->nbrokers, sizeof *r->brokers, broker_cmp);
    for (size_t i = 0; i < rd->n_queue_datas; i++) {
        const Rmq__QueueData *qd = rd->queue_datas[i];
        const char *master = rmq_route_master_addr(r, qd->broker_name);
        if ((qd->perm & RMQ__PERM__PERM_WRITE) && master)
            mqs_add(r->pub, &r->npub, qd->broker_name, qd->write_queue_nums);
        if (qd->perm & RMQ__PERM__PERM_READ)
            mqs_add(r->sub, &r->nsub, qd->broker_name, qd->read_queue_nums);
    }
    qsort(r->pub, r->npub, sizeof *r->pub, mq_cmp);
    qsort(r->sub, r->nsub, sizeof *r->sub, mq_cmp);
    return r;
}

void rmq_route_free(rmq_route_t *r)
{
    if (!r)
        return;
    free(r->brokers);
    free(r->pub);
    free(r->sub);
    free(r);
}

int rmq_route_equal(const rmq_route_t *a, const rmq_route_t *b)
{
    if (a->nbrokers != b->nbrokers || a->npub != b->npub || a->nsub != b->nsub)
        return 0;
    return memcmp(a->brokers, b->brokers, a->nbrokers * sizeof *a->brokers) == 0 &&
           memcmp(a->pub, b->pub, a->npub * sizeof *a->pub) == 0 &&
           memcmp(a->sub, b->sub, a->nsub * sizeof *a->sub) == 0;
}

const rmq_route_broker_t *rmq_route_broker(const rmq_route_t *r, const char *name)
{
    rmq_route_broker_t key;
    copy_str(key.name, sizeof key.name, name);
    return bsearch(&key, r->brokers, r->nbrokers, sizeof key, broker_cmp);
}

const char *rmq_route_master_addr(const rmq_route_t *r, const char *name)
{
    const rmq_route_broker_t *b = rmq_route_broker(r, name);
    return b && b->master[0] ? b->master : NULL;
}

const char *rmq_route_read_addr(const rmq_route_t *r, const char *name)
{
    const rmq_route_broker_t *b = rmq_route_broker(r, name);
    if (!b)
        return NULL;
    if (b->master[0])
        return b->master;
    return b->slave[0] ? b->slave : NULL;
}

int rmq_route_pick(const rmq_route_t *r, uint32_t *counter, const char *last_failed,
                   int (*avoid)(const char *name, void *arg), void *arg)
{
    if (r->npub == 0)
        return -1;
    uint32_t base = (*counter)++;
    int fallback = -1;
    for (size_t i = 0; i < r->npub; i++) {
        size_t idx = (base + i) % r->npub;
        const char *name = r->pub[idx].broker_name;
        if (last_failed && strcmp(name, last_failed) == 0)
            continue;
        if (fallback < 0)
            fallback = (int)idx;
        if (!avoid || !avoid(name, arg))
            return (int)idx;
    }
    return fallback >= 0 ? fallback : (int)(base % r->npub);
}
