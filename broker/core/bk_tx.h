/* bk_tx.h: transactional messages on the broker (RocketMQ's two-phase
 * protocol), on neutral requests. A send with TRAN_MSG=true is stored as a
 * half message in RMQ_SYS_TRANS_HALF_TOPIC (queue 0; REAL_TOPIC/REAL_QID
 * keep where it goes), invisible to consumers. An end-transaction request
 * commits (the message is stored again under its real topic, through the
 * delay scheduler) or rolls back; either way an op record (body: the half's
 * commit-log offset) goes to RMQ_SYS_TRANS_OP_HALF_TOPIC, so the outcome
 * survives a restart (the op queue is re-read at start). Ending a half
 * message needs PUB on its real topic when the caller is an ACL account.
 * On a master a checker scans halves older than transactionTimeOut without
 * an op record every transactionCheckInterval and asks a producer session
 * of the half's group (PGROUP; producers announce their groups in
 * heartbeats, bk_tx_heartbeat), rolling back after transactionCheckMax
 * checks. Check counts live in memory. Loop thread. */
#ifndef BK_TX_H
#define BK_TX_H

#include <event2/event.h>

#include "bk_append.h"
#include "bk_counts.h"
#include "bk_perm.h"
#include "bk_produce.h"
#include "bk_session.h"
#include "rmq_acl_policy.h"
#include "rmq_message.h"

#define BK_TX_HALF_TOPIC RMQ_TOPIC_TRANS_HALF
#define BK_TX_OP_TOPIC RMQ_TOPIC_TRANS_OP

typedef struct bk_tx bk_tx_t;

typedef struct bk_tx_config {
    struct event_base *base;         /* the loop: the checker's timer (borrowed) */
    st_store_t *store;               /* borrowed */
    bk_append_t *append;             /* borrowed; not writable: no checks run */
    bk_produce_t *produce;           /* the destination check of a commit (borrowed) */
    const char *addr;                /* this broker, where check-backs are answered (borrowed) */
    int64_t check_interval_ms;       /* transactionCheckInterval */
    int64_t time_out_ms;             /* transactionTimeOut */
    int64_t check_max;               /* transactionCheckMax */
    int64_t producer_expire_ms;      /* channelExpiredTimeout: a producer silent this long is forgotten */
    int64_t max_groups_per_conn;     /* maxConnectionGroups: producer and consumer groups one session may hold */
    /* Rewrites a committed message before it is stored (the delay
     * scheduler); RMQ_OK, RMQ_EINVAL (bad properties) or another error. */
    rmq_err_t (*divert)(void *arg, st_msg_t *m, const char **why);
    void *divert_arg;
    const bk_counts_t *counts;       /* told each commit and rollback stored (borrowed; NULL: none) */
} bk_tx_config_t;

typedef enum bk_tx_state {
    BK_TX_UNKNOWN = 0,               /* the producer does not know yet: checked back later */
    BK_TX_COMMIT,
    BK_TX_ROLLBACK,
} bk_tx_state_t;

/* An end-transaction request as a front-end decoded it. Strings borrowed. */
typedef struct bk_tx_end_req {
    const char *producer_group;      /* must be the half message's PGROUP */
    int64_t commit_log_offset;       /* of the half message */
    int state;                       /* bk_tx_state_t; another value is a bad request */
    const char *msg_id;              /* for the log */
    int from_check;                  /* an answer to a check-back (for the log) */
    const bk_caller_t *who;          /* who asks (bk_perm.h; NULL: trusted) */
} bk_tx_end_req_t;

/* Re-reads the op queue and starts the checker. NULL on ENOMEM. cfg is
 * copied (pointers borrowed). Owner: the caller (bk_tx_free). */
bk_tx_t *bk_tx_new(const bk_tx_config_t *cfg);
void bk_tx_free(bk_tx_t *tx);

/* Send path: a TRAN_MSG=true message is redirected to the half topic (m's
 * topic, queue, properties and tag code rewritten; the properties buffer
 * is tx's, valid until the next call). RMQ_EINVAL with *why for a message
 * that cannot be a half message. */
rmq_err_t bk_tx_divert(bk_tx_t *tx, st_msg_t *m, const char **why);

/* Ends the half message req names. Returns 1 when the outcome is final now
 * (in *out: BK_OK, BK_TRANSACTION_FAILED (no half message there),
 * BK_BAD_REQUEST (not a half of that group, or a bad state),
 * BK_NO_PERMISSION (the account lacks PUB on the real topic), or the
 * store's failure), 0 when cb(out, arg) follows once the outcome record or
 * the committed message is durable. */
int bk_tx_end(bk_tx_t *tx, const bk_tx_end_req_t *req, bk_append_out_t *out, bk_append_fn cb, void *arg);

/* Heartbeat hb: remembers session ss (referenced) as a producer of each of
 * its producer groups but RMQ_INNER_PRODUCER_GROUP (a Java client's own,
 * which gets no check-back), with its client id, language and version. 1,
 * or 0 with r set (BK_BAD_REQUEST when ss would hold
 * more than max_groups_per_conn groups, producer and consumer
 * (bk_session_t.groups); nothing recorded then). */
int bk_tx_heartbeat(bk_tx_t *tx, bk_session_t *ss, const bk_heartbeat_t *hb, bk_result_t *r);
/* Forgets the session of a closing connection. */
void bk_tx_session_closed(bk_tx_t *tx, bk_session_t *ss);
/* Calls fn for every producer of group (mqadmin producerConnection). */
void bk_tx_each_producer(const bk_tx_t *tx, const char *group, bk_client_view_fn fn, void *arg);
/* Calls fn for every producer group with a producer (GET_ALL_PRODUCER_INFO). */
void bk_tx_each_group(const bk_tx_t *tx, bk_clients_name_fn fn, void *arg);
/* Puts q to the producer whose client id is q->client_id, on the session
 * of its freshest heartbeat (RocketMQ's ProducerManager.findChannel, where
 * a requester's reply is pushed): BK_OK and fn(arg, answer) follows once;
 * else r set and fn never called: no open session of such a producer, or
 * its protocol cannot be asked (BK_SYSTEM_ERROR, naming the client). */
bk_status_t bk_tx_ask_producer(const bk_tx_t *tx, const bk_client_ask_t *q, bk_client_answer_fn fn, void *arg,
                               bk_result_t *r);
/* Producer registrations held (for tests and metrics). */
size_t bk_tx_producer_count(const bk_tx_t *tx);
/* Runs one checker pass now (what the timer does every check interval). */
void bk_tx_check_now(bk_tx_t *tx);

#endif
