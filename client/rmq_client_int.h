/* rmq_client_int.h: librmq's private declarations, shared by its modules:
 * errors, message codec helpers, tag expressions, routes, queue allocation,
 * and the client instance (loop thread + connections + name servers). */
#ifndef RMQ_CLIENT_INT_H
#define RMQ_CLIENT_INT_H

#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "rmq/rmq.h"
#include "rmq_frame.h"
#include "rmq_loop.h"
#include "rmq_message.h"
#include "rmq_rpc.h"

#define RMQ_DEFAULT_TOPIC "TBW102"
#define RMQ_DEFAULT_TOPIC_QUEUES 4   /* queues of a topic created on first send */
#define RMQ_CONTROL_TIMEOUT_MS 3000

struct rmq_tags;

/* ---- errors (rmq_error.c) --------------------------------------------- */

/* Fills e (may be NULL) with err, status and a printf-formatted detail; returns err. */
rmq_err_t rmq_error_set(rmq_error_t *e, rmq_err_t err, int status, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
/* Turns an rpc outcome into an error: transport errors as is, a non-SUCCESS
 * status as RMQ_ESTATUS with the status name and remark. what names the call. */
rmq_err_t rmq_error_from_rpc(rmq_error_t *e, rmq_err_t err, const rmq_frame_t *resp,
                             const char *what);

/* ---- message helpers (rmq_msgcodec.c) --------------------------------- */

/* Writes a fresh 32-hex-digit unique id into out[33]. Any thread. */
void rmq_msg_uniq_id(char out[33]);
/* Validates msg (topic, body, sizes, property bytes) against max_body. */
rmq_err_t rmq_msg_validate(const rmq_message_t *msg, size_t max_body, rmq_error_t *e);
/* Builds msg's properties (TAGS, KEYS, UNIQ_KEY = uniq, user ones) into pb
 * (rmq_message.h; initialised empty by the caller; rmq_props_buf_free
 * releases it). */
rmq_err_t rmq_msg_props_build(const rmq_message_t *msg, const char *uniq, rmq_props_buf_t *pb);
/* Makes an owned, self-contained rmq_message_ext_t from a decoded record
 * (one allocation; free()). NULL on ENOMEM. */
rmq_message_ext_t *rmq_msg_ext_from_record(const rmq_record_t *rec, const char *broker_name);
/* Decodes a pulled body into owned messages, keeping those whose tag
 * matches tags (NULL: all). Appends to *msgs (realloc'd) / *n. */
rmq_err_t rmq_msg_decode_pulled(const uint8_t *data, size_t len, const char *broker_name,
                                const struct rmq_tags *tags, rmq_message_ext_t ***msgs, size_t *n);

/* ---- tag expressions (rmq_tags.c) ------------------------------------- */

/* A parsed subscription expression: "*" (all) or a set of tags. */
typedef struct rmq_tags {
    int all;
    char **tags;
    size_t n;
} rmq_tags_t;

/* Parses "*", "" / NULL (all) or "A || B". RMQ_EINVAL on an empty tag. */
rmq_err_t rmq_tags_parse(const char *expr, rmq_tags_t *t);
/* 1 if a message with tag (len bytes, may be 0) passes. */
int rmq_tags_match(const rmq_tags_t *t, const char *tag, size_t len);
void rmq_tags_free(rmq_tags_t *t);

/* ---- routes (rmq_route.c) --------------------------------------------- */

typedef struct rmq_mq {
    char broker_name[64];
    int32_t queue_id;
} rmq_mq_t;

typedef struct rmq_route_broker {
    char name[64];
    char master[64];                /* "" when the route has no master (id 0) */
    char slave[64];                 /* lowest-id slave, "" if none */
} rmq_route_broker_t;

/* One topic's route, flattened and sorted: brokers by name, queues by
 * (broker name, queue id). Immutable once built. */
typedef struct rmq_route {
    rmq_route_broker_t *brokers;
    size_t nbrokers;
    rmq_mq_t *pub;                  /* writable queues of masters */
    size_t npub;
    rmq_mq_t *sub;                  /* readable queues */
    size_t nsub;
} rmq_route_t;

/* Builds a route from a name server's answer; NULL on ENOMEM. */
rmq_route_t *rmq_route_from_proto(const Rmq__TopicRouteData *rd);
void rmq_route_free(rmq_route_t *r);
/* 1 if the two routes have the same brokers and queues. */
int rmq_route_equal(const rmq_route_t *a, const rmq_route_t *b);
const rmq_route_broker_t *rmq_route_broker(const rmq_route_t *r, const char *name);
/* Where to read broker name's queues: its master, else a slave; NULL if neither. */
const char *rmq_route_read_addr(const rmq_route_t *r, const char *name);
/* The master's address of broker name, or NULL. */
const char *rmq_route_master_addr(const rmq_route_t *r, const char *name);
/* Picks a publish queue index by round robin from *counter, skipping
 * brokers for which avoid(name, arg) is true and broker last_failed (may
 * be NULL); when every queue is skipped, the next one not on last_failed,
 * else the next one. -1 if the route has no publish queue. */
int rmq_route_pick(const rmq_route_t *r, uint32_t *counter, const char *last_failed,
                   int (*avoid)(const char *name, void *arg), void *arg);

/* ---- rebalance (rmq_rebalance.c) -------------------------------------- */

/* AllocateMessageQueueAveragely: the indexes [*start, *start + *count) of
 * nqueues sorted queues that belong to consumer me among sorted cids. *count
 * is 0 when me is not in cids or has no share. */
void rmq_rebalance_allocate(size_t nqueues, const char *const *cids, size_t ncids, const char *me,
                            size_t *start, size_t *count);

/* ---- client instance (rmq_instance.c) --------------------------------- */

typedef struct rmq_instance rmq_instance_t;

/* Completion of an async instance call; loop thread; resp NULL unless err is RMQ_OK. */
typedef rmq_response_fn rmq_instance_cb;

/* Creates an instance for the name-server list "a:p;b:p" (not started).
 * kind names the owner in the client id. Its connections use TLS and sign
 * as sec says (read now; the instance owns what it builds from it), or as
 * the environment says when sec is NULL. NULL with e filled on bad input. */
rmq_instance_t *rmq_instance_new(const char *namesrv, const char *kind, const char *instance_name,
                                 const rmq_security_opts_t *sec, rmq_error_t *e);
/* Starts the loop thread. */
rmq_err_t rmq_instance_start(rmq_instance_t *in);
/* Runs fn(arg) on the loop thread, then stops it: connections close, pending
 * calls fail with RMQ_ESHUTDOWN. Joins the thread. Idempotent. Not from the loop. */
void rmq_instance_stop(rmq_instance_t *in, rmq_loop_fn fn, void *arg);
void rmq_instance_free(rmq_instance_t *in);
struct event_base *rmq_instance_base(rmq_instance_t *in);
const char *rmq_instance_client_id(const rmq_instance_t *in);
/* 1 if the caller runs on the loop thread. */
int rmq_instance_on_loop(const rmq_instance_t *in);
/* Queues fn(arg) onto the loop thread. Any thread. */
rmq_err_t rmq_instance_post(rmq_instance_t *in, rmq_loop_fn fn, void *arg);
/* Runs fn(arg) on the loop thread and waits for it to return. Not from the loop. */
rmq_err_t rmq_instance_run(rmq_instance_t *in, rmq_loop_fn fn, void *arg);
/* The connection to addr (created on demand); server pushes go to on_request.
 * Loop thread. */
rmq_client_t *rmq_instance_conn(rmq_instance_t *in, const char *addr);
/* Why the connection to addr last failed (rmq_client_last_error), or "". Loop thread. */
const char *rmq_instance_conn_error(rmq_instance_t *in, const char *addr);
/* Server-pushed requests from any broker go to fn (loop thread). */
void rmq_instance_on_request(rmq_instance_t *in, rmq_handler_fn fn, void *arg);
/* Sends req to addr (copying body); cb runs once. Loop thread. */
rmq_err_t rmq_instance_call(rmq_instance_t *in, const char *addr, Rmq__Command *req,
                            const void *body, size_t len, int timeout_ms, rmq_instance_cb cb,
                            void *arg);
/* Sends req to addr and waits; on RMQ_OK the caller owns *resp
 * (rmq_frame_clear) whatever its status. Not from the loop thread. */
rmq_err_t rmq_instance_call_sync(rmq_instance_t *in, const char *addr, Rmq__Command *req,
                                 const void *body, size_t len, int timeout_ms, rmq_frame_t *resp);

/* Called once with topic's route (owned by the callee on RMQ_OK) or an
 * error and why. Loop thread. */
typedef void (*rmq_route_cb)(rmq_err_t err, rmq_route_t *route, const rmq_error_t *why, void *arg);
/* Asks the name servers (each in turn until one answers) for topic's route. Loop thread. */
void rmq_instance_fetch_route(rmq_instance_t *in, const char *topic, rmq_route_cb cb, void *arg);
/* Blocking form for user threads: *route owned by the caller on RMQ_OK. */
rmq_err_t rmq_instance_fetch_route_sync(rmq_instance_t *in, const char *topic, rmq_route_t **route,
                                        rmq_error_t *e);

/* A periodic timer on the instance loop; fn runs on the loop thread. */
struct event *rmq_instance_timer(rmq_instance_t *in, int interval_ms, event_callback_fn fn, void *arg);

#endif
