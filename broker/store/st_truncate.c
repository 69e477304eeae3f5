/* st_truncate.c: cutting the log back to an offset (a controller-mode
 * broker that followed a deposed master keeps only what the new master
 * has), crash-safely.
 *
 * The target first goes into a small durable marker, ROOT/truncate. The cut
 * itself is recovery's: the store drops its in-memory maps and
 * st_recovery_run reloads them with the marker's offset as the end of the
 * log, the same rule that trims a torn tail (commit log zeroed past it and
 * later files removed, consume-queue units pointing past it dropped, the
 * key index rebuilt past the files it keeps, a new checkpoint). Recovery
 * removes the marker once the store is consistent and durable, so a crash
 * anywhere before that finishes the cut at the next open.
 *
 * A slave about to become master trims the same way the torn tail that a
 * byte-range HA chunk leaves (st_store_trim_torn_tail). */
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "rmq_log.h"
#include "rmq_file.h"
#include "st_internal.h"

#define MARKER_NAME "truncate"

static void marker_path(const st_store_t *st, char *out, size_t len)
{
    snprintf(out, len, "%s/" MARKER_NAME, st->root_dir);
}

rmq_err_t st_truncate_marker_read(st_store_t *st, int64_t *offset)
{
    char path[PATH_MAX], *text = NULL, *end;
    size_t len = 0;
    rmq_err_t rc;

    *offset = -1;
    marker_path(st, path, sizeof(path));
    rc = rmq_file_read_all(path, &text, &len);
    if (rc == RMQ_ENOTFOUND)
        return RMQ_OK;
    if (rc != RMQ_OK)
        return rc;
    long long v = strtoll(text, &end, 10);
    rc = end != text && *end == '\n' && end + 1 == text + len && v >= 0 ? RMQ_OK : RMQ_ECORRUPT;
    if (rc == RMQ_OK)
        *offset = v;
    free(text);
    return rc;
}

rmq_err_t st_truncate_marker_clear(st_store_t *st)
{
    char path[PATH_MAX];

    marker_path(st, path, sizeof(path));
    if (unlink(path) != 0)
        return RMQ_EIO;
    return rmq_file_sync_dir(st->root_dir);
}

/* Writes the marker durably. */
static rmq_err_t marker_write(st_store_t *st, int64_t offset)
{
    char path[PATH_MAX], text[32];
    int n = snprintf(text, sizeof(text), "%" PRId64 "\n", offset);

    marker_path(st, path, sizeof(path));
    return rmq_file_write_atomic(path, text, (size_t)n);
}

void st_truncate_point(st_store_t *st, const char *point)
{
    if (st->hooks.truncate_point)
        st->hooks.truncate_point(st, point, st->hooks.truncate_arg);
}

rmq_err_t st_store_truncate(st_store_t *st, int64_t offset, char *err, size_t errlen)
{
    int running = st->flush.running;
    rmq_err_t rc;

    if (offset >= st->cl.write_pos)
        return RMQ_OK;
    if (offset < st_commitlog_min(&st->cl)) {
        snprintf(err, errlen, "cannot truncate the log to %" PRId64 ": below its first retained "
                 "offset %" PRId64, offset, st_commitlog_min(&st->cl));
        return RMQ_EINVAL;
    }
    if (atomic_load(&st->write_error) || st->shutting_down) {
        snprintf(err, errlen, "cannot truncate the log: the store is %s",
                 st->shutting_down ? "closing" : "read-only after a write error");
        return RMQ_EREADONLY;
    }
    LOG_WARN("truncating the log from %" PRId64 " back to %" PRId64, st->cl.write_pos, offset);
    st_flush_stop(st);
    st_house_stop(st);
    if ((rc = marker_write(st, offset)) != RMQ_OK) {
        snprintf(err, errlen, "cannot write the truncation marker under %s: %s", st->root_dir,
                 rmq_strerror(rc));
        goto out;
    }
    st_truncate_point(st, "marker");
    rc = st_store_reload(st, err, errlen);
out:
    if (running) {
        rmq_err_t rc2 = st_store_resume(st);

        if (rc == RMQ_OK && rc2 != RMQ_OK) {
            snprintf(err, errlen, "restarting the store threads after the truncation: %s",
                     rmq_strerror(rc2));
            rc = rc2;
        }
    }
    return rc;
}

rmq_err_t st_store_trim_torn_tail(st_store_t *st, char *err, size_t errlen)
{
    int64_t from = st->cl.write_pos, records = 0;
    int clean_stop;
    int64_t end = st_recovery_scan(st, atomic_load(&st->dispatched), from, &clean_stop, &records);

    if (end >= from)
        return RMQ_OK;
    LOG_WARN("trimming the log's torn tail before writing as a master: %" PRId64 " bytes from %" PRId64
             " back to %" PRId64 ", the end of its last whole record", from - end, from, end);
    return st_store_truncate(st, end, err, errlen);
}
