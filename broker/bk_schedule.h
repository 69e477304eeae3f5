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
 * Progress (per-level offsets + the timer cursor and low-water offset) is
 * written to config/delayOffset.pb through bk_persist shortly after every
 * change and at stop, and served to slaves (GET_ALL_DELAY_OFFSET), which
 * keep the larger values. Delivery is at-least-once: a crash between a
 * delivery and the next progress write repeats that short window.
 *
 * Timers only (event-loop timers armed for the earliest due entry); the
 * store's arrival callback wakes an idle level. Loop thread only. */
#ifndef BK_SCHEDULE_H
#define BK_SCHEDULE_H

#include <stdint.h>

#include "bk_broker.h"
#include "st_store.h"

#define BK_SCHEDULE_TOPIC RMQ_TOPIC_SCHEDULE
#define BK_SCHEDULE_LEVELS_MAX 64

typedef struct bk_schedule bk_schedule_t;

/* Parses levels ("1s 5s ... 2h": numbers with unit s, m, h or d; 1 to
 * BK_SCHEDULE_LEVELS_MAX of them) into delays_ms; returns how many, or -1
 * with err naming the bad token. */
int bk_schedule_parse_levels(const char *levels, int64_t *delays_ms, char *err, size_t errlen);

/* Parses messageDelayLevel and loads config/delayOffset.pb. NULL with err
 * filled ("messageDelayLevel=...: ..." or the file and why). bk's config,
 * topics, store and persist must be open. */
bk_schedule_t *bk_schedule_new(bk_broker_t *bk, char *err, size_t errlen);
/* Writes the progress (through bk->persist, which must still exist) and frees. */
void bk_schedule_free(bk_schedule_t *s);
/* Master only (no-op on a slave): ensures SCHEDULE_TOPIC_XXXX has N+1
 * queues, rebuilds the timer heap and arms every level. */
void bk_schedule_start(bk_schedule_t *s);

/* Number of delay levels N. */
int bk_schedule_levels(const bk_schedule_t *s);

/* Send-path hook, before the store put: if m carries DELAY > 0 or a
 * __STARTDELIVERTIME in the future, rewrites m in place to go to
 * SCHEDULE_TOPIC_XXXX (topic, queue, properties, tag code = due ms). The
 * new properties live in s until the next call. Leaves other messages
 * alone. RMQ_EINVAL (*why set) for a malformed value or a delivery time
 * beyond the store's retention; RMQ_ENOMEM. */
rmq_err_t bk_schedule_divert(bk_schedule_t *s, st_msg_t *m, const char **why);

/* Store arrival callback part: new entries in queue_id of topic. */
void bk_schedule_arrived(bk_schedule_t *s, const char *topic, int32_t queue_id, int64_t max_offset,
                         int64_t tag_code);

/* Slave side: merges the master's progress (larger wins) and persists. */
void bk_schedule_apply(bk_schedule_t *s, const Rmq__DelayOffsetTable *tab);

/* Entries waiting in the timer heap (tests, runtime info). */
size_t bk_schedule_timer_pending(const bk_schedule_t *s);

#endif
