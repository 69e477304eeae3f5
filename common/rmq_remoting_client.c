/* rmq_remoting_client.c: a remoting-protocol caller over one bufferevent:
 * frames encoded by rmq_remoting_encode (JSON headers), answers decoded by
 * rmq_remoting_decode and matched to the pending calls by opaque. A call's
 * timer fails it alone; a closed or broken connection fails them all. */
#include "rmq_remoting_client.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "rmq_log.h"
#include "rmq_rpc.h"

#define RCLIENT_MAX_FRAME (64u << 20)   /* the largest answer taken */
#define RCLIENT_VERSION 395             /* RocketMQ V4_9_7: what its name server expects of a broker */

typedef struct rcall {
    struct rcall *next;
    rmq_rclient_t *c;
    int32_t opaque;
    struct event *timer;
    rmq_rclient_fn cb;
    void *arg;
} rcall_t;

struct rmq_rclient {
    struct event_base *base;
    char addr[128];
    struct sockaddr_storage ss;
    int sslen;
    int connect_timeout_ms;
    struct bufferevent *bev;       /* NULL: not connected */
    rcall_t *calls;
    int32_t next_opaque;
    int busy;                      /* inside a callback: free waits */
    int freed;
};

/* Unlinks call from its client and frees it (not its callback). */
static void rcall_drop(rcall_t *call)
{
    for (rcall_t **p = &call->c->calls; *p; p = &(*p)->next) {
        if (*p == call) {
            *p = call->next;
            break;
        }
    }
    event_free(call->timer);
    free(call);
}

/* Runs call's callback once, with the client marked busy, then drops it. */
static void rcall_finish(rcall_t *call, rmq_err_t err, const rmq_remoting_request_t *resp)
{
    rmq_rclient_fn cb = call->cb;
    void *arg = call->arg;
    rcall_drop(call);
    cb(err, resp, arg);
}

static void rclient_release(rmq_rclient_t *c)
{
    if (c->busy == 0 && c->freed)
        free(c);
}

/* Closes the connection and fails every pending call with err. */
static void rclient_drop_all(rmq_rclient_t *c, rmq_err_t err)
{
    if (c->bev) {
        bufferevent_free(c->bev);
        c->bev = NULL;
    }
    c->busy++;
    while (c->calls)
        rcall_finish(c->calls, err, NULL);
    c->busy--;
}

static void rcall_timeout(evutil_socket_t fd, short what, void *arg)
{
    rcall_t *call = arg;
    rmq_rclient_t *c = call->c;
    c->busy++;
    rcall_finish(call, RMQ_ETIMEDOUT, NULL);
    c->busy--;
    rclient_release(c);
}

/* Decodes every whole frame in the input; answers go to their calls, the
 * peer's own requests are dropped (a name server sends none to a broker). */
static void rclient_read(struct bufferevent *bev, void *arg)
{
    rmq_rclient_t *c = arg;
    struct evbuffer *in = bufferevent_get_input(bev);
    c->busy++;
    while (!c->freed && c->bev == bev) {
        size_t len = evbuffer_get_length(in), used = 0;
        const uint8_t *data = evbuffer_pullup(in, -1);   /* answers are small */
        rmq_remoting_request_t resp;
        const char *why = "";
        rmq_err_t err = len ? rmq_remoting_decode(data, len, RCLIENT_MAX_FRAME, &resp, &used, &why) : RMQ_EAGAIN;
        if (err == RMQ_EAGAIN)
            break;
        if (err != RMQ_OK) {
            LOG_WARN_RL("remoting client %s: bad frame: %s", c->addr, why);
            rclient_drop_all(c, RMQ_EPROTO);
            break;
        }
        rcall_t *call = c->calls;
        while (call && call->opaque != resp.opaque)
            call = call->next;
        if ((resp.flags & RMQ_REMOTING_FLAG_RESPONSE) && call)
            rcall_finish(call, RMQ_OK, &resp);
        rmq_remoting_request_clear(&resp);
        if (c->bev == bev)
            evbuffer_drain(in, used);
    }
    c->busy--;
    rclient_release(c);
}

static void rclient_event(struct bufferevent *bev, short what, void *arg)
{
    rmq_rclient_t *c = arg;
    if (what & BEV_EVENT_CONNECTED)
        return;
    LOG_WARN_RL("remoting client %s: connection %s", c->addr, (what & BEV_EVENT_EOF) ? "closed by the peer" : "failed");
    c->busy++;
    rclient_drop_all(c, RMQ_ECLOSED);
    c->busy--;
    rclient_release(c);
}

rmq_rclient_t *rmq_rclient_new(struct event_base *base, const char *addr, int connect_timeout_ms)
{
    rmq_rclient_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->base = base;
    c->sslen = sizeof(c->ss);
    c->connect_timeout_ms = connect_timeout_ms;
    c->next_opaque = 1;
    if (strlen(addr) >= sizeof(c->addr) ||
        rmq_addr_sockaddr(addr, &c->ss, &c->sslen) != RMQ_OK) {
        LOG_ERROR("remoting client: '%s' is not a numeric host:port", addr);
        free(c);
        return NULL;
    }
    snprintf(c->addr, sizeof(c->addr), "%s", addr);
    return c;
}

void rmq_rclient_free(rmq_rclient_t *c)
{
    if (!c || c->freed)
        return;
    c->busy++;
    rclient_drop_all(c, RMQ_ESHUTDOWN);
    c->busy--;
    c->freed = 1;
    rclient_release(c);
}

/* Opens the connection unless it is open. */
static rmq_err_t rclient_connect(rmq_rclient_t *c)
{
    if (c->bev)
        return RMQ_OK;
    c->bev = bufferevent_socket_new(c->base, -1, BEV_OPT_CLOSE_ON_FREE);
    if (!c->bev)
        return RMQ_ENOMEM;
    bufferevent_setcb(c->bev, rclient_read, NULL, rclient_event, c);
    struct timeval tv = {c->connect_timeout_ms / 1000, (c->connect_timeout_ms % 1000) * 1000};
    bufferevent_set_timeouts(c->bev, NULL, &tv);
    if (bufferevent_enable(c->bev, EV_READ | EV_WRITE) != 0 ||
        bufferevent_socket_connect(c->bev, (struct sockaddr *)&c->ss, c->sslen) != 0) {
        bufferevent_free(c->bev);
        c->bev = NULL;
        LOG_WARN_RL("remoting client %s: cannot start connecting", c->addr);
        return RMQ_ECONNECT;
    }
    return RMQ_OK;
}

rmq_err_t rmq_rclient_call(rmq_rclient_t *c, int code, const rmq_remoting_field_t *fields, size_t n,
                           const void *body, size_t len, int timeout_ms, rmq_rclient_fn cb, void *arg)
{
    if (c->freed)
        return RMQ_ESHUTDOWN;
    rmq_err_t err = rclient_connect(c);
    if (err != RMQ_OK)
        return err;
    rcall_t *call = calloc(1, sizeof(*call));
    if (!call || !(call->timer = evtimer_new(c->base, rcall_timeout, call))) {
        free(call);
        return RMQ_ENOMEM;
    }
    call->c = c;
    call->opaque = c->next_opaque++;
    if (c->next_opaque <= 0)
        c->next_opaque = 1;
    call->cb = cb;
    call->arg = arg;
    rmq_remoting_reply_t rep = {.code = code, .fields = fields, .n_fields = n, .body = body, .body_len = len};
    err = rmq_remoting_encode(bufferevent_get_output(c->bev), RMQ_REMOTING_JSON, code, call->opaque, 0,
                              RCLIENT_VERSION, &rep);
    if (err != RMQ_OK) {
        event_free(call->timer);
        free(call);
        return err;
    }
    call->next = c->calls;
    c->calls = call;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    evtimer_add(call->timer, &tv);
    return RMQ_OK;
}
