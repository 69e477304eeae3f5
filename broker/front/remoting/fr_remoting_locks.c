/* fr_remoting_locks.c: the remoting front of LOCK_BATCH_MQ (41) and
 * UNLOCK_BATCH_MQ (42), what orderly consumers send: the JSON bodies
 * (fr_remoting_locks.h) read into the core's neutral batch and handed to
 * core/bk_lock.c, the queues held answered as LockBatchResponseBody.
 *
 * RocketMQ's RebalanceLockManager locks whatever queue a body names. Here a
 * queue of a topic this broker does not have, or past the topic's read
 * queues, is never locked (it is left out of lockOKMQSet, as a queue held
 * by another client is), so a client cannot grow the lock table with
 * queues that do not exist; an unlock of such a queue is a no-op anyway. */
#include "fr_remoting_locks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_topics.h"
#include "fr_remoting.h"
#include "rmq_http.h"
#include "rmq_log.h"
#include "rmq_time.h"

#define CODE_LOCK_BATCH_MQ 41

/* ---- bodies ---------------------------------------------------------------- */

void fr_rm_lock_body_clear(fr_rm_lock_body_t *lb)
{
    rmq_json_free(lb->doc);
    free(lb->mqs);
    free(lb->broker_names);
    memset(lb, 0, sizeof(*lb));
}

/* Reads mqSet entry i (item) into lb's slot i. */
static rmq_err_t lock_body_mq(fr_rm_lock_body_t *lb, size_t i, const rmq_json_t *item, char *why, size_t whylen)
{
    int64_t qid;
    const char *topic = item->type == RMQ_JSON_OBJECT ? rmq_json_scalar(rmq_json_get(item, "topic")) : NULL;
    const char *broker = item->type == RMQ_JSON_OBJECT ? rmq_json_scalar(rmq_json_get(item, "brokerName")) : NULL;
    if (!topic || !topic[0])
        return snprintf(why, whylen, "mqSet entry %zu has no topic", i), RMQ_EPROTO;
    if (rmq_json_int(rmq_json_get(item, "queueId"), 0, INT32_MAX, &qid) != 0)
        return snprintf(why, whylen, "mqSet entry %zu (topic %.100s) has no queueId in [0, %d]", i, topic,
                        INT32_MAX), RMQ_EPROTO;
    lb->mqs[i] = (bk_lock_mq_t){.topic = topic, .queue_id = (int32_t)qid};
    lb->broker_names[i] = broker ? broker : "";
    return RMQ_OK;
}

rmq_err_t fr_rm_lock_body_parse(const uint8_t *body, size_t len, fr_rm_lock_body_t *out, char *why,
                                size_t whylen)
{
    char err[128];
    rmq_err_t rc = RMQ_EPROTO;
    memset(out, 0, sizeof(*out));
    if (!(out->doc = rmq_json_parse((const char *)body, len, err, sizeof(err)))) {
        snprintf(why, whylen, "lock body is no JSON: %s", err);
        return RMQ_EPROTO;
    }
    const rmq_json_t *d = out->doc;
    const char *group = rmq_json_scalar(rmq_json_get(d, "consumerGroup"));
    const char *client = rmq_json_scalar(rmq_json_get(d, "clientId"));
    const rmq_json_t *set = rmq_json_get(d, "mqSet");
    if (!group || !group[0] || !client || !client[0] || !set || set->type != RMQ_JSON_ARRAY) {
        snprintf(why, whylen, "lock body needs consumerGroup, clientId and an mqSet array");
        goto err;
    }
    out->mqs = calloc(set->n + 1, sizeof(*out->mqs));
    out->broker_names = calloc(set->n + 1, sizeof(*out->broker_names));
    if (!out->mqs || !out->broker_names) {
        snprintf(why, whylen, "out of memory");
        rc = RMQ_ENOMEM;
        goto err;
    }
    for (size_t i = 0; i < set->n; i++)
        if ((rc = lock_body_mq(out, i, set->items[i], why, whylen)) != RMQ_OK)
            goto err;
    out->req = (bk_lock_batch_req_t){.group = group, .client_id = client, .mqs = out->mqs, .n_mqs = set->n};
    return RMQ_OK;
err:
    fr_rm_lock_body_clear(out);
    return rc;
}

rmq_err_t fr_rm_lock_answer_encode(struct evbuffer *out, const fr_rm_lock_body_t *lb, const uint8_t *held)
{
    int first = 1;
    evbuffer_add(out, "{\"lockOKMQSet\":[", 16);
    for (size_t i = 0; i < lb->req.n_mqs; i++) {
        if (!held[i])
            continue;
        evbuffer_add(out, first ? "{\"topic\":" : ",{\"topic\":", first ? 9 : 10);
        rmq_json_str(out, lb->mqs[i].topic);
        evbuffer_add(out, ",\"brokerName\":", 14);
        rmq_json_str(out, lb->broker_names[i]);
        evbuffer_add_printf(out, ",\"queueId\":%d}", (int)lb->mqs[i].queue_id);
        first = 0;
    }
    return evbuffer_add(out, "]}", 2) == 0 ? RMQ_OK : RMQ_ENOMEM;
}

/* ---- handlers -------------------------------------------------------------- */

/* Reads req's body into *lb for the core and checks the signer may lock
 * the group it names; 0, or -1 after answering (SYSTEM_ERROR with the
 * reason, or NO_PERMISSION) with lb cleared. */
static int lock_decode(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req,
                       fr_rm_lock_body_t *lb)
{
    char why[192];
    const char *name = req->code == CODE_LOCK_BATCH_MQ ? "LOCK_BATCH_MQ" : "UNLOCK_BATCH_MQ";
    if (fr_rm_lock_body_parse(req->body, req->body_len, lb, why, sizeof(why)) != RMQ_OK) {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "%s: %s", name, why);
        return -1;
    }
    if (!fr_rm_allowed(rm, conn, req, NULL, lb->req.group)) {
        fr_rm_lock_body_clear(lb);
        return -1;
    }
    lb->req.cmd = name;
    lb->req.now_ms = rmq_mono_ms();
    return 0;
}

/* 1 if this broker has mq's topic and mq's queue id is one of its read queues. */
static int lock_queue_exists(const bk_front_t *fe, const bk_lock_mq_t *mq)
{
    const bk_topic_t *t = bk_topics_get(fe->node->topics, mq->topic, strlen(mq->topic));
    return t && mq->queue_id < t->read_queues;
}

/* Locks the queues of lb that exist here through the core; held[i] says
 * which the client holds. BK_OK, or the core's refusal in r. */
static bk_status_t lock_existing(bk_front_t *fe, const fr_rm_lock_body_t *lb, uint8_t *held, bk_result_t *r)
{
    size_t n = 0, *at = calloc(lb->req.n_mqs + 1, sizeof(*at));
    bk_lock_mq_t *mqs = calloc(lb->req.n_mqs + 1, sizeof(*mqs));
    uint8_t *got = calloc(lb->req.n_mqs + 1, 1);
    if (!at || !mqs || !got) {
        bk_result_set(r, BK_SYSTEM_ERROR, "%s: out of memory", lb->req.cmd);
        goto out;
    }
    for (size_t i = 0; i < lb->req.n_mqs; i++) {
        if (lock_queue_exists(fe, &lb->mqs[i])) {
            at[n] = i;
            mqs[n++] = lb->mqs[i];
        } else {
            LOG_DEBUG("%s of group %s: no queue %d of topic %s here, not locked", lb->req.cmd, lb->req.group,
                      (int)lb->mqs[i].queue_id, lb->mqs[i].topic);
        }
    }
    bk_lock_batch_req_t req = lb->req;
    req.mqs = mqs;
    req.n_mqs = n;
    if (bk_lock_batch(fe->locks, &req, got, r) == BK_OK)
        for (size_t j = 0; j < n; j++)
            held[at[j]] = got[j];
out:
    free(got);
    free(mqs);
    free(at);
    return r->status;
}

void fr_rm_handle_lock(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    fr_rm_lock_body_t lb;
    bk_result_t r;
    if (lock_decode(rm, conn, req, &lb) != 0)
        return;
    uint8_t *held = calloc(lb.req.n_mqs + 1, 1);
    struct evbuffer *body = evbuffer_new();
    if (!held || !body)
        bk_result_set(&r, BK_SYSTEM_ERROR, "%s: out of memory", lb.req.cmd);
    else if (lock_existing(rm->fe, &lb, held, &r) == BK_OK && fr_rm_lock_answer_encode(body, &lb, held) != RMQ_OK)
        bk_result_set(&r, BK_SYSTEM_ERROR, "%s: out of memory", lb.req.cmd);
    if (r.status == BK_OK) {
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .body = evbuffer_pullup(body, -1),
                                    .body_len = evbuffer_get_length(body)};
        rmq_remoting_reply(conn, req, &rep);
    } else {
        fr_rm_reply_result(conn, req, &r);
    }
    if (body)
        evbuffer_free(body);
    free(held);
    fr_rm_lock_body_clear(&lb);
}

void fr_rm_handle_unlock(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    fr_rm_lock_body_t lb;
    bk_result_t r;
    if (lock_decode(rm, conn, req, &lb) != 0)
        return;
    if (bk_unlock_batch(rm->fe->locks, &lb.req, &r) == BK_OK) {
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS};
        rmq_remoting_reply(conn, req, &rep);
    } else {
        fr_rm_reply_result(conn, req, &r);
    }
    fr_rm_lock_body_clear(&lb);
}
