/* bk_lock.c: the queue lock table behind ordered consumption and its two
 * requests. A lock is (group, topic, queue id) -> client id + last renewal;
 * a lock not renewed within max_live_ms is free for anyone. Kept in a flat
 * array: a broker serves a few hundred orderly queues at most, and each
 * request scans it once per queue. Loop thread. */
#include "bk_lock.h"

#include <stdlib.h>
#include <string.h>

#include "fr_routes.h"
#include "rmq_log.h"
#include "rmq_time.h"

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

/* Checks the LockBatchRequest common to both requests; replies on error. */
static const Rmq__LockBatchRequest *lock_request(rmq_conn_t *conn, rmq_frame_t *req)
{
    const Rmq__LockBatchRequest *r;

    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_LOCK_BATCH, "LockBatchRequest (lock_batch)"))
        return NULL;
    r = req->cmd->lock_batch;
    if (!r->consumer_group[0] || !r->client_id[0]) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST,
                        "%s needs a consumer group and a client id", rmq_request_name(req->cmd->code));
        return NULL;
    }
    return r;
}

/* LOCK_BATCH_MQ: locks or renews every queue it can; answers the set held. */
void fr_lock(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    const Rmq__LockBatchRequest *r = lock_request(conn, req);
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__LockBatchResponse lr = RMQ__LOCK_BATCH_RESPONSE__INIT;
    Rmq__MessageQueue **held;
    int64_t now = rmq_mono_ms();

    if (!r)
        return;
    held = calloc(r->n_mqs + 1, sizeof(*held));
    if (!held) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    for (size_t i = 0; i < r->n_mqs; i++) {
        Rmq__MessageQueue *mq = r->mqs[i];

        if (bk_lock_try(bk->locks, r->consumer_group, mq->topic, mq->queue_id, r->client_id, now) == 1)
            held[lr.n_locked++] = mq;
    }
    lr.locked = held;
    resp.header_case = RMQ__COMMAND__HEADER_LOCK_BATCH_RESP;
    resp.lock_batch_resp = &lr;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    free(held);
}

/* UNLOCK_BATCH_MQ: releases the queues the client holds. */
void fr_unlock(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    const Rmq__LockBatchRequest *r = lock_request(conn, req);

    if (!r)
        return;
    for (size_t i = 0; i < r->n_mqs; i++)
        bk_lock_release(bk->locks, r->consumer_group, r->mqs[i]->topic, r->mqs[i]->queue_id, r->client_id);
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
}
