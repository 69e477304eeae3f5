/* st_commitlog.h: the commit log as an ordered list of fixed-size mapped
 * segments and a write position. Single writer (the loop thread); the list
 * is changed under the store's maps_lock so other threads can snapshot it.
 * A record never spans two segments: the rest of a segment is closed with a
 * blank marker (u32 remaining | u32 RMQ_MAGIC_BLANK). */
#ifndef ST_COMMITLOG_H
#define ST_COMMITLOG_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"
#include "st_pool.h"
#include "st_segment.h"

typedef struct st_commitlog {
    const char *dir;                 /* borrowed from the store */
    int64_t file_size;
    pthread_mutex_t *lock;           /* the store's maps_lock */
    st_segment_t **segs;             /* ascending start; one list ref each */
    size_t nseg, cap;
    int64_t write_pos;               /* loop thread */
    _Atomic int64_t published;       /* write_pos as seen by other threads */
    st_segment_t *spare;             /* pre-created next segment, or NULL */
    st_pool_t *pool;                 /* transient store pool (borrowed), or NULL */
} st_commitlog_t;

/* pool: buffers to lend to new segments (borrowed; NULL: appends write
 * through the mappings). As in RocketMQ only a segment the log starts gets
 * one: a file loaded at open (the active one after a restart or a
 * truncation) is written through its mapping until the next roll. Unlike
 * RocketMQ's, a buffer's bytes are written to the file as they are
 * appended (st_commitlog_advance), so a process crash loses no more with
 * the pool than through the mapping, and every reader, the slave's HA
 * reads among them, sees what the file holds. */
void st_commitlog_init(st_commitlog_t *cl, const char *dir, int64_t file_size,
                       pthread_mutex_t *lock, st_pool_t *pool);
/* Drops the list's references (readers may keep segments mapped) and
 * returns the pool's buffers: commit them first (st_commitlog_commit_all). */
void st_commitlog_deinit(st_commitlog_t *cl);

/* Writes every segment's buffered bytes still not in its file (after a
 * failed write) to the file (no sync); RMQ_EIO if a write fails. Loop
 * thread. */
rmq_err_t st_commitlog_commit_all(st_commitlog_t *cl);
/* Whether a pooled segment holds appended bytes its file does not (a
 * failed write). Loop thread. */
int st_commitlog_unwritten(const st_commitlog_t *cl);
/* Returns the buffers of full segments whose bytes are all in their files
 * to the pool. Loop thread. */
void st_commitlog_reclaim(st_commitlog_t *cl);

/* Maps every segment file in dir (each must be file_size bytes; a trailing
 * file of the wrong size, left by an interrupted creation, is removed).
 * write_pos is set to the end of the last file; recovery corrects it. */
rmq_err_t st_commitlog_load(st_commitlog_t *cl);

/* First retained offset (write_pos when the log is empty). */
int64_t st_commitlog_min(const st_commitlog_t *cl);

/* The segment holding offset, or NULL. Loop thread (or under lock). */
st_segment_t *st_commitlog_find(const st_commitlog_t *cl, int64_t offset);

/* Makes room for len contiguous bytes at write_pos, closing the active
 * segment with a blank marker and rolling to the next one if needed.
 * *rolled tells the caller to ask for a new spare. RMQ_ETOOBIG if len can
 * never fit, RMQ_ENOSPC / RMQ_EIO if a file cannot be created, RMQ_EIO if
 * the blank marker cannot be written to a pooled segment's file. Loop
 * thread. */
rmq_err_t st_commitlog_reserve(st_commitlog_t *cl, size_t len, st_segment_t **seg, int *rolled);

/* Returns the segment for write_pos, rolling into a new one when write_pos
 * sits at a segment end (replicated bytes carry their own blank). Loop. */
rmq_err_t st_commitlog_active(st_commitlog_t *cl, st_segment_t **seg, int *rolled);

/* Publishes len bytes written at write_pos in seg, writing them to the
 * file first when seg has a pool buffer; RMQ_EIO if that write fails (the
 * bytes are published all the same: they are in the buffer, which readers
 * then use, and the caller latches the store read-only). Loop thread. */
rmq_err_t st_commitlog_advance(st_commitlog_t *cl, st_segment_t *seg, int64_t len);

/* Hands a pre-created segment to the log; kept if it is the next one, else
 * unmapped (its file is left alone: it may be a file the log already uses).
 * Loop thread. */
void st_commitlog_adopt_spare(st_commitlog_t *cl, st_segment_t *seg);

/* Recovery: sets write_pos = end, zeroes the rest of its segment if zero
 * and removes whole segments past it. Loop thread at open. */
rmq_err_t st_commitlog_truncate(st_commitlog_t *cl, int64_t end, int zero);

/* Removes segments that end at or below new_min (never the one holding
 * write_pos) from the list; returns them (caller owns the array and the
 * list references). Loop thread. */
size_t st_commitlog_detach_below(st_commitlog_t *cl, int64_t new_min, st_segment_t ***out);

#endif
