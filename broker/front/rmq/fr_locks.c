/* fr_locks.c: the rmq front-end of LOCK_BATCH_MQ and UNLOCK_BATCH_MQ:
 * decodes a LockBatchRequest into the core's neutral batch (core/bk_lock.c)
 * and encodes the queues the client holds. */
#include <stdlib.h>

#include "bk_front.h"
#include "bk_lock.h"
#include "fr_routes.h"
#include "fr_perm.h"
#include "fr_status.h"
#include "rmq_time.h"

/* Decodes req into *lr; returns its queues (heap, the caller frees them),
 * or NULL with the reply sent when the header is missing, the signer may
 * not lock the group's queues or memory is short. */
static bk_lock_mq_t *lock_decode(const bk_front_t *fe, rmq_conn_t *conn, rmq_frame_t *req,
                                 bk_lock_batch_req_t *lr)
{
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_LOCK_BATCH, "LockBatchRequest (lock_batch)"))
        return NULL;
    const Rmq__LockBatchRequest *h = req->cmd->lock_batch;
    if (!fr_allowed(fe, conn, req, NULL, h->consumer_group))
        return NULL;
    bk_lock_mq_t *mqs = calloc(h->n_mqs + 1, sizeof(*mqs));
    if (!mqs) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < h->n_mqs; i++)
        mqs[i] = (bk_lock_mq_t){.topic = h->mqs[i]->topic, .queue_id = h->mqs[i]->queue_id};
    *lr = (bk_lock_batch_req_t){.cmd = rmq_request_name(req->cmd->code), .group = h->consumer_group,
                                .client_id = h->client_id, .mqs = mqs, .n_mqs = h->n_mqs,
                                .now_ms = rmq_mono_ms()};
    return mqs;
}

/* LOCK_BATCH_MQ: locks or renews every queue it can; answers the set held. */
void fr_lock(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    bk_lock_batch_req_t lr;
    bk_lock_mq_t *mqs = lock_decode(fe, conn, req, &lr);
    if (!mqs)
        return;
    const Rmq__LockBatchRequest *h = req->cmd->lock_batch;
    uint8_t *held = calloc(lr.n_mqs + 1, 1);
    Rmq__MessageQueue **locked = calloc(lr.n_mqs + 1, sizeof(*locked));
    bk_result_t r;
    if (!held || !locked)
        bk_result_set(&r, BK_SYSTEM_ERROR, "out of memory");
    else
        bk_lock_batch(fe->locks, &lr, held, &r);
    if (r.status != BK_OK) {
        fr_reply_result(conn, rmq_reply_to(req->cmd), &r, NULL);
        goto out;
    }
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__LockBatchResponse lbr = RMQ__LOCK_BATCH_RESPONSE__INIT;
    for (size_t i = 0; i < lr.n_mqs; i++)
        if (held[i])
            locked[lbr.n_locked++] = h->mqs[i];
    lbr.locked = locked;
    resp.header_case = RMQ__COMMAND__HEADER_LOCK_BATCH_RESP;
    resp.lock_batch_resp = &lbr;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
out:
    free(locked);
    free(held);
    free(mqs);
}

/* UNLOCK_BATCH_MQ: releases the queues the client holds. */
void fr_unlock(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    bk_lock_batch_req_t lr;
    bk_result_t r;
    bk_lock_mq_t *mqs = lock_decode(fe, conn, req, &lr);
    if (!mqs)
        return;
    if (bk_unlock_batch(fe->locks, &lr, &r) != BK_OK)
        fr_reply_result(conn, rmq_reply_to(req->cmd), &r, NULL);
    else
        rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
    free(mqs);
}
