/* bk_topics.c: the topic table: a map of heap bk_topic_t, a data version,
 * loaded from config/topics.pb (packed TopicConfigTable) plus the change
 * log config/topics.log (bk_topiclog.h) and persisted in proportion to
 * what changed: each change is one log record. seq numbers the changes;
 * one job is in flight on the writer thread: the records of every change
 * since the last job appended with one fdatasync (group commit), or, once
 * the log outgrows its bound (or after a failed write), the whole table
 * replacing topics.pb and the log emptied (compaction). When the job
 * completes (the writer thread activates an event on the loop) the waiters
 * up to its seq are released and the changes made meanwhile go in the
 * next job. A log record older than the table's version is skipped on
 * replay, so a crash between a compaction's two steps loses nothing. */
#include "bk_topics_pb.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "bk_topiclog.h"
#include "rmq_log.h"
#include "rmq_time.h"
#include "rmq_file.h"

#define TOPICS_LOG_MIN (256u << 10) /* the log's bound: this, or the table's size if larger */

typedef struct topics_waiter {
    struct topics_waiter *next;
    uint64_t seq;                  /* released once durable_seq reaches it */
    bk_topics_durable_fn fn;
    void *arg;
} topics_waiter_t;

struct bk_topics {
    bk_map_t *map;
    char *path;                    /* topics.pb */
    char *log_path;                /* topics.log */
    bk_persist_t *persist;
    struct event *written;         /* NULL until started */
    pthread_mutex_t mu;            /* guards written_rc (the writer thread sets it) */
    rmq_err_t written_rc;
    bk_topiclog_buf_t pending;     /* records of the changes since the last job */
    size_t log_bytes;              /* the log's length once the jobs submitted ran */
    size_t table_bytes;            /* size of the table last loaded or written */
    int need_compact;              /* a record is missing from the log: write the table */
    uint64_t seq;                  /* changes so far */
    uint64_t deletes;              /* entries freed so far (bk_topics_epoch) */
    uint64_t writing_seq;          /* seq of the job in flight */
    uint64_t durable_seq;          /* seq of the last job that reached the disk */
    int writing;
    int writing_compact;           /* the job in flight is a compaction */
    topics_waiter_t *waiters, *waiters_tail;   /* in seq order */
    int64_t dv_timestamp;
    int64_t dv_counter;
    bk_topics_changed_fn changed;
    void *changed_arg;
    bk_topics_item_fn item;
    void *item_arg;
};

/* One writer-thread job: an append of records to the log, or (table_path
 * set) a compaction. It owns copies of the paths, so it may outlive a
 * table that was never started. */
typedef struct topics_job {
    bk_topics_t *t;                /* told on completion; NULL before start */
    char *table_path;
    char *log_path;
    uint8_t *data;
    size_t len;
} topics_job_t;

void bk_topic_to_pb(const bk_topic_t *topic, Rmq__TopicConfig *pb)
{
    rmq__topic_config__init(pb);
    pb->topic_name = (char *)topic->name;
    pb->read_queue_nums = topic->read_queues;
    pb->write_queue_nums = topic->write_queues;
    pb->perm = topic->perm;
    pb->order = topic->order;
    pb->topic_sys_flag = topic->sys_flag;
    pb->attributes = (char *)topic->attributes;
}

/* Inserts or overwrites a topic without persisting. */
static rmq_err_t topics_put(bk_topics_t *t, const bk_topic_t *topic)
{
    size_t len = strlen(topic->name);
    bk_topic_t *cur = bk_map_get(t->map, topic->name, len);
    if (cur) {
        *cur = *topic;
        return RMQ_OK;
    }
    cur = malloc(sizeof(*cur));
    if (!cur)
        return RMQ_ENOMEM;
    *cur = *topic;
    rmq_err_t rc = bk_map_put(t->map, cur->name, len, cur);
    if (rc != RMQ_OK)
        free(cur);
    return rc;
}

rmq_err_t bk_topic_from_pb(const Rmq__TopicConfig *pb, int with_attrs, bk_topic_t *topic, char *why, size_t whylen)
{
    *topic = (bk_topic_t){.read_queues = pb->read_queue_nums, .write_queues = pb->write_queue_nums,
                          .perm = pb->perm, .order = pb->order, .sys_flag = pb->topic_sys_flag};
    snprintf(topic->name, sizeof(topic->name), "%s", pb->topic_name ? pb->topic_name : "");
    if (!with_attrs || !pb->attributes)
        return RMQ_OK;
    size_t len = strlen(pb->attributes);
    if (len >= sizeof(topic->attributes)) {
        snprintf(why, whylen, "topic %.150s: attributes longer than %zu bytes", topic->name,
                 sizeof(topic->attributes) - 1);
        return RMQ_EINVAL;
    }
    if (rmq_topic_attrs_check(pb->attributes, len, why, whylen) != RMQ_OK)
        return RMQ_EINVAL;
    memcpy(topic->attributes, pb->attributes, len + 1);
    return RMQ_OK;
}

/* Removes a topic without persisting; 0 if it was absent. */
static int topics_del(bk_topics_t *t, const char *name)
{
    bk_topic_t *cur = bk_map_del(t->map, name, strlen(name));
    t->deletes += cur != NULL;
    free(cur);
    return cur != NULL;
}

/* Reads topics.pb into the table; a missing file is an empty table. */
static rmq_err_t topics_load_table(bk_topics_t *t, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    rmq_err_t rc = rmq_file_read_all(t->path, &data, &len);
    if (rc == RMQ_ENOTFOUND)
        return RMQ_OK;
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "%s: %s", t->path, rmq_strerror(rc));
        return rc;
    }
    Rmq__TopicConfigTable *tab = rmq__topic_config_table__unpack(NULL, len, (const uint8_t *)data);
    free(data);
    if (!tab) {
        snprintf(err, errlen, "%s: not a valid TopicConfigTable", t->path);
        return RMQ_ECORRUPT;
    }
    t->table_bytes = len;
    for (size_t i = 0; i < tab->n_topics && rc == RMQ_OK; i++) {
        bk_topic_t topic;
        char why[256];
        if (bk_topic_from_pb(tab->topics[i], 1, &topic, why, sizeof(why)) != RMQ_OK) {
            snprintf(err, errlen, "%s: %s", t->path, why);
            rc = RMQ_ECORRUPT;
            break;
        }
        rc = topics_put(t, &topic);
    }
    if (tab->data_version) {
        t->dv_timestamp = tab->data_version->timestamp;
        t->dv_counter = tab->data_version->counter;
    }
    rmq__topic_config_table__free_unpacked(tab, NULL);
    if (rc == RMQ_ENOMEM)
        snprintf(err, errlen, "%s: out of memory", t->path);
    return rc;
}

/* Replay: applies one log record newer than the table; non-zero when out
 * of memory. */
static int topics_replay_one(void *arg, const Rmq__HaMeta *meta)
{
    bk_topics_t *t = arg;
    if (!meta->version || meta->version->counter <= t->dv_counter)
        return 0;                  /* the table holds it already */
    if (meta->change_case == RMQ__HA_META__CHANGE_TOPIC) {
        bk_topic_t topic;
        char why[8];
        bk_topic_from_pb(meta->topic, 1, &topic, why, sizeof(why)); /* the log's decoder checked it */
        if (topics_put(t, &topic) != RMQ_OK)
            return 1;
    } else {
        topics_del(t, meta->deleted_topic);
    }
    t->dv_timestamp = meta->version->timestamp;
    t->dv_counter = meta->version->counter;
    return 0;
}

/* The table file, then the log's newer records over it. */
static rmq_err_t topics_load(bk_topics_t *t, char *err, size_t errlen)
{
    rmq_err_t rc = topics_load_table(t, err, errlen);
    if (rc != RMQ_OK)
        return rc;
    int64_t table_counter = t->dv_counter;
    rc = bk_topiclog_replay(t->log_path, topics_replay_one, t, &t->log_bytes, err, errlen);
    if (rc == RMQ_OK && t->dv_counter != table_counter)
        LOG_INFO("topics: %zu topics, %" PRId64 " changes replayed from %s", bk_map_count(t->map),
                 t->dv_counter - table_counter, t->log_path);
    return rc;
}

static void topics_job_free(topics_job_t *j)
{
    if (!j)
        return;
    free(j->table_path);
    free(j->log_path);
    free(j->data);
    free(j);
}

/* Writer thread: runs a job. */
static rmq_err_t topics_job_run(void *arg)
{
    topics_job_t *j = arg;
    if (!j->table_path)
        return bk_topiclog_append(j->log_path, j->data, j->len);
    rmq_err_t rc = rmq_file_write_atomic(j->table_path, j->data, j->len);
    if (rc != RMQ_OK) {
        LOG_ERROR_RL("persist %s: %s", j->table_path, rmq_strerror(rc));
        return rc;
    }
    return bk_topiclog_reset(j->log_path);
}

/* Writer thread: a job finished; hand its result to the loop. */
static void topics_job_done(void *arg, rmq_err_t rc)
{
    topics_job_t *j = arg;
    bk_topics_t *t = j->t;
    topics_job_free(j);
    if (!t)
        return;
    pthread_mutex_lock(&t->mu);
    t->written_rc = rc;
    pthread_mutex_unlock(&t->mu);
    event_active(t->written, EV_READ, 0);
}

/* The log's bound: past it the next job is a compaction. */
static size_t topics_log_bound(const bk_topics_t *t)
{
    return t->table_bytes > TOPICS_LOG_MIN ? t->table_bytes : TOPICS_LOG_MIN;
}

/* Packs the whole table into j's data. */
static rmq_err_t topics_pack(const bk_topics_t *t, topics_job_t *j)
{
    Rmq__TopicConfigTable *tab = bk_topics_table_new(t);
    size_t len = tab ? rmq__topic_config_table__get_packed_size(tab) : 0;
    uint8_t *buf = tab ? malloc(len ? len : 1) : NULL;
    if (buf) {
        rmq__topic_config_table__pack(tab, buf);
        j->data = buf;
        j->len = len;
    }
    bk_topics_table_free(tab);
    return buf ? RMQ_OK : RMQ_ENOMEM;
}

/* Submits the next job: the pending records appended to the log, or,
 * past the log's bound or with a record missing, the whole table. */
static void topics_write(bk_topics_t *t)
{
    int compact = t->need_compact || t->log_bytes + t->pending.len > topics_log_bound(t);
    topics_job_t *j = calloc(1, sizeof(*j));
    if (!j || !(j->log_path = strdup(t->log_path)) || (compact && !(j->table_path = strdup(t->path))))
        goto nomem;
    if (compact) {
        if (topics_pack(t, j) != RMQ_OK)
            goto nomem;
        t->pending.len = 0;        /* the table holds those changes */
    } else {
        j->data = t->pending.data;
        j->len = t->pending.len;
        t->pending = (bk_topiclog_buf_t){0};
    }
    size_t len = j->len;
    j->t = t->written ? t : NULL;
    if (bk_persist_run(t->persist, topics_job_run, topics_job_done, j) != RMQ_OK)
        goto nomem;
    if (compact) {
        t->table_bytes = len;
        t->log_bytes = 0;
    } else {
        t->log_bytes += len;
    }
    t->writing = t->written != NULL;
    t->writing_seq = t->seq;
    t->writing_compact = compact;
    return;
nomem:
    LOG_ERROR_RL("topics: out of memory persisting %s", t->path);
    topics_job_free(j);
    t->need_compact = 1;           /* an append's records went with the job */
}

/* Releases the waiters up to seq with rc, in order. */
static void topics_release(bk_topics_t *t, uint64_t seq, rmq_err_t rc)
{
    while (t->waiters && t->waiters->seq <= seq) {
        topics_waiter_t *w = t->waiters;
        t->waiters = w->next;
        if (!t->waiters)
            t->waiters_tail = NULL;
        w->fn(w->arg, rc);
        free(w);
    }
}

/* Loop: the job in flight finished; release its waiters and write the
 * changes that came meanwhile. A failure leaves records out of the log:
 * the next job writes the table. */
static void topics_written(evutil_socket_t fd, short what, void *arg)
{
    bk_topics_t *t = arg;
    pthread_mutex_lock(&t->mu);
    rmq_err_t rc = t->written_rc;
    pthread_mutex_unlock(&t->mu);
    t->writing = 0;
    if (rc == RMQ_OK) {
        t->durable_seq = t->writing_seq;
        if (t->writing_compact)
            t->need_compact = 0;
    } else {
        t->need_compact = 1;
    }
    topics_release(t, t->writing_seq, rc);
    if (t->seq != t->writing_seq)
        topics_write(t);
}

/* Adds the change's record (topic set: created or replaced, else name
 * deleted) to the pending ones. Past the log's bound, or without memory,
 * the pending records are dropped and the next job writes the table. */
static void topics_record(bk_topics_t *t, const char *name, const bk_topic_t *topic)
{
    Rmq__HaMeta meta;
    Rmq__TopicConfig tc;
    Rmq__DataVersion dv;
    if (t->need_compact)
        return;
    bk_topics_change_meta(t, name, topic, &meta, &tc, &dv);
    if (t->pending.len > topics_log_bound(t) || bk_topiclog_encode(&t->pending, &meta) != RMQ_OK) {
        t->pending.len = 0;
        t->need_compact = 1;
    }
}

/* Bumps the version, records the change, writes unless a job is in flight
 * (its completion writes again) and notifies. */
static void topics_changed(bk_topics_t *t, const char *name, const bk_topic_t *topic)
{
    t->dv_counter++;
    t->dv_timestamp = rmq_wall_ms();
    t->seq++;
    topics_record(t, name, topic);
    if (!t->writing)
        topics_write(t);
    if (t->changed)
        t->changed(t->changed_arg, name);
}

rmq_err_t bk_topics_start(bk_topics_t *t, struct event_base *base)
{
    t->written = event_new(base, -1, 0, topics_written, t);
    return t->written ? RMQ_OK : RMQ_ENOMEM;
}

rmq_err_t bk_topics_wait_durable(bk_topics_t *t, bk_topics_durable_fn fn, void *arg)
{
    if (!t->written || t->durable_seq >= t->seq) {
        fn(arg, RMQ_OK);
        return RMQ_OK;
    }
    topics_waiter_t *w = malloc(sizeof(*w));
    if (!w)
        return RMQ_ENOMEM;
    *w = (topics_waiter_t){NULL, t->seq, fn, arg};
    if (t->waiters_tail)
        t->waiters_tail->next = w;
    else
        t->waiters = w;
    t->waiters_tail = w;
    if (!t->writing)             /* the last write failed: try again for this waiter */
        topics_write(t);
    return RMQ_OK;
}

bk_topics_t *bk_topics_new(const char *dir, bk_persist_t *persist, int auto_create,
                           int32_t default_queues, char *err, size_t errlen)
{
    bk_topics_t *t = calloc(1, sizeof(*t));
    if (t)
        pthread_mutex_init(&t->mu, NULL);
    if (t && asprintf(&t->path, "%s/topics.pb", dir) < 0)
        t->path = NULL;
    if (t && t->path && asprintf(&t->log_path, "%s/topics.log", dir) < 0)
        t->log_path = NULL;
    if (!t || !t->log_path || !(t->map = bk_map_new())) {
        snprintf(err, errlen, "topics: out of memory");
        bk_topics_free(t);
        return NULL;
    }
    t->persist = persist;
    t->dv_timestamp = rmq_wall_ms();
    if (topics_load(t, err, errlen) != RMQ_OK) {
        bk_topics_free(t);
        return NULL;
    }
    const bk_topic_t *tbw = bk_topics_get(t, BK_DEFAULT_TOPIC, strlen(BK_DEFAULT_TOPIC));
    if (auto_create && !tbw) {
        bk_topic_t def = {.read_queues = default_queues, .write_queues = default_queues,
                          .perm = BK_PERM_INHERIT | BK_PERM_READ | BK_PERM_WRITE};
        snprintf(def.name, sizeof(def.name), "%s", BK_DEFAULT_TOPIC);
        bk_topics_update(t, &def);
    } else if (!auto_create && tbw) {
        bk_topics_delete(t, BK_DEFAULT_TOPIC);
    }
    return t;
}

/* After the writer thread stopped: a started table still holding changes
 * in no job, or a log, is compacted here (blocking), so a clean stop keeps
 * every change and the next start reads one file. */
static void topics_final_write(bk_topics_t *t)
{
    topics_job_t j = {0};
    if (!t->written || (t->durable_seq == t->seq && !t->need_compact && !t->log_bytes))
        return;
    j.table_path = t->path;
    j.log_path = t->log_path;
    if (topics_pack(t, &j) != RMQ_OK || topics_job_run(&j) != RMQ_OK)
        LOG_ERROR("topics: the table could not be written at stop (the log keeps what it holds)");
    free(j.data);
}

static void topic_free(void *p)
{
    free(p);
}

void bk_topics_free(bk_topics_t *t)
{
    if (!t)
        return;
    if (t->map)
        topics_final_write(t);
    topics_release(t, UINT64_MAX, RMQ_ESHUTDOWN);
    if (t->written)
        event_free(t->written);
    pthread_mutex_destroy(&t->mu);
    bk_map_free(t->map, topic_free);
    free(t->pending.data);
    free(t->path);
    free(t->log_path);
    free(t);
}

void bk_topics_on_change(bk_topics_t *t, bk_topics_changed_fn fn, void *arg)
{
    t->changed = fn;
    t->changed_arg = arg;
}

void bk_topics_on_item(bk_topics_t *t, bk_topics_item_fn fn, void *arg)
{
    t->item = fn;
    t->item_arg = arg;
}

const bk_topic_t *bk_topics_get(const bk_topics_t *t, const char *name, size_t len)
{
    return bk_map_get(t->map, name, len);
}

rmq_err_t bk_topics_update(bk_topics_t *t, const bk_topic_t *topic)
{
    rmq_err_t rc = topics_put(t, topic);
    if (rc == RMQ_OK) {
        LOG_INFO("topic %s: read %d write %d perm %d", topic->name, topic->read_queues,
                 topic->write_queues, topic->perm);
        topics_changed(t, topic->name, topic);
        if (t->item)
            t->item(t->item_arg, topic->name, topic);
    }
    return rc;
}

const bk_topic_t *bk_topics_auto_create(bk_topics_t *t, const char *name, size_t len,
                                        const char *default_topic, int32_t queue_nums)
{
    if (!default_topic || !default_topic[0])
        default_topic = BK_DEFAULT_TOPIC;
    const bk_topic_t *tpl = bk_topics_get(t, default_topic, strlen(default_topic));
    if (!tpl || !(tpl->perm & BK_PERM_INHERIT) || len >= sizeof(tpl->name))
        return NULL;
    if (queue_nums <= 0)
        queue_nums = 4;
    bk_topic_t topic = {.perm = tpl->perm & ~BK_PERM_INHERIT};
    topic.read_queues = topic.write_queues = queue_nums < tpl->write_queues ? queue_nums : tpl->write_queues;
    memcpy(topic.name, name, len);
    if (bk_topics_update(t, &topic) != RMQ_OK)
        return NULL;
    return bk_topics_get(t, name, len);
}

rmq_err_t bk_topics_delete(bk_topics_t *t, const char *name)
{
    if (!topics_del(t, name))
        return RMQ_ENOTFOUND;
    LOG_INFO("topic %s deleted", name);
    topics_changed(t, name, NULL);
    if (t->item)
        t->item(t->item_arg, name, NULL);
    return RMQ_OK;
}

uint64_t bk_topics_epoch(const bk_topics_t *t)
{
    return t->deletes;
}

size_t bk_topics_count(const bk_topics_t *t)
{
    return bk_map_count(t->map);
}

int bk_topics_next(const bk_topics_t *t, size_t *cursor, const bk_topic_t **topic)
{
    const char *key;
    void *val;
    if (!bk_map_next(t->map, cursor, &key, &val))
        return 0;
    *topic = val;
    return 1;
}

void bk_topics_version(const bk_topics_t *t, Rmq__DataVersion *dv)
{
    rmq__data_version__init(dv);
    dv->timestamp = t->dv_timestamp;
    dv->counter = t->dv_counter;
}

void bk_topics_change_meta(const bk_topics_t *t, const char *name, const bk_topic_t *topic, Rmq__HaMeta *meta,
                           Rmq__TopicConfig *tc, Rmq__DataVersion *dv)
{
    rmq__ha_meta__init(meta);
    bk_topics_version(t, dv);
    meta->version = dv;
    if (topic) {
        bk_topic_to_pb(topic, tc);
        meta->change_case = RMQ__HA_META__CHANGE_TOPIC;
        meta->topic = tc;
    } else {
        meta->change_case = RMQ__HA_META__CHANGE_DELETED_TOPIC;
        meta->deleted_topic = (char *)name;
    }
}

/* One allocation holds the table, its version, pointer array and entries. */
typedef struct topics_snapshot {
    Rmq__TopicConfigTable tab;
    Rmq__DataVersion dv;
    Rmq__TopicConfig **ptrs;
    Rmq__TopicConfig items[];
} topics_snapshot_t;

Rmq__TopicConfigTable *bk_topics_table_new(const bk_topics_t *t)
{
    size_t n = bk_map_count(t->map);
    topics_snapshot_t *s = malloc(sizeof(*s) + n * sizeof(s->items[0]));
    Rmq__TopicConfig **ptrs = malloc((n ? n : 1) * sizeof(*ptrs));
    if (!s || !ptrs) {
        free(s);
        free(ptrs);
        return NULL;
    }
    rmq__topic_config_table__init(&s->tab);
    bk_topics_version(t, &s->dv);
    s->ptrs = ptrs;
    size_t cursor = 0, i = 0;
    const bk_topic_t *topic;
    while (i < n && bk_topics_next(t, &cursor, &topic)) {
        bk_topic_to_pb(topic, &s->items[i]);
        ptrs[i] = &s->items[i];
        i++;
    }
    s->tab.n_topics = i;
    s->tab.topics = ptrs;
    s->tab.data_version = &s->dv;
    return &s->tab;
}

void bk_topics_table_free(Rmq__TopicConfigTable *tab)
{
    if (!tab)
        return;
    topics_snapshot_t *s = (topics_snapshot_t *)tab;
    free(s->ptrs);
    free(s);
}
