/* st_cq.c: consume-queue files, the queue table, loading, trimming and
 * minimum-offset correction.
 *
 * Threads: the table, every st_cq_t (including spare, spare_pending and
 * spare_failed_at) and the file contents belong to the loop thread; segs
 * arrays and the bucket chains change under the maps_lock so the flush
 * thread can collect dirty files (st_cq_table_collect_dirty, the only
 * function here another thread calls). Spares are not in segs, so the
 * flush thread never sees them. The housekeeping thread creates spares from
 * copied paths (st_house.c) and never touches these structures. */
#include "st_cq.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "rmq_log.h"
#include "rmq_file.h"

#define INITIAL_BUCKETS 256

static void put_be(uint8_t *p, uint64_t v, int bytes)
{
    for (int i = 0; i < bytes; i++)
        p[i] = (uint8_t)(v >> (8 * (bytes - 1 - i)));
}

static uint64_t get_be(const uint8_t *p, int bytes)
{
    uint64_t v = 0;

    for (int i = 0; i < bytes; i++)
        v = v << 8 | p[i];
    return v;
}

static int64_t file_bytes(const st_cq_table_t *tab)
{
    return tab->per_file * ST_CQ_UNIT;
}

static uint64_t cq_hash(const char *topic, size_t len, int32_t qid)
{
    uint64_t h = 1469598103934665603ull;

    for (size_t i = 0; i < len; i++)
        h = (h ^ (uint8_t)topic[i]) * 1099511628211ull;
    return (h ^ (uint32_t)qid) * 1099511628211ull;
}

rmq_err_t st_cq_table_init(st_cq_table_t *tab, const char *root, int64_t per_file,
                           pthread_mutex_t *lock)
{
    memset(tab, 0, sizeof(*tab));
    tab->root = root;
    tab->per_file = per_file;
    tab->lock = lock;
    tab->nbuckets = INITIAL_BUCKETS;
    tab->buckets = calloc(tab->nbuckets, sizeof(*tab->buckets));
    return tab->buckets ? RMQ_OK : RMQ_ENOMEM;
}

static void cq_free(st_cq_t *cq)
{
    for (size_t i = 0; i < cq->nseg; i++)
        st_segment_unref(cq->segs[i]);
    if (cq->spare)                   /* the file stays: the loader handles it */
        st_segment_unref(cq->spare);
    free(cq->segs);
    free(cq->topic);
    free(cq->dir);
    free(cq);
}

void st_cq_table_deinit(st_cq_table_t *tab)
{
    for (size_t b = 0; b < tab->nbuckets; b++) {
        st_cq_t *cq = tab->buckets[b];

        while (cq) {
            st_cq_t *next = cq->next;

            cq_free(cq);
            cq = next;
        }
    }
    free(tab->buckets);
    memset(tab, 0, sizeof(*tab));
}

st_cq_t *st_cq_table_find(const st_cq_table_t *tab, const char *topic, size_t len, int32_t qid)
{
    st_cq_t *cq = tab->buckets[cq_hash(topic, len, qid) % tab->nbuckets];

    for (; cq; cq = cq->next)
        if (cq->queue_id == qid && cq->topic_len == len && memcmp(cq->topic, topic, len) == 0)
            return cq;
    return NULL;
}

/* Doubles the bucket array when the table is as full as it is wide. */
static void table_grow(st_cq_table_t *tab)
{
    size_t nb = tab->nbuckets * 2;
    st_cq_t **b = calloc(nb, sizeof(*b));

    if (!b)
        return;
    for (size_t i = 0; i < tab->nbuckets; i++) {
        st_cq_t *cq = tab->buckets[i];

        while (cq) {
            st_cq_t *next = cq->next;
            size_t h = cq_hash(cq->topic, cq->topic_len, cq->queue_id) % nb;

            cq->next = b[h];
            b[h] = cq;
            cq = next;
        }
    }
    free(tab->buckets);
    tab->buckets = b;
    tab->nbuckets = nb;
}

st_cq_t *st_cq_table_get(st_cq_table_t *tab, const char *topic, size_t len, int32_t qid)
{
    st_cq_t *cq = st_cq_table_find(tab, topic, len, qid);
    char dir[PATH_MAX];
    size_t h;

    if (cq)
        return cq;
    cq = calloc(1, sizeof(*cq));
    snprintf(dir, sizeof(dir), "%s/%.*s/%d", tab->root, (int)len, topic, (int)qid);
    if (!cq || !(cq->topic = malloc(len + 1)) || !(cq->dir = strdup(dir))) {
        if (cq)
            free(cq->topic);
        free(cq);
        return NULL;
    }
    memcpy(cq->topic, topic, len);
    cq->topic[len] = '\0';
    cq->topic_len = len;
    cq->queue_id = qid;
    cq->spare_failed_at = -1;
    pthread_mutex_lock(tab->lock);
    if (tab->count >= tab->nbuckets)
        table_grow(tab);
    h = cq_hash(topic, len, qid) % tab->nbuckets;
    cq->next = tab->buckets[h];
    tab->buckets[h] = cq;
    tab->count++;
    pthread_mutex_unlock(tab->lock);
    return cq;
}

void st_cq_table_foreach(st_cq_table_t *tab, void (*fn)(st_cq_t *cq, void *arg), void *arg)
{
    for (size_t b = 0; b < tab->nbuckets; b++)
        for (st_cq_t *cq = tab->buckets[b]; cq; cq = cq->next)
            fn(cq, arg);
}

/* Appends seg to a growing segment array. */
static int push_seg(st_segment_t ***arr, size_t *n, size_t *cap, st_segment_t *seg)
{
    if (*n == *cap) {
        size_t ncap = *cap ? *cap * 2 : 8;
        st_segment_t **p = realloc(*arr, ncap * sizeof(*p));

        if (!p)
            return -1;
        *arr = p;
        *cap = ncap;
    }
    (*arr)[(*n)++] = seg;
    return 0;
}

rmq_err_t st_cq_table_collect_dirty(st_cq_table_t *tab, st_segment_t ***out, size_t *n)
{
    size_t cap = 0;
    rmq_err_t rc = RMQ_OK;

    *out = NULL;
    *n = 0;
    pthread_mutex_lock(tab->lock);
    for (size_t b = 0; b < tab->nbuckets && rc == RMQ_OK; b++)
        for (st_cq_t *cq = tab->buckets[b]; cq && rc == RMQ_OK; cq = cq->next)
            for (size_t i = 0; i < cq->nseg; i++) {
                st_segment_t *seg = cq->segs[i];

                if (atomic_load(&seg->flushed) >= atomic_load(&seg->wrote))
                    continue;
                if (push_seg(out, n, &cap, seg) != 0) {
                    rc = RMQ_ENOMEM;
                    break;
                }
                st_segment_ref(seg);
            }
    pthread_mutex_unlock(tab->lock);
    return rc;
}

/* Unlinks cq from its bucket; the caller holds the lock. */
static void table_unlink(st_cq_table_t *tab, st_cq_t *cq)
{
    st_cq_t **pp = &tab->buckets[cq_hash(cq->topic, cq->topic_len, cq->queue_id) % tab->nbuckets];

    while (*pp != cq)
        pp = &(*pp)->next;
    *pp = cq->next;
    tab->count--;
}

size_t st_cq_table_remove_topic(st_cq_table_t *tab, const char *topic, st_segment_t ***out)
{
    size_t n = 0, cap = 0, len = strlen(topic);

    *out = NULL;
    for (size_t b = 0; b < tab->nbuckets; b++) {
        st_cq_t *cq = tab->buckets[b];

        while (cq) {
            st_cq_t *next = cq->next;

            if (cq->topic_len == len && memcmp(cq->topic, topic, len) == 0) {
                pthread_mutex_lock(tab->lock);
                table_unlink(tab, cq);
                pthread_mutex_unlock(tab->lock);
                for (size_t i = 0; i < cq->nseg; i++)
                    if (push_seg(out, &n, &cap, cq->segs[i]) != 0)
                        st_segment_unref(cq->segs[i]);
                cq->nseg = 0;
                if (cq->spare && push_seg(out, &n, &cap, cq->spare) != 0)
                    st_segment_unref(cq->spare);
                cq->spare = NULL;
                cq_free(cq);
            }
            cq = next;
        }
    }
    return n;
}

/* The file holding queue offset qoff, or NULL. */
static st_segment_t *cq_seg_for(const st_cq_table_t *tab, const st_cq_t *cq, int64_t qoff)
{
    int64_t byte = qoff * ST_CQ_UNIT;
    size_t idx;

    if (cq->nseg == 0 || byte < cq->segs[0]->start)
        return NULL;
    idx = (size_t)((byte - cq->segs[0]->start) / file_bytes(tab));
    return idx < cq->nseg ? cq->segs[idx] : NULL;
}

/* Adds seg to cq's list under the lock. */
static rmq_err_t cq_push(st_cq_table_t *tab, st_cq_t *cq, st_segment_t *seg)
{
    int rc;

    pthread_mutex_lock(tab->lock);
    rc = push_seg(&cq->segs, &cq->nseg, &cq->cap, seg);
    pthread_mutex_unlock(tab->lock);
    return rc == 0 ? RMQ_OK : RMQ_ENOMEM;
}

/* True if every byte of seg is zero. */
static int seg_all_zero(const st_segment_t *seg);

/* Creates the file at start on the calling (loop) thread. A file already
 * there is taken when it is all zero: the housekeeping thread linked it
 * first while pre-creating it (that copy then arrives as a spare already
 * in use and is only unreferenced). */
static rmq_err_t cq_create(st_cq_table_t *tab, st_cq_t *cq, int64_t start, st_segment_t **out)
{
    int64_t fb = file_bytes(tab);
    rmq_err_t rc = st_segment_create(cq->dir, start, fb, 0, "loop", out);

    if (rc == RMQ_EEXIST) {
        char path[PATH_MAX];

        st_segment_path(path, sizeof(path), cq->dir, start);
        rc = st_segment_open(path, start, fb, out);
        if (rc == RMQ_OK && !seg_all_zero(*out)) {
            LOG_ERROR_RL("%s exists and holds data; not reusing it", path);
            st_segment_unref(*out);
            rc = RMQ_EEXIST;
        }
        if (rc == RMQ_OK) {
            atomic_store(&(*out)->wrote, 0);
            atomic_store(&(*out)->flushed, 0);
        }
    }
    if (rc == RMQ_OK)
        tab->files_created_sync++;
    return rc;
}

int64_t st_cq_next_file(const st_cq_table_t *tab, const st_cq_t *cq)
{
    return cq->nseg ? cq->segs[cq->nseg - 1]->start + file_bytes(tab) : -1;
}

int st_cq_wants_spare(const st_cq_table_t *tab, const st_cq_t *cq)
{
    const st_segment_t *last;

    if (cq->nseg == 0 || cq->spare || cq->spare_pending)
        return 0;
    last = cq->segs[cq->nseg - 1];
    return last->start + file_bytes(tab) != cq->spare_failed_at &&
           (cq->max_offset * ST_CQ_UNIT - last->start) * 2 >= file_bytes(tab);
}

int st_cq_adopt_spare(const st_cq_table_t *tab, st_cq_t *cq, st_segment_t *seg)
{
    int64_t next = st_cq_next_file(tab, cq);

    if (next < 0 || seg->start > next || seg->size != file_bytes(tab))
        return -1;
    if (seg->start < next || cq->spare)
        return 0;
    cq->spare = seg;
    return 1;
}

rmq_err_t st_cq_prepare(st_cq_table_t *tab, st_cq_t *cq, int64_t first, int64_t n)
{
    int64_t fb = file_bytes(tab);
    int64_t last_byte = (first + n - 1) * ST_CQ_UNIT;
    rmq_err_t rc;

    if (cq_seg_for(tab, cq, first + n - 1))
        return RMQ_OK;
    if (cq->nseg == 0 && (rc = rmq_file_mkdirs(cq->dir)) != RMQ_OK)
        return rc;
    while (cq->nseg == 0 || cq->segs[cq->nseg - 1]->start + fb <= last_byte) {
        int64_t start = cq->nseg ? cq->segs[cq->nseg - 1]->start + fb : first * ST_CQ_UNIT / fb * fb;
        st_segment_t *seg = NULL;

        if (cq->spare && cq->spare->start == start) {
            seg = cq->spare;
            cq->spare = NULL;
            tab->files_precreated++;
        } else if ((rc = cq_create(tab, cq, start, &seg)) != RMQ_OK) {
            return rc;
        }
        if (cq->spare && cq->spare->start <= start) {   /* stale: never used */
            st_segment_unref(cq->spare);
            cq->spare = NULL;
        }
        if ((rc = cq_push(tab, cq, seg)) != RMQ_OK) {
            st_segment_unlink(seg);
            st_segment_unref(seg);
            return rc;
        }
        if (cq->nseg == 1)
            cq->min_offset = cq->max_offset = start / ST_CQ_UNIT;
    }
    return RMQ_OK;
}

void st_cq_write(st_cq_table_t *tab, st_cq_t *cq, int64_t qoff, int64_t phys, int32_t size,
                 int64_t tag)
{
    st_segment_t *seg = cq_seg_for(tab, cq, qoff);
    int64_t rel = qoff * ST_CQ_UNIT - seg->start;
    uint8_t *p = seg->base + rel;

    put_be(p, (uint64_t)phys, 8);
    put_be(p + 8, (uint32_t)size, 4);
    put_be(p + 12, (uint64_t)tag, 8);
    atomic_store_explicit(&seg->wrote, rel + ST_CQ_UNIT, memory_order_release);
    cq->max_offset = qoff + 1;
    if (size != ST_CQ_DUMMY_SIZE)
        cq->max_phys_end = phys + size;
}

int st_cq_read(const st_cq_table_t *tab, const st_cq_t *cq, int64_t qoff, int64_t *phys,
               int32_t *size, int64_t *tag)
{
    st_segment_t *seg = cq_seg_for(tab, cq, qoff);
    const uint8_t *p;

    if (!seg)
        return 0;
    p = seg->base + (qoff * ST_CQ_UNIT - seg->start);
    *phys = (int64_t)get_be(p, 8);
    *size = (int32_t)get_be(p + 8, 4);
    *tag = (int64_t)get_be(p + 12, 8);
    if (*phys < 0 || *phys > INT64_MAX / 2) {
        /* a corrupt unit (no log reaches 2^62): read it as a filler so
         * that no caller computes phys + size past INT64_MAX */
        *phys = 0;
        *size = ST_CQ_DUMMY_SIZE;
        *tag = 0;
    }
    return 1;
}

int64_t st_cq_file_end(const st_cq_table_t *tab, int64_t qoff)
{
    return (qoff / tab->per_file + 1) * tab->per_file;
}

/* Number of units before the first all-zero-size unit of seg. */
static int64_t seg_count(const st_cq_table_t *tab, const st_segment_t *seg)
{
    int64_t i;

    for (i = 0; i < tab->per_file; i++)
        if ((int32_t)get_be(seg->base + i * ST_CQ_UNIT + 8, 4) <= 0)
            break;
    return i;
}

/* True if any byte of seg from rel on is non-zero. */
static int seg_dirty_tail(const st_segment_t *seg, int64_t rel)
{
    for (int64_t i = rel; i < seg->size; i++)
        if (seg->base[i])
            return 1;
    return 0;
}

static int seg_all_zero(const st_segment_t *seg)
{
    return !seg_dirty_tail(seg, 0);
}

/* Makes every file of cq durable (recovery repairs only). */
static void cq_sync_all(const st_cq_t *cq)
{
    for (size_t i = 0; i < cq->nseg; i++)
        if (msync(cq->segs[i]->base, (size_t)cq->segs[i]->size, MS_SYNC) != 0)
            LOG_ERROR("msync %s: %s", cq->segs[i]->path, strerror(errno));
}

/* Drops cq's last files from index keep on (unlinked: they lie past the end). */
static void cq_drop_from(st_cq_table_t *tab, st_cq_t *cq, size_t keep)
{
    while (cq->nseg > keep) {
        st_segment_t *seg = cq->segs[cq->nseg - 1];

        pthread_mutex_lock(tab->lock);
        cq->nseg--;
        pthread_mutex_unlock(tab->lock);
        st_segment_unlink(seg);
        st_segment_unref(seg);
    }
}

/* Drops trailing all-zero files after a file that is not full: next files
 * pre-created by the housekeeping thread and never used. They hold no unit;
 * left in the list, the end would be taken as the start of the empty file,
 * past the real end (after a clean stop too). */
static void cq_drop_unused_spares(st_cq_table_t *tab, st_cq_t *cq)
{
    while (cq->nseg > 1) {
        st_segment_t *last = cq->segs[cq->nseg - 1];

        if (seg_count(tab, cq->segs[cq->nseg - 2]) >= tab->per_file || seg_count(tab, last) != 0 ||
            !seg_all_zero(last))
            break;
        LOG_INFO("removing %s: pre-created, never used", last->path);
        cq_drop_from(tab, cq, cq->nseg - 1);
    }
}

/* Finds the end of a loaded queue; deep also repairs a crash's leftovers. */
static void cq_find_end(st_cq_table_t *tab, st_cq_t *cq, int deep)
{
    size_t i;
    int64_t count = 0;

    cq_drop_unused_spares(tab, cq);
    i = (deep && cq->nseg > 1) ? cq->nseg - 2 : cq->nseg - 1;

    for (; i < cq->nseg; i++) {
        count = seg_count(tab, cq->segs[i]);
        if (count < tab->per_file)
            break;
    }
    if (i == cq->nseg) {
        i = cq->nseg - 1;
        count = tab->per_file;
    }
    if (deep) {
        st_segment_t *seg = cq->segs[i];

        if (seg_dirty_tail(seg, count * ST_CQ_UNIT)) {
            LOG_WARN("recovery: zeroing stray units after %" PRId64 " in %s", count, seg->path);
            memset(seg->base + count * ST_CQ_UNIT, 0, (size_t)(seg->size - count * ST_CQ_UNIT));
            cq_sync_all(cq);
        }
        cq_drop_from(tab, cq, i + 1);
    }
    cq->max_offset = cq->segs[i]->start / ST_CQ_UNIT + count;
    for (size_t k = 0; k < cq->nseg; k++) {
        int64_t w = cq->segs[k]->start / ST_CQ_UNIT < cq->max_offset ?
                    (cq->max_offset * ST_CQ_UNIT - cq->segs[k]->start) : 0;

        if (w > cq->segs[k]->size)
            w = cq->segs[k]->size;
        atomic_store(&cq->segs[k]->wrote, w);
        atomic_store(&cq->segs[k]->flushed, w);
    }
    cq->min_offset = cq->segs[0]->start / ST_CQ_UNIT;
    if (cq->max_offset > cq->min_offset) {
        int64_t phys, tag;
        int32_t size;

        st_cq_read(tab, cq, cq->max_offset - 1, &phys, &size, &tag);
        cq->max_phys_end = phys + size;
    }
}

/* Maps the files of one queue directory. */
static rmq_err_t cq_load_dir(st_cq_table_t *tab, const char *topic, int32_t qid, int deep)
{
    st_cq_t *cq = st_cq_table_get(tab, topic, strlen(topic), qid);
    int64_t *starts;
    size_t n;
    rmq_err_t rc;

    if (!cq)
        return RMQ_ENOMEM;
    rc = st_segment_list(cq->dir, &starts, &n);
    for (size_t i = 0; rc == RMQ_OK && i < n; i++) {
        char path[PATH_MAX];
        st_segment_t *seg;

        st_segment_path(path, sizeof(path), cq->dir, starts[i]);
        if (starts[i] % file_bytes(tab) != 0 ||
            (i > 0 && starts[i] != starts[i - 1] + file_bytes(tab))) {
            LOG_ERROR("%s: consume-queue files are not contiguous", path);
            rc = RMQ_ECORRUPT;
            break;
        }
        rc = st_segment_open(path, starts[i], file_bytes(tab), &seg);
        if (rc == RMQ_ECORRUPT && i == n - 1) {
            LOG_WARN("%s: removing a consume-queue file left half-created", path);
            unlink(path);
            rc = RMQ_OK;
            break;
        }
        if (rc == RMQ_OK && (rc = cq_push(tab, cq, seg)) != RMQ_OK)
            st_segment_unref(seg);
    }
    free(starts);
    if (rc == RMQ_OK && cq->nseg > 0)
        cq_find_end(tab, cq, deep);
    return rc;
}

/* Loads every queue id directory of one topic directory. */
static rmq_err_t cq_load_topic(st_cq_table_t *tab, const char *topic, int deep)
{
    char dir[PATH_MAX];
    DIR *d;
    struct dirent *de;
    rmq_err_t rc = RMQ_OK;

    snprintf(dir, sizeof(dir), "%s/%s", tab->root, topic);
    if (!(d = opendir(dir)))
        return RMQ_OK;
    while (rc == RMQ_OK && (de = readdir(d)) != NULL) {
        char *end;
        long qid;

        if (de->d_name[0] == '.')
            continue;
        qid = strtol(de->d_name, &end, 10);
        if (*end || qid < 0 || qid > INT32_MAX)
            continue;
        rc = cq_load_dir(tab, topic, (int32_t)qid, deep);
    }
    closedir(d);
    return rc;
}

rmq_err_t st_cq_table_load(st_cq_table_t *tab, int deep)
{
    DIR *d = opendir(tab->root);
    struct dirent *de;
    rmq_err_t rc = RMQ_OK;

    if (!d)
        return errno == ENOENT ? RMQ_OK : RMQ_EIO;
    while (rc == RMQ_OK && (de = readdir(d)) != NULL) {
        if (de->d_name[0] == '.' || strlen(de->d_name) > 127)
            continue;
        rc = cq_load_topic(tab, de->d_name, deep);
    }
    closedir(d);
    return rc;
}

void st_cq_trim(st_cq_table_t *tab, st_cq_t *cq, int64_t cl_end)
{
    int64_t phys, tag;
    int32_t size;
    int64_t dropped = 0;

    while (cq->max_offset > cq->min_offset &&
           st_cq_read(tab, cq, cq->max_offset - 1, &phys, &size, &tag) &&
           size != ST_CQ_DUMMY_SIZE && phys + size > cl_end) {
        st_segment_t *seg = cq_seg_for(tab, cq, cq->max_offset - 1);
        int64_t rel = (cq->max_offset - 1) * ST_CQ_UNIT - seg->start;

        memset(seg->base + rel, 0, ST_CQ_UNIT);
        atomic_store(&seg->wrote, rel);
        atomic_store(&seg->flushed, rel);
        cq->max_offset--;
        dropped++;
    }
    if (dropped)
        cq_sync_all(cq);
    if (dropped)
        LOG_WARN("recovery: %s/%d: dropped %" PRId64 " units past the log end %" PRId64, cq->topic,
                 (int)cq->queue_id, dropped, cl_end);
    cq->max_phys_end = 0;
    if (cq->max_offset > cq->min_offset &&
        st_cq_read(tab, cq, cq->max_offset - 1, &phys, &size, &tag) && size != ST_CQ_DUMMY_SIZE)
        cq->max_phys_end = phys + size;
}

/* First offset in [lo, hi) whose unit points at or past cl_min (hi if none). */
static int64_t cq_search_min(const st_cq_table_t *tab, const st_cq_t *cq, int64_t lo, int64_t hi,
                             int64_t cl_min)
{
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, phys, tag;
        int32_t size;

        if (!st_cq_read(tab, cq, mid, &phys, &size, &tag) || size == ST_CQ_DUMMY_SIZE ||
            phys < cl_min)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

size_t st_cq_correct_min(st_cq_table_t *tab, st_cq_t *cq, int64_t cl_min, st_segment_t ***out)
{
    size_t n = 0;
    int64_t first, end;

    *out = NULL;
    while (n + 1 < cq->nseg) {
        int64_t last = (cq->segs[n]->start + file_bytes(tab)) / ST_CQ_UNIT - 1, phys, tag;
        int32_t size;

        st_cq_read(tab, cq, last, &phys, &size, &tag);
        if (size != ST_CQ_DUMMY_SIZE && phys >= cl_min)
            break;
        n++;
    }
    if (n > 0 && (*out = malloc(n * sizeof(**out))) != NULL) {
        memcpy(*out, cq->segs, n * sizeof(**out));
        pthread_mutex_lock(tab->lock);
        memmove(cq->segs, cq->segs + n, (cq->nseg - n) * sizeof(*cq->segs));
        cq->nseg -= n;
        pthread_mutex_unlock(tab->lock);
    } else {
        n = 0;
    }
    if (cq->nseg == 0)
        return n;
    first = cq->segs[0]->start / ST_CQ_UNIT;
    end = first + tab->per_file < cq->max_offset ? first + tab->per_file : cq->max_offset;
    cq->min_offset = cq_search_min(tab, cq, first > cq->min_offset ? first : cq->min_offset,
                                   end, cl_min);
    return n;
}
