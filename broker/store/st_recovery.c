/* st_recovery.c: bringing the store to a consistent state at open.
 *
 * Loads the commit-log and consume-queue files, then validates records
 * (magic, lengths, CRC32C, self offset) from the checkpoint offset, below
 * which everything was durable, to the first zero, bad or torn record:
 * that is the end. A clean restart (no abort file) therefore reads only the
 * few records written after the last checkpoint, not the whole log. After
 * a crash the tail past the end is zeroed and later files removed,
 * consume-queue units pointing past the end are dropped, and records from
 * the checkpoint on are re-dispatched (idempotently) so the queues match
 * the log. Finally everything is synced and a new checkpoint written.
 * A truncation marker (st_truncate.c) caps the end at its offset, as if
 * the log had been torn there, and is removed once the store is synced. */
#include <inttypes.h>
#include <stdio.h>

#include "rmq_log.h"
#include "rmq_message.h"
#include "st_checkpoint.h"
#include "st_internal.h"

/* Chooses where validation starts; sets *crashed if the checkpoint is bad. */
static int64_t scan_start(st_store_t *st, int *crashed)
{
    st_commitlog_t *cl = &st->cl;
    st_checkpoint_t cp;
    rmq_err_t rc = st_checkpoint_read(st->checkpoint_path, &cp);
    int64_t min = st_commitlog_min(cl), start;

    if (rc != RMQ_OK) {
        if (cl->nseg > 0) {
            LOG_WARN("checkpoint %s: %s; validating the whole log", st->checkpoint_path,
                     rmq_strerror(rc));
            *crashed = 1;
        }
        return min;
    }
    start = cp.cl_offset < min ? min : cp.cl_offset;
    if (cl->nseg > 0 && start > cl->segs[cl->nseg - 1]->start + cl->file_size) {
        LOG_WARN("checkpoint offset %" PRId64 " is past the log; validating its last file", start);
        start = cl->segs[cl->nseg - 1]->start;
        *crashed = 1;
    }
    return start;
}

int64_t st_recovery_scan(st_store_t *st, int64_t start, int64_t limit, int *clean_stop, int64_t *records)
{
    int64_t pos = start;
    st_segment_t *seg;

    *clean_stop = 1;
    while (pos < limit && (seg = st_commitlog_find(&st->cl, pos)) != NULL) {
        int64_t rel = pos - seg->start, seg_end = seg->start + seg->size;
        int64_t avail = (limit < seg_end ? limit : seg_end) - pos;
        const uint8_t *p = st_segment_rptr(seg, rel, avail);
        rmq_record_t rec;
        rmq_err_t rc;

        if (avail >= 4 && !p[0] && !p[1] && !p[2] && !p[3])
            break;
        rc = rmq_record_decode(p, (size_t)avail, 1, &rec);
        if (rc == RMQ_ENOTFOUND && rel + rec.total_size == seg->size && seg_end <= limit) {
            pos = seg_end;
            continue;
        }
        if (rc != RMQ_OK || rec.phys_offset != pos) {
            LOG_WARN("commit log: bad or torn record at %" PRId64 " (%s): the log ends there", pos,
                     rc == RMQ_OK ? "wrong offset" : rc == RMQ_ENOTFOUND ? "end-of-file blank cut short"
                                                                           : rmq_strerror(rc));
            *clean_stop = 0;
            break;
        }
        (*records)++;
        pos += rec.total_size;
    }
    return pos;
}

static void trim_cq(st_cq_t *cq, void *arg)
{
    st_store_t *st = arg;

    st_cq_trim(&st->cqs, cq, st->cl.write_pos);
}

static void correct_cq(st_cq_t *cq, void *arg)
{
    st_store_t *st = arg;
    st_segment_t **doomed;
    size_t n = st_cq_correct_min(&st->cqs, cq, st_commitlog_min(&st->cl), &doomed);

    st_house_unlink_later(st, doomed, n);
}

/* Marks the scanned range unflushed so the closing sync covers it. */
static void mark_unflushed(st_store_t *st, int64_t from)
{
    st_commitlog_t *cl = &st->cl;

    for (size_t i = 0; i < cl->nseg; i++)
        if (cl->segs[i]->start + cl->segs[i]->size > from)
            atomic_store(&cl->segs[i]->flushed, 0);
}

rmq_err_t st_recovery_run(st_store_t *st, int crashed, char *err, size_t errlen)
{
    int64_t start, end, reached, cut;
    int clean_stop;
    rmq_err_t rc = st_truncate_marker_read(st, &cut);

    if (rc != RMQ_OK) {
        snprintf(err, errlen, "reading the truncation marker under %s: %s", st->root_dir, rmq_strerror(rc));
        return rc;
    }
    if (cut >= 0)
        crashed = 1;                 /* zero the tail past the cut, rebuild the index past it */
    rc = st_commitlog_load(&st->cl);
    if (rc == RMQ_OK)
        rc = st_cq_table_load(&st->cqs, crashed);
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "loading store files under %s: %s", st->root_dir, rmq_strerror(rc));
        return rc;
    }
    start = scan_start(st, &crashed);
    if (cut >= 0 && start > cut)
        start = cut;
    end = st_recovery_scan(st, start, INT64_MAX, &clean_stop, &st->recovered_records);
    if (cut >= 0 && end > cut)
        end = cut;
    LOG_INFO("recovery (%s): validated %" PRId64 " records from %" PRId64 ", log ends at %" PRId64 "%s",
             crashed ? "after a crash" : "clean", st->recovered_records, start, end,
             cut >= 0 ? " (finishing a truncation)" : "");
    rc = st_commitlog_truncate(&st->cl, end, crashed || !clean_stop);
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "truncating the commit log at %" PRId64 ": %s", end, rmq_strerror(rc));
        return rc;
    }
    mark_unflushed(st, start);
    st_truncate_point(st, "cut");
    st_cq_table_foreach(&st->cqs, trim_cq, st);
    if ((rc = st_index_recover(st, crashed)) != RMQ_OK) {
        snprintf(err, errlen, "recovering the key index: %s", rmq_strerror(rc));
        return rc;
    }
    reached = st_dispatch_range(st, start, end, 0, 0);
    if (reached != end) {
        snprintf(err, errlen, "rebuilding consume queues stopped at %" PRId64 ": %s", reached,
                 reached < 0 ? rmq_strerror((int)reached) : "short");
        return RMQ_ECORRUPT;
    }
    st_cq_table_foreach(&st->cqs, correct_cq, st);
    rc = st_flush_all(st);
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "syncing the recovered store: %s", rmq_strerror(rc));
        return rc;
    }
    if (cut >= 0 && (rc = st_truncate_marker_clear(st)) != RMQ_OK) {
        snprintf(err, errlen, "removing the truncation marker under %s: %s", st->root_dir, rmq_strerror(rc));
        return rc;
    }
    return RMQ_OK;
}
