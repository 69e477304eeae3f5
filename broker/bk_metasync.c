/* bk_metasync.c: slave metadata sync. Each tick sends GET_ALL_TOPIC_CONFIG,
 * GET_ALL_SUBSCRIPTIONGROUP_CONFIG, GET_ALL_CONSUMER_OFFSET and GET_ALL_DELAY_OFFSET to the master
 * (a new round only once the previous one answered) and applies each answer
 * as it arrives: topics mirror the master's table, groups are created or
 * replaced, offsets take the per-queue maximum. */
#include "bk_metasync.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_register.h"
#include "bk_schedule.h"
#include "rmq_log.h"

#define SYNC_TIMEOUT_MS 5000

struct bk_metasync {
    bk_broker_t *bk;
    rmq_client_pool_t *pool;
    struct event *tick;
    char master[128];             /* address the round in flight went to */
    int inflight;
    int round_ok;                 /* answers of this round that applied */
    long long count;
};

/* ---- topics ------------------------------------------------------------- */

static int topic_differs(const bk_topic_t *a, const bk_topic_t *b)
{
    return !a || a->read_queues != b->read_queues || a->write_queues != b->write_queues ||
           a->perm != b->perm || a->order != b->order || a->sys_flag != b->sys_flag;
}

/* 1 if the master's table names topic. */
static int master_has_topic(const Rmq__TopicConfigTable *tab, const char *name)
{
    for (size_t i = 0; i < tab->n_topics; i++)
        if (strcmp(tab->topics[i]->topic_name, name) == 0)
            return 1;
    return 0;
}

/* Deletes the slave's topics the master does not have. */
static void topics_drop_missing(bk_topics_t *topics, const Rmq__TopicConfigTable *tab)
{
    size_t n = bk_topics_count(topics), k = 0, cur = 0;
    char (*gone)[128] = calloc(n ? n : 1, sizeof(*gone));
    const bk_topic_t *t;
    if (!gone)
        return;
    while (bk_topics_next(topics, &cur, &t))
        if (k < n && !master_has_topic(tab, t->name))
            snprintf(gone[k++], sizeof(gone[0]), "%s", t->name);
    for (size_t i = 0; i < k; i++)
        bk_topics_delete(topics, gone[i]);
    free(gone);
}

/* Makes the slave's topic table equal to the master's. */
static void apply_topics(bk_metasync_t *m, const Rmq__TopicConfigTable *tab)
{
    bk_topics_t *topics = m->bk->topics;
    for (size_t i = 0; i < tab->n_topics; i++) {
        const Rmq__TopicConfig *pb = tab->topics[i];
        bk_topic_t t = {.read_queues = pb->read_queue_nums, .write_queues = pb->write_queue_nums,
                        .perm = pb->perm, .order = pb->order, .sys_flag = pb->topic_sys_flag};
        snprintf(t.name, sizeof(t.name), "%s", pb->topic_name);
        if (topic_differs(bk_topics_get(topics, t.name, strlen(t.name)), &t))
            bk_topics_update(topics, &t);
    }
    topics_drop_missing(topics, tab);
}

/* ---- groups ------------------------------------------------------------- */

static int group_differs(const bk_group_t *g, const Rmq__SubscriptionGroupConfig *pb)
{
    return !g || g->consume_enable != pb->consume_enable ||
           g->consume_broadcast_enable != pb->consume_broadcast_enable ||
           g->retry_queue_nums != pb->retry_queue_nums || g->retry_max_times != pb->retry_max_times ||
           g->broker_id != pb->broker_id || g->which_broker_when_consume_slowly != pb->which_broker_when_consume_slowly;
}

static void apply_groups(bk_metasync_t *m, const Rmq__SubscriptionGroupTable *tab)
{
    for (size_t i = 0; i < tab->n_groups; i++) {
        const Rmq__SubscriptionGroupConfig *pb = tab->groups[i];
        if (group_differs(bk_groups_get(m->bk->groups, pb->group_name, strlen(pb->group_name)), pb))
            bk_groups_update(m->bk->groups, pb);
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

static void pushed(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    if (err != RMQ_OK && err != RMQ_ESHUTDOWN)
        LOG_WARN_RL("slave sync: handing an offset to the master failed: %s", rmq_strerror(err));
    else if (err == RMQ_OK && resp->cmd->status != RMQ__STATUS__SUCCESS)
        LOG_WARN_RL("slave sync: master refused an offset: %s", resp->cmd->remark);
}

/* UPDATE_CONSUMER_OFFSET to the master for one queue. */
static void push_offset(bk_metasync_t *m, const char *topic, const char *group, int32_t q, int64_t off)
{
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    Rmq__ConsumerOffsetRequest h = RMQ__CONSUMER_OFFSET_REQUEST__INIT;
    rmq_client_t *cli = rmq_client_pool_get(m->pool, m->master);
    h.consumer_group = (char *)group;
    h.topic = (char *)topic;
    h.queue_id = q;
    h.commit_offset = off;
    cmd.code = RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET;
    cmd.header_case = RMQ__COMMAND__HEADER_CONSUMER_OFFSET;
    cmd.consumer_offset = &h;
    if (cli)
        rmq_client_call(cli, &cmd, NULL, 0, SYNC_TIMEOUT_MS, pushed, m);
}

/* Hands the master every slave offset it lacks or has smaller. */
static void push_newer(bk_metasync_t *m, const Rmq__ConsumerOffsetTable *tab)
{
    Rmq__ConsumerOffsetTable *mine = bk_offsets_table_new(m->bk->offsets, NULL);
    if (!mine)
        return;
    for (size_t i = 0; i < mine->n_entries; i++) {
        const Rmq__TopicGroupOffsets *e = mine->entries[i];
        for (size_t k = 0; k < e->n_offsets; k++) {
            const Rmq__QueueOffset *qo = e->offsets[k];
            if (qo->offset > master_offset(tab, e->topic, e->group, qo->queue_id)) {
                LOG_INFO("slave sync: handing %s@%s queue %d offset %" PRId64 " to the master", e->topic,
                         e->group, qo->queue_id, qo->offset);
                push_offset(m, e->topic, e->group, qo->queue_id, qo->offset);
            }
        }
    }
    bk_offsets_table_free(mine);
}

static void apply_offsets(bk_metasync_t *m, const Rmq__ConsumerOffsetTable *tab)
{
    push_newer(m, tab);
    for (size_t i = 0; i < tab->n_entries; i++) {
        const Rmq__TopicGroupOffsets *e = tab->entries[i];
        for (size_t k = 0; k < e->n_offsets; k++) {
            const Rmq__QueueOffset *qo = e->offsets[k];
            if (qo->offset > bk_offsets_query(m->bk->offsets, e->topic, e->group, qo->queue_id))
                bk_offsets_commit(m->bk->offsets, e->topic, e->group, qo->queue_id, qo->offset);
        }
    }
}

/* ---- rounds ------------------------------------------------------------- */

/* Applies one answer of the round by its header. 1 if it applied. */
static int apply(bk_metasync_t *m, const Rmq__Command *cmd)
{
    switch (cmd->header_case) {
    case RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE: apply_topics(m, cmd->topic_config_table); return 1;
    case RMQ__COMMAND__HEADER_SUBSCRIPTION_GROUP_TABLE: apply_groups(m, cmd->subscription_group_table); return 1;
    case RMQ__COMMAND__HEADER_CONSUMER_OFFSET_TABLE: apply_offsets(m, cmd->consumer_offset_table); return 1;
    case RMQ__COMMAND__HEADER_DELAY_OFFSET_TABLE: bk_schedule_apply(m->bk->schedule, cmd->delay_offset_table); return 1;
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
    const char *master = m->bk->reg ? bk_register_master_addr(m->bk->reg) : "";
    if (m->inflight || !master[0] || m->bk->stopping)
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

bk_metasync_t *bk_metasync_new(bk_broker_t *bk)
{
    bk_metasync_t *m = calloc(1, sizeof(*m));
    if (!m)
        return NULL;
    m->bk = bk;
    rmq_client_opts_t opts = {.connect_timeout_ms = 3000, .name = "slavesync"};
    rmq_security_client_opts(&bk->sec, &opts);
    m->pool = rmq_client_pool_new(bk->base, &opts);
    m->tick = event_new(bk->base, -1, EV_PERSIST, metasync_tick, m);
    if (!m->pool || !m->tick) {
        bk_metasync_free(m);
        return NULL;
    }
    int64_t ms = bk->cfg->slave_sync_interval;
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
    free(m);
}

long long bk_metasync_count(const bk_metasync_t *m)
{
    return m->count;
}
