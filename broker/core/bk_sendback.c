/* bk_sendback.c: CONSUMER_SEND_MSG_BACK on neutral requests (see
 * bk_sendback.h): the failed message is read back from the commit log by its
 * offset, its topic checked against the reader, and a copy with the retry
 * properties stored on the group's retry or dead-letter topic. */
#include "bk_sendback.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_props.h"
#include "rmq_log.h"
#include "rmq_message.h"

#define RETRY_BASE_LEVEL 3           /* first retry: level 3 (10 s by default) */

struct bk_sendback {
    bk_sendback_config_t cfg;
    bk_props_buf_t pb;               /* the copy's properties */
    struct evbuffer *rd;             /* the record read back */
};

static const char *const sendback_drop[] = {RMQ_PROP_DELAY, RMQ_PROP_REAL_TOPIC, RMQ_PROP_REAL_QID,
                                            RMQ_PROP_DELIVER_AT, RMQ_PROP_WAIT, NULL};

bk_sendback_t *bk_sendback_new(const bk_sendback_config_t *cfg)
{
    bk_sendback_t *sb = calloc(1, sizeof(*sb));
    if (!sb || !(sb->rd = evbuffer_new())) {
        free(sb);
        return NULL;
    }
    sb->cfg = *cfg;
    return sb;
}

void bk_sendback_set_slave(bk_sendback_t *sb, int is_slave)
{
    sb->cfg.is_slave = is_slave;
}

void bk_sendback_free(bk_sendback_t *sb)
{
    if (!sb)
        return;
    bk_props_buf_free(&sb->pb);
    evbuffer_free(sb->rd);
    free(sb);
}

/* prefix + group (+ "_" + pop_topic when not NULL) as a topic, created
 * with queues queues when missing. */
static const bk_topic_t *group_topic(bk_sendback_t *sb, const char *prefix, const char *group, const char *pop_topic,
                                     int32_t queues)
{
    char name[sizeof(((bk_topic_t *)0)->name)];
    size_t n = rmq_group_topic_name(name, sizeof(name), prefix, group, pop_topic);
    if (n == 0 || n > RMQ_TOPIC_MAX || sb->cfg.is_slave || queues <= 0)
        return NULL;
    const bk_topic_t *t = bk_topics_get(sb->cfg.topics, name, n);
    if (t)
        return t;
    bk_topic_t nt = {.read_queues = queues, .write_queues = queues, .perm = BK_PERM_READ | BK_PERM_WRITE};
    memcpy(nt.name, name, n + 1);
    if (bk_topics_update(sb->cfg.topics, &nt) != RMQ_OK)
        return NULL;
    LOG_INFO("created %s for consumer group %s", name, group);
    return bk_topics_get(sb->cfg.topics, name, n);
}

const bk_topic_t *bk_sendback_retry_topic(bk_sendback_t *sb, const char *group)
{
    const bk_group_t *g = bk_groups_get(sb->cfg.groups, group, strlen(group));
    return g ? group_topic(sb, RMQ_RETRY_PREFIX, group, NULL, g->retry_queue_nums) : NULL;
}

/* 1 if the record's topic is group's own retry topic (its messages are the
 * group's to send back again). */
static int is_group_retry(const rmq_record_t *rec, const char *group)
{
    size_t pl = strlen(RMQ_RETRY_PREFIX), gl = strlen(group);
    return rec->topic_len == pl + gl && memcmp(rec->topic, RMQ_RETRY_PREFIX, pl) == 0 &&
           memcmp(rec->topic + pl, group, gl) == 0;
}

/* Builds the retry (or dead-letter) copy's properties into sb->pb. */
static rmq_err_t sendback_props(bk_sendback_t *sb, const rmq_record_t *rec, const bk_sendback_req_t *req,
                                const char *msg_id, int64_t level)
{
    bk_props_buf_t *pb = &sb->pb;
    char topic[RMQ_TOPIC_MAX + 1];
    size_t vl = 0;
    rmq_err_t rc = bk_props_copy(pb, rec->properties, rec->properties_len, sendback_drop);
    if (rc == RMQ_OK && !rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_RETRY_TOPIC, &vl)) {
        snprintf(topic, sizeof(topic), "%.*s", (int)rec->topic_len, rec->topic);
        rc = bk_props_put(pb, RMQ_PROP_RETRY_TOPIC, req->origin_topic[0] ? req->origin_topic : topic);
    }
    if (rc == RMQ_OK && !rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_ORIGIN_MESSAGE_ID, &vl)) {
        char uniq[80];
        const char *u = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_UNIQ_KEY, &vl);
        if (u && vl < sizeof(uniq))
            snprintf(uniq, sizeof(uniq), "%.*s", (int)vl, u);
        else
            snprintf(uniq, sizeof(uniq), "%s", msg_id);
        rc = bk_props_put(pb, RMQ_PROP_ORIGIN_MESSAGE_ID, req->origin_msg_id[0] ? req->origin_msg_id : uniq);
    }
    if (rc == RMQ_OK && level > 0)
        rc = bk_props_put_int(pb, RMQ_PROP_DELAY, level);
    if (rc == RMQ_OK && req->pop_topic &&
        !rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_FIRST_POP_TIME, &vl))
        rc = bk_props_put_int(pb, RMQ_PROP_FIRST_POP_TIME, req->first_pop_time);
    return rc;
}

/* Tells the counters a copy of group's (properties in sb->pb) went to its
 * DLQ, under the topic it was first sent to (its RETRY_TOPIC). */
static void dead_lettered(bk_sendback_t *sb, const char *group)
{
    size_t len = 0;
    char origin[RMQ_TOPIC_MAX + 1];
    const char *t = rmq_props_get(sb->pb.data, sb->pb.len, RMQ_PROP_RETRY_TOPIC, &len);
    snprintf(origin, sizeof(origin), "%.*s", t ? (int)len : 0, t ? t : "");
    bk_counts_dead_lettered(sb->cfg.counts, group, origin);
}

/* Stores the copy of rec (properties in sb->pb) on topic, through the
 * delay scheduler when it carries a level; like bk_append_put. */
static int sendback_store(bk_sendback_t *sb, const rmq_record_t *rec, const bk_topic_t *topic,
                          bk_append_out_t *out, bk_append_fn cb, void *arg)
{
    size_t taglen = 0;
    const char *tag = rmq_props_get(sb->pb.data, sb->pb.len, RMQ_PROP_TAGS, &taglen);
    st_msg_t m = {
        .topic = topic->name,
        .topic_len = strlen(topic->name),
        .queue_id = 0,
        .flag = rec->flag,
        .sys_flag = rec->sys_flag,
        .born_timestamp = rec->born_timestamp,
        .born_ip = rec->born_ip,
        .born_port = (uint16_t)rec->born_port,
        .born_ip6 = rmq_record_born_ip6(rec),
        .reconsume_times = rec->reconsume_times + 1,
        .body = rec->body,
        .body_len = rec->body_len,
        .properties = sb->pb.data,
        .properties_len = sb->pb.len,
        .tag_code = tag ? st_tag_hash(tag, taglen) : 0,
    };
    const char *why = NULL;
    rmq_err_t rc = bk_schedule_divert(sb->cfg.schedule, &m, &why);
    if (rc != RMQ_OK) {
        bk_result_set(&out->r, rc == RMQ_EINVAL ? BK_MESSAGE_ILLEGAL : BK_SYSTEM_ERROR, "%s",
                      why ? why : rmq_strerror(rc));
        return 1;
    }
    return bk_append_put(sb->cfg.append, &m, 1, out, cb, arg);
}

/* Checks the group of req; the group, or NULL with r set. */
static const bk_group_t *sendback_group(bk_sendback_t *sb, const bk_sendback_req_t *req, bk_result_t *r)
{
    const char *why = NULL;
    if (!rmq_name_is_valid(req->group, strlen(req->group), &why))
        return bk_result_set(r, BK_NAME_ILLEGAL, "group '%.100s' %s", req->group, why), NULL;
    const bk_group_t *g = bk_groups_use(sb->cfg.groups, req->group, strlen(req->group));
    if (!g)
        bk_result_set(r, BK_GROUP_NOT_EXIST, "subscription group %.100s does not exist on broker %s", req->group,
                      sb->cfg.addr);
    return g;
}

/* Reads the record at req->offset into sb->rd and checks who may copy it;
 * 1 with *rec, or 0 with r set. */
static int sendback_read(bk_sendback_t *sb, const bk_sendback_req_t *req, rmq_record_t *rec, bk_result_t *r)
{
    evbuffer_drain(sb->rd, evbuffer_get_length(sb->rd));
    if (st_store_read_record(sb->cfg.store, req->offset, sb->rd) != RMQ_OK ||
        rmq_record_decode(evbuffer_pullup(sb->rd, -1), evbuffer_get_length(sb->rd), 0, rec) != RMQ_OK)
        return bk_result_set(r, BK_SYSTEM_ERROR, "no message at commit-log offset %" PRId64 " on broker %s",
                             req->offset, sb->cfg.addr), 0;
    return is_group_retry(rec, req->group) || bk_reader_check(req->reader, rec->topic, rec->topic_len, r);
}

int bk_sendback_run(bk_sendback_t *sb, const bk_sendback_req_t *req, bk_append_out_t *out, bk_append_fn cb,
                    void *arg)
{
    rmq_record_t rec;
    memset(out, 0, sizeof(*out));
    if (!bk_append_writable(sb->cfg.append, &out->r))
        return 1;
    const bk_group_t *g = sendback_group(sb, req, &out->r);
    if (!g)
        return 1;
    if (g->retry_queue_nums <= 0)
        return bk_result_set(&out->r, BK_OK, "retryQueueNums is 0: message dropped"), 1;
    if (!sendback_read(sb, req, &rec, &out->r))
        return 1;
    int32_t max = req->max_reconsume_times > 0 ? req->max_reconsume_times : g->retry_max_times;
    int dlq = rec.reconsume_times >= max || req->delay_level < 0;
    int64_t level = 0;
    if (!dlq && !req->pop_topic) {
        level = req->delay_level > 0 ? req->delay_level : RETRY_BASE_LEVEL + (int64_t)rec.reconsume_times;
        if (level > bk_schedule_levels(sb->cfg.schedule))
            level = bk_schedule_levels(sb->cfg.schedule);
    }
    const bk_topic_t *topic = dlq ? group_topic(sb, RMQ_DLQ_PREFIX, req->group, NULL, 1)
                                  : group_topic(sb, RMQ_RETRY_PREFIX, req->group, req->pop_topic, g->retry_queue_nums);
    if (!topic)
        return bk_result_set(&out->r, BK_SYSTEM_ERROR, "cannot create the %s topic of %.100s",
                             dlq ? "dead-letter" : "retry", req->group), 1;
    char msg_id[RMQ_MSG_ID_MAX + 1];
    st_store_msg_id(sb->cfg.store, req->offset, msg_id);
    if (sendback_props(sb, &rec, req, msg_id, level) != RMQ_OK)
        return bk_result_set(&out->r, BK_SYSTEM_ERROR, "out of memory"), 1;
    int now = sendback_store(sb, &rec, topic, out, cb, arg);
    if (dlq && out->stored) {
        LOG_INFO("message %s of group %s failed %d times (max %d): moved to %s", msg_id, req->group,
                 rec.reconsume_times + 1, max, topic->name);
        dead_lettered(sb, req->group);
    }
    if (!req->pop_topic && (!now || out->r.status == BK_OK))   /* a consumer's send-back the log took in hand */
        bk_counts_sent_back(sb->cfg.counts, req->group, topic->name);
    return now;
}
