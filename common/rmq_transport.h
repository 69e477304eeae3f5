/* rmq_transport.h: the transport under every wire protocol, and the codec
 * interface that protocols implement over it.
 *
 * The transport (rmq_transport.c) owns the listener, the connections
 * (rmq_conn_t: the session handle every codec shares), the one TLS sniff of
 * a connection's first byte, back-pressure and the deferred free. It knows
 * no wire format: the first bytes a connection sends (after TLS) choose its
 * codec among those registered on the server, so several protocols share one
 * port: the first codec whose probe answers YES takes the connection; while
 * one still answers MORE the transport waits for more bytes; when every
 * probe answers NO, the first codec registered (the default: rmq on
 * rmq_server_new's servers) takes it and refuses it with its own reason.
 * From then on the transport hands the connection's input to that codec,
 * one request at a time.
 *
 * A codec is one file: a static rmq_codec_t and whatever state it needs,
 * registered with rmq_server_add_codec by whoever builds the server. It
 * decodes its frames, checks its own signatures, calls its handlers, and
 * writes its replies and pushes into rmq_conn_output() followed by
 * rmq_conn_output_done(). The native rmq codec (rmq_codec_rmq.c, the API in
 * rmq_rpc.h) is the first; rmq_server_new() registers it. Loop thread only. */
#ifndef RMQ_TRANSPORT_H
#define RMQ_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "rmq_rpc.h"

/* Verdicts of a codec's probe on a connection's first bytes. */
typedef enum rmq_codec_probe {
    RMQ_CODEC_NO = 0,      /* not this protocol */
    RMQ_CODEC_YES = 1,     /* this protocol: the codec takes the connection */
    RMQ_CODEC_MORE = 2,    /* cannot tell yet: wait for more bytes */
} rmq_codec_probe_t;

/* The largest prefix a probe is shown; a probe must decide with this many. */
#define RMQ_CODEC_PROBE_MAX 16

typedef struct rmq_codec {
    const char *name;      /* for log lines: "rmq", "remoting" */
    /* Looks at the first len (<= RMQ_CODEC_PROBE_MAX) bytes of a connection
     * on a server taking frames up to max_frame. Pure; must answer NO or YES
     * once len reaches RMQ_CODEC_PROBE_MAX. */
    rmq_codec_probe_t (*probe)(const uint8_t *data, size_t len, uint32_t max_frame);
    /* Decodes at most one request from the front of in and handles it (a
     * codec that keeps its own stream state, rmq_codec_grpc.c, may take
     * all of in at once). RMQ_OK: one request consumed (the transport calls again while the
     * connection reads); RMQ_EAGAIN: not a whole request yet, nothing
     * consumed; any other error: the connection is closed with *why logged. */
    rmq_err_t (*serve)(rmq_conn_t *conn, struct evbuffer *in, void *state, const char **why);
    /* Frees state at rmq_server_free (may be NULL). */
    void (*free_state)(void *state);
    /* May be NULL. Runs once when a connection this codec took starts
     * closing, before the server's on_close: the codec drops what it keeps
     * for the connection (rmq_conn_codec_data). */
    void (*conn_closed)(rmq_conn_t *conn, void *state);
    /* May be NULL. Runs when the unsent output of a connection this codec
     * took has drained to half of max_output_bytes or below: a codec that
     * holds back output of its own (rmq_codec_grpc.c) writes more. */
    void (*conn_drained)(rmq_conn_t *conn, void *state);
} rmq_codec_t;

/* Creates a transport with no codec (rmq_server_new adds the rmq codec).
 * opts as for rmq_server_new. Owner: caller. */
rmq_server_t *rmq_transport_new(struct event_base *base, const rmq_server_opts_t *opts);

/* Registers codec (borrowed, static) with state (owned by the server from
 * now on: codec->free_state runs at rmq_server_free). Probes run in
 * registration order; the first is the default. RMQ_EINVAL if codec is already registered or the table
 * is full. Set-up time, before listen. */
rmq_err_t rmq_server_add_codec(rmq_server_t *srv, const rmq_codec_t *codec, void *state);

/* The state registered with codec on srv, or NULL. */
void *rmq_server_codec_state(const rmq_server_t *srv, const rmq_codec_t *codec);

/* The server's name for log lines and its maximum frame length (never 0). */
const char *rmq_server_name(const rmq_server_t *srv);
uint32_t rmq_server_max_frame(const rmq_server_t *srv);

/* The server a connection belongs to; NULL once it has left it (closed). */
rmq_server_t *rmq_conn_server(const rmq_conn_t *conn);

/* The event loop a server runs on. */
struct event_base *rmq_server_base(const rmq_server_t *srv);

/* What conn's codec keeps for the connection (NULL until it sets it). */
void *rmq_conn_codec_data(const rmq_conn_t *conn);
void rmq_conn_set_codec_data(rmq_conn_t *conn, void *data);

/* The codec that took conn; NULL until its first bytes arrived. */
const rmq_codec_t *rmq_conn_codec(const rmq_conn_t *conn);

/* Where a codec writes conn's replies and pushes; NULL when the connection
 * is closing or its socket is gone. Follow every write with
 * rmq_conn_output_done(). */
struct evbuffer *rmq_conn_output(rmq_conn_t *conn);

/* After a write into rmq_conn_output(): pauses reading from a peer whose
 * unsent output is over max_output_bytes. */
void rmq_conn_output_done(rmq_conn_t *conn);

/* The native codec (rmq_codec_rmq.c): rmq frames, dispatch by request code
 * to rmq_server_handle's table, replies and pushes of rmq_rpc.h. */
extern const rmq_codec_t rmq_codec_rmq;

#endif
