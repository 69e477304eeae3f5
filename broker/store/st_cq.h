/* st_cq.h: consume queues: per topic and queue id, a sequence of mapped
 * files of 20-byte units (i64 commit-log offset | i32 size | i64 tag code,
 * big-endian) under <root>/<topic>/<queueId>/, named by their start byte
 * offset; plus the table of all queues. Entry n is queue offset n. Written
 * by dispatch on the loop thread; list and table changes happen under the
 * store's maps_lock so the flush thread can collect dirty files.
 *
 * Pre-created files: once the active file of a queue is half full, the
 * housekeeping thread creates the queue's next file under its final name
 * (preallocated, synced, linked into place, directory synced: like the
 * commit log, st_house.c) and the loop keeps it as cq->spare, outside the
 * segment list, until st_cq_prepare rolls into it. Only when no spare is
 * ready is a file created on the loop (always so for a queue's first file).
 * An unused spare on disk is an all-zero file after the last one; loading
 * drops it when the file before it is not full (st_cq.c, cq_find_end). */
#ifndef ST_CQ_H
#define ST_CQ_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"
#include "st_segment.h"

#define ST_CQ_UNIT 20
#define ST_CQ_DUMMY_SIZE INT32_MAX   /* filler entry for a lost prefix */

typedef struct st_cq {
    char *topic;
    size_t topic_len;
    int32_t queue_id;
    char *dir;
    st_segment_t **segs;             /* ascending; start = byte offset */
    size_t nseg, cap;
    int64_t min_offset;              /* first entry pointing into the log */
    int64_t max_offset;              /* next queue offset to assign */
    int64_t max_phys_end;            /* end of the last entry's record */
    st_segment_t *spare;             /* pre-created next file (not in segs), or NULL */
    int spare_pending;               /* a pre-creation is in flight */
    int64_t spare_failed_at;         /* next-file start whose pre-creation failed, or -1 */
    struct st_cq *next;              /* hash chain */
} st_cq_t;

typedef struct st_cq_table {
    const char *root;                /* borrowed */
    int64_t per_file;                /* entries per file */
    pthread_mutex_t *lock;           /* the store's maps_lock */
    st_cq_t **buckets;
    size_t nbuckets, count;
    int64_t files_precreated;        /* files taken from a spare (loop; stats) */
    int64_t files_created_sync;      /* files created on the loop (loop; stats) */
} st_cq_table_t;

rmq_err_t st_cq_table_init(st_cq_table_t *tab, const char *root, int64_t per_file,
                           pthread_mutex_t *lock);
void st_cq_table_deinit(st_cq_table_t *tab);

/* Maps every queue file under root and finds each queue's end (the first
 * all-zero unit). After a crash (deep) it also looks one file further back
 * for holes, zeroes stray units past the end and drops later files. */
rmq_err_t st_cq_table_load(st_cq_table_t *tab, int deep);

st_cq_t *st_cq_table_find(const st_cq_table_t *tab, const char *topic, size_t len, int32_t qid);
/* Finds or adds (without files yet) a queue. NULL on ENOMEM. Loop thread. */
st_cq_t *st_cq_table_get(st_cq_table_t *tab, const char *topic, size_t len, int32_t qid);

/* Calls fn for every queue. Loop thread (or holding the lock). */
void st_cq_table_foreach(st_cq_table_t *tab, void (*fn)(st_cq_t *cq, void *arg), void *arg);

/* Adds a reference to every file with unflushed units to *out (caller
 * unrefs and frees). Takes the lock. Flush thread. */
rmq_err_t st_cq_table_collect_dirty(st_cq_table_t *tab, st_segment_t ***out, size_t *n);

/* Removes every queue of topic; returns their files, unused spares
 * included (caller unlinks, unrefs and frees the array). Loop thread. */
size_t st_cq_table_remove_topic(st_cq_table_t *tab, const char *topic, st_segment_t ***out);

/* Makes sure files exist for queue offsets [first, first + n), rolling
 * into cq->spare when it is the file needed; otherwise creates directories
 * and files (blocking: a queue's first file, or no spare ready). Loop. */
rmq_err_t st_cq_prepare(st_cq_table_t *tab, st_cq_t *cq, int64_t first, int64_t n);

/* Writes the unit at queue offset qoff (after st_cq_prepare) and makes
 * max_offset qoff + 1. Loop thread. */
void st_cq_write(st_cq_table_t *tab, st_cq_t *cq, int64_t qoff, int64_t phys, int32_t size,
                 int64_t tag);

/* Start (byte offset) of the file after cq's last one; -1 if it has none. */
int64_t st_cq_next_file(const st_cq_table_t *tab, const st_cq_t *cq);

/* True when cq should ask for its next file now: it has files, no spare
 * ready or in flight, no failed attempt for that file, and the active file
 * is at least half full. Loop thread. */
int st_cq_wants_spare(const st_cq_table_t *tab, const st_cq_t *cq);

/* Loop thread: a pre-created file seg arrived for cq. Returns 1 if kept as
 * cq->spare (cq takes the reference), 0 if its file is (or was) one of cq's
 * files or the same file as the ready spare (caller only unrefs), -1 if it
 * lies past cq's next file (an orphan: caller unlinks and unrefs). */
int st_cq_adopt_spare(const st_cq_table_t *tab, st_cq_t *cq, st_segment_t *seg);

/* Reads the unit at qoff: 1 if present, 0 if its file is gone. Loop. */
int st_cq_read(const st_cq_table_t *tab, const st_cq_t *cq, int64_t qoff, int64_t *phys,
               int32_t *size, int64_t *tag);

/* First queue offset of the file after the one holding qoff. */
int64_t st_cq_file_end(const st_cq_table_t *tab, int64_t qoff);

/* Recovery: drops units whose record ends past cl_end. Loop thread. */
void st_cq_trim(st_cq_table_t *tab, st_cq_t *cq, int64_t cl_end);

/* Detaches whole files whose units all point below cl_min (returned for the
 * caller to unlink and unref) and recomputes min_offset. Loop thread. */
size_t st_cq_correct_min(st_cq_table_t *tab, st_cq_t *cq, int64_t cl_min, st_segment_t ***out);

#endif
