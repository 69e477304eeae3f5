/* rmq_pull_consumer.c: the low-level pull consumer: blocking calls from
 * user threads for queue listing, pulls, and offset commits and queries.
 * Routes are cached per topic (under a mutex, any thread) and re-read after
 * route_refresh_ms or when a call to a broker fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_client_int.h"
#include "rmq_time.h"

#define PULL_ROUTE_TTL_MS 30000

typedef struct cached_route {
    struct cached_route *next;
    char *topic;
    rmq_route_t *route;
    int64_t fetched_ms;
} cached_route_t;

struct rmq_pull_consumer {
    char *group;
    rmq_instance_t *in;
    pthread_mutex_t mu;
    cached_route_t *routes;         /* guarded by mu */
};

rmq_pull_consumer_t *rmq_pull_consumer_new_opts(const rmq_pull_consumer_opts_t *opts,
                                                rmq_error_t *err)
{
    if (!opts || !opts->group || !opts->group[0]) {
        rmq_error_set(err, RMQ_EINVAL, 0, "consumer group is required");
        return NULL;
    }
    rmq_pull_consumer_t *c = calloc(1, sizeof *c);
    if (!c || !(c->group = strdup(opts->group))) {
        free(c);
        rmq_error_set(err, RMQ_ENOMEM, 0, "pull consumer");
        return NULL;
    }
    c->in = rmq_instance_new(opts->namesrv, "pull", NULL, opts->security, err);
    if (!c->in) {
        free(c->group);
        free(c);
        return NULL;
    }
    pthread_mutex_init(&c->mu, NULL);
    return c;
}

rmq_pull_consumer_t *rmq_pull_consumer_new(const char *group, const char *namesrv, rmq_error_t *err)
{
    rmq_pull_consumer_opts_t opts = {.group = group, .namesrv = namesrv};
    return rmq_pull_consumer_new_opts(&opts, err);
}

rmq_err_t rmq_pull_consumer_start(rmq_pull_consumer_t *c)
{
    return rmq_instance_start(c->in);
}

void rmq_pull_consumer_shutdown(rmq_pull_consumer_t *c)
{
    rmq_instance_stop(c->in, NULL, NULL);
}

void rmq_pull_consumer_free(rmq_pull_consumer_t *c)
{
    if (!c)
        return;
    rmq_instance_free(c->in);
    while (c->routes) {
        cached_route_t *r = c->routes;
        c->routes = r->next;
        rmq_route_free(r->route);
        free(r->topic);
        free(r);
    }
    pthread_mutex_destroy(&c->mu);
    free(c->group);
    free(c);
}

/* Forgets topic's cached route so the next call re-reads it. */
static void route_forget(rmq_pull_consumer_t *c, const char *topic)
{
    pthread_mutex_lock(&c->mu);
    for (cached_route_t *r = c->routes; r; r = r->next)
        if (strcmp(r->topic, topic) == 0)
            r->fetched_ms = 0;
    pthread_mutex_unlock(&c->mu);
}

/* Copies into addr[cap] where to send queue q's requests (master, or a
 * slave for reads when allowed), fetching the route if stale. */
static rmq_err_t route_addr(rmq_pull_consumer_t *c, const rmq_queue_t *q, int master_only,
                            char *addr, size_t cap, rmq_error_t *e)
{
    int64_t now = rmq_mono_ms();
    pthread_mutex_lock(&c->mu);
    cached_route_t *r = c->routes;
    while (r && strcmp(r->topic, q->topic) != 0)
        r = r->next;
    if (!r || now - r->fetched_ms > PULL_ROUTE_TTL_MS) {
        pthread_mutex_unlock(&c->mu);
        rmq_route_t *fresh = NULL;
        rmq_err_t err = rmq_instance_fetch_route_sync(c->in, q->topic, &fresh, e);
        if (err != RMQ_OK)
            return err;
        pthread_mutex_lock(&c->mu);
        for (r = c->routes; r && strcmp(r->topic, q->topic) != 0;)
            r = r->next;
        if (!r && (r = calloc(1, sizeof *r)) && !(r->topic = strdup(q->topic))) {
            free(r);
            r = NULL;
        }
        if (!r) {
            pthread_mutex_unlock(&c->mu);
            rmq_route_free(fresh);
            return rmq_error_set(e, RMQ_ENOMEM, 0, "route cache");
        }
        if (!r->route) {
            r->next = c->routes;
            c->routes = r;
        }
        rmq_route_free(r->route);
        r->route = fresh;
        r->fetched_ms = now;
    }
    const char *a = master_only ? rmq_route_master_addr(r->route, q->broker_name)
                                : rmq_route_read_addr(r->route, q->broker_name);
    if (a)
        snprintf(addr, cap, "%s", a);
    pthread_mutex_unlock(&c->mu);
    if (!a)
        return rmq_error_set(e, RMQ_ENOTFOUND, 0, "no %s for broker %s of topic %s",
                             master_only ? "master" : "broker", q->broker_name, q->topic);
    return RMQ_OK;
}

/* Sends req about queue q and waits; a non-SUCCESS status becomes the error
 * unless it is in ok_status (may be NULL). On RMQ_OK the caller owns *resp. */
static rmq_err_t queue_call(rmq_pull_consumer_t *c, const rmq_queue_t *q, int master_only,
                            Rmq__Command *req, int timeout_ms, rmq_frame_t *resp, rmq_error_t *e)
{
    char addr[64];
    rmq_err_t err = route_addr(c, q, master_only, addr, sizeof addr, e);
    if (err != RMQ_OK)
        return err;
    err = rmq_instance_call_sync(c->in, addr, req, NULL, 0, timeout_ms, resp);
    if (err != RMQ_OK) {
        route_forget(c, q->topic);
        return rmq_error_set(e, err, 0, "%s to %s", rmq_request_name(req->code), addr);
    }
    rmq_error_set(e, RMQ_OK, 0, NULL);
    return RMQ_OK;
}

rmq_err_t rmq_pull_consumer_queues(rmq_pull_consumer_t *c, const char *topic, rmq_queue_t **out,
                                   size_t *n, rmq_error_t *err)
{
    *out = NULL;
    *n = 0;
    if (!topic || !topic[0] || strlen(topic) >= sizeof((*out)->topic))
        return rmq_error_set(err, RMQ_EINVAL, 0, "bad topic");
    rmq_route_t *route = NULL;
    rmq_err_t e = rmq_instance_fetch_route_sync(c->in, topic, &route, err);
    if (e != RMQ_OK)
        return e;
    rmq_queue_t *qs = calloc(route->nsub ? route->nsub : 1, sizeof *qs);
    if (!qs) {
        rmq_route_free(route);
        return rmq_error_set(err, RMQ_ENOMEM, 0, "queue list");
    }
    for (size_t i = 0; i < route->nsub; i++) {
        snprintf(qs[i].topic, sizeof qs[i].topic, "%s", topic);
        snprintf(qs[i].broker_name, sizeof qs[i].broker_name, "%s", route->sub[i].broker_name);
        qs[i].queue_id = route->sub[i].queue_id;
    }
    *out = qs;
    *n = route->nsub;
    rmq_route_free(route);
    return RMQ_OK;
}

/* Maps a pull answer's status to the public pull status; -1 if an error. */
static int pull_status(int status)
{
    switch (status) {
    case RMQ__STATUS__SUCCESS: return RMQ_PULL_FOUND;
    case RMQ__STATUS__PULL_NOT_FOUND: return RMQ_PULL_NO_NEW_MSG;
    case RMQ__STATUS__PULL_RETRY_IMMEDIATELY: return RMQ_PULL_NO_MATCHED_MSG;
    case RMQ__STATUS__PULL_OFFSET_MOVED: return RMQ_PULL_OFFSET_ILLEGAL;
    default: return -1;
    }
}

/* Fills res from a pull answer (messages decoded and tag-filtered). */
static rmq_err_t pull_fill(const rmq_frame_t *resp, const rmq_queue_t *q, const rmq_tags_t *tags,
                           rmq_pull_result_t *res, rmq_error_t *e)
{
    int st = pull_status(resp->cmd->status);
    if (st < 0)
        return rmq_error_from_rpc(e, RMQ_OK, resp, "PULL_MESSAGE");
    if (resp->cmd->header_case != RMQ__COMMAND__HEADER_PULL_RESP)
        return rmq_error_set(e, RMQ_EPROTO, 0, "pull answer without a pull header");
    const Rmq__PullMessageResponse *pr = resp->cmd->pull_resp;
    res->status = (rmq_pull_status_t)st;
    res->next_offset = pr->next_begin_offset;
    res->min_offset = pr->min_offset;
    res->max_offset = pr->max_offset;
    size_t len = evbuffer_get_length(resp->body);
    if (st != RMQ_PULL_FOUND || len == 0)
        return RMQ_OK;
    rmq_err_t err = rmq_msg_decode_pulled(evbuffer_pullup(resp->body, -1), len, q->broker_name,
                                          tags, &res->msgs, &res->count);
    if (err != RMQ_OK) {
        rmq_pull_result_clear(res);
        return rmq_error_set(e, err, 0, "pulled records from %s:%d", q->broker_name, q->queue_id);
    }
    return RMQ_OK;
}

rmq_err_t rmq_pull_consumer_pull(rmq_pull_consumer_t *c, const rmq_queue_t *q, const char *expr,
                                 int64_t offset, int max, int timeout_ms, rmq_pull_result_t *res,
                                 rmq_error_t *err)
{
    memset(res, 0, sizeof *res);
    rmq_tags_t tags;
    if (rmq_tags_parse(expr, &tags) != RMQ_OK)
        return rmq_error_set(err, RMQ_EINVAL, 0, "bad tag expression \"%s\"", expr);
    Rmq__PullMessageRequest h = RMQ__PULL_MESSAGE_REQUEST__INIT;
    h.consumer_group = c->group;
    h.topic = (char *)q->topic;
    h.queue_id = q->queue_id;
    h.queue_offset = offset;
    h.max_msg_nums = max > 0 ? max : 32;
    h.sys_flag = RMQ__PULL_FLAG__PULL_SUBSCRIPTION;
    h.subscription = (char *)(expr && expr[0] ? expr : "*");
    if (timeout_ms > 0) {
        h.sys_flag |= RMQ__PULL_FLAG__PULL_SUSPEND;
        h.suspend_timeout_millis = timeout_ms;
    }
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__PULL_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_PULL;
    req.pull = &h;
    rmq_frame_t resp;
    rmq_err_t e = queue_call(c, q, 0, &req, (timeout_ms > 0 ? timeout_ms : 0) + RMQ_CONTROL_TIMEOUT_MS,
                             &resp, err);
    if (e == RMQ_OK) {
        e = pull_fill(&resp, q, &tags, res, err);
        rmq_frame_clear(&resp);
    }
    rmq_tags_free(&tags);
    return e;
}

void rmq_pull_result_clear(rmq_pull_result_t *res)
{
    for (size_t i = 0; i < res->count; i++)
        free(res->msgs[i]);
    free(res->msgs);
    res->msgs = NULL;
    res->count = 0;
}

/* QUERY/UPDATE_CONSUMER_OFFSET or GET_MAX/MIN_OFFSET for q; *offset on RMQ_OK. */
static rmq_err_t offset_call(rmq_pull_consumer_t *c, const rmq_queue_t *q, int code,
                             int64_t commit, int64_t *offset, rmq_error_t *e)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__ConsumerOffsetRequest oh = RMQ__CONSUMER_OFFSET_REQUEST__INIT;
    Rmq__QueueRequest qh = RMQ__QUEUE_REQUEST__INIT;
    req.code = code;
    if (code == RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET ||
        code == RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET) {
        oh.consumer_group = c->group;
        oh.topic = (char *)q->topic;
        oh.queue_id = q->queue_id;
        oh.commit_offset = commit;
        req.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
        req.consumer_offset = &oh;
    } else {
        qh.topic = (char *)q->topic;
        qh.queue_id = q->queue_id;
        req.header_case = RMQ__COMMAND__HEADER_QUEUE;
        req.queue = &qh;
    }
    rmq_frame_t resp;
    int master_only = code == RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET;
    rmq_err_t err = queue_call(c, q, master_only, &req, RMQ_CONTROL_TIMEOUT_MS, &resp, e);
    if (err != RMQ_OK)
        return err;
    err = rmq_error_from_rpc(e, RMQ_OK, &resp, rmq_request_name(code));
    if (err == RMQ_ESTATUS && resp.cmd->status == RMQ__STATUS__QUERY_NOT_FOUND)
        err = rmq_error_set(e, RMQ_ENOTFOUND, resp.cmd->status, "no committed offset");
    if (err == RMQ_OK && offset) {
        if (resp.cmd->header_case == RMQ__COMMAND__HEADER_OFFSET_RESP)
            *offset = resp.cmd->offset_resp->offset;
        else
            err = rmq_error_set(e, RMQ_EPROTO, 0, "answer without an offset header");
    }
    rmq_frame_clear(&resp);
    return err;
}

rmq_err_t rmq_pull_consumer_commit(rmq_pull_consumer_t *c, const rmq_queue_t *q, int64_t offset,
                                   rmq_error_t *err)
{
    return offset_call(c, q, RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET, offset, NULL, err);
}

rmq_err_t rmq_pull_consumer_committed(rmq_pull_consumer_t *c, const rmq_queue_t *q,
                                      int64_t *offset, rmq_error_t *err)
{
    return offset_call(c, q, RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, 0, offset, err);
}

rmq_err_t rmq_pull_consumer_max_offset(rmq_pull_consumer_t *c, const rmq_queue_t *q,
                                       int64_t *offset, rmq_error_t *err)
{
    return offset_call(c, q, RMQ__REQUEST_CODE__GET_MAX_OFFSET, 0, offset, err);
}

rmq_err_t rmq_pull_consumer_min_offset(rmq_pull_consumer_t *c, const rmq_queue_t *q,
                                       int64_t *offset, rmq_error_t *err)
{
    return offset_call(c, q, RMQ__REQUEST_CODE__GET_MIN_OFFSET, 0, offset, err);
}
