/* bk_admin_ops.h: the broker core's administration operations, on neutral
 * requests: topics (create or update with its checks, delete everywhere,
 * per-queue stats; the system topics an operator may not change, RocketMQ's
 * rule and list), subscription groups (create or update, delete) and the
 * broker's runtime info as key/value pairs. The tables (bk_topics.c,
 * bk_groups.c) keep their data; this file owns the rules of the requests.
 * Whole-table listings are the tables' own views (bk_topics_next, ...).
 * Loop thread only. */
#ifndef BK_ADMIN_OPS_H
#define BK_ADMIN_OPS_H

#include <stddef.h>
#include <stdint.h>

#include "bk_clients.h"
#include "bk_groups.h"
#include "bk_offsets.h"
#include "bk_stats.h"
#include "bk_status.h"
#include "bk_topics.h"
#include "st_store.h"

typedef struct bk_admin_ops bk_admin_ops_t;

/* Receives one key/value pair (both borrowed for the call). */
typedef void (*bk_kv_fn)(const char *key, const char *value, void *arg);

typedef struct bk_admin_ops_config {
    st_store_t *store;               /* borrowed */
    bk_topics_t *topics;             /* borrowed */
    bk_groups_t *groups;             /* borrowed */
    bk_offsets_t *offsets;           /* borrowed */
    const bk_clients_t *clients;     /* borrowed: who consumes a topic (NULL: offsets only) */
    const bk_stats_t *stats;         /* borrowed: request counters and rates */
    const char *addr;                /* this broker (borrowed) */
    const char *cluster;             /* brokerClusterName (borrowed): a system topic, and its reply topic */
    const char *broker_name;         /* brokerName (borrowed): a system topic */
    const char *trace_topic;         /* msgTraceTopicName with traceTopicEnable, else NULL (borrowed) */
    int validate_system_topic;       /* validateSystemTopicWhenUpdateTopic: operators may not change them */
    int mixed_message_type;          /* enableMixedMessageType: message.type=MIXED may be set */
    const char *role;                /* brokerRole as its property value (borrowed) */
    int64_t boot_ms;                 /* wall clock at start */
    int64_t send_queue_capacity;     /* sendThreadPoolQueueCapacity */
    /* After a group was created or updated (its retry topic follows); NULL: none. */
    void (*group_updated)(void *arg, const char *group);
    /* Adds the replication keys to runtime info (last); NULL: none. */
    void (*describe)(void *arg, bk_kv_fn add, void *add_arg);
    void *arg;                       /* of group_updated and describe */
} bk_admin_ops_config_t;

/* What only the front-end knows of the broker's load, for runtime info. */
typedef struct bk_runtime_live {
    size_t send_waiting;             /* sends queued or waiting for the disk */
    size_t pull_held;                /* pulls held by long polling */
    size_t conn_count;               /* open client connections */
} bk_runtime_live_t;

/* One queue of a topic's stats. */
typedef struct bk_queue_stat {
    int32_t queue_id;
    int64_t min_offset;
    int64_t max_offset;
    int64_t last_update_timestamp;   /* store time of the newest message (0: none) */
} bk_queue_stat_t;

typedef struct bk_topic_stats {
    const char *topic;               /* the table's name: valid until the table changes */
    bk_queue_stat_t *queues;         /* owned (bk_topic_stats_clear) */
    size_t n;
} bk_topic_stats_t;

/* Owner: the caller (bk_admin_ops_free). cfg is copied. NULL when out of memory. */
bk_admin_ops_t *bk_admin_ops_new(const bk_admin_ops_config_t *cfg);
void bk_admin_ops_free(bk_admin_ops_t *a);

/* The broker's role changed at runtime (controller mode); role is borrowed. */
void bk_admin_ops_set_role(bk_admin_ops_t *a, const char *role);

#define BK_TOPIC_LIST_MAX 100000     /* topics in one create-or-update request */

/* 1 if name is a system topic of this broker (RocketMQ's
 * TopicValidator.isSystemTopic with the topics its TopicConfigManager
 * adds): rmq_topic_in_system_set, the cluster's and the broker's names,
 * the cluster's reply topic and, with traceTopicEnable, msgTraceTopicName. */
int bk_admin_topic_is_system(const bk_admin_ops_t *a, const char *name);

#define BK_SYSTEM_TOPICS_MAX 16      /* rmq_topics_system and this broker's own */

/* Fills names[0..BK_SYSTEM_TOPICS_MAX) with this broker's system topics by
 * name (those of rmq_topics_system, then its own; the rmq_sys_ prefix is
 * no name), borrowed; returns how many: RocketMQ's
 * GET_SYSTEM_TOPIC_LIST_FROM_BROKER. */
size_t bk_admin_system_topics(const bk_admin_ops_t *a, const char *names[BK_SYSTEM_TOPICS_MAX]);

/* Creates or replaces topics[0..n) (copied) for request cmd after checking
 * every one (name, 1..1024 queues, perm 0..7, not a system topic while
 * validateSystemTopicWhenUpdateTopic, and the attribute modification
 * attr_mods[i] (attr_mods or an entry NULL: none) against the attributes
 * the topic has, RocketMQ's rules: rmq_topic_attr.h, message.type MIXED
 * only with enableMixedMessageType; each topic's attributes field is set
 * to the result): one bad entry refuses them all, naming it:
 * BK_NAME_ILLEGAL, BK_INVALID_PARAMETER (a system topic, MIXED),
 * BK_BAD_REQUEST, BK_SYSTEM_ERROR (out of memory). On BK_OK durable(arg,
 * rc) runs once the table holding the change is on disk (or failed to be
 * written): answer the client then. */
bk_status_t bk_admin_topics_update(bk_admin_ops_t *a, const char *cmd, bk_topic_t *topics,
                                   const char *const *attr_mods, size_t n, bk_topics_durable_fn durable, void *arg,
                                   bk_result_t *r);

/* Deletes topic name everywhere (bk_admin_topic_purge); BK_OK whether it
 * existed or not (*existed tells), BK_NAME_ILLEGAL for a bad name,
 * BK_INVALID_PARAMETER for a system topic while
 * validateSystemTopicWhenUpdateTopic, BK_SYSTEM_ERROR (out of memory). On
 * BK_OK with *existed, durable(arg, rc) runs once the deletion is on disk
 * (or failed to be written): answer the client then; otherwise it does not
 * run. */
bk_status_t bk_admin_topic_delete(bk_admin_ops_t *a, const char *name, bk_topics_durable_fn durable, void *arg,
                                  int *existed, bk_result_t *r);

/* The one rule of a topic's deletion, for the admin request and for a
 * slave applying its master's: its config, its consume queues and every
 * group's offsets on it, so a topic created again under the name starts
 * empty. RMQ_ENOTFOUND if there was no config (the rest is removed all the
 * same). */
rmq_err_t bk_admin_topic_purge(bk_topics_t *topics, st_store_t *store, bk_offsets_t *offsets, const char *name);

/* Fills *out with min/max offset and last store time per queue of topic
 * name (as many queues as the larger of its read and write queues):
 * BK_TOPIC_NOT_EXIST, or BK_SYSTEM_ERROR when out of memory. */
bk_status_t bk_admin_topic_stats(bk_admin_ops_t *a, const char *name, bk_topic_stats_t *out, bk_result_t *r);
void bk_topic_stats_clear(bk_topic_stats_t *out);

/* Calls fn once for each group consuming topic: a connected client of it
 * subscribes to the topic, or it has an offset stored on the topic
 * (RocketMQ's QUERY_TOPIC_CONSUME_BY_WHO), in no particular order. BK_OK,
 * or BK_SYSTEM_ERROR when out of memory (fn not called). */
bk_status_t bk_admin_topic_groups(bk_admin_ops_t *a, const char *topic, bk_clients_name_fn fn, void *arg,
                                  bk_result_t *r);

/* Creates or replaces group grp (copied): BK_NAME_ILLEGAL, BK_SYSTEM_ERROR. */
bk_status_t bk_admin_group_update(bk_admin_ops_t *a, const bk_group_t *grp, bk_result_t *r);
/* Deletes group name: BK_GROUP_NOT_EXIST if absent. */
bk_status_t bk_admin_group_delete(bk_admin_ops_t *a, const char *name, bk_result_t *r);

/* Calls add for each runtime key (RocketMQ's brokerStatus names), in a
 * fixed order, the replication keys last. */
void bk_admin_runtime_info(bk_admin_ops_t *a, const bk_runtime_live_t *live, bk_kv_fn add, void *arg);

#endif
