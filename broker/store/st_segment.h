/* st_segment.h: one preallocated, memory-mapped file of a commit log or a
 * consume queue, named by its 20-digit start offset. Reference counted:
 * the owning list holds one reference, every reader that outlives a call
 * (an evbuffer reference handed to a pull or HA send, a flush snapshot)
 * holds another. The last unref unmaps, closes and frees; a deleted segment
 * has its file unlinked by st_segment_unlink beforehand, so unmap
 * never depends on which thread drops the last reference (munmap and close
 * are thread-safe and nobody else can reach the memory by then). */
#ifndef ST_SEGMENT_H
#define ST_SEGMENT_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"

/* Makes addr[0..len) durable; 0 or -1 with errno, like msync. */
typedef int (*st_sync_fn)(void *addr, size_t len, void *arg);

typedef struct st_segment {
    char *path;
    int fd;
    int64_t start;              /* offset of byte 0 in the log */
    int64_t size;
    uint8_t *base;              /* mapping of size bytes */
    _Atomic int refs;
    _Atomic int64_t wrote;      /* bytes written (relative), published by the writer */
    _Atomic int64_t flushed;    /* bytes known durable (relative) */
    /* transient store pool (st_pool.h): appends land in wbuf, set and
     * cleared by the loop thread, which writes [committed, wrote) of it
     * to the file as it appends (st_segment_commit). pooled stays set once
     * the file has been written with write(): it is then synced with
     * fdatasync, not msync. */
    uint8_t *_Atomic wbuf;
    _Atomic int64_t committed;  /* bytes of wbuf in the file (relative) */
    _Atomic int pooled;
    int64_t released;           /* the loop's: [0, released) of wbuf given back */
    /* the committing thread's: [0, zeroed) of the file has no unwritten
     * extent left (zeros or data written), so a sync there converts none */
    int64_t zeroed;
} st_segment_t;

/* Creation flags. */
#define ST_SEG_WARM 1           /* touch every page of the mapping */
#define ST_SEG_ZEROS 2          /* write zeros over the file (no unwritten extents) */

/* How far ahead of a pooled segment's committed bytes st_segment_commit
 * writes zeros, at a time. */
#define ST_ZERO_AHEAD (1 << 20)
/* The pool buffer's pages wholly below the committed bytes go back to the
 * kernel this many at a time (a transparent huge page). */
#define ST_RELEASE_CHUNK (2 << 20)

/* Writes "dir/%020lld" into out. */
void st_segment_path(char *out, size_t outlen, const char *dir, int64_t start);

/* Creates dir/<start> of size bytes: preallocates dir/<start>.<tmp_suffix>
 * with posix_fallocate (RMQ_ENOSPC when the disk is full), writes zeros over
 * it with ST_SEG_ZEROS, fsyncs it, links it into place (RMQ_EEXIST if another
 * thread got there first; that file is complete and can be opened) and
 * fsyncs the directory; maps it and touches every page with ST_SEG_WARM.
 * One reference, owned by the caller. Blocking: any thread, each with its
 * own tmp_suffix. */
rmq_err_t st_segment_create(const char *dir, int64_t start, int64_t size, int flags,
                            const char *tmp_suffix, st_segment_t **out);

/* Creates dir/name (a name st_segment_list treats as a leftover, e.g.
 * "<20 digits>.spare") of size bytes, prepared as st_segment_create does
 * (flags ST_SEG_*); start is -1 until st_segment_place. The directory is not
 * synced: an unplaced spare is garbage after a crash and removed by the
 * next listing. One reference, owned by the caller. Blocking: housekeeping
 * thread. */
rmq_err_t st_segment_create_spare(const char *dir, const char *name, int64_t size, int flags,
                                  st_segment_t **out);

/* Renames a spare's file to dir/<start> (replacing a leftover of that name)
 * and sets start. The directory is not synced; the caller syncs it before it
 * records the file as durable. Only while the caller is the segment's sole
 * user (loop thread, before the segment is published). */
rmq_err_t st_segment_place(st_segment_t *seg, const char *dir, int64_t start);

/* Maps an existing file, which must be exactly size bytes. wrote/flushed
 * start at size; recovery corrects them. One reference for the caller. */
rmq_err_t st_segment_open(const char *path, int64_t start, int64_t size, st_segment_t **out);

void st_segment_ref(st_segment_t *seg);
/* Drops one reference; the last one unmaps and frees. Any thread. */
void st_segment_unref(st_segment_t *seg);

/* Removes the file from its directory; the mapping stays valid until the
 * last unref. Blocking: housekeeping thread or shutdown. */
void st_segment_unlink(st_segment_t *seg);

/* Makes [flushed, wrote) durable and advances flushed: a pooled segment
 * [flushed, committed) with fdatasync, the others with msync; sync_fn (a
 * test hook) replaces either when not NULL. Flush thread (or the loop when
 * no flush thread runs). */
rmq_err_t st_segment_flush(st_segment_t *seg, st_sync_fn sync_fn, void *sync_arg);

/* Lends buf (one file long) to an empty seg (wrote 0) before it is
 * published to other threads; the buffer then holds [0, wrote). Loop thread. */
void st_segment_attach(st_segment_t *seg, uint8_t *buf);
/* Takes the buffer back once all of the file is committed (wrote == size
 * == committed) and returns it, or NULL (kept: not full or not all
 * written yet). Loop thread. */
uint8_t *st_segment_detach(st_segment_t *seg);
/* write()s [committed, wrote) of the buffer to the file and advances
 * committed, gives the buffer's pages below it back to the kernel
 * (ST_RELEASE_CHUNK at a time: nobody reads the buffer where the file
 * holds the bytes), then keeps the file zero-written ST_ZERO_AHEAD / 2 or
 * more past it (RMQ_EIO if a write fails). RMQ_OK at once without a buffer.
 * Loop thread, as it appends (st_commitlog_advance). */
rmq_err_t st_segment_commit(st_segment_t *seg);

/* Where the writer puts bytes at rel: the buffer if one is attached, else
 * the mapping. Loop thread. */
uint8_t *st_segment_wptr(st_segment_t *seg, int64_t rel);
/* Where [rel, rel + len) (below wrote) can be read now: the mapping when
 * the file holds it, else the buffer. Valid until the loop thread returns
 * to its event loop; st_segment_ref the segment and use the mapping only
 * (st_segment_in_file) to keep a pointer longer. Loop thread. */
const uint8_t *st_segment_rptr(const st_segment_t *seg, int64_t rel, int64_t len);
/* Bytes from rel that the file (so the mapping) holds: len, or fewer when
 * the end of the range is still only in the buffer. Loop thread. */
int64_t st_segment_in_file(const st_segment_t *seg, int64_t rel, int64_t len);

/* Zeroes [from, size) after a recovery truncation, keeping the blocks
 * allocated. Loop thread at open. */
rmq_err_t st_segment_zero_tail(st_segment_t *seg, int64_t from);

/* Lists the 20-digit segment names in dir as sorted starts (caller frees
 * *starts) and removes files left by interrupted creations. RMQ_OK with
 * n = 0 if dir does not exist. */
rmq_err_t st_segment_list(const char *dir, int64_t **starts, size_t *n);

/* The default sync function: msync(MS_SYNC). */
int st_segment_msync(void *addr, size_t len, void *arg);

#endif
