/* bk_offset_ops.h: the broker core's consumer-offset operations, on neutral
 * requests: a group's committed offset (query, commit), a queue's offsets
 * and times (max, min, first offset stored at or after a time, earliest
 * store time), a group's consume progress (its committed offsets against
 * each queue's max offset, and its pull rate), and an operator's reset of
 * a group's offsets to a time, pushed to its live consumers, a copy of one
 * group's offsets to another, and a group's time span on a topic. The table
 * itself is bk_offsets.c; this file owns the rules of the requests over
 * it. Loop thread only. */
#ifndef BK_OFFSET_OPS_H
#define BK_OFFSET_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "bk_clients.h"
#include "bk_groupstats.h"
#include "bk_offsets.h"
#include "bk_status.h"
#include "bk_topics.h"
#include "st_store.h"

typedef struct bk_offset_ops bk_offset_ops_t;

typedef struct bk_offset_ops_config {
    st_store_t *store;               /* borrowed */
    bk_offsets_t *offsets;           /* borrowed */
    bk_groupstats_t *groupstats;     /* borrowed: consume rates */
    const bk_topics_t *topics;       /* borrowed: a reset's queues */
    const bk_clients_t *clients;     /* borrowed: who a reset is pushed to */
    /* After a commit was stored (an HA master streams it); NULL: none. */
    void (*committed)(void *arg, const char *topic, const char *group, int32_t queue_id);
    void *committed_arg;
} bk_offset_ops_config_t;

/* One group's offset on one queue. Strings borrowed for the call. */
typedef struct bk_offset_key {
    const char *topic;
    const char *group;
    int32_t queue_id;
} bk_offset_key_t;

/* What a queue-offset request asks for. */
typedef enum bk_queue_query {
    BK_QUEUE_MAX_OFFSET,             /* the next offset to be assigned */
    BK_QUEUE_MIN_OFFSET,             /* the first offset still stored */
    BK_QUEUE_OFFSET_BY_TIME,         /* the first offset stored at or after timestamp */
    BK_QUEUE_EARLIEST_TIME,          /* the min offset and its store time */
} bk_queue_query_t;

typedef struct bk_queue_offset_req {
    bk_queue_query_t what;
    const char *topic;
    int32_t queue_id;
    int64_t timestamp;               /* BK_QUEUE_OFFSET_BY_TIME: ms since the epoch */
} bk_queue_offset_req_t;

typedef struct bk_queue_offset_out {
    int64_t offset;
    int64_t timestamp;               /* BK_QUEUE_EARLIEST_TIME: store time (-1: none); else 0 */
} bk_queue_offset_out_t;

/* One queue of a group's consume progress. */
typedef struct bk_queue_progress {
    const char *topic;               /* borrowed from the offsets table: valid until it changes */
    int32_t queue_id;
    int64_t broker_offset;           /* the queue's max offset */
    int64_t consumer_offset;         /* the group's committed offset */
    int64_t last_timestamp;          /* store time of the last consumed message (0: none) */
} bk_queue_progress_t;

typedef struct bk_consume_progress {
    bk_queue_progress_t *queues;     /* owned (bk_consume_progress_clear) */
    size_t n;
    double consume_tps;              /* messages per second pulled over the last minute */
} bk_consume_progress_t;

/* Owner: the caller (bk_offset_ops_free). cfg is copied. NULL when out of memory. */
bk_offset_ops_t *bk_offset_ops_new(const bk_offset_ops_config_t *cfg);
void bk_offset_ops_free(bk_offset_ops_t *o);

/* The offset key->group committed on key->topic/queue: BK_OK with *offset,
 * or BK_NOT_FOUND (none stored, or an unknown group or topic). */
bk_status_t bk_offset_query(bk_offset_ops_t *o, const bk_offset_key_t *key, int64_t *offset, bk_result_t *r);

/* Stores offset as key->group's next offset to consume on the queue:
 * BK_NAME_ILLEGAL for a bad topic or group name, BK_BAD_REQUEST for a queue
 * id or offset out of range, BK_SYSTEM_ERROR when out of memory. */
bk_status_t bk_offset_commit(bk_offset_ops_t *o, const bk_offset_key_t *key, int64_t offset, bk_result_t *r);

/* Answers a queue-offset request (an unknown topic or queue has offsets 0). */
void bk_offset_queue(bk_offset_ops_t *o, const bk_queue_offset_req_t *req, bk_queue_offset_out_t *out);

/* Fills *out with group's progress on topic ("": every topic); BK_OK or
 * BK_SYSTEM_ERROR when out of memory. Free with bk_consume_progress_clear. */
bk_status_t bk_offset_progress(bk_offset_ops_t *o, const char *group, const char *topic,
                               bk_consume_progress_t *out, bk_result_t *r);
void bk_consume_progress_clear(bk_consume_progress_t *out);

/* Resets group's offsets on topic to timestamp (ms; -1: the end of each
 * queue) as RocketMQ's resetOffsetByTime does: each queue's offset becomes
 * the first one stored at or after the time, where that moves it back, or
 * anyway if force (a queue with no committed offset takes it too); commits
 * the changes and pushes the table to the group's live consumers. Fills *out
 * (free with bk_offset_reset_clear) and *told (clients pushed to): BK_OK,
 * BK_TOPIC_NOT_EXIST, or the commit's failure. */
bk_status_t bk_offset_reset(bk_offset_ops_t *o, const char *topic, const char *group, int64_t timestamp, int force,
                            bk_offset_reset_t *out, size_t *told, bk_result_t *r);

/* Copies src's committed offsets on topic ("": every topic src has
 * offsets on) to dest, as RocketMQ's cloneGroupOffset does: a topic this
 * broker does not have is skipped, and so, unless offline, is a topic src
 * does not subscribe to while it has live clients. *copied: queues
 * copied. BK_OK; BK_NAME_ILLEGAL (dest); a commit's failure. */
bk_status_t bk_offset_clone(bk_offset_ops_t *o, const char *src, const char *dest, const char *topic, int offline,
                            size_t *copied, bk_result_t *r);

/* One queue's time span for a group (RocketMQ's QueueTimeSpan), times in
 * ms since the epoch (-1: no message there). */
typedef struct bk_time_span {
    int32_t queue_id;
    int64_t min_time;                /* store time of the queue's first message */
    int64_t max_time;                /* of its last */
    int64_t consume_time;            /* of the group's last consumed (none: min_time) */
    int64_t delay_ms;                /* now minus the store time of the next to consume (0: caught up) */
} bk_time_span_t;

/* group's time span on each write queue of topic into a fresh array *out
 * (caller frees) of *n. BK_OK, BK_TOPIC_NOT_EXIST, BK_SYSTEM_ERROR. */
bk_status_t bk_offset_time_span(bk_offset_ops_t *o, const char *topic, const char *group, int64_t now_ms,
                                bk_time_span_t **out, size_t *n, bk_result_t *r);
#endif
