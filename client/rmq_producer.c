/* rmq_producer.c: the producer. User threads turn a message into a send job
 * (properties, unique id and a copy of the body, built on the caller's
 * thread) and post it to the instance loop. On the loop a job waits for its
 * topic's route, picks a queue (round robin over the writable queues of
 * every master, steering around brokers that failed recently, or the
 * user's selector), sends, and on a network error, a timeout or a
 * retryable status tries another broker until its attempts or its deadline
 * run out. Sync sends wait on a condvar for their job; async sends are
 * pipelined on one connection per broker, bounded by max_in_flight. With
 * auto-batching on, an async single message waits, once its queue is
 * picked, in that queue's group (rmq_autobatch.c); a closed group goes as
 * one batch job whose members are the messages' own jobs: it is sent and
 * retried like any batch, and its outcome completes each member with its
 * own offset and ids. Members keep their in-flight slots; the batch job
 * takes none. */
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_autobatch.h"
#include "rmq_client_int.h"
#include "rmq_log.h"
#include "rmq_time.h"

enum { PRODUCER_NEW, PRODUCER_RUNNING, PRODUCER_STOPPED };

typedef struct send_job send_job_t;

/* Loop-thread state of one topic the producer has sent to. */
typedef struct topic_entry {
    struct topic_entry *next;
    rmq_producer_t *p;
    char *topic;
    rmq_route_t *route;             /* NULL until the first answer */
    uint32_t counter;               /* round-robin position */
    int fetching;
    int via_default;                /* the route is the auto-create template's */
    send_job_t *waiting;            /* jobs waiting for the first route */
    send_job_t **waiting_tail;
} topic_entry_t;

/* A broker name to avoid until a monotonic deadline. Loop thread. */
typedef struct fault_entry {
    struct fault_entry *next;
    char name[64];
    int64_t until_ms;
} fault_entry_t;

struct rmq_producer {
    rmq_producer_opts_t o;
    char *group;
    rmq_instance_t *in;
    _Atomic int state;
    /* loop thread */
    topic_entry_t *topics;
    fault_entry_t *faults;
    struct event *refresh_ev;
    struct event *wake_ev;          /* wakes admission waiters once per loop pass */
    rmq_autobatch_t *ab;            /* NULL without auto-batching, and once closing */
    int closing;
    /* any thread */
    _Atomic int in_flight;
    _Atomic int waiters;
    pthread_mutex_t mu;
    pthread_cond_t cv;
};

struct send_job {
    send_job_t *next;
    rmq_producer_t *p;
    const char *topic;              /* these three point into the job's allocation */
    const char *props;
    const uint8_t *body;
    size_t body_len;
    int batch;
    int oneway;
    int32_t flag;
    int count;
    int64_t deadline_ms;
    int64_t born_ms;
    int max_attempts;
    rmq_queue_selector_fn selector;
    void *sel_arg;
    const rmq_message_t *sel_msg;   /* the sync caller's message, for the selector */
    rmq_send_cb cb;
    void *cb_arg;
    char last_failed[64];
    rmq_send_result_t res;
    int auto_batch;                 /* may wait in its queue's auto-batch group */
    rmq_ab_item_t ab_item;          /* its place in that group */
    send_job_t *members;            /* a group's batch: the messages' jobs, linked by next */
};

static void job_attempt(send_job_t *job);

/* ---- options ----------------------------------------------------------- */

/* Replaces zeros in o by the documented defaults. */
static void producer_opts_defaults(rmq_producer_opts_t *o)
{
    if (o->send_timeout_ms <= 0)
        o->send_timeout_ms = 3000;
    if (o->retry_times == 0)
        o->retry_times = 2;
    else if (o->retry_times < 0)
        o->retry_times = 0;
    if (o->route_refresh_ms <= 0)
        o->route_refresh_ms = 30000;
    if (o->fault_avoid_ms <= 0)
        o->fault_avoid_ms = 10000;
    if (o->max_in_flight <= 0)
        o->max_in_flight = 20000;
    if (o->max_message_size <= 0)
        o->max_message_size = 4 << 20;
    if (o->auto_batch_max_msgs < 2) {
        o->auto_batch_max_msgs = 0;
        return;
    }
    if (o->auto_batch_max_bytes <= 0)
        o->auto_batch_max_bytes = 256 << 10;
    if (o->auto_batch_max_bytes > o->max_message_size)
        o->auto_batch_max_bytes = o->max_message_size;
    if (o->auto_batch_linger_ms <= 0)
        o->auto_batch_linger_ms = 10;
}

static void producer_group_send(const rmq_ab_key_t *key, rmq_ab_item_t *items, int n,
                                size_t bytes, void *arg);
static void producer_wake_cb(evutil_socket_t fd, short what, void *arg);

rmq_producer_t *rmq_producer_new(const rmq_producer_opts_t *opts, rmq_error_t *err)
{
    if (!opts || !opts->group || !opts->group[0]) {
        rmq_error_set(err, RMQ_EINVAL, 0, "producer group is required");
        return NULL;
    }
    rmq_producer_t *p = calloc(1, sizeof *p);
    if (!p) {
        rmq_error_set(err, RMQ_ENOMEM, 0, "producer");
        return NULL;
    }
    p->o = *opts;
    producer_opts_defaults(&p->o);
    p->group = strdup(opts->group);
    p->in = rmq_instance_new(opts->namesrv, "producer", NULL, opts->security, err);
    if (!p->group || !p->in) {
        if (!p->group)
            rmq_error_set(err, RMQ_ENOMEM, 0, "producer");
        rmq_instance_free(p->in);
        free(p->group);
        free(p);
        return NULL;
    }
    p->o.group = p->group;
    p->o.namesrv = NULL;
    p->o.security = NULL;
    p->wake_ev = event_new(rmq_instance_base(p->in), -1, 0, producer_wake_cb, p);
    if (!p->wake_ev || (p->o.auto_batch_max_msgs > 0 &&
        !(p->ab = rmq_autobatch_new(rmq_instance_base(p->in), p->o.auto_batch_max_msgs,
                                    (size_t)p->o.auto_batch_max_bytes, p->o.auto_batch_linger_ms,
                                    producer_group_send, p)))) {
        rmq_error_set(err, RMQ_ENOMEM, 0, "producer");
        if (p->wake_ev)
            event_free(p->wake_ev);
        rmq_instance_free(p->in);
        free(p->group);
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cv, NULL);
    return p;
}

/* ---- faults and routes (loop thread) ----------------------------------- */

/* Marks broker name as failed: avoided for fault_avoid_ms. */
static void fault_mark(rmq_producer_t *p, const char *name)
{
    fault_entry_t *f;
    for (f = p->faults; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            break;
    if (!f) {
        f = calloc(1, sizeof *f);
        if (!f)
            return;
        snprintf(f->name, sizeof f->name, "%s", name);
        f->next = p->faults;
        p->faults = f;
    }
    f->until_ms = rmq_mono_ms() + p->o.fault_avoid_ms;
}

/* rmq_route_pick's avoid predicate: 1 while name is in its penalty window. */
static int fault_avoid(const char *name, void *arg)
{
    rmq_producer_t *p = arg;
    int64_t now = rmq_mono_ms();
    for (fault_entry_t *f = p->faults; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f->until_ms > now;
    return 0;
}

/* The entry for topic, created on first use; NULL on ENOMEM. */
static topic_entry_t *topic_get(rmq_producer_t *p, const char *topic)
{
    for (topic_entry_t *t = p->topics; t; t = t->next)
        if (strcmp(t->topic, topic) == 0)
            return t;
    topic_entry_t *t = calloc(1, sizeof *t);
    if (!t || !(t->topic = strdup(topic))) {
        free(t);
        return NULL;
    }
    t->p = p;
    t->counter = (uint32_t)rmq_mono_ns();
    t->waiting_tail = &t->waiting;
    t->next = p->topics;
    p->topics = t;
    return t;
}

static void job_finish(send_job_t *job);

static void topic_route_done(rmq_err_t err, rmq_route_t *route, const rmq_error_t *why, void *arg);

/* The template topic's route (auto-create path): used while the topic has none of its own. */
static void topic_default_done(rmq_err_t err, rmq_route_t *route, const rmq_error_t *why, void *arg)
{
    topic_entry_t *t = arg;
    if (err == RMQ_OK) {
        t->via_default = 1;
        size_t n = 0;
        for (size_t i = 0; i < route->npub; i++)
            if (route->pub[i].queue_id < RMQ_DEFAULT_TOPIC_QUEUES)
                route->pub[n++] = route->pub[i];
        route->npub = n;
    }
    topic_route_done(err, route, why, arg);
}

/* A route answer: install it (if any), then release waiting jobs. A topic
 * the name servers do not know yet is sent via the template topic's route
 * (brokers with autoCreateTopicEnable create it on first send). */
static void topic_route_done(rmq_err_t err, rmq_route_t *route, const rmq_error_t *why, void *arg)
{
    topic_entry_t *t = arg;
    if (err == RMQ_ESTATUS && why->status == RMQ__STATUS__TOPIC_NOT_EXIST && !t->route &&
        !t->via_default && t->topic[0] && strcmp(t->topic, RMQ_DEFAULT_TOPIC) != 0) {
        rmq_instance_fetch_route(t->p->in, RMQ_DEFAULT_TOPIC, topic_default_done, t);
        return;
    }
    t->fetching = 0;
    if (err == RMQ_OK) {
        if (t->route && rmq_route_equal(t->route, route))
            rmq_route_free(route);
        else {
            rmq_route_free(t->route);
            t->route = route;
        }
    } else if (err != RMQ_ESHUTDOWN) {
        LOG_WARN_RL("producer: %s", why->text);
    }
    send_job_t *jobs = t->waiting;
    t->waiting = NULL;
    t->waiting_tail = &t->waiting;
    while (jobs) {
        send_job_t *job = jobs;
        jobs = job->next;
        job->next = NULL;
        if (t->route && !job->p->closing) {
            job_attempt(job);
            continue;
        }
        if (err == RMQ_OK || err == RMQ_ESTATUS)
            rmq_error_set(&job->res.error, RMQ_ENOTFOUND, why->status, "no route info of topic %s",
                          t->topic);
        else
            job->res.error = *why;
        job_finish(job);
    }
}

/* Starts a route query for t unless one is running. */
static void topic_refresh(rmq_producer_t *p, topic_entry_t *t)
{
    if (t->fetching || p->closing)
        return;
    t->fetching = 1;
    rmq_instance_fetch_route(p->in, t->topic, topic_route_done, t);
}

/* Periodic route refresh of every topic in use. */
static void producer_refresh_tick(evutil_socket_t fd, short what, void *arg)
{
    rmq_producer_t *p = arg;
    for (topic_entry_t *t = p->topics; t; t = t->next)
        topic_refresh(p, t);
}

static topic_entry_t *topic_find(rmq_producer_t *p, const char *topic)
{
    for (topic_entry_t *t = p->topics; t; t = t->next)
        if (strcmp(t->topic, topic) == 0)
            return t;
    return NULL;
}

/* ---- jobs -------------------------------------------------------------- */

/* Creates a job holding copies of topic, props and body in one allocation. */
static send_job_t *job_new(rmq_producer_t *p, const char *topic, const char *props,
                           size_t props_len, size_t body_len, int timeout_ms)
{
    size_t tl = strlen(topic);
    send_job_t *job = calloc(1, sizeof *job + tl + 1 + props_len + 1 + body_len);
    if (!job)
        return NULL;
    char *cur = (char *)(job + 1);
    memcpy(cur, topic, tl + 1);
    job->topic = cur;
    cur += tl + 1;
    if (props_len)
        memcpy(cur, props, props_len);
    cur[props_len] = '\0';
    job->props = cur;
    job->body = (const uint8_t *)cur + props_len + 1;
    job->body_len = body_len;
    job->p = p;
    job->count = 1;
    job->born_ms = rmq_wall_ms();
    job->deadline_ms = rmq_mono_ms() + (timeout_ms > 0 ? timeout_ms : p->o.send_timeout_ms);
    job->max_attempts = 1 + p->o.retry_times;
    job->res.queue_id = -1;
    job->res.queue_offset = -1;
    return job;
}

static void batch_finish(send_job_t *bj, const char *ids);

/* Delivers the job's outcome and frees it. */
static void job_deliver(send_job_t *job)
{
    if (job->cb)
        job->cb(&job->res, job->cb_arg);
    free(job);
}

/* Wakes every sender waiting for an in-flight slot. Any thread. */
static void producer_wake(rmq_producer_t *p)
{
    pthread_mutex_lock(&p->mu);
    pthread_cond_broadcast(&p->cv);
    pthread_mutex_unlock(&p->mu);
}

static void producer_wake_cb(evutil_socket_t fd, short what, void *arg)
{
    producer_wake(arg);
}

/* Gives back n in-flight slots; the senders waiting for one are woken at
 * the end of the loop pass (at once off the loop), so the answers of one
 * pass wake them once. */
static void producer_release(rmq_producer_t *p, int n)
{
    atomic_fetch_sub(&p->in_flight, n);
    if (atomic_load(&p->waiters) == 0)
        return;
    if (p->wake_ev && rmq_instance_on_loop(p->in))
        event_active(p->wake_ev, EV_READ, 0);
    else
        producer_wake(p);
}

/* Delivers the job's outcome, releases its in-flight slot and frees it (a
 * group's batch: completes each member instead, see batch_finish). */
static void job_finish(send_job_t *job)
{
    rmq_producer_t *p = job->p;
    if (job->members) {
        batch_finish(job, NULL);
        return;
    }
    job_deliver(job);
    producer_release(p, 1);
}

/* Completes every member of a group's batch from the batch's outcome (ids:
 * the broker's comma-joined offset ids of a stored batch, else NULL): the
 * i-th member was stored at the batch's first queue offset + i. The
 * members' slots are released together, with one wake-up. Frees bj. */
static void batch_finish(send_job_t *bj, const char *ids)
{
    rmq_producer_t *p = bj->p;
    const rmq_send_result_t *br = &bj->res;
    int64_t i = 0;
    send_job_t *m = bj->members;
    while (m) {
        send_job_t *next = m->next;
        rmq_send_result_t *r = &m->res;
        r->error = br->error;
        r->status = br->status;
        memcpy(r->broker_name, br->broker_name, sizeof r->broker_name);
        r->queue_id = br->queue_id;
        r->attempts = br->attempts;
        r->epoch = br->epoch;
        if (br->error.err == RMQ_OK) {
            r->count = 1;
            r->queue_offset = br->queue_offset + i;
            size_t len = ids ? strcspn(ids, ",") : 0;
            snprintf(r->offset_msg_id, sizeof r->offset_msg_id, "%.*s", (int)len, ids ? ids : "");
            ids = ids && ids[len] ? ids + len + 1 : NULL;
        }
        job_deliver(m);
        m = next;
        i++;
    }
    free(bj);
    producer_release(p, (int)i);
}

/* 1 for statuses after which another broker may succeed. Each means the
 * message was not stored, so a retry cannot duplicate it (unlike RocketMQ,
 * SYSTEM_BUSY is retried too: the broker shed load before storing). */
static int status_retryable(int status)
{
    switch (status) {
    case RMQ__STATUS__SYSTEM_ERROR:
    case RMQ__STATUS__SYSTEM_BUSY:
    case RMQ__STATUS__SERVICE_NOT_AVAILABLE:
    case RMQ__STATUS__SERVICE_NOT_AVAILABLE_DISK_FULL:
    case RMQ__STATUS__SERVICE_NOT_AVAILABLE_WRITE_ERROR:
    case RMQ__STATUS__SERVICE_NOT_AVAILABLE_SLAVE:
    case RMQ__STATUS__SERVICE_NOT_AVAILABLE_SHUTDOWN:
    case RMQ__STATUS__IN_SYNC_REPLICAS_NOT_ENOUGH:
    case RMQ__STATUS__TOPIC_NOT_EXIST:
    case RMQ__STATUS__NO_PERMISSION:
        return 1;
    default:
        return 0;
    }
}

/* Maps a stored-message status to the public send status; -1 if it is not one. */
static int status_stored(int status)
{
    switch (status) {
    case RMQ__STATUS__SUCCESS: return RMQ_SEND_OK;
    case RMQ__STATUS__FLUSH_DISK_TIMEOUT: return RMQ_SEND_FLUSH_DISK_TIMEOUT;
    case RMQ__STATUS__FLUSH_SLAVE_TIMEOUT: return RMQ_SEND_FLUSH_SLAVE_TIMEOUT;
    case RMQ__STATUS__SLAVE_NOT_AVAILABLE: return RMQ_SEND_SLAVE_NOT_AVAILABLE;
    default: return -1;
    }
}

/* Fills the result of a stored send from the broker's answer. */
static void job_stored(send_job_t *job, const Rmq__Command *cmd, int stored)
{
    rmq_send_result_t *r = &job->res;
    memset(&r->error, 0, sizeof r->error);
    r->status = (rmq_send_status_t)stored;
    r->error.status = cmd->status;
    r->count = job->count;
    if (cmd->header_case == RMQ__COMMAND__HEADER_SEND_RESP && cmd->send_resp) {
        const Rmq__SendMessageResponse *sr = cmd->send_resp;
        r->queue_id = sr->queue_id;
        r->queue_offset = sr->queue_offset;
        r->epoch = sr->master_epoch;
        if (sr->count > 0)
            r->count = sr->count;
        snprintf(r->offset_msg_id, sizeof r->offset_msg_id, "%.*s",
                 (int)strcspn(sr->msg_id ? sr->msg_id : "", ","), sr->msg_id ? sr->msg_id : "");
    }
}

/* The broker's comma-joined offset ids of a stored batch, or NULL. */
static const char *answer_ids(const Rmq__Command *cmd)
{
    return cmd->header_case == RMQ__COMMAND__HEADER_SEND_RESP && cmd->send_resp
               ? cmd->send_resp->msg_id : NULL;
}

/* One attempt's answer: done, retry elsewhere, or fail. Loop thread. */
static void job_sent(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    send_job_t *job = arg;
    rmq_producer_t *p = job->p;
    if (job->members && p->ab) {
        rmq_ab_key_t key = {job->topic, job->res.broker_name, job->res.queue_id};
        rmq_autobatch_done(p->ab, &key);
    }
    int stored = err == RMQ_OK && resp->cmd ? status_stored(resp->cmd->status) : -1;
    if (stored >= 0) {
        job_stored(job, resp->cmd, stored);
        if (job->members)
            batch_finish(job, answer_ids(resp->cmd));
        else
            job_finish(job);
        return;
    }
    char what[160];
    snprintf(what, sizeof what, "send to %s (attempt %d)", job->res.broker_name, job->res.attempts);
    err = rmq_error_from_rpc(&job->res.error, err, resp, what);
    int retry = err == RMQ_ETIMEDOUT || err == RMQ_ECLOSED || err == RMQ_ECONNECT || err == RMQ_ETLS ||
                (err == RMQ_ESTATUS && status_retryable(job->res.error.status));
    if (!retry || p->closing) {
        job_finish(job);
        return;
    }
    fault_mark(p, job->res.broker_name);
    snprintf(job->last_failed, sizeof job->last_failed, "%s", job->res.broker_name);
    topic_entry_t *t = topic_find(p, job->topic);
    if (t)
        topic_refresh(p, t);
    if (job->selector || job->res.attempts >= job->max_attempts ||
        rmq_mono_ms() >= job->deadline_ms) {
        job_finish(job);
        return;
    }
    job_attempt(job);
}

/* Chooses the queue for this attempt; -1 with the error set if none. */
static int job_pick(send_job_t *job, const rmq_route_t *route, topic_entry_t *t)
{
    if (route->npub == 0) {
        rmq_error_set(&job->res.error, RMQ_ENOTFOUND, 0, "topic %s has no writable queue on a master",
                      job->topic);
        return -1;
    }
    if (!job->selector)
        return rmq_route_pick(route, &t->counter, job->last_failed[0] ? job->last_failed : NULL,
                              fault_avoid, job->p);
    int idx = job->selector((int)route->npub, job->sel_msg, job->sel_arg);
    if (idx < 0 || (size_t)idx >= route->npub) {
        rmq_error_set(&job->res.error, RMQ_EINVAL, 0, "selector returned queue %d of %zu", idx,
                      route->npub);
        return -1;
    }
    return idx;
}

/* Fills the SEND_MESSAGE header for this attempt. */
static void job_header(const send_job_t *job, int32_t queue_id, Rmq__SendMessageRequest *h)
{
    rmq__send_message_request__init(h);
    h->producer_group = job->p->group;
    h->topic = (char *)job->topic;
    h->default_topic = RMQ_DEFAULT_TOPIC;
    h->default_topic_queue_nums = RMQ_DEFAULT_TOPIC_QUEUES;
    h->queue_id = queue_id;
    h->born_timestamp = job->born_ms;
    h->flag = job->flag;
    h->properties = (char *)job->props;
    h->batch = job->batch;
}

/* Milliseconds the job has left; at 0 it is finished with a timeout. */
static int64_t job_time_left(send_job_t *job)
{
    int64_t left = job->deadline_ms - rmq_mono_ms();
    if (left > 0)
        return left;
    if (job->res.error.err == RMQ_OK)
        rmq_error_set(&job->res.error, RMQ_ETIMEDOUT, 0, "send timeout before attempt %d",
                      job->res.attempts + 1);
    job_finish(job);
    return 0;
}

/* Sends the job to queue (broker, queue_id) of route, with left ms to
 * answer. A group's batch counts as in flight to that queue. Loop thread. */
static void job_send(send_job_t *job, const rmq_route_t *route, const char *broker,
                     int32_t queue_id, int64_t left)
{
    rmq_producer_t *p = job->p;
    const char *addr = rmq_route_master_addr(route, broker);
    snprintf(job->res.broker_name, sizeof job->res.broker_name, "%s", broker);
    job->res.queue_id = queue_id;
    job->res.attempts++;
    if (job->members && p->ab) {
        rmq_ab_key_t key = {job->topic, job->res.broker_name, queue_id};
        rmq_autobatch_sent(p->ab, &key);
    }
    if (!addr) {
        job_sent(RMQ_ECONNECT, NULL, job);
        return;
    }
    Rmq__SendMessageRequest h;
    job_header(job, queue_id, &h);
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = job->batch ? RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE : RMQ__REQUEST_CODE__SEND_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_SEND;
    req.send = &h;
    rmq_err_t err;
    if (job->oneway) {
        rmq_client_t *cli = rmq_instance_conn(p->in, addr);
        err = cli ? rmq_client_oneway(cli, &req, job->body, job->body_len) : RMQ_ESHUTDOWN;
        rmq_error_set(&job->res.error, err, 0, err ? "oneway send" : NULL);
        job_finish(job);
        return;
    }
    err = rmq_instance_call(p->in, addr, &req, job->body, job->body_len, (int)left, job_sent, job);
    if (err != RMQ_OK)
        job_sent(err, NULL, job);
}

/* Puts an auto-batch message into the group of queue mq; 0 if it must go
 * alone (no accumulator any more, or out of memory). */
static int job_enqueue(send_job_t *job, const rmq_mq_t *mq)
{
    rmq_producer_t *p = job->p;
    rmq_ab_key_t key = {job->topic, mq->broker_name, mq->queue_id};
    return p->ab && rmq_autobatch_add(p->ab, &key, &job->ab_item) == RMQ_OK;
}

/* Sends the job once more, to a queue chosen now (an auto-batch message
 * joins that queue's group instead). Loop thread. */
static void job_attempt(send_job_t *job)
{
    topic_entry_t *t = topic_find(job->p, job->topic);
    int64_t left = job_time_left(job);
    if (left <= 0)
        return;
    int idx = job_pick(job, t->route, t);
    if (idx < 0) {
        job_finish(job);
        return;
    }
    const rmq_mq_t *mq = &t->route->pub[idx];
    if (job->auto_batch && job_enqueue(job, mq))
        return;
    job_send(job, t->route, mq->broker_name, mq->queue_id, left);
}

/* The send job of the member of a group that item is. */
static send_job_t *job_of_item(rmq_ab_item_t *item)
{
    return (send_job_t *)((char *)item - offsetof(send_job_t, ab_item));
}

/* A batch job for a closed group: members linked in order, entries encoded
 * into its body, the earliest member deadline. NULL on ENOMEM. */
static send_job_t *batch_of_group(rmq_producer_t *p, const char *topic, rmq_ab_item_t *items,
                                  int n, size_t bytes)
{
    send_job_t *bj = job_new(p, topic, "", 0, bytes, 0);
    if (!bj)
        return NULL;
    bj->batch = 1;
    bj->count = n;
    bj->born_ms = job_of_item(items)->born_ms;
    bj->deadline_ms = job_of_item(items)->deadline_ms;
    send_job_t **tail = &bj->members;
    uint8_t *out = (uint8_t *)bj->body;
    for (rmq_ab_item_t *it = items; it; it = it->next) {
        send_job_t *m = job_of_item(it);
        rmq_batch_entry_t be = {.flag = m->flag, .body = m->body,
                                .body_len = (uint32_t)m->body_len, .properties = m->props,
                                .properties_len = (uint16_t)strlen(m->props)};
        out += rmq_batch_encode(&be, out);
        if (m->deadline_ms < bj->deadline_ms)
            bj->deadline_ms = m->deadline_ms;
        *tail = m;
        tail = &m->next;
    }
    return bj;
}

/* rmq_autobatch's send function: the group goes to its queue as one batch
 * (fails as a whole once the producer is closing or out of memory). */
static void producer_group_send(const rmq_ab_key_t *key, rmq_ab_item_t *items, int n,
                                size_t bytes, void *arg)
{
    rmq_producer_t *p = arg;
    send_job_t *bj = batch_of_group(p, key->topic, items, n, bytes);
    if (!bj) {
        for (rmq_ab_item_t *it = items, *next; it; it = next) {
            next = it->next;
            send_job_t *m = job_of_item(it);
            rmq_error_set(&m->res.error, RMQ_ENOMEM, 0, "auto-batch of %d messages", n);
            job_finish(m);
        }
        return;
    }
    if (p->closing) {
        rmq_error_set(&bj->res.error, RMQ_ESHUTDOWN, 0,
                      "producer shut down before its auto-batch to %s queue %d was sent",
                      key->broker_name, key->queue_id);
        job_finish(bj);
        return;
    }
    topic_entry_t *t = topic_find(p, key->topic);
    int64_t left = job_time_left(bj);
    if (left > 0)
        job_send(bj, t->route, key->broker_name, key->queue_id, left);
}

/* Loop-thread entry of a posted job: route first, then the first attempt. */
static void job_start(void *arg)
{
    send_job_t *job = arg;
    rmq_producer_t *p = job->p;
    if (p->closing) {
        rmq_error_set(&job->res.error, RMQ_ESHUTDOWN, 0, "producer is shutting down");
        job_finish(job);
        return;
    }
    topic_entry_t *t = topic_get(p, job->topic);
    if (!t) {
        rmq_error_set(&job->res.error, RMQ_ENOMEM, 0, "topic entry");
        job_finish(job);
        return;
    }
    if (t->route) {
        job_attempt(job);
        return;
    }
    *t->waiting_tail = job;
    t->waiting_tail = &job->next;
    topic_refresh(p, t);
}

/* ---- building jobs (user threads) -------------------------------------- */

/* A job for one message: validated, properties built, body copied. */
static send_job_t *job_from_message(rmq_producer_t *p, const rmq_message_t *msg, int timeout_ms,
                                    rmq_error_t *e)
{
    if (rmq_msg_validate(msg, (size_t)p->o.max_message_size, e) != RMQ_OK)
        return NULL;
    char uniq[33];
    rmq_msg_uniq_id(uniq);
    rmq_props_buf_t pb = {0};
    rmq_err_t err = rmq_msg_props_build(msg, uniq, &pb);
    if (err != RMQ_OK) {
        rmq_props_buf_free(&pb);
        rmq_error_set(e, err, 0, "message properties");
        return NULL;
    }
    send_job_t *job = job_new(p, msg->topic, pb.data, pb.len, msg->body_len, timeout_ms);
    rmq_props_buf_free(&pb);
    if (!job) {
        rmq_error_set(e, RMQ_ENOMEM, 0, "send job");
        return NULL;
    }
    memcpy((uint8_t *)job->body, msg->body, msg->body_len);
    job->flag = msg->flag;
    memcpy(job->res.msg_id, uniq, sizeof uniq);
    return job;
}

/* Encodes one batch entry for msg at out (NULL: only measures); returns its size. */
static size_t batch_entry_put(const rmq_message_t *msg, uint8_t *out, char uniq_out[33],
                              rmq_err_t *err)
{
    char uniq[33];
    rmq_msg_uniq_id(uniq);
    rmq_props_buf_t pb = {0};
    *err = rmq_msg_props_build(msg, uniq, &pb);
    size_t n = rmq_batch_entry_size(msg->body_len, pb.len);
    if (*err == RMQ_OK && out) {
        rmq_batch_entry_t be = {.flag = msg->flag, .body = msg->body,
                                .body_len = (uint32_t)msg->body_len, .properties = pb.data,
                                .properties_len = (uint16_t)pb.len};
        rmq_batch_encode(&be, out);
    }
    if (uniq_out)
        memcpy(uniq_out, uniq, 33);
    rmq_props_buf_free(&pb);
    return n;
}

/* A job for a batch: every message validated, entries encoded into the body. */
static send_job_t *job_from_batch(rmq_producer_t *p, const rmq_message_t *msgs, size_t n,
                                  int timeout_ms, rmq_error_t *e)
{
    if (n == 0 || !msgs)
        return rmq_error_set(e, RMQ_EINVAL, 0, "empty batch"), NULL;
    size_t total = 0;
    for (size_t i = 0; i < n; i++) {
        if (rmq_msg_validate(&msgs[i], (size_t)p->o.max_message_size, e) != RMQ_OK)
            return NULL;
        if (strcmp(msgs[i].topic, msgs[0].topic) != 0)
            return rmq_error_set(e, RMQ_EINVAL, 0, "batch mixes topics %s and %s", msgs[0].topic,
                                 msgs[i].topic), NULL;
        rmq_err_t err;
        total += batch_entry_put(&msgs[i], NULL, NULL, &err);
        if (err != RMQ_OK)
            return rmq_error_set(e, err, 0, "properties of batch message %zu", i), NULL;
    }
    if (total > (size_t)p->o.max_message_size)
        return rmq_error_set(e, RMQ_ETOOBIG, 0, "batch of %zu bytes over the %d limit", total,
                             p->o.max_message_size), NULL;
    send_job_t *job = job_new(p, msgs[0].topic, "", 0, total, timeout_ms);
    if (!job)
        return rmq_error_set(e, RMQ_ENOMEM, 0, "send job"), NULL;
    uint8_t *out = (uint8_t *)job->body;
    for (size_t i = 0; i < n; i++) {
        rmq_err_t err;
        out += batch_entry_put(&msgs[i], out, i == 0 ? job->res.msg_id : NULL, &err);
    }
    job->batch = 1;
    job->count = (int)n;
    return job;
}

/* Marks an async single message for auto-batching when the producer has it
 * on and the broker's batch path stores the message as it is: not delayed
 * (DELAY, __STARTDELIVERTIME), not a transaction half (TRAN_MSG), and no
 * bigger than a group may be. */
static void job_auto_batch(rmq_producer_t *p, send_job_t *job)
{
    static const char *const alone[] = {RMQ_PROP_DELAY, RMQ_PROP_DELIVER_AT, RMQ_PROP_TRAN_MSG};
    if (p->o.auto_batch_max_msgs == 0)
        return;
    size_t plen = strlen(job->props), vlen;
    job->ab_item.bytes = rmq_batch_entry_size(job->body_len, plen);
    if (job->ab_item.bytes > (size_t)p->o.auto_batch_max_bytes)
        return;
    for (size_t i = 0; i < sizeof alone / sizeof alone[0]; i++)
        if (rmq_props_get(job->props, plen, alone[i], &vlen))
            return;
    job->auto_batch = 1;
}

/* ---- admission and waiting ---------------------------------------------- */

/* Takes an in-flight slot, waiting up to the job's deadline when full
 * (never on the loop thread). RMQ_EBUSY if none freed in time. */
static rmq_err_t producer_admit(rmq_producer_t *p, int64_t deadline_ms)
{
    if (atomic_load(&p->state) != PRODUCER_RUNNING)
        return RMQ_ESHUTDOWN;
    if (atomic_fetch_add(&p->in_flight, 1) < p->o.max_in_flight)
        return RMQ_OK;
    atomic_fetch_sub(&p->in_flight, 1);
    if (rmq_instance_on_loop(p->in))
        return RMQ_EBUSY;
    rmq_err_t err = RMQ_EBUSY;
    atomic_fetch_add(&p->waiters, 1);
    pthread_mutex_lock(&p->mu);
    for (;;) {
        if (atomic_fetch_add(&p->in_flight, 1) < p->o.max_in_flight) {
            err = RMQ_OK;
            break;
        }
        atomic_fetch_sub(&p->in_flight, 1);
        int64_t left = deadline_ms - rmq_mono_ms();
        if (left <= 0 || atomic_load(&p->state) != PRODUCER_RUNNING)
            break;
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        int64_t wait = left < 50 ? left : 50;
        ts.tv_nsec += (long)(wait % 1000) * 1000000L;
        ts.tv_sec += wait / 1000 + ts.tv_nsec / 1000000000L;
        ts.tv_nsec %= 1000000000L;
        pthread_cond_timedwait(&p->cv, &p->mu, &ts);
    }
    pthread_mutex_unlock(&p->mu);
    atomic_fetch_sub(&p->waiters, 1);
    return err;
}

/* Admits and posts job; on failure frees it and returns why. */
static rmq_err_t producer_submit(rmq_producer_t *p, send_job_t *job, rmq_error_t *e)
{
    rmq_err_t err = producer_admit(p, job->deadline_ms);
    if (err == RMQ_OK) {
        err = rmq_instance_post(p->in, job_start, job);
        if (err != RMQ_OK)
            atomic_fetch_sub(&p->in_flight, 1);
    }
    if (err != RMQ_OK) {
        free(job);
        return rmq_error_set(e, err, 0, err == RMQ_EBUSY ? "max_in_flight sends pending"
                                                         : "producer not running");
    }
    return RMQ_OK;
}

typedef struct sync_wait {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
    rmq_send_result_t *res;
} sync_wait_t;

/* Completion of a sync send: copies the result to the waiting caller. */
static void sync_send_done(const rmq_send_result_t *res, void *arg)
{
    sync_wait_t *w = arg;
    pthread_mutex_lock(&w->mu);
    *w->res = *res;
    w->done = 1;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
}

/* Submits job and blocks until it completes; returns res->error.err. */
static rmq_err_t producer_send_wait(rmq_producer_t *p, send_job_t *job, rmq_send_result_t *res)
{
    if (rmq_instance_on_loop(p->in)) {
        free(job);
        return rmq_error_set(&res->error, RMQ_EINVAL, 0, "sync send from the loop thread");
    }
    sync_wait_t w = {.res = res};
    pthread_mutex_init(&w.mu, NULL);
    pthread_cond_init(&w.cv, NULL);
    job->cb = sync_send_done;
    job->cb_arg = &w;
    if (producer_submit(p, job, &res->error) == RMQ_OK) {
        pthread_mutex_lock(&w.mu);
        while (!w.done)
            pthread_cond_wait(&w.cv, &w.mu);
        pthread_mutex_unlock(&w.mu);
    }
    pthread_mutex_destroy(&w.mu);
    pthread_cond_destroy(&w.cv);
    return res->error.err;
}

/* ---- public API ---------------------------------------------------------- */

rmq_err_t rmq_producer_start(rmq_producer_t *p)
{
    int expected = PRODUCER_NEW;
    if (!atomic_compare_exchange_strong(&p->state, &expected, PRODUCER_RUNNING))
        return expected == PRODUCER_RUNNING ? RMQ_OK : RMQ_ESHUTDOWN;
    p->refresh_ev = rmq_instance_timer(p->in, p->o.route_refresh_ms, producer_refresh_tick, p);
    rmq_err_t err = p->refresh_ev ? rmq_instance_start(p->in) : RMQ_ENOMEM;
    if (err != RMQ_OK)
        atomic_store(&p->state, PRODUCER_STOPPED);
    return err;
}

rmq_err_t rmq_producer_send(rmq_producer_t *p, const rmq_message_t *msg, int timeout_ms,
                            rmq_send_result_t *res)
{
    memset(res, 0, sizeof *res);
    send_job_t *job = job_from_message(p, msg, timeout_ms, &res->error);
    return job ? producer_send_wait(p, job, res) : res->error.err;
}

rmq_err_t rmq_producer_send_select(rmq_producer_t *p, const rmq_message_t *msg,
                                   rmq_queue_selector_fn selector, void *arg, int timeout_ms,
                                   rmq_send_result_t *res)
{
    memset(res, 0, sizeof *res);
    if (!selector)
        return rmq_error_set(&res->error, RMQ_EINVAL, 0, "no selector");
    send_job_t *job = job_from_message(p, msg, timeout_ms, &res->error);
    if (!job)
        return res->error.err;
    job->selector = selector;
    job->sel_arg = arg;
    job->sel_msg = msg;
    return producer_send_wait(p, job, res);
}

rmq_err_t rmq_producer_send_async(rmq_producer_t *p, const rmq_message_t *msg, int timeout_ms,
                                  rmq_send_cb cb, void *arg)
{
    rmq_error_t e;
    send_job_t *job = job_from_message(p, msg, timeout_ms, &e);
    if (!job)
        return e.err;
    job->cb = cb;
    job->cb_arg = arg;
    job_auto_batch(p, job);
    return producer_submit(p, job, &e);
}

rmq_err_t rmq_producer_send_oneway(rmq_producer_t *p, const rmq_message_t *msg)
{
    rmq_error_t e;
    send_job_t *job = job_from_message(p, msg, 0, &e);
    if (!job)
        return e.err;
    job->oneway = 1;
    return producer_submit(p, job, &e);
}

rmq_err_t rmq_producer_send_batch(rmq_producer_t *p, const rmq_message_t *msgs, size_t n,
                                  int timeout_ms, rmq_send_result_t *res)
{
    memset(res, 0, sizeof *res);
    send_job_t *job = job_from_batch(p, msgs, n, timeout_ms, &res->error);
    return job ? producer_send_wait(p, job, res) : res->error.err;
}

rmq_err_t rmq_producer_send_batch_async(rmq_producer_t *p, const rmq_message_t *msgs, size_t n,
                                        int timeout_ms, rmq_send_cb cb, void *arg)
{
    rmq_error_t e;
    send_job_t *job = job_from_batch(p, msgs, n, timeout_ms, &e);
    if (!job)
        return e.err;
    job->cb = cb;
    job->cb_arg = arg;
    return producer_submit(p, job, &e);
}

int rmq_producer_in_flight(const rmq_producer_t *p)
{
    return atomic_load(&((rmq_producer_t *)p)->in_flight);
}

/* Loop thread, last pass: no more timers or route queries; messages still
 * waiting in auto-batch groups fail with RMQ_ESHUTDOWN. */
static void producer_stop_on_loop(void *arg)
{
    rmq_producer_t *p = arg;
    p->closing = 1;
    if (p->refresh_ev)
        event_free(p->refresh_ev);
    p->refresh_ev = NULL;
    rmq_autobatch_t *ab = p->ab;
    p->ab = NULL;
    rmq_autobatch_free(ab);
    event_free(p->wake_ev);
    p->wake_ev = NULL;
}

void rmq_producer_shutdown(rmq_producer_t *p)
{
    int expected = PRODUCER_RUNNING;
    if (!atomic_compare_exchange_strong(&p->state, &expected, PRODUCER_STOPPED))
        return;
    int64_t deadline = rmq_mono_ms() + p->o.send_timeout_ms;
    while (atomic_load(&p->in_flight) > 0 && rmq_mono_ms() < deadline)
        rmq_sleep_ms(5);
    rmq_instance_stop(p->in, producer_stop_on_loop, p);
}

void rmq_producer_free(rmq_producer_t *p)
{
    if (!p)
        return;
    rmq_producer_shutdown(p);
    p->closing = 1;
    if (p->refresh_ev)
        event_free(p->refresh_ev);
    p->refresh_ev = NULL;
    rmq_autobatch_t *ab = p->ab;
    p->ab = NULL;
    rmq_autobatch_free(ab);
    if (p->wake_ev)
        event_free(p->wake_ev);
    p->wake_ev = NULL;
    rmq_instance_free(p->in);
    while (p->topics) {
        topic_entry_t *t = p->topics;
        p->topics = t->next;
        rmq_route_free(t->route);
        free(t->topic);
        free(t);
    }
    while (p->faults) {
        fault_entry_t *f = p->faults;
        p->faults = f->next;
        free(f);
    }
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cv);
    free(p->group);
    free(p);
}
