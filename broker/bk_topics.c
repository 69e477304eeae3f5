/* bk_topics.c: the topic table: a map of heap bk_topic_t, a data version,
 * load from and persist to config/topics.pb (packed TopicConfigTable). */
#include "bk_topics_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "rmq_log.h"
#include "rmq_time.h"
#include "st_file.h"

struct bk_topics {
    bk_map_t *map;
    char *path;
    bk_persist_t *persist;
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

/* Bumps the version, queues a write of the table and notifies. */
static void topics_changed(bk_topics_t *t)
{
    t->dv_counter++;
    t->dv_timestamp = rmq_wall_ms();
    Rmq__TopicConfigTable *tab = bk_topics_table_new(t);
    if (tab) {
        size_t len = rmq__topic_config_table__get_packed_size(tab);
        uint8_t *buf = malloc(len ? len : 1);
        if (buf) {
            rmq__topic_config_table__pack(tab, buf);
            bk_persist_submit(t->persist, t->path, buf, len);
        }
        bk_topics_table_free(tab);
    }
    if (!tab)
        LOG_ERROR_RL("topics: out of memory persisting %s", t->path);
    if (t->changed)
        t->changed(t->changed_arg);
}

bk_topics_t *bk_topics_new(const char *dir, bk_persist_t *persist, int auto_create,
                           int32_t default_queues, char *err, size_t errlen)
{
    bk_topics_t *t = calloc(1, sizeof(*t));
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
        topics_changed(t);
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
    topics_changed(t);
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
