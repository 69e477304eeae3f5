/* rmq_autobatch.h: the producer's auto-batching of async single-message
 * sends (rmq_producer_opts_t.auto_batch_max_msgs). Messages bound for one
 * queue (topic, broker, queue id) wait in that queue's group; a group is
 * handed to the producer's send function when it is full (messages or
 * bytes), at the end of the loop pass in which no batch to its queue is in
 * flight (so an idle producer adds no latency; like Nagle, while one batch
 * is in flight the next one accumulates), or after linger_ms at the latest.
 * The module knows nothing of send jobs: it moves intrusive items. Every
 * function runs on the producer's loop thread. */
#ifndef RMQ_AUTOBATCH_H
#define RMQ_AUTOBATCH_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "rmq_err.h"

typedef struct rmq_autobatch rmq_autobatch_t;

/* One message waiting in a group, embedded in its owner's job. */
typedef struct rmq_ab_item {
    struct rmq_ab_item *next;
    size_t bytes;                   /* its batch-entry size */
} rmq_ab_item_t;

/* The queue a group goes to. The strings are the caller's. */
typedef struct rmq_ab_key {
    const char *topic;
    const char *broker_name;
    int32_t queue_id;
} rmq_ab_key_t;

/* Sends a closed group: n items (oldest first, linked by next, bytes in
 * all) now belong to the function. key is valid during the call only. */
typedef void (*rmq_autobatch_send_fn)(const rmq_ab_key_t *key, rmq_ab_item_t *items, int n,
                                      size_t bytes, void *arg);

/* An empty accumulator on base; groups go out through send(arg). linger_ms
 * > 0 bounds how long a message waits. NULL on ENOMEM. Owner: caller
 * (rmq_autobatch_free, on base's thread, while base lives). */
rmq_autobatch_t *rmq_autobatch_new(struct event_base *base, int max_msgs, size_t max_bytes,
                                   int linger_ms, rmq_autobatch_send_fn send, void *arg);
/* Hands every waiting group to send, then frees. NULL is fine. */
void rmq_autobatch_free(rmq_autobatch_t *ab);

/* Adds item to key's group (the item is the accumulator's until send gets
 * it); sends the group at once when item fills it. RMQ_ENOMEM: not added. */
rmq_err_t rmq_autobatch_add(rmq_autobatch_t *ab, const rmq_ab_key_t *key, rmq_ab_item_t *item);

/* A batch request to key's queue was sent / was answered (or failed): a
 * queue's group waits while any is in flight. Each _sent is matched by one
 * _done. */
void rmq_autobatch_sent(rmq_autobatch_t *ab, const rmq_ab_key_t *key);
void rmq_autobatch_done(rmq_autobatch_t *ab, const rmq_ab_key_t *key);

#endif
