/* rmq_client_pool.c: a set of RPC clients keyed by "host:port", created on
 * first use and shared by everyone on the loop that talks to that address.
 * A short list: a process talks to a handful of name servers and brokers.
 * Loop thread only. */
#include "rmq_rpc.h"

#include <stdlib.h>
#include <string.h>

typedef struct pool_entry {
    rmq_client_t *cli;
    struct pool_entry *next;
} pool_entry_t;

struct rmq_client_pool {
    struct event_base *base;
    rmq_client_opts_t opts;
    char *name;
    pool_entry_t *head;
};

/* Creates an empty pool; opts copied (name too). Owner: caller. */
rmq_client_pool_t *rmq_client_pool_new(struct event_base *base, const rmq_client_opts_t *opts)
{
    rmq_client_pool_t *pool = calloc(1, sizeof(*pool));

    if (pool == NULL)
        return NULL;
    pool->base = base;
    if (opts != NULL)
        pool->opts = *opts;
    if (pool->opts.name != NULL) {
        pool->name = strdup(pool->opts.name);
        if (pool->name == NULL) {
            free(pool);
            return NULL;
        }
        pool->opts.name = pool->name;
    }
    return pool;
}

/* The client for addr, created on demand; owned by the pool (NULL on a bad
 * address or out of memory). */
rmq_client_t *rmq_client_pool_get(rmq_client_pool_t *pool, const char *addr)
{
    for (pool_entry_t *e = pool->head; e != NULL; e = e->next)
        if (strcmp(rmq_client_addr(e->cli), addr) == 0)
            return e->cli;
    pool_entry_t *e = calloc(1, sizeof(*e));
    if (e == NULL)
        return NULL;
    e->cli = rmq_client_new(pool->base, addr, &pool->opts);
    if (e->cli == NULL) {
        free(e);
        return NULL;
    }
    e->next = pool->head;
    pool->head = e;
    return e->cli;
}

/* Unlinks before freeing, so callbacks run by the free see a consistent pool. */
void rmq_client_pool_drop(rmq_client_pool_t *pool, const char *addr)
{
    for (pool_entry_t **pp = &pool->head; *pp != NULL; pp = &(*pp)->next) {
        pool_entry_t *e = *pp;
        if (strcmp(rmq_client_addr(e->cli), addr) == 0) {
            *pp = e->next;
            rmq_client_free(e->cli);
            free(e);
            return;
        }
    }
}

void rmq_client_pool_free(rmq_client_pool_t *pool)
{
    pool_entry_t *e;

    if (pool == NULL)
        return;
    while ((e = pool->head) != NULL) {
        pool->head = e->next;
        rmq_client_free(e->cli);
        free(e);
    }
    free(pool->name);
    free(pool);
}
