/* rmq_instance.c: one client instance = one event-loop thread, the
 * connections to brokers and name servers (an rmq_client_pool), the
 * name-server list, the client id, and the TLS context and signing
 * credentials its connections use. Producers and consumers each own one.
 * User threads reach the loop only through rmq_instance_post / _run /
 * _call_sync; everything else here runs on the loop thread. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmq_client_int.h"
#include "rmq_log.h"
#include "rmq_security.h"

struct rmq_instance {
    struct event_base *base;
    rmq_loop_poster_t *poster;
    rmq_client_pool_t *pool;        /* loop thread; NULL once closing */
    pthread_t thread;
    int started;                    /* set and read by the owner thread */
    _Atomic int stopped;
    char **ns;                      /* name-server addresses */
    size_t nns;
    size_t ns_next;                 /* loop thread: where the next route query starts */
    char client_id[160];
    rmq_handler_fn on_req;
    void *on_req_arg;
    rmq_security_t sec;             /* own TLS context and credentials (from opts); the pool
                                       borrows them */
};

static _Atomic uint32_t instance_seq;

/* Splits "a:p;b:p" into in->ns; RMQ_EINVAL if no address is left. */
static rmq_err_t ns_parse(rmq_instance_t *in, const char *list)
{
    char *copy = strdup(list);
    if (!copy)
        return RMQ_ENOMEM;
    rmq_err_t err = RMQ_OK;
    char *save = NULL;
    for (char *tok = strtok_r(copy, ";, ", &save); tok; tok = strtok_r(NULL, ";, ", &save)) {
        char host[256];
        int port;
        if (rmq_addr_split(tok, host, sizeof host, &port) != RMQ_OK) {
            err = RMQ_EINVAL;
            break;
        }
        char **grown = realloc(in->ns, (in->nns + 1) * sizeof *grown);
        if (!grown || !(grown[in->nns] = strdup(tok))) {
            if (grown)
                in->ns = grown;
            err = RMQ_ENOMEM;
            break;
        }
        in->ns = grown;
        in->nns++;
    }
    free(copy);
    if (err == RMQ_OK && in->nns == 0)
        err = RMQ_EINVAL;
    return err;
}

_Static_assert((int)RMQ_CLIENT_TLS_ENFORCING == (int)RMQ_TLS_ENFORCING, "tls modes differ");

static const rmq_client_sec_names_t opts_names = {
    "tls_mode", "tls_ca_path", "tls_cert_path", "tls_key_path", "access_key", "secret_key",
};

/* Points copts at the TLS context and signer built into in->sec from so,
 * or (so NULL) at the process-wide ones from the environment. */
static rmq_err_t instance_security(rmq_instance_t *in, const rmq_security_opts_t *so,
                                   rmq_client_opts_t *copts, rmq_error_t *e)
{
    char why[512];
    rmq_err_t err;

    if (!so) {
        err = rmq_security_from_env(copts, why, sizeof why);
        return err == RMQ_OK ? RMQ_OK : rmq_error_set(e, err, 0, "%s", why);
    }
    if (so->tls_mode != RMQ_CLIENT_TLS_DISABLED && so->tls_mode != RMQ_CLIENT_TLS_ENFORCING)
        return rmq_error_set(e, RMQ_EINVAL, 0, "security opts: tls_mode=%d: want "
                             "RMQ_CLIENT_TLS_DISABLED or RMQ_CLIENT_TLS_ENFORCING", (int)so->tls_mode);
    rmq_client_sec_config_t cfg = {
        .tls = {.mode = (int)so->tls_mode, .ca_path = (char *)so->tls_ca_path,
                .cert_path = (char *)so->tls_cert_path, .key_path = (char *)so->tls_key_path},
        .access_key = (char *)so->access_key,
        .secret_key = (char *)so->secret_key,
    };
    err = rmq_security_init_client(&in->sec, &cfg, &opts_names, why, sizeof why);
    if (err != RMQ_OK)
        return rmq_error_set(e, err, 0, "security opts: %s", why);
    rmq_security_client_opts(&in->sec, copts);
    return RMQ_OK;
}

rmq_instance_t *rmq_instance_new(const char *namesrv, const char *kind, const char *instance_name,
                                 const rmq_security_opts_t *sec, rmq_error_t *e)
{
    if (!namesrv || !namesrv[0]) {
        rmq_error_set(e, RMQ_EINVAL, 0, "no name server address");
        return NULL;
    }
    rmq_loop_global_init();
    rmq_instance_t *in = calloc(1, sizeof *in);
    if (!in) {
        rmq_error_set(e, RMQ_ENOMEM, 0, "client instance");
        return NULL;
    }
    rmq_err_t err = ns_parse(in, namesrv);
    if (err != RMQ_OK) {
        rmq_error_set(e, err, 0, "name server list \"%s\" must be host:port;host:port", namesrv);
        rmq_instance_free(in);
        return NULL;
    }
    char host[64] = "localhost";
    gethostname(host, sizeof host - 1);
    uint32_t seq = atomic_fetch_add(&instance_seq, 1);
    if (instance_name && instance_name[0])
        snprintf(in->client_id, sizeof in->client_id, "%s@%d@%s@%s", host, (int)getpid(), kind,
                 instance_name);
    else
        snprintf(in->client_id, sizeof in->client_id, "%s@%d@%s@%u", host, (int)getpid(), kind,
                 seq);
    in->base = event_base_new();
    in->poster = in->base ? rmq_loop_poster_new(in->base) : NULL;
    rmq_client_opts_t copts = {.name = kind};
    if (instance_security(in, sec, &copts, e) != RMQ_OK) {
        rmq_instance_free(in);
        return NULL;
    }
    in->pool = in->base ? rmq_client_pool_new(in->base, &copts) : NULL;
    if (!in->poster || !in->pool) {
        rmq_error_set(e, RMQ_ENOMEM, 0, "event base");
        rmq_instance_free(in);
        return NULL;
    }
    return in;
}

/* The loop thread's body: runs the base until rmq_instance_stop breaks it. */
static void *instance_thread(void *arg)
{
    rmq_instance_t *in = arg;
    event_base_loop(in->base, EVLOOP_NO_EXIT_ON_EMPTY);
    return NULL;
}

rmq_err_t rmq_instance_start(rmq_instance_t *in)
{
    if (in->started)
        return in->stopped ? RMQ_ESHUTDOWN : RMQ_OK;
    if (pthread_create(&in->thread, NULL, instance_thread, in) != 0)
        return RMQ_ENOMEM;
    in->started = 1;
    return RMQ_OK;
}

typedef struct stop_job {
    rmq_instance_t *in;
    rmq_loop_fn fn;
    void *arg;
} stop_job_t;

/* Loop thread: the owner's last words, then every connection closes. */
static void instance_stop_on_loop(void *arg)
{
    stop_job_t *job = arg;
    if (job->fn)
        job->fn(job->arg);
    rmq_client_pool_t *pool = job->in->pool;
    job->in->pool = NULL;
    rmq_client_pool_free(pool);
    event_base_loopbreak(job->in->base);
}

void rmq_instance_stop(rmq_instance_t *in, rmq_loop_fn fn, void *arg)
{
    if (!in->started || in->stopped)
        return;
    stop_job_t job = {in, fn, arg};
    if (rmq_loop_post(in->poster, instance_stop_on_loop, &job) == RMQ_OK)
        pthread_join(in->thread, NULL);
    in->stopped = 1;
}

void rmq_instance_free(rmq_instance_t *in)
{
    if (!in)
        return;
    if (in->started && !in->stopped)
        rmq_instance_stop(in, NULL, NULL);
    if (in->poster)
        rmq_loop_poster_free(in->poster);
    if (in->pool)
        rmq_client_pool_free(in->pool);
    if (in->base) {
        event_base_loop(in->base, EVLOOP_NONBLOCK);
        event_base_free(in->base);
    }
    rmq_security_deinit(&in->sec);
    for (size_t i = 0; i < in->nns; i++)
        free(in->ns[i]);
    free(in->ns);
    free(in);
}

struct event_base *rmq_instance_base(rmq_instance_t *in)
{
    return in->base;
}

const char *rmq_instance_client_id(const rmq_instance_t *in)
{
    return in->client_id;
}

int rmq_instance_on_loop(const rmq_instance_t *in)
{
    return in->started && pthread_equal(pthread_self(), in->thread);
}

rmq_err_t rmq_instance_post(rmq_instance_t *in, rmq_loop_fn fn, void *arg)
{
    if (!in->started || in->stopped)
        return RMQ_ESHUTDOWN;
    return rmq_loop_post(in->poster, fn, arg);
}

typedef struct run_job {
    rmq_loop_fn fn;
    void *arg;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int done;
} run_job_t;

/* Signals the waiter of a run job. */
static void run_job_done(run_job_t *job)
{
    pthread_mutex_lock(&job->mu);
    job->done = 1;
    pthread_cond_signal(&job->cv);
    pthread_mutex_unlock(&job->mu);
}

/* Waits until run_job_done; then tears the job's sync objects down. */
static void run_job_wait(run_job_t *job)
{
    pthread_mutex_lock(&job->mu);
    while (!job->done)
        pthread_cond_wait(&job->cv, &job->mu);
    pthread_mutex_unlock(&job->mu);
    pthread_mutex_destroy(&job->mu);
    pthread_cond_destroy(&job->cv);
}

/* Loop thread: runs the job, then wakes its waiter. */
static void run_job_on_loop(void *arg)
{
    run_job_t *job = arg;
    job->fn(job->arg);
    run_job_done(job);
}

rmq_err_t rmq_instance_run(rmq_instance_t *in, rmq_loop_fn fn, void *arg)
{
    if (rmq_instance_on_loop(in))
        return RMQ_EINVAL;
    run_job_t job = {.fn = fn, .arg = arg};
    pthread_mutex_init(&job.mu, NULL);
    pthread_cond_init(&job.cv, NULL);
    rmq_err_t err = rmq_instance_post(in, run_job_on_loop, &job);
    if (err != RMQ_OK) {
        pthread_mutex_destroy(&job.mu);
        pthread_cond_destroy(&job.cv);
        return err;
    }
    run_job_wait(&job);
    return RMQ_OK;
}

/* Forwards a server-pushed request to the instance's handler. Loop thread. */
static void instance_on_push(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    rmq_instance_t *in = arg;
    if (in->on_req)
        in->on_req(conn, req, in->on_req_arg);
}

rmq_client_t *rmq_instance_conn(rmq_instance_t *in, const char *addr)
{
    if (!in->pool)
        return NULL;
    rmq_client_t *cli = rmq_client_pool_get(in->pool, addr);
    if (cli)
        rmq_client_on_request(cli, instance_on_push, in);
    return cli;
}

const char *rmq_instance_conn_error(rmq_instance_t *in, const char *addr)
{
    rmq_client_t *cli = rmq_instance_conn(in, addr);

    return cli ? rmq_client_last_error(cli) : "";
}

void rmq_instance_on_request(rmq_instance_t *in, rmq_handler_fn fn, void *arg)
{
    in->on_req = fn;
    in->on_req_arg = arg;
}

rmq_err_t rmq_instance_call(rmq_instance_t *in, const char *addr, Rmq__Command *req,
                            const void *body, size_t len, int timeout_ms, rmq_instance_cb cb,
                            void *arg)
{
    rmq_client_t *cli = rmq_instance_conn(in, addr);
    if (!cli)
        return in->pool ? RMQ_ENOMEM : RMQ_ESHUTDOWN;
    return rmq_client_call(cli, req, body, len, timeout_ms, cb, arg);
}

typedef struct sync_call {
    run_job_t job;
    rmq_instance_t *in;
    const char *addr;
    Rmq__Command *req;
    const void *body;
    size_t len;
    int timeout_ms;
    rmq_err_t err;
    rmq_frame_t *resp;
} sync_call_t;

/* Moves the answer into the waiting sync call and wakes it. Loop thread. */
static void sync_call_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    sync_call_t *sc = arg;
    sc->err = err;
    if (err == RMQ_OK && resp) {
        sc->resp->cmd = resp->cmd;
        sc->resp->body = resp->body;
        resp->cmd = NULL;
        resp->body = NULL;
    }
    run_job_done(&sc->job);
}

/* Loop thread: issues a sync call's request (a failure to send wakes the waiter). */
static void sync_call_on_loop(void *arg)
{
    sync_call_t *sc = arg;
    rmq_err_t err = rmq_instance_call(sc->in, sc->addr, sc->req, sc->body, sc->len,
                                      sc->timeout_ms, sync_call_done, sc);
    if (err != RMQ_OK) {
        sc->err = err;
        run_job_done(&sc->job);
    }
}

rmq_err_t rmq_instance_call_sync(rmq_instance_t *in, const char *addr, Rmq__Command *req,
                                 const void *body, size_t len, int timeout_ms, rmq_frame_t *resp)
{
    if (rmq_instance_on_loop(in))
        return RMQ_EINVAL;
    memset(resp, 0, sizeof *resp);
    sync_call_t sc = {.in = in, .addr = addr, .req = req, .body = body, .len = len,
                      .timeout_ms = timeout_ms, .resp = resp};
    pthread_mutex_init(&sc.job.mu, NULL);
    pthread_cond_init(&sc.job.cv, NULL);
    rmq_err_t err = rmq_instance_post(in, sync_call_on_loop, &sc);
    if (err != RMQ_OK) {
        pthread_mutex_destroy(&sc.job.mu);
        pthread_cond_destroy(&sc.job.cv);
        return err;
    }
    run_job_wait(&sc.job);
    if (sc.err != RMQ_OK)
        rmq_frame_clear(resp);
    return sc.err;
}

/* ---- routes from the name servers ---------------------------------- */

typedef struct route_fetch {
    rmq_instance_t *in;
    char *topic;
    rmq_route_cb cb;
    void *arg;
    size_t tried;
    const char *addr;               /* the name server asked last */
    rmq_error_t last;
} route_fetch_t;

static void route_fetch_next(route_fetch_t *rf);

/* Ends a route fetch: reports to its owner and frees it. */
static void route_fetch_finish(route_fetch_t *rf, rmq_err_t err, rmq_route_t *route)
{
    rf->cb(err, route, &rf->last, rf->arg);
    free(rf->topic);
    free(rf);
}

/* One name server's answer: a route, a definite "no such topic", or a
 * transport failure that moves on to the next name server. Loop thread. */
static void route_fetch_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    route_fetch_t *rf = arg;
    const char *why = err != RMQ_OK ? rmq_instance_conn_error(rf->in, rf->addr) : "";
    char what[512];
    snprintf(what, sizeof what, "route of topic %s from name server %s%s%s", rf->topic, rf->addr,
             why[0] ? ": " : "", why);
    err = rmq_error_from_rpc(&rf->last, err, resp, what);
    if (err == RMQ_OK && resp->cmd->header_case != RMQ__COMMAND__HEADER_TOPIC_ROUTE)
        err = rmq_error_set(&rf->last, RMQ_EPROTO, 0, "route answer without a route header");
    if (err == RMQ_OK) {
        rmq_route_t *route = rmq_route_from_proto(resp->cmd->topic_route);
        route_fetch_finish(rf, route ? RMQ_OK : RMQ_ENOMEM, route);
        return;
    }
    if (err == RMQ_ESTATUS || err == RMQ_ESHUTDOWN) {
        route_fetch_finish(rf, err, NULL);
        return;
    }
    route_fetch_next(rf);
}

/* Asks the next untried name server, or gives up. Loop thread. */
static void route_fetch_next(route_fetch_t *rf)
{
    rmq_instance_t *in = rf->in;
    while (rf->tried < in->nns) {
        const char *addr = in->ns[in->ns_next % in->nns];
        in->ns_next++;
        rf->tried++;
        rf->addr = addr;
        Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
        tr.topic = rf->topic;
        Rmq__Command req = RMQ__COMMAND__INIT;
        req.code = RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC;
        req.header_case = RMQ__COMMAND__HEADER_TOPIC;
        req.topic = &tr;
        rmq_err_t err = rmq_instance_call(in, addr, &req, NULL, 0, RMQ_CONTROL_TIMEOUT_MS,
                                          route_fetch_done, rf);
        if (err == RMQ_OK)
            return;
        rmq_error_set(&rf->last, err, 0, "route of topic %s from name server %s", rf->topic, addr);
    }
    route_fetch_finish(rf, rf->last.err ? rf->last.err : RMQ_ECONNECT, NULL);
}

void rmq_instance_fetch_route(rmq_instance_t *in, const char *topic, rmq_route_cb cb, void *arg)
{
    route_fetch_t *rf = calloc(1, sizeof *rf);
    char *t = strdup(topic);
    if (!rf || !t) {
        free(rf);
        free(t);
        rmq_error_t e;
        rmq_error_set(&e, RMQ_ENOMEM, 0, "route fetch");
        cb(RMQ_ENOMEM, NULL, &e, arg);
        return;
    }
    rf->in = in;
    rf->topic = t;
    rf->cb = cb;
    rf->arg = arg;
    rmq_error_set(&rf->last, RMQ_ECONNECT, 0, "no name server answered");
    route_fetch_next(rf);
}

typedef struct route_sync {
    rmq_instance_t *in;
    const char *topic;
    run_job_t job;
    rmq_err_t err;
    rmq_route_t *route;
    rmq_error_t *e;
} route_sync_t;

/* Loop thread: hands a route (or why not) to the waiting user thread. */
static void route_sync_done(rmq_err_t err, rmq_route_t *route, const rmq_error_t *why, void *arg)
{
    route_sync_t *rs = arg;
    rs->err = err;
    rs->route = route;
    if (rs->e)
        *rs->e = *why;
    run_job_done(&rs->job);
}

static void route_sync_on_loop(void *arg)
{
    route_sync_t *rs = arg;
    rmq_instance_fetch_route(rs->in, rs->topic, route_sync_done, rs);
}

rmq_err_t rmq_instance_fetch_route_sync(rmq_instance_t *in, const char *topic, rmq_route_t **route,
                                        rmq_error_t *e)
{
    if (rmq_instance_on_loop(in))
        return rmq_error_set(e, RMQ_EINVAL, 0, "blocking call from the loop thread");
    route_sync_t rs = {.in = in, .topic = topic, .e = e};
    pthread_mutex_init(&rs.job.mu, NULL);
    pthread_cond_init(&rs.job.cv, NULL);
    rmq_err_t err = rmq_instance_post(in, route_sync_on_loop, &rs);
    if (err != RMQ_OK) {
        pthread_mutex_destroy(&rs.job.mu);
        pthread_cond_destroy(&rs.job.cv);
        return rmq_error_set(e, err, 0, "client not started");
    }
    run_job_wait(&rs.job);
    *route = rs.route;
    return rs.err;
}

struct event *rmq_instance_timer(rmq_instance_t *in, int interval_ms, event_callback_fn fn, void *arg)
{
    struct event *ev = event_new(in->base, -1, EV_PERSIST, fn, arg);
    if (!ev)
        return NULL;
    struct timeval tv = {interval_ms / 1000, (interval_ms % 1000) * 1000};
    event_add(ev, &tv);
    return ev;
}
