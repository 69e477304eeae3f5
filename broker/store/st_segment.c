/* st_segment.c: preallocated mapped files with reference counts (see
 * st_segment.h for the unmap rule), and the transient-pool write path of a
 * commit-log segment: appends into a lent buffer, write() to the file,
 * fdatasync. */
#include "st_segment.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "rmq_log.h"
#include "rmq_file.h"

#define ST_PAGE 4096

void st_segment_path(char *out, size_t outlen, const char *dir, int64_t start)
{
    snprintf(out, outlen, "%s/%020" PRId64, dir, start);
}

/* Maps fd and wraps it; takes ownership of fd and path on success. */
static rmq_err_t segment_wrap(char *path, int fd, int64_t start, int64_t size, st_segment_t **out)
{
    st_segment_t *seg = calloc(1, sizeof(*seg));
    void *base;

    if (!seg)
        return RMQ_ENOMEM;
    base = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        LOG_ERROR("mmap(%s): %s", path, strerror(errno));
        free(seg);
        return errno == ENOMEM ? RMQ_ENOMEM : RMQ_EIO;
    }
    seg->path = path;
    seg->fd = fd;
    seg->start = start;
    seg->size = size;
    seg->base = base;
    atomic_init(&seg->refs, 1);
    atomic_init(&seg->wrote, 0);
    atomic_init(&seg->flushed, 0);
    atomic_init(&seg->wbuf, NULL);
    atomic_init(&seg->committed, 0);
    atomic_init(&seg->pooled, 0);
    *out = seg;
    return RMQ_OK;
}

/* Writes one byte in every page so later appends hit warm page cache. */
static void segment_warm(st_segment_t *seg)
{
    for (int64_t off = 0; off < seg->size; off += ST_PAGE)
        seg->base[off] = 0;
}

/* Writes zeros over [off, end) of fd so no extent is left unwritten there
 * (a sync after the first write into an unwritten extent also commits its
 * conversion to the file system journal); 0 or an errno. */
static int segment_write_zeros(int fd, int64_t off, int64_t end)
{
    static const uint8_t zeros[64 * 1024];
    int e = 0;

    while (e == 0 && off < end) {
        size_t n = end - off < (int64_t)sizeof(zeros) ? (size_t)(end - off) : sizeof(zeros);
        ssize_t w = pwrite(fd, zeros, n, off);

        if (w < 0 && errno != EINTR)
            e = errno;
        else if (w > 0)
            off += w;
    }
    return e;
}

/* Preallocates (zero-writes with ST_SEG_ZEROS) and fsyncs a fresh file at
 * tmp; returns the open fd or -errno. */
static int segment_prealloc(const char *tmp, int64_t size, int flags)
{
    int fd = open(tmp, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int e;

    if (fd < 0)
        return -errno;
    e = posix_fallocate(fd, 0, size);
    if (e == 0 && (flags & ST_SEG_ZEROS))
        e = segment_write_zeros(fd, 0, size);
    if (e == 0 && fsync(fd) != 0)
        e = errno;
    if (e != 0) {
        close(fd);
        unlink(tmp);
        return -e;
    }
    return fd;
}

rmq_err_t st_segment_create(const char *dir, int64_t start, int64_t size, int flags,
                            const char *tmp_suffix, st_segment_t **out)
{
    char path[PATH_MAX], tmp[PATH_MAX + 16];
    char *dup = NULL;
    int fd, linked;
    rmq_err_t rc;

    st_segment_path(path, sizeof(path), dir, start);
    snprintf(tmp, sizeof(tmp), "%s.%s", path, tmp_suffix);
    fd = segment_prealloc(tmp, size, flags);
    if (fd < 0) {
        LOG_ERROR("preallocate %s (%" PRId64 " bytes): %s", tmp, size, strerror(-fd));
        return fd == -ENOSPC ? RMQ_ENOSPC : RMQ_EIO;
    }
    linked = link(tmp, path) == 0 ? 0 : errno;
    unlink(tmp);
    if (linked != 0) {
        close(fd);
        if (linked == EEXIST)
            return RMQ_EEXIST;
        LOG_ERROR("link %s: %s", path, strerror(linked));
        return RMQ_EIO;
    }
    dup = strdup(path);
    rc = dup ? rmq_file_sync_dir(dir) : RMQ_ENOMEM;
    if (rc == RMQ_OK)
        rc = segment_wrap(dup, fd, start, size, out);
    if (rc != RMQ_OK) {
        free(dup);
        close(fd);
        unlink(path);
        return rc;
    }
    if (flags & ST_SEG_WARM)
        segment_warm(*out);
    if (flags & ST_SEG_ZEROS)
        (*out)->zeroed = size;
    return RMQ_OK;
}

rmq_err_t st_segment_create_spare(const char *dir, const char *name, int64_t size, int flags,
                                  st_segment_t **out)
{
    char path[PATH_MAX];
    char *dup;
    int fd;
    rmq_err_t rc;

    snprintf(path, sizeof(path), "%s/%s", dir, name);
    fd = segment_prealloc(path, size, flags);
    if (fd < 0) {
        LOG_ERROR_RL("preallocate %s (%" PRId64 " bytes): %s", path, size, strerror(-fd));
        return fd == -ENOSPC ? RMQ_ENOSPC : RMQ_EIO;
    }
    dup = strdup(path);
    rc = dup ? segment_wrap(dup, fd, -1, size, out) : RMQ_ENOMEM;
    if (rc != RMQ_OK) {
        free(dup);
        close(fd);
        unlink(path);
        return rc;
    }
    if (flags & ST_SEG_WARM)
        segment_warm(*out);
    if (flags & ST_SEG_ZEROS)
        (*out)->zeroed = size;
    return RMQ_OK;
}

rmq_err_t st_segment_place(st_segment_t *seg, const char *dir, int64_t start)
{
    char path[PATH_MAX];
    char *dup;

    st_segment_path(path, sizeof(path), dir, start);
    if (!(dup = strdup(path)))
        return RMQ_ENOMEM;
    if (rename(seg->path, path) != 0) {
        LOG_ERROR_RL("rename %s to %s: %s", seg->path, path, strerror(errno));
        free(dup);
        return RMQ_EIO;
    }
    free(seg->path);
    seg->path = dup;
    seg->start = start;
    return RMQ_OK;
}

rmq_err_t st_segment_open(const char *path, int64_t start, int64_t size, st_segment_t **out)
{
    struct stat sb;
    char *dup;
    rmq_err_t rc;
    int fd = open(path, O_RDWR | O_CLOEXEC);

    if (fd < 0) {
        LOG_ERROR("open %s: %s", path, strerror(errno));
        return RMQ_EIO;
    }
    if (fstat(fd, &sb) != 0 || sb.st_size != size) {
        LOG_ERROR("%s: size %lld, expected %" PRId64, path, (long long)sb.st_size, size);
        close(fd);
        return RMQ_ECORRUPT;
    }
    dup = strdup(path);
    rc = dup ? segment_wrap(dup, fd, start, size, out) : RMQ_ENOMEM;
    if (rc != RMQ_OK) {
        free(dup);
        close(fd);
        return rc;
    }
    atomic_store(&(*out)->wrote, size);
    atomic_store(&(*out)->flushed, size);
    return RMQ_OK;
}

void st_segment_ref(st_segment_t *seg)
{
    atomic_fetch_add_explicit(&seg->refs, 1, memory_order_relaxed);
}

void st_segment_unref(st_segment_t *seg)
{
    if (atomic_fetch_sub_explicit(&seg->refs, 1, memory_order_acq_rel) != 1)
        return;
    munmap(seg->base, (size_t)seg->size);
    close(seg->fd);
    free(seg->path);
    free(seg);
}

void st_segment_unlink(st_segment_t *seg)
{
    if (unlink(seg->path) != 0 && errno != ENOENT)
        LOG_ERROR("unlink %s: %s", seg->path, strerror(errno));
}

int st_segment_msync(void *addr, size_t len, void *arg)
{
    (void)arg;
    return msync(addr, len, MS_SYNC);
}

/* Makes [from, to) of a segment written with write() durable. */
static int segment_datasync(st_segment_t *seg, int64_t from, int64_t to, st_sync_fn sync_fn,
                            void *sync_arg)
{
    if (sync_fn)
        return sync_fn(seg->base + from, (size_t)(to - from), sync_arg);
    return fdatasync(seg->fd);
}

rmq_err_t st_segment_flush(st_segment_t *seg, st_sync_fn sync_fn, void *sync_arg)
{
    int pooled = atomic_load_explicit(&seg->pooled, memory_order_acquire);
    int64_t wrote, flushed = atomic_load_explicit(&seg->flushed, memory_order_relaxed);
    int64_t from = flushed / ST_PAGE * ST_PAGE;
    int rc;

    wrote = pooled ? atomic_load_explicit(&seg->committed, memory_order_acquire)
                   : atomic_load_explicit(&seg->wrote, memory_order_acquire);
    if (wrote <= flushed)
        return RMQ_OK;
    rc = pooled ? segment_datasync(seg, from, wrote, sync_fn, sync_arg)
                : (sync_fn ? sync_fn : st_segment_msync)(seg->base + from, (size_t)(wrote - from), sync_arg);
    if (rc != 0) {
        LOG_ERROR_RL("%s %s [%" PRId64 ", %" PRId64 "): %s", pooled ? "fdatasync" : "msync", seg->path,
                     from, wrote, strerror(errno));
        return RMQ_EIO;
    }
    atomic_store_explicit(&seg->flushed, wrote, memory_order_release);
    return RMQ_OK;
}

void st_segment_attach(st_segment_t *seg, uint8_t *buf)
{
    seg->released = 0;
    atomic_store_explicit(&seg->committed, 0, memory_order_relaxed);
    atomic_store_explicit(&seg->wbuf, buf, memory_order_relaxed);
    atomic_store_explicit(&seg->pooled, 1, memory_order_release);
}

uint8_t *st_segment_detach(st_segment_t *seg)
{
    uint8_t *buf = atomic_load_explicit(&seg->wbuf, memory_order_relaxed);

    if (!buf || atomic_load_explicit(&seg->wrote, memory_order_relaxed) != seg->size ||
        atomic_load_explicit(&seg->committed, memory_order_acquire) != seg->size)
        return NULL;
    atomic_store_explicit(&seg->wbuf, NULL, memory_order_relaxed);
    return buf;
}

/* Keeps the file free of unwritten extents up to ST_ZERO_AHEAD / 2 or more
 * past at (the committed end), writing zeros ST_ZERO_AHEAD at a time, so the
 * fdatasyncs of SYNC_FLUSH's group commits write data and flush the disk
 * cache but commit no extent conversion (one journal commit per
 * ST_ZERO_AHEAD instead of one per sync). Only the committing thread
 * writes the file past at, so the zeros never cover data. */
static rmq_err_t segment_zero_ahead(st_segment_t *seg, int64_t at)
{
    int64_t from = (at + ST_PAGE - 1) / ST_PAGE * ST_PAGE, to;
    int e;

    if (seg->zeroed > from)
        from = seg->zeroed;
    if (from >= seg->size || from - at >= ST_ZERO_AHEAD / 2)
        return RMQ_OK;
    to = from + ST_ZERO_AHEAD < seg->size ? from + ST_ZERO_AHEAD : seg->size;
    if ((e = segment_write_zeros(seg->fd, from, to)) != 0) {
        LOG_ERROR_RL("write zeros %s [%" PRId64 ", %" PRId64 "): %s", seg->path, from, to, strerror(e));
        return RMQ_EIO;
    }
    seg->zeroed = to;
    return RMQ_OK;
}

/* Gives back the pages of buf wholly below committed (see
 * st_segment_commit), whole chunks only. */
static void segment_release(st_segment_t *seg, uint8_t *buf, int64_t committed)
{
    int64_t to = committed / ST_RELEASE_CHUNK * ST_RELEASE_CHUNK;

    if (to <= seg->released)
        return;
    if (madvise(buf + seg->released, (size_t)(to - seg->released), MADV_DONTNEED) == 0)
        seg->released = to;
}

rmq_err_t st_segment_commit(st_segment_t *seg)
{
    int64_t wrote = atomic_load_explicit(&seg->wrote, memory_order_acquire);
    int64_t from = atomic_load_explicit(&seg->committed, memory_order_relaxed);
    uint8_t *buf;

    buf = atomic_load_explicit(&seg->wbuf, memory_order_acquire);
    if (!buf || wrote <= from)
        return RMQ_OK;
    while (from < wrote) {
        ssize_t n = pwrite(seg->fd, buf + from, (size_t)(wrote - from), from);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            LOG_ERROR_RL("write %s [%" PRId64 ", %" PRId64 "): %s", seg->path, from, wrote,
                         n < 0 ? strerror(errno) : "no progress");
            return RMQ_EIO;
        }
        from += n;
        atomic_store_explicit(&seg->committed, from, memory_order_release);
    }
    segment_release(seg, buf, wrote);
    return segment_zero_ahead(seg, wrote);
}

uint8_t *st_segment_wptr(st_segment_t *seg, int64_t rel)
{
    uint8_t *buf = atomic_load_explicit(&seg->wbuf, memory_order_relaxed);

    return (buf ? buf : seg->base) + rel;
}

int64_t st_segment_in_file(const st_segment_t *seg, int64_t rel, int64_t len)
{
    int64_t committed;

    if (!atomic_load_explicit(&seg->wbuf, memory_order_relaxed))
        return len;
    committed = atomic_load_explicit(&seg->committed, memory_order_acquire);
    return rel + len <= committed ? len : committed > rel ? committed - rel : 0;
}

const uint8_t *st_segment_rptr(const st_segment_t *seg, int64_t rel, int64_t len)
{
    uint8_t *buf = atomic_load_explicit(&seg->wbuf, memory_order_relaxed);

    return (buf && st_segment_in_file(seg, rel, len) < len ? buf : seg->base) + rel;
}

rmq_err_t st_segment_zero_tail(st_segment_t *seg, int64_t from)
{
    int64_t page_end = (from + ST_PAGE - 1) / ST_PAGE * ST_PAGE;

    if (page_end > seg->size)
        page_end = seg->size;
    memset(seg->base + from, 0, (size_t)(page_end - from));
    if (page_end < seg->size) {
        off_t len = seg->size - page_end;

        if (fallocate(seg->fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, page_end, len) != 0) {
            LOG_WARN("%s: hole punching unsupported (%s), zeroing by hand", seg->path,
                     strerror(errno));
            memset(seg->base + page_end, 0, (size_t)len);
        } else if (posix_fallocate(seg->fd, page_end, len) != 0) {
            LOG_ERROR("%s: re-preallocating the truncated tail failed", seg->path);
            return RMQ_ENOSPC;
        }
    }
    if (msync(seg->base, (size_t)seg->size, MS_SYNC) != 0 || fsync(seg->fd) != 0) {
        LOG_ERROR("sync %s after truncation: %s", seg->path, strerror(errno));
        return RMQ_EIO;
    }
    return RMQ_OK;
}

/* True for "<20 digits>.<suffix>": a creation interrupted before its link. */
static int parse_segment_name_prefix(const char *name)
{
    for (int i = 0; i < 20; i++)
        if (name[i] < '0' || name[i] > '9')
            return 0;
    return name[20] == '.';
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return x < y ? -1 : x > y;
}

/* Parses a 20-digit segment name; -1 if it is not one. */
static int64_t parse_segment_name(const char *name)
{
    char *end;
    long long v;

    if (strlen(name) != 20 || name[0] < '0' || name[0] > '9')
        return -1;
    errno = 0;
    v = strtoll(name, &end, 10);
    return (*end || errno) ? -1 : v;
}

/* Appends v to a growing array. */
static int push_i64(int64_t **arr, size_t *n, size_t *cap, int64_t v)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 16;
        int64_t *p = realloc(*arr, ncap * sizeof(*p));

        if (!p)
            return -1;
        *arr = p;
        *cap = ncap;
    }
    (*arr)[(*n)++] = v;
    return 0;
}

rmq_err_t st_segment_list(const char *dir, int64_t **starts, size_t *n)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t cap = 0;

    *starts = NULL;
    *n = 0;
    if (!d)
        return errno == ENOENT ? RMQ_OK : RMQ_EIO;
    while ((de = readdir(d)) != NULL) {
        int64_t start = parse_segment_name(de->d_name);

        if (start >= 0) {
            if (push_i64(starts, n, &cap, start) != 0) {
                closedir(d);
                free(*starts);
                *starts = NULL;
                return RMQ_ENOMEM;
            }
        } else if (strlen(de->d_name) > 20 && parse_segment_name_prefix(de->d_name)) {
            unlinkat(dirfd(d), de->d_name, 0);
        }
    }
    closedir(d);
    if (*n > 1)
        qsort(*starts, *n, sizeof(**starts), cmp_i64);
    return RMQ_OK;
}
