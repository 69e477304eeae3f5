/* st_cq.h: consume queues: per topic and queue id, a sequence of mapped
 * files of 20-byte units (i64 commit-log offset | i32 size | i64 tag code,
 * big-endian) under <root>/<topic>/<queueId>/, named by their start byte
 * offset; plus the table of all queues. Entry n is queue offset n. Written
 * by dispatch on the loop thread; list and table changes happen under the
 * store's maps_lock so the flush thread can collect dirty files. */
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
    struct st_cq *next;              /* hash chain */
} st_cq_t;

typedef struct st_cq_table {
    const char *root;                /* borrowed */
    int64_t per_file;                /* entries per file */
    pthread_mutex_t *lock;           /* the store's maps_lock */
    st_cq_t **buckets;
    size_t nbuckets, count;
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

/* Removes every queue of topic; returns their files (caller unlinks, unrefs
 * and frees the array). Loop thread. */
size_t st_cq_table_remove_topic(st_cq_table_t *tab, const char *topic, st_segment_t ***out);

/* Makes sure files exist for queue offsets [first, first + n). Creates
 * directories and files (blocking, rare). Loop thread. */
rmq_err_t st_cq_prepare(st_cq_table_t *tab, st_cq_t *cq, int64_t first, int64_t n);

/* Writes the unit at queue offset qoff (after st_cq_prepare) and makes
 * max_offset qoff + 1. Loop thread. */
void st_cq_write(st_cq_table_t *tab, st_cq_t *cq, int64_t qoff, int64_t phys, int32_t size,
                 int64_t tag);

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
