/* bk_offset_ops.c: consumer-offset requests over the offsets table and the
 * store (see bk_offset_ops.h). */
#include "bk_offset_ops.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

struct bk_offset_ops {
    bk_offset_ops_config_t cfg;
};

bk_offset_ops_t *bk_offset_ops_new(const bk_offset_ops_config_t *cfg)
{
    bk_offset_ops_t *o = calloc(1, sizeof(*o));
    if (o)
        o->cfg = *cfg;
    return o;
}

void bk_offset_ops_free(bk_offset_ops_t *o)
{
    free(o);
}

bk_status_t bk_offset_query(bk_offset_ops_t *o, const bk_offset_key_t *key, int64_t *offset, bk_result_t *r)
{
    *offset = bk_offsets_query(o->cfg.offsets, key->topic, key->group, key->queue_id);
    if (*offset < 0)
        return bk_result_set(r, BK_NOT_FOUND, "no offset stored for group %s on %s queue %d", key->group,
                             key->topic, key->queue_id);
    return bk_result_ok(r);
}

/* BK_OK if name follows the naming rule, else BK_NAME_ILLEGAL with r set. */
static bk_status_t name_check(const char *what, const char *name, bk_result_t *r)
{
    const char *why;
    if (rmq_name_is_valid(name, strlen(name), &why))
        return BK_OK;
    return bk_result_set(r, BK_NAME_ILLEGAL, "UPDATE_CONSUMER_OFFSET: %s '%.200s' %s", what, name, why);
}

bk_status_t bk_offset_commit(bk_offset_ops_t *o, const bk_offset_key_t *key, int64_t offset, bk_result_t *r)
{
    if (name_check("topic", key->topic, r) != BK_OK || name_check("consumer group", key->group, r) != BK_OK)
        return r->status;
    rmq_err_t rc = bk_offsets_commit(o->cfg.offsets, key->topic, key->group, key->queue_id, offset);
    if (rc == RMQ_EINVAL)
        return bk_result_set(r, BK_BAD_REQUEST, "UPDATE_CONSUMER_OFFSET: bad queueId %d or offset %" PRId64,
                             key->queue_id, offset);
    if (rc != RMQ_OK)
        return bk_result_set(r, BK_SYSTEM_ERROR, "UPDATE_CONSUMER_OFFSET: %s", rmq_strerror(rc));
    if (o->cfg.committed)
        o->cfg.committed(o->cfg.committed_arg, key->topic, key->group, key->queue_id);
    return bk_result_ok(r);
}

void bk_offset_queue(bk_offset_ops_t *o, const bk_queue_offset_req_t *req, bk_queue_offset_out_t *out)
{
    st_store_t *st = o->cfg.store;
    out->timestamp = 0;
    switch (req->what) {
    case BK_QUEUE_MAX_OFFSET:
        out->offset = st_store_max_offset(st, req->topic, req->queue_id);
        break;
    case BK_QUEUE_MIN_OFFSET:
        out->offset = st_store_min_offset(st, req->topic, req->queue_id);
        break;
    case BK_QUEUE_OFFSET_BY_TIME:
        out->offset = st_store_offset_by_time(st, req->topic, req->queue_id, req->timestamp);
        break;
    case BK_QUEUE_EARLIEST_TIME:
        out->offset = st_store_min_offset(st, req->topic, req->queue_id);
        out->timestamp = st_store_time_at(st, req->topic, req->queue_id, out->offset);
        break;
    }
}

/* Collects a group's progress (bk_offsets_each): counts when queues is NULL. */
typedef struct progress_walk {
    bk_offset_ops_t *o;
    const char *topic;
    bk_consume_progress_t *out;
    size_t count;
} progress_walk_t;

static void progress_add(void *arg, const char *topic, const char *group, int32_t queue_id, int64_t offset)
{
    progress_walk_t *w = arg;
    if (w->topic[0] && strcmp(w->topic, topic) != 0)
        return;
    if (!w->out->queues) {
        w->count++;
        return;
    }
    bk_queue_progress_t *q = &w->out->queues[w->out->n++];
    st_store_t *st = w->o->cfg.store;
    q->topic = topic;
    q->queue_id = queue_id;
    q->broker_offset = st_store_max_offset(st, topic, queue_id);
    q->consumer_offset = offset;
    q->last_timestamp = offset > 0 ? st_store_time_at(st, topic, queue_id, offset - 1) : 0;
}

bk_status_t bk_offset_progress(bk_offset_ops_t *o, const char *group, const char *topic,
                               bk_consume_progress_t *out, bk_result_t *r)
{
    progress_walk_t w = {.o = o, .topic = topic, .out = out};
    memset(out, 0, sizeof(*out));
    bk_offsets_each(o->cfg.offsets, group, progress_add, &w);
    if (!(out->queues = calloc(w.count ? w.count : 1, sizeof(*out->queues))))
        return bk_result_set(r, BK_SYSTEM_ERROR, "out of memory");
    bk_offsets_each(o->cfg.offsets, group, progress_add, &w);
    out->consume_tps = bk_groupstats_tps(o->cfg.groupstats, group, topic);
    return bk_result_ok(r);
}

void bk_consume_progress_clear(bk_consume_progress_t *out)
{
    free(out->queues);
    out->queues = NULL;
    out->n = 0;
}

/* Where a reset to timestamp puts queue_id of topic (never below 0). */
static int64_t reset_target(bk_offset_ops_t *o, const char *topic, int32_t queue_id, int64_t timestamp)
{
    st_store_t *st = o->cfg.store;
    int64_t at = timestamp == -1 ? st_store_max_offset(st, topic, queue_id)
                                 : st_store_offset_by_time(st, topic, queue_id, timestamp);
    return at < 0 ? 0 : at;
}

bk_status_t bk_offset_reset(bk_offset_ops_t *o, const char *topic, const char *group, int64_t timestamp, int force,
                            bk_offset_reset_t *out, size_t *told, bk_result_t *r)
{
    *out = (bk_offset_reset_t){.topic = topic, .group = group, .timestamp = timestamp};
    *told = 0;
    const bk_topic_t *t = bk_topics_get(o->cfg.topics, topic, strlen(topic));
    if (!t)
        return bk_result_set(r, BK_TOPIC_NOT_EXIST, "reset offset: no topic %.200s in this broker", topic);
    size_t n = t->write_queues > 0 ? (size_t)t->write_queues : 0;
    if (!(out->offsets = calloc(n ? n : 1, sizeof(*out->offsets))))
        return bk_result_set(r, BK_SYSTEM_ERROR, "out of memory");
    out->n = n;
    for (size_t i = 0; i < n; i++) {
        bk_offset_key_t key = {topic, group, (int32_t)i};
        int64_t committed = bk_offsets_query(o->cfg.offsets, topic, group, key.queue_id);
        int64_t at = reset_target(o, topic, key.queue_id, timestamp);
        out->offsets[i] = force || committed < 0 || at < committed ? at : committed;
        if (out->offsets[i] != committed && bk_offset_commit(o, &key, out->offsets[i], r) != BK_OK) {
            bk_offset_reset_clear(out);
            return r->status;
        }
    }
    *told = bk_clients_reset_offset(o->cfg.clients, out);
    return bk_result_ok(r);
}

/* One offset of a clone's source group, its topic copied: the walk ends
 * before the destination's commits change the table. */
typedef struct clone_item {
    char *topic;
    int32_t queue_id;
    int64_t offset;
} clone_item_t;

/* Collects a clone's source offsets (bk_offsets_each): counts when items is NULL. */
typedef struct clone_walk {
    const char *topic;               /* "": every topic */
    clone_item_t *items;
    size_t n;
    int oom;
} clone_walk_t;

static void clone_add(void *arg, const char *topic, const char *group, int32_t queue_id, int64_t offset)
{
    clone_walk_t *w = arg;
    (void)group;
    if (w->topic[0] && strcmp(w->topic, topic) != 0)
        return;
    if (w->items) {
        clone_item_t *it = &w->items[w->n];
        *it = (clone_item_t){strdup(topic), queue_id, offset};
        w->oom |= !it->topic;
    }
    w->n++;
}

static void clone_items_free(clone_walk_t *w)
{
    for (size_t i = 0; w->items && i < w->n; i++)
        free(w->items[i].topic);
    free(w->items);
}

/* 1 if a clone copies src's offsets of topic: the topic exists here and,
 * unless offline, src (when it has live clients) subscribes to it. */
static int clone_topic_wanted(bk_offset_ops_t *o, const char *src, const char *topic, int offline)
{
    bk_group_view_t view;
    if (!bk_topics_get(o->cfg.topics, topic, strlen(topic)))
        return 0;
    return offline || !bk_clients_group(o->cfg.clients, src, &view) ||
           bk_clients_subscription(o->cfg.clients, src, topic, NULL) != NULL;
}

bk_status_t bk_offset_clone(bk_offset_ops_t *o, const char *src, const char *dest, const char *topic, int offline,
                            size_t *copied, bk_result_t *r)
{
    clone_walk_t w = {.topic = topic};
    *copied = 0;
    if (name_check("consumer group", dest, r) != BK_OK)
        return r->status;
    bk_offsets_each(o->cfg.offsets, src, clone_add, &w);
    if (!(w.items = calloc(w.n ? w.n : 1, sizeof(*w.items))))
        return bk_result_set(r, BK_SYSTEM_ERROR, "CLONE_GROUP_OFFSET: out of memory");
    w.n = 0;
    bk_offsets_each(o->cfg.offsets, src, clone_add, &w);
    bk_result_set(r, w.oom ? BK_SYSTEM_ERROR : BK_OK, "%s", w.oom ? "CLONE_GROUP_OFFSET: out of memory" : "");
    for (size_t i = 0; r->status == BK_OK && i < w.n; i++) {
        const clone_item_t *it = &w.items[i];
        bk_offset_key_t key = {it->topic, dest, it->queue_id};
        if (clone_topic_wanted(o, src, it->topic, offline) && bk_offset_commit(o, &key, it->offset, r) == BK_OK)
            (*copied)++;
    }
    clone_items_free(&w);
    return r->status;
}

bk_status_t bk_offset_time_span(bk_offset_ops_t *o, const char *topic, const char *group, int64_t now_ms,
                                bk_time_span_t **out, size_t *n, bk_result_t *r)
{
    st_store_t *st = o->cfg.store;
    const bk_topic_t *t = bk_topics_get(o->cfg.topics, topic, strlen(topic));
    *out = NULL;
    *n = 0;
    if (!t)
        return bk_result_set(r, BK_TOPIC_NOT_EXIST, "topic[%.200s] not exist", topic);
    size_t queues = t->write_queues > 0 ? (size_t)t->write_queues : 0;
    if (!(*out = calloc(queues ? queues : 1, sizeof(**out))))
        return bk_result_set(r, BK_SYSTEM_ERROR, "QUERY_CONSUME_TIME_SPAN: out of memory");
    for (size_t i = 0; i < queues; i++) {
        bk_time_span_t *s = &(*out)[i];
        int32_t q = (int32_t)i;
        int64_t max = st_store_max_offset(st, topic, q);
        int64_t committed = bk_offsets_query(o->cfg.offsets, topic, group, q);
        s->queue_id = q;
        s->min_time = st_store_time_at(st, topic, q, st_store_min_offset(st, topic, q));
        s->max_time = st_store_time_at(st, topic, q, max - 1);
        s->consume_time = committed > 0 ? st_store_time_at(st, topic, q, committed - 1) : s->min_time;
        int64_t next = committed < max ? st_store_time_at(st, topic, q, committed < 0 ? 0 : committed) : -1;
        s->delay_ms = next >= 0 ? now_ms - next : 0;
    }
    *n = queues;
    return bk_result_ok(r);
}
