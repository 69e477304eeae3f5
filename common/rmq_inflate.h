/* rmq_inflate.h: one bounded inflate for compressed bodies from peers (a
 * broker's registration table, a RocketMQ 5 GZIP body, a stored
 * compressed record): the output never grows past the limit, whatever the
 * input claims. Pure function of the bytes; any thread. */
#ifndef RMQ_INFLATE_H
#define RMQ_INFLATE_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"

/* Inflates one whole stream in[0..len) into a new heap buffer *out (the
 * caller frees it) of *outlen <= max bytes; window_bits as zlib's
 * inflateInit2 (15: zlib, 15 + 32: zlib or gzip). RMQ_ECORRUPT with why
 * (not compressed data, truncated, more than max bytes, bytes after the
 * stream); RMQ_ENOMEM. */
rmq_err_t rmq_inflate(const uint8_t *in, size_t len, int window_bits, size_t max, uint8_t **out, size_t *outlen,
                      char *why, size_t whylen);

#endif
