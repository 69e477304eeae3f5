/* fr_remoting_locks.h: RocketMQ's queue-lock bodies as pure functions (no
 * broker, no connection), so the fuzz target calls them directly:
 *
 * - LockBatchRequestBody / UnlockBatchRequestBody (LOCK_BATCH_MQ 41,
 *   UNLOCK_BATCH_MQ 42): {"consumerGroup", "clientId", "onlyThisBroker",
 *   "mqSet":[{"topic", "brokerName", "queueId"}]} read into the core's
 *   neutral batch (core/bk_lock.h);
 * - the LockBatchResponseBody answer {"lockOKMQSet":[...]}, the queues the
 *   client holds, each as it named it. */
#ifndef FR_REMOTING_LOCKS_H
#define FR_REMOTING_LOCKS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "bk_lock.h"
#include "rmq_err.h"
#include "rmq_json.h"

/* A lock or unlock body read into a neutral batch. Strings point into doc;
 * everything is owned here (fr_rm_lock_body_clear). broker_names[i] is the
 * brokerName of mqs[i] ("" when absent), echoed in the answer. */
typedef struct fr_rm_lock_body {
    bk_lock_batch_req_t req;         /* cmd and now_ms are the caller's to set */
    rmq_json_t *doc;
    bk_lock_mq_t *mqs;
    const char **broker_names;
} fr_rm_lock_body_t;

/* Parses body[0..len) as a Lock/UnlockBatchRequestBody (consumerGroup,
 * clientId and mqSet required; each mqSet entry needs a topic and a queueId
 * in [0, INT32_MAX]; other fields are ignored). RMQ_OK; RMQ_EPROTO with a
 * reason naming the field in why; RMQ_ENOMEM. */
rmq_err_t fr_rm_lock_body_parse(const uint8_t *body, size_t len, fr_rm_lock_body_t *out, char *why,
                                size_t whylen);
void fr_rm_lock_body_clear(fr_rm_lock_body_t *lb);

/* Appends {"lockOKMQSet":[...]} to out: the queues i of lb with held[i]. */
rmq_err_t fr_rm_lock_answer_encode(struct evbuffer *out, const fr_rm_lock_body_t *lb, const uint8_t *held);

#endif
