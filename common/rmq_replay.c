/* rmq_replay.c: the replay cache (rmq_replay.h). Entries live in one array
 * that grows by doubling up to the cap; a hash table of chains (indexes into
 * the array, seeded so that a signer cannot aim its signatures at one chain)
 * finds a key; a binary min-heap by timestamp finds the entry to drop next.
 * Only the oldest entry ever leaves, so the free slots form a simple list. */
#include "rmq_replay.h"

#include <stdlib.h>
#include <string.h>

#include <openssl/rand.h>

#define NIL UINT32_MAX
#define INITIAL_SLOTS 64

typedef struct entry {
    uint8_t key[RMQ_REPLAY_KEY];
    int64_t ts;
    uint32_t next;               /* chain in its bucket, or the free list */
    uint32_t heap_pos;
} entry_t;

struct rmq_replay {
    size_t cap;
    entry_t *entries;
    uint32_t nslots;             /* entries allocated */
    uint32_t used;               /* slots ever handed out (the rest are untouched) */
    uint32_t free_list;
    uint32_t *buckets;           /* chains by key; nbuckets >= 2 * nslots, a power of two */
    uint32_t nbuckets;
    uint32_t *heap;              /* entry indexes, min timestamp first */
    uint32_t count;
    uint64_t seed;
    int64_t floor;
};

rmq_replay_t *rmq_replay_new(size_t cap)
{
    rmq_replay_t *r = calloc(1, sizeof(*r));

    if (r == NULL)
        return NULL;
    r->cap = cap > 0 && cap < NIL / 4 ? cap : NIL / 4;
    r->free_list = NIL;
    r->floor = INT64_MIN;
    if (RAND_bytes((unsigned char *)&r->seed, sizeof(r->seed)) != 1)
        r->seed = (uint64_t)(uintptr_t)r * 0x9e3779b97f4a7c15ull;
    return r;
}

void rmq_replay_free(rmq_replay_t *r)
{
    if (r == NULL)
        return;
    free(r->entries);
    free(r->buckets);
    free(r->heap);
    free(r);
}

static uint32_t bucket_of(const rmq_replay_t *r, const uint8_t *key)
{
    uint64_t k;

    memcpy(&k, key, sizeof(k));
    k ^= r->seed;
    k *= 0xff51afd7ed558ccdull;
    k ^= k >> 33;
    return (uint32_t)(k & (r->nbuckets - 1));
}

/* ---- heap by timestamp -------------------------------------------------------- */

static void heap_set(rmq_replay_t *r, uint32_t pos, uint32_t idx)
{
    r->heap[pos] = idx;
    r->entries[idx].heap_pos = pos;
}

static int64_t heap_ts(const rmq_replay_t *r, uint32_t pos)
{
    return r->entries[r->heap[pos]].ts;
}

static void heap_up(rmq_replay_t *r, uint32_t pos)
{
    uint32_t idx = r->heap[pos];

    while (pos > 0 && heap_ts(r, (pos - 1) / 2) > r->entries[idx].ts) {
        heap_set(r, pos, r->heap[(pos - 1) / 2]);
        pos = (pos - 1) / 2;
    }
    heap_set(r, pos, idx);
}

static void heap_down(rmq_replay_t *r, uint32_t pos)
{
    uint32_t idx = r->heap[pos];

    for (;;) {
        uint32_t child = 2 * pos + 1;
        if (child >= r->count)
            break;
        if (child + 1 < r->count && heap_ts(r, child + 1) < heap_ts(r, child))
            child++;
        if (heap_ts(r, child) >= r->entries[idx].ts)
            break;
        heap_set(r, pos, r->heap[child]);
        pos = child;
    }
    heap_set(r, pos, idx);
}

/* ---- entries ---------------------------------------------------------------- */

/* Removes the entry with the oldest timestamp and raises the floor to it. */
static void drop_oldest(rmq_replay_t *r)
{
    uint32_t idx = r->heap[0];
    entry_t *e = &r->entries[idx];

    for (uint32_t *pp = &r->buckets[bucket_of(r, e->key)]; *pp != NIL;
         pp = &r->entries[*pp].next) {
        if (*pp == idx) {
            *pp = e->next;
            break;
        }
    }
    if (e->ts > r->floor)
        r->floor = e->ts;
    r->count--;
    if (r->count > 0) {
        heap_set(r, 0, r->heap[r->count]);
        heap_down(r, 0);
    }
    e->next = r->free_list;
    r->free_list = idx;
}

/* Doubles the slots (up to cap) and rebuilds the buckets. -1 on ENOMEM. */
static int grow(rmq_replay_t *r)
{
    size_t n = r->nslots ? (size_t)r->nslots * 2 : INITIAL_SLOTS;
    if (n > r->cap)
        n = r->cap;
    entry_t *entries = realloc(r->entries, n * sizeof(*entries));
    if (entries == NULL)
        return -1;
    r->entries = entries;
    uint32_t *heap = realloc(r->heap, n * sizeof(*heap));
    if (heap == NULL)
        return -1;
    r->heap = heap;
    size_t nb = 1;
    while (nb < 2 * n)
        nb *= 2;
    uint32_t *buckets = malloc(nb * sizeof(*buckets));
    if (buckets == NULL)
        return -1;
    free(r->buckets);
    r->buckets = buckets;
    r->nbuckets = (uint32_t)nb;
    r->nslots = (uint32_t)n;
    memset(r->buckets, 0xff, nb * sizeof(*buckets));
    for (uint32_t pos = 0; pos < r->count; pos++) {
        uint32_t idx = r->heap[pos];
        uint32_t b = bucket_of(r, r->entries[idx].key);
        r->entries[idx].next = r->buckets[b];
        r->buckets[b] = idx;
    }
    return 0;
}

/* A free slot, growing the arrays when none is left. NIL on ENOMEM. */
static uint32_t slot_take(rmq_replay_t *r)
{
    if (r->free_list != NIL) {
        uint32_t idx = r->free_list;
        r->free_list = r->entries[idx].next;
        return idx;
    }
    if (r->used == r->nslots && grow(r) != 0)
        return NIL;
    return r->used++;
}

static int is_known(const rmq_replay_t *r, const uint8_t *key)
{
    if (r->nbuckets == 0)
        return 0;
    for (uint32_t i = r->buckets[bucket_of(r, key)]; i != NIL; i = r->entries[i].next)
        if (memcmp(r->entries[i].key, key, RMQ_REPLAY_KEY) == 0)
            return 1;
    return 0;
}

rmq_replay_verdict_t rmq_replay_check(rmq_replay_t *r, const uint8_t *key, int64_t ts_ms,
                                      int64_t now_ms, int64_t window_ms)
{
    while (r->count > 0 && heap_ts(r, 0) < now_ms - window_ms)
        drop_oldest(r);
    if (ts_ms <= r->floor)
        return RMQ_REPLAY_TOO_OLD;
    if (is_known(r, key))
        return RMQ_REPLAY_SEEN;
    if (r->count == r->cap) {
        if (ts_ms <= heap_ts(r, 0)) {
            r->floor = ts_ms;
            return RMQ_REPLAY_TOO_OLD;
        }
        drop_oldest(r);
    }
    uint32_t idx = slot_take(r);
    if (idx == NIL)
        return RMQ_REPLAY_NOMEM;
    entry_t *e = &r->entries[idx];
    memcpy(e->key, key, RMQ_REPLAY_KEY);
    e->ts = ts_ms;
    uint32_t b = bucket_of(r, key);
    e->next = r->buckets[b];
    r->buckets[b] = idx;
    heap_set(r, r->count++, idx);
    heap_up(r, r->count - 1);
    return RMQ_REPLAY_FRESH;
}

size_t rmq_replay_count(const rmq_replay_t *r)
{
    return r->count;
}

size_t rmq_replay_cap(const rmq_replay_t *r)
{
    return r->cap;
}

int64_t rmq_replay_floor(const rmq_replay_t *r)
{
    return r->floor;
}
