/* bk_schedule.h: delayed messages (RocketMQ's ScheduleMessageService, plus
 * arbitrary delivery times). A message sent with property DELAY=L (level
 * 1..N of messageDelayLevel) or __STARTDELIVERTIME=<absolute wall ms> is
 * stored in SCHEDULE_TOPIC_XXXX with REAL_TOPIC / REAL_QID naming its
 * destination, and the master re-stores it there when due.
 *
 * Queues of SCHEDULE_TOPIC_XXXX: queue L-1 holds level L (every entry has
 * the same delay, so append order is due order: one cursor and one timer
 * per level); queue N (the timer queue) holds arbitrary delivery times in
 * append order, with a min-heap of (due, queue offset) of its pending
 * entries in memory. Deliveries from the timer queue happen in (due,
 * offset) order, so its progress is one cursor: everything <= (due, offset)
 * was delivered. A new entry's due is clamped to at least now and the
 * cursor, so it always sorts after the cursor. On start the heap is rebuilt
 * by reading the timer queue from the persisted low-water offset (the
 * smallest offset that may be pending), skipping entries <= the cursor.
 *
 * Progress (per-level offsets + the timer cursor and low-water offset, as
 * a neutral bk_schedule_progress_t) is written to its file through
 * bk_persist shortly after every change and at stop, in the format of the
 * front-end's codec (the rmq front: config/delayOffset.pb, front/rmq/
 * fr_schedule.c), and served to slaves (GET_ALL_DELAY_OFFSET), which keep
 * the larger values. A level's (and the timer queue's) persisted cursor
 * passes a delivery only once its copy is durable (the append path's
 * answer), so a power loss never leaves the cursor past a message that is in
 * neither place. Delivery is at-least-once: a crash between a delivery and
 * the next progress write repeats that short window.
 *
 * A recall (bk_recall.h) is a delete marker in the timer queue, due just
 * after its message, with TIMER_DEL_UNIQKEY=<topic>+<UNIQ_KEY>: reading
 * it (on arrival, or when the heap is rebuilt from the low-water offset,
 * which is at most its message's) keeps its key in memory; a due entry of
 * that topic and UNIQ_KEY is skipped, as is the marker itself, which drops
 * the key. A recall thus holds across a restart without state of its own.
 *
 * Timers only (event-loop timers armed for the earliest due entry); the
 * store's arrival callback wakes an idle level. Deliveries go through the
 * one append path, their destination checked by bk_produce_dest_check.
 * Loop thread only. */
#ifndef BK_SCHEDULE_H
#define BK_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "bk_append.h"
#include "bk_persist.h"
#include "bk_produce.h"
#include "bk_stats.h"
#include "bk_topics.h"
#include "rmq_message.h"
#include "st_store.h"

#define BK_SCHEDULE_TOPIC RMQ_TOPIC_SCHEDULE
#define BK_SCHEDULE_LEVELS_MAX 64

typedef struct bk_schedule bk_schedule_t;

/* The scheduler's progress, as persisted and served to slaves. */
typedef struct bk_schedule_progress {
    int n_levels;                    /* entries of offsets */
    int64_t offsets[BK_SCHEDULE_LEVELS_MAX];  /* offsets[L - 1]: level L's next queue offset */
    int64_t timer_due, timer_offset; /* timer queue: (due, offset) <= it were delivered */
    int64_t timer_low;               /* smallest timer-queue offset that may be pending */
    char delay_levels[1025];         /* messageDelayLevel it was written with ("" unknown) */
} bk_schedule_progress_t;

typedef struct bk_schedule_config {
    struct event_base *base;         /* borrowed */
    st_store_t *store;               /* borrowed */
    bk_append_t *append;             /* borrowed */
    bk_topics_t *topics;             /* borrowed */
    const bk_produce_t *produce;     /* destination checks (borrowed) */
    bk_persist_t *persist;           /* the progress writes (borrowed; must outlive the scheduler) */
    bk_stats_t *stats;               /* a delivery counts as a put (borrowed) */
    const char *delay_levels;        /* messageDelayLevel (borrowed for bk_schedule_new) */
    int64_t horizon_ms;              /* fileReservedTime: the latest delivery time taken */
    int is_slave;                    /* brokerRole=SLAVE: never delivers */
    const char *path;                /* the progress file (copied) */
    /* The progress file's codec: encode returns malloc'd bytes (NULL when
     * out of memory); decode fills p, or fails with RMQ_ECORRUPT. */
    uint8_t *(*encode)(const bk_schedule_progress_t *p, size_t *len);
    rmq_err_t (*decode)(const uint8_t *data, size_t len, bk_schedule_progress_t *p);
} bk_schedule_config_t;

/* Parses levels ("1s 5s ... 2h": numbers with unit s, m, h or d; 1 to
 * BK_SCHEDULE_LEVELS_MAX of them) into delays_ms; returns how many, or -1
 * with err naming the bad token. */
int bk_schedule_parse_levels(const char *levels, int64_t *delays_ms, char *err, size_t errlen);

/* Parses cfg->delay_levels and loads cfg->path. NULL with err filled
 * ("messageDelayLevel=...: ..." or the file and why). The store, topics and
 * persist of cfg must be open. */
bk_schedule_t *bk_schedule_new(const bk_schedule_config_t *cfg, char *err, size_t errlen);
/* Writes the progress (through cfg->persist, which must still exist) and frees. */
void bk_schedule_free(bk_schedule_t *s);
/* Master only (no-op on a slave): ensures SCHEDULE_TOPIC_XXXX has N+1
 * queues, rebuilds the timer heap and arms every level. */
void bk_schedule_start(bk_schedule_t *s);
/* The broker is stopping: no further deliveries (what is in flight ends
 * through the append path). */
void bk_schedule_stop(bk_schedule_t *s);
/* The broker's role changed at runtime (controller mode): a slave stops
 * delivering; a new master then calls bk_schedule_start. */
void bk_schedule_set_slave(bk_schedule_t *s, int is_slave);

/* Number of delay levels N. */
int bk_schedule_levels(const bk_schedule_t *s);
/* The latest delivery time the scheduler takes, ms from now (fileReservedTime). */
int64_t bk_schedule_horizon_ms(const bk_schedule_t *s);

/* Send-path hook, before the store put: if m carries DELAY > 0 or a
 * __STARTDELIVERTIME in the future, rewrites m in place to go to
 * SCHEDULE_TOPIC_XXXX (topic, queue, properties, tag code = due ms, negated
 * for a delete marker, so that its arrival reads it). The
 * new properties live in s until the next call. Leaves other messages
 * alone. RMQ_EINVAL (*why set) for a malformed value or a delivery time
 * beyond the store's retention; RMQ_ENOMEM. */
rmq_err_t bk_schedule_divert(bk_schedule_t *s, st_msg_t *m, const char **why);

/* Store arrival callback part: new entries in queue_id of topic. */
void bk_schedule_arrived(bk_schedule_t *s, const char *topic, int32_t queue_id, int64_t max_offset,
                         int64_t tag_code);

/* Slave side: merges the master's progress (larger wins) and persists. */
void bk_schedule_merge(bk_schedule_t *s, const bk_schedule_progress_t *p);

/* The progress to serve (GET_ALL_DELAY_OFFSET): what is persisted. */
void bk_schedule_progress(const bk_schedule_t *s, bk_schedule_progress_t *p);

/* Entries waiting in the timer heap (tests, runtime info). */
size_t bk_schedule_timer_pending(const bk_schedule_t *s);

#endif
