/* st_internal.h: the store object shared by the st_*.c modules, and the
 * test hooks. Not for use outside broker/store and its unit tests.
 *
 * Threads and ownership:
 * - loop thread: everything in st_store_t unless noted; it is the only
 *   writer of the commit-log and consume-queue segment lists and of file
 *   contents, and mutates those lists under maps_lock (rare: rolls, new
 *   queues, deletions) so the other threads can take snapshots.
 * - flush thread (st_flush.c): msyncs dirty segments found under maps_lock,
 *   writes the checkpoint, publishes durable/write_error atomics and posts
 *   them to the loop.
 * - housekeeping thread (st_house.c): pre-creates the next commit-log file,
 *   the next file of each active consume queue and the key index's next
 *   file, seals index files, measures the disk, runs retention, unlinks
 *   deleted files. Pre-created files reach the loop by st_link_post; the
 *   loop keeps them as spares (cl.spare, cq->spare, the index's spare) and
 *   takes one at a roll, creating a file itself only when none is ready. */
#ifndef ST_INTERNAL_H
#define ST_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "st_commitlog.h"
#include "st_cq.h"
#include "st_index.h"
#include "st_pool.h"
#include "st_segment.h"
#include "st_store.h"

/* Fault and measurement hooks for tests. NULL members keep the defaults. */
typedef struct st_hooks {
    st_sync_fn sync;                                   /* msync */
    void *sync_arg;
    double (*disk_ratio)(const char *dir, void *arg);  /* statvfs used ratio */
    void *disk_arg;
    /* called at each named point of a truncation ("marker": the marker is
     * durable, nothing cut yet; "cut": the commit log is cut, the queues
     * and the index not yet), e.g. to stop there like a crash */
    void (*truncate_point)(st_store_t *st, const char *point, void *arg);
    void *truncate_arg;
} st_hooks_t;

/* A handle the other threads post through; outlives the store while jobs
 * that name it are queued (st stays NULL once the store is closed). */
typedef struct st_link {
    _Atomic int refs;
    st_store_t *st;                  /* loop thread reads/clears */
    rmq_loop_poster_t *poster;
} st_link_t;

typedef void (*st_job_fn)(st_store_t *st, void *arg);

typedef struct st_waiter {
    int64_t end;
    int64_t deadline_ms;
    st_flush_fn cb;
    void *arg;
    struct st_waiter *next;
} st_waiter_t;

typedef struct st_flush {
    pthread_t thread;
    int running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;                        /* under mu */
    _Atomic int requested;           /* a sync waiter wants a flush now */
    _Atomic int64_t durable;         /* commit log durable up to here */
    _Atomic int post_pending;
    int64_t last_flush_ms;           /* flush thread */
    int64_t last_thorough_ms;
    int64_t last_checkpoint_ms;
    int64_t checkpointed;            /* offset in the last checkpoint written */
    _Atomic int64_t syncs;           /* commit-log sync passes that made bytes durable */
    _Atomic int64_t sync_us;         /* time spent in them */
    /* group commit (st_flush.c gather_waiters): waiters queued so far (loop
     * adds), the count the flush thread waits for (the loop signals cv when
     * it is reached; INT64_MAX when none), and the flush thread's own
     * record of the last sync: waiters queued at its start, how many had
     * queued since the sync before, and its duration */
    _Atomic int64_t waits;
    _Atomic int64_t gather_until;
    int64_t waits_synced, last_group, last_sync_us;
    st_waiter_t *head, *tail, *free_list;   /* loop: ordered by end */
    struct event *timer;
    int64_t timer_deadline_ms;
} st_flush_t;

typedef struct st_house_job {
    st_job_fn fn;
    void *arg;
    struct st_house_job *next;
} st_house_job_t;

typedef struct st_house {
    pthread_t thread;
    int running;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int stop;
    st_house_job_t *head, *tail;
    int64_t interval_ms;
    int spare_pending;               /* loop: a pre-creation is in flight */
    int hours[24];                   /* deleteWhen */
} st_house_t;

struct st_store {
    st_store_config_t cfg;           /* strings below are owned copies */
    char *root_dir, *cl_dir, *cq_dir, *delete_when;
    char *checkpoint_path, *abort_path;
    int lock_fd;
    pthread_mutex_t maps_lock;
    st_pool_t *pool;                 /* transient store pool, or NULL */
    st_commitlog_t cl;
    st_cq_table_t cqs;
    st_index_t *index;               /* key index (st_index.c) */
    _Atomic int64_t dispatched;      /* consume queues built up to here */
    _Atomic int write_error;         /* latched */
    _Atomic int disk_full;           /* above disk_full_ratio */
    _Atomic int64_t disk_ratio_ppm;  /* last measured, parts per million */
    int shutting_down;
    st_arrival_fn arrival;
    void *arrival_arg;
    st_hooks_t hooks;
    st_link_t *link;
    struct event_base *base;
    st_flush_t flush;
    st_house_t house;
    int64_t put_count, put_bytes, put_latency_max_us;
    int64_t recovered_records;       /* records validated by the last open (tests) */
    int64_t read_limit;              /* st_store_get serves records ending at or below it */
};

/* --- test hooks (st_store.c) --- */
void st_store_set_hooks(st_store_t *st, const st_hooks_t *hooks);
/* Flushes everything on the calling thread and releases waiters. Loop
 * thread, only when st_store_start has not been called. */
rmq_err_t st_store_flush_now(st_store_t *st);
/* Runs one disk check and retention round synchronously. Loop thread, only
 * when st_store_start has not been called. */
void st_store_housekeep_now(st_store_t *st);

/* --- cross-thread posting (st_store.c) --- */
/* Runs fn(st, arg) on the loop; fn(NULL, arg) if the store closed first or
 * the post failed (fn must then only release arg; RMQ_ENOMEM returned).
 * Inline when no poster exists. Any thread. */
rmq_err_t st_link_post(st_link_t *link, st_job_fn fn, void *arg);

/* --- dispatch (st_dispatch.c), loop thread --- */
/* Dispatches records [from, to) of the commit log to consume queues; stops
 * at a partial record. Returns the offset reached or a negative error. */
int64_t st_dispatch_range(st_store_t *st, int64_t from, int64_t to, int verify_crc, int notify);
/* Writes one record's consume-queue entry (idempotent for a replayed record). */
rmq_err_t st_dispatch_one(st_store_t *st, const char *topic, size_t topic_len, int32_t queue_id,
                          int64_t queue_offset, int64_t phys, int32_t size, int64_t tag_code,
                          int notify);
/* Tag code of a properties string (hash of TAGS, 0 if none). */
int64_t st_props_tag_code(const char *props, size_t len);

/* --- flush (st_flush.c) --- */
void st_flush_init(st_store_t *st);
rmq_err_t st_flush_start(st_store_t *st);
void st_flush_stop(st_store_t *st);
void st_flush_deinit(st_store_t *st);
/* Flushes commit log and consume queues on the calling thread and writes
 * the checkpoint. Flush thread, or the loop when that thread is stopped. */
rmq_err_t st_flush_all(st_store_t *st);
/* Wakes the flush thread for a sync waiter. Loop thread. */
void st_flush_request(st_store_t *st);
/* Loop thread: completes waiters covered by the durable offset. */
void st_flush_release(st_store_t *st);
/* Loop thread: fails every waiter with err. */
void st_flush_fail_all(st_store_t *st, rmq_err_t err);
/* Loop thread: a write to the commit log's file failed; latches the store
 * read-only (once) and fails every waiter, as a failed sync does. */
void st_flush_write_failed(st_store_t *st);
rmq_err_t st_flush_wait(st_store_t *st, int64_t end, st_flush_fn cb, void *arg);

/* --- housekeeping (st_house.c) --- */
/* Sets up the thread state and parses deleteWhen (RMQ_EINVAL if bad; the
 * state is initialised either way). */
rmq_err_t st_house_init(st_store_t *st, const char *delete_when);
rmq_err_t st_house_start(st_store_t *st);
void st_house_stop(st_store_t *st);
void st_house_deinit(st_store_t *st);
/* Runs fn(st, arg) on the housekeeping thread (inline if it is not
 * running). Loop thread. */
void st_house_submit(st_store_t *st, st_job_fn fn, void *arg);
/* Asks for the commit-log file after the active one. Loop thread. */
void st_house_want_spare(st_store_t *st);
/* Asks for cq's next file when st_cq_wants_spare says so (cheap to call
 * after every write). Loop thread; no-op when the thread is not running. */
void st_house_want_cq_spare(st_store_t *st, st_cq_t *cq);
/* Unlinks and unrefs segments (array owned by the job). Loop thread. */
void st_house_unlink_later(st_store_t *st, st_segment_t **segs, size_t n);
/* Measures the disk and updates disk_full. Housekeeping thread. */
double st_house_disk_check(st_store_t *st);

/* --- retention (st_retention.c) --- */
/* Decides how far the commit log may be deleted now (file age, deleteWhen,
 * disk ratio), unlinks those files and posts the new minimum to the loop.
 * Housekeeping thread. */
void st_retention_run(st_store_t *st, double disk_ratio, int64_t now_ms);
/* Loop thread: drops commit-log segments below new_min and the consume
 * queue files that only point below it; corrects min offsets. */
void st_retention_apply(st_store_t *st, int64_t new_min);

/* --- recovery (st_recovery.c), loop thread at open --- */
/* Validates records (magic, lengths, CRC32C, self offset) from start, a
 * record boundary, up to limit (INT64_MAX: the end of the files); returns
 * the end of the last whole, valid one (an end-of-file blank counts once
 * its file's end is below limit), counts them into *records and sets
 * *clean_stop unless the scan ended at a bad or torn record. Loop thread. */
int64_t st_recovery_scan(st_store_t *st, int64_t start, int64_t limit, int *clean_stop, int64_t *records);
/* Loads the files and makes the store consistent; a truncation marker
 * (st_truncate.c) caps the log end at its offset and is removed at the end. */
rmq_err_t st_recovery_run(st_store_t *st, int crashed, char *err, size_t errlen);

/* --- truncation (st_truncate.c), loop thread --- */
/* The marker's offset, or -1 when there is none. RMQ_ECORRUPT if it cannot
 * be parsed, the read's error otherwise. */
rmq_err_t st_truncate_marker_read(st_store_t *st, int64_t *offset);
/* Removes the marker durably. */
rmq_err_t st_truncate_marker_clear(st_store_t *st);
/* Runs the truncate_point hook, if any, at the named point. */
void st_truncate_point(st_store_t *st, const char *point);

/* --- reload (st_store.c), loop thread --- */
/* Drops the in-memory commit log, consume queues and key index and runs
 * recovery over the files again, as after a crash. The store's threads
 * must be stopped. */
rmq_err_t st_store_reload(st_store_t *st, char *err, size_t errlen);
/* Starts the flush and housekeeping threads again (after st_store_start)
 * and asks for the spare files. */
rmq_err_t st_store_resume(st_store_t *st);

#endif
