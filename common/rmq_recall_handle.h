/* rmq_recall_handle.h: RocketMQ 5.3's recall handle, both ways: URL-safe
 * base64 of "v1 <topic> <brokerName> <due + 1 ms> <UNIQ_KEY>". The broker
 * answers one for a timer message (bk_recall.h) and checks it on a recall;
 * the name server reads the broker name in it to forward a gRPC
 * RecallMessage. Any thread. */
#ifndef RMQ_RECALL_HANDLE_H
#define RMQ_RECALL_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"
#include "rmq_message.h"

#define RMQ_RECALL_HANDLE_MAX 600     /* base64 of the longest v1 handle, with its NUL */
#define RMQ_RECALL_NAME_MAX 127u      /* a handle's broker name and message id */

/* A decoded v1 handle. */
typedef struct rmq_recall_handle {
    char topic[RMQ_TOPIC_MAX + 1];
    char broker_name[RMQ_RECALL_NAME_MAX + 1];
    int64_t timestamp;               /* wall ms; -1 when the handle's is not a number (as RocketMQ reads it) */
    char msg_id[RMQ_RECALL_NAME_MAX + 1];
} rmq_recall_handle_t;

/* Reads text[0..len) as a recall handle: RMQ_OK with h filled, or
 * RMQ_EINVAL (not base64url of "v1" and four non-empty fields within the
 * limits above; RocketMQ ignores fields past the fifth, so does this). */
rmq_err_t rmq_recall_handle_parse(const char *text, size_t len, rmq_recall_handle_t *h);
/* The handle of h into out (NUL-terminated); its length, or 0 when cap is
 * too small. */
size_t rmq_recall_handle_format(const rmq_recall_handle_t *h, char *out, size_t cap);

#endif
