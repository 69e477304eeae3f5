/* bk_map.c: the broker's string-keyed hash map. Entries are chained per
 * bucket; the table doubles when the load passes 1. Iteration walks buckets
 * in order with a flat cursor (bucket index << 16 | position in chain). */
#include "bk_map.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct bk_map_ent {
    struct bk_map_ent *next;
    uint64_t hash;
    void *val;
    size_t len;
    char key[];          /* NUL-terminated copy */
} bk_map_ent_t;

struct bk_map {
    bk_map_ent_t **buckets;
    size_t nbuckets;     /* power of two */
    size_t count;
};

/* FNV-1a of the key bytes. */
static uint64_t map_hash(const char *key, size_t len)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)key[i];
        h *= 1099511628211ull;
    }
    return h;
}

bk_map_t *bk_map_new(void)
{
    bk_map_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->nbuckets = 16;
    m->buckets = calloc(m->nbuckets, sizeof(*m->buckets));
    if (!m->buckets) {
        free(m);
        return NULL;
    }
    return m;
}

void bk_map_free(bk_map_t *m, void (*free_val)(void *val))
{
    if (!m)
        return;
    for (size_t i = 0; i < m->nbuckets; i++) {
        bk_map_ent_t *e = m->buckets[i];
        while (e) {
            bk_map_ent_t *next = e->next;
            if (free_val)
                free_val(e->val);
            free(e);
            e = next;
        }
    }
    free(m->buckets);
    free(m);
}

/* The link that points at key's entry, or the empty link ending its chain. */
static bk_map_ent_t **map_slot(const bk_map_t *m, const char *key, size_t len, uint64_t h)
{
    bk_map_ent_t **pp = &m->buckets[h & (m->nbuckets - 1)];
    for (; *pp; pp = &(*pp)->next)
        if ((*pp)->hash == h && (*pp)->len == len && memcmp((*pp)->key, key, len) == 0)
            return pp;
    return pp;
}

void *bk_map_get(const bk_map_t *m, const char *key, size_t len)
{
    bk_map_ent_t **pp = map_slot(m, key, len, map_hash(key, len));
    return *pp ? (*pp)->val : NULL;
}

/* Doubles the bucket array; keeps the old one if out of memory. */
static void map_grow(bk_map_t *m)
{
    size_t n = m->nbuckets * 2;
    bk_map_ent_t **b = calloc(n, sizeof(*b));
    if (!b)
        return;
    for (size_t i = 0; i < m->nbuckets; i++) {
        bk_map_ent_t *e = m->buckets[i];
        while (e) {
            bk_map_ent_t *next = e->next;
            e->next = b[e->hash & (n - 1)];
            b[e->hash & (n - 1)] = e;
            e = next;
        }
    }
    free(m->buckets);
    m->buckets = b;
    m->nbuckets = n;
}

rmq_err_t bk_map_put(bk_map_t *m, const char *key, size_t len, void *val)
{
    uint64_t h = map_hash(key, len);
    bk_map_ent_t **pp = map_slot(m, key, len, h);
    if (*pp) {
        (*pp)->val = val;
        return RMQ_OK;
    }
    bk_map_ent_t *e = malloc(sizeof(*e) + len + 1);
    if (!e)
        return RMQ_ENOMEM;
    e->next = NULL;
    e->hash = h;
    e->val = val;
    e->len = len;
    memcpy(e->key, key, len);
    e->key[len] = '\0';
    *pp = e;
    if (++m->count > m->nbuckets)
        map_grow(m);
    return RMQ_OK;
}

void *bk_map_del(bk_map_t *m, const char *key, size_t len)
{
    bk_map_ent_t **pp = map_slot(m, key, len, map_hash(key, len));
    bk_map_ent_t *e = *pp;
    if (!e)
        return NULL;
    void *val = e->val;
    *pp = e->next;
    free(e);
    m->count--;
    return val;
}

size_t bk_map_count(const bk_map_t *m)
{
    return m->count;
}

int bk_map_next(const bk_map_t *m, size_t *cursor, const char **key, void **val)
{
    size_t b = *cursor >> 16, pos = *cursor & 0xffff;
    for (; b < m->nbuckets; b++, pos = 0) {
        bk_map_ent_t *e = m->buckets[b];
        for (size_t i = 0; e && i < pos; i++)
            e = e->next;
        if (e) {
            *key = e->key;
            *val = e->val;
            *cursor = (b << 16) | (pos + 1);
            return 1;
        }
    }
    *cursor = b << 16;
    return 0;
}

void *bk_map_del_current(bk_map_t *m, size_t *cursor)
{
    size_t b = *cursor >> 16, pos = *cursor & 0xffff;
    if (pos == 0 || b >= m->nbuckets)
        return NULL;
    bk_map_ent_t **pp = &m->buckets[b];
    for (size_t i = 1; *pp && i < pos; i++)
        pp = &(*pp)->next;
    bk_map_ent_t *e = *pp;
    if (!e)
        return NULL;
    void *val = e->val;
    *pp = e->next;
    free(e);
    m->count--;
    *cursor = (b << 16) | (pos - 1);
    return val;
}
