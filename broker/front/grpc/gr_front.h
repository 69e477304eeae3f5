/* gr_front.h: the broker's RocketMQ 5 gRPC front-end (GRPC-NOTES.md), on
 * the broker's own port next to the native and remoting protocols (the
 * transport picks the codec from the HTTP/2 preface). Each file of the
 * front exports its rows of methods (a gr_methods_t), and gr_front.c
 * installs them all as one method table; a handler gets the call and the
 * gr_front_t as its arg, decodes its request with rmq_grpc_decode, asks
 * who the caller is and whether it may (the one table, bk_perm.h), calls
 * the core and answers with rmq_grpc_answer. Application errors ride in
 * the response's own Status with grpc-status 0, as the proxy answers;
 * bytes that are no request get grpc-status INVALID_ARGUMENT. A client's
 * session (its settings from Telemetry, its server-pushed commands) is the
 * connection's data, so the broker's close hook releases it like the
 * other fronts' sessions. Loop thread only. */
#ifndef GR_FRONT_H
#define GR_FRONT_H

#include <stddef.h>

#include <protobuf-c/protobuf-c.h>

#include "apache/rocketmq/v2/service.pb-c.h"
#include "bk_front.h"
#include "bk_perm.h"
#include "gr_session.h"
#include "gr_settings.h"
#include "namesrv.pb-c.h"
#include "gr_status.h"
#include "rmq_codec_grpc.h"
#include "rmq_grpc_pb.h"
#include "rmq_grpc_recall.h"

#define GR_PATH(method) "/apache.rocketmq.v2.MessagingService/" method

typedef struct gr_front {
    bk_front_t *fe;
    gr_settings_config_t settings;   /* the server's side of every Settings reply */
    char **ns;                       /* the name servers (namesrvAddr), for QueryRoute */
    size_t nns;
    rmq_client_pool_t *ns_pool;      /* clients of the name servers */
    struct gr_telemetry *streams;    /* the open Telemetry streams (gr_client.c) */
    rmq_recall_fwds_t *recalls;      /* recalls forwarded to another broker (gr_send.c) */
} gr_front_t;

/* The rows one file of the front serves: each method's arg is set to the
 * gr_front_t when installed. */
typedef struct gr_methods {
    const rmq_grpc_method_t *rows;
    size_t n;
} gr_methods_t;

/* gr_client.c: Heartbeat, Telemetry, NotifyClientTermination. */
extern const gr_methods_t gr_client_methods;
/* gr_send.c: SendMessage, EndTransaction, RecallMessage. */
extern const gr_methods_t gr_send_methods;
/* gr_route.c: QueryRoute. */
extern const gr_methods_t gr_route_methods;

/* Answers call with topic's route rd (a name server's); arg as given to
 * gr_route_fetch. rd NULL: no route came, call is answered already, only
 * arg is left to release. */
typedef void (*gr_route_fn)(rmq_grpc_call_t *call, const Rmq__TopicRouteData *rd, const char *topic, void *arg);

/* Asks the broker's name servers for topic's route, then runs
 * answer(call, route, topic, arg) once: with the route, or with NULL after
 * answering call with a response of type resp holding only a status
 * (TOPIC_NOT_FOUND, INTERNAL_SERVER_ERROR when none answered): 1, or 0
 * with st set when out of memory (call unanswered, answer never runs). */
int gr_route_fetch(gr_front_t *gf, rmq_grpc_call_t *call, const char *topic, const ProtobufCMessageDescriptor *resp,
                   gr_route_fn answer, void *arg, gr_status_t *st);
/* gr_consume.c: QueryAssignment, ReceiveMessage, AckMessage,
 * ChangeInvisibleDuration, ForwardMessageToDeadLetterQueue. */
extern const gr_methods_t gr_consume_methods;

/* ---- what bk_broker.c calls ------------------------------------------------- */

/* Installs the gRPC codec with every file's methods on fe->srv. NULL with
 * err filled on failure. */
gr_front_t *gr_front_start(bk_front_t *fe, char *err, size_t errlen);
void gr_front_free(gr_front_t *gf);
/* A clean stop: ends every open Telemetry stream with grpc-status 0, so
 * clients see the end, not a dropped connection (gr_client.c). */
void gr_front_stop(gr_front_t *gf);

/* ---- the per-call plumbing every handler shares ---------------------------- */

/* rmq_grpc_answer_status (rmq_grpc_pb.h) with st. */
void gr_call_answer_status(rmq_grpc_call_t *call, const ProtobufCMessageDescriptor *desc, const gr_status_t *st);

/* The caller's client id (metadata x-mq-client-id), or NULL with st set
 * to CLIENT_ID_REQUIRED. */
const char *gr_call_client_id(rmq_grpc_call_t *call, gr_status_t *st);

/* The session of the call's client (x-mq-client-id) on its connection,
 * made on first use; NULL with st set (CLIENT_ID_REQUIRED, or
 * INTERNAL_SERVER_ERROR when out of memory). */
gr_session_t *gr_call_session(const gr_front_t *gf, rmq_grpc_call_t *call, gr_status_t *st);

/* "ip:port" of the caller. */
const char *gr_call_peer(const rmq_grpc_call_t *call);

/* Who asks, by the call's signature (rmq_grpc_auth.h): 1 with who filled
 * (account NULL: access control off or the peer whitelisted), or 0 with
 * st UNAUTHORIZED (access control on and no valid signature). */
int gr_call_caller(const gr_front_t *gf, rmq_grpc_call_t *call, bk_caller_t *who, gr_status_t *st);

/* Whether the caller may do op on topic and group (NULL where op names
 * none), by the one permission table: 1, or 0 with st UNAUTHORIZED or
 * FORBIDDEN and the core's reason. */
int gr_call_allowed(const gr_front_t *gf, rmq_grpc_call_t *call, bk_op_t op, const char *topic, const char *group,
                    gr_status_t *st);

#endif
