/* ha_sync.c: SYNC_MASTER waiters in two intrusive min-heaps over one array
 * of waiters: by end offset (released by acks) and by deadline (released by
 * one timer set for the earliest). Each waiter knows its index in both heaps
 * so it leaves both in O(log n). Released waiters go on a free list and are
 * reused, so a steady load allocates nothing per send. */
#include "ha_sync.h"

#include <stdlib.h>

#include "rmq_time.h"

typedef struct ha_waiter {
    int64_t end_offset;
    int64_t deadline_ms;
    ha_sync_fn cb;
    void *arg;
    size_t idx[2];                   /* position in heap[HEAP_OFFSET], heap[HEAP_DEADLINE] */
    struct ha_waiter *next_free;
} ha_waiter_t;

enum { HEAP_OFFSET = 0, HEAP_DEADLINE = 1 };

typedef struct ha_heap {
    ha_waiter_t **w;
    size_t n, cap;
} ha_heap_t;

struct ha_sync {
    struct event_base *base;
    int64_t fallbehind_max;
    ha_heap_t heap[2];
    ha_waiter_t *free_list;
    struct event *timer;
    int64_t timer_at;                /* deadline the timer is armed for; -1 if idle */
    int n_slaves;
    int64_t best_acked;
};

static int64_t waiter_key(const ha_waiter_t *w, int h)
{
    return h == HEAP_OFFSET ? w->end_offset : w->deadline_ms;
}

static void heap_set(ha_heap_t *hp, int h, size_t i, ha_waiter_t *w)
{
    hp->w[i] = w;
    w->idx[h] = i;
}

static void heap_up(ha_heap_t *hp, int h, size_t i)
{
    ha_waiter_t *w = hp->w[i];

    while (i > 0) {
        size_t parent = (i - 1) / 2;

        if (waiter_key(hp->w[parent], h) <= waiter_key(w, h))
            break;
        heap_set(hp, h, i, hp->w[parent]);
        i = parent;
    }
    heap_set(hp, h, i, w);
}

static void heap_down(ha_heap_t *hp, int h, size_t i)
{
    ha_waiter_t *w = hp->w[i];

    for (;;) {
        size_t c = 2 * i + 1;

        if (c >= hp->n)
            break;
        if (c + 1 < hp->n && waiter_key(hp->w[c + 1], h) < waiter_key(hp->w[c], h))
            c++;
        if (waiter_key(w, h) <= waiter_key(hp->w[c], h))
            break;
        heap_set(hp, h, i, hp->w[c]);
        i = c;
    }
    heap_set(hp, h, i, w);
}

static int heap_push(ha_heap_t *hp, int h, ha_waiter_t *w)
{
    if (hp->n == hp->cap) {
        size_t cap = hp->cap ? hp->cap * 2 : 64;
        ha_waiter_t **n = realloc(hp->w, cap * sizeof(*n));

        if (!n)
            return -1;
        hp->w = n;
        hp->cap = cap;
    }
    hp->w[hp->n] = w;
    w->idx[h] = hp->n;
    hp->n++;
    heap_up(hp, h, hp->n - 1);
    return 0;
}

static void heap_remove(ha_heap_t *hp, int h, ha_waiter_t *w)
{
    size_t i = w->idx[h];
    ha_waiter_t *last = hp->w[--hp->n];

    if (i == hp->n)
        return;
    heap_set(hp, h, i, last);
    heap_up(hp, h, i);
    heap_down(hp, h, last->idx[h]);
}

static ha_waiter_t *waiter_alloc(ha_sync_t *sync)
{
    ha_waiter_t *w = sync->free_list;

    if (w) {
        sync->free_list = w->next_free;
        return w;
    }
    return malloc(sizeof(*w));
}

/* Takes w out of both heaps onto the free list, then answers it. */
static void waiter_finish(ha_sync_t *sync, ha_waiter_t *w, ha_sync_status_t status)
{
    ha_sync_fn cb = w->cb;
    void *arg = w->arg;

    heap_remove(&sync->heap[HEAP_OFFSET], HEAP_OFFSET, w);
    heap_remove(&sync->heap[HEAP_DEADLINE], HEAP_DEADLINE, w);
    w->next_free = sync->free_list;
    sync->free_list = w;
    cb(status, arg);
}

/* Arms the timer for the earliest deadline if it is not armed for it yet. */
static void sync_arm_timer(ha_sync_t *sync)
{
    const ha_heap_t *hp = &sync->heap[HEAP_DEADLINE];
    int64_t at, wait;
    struct timeval tv;

    if (hp->n == 0) {
        if (sync->timer_at >= 0)
            event_del(sync->timer);
        sync->timer_at = -1;
        return;
    }
    at = hp->w[0]->deadline_ms;
    if (at == sync->timer_at)
        return;
    wait = at - rmq_mono_ms();
    if (wait < 0)
        wait = 0;
    tv.tv_sec = (time_t)(wait / 1000);
    tv.tv_usec = (suseconds_t)(wait % 1000) * 1000;
    event_add(sync->timer, &tv);
    sync->timer_at = at;
}

/* Timer: answers every waiter whose deadline has passed. Loop thread. */
static void sync_on_timer(evutil_socket_t fd, short what, void *arg)
{
    ha_sync_t *sync = arg;
    ha_heap_t *hp = &sync->heap[HEAP_DEADLINE];
    int64_t now = rmq_mono_ms();

    sync->timer_at = -1;
    while (hp->n > 0 && hp->w[0]->deadline_ms <= now)
        waiter_finish(sync, hp->w[0], HA_SYNC_FLUSH_SLAVE_TIMEOUT);
    sync_arm_timer(sync);
}

ha_sync_t *ha_sync_new(struct event_base *base, int64_t fallbehind_max)
{
    ha_sync_t *sync = calloc(1, sizeof(*sync));

    if (!sync)
        return NULL;
    sync->base = base;
    sync->fallbehind_max = fallbehind_max;
    sync->timer_at = -1;
    sync->best_acked = -1;
    sync->timer = evtimer_new(base, sync_on_timer, sync);
    if (!sync->timer) {
        free(sync);
        return NULL;
    }
    return sync;
}

void ha_sync_free(ha_sync_t *sync)
{
    ha_heap_t *hp;

    if (!sync)
        return;
    hp = &sync->heap[HEAP_OFFSET];
    while (hp->n > 0)
        waiter_finish(sync, hp->w[0], HA_SYNC_SHUTDOWN);
    while (sync->free_list) {
        ha_waiter_t *w = sync->free_list;

        sync->free_list = w->next_free;
        free(w);
    }
    event_free(sync->timer);
    free(sync->heap[HEAP_OFFSET].w);
    free(sync->heap[HEAP_DEADLINE].w);
    free(sync);
}

ha_sync_status_t ha_sync_wait(ha_sync_t *sync, int64_t end_offset, int64_t deadline_ms,
                              ha_sync_fn cb, void *arg)
{
    ha_waiter_t *w;

    if (sync->n_slaves > 0 && sync->best_acked >= end_offset)
        return HA_SYNC_OK;
    if (sync->n_slaves == 0 || end_offset - sync->best_acked > sync->fallbehind_max)
        return HA_SYNC_SLAVE_NOT_AVAILABLE;
    w = waiter_alloc(sync);
    if (!w)
        return HA_SYNC_NOMEM;
    *w = (ha_waiter_t){ .end_offset = end_offset, .deadline_ms = deadline_ms, .cb = cb, .arg = arg };
    if (heap_push(&sync->heap[HEAP_OFFSET], HEAP_OFFSET, w) != 0) {
        free(w);
        return HA_SYNC_NOMEM;
    }
    if (heap_push(&sync->heap[HEAP_DEADLINE], HEAP_DEADLINE, w) != 0) {
        heap_remove(&sync->heap[HEAP_OFFSET], HEAP_OFFSET, w);
        free(w);
        return HA_SYNC_NOMEM;
    }
    sync_arm_timer(sync);
    return HA_SYNC_PENDING;
}

void ha_sync_update(ha_sync_t *sync, int n_slaves, int64_t best_acked)
{
    ha_heap_t *hp = &sync->heap[HEAP_OFFSET];

    sync->n_slaves = n_slaves;
    sync->best_acked = n_slaves > 0 ? best_acked : -1;
    if (n_slaves == 0 || hp->n == 0 || hp->w[0]->end_offset > best_acked)
        return;
    while (hp->n > 0 && hp->w[0]->end_offset <= best_acked)
        waiter_finish(sync, hp->w[0], HA_SYNC_OK);
    sync_arm_timer(sync);
}

size_t ha_sync_pending(const ha_sync_t *sync)
{
    return sync->heap[HEAP_OFFSET].n;
}
