/* rmq_sync.c: the blocking RPC wrapper for tools and tests. Owns a private
 * event base and a client pool on it; rmq_sync_call runs that base on the
 * calling thread until the one response (or its timeout) arrives. One
 * thread at a time per rmq_sync_t. */
#include "rmq_rpc.h"

#include <stdio.h>
#include <stdlib.h>

struct rmq_sync {
    struct event_base *base;
    rmq_client_pool_t *pool;
    char why[256];                /* the last failed call's connection failure */
};

typedef struct sync_wait {
    int done;
    rmq_err_t err;
    rmq_frame_t resp;
} sync_wait_t;

/* Creates the wrapper; opts copied. Owner: caller; any one thread. */
rmq_sync_t *rmq_sync_new(const rmq_client_opts_t *opts)
{
    rmq_sync_t *s = calloc(1, sizeof(*s));

    if (s == NULL)
        return NULL;
    s->base = event_base_new();
    if (s->base != NULL)
        s->pool = rmq_client_pool_new(s->base, opts);
    if (s->pool == NULL) {
        rmq_sync_free(s);
        return NULL;
    }
    return s;
}

/* Frees clients, then gives libevent one loop pass to finish freeing their
 * bufferevents (deferred callbacks hold them) before the base goes. */
void rmq_sync_free(rmq_sync_t *s)
{
    if (s == NULL)
        return;
    rmq_client_pool_free(s->pool);
    if (s->base != NULL) {
        event_base_loop(s->base, EVLOOP_NONBLOCK);
        event_base_free(s->base);
    }
    free(s);
}

static void sync_cb(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    sync_wait_t *w = arg;

    w->done = 1;
    w->err = err;
    if (resp != NULL) {
        w->resp = *resp;
        resp->cmd = NULL;
        resp->body = NULL;
    }
}

/* Sends req to addr and runs the private base until answered; the request
 * timeout (which includes the connect) bounds the wait. On RMQ_OK the
 * caller owns *resp. Calling thread. */
rmq_err_t rmq_sync_call(rmq_sync_t *s, const char *addr, Rmq__Command *req,
                        const void *body, size_t len, int timeout_ms, rmq_frame_t *resp)
{
    sync_wait_t w = { 0 };
    rmq_client_t *cli = rmq_client_pool_get(s->pool, addr);

    s->why[0] = '\0';
    if (cli == NULL)
        return RMQ_EINVAL;
    rmq_err_t err = rmq_client_call(cli, req, body, len, timeout_ms, sync_cb, &w);
    while (err == RMQ_OK && !w.done)
        event_base_loop(s->base, EVLOOP_ONCE);
    if (err == RMQ_OK)
        err = w.err;
    if (err == RMQ_OK)
        *resp = w.resp;
    else
        snprintf(s->why, sizeof s->why, "%s", rmq_client_last_error(cli));
    return err;
}

const char *rmq_sync_last_error(const rmq_sync_t *s)
{
    return s->why;
}
