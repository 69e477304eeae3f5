/* rmq_remoting_client.c: a remoting-protocol caller over one bufferevent
 * (plain or TLS, rmq_tls_bev_connect): frames encoded by
 * rmq_remoting_encode (JSON headers, signed with ACL 1.0 when the client
 * has credentials), answers decoded by rmq_remoting_decode and matched to
 * the pending calls by opaque. A call's timer fails it alone; a closed or
 * broken connection fails them all. */
#include "rmq_remoting_client.h"

#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "rmq_log.h"
#include "rmq_rpc.h"
#include "rmq_tls_config.h"

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
    rmq_rclient_opts_t opts;
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
    char tls[256];
    rmq_tls_bev_error(bev, tls, sizeof(tls));
    LOG_WARN_RL("remoting client %s: connection %s%s%s", c->addr,
                (what & BEV_EVENT_EOF) ? "closed by the peer" : "failed", tls[0] ? ": " : "", tls);
    c->busy++;
    rclient_drop_all(c, RMQ_ECLOSED);
    c->busy--;
    rclient_release(c);
}

rmq_rclient_t *rmq_rclient_new(struct event_base *base, const char *addr, const rmq_rclient_opts_t *opts)
{
    rmq_rclient_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->base = base;
    c->sslen = sizeof(c->ss);
    c->opts = *opts;
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
    c->bev = rmq_tls_bev_connect(c->base, c->opts.ssl_ctx);
    if (!c->bev)
        return RMQ_ENOMEM;
    bufferevent_setcb(c->bev, rclient_read, NULL, rclient_event, c);
    struct timeval tv = {c->opts.connect_timeout_ms / 1000, (c->opts.connect_timeout_ms % 1000) * 1000};
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

/* Appends the request frame to out: fields as given, then, with
 * credentials, AccessKey and the ACL 1.0 Signature over them and the body. */
static rmq_err_t rclient_encode(const rmq_rclient_t *c, struct evbuffer *out, int code, int32_t opaque,
                                const rmq_remoting_field_t *fields, size_t n, const void *body, size_t len)
{
    rmq_remoting_reply_t rep = {.code = code, .fields = fields, .n_fields = n, .body = body, .body_len = len};
    if (!c->opts.cred)
        return rmq_remoting_encode(out, RMQ_REMOTING_JSON, code, opaque, 0, RCLIENT_VERSION, &rep);
    rmq_remoting_field_t *signed_fields = malloc((n + 2) * sizeof(*signed_fields));
    if (!signed_fields)
        return RMQ_ENOMEM;
    char sig[29];
    memcpy(signed_fields, fields, n * sizeof(*fields));
    signed_fields[n] = (rmq_remoting_field_t){"AccessKey", (char *)c->opts.cred->access_key};
    rmq_remoting_request_t req = {.code = code, .fields = signed_fields, .n_fields = n + 1, .body = body,
                                  .body_len = len};
    rmq_remoting_sign(&req, c->opts.cred->secret_key, sig);
    signed_fields[n + 1] = (rmq_remoting_field_t){"Signature", sig};
    rep.fields = signed_fields;
    rep.n_fields = n + 2;
    rmq_err_t err = rmq_remoting_encode(out, RMQ_REMOTING_JSON, code, opaque, 0, RCLIENT_VERSION, &rep);
    free(signed_fields);
    return err;
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
    err = rclient_encode(c, bufferevent_get_output(c->bev), code, call->opaque, fields, n, body, len);
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
