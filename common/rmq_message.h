/* rmq_message.h: the stored message record codec, shared by the store (which
 * writes and recovers records), the broker (batch bodies) and clients (which
 * decode pulled records), and the properties string inside a message, read
 * by all of them and built by clients (outgoing messages) and the broker
 * (re-stored messages). All integers big-endian.
 *
 * Record:
 *   u32 total_size | u32 magic | u32 crc32c (over every byte after this field)
 *   | i32 queue_id | i32 flag | i64 queue_offset | i64 phys_offset | i32 sys_flag
 *   | i64 born_ts | born_host | i64 store_ts | store_host
 *   | i32 reconsume_times | i64 prepared_tx_offset
 *   | u32 body_len | body | u8 topic_len | topic | u16 props_len | props
 * Under RMQ_MAGIC_MESSAGE (every IPv4 record, and every record written
 * before IPv6 hosts existed) a host is u32 ip | u32 port. Under
 * RMQ_MAGIC_MESSAGE_HOSTS (written only when a host is IPv6) a host whose
 * sys_flag bit RMQ_SYSFLAG_BORNHOST_V6 / RMQ_SYSFLAG_STOREHOST_V6 is set is
 * u8 ip6[16] | u32 port, the other stays u32 ip | u32 port: RocketMQ's
 * commit-log layout. Under the old magic those sys_flag bits mean nothing
 * and decode clears them.
 * End-of-file blank: u32 remaining | u32 RMQ_MAGIC_BLANK.
 *
 * Batch body (SEND_BATCH_MESSAGE), one entry per message:
 *   u32 total_size | i32 flag | u32 body_len | body | u16 props_len | props */
#ifndef RMQ_MESSAGE_H
#define RMQ_MESSAGE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "rmq_err.h"

#define RMQ_MAGIC_MESSAGE 0xDAA320A7u
#define RMQ_MAGIC_MESSAGE_HOSTS 0xDAA320A9u  /* hosts sized by sys_flag's IPv6 bits */
#define RMQ_MAGIC_BLANK 0xCBD43194u
#define RMQ_RECORD_FIXED 88u        /* header bytes up to and including body_len, IPv4 hosts */
#define RMQ_RECORD_HOST6_EXTRA 12u  /* an IPv6 host's extra bytes over an IPv4 one */
/* sys_flag bits (RocketMQ MessageSysFlag) saying a host is IPv6. */
#define RMQ_SYSFLAG_BORNHOST_V6 0x10
#define RMQ_SYSFLAG_STOREHOST_V6 0x20
#define RMQ_SYSFLAG_HOSTS_V6 (RMQ_SYSFLAG_BORNHOST_V6 | RMQ_SYSFLAG_STOREHOST_V6)
#define RMQ_TOPIC_MAX 127u
#define RMQ_QUEUE_NUMS_MAX 65535    /* read or write queues of a topic on one broker in a route */
#define RMQ_PROPS_MAX 32767u

/* Property names (RocketMQ MessageConst), the one list for broker, client
 * and tools. REAL_TOPIC, REAL_QID, TRANSACTION_CHECK_TIMES and CLUSTER are
 * reserved: only the broker sets them (rmq_props_reserved). RETRY_TOPIC and
 * ORIGIN_MESSAGE_ID are set by the broker's send-back and by a client's
 * fallback send to %RETRY%group, so they stay client-settable. */
#define RMQ_PROP_TAGS "TAGS"
#define RMQ_PROP_KEYS "KEYS"
#define RMQ_PROP_UNIQ_KEY "UNIQ_KEY"
#define RMQ_PROP_WAIT "WAIT"
#define RMQ_PROP_DELAY "DELAY"
#define RMQ_PROP_DELIVER_AT "__STARTDELIVERTIME"   /* absolute wall ms (beyond RocketMQ 4) */
#define RMQ_PROP_TRAN_MSG "TRAN_MSG"
#define RMQ_PROP_PRODUCER_GROUP "PGROUP"
#define RMQ_PROP_REAL_TOPIC "REAL_TOPIC"
#define RMQ_PROP_REAL_QID "REAL_QID"
#define RMQ_PROP_RETRY_TOPIC "RETRY_TOPIC"
#define RMQ_PROP_ORIGIN_MESSAGE_ID "ORIGIN_MESSAGE_ID"
#define RMQ_PROP_FIRST_POP_TIME "1ST_POP_TIME"       /* a popped message's first pop (RocketMQ 5) */
#define RMQ_PROP_TX_CHECK_TIMES "TRANSACTION_CHECK_TIMES"
#define RMQ_PROP_CLUSTER "CLUSTER"                  /* the storing broker's brokerClusterName */
/* The storing broker's region and trace switch: RocketMQ answers them on
 * every send and its 5.x broker stamps them on every message stored (a
 * client's message trace reads them). */
#define RMQ_PROP_MSG_REGION "MSG_REGION"
#define RMQ_PROP_TRACE_ON "TRACE_ON"
#define RMQ_REGION_DEFAULT "DefaultRegion"          /* RocketMQ's regionId default */
/* Request-reply (RocketMQ 4.6+): the requester's client id a reply goes
 * to, and when the broker pushed the reply to it. */
#define RMQ_PROP_REPLY_TO_CLIENT "REPLY_TO_CLIENT"
#define RMQ_PROP_PUSH_REPLY_TIME "PUSH_REPLY_TIME"
/* Names RocketMQ 5 (the gRPC front) reads and writes besides those above. */
#define RMQ_PROP_RECONSUME_TIME "RECONSUME_TIME"
#define RMQ_PROP_SHARDING_KEY "__SHARDINGKEY"          /* a FIFO message's group */
#define RMQ_PROP_TRACE_CONTEXT "TRACE_CONTEXT"
#define RMQ_PROP_BORN_HOST "__BORNHOST"
#define RMQ_PROP_BORN_TIMESTAMP "BORN_TIMESTAMP"
#define RMQ_PROP_TIMER_DELIVER_MS "TIMER_DELIVER_MS"    /* absolute wall ms */
#define RMQ_PROP_TIMER_DELAY_SEC "TIMER_DELAY_SEC"
#define RMQ_PROP_TIMER_DELAY_MS "TIMER_DELAY_MS"
#define RMQ_PROP_TIMER_DEL_UNIQKEY "TIMER_DEL_UNIQKEY"   /* a recall's delete marker: "<topic>+<UNIQ_KEY>" */
#define RMQ_PROP_CHECK_IMMUNITY_SEC "CHECK_IMMUNITY_TIME_IN_SECONDS"
#define RMQ_PROP_DLQ_ORIGIN_TOPIC "DLQ_ORIGIN_TOPIC"
#define RMQ_PROP_DLQ_ORIGIN_MESSAGE_ID "DLQ_ORIGIN_MESSAGE_ID"

/* The producer group every RocketMQ Java client instance announces in its
 * heartbeats for its own internal producer (MixAll.CLIENT_INNER_PRODUCER_GROUP):
 * it names no application's producers, so the broker records no such
 * producer (no transaction check-back goes to it) and asks no right for it. */
#define RMQ_INNER_PRODUCER_GROUP "CLIENT_INNER_PRODUCER"

/* A consumer group's retry and dead-letter topics are these + the group. */
#define RMQ_RETRY_PREFIX "%RETRY%"
#define RMQ_DLQ_PREFIX "%DLQ%"

/* prefix + group, or with pop_topic prefix + group + "_" + pop_topic (a pop
 * consumer's retry topic of pop_topic), into buf[cap]; its length, or 0
 * when it does not fit. */
size_t rmq_group_topic_name(char *buf, size_t cap, const char *prefix, const char *group, const char *pop_topic);

/* "topic@group", the key of a group's offsets and stats on a topic, into
 * buf[cap]; its length, or 0 when it does not fit. */
size_t rmq_topic_group_key(char *buf, size_t cap, const char *topic, const char *group);
/* A cluster's reply topic is the cluster name + this (MixAll.getReplyTopic). */
#define RMQ_REPLY_TOPIC_SUFFIX "_REPLY_TOPIC"

/* Writes cluster's reply topic into out[0..cap); 1, or 0 when it does not fit. */
int rmq_reply_topic(const char *cluster, char *out, size_t cap);

/* The topics the broker keeps for itself; these and the last three are
 * RocketMQ TopicValidator's NOT_ALLOWED_SEND_TOPIC_SET. */
#define RMQ_TOPIC_SCHEDULE "SCHEDULE_TOPIC_XXXX"
#define RMQ_TOPIC_TRANS_HALF "RMQ_SYS_TRANS_HALF_TOPIC"
#define RMQ_TOPIC_TRANS_OP "RMQ_SYS_TRANS_OP_HALF_TOPIC"
#define RMQ_TOPIC_TRANS_CHECK_MAX_TIME "TRANS_CHECK_MAX_TIME_TOPIC"
#define RMQ_TOPIC_SELF_TEST "SELF_TEST_TOPIC"
#define RMQ_TOPIC_OFFSET_MOVED "OFFSET_MOVED_EVENT"
#define RMQ_TOPIC_TRACE "RMQ_SYS_TRACE_TOPIC" /* clients' message traces (msgTraceTopicName's default) */
#define RMQ_TOPIC_AUTO_CREATE "TBW102"        /* the auto-create template (AUTO_CREATE_TOPIC_KEY_TOPIC) */

/* 1 if name[0..len) is one of the topics clients may not send to
 * (RocketMQ's NOT_ALLOWED_SEND_TOPIC_SET; retry and dead-letter topics are
 * not among them). */
int rmq_topic_send_forbidden(const char *name, size_t len);

/* RocketMQ TopicValidator's SYSTEM_TOPIC_SET as every broker has it,
 * NULL-terminated; a broker adds its own (its cluster's and its name, the
 * reply and trace topics: bk_admin_ops.h). */
extern const char *const rmq_topics_system[];
/* Every topic named so is a system topic too. */
#define RMQ_TOPIC_SYSTEM_PREFIX "rmq_sys_"

/* 1 if name is in rmq_topics_system or starts with RMQ_TOPIC_SYSTEM_PREFIX
 * (TopicValidator.isSystemTopic without a broker's own additions). */
int rmq_topic_in_system_set(const char *name);

/* The reserved property names, NULL-terminated: stripped from every
 * client send before anything reads them. */
extern const char *const rmq_props_reserved[];

/* The topic and group naming rule: 1..RMQ_TOPIC_MAX bytes of %|a-zA-Z0-9_-.
 * 1 if name[0..len) follows it; on 0, *why names the broken rule. */
int rmq_name_is_valid(const char *name, size_t len, const char **why);

/* A decoded record: pointers into the caller's buffer. */
typedef struct rmq_record {
    uint32_t total_size;
    uint32_t crc;
    int32_t queue_id;
    int32_t flag;
    int64_t queue_offset;
    int64_t phys_offset;
    int32_t sys_flag;
    int64_t born_timestamp;
    uint32_t born_ip;               /* IPv4; 0 when sys_flag has RMQ_SYSFLAG_BORNHOST_V6 */
    uint32_t born_port;
    uint8_t born_ip6[16];           /* with RMQ_SYSFLAG_BORNHOST_V6 */
    int64_t store_timestamp;
    uint32_t store_ip;              /* IPv4; 0 when sys_flag has RMQ_SYSFLAG_STOREHOST_V6 */
    uint32_t store_port;
    uint8_t store_ip6[16];          /* with RMQ_SYSFLAG_STOREHOST_V6 */
    int32_t reconsume_times;
    int64_t prepared_tx_offset;
    const uint8_t *body;
    uint32_t body_len;
    const char *topic;
    uint8_t topic_len;
    const char *properties;
    uint16_t properties_len;
} rmq_record_t;

/* Size of the encoded record for these lengths, its hosts sized by
 * sys_flag's IPv6 bits. */
size_t rmq_record_size(int32_t sys_flag, size_t body_len, size_t topic_len, size_t props_len);

/* Encodes rec (its body/topic/properties pointers and lengths) into out,
 * which must hold rmq_record_size() bytes; computes the CRC. The magic is
 * RMQ_MAGIC_MESSAGE_HOSTS when rec->sys_flag has an IPv6 host bit, else
 * RMQ_MAGIC_MESSAGE. Returns bytes written. */
size_t rmq_record_encode(const rmq_record_t *rec, uint8_t *out);

/* Patches queue offset, phys offset and store timestamp of an encoded
 * record in place and recomputes its CRC. */
void rmq_record_patch(uint8_t *rec, int64_t queue_offset, int64_t phys_offset, int64_t store_ts);

/* The store timestamp of the encoded record at rec (either layout), which
 * holds at least RMQ_RECORD_FIXED bytes; reads no further whatever they are. */
int64_t rmq_record_store_ts(const uint8_t *rec);

/* rec's 16-byte IPv6 born host (inside rec), or NULL when it is IPv4. */
const uint8_t *rmq_record_born_ip6(const rmq_record_t *rec);

/* "ip:port" or "[ip6]:port" of rec's born host (store = 0) or store host
 * (store = 1) into out (cap >= RMQ_HOST_TEXT_MAX). */
#define RMQ_HOST_TEXT_MAX 56
void rmq_record_host_text(const rmq_record_t *rec, int store, char *out, size_t cap);

/* RocketMQ's offset message id (MessageDecoder.createMessageId): uppercase
 * hex of the store host address (ip6 when v6, else ip: 16 or 4 bytes), u32
 * port and i64 phys_offset, 56 or 32 digits, into out. */
#define RMQ_MSG_ID_MAX 56
void rmq_msg_id_format(int v6, uint32_t ip, const uint8_t *ip6, uint32_t port, int64_t phys_offset,
                       char out[RMQ_MSG_ID_MAX + 1]);
/* rmq_msg_id_format of rec's store host and phys_offset. */
void rmq_record_msg_id(const rmq_record_t *rec, char out[RMQ_MSG_ID_MAX + 1]);
/* Reads an offset message id (32 or 56 hex digits, either case) back: its
 * store host as rmq_record_host_text writes it ("a.b.c.d:port" or
 * "[ip6]:port", a broker address rmq_addr_split reads) into addr (cap >=
 * RMQ_HOST_TEXT_MAX) and its commit-log offset into *phys_offset.
 * RMQ_EINVAL, addr untouched, if id is not one (port 0 and a negative
 * offset included). Any thread. */
rmq_err_t rmq_msg_id_parse(const char *id, char *addr, size_t cap, int64_t *phys_offset);

/* Decodes the record at data[0..len). RMQ_OK: *rec filled. RMQ_EAGAIN: the
 * record continues past len. RMQ_ENOTFOUND: a blank end-of-file marker
 * (rec->total_size = its length). RMQ_ECORRUPT: bad magic, lengths or CRC
 * (when verify_crc). Never reads outside data[0..len). */
rmq_err_t rmq_record_decode(const uint8_t *data, size_t len, int verify_crc, rmq_record_t *rec);

/* rmq_record_decode of a message in RocketMQ's MessageDecoder V1 layout
 * (pull and query bodies of the remoting front): magic RMQ_MAGIC_MESSAGE,
 * hosts sized by sysFlag's IPv6 bits, the third word (the body's CRC-32,
 * left in rec->crc) unchecked. RMQ_EAGAIN, RMQ_ECORRUPT as there. */
rmq_err_t rmq_record_decode_rocketmq(const uint8_t *data, size_t len, rmq_record_t *rec);

/* Uppercase hex of in[0..n) into out[2n + 1], NUL-terminated: the text of
 * message ids (RocketMQ's UtilAll.bytes2string), store and client alike. */
void rmq_hex_upper(const uint8_t *in, size_t n, char *out);
/* Reads 2n hex digits (either case) at in into out[0..n); RMQ_EINVAL at a
 * non-digit (in is read no further than the first bad one). */
rmq_err_t rmq_hex_decode(const char *in, size_t n, uint8_t *out);

/* Properties strings: "name\x01value" pairs joined by \x02 (RocketMQ's
 * MessageDecoder format). Readers split on \x02, split each piece at its
 * first \x01 and ignore pieces without one. */

/* One pair of a properties string: pointers into it, not NUL-terminated. */
typedef struct rmq_prop {
    const char *name;
    size_t name_len;
    const char *value;
    size_t value_len;
} rmq_prop_t;

/* 1 if the name of pair p (a const rmq_prop_t *) is the string literal lit. */
#define RMQ_PROP_NAME_IS(p, lit) ((p)->name_len == sizeof(lit) - 1 && memcmp((p)->name, lit, sizeof(lit) - 1) == 0)

/* 1 if pair p names a delay or a delivery time (DELAY, TIMER_DELIVER_MS,
 * TIMER_DELAY_SEC, TIMER_DELAY_MS, __STARTDELIVERTIME), whatever its value. */
int rmq_prop_delays(const rmq_prop_t *p);

/* Fills *p with the next pair of props[0..len) at or after *pos and moves
 * *pos past it; 0 when none is left. Start with *pos = 0. */
int rmq_props_next(const char *props, size_t len, size_t *pos, rmq_prop_t *p);

/* Looks up a property value in a properties string; NULL if absent. *vlen set. */
const char *rmq_props_get(const char *props, size_t len, const char *name, size_t *vlen);

/* A message's type as RocketMQ 5 tells it from its properties. */
typedef enum rmq_msg_type {
    RMQ_MSG_NORMAL,
    RMQ_MSG_FIFO,                 /* __SHARDINGKEY */
    RMQ_MSG_DELAY,                /* DELAY, __STARTDELIVERTIME or a TIMER_* time */
    RMQ_MSG_TRANSACTION,          /* TRAN_MSG=true */
    RMQ_MSG_TYPES
} rmq_msg_type_t;

/* The type of a message with properties props[0..len), checked in
 * RocketMQ's order: transaction, delay, FIFO, else normal. */
rmq_msg_type_t rmq_props_msg_type(const char *props, size_t len);
/* RocketMQ's name of t (TopicMessageType): "NORMAL", "FIFO", "DELAY", "TRANSACTION". */
const char *rmq_msg_type_name(rmq_msg_type_t t);

/* A properties string being built. The caller owns it: zero-initialise it,
 * release it with rmq_props_buf_free. Reusable across messages. */
typedef struct rmq_props_buf {
    char *data;                   /* NUL-terminated after an append; len excludes the NUL */
    size_t len;
    size_t cap;
} rmq_props_buf_t;

/* Makes room for need more bytes plus a NUL past len; data is non-NULL
 * after RMQ_OK (the bytes past len are not written). */
rmq_err_t rmq_props_buf_reserve(rmq_props_buf_t *pb, size_t need);
/* Appends name=value given by lengths (a \x02 first unless pb is empty).
 * No check for separators or an existing name: that is the caller's. */
rmq_err_t rmq_props_buf_append(rmq_props_buf_t *pb, const char *name, size_t name_len,
                               const char *value, size_t value_len);
/* rmq_props_buf_append for NUL-terminated name and value. */
rmq_err_t rmq_props_buf_put(rmq_props_buf_t *pb, const char *name, const char *value);
void rmq_props_buf_free(rmq_props_buf_t *pb);

/* One entry of a batch body. */
typedef struct rmq_batch_entry {
    int32_t flag;
    const uint8_t *body;
    uint32_t body_len;
    const char *properties;
    uint16_t properties_len;
} rmq_batch_entry_t;

/* Decodes the entry at data[0..len); *used = its size. RMQ_EPROTO if malformed. */
rmq_err_t rmq_batch_decode(const uint8_t *data, size_t len, rmq_batch_entry_t *e, size_t *used);
size_t rmq_batch_entry_size(size_t body_len, size_t props_len);
/* Encodes e into out (rmq_batch_entry_size bytes); returns bytes written. */
size_t rmq_batch_encode(const rmq_batch_entry_t *e, uint8_t *out);

#endif
