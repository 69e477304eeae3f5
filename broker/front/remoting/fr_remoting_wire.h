/* fr_remoting_wire.h: the byte layouts RocketMQ's clients put in remoting
 * bodies, and the ones they read back, as pure functions (no broker, no
 * connection) so the fuzz target and the unit test call them directly:
 *
 * - a batch body (SEND_BATCH_MESSAGE, MessageDecoder.encodeMessages): per
 *   message i32 totalSize | i32 magic (0) | i32 bodyCRC (0) | i32 flag |
 *   i32 bodyLen + body | i16 propertiesLen + properties;
 * - the stored records of a pull or a view-by-id re-encoded as
 *   MessageDecoder's V1 layout: the store's record has the same fields in
 *   the same places (rmq_message.h) except the third word, which RocketMQ
 *   reads as the body's CRC-32 & 0x7fffffff (ours is a CRC32C of the
 *   record), and the magic: a record with an IPv6 host has our own magic
 *   and 16-byte hosts where its sysFlag bits BORNHOST_V6 / STOREHOSTADDRESS_V6
 *   say (RocketMQ's layout), which V1 decoders read by those bits; an old
 *   record's stray host bits are cleared (rmq_record_decode); a
 *   check-back's half message is re-encoded under its real topic and queue;
 * - a HeartbeatData JSON body, read into the broker's heartbeat view;
 * - the ConsumerListBody JSON answer. */
#ifndef FR_REMOTING_WIRE_H
#define FR_REMOTING_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "bk_clients.h"
#include "rmq_err.h"
#include "rmq_json.h"
#include "rmq_message.h"


/* CRC-32 (IEEE, by zlib) of buf, & 0x7fffffff: MessageDecoder's bodyCRC. */
int32_t fr_rm_body_crc(const void *buf, size_t len);

/* Decodes the batch entry at data[0..len) into *e (pointers into data);
 * *used = its size. RMQ_EPROTO with *why naming the broken field. */
rmq_err_t fr_rm_batch_decode(const uint8_t *data, size_t len, rmq_batch_entry_t *e, size_t *used,
                             const char **why);
/* Size of a batch entry of these lengths, and its encoding into out (that
 * many bytes): what a RocketMQ client sends (tests). */
size_t fr_rm_batch_entry_size(size_t body_len, size_t props_len);
size_t fr_rm_batch_encode(const rmq_batch_entry_t *e, uint8_t *out);

/* Re-encodes the stored records at rec[0..len) as MessageDecoder V1 into
 * out (len bytes, may not overlap rec); *count = how many. RMQ_ECORRUPT if
 * rec is not a whole number of valid records. */
rmq_err_t fr_rm_messages_encode(const uint8_t *rec, size_t len, uint8_t *out, int32_t *count);
/* The stored records in body, re-encoded so into a new buffer *out (*len
 * bytes; the caller frees it). RMQ_ENOMEM, or RMQ_ECORRUPT as above. */
rmq_err_t fr_rm_records_encode(struct evbuffer *body, uint8_t **out, size_t *len);

/* The half message of a CHECK_TRANSACTION_STATE as RocketMQ's broker
 * sends it: the one stored record at rec[0..len) in the V1 layout under
 * its real topic and queue (REAL_TOPIC, REAL_QID, when present and
 * valid), properties unchanged. *out (malloc'd, the caller's) holds
 * *out_len bytes. RMQ_ECORRUPT if rec is not exactly one valid record;
 * RMQ_ENOMEM. */
rmq_err_t fr_rm_check_message_encode(const uint8_t *rec, size_t len, uint8_t **out, size_t *out_len);

/* A HeartbeatData body read into the core's neutral heartbeat (bk_clients.h). Strings
 * point into doc; everything is owned here (fr_rm_heartbeat_clear). */
typedef struct fr_rm_heartbeat {
    bk_heartbeat_t hb;
    rmq_json_t *doc;
    const char **producers;
    bk_hb_consumer_t *consumers;
    bk_hb_sub_t *subs;
} fr_rm_heartbeat_t;

/* Parses body[0..len) (clientID, producerDataSet[{groupName}],
 * consumerDataSet[{groupName, consumeType, messageModel, consumeFromWhere,
 * subscriptionDataSet[{topic, subString}]}]; other fields are ignored). RMQ_OK; RMQ_EPROTO with a reason in why; RMQ_ENOMEM. */
rmq_err_t fr_rm_heartbeat_parse(const uint8_t *body, size_t len, fr_rm_heartbeat_t *out, char *why,
                                size_t whylen);
void fr_rm_heartbeat_clear(fr_rm_heartbeat_t *h);

/* A CheckClientRequestBody (CHECK_CLIENT_CONFIG): its group and its
 * subscriptionData's subString and expressionType, pointing into doc
 * (rmq_json_free it). */
typedef struct fr_rm_check_client {
    rmq_json_t *doc;
    const char *group;               /* "" when absent */
    int has_sub;                     /* a subscriptionData object was sent */
    const char *expr;                /* "" when absent */
    const char *type;                /* NULL when absent */
} fr_rm_check_client_t;

/* Parses body[0..len) into *out. RMQ_OK; RMQ_EPROTO with a reason in why. */
rmq_err_t fr_rm_check_client_parse(const uint8_t *body, size_t len, fr_rm_check_client_t *out, char *why,
                                   size_t whylen);

/* The core's value of a ConsumeFromWhere name (an unknown one: last
 * offset, RocketMQ's default), and the name of a value. */
bk_consume_from_t fr_rm_consume_from_parse(const char *name);
const char *fr_rm_consume_from_name(bk_consume_from_t from);

/* Appends {"consumerIdList":[ids...]} to out. */
rmq_err_t fr_rm_consumer_list_encode(struct evbuffer *out, const char *const *ids, size_t n);

#endif
