/* bk_consume.h: the core of a consumer's pull, on neutral requests: the
 * checks (broker readable, names, group, topic, queue), the subscription
 * filter (tags: rmq_subexpr.h; SQL92: rmq_sql92.h, compiled once per
 * expression and kept, evaluated over each record's properties), the commit offset a pull carries, the read from
 * the store (records referenced from the mapped log, not copied), the
 * store's outcome as a neutral pull status (ROCKETMQ-NOTES 7.2), the
 * suggested broker, and long polling: a pull that found nothing is parked
 * in the hold (bk_hold.c) as its neutral request and answered when data
 * arrives or its deadline passes. Loop thread only. */
#ifndef BK_CONSUME_H
#define BK_CONSUME_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "bk_groups.h"
#include "bk_offsets.h"
#include "bk_session.h"
#include "bk_status.h"
#include "bk_topics.h"
#include "rmq_sql92.h"
#include "st_store.h"

typedef struct bk_consume bk_consume_t;

typedef enum bk_pull_status {
    BK_PULL_FOUND = 0,
    BK_PULL_NOT_FOUND,               /* nothing (yet) at the offset */
    BK_PULL_OFFSET_MOVED,            /* the offset is out of range: go to next_begin_offset */
    BK_PULL_RETRY_IMMEDIATELY,       /* nothing matched in what was scanned */
} bk_pull_status_t;

/* A pull as the front-end decoded it. Strings are borrowed for the call
 * (the hold copies what it parks). */
typedef struct bk_pull_req {
    const char *group;
    const char *topic;
    int32_t queue_id;
    int64_t queue_offset;
    int32_t max_msg_nums;            /* <= 0: the broker's limit */
    int64_t max_msg_bytes;           /* <= 0: the broker's limit */
    const char *subscription;        /* the expression to filter by */
    rmq_expr_type_t expr_type;       /* its type: TAG or SQL92 */
    int commit;                      /* commit_offset is to be stored */
    int64_t commit_offset;
    int suspend;                     /* may be held when nothing is there */
    int64_t suspend_timeout_ms;
} bk_pull_req_t;

/* A pull's outcome. r.status != BK_OK: refused (the pull fields are unset). */
typedef struct bk_pull_out {
    bk_result_t r;
    bk_pull_status_t status;
    int64_t next_begin_offset;
    int64_t min_offset;
    int64_t max_offset;
    int32_t msg_count;               /* FOUND */
    int64_t bytes;
    int64_t suggest_broker_id;
    struct evbuffer *body;           /* FOUND: the records (owned by out) */
} bk_pull_out_t;

/* Room for a front's reply address, copied into a held pull. */
#define BK_PULL_TO_MAX 32

/* A front's side of a pull: how it answers and holds its connection. */
typedef struct bk_pull_front {
    /* Answers req on conn at reply address to with out (body owned by out). */
    void (*answer)(void *arg, void *conn, const void *to, const bk_pull_req_t *req, const bk_pull_out_t *out);
    void (*hold)(void *conn);        /* while the pull is held */
    void (*release)(void *conn);
} bk_pull_front_t;

/* One decoded pull as a front hands it over. */
typedef struct bk_pull_call {
    const bk_pull_front_t *front;
    void *front_arg;
    void *conn;
    const void *to;                  /* reply address, to_len <= BK_PULL_TO_MAX */
    size_t to_len;
} bk_pull_call_t;

/* Sees each answered pull or pop of group from topic: the messages handed
 * over (0: none found) and their record bytes; the one place the broker's
 * counters (statistics, stats items, metrics) are fed from. */
typedef void (*bk_pulled_fn)(void *arg, const char *group, const char *topic, int32_t msgs, int64_t bytes);

typedef struct bk_consume_config {
    struct event_base *base;         /* borrowed */
    st_store_t *store;               /* borrowed */
    bk_topics_t *topics;             /* borrowed */
    bk_groups_t *groups;             /* borrowed */
    bk_offsets_t *offsets;           /* borrowed */
    int is_slave;                    /* brokerRole=SLAVE: commit offsets are not stored */
    int64_t permission;              /* brokerPermission: bit 4 = readable */
    int64_t max_transfer_count;      /* maxTransferCountOnMessageInMemory */
    int64_t max_transfer_bytes;      /* maxTransferBytesOnMessageInMemory */
    int long_polling;                /* longPollingEnable */
    int64_t short_polling_ms;        /* shortPollingTimeMills */
    int slave_read_enable;           /* slaveReadEnable */
    int64_t in_memory_max;           /* accessMessageInMemoryMaxRatio of memory, bytes */
    int property_filter;             /* enablePropertyFilter: SQL92 subscriptions are served */
    const char *addr;                /* this broker, for reasons (borrowed) */
    bk_pulled_fn pulled;             /* may be NULL */
    void *pulled_arg;
} bk_consume_config_t;

bk_consume_t *bk_consume_new(const bk_consume_config_t *cfg);
/* Drops every held pull without answering (their connections released). */
void bk_consume_free(bk_consume_t *c);

/* The broker's role changed at runtime (controller mode). */
void bk_consume_set_slave(bk_consume_t *c, int is_slave);

/* Runs a pull from session ss and has call->front answer it: now, or, when
 * it may be held (suspend, a session ss; NULL: never held) and finds
 * nothing, once data arrives or its deadline passes, meanwhile holding the
 * connection and a copy of the reply address. */
void bk_consume_pull(bk_consume_t *c, const bk_pull_req_t *req, bk_session_t *ss, const bk_pull_call_t *call);

/* RocketMQ's check of a consumer's subscription before it starts
 * (CHECK_CLIENT_CONFIG): 1 when a pull filtering by expr of type would be
 * served (TAG always; SQL92 with enablePropertyFilter when it compiles);
 * else 0 with r set as such a pull is refused. */
int bk_consume_check_subscription(bk_consume_t *c, const char *expr, rmq_expr_type_t type, bk_result_t *r);

/* Store arrival: wakes held pulls of topic/queue. */
void bk_consume_arrived(bk_consume_t *c, const char *topic, int32_t queue_id, int64_t max_offset,
                        int64_t tag_code);
/* Drops the held pulls of a closed session. */
void bk_consume_session_closed(bk_consume_t *c, bk_session_t *ss);
size_t bk_consume_held(const bk_consume_t *c);
/* Clean stop: answers every held pull now and holds no more. */
void bk_consume_stop(bk_consume_t *c);

#endif
