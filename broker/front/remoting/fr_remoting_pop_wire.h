/* fr_remoting_pop_wire.h: RocketMQ 5's BatchAckMessageRequestBody
 * (BATCH_ACK_MESSAGE 200151) as a pure function (no broker, no
 * connection), so the fuzz target calls it directly: {"brokerName",
 * "acks":[{"c" consumerGroup, "t" topic, "r" retry "0"|"1", "so"
 * startOffset, "q" queueId, "rq" reviveQueueId, "pt" popTime, "it"
 * invisibleTime, "b" bitSet}]} (fastjson's short names; the long ones are
 * read too), where bitSet is Java's BitSet.toByteArray in base64 and bit i
 * acks the message at startOffset + i. Each acked message becomes the
 * receipt handle fields the core acks by (core/bk_pop.h). */
#ifndef FR_REMOTING_POP_WIRE_H
#define FR_REMOTING_POP_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "bk_pop.h"
#include "rmq_err.h"
#include "rmq_json.h"

#define FR_RM_BATCH_ACK_MAX 4096     /* messages one body may ack */

/* One acked message: its group and topic (into the parsed document) and
 * handle fields. */
typedef struct fr_rm_acked {
    const char *group;
    const char *topic;
    bk_pop_handle_t h;
} fr_rm_acked_t;

/* A parsed body; everything owned here (fr_rm_batch_ack_clear). */
typedef struct fr_rm_batch_ack {
    rmq_json_t *doc;
    fr_rm_acked_t *acked;
    size_t n;
} fr_rm_batch_ack_t;

/* Parses body[0..len) as a BatchAckMessageRequestBody. RMQ_OK; RMQ_EPROTO
 * with a reason naming the field in why (a missing or mistyped field, bad
 * base64, more than FR_RM_BATCH_ACK_MAX messages); RMQ_ENOMEM. */
rmq_err_t fr_rm_batch_ack_parse(const uint8_t *body, size_t len, fr_rm_batch_ack_t *out, char *why, size_t whylen);
void fr_rm_batch_ack_clear(fr_rm_batch_ack_t *ba);

#endif
