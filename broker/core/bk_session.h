/* bk_session.h: how the core reaches a connected client on its own (not as
 * the answer to a request): tell a consumer its group's members changed,
 * or that its group's offsets were reset, ask a producer for a
 * transaction's state, put an operator's question to a consumer and hand
 * back its answer (or why none came). Each front-end implements the
 * operations for its protocol; the core holds sessions by reference and
 * never sees a connection. Loop thread only. */
#ifndef BK_SESSION_H
#define BK_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"

typedef struct bk_session bk_session_t;

/* A half message whose outcome the broker asks its producer for. The
 * producer answers with an end-transaction request. Strings are borrowed. */
typedef struct bk_tx_check {
    int64_t tran_state_table_offset; /* the half message's queue offset */
    int64_t commit_log_offset;       /* the half message's commit-log offset */
    const char *msg_id;              /* UNIQ_KEY */
    const char *transaction_id;
    const char *offset_msg_id;       /* store host + offset id */
    const char *producer_group;
    const char *broker_addr;         /* where to send the answer */
    const void *record;              /* the half message's stored record */
    size_t record_len;
} bk_tx_check_t;

/* A consumer group's offsets on one topic, reset to a time by an operator
 * (mqadmin resetOffsetByTime): the new offset of each queue, by queue id. */
typedef struct bk_offset_reset {
    const char *topic;               /* borrowed */
    const char *group;               /* borrowed */
    int64_t timestamp;               /* ms since the epoch; -1: the end of each queue */
    int64_t *offsets;                /* owned (bk_offset_reset_clear) */
    size_t n;
} bk_offset_reset_t;

/* A responder's reply as the broker pushes it to its requester
 * (RocketMQ's ReplyMessageRequestHeader and the body). Strings borrowed. */
typedef struct bk_reply_push {
    const char *producer_group, *topic, *default_topic;
    int32_t default_topic_queue_nums, queue_id, sys_flag, flag, reconsume_times;
    int64_t born_timestamp, store_timestamp;
    const char *properties;          /* the reply's, with PUSH_REPLY_TIME */
    const char *born_host;           /* the responder's "ip:port" */
    const char *store_host;          /* this broker's "ip:port" */
    const void *body;
    size_t body_len;
} bk_reply_push_t;

/* A question to one client, put through the broker: an operator's to a
 * consumer (mqadmin consumerStatus, consumeMessage), or a reply pushed to
 * its requester. Strings borrowed for the call. */
typedef enum bk_ask_kind {
    BK_ASK_RUNNING_INFO = 0,         /* its consumer's running state (ConsumerRunningInfo) */
    BK_ASK_CONSUME_DIRECTLY,         /* consume one stored message now and say how it went */
    BK_ASK_PUSH_REPLY,               /* take the reply to one of your requests */
    BK_ASK_CONSUMER_STATUS,          /* your consumer's offsets on one topic (GetConsumerStatusBody) */
} bk_ask_kind_t;

typedef struct bk_client_ask {
    bk_ask_kind_t kind;
    const char *group;
    const char *client_id;
    const char *topic;               /* consumer status: the topic */
    int jstack;                      /* running info: with its threads' stacks */
    const char *msg_id;              /* consume directly: the message's id */
    const char *broker_name;         /* consume directly: this broker's name */
    const void *record;              /* consume directly: the stored record */
    size_t record_len;
    const bk_reply_push_t *reply;    /* push reply: the reply */
    int64_t timeout_ms;              /* how long the client has to answer */
} bk_client_ask_t;

/* The client's answer: ok with its body, or why there is none (it refused,
 * it did not answer in time, its connection closed). Borrowed for the call. */
typedef struct bk_client_answer {
    int ok;
    const char *why;                 /* "" when ok */
    const void *body;
    size_t body_len;
} bk_client_answer_t;

typedef void (*bk_client_answer_fn)(void *arg, const bk_client_answer_t *ans);

typedef struct bk_session_ops {
    const char *protocol;            /* the front's wire protocol: "rmq", "remoting" or "grpc" */
    /* The consumer ids of group changed: the client rebalances (no answer). */
    rmq_err_t (*notify_ids_changed)(bk_session_t *ss, const char *group);
    /* The consumer's group was reset to rs's offsets: the client drops what
     * it holds of rs's topic and pulls from there (no answer). NULL: the
     * front's protocol has no such push. */
    rmq_err_t (*reset_offset)(bk_session_t *ss, const bk_offset_reset_t *rs);
    /* Puts q to the client; RMQ_OK: fn(arg, answer) follows exactly once,
     * by q->timeout_ms at the latest. An error: fn is never called. NULL:
     * the front's protocol cannot ask its clients. */
    rmq_err_t (*ask)(bk_session_t *ss, const bk_client_ask_t *q, bk_client_answer_fn fn, void *arg);
    /* Asks a producer for the state of chk's half message (no answer here). */
    rmq_err_t (*check_transaction)(bk_session_t *ss, const bk_tx_check_t *chk);
    int (*is_open)(const bk_session_t *ss);
    /* "ip:port" of the client. */
    const char *(*peer)(const bk_session_t *ss);
    void (*close)(bk_session_t *ss, const char *reason);
    /* The last reference is gone. */
    void (*free)(bk_session_t *ss);
} bk_session_ops_t;

/* Embedded first in a front-end's session object. */
struct bk_session {
    const bk_session_ops_t *ops;
    int refs;
    size_t groups;                   /* producer and consumer groups the core holds for it
                                      * (bk_tx, bk_clients: the per-connection cap) */
};

/* Initialises ss with one reference (the creator's). */
void bk_session_init(bk_session_t *ss, const bk_session_ops_t *ops);
void bk_session_ref(bk_session_t *ss);
void bk_session_unref(bk_session_t *ss);

rmq_err_t bk_session_notify_ids_changed(bk_session_t *ss, const char *group);
/* RMQ_EINVAL when the front has no reset push (ops->reset_offset NULL). */
rmq_err_t bk_session_reset_offset(bk_session_t *ss, const bk_offset_reset_t *rs);
/* Frees rs->offsets. */
void bk_offset_reset_clear(bk_offset_reset_t *rs);
/* RMQ_EINVAL when the front cannot ask its clients (ops->ask NULL). */
rmq_err_t bk_session_ask(bk_session_t *ss, const bk_client_ask_t *q, bk_client_answer_fn fn, void *arg);
rmq_err_t bk_session_check_transaction(bk_session_t *ss, const bk_tx_check_t *chk);
int bk_session_is_open(const bk_session_t *ss);
const char *bk_session_peer(const bk_session_t *ss);
void bk_session_close(bk_session_t *ss, const char *reason);

#endif
