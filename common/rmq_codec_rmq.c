/* rmq_codec_rmq.c: the native rmq codec over the transport. Owns the codec's
 * probe (a connection's first bytes look like an rmq frame), the table of
 * handlers by request code, the access check run before them, the reply
 * observer, and the encoding of replies and server pushes (rmq_rpc.h's
 * handler-facing API). Frames themselves are rmq_frame.c's. Loop thread. */
#include "rmq_transport.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_log.h"
#include "rmq_time.h"

typedef struct handler {
    int code;
    rmq_handler_fn fn;
    void *arg;
} handler_t;

/* The codec's state on one server. */
typedef struct rmq_rpc {
    rmq_server_t *srv;
    handler_t *handlers;          /* sorted by code */
    size_t nhandlers;
    rmq_reply_fn on_reply;        /* metrics observer; NULL: none */
    void *on_reply_arg;
    rmq_auth_fn auth;             /* access check before handlers; NULL: none */
    void *auth_arg;
} rmq_rpc_t;

/* ---- the codec --------------------------------------------------------------- */

/* An rmq frame: u32 length | u32 header length (top byte 0: no header nears
 * 16 MiB) | protobuf Command, whose first byte is a field tag and never '{'
 * (field 15, group start: not in rmq.proto). A remoting frame differs in
 * both: serialize type 1 in byte 4, or a JSON header opening with '{'. A
 * prefix no rmq frame may have (rmq_frame_check_prefix) is not rmq either
 * (when no codec claims it, the default codec's decoder refuses it). */
static rmq_codec_probe_t rmq_probe(const uint8_t *data, size_t len, uint32_t max_frame)
{
    const char *why;

    if (len < RMQ_FRAME_PREFIX)
        return RMQ_CODEC_MORE;
    if (data[4] != 0 || rmq_frame_check_prefix(data, max_frame, &why) != RMQ_OK)
        return RMQ_CODEC_NO;
    if (data[5] == 0 && data[6] == 0 && data[7] == 0)
        return RMQ_CODEC_YES;
    if (len < RMQ_FRAME_PREFIX + 1)
        return RMQ_CODEC_MORE;
    return data[RMQ_FRAME_PREFIX] == '{' ? RMQ_CODEC_NO : RMQ_CODEC_YES;
}

static int handler_cmp(const void *key, const void *elem)
{
    int code = *(const int *)key;
    const handler_t *h = elem;
    return (code > h->code) - (code < h->code);
}

static const handler_t *find_handler(const rmq_rpc_t *rpc, int code)
{
    if (rpc->nhandlers == 0)
        return NULL;
    return bsearch(&code, rpc->handlers, rpc->nhandlers, sizeof(handler_t), handler_cmp);
}

/* Runs the access check and the handler for one request frame. */
static void dispatch(rmq_rpc_t *rpc, rmq_conn_t *conn, rmq_frame_t *req)
{
    const Rmq__Command *cmd = req->cmd;
    const char *name = rmq_server_name(rpc->srv);

    if (cmd->flags & RMQ__COMMAND_FLAG__FLAG_RESPONSE) {
        LOG_WARN_RL("%s: ignoring a response (code %d, opaque %u) from %s", name, cmd->code,
                    cmd->opaque, rmq_conn_peer(conn));
        return;
    }
    if (rpc->auth != NULL && !rpc->auth(conn, req, rpc->auth_arg))
        return;
    const handler_t *h = find_handler(rpc, cmd->code);
    if (h == NULL) {
        rmq_conn_replyf(conn, rmq_reply_to(cmd), RMQ__STATUS__REQUEST_CODE_NOT_SUPPORTED,
                        "request code %d (%s) not supported by %s", cmd->code,
                        rmq_request_name(cmd->code), name);
        return;
    }
    h->fn(conn, req, h->arg);
}

/* RMQ_ETOOBIG when the frame at the front of in declares a header over
 * RMQ_REQUEST_HEADER_MAX (checked before anything is unpacked). */
static rmq_err_t header_len_check(struct evbuffer *in, const char **why)
{
    uint8_t prefix[RMQ_FRAME_PREFIX];

    if (evbuffer_copyout(in, prefix, sizeof prefix) != (ev_ssize_t)sizeof prefix)
        return RMQ_OK;
    uint32_t header_len = (uint32_t)prefix[4] << 24 | (uint32_t)prefix[5] << 16 | (uint32_t)prefix[6] << 8 | prefix[7];
    if (header_len <= RMQ_REQUEST_HEADER_MAX)
        return RMQ_OK;
    *why = "request header over RMQ_REQUEST_HEADER_MAX (4 MiB)";
    return RMQ_ETOOBIG;
}

/* Decodes one frame from in and dispatches it; the frame is cleared after. */
static rmq_err_t rmq_serve(rmq_conn_t *conn, struct evbuffer *in, void *state, const char **why)
{
    rmq_rpc_t *rpc = state;
    rmq_frame_t f = { 0 };
    rmq_err_t err = header_len_check(in, why);

    if (err == RMQ_OK)
        err = rmq_frame_decode(in, rmq_server_max_frame(rpc->srv), &f, why);

    if (err != RMQ_OK)
        return err;
    dispatch(rpc, conn, &f);
    rmq_frame_clear(&f);
    return RMQ_OK;
}

static void rmq_free_state(void *state)
{
    rmq_rpc_t *rpc = state;

    free(rpc->handlers);
    free(rpc);
}

const rmq_codec_t rmq_codec_rmq = {
    .name = "rmq",
    .probe = rmq_probe,
    .serve = rmq_serve,
    .free_state = rmq_free_state,
};

/* ---- server set-up ---------------------------------------------------------- */

/* A transport with the rmq codec registered first. Owner: caller. */
rmq_server_t *rmq_server_new(struct event_base *base, const rmq_server_opts_t *opts)
{
    rmq_server_t *srv = rmq_transport_new(base, opts);
    rmq_rpc_t *rpc;

    if (srv == NULL)
        return NULL;
    rpc = calloc(1, sizeof(*rpc));
    if (rpc == NULL || rmq_server_add_codec(srv, &rmq_codec_rmq, rpc) != RMQ_OK) {
        free(rpc);
        rmq_server_free(srv);
        return NULL;
    }
    rpc->srv = srv;
    return srv;
}

static rmq_rpc_t *server_rpc(const rmq_server_t *srv)
{
    return rmq_server_codec_state(srv, &rmq_codec_rmq);
}

/* Routes code to fn (replacing an earlier route). Loop thread, set-up time. */
void rmq_server_handle(rmq_server_t *srv, int code, rmq_handler_fn fn, void *arg)
{
    rmq_rpc_t *rpc = server_rpc(srv);
    handler_t *h = (handler_t *)find_handler(rpc, code);

    if (h != NULL) {
        h->fn = fn;
        h->arg = arg;
        return;
    }
    handler_t *grown = realloc(rpc->handlers, (rpc->nhandlers + 1) * sizeof(*grown));
    if (grown == NULL) {
        LOG_ERROR("%s: out of memory adding a handler for code %d", rmq_server_name(srv), code);
        return;
    }
    rpc->handlers = grown;
    size_t i = rpc->nhandlers;
    while (i > 0 && rpc->handlers[i - 1].code > code) {
        rpc->handlers[i] = rpc->handlers[i - 1];
        i--;
    }
    rpc->handlers[i] = (handler_t){ code, fn, arg };
    rpc->nhandlers++;
}

void rmq_server_set_auth(rmq_server_t *srv, rmq_auth_fn fn, void *arg)
{
    rmq_rpc_t *rpc = server_rpc(srv);

    rpc->auth = fn;
    rpc->auth_arg = arg;
}

void rmq_server_on_reply(rmq_server_t *srv, rmq_reply_fn fn, void *arg)
{
    rmq_rpc_t *rpc = server_rpc(srv);

    rpc->on_reply = fn;
    rpc->on_reply_arg = arg;
}

/* ---- replies and pushes ------------------------------------------------------ */

rmq_reply_to_t rmq_reply_to(const Rmq__Command *req)
{
    return (rmq_reply_to_t){ req->code, req->opaque, req->flags, rmq_mono_us() };
}

/* conn's output if it is open and speaks rmq; NULL otherwise (*err set). */
static struct evbuffer *rmq_output(rmq_conn_t *conn, rmq_err_t *err)
{
    struct evbuffer *out = rmq_conn_output(conn);

    *err = RMQ_OK;
    if (out == NULL)
        *err = RMQ_ECLOSED;
    else if (rmq_conn_codec(conn) != &rmq_codec_rmq)
        *err = RMQ_EPROTO;
    return *err == RMQ_OK ? out : NULL;
}

/* Encodes a response to `to` into conn's output; see rmq_rpc.h. resp's remark
 * is only borrowed for the encode. Loop thread. */
rmq_err_t rmq_conn_reply(rmq_conn_t *conn, rmq_reply_to_t to, Rmq__Command *resp,
                         int status, const char *remark, struct evbuffer *body)
{
    Rmq__Command bare = RMQ__COMMAND__INIT;
    rmq_err_t err = RMQ_OK;
    struct evbuffer *out;
    char *saved_remark;

    if (to.flags & RMQ__COMMAND_FLAG__FLAG_ONEWAY)
        goto out;
    if ((out = rmq_output(conn, &err)) == NULL)
        goto out;
    if (resp == NULL)
        resp = &bare;
    saved_remark = resp->remark;
    resp->code = to.code;
    resp->opaque = to.opaque;
    resp->flags = RMQ__COMMAND_FLAG__FLAG_RESPONSE;
    resp->status = status;
    resp->version = RMQ_PROTOCOL_VERSION;
    if (remark != NULL)
        resp->remark = (char *)remark;
    err = rmq_frame_encode_buf(out, resp, body);
    resp->remark = saved_remark;
    rmq_conn_output_done(conn);
out:
    if (body != NULL)
        evbuffer_drain(body, evbuffer_get_length(body));
    rmq_server_t *srv = rmq_conn_server(conn);
    rmq_rpc_t *rpc = srv != NULL ? server_rpc(srv) : NULL;
    if (rpc != NULL && rpc->on_reply != NULL)
        rpc->on_reply(conn, to.code, status, to.start_us ? rmq_mono_us() - to.start_us : -1,
                      rpc->on_reply_arg);
    return err;
}

rmq_err_t rmq_conn_replyf(rmq_conn_t *conn, rmq_reply_to_t to, int status, const char *fmt, ...)
{
    char remark[512];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(remark, sizeof(remark), fmt, ap);
    va_end(ap);
    return rmq_conn_reply(conn, to, NULL, status, remark, NULL);
}

/* Pushes a oneway request to the peer; req's opaque and flags are set here. */
rmq_err_t rmq_conn_send_oneway(rmq_conn_t *conn, Rmq__Command *req, const void *body, size_t len)
{
    rmq_err_t err;
    struct evbuffer *out = rmq_output(conn, &err);

    if (out == NULL)
        return err;
    req->opaque = 0;
    req->flags = RMQ__COMMAND_FLAG__FLAG_ONEWAY;
    req->version = RMQ_PROTOCOL_VERSION;
    err = rmq_frame_encode(out, req, body, len);
    rmq_conn_output_done(conn);
    return err;
}
