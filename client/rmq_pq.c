/* rmq_pq.c: process-queue bookkeeping: a ring of pulled offsets with
 * consumed flags, popped from the front as they complete, so the commit
 * offset is the first unconsumed one (or the next pull offset when empty). */
#include "rmq_pq.h"

#include <stdlib.h>
#include <string.h>

void rmq_pq_init(rmq_pq_t *pq, int64_t start)
{
    memset(pq, 0, sizeof *pq);
    pthread_mutex_init(&pq->mu, NULL);
    pq->pulled_next = start;
}

void rmq_pq_deinit(rmq_pq_t *pq)
{
    pthread_mutex_destroy(&pq->mu);
    free(pq->offs);
    free(pq->done);
}

/* Doubles the ring, keeping its order. Caller holds mu. */
static int pq_grow(rmq_pq_t *pq, size_t need)
{
    size_t cap = pq->cap ? pq->cap : 64;
    while (cap < need)
        cap *= 2;
    int64_t *offs = malloc(cap * sizeof *offs);
    uint8_t *done = malloc(cap);
    if (!offs || !done) {
        free(offs);
        free(done);
        return -1;
    }
    for (size_t i = 0; i < pq->len; i++) {
        offs[i] = pq->offs[(pq->head + i) % pq->cap];
        done[i] = pq->done[(pq->head + i) % pq->cap];
    }
    free(pq->offs);
    free(pq->done);
    pq->offs = offs;
    pq->done = done;
    pq->cap = cap;
    pq->head = 0;
    return 0;
}

int rmq_pq_add(rmq_pq_t *pq, const int64_t *offs, size_t n, size_t bytes, int64_t next)
{
    pthread_mutex_lock(&pq->mu);
    int rc = 0;
    if (pq->len + n > pq->cap)
        rc = pq_grow(pq, pq->len + n);
    if (rc == 0) {
        for (size_t i = 0; i < n; i++) {
            size_t slot = (pq->head + pq->len) % pq->cap;
            pq->offs[slot] = offs[i];
            pq->done[slot] = 0;
            pq->len++;
        }
        pq->bytes += bytes;
        pq->pending += n;
        pq->pulled_next = next;
    }
    pthread_mutex_unlock(&pq->mu);
    return rc;
}

void rmq_pq_set_next(rmq_pq_t *pq, int64_t next)
{
    pthread_mutex_lock(&pq->mu);
    pq->pulled_next = next;
    pthread_mutex_unlock(&pq->mu);
}

/* Slot index of offset in the ring, or -1. Caller holds mu. */
static long pq_find(const rmq_pq_t *pq, int64_t offset)
{
    size_t lo = 0, hi = pq->len;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int64_t v = pq->offs[(pq->head + mid) % pq->cap];
        if (v == offset)
            return (long)((pq->head + mid) % pq->cap);
        if (v < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return -1;
}

void rmq_pq_done(rmq_pq_t *pq, int64_t offset, size_t bytes)
{
    pthread_mutex_lock(&pq->mu);
    long slot = pq_find(pq, offset);
    if (slot >= 0 && !pq->done[slot]) {
        pq->done[slot] = 1;
        pq->pending--;
        pq->bytes -= bytes < pq->bytes ? bytes : pq->bytes;
        while (pq->len && pq->done[pq->head]) {
            pq->head = (pq->head + 1) % pq->cap;
            pq->len--;
        }
    }
    pthread_mutex_unlock(&pq->mu);
}

int64_t rmq_pq_commit_offset(rmq_pq_t *pq)
{
    pthread_mutex_lock(&pq->mu);
    int64_t off = pq->len ? pq->offs[pq->head] : pq->pulled_next;
    pthread_mutex_unlock(&pq->mu);
    return off;
}

void rmq_pq_load(rmq_pq_t *pq, size_t *count, size_t *bytes)
{
    pthread_mutex_lock(&pq->mu);
    *count = pq->pending;
    *bytes = pq->bytes;
    pthread_mutex_unlock(&pq->mu);
}
