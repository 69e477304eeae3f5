/* rmq_etcd.h: an asynchronous etcd v3 client over libevent's evhttp and
 * etcd's HTTP/JSON gateway (/v3/kv/range, kv/put, kv/txn, lease/grant,
 * lease/keepalive, lease/revoke), for the controller's consensus. etcd
 * 3.4 and 3.5 speak the same JSON: keys and values base64, 64-bit integers
 * as JSON strings, false and zero fields omitted. Answers are read with
 * rmq_json.
 *
 * Endpoints: "host:port[,host:port...]" (an "http://" prefix is accepted).
 * A call goes to the current endpoint; when that endpoint cannot be reached
 * or does not answer in time, the client moves to the next one and sends
 * the call again there, until every endpoint has been tried once for that
 * call. A resent call may have been applied by the first endpoint: callers
 * guard their writes with txn compares (a replayed compare-and-swap fails
 * and the caller reads again), which is how the controller uses it.
 *
 * Threads: one event base; every function on its thread. Callbacks run on
 * it, exactly once per accepted call: calls still in flight when
 * rmq_etcd_free runs are answered RMQ_ESHUTDOWN from inside it (new calls
 * made then are refused). */
#ifndef RMQ_ETCD_H
#define RMQ_ETCD_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "rmq_err.h"

#define RMQ_ETCD_MAX_ENDPOINTS 8
#define RMQ_ETCD_ANSWER_MAX (4u << 20)   /* larger answers are refused */

typedef enum rmq_etcd_call {
    RMQ_ETCD_RANGE = 0,
    RMQ_ETCD_PUT,
    RMQ_ETCD_TXN,
    RMQ_ETCD_GRANT,
    RMQ_ETCD_KEEPALIVE,
    RMQ_ETCD_REVOKE,
} rmq_etcd_call_t;

/* One key-value pair of an answer; key and value are NUL-terminated copies
 * (value_len excludes the NUL; a value may hold NUL bytes). */
typedef struct rmq_etcd_kv {
    char *key;
    size_t key_len;
    char *value;
    size_t value_len;
    int64_t create_revision;
    int64_t mod_revision;
    int64_t version;
    int64_t lease;
} rmq_etcd_kv_t;

/* What a call returned. err: RMQ_OK; RMQ_ECONNECT / RMQ_ETIMEDOUT when no
 * endpoint answered; RMQ_ESTATUS when etcd refused the call (msg has its
 * words, code its gRPC code); RMQ_EPROTO when the answer was not etcd's
 * JSON (msg says what was wrong); RMQ_ENOTFOUND for a keepalive of a lease
 * that has expired. kvs: a range's pairs, or every pair of a txn's range
 * responses in order. Owned by the client; valid during the callback. */
typedef struct rmq_etcd_result {
    rmq_err_t err;
    int code;
    char msg[256];
    int64_t revision;             /* header.revision */
    int succeeded;                /* txn: 1 if the compares held */
    int64_t lease_id;             /* grant / keepalive */
    int64_t ttl;                  /* grant / keepalive: seconds */
    rmq_etcd_kv_t *kvs;
    size_t n_kvs;
} rmq_etcd_result_t;

/* Frees what res holds and zeroes it. */
void rmq_etcd_result_clear(rmq_etcd_result_t *res);

/* A txn compare, always "equal": the key's create revision (0: the key does
 * not exist), its mod revision, or its value. */
typedef enum rmq_etcd_target {
    RMQ_ETCD_CMP_CREATE = 0,
    RMQ_ETCD_CMP_MOD,
    RMQ_ETCD_CMP_VALUE,
} rmq_etcd_target_t;

typedef struct rmq_etcd_cmp {
    rmq_etcd_target_t target;
    const char *key;
    int64_t revision;             /* CREATE, MOD */
    const char *value;            /* VALUE */
    size_t value_len;
} rmq_etcd_cmp_t;

typedef enum rmq_etcd_op_type {
    RMQ_ETCD_OP_PUT = 0,
    RMQ_ETCD_OP_RANGE,            /* the one key */
    RMQ_ETCD_OP_DELETE,
} rmq_etcd_op_type_t;

typedef struct rmq_etcd_op {
    rmq_etcd_op_type_t type;
    const char *key;
    const char *value;            /* PUT */
    size_t value_len;
    int64_t lease;                /* PUT: 0 for none */
} rmq_etcd_op_t;

typedef struct rmq_etcd_txn {
    const rmq_etcd_cmp_t *cmp;
    size_t n_cmp;
    const rmq_etcd_op_t *success;
    size_t n_success;
    const rmq_etcd_op_t *failure;
    size_t n_failure;
} rmq_etcd_txn_t;

/* ---- request bodies and answers (pure; any thread) ---------------------- */

/* Appends the JSON body of a call to out. RMQ_EINVAL for an empty key, an
 * unknown compare target or op type; RMQ_ENOMEM. prefix: every key that
 * starts with key. */
rmq_err_t rmq_etcd_encode_range(struct evbuffer *out, const char *key, int prefix);
rmq_err_t rmq_etcd_encode_put(struct evbuffer *out, const char *key, const char *value,
                              size_t value_len, int64_t lease);
rmq_err_t rmq_etcd_encode_txn(struct evbuffer *out, const rmq_etcd_txn_t *txn);
rmq_err_t rmq_etcd_encode_grant(struct evbuffer *out, int64_t ttl_s);
/* lease/keepalive and lease/revoke: {"ID":"id"}. */
rmq_err_t rmq_etcd_encode_lease(struct evbuffer *out, int64_t id);

/* Decodes the answer of call (HTTP status http_status, body[0..len)) into
 * res (zeroed first); returns res->err. Never trusts the body: bad JSON,
 * wrong types, bad base64, numbers out of range give RMQ_EPROTO. */
rmq_err_t rmq_etcd_decode(rmq_etcd_call_t call, int http_status, const char *body, size_t len,
                          rmq_etcd_result_t *res);

/* ---- the client --------------------------------------------------------- */

typedef struct rmq_etcd rmq_etcd_t;
typedef void (*rmq_etcd_cb)(const rmq_etcd_result_t *res, void *arg);

/* A client for endpoints on base; each call waits at most timeout_ms per
 * endpoint. NULL with "controllerEtcdEndpoints: ..." in err when endpoints
 * is empty, malformed or has more than RMQ_ETCD_MAX_ENDPOINTS entries.
 * Owner: caller (rmq_etcd_free). */
rmq_etcd_t *rmq_etcd_new(struct event_base *base, const char *endpoints, int timeout_ms,
                         char *err, size_t errlen);
void rmq_etcd_free(rmq_etcd_t *e);

/* "host:port" of the endpoint calls go to now. */
const char *rmq_etcd_endpoint(const rmq_etcd_t *e);

/* Calls; RMQ_OK when accepted (cb will run), RMQ_EINVAL / RMQ_ENOMEM /
 * RMQ_ESHUTDOWN when not (cb will not run). */
rmq_err_t rmq_etcd_range(rmq_etcd_t *e, const char *key, int prefix, rmq_etcd_cb cb, void *arg);
rmq_err_t rmq_etcd_put(rmq_etcd_t *e, const char *key, const char *value, size_t value_len,
                       int64_t lease, rmq_etcd_cb cb, void *arg);
rmq_err_t rmq_etcd_txn(rmq_etcd_t *e, const rmq_etcd_txn_t *txn, rmq_etcd_cb cb, void *arg);
rmq_err_t rmq_etcd_lease_grant(rmq_etcd_t *e, int64_t ttl_s, rmq_etcd_cb cb, void *arg);
rmq_err_t rmq_etcd_lease_keepalive(rmq_etcd_t *e, int64_t id, rmq_etcd_cb cb, void *arg);
rmq_err_t rmq_etcd_lease_revoke(rmq_etcd_t *e, int64_t id, rmq_etcd_cb cb, void *arg);

#endif
