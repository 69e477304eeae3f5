/* bk_produce.h: the core of a producer's send, on neutral requests: the
 * checks (broker writable, names, the broker's own topics refused, size,
 * topic and queue, auto-creating the topic from its template) and the store of messages already split by the
 * front-end (a single message may be diverted: delayed, or a transaction's
 * half message), through the one append path. Loop thread only. */
#ifndef BK_PRODUCE_H
#define BK_PRODUCE_H

#include <stddef.h>
#include <stdint.h>

#include "bk_append.h"
#include "bk_perm.h"
#include "bk_topics.h"

typedef struct bk_produce bk_produce_t;

typedef struct bk_produce_config {
    bk_append_t *append;             /* borrowed */
    bk_topics_t *topics;             /* borrowed */
    int auto_create_topic;           /* autoCreateTopicEnable */
    int64_t max_message_size;        /* maxMessageSize */
    const char *addr;                /* this broker, for reasons (borrowed) */
    const char *cluster;             /* brokerClusterName, stamped as CLUSTER on every
                                      * client message (borrowed; NULL: none) */
    /* Rewrites a single message before it is stored (delay, transaction);
     * RMQ_OK, RMQ_EINVAL (bad properties) or another error, with *why. */
    rmq_err_t (*divert)(void *arg, st_msg_t *m, const char **why);
    void *divert_arg;
} bk_produce_config_t;

/* A send as the front-end decoded it. Strings are borrowed for the call. */
typedef struct bk_produce_req {
    const char *cmd;                 /* the request's name, opens reasons */
    const char *topic;
    const char *producer_group;      /* "" if none */
    const char *default_topic;       /* auto-creation template */
    int32_t default_topic_queue_nums;
    int32_t queue_id;                /* < 0: the broker picks one, round-robin */
    size_t body_len;                 /* the whole request body */
    const bk_caller_t *who;          /* who sends (bk_perm.h; NULL: trusted) */
    int reply;                       /* a responder's reply (SEND_REPLY_MESSAGE: BK_OP_SEND_REPLY) */
} bk_produce_req_t;

/* Where a checked send goes. topic is valid until the topic table changes. */
typedef struct bk_produce_target {
    const bk_topic_t *topic;
    int32_t queue_id;
} bk_produce_target_t;

bk_produce_t *bk_produce_new(const bk_produce_config_t *cfg);
void bk_produce_free(bk_produce_t *p);

/* Checks req (who needs PUB on the topic it names, before that topic is
 * looked up or auto-created); 1 with *tgt filled, or 0 with r set. */
int bk_produce_check(bk_produce_t *p, const bk_produce_req_t *req, bk_produce_target_t *tgt, bk_result_t *r);

/* 1 if a message the broker re-stores (a delayed message reaching its
 * time, a committed transaction) may go to topic[0..len) queue_id: the
 * topic exists, is not the broker's own, and has that write queue; else 0
 * with r set. */
int bk_produce_dest_check(const bk_produce_t *p, const char *topic, size_t len, int64_t queue_id, bk_result_t *r);

/* Stores msgs[0..n) of a checked send (topic and queue taken from tgt;
 * the reserved properties stripped and CLUSTER stamped, as RocketMQ's
 * SendMessageProcessor does, then a single message diverted; a
 * batch (n > 1) holding a transactional or delayed message is refused
 * BK_MESSAGE_ILLEGAL, as RocketMQ's store refuses one) like bk_append_put: 1 when the outcome is final now in *out, 0 when cb(out,
 * arg) follows. msgs are borrowed; their properties may be repointed into
 * p's scratch, valid until the next send. */
int bk_produce_store(bk_produce_t *p, const bk_produce_target_t *tgt, st_msg_t *msgs, size_t n,
                     bk_append_out_t *out, bk_append_fn cb, void *arg);

#endif
