/* st_index.c: the key index files (see st_index.h for the format and the
 * durability rule), and the store-level query that verifies candidates
 * against the commit log.
 *
 * Durability: entries are written through the mapping and reach the disk
 * when a full file is sealed (housekeeping thread: msync, then
 * index/checkpoint := its end offset) or at a clean close (all files
 * synced, checkpoint := the dispatched end of the log). The checkpoint
 * means "every record below it is indexed in a synced file" and never
 * moves back. At open only files ending at or below the checkpoint and the
 * commit log's end are kept; the rest are deleted and the log re-indexed
 * from where the kept ones end (or from the checkpoint when none was
 * dropped), which is idempotent.
 *
 * Pre-created files: a file is named by the offset of the first record it
 * indexes, unknown until the roll, so the housekeeping thread prepares the
 * next file (preallocated, synced, mapped) under the neutral name
 * SPARE_NAME, and the roll renames it into place (one rename, no
 * fallocate/fsync on the loop). A file is created synchronously on the loop
 * only when no spare is ready. A spare is asked for when the active file is
 * half full (or at start when there is none yet), and not asked again for
 * the same active file after a failed attempt (a full disk would otherwise
 * retry on every add). A renamed file's directory entry is made durable by
 * the seal job (directory fsync before index/checkpoint moves) or at a clean
 * close; after a crash it is either under its final name (handled like any
 * file not covered by the checkpoint: rebuilt) or still under SPARE_NAME,
 * which st_segment_list removes as an interrupted creation, and the records
 * it held are re-indexed because the checkpoint never covered them.
 *
 * Threads: everything in st_index_t belongs to the loop thread (including
 * spare and spare_pending). The housekeeping thread runs job_seal (syncs a
 * referenced segment, writes index/checkpoint) and job_spare (creates the
 * spare from the copied directory path and size, then posts the segment to
 * the loop with st_link_post); it never touches st_index_t. */
#include "st_index.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_file.h"
#include "st_internal.h"

#define MAX_KEYS_PER_MSG 64

struct st_index {
    char *dir;
    char *ckpt_path;
    int32_t slot_num, index_num;
    int disabled;
    st_segment_t **files;            /* oldest first; the last one is active */
    size_t n, cap;
    st_segment_t *spare;             /* next file, ready under SPARE_NAME, or NULL */
    int spare_pending;               /* a job_spare is in flight */
    int64_t spare_failed_at;         /* active start when one failed (SPARE_NONE: none) */
    int64_t files_precreated;        /* files taken from a spare (stats) */
    int64_t files_created_sync;      /* files created on the loop (stats) */
};

/* The spare's name: "<20 digits>.<suffix>", so a listing removes it. */
#define SPARE_NAME "00000000000000000000.spare"
#define SPARE_NONE INT64_MIN

typedef struct seal_job {
    st_segment_t *seg;
    char *ckpt_path;
    char *dir;
    int64_t end_phys;
} seal_job_t;

typedef struct spare_job {
    char *dir;                       /* copy of the index directory */
    int64_t size;
    int warm;
    int64_t active;                  /* start of the active file at the request, -1 if none */
    st_segment_t *seg;               /* result (NULL on failure) */
} spare_job_t;

int64_t st_index_file_size(int32_t slot_num, int32_t index_num)
{
    return ST_INDEX_HEADER + (int64_t)slot_num * ST_INDEX_SLOT + (int64_t)index_num * ST_INDEX_ENTRY;
}

/* ---- header and entries (host byte order, unaligned-safe) ---- */

static void header_get(const st_segment_t *seg, st_index_header_t *h)
{
    const uint8_t *p = seg->base;

    memcpy(&h->begin_ts, p, 8);
    memcpy(&h->end_ts, p + 8, 8);
    memcpy(&h->begin_phys, p + 16, 8);
    memcpy(&h->end_phys, p + 24, 8);
    memcpy(&h->slot_num, p + 32, 4);
    memcpy(&h->index_count, p + 36, 4);
}

static void header_put(st_segment_t *seg, const st_index_header_t *h)
{
    uint8_t *p = seg->base;

    memcpy(p, &h->begin_ts, 8);
    memcpy(p + 8, &h->end_ts, 8);
    memcpy(p + 16, &h->begin_phys, 8);
    memcpy(p + 24, &h->end_phys, 8);
    memcpy(p + 32, &h->slot_num, 4);
    memcpy(p + 36, &h->index_count, 4);
}

/* Entries the file can hold (entry 0 unused), from its own header. */
/* a - b and a + b saturated to the int64 range: store timestamps come from
 * records and headers on disk and can hold anything. */
static int64_t sat_sub(int64_t a, int64_t b)
{
    int64_t d;

    if (__builtin_sub_overflow(a, b, &d))
        return a < b ? INT64_MIN : INT64_MAX;
    return d;
}

static int64_t sat_add(int64_t a, int64_t b)
{
    int64_t d;

    if (__builtin_add_overflow(a, b, &d))
        return b < 0 ? INT64_MIN : INT64_MAX;
    return d;
}

static int32_t file_capacity(const st_segment_t *seg, const st_index_header_t *h)
{
    int64_t room = seg->size - ST_INDEX_HEADER - (int64_t)h->slot_num * ST_INDEX_SLOT;

    return room < ST_INDEX_ENTRY ? 0 : (int32_t)(room / ST_INDEX_ENTRY);
}

static uint8_t *slot_at(st_segment_t *seg, int32_t slot)
{
    return seg->base + ST_INDEX_HEADER + (int64_t)slot * ST_INDEX_SLOT;
}

static uint8_t *entry_at(st_segment_t *seg, int32_t slot_num, int32_t i)
{
    return seg->base + ST_INDEX_HEADER + (int64_t)slot_num * ST_INDEX_SLOT + (int64_t)i * ST_INDEX_ENTRY;
}

/* abs(Java hashCode of "topic#key"), MIN_VALUE mapped to 0. */
static int32_t key_hash(const char *topic, size_t topic_len, const char *key, size_t key_len)
{
    char buf[512];
    size_t len = topic_len + 1 + key_len;
    int32_t h;

    /* a text over 511 bytes is cut there and its hash takes a NUL as byte
     * 512, as in the files written so far */
    if (len > sizeof(buf))
        len = sizeof(buf);
    memcpy(buf, topic, topic_len < sizeof(buf) - 1 ? topic_len : sizeof(buf) - 1);
    if (topic_len < sizeof(buf) - 1) {
        buf[topic_len] = '#';
        memcpy(buf + topic_len + 1, key, len - topic_len - 1);
    }
    buf[sizeof(buf) - 1] = '\0';
    h = (int32_t)st_tag_hash(buf, len);
    return h == INT32_MIN ? 0 : h < 0 ? -h : h;
}

/* ---- lifetime ---- */

st_index_t *st_index_new(const char *dir, int32_t slot_num, int32_t index_num, int disabled)
{
    st_index_t *ix = calloc(1, sizeof(*ix));
    size_t len = strlen(dir) + sizeof("/checkpoint");

    if (!ix)
        return NULL;
    ix->dir = strdup(dir);
    ix->ckpt_path = malloc(len);
    if (!ix->dir || !ix->ckpt_path) {
        st_index_free(ix);
        return NULL;
    }
    snprintf(ix->ckpt_path, len, "%s/checkpoint", dir);
    ix->slot_num = slot_num > 0 ? slot_num : 1;
    ix->index_num = index_num > 1 ? index_num : 2;
    ix->disabled = disabled;
    ix->spare_failed_at = SPARE_NONE;
    return ix;
}

void st_index_free(st_index_t *ix)
{
    if (!ix)
        return;
    for (size_t i = 0; i < ix->n; i++)
        st_segment_unref(ix->files[i]);
    if (ix->spare) {                 /* never used: no reason to keep its blocks */
        st_segment_unlink(ix->spare);
        st_segment_unref(ix->spare);
    }
    free(ix->files);
    free(ix->dir);
    free(ix->ckpt_path);
    free(ix);
}

static rmq_err_t files_push(st_index_t *ix, st_segment_t *seg)
{
    if (ix->n == ix->cap) {
        size_t cap = ix->cap ? ix->cap * 2 : 8;
        st_segment_t **f = realloc(ix->files, cap * sizeof(*f));

        if (!f)
            return RMQ_ENOMEM;
        ix->files = f;
        ix->cap = cap;
    }
    ix->files[ix->n++] = seg;
    return RMQ_OK;
}

size_t st_index_file_count(const st_index_t *ix)
{
    return ix ? ix->n : 0;
}

void st_index_file_stats(const st_index_t *ix, int64_t *precreated, int64_t *created_sync,
                         int *spare_ready)
{
    *precreated = ix ? ix->files_precreated : 0;
    *created_sync = ix ? ix->files_created_sync : 0;
    *spare_ready = ix && ix->spare != NULL;
}

void st_index_file_header(const st_index_t *ix, size_t i, st_index_header_t *h)
{
    header_get(ix->files[i], h);
}

/* ---- durability ---- */

/* The end offset recorded as durable, 0 if none. Any thread. */
static int64_t ckpt_read(const char *path)
{
    char *data;
    size_t len;
    int64_t v = 0;

    if (rmq_file_read_all(path, &data, &len) != RMQ_OK)
        return 0;
    if (sscanf(data, "%" SCNd64, &v) != 1 || v < 0)
        v = 0;
    free(data);
    return v;
}

static rmq_err_t ckpt_write(const char *path, int64_t end)
{
    char buf[32];
    int len = snprintf(buf, sizeof(buf), "%" PRId64 "\n", end);

    return rmq_file_write_atomic(path, buf, (size_t)len);
}

/* Housekeeping thread: syncs a sealed file, then records it as durable. */
static void job_seal(st_store_t *st, void *arg)
{
    seal_job_t *job = arg;
    st_sync_fn sync = st && st->hooks.sync ? st->hooks.sync : st_segment_msync;
    rmq_err_t rc = st_segment_flush(job->seg, sync, st ? st->hooks.sync_arg : NULL);

    /* the file may have been renamed into place from a spare: its name
     * must be durable before the checkpoint says it holds these records */
    if (rc == RMQ_OK)
        rc = rmq_file_sync_dir(job->dir);
    if (rc == RMQ_OK && job->end_phys > ckpt_read(job->ckpt_path))   /* never moves back */
        rc = ckpt_write(job->ckpt_path, job->end_phys);
    if (rc != RMQ_OK)
        LOG_ERROR_RL("index file %s: sync failed (%s); it will be rebuilt after a crash",
                     job->seg->path, rmq_strerror(rc));
    st_segment_unref(job->seg);
    free(job->ckpt_path);
    free(job->dir);
    free(job);
}

/* Hands the active file to the housekeeping thread for its sync. */
static void seal_active(st_store_t *st, st_index_t *ix)
{
    st_segment_t *seg = ix->files[ix->n - 1];
    seal_job_t *job = calloc(1, sizeof(*job));
    st_index_header_t h;

    header_get(seg, &h);
    if (!job || !(job->ckpt_path = strdup(ix->ckpt_path)) || !(job->dir = strdup(ix->dir))) {
        if (job)
            free(job->ckpt_path);
        free(job);
        LOG_ERROR_RL("index: out of memory sealing %s", seg->path);
        return;
    }
    atomic_store(&seg->wrote, seg->size);
    st_segment_ref(seg);
    job->seg = seg;
    job->end_phys = h.end_phys;
    st_house_submit(st, job_seal, job);
}

rmq_err_t st_index_sync_all(st_store_t *st)
{
    st_index_t *ix = st->index;
    st_sync_fn sync = st->hooks.sync ? st->hooks.sync : st_segment_msync;
    rmq_err_t rc = RMQ_OK;

    if (!ix || ix->disabled)
        return RMQ_OK;
    for (size_t i = 0; i < ix->n && rc == RMQ_OK; i++) {
        atomic_store(&ix->files[i]->wrote, ix->files[i]->size);
        rc = st_segment_flush(ix->files[i], sync, st->hooks.sync_arg);
    }
    if (rc == RMQ_OK)                /* names of files renamed from spares */
        rc = rmq_file_sync_dir(ix->dir);
    /* every record dispatched so far is indexed in a synced file */
    if (rc == RMQ_OK)
        rc = ckpt_write(ix->ckpt_path, atomic_load(&st->dispatched));
    if (rc != RMQ_OK)
        LOG_ERROR("index: syncing at close failed: %s", rmq_strerror(rc));
    return rc;
}

/* ---- building ---- */

/* Housekeeping thread: creates the spare file, then posts it to the loop. */
static void job_spare(st_store_t *st, void *arg);

/* Loop thread: a spare arrived (job->seg, or NULL after a failure). */
static void on_spare(st_store_t *st, void *arg)
{
    spare_job_t *job = arg;
    st_segment_t *seg = job->seg;
    st_index_t *ix = st ? st->index : NULL;

    if (ix) {
        ix->spare_pending = 0;
        if (!seg)
            ix->spare_failed_at = job->active;
    }
    if (seg && ix && !ix->spare && !ix->disabled) {
        ix->spare = seg;
    } else if (seg) {                /* store closed, or not wanted: never placed */
        st_segment_unlink(seg);
        st_segment_unref(seg);
    }
    free(job->dir);
    free(job);
}

static void job_spare(st_store_t *st, void *arg)
{
    spare_job_t *job = arg;
    rmq_err_t rc = st_segment_create_spare(job->dir, SPARE_NAME, job->size, job->warm, &job->seg);

    if (rc != RMQ_OK) {
        LOG_WARN_RL("index: pre-creating the next file: %s", rmq_strerror(rc));
        job->seg = NULL;
    }
    st_link_post(st->link, on_spare, job);
}

void st_index_want_spare(st_store_t *st)
{
    st_index_t *ix = st->index;
    int64_t active;
    spare_job_t *job;

    if (!ix || ix->disabled || ix->spare || ix->spare_pending || !st->house.running ||
        st->shutting_down)
        return;
    active = ix->n > 0 ? ix->files[ix->n - 1]->start : -1;
    if (active == ix->spare_failed_at)
        return;                      /* failed for this file already: wait for the roll */
    if (ix->n > 0) {
        st_index_header_t h;

        header_get(ix->files[ix->n - 1], &h);
        if ((int64_t)h.index_count * 2 < file_capacity(ix->files[ix->n - 1], &h))
            return;                  /* less than half full */
    }
    if (!(job = calloc(1, sizeof(*job))) || !(job->dir = strdup(ix->dir))) {
        free(job);
        return;
    }
    job->size = st_index_file_size(ix->slot_num, ix->index_num);
    job->warm = st->cfg.warm_mapped_files;
    job->active = active;
    ix->spare_pending = 1;
    st_house_submit(st, job_spare, job);
}

/* Takes the spare as the file starting at phys, or NULL if there is none
 * or it cannot be renamed (then it is dropped). */
static st_segment_t *take_spare(st_index_t *ix, int64_t phys)
{
    st_segment_t *seg = ix->spare;

    if (!seg)
        return NULL;
    ix->spare = NULL;
    if (st_segment_place(seg, ix->dir, phys) != RMQ_OK) {
        st_segment_unlink(seg);
        st_segment_unref(seg);
        return NULL;
    }
    ix->files_precreated++;
    return seg;
}

/* Creates a new active file for records from phys on: the spare when one
 * is ready, else synchronously (blocking the loop for the preallocation). */
static rmq_err_t roll(st_store_t *st, st_index_t *ix, int64_t phys, int64_t store_ts)
{
    int64_t size = st_index_file_size(ix->slot_num, ix->index_num);
    st_index_header_t h = {store_ts, store_ts, phys, phys, ix->slot_num, 1};
    char path[PATH_MAX];
    st_segment_t *seg;
    rmq_err_t rc;

    if (ix->n > 0)
        seal_active(st, ix);
    ix->spare_failed_at = SPARE_NONE;
    if ((seg = take_spare(ix, phys)) == NULL) {
        st_segment_path(path, sizeof(path), ix->dir, phys);
        unlink(path);                /* a leftover of a file deleted at recovery */
        rc = st_segment_create(ix->dir, phys, size, 0, "idx", &seg);
        if (rc != RMQ_OK) {
            LOG_ERROR_RL("index: cannot create a file at %" PRId64 ": %s", phys, rmq_strerror(rc));
            return rc;
        }
        ix->files_created_sync++;
    }
    header_put(seg, &h);
    if ((rc = files_push(ix, seg)) != RMQ_OK) {
        st_segment_unlink(seg);
        st_segment_unref(seg);
    }
    return rc;
}

/* Splits KEYS on spaces and adds UNIQ_KEY; returns the count. */
static size_t collect_keys(const char *props, size_t props_len, const char **keys, size_t *lens)
{
    size_t n = 0, vlen;
    const char *v = props ? rmq_props_get(props, props_len, RMQ_PROP_UNIQ_KEY, &vlen) : NULL;

    if (v && vlen > 0) {
        keys[n] = v;
        lens[n++] = vlen;
    }
    v = props ? rmq_props_get(props, props_len, RMQ_PROP_KEYS, &vlen) : NULL;
    for (size_t i = 0; v && i < vlen && n < MAX_KEYS_PER_MSG;) {
        size_t j = i;

        while (j < vlen && v[j] != ' ')
            j++;
        if (j > i) {
            keys[n] = v + i;
            lens[n++] = j - i;
        }
        i = j + 1;
    }
    return n;
}

/* Writes one entry into seg (header h, updated by the caller). */
static void put_entry(st_segment_t *seg, st_index_header_t *h, int32_t hash, int64_t phys,
                      int64_t store_ts)
{
    int32_t slot = hash % h->slot_num, prev, diff;
    int64_t d = sat_sub(store_ts, h->begin_ts) / 1000;
    uint8_t *e = entry_at(seg, h->slot_num, h->index_count);

    memcpy(&prev, slot_at(seg, slot), 4);
    if (prev < 0 || prev >= h->index_count)
        prev = 0;
    diff = d < 0 ? 0 : d > INT32_MAX ? INT32_MAX : (int32_t)d;
    memcpy(e, &hash, 4);
    memcpy(e + 4, &phys, 8);
    memcpy(e + 12, &diff, 4);
    memcpy(e + 16, &prev, 4);
    memcpy(slot_at(seg, slot), &h->index_count, 4);
    h->index_count++;
}

rmq_err_t st_index_add(st_store_t *st, const char *topic, size_t topic_len, const char *props,
                       size_t props_len, int64_t phys, int32_t size, int64_t store_ts)
{
    st_index_t *ix = st->index;
    const char *keys[MAX_KEYS_PER_MSG];
    size_t lens[MAX_KEYS_PER_MSG], nkeys;
    st_index_header_t h = {0};
    st_segment_t *seg;
    int32_t cap = 0;
    rmq_err_t rc;

    if (!ix || ix->disabled || !props)
        return RMQ_OK;
    if (ix->n > 0) {
        header_get(ix->files[ix->n - 1], &h);
        if (phys < h.end_phys)
            return RMQ_OK;          /* replayed: already indexed */
    }
    if ((nkeys = collect_keys(props, props_len, keys, lens)) == 0)
        return RMQ_OK;
    if (ix->n > 0) {
        seg = ix->files[ix->n - 1];
        cap = file_capacity(seg, &h);
        if (h.index_count + (int64_t)nkeys > cap || sat_sub(store_ts, h.begin_ts) > (int64_t)INT32_MAX * 1000)
            seg = NULL;
    } else {
        seg = NULL;
    }
    if (!seg) {
        if ((rc = roll(st, ix, phys, store_ts)) != RMQ_OK)
            return rc;
        seg = ix->files[ix->n - 1];
        header_get(seg, &h);
        cap = file_capacity(seg, &h);
    }
    for (size_t i = 0; i < nkeys && h.index_count < cap; i++)
        put_entry(seg, &h, key_hash(topic, topic_len, keys[i], lens[i]), phys, store_ts);
    if (store_ts > h.end_ts)
        h.end_ts = store_ts;
    h.end_phys = phys + size;
    header_put(seg, &h);
    if (!ix->spare && !ix->spare_pending && (int64_t)h.index_count * 2 >= cap)
        st_index_want_spare(st);
    return RMQ_OK;
}

/* ---- recovery and retention ---- */

/* Checks a loaded file's header against its size and position. */
static int header_sane(const st_segment_t *seg, const st_index_header_t *h)
{
    return h->slot_num > 0 && (int64_t)h->slot_num * ST_INDEX_SLOT < seg->size &&
           h->index_count >= 1 && h->index_count <= file_capacity(seg, h) &&
           h->begin_phys == seg->start && h->end_phys >= h->begin_phys;
}

/* Re-indexes the records of [from, to). */
static void reindex(st_store_t *st, int64_t from, int64_t to)
{
    int64_t pos = from, count = 0;

    while (pos < to) {
        st_segment_t *seg = st_commitlog_find(&st->cl, pos);
        int64_t seg_end, lim;
        rmq_record_t rec;
        rmq_err_t rc;

        if (!seg)
            break;
        seg_end = seg->start + seg->size;
        lim = to < seg_end ? to : seg_end;
        rc = rmq_record_decode(st_segment_rptr(seg, pos - seg->start, lim - pos), (size_t)(lim - pos), 0, &rec);
        if (rc == RMQ_ENOTFOUND && pos + rec.total_size == seg_end) {
            pos = seg_end;
            continue;
        }
        if (rc != RMQ_OK)
            break;
        st_index_add(st, rec.topic, rec.topic_len, rec.properties, rec.properties_len, pos,
                     (int32_t)rec.total_size, rec.store_timestamp);
        pos += rec.total_size;
        count++;
    }
    if (count > 0)
        LOG_INFO("index: re-indexed %" PRId64 " records from %" PRId64 " to %" PRId64, count, from, pos);
}

rmq_err_t st_index_recover(st_store_t *st, int crashed)
{
    st_index_t *ix = st->index;
    int64_t *starts = NULL, durable, cl_end = st->cl.write_pos, cl_min = st_commitlog_min(&st->cl);
    int64_t size, from;
    size_t n = 0;
    int keep = 1, dropped = 0;
    rmq_err_t rc;

    if (!ix || ix->disabled)
        return RMQ_OK;
    if ((rc = rmq_file_mkdirs(ix->dir)) != RMQ_OK || (rc = st_segment_list(ix->dir, &starts, &n)) != RMQ_OK)
        return rc;
    durable = ckpt_read(ix->ckpt_path);
    size = st_index_file_size(ix->slot_num, ix->index_num);
    for (size_t i = 0; i < n; i++) {
        char path[PATH_MAX];
        st_segment_t *seg = NULL;
        st_index_header_t h;

        st_segment_path(path, sizeof(path), ix->dir, starts[i]);
        if (keep && st_segment_open(path, starts[i], size, &seg) == RMQ_OK) {
            header_get(seg, &h);
            if (header_sane(seg, &h) && h.end_phys <= durable && h.end_phys <= cl_end &&
                h.end_phys > cl_min && files_push(ix, seg) == RMQ_OK)
                continue;
            if (header_sane(seg, &h) && h.end_phys <= cl_min) {
                st_segment_unlink(seg);  /* wholly expired */
                st_segment_unref(seg);
                continue;
            }
        }
        if (keep)
            LOG_INFO("index: rebuilding from %s (%s)", path,
                     crashed ? "not durable at the crash" : "past the durable point");
        keep = 0;
        dropped = 1;
        if (seg) {
            st_segment_unlink(seg);
            st_segment_unref(seg);
        } else {
            unlink(path);
        }
    }
    free(starts);
    from = cl_min;
    if (ix->n > 0) {
        st_index_header_t h;

        header_get(ix->files[ix->n - 1], &h);
        if (h.end_phys > from)
            from = h.end_phys;
    }
    if (!dropped && durable > from)   /* records up to the checkpoint carry no keys */
        from = durable < cl_end ? durable : cl_end;
    reindex(st, from, cl_end);
    return RMQ_OK;
}

void st_index_retain(st_store_t *st, int64_t cl_min)
{
    st_index_t *ix = st->index;
    size_t del = 0;

    if (!ix || ix->disabled)
        return;
    while (del + 1 < ix->n) {
        st_index_header_t h;

        header_get(ix->files[del], &h);
        if (h.end_phys > cl_min)
            break;
        del++;
    }
    if (del == 0)
        return;
    for (size_t i = 0; i < del; i++)
        LOG_INFO("retention: deleting index file %s", ix->files[i]->path);
    st_segment_t **doomed = malloc(del * sizeof(*doomed));
    if (!doomed)
        return;
    memcpy(doomed, ix->files, del * sizeof(*doomed));
    memmove(ix->files, ix->files + del, (ix->n - del) * sizeof(*ix->files));
    ix->n -= del;
    st_house_unlink_later(st, doomed, del);   /* takes the array */
}

/* ---- lookup ---- */

size_t st_index_lookup(st_index_t *ix, const char *topic, const char *key, int64_t begin_ms,
                       int64_t end_ms, int64_t *phys, size_t max)
{
    int32_t hash;
    size_t found = 0;

    if (!ix || ix->disabled || max == 0)
        return 0;
    hash = key_hash(topic, strlen(topic), key, strlen(key));
    for (size_t f = ix->n; f-- > 0 && found < max;) {
        st_segment_t *seg = ix->files[f];
        st_index_header_t h;
        int32_t idx, cap;

        header_get(seg, &h);
        cap = file_capacity(seg, &h);
        if (h.index_count <= 1 || h.end_ts < begin_ms || sat_sub(h.begin_ts, 1000) > end_ms ||
            h.slot_num <= 0 || h.index_count > cap)
            continue;
        memcpy(&idx, slot_at(seg, hash % h.slot_num), 4);
        while (idx > 0 && idx < h.index_count && found < max) {
            const uint8_t *e = entry_at(seg, h.slot_num, idx);
            int32_t ehash, diff, prev;
            int64_t p, approx;

            memcpy(&ehash, e, 4);
            memcpy(&p, e + 4, 8);
            memcpy(&diff, e + 12, 4);
            memcpy(&prev, e + 16, 4);
            approx = sat_add(h.begin_ts, (int64_t)diff * 1000);
            if (ehash == hash && sat_add(approx, 1000) > begin_ms && approx <= end_ms) {
                int dup = 0;

                for (size_t k = 0; k < found && !dup; k++)
                    dup = phys[k] == p;
                if (!dup)
                    phys[found++] = p;
            }
            if (prev >= idx)
                break;                 /* a corrupt chain: never loop */
            idx = prev;
        }
    }
    return found;
}

/* Does the record (verified) carry key for topic within the time range? */
static int record_matches(const rmq_record_t *rec, const char *topic, const char *key, int64_t begin_ms,
                          int64_t end_ms)
{
    const char *keys[MAX_KEYS_PER_MSG];
    size_t lens[MAX_KEYS_PER_MSG], n, klen = strlen(key);

    if (rec->topic_len != strlen(topic) || memcmp(rec->topic, topic, rec->topic_len) != 0 ||
        rec->store_timestamp < begin_ms || rec->store_timestamp > end_ms)
        return 0;
    n = collect_keys(rec->properties, rec->properties_len, keys, lens);
    for (size_t i = 0; i < n; i++)
        if (lens[i] == klen && memcmp(keys[i], key, klen) == 0)
            return 1;
    return 0;
}

rmq_err_t st_store_query_key(st_store_t *st, const char *topic, const char *key, int64_t begin_ms,
                             int64_t end_ms, int32_t max_num, struct evbuffer *out, int32_t *count)
{
    size_t max = max_num > 0 ? (size_t)max_num : 32, cand_max = max * 4 + 16, n;
    int64_t *cand;

    *count = 0;
    if (!st->index || st->index->disabled)
        return RMQ_ENOTFOUND;
    if (!(cand = malloc(cand_max * sizeof(*cand))))
        return RMQ_ENOMEM;
    n = st_index_lookup(st->index, topic, key, begin_ms, end_ms, cand, cand_max);
    for (size_t i = 0; i < n && (size_t)*count < max; i++) {
        st_segment_t *seg = cand[i] >= st_commitlog_min(&st->cl) && cand[i] < st->cl.write_pos
                            ? st_commitlog_find(&st->cl, cand[i]) : NULL;
        const uint8_t *p;
        int64_t lim;
        rmq_record_t rec;

        if (!seg)
            continue;
        lim = st->cl.write_pos < seg->start + seg->size ? st->cl.write_pos : seg->start + seg->size;
        p = st_segment_rptr(seg, cand[i] - seg->start, lim - cand[i]);
        if (rmq_record_decode(p, (size_t)(lim - cand[i]), 0, &rec) != RMQ_OK ||
            rec.phys_offset != cand[i] || !record_matches(&rec, topic, key, begin_ms, end_ms))
            continue;
        if (evbuffer_add(out, p, rec.total_size) != 0) {
            free(cand);
            return RMQ_ENOMEM;
        }
        (*count)++;
    }
    free(cand);
    return RMQ_OK;
}

void st_store_index_last(st_store_t *st, int64_t *end_ts, int64_t *end_phys)
{
    st_index_header_t h = {0};

    if (st->index && st->index->n > 0)
        header_get(st->index->files[st->index->n - 1], &h);
    *end_ts = h.end_ts;
    *end_phys = h.end_phys;
}
