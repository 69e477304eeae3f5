/* bk_topics.h: the broker's topic configuration table (name -> queues and
 * permissions), persisted as a packed TopicConfigTable in config/topics.pb,
 * with a data version that name servers use to order registrations. Once
 * started, writes of the table are coalesced (one in flight; changes made
 * meanwhile go into the next write, which holds the latest table), and a
 * caller can wait until every change so far is on disk before it
 * acknowledges one. This header is protocol-neutral (the core uses it); the
 * protobuf views of the table are in bk_topics_pb.h. Loop thread only. */
#ifndef BK_TOPICS_H
#define BK_TOPICS_H

#include <stdint.h>

#include <event2/event.h>

#include "bk_persist.h"
#include "rmq_err.h"
#include "rmq_message.h"
#include "rmq_topic_attr.h"

#define BK_DEFAULT_TOPIC RMQ_TOPIC_AUTO_CREATE

/* Permission bits of topics and of the broker (RocketMQ's PermName, the
 * wire's PERM_* values). */
#define BK_PERM_INHERIT 1
#define BK_PERM_WRITE 2
#define BK_PERM_READ 4

typedef struct bk_topic {
    char name[128];
    int32_t read_queues;
    int32_t write_queues;
    int32_t perm;          /* BK_PERM_* bits */
    int order;
    int32_t sys_flag;
    char attributes[RMQ_TOPIC_ATTRS_MAX]; /* RocketMQ 5's attributes, the kept text (rmq_topic_attr.h) */
} bk_topic_t;

typedef struct bk_topics bk_topics_t;
/* One topic (name) was created, replaced or deleted. */
typedef void (*bk_topics_changed_fn)(void *arg, const char *name);
/* Every change made before the wait began is durable (rc RMQ_OK), or its
 * write failed (RMQ_EIO...), or the table is being freed (RMQ_ESHUTDOWN:
 * answer no one, only release what arg holds). Loop thread. */
typedef void (*bk_topics_durable_fn)(void *arg, rmq_err_t rc);
/* One topic created or replaced (topic set) or deleted (topic NULL). */
typedef void (*bk_topics_item_fn)(void *arg, const char *name, const bk_topic_t *topic);

/* Loads dir/topics.pb (missing: empty table) and adds TBW102 with
 * default_queues queues when auto_create (removes it otherwise). persist is
 * borrowed. NULL with err filled on a corrupt file. */
bk_topics_t *bk_topics_new(const char *dir, bk_persist_t *persist, int auto_create,
                           int32_t default_queues, char *err, size_t errlen);
/* Fails waiters with RMQ_ESHUTDOWN. Free the persist writer first (it joins
 * the thread, so no write completes after this). */
void bk_topics_free(bk_topics_t *t);

/* From now on writes complete on base's loop: one in flight, the rest
 * coalesced, and bk_topics_wait_durable waits for them. Before it (tests,
 * tools) every change queues its own write and waits return at once. */
rmq_err_t bk_topics_start(bk_topics_t *t, struct event_base *base);

/* Calls fn(arg, rc) once every change made so far is on disk (at once when
 * it already is). RMQ_ENOMEM: fn will not be called. */
rmq_err_t bk_topics_wait_durable(bk_topics_t *t, bk_topics_durable_fn fn, void *arg);

/* fn runs after every change, with the topic's name (to re-register with
 * name servers). */
void bk_topics_on_change(bk_topics_t *t, bk_topics_changed_fn fn, void *arg);

/* fn runs after each update or delete of one topic, with that topic (an
 * HA master streams it to its slaves). NULL fn: none. */
void bk_topics_on_item(bk_topics_t *t, bk_topics_item_fn fn, void *arg);

/* The topic, or NULL. The pointer is valid until the next change. */
const bk_topic_t *bk_topics_get(const bk_topics_t *t, const char *name, size_t len);

/* Creates or replaces a topic; bumps the data version, persists, notifies. */
rmq_err_t bk_topics_update(bk_topics_t *t, const bk_topic_t *topic);

/* Creates name from the template default_topic (which must carry PERM_INHERIT)
 * with min(queue_nums, template write queues) queues. NULL if the template is
 * missing or not inheritable. */
const bk_topic_t *bk_topics_auto_create(bk_topics_t *t, const char *name, size_t len,
                                        const char *default_topic, int32_t queue_nums);

/* Removes a topic; RMQ_ENOTFOUND if absent. */
rmq_err_t bk_topics_delete(bk_topics_t *t, const char *name);

/* A number that changes whenever a topic's entry is freed: while it stays
 * the same, an entry pointer bk_topics_get or bk_topics_auto_create gave
 * still names the same topic (a replaced topic keeps its entry). */
uint64_t bk_topics_epoch(const bk_topics_t *t);

size_t bk_topics_count(const bk_topics_t *t);
/* Iteration like bk_map_next; the table must not change meanwhile. */
int bk_topics_next(const bk_topics_t *t, size_t *cursor, const bk_topic_t **topic);

#endif
