/* bk_recall.h: RocketMQ 5.3's recall of a timer message (RECALL_MESSAGE 370
 * on remoting, RecallMessage on gRPC), on neutral requests. The send of a
 * timer message (TIMER_DELIVER_MS, TIMER_DELAY_SEC, TIMER_DELAY_MS) answers
 * a recall handle (rmq_recall_handle.h). A recall checks the handle as RocketMQ's
 * RecallMessageProcessor does and becomes a delete marker: a timer message
 * of the topic, due at the handle's time (just after the message), with
 * TIMER_DEL_UNIQKEY=<topic>+<UNIQ_KEY>, stored through the core's send; the
 * scheduler (bk_schedule.c) then delivers neither the message nor the
 * marker. Markers live in the commit log like any timer message, so a
 * recall outlasts a restart. Loop thread only. */
#ifndef BK_RECALL_H
#define BK_RECALL_H

#include <stddef.h>
#include <stdint.h>

#include "bk_append.h"
#include "bk_perm.h"
#include "bk_produce.h"
#include "bk_topics.h"
#include "rmq_message.h"
#include "rmq_recall_handle.h"

/* The handle a stored single message m answers with, given the broker's
 * name: m as the scheduler diverted it (bk_schedule_divert) to the timer
 * queue for a TIMER_* property, with a UNIQ_KEY, not a retry topic's and
 * not a marker itself. Its length into out, or 0 for any other message. */
size_t bk_recall_handle_of(const st_msg_t *m, const char *broker_name, char *out, size_t cap);

typedef struct bk_recall bk_recall_t;

typedef struct bk_recall_config {
    bk_append_t *append;             /* "may this broker take writes" (borrowed) */
    bk_topics_t *topics;             /* borrowed */
    const char *broker_name;         /* brokerName (borrowed) */
    int enabled;                     /* recallMessageEnable */
    int64_t horizon_ms;              /* the latest delivery time a timer message may have (the scheduler's) */
} bk_recall_config_t;

/* A recall as the front-end decoded it. Strings are borrowed for the call. */
typedef struct bk_recall_req {
    const char *topic;
    const char *handle;
    const bk_caller_t *who;          /* who recalls (bk_perm.h; NULL: trusted) */
} bk_recall_req_t;

/* The delete marker of a checked recall, to store with bk_send_store. */
typedef struct bk_recall_marker {
    bk_produce_target_t tgt;
    st_msg_t msg;                    /* its properties point into props */
    char msg_id[RMQ_RECALL_NAME_MAX + 1];   /* the recalled message's id: the answer's */
    char props[RMQ_TOPIC_MAX + 3 * RMQ_RECALL_NAME_MAX + 128];
} bk_recall_marker_t;

/* NULL when out of memory. cfg is copied; its pointers are borrowed. */
bk_recall_t *bk_recall_new(const bk_recall_config_t *cfg);
void bk_recall_free(bk_recall_t *rc);

/* Checks req in RocketMQ's order and with its answers (recall disabled:
 * BK_NO_PERMISSION; the caller's PUB on the topic; the topic unknown:
 * BK_TOPIC_NOT_EXIST; a bad handle, another topic's or broker's, or a time
 * already past or beyond the horizon: BK_ILLEGAL_OPERATION); 1 with *mk
 * filled, or 0 with r set. */
int bk_recall_check(const bk_recall_t *rc, const bk_recall_req_t *req, bk_recall_marker_t *mk, bk_result_t *r);

/* Whether handle is valid and names another broker set than this one,
 * whose name goes into broker (RMQ_RECALL_NAME_MAX + 1 bytes): a front
 * whose clients send every recall to one access point (gRPC) forwards
 * those (rmq_grpc_recall.h); the rest go to bk_recall_check. */
int bk_recall_elsewhere(const bk_recall_t *rc, const char *handle, char *broker);

#endif
