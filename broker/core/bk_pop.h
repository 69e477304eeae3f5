/* bk_pop.h: pop consumption (RocketMQ 5), on neutral requests, for every
 * front-end. A pop takes messages of a topic for a group and makes them
 * invisible to the group's other pops for an invisible time; each message
 * gets a receipt handle (Java's ExtraInfoUtil layout) to ack it or to change
 * its invisible time. A message not acked in time is revived: re-stored on
 * the pop retry topic %RETRY%<group>_<topic> with reconsumeTimes + 1 (through
 * bk_sendback.c, which sends it to %DLQ%<group> once the group's
 * retryMaxTimes is reached), and popped from there again (the delivery
 * attempt is reconsumeTimes + 1).
 *
 * State per (group, topic, queue): a pop cursor and the in-flight entries
 * (offset, deadline, generation = popTime). The durable part is the group's
 * committed offset in the offsets table, the lowest offset not yet finished
 * (acked, revived or sent to the DLQ): after a restart or failover delivery
 * resumes there, so nothing stored is lost; redelivery is allowed. One timer
 * serves the earliest deadline. The loop runs one pop at a time, so a queue
 * is never popped by two requests at once. A pop that found nothing waits
 * for its poll time in the hold (bk_hold.c, as held pulls do) until a
 * message arrives on its topic or its pop retry topic. Loop thread only. */
#ifndef BK_POP_H
#define BK_POP_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "bk_counts.h"
#include "bk_groups.h"
#include "bk_offset_ops.h"
#include "bk_sendback.h"
#include "bk_session.h"
#include "bk_status.h"
#include "bk_topics.h"
#include "st_store.h"

#define BK_POP_HANDLE_MAX 256
#define BK_POP_BROKER_MAX 127
#define BK_POP_ATTEMPT_MAX 64            /* a FIFO pop's attempt id */

typedef struct bk_pop bk_pop_t;
typedef struct bk_pop_req bk_pop_req_t;
typedef struct bk_pop_out bk_pop_out_t;

/* Answers a pop that was held (ctx as given to bk_pop_run). */
typedef void (*bk_pop_answer_fn)(const bk_pop_req_t *req, bk_pop_out_t *out, void *ctx);
/* Frees a held pop's ctx (after its answer, or when its session closed). */
typedef void (*bk_pop_ctx_free_fn)(void *ctx);
/* 1 when a held pop's requester gave up (its call was cancelled while the
 * session lives on): the pop is dropped unanswered instead of run, so no
 * message is taken for nobody. */
typedef int (*bk_pop_gone_fn)(void *ctx);

typedef struct bk_pop_config {
    struct event_base *base;         /* borrowed */
    st_store_t *store;               /* borrowed */
    bk_topics_t *topics;             /* borrowed */
    bk_groups_t *groups;             /* borrowed */
    bk_offset_ops_t *offsets;        /* borrowed: the committed offsets (streamed to slaves) */
    bk_sendback_t *sendback;         /* borrowed: revive and DLQ copies */
    const char *broker_name;         /* in receipt handles (borrowed) */
    const char *addr;                /* this broker, for reasons (borrowed) */
    int is_slave;                    /* a slave refuses pops */
    int64_t permission;              /* brokerPermission: bit 4 = readable */
    int32_t retry_percent;           /* popFromRetryProbability (RocketMQ: 20) */
    int64_t max_transfer_count;      /* at most this many messages per pop */
    int64_t max_transfer_bytes;
    int64_t release_ms;              /* a closed session's messages are visible again after this */
    const bk_counts_t *counts;       /* told what each pop returned (borrowed; NULL: none) */
} bk_pop_config_t;

/* A pop as the front-end decoded it. Strings borrowed for the call (the
 * hold copies what it parks). */
struct bk_pop_req {
    const char *group;
    const char *topic;
    int32_t max_msgs;                /* >= 1 */
    int64_t invisible_ms;            /* >= 1 */
    const char *expression;          /* tag expression (NULL or "*": all) */
    int64_t poll_ms;                 /* > 0: wait this long when nothing is there */
    int order;                       /* FIFO: only queue_id, blocked while its last batch is in flight */
    int32_t queue_id;                /* FIFO: the queue to pop */
    const char *attempt_id;          /* FIFO: a retry of the same attempt gets the same batch (NULL: none) */
    bk_session_t *ss;                /* the client: its messages are released when it closes */
    bk_pop_answer_fn answer;         /* a held pop's answer (each front its own) */
    bk_pop_ctx_free_fn ctx_free;
    bk_pop_gone_fn gone;             /* NULL: the requester lives as long as its session */
};

/* One popped message: where it is and its receipt handle. */
typedef struct bk_pop_msg {
    int64_t phys_offset;
    int32_t queue_id;
    int64_t queue_offset;
    int retry;                       /* popped from the pop retry topic */
    int32_t attempt;                 /* delivery attempt: reconsumeTimes + 1 */
    char handle[BK_POP_HANDLE_MAX];
} bk_pop_msg_t;

/* A pop's outcome. r.status != BK_OK: refused. n == 0: nothing to pop. */
struct bk_pop_out {
    bk_result_t r;
    int64_t pop_time;                /* ms since the epoch, every message's */
    int64_t invisible_ms;
    struct evbuffer *body;           /* the records, in store layout (owned) */
    bk_pop_msg_t *msgs;              /* owned */
    size_t n;
    int64_t rest;                    /* messages left on the topic's queues */
};

/* A receipt handle's fields: ckQueueOffset popTime invisibleTime reviveQid
 * topicType (0 normal, 1 pop retry) brokerName queueId queueOffset. */
typedef struct bk_pop_handle {
    int64_t ck_offset;
    int64_t pop_time;
    int64_t invisible_ms;
    int32_t revive_qid;
    int32_t type;
    char broker[BK_POP_BROKER_MAX + 1];
    int32_t queue_id;
    int64_t queue_offset;
} bk_pop_handle_t;

/* An ack or a change of invisible time: the group, the topic popped (the
 * handle's type says whether the message came from its retry topic), the
 * handle. Strings borrowed. */
typedef struct bk_pop_ack_req {
    const char *group;
    const char *topic;
    const char *handle;
} bk_pop_ack_req_t;

/* Parses a receipt handle of len bytes (8 fields, or 9 with the proxy's
 * commit-log offset); RMQ_EINVAL when malformed. */
rmq_err_t bk_pop_handle_parse(const char *s, size_t len, bk_pop_handle_t *h);
/* Formats h into buf[cap]; its length, or 0 when it does not fit. */
size_t bk_pop_handle_format(const bk_pop_handle_t *h, char *buf, size_t cap);

/* cfg is copied (pointers borrowed). NULL when out of memory. */
bk_pop_t *bk_pop_new(const bk_pop_config_t *cfg);
/* Frees the pop state (the committed offsets stay in the table) and drops
 * held pops (their ctx freed). */
void bk_pop_free(bk_pop_t *p);
void bk_pop_set_slave(bk_pop_t *p, int is_slave);

/* Pops up to req->max_msgs messages: from the pop retry topic first with
 * retry_percent probability, and when the topic gave too few; the topic's
 * readable queues from a random start. A message whose tag does not match
 * is finished silently; one that reached the group's retryMaxTimes goes to
 * the DLQ instead. FIFO (req->order): only req->queue_id; nothing while a
 * message of its last batch is unacked and invisible, except that the same
 * attempt id gets that batch again; once they are visible again the same
 * offsets come again, each with its attempt counted (no retry topic, no
 * DLQ: the client forwards to it); the committed offset moves once the
 * batch is acked. Returns 1 when answered now (*out filled; the caller
 * encodes it, then bk_pop_out_clear), or 0 when held: answer runs later
 * with ctx, then ctx_free(ctx). */
int bk_pop_run(bk_pop_t *p, const bk_pop_req_t *req, void *ctx, bk_pop_out_t *out);
void bk_pop_out_clear(bk_pop_out_t *out);

/* Finishes the message of req->handle: BK_OK, or BK_BAD_REQUEST
 * (INVALID_RECEIPT_HANDLE: malformed, stale, expired or unknown). */
bk_status_t bk_pop_ack(bk_pop_t *p, const bk_pop_ack_req_t *req, bk_result_t *r);

/* bk_pop_ack of the handle with fields h, for group on topic (a batch ack
 * names its messages by fields, not by handle text). */
bk_status_t bk_pop_ack_fields(bk_pop_t *p, const char *group, const char *topic, const bk_pop_handle_t *h,
                              bk_result_t *r);

/* Makes the message of req->handle invisible for invisible_ms from now:
 * BK_OK with its new handle in new_handle[cap] (and *pop_time), or the
 * refusals of bk_pop_ack. */
bk_status_t bk_pop_change_invisible(bk_pop_t *p, const bk_pop_ack_req_t *req, int64_t invisible_ms,
                                    char *new_handle, size_t cap, int64_t *pop_time, bk_result_t *r);

/* Sends the message of req->handle to the group's DLQ %DLQ%<group> (the
 * client gave up on it: a FIFO consumer's ForwardMessageToDeadLetterQueue)
 * and finishes it once stored (a failed copy is tried again, as a revive
 * is): BK_OK once the copy is under way, or the refusals of bk_pop_ack. */
bk_status_t bk_pop_dead_letter(bk_pop_t *p, const bk_pop_ack_req_t *req, bk_result_t *r);

/* Store arrival: wakes held pops of topic (or of the topic a pop retry
 * topic belongs to). */
void bk_pop_arrived(bk_pop_t *p, const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code);
/* Session ss closed: its held pops are dropped and its in-flight messages
 * become visible again within release_ms. */
void bk_pop_session_closed(bk_pop_t *p, bk_session_t *ss);
/* Clean stop: answers every held pop now and holds no more. */
void bk_pop_stop(bk_pop_t *p);

/* Messages in flight (popped, not finished). */
size_t bk_pop_inflight(const bk_pop_t *p);

/* Calls fn once per queue with messages in flight: its group, the topic
 * consumers pop and how many of its messages are popped and not acked. */
typedef void (*bk_pop_inflight_fn)(const char *group, const char *topic, int64_t n, void *arg);
void bk_pop_each_inflight(const bk_pop_t *p, bk_pop_inflight_fn fn, void *arg);

/* RocketMQ's pullOffset of group on a queue of topic for its consume stats:
 * the pop cursor (the next offset to pop) when the group pops the queue
 * and it is past consumer_offset, else consumer_offset; so pullOffset -
 * consumerOffset is what RocketMQ 5's mqadmin consumerProgress shows as
 * #Inflight (popped, not yet committed). */
int64_t bk_pop_pull_offset(const bk_pop_t *p, const char *group, const char *topic, int32_t queue_id,
                           int64_t consumer_offset);

#endif
