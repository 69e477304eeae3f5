/* rmq_orderly.c: ordered consumption (see rmq_orderly.h).
 *
 * Each queue (rmq_oq_t) has a FIFO of pulled messages and a "running" flag:
 * at most one job per queue is queued on or running in this layer's own
 * thread pool. The job consumes messages from the head while the lock is
 * fresh, re-queues itself after a batch (fairness between queues), parks
 * the queue for suspend_ms after a reconsume-later, and ends when the FIFO
 * is empty or the lock is stale. The FIFO, the lock state and the flags are
 * under the queue's mutex: the loop adds and locks, a consume thread takes.
 * The list of queues, the timers and the lock requests are loop-thread only. */
#include "rmq_orderly.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_log.h"
#include "rmq_time.h"
#include "rmq_workers.h"

#define LOCK_TRUST_MS 30000          /* local validity after a renewal */
#define LOCK_SOON_MS 200             /* coalescing of on-demand lock requests */
#define BATCH_PER_RUN 32             /* messages per job before yielding */

struct rmq_oq {
    rmq_oq_t *next;                  /* ord->queues; loop thread */
    rmq_orderly_t *ord;
    void *q;
    char topic[RMQ_TOPIC_MAX + 1];
    char broker_name[64];
    int32_t queue_id;
    pthread_mutex_t mu;
    rmq_message_ext_t **msgs;        /* FIFO [head, n) */
    size_t head, n, cap;
    int locked;
    int64_t lock_until_ms;           /* mono */
    int running;                     /* a job is queued, running or suspended */
    int dropping;
    struct event *suspend_ev;        /* loop thread */
};

typedef struct oq_job {
    rmq_work_t w;
    rmq_oq_t *oq;
} oq_job_t;

struct rmq_orderly {
    rmq_instance_t *in;
    char *group;
    rmq_consume_fn fn;
    void *arg;
    int suspend_ms, renew_ms;
    rmq_orderly_ops_t ops;
    rmq_workers_t *workers;
    rmq_oq_t *queues;                /* loop thread */
    struct event *renew_ev, *soon_ev;
    int stopping;                    /* loop thread */
};

static void job_run(rmq_work_t *item, int run, void *arg);

rmq_orderly_t *rmq_orderly_new(rmq_instance_t *in, const char *group, rmq_consume_fn fn, void *arg,
                               int threads, int suspend_ms, int lock_renew_ms, const rmq_orderly_ops_t *ops)
{
    rmq_orderly_t *ord = calloc(1, sizeof(*ord));

    if (!ord)
        return NULL;
    ord->in = in;
    ord->group = strdup(group);
    ord->fn = fn;
    ord->arg = arg;
    ord->suspend_ms = suspend_ms;
    ord->renew_ms = lock_renew_ms;
    ord->ops = *ops;
    ord->workers = rmq_workers_new(threads, job_run, ord);
    if (!ord->group || !ord->workers) {
        rmq_orderly_free(ord);
        return NULL;
    }
    return ord;
}

/* ---- the consume job ----------------------------------------------------- */

/* Queues the job of oq (running already set by the caller). Any thread. */
static void job_push(rmq_oq_t *oq)
{
    oq_job_t *j = calloc(1, sizeof(*j));

    if (!j) {
        pthread_mutex_lock(&oq->mu);
        oq->running = 0;
        pthread_mutex_unlock(&oq->mu);
        LOG_ERROR_RL("orderly consumer: out of memory; queue %s:%d waits for the next pull", oq->broker_name,
                     (int)oq->queue_id);
        return;
    }
    j->oq = oq;
    rmq_workers_push(oq->ord->workers, &j->w);
}

/* Under oq->mu: may a job take the head message now? */
static int can_consume(const rmq_oq_t *oq)
{
    return !oq->dropping && oq->locked && rmq_mono_ms() < oq->lock_until_ms && oq->head < oq->n;
}

static void finish_on_loop(void *arg);
static void suspend_on_loop(void *arg);

/* Consume thread: consumes from the head in order (see the file comment). */
static void job_run(rmq_work_t *item, int run, void *arg)
{
    oq_job_t *j = (oq_job_t *)item;
    rmq_oq_t *oq = j->oq;
    rmq_orderly_t *ord = arg;
    int done = 0, finish;

    free(j);
    pthread_mutex_lock(&oq->mu);
    while (run && can_consume(oq)) {
        rmq_message_ext_t *m = oq->msgs[oq->head];

        pthread_mutex_unlock(&oq->mu);
        rmq_consume_result_t r = ord->fn(m, ord->arg);
        if (r != RMQ_CONSUME_SUCCESS) {
            m->reconsume_times++;
            if (rmq_instance_post(ord->in, suspend_on_loop, oq) == RMQ_OK)
                return;              /* still running: the timer re-queues the job */
            pthread_mutex_lock(&oq->mu);
            break;
        }
        pthread_mutex_lock(&oq->mu);
        oq->head++;
        pthread_mutex_unlock(&oq->mu);
        ord->ops.done(oq->q, m->queue_offset, m->body_len);
        free(m);
        pthread_mutex_lock(&oq->mu);
        if (++done >= BATCH_PER_RUN && can_consume(oq)) {
            pthread_mutex_unlock(&oq->mu);
            job_push(oq);            /* yield to other queues, keep running */
            return;
        }
    }
    oq->running = 0;
    finish = oq->dropping;
    pthread_mutex_unlock(&oq->mu);
    if (finish && rmq_instance_post(ord->in, finish_on_loop, oq) != RMQ_OK)
        LOG_WARN_RL("orderly consumer: queue %s:%d left locked until it expires", oq->broker_name,
                    (int)oq->queue_id);
}

/* Loop thread: the suspension ended; retry the same head message. */
static void suspend_fire(evutil_socket_t fd, short what, void *arg)
{
    rmq_oq_t *oq = arg;

    job_push(oq);
}

/* Loop thread: park oq (running stays set) for suspend_ms. */
static void suspend_on_loop(void *arg)
{
    rmq_oq_t *oq = arg;
    struct timeval tv = {oq->ord->suspend_ms / 1000, (oq->ord->suspend_ms % 1000) * 1000};

    if (oq->ord->stopping) {
        pthread_mutex_lock(&oq->mu);
        oq->running = 0;
        pthread_mutex_unlock(&oq->mu);
        return;
    }
    if (!oq->suspend_ev)
        oq->suspend_ev = evtimer_new(rmq_instance_base(oq->ord->in), suspend_fire, oq);
    if (!oq->suspend_ev || evtimer_add(oq->suspend_ev, &tv) != 0)
        job_push(oq);
}

/* Loop thread: starts the job of oq if it has work and none runs. */
static void kick(rmq_oq_t *oq)
{
    int start;

    pthread_mutex_lock(&oq->mu);
    start = !oq->running && can_consume(oq);
    if (start)
        oq->running = 1;
    pthread_mutex_unlock(&oq->mu);
    if (start)
        job_push(oq);
}

/* ---- locks ------------------------------------------------------------------- */

typedef struct lock_call {
    rmq_orderly_t *ord;
    char addr[64];
} lock_call_t;

static int oq_is(const rmq_oq_t *oq, const Rmq__MessageQueue *mq)
{
    return mq->queue_id == oq->queue_id && !strcmp(mq->topic, oq->topic) && !strcmp(mq->broker_name, oq->broker_name);
}

/* Answer of LOCK_BATCH_MQ from one broker: the queues we hold there. */
static void lock_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    lock_call_t *lc = arg;
    rmq_orderly_t *ord = lc->ord;
    rmq_error_t e;
    const Rmq__LockBatchResponse *lr = NULL;

    if (rmq_error_from_rpc(&e, err, resp, "LOCK_BATCH_MQ") == RMQ_OK &&
        resp->cmd->header_case == RMQ__COMMAND__HEADER_LOCK_BATCH_RESP)
        lr = resp->cmd->lock_batch_resp;
    else if (err != RMQ_ESHUTDOWN)
        LOG_WARN_RL("orderly consumer: %s", e.text);
    if (lr && !ord->stopping) {
        int64_t until = rmq_mono_ms() + LOCK_TRUST_MS;

        for (rmq_oq_t *oq = ord->queues; oq; oq = oq->next) {
            const char *m = ord->ops.master(oq->q);
            int held = 0;

            if (!m || strcmp(m, lc->addr) != 0 || oq->dropping)
                continue;
            for (size_t i = 0; i < lr->n_locked && !held; i++)
                held = oq_is(oq, lr->locked[i]);
            pthread_mutex_lock(&oq->mu);
            if (held && !oq->locked)
                LOG_INFO("orderly consumer %s: locked %s queue %s:%d", rmq_instance_client_id(ord->in), oq->topic,
                         oq->broker_name, (int)oq->queue_id);
            oq->locked = held;
            if (held)
                oq->lock_until_ms = until;
            pthread_mutex_unlock(&oq->mu);
            if (held)
                kick(oq);
        }
    }
    free(lc);
}

/* Builds a LOCK/UNLOCK request for the queues of ord at master addr
 * (not dropping when locking). mqs/ptrs owned by the caller. Loop thread. */
static size_t batch_for(rmq_orderly_t *ord, const char *addr, int locking, Rmq__MessageQueue *mqs,
                        Rmq__MessageQueue **ptrs, size_t cap)
{
    size_t n = 0;

    for (rmq_oq_t *oq = ord->queues; oq && n < cap; oq = oq->next) {
        const char *m = ord->ops.master(oq->q);

        if (!m || strcmp(m, addr) != 0 || (locking && oq->dropping))
            continue;
        rmq__message_queue__init(&mqs[n]);
        mqs[n].topic = oq->topic;
        mqs[n].broker_name = oq->broker_name;
        mqs[n].queue_id = oq->queue_id;
        ptrs[n] = &mqs[n];
        n++;
    }
    return n;
}

/* Sends LOCK_BATCH_MQ to every master that has queues of ours. Loop thread. */
static void lock_all(rmq_orderly_t *ord)
{
    size_t nq = 0;

    for (rmq_oq_t *oq = ord->queues; oq; oq = oq->next)
        nq++;
    if (nq == 0 || ord->stopping)
        return;
    Rmq__MessageQueue *mqs = calloc(nq, sizeof(*mqs));
    Rmq__MessageQueue **ptrs = calloc(nq, sizeof(*ptrs));
    const char **done = calloc(nq, sizeof(*done));
    size_t ndone = 0;

    for (rmq_oq_t *oq = ord->queues; mqs && ptrs && done && oq; oq = oq->next) {
        const char *addr = ord->ops.master(oq->q);
        int seen = 0;

        for (size_t i = 0; addr && i < ndone && !seen; i++)
            seen = !strcmp(done[i], addr);
        if (!addr || seen || oq->dropping)
            continue;
        done[ndone++] = addr;
        Rmq__LockBatchRequest lb = RMQ__LOCK_BATCH_REQUEST__INIT;
        Rmq__Command req = RMQ__COMMAND__INIT;
        lock_call_t *lc = calloc(1, sizeof(*lc));

        if (!lc)
            break;
        lc->ord = ord;
        snprintf(lc->addr, sizeof(lc->addr), "%s", addr);
        lb.consumer_group = ord->group;
        lb.client_id = (char *)rmq_instance_client_id(ord->in);
        lb.n_mqs = batch_for(ord, addr, 1, mqs, ptrs, nq);
        lb.mqs = ptrs;
        req.code = RMQ__REQUEST_CODE__LOCK_BATCH_MQ;
        req.header_case = RMQ__COMMAND__HEADER_LOCK_BATCH;
        req.lock_batch = &lb;
        if (rmq_instance_call(ord->in, lc->addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS, lock_done, lc) != RMQ_OK)
            free(lc);
    }
    free(mqs);
    free(ptrs);
    free(done);
}

static void renew_tick(evutil_socket_t fd, short what, void *arg)
{
    lock_all(arg);
}

/* Loop thread: a lock request within LOCK_SOON_MS (coalesced). */
static void lock_soon(rmq_orderly_t *ord)
{
    struct timeval tv = {0, LOCK_SOON_MS * 1000};

    if (ord->stopping)
        return;
    if (!ord->soon_ev)
        ord->soon_ev = evtimer_new(rmq_instance_base(ord->in), renew_tick, ord);
    if (ord->soon_ev && !evtimer_pending(ord->soon_ev, NULL))
        evtimer_add(ord->soon_ev, &tv);
}

void rmq_orderly_start(rmq_orderly_t *ord)
{
    if (ord)
        ord->renew_ev = rmq_instance_timer(ord->in, ord->renew_ms, renew_tick, ord);
}

static void unlock_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    rmq_error_t e;

    if (rmq_error_from_rpc(&e, err, resp, "UNLOCK_BATCH_MQ") != RMQ_OK && err != RMQ_ESHUTDOWN)
        LOG_WARN_RL("orderly consumer: %s", e.text);
}

/* ---- queues --------------------------------------------------------------------- */

rmq_oq_t *rmq_oq_new(rmq_orderly_t *ord, void *q, const char *topic, const char *broker_name, int32_t queue_id)
{
    rmq_oq_t *oq = calloc(1, sizeof(*oq));

    if (!oq)
        return NULL;
    oq->ord = ord;
    oq->q = q;
    snprintf(oq->topic, sizeof(oq->topic), "%s", topic);
    snprintf(oq->broker_name, sizeof(oq->broker_name), "%s", broker_name);
    oq->queue_id = queue_id;
    pthread_mutex_init(&oq->mu, NULL);
    ord->ops.ref(q);
    oq->next = ord->queues;
    ord->queues = oq;
    lock_soon(ord);
    return oq;
}

int rmq_oq_locked(rmq_oq_t *oq)
{
    int ok;

    pthread_mutex_lock(&oq->mu);
    ok = oq->locked && rmq_mono_ms() < oq->lock_until_ms;
    pthread_mutex_unlock(&oq->mu);
    if (!ok)
        lock_soon(oq->ord);
    return ok;
}

void rmq_oq_add(rmq_oq_t *oq, rmq_message_ext_t **msgs, size_t n)
{
    if (n == 0)
        return;
    pthread_mutex_lock(&oq->mu);
    if (oq->n + n > oq->cap) {
        size_t live = oq->n - oq->head;

        if (live > 0)
            memmove(oq->msgs, oq->msgs + oq->head, live * sizeof(*oq->msgs));
        oq->n = live;
        oq->head = 0;
    }
    if (oq->n + n > oq->cap) {
        size_t cap = (oq->n + n) * 2;
        rmq_message_ext_t **grown = realloc(oq->msgs, cap * sizeof(*grown));

        if (!grown) {
            pthread_mutex_unlock(&oq->mu);
            LOG_ERROR_RL("orderly consumer: out of memory caching %zu messages", n);
            for (size_t i = 0; i < n; i++) {
                oq->ord->ops.done(oq->q, msgs[i]->queue_offset, msgs[i]->body_len);
                free(msgs[i]);
            }
            return;
        }
        oq->msgs = grown;
        oq->cap = cap;
    }
    memcpy(oq->msgs + oq->n, msgs, n * sizeof(*msgs));
    oq->n += n;
    pthread_mutex_unlock(&oq->mu);
    kick(oq);
}

/* Frees oq (already unlinked): its unconsumed messages, timer, lock and
 * its reference to the consumer's queue. */
static void oq_free(rmq_orderly_t *ord, rmq_oq_t *oq)
{
    for (size_t i = oq->head; i < oq->n; i++)
        free(oq->msgs[i]);
    free(oq->msgs);
    if (oq->suspend_ev)
        event_free(oq->suspend_ev);
    pthread_mutex_destroy(&oq->mu);
    ord->ops.unref(oq->q);
    free(oq);
}

/* Loop thread: the dropped queue is idle: commit, unlock, free. */
static void finish_on_loop(void *arg)
{
    rmq_oq_t *oq = arg;
    rmq_orderly_t *ord = oq->ord;
    const char *addr = ord->ops.master(oq->q);

    ord->ops.commit(oq->q);
    if (addr && oq->locked && !ord->stopping) {
        Rmq__LockBatchRequest lb = RMQ__LOCK_BATCH_REQUEST__INIT;
        Rmq__Command req = RMQ__COMMAND__INIT;
        Rmq__MessageQueue mq = RMQ__MESSAGE_QUEUE__INIT, *mqp = &mq;

        mq.topic = oq->topic;
        mq.broker_name = oq->broker_name;
        mq.queue_id = oq->queue_id;
        lb.consumer_group = ord->group;
        lb.client_id = (char *)rmq_instance_client_id(ord->in);
        lb.n_mqs = 1;
        lb.mqs = &mqp;
        req.code = RMQ__REQUEST_CODE__UNLOCK_BATCH_MQ;
        req.header_case = RMQ__COMMAND__HEADER_LOCK_BATCH;
        req.lock_batch = &lb;
        rmq_instance_call(ord->in, addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS, unlock_done, NULL);
        LOG_INFO("orderly consumer %s: released %s queue %s:%d", rmq_instance_client_id(ord->in), oq->topic,
                 oq->broker_name, (int)oq->queue_id);
    }
    for (rmq_oq_t **pp = &ord->queues; *pp; pp = &(*pp)->next)
        if (*pp == oq) {
            *pp = oq->next;
            break;
        }
    oq_free(ord, oq);
}

void rmq_oq_drop(rmq_oq_t *oq)
{
    int idle;

    if (oq->suspend_ev && evtimer_pending(oq->suspend_ev, NULL)) {
        evtimer_del(oq->suspend_ev);     /* a parked retry: nothing in flight */
        pthread_mutex_lock(&oq->mu);
        oq->running = 0;
        pthread_mutex_unlock(&oq->mu);
    }
    pthread_mutex_lock(&oq->mu);
    oq->dropping = 1;
    idle = !oq->running;
    pthread_mutex_unlock(&oq->mu);
    if (idle)
        finish_on_loop(oq);
}

/* ---- shutdown ---------------------------------------------------------------------- */

static void stop_on_loop(void *arg)
{
    rmq_orderly_t *ord = arg;

    ord->stopping = 1;
    if (ord->renew_ev) {
        event_free(ord->renew_ev);
        ord->renew_ev = NULL;
    }
    if (ord->soon_ev) {
        event_free(ord->soon_ev);
        ord->soon_ev = NULL;
    }
    for (rmq_oq_t *oq = ord->queues; oq; oq = oq->next)
        if (oq->suspend_ev && evtimer_pending(oq->suspend_ev, NULL))
            evtimer_del(oq->suspend_ev);
}

void rmq_orderly_stop(rmq_orderly_t *ord)
{
    if (!ord)
        return;
    rmq_instance_run(ord->in, stop_on_loop, ord);
    rmq_workers_stop(ord->workers);
}

typedef struct unlock_set {
    rmq_orderly_t *ord;
    char (*addrs)[64];
    Rmq__MessageQueue *mqs;
    size_t n;
} unlock_set_t;

/* Loop thread: the locked queues and their masters. */
static void collect_on_loop(void *arg)
{
    unlock_set_t *u = arg;
    size_t nq = 0;

    for (rmq_oq_t *oq = u->ord->queues; oq; oq = oq->next)
        nq++;
    u->addrs = calloc(nq + 1, sizeof(*u->addrs));
    u->mqs = calloc(nq + 1, sizeof(*u->mqs));
    for (rmq_oq_t *oq = u->ord->queues; u->addrs && u->mqs && oq; oq = oq->next) {
        const char *addr = u->ord->ops.master(oq->q);

        if (!addr || !oq->locked)
            continue;
        snprintf(u->addrs[u->n], sizeof(u->addrs[u->n]), "%s", addr);
        rmq__message_queue__init(&u->mqs[u->n]);
        u->mqs[u->n].topic = oq->topic;
        u->mqs[u->n].broker_name = oq->broker_name;
        u->mqs[u->n].queue_id = oq->queue_id;
        u->n++;
    }
}

void rmq_orderly_unlock_all(rmq_orderly_t *ord)
{
    unlock_set_t u = {.ord = ord};

    if (!ord)
        return;
    rmq_instance_run(ord->in, collect_on_loop, &u);
    for (size_t i = 0; i < u.n; i++) {
        Rmq__LockBatchRequest lb = RMQ__LOCK_BATCH_REQUEST__INIT;
        Rmq__Command req = RMQ__COMMAND__INIT;
        Rmq__MessageQueue *mqp = &u.mqs[i];
        rmq_frame_t resp;

        lb.consumer_group = ord->group;
        lb.client_id = (char *)rmq_instance_client_id(ord->in);
        lb.n_mqs = 1;
        lb.mqs = &mqp;
        req.code = RMQ__REQUEST_CODE__UNLOCK_BATCH_MQ;
        req.header_case = RMQ__COMMAND__HEADER_LOCK_BATCH;
        req.lock_batch = &lb;
        if (rmq_instance_call_sync(ord->in, u.addrs[i], &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS, &resp) == RMQ_OK)
            rmq_frame_clear(&resp);
    }
    free(u.addrs);
    free(u.mqs);
}

void rmq_orderly_free(rmq_orderly_t *ord)
{
    if (!ord)
        return;
    rmq_workers_free(ord->workers);
    while (ord->queues) {
        rmq_oq_t *oq = ord->queues;

        ord->queues = oq->next;
        oq_free(ord, oq);
    }
    free(ord->group);
    free(ord);
}
