/* bk_sendback.h: retry and dead letters, on neutral requests. A consumer
 * that failed to process a message sends it back by its commit-log offset;
 * the core reads the record there and re-stores it on the group's retry
 * topic %RETRY%<group> through the delay scheduler (level = the request's,
 * or 3 + reconsumeTimes, at most the last level), with reconsumeTimes + 1,
 * RETRY_TOPIC (the original topic) and ORIGIN_MESSAGE_ID; once
 * reconsumeTimes reached the group's (or the request's) maximum, or the
 * request's level is negative, it goes to %DLQ%<group> instead, at once.
 * A pop consumer's expired message (req->pop_topic) goes to its pop retry
 * topic %RETRY%<group>_<topic> at once instead. Every such topic is created
 * on demand on a master (read-write; the retry topic
 * with the group's retryQueueNums queues, the DLQ with one).
 *
 * An offset names any record of the log, so the caller must be allowed to
 * read the record's topic (bk_reader_t), unless the record is already on the
 * group's own retry topic. Every copy goes through the one append path.
 * Loop thread only. */
#ifndef BK_SENDBACK_H
#define BK_SENDBACK_H

#include <stddef.h>
#include <stdint.h>

#include "bk_append.h"
#include "bk_groups.h"
#include "bk_query.h"
#include "bk_schedule.h"
#include "bk_statsitems.h"
#include "bk_topics.h"

typedef struct bk_sendback bk_sendback_t;

typedef struct bk_sendback_config {
    st_store_t *store;               /* borrowed */
    bk_append_t *append;             /* borrowed */
    bk_topics_t *topics;             /* borrowed */
    bk_groups_t *groups;             /* borrowed */
    bk_schedule_t *schedule;         /* a retry copy waits its level there (borrowed) */
    int is_slave;                    /* brokerRole=SLAVE: never creates topics */
    const char *addr;                /* this broker, for reasons (borrowed) */
    bk_statsitems_t *items;          /* SNDBCK_PUT_NUMS (borrowed, may be NULL) */
} bk_sendback_config_t;

/* A send-back as the front-end decoded it. Strings are borrowed. */
typedef struct bk_sendback_req {
    const char *group;
    int64_t offset;                  /* commit-log offset of the failed message */
    int32_t delay_level;             /* 0: 3 + reconsumeTimes; < 0: straight to the DLQ */
    int32_t max_reconsume_times;     /* <= 0: the group's retryMaxTimes */
    const char *origin_topic;        /* "" : the record's topic */
    const char *origin_msg_id;       /* "" : the record's UNIQ_KEY, else its offset id */
    const bk_reader_t *reader;       /* who asks (NULL: anyone) */
    /* Non-NULL: a popped message whose invisible time passed (bk_pop.c):
     * the copy goes at once (no delay level) to the pop retry topic
     * %RETRY%<group>_<pop_topic>, with 1ST_POP_TIME = first_pop_time
     * unless the record has one; the DLQ rule is the same. */
    const char *pop_topic;
    int64_t first_pop_time;
} bk_sendback_req_t;

/* Creates the send-back path over cfg (copied; pointers borrowed). NULL
 * when out of memory. */
bk_sendback_t *bk_sendback_new(const bk_sendback_config_t *cfg);
void bk_sendback_free(bk_sendback_t *sb);

/* The broker's role changed at runtime (controller mode). */
void bk_sendback_set_slave(bk_sendback_t *sb, int is_slave);

/* The group's retry topic, created on a master when missing (a clustering
 * consumer's heartbeat and a group's creation call this, so the consumer can
 * subscribe to it before the first failure). NULL on a slave, for an unknown
 * group or one with retryQueueNums 0, or when the name is too long. */
const bk_topic_t *bk_sendback_retry_topic(bk_sendback_t *sb, const char *group);

/* Sends the message of req back, like bk_append_put: 1 when the outcome is
 * final now (in *out; cb not called), 0 when cb(out, arg) follows. A group
 * with retryQueueNums 0 drops the message: BK_OK, nothing stored, the
 * reason says so. Refusals: BK_NAME_ILLEGAL, BK_GROUP_NOT_EXIST,
 * BK_NO_PERMISSION (the reader may not read the record's topic), the
 * append path's (slave, read-only, stopping...), BK_SYSTEM_ERROR (no record
 * at the offset, as RocketMQ answers). */
int bk_sendback_run(bk_sendback_t *sb, const bk_sendback_req_t *req, bk_append_out_t *out, bk_append_fn cb,
                    void *arg);

#endif
