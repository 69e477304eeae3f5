/* rmq/rmq.h: the public API of librmq, the rmq C client library.
 *
 * Three client kinds, each an opaque object with _new / _start / _shutdown /
 * _free: a producer, a push consumer (the library pulls and calls you) and a
 * low-level pull consumer (you pull). Each object owns one internal
 * event-loop thread that does all of its networking; every API function may
 * be called from any user thread. Blocking calls (sync send, pull, offset
 * queries) post to that thread and wait. Callbacks say which thread they
 * run on; a callback that runs on the internal loop thread must not block
 * and must not make blocking calls on the same object (they fail with
 * RMQ_EINVAL instead of deadlocking).
 *
 * Errors: functions return rmq_err_t (RMQ_OK = 0, negative on failure, see
 * rmq_err.h and rmq_strerror()). Where a broker answered with a failure
 * status, the error is RMQ_ESTATUS and an rmq_error_t (when passed) carries
 * the status, its name (rmq_status_name()) and the broker's remark. No
 * network condition ever aborts the process. */
#ifndef RMQ_RMQ_H
#define RMQ_RMQ_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- errors ------------------------------------------------------------ */

/* Why a call failed: err, the broker status (0 when the broker was not
 * reached or answered SUCCESS) and one readable line
 * "<rmq_strerror(err)>[: <STATUS_NAME>][: <remark or detail>]". */
typedef struct rmq_error {
    rmq_err_t err;
    int status;
    char text[256];
} rmq_error_t;

/* Name of a broker Status value ("SLAVE_NOT_AVAILABLE"), or "UNKNOWN". Any thread. */
const char *rmq_status_name(int status);

/* ---- messages ---------------------------------------------------------- */

/* A user property. Names and values must not contain bytes 0x01 or 0x02. */
typedef struct rmq_property {
    const char *name;
    const char *value;
} rmq_property_t;

/* A message to send. Every pointer is the caller's and only read during the
 * send call (async sends copy what they need before returning). */
typedef struct rmq_message {
    const char *topic;              /* required */
    const char *tags;               /* one tag, may be NULL */
    const char *keys;               /* space-separated business keys, may be NULL */
    const void *body;               /* required, body_len > 0 */
    size_t body_len;
    const rmq_property_t *props;    /* user properties, may be NULL */
    size_t nprops;
    int32_t flag;                   /* opaque to the broker */
} rmq_message_t;

/* A message received by a consumer. Owned by the library; valid only during
 * the callback that receives it (or until rmq_pull_result_clear). Strings are
 * NUL-terminated and never NULL ("" when absent). */
typedef struct rmq_message_ext {
    const char *topic;
    const char *tags;
    const char *keys;
    const char *msg_id;             /* UNIQ_KEY: the producer-generated id */
    const char *broker_name;
    const void *body;
    size_t body_len;
    int32_t queue_id;
    int32_t flag;
    int64_t queue_offset;
    int64_t commit_log_offset;
    int64_t born_timestamp;         /* wall ms when the producer built it */
    int64_t store_timestamp;        /* wall ms when the broker stored it */
    int32_t reconsume_times;        /* redeliveries so far (through %RETRY%<group>, or local) */
    const char *properties;         /* raw "name\x01value\x02..." string */
    size_t properties_len;
} rmq_message_ext_t;

/* Value of property name in a received message, or NULL if absent. The
 * value is copied into buf (cap bytes, NUL-terminated, truncated). */
const char *rmq_message_ext_property(const rmq_message_ext_t *msg, const char *name,
                                     char *buf, size_t cap);

/* A message queue: topic + broker name + queue id. */
typedef struct rmq_queue {
    char topic[128];
    char broker_name[64];
    int32_t queue_id;
} rmq_queue_t;

/* ---- security ---------------------------------------------------------- */

/* How a client dials name servers and brokers. */
typedef enum rmq_client_tls_mode {
    RMQ_CLIENT_TLS_DISABLED = 0,    /* plaintext */
    RMQ_CLIENT_TLS_ENFORCING = 2,   /* TLS on every connection */
} rmq_client_tls_mode_t;

/* TLS and request signing of one client object: the settings a server
 * takes as tlsMode, tlsCaPath, tlsCertPath, tlsKeyPath, and an ACL
 * account's accessKey / secretKey (request signing, HMAC-SHA256). Given to
 * a constructor through its opts (security = NULL: the RMQ_TLS, RMQ_TLS_CA,
 * RMQ_TLS_CERT, RMQ_TLS_KEY, RMQ_ACCESS_KEY and RMQ_SECRET_KEY environment
 * variables, see deploy/SECURITY.md). Read only during that _new call: the
 * files are loaded and the keys copied then, so it may live on the
 * caller's stack. Strings: NULL or "" is unset. A bad setting (unreadable
 * or invalid file, key without certificate, access key without secret)
 * makes _new return NULL with an rmq_error_t naming the field, e.g.
 * "security opts: tls_ca_path=/x.pem: cannot load the CA bundle: ...".
 * Each client object owns its own TLS context and credentials; they are
 * freed with it. */
typedef struct rmq_security_opts {
    rmq_client_tls_mode_t tls_mode;
    const char *tls_ca_path;        /* PEM CA bundle verifying servers; unset: encrypted, servers
                                       not verified. TLS paths are ignored when tls_mode is
                                       RMQ_CLIENT_TLS_DISABLED */
    const char *tls_cert_path;      /* PEM client certificate chain (servers with tlsVerifyClient) */
    const char *tls_key_path;       /* its private key; set both or neither */
    const char *access_key;         /* sign every request as this account; unset: unsigned */
    const char *secret_key;         /* the account's secret key; set both or neither */
} rmq_security_opts_t;

/* ---- producer ---------------------------------------------------------- */

typedef struct rmq_producer rmq_producer_t;

/* Zero means "default" for every number. */
typedef struct rmq_producer_opts {
    const char *group;              /* producer group, required */
    const char *namesrv;            /* "host:port;host:port", required */
    int send_timeout_ms;            /* 3000: budget of one send across retries */
    int retry_times;                /* 2: extra attempts on another broker (-1: none) */
    int route_refresh_ms;           /* 30000 */
    int fault_avoid_ms;             /* 10000: how long a failed broker is avoided */
    int max_in_flight;              /* 20000: async sends awaiting an answer */
    int max_message_size;           /* 4 MiB: body (or batch) limit */
    const rmq_security_opts_t *security; /* NULL: from the environment */
    /* Auto-batching of rmq_producer_send_async (0, the default: off). When
     * on, each async single message (not one with DELAY, __STARTDELIVERTIME
     * or TRAN_MSG, and no bigger than auto_batch_max_bytes) still gets its
     * own queue pick, callback and result (msg_id, queue_offset,
     * offset_msg_id), but messages for the same queue travel together as
     * one SEND_BATCH_MESSAGE: a queue's group goes when it holds
     * auto_batch_max_msgs messages or auto_batch_max_bytes, at once when no
     * batch to its queue is in flight (an idle producer adds no latency),
     * else after auto_batch_linger_ms at the latest. A failed group is
     * retried as a whole like any send (retry_times, fault avoidance) and
     * never outlives its earliest message's timeout; max_in_flight still
     * counts messages. Messages still waiting when the producer shuts down
     * complete with RMQ_ESHUTDOWN. Sync, oneway and batch sends are never
     * auto-batched. */
    int auto_batch_max_msgs;        /* 0 (or 1): off; else messages per batch, e.g. 32 */
    int auto_batch_max_bytes;       /* 256 KiB (at most max_message_size): batch body bytes */
    int auto_batch_linger_ms;       /* 10: longest a message waits for its queue's batch */
} rmq_producer_opts_t;

/* How a stored message was stored: the broker's status. Not failures. */
typedef enum rmq_send_status {
    RMQ_SEND_OK = 0,
    RMQ_SEND_FLUSH_DISK_TIMEOUT = 1,
    RMQ_SEND_FLUSH_SLAVE_TIMEOUT = 2,
    RMQ_SEND_SLAVE_NOT_AVAILABLE = 3,
} rmq_send_status_t;

/* The outcome of one send (single message or batch). */
typedef struct rmq_send_result {
    rmq_error_t error;              /* error.err == RMQ_OK: stored, see status */
    rmq_send_status_t status;
    char msg_id[33];                /* UNIQ_KEY of the (first) message */
    char offset_msg_id[64];         /* broker's id of the (first) message */
    char broker_name[64];
    int32_t queue_id;
    int64_t queue_offset;           /* of the first message */
    int32_t count;                  /* messages stored */
    int attempts;                   /* sends tried, retries included */
    int64_t epoch;                  /* controller mode: the master epoch it was stored in; else 0 */
} rmq_send_result_t;

/* Async completion. Runs exactly once, on the producer's loop thread (for a
 * send that races rmq_producer_shutdown, with RMQ_ESHUTDOWN, possibly on the
 * thread calling rmq_producer_free); res is valid only during the call.
 * Must not block. */
typedef void (*rmq_send_cb)(const rmq_send_result_t *res, void *arg);

/* Picks one of nqueues write queues (0 <= return < nqueues) for msg, e.g.
 * hash(key) % nqueues for ordered messages. Runs on the producer's loop thread. */
typedef int (*rmq_queue_selector_fn)(int nqueues, const rmq_message_t *msg, void *arg);

/* Creates a producer (copies opts). NULL if opts are invalid, with the
 * reason in err (may be NULL). Owner: caller (rmq_producer_free). */
rmq_producer_t *rmq_producer_new(const rmq_producer_opts_t *opts, rmq_error_t *err);
/* Starts the loop thread. Any thread. */
rmq_err_t rmq_producer_start(rmq_producer_t *p);
/* Waits up to the send timeout for async sends in flight, then stops the
 * loop thread; pending sends complete with RMQ_ESHUTDOWN. Idempotent. Not
 * from a callback. */
void rmq_producer_shutdown(rmq_producer_t *p);
/* Shuts down if needed and frees. NULL is fine. */
void rmq_producer_free(rmq_producer_t *p);

/* Sends msg and waits for the answer; retries on another broker after a
 * network error, a timeout or SYSTEM_ERROR. timeout_ms <= 0: the default.
 * Returns res->error.err. Any user thread. */
rmq_err_t rmq_producer_send(rmq_producer_t *p, const rmq_message_t *msg, int timeout_ms,
                            rmq_send_result_t *res);
/* Queues msg; cb(arg) runs once with the outcome. Blocks while max_in_flight
 * sends are pending (up to the timeout, then RMQ_EBUSY; from the loop thread
 * it never blocks). On an error return cb does not run. Any thread. */
rmq_err_t rmq_producer_send_async(rmq_producer_t *p, const rmq_message_t *msg, int timeout_ms,
                                  rmq_send_cb cb, void *arg);
/* Sends msg without waiting for or reading an answer. Any thread. */
rmq_err_t rmq_producer_send_oneway(rmq_producer_t *p, const rmq_message_t *msg);
/* Sends to the queue selector() picks, with no retry elsewhere (order). Any user thread. */
rmq_err_t rmq_producer_send_select(rmq_producer_t *p, const rmq_message_t *msg,
                                   rmq_queue_selector_fn selector, void *arg, int timeout_ms,
                                   rmq_send_result_t *res);
/* Sends n messages of one topic as one atomic batch to one queue. Any user thread. */
rmq_err_t rmq_producer_send_batch(rmq_producer_t *p, const rmq_message_t *msgs, size_t n,
                                  int timeout_ms, rmq_send_result_t *res);
/* Async form of rmq_producer_send_batch (same rules as send_async). */
rmq_err_t rmq_producer_send_batch_async(rmq_producer_t *p, const rmq_message_t *msgs, size_t n,
                                        int timeout_ms, rmq_send_cb cb, void *arg);
/* Async sends awaiting an answer right now. Any thread. */
int rmq_producer_in_flight(const rmq_producer_t *p);

/* ---- transaction producer ---------------------------------------------- */

/* Two-phase send: the message is stored as a half message (invisible to
 * consumers), the local transaction runs, and its outcome commits the
 * message (consumers see it once) or rolls it back (never seen). An
 * outcome of RMQ_TX_UNKNOWN leaves the decision to the check callback: the
 * broker asks this producer group about halves left open past its
 * transactionTimeOut, up to transactionCheckMax times, then rolls back. */
typedef struct rmq_tx_producer rmq_tx_producer_t;

typedef enum rmq_tx_state {
    RMQ_TX_UNKNOWN = 0,             /* not decided yet: the broker checks back later */
    RMQ_TX_COMMIT = 1,
    RMQ_TX_ROLLBACK = 2,
} rmq_tx_state_t;

/* Runs the local transaction for msg (the caller's message, as passed to
 * rmq_tx_producer_send) on the thread calling rmq_tx_producer_send, after
 * the half message was stored; ctx is that call's argument. May block. */
typedef rmq_tx_state_t (*rmq_tx_execute_fn)(const rmq_message_t *msg, void *ctx);

/* Decides a transaction the broker asks about (a half message stored
 * earlier by any producer of the group, possibly before a restart). Runs
 * on the transaction producer's check thread (never its loop thread); may
 * block. msg is valid only during the call; msg->msg_id is the id the send
 * returned (rmq_send_result_t.msg_id). */
typedef rmq_tx_state_t (*rmq_tx_check_fn)(const rmq_message_ext_t *msg, void *arg);

typedef struct rmq_tx_producer_opts {
    rmq_producer_opts_t producer;   /* group (the producer group the broker checks), namesrv,
                                       security, ... */
    rmq_tx_check_fn check;          /* required */
    void *check_arg;
    int check_threads;              /* 1 */
    int heartbeat_interval_ms;      /* 30000: how often the brokers hear the group */
} rmq_tx_producer_opts_t;

/* Creates a transaction producer (copies opts). NULL with err if invalid.
 * Owner: caller (rmq_tx_producer_free). */
rmq_tx_producer_t *rmq_tx_producer_new(const rmq_tx_producer_opts_t *opts, rmq_error_t *err);
rmq_err_t rmq_tx_producer_start(rmq_tx_producer_t *tp);
/* Stops checks (one running finishes) and the producer. Idempotent; not from a callback. */
void rmq_tx_producer_shutdown(rmq_tx_producer_t *tp);
void rmq_tx_producer_free(rmq_tx_producer_t *tp);
/* Sends msg as a half message, runs execute(msg, ctx), and reports the
 * outcome to the broker (END_TRANSACTION). *state is the outcome;
 * res describes the half message (res->msg_id identifies the transaction).
 * An error before the half message was stored means execute did not run
 * (*state = RMQ_TX_ROLLBACK); a failure to report the outcome is returned
 * as the error with *state set: the broker's check-back then decides. Any
 * user thread. */
rmq_err_t rmq_tx_producer_send(rmq_tx_producer_t *tp, const rmq_message_t *msg, rmq_tx_execute_fn execute,
                               void *ctx, rmq_tx_state_t *state, rmq_send_result_t *res);

/* ---- push consumer ----------------------------------------------------- */

typedef struct rmq_push_consumer rmq_push_consumer_t;

typedef enum rmq_message_model {
    RMQ_CLUSTERING = 0,             /* the group shares the queues */
    RMQ_BROADCASTING = 1,           /* every consumer gets every message */
} rmq_message_model_t;

/* Where a group with no committed offset on a queue starts. */
typedef enum rmq_consume_from {
    RMQ_CONSUME_FROM_LAST = 0,      /* only messages sent from now on */
    RMQ_CONSUME_FROM_FIRST = 1,     /* everything still stored */
    RMQ_CONSUME_FROM_TIMESTAMP = 2, /* messages stored at or after consume_timestamp_ms */
} rmq_consume_from_t;

typedef enum rmq_consume_result {
    RMQ_CONSUME_SUCCESS = 0,
    RMQ_CONSUME_LATER = 1,          /* clustering: sent back to the broker, redelivered through
                                       %RETRY%<group> after the delay of its attempt, and moved to
                                       %DLQ%<group> after max_reconsume_times; broadcasting, or
                                       if the send-back fails: redelivered locally after
                                       reconsume_delay_ms */
} rmq_consume_result_t;

/* Called for each message on one of the consume threads (never the loop
 * thread); may block. msg is valid only during the call. */
typedef rmq_consume_result_t (*rmq_consume_fn)(const rmq_message_ext_t *msg, void *arg);

typedef struct rmq_push_consumer_opts {
    const char *group;              /* required */
    const char *namesrv;            /* required */
    rmq_consume_fn on_message;      /* required */
    void *arg;
    rmq_message_model_t model;
    rmq_consume_from_t consume_from;
    int64_t consume_timestamp_ms;   /* for RMQ_CONSUME_FROM_TIMESTAMP; 0: now - 30 min */
    int consume_threads;            /* 20 */
    int pull_batch_size;            /* 32 */
    int queue_max_cached;           /* 1000 messages per queue before pulls pause */
    int queue_max_cached_mb;        /* 100 */
    int rebalance_interval_ms;      /* 20000; routes are re-read at each rebalance */
    int heartbeat_interval_ms;      /* 30000 */
    int commit_interval_ms;         /* 5000 */
    int reconsume_delay_ms;         /* 1000 */
    int suspend_ms;                 /* 15000: broker-side long-poll hold */
    int pull_timeout_ms;            /* 30000 */
    const char *instance_name;      /* client id = host@pid@consumer@NAME; default: a counter */
    int max_reconsume_times;        /* 16: redeliveries before the dead-letter queue */
    int orderly;                    /* 1: ordered consumption: each queue is consumed by one
                                       thread at a time, in offset order, only while this
                                       client holds the queue's broker lock (so no two group
                                       members ever consume one queue at once); RMQ_CONSUME_LATER
                                       suspends the queue for reconsume_delay_ms and retries the
                                       same message (nothing is skipped or sent back) */
    int lock_renew_ms;              /* orderly: 20000: renew queue locks this often (the broker
                                       frees a lock not renewed for rebalanceLockMaxLiveTime) */
    const rmq_security_opts_t *security; /* NULL: from the environment */
} rmq_push_consumer_opts_t;

/* Creates a push consumer (copies opts). NULL with err filled if invalid. */
rmq_push_consumer_t *rmq_push_consumer_new(const rmq_push_consumer_opts_t *opts, rmq_error_t *err);
/* Adds a subscription: expr "*" (or NULL/"") for all, or "TagA || TagB".
 * Before start only. */
rmq_err_t rmq_push_consumer_subscribe(rmq_push_consumer_t *c, const char *topic, const char *expr);
/* Starts the loop and consume threads, heartbeats, rebalances and pulls. */
rmq_err_t rmq_push_consumer_start(rmq_push_consumer_t *c);
/* Stops pulling, lets running callbacks finish, commits offsets,
 * unregisters from the brokers, stops the threads. Idempotent; not from a callback. */
void rmq_push_consumer_shutdown(rmq_push_consumer_t *c);
void rmq_push_consumer_free(rmq_push_consumer_t *c);
/* The id the group knows this consumer by. */
const char *rmq_push_consumer_client_id(const rmq_push_consumer_t *c);
/* Copies up to cap queues this consumer owns now into out; returns how many
 * it owns (may exceed cap). Queues of the automatic %RETRY%<group>
 * subscription are left out. Any thread. */
size_t rmq_push_consumer_assigned(rmq_push_consumer_t *c, rmq_queue_t *out, size_t cap);

/* ---- pull consumer ----------------------------------------------------- */

typedef struct rmq_pull_consumer rmq_pull_consumer_t;

typedef enum rmq_pull_status {
    RMQ_PULL_FOUND = 0,
    RMQ_PULL_NO_NEW_MSG = 1,
    RMQ_PULL_NO_MATCHED_MSG = 2,
    RMQ_PULL_OFFSET_ILLEGAL = 3,    /* next_offset is where to go */
} rmq_pull_status_t;

typedef struct rmq_pull_result {
    rmq_pull_status_t status;
    int64_t next_offset;
    int64_t min_offset;
    int64_t max_offset;
    rmq_message_ext_t **msgs;       /* owned by the result */
    size_t count;
} rmq_pull_result_t;

typedef struct rmq_pull_consumer_opts {
    const char *group;              /* required */
    const char *namesrv;            /* required */
    const rmq_security_opts_t *security; /* NULL: from the environment */
} rmq_pull_consumer_opts_t;

/* Creates a pull consumer (copies opts). NULL with err if invalid. */
rmq_pull_consumer_t *rmq_pull_consumer_new_opts(const rmq_pull_consumer_opts_t *opts,
                                                rmq_error_t *err);
/* Same, with only a group (copied) and name servers: security from the environment. */
rmq_pull_consumer_t *rmq_pull_consumer_new(const char *group, const char *namesrv, rmq_error_t *err);
rmq_err_t rmq_pull_consumer_start(rmq_pull_consumer_t *c);
void rmq_pull_consumer_shutdown(rmq_pull_consumer_t *c);
void rmq_pull_consumer_free(rmq_pull_consumer_t *c);
/* Readable queues of topic, sorted by broker name then id. *out is malloc'd
 * (caller frees). Any user thread. */
rmq_err_t rmq_pull_consumer_queues(rmq_pull_consumer_t *c, const char *topic, rmq_queue_t **out,
                                   size_t *n, rmq_error_t *err);
/* Pulls up to max (<= 0: 32) messages matching expr ("*" or NULL: all)
 * from offset. timeout_ms > 0: the broker may hold the pull that long while
 * nothing new is there (long polling); 0: it answers at once. res is filled
 * on RMQ_OK (release it with rmq_pull_result_clear). Any user thread. */
rmq_err_t rmq_pull_consumer_pull(rmq_pull_consumer_t *c, const rmq_queue_t *q, const char *expr,
                                 int64_t offset, int max, int timeout_ms, rmq_pull_result_t *res,
                                 rmq_error_t *err);
void rmq_pull_result_clear(rmq_pull_result_t *res);
/* Stores offset (the next offset to consume) as the group's on the broker. */
rmq_err_t rmq_pull_consumer_commit(rmq_pull_consumer_t *c, const rmq_queue_t *q, int64_t offset,
                                   rmq_error_t *err);
/* The group's committed offset; RMQ_ENOTFOUND if none. */
rmq_err_t rmq_pull_consumer_committed(rmq_pull_consumer_t *c, const rmq_queue_t *q,
                                      int64_t *offset, rmq_error_t *err);
/* The queue's max (next to be written) or min offset. */
rmq_err_t rmq_pull_consumer_max_offset(rmq_pull_consumer_t *c, const rmq_queue_t *q,
                                       int64_t *offset, rmq_error_t *err);
rmq_err_t rmq_pull_consumer_min_offset(rmq_pull_consumer_t *c, const rmq_queue_t *q,
                                       int64_t *offset, rmq_error_t *err);

#ifdef __cplusplus
}
#endif

#endif
