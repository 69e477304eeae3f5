/* st_store.c: the store facade: open/start/close, put and batch put with
 * their checks, reads (pull, by id, by time), replication append/read,
 * stats, message ids and tag hashes, and the cross-thread post link. */
#include "st_store.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_time.h"
#include "rmq_file.h"
#include "st_internal.h"

#define MIN_SCAN_UNITS 800

typedef struct link_job {
    st_link_t *link;
    st_job_fn fn;
    void *arg;
} link_job_t;

/* ---- cross-thread posting ---- */

static void link_unref(st_link_t *link)
{
    if (atomic_fetch_sub(&link->refs, 1) == 1)
        free(link);
}

static void link_run(void *arg)
{
    link_job_t *job = arg;

    job->fn(job->link->st, job->arg);
    link_unref(job->link);
    free(job);
}

rmq_err_t st_link_post(st_link_t *link, st_job_fn fn, void *arg)
{
    link_job_t *job;

    if (!link->poster) {
        fn(link->st, arg);
        return RMQ_OK;
    }
    if (!(job = malloc(sizeof(*job)))) {
        fn(NULL, arg);
        return RMQ_ENOMEM;
    }
    job->link = link;
    job->fn = fn;
    job->arg = arg;
    atomic_fetch_add(&link->refs, 1);
    if (rmq_loop_post(link->poster, link_run, job) != RMQ_OK) {
        atomic_fetch_sub(&link->refs, 1);
        free(job);
        fn(NULL, arg);
        return RMQ_ENOMEM;
    }
    return RMQ_OK;
}

/* ---- open / start / close ---- */

/* Fills zero config values with RocketMQ's defaults. */
static void apply_defaults(st_store_config_t *c)
{
    if (c->commitlog_file_size <= 0)
        c->commitlog_file_size = 1024LL * 1024 * 1024;
    if (c->cq_entries_per_file <= 0)
        c->cq_entries_per_file = 300000;
    if (c->flush_interval_ms <= 0)
        c->flush_interval_ms = 500;
    if (c->flush_least_pages < 0)
        c->flush_least_pages = 4;
    if (c->flush_thorough_interval_ms <= 0)
        c->flush_thorough_interval_ms = 10000;
    if (c->sync_flush_timeout_ms <= 0)
        c->sync_flush_timeout_ms = 5000;
    if (c->max_message_size <= 0)
        c->max_message_size = 4 * 1024 * 1024;
    if (c->disk_max_used_ratio <= 0)
        c->disk_max_used_ratio = 75;
    if (c->disk_full_ratio <= 0)
        c->disk_full_ratio = 90;
    if (c->max_hash_slot_num <= 0)
        c->max_hash_slot_num = 500000;
    if (c->max_index_num <= 1)
        c->max_index_num = 2000000;
    if (c->transient_store_pool_size <= 0)
        c->transient_store_pool_size = 5;
}

static char *path_join(const char *dir, const char *name)
{
    char buf[PATH_MAX];

    if (snprintf(buf, sizeof(buf), "%s/%s", dir, name) >= (int)sizeof(buf))
        return NULL;
    return strdup(buf);
}

/* Copies the configuration strings and derives the store's paths. */
static rmq_err_t store_paths(st_store_t *st, const st_store_config_t *cfg)
{
    st->root_dir = strdup(cfg->root_dir);
    st->cl_dir = cfg->commitlog_dir ? strdup(cfg->commitlog_dir) : path_join(cfg->root_dir, "commitlog");
    st->cq_dir = cfg->consumequeue_dir ? strdup(cfg->consumequeue_dir)
                                       : path_join(cfg->root_dir, "consumequeue");
    st->delete_when = strdup(cfg->delete_when ? cfg->delete_when : "04");
    st->checkpoint_path = path_join(cfg->root_dir, "checkpoint");
    st->abort_path = path_join(cfg->root_dir, "abort");
    if (!st->root_dir || !st->cl_dir || !st->cq_dir || !st->delete_when || !st->checkpoint_path ||
        !st->abort_path)
        return RMQ_ENOMEM;
    st->cfg.root_dir = st->root_dir;
    st->cfg.commitlog_dir = st->cl_dir;
    st->cfg.consumequeue_dir = st->cq_dir;
    st->cfg.delete_when = st->delete_when;
    return RMQ_OK;
}

/* Takes an exclusive flock on root/lock so one process owns the store. */
static rmq_err_t store_lock(st_store_t *st, char *err, size_t errlen)
{
    char *path = path_join(st->root_dir, "lock");

    st->lock_fd = path ? open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644) : -1;
    free(path);
    if (st->lock_fd < 0) {
        snprintf(err, errlen, "cannot open %s/lock: %s", st->root_dir, strerror(errno));
        return RMQ_EIO;
    }
    if (flock(st->lock_fd, LOCK_EX | LOCK_NB) != 0) {
        snprintf(err, errlen, "store %s is locked by another process", st->root_dir);
        return RMQ_EBUSY;
    }
    return RMQ_OK;
}

static rmq_err_t create_abort_file(st_store_t *st)
{
    int fd = open(st->abort_path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);

    if (fd < 0)
        return RMQ_EIO;
    close(fd);
    return rmq_file_sync_dir(st->root_dir);
}

static void store_free(st_store_t *st)
{
    st_house_deinit(st);
    if (st->link) {
        st->link->st = NULL;
        link_unref(st->link);
    }
    st_flush_deinit(st);
    st_index_free(st->index);
    st_cq_table_deinit(&st->cqs);
    st_commitlog_deinit(&st->cl);
    st_pool_free(st->pool);
    pthread_mutex_destroy(&st->maps_lock);
    if (st->lock_fd >= 0)
        close(st->lock_fd);
    free(st->root_dir);
    free(st->cl_dir);
    free(st->cq_dir);
    free(st->delete_when);
    free(st->checkpoint_path);
    free(st->abort_path);
    free(st);
}

/* Checks the configuration; writes the offending key into err. */
static rmq_err_t check_config(const st_store_config_t *c, char *err, size_t errlen)
{
    if (!c->root_dir || !*c->root_dir) {
        snprintf(err, errlen, "storePathRootDir must be set");
        return RMQ_EINVAL;
    }
    if (c->commitlog_file_size % 4096 != 0 || c->commitlog_file_size > UINT32_MAX) {
        snprintf(err, errlen, "mapedFileSizeCommitLog=%" PRId64 ": must be a multiple of 4096, at most 4 GiB",
                 c->commitlog_file_size);
        return RMQ_EINVAL;
    }
    if ((int64_t)rmq_record_size(RMQ_SYSFLAG_HOSTS_V6, (size_t)c->max_message_size, RMQ_TOPIC_MAX,
                                 RMQ_PROPS_MAX) + 8 >
        c->commitlog_file_size) {
        snprintf(err, errlen, "maxMessageSize=%" PRId64 " does not fit a commit-log file of %" PRId64,
                 c->max_message_size, c->commitlog_file_size);
        return RMQ_EINVAL;
    }
    return RMQ_OK;
}

/* Everything st_store_open does after allocation. */
static rmq_err_t store_setup(st_store_t *st, int when_ok, char *err, size_t errlen)
{
    int crashed;
    rmq_err_t rc;

    if ((rc = check_config(&st->cfg, err, errlen)) != RMQ_OK)
        return rc;
    if (!when_ok) {
        snprintf(err, errlen, "deleteWhen=%s: expected hours 0-23 separated by ';'", st->delete_when);
        return RMQ_EINVAL;
    }
    if (rmq_file_mkdirs(st->root_dir) != RMQ_OK || rmq_file_mkdirs(st->cl_dir) != RMQ_OK ||
        rmq_file_mkdirs(st->cq_dir) != RMQ_OK) {
        snprintf(err, errlen, "cannot create the store directories under %s", st->root_dir);
        return RMQ_EIO;
    }
    if ((rc = store_lock(st, err, errlen)) != RMQ_OK)
        return rc;
    crashed = access(st->abort_path, F_OK) == 0;
    if ((rc = st_recovery_run(st, crashed, err, errlen)) != RMQ_OK)
        return rc;
    if ((rc = create_abort_file(st)) != RMQ_OK) {
        snprintf(err, errlen, "cannot create %s", st->abort_path);
        return rc;
    }
    st_house_disk_check(st);
    return RMQ_OK;
}

/* The key index object over ROOT/index (not loaded yet), or NULL. */
static st_index_t *index_create(const st_store_t *st)
{
    char *index_dir = path_join(st->root_dir, "index");
    st_index_t *ix = index_dir ? st_index_new(index_dir, st->cfg.max_hash_slot_num, st->cfg.max_index_num,
                                              st->cfg.message_index_disable) : NULL;

    free(index_dir);
    return ix;
}

st_store_t *st_store_open(const st_store_config_t *cfg, char *err, size_t errlen)
{
    st_store_t *st = calloc(1, sizeof(*st));
    int when_ok;

    snprintf(err, errlen, "out of memory");
    if (!st)
        return NULL;
    st->cfg = *cfg;
    st->lock_fd = -1;
    st->read_limit = INT64_MAX;
    apply_defaults(&st->cfg);
    pthread_mutex_init(&st->maps_lock, NULL);
    st_flush_init(st);
    when_ok = st_house_init(st, cfg->delete_when) == RMQ_OK;
    st->link = calloc(1, sizeof(*st->link));
    if (!st->link || store_paths(st, cfg) != RMQ_OK ||
        st_cq_table_init(&st->cqs, st->cq_dir, st->cfg.cq_entries_per_file, &st->maps_lock) != RMQ_OK) {
        store_free(st);
        return NULL;
    }
    atomic_init(&st->link->refs, 1);
    if (!(st->index = index_create(st))) {
        store_free(st);
        return NULL;
    }
    st->link->st = st;
    if (st->cfg.transient_store_pool &&
        st_pool_new(st->cfg.transient_store_pool_size, st->cfg.commitlog_file_size, &st->pool) != RMQ_OK) {
        snprintf(err, errlen, "transientStorePoolEnable: cannot map %d buffers of %" PRId64 " bytes",
                 st->cfg.transient_store_pool_size, st->cfg.commitlog_file_size);
        store_free(st);
        return NULL;
    }
    st_commitlog_init(&st->cl, st->cl_dir, st->cfg.commitlog_file_size, &st->maps_lock, st->pool);
    if (store_setup(st, when_ok, err, errlen) != RMQ_OK) {
        store_free(st);
        return NULL;
    }
    return st;
}

static void want_cq_spare(st_cq_t *cq, void *arg)
{
    st_house_want_cq_spare(arg, cq);
}

rmq_err_t st_store_start(st_store_t *st, struct event_base *base, rmq_loop_poster_t *poster)
{
    if (!base || !poster)
        return RMQ_EINVAL;
    st->base = base;
    st->link->poster = poster;
    return st_store_resume(st);
}

rmq_err_t st_store_resume(st_store_t *st)
{
    rmq_err_t rc;

    if ((rc = st_flush_start(st)) != RMQ_OK || (rc = st_house_start(st)) != RMQ_OK)
        return rc;
    st_house_want_spare(st);
    st_index_want_spare(st);         /* the first file too: producers set UNIQ_KEY */
    st_cq_table_foreach(&st->cqs, want_cq_spare, st);
    return RMQ_OK;
}

rmq_err_t st_store_reload(st_store_t *st, char *err, size_t errlen)
{
    st_index_t *ix = index_create(st);
    st_cq_table_t cqs;
    rmq_err_t rc;

    if (!ix || st_cq_table_init(&cqs, st->cq_dir, st->cfg.cq_entries_per_file, &st->maps_lock) != RMQ_OK) {
        st_index_free(ix);
        snprintf(err, errlen, "reloading the store under %s: out of memory", st->root_dir);
        return RMQ_ENOMEM;
    }
    if (st_commitlog_commit_all(&st->cl) != RMQ_OK) {
        st_index_free(ix);
        st_cq_table_deinit(&cqs);
        atomic_store(&st->write_error, 1);
        snprintf(err, errlen, "reloading the store under %s: writing the buffered log failed", st->root_dir);
        return RMQ_EIO;
    }
    st_commitlog_deinit(&st->cl);
    st_commitlog_init(&st->cl, st->cl_dir, st->cfg.commitlog_file_size, &st->maps_lock, st->pool);
    st_cq_table_deinit(&st->cqs);
    st->cqs = cqs;
    st_index_free(st->index);
    st->index = ix;
    rc = st_recovery_run(st, 1, err, errlen);
    if (rc != RMQ_OK) {
        atomic_store(&st->write_error, 1);
        return rc;
    }
    atomic_store(&st->flush.durable, st->cl.write_pos);
    st->flush.checkpointed = st->cl.write_pos;
    return RMQ_OK;
}

void st_store_close(st_store_t *st)
{
    rmq_err_t rc;

    if (!st)
        return;
    st->shutting_down = 1;
    st_flush_stop(st);
    st_house_stop(st);
    rc = st_flush_all(st);
    if (rc == RMQ_OK)
        rc = st_index_sync_all(st);
    st_flush_release(st);
    st_flush_fail_all(st, rc == RMQ_OK ? RMQ_ESHUTDOWN : RMQ_EIO);
    if (rc == RMQ_OK && atomic_load(&st->dispatched) == st->cl.write_pos) {
        unlink(st->abort_path);
        rmq_file_sync_dir(st->root_dir);
    } else {
        LOG_ERROR("store %s closed without a complete flush; the next open will recover",
                  st->root_dir);
    }
    store_free(st);
}

void st_store_set_arrival_cb(st_store_t *st, st_arrival_fn fn, void *arg)
{
    st->arrival = fn;
    st->arrival_arg = arg;
}

/* ---- put ---- */

/* Checks one message against the limits; returns why it is illegal or NULL. */
static const char *msg_illegal(const st_store_t *st, const st_msg_t *m)
{
    const char *why = NULL;
    if (!m->topic || !rmq_name_is_valid(m->topic, m->topic_len, &why))
        return why ? why : "topic is empty";
    if ((int64_t)m->body_len > st->cfg.max_message_size)
        return "body larger than maxMessageSize";
    if (m->properties_len > RMQ_PROPS_MAX)
        return "properties longer than 32767 bytes";
    if (m->queue_id < 0)
        return "negative queue id";
    return NULL;
}

/* Returns the status that refuses every write now, or ST_PUT_OK. */
st_put_status_t st_store_write_refusal(const st_store_t *st, const char **why)
{
    if (st->shutting_down) {
        *why = "store is shutting down";
        return ST_PUT_SHUTDOWN;
    }
    if (st->cfg.read_only_role) {
        *why = "slave store does not accept writes";
        return ST_PUT_NOT_WRITABLE_ROLE;
    }
    if (atomic_load(&st->write_error)) {
        *why = "store is read-only after a failed disk write or sync";
        return ST_PUT_WRITE_ERROR;
    }
    if (atomic_load(&st->disk_full)) {
        *why = "disk full";
        return ST_PUT_DISK_FULL;
    }
    return ST_PUT_OK;
}

/* Validates a batch (one topic/queue); returns the total record bytes or 0. */
int32_t st_msg_sys_flag(const st_store_t *st, const st_msg_t *m)
{
    return (m->sys_flag & ~RMQ_SYSFLAG_HOSTS_V6) | (m->born_ip6 ? RMQ_SYSFLAG_BORNHOST_V6 : 0) |
           (st->cfg.store_host_v6 ? RMQ_SYSFLAG_STOREHOST_V6 : 0);
}

size_t st_msg_record_size(const st_store_t *st, const st_msg_t *m)
{
    return rmq_record_size(st_msg_sys_flag(st, m), m->body_len, m->topic_len, m->properties_len);
}

static size_t batch_check(const st_store_t *st, const st_msg_t *msgs, size_t n, st_put_result_t *res)
{
    size_t total = 0;

    for (size_t i = 0; i < n; i++) {
        const st_msg_t *m = &msgs[i];

        res->why = msg_illegal(st, m);
        if (!res->why && (m->topic_len != msgs[0].topic_len || m->queue_id != msgs[0].queue_id ||
                          memcmp(m->topic, msgs[0].topic, m->topic_len) != 0))
            res->why = "batch mixes topics or queues";
        if (res->why) {
            res->status = ST_PUT_MESSAGE_ILLEGAL;
            return 0;
        }
        total += st_msg_record_size(st, m);
    }
    if ((int64_t)total + 8 > st->cfg.commitlog_file_size) {
        res->status = ST_PUT_MESSAGE_ILLEGAL;
        res->why = "batch larger than a commit-log file";
        return 0;
    }
    return total;
}

/* Maps the error of a put's reserve or append to its status: a write a
 * pooled segment's file refused latches the store read-only; anything else
 * is a file that could not be created. */
static void put_failed(st_store_t *st, st_put_result_t *res, rmq_err_t rc)
{
    if (st_commitlog_unwritten(&st->cl)) {
        st_flush_write_failed(st);
        res->status = ST_PUT_WRITE_ERROR;
        res->why = "writing the commit-log file failed; the store is read-only";
        return;
    }
    res->status = rc == RMQ_ENOSPC ? ST_PUT_DISK_FULL : ST_PUT_CREATE_FILE_FAILED;
    res->why = rc == RMQ_ENOSPC ? "no space left to create a file" : "cannot create a store file";
}

/* Encodes msgs into seg at the write position and writes their units. */
static void put_write(st_store_t *st, st_cq_t *cq, st_segment_t *seg, const st_msg_t *msgs, size_t n,
                      int64_t store_ts)
{
    int64_t pos = st->cl.write_pos;

    for (size_t i = 0; i < n; i++) {
        const st_msg_t *m = &msgs[i];
        int64_t qoff = cq->max_offset;
        rmq_record_t rec = {
            .queue_id = m->queue_id, .flag = m->flag, .queue_offset = qoff, .phys_offset = pos,
            .born_timestamp = m->born_timestamp, .born_ip = m->born_ip,
            .born_port = m->born_port, .store_timestamp = store_ts, .store_ip = st->cfg.store_host_ip,
            .store_port = st->cfg.store_host_port, .reconsume_times = m->reconsume_times,
            .sys_flag = st_msg_sys_flag(st, m),
            .body = m->body, .body_len = (uint32_t)m->body_len, .topic = m->topic,
            .topic_len = (uint8_t)m->topic_len, .properties = m->properties,
            .properties_len = (uint16_t)m->properties_len,
        };
        if (m->born_ip6)
            memcpy(rec.born_ip6, m->born_ip6, sizeof rec.born_ip6);
        memcpy(rec.store_ip6, st->cfg.store_host_ip6, sizeof rec.store_ip6);
        size_t size = rmq_record_encode(&rec, st_segment_wptr(seg, pos - seg->start));

        st_cq_write(&st->cqs, cq, qoff, pos, (int32_t)size, m->tag_code);
        st_index_add(st, m->topic, m->topic_len, m->properties, m->properties_len, pos, (int32_t)size,
                     store_ts);
        pos += (int64_t)size;
    }
}

/* Runs the arrival callback for n new units ending at cq->max_offset. */
/* Tells the held pulls of the records just appended, unless they end past
 * the read limit (nothing readable yet: the limit's rise tells them). */
static void put_notify(st_store_t *st, st_cq_t *cq, const st_msg_t *msgs, size_t n)
{
    if (!st->arrival || st->cl.write_pos > st->read_limit)
        return;
    for (size_t i = 0; i < n; i++)
        st->arrival(cq->topic, cq->queue_id, cq->max_offset - (int64_t)(n - 1 - i), msgs[i].tag_code,
                    st->arrival_arg);
}

void st_store_put_batch(st_store_t *st, const st_msg_t *msgs, size_t n, st_put_result_t *res)
{
    int64_t t0 = rmq_mono_us(), store_ts;
    st_segment_t *seg;
    st_cq_t *cq;
    size_t total;
    int rolled;
    rmq_err_t rc;

    memset(res, 0, sizeof(*res));
    if (n == 0) {
        res->status = ST_PUT_MESSAGE_ILLEGAL;
        res->why = "empty batch";
        return;
    }
    if ((res->status = st_store_write_refusal(st, &res->why)) != ST_PUT_OK)
        return;
    if ((total = batch_check(st, msgs, n, res)) == 0)
        return;
    cq = st_cq_table_get(&st->cqs, msgs[0].topic, msgs[0].topic_len, msgs[0].queue_id);
    rc = cq ? st_cq_prepare(&st->cqs, cq, cq->max_offset, (int64_t)n) : RMQ_ENOMEM;
    if (rc == RMQ_OK)
        rc = st_commitlog_reserve(&st->cl, total, &seg, &rolled);
    if (rc == RMQ_OK && rolled)
        st_house_want_spare(st);
    if (rc != RMQ_OK) {
        atomic_store(&st->dispatched, st->cl.write_pos);
        put_failed(st, res, rc);
        return;
    }
    store_ts = rmq_wall_ms();
    res->phys_offset = st->cl.write_pos;
    res->queue_offset = cq->max_offset;
    put_write(st, cq, seg, msgs, n, store_ts);
    rc = st_commitlog_advance(&st->cl, seg, (int64_t)total);
    st_house_want_cq_spare(st, cq);
    atomic_store(&st->dispatched, st->cl.write_pos);
    res->status = ST_PUT_OK;
    res->end_offset = st->cl.write_pos;
    res->count = (int32_t)n;
    res->store_timestamp = store_ts;
    st_store_msg_id(st, res->phys_offset, res->msg_id);
    st->put_count += (int64_t)n;
    st->put_bytes += (int64_t)total;
    put_notify(st, cq, msgs, n);
    if (rc != RMQ_OK)
        put_failed(st, res, rc);
    if (rmq_mono_us() - t0 > st->put_latency_max_us)
        st->put_latency_max_us = rmq_mono_us() - t0;
}

void st_store_put(st_store_t *st, const st_msg_t *msg, st_put_result_t *res)
{
    st_store_put_batch(st, msg, 1, res);
}

rmq_err_t st_store_wait_flush(st_store_t *st, int64_t end_offset, st_flush_fn cb, void *arg)
{
    return st_flush_wait(st, end_offset, cb, arg);
}

/* ---- reads ---- */

static void seg_ref_cleanup(const void *data, size_t len, void *extra)
{
    (void)data;
    (void)len;
    st_segment_unref(extra);
}

/* Appends [phys, phys + len) to out: a reference into the mapping (holding
 * the segment) for what the file holds, a copy of the rest from the
 * transient pool's buffer (bytes appended since the last write()). */
static rmq_err_t add_log_ref(st_segment_t *seg, int64_t phys, size_t len, struct evbuffer *out)
{
    int64_t rel = phys - seg->start, in_file = st_segment_in_file(seg, rel, (int64_t)len);

    if (in_file > 0) {
        st_segment_ref(seg);
        if (evbuffer_add_reference(out, seg->base + rel, (size_t)in_file, seg_ref_cleanup, seg) != 0) {
            st_segment_unref(seg);
            return RMQ_ENOMEM;
        }
    }
    if (in_file < (int64_t)len &&
        evbuffer_add(out, st_segment_rptr(seg, rel + in_file, (int64_t)len - in_file),
                     len - (size_t)in_file) != 0)
        return RMQ_ENOMEM;
    return RMQ_OK;
}

static int tag_matches(const st_tag_filter_t *f, int64_t tag)
{
    if (!f || f->match_all)
        return 1;
    for (size_t i = 0; i < f->n_codes; i++)
        if (f->codes[i] == tag)
            return 1;
    return 0;
}

/* Classifies offset against the queue's bounds; ST_GET_FOUND means "scan". */
static st_get_status_t get_bounds(const st_cq_t *cq, int64_t offset, int64_t *next)
{
    if (cq->max_offset == 0) {
        *next = 0;
        return ST_GET_NO_MESSAGE_IN_QUEUE;
    }
    if (offset < cq->min_offset) {
        *next = cq->min_offset;
        return ST_GET_OFFSET_TOO_SMALL;
    }
    if (offset == cq->max_offset) {
        *next = offset;
        return ST_GET_OFFSET_OVERFLOW_ONE;
    }
    if (offset > cq->max_offset) {
        *next = cq->min_offset == 0 ? cq->min_offset : cq->max_offset;
        return ST_GET_OFFSET_OVERFLOW_BADLY;
    }
    return ST_GET_FOUND;
}

/* Scans units from offset within one consume-queue file, adding matches. */
static void get_scan(st_store_t *st, const st_cq_t *cq, int64_t offset, int32_t max_msgs,
                     int64_t max_bytes, const st_tag_filter_t *filter, struct evbuffer *out,
                     st_get_result_t *res)
{
    int64_t file_end = st_cq_file_end(&st->cqs, offset);
    int64_t end = file_end < cq->max_offset ? file_end : cq->max_offset;
    int64_t limit = max_msgs > MIN_SCAN_UNITS ? max_msgs : MIN_SCAN_UNITS;
    int64_t cl_min = st_commitlog_min(&st->cl), i;
    int capped = 0;

    res->status = ST_GET_NO_MATCHED_MESSAGE;
    for (i = offset; i < end && i - offset < limit; i++) {
        int64_t phys, tag;
        int32_t size;
        st_segment_t *seg;

        if (!st_cq_read(&st->cqs, cq, i, &phys, &size, &tag)) {
            res->status = ST_GET_OFFSET_FOUND_NULL;
            i = file_end;
            break;
        }
        if (size == ST_CQ_DUMMY_SIZE)
            continue;
        if (phys + size > st->read_limit) {
            capped = 1;
            break;
        }
        if (res->msg_count >= max_msgs || (res->msg_count > 0 && res->bytes + size > max_bytes))
            break;
        res->max_phys_scanned = phys + size;
        if (!tag_matches(filter, tag))
            continue;
        seg = phys >= cl_min && phys + size <= st->cl.write_pos ? st_commitlog_find(&st->cl, phys) : NULL;
        if (seg && (size < (int32_t)RMQ_RECORD_FIXED || phys + size > seg->start + seg->size))
            seg = NULL;     /* a corrupt unit: never reference past its file */
        if (seg && filter && filter->accept &&
            !filter->accept(filter->accept_arg, st_segment_rptr(seg, phys - seg->start, size), (size_t)size))
            continue;
        if (!seg || add_log_ref(seg, phys, (size_t)size, out) != RMQ_OK) {
            res->status = ST_GET_MESSAGE_WAS_REMOVING;
            continue;
        }
        res->msg_count++;
        res->bytes += size;
    }
    res->next_begin_offset = i;
    if (res->msg_count > 0)
        res->status = ST_GET_FOUND;
    else if (capped)
        res->status = ST_GET_OFFSET_OVERFLOW_ONE;   /* nothing readable yet: a long-poll candidate */
}

void st_store_get(st_store_t *st, const char *topic, int32_t queue_id, int64_t offset,
                  int32_t max_msgs, int64_t max_bytes, const st_tag_filter_t *filter,
                  struct evbuffer *out, st_get_result_t *res)
{
    st_cq_t *cq = st_cq_table_find(&st->cqs, topic, strlen(topic), queue_id);

    memset(res, 0, sizeof(*res));
    if (!cq) {
        res->status = ST_GET_NO_MATCHED_LOGIC_QUEUE;
        return;
    }
    res->min_offset = cq->min_offset;
    res->max_offset = cq->max_offset;
    res->status = get_bounds(cq, offset, &res->next_begin_offset);
    if (res->status != ST_GET_FOUND)
        return;
    get_scan(st, cq, offset, max_msgs > 0 ? max_msgs : 1, max_bytes > 0 ? max_bytes : INT64_MAX,
             filter, out, res);
}

typedef struct readable_ctx {
    st_store_t *st;
    int64_t from, to;
} readable_ctx_t;

/* The last offset of cq whose record ends at or below limit (min_offset - 1
 * if none); a queue's records lie in log order, so a binary search. */
static int64_t cq_last_readable(st_store_t *st, const st_cq_t *cq, int64_t limit)
{
    int64_t lo = cq->min_offset, hi = cq->max_offset;

    if (cq->max_phys_end <= limit)
        return hi - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2, phys, tag;
        int32_t size;

        if (!st_cq_read(&st->cqs, cq, mid, &phys, &size, &tag) || size == ST_CQ_DUMMY_SIZE ||
            phys + size <= limit)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo - 1;
}

/* A queue with records that just became readable: the arrival of the last
 * of them (with its tag), for the pulls held while they were not. */
static void notify_readable(st_cq_t *cq, void *arg)
{
    readable_ctx_t *c = arg;
    int64_t last, phys, tag;
    int32_t size;

    if (cq->max_phys_end <= c->from || cq->max_offset <= cq->min_offset)
        return;
    last = cq_last_readable(c->st, cq, c->to);
    if (last < cq->min_offset || !st_cq_read(&c->st->cqs, cq, last, &phys, &size, &tag) ||
        size == ST_CQ_DUMMY_SIZE || phys + size <= c->from)
        return;
    c->st->arrival(cq->topic, cq->queue_id, last + 1, tag, c->st->arrival_arg);
}

void st_store_set_read_limit(st_store_t *st, int64_t phys)
{
    readable_ctx_t c = { st, st->read_limit, phys < 0 ? INT64_MAX : phys };

    st->read_limit = c.to;
    if (c.to > c.from && st->arrival)
        st_cq_table_foreach(&st->cqs, notify_readable, &c);
}

int64_t st_store_max_offset(st_store_t *st, const char *topic, int32_t queue_id)
{
    st_cq_t *cq = st_cq_table_find(&st->cqs, topic, strlen(topic), queue_id);

    return cq ? cq->max_offset : 0;
}

int64_t st_store_min_offset(st_store_t *st, const char *topic, int32_t queue_id)
{
    st_cq_t *cq = st_cq_table_find(&st->cqs, topic, strlen(topic), queue_id);

    return cq ? cq->min_offset : 0;
}

/* Store timestamp of the record at phys, or -1 if it is not in the log. */
static int64_t record_time(st_store_t *st, int64_t phys)
{
    st_segment_t *seg = phys >= st_commitlog_min(&st->cl) && phys + (int64_t)RMQ_RECORD_FIXED <=
                        st->cl.write_pos ? st_commitlog_find(&st->cl, phys) : NULL;

    if (!seg || phys + (int64_t)RMQ_RECORD_FIXED > seg->start + seg->size)
        return -1;
    return rmq_record_store_ts(st_segment_rptr(seg, phys - seg->start, RMQ_RECORD_FIXED));
}

int64_t st_store_time_at(st_store_t *st, const char *topic, int32_t queue_id, int64_t offset)
{
    st_cq_t *cq = st_cq_table_find(&st->cqs, topic, strlen(topic), queue_id);
    int64_t phys, tag;
    int32_t size;

    if (!cq || offset < cq->min_offset || offset >= cq->max_offset ||
        !st_cq_read(&st->cqs, cq, offset, &phys, &size, &tag) || size == ST_CQ_DUMMY_SIZE)
        return -1;
    return record_time(st, phys);
}

int64_t st_store_offset_by_time(st_store_t *st, const char *topic, int32_t queue_id, int64_t ts)
{
    st_cq_t *cq = st_cq_table_find(&st->cqs, topic, strlen(topic), queue_id);
    int64_t lo, hi;

    if (!cq)
        return 0;
    lo = cq->min_offset;
    hi = cq->max_offset;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo) / 2;

        if (st_store_time_at(st, topic, queue_id, mid) < ts)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

rmq_err_t st_store_read_record(st_store_t *st, int64_t phys_offset, struct evbuffer *out)
{
    st_segment_t *seg = phys_offset >= st_commitlog_min(&st->cl) && phys_offset < st->cl.write_pos
                        ? st_commitlog_find(&st->cl, phys_offset) : NULL;
    const uint8_t *p;
    int64_t lim;
    rmq_record_t rec;

    if (!seg)
        return RMQ_ENOTFOUND;
    lim = st->cl.write_pos < seg->start + seg->size ? st->cl.write_pos : seg->start + seg->size;
    p = st_segment_rptr(seg, phys_offset - seg->start, lim - phys_offset);
    if (rmq_record_decode(p, (size_t)(lim - phys_offset), 1, &rec) != RMQ_OK || rec.phys_offset != phys_offset)
        return RMQ_ENOTFOUND;
    return evbuffer_add(out, p, rec.total_size) == 0 ? RMQ_OK : RMQ_ENOMEM;
}

/* Removes the (now empty) directories of deleted queue files. */
static void remove_queue_dirs(st_store_t *st, const char *topic)
{
    char path[PATH_MAX];

    snprintf(path, sizeof(path), "%s/%s", st->cq_dir, topic);
    rmdir(path);
}

void st_store_delete_topic(st_store_t *st, const char *topic)
{
    st_segment_t **segs;
    size_t n = st_cq_table_remove_topic(&st->cqs, topic, &segs);

    for (size_t i = 0; i < n; i++) {
        char dir[PATH_MAX];
        char *slash;

        snprintf(dir, sizeof(dir), "%s", segs[i]->path);
        st_segment_unlink(segs[i]);
        st_segment_unref(segs[i]);
        if ((slash = strrchr(dir, '/')) != NULL) {
            *slash = '\0';
            rmdir(dir);
        }
    }
    free(segs);
    remove_queue_dirs(st, topic);
}

void st_store_stats(st_store_t *st, st_store_stats_t *out)
{
    int64_t min = st_commitlog_min(&st->cl);
    int ready;

    memset(out, 0, sizeof(*out));
    out->commitlog_min_offset = min;
    out->commitlog_max_offset = st->cl.write_pos;
    out->flushed_offset = atomic_load(&st->flush.durable);
    out->flush_syncs = atomic_load(&st->flush.syncs);
    out->flush_sync_us = atomic_load(&st->flush.sync_us);
    out->dispatched_offset = atomic_load(&st->dispatched);
    out->put_count = st->put_count;
    out->put_bytes = st->put_bytes;
    out->disk_used_ratio = (double)atomic_load(&st->disk_ratio_ppm) / 1e6;
    out->write_error = atomic_load(&st->write_error);
    out->disk_full = atomic_load(&st->disk_full);
    out->writable = !out->write_error && !out->disk_full && !st->cfg.read_only_role;
    out->earliest_store_time = record_time(st, min);
    out->put_latency_max_us = st->put_latency_max_us;
    st_index_file_stats(st->index, &out->index_files_precreated, &out->index_files_created_sync,
                        &ready);
    out->cq_files_precreated = st->cqs.files_precreated;
    out->cq_files_created_sync = st->cqs.files_created_sync;
}

/* ---- replication ---- */

rmq_err_t st_store_append_raw(st_store_t *st, int64_t offset, const void *data, size_t len)
{
    st_commitlog_t *cl = &st->cl;
    const uint8_t *p = data;
    int64_t reached;

    if (atomic_load(&st->write_error))
        return RMQ_EREADONLY;
    if (st->shutting_down)
        return RMQ_ESHUTDOWN;
    if (offset != cl->write_pos) {
        if (cl->nseg != 0 || offset % cl->file_size != 0)
            return RMQ_EINVAL;
        cl->write_pos = offset;
        atomic_store(&cl->published, offset);
        atomic_store(&st->dispatched, offset);
    }
    while (len > 0) {
        st_segment_t *seg;
        int rolled;
        rmq_err_t rc = st_commitlog_active(cl, &seg, &rolled);
        size_t n;

        if (rc != RMQ_OK)
            return rc;
        if (rolled)
            st_house_want_spare(st);
        n = (size_t)(seg->start + seg->size - cl->write_pos);
        n = n < len ? n : len;
        memcpy(st_segment_wptr(seg, cl->write_pos - seg->start), p, n);
        if (st_commitlog_advance(cl, seg, (int64_t)n) != RMQ_OK) {
            st_flush_write_failed(st);
            return RMQ_EIO;
        }
        p += n;
        len -= n;
    }
    reached = st_dispatch_range(st, atomic_load(&st->dispatched), cl->write_pos, 1, 1);
    return reached < 0 ? (rmq_err_t)reached : RMQ_OK;
}

int64_t st_store_read_raw(st_store_t *st, int64_t offset, size_t max_len, struct evbuffer *out)
{
    st_commitlog_t *cl = &st->cl;
    st_segment_t *seg;
    int64_t avail;

    if (offset < st_commitlog_min(cl))
        return RMQ_ENOTFOUND;
    if (offset >= cl->write_pos || !(seg = st_commitlog_find(cl, offset)))
        return 0;
    avail = (cl->write_pos < seg->start + seg->size ? cl->write_pos : seg->start + seg->size) - offset;
    if ((int64_t)max_len < avail)
        avail = (int64_t)max_len;
    if (avail > 0 && add_log_ref(seg, offset, (size_t)avail, out) != RMQ_OK)
        return RMQ_ENOMEM;
    return avail;
}

/* ---- ids and hashes ---- */

void st_store_msg_id(const st_store_t *st, int64_t phys_offset, char out[RMQ_MSG_ID_MAX + 1])
{
    rmq_msg_id_format(st->cfg.store_host_v6, st->cfg.store_host_ip, st->cfg.store_host_ip6,
                      st->cfg.store_host_port, phys_offset, out);
}

/* Decodes one UTF-8 code point at s[*i] (U+FFFD for a bad sequence). */
static uint32_t utf8_next(const unsigned char *s, size_t len, size_t *i)
{
    unsigned char c = s[(*i)++];
    int extra = c < 0x80 ? 0 : (c & 0xE0) == 0xC0 ? 1 : (c & 0xF0) == 0xE0 ? 2 : (c & 0xF8) == 0xF0 ? 3 : -1;
    uint32_t cp = extra == 0 ? c : extra == 1 ? (c & 0x1Fu) : extra == 2 ? (c & 0x0Fu) : (c & 0x07u);

    if (extra < 0 || *i + (size_t)extra > len)
        return 0xFFFD;
    for (int k = 0; k < extra; k++) {
        if ((s[*i] & 0xC0) != 0x80)
            return 0xFFFD;
        cp = cp << 6 | (s[(*i)++] & 0x3Fu);
    }
    return cp;
}

int64_t st_tag_hash(const char *tag, size_t len)
{
    const unsigned char *s = (const unsigned char *)tag;
    uint32_t h = 0;
    size_t i = 0;

    while (i < len) {
        if (s[i] < 0x80) {          /* ASCII, the usual tag and key: one UTF-16 unit */
            h = h * 31 + s[i++];
            continue;
        }
        uint32_t cp = utf8_next(s, len, &i);

        if (cp >= 0x10000) {
            cp -= 0x10000;
            h = h * 31 + (0xD800 + (cp >> 10));
            h = h * 31 + (0xDC00 + (cp & 0x3FF));
        } else {
            h = h * 31 + cp;
        }
    }
    return (int64_t)(int32_t)h;
}

/* ---- test hooks ---- */

void st_store_set_hooks(st_store_t *st, const st_hooks_t *hooks)
{
    st->hooks = *hooks;
}

rmq_err_t st_store_flush_now(st_store_t *st)
{
    rmq_err_t rc = st_flush_all(st);

    if (rc != RMQ_OK)
        st_flush_fail_all(st, RMQ_EIO);
    else
        st_flush_release(st);
    return rc;
}

void st_store_housekeep_now(st_store_t *st)
{
    st_retention_run(st, st_house_disk_check(st), rmq_wall_ms());
}
