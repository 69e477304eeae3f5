/* st_house.c: the housekeeping thread. Runs jobs the loop submits
 * (pre-creating the next commit-log file and the next file of consume
 * queues, the key index's next file (st_index.c), sealing index files,
 * unlinking deleted files) and, every interval, measures the disk
 * (disk_full above disk_full_ratio) and runs retention. Results go back to
 * the loop through st_link_post. When the thread is not started (tests),
 * jobs run inline on the caller and nothing is pre-created.
 *
 * Threads: the job queue is shared under house.mu; spare_pending and the
 * want functions are the loop's; the jobs themselves only use what their
 * job struct carries (copied paths and sizes) plus the store's immutable
 * configuration, and hand segments to the loop through st_link_post. */
#include <errno.h>
#include <inttypes.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <time.h>

#include "rmq_log.h"
#include "rmq_time.h"
#include "st_internal.h"

#define HOUSE_INTERVAL_MS 10000

typedef struct unlink_job {
    st_segment_t **segs;
    size_t n;
} unlink_job_t;

/* A consume queue's next file: request (loop) and result (house). */
typedef struct cq_spare_job {
    char *topic;
    size_t topic_len;
    int32_t queue_id;
    char *dir;
    int64_t start, size;
    int warm;
    rmq_err_t rc;
    st_segment_t *seg;
} cq_spare_job_t;

/* Parses deleteWhen ("04" or "04;16") into the hours table. */
static rmq_err_t parse_hours(int hours[24], const char *spec)
{
    const char *p = spec;

    memset(hours, 0, 24 * sizeof(int));
    while (p && *p) {
        char *end;
        long h = strtol(p, &end, 10);

        if (end == p || h < 0 || h > 23 || (*end && *end != ';'))
            return RMQ_EINVAL;
        hours[h] = 1;
        p = *end ? end + 1 : end;
    }
    return RMQ_OK;
}

rmq_err_t st_house_init(st_store_t *st, const char *delete_when)
{
    st_house_t *h = &st->house;

    memset(h, 0, sizeof(*h));
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    h->interval_ms = HOUSE_INTERVAL_MS;
    return parse_hours(h->hours, delete_when ? delete_when : "04");
}

/* Pops the next job, or waits until one arrives, a stop, or the deadline. */
static st_house_job_t *house_next(st_house_t *h, int64_t deadline_ms, int *stop)
{
    st_house_job_t *job;

    pthread_mutex_lock(&h->mu);
    while (!h->head && !h->stop) {
        int64_t wait = deadline_ms - rmq_mono_ms();
        struct timespec ts;

        if (wait <= 0)
            break;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_sec += wait / 1000;
        ts.tv_nsec += (long)(wait % 1000) * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&h->cv, &h->mu, &ts);
    }
    job = h->head;
    if (job && !(h->head = job->next))
        h->tail = NULL;
    *stop = h->stop;
    pthread_mutex_unlock(&h->mu);
    return job;
}

static void *house_main(void *arg)
{
    st_store_t *st = arg;
    st_house_t *h = &st->house;
    int64_t next_tick = rmq_mono_ms() + h->interval_ms;

    for (;;) {
        int stop;
        st_house_job_t *job = house_next(h, next_tick, &stop);

        if (job) {
            job->fn(st, job->arg);
            free(job);
            continue;
        }
        if (stop)
            break;
        if (rmq_mono_ms() >= next_tick) {
            st_retention_run(st, st_house_disk_check(st), rmq_wall_ms());
            next_tick = rmq_mono_ms() + h->interval_ms;
        }
    }
    return NULL;
}

rmq_err_t st_house_start(st_store_t *st)
{
    st_house_t *h = &st->house;

    h->stop = 0;
    if (pthread_create(&h->thread, NULL, house_main, st) != 0)
        return RMQ_ENOMEM;
    h->running = 1;
    return RMQ_OK;
}

void st_house_stop(st_store_t *st)
{
    st_house_t *h = &st->house;

    if (!h->running)
        return;
    pthread_mutex_lock(&h->mu);
    h->stop = 1;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
    pthread_join(h->thread, NULL);
    h->running = 0;
}

void st_house_deinit(st_store_t *st)
{
    st_house_t *h = &st->house;

    while (h->head) {
        st_house_job_t *job = h->head;

        h->head = job->next;
        job->fn(st, job->arg);
        free(job);
    }
    pthread_cond_destroy(&h->cv);
    pthread_mutex_destroy(&h->mu);
}

void st_house_submit(st_store_t *st, st_job_fn fn, void *arg)
{
    st_house_t *h = &st->house;
    st_house_job_t *job;

    if (!h->running || !(job = malloc(sizeof(*job)))) {
        fn(st, arg);
        return;
    }
    job->fn = fn;
    job->arg = arg;
    job->next = NULL;
    pthread_mutex_lock(&h->mu);
    if (h->tail)
        h->tail->next = job;
    else
        h->head = job;
    h->tail = job;
    pthread_cond_signal(&h->cv);
    pthread_mutex_unlock(&h->mu);
}

/* Loop thread: a pre-created segment (or NULL after a failure) arrived. */
static void on_spare(st_store_t *st, void *arg)
{
    st_segment_t *seg = arg;

    if (!st) {
        if (seg)
            st_segment_unref(seg);
        return;
    }
    st->house.spare_pending = 0;
    if (seg)
        st_commitlog_adopt_spare(&st->cl, seg);
}

/* Housekeeping thread: creates the segment starting at arg. */
static void job_create_spare(st_store_t *st, void *arg)
{
    int64_t start = (int64_t)(intptr_t)arg;
    st_segment_t *seg = NULL;
    /* warmMapedFileEnable with the transient pool: zeros written with
     * write() (page cache warm, no unwritten extents left for the syncs
     * after each append to convert) instead of touching the mapping */
    int flags = !st->cfg.warm_mapped_files ? 0 : st->pool ? ST_SEG_ZEROS : ST_SEG_WARM;
    rmq_err_t rc = st_segment_create(st->cl_dir, start, st->cl.file_size, flags, "house", &seg);

    if (rc != RMQ_OK && rc != RMQ_EEXIST)
        LOG_WARN("pre-creating commit-log file %" PRId64 ": %s", start, rmq_strerror(rc));
    st_link_post(st->link, on_spare, rc == RMQ_OK ? seg : NULL);
}

void st_house_want_spare(st_store_t *st)
{
    st_commitlog_t *cl = &st->cl;
    int64_t next;

    if (!st->house.running || st->house.spare_pending || cl->spare)
        return;
    next = cl->nseg ? cl->segs[cl->nseg - 1]->start + cl->file_size
                    : cl->write_pos - cl->write_pos % cl->file_size;
    st->house.spare_pending = 1;
    st_house_submit(st, job_create_spare, (void *)(intptr_t)next);
}

static void cq_spare_job_free(cq_spare_job_t *job)
{
    free(job->topic);
    free(job->dir);
    free(job);
}

/* Loop thread: a consume queue's pre-created next file (or a failure)
 * arrived. The queue is looked up again: it may have rolled past the file
 * already (the loop then created or took that file), or been deleted. */
static void on_cq_spare(st_store_t *st, void *arg)
{
    cq_spare_job_t *job = arg;
    st_segment_t *seg = job->seg;
    st_cq_t *cq;
    int kept;

    if (!st) {                       /* closed: an unused file the loader drops */
        if (seg)
            st_segment_unref(seg);
        cq_spare_job_free(job);
        return;
    }
    cq = st_cq_table_find(&st->cqs, job->topic, job->topic_len, job->queue_id);
    if (cq) {
        cq->spare_pending = 0;
        if (!seg)                    /* the loop creates that one (EEXIST: or takes it) */
            cq->spare_failed_at = job->start;
    }
    kept = seg ? (cq ? st_cq_adopt_spare(&st->cqs, cq, seg) : -1) : 1;
    if (kept == 0) {
        st_segment_unref(seg);
    } else if (kept < 0) {
        /* past the queue's end (the queue was deleted or recreated): unlink
         * it now, on the loop, so the queue cannot reach and reuse that
         * file before a deferred unlink runs (rare) */
        LOG_INFO("removing %s: pre-created for a queue that no longer needs it", seg->path);
        st_segment_unlink(seg);
        st_segment_unref(seg);
    }
    cq_spare_job_free(job);
}

/* Housekeeping thread: creates a consume queue's next file in place. */
static void job_create_cq_spare(st_store_t *st, void *arg)
{
    cq_spare_job_t *job = arg;

    job->rc = st_segment_create(job->dir, job->start, job->size, job->warm, "house", &job->seg);
    if (job->rc != RMQ_OK) {
        if (job->rc != RMQ_EEXIST)
            LOG_WARN_RL("pre-creating consume-queue file %s/%020" PRId64 ": %s", job->dir, job->start,
                        rmq_strerror(job->rc));
        job->seg = NULL;
    }
    st_link_post(st->link, on_cq_spare, job);
}

void st_house_want_cq_spare(st_store_t *st, st_cq_t *cq)
{
    cq_spare_job_t *job;

    if (!st->house.running || st->shutting_down || !st_cq_wants_spare(&st->cqs, cq))
        return;
    job = calloc(1, sizeof(*job));
    if (!job || !(job->topic = malloc(cq->topic_len + 1)) || !(job->dir = strdup(cq->dir))) {
        if (job)
            free(job->topic);
        free(job);
        return;
    }
    memcpy(job->topic, cq->topic, cq->topic_len + 1);
    job->topic_len = cq->topic_len;
    job->queue_id = cq->queue_id;
    job->start = st_cq_next_file(&st->cqs, cq);
    job->size = st->cqs.per_file * ST_CQ_UNIT;
    job->warm = st->cfg.warm_mapped_files;
    cq->spare_pending = 1;
    st_house_submit(st, job_create_cq_spare, job);
}

/* Unlinks and releases the segments of an unlink job. */
static void job_unlink(st_store_t *st, void *arg)
{
    unlink_job_t *job = arg;

    (void)st;
    for (size_t i = 0; i < job->n; i++) {
        st_segment_unlink(job->segs[i]);
        st_segment_unref(job->segs[i]);
    }
    free(job->segs);
    free(job);
}

void st_house_unlink_later(st_store_t *st, st_segment_t **segs, size_t n)
{
    unlink_job_t *job;

    if (n == 0) {
        free(segs);
        return;
    }
    job = malloc(sizeof(*job));
    if (!job) {
        unlink_job_t tmp = { segs, n };

        for (size_t i = 0; i < tmp.n; i++) {
            st_segment_unlink(tmp.segs[i]);
            st_segment_unref(tmp.segs[i]);
        }
        free(segs);
        return;
    }
    job->segs = segs;
    job->n = n;
    st_house_submit(st, job_unlink, job);
}

/* Used fraction of the file system holding dir (statvfs). */
static double statvfs_ratio(const char *dir)
{
    struct statvfs sv;

    if (statvfs(dir, &sv) != 0 || sv.f_blocks == 0) {
        LOG_WARN_RL("statvfs(%s): %s", dir, strerror(errno));
        return 0.0;
    }
    return (double)(sv.f_blocks - sv.f_bfree) / (double)sv.f_blocks;
}

double st_house_disk_check(st_store_t *st)
{
    double ratio = st->hooks.disk_ratio ? st->hooks.disk_ratio(st->cl_dir, st->hooks.disk_arg)
                                        : statvfs_ratio(st->cl_dir);
    int full = ratio * 100.0 > st->cfg.disk_full_ratio;

    atomic_store(&st->disk_ratio_ppm, (int64_t)(ratio * 1e6));
    if (atomic_exchange(&st->disk_full, full) != full) {
        if (full)
            LOG_ERROR("disk %s is %.1f%% full (limit %d%%): refusing writes", st->cl_dir,
                      ratio * 100.0, st->cfg.disk_full_ratio);
        else
            LOG_INFO("disk %s back to %.1f%%: accepting writes", st->cl_dir, ratio * 100.0);
    }
    return ratio;
}
