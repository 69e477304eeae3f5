/* bk_metasync.c: slave metadata sync. Topic and group changes arrive in
 * the HA stream as they happen (bk_metasync_apply, in log order). Each tick
 * also sends GET_ALL_TOPIC_CONFIG, GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
 * GET_ALL_CONSUMER_OFFSET and GET_ALL_DELAY_OFFSET to the master (a new
 * round only once the previous one answered) and applies each answer as it
 * arrives: topics mirror the master's table (a topic it lacks is deleted
 * with its queues and offsets), groups are created or replaced, offsets
 * mirror the master's except those clients committed here, which go to
 * the master while ahead of its own. A table answer older than the last
 * streamed change of that table is skipped: the stream is newer. */
#include "bk_metasync.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "bk_admin_ops.h"
#include "bk_groups_pb.h"
#include "bk_offsets_pb.h"
#include "bk_topics_pb.h"
#include "rmq_message.h"
#include "rmq_log.h"

#define SYNC_TIMEOUT_MS 5000
#define OWN_KEY_MAX 300

/* A table's version as last streamed from the master. */
typedef struct seen_version {
    int have;
    int64_t timestamp, counter;
} seen_version_t;

/* An offset a client committed on this slave, not yet taken by the master. */
typedef struct own_commit {
    char topic[RMQ_TOPIC_MAX + 1];
    char group[RMQ_TOPIC_MAX + 1];
    int32_t queue_id;
} own_commit_t;

struct bk_metasync {
    const bk_node_t *node;
    rmq_client_pool_t *pool;
    struct event *tick;
    char master[128];             /* address the round in flight went to */
    int inflight;
    int round_ok;                 /* answers of this round that applied */
    long long count;
    seen_version_t topics_seen, groups_seen;
    bk_map_t *own;                /* "topic@group@queue" -> own_commit_t */
};

/* One push of an own commit in flight. */
typedef struct own_push {
    bk_metasync_t *m;
    char key[OWN_KEY_MAX];
    int64_t offset;
} own_push_t;

static void seen_note(seen_version_t *seen, const Rmq__DataVersion *dv)
{
    if (!dv)
        return;
    seen->have = 1;
    seen->timestamp = dv->timestamp;
    seen->counter = dv->counter;
}

/* 1 if a table answer of version dv predates the last streamed change. */
static int snapshot_stale(const seen_version_t *seen, const Rmq__DataVersion *dv)
{
    return seen->have && dv && dv->counter < seen->counter && dv->timestamp <= seen->timestamp;
}

/* ---- topics ------------------------------------------------------------- */

static int topic_differs(const bk_topic_t *a, const bk_topic_t *b)
{
    return !a || a->read_queues != b->read_queues || a->write_queues != b->write_queues ||
           a->perm != b->perm || a->order != b->order || a->sys_flag != b->sys_flag ||
           strcmp(a->attributes, b->attributes) != 0;
}

static void own_drop_topic(bk_metasync_t *m, const char *topic);

/* Deletes the slave's topics the master does not have, with their queues
 * and offsets: one lookup per topic in a map of the master's names, so a
 * table of 100,000 topics costs a pass, not a pass per topic. */
static void topics_drop_missing(bk_metasync_t *m, const Rmq__TopicConfigTable *tab)
{
    bk_topics_t *topics = m->node->topics;
    size_t n = bk_topics_count(topics), k = 0, cur = 0;
    bk_map_t *master = n > tab->n_topics ? bk_map_new() : NULL;
    char (*gone)[128] = master ? calloc(n - tab->n_topics, sizeof(*gone)) : NULL;
    const bk_topic_t *t;
    if (!gone)
        goto out;              /* no more topics here than there: none missing, or out of memory */
    for (size_t i = 0; i < tab->n_topics; i++)
        if (bk_map_put(master, tab->topics[i]->topic_name, strlen(tab->topics[i]->topic_name), master) != RMQ_OK)
            goto out;
    while (bk_topics_next(topics, &cur, &t))
        if (k < n - tab->n_topics && !bk_map_get(master, t->name, strlen(t->name)))
            snprintf(gone[k++], sizeof(gone[0]), "%s", t->name);
    for (size_t i = 0; i < k; i++) {
        bk_admin_topic_purge(m->node->topics, m->node->store, m->node->offsets, gone[i]);
        own_drop_topic(m, gone[i]);
    }
out:
    free(gone);
    bk_map_free(master, NULL);
}

/* Makes the slave's topic table equal to the master's. */
static void apply_topics(bk_metasync_t *m, const Rmq__TopicConfigTable *tab)
{
    bk_topics_t *topics = m->node->topics;
    if (snapshot_stale(&m->topics_seen, tab->data_version))
        return;
    for (size_t i = 0; i < tab->n_topics; i++) {
        bk_topic_t t;
        char why[256];
        if (bk_topic_from_pb(tab->topics[i], 1, &t, why, sizeof(why)) != RMQ_OK)
            LOG_WARN("metadata sync: the master's %s (kept without attributes)", why);
        if (topic_differs(bk_topics_get(topics, t.name, strlen(t.name)), &t))
            bk_topics_update(topics, &t);
    }
    topics_drop_missing(m, tab);
}

/* ---- groups ------------------------------------------------------------- */

static int group_differs(const bk_group_t *g, const Rmq__SubscriptionGroupConfig *pb)
{
    return !g || g->consume_enable != pb->consume_enable ||
           g->consume_broadcast_enable != pb->consume_broadcast_enable ||
           g->retry_queue_nums != pb->retry_queue_nums || g->retry_max_times != pb->retry_max_times ||
           g->broker_id != pb->broker_id || g->which_broker_when_consume_slowly != pb->which_broker_when_consume_slowly ||
           g->consume_orderly != pb->consume_message_orderly;
}

static void apply_groups(bk_metasync_t *m, const Rmq__SubscriptionGroupTable *tab)
{
    if (snapshot_stale(&m->groups_seen, tab->data_version))
        return;
    for (size_t i = 0; i < tab->n_groups; i++) {
        const Rmq__SubscriptionGroupConfig *pb = tab->groups[i];
        if (group_differs(bk_groups_get(m->node->groups, pb->group_name, strlen(pb->group_name)), pb))
            bk_groups_update(m->node->groups, pb);
    }
}

/* ---- offsets ------------------------------------------------------------ */

/* The master's offset of topic@group queue q, or -1. */
static int64_t master_offset(const Rmq__ConsumerOffsetTable *tab, const char *topic, const char *group, int32_t q)
{
    for (size_t i = 0; i < tab->n_entries; i++) {
        const Rmq__TopicGroupOffsets *e = tab->entries[i];
        if (strcmp(e->topic, topic) != 0 || strcmp(e->group, group) != 0)
            continue;
        for (size_t k = 0; k < e->n_offsets; k++)
            if (e->offsets[k]->queue_id == q)
                return e->offsets[k]->offset;
    }
    return -1;
}

/* Formats the own-commit key of topic@group queue q; 0 if it does not fit. */
static size_t own_key(char *buf, const char *topic, const char *group, int32_t q)
{
    int n = snprintf(buf, OWN_KEY_MAX, "%s@%s@%d", topic, group, q);
    return n < 0 || n >= OWN_KEY_MAX ? 0 : (size_t)n;
}

static const own_commit_t *own_get(const bk_metasync_t *m, const char *topic, const char *group, int32_t q)
{
    char key[OWN_KEY_MAX];
    size_t len = own_key(key, topic, group, q);
    return len ? bk_map_get(m->own, key, len) : NULL;
}

/* Forgets the own commits of topic (deleted: nothing to hand back). */
static void own_drop_topic(bk_metasync_t *m, const char *topic)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(m->own, &cursor, &key, &val))
        if (strcmp(((own_commit_t *)val)->topic, topic) == 0)
            free(bk_map_del_current(m->own, &cursor));
}

/* The master took (or refused) a pushed offset: forget the own commit if
 * the slave's offset is still the one pushed. */
static void pushed(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    own_push_t *p = arg;
    bk_metasync_t *m = p->m;
    if (err != RMQ_OK && err != RMQ_ESHUTDOWN)
        LOG_WARN_RL("slave sync: handing an offset to the master failed: %s", rmq_strerror(err));
    else if (err == RMQ_OK && resp->cmd->status != RMQ__STATUS__SUCCESS)
        LOG_WARN_RL("slave sync: master refused an offset: %s", resp->cmd->remark);
    else if (err == RMQ_OK) {
        own_commit_t *own = bk_map_get(m->own, p->key, strlen(p->key));
        if (own && bk_offsets_query(m->node->offsets, own->topic, own->group, own->queue_id) == p->offset)
            free(bk_map_del(m->own, p->key, strlen(p->key)));
    }
    free(p);
}

/* UPDATE_CONSUMER_OFFSET to the master for one own commit (key its map key). */
static void push_offset(bk_metasync_t *m, const char *key, const own_commit_t *own, int64_t off)
{
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    Rmq__ConsumerOffsetRequest h = RMQ__CONSUMER_OFFSET_REQUEST__INIT;
    rmq_client_t *cli = rmq_client_pool_get(m->pool, m->master);
    own_push_t *p = calloc(1, sizeof(*p));
    if (!cli || !p) {
        free(p);
        return;
    }
    p->m = m;
    p->offset = off;
    snprintf(p->key, sizeof(p->key), "%s", key);
    h.consumer_group = (char *)own->group;
    h.topic = (char *)own->topic;
    h.queue_id = own->queue_id;
    h.commit_offset = off;
    cmd.code = RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET;
    cmd.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
    cmd.consumer_offset = &h;
    if (rmq_client_call(cli, &cmd, NULL, 0, SYNC_TIMEOUT_MS, pushed, p) != RMQ_OK)
        free(p);
}

/* Hands the master each offset committed here that is ahead of its own;
 * forgets the others (the master moved on: its offset is mirrored). */
static void push_own(bk_metasync_t *m, const Rmq__ConsumerOffsetTable *tab)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(m->own, &cursor, &key, &val)) {
        const own_commit_t *own = val;
        int64_t mine = bk_offsets_query(m->node->offsets, own->topic, own->group, own->queue_id);
        if (mine <= master_offset(tab, own->topic, own->group, own->queue_id)) {
            free(bk_map_del_current(m->own, &cursor));
            continue;
        }
        LOG_INFO("slave sync: handing %s@%s queue %d offset %" PRId64 " (committed here) to the master",
                 own->topic, own->group, own->queue_id, mine);
        push_offset(m, key, own, mine);
    }
}

static void apply_offsets(bk_metasync_t *m, const Rmq__ConsumerOffsetTable *tab)
{
    push_own(m, tab);
    for (size_t i = 0; i < tab->n_entries; i++) {
        const Rmq__TopicGroupOffsets *e = tab->entries[i];
        for (size_t k = 0; k < e->n_offsets; k++) {
            const Rmq__QueueOffset *qo = e->offsets[k];
            if (!own_get(m, e->topic, e->group, qo->queue_id) &&
                qo->offset != bk_offsets_query(m->node->offsets, e->topic, e->group, qo->queue_id))
                bk_offsets_commit(m->node->offsets, e->topic, e->group, qo->queue_id, qo->offset);
        }
    }
}

void bk_metasync_note_commit(bk_metasync_t *m, const char *topic, const char *group, int32_t queue_id)
{
    char key[OWN_KEY_MAX];
    size_t len = own_key(key, topic, group, queue_id);
    own_commit_t *own;
    if (!len || bk_map_get(m->own, key, len))
        return;
    if (!(own = calloc(1, sizeof(*own))) || strlen(topic) > RMQ_TOPIC_MAX || strlen(group) > RMQ_TOPIC_MAX) {
        free(own);
        return;
    }
    snprintf(own->topic, sizeof(own->topic), "%s", topic);
    snprintf(own->group, sizeof(own->group), "%s", group);
    own->queue_id = queue_id;
    if (bk_map_put(m->own, key, len, own) != RMQ_OK) {
        LOG_ERROR_RL("slave sync: out of memory tracking the offset of %s@%s queue %d", topic, group,
                     queue_id);
        free(own);
    }
}

/* ---- streamed changes --------------------------------------------------- */

/* 0 if name follows the naming rule; else -1 with why. */
static int stream_name_ok(const char *what, const char *name, char *why, size_t whylen)
{
    const char *rule;
    if (rmq_name_is_valid(name, strlen(name), &rule))
        return 0;
    snprintf(why, whylen, "master streamed %s '%.150s', which %s", what, name, rule);
    return -1;
}

static int stream_topic(bk_metasync_t *m, const Rmq__TopicConfig *pb, char *why, size_t whylen)
{
    bk_topic_t t;
    if (stream_name_ok("topic", pb->topic_name, why, whylen) != 0 ||
        bk_topic_from_pb(pb, 1, &t, why, whylen) != RMQ_OK)
        return -1;
    if (topic_differs(bk_topics_get(m->node->topics, t.name, strlen(t.name)), &t) &&
        bk_topics_update(m->node->topics, &t) != RMQ_OK)
        return snprintf(why, whylen, "out of memory applying topic %s", t.name), -1;
    return 0;
}

static int stream_group(bk_metasync_t *m, const Rmq__SubscriptionGroupConfig *pb, char *why, size_t whylen)
{
    if (stream_name_ok("subscription group", pb->group_name, why, whylen) != 0)
        return -1;
    if (group_differs(bk_groups_get(m->node->groups, pb->group_name, strlen(pb->group_name)), pb) &&
        bk_groups_update(m->node->groups, pb) != RMQ_OK)
        return snprintf(why, whylen, "out of memory applying group %s", pb->group_name), -1;
    return 0;
}

int bk_metasync_apply(bk_metasync_t *m, const Rmq__HaMeta *meta, char *why, size_t whylen)
{
    int rc = -1;
    switch (meta->change_case) {
    case RMQ__HA_META__CHANGE_TOPIC:
        rc = stream_topic(m, meta->topic, why, whylen);
        break;
    case RMQ__HA_META__CHANGE_DELETED_TOPIC:
        if ((rc = stream_name_ok("topic", meta->deleted_topic, why, whylen)) == 0) {
            bk_admin_topic_purge(m->node->topics, m->node->store, m->node->offsets, meta->deleted_topic);
            own_drop_topic(m, meta->deleted_topic);
        }
        break;
    case RMQ__HA_META__CHANGE_GROUP:
        rc = stream_group(m, meta->group, why, whylen);
        break;
    case RMQ__HA_META__CHANGE_DELETED_GROUP:
        if ((rc = stream_name_ok("subscription group", meta->deleted_group, why, whylen)) == 0)
            bk_groups_delete(m->node->groups, meta->deleted_group);
        break;
    default:
        snprintf(why, whylen, "master streamed a metadata change of kind %d this slave does not know",
                 (int)meta->change_case);
        return -1;
    }
    if (rc == 0)
        seen_note(meta->change_case == RMQ__HA_META__CHANGE_TOPIC ||
                  meta->change_case == RMQ__HA_META__CHANGE_DELETED_TOPIC ? &m->topics_seen : &m->groups_seen,
                  meta->version);
    return rc;
}

/* ---- rounds ------------------------------------------------------------- */

/* The master's delay offsets go to this broker's scheduler. */
static void apply_delay_offsets(bk_metasync_t *m, const Rmq__DelayOffsetTable *tab)
{
    m->node->ops->delay_offsets(m->node->arg, tab);
}

/* Applies one answer of the round by its header. 1 if it applied. */
static int apply(bk_metasync_t *m, const Rmq__Command *cmd)
{
    switch (cmd->header_case) {
    case RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE: apply_topics(m, cmd->topic_config_table); return 1;
    case RMQ__COMMAND__HEADER_SUBSCRIPTION_GROUP_TABLE: apply_groups(m, cmd->subscription_group_table); return 1;
    case RMQ__COMMAND__HEADER_CONSUMER_OFFSET_TABLE: apply_offsets(m, cmd->consumer_offset_table); return 1;
    case RMQ__COMMAND__HEADER_DELAY_OFFSET_TABLE: apply_delay_offsets(m, cmd->delay_offset_table); return 1;
    default: return 0;
    }
}

static void answered(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    bk_metasync_t *m = arg;
    m->inflight--;
    if (err == RMQ_ESHUTDOWN)
        return;
    if (err != RMQ_OK || resp->cmd->status != RMQ__STATUS__SUCCESS || !apply(m, resp->cmd))
        LOG_WARN_RL("slave sync from master %s failed: %s", m->master,
                    err != RMQ_OK ? rmq_strerror(err) : resp->cmd->remark[0] ? resp->cmd->remark : "unexpected answer");
    else
        m->round_ok++;
    if (m->inflight == 0 && m->round_ok == 4)
        m->count++;
}

/* Starts a round if the master's address is known and none is in flight. */
static void metasync_tick(evutil_socket_t fd, short what, void *arg)
{
    static const int codes[] = {RMQ__REQUEST_CODE__GET_ALL_TOPIC_CONFIG,
                                RMQ__REQUEST_CODE__GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
                                RMQ__REQUEST_CODE__GET_ALL_CONSUMER_OFFSET,
                                RMQ__REQUEST_CODE__GET_ALL_DELAY_OFFSET};
    bk_metasync_t *m = arg;
    const char *master = m->node->ops->master_addr(m->node->arg);
    if (m->inflight || !master[0] || bk_node_stopping(m->node))
        return;
    snprintf(m->master, sizeof(m->master), "%s", master);
    rmq_client_t *cli = rmq_client_pool_get(m->pool, m->master);
    m->round_ok = 0;
    for (size_t i = 0; cli && i < sizeof(codes) / sizeof(codes[0]); i++) {
        Rmq__Command cmd = RMQ__COMMAND__INIT;
        cmd.code = codes[i];
        if (rmq_client_call(cli, &cmd, NULL, 0, SYNC_TIMEOUT_MS, answered, m) == RMQ_OK)
            m->inflight++;
    }
}

bk_metasync_t *bk_metasync_new(const bk_node_t *node)
{
    bk_metasync_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->node = node;
    m->own = bk_map_new();
    rmq_client_opts_t opts = {.connect_timeout_ms = 3000, .name = "slavesync"};
    rmq_security_client_opts(node->sec, &opts);
    m->pool = rmq_client_pool_new(node->base, &opts);
    m->tick = event_new(node->base, -1, EV_PERSIST, metasync_tick, m);
    if (!m->own || !m->pool || !m->tick) {
        bk_metasync_free(m);
        return NULL;
    }
    int64_t ms = node->cfg->slave_sync_interval;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    event_add(m->tick, &tv);
    return m;
}

void bk_metasync_free(bk_metasync_t *m)
{
    if (!m)
        return;
    if (m->pool)
        rmq_client_pool_free(m->pool);
    if (m->tick)
        event_free(m->tick);
    if (m->own)
        bk_map_free(m->own, free);
    free(m);
}

long long bk_metasync_count(const bk_metasync_t *m)
{
    return m->count;
}
