/* bk_clients.h: the client registry, on neutral requests: a heartbeat
 * (client id, producer groups, consumer groups and their subscriptions)
 * checked against the caps (groups per heartbeat, per connection), its
 * producer groups handed to the transaction checker (bk_tx.h), and
 * consumer groups: which clients (by client id and session) belong to each
 * group and what they subscribe to. Clients leave on UNREGISTER_CLIENT, when their connection
 * closes, or after expire_ms without a heartbeat; whenever a group's
 * membership changes every member is told through its session (rmq:
 * NOTIFY_CONSUMER_IDS_CHANGED, oneway) so it rebalances at once. Loop thread only. */
#ifndef BK_CLIENTS_H
#define BK_CLIENTS_H

#include <stdint.h>

#include <stddef.h>

#include "bk_session.h"
#include "bk_status.h"
#include "rmq_err.h"
#include "rmq_sql92.h"

typedef struct bk_clients bk_clients_t;

/* One subscription of a consumer group: a topic and its expression, TAG
 * (the rule of common/rmq_subexpr.h; "" or "*": every message) or SQL92
 * (common/rmq_sql92.h). Borrowed. */
typedef struct bk_hb_sub {
    const char *topic;
    const char *expr;
    rmq_expr_type_t type;
} bk_hb_sub_t;

/* Where a consumer group with no committed offset starts. */
typedef enum bk_consume_from {
    BK_CONSUME_FROM_LAST = 0,
    BK_CONSUME_FROM_FIRST,
    BK_CONSUME_FROM_TIMESTAMP,
} bk_consume_from_t;

typedef struct bk_hb_consumer {
    const char *group;
    int clustering;                  /* CLUSTERING (else BROADCASTING) */
    const bk_hb_sub_t *subs;
    size_t nsubs;
    int pull_mode;                   /* the client pulls itself (else a push consumer) */
    bk_consume_from_t consume_from;
} bk_hb_consumer_t;

/* A client's heartbeat as a front-end decoded it. Borrowed for the call. */
typedef struct bk_heartbeat {
    const char *client_id;
    const char *const *producer_groups;
    size_t nproducers;
    const bk_hb_consumer_t *consumers;
    size_t nconsumers;
    const char *language;            /* the client library's language (NULL: unknown) */
    int32_t version;                 /* the client library's version number (0: unknown) */
    int producers_by_topic;          /* each producer group is a topic it publishes to (a 5.x
                                      * gRPC producer has no group): PUB checked on that topic */
} bk_heartbeat_t;

typedef struct bk_tx bk_tx_t;
typedef struct bk_caller bk_caller_t;

typedef struct bk_clients_config {
    int64_t expire_ms;               /* channelExpiredTimeout */
    int64_t max_groups_per_heartbeat; /* maxHeartbeatGroups: producer + consumer groups in one heartbeat */
    int64_t max_groups_per_conn;     /* maxConnectionGroups: producer and consumer groups one session may hold */
    bk_tx_t *tx;                     /* where producer groups go (borrowed; NULL: ignored) */
    /* A consumer group announced (before it is recorded): the broker makes
     * its subscription group and, clustering, its retry topic. May be NULL. */
    void (*consumer_group)(void *arg, const char *group, int clustering);
    void *arg;
} bk_clients_config_t;

/* cfg copied (pointers borrowed). NULL when out of memory. */
bk_clients_t *bk_clients_new(const bk_clients_config_t *cfg);
/* Releases every connection reference. */
void bk_clients_free(bk_clients_t *c);

/* Records heartbeat hb of who (bk_perm.h: SUB on each consumer group, PUB
 * on each producer group) from session ss (referenced while the client is
 * known; expressions are parsed when a pull uses them): its consumer groups
 * here, its producer groups in the transaction checker. Returns how many
 * consumer groups changed membership (each was notified), or -1 with r set
 * and nothing recorded: no client id, more groups than
 * max_groups_per_heartbeat, or ss would then hold more than
 * max_groups_per_conn (BK_BAD_REQUEST); a group name that breaks the
 * naming rule (BK_NAME_ILLEGAL); who lacks a right (BK_NO_PERMISSION). */
int bk_clients_heartbeat(bk_clients_t *c, bk_session_t *ss, const bk_caller_t *who, const bk_heartbeat_t *hb,
                         bk_result_t *r);
/* Removes client_id from group (or from every group if group is empty),
 * where session ss registered it: a session removes only its own clients. */
void bk_clients_unregister(bk_clients_t *c, bk_session_t *ss, const char *client_id, const char *group);
/* Removes every client of session ss (its connection closed). */
void bk_clients_session_closed(bk_clients_t *c, bk_session_t *ss);
/* Removes clients silent for longer than expire_ms. */
void bk_clients_expire(bk_clients_t *c, int64_t now_ms);

/* Pushes rs to every client of rs->group whose session is open; returns
 * how many were told. */
size_t bk_clients_reset_offset(const bk_clients_t *c, const bk_offset_reset_t *rs);
/* Puts q to client q->client_id of group q->group (bk_session_ask): BK_OK
 * and fn(arg, answer) follows once; else r set and fn never called: the
 * client is not in the group or its connection closed, or its protocol
 * cannot be asked (BK_SYSTEM_ERROR, as RocketMQ's broker answers). */
bk_status_t bk_clients_ask(const bk_clients_t *c, const bk_client_ask_t *q, bk_client_answer_fn fn, void *arg,
                           bk_result_t *r);
/* Client ids of group into ids (borrowed, valid until the next change);
 * returns how many there are (may exceed cap). */
size_t bk_clients_ids(const bk_clients_t *c, const char *group, const char **ids, size_t cap);
/* The subscription expression group registered for topic, or NULL; its
 * type into *type when type is not NULL. */
const char *bk_clients_subscription(const bk_clients_t *c, const char *group, const char *topic,
                                    rmq_expr_type_t *type);

/* ---- views for administration (consumer connections, who consumes a topic) */

/* A consumer group's settings, from its latest heartbeat. */
typedef struct bk_group_view {
    int clustering;
    int pull_mode;
    bk_consume_from_t consume_from;
} bk_group_view_t;

/* One client of a group; strings borrowed for the call. */
typedef struct bk_client_view {
    const char *client_id;
    const char *addr;                /* its connection's peer ("" when closed) */
    const char *language;            /* "" when unknown */
    int32_t version;
    int64_t last_heartbeat_ms;       /* wall clock of its latest heartbeat */
    const char *protocol;            /* its session's wire protocol (bk_session_ops_t) */
} bk_client_view_t;

typedef void (*bk_client_view_fn)(void *arg, const bk_client_view_t *cl);
/* Receives one topic and its expression (borrowed for the call). */
typedef void (*bk_clients_sub_fn)(void *arg, const char *topic, const char *expr, rmq_expr_type_t type);
/* Receives one group name (borrowed for the call). */
typedef void (*bk_clients_name_fn)(void *arg, const char *name);

/* Fills *out and returns 1 if group has a client; else 0. */
int bk_clients_group(const bk_clients_t *c, const char *group, bk_group_view_t *out);
/* Calls fn for every client of group. */
void bk_clients_each_client(const bk_clients_t *c, const char *group, bk_client_view_fn fn, void *arg);
/* Calls fn once per topic some client of group subscribes to (the first
 * client's expression), in no particular order. RMQ_ENOMEM: fn may have
 * been called for some topics only. */
rmq_err_t bk_clients_each_sub(const bk_clients_t *c, const char *group, bk_clients_sub_fn fn, void *arg);
/* Calls fn for every group with a client subscribed to topic. */
void bk_clients_groups_of(const bk_clients_t *c, const char *topic, bk_clients_name_fn fn, void *arg);

#endif
