/* gr_settings.h: the server's Settings reply on a Telemetry stream
 * (GRPC-NOTES.md §2.5): the client's settings echoed with the server's
 * fields merged in (backoff policy, body size, batch size, polling time,
 * FIFO), which every 5.x client needs before it finishes starting. A pure
 * function of the broker's config, the group's config and the client's
 * settings; any thread. */
#ifndef GR_SETTINGS_H
#define GR_SETTINGS_H

#include <stdint.h>

#include "apache/rocketmq/v2/service.pb-c.h"
#include "gr_status.h"

/* The broker's side of every reply. */
typedef struct gr_settings_config {
    int32_t max_body_size;           /* maxMessageSize */
    int32_t receive_batch_size;      /* a push consumer's batch (the proxy: 32) */
    int64_t long_polling_max_ms;     /* the longest poll (the proxy: 20 s) */
    int32_t producer_max_attempts;   /* when the producer's settings name none (3) */
} gr_settings_config_t;

/* A consumer group's config, as bk_groups holds it. */
typedef struct gr_group_policy {
    int32_t retry_max_times;         /* retryMaxTimes: max_attempts is one more */
    int consume_orderly;             /* consumeMessageOrderly: Settings.fifo */
} gr_group_policy_t;

/* The reply and everything it points to; it also borrows from the
 * client's settings (topics, group, subscriptions, user agent, access
 * point), so pack it while those live. */
typedef struct gr_settings_reply {
    Apache__Rocketmq__V2__TelemetryCommand cmd;
    Apache__Rocketmq__V2__Status status;
    Apache__Rocketmq__V2__Settings settings;
    Apache__Rocketmq__V2__RetryPolicy backoff;
    Apache__Rocketmq__V2__ExponentialBackoff exponential;
    Google__Protobuf__Duration initial, max, long_polling;
    Apache__Rocketmq__V2__Publishing publishing;
    Apache__Rocketmq__V2__Subscription subscription;
    Apache__Rocketmq__V2__Metric metric;
} gr_settings_reply_t;

/* Fills *out with TelemetryCommand{status OK, settings} answering client:
 * a producer gets publishing{its topics, max_body_size, validate_message_type
 * false} and exponential backoff 10 ms..1 s; a push or simple consumer gets
 * subscription{its group and subscriptions, fifo, receive_batch_size,
 * long_polling_timeout (its own, at most the max)} and exponential backoff
 * 1 s..2 h with max_attempts = group's retry_max_times + 1 (group NULL:
 * RocketMQ's defaults, 16 retries, not orderly). 1, or 0 with *st:
 * UNRECOGNIZED_CLIENT_TYPE (no client type), UNSUPPORTED (pull and lite
 * consumers), BAD_REQUEST (no publishing or subscription for the type). */
int gr_settings_reply(const Apache__Rocketmq__V2__Settings *client, const gr_settings_config_t *cfg,
                      const gr_group_policy_t *group, gr_settings_reply_t *out, gr_status_t *st);

#endif
