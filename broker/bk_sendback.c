/* bk_sendback.c: CONSUMER_SEND_MSG_BACK and the retry / dead-letter topics
 * (see bk_sendback.h). The failed message is read back from the commit log
 * by its physical offset, so the consumer sends only a small header. */
#include "bk_sendback.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_routes.h"
#include "fr_status.h"
#include "bk_props.h"
#include "bk_schedule.h"
#include "rmq_log.h"
#include "rmq_message.h"

#define RETRY_BASE_LEVEL 3           /* first retry: level 3 (10 s by default) */

static const char *const sendback_drop[] = {RMQ_PROP_DELAY, RMQ_PROP_REAL_TOPIC, RMQ_PROP_REAL_QID,
                                            RMQ_PROP_DELIVER_AT, RMQ_PROP_WAIT, NULL};

/* prefix + group as a topic, created with queues queues when missing. */
static const bk_topic_t *group_topic(bk_broker_t *bk, const char *prefix, const char *group, int32_t queues)
{
    char name[sizeof(((bk_topic_t *)0)->name)];
    int n = snprintf(name, sizeof(name), "%s%s", prefix, group);
    if (n < 0 || (size_t)n > RMQ_TOPIC_MAX || bk->cfg->broker_role == BK_SLAVE || queues <= 0)
        return NULL;
    const bk_topic_t *t = bk_topics_get(bk->topics, name, (size_t)n);
    if (t)
        return t;
    bk_topic_t nt = {.read_queues = queues, .write_queues = queues,
                     .perm = BK_PERM_READ | BK_PERM_WRITE};
    memcpy(nt.name, name, (size_t)n + 1);
    if (bk_topics_update(bk->topics, &nt) != RMQ_OK)
        return NULL;
    LOG_INFO("created %s for consumer group %s", name, group);
    return bk_topics_get(bk->topics, name, (size_t)n);
}

const bk_topic_t *bk_sendback_retry_topic(bk_broker_t *bk, const char *group)
{
    const bk_group_t *g = bk_groups_get(bk->groups, group, strlen(group));
    return g ? group_topic(bk, RMQ_RETRY_PREFIX, group, g->retry_queue_nums) : NULL;
}

/* Builds the retry (or dead-letter) copy's properties into pb. */
static rmq_err_t sendback_props(bk_props_buf_t *pb, const rmq_record_t *rec, const Rmq__ConsumerSendMsgBackRequest *h,
                                const char *msg_id, int64_t level)
{
    char topic[RMQ_TOPIC_MAX + 1];
    size_t vl = 0;
    rmq_err_t rc = bk_props_copy(pb, rec->properties, rec->properties_len, sendback_drop);
    if (rc == RMQ_OK && !rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_RETRY_TOPIC, &vl)) {
        snprintf(topic, sizeof(topic), "%.*s", (int)rec->topic_len, rec->topic);
        rc = bk_props_put(pb, RMQ_PROP_RETRY_TOPIC, h->origin_topic[0] ? h->origin_topic : topic);
    }
    if (rc == RMQ_OK && !rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_ORIGIN_MESSAGE_ID, &vl)) {
        char uniq[80];
        const char *u = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_UNIQ_KEY, &vl);
        if (u && vl < sizeof(uniq))
            snprintf(uniq, sizeof(uniq), "%.*s", (int)vl, u);
        else
            snprintf(uniq, sizeof(uniq), "%s", msg_id);
        rc = bk_props_put(pb, RMQ_PROP_ORIGIN_MESSAGE_ID, h->origin_msg_id[0] ? h->origin_msg_id : uniq);
    }
    if (rc == RMQ_OK && level > 0)
        rc = bk_props_put_int(pb, RMQ_PROP_DELAY, level);
    return rc;
}

/* Stores the copy of rec on topic (through the scheduler when level > 0);
 * answers. */
static void sendback_store(bk_broker_t *bk, rmq_conn_t *conn, rmq_reply_to_t to, const rmq_record_t *rec,
                           const bk_props_buf_t *pb, const bk_topic_t *topic)
{
    size_t taglen = 0;
    const char *tag = rmq_props_get(pb->data, pb->len, RMQ_PROP_TAGS, &taglen);
    st_msg_t m = {
        .topic = topic->name,
        .topic_len = strlen(topic->name),
        .queue_id = 0,
        .flag = rec->flag,
        .sys_flag = rec->sys_flag,
        .born_timestamp = rec->born_timestamp,
        .born_ip = rec->born_ip,
        .born_port = (uint16_t)rec->born_port,
        .reconsume_times = rec->reconsume_times + 1,
        .body = rec->body,
        .body_len = rec->body_len,
        .properties = pb->data,
        .properties_len = pb->len,
        .tag_code = tag ? st_tag_hash(tag, taglen) : 0,
    };
    const char *why = NULL;
    rmq_err_t rc = bk_schedule_divert(bk->schedule, &m, &why);
    if (rc != RMQ_OK) {
        rmq_conn_replyf(conn, to, rc == RMQ_EINVAL ? RMQ__STATUS__MESSAGE_ILLEGAL : RMQ__STATUS__SYSTEM_ERROR,
                        "CONSUMER_SEND_MSG_BACK: %s", why ? why : rmq_strerror(rc));
        return;
    }
    if (fr_append_reply(bk->append, &m, 1, conn, to, "CONSUMER_SEND_MSG_BACK"))
        bk_stats_add(&bk->stats, BK_STAT_PUT, 1);
}

/* CONSUMER_SEND_MSG_BACK: the message at offset failed in group; retry it
 * later or bury it in the group's dead-letter queue. */
void fr_send_back(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    rmq_reply_to_t to = rmq_reply_to(req->cmd);
    const char *why = NULL;
    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_SEND_BACK, "ConsumerSendMsgBackRequest (send_back)"))
        return;
    const Rmq__ConsumerSendMsgBackRequest *h = req->cmd->send_back;
    bk_result_t r;
    if (!bk_append_writable(bk->append, &r)) {
        fr_reply_result(conn, to, &r, "CONSUMER_SEND_MSG_BACK");
        return;
    }
    if (!rmq_name_is_valid(h->group, strlen(h->group), &why)) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__NAME_ILLEGAL, "CONSUMER_SEND_MSG_BACK: group '%.200s' %s", h->group, why);
        return;
    }
    const bk_group_t *g = bk_groups_use(bk->groups, h->group, strlen(h->group));
    if (!g) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SUBSCRIPTION_GROUP_NOT_EXIST,
                        "subscription group %.200s does not exist on broker %s", h->group, bk->addr);
        return;
    }
    if (g->retry_queue_nums <= 0) {
        rmq_conn_reply(conn, to, NULL, RMQ__STATUS__SUCCESS, "retryQueueNums is 0: message dropped", NULL);
        return;
    }
    struct evbuffer *buf = evbuffer_new();
    bk_props_buf_t pb = {0};
    rmq_record_t rec;
    if (!buf) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    if (st_store_read_record(bk->store, h->offset, buf) != RMQ_OK ||
        rmq_record_decode(evbuffer_pullup(buf, -1), evbuffer_get_length(buf), 0, &rec) != RMQ_OK) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SYSTEM_ERROR,
                        "CONSUMER_SEND_MSG_BACK: no message at commit-log offset %" PRId64 " on broker %s",
                        h->offset, bk->addr);
        goto out;
    }
    int32_t max = h->max_reconsume_times > 0 ? h->max_reconsume_times : g->retry_max_times;
    int dlq = rec.reconsume_times >= max || h->delay_level < 0;
    int64_t level = 0;
    if (!dlq) {
        level = h->delay_level > 0 ? h->delay_level : RETRY_BASE_LEVEL + (int64_t)rec.reconsume_times;
        if (level > bk_schedule_levels(bk->schedule))
            level = bk_schedule_levels(bk->schedule);
    }
    const bk_topic_t *topic = dlq ? group_topic(bk, RMQ_DLQ_PREFIX, h->group, 1)
                                  : group_topic(bk, RMQ_RETRY_PREFIX, h->group, g->retry_queue_nums);
    if (!topic) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SYSTEM_ERROR, "CONSUMER_SEND_MSG_BACK: cannot create the %s topic of %.200s",
                        dlq ? "dead-letter" : "retry", h->group);
        goto out;
    }
    char msg_id[33];
    st_store_msg_id(bk->ip, (uint16_t)bk->port, h->offset, msg_id);
    if (sendback_props(&pb, &rec, h, msg_id, level) != RMQ_OK) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        goto out;
    }
    if (dlq)
        LOG_INFO("message %s of group %s failed %d times (max %d): moved to %s", msg_id, h->group,
                 rec.reconsume_times + 1, max, topic->name);
    sendback_store(bk, conn, to, &rec, &pb, topic);
out:
    bk_props_buf_free(&pb);
    evbuffer_free(buf);
}
