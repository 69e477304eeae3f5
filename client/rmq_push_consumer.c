/* rmq_push_consumer.c: the push consumer. On its loop thread it rebalances
 * (route + group members from a broker -> AllocateMessageQueueAveragely, or
 * every queue when broadcasting), resolves where each new queue starts,
 * long-polls each owned queue, and commits offsets; consume threads run the
 * user's callback and mark messages done in the queue's process queue.
 *
 * Ownership: a queue state (qstate_t) is referenced by the consumer's list
 * while owned, by its one pull chain (an offset query, a pull in flight or
 * a retry timer) and by every message handed to a consume thread. Dropping
 * a queue only sets a flag; each holder lets go when it next looks. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_client_int.h"
#include "rmq_log.h"
#include "rmq_orderly.h"
#include "rmq_pq.h"
#include "rmq_retry.h"
#include "rmq_time.h"
#include "rmq_workers.h"

enum { CONSUMER_NEW, CONSUMER_RUNNING, CONSUMER_STOPPED };

#define PULL_RETRY_MS 1000
#define FLOW_RETRY_MS 50
#define REBALANCE_RETRY_MS 1000
#define RETRY_ROUTE_GRACE_MS 10000
#define ORDERLY_LOCK_WAIT_MS 300

typedef struct rmq_push_consumer consumer_t;

typedef struct sub {
    struct sub *next;
    consumer_t *c;
    char *topic;
    char *expr;
    rmq_tags_t tags;
    rmq_route_t *route;             /* loop thread */
    int busy;                       /* a rebalance is running */
    int again;                      /* another one was asked for meanwhile */
    int64_t last_kick_ms;
} sub_t;

typedef struct qstate {
    struct qstate *next;
    consumer_t *c;
    sub_t *sub;
    rmq_mq_t mq;
    _Atomic int refs;
    _Atomic int dropped;
    int ready;                      /* start offset known; loop thread */
    int64_t next_offset;            /* next pull; loop thread */
    int64_t committed;              /* last offset sent to the broker; loop thread */
    struct event *retry_ev;         /* delayed pull or offset query; loop thread */
    rmq_pq_t pq;
    rmq_oq_t *oq;                   /* orderly mode (rmq_orderly.c); loop thread */
} qstate_t;

typedef struct work {
    rmq_work_t w;
    struct work *dnext;             /* consumer's delayed list; loop thread */
    qstate_t *qs;
    rmq_message_ext_t *msg;
    struct event *ev;
} work_t;

typedef struct local_off {
    struct local_off *next;
    char topic[128];
    rmq_mq_t mq;
    int64_t offset;
} local_off_t;

struct rmq_push_consumer {
    rmq_push_consumer_opts_t o;
    char *group;
    rmq_instance_t *in;
    _Atomic int state;
    sub_t *subs;
    rmq_workers_t *workers;
    rmq_orderly_t *ord;             /* orderly mode: its own consume threads and queue locks */
    /* loop thread */
    qstate_t *queues;
    work_t *delayed;
    local_off_t *local;
    struct event *rebalance_ev;
    struct event *heartbeat_ev;
    struct event *commit_ev;
    struct event *retry_ev;         /* one-shot rebalance after a failed one */
    int64_t hb_acked_ms;            /* when (monotonic) a broker first answered a heartbeat: it
                                     * created the retry topic then (0: none yet) */
    int closing;
};

static void qs_pull(qstate_t *qs);
static void qs_resolve(qstate_t *qs);
static void sub_rebalance(sub_t *sub);

/* ---- options and subscriptions ----------------------------------------- */

/* Replaces zeros in o by the documented defaults. */
static void consumer_opts_defaults(rmq_push_consumer_opts_t *o)
{
#define DEF(f, v) if (o->f <= 0) o->f = (v)
    DEF(consume_threads, 20);
    DEF(pull_batch_size, 32);
    DEF(queue_max_cached, 1000);
    DEF(queue_max_cached_mb, 100);
    DEF(rebalance_interval_ms, 20000);
    DEF(heartbeat_interval_ms, 30000);
    DEF(commit_interval_ms, 5000);
    DEF(reconsume_delay_ms, 1000);
    DEF(suspend_ms, 15000);
    DEF(pull_timeout_ms, 30000);
    DEF(max_reconsume_times, 16);
    DEF(lock_renew_ms, 20000);
#undef DEF
    if (o->consume_timestamp_ms <= 0)
        o->consume_timestamp_ms = rmq_wall_ms() - 30 * 60 * 1000;
}

rmq_push_consumer_t *rmq_push_consumer_new(const rmq_push_consumer_opts_t *opts, rmq_error_t *err)
{
    if (!opts || !opts->group || !opts->group[0] || !opts->on_message) {
        rmq_error_set(err, RMQ_EINVAL, 0, "consumer group and on_message are required");
        return NULL;
    }
    consumer_t *c = calloc(1, sizeof *c);
    if (!c) {
        rmq_error_set(err, RMQ_ENOMEM, 0, "consumer");
        return NULL;
    }
    c->o = *opts;
    consumer_opts_defaults(&c->o);
    c->group = strdup(opts->group);
    c->in = rmq_instance_new(opts->namesrv, "consumer", opts->instance_name, opts->security, err);
    if (!c->group || !c->in) {
        if (!c->group)
            rmq_error_set(err, RMQ_ENOMEM, 0, "consumer");
        rmq_instance_free(c->in);
        free(c->group);
        free(c);
        return NULL;
    }
    c->o.group = c->group;
    c->o.namesrv = NULL;
    c->o.instance_name = NULL;
    c->o.security = NULL;
    return c;
}

rmq_err_t rmq_push_consumer_subscribe(rmq_push_consumer_t *c, const char *topic, const char *expr)
{
    if (atomic_load(&c->state) != CONSUMER_NEW)
        return RMQ_EINVAL;
    if (!topic || !topic[0] || strlen(topic) > RMQ_TOPIC_MAX)
        return RMQ_EINVAL;
    sub_t *sub = calloc(1, sizeof *sub);
    if (!sub)
        return RMQ_ENOMEM;
    rmq_err_t err = rmq_tags_parse(expr, &sub->tags);
    sub->topic = strdup(topic);
    sub->expr = strdup(expr && expr[0] ? expr : "*");
    if (err == RMQ_OK && (!sub->topic || !sub->expr))
        err = RMQ_ENOMEM;
    if (err != RMQ_OK) {
        rmq_tags_free(&sub->tags);
        free(sub->topic);
        free(sub->expr);
        free(sub);
        return err;
    }
    sub->c = c;
    sub->next = c->subs;
    c->subs = sub;
    return RMQ_OK;
}

const char *rmq_push_consumer_client_id(const rmq_push_consumer_t *c)
{
    return rmq_instance_client_id(c->in);
}

/* ---- queue states ------------------------------------------------------ */

/* Lets go of one reference; the last one frees the state. Any thread. */
static void qs_unref(qstate_t *qs)
{
    if (atomic_fetch_sub(&qs->refs, 1) != 1)
        return;
    if (qs->retry_ev)
        event_free(qs->retry_ev);
    rmq_pq_deinit(&qs->pq);
    free(qs);
}

/* The retry timer: continue the chain where it stopped. Loop thread. */
static void qs_retry_fire(evutil_socket_t fd, short what, void *arg)
{
    qstate_t *qs = arg;
    if (qs->ready)
        qs_pull(qs);
    else
        qs_resolve(qs);
}

/* Continues the pull chain after ms (the chain keeps its reference). */
static void qs_retry(qstate_t *qs, int ms)
{
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};
    if (atomic_load(&qs->dropped) || qs->c->closing || evtimer_add(qs->retry_ev, &tv) != 0)
        qs_unref(qs);
}

/* 1 if the chain should stop: releases its reference then. */
static int qs_chain_ends(qstate_t *qs)
{
    if (!atomic_load(&qs->dropped) && !qs->c->closing)
        return 0;
    qs_unref(qs);
    return 1;
}

/* The local (broadcasting) offset entry of qs, created if asked. */
static local_off_t *local_find(consumer_t *c, const qstate_t *qs, int create)
{
    for (local_off_t *l = c->local; l; l = l->next)
        if (l->mq.queue_id == qs->mq.queue_id && strcmp(l->topic, qs->sub->topic) == 0 &&
            strcmp(l->mq.broker_name, qs->mq.broker_name) == 0)
            return l;
    if (!create)
        return NULL;
    local_off_t *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    snprintf(l->topic, sizeof l->topic, "%s", qs->sub->topic);
    l->mq = qs->mq;
    l->offset = -1;
    l->next = c->local;
    c->local = l;
    return l;
}

/* Answer of a fire-and-check control call (commit, heartbeat): logs a failure. arg names it. */
static void control_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    rmq_error_t e;
    if (rmq_error_from_rpc(&e, err, resp, arg) != RMQ_OK && err != RMQ_ESHUTDOWN)
        LOG_WARN_RL("consumer: %s", e.text);
}

/* Builds an UPDATE_CONSUMER_OFFSET / QUERY_CONSUMER_OFFSET header. */
static void offset_header(const consumer_t *c, const qstate_t *qs, int64_t off,
                          Rmq__ConsumerOffsetRequest *h)
{
    rmq__consumer_offset_request__init(h);
    h->consumer_group = c->group;
    h->topic = qs->sub->topic;
    h->queue_id = qs->mq.queue_id;
    h->commit_offset = off;
}

/* Stores qs's commit offset if it moved: the broker (clustering) or the
 * local table (broadcasting). Loop thread. */
static void qs_commit(qstate_t *qs)
{
    consumer_t *c = qs->c;
    if (!qs->ready)
        return;
    int64_t off = rmq_pq_commit_offset(&qs->pq);
    if (c->o.model == RMQ_BROADCASTING) {
        local_off_t *l = local_find(c, qs, 1);
        if (l)
            l->offset = off;
        return;
    }
    if (off == qs->committed || !qs->sub->route)
        return;
    const char *addr = rmq_route_read_addr(qs->sub->route, qs->mq.broker_name);
    if (!addr)
        return;
    Rmq__ConsumerOffsetRequest h;
    offset_header(c, qs, off, &h);
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET;
    req.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
    req.consumer_offset = &h;
    if (rmq_instance_call(c->in, addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS, control_done,
                          "UPDATE_CONSUMER_OFFSET") == RMQ_OK)
        qs->committed = off;
}

/* Gives up qs: commits its offset, unlinks it, ends its timer. Loop thread. */
static void qs_drop(qstate_t *qs)
{
    consumer_t *c = qs->c;
    qs_commit(qs);
    atomic_store(&qs->dropped, 1);
    if (qs->oq)
        rmq_oq_drop(qs->oq);         /* commits and unlocks after the message in flight */
    qs->oq = NULL;
    for (qstate_t **pp = &c->queues; *pp; pp = &(*pp)->next)
        if (*pp == qs) {
            *pp = qs->next;
            break;
        }
    if (evtimer_pending(qs->retry_ev, NULL)) {
        evtimer_del(qs->retry_ev);
        qs_unref(qs);
    }
    qs_unref(qs);
}

/* Starts owning mq of sub: a new state with a list and a chain reference. */
static void qs_create(consumer_t *c, sub_t *sub, const rmq_mq_t *mq)
{
    qstate_t *qs = calloc(1, sizeof *qs);
    if (!qs)
        return;
    qs->retry_ev = evtimer_new(rmq_instance_base(c->in), qs_retry_fire, qs);
    if (!qs->retry_ev) {
        free(qs);
        return;
    }
    qs->c = c;
    qs->sub = sub;
    qs->mq = *mq;
    qs->committed = -1;
    rmq_pq_init(&qs->pq, 0);
    atomic_store(&qs->refs, 2);
    if (c->ord && !(qs->oq = rmq_oq_new(c->ord, qs, sub->topic, mq->broker_name, mq->queue_id))) {
        event_free(qs->retry_ev);
        rmq_pq_deinit(&qs->pq);
        free(qs);
        return;
    }
    qs->next = c->queues;
    c->queues = qs;
    qs_resolve(qs);
}

/* ---- where a queue starts ---------------------------------------------- */

/* The start offset is known: begin pulling. */
static void qs_begin(qstate_t *qs, int64_t off)
{
    if (off < 0)
        off = 0;
    qs->next_offset = off;
    qs->committed = off;
    rmq_pq_set_next(&qs->pq, off);
    qs->ready = 1;
    qs_pull(qs);
}

/* Answer of GET_MAX_OFFSET / SEARCH_OFFSET_BY_TIMESTAMP. */
static void qs_edge_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    qstate_t *qs = arg;
    if (qs_chain_ends(qs))
        return;
    rmq_error_t e;
    if (rmq_error_from_rpc(&e, err, resp, "start offset") != RMQ_OK ||
        resp->cmd->header_case != RMQ__COMMAND__HEADER_OFFSET_RESP) {
        LOG_WARN_RL("consumer: %s queue %s:%d: %s", qs->sub->topic, qs->mq.broker_name,
                    qs->mq.queue_id, e.text);
        qs_retry(qs, PULL_RETRY_MS);
        return;
    }
    qs_begin(qs, resp->cmd->offset_resp->offset);
}

/* No stored offset: start per consume_from (first: 0, last: max, timestamp: search). */
static void qs_start_fresh(qstate_t *qs)
{
    consumer_t *c = qs->c;
    if (c->o.consume_from == RMQ_CONSUME_FROM_FIRST || rmq_retry_is_retry_topic(qs->sub->topic)) {
        qs_begin(qs, 0);
        return;
    }
    const char *addr = rmq_route_read_addr(qs->sub->route, qs->mq.broker_name);
    Rmq__QueueRequest h = RMQ__QUEUE_REQUEST__INIT;
    h.topic = qs->sub->topic;
    h.queue_id = qs->mq.queue_id;
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__GET_MAX_OFFSET;
    if (c->o.consume_from == RMQ_CONSUME_FROM_TIMESTAMP) {
        req.code = RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP;
        h.timestamp = c->o.consume_timestamp_ms;
    }
    req.header_case = RMQ__COMMAND__HEADER_QUEUE;
    req.queue = &h;
    if (!addr || rmq_instance_call(c->in, addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS,
                                   qs_edge_done, qs) != RMQ_OK)
        qs_retry(qs, PULL_RETRY_MS);
}

/* Answer of QUERY_CONSUMER_OFFSET. */
static void qs_query_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    qstate_t *qs = arg;
    if (qs_chain_ends(qs))
        return;
    rmq_error_t e;
    err = rmq_error_from_rpc(&e, err, resp, "QUERY_CONSUMER_OFFSET");
    if (err == RMQ_OK && resp->cmd->header_case == RMQ__COMMAND__HEADER_OFFSET_RESP &&
        resp->cmd->offset_resp->offset >= 0) {
        qs_begin(qs, resp->cmd->offset_resp->offset);
        return;
    }
    if (err == RMQ_OK || e.status == RMQ__STATUS__QUERY_NOT_FOUND) {
        qs_start_fresh(qs);
        return;
    }
    LOG_WARN_RL("consumer: %s queue %s:%d: %s", qs->sub->topic, qs->mq.broker_name,
                qs->mq.queue_id, e.text);
    qs_retry(qs, PULL_RETRY_MS);
}

/* Finds where qs starts: the stored offset, else per consume_from. Loop thread. */
static void qs_resolve(qstate_t *qs)
{
    consumer_t *c = qs->c;
    if (qs_chain_ends(qs))
        return;
    if (qs->oq && !rmq_oq_locked(qs->oq)) {
        qs_retry(qs, ORDERLY_LOCK_WAIT_MS);   /* orderly: the start offset is read under the lock */
        return;
    }
    if (c->o.model == RMQ_BROADCASTING) {
        local_off_t *l = local_find(c, qs, 0);
        if (l && l->offset >= 0)
            qs_begin(qs, l->offset);
        else
            qs_start_fresh(qs);
        return;
    }
    const char *addr = rmq_route_read_addr(qs->sub->route, qs->mq.broker_name);
    Rmq__ConsumerOffsetRequest h;
    offset_header(c, qs, 0, &h);
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET;
    req.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
    req.consumer_offset = &h;
    if (!addr || rmq_instance_call(c->in, addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS,
                                   qs_query_done, qs) != RMQ_OK)
        qs_retry(qs, PULL_RETRY_MS);
}

/* ---- pulling and consuming ----------------------------------------------- */

/* Hands the pulled messages to the consume threads. */
static void qs_dispatch(qstate_t *qs, rmq_message_ext_t **msgs, size_t n, int64_t next)
{
    int64_t *offs = malloc((n ? n : 1) * sizeof *offs);
    size_t bytes = 0;
    for (size_t i = 0; offs && i < n; i++) {
        offs[i] = msgs[i]->queue_offset;
        bytes += msgs[i]->body_len;
    }
    if (!offs || rmq_pq_add(&qs->pq, offs, n, bytes, next) != 0) {
        LOG_ERROR_RL("consumer: out of memory caching %zu messages", n);
        for (size_t i = 0; i < n; i++)
            free(msgs[i]);
        free(offs);
        return;
    }
    free(offs);
    if (qs->oq) {
        rmq_oq_add(qs->oq, msgs, n);          /* orderly: one thread per queue, in order */
        return;
    }
    for (size_t i = 0; i < n; i++) {
        work_t *w = calloc(1, sizeof *w);
        if (!w) {
            rmq_pq_done(&qs->pq, msgs[i]->queue_offset, msgs[i]->body_len);
            free(msgs[i]);
            continue;
        }
        atomic_fetch_add(&qs->refs, 1);
        w->qs = qs;
        w->msg = msgs[i];
        rmq_workers_push(qs->c->workers, &w->w);
    }
}

/* Asks for a route refresh after pull trouble, at most once a second. */
static void sub_kick(sub_t *sub)
{
    int64_t now = rmq_mono_ms();
    if (now - sub->last_kick_ms < 1000)
        return;
    sub->last_kick_ms = now;
    sub_rebalance(sub);
}

/* A FOUND answer: decode, filter by tag, cache and dispatch. 0 on success. */
static int qs_found(qstate_t *qs, const rmq_frame_t *resp, int64_t next)
{
    size_t len = evbuffer_get_length(resp->body);
    const uint8_t *data = len ? evbuffer_pullup(resp->body, -1) : NULL;
    rmq_message_ext_t **msgs = NULL;
    size_t n = 0;
    rmq_err_t err = len ? rmq_msg_decode_pulled(data, len, qs->mq.broker_name, &qs->sub->tags,
                                                &msgs, &n)
                        : RMQ_OK;
    if (err != RMQ_OK) {
        LOG_ERROR_RL("consumer: %s queue %s:%d: undecodable pull body (%s)", qs->sub->topic,
                     qs->mq.broker_name, qs->mq.queue_id, rmq_strerror(err));
        for (size_t i = 0; i < n; i++)
            free(msgs[i]);
        free(msgs);
        return -1;
    }
    for (size_t i = 0; i < n && rmq_retry_is_retry_topic(qs->sub->topic); i++)
        msgs[i] = rmq_retry_restore_topic(msgs[i]);
    qs_dispatch(qs, msgs, n, next);
    free(msgs);
    return 0;
}

/* Answer of a pull: messages, nothing new, a moved offset or an error. */
static void qs_pull_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    qstate_t *qs = arg;
    if (qs_chain_ends(qs))
        return;
    rmq_error_t e;
    err = rmq_error_from_rpc(&e, err, resp, "PULL_MESSAGE");
    int has_hdr = resp && resp->cmd && resp->cmd->header_case == RMQ__COMMAND__HEADER_PULL_RESP;
    int64_t next = has_hdr ? resp->cmd->pull_resp->next_begin_offset : qs->next_offset;
    if (err == RMQ_OK && has_hdr && qs_found(qs, resp, next) == 0) {
        qs->next_offset = next;
        qs_pull(qs);
        return;
    }
    int st = e.status;
    if (err == RMQ_ESTATUS && has_hdr &&
        (st == RMQ__STATUS__PULL_NOT_FOUND || st == RMQ__STATUS__PULL_RETRY_IMMEDIATELY ||
         st == RMQ__STATUS__PULL_OFFSET_MOVED)) {
        if (st == RMQ__STATUS__PULL_OFFSET_MOVED)
            LOG_WARN("consumer: %s queue %s:%d offset %lld moved to %lld", qs->sub->topic,
                     qs->mq.broker_name, qs->mq.queue_id, (long long)qs->next_offset,
                     (long long)next);
        qs->next_offset = next;
        rmq_pq_set_next(&qs->pq, next);
        qs_pull(qs);
        return;
    }
    if (err != RMQ_OK)
        LOG_WARN_RL("consumer: %s queue %s:%d: %s", qs->sub->topic, qs->mq.broker_name,
                    qs->mq.queue_id, e.text);
    else if (!has_hdr)
        LOG_WARN_RL("consumer: %s queue %s:%d: pull answer without a pull header",
                    qs->sub->topic, qs->mq.broker_name, qs->mq.queue_id);
    sub_kick(qs->sub);
    qs_retry(qs, PULL_RETRY_MS);
}

/* Fills the PULL_MESSAGE header for qs. */
static void qs_pull_header(const qstate_t *qs, Rmq__PullMessageRequest *h)
{
    const consumer_t *c = qs->c;
    rmq__pull_message_request__init(h);
    h->consumer_group = c->group;
    h->topic = qs->sub->topic;
    h->queue_id = qs->mq.queue_id;
    h->queue_offset = qs->next_offset;
    h->max_msg_nums = c->o.pull_batch_size;
    h->sys_flag = RMQ__PULL_FLAG__PULL_SUSPEND | RMQ__PULL_FLAG__PULL_SUBSCRIPTION;
    h->suspend_timeout_millis = c->o.suspend_ms;
    h->subscription = qs->sub->expr;
    if (c->o.model == RMQ_CLUSTERING && qs->committed > 0) {
        h->sys_flag |= RMQ__PULL_FLAG__PULL_COMMIT_OFFSET;
        h->commit_offset = qs->committed;
    }
}

/* Issues the next long-polling pull of qs, or waits out flow control. */
static void qs_pull(qstate_t *qs)
{
    consumer_t *c = qs->c;
    if (qs_chain_ends(qs))
        return;
    if (qs->oq && !rmq_oq_locked(qs->oq)) {
        qs_retry(qs, ORDERLY_LOCK_WAIT_MS);   /* orderly: pull only queues locked to us */
        return;
    }
    size_t count, bytes;
    rmq_pq_load(&qs->pq, &count, &bytes);
    if (count > (size_t)c->o.queue_max_cached ||
        bytes > (size_t)c->o.queue_max_cached_mb << 20) {
        qs_retry(qs, FLOW_RETRY_MS);
        return;
    }
    const char *addr = rmq_route_read_addr(qs->sub->route, qs->mq.broker_name);
    Rmq__PullMessageRequest h;
    qs_pull_header(qs, &h);
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__PULL_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_PULL;
    req.pull = &h;
    if (!addr || rmq_instance_call(c->in, addr, &req, NULL, 0, c->o.pull_timeout_ms,
                                   qs_pull_done, qs) != RMQ_OK)
        qs_retry(qs, PULL_RETRY_MS);
}

/* Frees a work item and its message, releasing the queue reference. */
static void work_free(work_t *w)
{
    qstate_t *qs = w->qs;
    free(w->msg);
    free(w);
    qs_unref(qs);
}

/* Loop thread: let a reconsume-later message wait, then requeue it. */
static void work_delay_fire(evutil_socket_t fd, short what, void *arg)
{
    work_t *w = arg;
    consumer_t *c = w->qs->c;
    for (work_t **pp = &c->delayed; *pp; pp = &(*pp)->dnext)
        if (*pp == w) {
            *pp = w->dnext;
            break;
        }
    event_free(w->ev);
    w->ev = NULL;
    rmq_workers_push(c->workers, &w->w);
}

/* Loop thread: parks a reconsume-later message for reconsume_delay_ms
 * (discarded when closing: its offset stays uncommitted, so it comes back). */
static void work_delay_on_loop(void *arg)
{
    work_t *w = arg;
    consumer_t *c = w->qs->c;
    struct timeval tv = {c->o.reconsume_delay_ms / 1000, (c->o.reconsume_delay_ms % 1000) * 1000};
    if (c->closing || !(w->ev = evtimer_new(rmq_instance_base(c->in), work_delay_fire, w))) {
        work_free(w);
        return;
    }
    w->dnext = c->delayed;
    c->delayed = w;
    evtimer_add(w->ev, &tv);
}

/* Answer of CONSUMER_SEND_MSG_BACK: the broker has the message now (its
 * offset is done here), else it is redelivered locally. Loop thread. */
static void work_sent_back(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    work_t *w = arg;
    rmq_error_t e;
    if (rmq_error_from_rpc(&e, err, resp, "CONSUMER_SEND_MSG_BACK") == RMQ_OK) {
        rmq_pq_done(&w->qs->pq, w->msg->queue_offset, w->msg->body_len);
        work_free(w);
        return;
    }
    LOG_WARN_RL("consumer %s: sending message %s back failed (%s); redelivering it locally",
                w->qs->c->group, w->msg->msg_id, e.text);
    w->msg->reconsume_times++;
    work_delay_on_loop(w);
}

/* Loop thread: sends a reconsume-later message back to the master of its
 * broker (falls back to a local redelivery). */
static void work_send_back_on_loop(void *arg)
{
    work_t *w = arg;
    consumer_t *c = w->qs->c;
    const char *addr = w->qs->sub->route ? rmq_route_master_addr(w->qs->sub->route, w->msg->broker_name) : NULL;
    if (c->closing) {
        work_free(w);
        return;
    }
    if (!addr || rmq_retry_send_back(c->in, addr, c->group, w->msg, c->o.max_reconsume_times,
                                     RMQ_CONTROL_TIMEOUT_MS, work_sent_back, w) != RMQ_OK) {
        w->msg->reconsume_times++;
        work_delay_on_loop(w);
    }
}

/* Consume thread: runs the callback; success marks the offset done,
 * reconsume-later sends the message back (clustering) or schedules a local
 * redelivery (broadcasting). */
static void work_run(rmq_work_t *item, int run, void *arg)
{
    work_t *w = (work_t *)item;
    consumer_t *c = arg;
    qstate_t *qs = w->qs;
    if (!run || atomic_load(&qs->dropped)) {
        work_free(w);
        return;
    }
    rmq_consume_result_t r = c->o.on_message(w->msg, c->o.arg);
    if (r != RMQ_CONSUME_SUCCESS && !atomic_load(&qs->dropped)) {   /* any other value: a failure */
        int back = c->o.model == RMQ_CLUSTERING;
        if (!back)
            w->msg->reconsume_times++;
        if (rmq_instance_post(c->in, back ? work_send_back_on_loop : work_delay_on_loop, w) != RMQ_OK)
            work_free(w);
        return;
    }
    rmq_pq_done(&qs->pq, w->msg->queue_offset, w->msg->body_len);
    work_free(w);
}

/* ---- rebalance ------------------------------------------------------------ */

/* 1 if mq is among mqs[0..n). */
static int mq_in(const rmq_mq_t *mq, const rmq_mq_t *mqs, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (mqs[i].queue_id == mq->queue_id && strcmp(mqs[i].broker_name, mq->broker_name) == 0)
            return 1;
    return 0;
}

/* Makes sub's owned queues exactly mqs[0..n): drops the others, adds new ones. */
static void sub_apply(sub_t *sub, const rmq_mq_t *mqs, size_t n)
{
    consumer_t *c = sub->c;
    qstate_t *qs = c->queues;
    while (qs) {
        qstate_t *next = qs->next;
        if (qs->sub == sub && !mq_in(&qs->mq, mqs, n)) {
            LOG_INFO("consumer %s: drops %s queue %s:%d", rmq_instance_client_id(c->in),
                     sub->topic, qs->mq.broker_name, qs->mq.queue_id);
            qs_drop(qs);
        }
        qs = next;
    }
    for (size_t i = 0; i < n; i++) {
        int have = 0;
        for (qs = c->queues; qs && !have; qs = qs->next)
            have = qs->sub == sub && qs->mq.queue_id == mqs[i].queue_id &&
                   strcmp(qs->mq.broker_name, mqs[i].broker_name) == 0;
        if (!have)
            qs_create(c, sub, &mqs[i]);
    }
}

/* Ends a rebalance of sub; runs the next one if asked meanwhile, or soon
 * if this one failed (a topic not created yet, a broker restarting). */
static void sub_rebalance_end(sub_t *sub, int failed)
{
    consumer_t *c = sub->c;
    sub->busy = 0;
    if (c->closing)
        return;
    if (sub->again) {
        sub->again = 0;
        sub_rebalance(sub);
    } else if (failed && c->retry_ev && !evtimer_pending(c->retry_ev, NULL)) {
        struct timeval tv = {REBALANCE_RETRY_MS / 1000, (REBALANCE_RETRY_MS % 1000) * 1000};
        evtimer_add(c->retry_ev, &tv);
    }
}

static int cid_cmp(const void *a, const void *b)
{
    return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* The group's members arrived: allocate and apply. */
static void sub_cids_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    sub_t *sub = arg;
    consumer_t *c = sub->c;
    rmq_error_t e;
    err = rmq_error_from_rpc(&e, err, resp, "GET_CONSUMER_LIST_BY_GROUP");
    if (err == RMQ_OK && resp->cmd->header_case == RMQ__COMMAND__HEADER_CONSUMER_LIST &&
        !c->closing) {
        Rmq__ConsumerList *cl = resp->cmd->consumer_list;
        qsort(cl->client_ids, cl->n_client_ids, sizeof *cl->client_ids, cid_cmp);
        size_t start, count;
        rmq_rebalance_allocate(sub->route->nsub, (const char *const *)cl->client_ids,
                               cl->n_client_ids, rmq_instance_client_id(c->in), &start, &count);
        sub_apply(sub, sub->route->sub + start, count);
        sub_rebalance_end(sub, 0);
        return;
    }
    if (err != RMQ_OK && err != RMQ_ESHUTDOWN)
        LOG_WARN_RL("consumer: rebalance of %s: %s", sub->topic, e.text);
    sub_rebalance_end(sub, 1);
}

/* Heartbeat answered: the first success lets the group's retry topic be
 * routed (a broker creates it, with its route, on the group's heartbeat). */
static void heartbeat_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    consumer_t *c = arg;
    rmq_error_t e;
    if (rmq_error_from_rpc(&e, err, resp, "HEART_BEAT") != RMQ_OK) {
        if (err != RMQ_ESHUTDOWN)
            LOG_WARN_RL("consumer: %s", e.text);
        return;
    }
    if (c->hb_acked_ms || c->closing)
        return;
    c->hb_acked_ms = rmq_mono_ms();
    for (sub_t *s = c->subs; s; s = s->next)
        if (rmq_retry_is_retry_topic(s->topic))
            sub_rebalance(s);
}

/* Sends this consumer's heartbeat to addr. Loop thread. */
static void heartbeat_send(consumer_t *c, const char *addr)
{
    size_t n = 0;
    for (sub_t *s = c->subs; s; s = s->next)
        n++;
    Rmq__SubscriptionData sd[n ? n : 1];
    Rmq__SubscriptionData *sdp[n ? n : 1];
    size_t i = 0;
    for (sub_t *s = c->subs; s; s = s->next, i++) {
        rmq__subscription_data__init(&sd[i]);
        sd[i].topic = s->topic;
        sd[i].sub_string = s->expr;
        sdp[i] = &sd[i];
    }
    Rmq__ConsumerData cd = RMQ__CONSUMER_DATA__INIT;
    cd.group_name = c->group;
    cd.message_model = c->o.model == RMQ_BROADCASTING ? RMQ__MESSAGE_MODEL__BROADCASTING
                                                       : RMQ__MESSAGE_MODEL__CLUSTERING;
    cd.consume_from_where = (Rmq__ConsumeFromWhere)c->o.consume_from;
    cd.n_subscriptions = n;
    cd.subscriptions = sdp;
    Rmq__ConsumerData *cdp = &cd;
    Rmq__HeartbeatData hb = RMQ__HEARTBEAT_DATA__INIT;
    hb.client_id = (char *)rmq_instance_client_id(c->in);
    hb.n_consumers = 1;
    hb.consumers = &cdp;
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__HEART_BEAT;
    req.header_case = RMQ__COMMAND__HEADER_HEARTBEAT;
    req.heartbeat = &hb;
    rmq_instance_call(c->in, addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS, heartbeat_done, c);
}

/* Heartbeats every master and slave in route. */
static void heartbeat_route(consumer_t *c, const rmq_route_t *route)
{
    for (size_t i = 0; i < route->nbrokers; i++) {
        if (route->brokers[i].master[0])
            heartbeat_send(c, route->brokers[i].master);
        if (route->brokers[i].slave[0])
            heartbeat_send(c, route->brokers[i].slave);
    }
}

/* 1 if err is the name server not knowing sub's retry topic yet: the
 * group's first heartbeat was answered less than RETRY_ROUTE_GRACE_MS ago,
 * and the broker that created the topic then registers it with the name
 * server a moment later (the next rebalance finds it). */
static int retry_route_pending(const consumer_t *c, const sub_t *sub, rmq_err_t err, const rmq_error_t *why)
{
    return err == RMQ_ESTATUS && why->status == RMQ__STATUS__TOPIC_NOT_EXIST && rmq_retry_is_retry_topic(sub->topic) &&
           rmq_mono_ms() - c->hb_acked_ms < RETRY_ROUTE_GRACE_MS;
}

/* The route arrived: heartbeat its brokers, then ask one for the members. */
static void sub_route_done(rmq_err_t err, rmq_route_t *route, const rmq_error_t *why, void *arg)
{
    sub_t *sub = arg;
    consumer_t *c = sub->c;
    if (err != RMQ_OK || c->closing) {
        if (retry_route_pending(c, sub, err, why))
            LOG_DEBUG("consumer: route of %s: %s (the broker is registering it)", sub->topic, why->text);
        else if (err != RMQ_OK && err != RMQ_ESHUTDOWN)
            LOG_WARN_RL("consumer: route of %s: %s", sub->topic, why->text);
        rmq_route_free(route);
        sub_rebalance_end(sub, 1);
        return;
    }
    rmq_route_free(sub->route);
    sub->route = route;
    heartbeat_route(c, route);
    if (c->o.model == RMQ_BROADCASTING) {
        sub_apply(sub, route->sub, route->nsub);
        sub_rebalance_end(sub, 0);
        return;
    }
    const char *addr = NULL;
    for (size_t i = 0; i < route->nbrokers && !addr; i++)
        addr = rmq_route_read_addr(route, route->brokers[i].name);
    Rmq__GroupRequest h = RMQ__GROUP_REQUEST__INIT;
    h.consumer_group = c->group;
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__GET_CONSUMER_LIST_BY_GROUP;
    req.header_case = RMQ__COMMAND__HEADER_GROUP;
    req.group = &h;
    if (!addr || rmq_instance_call(c->in, addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS,
                                   sub_cids_done, sub) != RMQ_OK)
        sub_rebalance_end(sub, 1);
}

/* Rebalances sub now (or right after the one running). Loop thread. */
static void sub_rebalance(sub_t *sub)
{
    if (sub->c->closing)
        return;
    if (sub->busy) {
        sub->again = 1;
        return;
    }
    sub->busy = 1;
    rmq_instance_fetch_route(sub->c->in, sub->topic, sub_route_done, sub);
}

/* Rebalances every subscription; a retry topic only once a heartbeat was
 * answered (before that no broker has created it), unless only retry
 * topics are subscribed (then nothing else would lead to a broker). */
static void consumer_rebalance_all(consumer_t *c)
{
    int plain = 0;
    for (sub_t *s = c->subs; s && !plain; s = s->next)
        plain = !rmq_retry_is_retry_topic(s->topic);
    for (sub_t *s = c->subs; s; s = s->next)
        if (c->hb_acked_ms || !plain || !rmq_retry_is_retry_topic(s->topic))
            sub_rebalance(s);
}

/* ---- timers and server pushes --------------------------------------------- */

static void consumer_rebalance_tick(evutil_socket_t fd, short what, void *arg)
{
    consumer_rebalance_all(arg);
}

/* Heartbeats every broker of every subscribed topic. Loop thread. */
static void consumer_heartbeat_tick(evutil_socket_t fd, short what, void *arg)
{
    consumer_t *c = arg;
    for (sub_t *s = c->subs; s; s = s->next)
        if (s->route)
            heartbeat_route(c, s->route);
}

/* Commits every owned queue's offset that moved. Loop thread. */
static void consumer_commit_tick(evutil_socket_t fd, short what, void *arg)
{
    consumer_t *c = arg;
    for (qstate_t *qs = c->queues; qs; qs = qs->next)
        qs_commit(qs);
}

/* A broker's push: NOTIFY_CONSUMER_IDS_CHANGED rebalances at once. */
static void consumer_on_push(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    if (req->cmd && req->cmd->code == RMQ__REQUEST_CODE__NOTIFY_CONSUMER_IDS_CHANGED)
        consumer_rebalance_all(arg);
}

/* Loop thread: the timers, then the first rebalance (which heartbeats). */
static void consumer_start_on_loop(void *arg)
{
    consumer_t *c = arg;
    c->rebalance_ev = rmq_instance_timer(c->in, c->o.rebalance_interval_ms,
                                         consumer_rebalance_tick, c);
    c->heartbeat_ev = rmq_instance_timer(c->in, c->o.heartbeat_interval_ms,
                                         consumer_heartbeat_tick, c);
    c->commit_ev = rmq_instance_timer(c->in, c->o.commit_interval_ms, consumer_commit_tick, c);
    c->retry_ev = evtimer_new(rmq_instance_base(c->in), consumer_rebalance_tick, c);
    rmq_orderly_start(c->ord);
    consumer_rebalance_all(c);
}

/* ---- orderly mode: the queue operations rmq_orderly.c uses ------------------- */

static void ord_ref(void *q)
{
    atomic_fetch_add(&((qstate_t *)q)->refs, 1);
}

static void ord_unref(void *q)
{
    qs_unref(q);
}

static void ord_done(void *q, int64_t offset, size_t bytes)
{
    rmq_pq_done(&((qstate_t *)q)->pq, offset, bytes);
}

static void ord_commit(void *q)
{
    qs_commit(q);
}

static const char *ord_master(void *q)
{
    qstate_t *qs = q;
    return qs->sub->route ? rmq_route_master_addr(qs->sub->route, qs->mq.broker_name) : NULL;
}

static const rmq_orderly_ops_t ord_ops = {ord_ref, ord_unref, ord_done, ord_commit, ord_master};

rmq_err_t rmq_push_consumer_start(rmq_push_consumer_t *c)
{
    int expected = CONSUMER_NEW;
    if (!c->subs)
        return RMQ_EINVAL;
    char retry[RMQ_TOPIC_MAX + 1];
    int has_retry = 0;
    for (sub_t *s = c->subs; s; s = s->next)
        has_retry |= rmq_retry_is_retry_topic(s->topic);
    if (c->o.model == RMQ_CLUSTERING && !has_retry && atomic_load(&c->state) == CONSUMER_NEW &&
        rmq_retry_topic_name(c->group, retry, sizeof retry) == RMQ_OK)
        rmq_push_consumer_subscribe(c, retry, "*");   /* failed messages come back here */
    if (!atomic_compare_exchange_strong(&c->state, &expected, CONSUMER_RUNNING))
        return expected == CONSUMER_RUNNING ? RMQ_OK : RMQ_ESHUTDOWN;
    rmq_instance_on_request(c->in, consumer_on_push, c);
    c->workers = rmq_workers_new(c->o.consume_threads, work_run, c);
    if (c->o.orderly && c->workers &&
        !(c->ord = rmq_orderly_new(c->in, c->group, c->o.on_message, c->o.arg, c->o.consume_threads,
                                   c->o.reconsume_delay_ms, c->o.lock_renew_ms, &ord_ops))) {
        rmq_workers_free(c->workers);
        c->workers = NULL;
    }
    rmq_err_t err = c->workers ? rmq_instance_start(c->in) : RMQ_ENOMEM;
    if (err == RMQ_OK)
        err = rmq_instance_post(c->in, consumer_start_on_loop, c);
    if (err != RMQ_OK)
        atomic_store(&c->state, CONSUMER_STOPPED);
    return err;
}

/* ---- shutdown ---------------------------------------------------------------- */

/* One final offset or an address to unregister from, gathered on the loop. */
typedef struct final_op {
    char addr[64];
    char topic[128];
    int32_t queue_id;
    int64_t offset;                 /* < 0: unregister only */
} final_op_t;

typedef struct final_ops {
    consumer_t *c;
    final_op_t *ops;
    size_t n;
} final_ops_t;

/* Appends op unless an identical address-only op exists. */
static void final_add(final_ops_t *f, const final_op_t *op)
{
    if (op->offset < 0)
        for (size_t i = 0; i < f->n; i++)
            if (f->ops[i].offset < 0 && strcmp(f->ops[i].addr, op->addr) == 0)
                return;
    final_op_t *grown = realloc(f->ops, (f->n + 1) * sizeof *grown);
    if (!grown)
        return;
    f->ops = grown;
    f->ops[f->n++] = *op;
}

/* Loop thread: stop pulling and timers; list final commits and brokers. */
static void consumer_quiesce_on_loop(void *arg)
{
    final_ops_t *f = arg;
    consumer_t *c = f->c;
    c->closing = 1;
    struct event **evs[] = {&c->rebalance_ev, &c->heartbeat_ev, &c->commit_ev, &c->retry_ev};
    for (size_t i = 0; i < 4; i++)
        if (*evs[i]) {
            event_free(*evs[i]);
            *evs[i] = NULL;
        }
    for (qstate_t *qs = c->queues; qs; qs = qs->next)
        if (evtimer_pending(qs->retry_ev, NULL)) {
            evtimer_del(qs->retry_ev);
            qs_unref(qs);
        }
    for (sub_t *s = c->subs; s; s = s->next) {
        for (size_t i = 0; s->route && i < s->route->nbrokers; i++) {
            final_op_t op = {.offset = -1};
            const rmq_route_broker_t *b = &s->route->brokers[i];
            snprintf(op.addr, sizeof op.addr, "%s", b->master[0] ? b->master : b->slave);
            if (op.addr[0])
                final_add(f, &op);
        }
    }
}

/* Loop thread (after the consume threads stopped): the final offsets. */
static void consumer_offsets_on_loop(void *arg)
{
    final_ops_t *f = arg;
    consumer_t *c = f->c;
    for (qstate_t *qs = c->queues; qs; qs = qs->next) {
        if (!qs->ready || !qs->sub->route)
            continue;
        if (c->o.model == RMQ_BROADCASTING) {
            qs_commit(qs);
            continue;
        }
        const char *addr = rmq_route_read_addr(qs->sub->route, qs->mq.broker_name);
        if (!addr)
            continue;
        final_op_t op = {.queue_id = qs->mq.queue_id, .offset = rmq_pq_commit_offset(&qs->pq)};
        snprintf(op.addr, sizeof op.addr, "%s", addr);
        snprintf(op.topic, sizeof op.topic, "%s", qs->sub->topic);
        final_add(f, &op);
    }
}

/* User thread: sends one final commit or unregistration and waits. */
static void final_send(consumer_t *c, const final_op_t *op)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__ConsumerOffsetRequest oh = RMQ__CONSUMER_OFFSET_REQUEST__INIT;
    Rmq__UnregisterClientRequest uh = RMQ__UNREGISTER_CLIENT_REQUEST__INIT;
    if (op->offset >= 0) {
        oh.consumer_group = c->group;
        oh.topic = (char *)op->topic;
        oh.queue_id = op->queue_id;
        oh.commit_offset = op->offset;
        req.code = RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET;
        req.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
        req.consumer_offset = &oh;
    } else {
        uh.client_id = (char *)rmq_instance_client_id(c->in);
        uh.consumer_group = c->group;
        req.code = RMQ__REQUEST_CODE__UNREGISTER_CLIENT;
        req.header_case = RMQ__COMMAND__HEADER_UNREGISTER_CLIENT;
        req.unregister_client = &uh;
    }
    rmq_frame_t resp;
    rmq_error_t e;
    rmq_err_t err = rmq_instance_call_sync(c->in, op->addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS,
                                           &resp);
    if (rmq_error_from_rpc(&e, err, &resp, rmq_request_name(req.code)) != RMQ_OK)
        LOG_WARN("consumer: %s to %s at shutdown: %s", rmq_request_name(req.code), op->addr,
                 e.text);
    if (err == RMQ_OK)
        rmq_frame_clear(&resp);
}

/* Loop thread, last pass: delayed redeliveries are discarded. */
static void consumer_stop_on_loop(void *arg)
{
    consumer_t *c = arg;
    while (c->delayed) {
        work_t *w = c->delayed;
        c->delayed = w->dnext;
        event_free(w->ev);
        work_free(w);
    }
}

void rmq_push_consumer_shutdown(rmq_push_consumer_t *c)
{
    int expected = CONSUMER_RUNNING;
    if (!atomic_compare_exchange_strong(&c->state, &expected, CONSUMER_STOPPED))
        return;
    final_ops_t f = {.c = c};
    rmq_instance_run(c->in, consumer_quiesce_on_loop, &f);
    rmq_workers_stop(c->workers);
    rmq_orderly_stop(c->ord);        /* orderly: the message in flight finishes */
    rmq_instance_run(c->in, consumer_offsets_on_loop, &f);
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < f.n; i++)
            if ((f.ops[i].offset >= 0) == (pass == 0))
                final_send(c, &f.ops[i]);
    rmq_orderly_unlock_all(c->ord);  /* after the final offsets: the next owner starts there */
    free(f.ops);
    rmq_instance_stop(c->in, consumer_stop_on_loop, c);
}

void rmq_push_consumer_free(rmq_push_consumer_t *c)
{
    if (!c)
        return;
    rmq_push_consumer_shutdown(c);
    c->closing = 1;
    rmq_workers_free(c->workers);
    rmq_orderly_free(c->ord);
    struct event *evs[] = {c->rebalance_ev, c->heartbeat_ev, c->commit_ev, c->retry_ev};
    for (size_t i = 0; i < 4; i++)
        if (evs[i])
            event_free(evs[i]);
    while (c->delayed) {
        work_t *w = c->delayed;
        c->delayed = w->dnext;
        event_free(w->ev);
        work_free(w);
    }
    while (c->queues) {
        qstate_t *qs = c->queues;
        c->queues = qs->next;
        qs_unref(qs);
    }
    rmq_instance_free(c->in);
    while (c->subs) {
        sub_t *s = c->subs;
        c->subs = s->next;
        rmq_route_free(s->route);
        rmq_tags_free(&s->tags);
        free(s->topic);
        free(s->expr);
        free(s);
    }
    while (c->local) {
        local_off_t *l = c->local;
        c->local = l->next;
        free(l);
    }
    free(c->group);
    free(c);
}

/* ---- introspection ----------------------------------------------------------- */

typedef struct assigned_job {
    consumer_t *c;
    rmq_queue_t *out;
    size_t cap;
    size_t n;
} assigned_job_t;

/* Loop thread: copies the owned queues for rmq_push_consumer_assigned. */
static void consumer_assigned_on_loop(void *arg)
{
    assigned_job_t *j = arg;
    for (qstate_t *qs = j->c->queues; qs; qs = qs->next) {
        if (rmq_retry_is_retry_topic(qs->sub->topic))
            continue;                /* the automatic %RETRY% subscription is not reported */
        if (j->n++ >= j->cap)
            continue;
        rmq_queue_t *q = &j->out[j->n - 1];
        snprintf(q->topic, sizeof q->topic, "%s", qs->sub->topic);
        snprintf(q->broker_name, sizeof q->broker_name, "%s", qs->mq.broker_name);
        q->queue_id = qs->mq.queue_id;
    }
}

size_t rmq_push_consumer_assigned(rmq_push_consumer_t *c, rmq_queue_t *out, size_t cap)
{
    assigned_job_t j = {.c = c, .out = out, .cap = cap};
    if (rmq_instance_run(c->in, consumer_assigned_on_loop, &j) != RMQ_OK)
        return 0;
    return j.n;
}
