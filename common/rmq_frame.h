/* rmq_frame.h: the frame codec.
 *   u32 frame_len (big-endian, excludes itself) | u32 header_len | header | body
 * header is a protobuf-c Rmq__Command; body is raw bytes moved between
 * evbuffers without copying. The frame length is checked before anything is
 * allocated for it. */
#ifndef RMQ_FRAME_H
#define RMQ_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "rmq.pb-c.h"
#include "rmq_err.h"

#define RMQ_FRAME_PREFIX 8u                    /* frame_len + header_len */
#define RMQ_FRAME_MAX_DEFAULT (16u << 20)      /* 16 MiB */
/* Largest request header a server unpacks (the body may be bigger): an
 * unpacked header costs memory and time before any access check. */
#define RMQ_REQUEST_HEADER_MAX (4u << 20)      /* 4 MiB */
#define RMQ_PROTOCOL_VERSION 1

typedef struct rmq_frame {
    Rmq__Command *cmd;      /* unpacked header; owned, freed by rmq_frame_clear only (an
                             * arena, not protobuf-c's free_unpacked) */
    struct evbuffer *body;  /* body bytes; owned, never NULL after a decode */
} rmq_frame_t;

/* Takes one whole frame from the front of in.
 * RMQ_OK: frame filled, its bytes drained from in.
 * RMQ_EAGAIN: not a whole frame yet, nothing drained.
 * RMQ_ETOOBIG: declared length over max_frame (nothing allocated).
 * RMQ_EPROTO: malformed (bad lengths, header fails to unpack).
 * On error *why names the reason (static string). Loop thread of in. */
rmq_err_t rmq_frame_decode(struct evbuffer *in, uint32_t max_frame, rmq_frame_t *frame,
                           const char **why);

/* Same rules over a flat buffer (fuzzing, tests); *used = bytes consumed. */
rmq_err_t rmq_frame_decode_bytes(const uint8_t *data, size_t len, uint32_t max_frame,
                                 rmq_frame_t *frame, size_t *used, const char **why);

/* Checks a frame's 8-byte prefix alone (the lengths against each other and
 * max_frame, 0: the default): RMQ_OK, or RMQ_ETOOBIG / RMQ_EPROTO with *why. */
rmq_err_t rmq_frame_check_prefix(const uint8_t *prefix, uint32_t max_frame, const char **why);

/* Frees cmd and body; safe on a zeroed or already-cleared frame. */
void rmq_frame_clear(rmq_frame_t *frame);

/* Appends a frame with a copy of body (may be NULL/0) to out. */
rmq_err_t rmq_frame_encode(struct evbuffer *out, const Rmq__Command *cmd,
                           const void *body, size_t body_len);

/* Appends a frame and moves all of body's contents (references included,
 * no copy) to out; body is left empty. body may be NULL. */
rmq_err_t rmq_frame_encode_buf(struct evbuffer *out, const Rmq__Command *cmd,
                               struct evbuffer *body);

/* Name of a Status value ("SLAVE_NOT_AVAILABLE"), or "UNKNOWN". */
const char *rmq_status_name(int status);
/* Name of a RequestCode value ("SEND_MESSAGE"), or "UNKNOWN". */
const char *rmq_request_name(int code);

#endif
