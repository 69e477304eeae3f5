/* st_commitlog.c: the segment list, the write position, rolls with a blank
 * end-of-file marker, loading and truncation. */
#include "st_commitlog.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmq_log.h"
#include "rmq_message.h"

#define BLANK_SIZE 8

void st_commitlog_init(st_commitlog_t *cl, const char *dir, int64_t file_size,
                       pthread_mutex_t *lock, st_pool_t *pool)
{
    memset(cl, 0, sizeof(*cl));
    cl->dir = dir;
    cl->file_size = file_size;
    cl->lock = lock;
    cl->pool = pool;
    atomic_init(&cl->published, 0);
}

/* Takes seg's buffer back unconditionally (its bytes are committed or given
 * up) and returns it to the pool. */
static void cl_give_back(st_commitlog_t *cl, st_segment_t *seg)
{
    uint8_t *buf = atomic_exchange(&seg->wbuf, NULL);

    if (buf)
        st_pool_return(cl->pool, buf);
}

void st_commitlog_deinit(st_commitlog_t *cl)
{
    for (size_t i = 0; i < cl->nseg; i++) {
        cl_give_back(cl, cl->segs[i]);
        st_segment_unref(cl->segs[i]);
    }
    if (cl->spare)
        st_segment_unref(cl->spare);
    free(cl->segs);
    memset(cl, 0, sizeof(*cl));
}

/* Appends seg (taking over its reference) under the lock. */
static rmq_err_t cl_push(st_commitlog_t *cl, st_segment_t *seg)
{
    rmq_err_t rc = RMQ_OK;

    pthread_mutex_lock(cl->lock);
    if (cl->nseg == cl->cap) {
        size_t cap = cl->cap ? cl->cap * 2 : 16;
        st_segment_t **n = realloc(cl->segs, cap * sizeof(*n));

        if (n) {
            cl->segs = n;
            cl->cap = cap;
        } else {
            rc = RMQ_ENOMEM;
        }
    }
    if (rc == RMQ_OK)
        cl->segs[cl->nseg++] = seg;
    pthread_mutex_unlock(cl->lock);
    return rc;
}

/* Zero-extends the last file when it is shorter than file_size but holds
 * data: files are preallocated before they are linked, so a short one is a
 * copy cut mid-file, and the records before the cut are still good (the
 * CRC scan finds where they end). Returns 1 if it extended the file. */
static int extend_short_last(const char *path, int64_t file_size)
{
    struct stat sb;

    if (stat(path, &sb) != 0 || sb.st_size <= 0 || sb.st_size >= file_size ||
        truncate(path, file_size) != 0)
        return 0;
    LOG_WARN("%s: %lld bytes, shorter than %" PRId64 " (a copy cut mid-file?): zero-extended",
             path, (long long)sb.st_size, file_size);
    return 1;
}

rmq_err_t st_commitlog_load(st_commitlog_t *cl)
{
    int64_t *starts;
    size_t n;
    rmq_err_t rc = st_segment_list(cl->dir, &starts, &n);

    for (size_t i = 0; rc == RMQ_OK && i < n; i++) {
        char path[PATH_MAX];
        st_segment_t *seg;

        st_segment_path(path, sizeof(path), cl->dir, starts[i]);
        if (starts[i] % cl->file_size != 0 ||
            (i > 0 && starts[i] != starts[i - 1] + cl->file_size)) {
            LOG_ERROR("%s: commit-log files are not contiguous (file size %" PRId64 ")", path,
                      cl->file_size);
            rc = RMQ_ECORRUPT;
            break;
        }
        rc = st_segment_open(path, starts[i], cl->file_size, &seg);
        if (rc == RMQ_ECORRUPT && i == n - 1 && extend_short_last(path, cl->file_size))
            rc = st_segment_open(path, starts[i], cl->file_size, &seg);
        if (rc == RMQ_ECORRUPT && i == n - 1) {
            LOG_WARN("%s: removing a commit-log file left half-created", path);
            unlink(path);
            rc = RMQ_OK;
            break;
        }
        if (rc == RMQ_OK && (rc = cl_push(cl, seg)) != RMQ_OK)
            st_segment_unref(seg);
    }
    free(starts);
    if (rc == RMQ_OK && cl->nseg > 0)
        cl->write_pos = cl->segs[cl->nseg - 1]->start + cl->file_size;
    atomic_store(&cl->published, cl->write_pos);
    return rc;
}

int64_t st_commitlog_min(const st_commitlog_t *cl)
{
    return cl->nseg ? cl->segs[0]->start : cl->write_pos;
}

st_segment_t *st_commitlog_find(const st_commitlog_t *cl, int64_t offset)
{
    size_t idx;

    if (cl->nseg == 0 || offset < cl->segs[0]->start)
        return NULL;
    idx = (size_t)((offset - cl->segs[0]->start) / cl->file_size);
    return idx < cl->nseg ? cl->segs[idx] : NULL;
}

/* Lends seg a pool buffer when one is free (else it is written through its
 * mapping for its whole life). */
static void cl_lend(st_commitlog_t *cl, st_segment_t *seg)
{
    uint8_t *buf = cl->pool ? st_pool_borrow(cl->pool) : NULL;

    if (buf)
        st_segment_attach(seg, buf);
}

rmq_err_t st_commitlog_commit_all(st_commitlog_t *cl)
{
    rmq_err_t rc = RMQ_OK;

    for (size_t i = 0; i < cl->nseg && rc == RMQ_OK; i++)
        rc = st_segment_commit(cl->segs[i]);
    return rc;
}

int st_commitlog_unwritten(const st_commitlog_t *cl)
{
    for (size_t i = 0; i < cl->nseg; i++) {
        const st_segment_t *seg = cl->segs[i];

        if (atomic_load(&seg->wbuf) && atomic_load(&seg->committed) < atomic_load(&seg->wrote))
            return 1;
    }
    return 0;
}

void st_commitlog_reclaim(st_commitlog_t *cl)
{
    int lent = cl->pool ? st_pool_lent(cl->pool) : 0;

    for (size_t i = cl->nseg; lent > 0 && i-- > 0;) {
        uint8_t *buf;

        if (!atomic_load(&cl->segs[i]->wbuf))
            continue;
        lent--;
        if ((buf = st_segment_detach(cl->segs[i])) != NULL)
            st_pool_return(cl->pool, buf);
    }
}

/* Creates (or adopts the spare for) the segment starting at start. */
static rmq_err_t cl_new_segment(st_commitlog_t *cl, int64_t start, st_segment_t **out)
{
    st_segment_t *seg = NULL;
    rmq_err_t rc;

    if (cl->spare && cl->spare->start == start) {
        seg = cl->spare;
        cl->spare = NULL;
    } else {
        rc = st_segment_create(cl->dir, start, cl->file_size, 0, "loop", &seg);
        if (rc == RMQ_EEXIST) {
            char path[PATH_MAX];

            st_segment_path(path, sizeof(path), cl->dir, start);
            rc = st_segment_open(path, start, cl->file_size, &seg);
            if (rc == RMQ_OK) {
                atomic_store(&seg->wrote, 0);
                atomic_store(&seg->flushed, 0);
            }
        }
        if (rc != RMQ_OK)
            return rc;
    }
    st_commitlog_reclaim(cl);
    cl_lend(cl, seg);
    rc = cl_push(cl, seg);
    if (rc != RMQ_OK) {
        cl_give_back(cl, seg);
        st_segment_unref(seg);
        return rc;
    }
    *out = seg;
    return RMQ_OK;
}

rmq_err_t st_commitlog_active(st_commitlog_t *cl, st_segment_t **seg, int *rolled)
{
    st_segment_t *last = cl->nseg ? cl->segs[cl->nseg - 1] : NULL;

    *rolled = 0;
    if (last && cl->write_pos < last->start + cl->file_size) {
        *seg = last;
        return RMQ_OK;
    }
    *rolled = 1;
    return cl_new_segment(cl, cl->write_pos, seg);
}

/* Closes seg from write_pos to its end with a blank marker. */
static rmq_err_t cl_write_blank(st_commitlog_t *cl, st_segment_t *seg)
{
    int64_t rel = cl->write_pos - seg->start;
    uint32_t remaining = (uint32_t)(cl->file_size - rel);
    uint8_t *p = st_segment_wptr(seg, rel);

    if (remaining >= BLANK_SIZE) {
        uint32_t magic = RMQ_MAGIC_BLANK;

        for (int i = 0; i < 4; i++) {
            p[i] = (uint8_t)(remaining >> (24 - 8 * i));
            p[4 + i] = (uint8_t)(magic >> (24 - 8 * i));
        }
    }
    return st_commitlog_advance(cl, seg, remaining);
}

rmq_err_t st_commitlog_reserve(st_commitlog_t *cl, size_t len, st_segment_t **seg, int *rolled)
{
    rmq_err_t rc;
    int again;

    if ((int64_t)len + BLANK_SIZE > cl->file_size)
        return RMQ_ETOOBIG;
    rc = st_commitlog_active(cl, seg, rolled);
    if (rc != RMQ_OK)
        return rc;
    if (cl->write_pos + (int64_t)len + BLANK_SIZE <= (*seg)->start + cl->file_size)
        return RMQ_OK;
    rc = cl_write_blank(cl, *seg);
    if (rc != RMQ_OK)
        return rc;
    rc = st_commitlog_active(cl, seg, &again);
    *rolled = 1;
    return rc;
}

rmq_err_t st_commitlog_advance(st_commitlog_t *cl, st_segment_t *seg, int64_t len)
{
    rmq_err_t rc;

    cl->write_pos += len;
    atomic_store_explicit(&seg->wrote, cl->write_pos - seg->start, memory_order_release);
    rc = st_segment_commit(seg);
    atomic_store_explicit(&cl->published, cl->write_pos, memory_order_release);
    return rc;
}

void st_commitlog_adopt_spare(st_commitlog_t *cl, st_segment_t *seg)
{
    st_segment_t *last = cl->nseg ? cl->segs[cl->nseg - 1] : NULL;
    int64_t next = last ? last->start + cl->file_size : cl->write_pos - cl->write_pos % cl->file_size;

    if (cl->spare || seg->start != next) {
        st_segment_unref(seg);
        return;
    }
    cl->spare = seg;
}

rmq_err_t st_commitlog_truncate(st_commitlog_t *cl, int64_t end, int zero)
{
    rmq_err_t rc = RMQ_OK;

    while (cl->nseg > 0 && cl->segs[cl->nseg - 1]->start > end) {
        st_segment_t *seg = cl->segs[cl->nseg - 1];

        LOG_WARN("recovery: removing commit-log file %s past the end %" PRId64, seg->path, end);
        pthread_mutex_lock(cl->lock);
        cl->nseg--;
        pthread_mutex_unlock(cl->lock);
        cl_give_back(cl, seg);
        st_segment_unlink(seg);
        st_segment_unref(seg);
    }
    cl->write_pos = end;
    if (cl->nseg > 0) {
        st_segment_t *seg = cl->segs[cl->nseg - 1];
        int64_t rel = end - seg->start;

        if (zero && rel < cl->file_size)
            rc = st_segment_zero_tail(seg, rel);
        atomic_store(&seg->wrote, rel);
        atomic_store(&seg->flushed, rel);
    }
    atomic_store(&cl->published, end);
    return rc;
}

size_t st_commitlog_detach_below(st_commitlog_t *cl, int64_t new_min, st_segment_t ***out)
{
    size_t n = 0;

    *out = NULL;
    while (n < cl->nseg && cl->segs[n]->start + cl->file_size <= new_min &&
           cl->segs[n]->start + cl->file_size <= cl->write_pos && n + 1 < cl->nseg)
        n++;
    if (n == 0)
        return 0;
    *out = malloc(n * sizeof(**out));
    if (!*out)
        return 0;
    memcpy(*out, cl->segs, n * sizeof(**out));
    st_commitlog_reclaim(cl);
    pthread_mutex_lock(cl->lock);
    memmove(cl->segs, cl->segs + n, (cl->nseg - n) * sizeof(*cl->segs));
    cl->nseg -= n;
    pthread_mutex_unlock(cl->lock);
    return n;
}
