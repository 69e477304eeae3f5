/* bk_counts.h: the events the core counts, told to whoever keeps the
 * counters (the broker's statistics, stats items and metrics): messages
 * stored by a send, delivered by a pull or a pop, sent back by a consumer,
 * moved to a group's dead-letter queue, and transactions committed or
 * rolled back. The core modules call these where the event
 * happens, so every front (native, remoting, gRPC) is counted alike.
 * Any field may be NULL: that event is not counted. Loop thread. */
#ifndef BK_COUNTS_H
#define BK_COUNTS_H

#include <stddef.h>
#include <stdint.h>

#include "bk_topics.h"
#include "rmq_message.h"

typedef struct bk_counts {
    /* A send's count messages of type, body_len bytes, were stored on
     * topic (the topic table's entry: the same pointer for every send to
     * the topic until the table changes). */
    void (*stored)(void *arg, const bk_topic_t *topic, rmq_msg_type_t type, int32_t count, size_t body_len);
    /* An answered pull or pop of group returned msgs messages of bytes
     * from topic (msgs 0: it found none). */
    void (*delivered)(void *arg, const char *group, const char *topic, int64_t msgs, int64_t bytes);
    /* A message of topic that group failed went to %DLQ%<group>. */
    void (*dead_lettered)(void *arg, const char *group, const char *topic);
    /* A consumer of group sent a message back to topic (its retry or DLQ
     * topic), and the log took it in hand. */
    void (*sent_back)(void *arg, const char *group, const char *topic);
    /* A half message for topic was committed (commit 1) or rolled back. */
    void (*tx_ended)(void *arg, const char *topic, int commit);
    void *arg;
} bk_counts_t;

static inline void bk_counts_stored(const bk_counts_t *c, const bk_topic_t *topic, rmq_msg_type_t type,
                                    int32_t count, size_t body_len)
{
    if (c && c->stored)
        c->stored(c->arg, topic, type, count, body_len);
}

static inline void bk_counts_delivered(const bk_counts_t *c, const char *group, const char *topic, int64_t msgs,
                                       int64_t bytes)
{
    if (c && c->delivered)
        c->delivered(c->arg, group, topic, msgs, bytes);
}

static inline void bk_counts_dead_lettered(const bk_counts_t *c, const char *group, const char *topic)
{
    if (c && c->dead_lettered)
        c->dead_lettered(c->arg, group, topic);
}

static inline void bk_counts_sent_back(const bk_counts_t *c, const char *group, const char *topic)
{
    if (c && c->sent_back)
        c->sent_back(c->arg, group, topic);
}

static inline void bk_counts_tx_ended(const bk_counts_t *c, const char *topic, int commit)
{
    if (c && c->tx_ended)
        c->tx_ended(c->arg, topic, commit);
}

#endif
