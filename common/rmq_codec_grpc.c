/* rmq_codec_grpc.c: the gRPC codec (see rmq_codec_grpc.h). Owns the
 * HTTP/2 preface probe, one nghttp2 server session per connection (fed by
 * serve(), written by one deferred flush per batch into rmq_conn_output
 * up to a high-water mark and resumed when the output drains), the calls
 * of a connection's streams (headers, deadline, request reassembly,
 * response queue behind a deferred data provider, trailers), and the
 * cancellation of held calls when their stream or connection goes away.
 * Loop thread only. */
#include "rmq_codec_grpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/queue.h>

#include <event2/event.h>
#include <nghttp2/nghttp2.h>

#include "rmq_fmt.h"
#include "rmq_h2mem.h"
#include "rmq_inflate.h"
#include "rmq_log.h"
#include "rmq_time.h"

/* nghttp2 1.52 (Debian 12) has the ssize_t calls; later releases deprecate
 * them for the nghttp2_ssize ones (meson finds which: RMQ_NGHTTP2_SSIZE2). */
#ifdef RMQ_NGHTTP2_SSIZE2
typedef nghttp2_ssize h2_ssize_t;
typedef nghttp2_data_provider2 h2_provider_t;
#define h2_mem_recv nghttp2_session_mem_recv2
#define h2_mem_send nghttp2_session_mem_send2
#define h2_submit_response nghttp2_submit_response2
#else
typedef ssize_t h2_ssize_t;
typedef nghttp2_data_provider h2_provider_t;
#define h2_mem_recv nghttp2_session_mem_recv
#define h2_mem_send nghttp2_session_mem_send
#define h2_submit_response nghttp2_submit_response
#endif

#define H2_PREFACE "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"
#define GRPC_PREFIX 5                              /* flag + u32 length */
#define GRPC_STREAM_WINDOW (4 << 20)               /* SETTINGS_INITIAL_WINDOW_SIZE */
#define GRPC_CONN_WINDOW (16 << 20)                /* connection receive window */
#define GRPC_OUTPUT_HIGH ((size_t)1 << 20)         /* unsent bytes before the flush waits */
#define GRPC_MESSAGE_TEXT_MAX 512                  /* encoded grpc-message bytes */
#define GRPC_TIMEOUT_DIGITS_MAX 8
#define GZIP_WINDOW_BITS (15 + 16)                 /* zlib's inflateInit2: gzip only */

typedef struct grpc_conn grpc_conn_t;

#define GRPC_HEADERS_FIRST 16                      /* header slots a call starts with */

/* A request header: nghttp2's own (NUL-terminated) buffers, referenced
 * rather than copied (an indexed header costs no allocation at all), and
 * their bytes for the lookups. */
typedef struct grpc_header {
    nghttp2_rcbuf *name_buf;
    nghttp2_rcbuf *value_buf;
    const char *name;
    size_t name_len;
    const char *value;
} grpc_header_t;

struct rmq_grpc_call {
    TAILQ_ENTRY(rmq_grpc_call) link;
    grpc_conn_t *gc;              /* NULL once the stream is gone */
    rmq_conn_t *conn;             /* referenced until the call is freed */
    rmq_h2mem_t *pool;            /* the connection's: the call, headers, request, out */
    int32_t stream_id;
    int held;                     /* a holder has it and has not finished it */
    int ended;                    /* the final status is set: no more writes */
    int response_started;         /* response HEADERS submitted */
    int status;
    char *message;
    const rmq_grpc_method_t *method;
    const char *path;             /* :path, "" until the headers are complete */
    grpc_header_t *headers;
    size_t nheaders;
    size_t headers_cap;
    size_t header_bytes;
    int64_t deadline_ms;
    int gzip;                     /* grpc-encoding: gzip */
    int bad_encoding;             /* an encoding we lack: say which we have */
    struct evbuffer *in;          /* the start of a message split over DATA frames (made on the first) */
    uint8_t *request;             /* a unary request's message */
    size_t request_len;
    int nrequests;
    uint8_t *out;                 /* response bytes; nghttp2 has taken those before out_off */
    size_t out_off, out_len, out_cap;
    rmq_grpc_message_fn on_message;
    void *message_arg;
    rmq_grpc_cancel_fn on_cancel;
    void *cancel_arg;
};

TAILQ_HEAD(call_list, rmq_grpc_call);

typedef struct grpc_state {
    rmq_server_t *srv;
    rmq_grpc_method_t *methods;
    size_t nmethods;
    TAILQ_HEAD(, grpc_conn) conns;
} grpc_state_t;

struct grpc_conn {
    TAILQ_ENTRY(grpc_conn) link;
    grpc_state_t *st;
    rmq_conn_t *conn;
    nghttp2_session *h2;
    rmq_h2mem_t *pool;            /* h2's allocator */
    struct event *flush_ev;
    struct call_list calls;       /* calls whose stream is open */
    rmq_grpc_call_t *headers_call; /* the call whose request headers arrive */
    int busy;                     /* inside nghttp2: destroy later */
    int dead;                     /* the connection closed */
};

static void gc_schedule_flush(grpc_conn_t *gc);
static void call_end(rmq_grpc_call_t *call, int status, const char *message);

/* ---- pure pieces ------------------------------------------------------------ */

rmq_err_t rmq_grpc_parse_timeout(const char *value, int64_t now_ms, int64_t *deadline_ms)
{
    size_t len = value != NULL ? strlen(value) : 0;
    int64_t n = 0, unit_ns;

    if (len < 2 || len > GRPC_TIMEOUT_DIGITS_MAX + 1)
        return RMQ_EINVAL;
    for (size_t i = 0; i + 1 < len; i++) {
        if (value[i] < '0' || value[i] > '9')
            return RMQ_EINVAL;
        n = n * 10 + (value[i] - '0');
    }
    switch (value[len - 1]) {
    case 'H': unit_ns = 3600LL * 1000000000LL; break;
    case 'M': unit_ns = 60LL * 1000000000LL; break;
    case 'S': unit_ns = 1000000000LL; break;
    case 'm': unit_ns = 1000000LL; break;
    case 'u': unit_ns = 1000LL; break;
    case 'n': unit_ns = 1LL; break;
    default: return RMQ_EINVAL;
    }
    /* n < 10^8 and unit_ns <= 3.6e12: the product needs no more than
     * 3.6e20, over int64: count in ms where the unit is coarse */
    int64_t ms = unit_ns >= 1000000LL ? n * (unit_ns / 1000000LL)
                                      : (n * unit_ns + 999999LL) / 1000000LL;
    if (ms < 1)
        ms = 1;
    *deadline_ms = ms > RMQ_GRPC_NO_DEADLINE - now_ms ? RMQ_GRPC_NO_DEADLINE : now_ms + ms;
    return RMQ_OK;
}

size_t rmq_grpc_percent_encode(const char *message, char *out, size_t outlen)
{
    static const char hex[] = "0123456789ABCDEF";
    size_t o = 0;

    for (const unsigned char *p = (const unsigned char *)message; *p != '\0'; p++) {
        int plain = *p >= 0x20 && *p <= 0x7e && *p != '%';
        size_t need = plain ? 1 : 3;
        if (o + need >= outlen)
            break;
        if (plain) {
            out[o++] = (char)*p;
        } else {
            out[o++] = '%';
            out[o++] = hex[*p >> 4];
            out[o++] = hex[*p & 15];
        }
    }
    out[o] = '\0';
    return o;
}

/* ---- the probe -------------------------------------------------------------- */

/* The HTTP/2 client preface: its first RMQ_CODEC_PROBE_MAX bytes decide. No
 * rmq or remoting frame opens with 'P' (a length of about 1.3 GB). */
static rmq_codec_probe_t grpc_probe(const uint8_t *data, size_t len, uint32_t max_frame)
{
    size_t n = len < RMQ_CODEC_PROBE_MAX ? len : RMQ_CODEC_PROBE_MAX;

    if (memcmp(data, H2_PREFACE, n) != 0)
        return RMQ_CODEC_NO;
    return n == RMQ_CODEC_PROBE_MAX ? RMQ_CODEC_YES : RMQ_CODEC_MORE;
}

/* ---- calls ---------------------------------------------------------------- */

static rmq_grpc_call_t *call_new(grpc_conn_t *gc, int32_t stream_id)
{
    rmq_grpc_call_t *call = rmq_h2mem_calloc(gc->pool, 1, sizeof(*call));

    if (call == NULL)
        return NULL;
    call->pool = gc->pool;
    call->gc = gc;
    call->conn = gc->conn;
    rmq_conn_ref_any(call->conn);
    call->stream_id = stream_id;
    call->deadline_ms = RMQ_GRPC_NO_DEADLINE;
    call->path = "";
    TAILQ_INSERT_TAIL(&gc->calls, call, link);
    return call;
}

static void call_free(rmq_grpc_call_t *call)
{
    for (size_t i = 0; i < call->nheaders; i++) {
        nghttp2_rcbuf_decref(call->headers[i].name_buf);
        nghttp2_rcbuf_decref(call->headers[i].value_buf);
    }
    rmq_h2mem_free(call->pool, call->headers);
    if (call->in != NULL)
        evbuffer_free(call->in);
    rmq_h2mem_free(call->pool, call->out);
    rmq_h2mem_free(call->pool, call->request);
    free(call->message);
    rmq_conn_unref_any(call->conn);
    rmq_h2mem_free(call->pool, call);
}

/* The stream of call is gone: unlinks it; a held call's holder hears of it
 * (and finishes it, now or later), any other is freed. */
static void call_detach(rmq_grpc_call_t *call)
{
    grpc_conn_t *gc = call->gc;

    TAILQ_REMOVE(&gc->calls, call, link);
    if (gc->headers_call == call)
        gc->headers_call = NULL;
    nghttp2_session_set_stream_user_data(gc->h2, call->stream_id, NULL);
    call->gc = NULL;
    if (!call->held) {
        call_free(call);
        return;
    }
    if (call->on_cancel != NULL)
        call->on_cancel(call, call->cancel_arg);
}

rmq_conn_t *rmq_grpc_call_conn(const rmq_grpc_call_t *call)
{
    return call->conn;
}

/* Whether header h is named name[0..len). */
static int header_named(const grpc_header_t *h, const char *name, size_t len)
{
    return h->name_len == len && memcmp(h->name, name, len) == 0;
}

const char *rmq_grpc_call_header(const rmq_grpc_call_t *call, const char *name)
{
    size_t len = strlen(name);

    for (size_t i = 0; i < call->nheaders; i++)
        if (header_named(&call->headers[i], name, len))
            return call->headers[i].value;
    return NULL;
}

const char *rmq_grpc_call_path(const rmq_grpc_call_t *call)
{
    return call->path;
}

int64_t rmq_grpc_call_deadline_ms(const rmq_grpc_call_t *call)
{
    return call->deadline_ms;
}

const uint8_t *rmq_grpc_call_request(const rmq_grpc_call_t *call, size_t *len)
{
    *len = call->request_len;
    return call->request;
}

int rmq_grpc_call_live(const rmq_grpc_call_t *call)
{
    return call->gc != NULL && !call->ended;
}

void rmq_grpc_call_on_message(rmq_grpc_call_t *call, rmq_grpc_message_fn fn, void *arg)
{
    call->on_message = fn;
    call->message_arg = arg;
}

void rmq_grpc_call_on_cancel(rmq_grpc_call_t *call, rmq_grpc_cancel_fn fn, void *arg)
{
    call->on_cancel = fn;
    call->cancel_arg = arg;
}

/* ---- responses ------------------------------------------------------------ */

/* A response header named by a lowercase literal, which nghttp2 takes as
 * is (no copy, no downcase); NV copies the value, NV_LIT takes a literal
 * value too. */
#define NV_(n, v, flags) { (uint8_t *)(n), (uint8_t *)(v), sizeof(n) - 1, strlen(v), \
                           NGHTTP2_NV_FLAG_NO_COPY_NAME | (flags) }
#define NV(n, v) NV_(n, v, 0)
#define NV_LIT(n, v) NV_(n, v, NGHTTP2_NV_FLAG_NO_COPY_VALUE)

/* The data provider of a response: queued messages, NGHTTP2_ERR_DEFERRED
 * while none is queued and the call goes on, then the trailers. */
static h2_ssize_t call_read(nghttp2_session *h2, int32_t stream_id, uint8_t *buf, size_t length,
                            uint32_t *flags, nghttp2_data_source *source, void *user_data)
{
    rmq_grpc_call_t *call = source->ptr;
    char status[RMQ_FMT_I64_LEN], text[GRPC_MESSAGE_TEXT_MAX];

    size_t n = call->out_len - call->out_off;
    if (n > 0) {
        n = n < length ? n : length;
        memcpy(buf, call->out + call->out_off, n);
        call->out_off += n;
        return (h2_ssize_t)n;
    }
    if (!call->ended)
        return NGHTTP2_ERR_DEFERRED;
    *flags |= NGHTTP2_DATA_FLAG_EOF | NGHTTP2_DATA_FLAG_NO_END_STREAM;
    rmq_fmt_i64(status, call->status);
    rmq_grpc_percent_encode(call->message != NULL ? call->message : "", text, sizeof(text));
    nghttp2_nv trailers[] = { NV("grpc-status", status), NV("grpc-message", text) };
    nghttp2_submit_trailer(h2, stream_id, trailers, text[0] != '\0' ? 2 : 1);
    return 0;
}

/* Submits the response HEADERS with the deferred data provider. */
static int call_start_response(rmq_grpc_call_t *call)
{
    nghttp2_nv nva[] = { NV_LIT(":status", "200"), NV_LIT("content-type", "application/grpc") };
    h2_provider_t provider = { .source.ptr = call, .read_callback = call_read };

    if (call->response_started)
        return 0;
    call->response_started = 1;
    return h2_submit_response(call->gc->h2, call->stream_id, nva, 2, &provider);
}

/* Answers with a trailers-only response: one HEADERS with END_STREAM. */
static void call_trailers_only(rmq_grpc_call_t *call)
{
    char status[RMQ_FMT_I64_LEN], text[GRPC_MESSAGE_TEXT_MAX];

    rmq_fmt_i64(status, call->status);
    rmq_grpc_percent_encode(call->message != NULL ? call->message : "", text, sizeof(text));
    nghttp2_nv nva[5] = { NV_LIT(":status", "200"), NV_LIT("content-type", "application/grpc"),
                          NV("grpc-status", status) };
    size_t n = 3;
    if (text[0] != '\0')
        nva[n++] = (nghttp2_nv)NV("grpc-message", text);
    if (call->bad_encoding)
        nva[n++] = (nghttp2_nv)NV_LIT("grpc-accept-encoding", "identity,gzip");
    call->response_started = 1;
    h2_submit_response(call->gc->h2, call->stream_id, nva, n, NULL);
}

/* Sets call's final status: the trailers follow the queued messages, or
 * go alone. The stream's close frees the call unless a holder has it. */
static void call_end(rmq_grpc_call_t *call, int status, const char *message)
{
    if (call->ended || call->gc == NULL)
        return;
    call->ended = 1;
    call->status = status;
    call->message = message != NULL && message[0] != '\0' ? strdup(message) : NULL;
    if (!call->response_started)
        call_trailers_only(call);
    else
        nghttp2_session_resume_data(call->gc->h2, call->stream_id);
    gc_schedule_flush(call->gc);
}

/* Room for need more bytes at the end of call->out: the bytes nghttp2
 * took are dropped first, then the buffer grows (doubling). */
static rmq_err_t call_out_reserve(rmq_grpc_call_t *call, size_t need)
{
    if (call->out_len + need <= call->out_cap)
        return RMQ_OK;
    if (call->out_off > 0) {
        memmove(call->out, call->out + call->out_off, call->out_len - call->out_off);
        call->out_len -= call->out_off;
        call->out_off = 0;
    }
    if (call->out_len + need <= call->out_cap)
        return RMQ_OK;
    size_t cap = call->out_len + need > 2 * call->out_cap ? call->out_len + need : 2 * call->out_cap;
    uint8_t *grown = rmq_h2mem_realloc(call->pool, call->out, cap);
    if (grown == NULL)
        return RMQ_ENOMEM;
    call->out = grown;
    call->out_cap = cap;
    return RMQ_OK;
}

rmq_err_t rmq_grpc_write(rmq_grpc_call_t *call, const uint8_t *data, size_t len)
{
    if (!rmq_grpc_call_live(call) || len > UINT32_MAX)
        return RMQ_ECLOSED;
    if (call_start_response(call) != 0)
        return RMQ_ECLOSED;
    if (call_out_reserve(call, GRPC_PREFIX + len) != RMQ_OK)
        return RMQ_ENOMEM;
    uint8_t *at = call->out + call->out_len;
    at[0] = 0;
    at[1] = (uint8_t)(len >> 24);
    at[2] = (uint8_t)(len >> 16);
    at[3] = (uint8_t)(len >> 8);
    at[4] = (uint8_t)len;
    if (len > 0)
        memcpy(at + GRPC_PREFIX, data, len);
    call->out_len += GRPC_PREFIX + len;
    nghttp2_session_resume_data(call->gc->h2, call->stream_id);
    gc_schedule_flush(call->gc);
    return RMQ_OK;
}

void rmq_grpc_finish(rmq_grpc_call_t *call, int status, const char *message)
{
    if (!call->held)
        return;
    call->held = 0;
    if (call->gc == NULL) {
        call_free(call);
        return;
    }
    call_end(call, status, message);
}

void rmq_grpc_reply(rmq_grpc_call_t *call, const uint8_t *data, size_t len)
{
    rmq_err_t err = rmq_grpc_write(call, data, len);

    if (err == RMQ_ENOMEM)
        rmq_grpc_finish(call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
    else
        rmq_grpc_finish(call, RMQ_GRPC_OK, NULL);
}

/* ---- requests ------------------------------------------------------------- */

/* Hands call to its method's handler, which holds it from now on. */
static void call_dispatch(rmq_grpc_call_t *call)
{
    call->held = 1;
    call->method->fn(call, call->method->arg);
}

/* One whole request message: kept (unary) or handed to the holder. */
static void call_message(rmq_grpc_call_t *call, const uint8_t *data, size_t len)
{
    if (call->method->kind == RMQ_GRPC_STREAM_REQUEST) {
        if (call->held && call->on_message != NULL)
            call->on_message(call, data, len, call->message_arg);
        return;
    }
    if (call->nrequests++ > 0)
        return;
    call->request = rmq_h2mem_alloc(call->pool, len ? len : 1);
    if (call->request == NULL) {
        call_end(call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    memcpy(call->request, data, len);
    call->request_len = len;
}

/* The length of the message whose 5-byte prefix is at p. */
static size_t prefix_length(const uint8_t *p)
{
    return (size_t)p[1] << 24 | (size_t)p[2] << 16 | (size_t)p[3] << 8 | p[4];
}

/* Hands over one whole message (flag: its prefix's compressed flag): 0
 * when it ended the call (too big, bad flag, bad gzip). */
static int call_take_one(rmq_grpc_call_t *call, uint8_t flag, const uint8_t *msg, size_t len, size_t max)
{
    if (len > max) {
        call_end(call, RMQ_GRPC_RESOURCE_EXHAUSTED, "request message over the size limit");
        return 0;
    }
    if (flag == 0) {
        call_message(call, msg, len);
    } else if (flag == 1 && call->gzip) {
        uint8_t *plain;
        size_t plain_len;
        char why[96], message[160];
        if (rmq_inflate(msg, len, GZIP_WINDOW_BITS, max, &plain, &plain_len, why, sizeof(why)) != RMQ_OK) {
            snprintf(message, sizeof(message), "cannot inflate a gzip request message: %s", why);
            call_end(call, RMQ_GRPC_INTERNAL, message);
            return 0;
        }
        call_message(call, plain, plain_len);
        free(plain);
    } else {
        call_end(call, RMQ_GRPC_INTERNAL, flag == 1
                 ? "compressed request message without grpc-encoding"
                 : "bad compressed flag on a request message");
        return 0;
    }
    return !call->ended;
}

/* Takes every whole message off the front of call->in. */
static void call_take_buffered(rmq_grpc_call_t *call, size_t max)
{
    uint8_t prefix[GRPC_PREFIX];

    while (!call->ended && evbuffer_copyout(call->in, prefix, GRPC_PREFIX) == GRPC_PREFIX) {
        size_t len = prefix_length(prefix);
        if (len <= max && evbuffer_get_length(call->in) < GRPC_PREFIX + len)
            return;
        const uint8_t *msg = len <= max
            ? evbuffer_pullup(call->in, (ev_ssize_t)(GRPC_PREFIX + len)) + GRPC_PREFIX : NULL;
        if (!call_take_one(call, prefix[0], msg, len, max))
            return;
        evbuffer_drain(call->in, GRPC_PREFIX + len);
    }
}

/* Request bytes of a DATA frame: the whole messages they hold are taken
 * straight from them while nothing is buffered (the usual case: a message
 * in one frame), the rest is kept in call->in. */
static void call_take_data(rmq_grpc_call_t *call, const uint8_t *data, size_t len, size_t max)
{
    while (!call->ended && (call->in == NULL || evbuffer_get_length(call->in) == 0) &&
           len >= GRPC_PREFIX && len - GRPC_PREFIX >= prefix_length(data)) {
        size_t n = prefix_length(data);
        if (!call_take_one(call, data[0], data + GRPC_PREFIX, n, max))
            return;
        data += GRPC_PREFIX + n;
        len -= GRPC_PREFIX + n;
    }
    if (call->ended || len == 0)
        return;
    if (call->in == NULL && (call->in = evbuffer_new()) == NULL) {
        call_end(call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    if (evbuffer_add(call->in, data, len) != 0) {
        call_end(call, RMQ_GRPC_RESOURCE_EXHAUSTED, "out of memory");
        return;
    }
    call_take_buffered(call, max);
}

/* Request bytes that are no whole message yet. */
static size_t call_buffered(const rmq_grpc_call_t *call)
{
    return call->in != NULL ? evbuffer_get_length(call->in) : 0;
}

/* The client ended its side: a unary request goes to its handler, a
 * streaming one's holder hears the half-close. */
static void call_input_ended(rmq_grpc_call_t *call)
{
    if (call->ended)
        return;
    if (call->method->kind == RMQ_GRPC_STREAM_REQUEST) {
        if (call->held && call->on_message != NULL)
            call->on_message(call, NULL, 0, call->message_arg);
        return;
    }
    if (call_buffered(call) > 0 || call->nrequests != 1) {
        call_end(call, RMQ_GRPC_INTERNAL, call->nrequests == 0 && call_buffered(call) == 0
                 ? "no request message" : "not exactly one whole request message");
        return;
    }
    call_dispatch(call);
}

static const rmq_grpc_method_t *method_find(const grpc_state_t *st, const char *path)
{
    for (size_t i = 0; i < st->nmethods; i++)
        if (strcmp(st->methods[i].path, path) == 0)
            return &st->methods[i];
    return NULL;
}

/* 1 for application/grpc, application/grpc+proto, application/grpc;... */
static int grpc_content_type(const char *ct)
{
    size_t n = sizeof("application/grpc") - 1;

    return ct != NULL && strncasecmp(ct, "application/grpc", n) == 0 &&
           (ct[n] == '\0' || ct[n] == '+' || ct[n] == ';');
}

/* The request headers the codec reads itself (NULL: absent; the first
 * of a repeated one). */
typedef struct call_meta {
    const char *method;
    const char *path;
    const char *content_type;
    const char *encoding;
    const char *timeout;
} call_meta_t;

#define NAME_IS(h, lit) header_named(h, lit, sizeof(lit) - 1)

/* Reads call's meta in one pass over its headers. */
static void call_read_meta(const rmq_grpc_call_t *call, call_meta_t *meta)
{
    *meta = (call_meta_t){ 0 };
    for (size_t i = 0; i < call->nheaders; i++) {
        const grpc_header_t *h = &call->headers[i];
        const char **slot = NAME_IS(h, ":method") ? &meta->method
                          : NAME_IS(h, ":path") ? &meta->path
                          : NAME_IS(h, "content-type") ? &meta->content_type
                          : NAME_IS(h, "grpc-encoding") ? &meta->encoding
                          : NAME_IS(h, "grpc-timeout") ? &meta->timeout : NULL;
        if (slot != NULL && *slot == NULL)
            *slot = h->value;
    }
}

/* The HTTP status refusing a request that is no gRPC call (the session
 * runs without nghttp2's HTTP messaging checks: this is where a request's
 * HTTP form is checked), NULL for a gRPC call: POST (else 405), a :path
 * that starts with '/' (else 404), content-type application/grpc[+...]
 * (else 415). */
static const char *call_http_refusal(const call_meta_t *meta)
{
    if (meta->method == NULL || strcmp(meta->method, "POST") != 0)
        return "405";
    if (meta->path == NULL || meta->path[0] != '/')
        return "404";
    if (!grpc_content_type(meta->content_type))
        return "415";
    return NULL;
}

/* The request headers are complete: checks them and picks the method; a
 * streaming request's handler runs now. */
static void call_headers_done(rmq_grpc_call_t *call)
{
    call_meta_t meta;

    call_read_meta(call, &meta);
    call->path = meta.path != NULL ? meta.path : "";

    const char *refusal = call_http_refusal(&meta);
    if (refusal != NULL) {
        nghttp2_nv nva[] = { NV_LIT(":status", refusal) };
        call->ended = 1;
        call->response_started = 1;
        h2_submit_response(call->gc->h2, call->stream_id, nva, 1, NULL);
        return;
    }
    if (meta.timeout != NULL &&
        rmq_grpc_parse_timeout(meta.timeout, rmq_mono_ms(), &call->deadline_ms) != RMQ_OK) {
        call_end(call, RMQ_GRPC_INTERNAL, "malformed grpc-timeout");
        return;
    }
    if (meta.encoding != NULL && strcmp(meta.encoding, "identity") != 0 &&
        strcmp(meta.encoding, "gzip") != 0) {
        call->bad_encoding = 1;
        call_end(call, RMQ_GRPC_UNIMPLEMENTED, "grpc-encoding not supported: identity, gzip");
        return;
    }
    call->gzip = meta.encoding != NULL && strcmp(meta.encoding, "gzip") == 0;
    call->method = method_find(call->gc->st, call->path);
    if (call->method == NULL) {
        call_end(call, RMQ_GRPC_UNIMPLEMENTED, "unknown method");
        return;
    }
    if (call->method->kind == RMQ_GRPC_STREAM_REQUEST)
        call_dispatch(call);
}

/* ---- nghttp2 callbacks ------------------------------------------------------ */

static rmq_grpc_call_t *stream_call(grpc_conn_t *gc, int32_t stream_id)
{
    return nghttp2_session_get_stream_user_data(gc->h2, stream_id);
}

static int on_begin_headers(nghttp2_session *h2, const nghttp2_frame *frame, void *user_data)
{
    grpc_conn_t *gc = user_data;

    if (gc->dead)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (frame->hd.type != NGHTTP2_HEADERS || frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    rmq_grpc_call_t *call = call_new(gc, frame->hd.stream_id);
    if (call == NULL)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    nghttp2_session_set_stream_user_data(h2, frame->hd.stream_id, call);
    gc->headers_call = call;
    return 0;
}

/* Keeps a request header of the HEADERS under way (its call is
 * gc->headers_call: HEADERS and CONTINUATION frames of a stream come
 * uninterrupted); over RMQ_GRPC_HEADERS_MAX the stream is reset. */
static int on_header(nghttp2_session *h2, const nghttp2_frame *frame, nghttp2_rcbuf *name,
                     nghttp2_rcbuf *value, uint8_t flags, void *user_data)
{
    grpc_conn_t *gc = user_data;

    if (gc->dead)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    rmq_grpc_call_t *call = gc->headers_call;
    if (call == NULL || call->stream_id != frame->hd.stream_id ||
        frame->headers.cat != NGHTTP2_HCAT_REQUEST)
        return 0;
    nghttp2_vec n = nghttp2_rcbuf_get_buf(name), v = nghttp2_rcbuf_get_buf(value);
    call->header_bytes += n.len + v.len;
    if (call->header_bytes > RMQ_GRPC_HEADERS_MAX)
        return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
    if (call->nheaders == call->headers_cap) {
        size_t cap = call->headers_cap ? 2 * call->headers_cap : GRPC_HEADERS_FIRST;
        grpc_header_t *grown = rmq_h2mem_realloc(call->pool, call->headers, cap * sizeof(*grown));
        if (grown == NULL)
            return NGHTTP2_ERR_TEMPORAL_CALLBACK_FAILURE;
        call->headers = grown;
        call->headers_cap = cap;
    }
    nghttp2_rcbuf_incref(name);
    nghttp2_rcbuf_incref(value);
    call->headers[call->nheaders++] = (grpc_header_t){ name, value, (const char *)n.base, n.len,
                                                       (const char *)v.base };
    return 0;
}

static int on_data_chunk(nghttp2_session *h2, uint8_t flags, int32_t stream_id,
                         const uint8_t *data, size_t len, void *user_data)
{
    grpc_conn_t *gc = user_data;

    if (gc->dead)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    rmq_grpc_call_t *call = stream_call(gc, stream_id);
    if (call == NULL || call->ended || call->method == NULL)
        return 0;
    call_take_data(call, data, len, rmq_server_max_frame(gc->st->srv));
    return 0;
}

static int on_frame_recv(nghttp2_session *h2, const nghttp2_frame *frame, void *user_data)
{
    grpc_conn_t *gc = user_data;

    if (gc->dead)
        return NGHTTP2_ERR_CALLBACK_FAILURE;
    if (frame->hd.type != NGHTTP2_HEADERS && frame->hd.type != NGHTTP2_DATA)
        return 0;
    rmq_grpc_call_t *call = stream_call(gc, frame->hd.stream_id);
    if (call == NULL)
        return 0;
    if (frame->hd.type == NGHTTP2_HEADERS && frame->headers.cat == NGHTTP2_HCAT_REQUEST)
        call_headers_done(call);
    if ((frame->hd.flags & NGHTTP2_FLAG_END_STREAM) && call->method != NULL)
        call_input_ended(call);
    return 0;
}

static int on_stream_close(nghttp2_session *h2, int32_t stream_id, uint32_t error_code,
                           void *user_data)
{
    grpc_conn_t *gc = user_data;
    rmq_grpc_call_t *call = stream_call(gc, stream_id);

    if (call != NULL && call->gc == gc)
        call_detach(call);
    return 0;
}

/* ---- the connection's session ---------------------------------------------- */

/* Frees gc (its calls are detached already). */
static void gc_destroy(grpc_conn_t *gc)
{
    nghttp2_session_del(gc->h2);
    rmq_h2mem_release(gc->pool);
    event_free(gc->flush_ev);
    free(gc);
}

/* Closes the connection once the session wants neither to read nor to
 * write (after GOAWAY) and its last frames have left the output. */
static void gc_close_if_over(grpc_conn_t *gc)
{
    if (!nghttp2_session_want_read(gc->h2) && !nghttp2_session_want_write(gc->h2) &&
        rmq_conn_output_len(gc->conn) == 0)
        rmq_conn_close(gc->conn, "HTTP/2 session ended");
}

/* Writes what the session has to send into the connection's output, up to
 * GRPC_OUTPUT_HIGH unsent bytes (the rest when the output drains). */
static void gc_flush(grpc_conn_t *gc)
{
    rmq_conn_t *conn = gc->conn;
    struct evbuffer *out = rmq_conn_output(conn);
    int failed = 0;

    if (out == NULL)
        return;
    gc->busy++;
    while (!gc->dead && rmq_conn_output_len(conn) < GRPC_OUTPUT_HIGH &&
           nghttp2_session_want_write(gc->h2)) {
        const uint8_t *data;
        h2_ssize_t n = h2_mem_send(gc->h2, &data);
        if (n < 0) {
            failed = 1;
            break;
        }
        if (n == 0 || evbuffer_add(out, data, (size_t)n) != 0)
            break;
    }
    gc->busy--;
    if (gc->dead) {
        gc_destroy(gc);
        return;
    }
    rmq_conn_output_done(conn);
    if (failed)
        rmq_conn_close(conn, "HTTP/2 session failed to send");
    else
        gc_close_if_over(gc);
}

static void gc_flush_cb(evutil_socket_t fd, short what, void *arg)
{
    gc_flush(arg);
}

/* One flush per batch: the first write of a loop pass makes it active. */
static void gc_schedule_flush(grpc_conn_t *gc)
{
    if (!gc->dead && !event_pending(gc->flush_ev, EV_TIMEOUT, NULL))
        event_active(gc->flush_ev, EV_TIMEOUT, 0);
}

static nghttp2_session_callbacks *h2_callbacks(void)
{
    nghttp2_session_callbacks *cbs;

    if (nghttp2_session_callbacks_new(&cbs) != 0)
        return NULL;
    nghttp2_session_callbacks_set_on_begin_headers_callback(cbs, on_begin_headers);
    nghttp2_session_callbacks_set_on_header_callback2(cbs, on_header);
    nghttp2_session_callbacks_set_on_data_chunk_recv_callback(cbs, on_data_chunk);
    nghttp2_session_callbacks_set_on_frame_recv_callback(cbs, on_frame_recv);
    nghttp2_session_callbacks_set_on_stream_close_callback(cbs, on_stream_close);
    return cbs;
}

/* gc's nghttp2 server session over its own pool, without nghttp2's HTTP
 * messaging checks (call_http_refusal makes those a gRPC call needs). */
static int h2_session_new(grpc_conn_t *gc, const nghttp2_session_callbacks *cbs)
{
    nghttp2_option *opt;

    if ((gc->pool = rmq_h2mem_new()) == NULL || nghttp2_option_new(&opt) != 0)
        return -1;
    nghttp2_option_set_no_http_messaging(opt, 1);
    int rv = nghttp2_session_server_new3(&gc->h2, cbs, gc, opt, rmq_h2mem_mem(gc->pool));
    nghttp2_option_del(opt);
    return rv;
}

/* Starts conn's session: our SETTINGS (SETTINGS_NO_RFC7540_PRIORITIES:
 * nghttp2 keeps no priority tree, streams of one urgency take turns) and
 * a larger connection window. */
static grpc_conn_t *gc_new(grpc_state_t *st, rmq_conn_t *conn)
{
    grpc_conn_t *gc = calloc(1, sizeof(*gc));
    nghttp2_session_callbacks *cbs = h2_callbacks();
    nghttp2_settings_entry settings[] = {
        { NGHTTP2_SETTINGS_MAX_CONCURRENT_STREAMS, RMQ_GRPC_MAX_STREAMS },
        { NGHTTP2_SETTINGS_INITIAL_WINDOW_SIZE, GRPC_STREAM_WINDOW },
        { NGHTTP2_SETTINGS_NO_RFC7540_PRIORITIES, 1 },
    };

    if (gc == NULL || cbs == NULL)
        goto fail;
    gc->st = st;
    gc->conn = conn;
    TAILQ_INIT(&gc->calls);
    if (h2_session_new(gc, cbs) != 0)
        goto fail;
    nghttp2_session_callbacks_del(cbs);
    cbs = NULL;
    gc->flush_ev = event_new(rmq_server_base(st->srv), -1, 0, gc_flush_cb, gc);
    if (gc->flush_ev == NULL ||
        nghttp2_submit_settings(gc->h2, NGHTTP2_FLAG_NONE, settings, 3) != 0 ||
        nghttp2_session_set_local_window_size(gc->h2, NGHTTP2_FLAG_NONE, 0,
                                              GRPC_CONN_WINDOW) != 0)
        goto fail;
    TAILQ_INSERT_TAIL(&st->conns, gc, link);
    return gc;
fail:
    if (cbs != NULL)
        nghttp2_session_callbacks_del(cbs);
    if (gc != NULL && gc->h2 != NULL)
        nghttp2_session_del(gc->h2);
    if (gc != NULL)
        rmq_h2mem_release(gc->pool);
    if (gc != NULL && gc->flush_ev != NULL)
        event_free(gc->flush_ev);
    free(gc);
    return NULL;
}

/* Feeds what the input holds to conn's session (started on the first
 * bytes) and schedules the flush. RMQ_OK when bytes were consumed,
 * RMQ_EAGAIN on an empty input, RMQ_EPROTO when nghttp2 refuses them. */
static rmq_err_t grpc_serve(rmq_conn_t *conn, struct evbuffer *in, void *state, const char **why)
{
    grpc_conn_t *gc = rmq_conn_codec_data(conn);
    struct evbuffer_iovec vec;

    if (evbuffer_get_length(in) == 0)
        return RMQ_EAGAIN;
    if (gc == NULL) {
        gc = gc_new(state, conn);
        if (gc == NULL) {
            *why = "cannot start an HTTP/2 session";
            return RMQ_ENOMEM;
        }
        rmq_conn_set_codec_data(conn, gc);
    }
    while (!gc->dead && evbuffer_peek(in, -1, NULL, &vec, 1) == 1 && vec.iov_len > 0) {
        gc->busy++;
        h2_ssize_t n = h2_mem_recv(gc->h2, vec.iov_base, vec.iov_len);
        gc->busy--;
        if (gc->dead)
            break;
        if (n < 0) {
            *why = nghttp2_strerror((int)n);
            return RMQ_EPROTO;
        }
        evbuffer_drain(in, (size_t)n);
    }
    if (gc->dead) {
        gc_destroy(gc);
        return RMQ_OK;
    }
    gc_schedule_flush(gc);
    return RMQ_OK;
}

/* The connection closes: every open stream's call is detached (held calls
 * hear it through their cancel callback); the session goes now, or when
 * the nghttp2 call under way returns. */
static void grpc_conn_closed(rmq_conn_t *conn, void *state)
{
    grpc_conn_t *gc = rmq_conn_codec_data(conn);
    rmq_grpc_call_t *call;

    if (gc == NULL)
        return;
    rmq_conn_set_codec_data(conn, NULL);
    TAILQ_REMOVE(&gc->st->conns, gc, link);
    gc->dead = 1;
    event_del(gc->flush_ev);
    while ((call = TAILQ_FIRST(&gc->calls)) != NULL)
        call_detach(call);
    if (!gc->busy)
        gc_destroy(gc);
}

static void grpc_conn_drained(rmq_conn_t *conn, void *state)
{
    grpc_conn_t *gc = rmq_conn_codec_data(conn);

    if (gc == NULL)
        return;
    if (nghttp2_session_want_write(gc->h2))
        gc_schedule_flush(gc);
    else
        gc_close_if_over(gc);
}

static void grpc_free_state(void *state)
{
    grpc_state_t *st = state;

    free(st->methods);
    free(st);
}

const rmq_codec_t rmq_codec_grpc = {
    .name = "grpc",
    .probe = grpc_probe,
    .serve = grpc_serve,
    .free_state = grpc_free_state,
    .conn_closed = grpc_conn_closed,
    .conn_drained = grpc_conn_drained,
};

/* ---- set-up and shutdown ------------------------------------------------------ */

rmq_err_t rmq_grpc_install(rmq_server_t *srv, const rmq_grpc_method_t *methods, size_t n)
{
    grpc_state_t *st = calloc(1, sizeof(*st));

    if (st == NULL)
        return RMQ_ENOMEM;
    st->srv = srv;
    TAILQ_INIT(&st->conns);
    if (n > 0) {
        st->methods = calloc(n, sizeof(*methods));
        if (st->methods == NULL) {
            free(st);
            return RMQ_ENOMEM;
        }
        memcpy(st->methods, methods, n * sizeof(*methods));
        st->nmethods = n;
    }
    rmq_err_t err = rmq_server_add_codec(srv, &rmq_codec_grpc, st);
    if (err != RMQ_OK)
        grpc_free_state(st);
    return err;
}

void rmq_grpc_goaway(rmq_server_t *srv)
{
    grpc_state_t *st = rmq_server_codec_state(srv, &rmq_codec_grpc);
    grpc_conn_t *gc, *next;
    size_t n = 0;

    if (st == NULL)
        return;
    for (gc = TAILQ_FIRST(&st->conns); gc != NULL; gc = next, n++) {
        next = TAILQ_NEXT(gc, link);
        nghttp2_submit_goaway(gc->h2, NGHTTP2_FLAG_NONE,
                              nghttp2_session_get_last_proc_stream_id(gc->h2),
                              NGHTTP2_NO_ERROR, NULL, 0);
        gc_flush(gc);
    }
    if (n > 0)
        LOG_INFO("%s: GOAWAY sent on %zu gRPC connections", rmq_server_name(srv), n);
}
