/* bk_lock.c: the queue lock table behind ordered consumption and its two
 * batch operations. A lock is (group, topic, queue id) -> client id + last renewal;
 * a lock not renewed within max_live_ms is free for anyone. Kept in a flat
 * array: a broker serves a few hundred orderly queues at most, and each
 * request scans it once per queue. Loop thread. */
#include "bk_lock.h"

#include <stdlib.h>
#include <string.h>

#include "rmq_log.h"

typedef struct lock_entry {
    char *group, *topic, *client_id;
    int32_t queue_id;
    int64_t renewed_ms;
} lock_entry_t;

struct bk_lock {
    int64_t max_live_ms;
    lock_entry_t *v;
    size_t n, cap;
};

bk_lock_t *bk_lock_new(int64_t max_live_ms)
{
    bk_lock_t *lk = calloc(1, sizeof(*lk));

    if (lk)
        lk->max_live_ms = max_live_ms;
    return lk;
}

static void entry_clear(lock_entry_t *e)
{
    free(e->group);
    free(e->topic);
    free(e->client_id);
}

void bk_lock_free(bk_lock_t *lk)
{
    if (!lk)
        return;
    for (size_t i = 0; i < lk->n; i++)
        entry_clear(&lk->v[i]);
    free(lk->v);
    free(lk);
}

static lock_entry_t *find(bk_lock_t *lk, const char *group, const char *topic, int32_t queue_id)
{
    for (size_t i = 0; i < lk->n; i++)
        if (lk->v[i].queue_id == queue_id && !strcmp(lk->v[i].topic, topic) &&
            !strcmp(lk->v[i].group, group))
            return &lk->v[i];
    return NULL;
}

int bk_lock_try(bk_lock_t *lk, const char *group, const char *topic, int32_t queue_id,
                const char *client_id, int64_t now_ms)
{
    lock_entry_t *e = find(lk, group, topic, queue_id);
    char *dup;

    if (e && strcmp(e->client_id, client_id) != 0 && now_ms - e->renewed_ms <= lk->max_live_ms)
        return 0;
    if (e) {
        if (strcmp(e->client_id, client_id) != 0) {
            if (!(dup = strdup(client_id)))
                return -1;
            LOG_INFO("queue lock %s/%s/%d: %s takes over from expired %s", group, topic, (int)queue_id,
                     client_id, e->client_id);
            free(e->client_id);
            e->client_id = dup;
        }
        e->renewed_ms = now_ms;
        return 1;
    }
    if (lk->n == lk->cap) {
        size_t cap = lk->cap ? lk->cap * 2 : 16;
        lock_entry_t *v = realloc(lk->v, cap * sizeof(*v));

        if (!v)
            return -1;
        lk->v = v;
        lk->cap = cap;
    }
    e = &lk->v[lk->n];
    e->group = strdup(group);
    e->topic = strdup(topic);
    e->client_id = strdup(client_id);
    e->queue_id = queue_id;
    e->renewed_ms = now_ms;
    if (!e->group || !e->topic || !e->client_id) {
        entry_clear(e);
        return -1;
    }
    lk->n++;
    return 1;
}

void bk_lock_release(bk_lock_t *lk, const char *group, const char *topic, int32_t queue_id,
                     const char *client_id)
{
    lock_entry_t *e = find(lk, group, topic, queue_id);

    if (!e || strcmp(e->client_id, client_id) != 0)
        return;
    entry_clear(e);
    *e = lk->v[--lk->n];
}

size_t bk_lock_count(bk_lock_t *lk, int64_t now_ms)
{
    size_t live = 0;

    for (size_t i = 0; i < lk->n; i++)
        live += now_ms - lk->v[i].renewed_ms <= lk->max_live_ms;
    return live;
}

/* BK_OK if req names a group and a client, else BK_BAD_REQUEST with r set. */
static bk_status_t batch_check(const bk_lock_batch_req_t *req, bk_result_t *r)
{
    if (!req->group[0] || !req->client_id[0])
        return bk_result_set(r, BK_BAD_REQUEST, "%s needs a consumer group and a client id", req->cmd);
    return bk_result_ok(r);
}

bk_status_t bk_lock_batch(bk_lock_t *lk, const bk_lock_batch_req_t *req, uint8_t *held, bk_result_t *r)
{
    if (batch_check(req, r) != BK_OK)
        return r->status;
    for (size_t i = 0; i < req->n_mqs; i++) {
        const bk_lock_mq_t *mq = &req->mqs[i];
        int rc = bk_lock_try(lk, req->group, mq->topic, mq->queue_id, req->client_id, req->now_ms);
        if (rc < 0)
            return bk_result_set(r, BK_SYSTEM_ERROR, "%s: out of memory", req->cmd);
        held[i] = rc == 1;
    }
    return BK_OK;
}

bk_status_t bk_unlock_batch(bk_lock_t *lk, const bk_lock_batch_req_t *req, bk_result_t *r)
{
    if (batch_check(req, r) != BK_OK)
        return r->status;
    for (size_t i = 0; i < req->n_mqs; i++)
        bk_lock_release(lk, req->group, req->mqs[i].topic, req->mqs[i].queue_id, req->client_id);
    return BK_OK;
}
