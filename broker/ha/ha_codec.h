/* ha_codec.h: the HA wire format as pure functions over byte buffers (no
 * sockets, no store), shared by master and slave and fuzzed directly.
 *
 *   handshake / response:  u32 len | protobuf (HaHandshake, HaHandshakeResponse);
 *                          in controller mode an epoch query and its answer first
 *   master -> slave:       u64 offset | u32 length | bytes   (length 0: heartbeat)
 *                          u64 offset | u32 1ttttttt llll... | body  (typed record:
 *                          top bit set, 7-bit type, 24-bit length; see ha.proto:
 *                          HaMeta changes, the master's confirm offset)
 *   slave -> master:       u64 acked offset
 *
 * All integers big-endian; offsets are never negative. */
#ifndef HA_CODEC_H
#define HA_CODEC_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "ha.pb-c.h"
#include "rmq_err.h"
#include "st_epoch.h"

#define HA_CHUNK_HDR 12u
#define HA_ACK_LEN 8u
#define HA_FRAME_HDR 4u
#define HA_CHUNK_MAX (16u * 1024 * 1024)   /* largest chunk body a slave accepts */
#define HA_HANDSHAKE_MAX (64u * 1024)      /* largest handshake frame body */
#define HA_RECORD_MAX (64u * 1024)         /* largest typed record body */
#define HA_EPOCHS_MAX 2048u                /* epochs in an answer (fits HA_HANDSHAKE_MAX) */

/* What a chunk carries: commit-log bytes, or a typed record (HA_REC_META and
 * any type a newer master may define, which this side must refuse). */
#define HA_REC_LOG 0u
#define HA_REC_META 1u                     /* body: packed HaMeta */
#define HA_REC_CONFIRM 2u                  /* body: u64 confirm offset, encoded as an ack */

typedef struct ha_chunk {
    int64_t offset;                  /* commit-log offset of the first body byte */
    uint32_t type;                   /* HA_REC_LOG, else the typed record's type */
    uint32_t len;                    /* body length; 0 for a heartbeat */
    size_t frame_len;                /* HA_CHUNK_HDR + len */
} ha_chunk_t;

void ha_chunk_hdr_encode(uint8_t out[HA_CHUNK_HDR], int64_t offset, uint32_t len);

/* Header of a typed record of type (1..127) and len (<= HA_RECORD_MAX) body
 * bytes belonging at log offset. */
void ha_record_hdr_encode(uint8_t out[HA_CHUNK_HDR], int64_t offset, uint32_t type, uint32_t len);

/* Parses the chunk header at data[0..len). RMQ_OK: *c filled (the body may
 * not be buffered yet: compare frame_len with what is); c->type may be a
 * type the caller does not know. RMQ_EAGAIN: fewer than HA_CHUNK_HDR bytes.
 * RMQ_EPROTO: negative offset, a log body over max_body or past INT64_MAX,
 * a typed record of type 0 or over HA_RECORD_MAX, a confirm record whose
 * body is not HA_ACK_LEN bytes. Never reads outside
 * data[0..len). */
rmq_err_t ha_chunk_parse(const uint8_t *data, size_t len, uint32_t max_body, ha_chunk_t *c);

void ha_ack_encode(uint8_t out[HA_ACK_LEN], int64_t offset);

/* Parses one ack. RMQ_EAGAIN if len < HA_ACK_LEN, RMQ_EPROTO if negative. */
rmq_err_t ha_ack_parse(const uint8_t *data, size_t len, int64_t *offset);

/* Parses the length prefix of a handshake frame. RMQ_OK: *body_len set.
 * RMQ_EAGAIN: fewer than HA_FRAME_HDR bytes. RMQ_EPROTO: length 0 or over
 * HA_HANDSHAKE_MAX (checked before anything is allocated). */
rmq_err_t ha_frame_parse(const uint8_t *data, size_t len, uint32_t *body_len);

/* Unpacks and validates a handshake body (names present and short, offsets
 * and tail range consistent). On RMQ_OK the caller owns *out
 * (rmq__ha_handshake__free_unpacked). RMQ_EPROTO otherwise, *out NULL. */
rmq_err_t ha_handshake_unpack(const uint8_t *body, size_t len, Rmq__HaHandshake **out);

/* Unpacks and validates a response body (an epoch answer's list: at most
 * HA_EPOCHS_MAX entries ordered as st_epoch_follows says, none starting
 * past master_max_offset); ownership as above. */
rmq_err_t ha_response_unpack(const uint8_t *body, size_t len, Rmq__HaHandshakeResponse **out);

/* Unpacks and validates an HA_REC_META body: exactly one change this build
 * knows, with a name of 1..127 bytes. On RMQ_OK the caller owns *out
 * (rmq__ha_meta__free_unpacked); RMQ_EPROTO otherwise, *out NULL. */
rmq_err_t ha_meta_unpack(const uint8_t *body, size_t len, Rmq__HaMeta **out);

/* Appends `u32 len | packed msg` to out. RMQ_ENOMEM on failure. */
rmq_err_t ha_frame_add(struct evbuffer *out, const ProtobufCMessage *msg);

#endif
