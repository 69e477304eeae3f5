/* rmq_base64.h: standard base64 (RFC 4648, with padding) decoding, for
 * peers that send bytes as JSON strings (etcd's keys and values, RocketMQ's
 * fastjson byte arrays), and its URL-safe alphabet both ways (RocketMQ's
 * recall handles: Java's Base64.getUrlEncoder). Any thread. */
#ifndef RMQ_BASE64_H
#define RMQ_BASE64_H

#include <stddef.h>

/* Decodes text[0..n) into a NUL-terminated heap copy (*out, owned by the
 * caller; *out_len without the NUL); -1 when it is not base64 of at most
 * max bytes of text (or out of memory). */
int rmq_base64_decode(const char *text, size_t n, size_t max, char **out, size_t *out_len);

/* URL-safe base64 ('-' and '_' for '+' and '/', padded) of data[0..n)
 * into out, NUL-terminated; its length, or 0 when cap is too small. */
size_t rmq_base64url_encode(const void *data, size_t n, char *out, size_t cap);

/* rmq_base64_decode of URL-safe base64, padded or not (as Java's URL
 * decoder takes it). */
int rmq_base64url_decode(const char *text, size_t n, size_t max, char **out, size_t *out_len);

#endif
