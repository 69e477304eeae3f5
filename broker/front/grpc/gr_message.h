/* gr_message.h: the gRPC front's mapping between a RocketMQ 5 message
 * (apache.rocketmq.v2 Message with its SystemProperties) and the stored
 * message every front shares (st_msg_t in, rmq_record_t out, with RocketMQ
 * 4.x property names in the properties string), so a message sent over one
 * protocol reads the same over the other two (GRPC-NOTES.md §3.4-§3.7).
 * Pure functions of their arguments (the clock included); any thread. */
#ifndef GR_MESSAGE_H
#define GR_MESSAGE_H

#include <stddef.h>
#include <stdint.h>

#include "apache/rocketmq/v2/definition.pb-c.h"
#include "gr_status.h"
#include "rmq_message.h"
#include "st_store.h"

/* RocketMQ's message sys_flag bits the mapping sets and reads. */
#define GR_SYSFLAG_COMPRESSED 0x1
#define GR_SYSFLAG_TX_PREPARED 0x4

/* The limits the proxy applies to a message's user part (its defaults:
 * userPropertyMaxNum, maxUserPropertySize, maxMessageGroupSize). */
#define GR_USER_PROPS_MAX 128
#define GR_USER_PROPS_BYTES_MAX (16 * 1024)
#define GR_MESSAGE_GROUP_MAX 64          /* bytes, exclusive */

/* google.protobuf Duration and Timestamp <-> milliseconds (nanos keep the
 * sign of seconds; a Timestamp's nanos are 0..999999999). */
void gr_duration_set_ms(Google__Protobuf__Duration *du, int64_t ms);
int64_t gr_duration_ms(const Google__Protobuf__Duration *du);
void gr_timestamp_set_ms(Google__Protobuf__Timestamp *ts, int64_t ms);

/* 1 if name[0..len) is a property the system sets (RocketMQ's
 * MessageConst.STRING_HASH_SET plus rmq's own): a send may not name it as a
 * user property, and a delivery does not show it as one. */
int gr_prop_is_system(const char *name, size_t len);

/* What a send's mapping needs besides the message. */
typedef struct gr_send_ctx {
    int64_t now_ms;                  /* wall clock */
    int64_t max_delay_ms;            /* delivery_timestamp at most now + this; <= 0: no limit */
    size_t max_body_size;            /* a GZIP body inflates to at most this */
    const char *peer_host;           /* the client's address: __BORNHOST when born_host is blank */
} gr_send_ctx_t;

/* A send's scratch the caller owns: zero-initialise, reuse, release with
 * gr_store_msg_deinit. st_msg_t fields point into it and into the message. */
typedef struct gr_store_msg {
    rmq_props_buf_t props;
    uint8_t *body;                   /* an inflated GZIP body */
} gr_store_msg_t;

void gr_store_msg_deinit(gr_store_msg_t *sm);

/* Maps one v2 message of a SendMessage to the stored message *m: topic,
 * queue_id (system_properties.queue_id), sys_flag, born timestamp,
 * reconsume times (delivery_attempt - 1), body (inflated into sm when GZIP)
 * and the 4.x properties string (UNIQ_KEY, TAGS, KEYS, user properties,
 * __SHARDINGKEY, TIMER_DELIVER_MS and __STARTDELIVERTIME, TRAN_MSG and
 * PGROUP = topic, CHECK_IMMUNITY_TIME_IN_SECONDS, TRACE_CONTEXT, __BORNHOST,
 * BORN_TIMESTAMP) built in sm, and tag_code. The born ip/port are the
 * caller's (the connection). msg and sm must outlive *m. 1 on success, or 0
 * with *st set to the v2 code a proxy gives (ILLEGAL_MESSAGE_ID, ..._TAG,
 * ..._KEY, ..._GROUP, ..._PROPERTY_KEY, MESSAGE_PROPERTIES_TOO_LARGE,
 * ILLEGAL_DELIVERY_TIME, MESSAGE_BODY_EMPTY, ...) and a reason. */
int gr_message_to_store(const Apache__Rocketmq__V2__Message *msg, const gr_send_ctx_t *ctx, gr_store_msg_t *sm,
                        st_msg_t *m, gr_status_t *st);

/* What a delivery's mapping needs besides the record. */
typedef struct gr_deliver_ctx {
    const char *receipt_handle;      /* NULL: none (a transaction check-back) */
    int64_t invisible_ms;            /* < 0: not set */
    int32_t delivery_attempt;        /* <= 0: the record's reconsume times + 1 */
    size_t max_body_size;            /* a compressed 4.x body inflates to at most this */
} gr_deliver_ctx_t;

/* A delivered v2 message and everything it points to, owned by itself:
 * build with gr_message_from_record, pack msg, release with
 * gr_delivered_deinit (safe on a zeroed or failed one). */
typedef struct gr_delivered {
    Apache__Rocketmq__V2__Message msg;
    Apache__Rocketmq__V2__Resource topic;
    Apache__Rocketmq__V2__SystemProperties sys;
    Apache__Rocketmq__V2__Digest digest;
    Apache__Rocketmq__V2__DeadLetterQueue dlq;
    Google__Protobuf__Timestamp born_ts, store_ts, deliver_ts;
    Google__Protobuf__Duration invisible, orphan;
    Apache__Rocketmq__V2__Message__UserPropertiesEntry *user;     /* n_user_properties */
    Apache__Rocketmq__V2__Message__UserPropertiesEntry **user_ptrs;
    char **keys;                     /* into text */
    char *text;                      /* every string, NUL-terminated */
    uint8_t *body;                   /* an inflated body */
} gr_delivered_t;

/* Fills *d from the stored record rec (its topic, or RETRY_TOPIC's value
 * for a retry copy, REAL_TOPIC's for a half or delayed message in the
 * broker's own topics): user properties (every non-system property), tag,
 * keys, message_id (UNIQ_KEY, else the offset id), MD5 body digest
 * (upper-case hex), IDENTITY encoding (a COMPRESSED 4.x body inflated),
 * message type, born/store timestamp and host, delivery timestamp,
 * message group, queue id and offset, delivery attempt, trace context,
 * dead-letter origin, and ctx's receipt handle and invisible duration.
 * d borrows nothing from rec. RMQ_OK, RMQ_ENOMEM, or RMQ_ECORRUPT (a
 * compressed body that does not inflate within ctx->max_body_size). */
rmq_err_t gr_message_from_record(const rmq_record_t *rec, const gr_deliver_ctx_t *ctx, gr_delivered_t *d);
void gr_delivered_deinit(gr_delivered_t *d);

#endif
