/* bk_topics.c: the topic table: a map of heap bk_topic_t, a data version,
 * load from and persist to config/topics.pb (packed TopicConfigTable).
 * Persistence costs one table write per disk write, not per change: change
 * seq numbers the changes; a write carries the table as of its seq; when it
 * completes (the writer thread activates an event on the loop) the waiters
 * up to that seq are released and, if changes came meanwhile, the next
 * write starts with the latest table. */
#include "bk_topics_pb.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "rmq_log.h"
#include "rmq_time.h"
#include "st_file.h"

typedef struct topics_waiter {
    struct topics_waiter *next;
    uint64_t seq;                  /* released once durable_seq reaches it */
    bk_topics_durable_fn fn;
    void *arg;
} topics_waiter_t;

struct bk_topics {
    bk_map_t *map;
    char *path;
    bk_persist_t *persist;
    struct event *written;         /* NULL until started */
    pthread_mutex_t mu;            /* guards written_rc (the writer thread sets it) */
    rmq_err_t written_rc;
    uint64_t seq;                  /* changes so far */
    uint64_t writing_seq;          /* seq of the write in flight */
    uint64_t durable_seq;          /* seq of the last write that reached the disk */
    int writing;
    topics_waiter_t *waiters, *waiters_tail;   /* in seq order */
    int64_t dv_timestamp;
    int64_t dv_counter;
    bk_topics_changed_fn changed;
    void *changed_arg;
    bk_topics_item_fn item;
    void *item_arg;
};

void bk_topic_to_pb(const bk_topic_t *topic, Rmq__TopicConfig *pb)
{
    rmq__topic_config__init(pb);
    pb->topic_name = (char *)topic->name;
    pb->read_queue_nums = topic->read_queues;
    pb->write_queue_nums = topic->write_queues;
    pb->perm = topic->perm;
    pb->order = topic->order;
    pb->topic_sys_flag = topic->sys_flag;
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

/* Reads topics.pb into the table; a missing file is an empty table. */
static rmq_err_t topics_load(bk_topics_t *t, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    rmq_err_t rc = st_file_read_all(t->path, &data, &len);
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
    for (size_t i = 0; i < tab->n_topics && rc == RMQ_OK; i++) {
        const Rmq__TopicConfig *pb = tab->topics[i];
        bk_topic_t topic = {.read_queues = pb->read_queue_nums, .write_queues = pb->write_queue_nums,
                            .perm = pb->perm, .order = pb->order, .sys_flag = pb->topic_sys_flag};
        snprintf(topic.name, sizeof(topic.name), "%s", pb->topic_name);
        rc = topics_put(t, &topic);
    }
    if (tab->data_version) {
        t->dv_timestamp = tab->data_version->timestamp;
        t->dv_counter = tab->data_version->counter;
    }
    rmq__topic_config_table__free_unpacked(tab, NULL);
    return rc;
}

/* Writer thread: a write finished; hand its result to the loop. */
static void topics_write_done(void *arg, rmq_err_t rc)
{
    bk_topics_t *t = arg;
    pthread_mutex_lock(&t->mu);
    t->written_rc = rc;
    pthread_mutex_unlock(&t->mu);
    event_active(t->written, EV_READ, 0);
}

/* Packs the table as of now and queues its write (with a completion once
 * started). */
static void topics_write(bk_topics_t *t)
{
    Rmq__TopicConfigTable *tab = bk_topics_table_new(t);
    size_t len = tab ? rmq__topic_config_table__get_packed_size(tab) : 0;
    uint8_t *buf = tab ? malloc(len ? len : 1) : NULL;
    rmq_err_t rc = RMQ_ENOMEM;
    if (buf) {
        rmq__topic_config_table__pack(tab, buf);
        rc = t->written ? bk_persist_submit_cb(t->persist, t->path, buf, len, topics_write_done, t)
                        : bk_persist_submit(t->persist, t->path, buf, len);
    }
    bk_topics_table_free(tab);
    if (rc != RMQ_OK) {
        LOG_ERROR_RL("topics: out of memory persisting %s", t->path);
        return;
    }
    t->writing = t->written != NULL;
    t->writing_seq = t->seq;
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

/* Loop: the write in flight finished; release its waiters and write the
 * changes that came meanwhile. */
static void topics_written(evutil_socket_t fd, short what, void *arg)
{
    bk_topics_t *t = arg;
    pthread_mutex_lock(&t->mu);
    rmq_err_t rc = t->written_rc;
    pthread_mutex_unlock(&t->mu);
    t->writing = 0;
    if (rc == RMQ_OK)
        t->durable_seq = t->writing_seq;
    topics_release(t, t->writing_seq, rc);
    if (t->seq != t->writing_seq)
        topics_write(t);
}

/* Bumps the version, writes the table unless a write is in flight (its
 * completion writes again) and notifies. */
static void topics_changed(bk_topics_t *t, const char *name)
{
    t->dv_counter++;
    t->dv_timestamp = rmq_wall_ms();
    t->seq++;
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
    if (!t || !(t->map = bk_map_new()) || asprintf(&t->path, "%s/topics.pb", dir) < 0) {
        snprintf(err, errlen, "topics: out of memory");
        if (t)
            t->path = NULL;
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

static void topic_free(void *p)
{
    free(p);
}

void bk_topics_free(bk_topics_t *t)
{
    if (!t)
        return;
    topics_release(t, UINT64_MAX, RMQ_ESHUTDOWN);
    if (t->written)
        event_free(t->written);
    pthread_mutex_destroy(&t->mu);
    bk_map_free(t->map, topic_free);
    free(t->path);
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
        topics_changed(t, topic->name);
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
    bk_topic_t *cur = bk_map_del(t->map, name, strlen(name));
    if (!cur)
        return RMQ_ENOTFOUND;
    free(cur);
    LOG_INFO("topic %s deleted", name);
    topics_changed(t, name);
    if (t->item)
        t->item(t->item_arg, name, NULL);
    return RMQ_OK;
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
