/* gr_session.h: a RocketMQ 5 client as the broker core sees it
 * (core/bk_session.h), over one gRPC connection (a 5.x client opens one
 * per endpoint): its client id, the Settings it last sent on Telemetry,
 * and that Telemetry stream, where server commands (transaction
 * check-backs) are pushed. Kept as the connection's data, so the broker's
 * close hook (fr_session_conn_closed) releases it like the other fronts'
 * sessions. Loop thread only. */
#ifndef GR_SESSION_H
#define GR_SESSION_H

#include "apache/rocketmq/v2/service.pb-c.h"
#include "bk_session.h"
#include "rmq_codec_grpc.h"

typedef struct gr_session gr_session_t;

struct gr_session {
    bk_session_t base;               /* first: the core sees only this */
    rmq_conn_t *conn;                /* referenced */
    char *client_id;                 /* NULL until a call names it */
    Apache__Rocketmq__V2__TelemetryCommand *settings_cmd; /* the latest settings (owned), or NULL */
    rmq_grpc_call_t *telemetry;      /* the open Telemetry stream, or NULL */
    size_t max_body_size;            /* a check-back's compressed body inflates to at most this */
};

/* The session of call's connection, created on first use (borrowed), with
 * client_id remembered; NULL when out of memory. */
gr_session_t *gr_session_of(rmq_grpc_call_t *call, const char *client_id, size_t max_body_size);

/* The settings the client last sent, or NULL. */
const Apache__Rocketmq__V2__Settings *gr_session_settings(const gr_session_t *gs);

/* Takes cmd (a TelemetryCommand holding settings) as the client's settings. */
void gr_session_set_settings(gr_session_t *gs, Apache__Rocketmq__V2__TelemetryCommand *cmd);

/* Makes call the stream pushed commands go to (the latest stream that
 * sent Settings; an earlier one stays open until its client ends it);
 * NULL: that stream ended. The stream holds a session reference. */
void gr_session_set_telemetry(gr_session_t *gs, rmq_grpc_call_t *call);

/* Writes cmd on the session's Telemetry stream: RMQ_ECLOSED when none is
 * open, RMQ_ENOMEM. */
rmq_err_t gr_session_push(gr_session_t *gs, const Apache__Rocketmq__V2__TelemetryCommand *cmd);

#endif
