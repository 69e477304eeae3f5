/* bk_offsets.c: the consumer offset table: a map from "topic@group" to a
 * growable array of offsets indexed by queue id (-1: unknown), persisted on
 * the metadata writer thread. */
#include "bk_offsets_pb.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "rmq_log.h"
#include "rmq_file.h"
#include "rmq_message.h"

typedef struct bk_tg {
    char *topic;
    char *group;
    int64_t *offs;
    int32_t n;
} bk_tg_t;

struct bk_offsets {
    bk_map_t *map;
    char *path;
    bk_persist_t *persist;
    int dirty;
};

static void tg_free(void *p)
{
    bk_tg_t *tg = p;
    if (!tg)
        return;
    free(tg->topic);
    free(tg->group);
    free(tg->offs);
    free(tg);
}

/* The entry for topic@group, created if create is set. */
static bk_tg_t *tg_find(const bk_offsets_t *o, const char *topic, const char *group, int create)
{
    char key[512];
    size_t klen = rmq_topic_group_key(key, sizeof(key), topic, group);
    if (!klen)
        return NULL;
    bk_tg_t *tg = bk_map_get(o->map, key, klen);
    if (tg || !create)
        return tg;
    if (!(tg = calloc(1, sizeof(*tg))) || !(tg->topic = strdup(topic)) ||
        !(tg->group = strdup(group)) || bk_map_put(o->map, key, klen, tg) != RMQ_OK) {
        tg_free(tg);
        return NULL;
    }
    return tg;
}

/* Sets queue_id's offset, growing the array (new slots -1). */
static rmq_err_t tg_set(bk_tg_t *tg, int32_t queue_id, int64_t offset)
{
    if (queue_id >= tg->n) {
        int32_t n = queue_id + 1;
        int64_t *offs = realloc(tg->offs, (size_t)n * sizeof(*offs));
        if (!offs)
            return RMQ_ENOMEM;
        for (int32_t i = tg->n; i < n; i++)
            offs[i] = -1;
        tg->offs = offs;
        tg->n = n;
    }
    tg->offs[queue_id] = offset;
    return RMQ_OK;
}

static rmq_err_t offsets_load(bk_offsets_t *o, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    rmq_err_t rc = rmq_file_read_all(o->path, &data, &len);
    if (rc == RMQ_ENOTFOUND)
        return RMQ_OK;
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "%s: %s", o->path, rmq_strerror(rc));
        return rc;
    }
    Rmq__ConsumerOffsetTable *tab = rmq__consumer_offset_table__unpack(NULL, len, (const uint8_t *)data);
    free(data);
    if (!tab) {
        snprintf(err, errlen, "%s: not a valid ConsumerOffsetTable", o->path);
        return RMQ_ECORRUPT;
    }
    for (size_t i = 0; i < tab->n_entries && rc == RMQ_OK; i++) {
        const Rmq__TopicGroupOffsets *e = tab->entries[i];
        for (size_t j = 0; j < e->n_offsets && rc == RMQ_OK; j++)
            rc = bk_offsets_commit(o, e->topic, e->group, e->offsets[j]->queue_id, e->offsets[j]->offset);
    }
    rmq__consumer_offset_table__free_unpacked(tab, NULL);
    o->dirty = 0;
    if (rc != RMQ_OK)
        snprintf(err, errlen, "%s: %s", o->path, rmq_strerror(rc));
    return rc;
}

bk_offsets_t *bk_offsets_new(const char *dir, bk_persist_t *persist, char *err, size_t errlen)
{
    bk_offsets_t *o = calloc(1, sizeof(*o));
    if (!o || !(o->map = bk_map_new()) || asprintf(&o->path, "%s/consumerOffset.pb", dir) < 0) {
        snprintf(err, errlen, "offsets: out of memory");
        if (o)
            o->path = NULL;
        bk_offsets_free(o);
        return NULL;
    }
    o->persist = persist;
    if (offsets_load(o, err, errlen) != RMQ_OK) {
        bk_offsets_free(o);
        return NULL;
    }
    return o;
}

void bk_offsets_free(bk_offsets_t *o)
{
    if (!o)
        return;
    bk_map_free(o->map, tg_free);
    free(o->path);
    free(o);
}

rmq_err_t bk_offsets_commit(bk_offsets_t *o, const char *topic, const char *group,
                            int32_t queue_id, int64_t offset)
{
    if (queue_id < 0 || queue_id > 65535 || offset < 0)
        return RMQ_EINVAL;
    bk_tg_t *tg = tg_find(o, topic, group, 1);
    if (!tg)
        return RMQ_ENOMEM;
    rmq_err_t rc = tg_set(tg, queue_id, offset);
    if (rc == RMQ_OK)
        o->dirty = 1;
    return rc;
}

int64_t bk_offsets_query(const bk_offsets_t *o, const char *topic, const char *group, int32_t queue_id)
{
    const bk_tg_t *tg = tg_find(o, topic, group, 0);
    if (!tg || queue_id < 0 || queue_id >= tg->n)
        return -1;
    return tg->offs[queue_id];
}

void bk_offsets_each(const bk_offsets_t *o, const char *group, bk_offsets_fn fn, void *arg)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(o->map, &cursor, &key, &val)) {
        const bk_tg_t *tg = val;
        if (group && strcmp(tg->group, group) != 0)
            continue;
        for (int32_t i = 0; i < tg->n; i++)
            if (tg->offs[i] >= 0)
                fn(arg, tg->topic, tg->group, i, tg->offs[i]);
    }
}

/* Removes every entry whose topic (by_topic) or group matches name. */
static void offsets_delete_where(bk_offsets_t *o, const char *name, int by_topic)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(o->map, &cursor, &key, &val)) {
        bk_tg_t *tg = val;
        if (strcmp(by_topic ? tg->topic : tg->group, name) == 0) {
            tg_free(bk_map_del_current(o->map, &cursor));
            o->dirty = 1;
        }
    }
}

void bk_offsets_delete_topic(bk_offsets_t *o, const char *topic)
{
    offsets_delete_where(o, topic, 1);
}

void bk_offsets_delete_group(bk_offsets_t *o, const char *group)
{
    offsets_delete_where(o, group, 0);
}

void bk_offsets_persist(bk_offsets_t *o)
{
    if (!o->dirty)
        return;
    Rmq__ConsumerOffsetTable *tab = bk_offsets_table_new(o, NULL);
    uint8_t *buf = NULL;
    size_t len = 0;
    if (tab) {
        len = rmq__consumer_offset_table__get_packed_size(tab);
        if ((buf = malloc(len ? len : 1)))
            rmq__consumer_offset_table__pack(tab, buf);
        bk_offsets_table_free(tab);
    }
    if (!buf) {
        LOG_ERROR_RL("offsets: out of memory persisting %s", o->path);
        return;
    }
    if (bk_persist_submit(o->persist, o->path, buf, len) == RMQ_OK)
        o->dirty = 0;
}

/* Counts the entries and known offsets a snapshot of group needs. */
static void offsets_count(const bk_offsets_t *o, const char *group, size_t *n_tg, size_t *n_off)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    *n_tg = *n_off = 0;
    while (bk_map_next(o->map, &cursor, &key, &val)) {
        const bk_tg_t *tg = val;
        if (group && strcmp(tg->group, group) != 0)
            continue;
        (*n_tg)++;
        for (int32_t i = 0; i < tg->n; i++)
            *n_off += tg->offs[i] >= 0;
    }
}

/* One allocation: table, entry pointers, entries, offset pointers, offsets. */
Rmq__ConsumerOffsetTable *bk_offsets_table_new(const bk_offsets_t *o, const char *group)
{
    size_t n_tg, n_off;
    offsets_count(o, group, &n_tg, &n_off);
    size_t size = sizeof(Rmq__ConsumerOffsetTable) + n_tg * (sizeof(Rmq__TopicGroupOffsets *) +
                  sizeof(Rmq__TopicGroupOffsets)) + n_off * (sizeof(Rmq__QueueOffset *) +
                  sizeof(Rmq__QueueOffset));
    char *mem = malloc(size);
    if (!mem)
        return NULL;
    Rmq__ConsumerOffsetTable *tab = (Rmq__ConsumerOffsetTable *)mem;
    Rmq__TopicGroupOffsets **eptr = (Rmq__TopicGroupOffsets **)(tab + 1);
    Rmq__TopicGroupOffsets *ents = (Rmq__TopicGroupOffsets *)(eptr + n_tg);
    Rmq__QueueOffset **qptr = (Rmq__QueueOffset **)(ents + n_tg);
    Rmq__QueueOffset *qs = (Rmq__QueueOffset *)(qptr + n_off);
    rmq__consumer_offset_table__init(tab);
    tab->entries = eptr;
    size_t cursor = 0, q = 0;
    const char *key;
    void *val;
    while (bk_map_next(o->map, &cursor, &key, &val)) {
        const bk_tg_t *tg = val;
        if (group && strcmp(tg->group, group) != 0)
            continue;
        Rmq__TopicGroupOffsets *e = &ents[tab->n_entries];
        rmq__topic_group_offsets__init(e);
        e->topic = tg->topic;
        e->group = tg->group;
        e->offsets = &qptr[q];
        for (int32_t i = 0; i < tg->n; i++) {
            if (tg->offs[i] < 0)
                continue;
            rmq__queue_offset__init(&qs[q]);
            qs[q].queue_id = i;
            qs[q].offset = tg->offs[i];
            qptr[q] = &qs[q];
            q++;
            e->n_offsets++;
        }
        eptr[tab->n_entries++] = e;
    }
    return tab;
}

void bk_offsets_table_free(Rmq__ConsumerOffsetTable *tab)
{
    free(tab);
}
