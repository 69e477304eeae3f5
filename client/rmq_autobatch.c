/* rmq_autobatch.c: groups of async messages waiting to go to one queue as
 * one batch request (the when is described in rmq_autobatch.h). Groups live
 * in a hash table keyed by (topic, broker, queue id) for the accumulator's
 * life; a group that may go at the end of this loop pass sits on the ready
 * list, which one active event drains after the pass's other callbacks. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_autobatch.h"

typedef struct ab_group {
    struct ab_group *next;          /* hash chain */
    struct ab_group *ready_next;
    rmq_autobatch_t *ab;
    uint32_t hash;
    char *topic;
    char broker[64];
    int32_t queue_id;
    rmq_ab_item_t *head;            /* waiting messages, oldest first */
    rmq_ab_item_t **tail;
    int n;
    size_t bytes;
    int in_flight;                  /* batch requests to this queue awaiting an answer */
    int ready;                      /* on the ready list */
    struct event *linger_ev;        /* NULL without linger */
} ab_group_t;

struct rmq_autobatch {
    struct event_base *base;
    int max_msgs;
    size_t max_bytes;
    int linger_ms;
    rmq_autobatch_send_fn send;
    void *arg;
    ab_group_t **buckets;
    size_t nbuckets;                /* a power of two */
    size_t ngroups;
    ab_group_t *ready;
    struct event *pass_ev;
};

static uint32_t fnv1a(uint32_t h, const void *data, size_t len)
{
    const unsigned char *s = data;
    for (size_t i = 0; i < len; i++)
        h = (h ^ s[i]) * 16777619u;
    return h;
}

static uint32_t key_hash(const rmq_ab_key_t *key)
{
    uint32_t h = fnv1a(2166136261u, key->topic, strlen(key->topic) + 1);
    h = fnv1a(h, key->broker_name, strlen(key->broker_name) + 1);
    return fnv1a(h, &key->queue_id, sizeof key->queue_id);
}

static ab_group_t *group_find(const rmq_autobatch_t *ab, const rmq_ab_key_t *key, uint32_t hash)
{
    for (ab_group_t *g = ab->buckets[hash & (ab->nbuckets - 1)]; g; g = g->next)
        if (g->hash == hash && g->queue_id == key->queue_id &&
            strcmp(g->broker, key->broker_name) == 0 && strcmp(g->topic, key->topic) == 0)
            return g;
    return NULL;
}

/* Doubles the table once it holds twice as many groups as buckets. */
static void table_grow(rmq_autobatch_t *ab)
{
    size_t nb = ab->nbuckets * 2;
    ab_group_t **b = calloc(nb, sizeof *b);
    if (!b)
        return;
    for (size_t i = 0; i < ab->nbuckets; i++)
        while (ab->buckets[i]) {
            ab_group_t *g = ab->buckets[i];
            ab->buckets[i] = g->next;
            g->next = b[g->hash & (nb - 1)];
            b[g->hash & (nb - 1)] = g;
        }
    free(ab->buckets);
    ab->buckets = b;
    ab->nbuckets = nb;
}

static void group_linger_cb(evutil_socket_t fd, short what, void *arg);

/* key's group, created empty on first use; NULL on ENOMEM. */
static ab_group_t *group_get(rmq_autobatch_t *ab, const rmq_ab_key_t *key)
{
    uint32_t hash = key_hash(key);
    ab_group_t *g = group_find(ab, key, hash);
    if (g)
        return g;
    g = calloc(1, sizeof *g);
    if (!g || !(g->topic = strdup(key->topic)))
        goto err;
    if (ab->linger_ms > 0 && !(g->linger_ev = evtimer_new(ab->base, group_linger_cb, g)))
        goto err;
    g->ab = ab;
    g->hash = hash;
    snprintf(g->broker, sizeof g->broker, "%s", key->broker_name);
    g->queue_id = key->queue_id;
    g->tail = &g->head;
    if (ab->ngroups >= 2 * ab->nbuckets)
        table_grow(ab);
    g->next = ab->buckets[hash & (ab->nbuckets - 1)];
    ab->buckets[hash & (ab->nbuckets - 1)] = g;
    ab->ngroups++;
    return g;
err:
    if (g)
        free(g->topic);
    free(g);
    return NULL;
}

/* Closes g's waiting messages into one batch and hands them to send. */
static void group_send(ab_group_t *g)
{
    rmq_autobatch_t *ab = g->ab;
    rmq_ab_item_t *items = g->head;
    int n = g->n;
    size_t bytes = g->bytes;
    g->head = NULL;
    g->tail = &g->head;
    g->n = 0;
    g->bytes = 0;
    if (g->linger_ev)
        evtimer_del(g->linger_ev);
    rmq_ab_key_t key = {g->topic, g->broker, g->queue_id};
    ab->send(&key, items, n, bytes, ab->arg);
}

/* Queues g for the end of this loop pass if it waits and nothing to its queue is in flight. */
static void group_maybe_ready(ab_group_t *g)
{
    if (g->n == 0 || g->in_flight > 0 || g->ready)
        return;
    g->ready = 1;
    g->ready_next = g->ab->ready;
    g->ab->ready = g;
    event_active(g->ab->pass_ev, EV_READ, 0);
}

/* End of a loop pass: sends the ready groups still free to go. */
static void pass_cb(evutil_socket_t fd, short what, void *arg)
{
    rmq_autobatch_t *ab = arg;
    while (ab->ready) {
        ab_group_t *g = ab->ready;
        ab->ready = g->ready_next;
        g->ready = 0;
        if (g->n > 0 && g->in_flight == 0)
            group_send(g);
    }
}

/* linger_ms after a group's first message: it goes whatever is in flight. */
static void group_linger_cb(evutil_socket_t fd, short what, void *arg)
{
    ab_group_t *g = arg;
    if (g->n > 0)
        group_send(g);
}

rmq_autobatch_t *rmq_autobatch_new(struct event_base *base, int max_msgs, size_t max_bytes,
                                   int linger_ms, rmq_autobatch_send_fn send, void *arg)
{
    rmq_autobatch_t *ab = calloc(1, sizeof *ab);
    if (!ab)
        return NULL;
    ab->base = base;
    ab->max_msgs = max_msgs;
    ab->max_bytes = max_bytes;
    ab->linger_ms = linger_ms;
    ab->send = send;
    ab->arg = arg;
    ab->nbuckets = 64;
    ab->buckets = calloc(ab->nbuckets, sizeof *ab->buckets);
    ab->pass_ev = event_new(base, -1, 0, pass_cb, ab);
    if (!ab->buckets || !ab->pass_ev) {
        if (ab->pass_ev)
            event_free(ab->pass_ev);
        free(ab->buckets);
        free(ab);
        return NULL;
    }
    return ab;
}

void rmq_autobatch_free(rmq_autobatch_t *ab)
{
    if (!ab)
        return;
    event_free(ab->pass_ev);
    for (size_t i = 0; i < ab->nbuckets; i++)
        while (ab->buckets[i]) {
            ab_group_t *g = ab->buckets[i];
            ab->buckets[i] = g->next;
            if (g->n > 0)
                group_send(g);
            if (g->linger_ev)
                event_free(g->linger_ev);
            free(g->topic);
            free(g);
        }
    free(ab->buckets);
    free(ab);
}

rmq_err_t rmq_autobatch_add(rmq_autobatch_t *ab, const rmq_ab_key_t *key, rmq_ab_item_t *item)
{
    ab_group_t *g = group_get(ab, key);
    if (!g)
        return RMQ_ENOMEM;
    if (g->n > 0 && g->bytes + item->bytes > ab->max_bytes)
        group_send(g);
    item->next = NULL;
    *g->tail = item;
    g->tail = &item->next;
    g->n++;
    g->bytes += item->bytes;
    if (g->n >= ab->max_msgs || g->bytes >= ab->max_bytes) {
        group_send(g);
        return RMQ_OK;
    }
    if (g->n == 1 && g->linger_ev) {
        struct timeval tv = {ab->linger_ms / 1000, (ab->linger_ms % 1000) * 1000};
        evtimer_add(g->linger_ev, &tv);
    }
    group_maybe_ready(g);
    return RMQ_OK;
}

void rmq_autobatch_sent(rmq_autobatch_t *ab, const rmq_ab_key_t *key)
{
    ab_group_t *g = group_get(ab, key);
    if (g)
        g->in_flight++;
}

void rmq_autobatch_done(rmq_autobatch_t *ab, const rmq_ab_key_t *key)
{
    ab_group_t *g = group_find(ab, key, key_hash(key));
    if (!g || g->in_flight == 0)
        return;
    g->in_flight--;
    group_maybe_ready(g);
}
