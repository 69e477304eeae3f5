/* st_retention.c: deleting old commit-log files and the consume-queue files
 * that only point into them.
 *
 * The housekeeping thread decides (file age against file_reserved_hours at
 * a deleteWhen hour, or the oldest file at any time while the disk is above
 * disk_max_used_ratio; never the file being written), unlinks the files
 * (their mappings stay valid) and posts the new minimum offset. The loop
 * then detaches the segments from the list and drops the list's reference;
 * a pull or HA send still holding an evbuffer reference keeps the mapping
 * alive until its buffer releases it, and the last unref unmaps. */
#include <inttypes.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <time.h>

#include "rmq_log.h"
#include "st_internal.h"

#define MAX_FILES_PER_ROUND 10

typedef struct cq_sweep {
    st_store_t *st;
    int64_t cl_min;
} cq_sweep_t;

/* Takes references to every commit-log segment except the last. */
static size_t snapshot_old(st_store_t *st, st_segment_t ***out)
{
    st_commitlog_t *cl = &st->cl;
    size_t n = 0;

    pthread_mutex_lock(cl->lock);
    *out = cl->nseg > 1 ? malloc((cl->nseg - 1) * sizeof(**out)) : NULL;
    if (*out)
        for (n = 0; n + 1 < cl->nseg; n++) {
            st_segment_ref(cl->segs[n]);
            (*out)[n] = cl->segs[n];
        }
    pthread_mutex_unlock(cl->lock);
    return n;
}

static int segment_expired(const st_segment_t *seg, int64_t now_ms, int reserved_hours)
{
    struct stat sb;
    int64_t mtime_ms;

    if (fstat(seg->fd, &sb) != 0)
        return 0;
    mtime_ms = (int64_t)sb.st_mtim.tv_sec * 1000 + sb.st_mtim.tv_nsec / 1000000;
    return mtime_ms + (int64_t)reserved_hours * 3600000 <= now_ms;
}

/* Loop thread: applies a posted new minimum. */
static void on_new_min(st_store_t *st, void *arg)
{
    int64_t *new_min = arg;

    if (st)
        st_retention_apply(st, *new_min);
    free(new_min);
}

void st_retention_run(st_store_t *st, double disk_ratio, int64_t now_ms)
{
    int over = disk_ratio * 100.0 > st->cfg.disk_max_used_ratio;
    time_t now_s = (time_t)(now_ms / 1000);
    struct tm tm;
    st_segment_t **segs;
    size_t n = snapshot_old(st, &segs), del = 0;
    int64_t *new_min;

    localtime_r(&now_s, &tm);
    if (over || st->house.hours[tm.tm_hour])
        while (del < n && del < MAX_FILES_PER_ROUND &&
               (over ? del == 0 : segment_expired(segs[del], now_ms, st->cfg.file_reserved_hours)))
            del++;
    for (size_t i = 0; i < del; i++) {
        LOG_INFO("retention: deleting commit-log file %s%s", segs[i]->path,
                 over ? " (disk above diskMaxUsedSpaceRatio)" : "");
        st_segment_unlink(segs[i]);
    }
    new_min = del ? malloc(sizeof(*new_min)) : NULL;
    if (new_min) {
        *new_min = segs[del - 1]->start + segs[del - 1]->size;
        st_link_post(st->link, on_new_min, new_min);
    }
    for (size_t i = 0; i < n; i++)
        st_segment_unref(segs[i]);
    free(segs);
}

/* Deletes one queue's files that lie wholly below the new minimum. */
static void sweep_cq(st_cq_t *cq, void *arg)
{
    cq_sweep_t *sw = arg;
    st_segment_t **doomed;
    size_t n = st_cq_correct_min(&sw->st->cqs, cq, sw->cl_min, &doomed);

    st_house_unlink_later(sw->st, doomed, n);
}

void st_retention_apply(st_store_t *st, int64_t new_min)
{
    st_segment_t **segs;
    size_t n = st_commitlog_detach_below(&st->cl, new_min, &segs);
    cq_sweep_t sw = { st, 0 };

    for (size_t i = 0; i < n; i++)
        st_segment_unref(segs[i]);
    free(segs);
    sw.cl_min = st_commitlog_min(&st->cl);
    if (n)
        LOG_INFO("retention: commit log now starts at %" PRId64, sw.cl_min);
    st_cq_table_foreach(&st->cqs, sweep_cq, &sw);
    st_index_retain(st, sw.cl_min);
}
