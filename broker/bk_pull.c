/* bk_pull.c: PULL_MESSAGE. Checks the request, reads from the store into
 * an evbuffer of references into the mapped commit log (moved into the
 * reply without copying), maps the store's status to the wire status
 * (ROCKETMQ-NOTES 7.2), stores the commit offset the pull carries, and
 * parks pulls that found nothing in the long-polling hold (bk_hold), and
 * suggests which broker of the set the consumer should pull from next. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bk_broker.h"
#include "bk_hold.h"
#include "bk_metrics.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_subexpr.h"
#include "rmq_time.h"

#define PULL_MAX_TAGS 64

struct bk_pull {
    bk_broker_t *bk;
    bk_hold_t *hold;
    int64_t in_memory_max;        /* accessMessageInMemoryMaxRatio of physical memory, bytes */
};

typedef struct pull_filter {
    st_tag_filter_t f;
    int64_t codes[PULL_MAX_TAGS];
} pull_filter_t;

/* rmq_subexpr_fn: adds a tag's hash to the filter (-1 past PULL_MAX_TAGS). */
static rmq_err_t filter_add(const char *tag, size_t len, void *arg)
{
    pull_filter_t *pf = arg;
    if (pf->f.n_codes == PULL_MAX_TAGS)
        return RMQ_EINVAL;
    pf->codes[pf->f.n_codes++] = st_tag_hash(tag, len);
    return RMQ_OK;
}

/* Parses a subscription expression (rmq_subexpr.h) into tag hashes; -1 if
 * malformed or naming more than PULL_MAX_TAGS tags. */
static int filter_parse(const char *expr, pull_filter_t *pf)
{
    memset(pf, 0, sizeof(*pf));
    pf->f.codes = pf->codes;
    return rmq_subexpr_parse(expr, &pf->f.match_all, filter_add, pf) == RMQ_OK ? 0 : -1;
}

/* Wire status for a store result; also corrects next_begin_offset per 7.2. */
static int pull_status(const Rmq__PullMessageRequest *h, st_get_result_t *res)
{
    switch (res->status) {
    case ST_GET_FOUND:
        return RMQ__STATUS__SUCCESS;
    case ST_GET_NO_MATCHED_LOGIC_QUEUE:
    case ST_GET_NO_MESSAGE_IN_QUEUE:
        res->next_begin_offset = 0;
        return h->queue_offset != 0 ? RMQ__STATUS__PULL_OFFSET_MOVED : RMQ__STATUS__PULL_NOT_FOUND;
    case ST_GET_OFFSET_TOO_SMALL:
        res->next_begin_offset = res->min_offset;
        return RMQ__STATUS__PULL_OFFSET_MOVED;
    case ST_GET_OFFSET_OVERFLOW_ONE:
        res->next_begin_offset = h->queue_offset;
        return RMQ__STATUS__PULL_NOT_FOUND;
    case ST_GET_OFFSET_OVERFLOW_BADLY:
        res->next_begin_offset = res->max_offset;
        return RMQ__STATUS__PULL_OFFSET_MOVED;
    case ST_GET_OFFSET_FOUND_NULL:
        return RMQ__STATUS__PULL_NOT_FOUND;
    case ST_GET_NO_MATCHED_MESSAGE:
    case ST_GET_MESSAGE_WAS_REMOVING:
    default:
        return RMQ__STATUS__PULL_RETRY_IMMEDIATELY;
    }
}

/* Checks names, group, topic and queue; answers and returns NULL on failure. */
static const bk_topic_t *pull_check(bk_pull_t *p, rmq_conn_t *conn, rmq_reply_to_t to,
                                    const Rmq__PullMessageRequest *h)
{
    bk_broker_t *bk = p->bk;
    const char *why;
    if (!(bk->cfg->broker_permission & BK_PERM_READ))
        return rmq_conn_replyf(conn, to, RMQ__STATUS__NO_PERMISSION, "broker %s is not readable", bk->addr), NULL;
    if (!rmq_name_is_valid(h->topic, strlen(h->topic), &why))
        return rmq_conn_replyf(conn, to, RMQ__STATUS__NAME_ILLEGAL, "PULL_MESSAGE: topic '%.200s' %s", h->topic, why), NULL;
    if (!rmq_name_is_valid(h->consumer_group, strlen(h->consumer_group), &why))
        return rmq_conn_replyf(conn, to, RMQ__STATUS__NAME_ILLEGAL, "PULL_MESSAGE: consumer group '%.200s' %s",
                               h->consumer_group, why), NULL;
    const bk_group_t *grp = bk_groups_use(bk->groups, h->consumer_group, strlen(h->consumer_group));
    if (!grp)
        return rmq_conn_replyf(conn, to, RMQ__STATUS__SUBSCRIPTION_GROUP_NOT_EXIST,
                               "subscription group %s does not exist (autoCreateSubscriptionGroup=false)",
                               h->consumer_group), NULL;
    if (!grp->consume_enable)
        return rmq_conn_replyf(conn, to, RMQ__STATUS__NO_PERMISSION, "group %s may not consume",
                               h->consumer_group), NULL;
    const bk_topic_t *topic = bk_topics_get(bk->topics, h->topic, strlen(h->topic));
    if (!topic)
        return rmq_conn_replyf(conn, to, RMQ__STATUS__TOPIC_NOT_EXIST, "topic %s does not exist on broker %s",
                               h->topic, bk->addr), NULL;
    if (!(topic->perm & BK_PERM_READ))
        return rmq_conn_replyf(conn, to, RMQ__STATUS__NO_PERMISSION, "topic %s is not readable (perm %d)",
                               h->topic, topic->perm), NULL;
    if (h->queue_id < 0 || h->queue_id >= topic->read_queues)
        return rmq_conn_replyf(conn, to, RMQ__STATUS__BAD_REQUEST,
                               "PULL_MESSAGE: queueId %d out of range: topic %s has %d read queues",
                               h->queue_id, h->topic, topic->read_queues), NULL;
    return topic;
}

/* The subscription expression of the pull: its own, else the group's from heartbeats, else "*". */
static const char *pull_expression(bk_pull_t *p, const Rmq__PullMessageRequest *h)
{
    if ((h->sys_flag & RMQ__PULL_FLAG__PULL_SUBSCRIPTION) || h->subscription[0])
        return h->subscription;
    const char *expr = bk_clients_subscription(p->bk->clients, h->consumer_group, h->topic);
    return expr ? expr : "*";
}

/* suggestWhichBrokerId (RocketMQ): with slaveReadEnable, a pull whose data
 * lies further behind the log end than in_memory_max goes to the group's
 * whichBrokerWhenConsumeSlowly and any other to its brokerId; without it,
 * always the master (0). */
static int64_t pull_suggest(bk_pull_t *p, const char *group, const st_get_result_t *res)
{
    bk_broker_t *bk = p->bk;
    const bk_group_t *grp = bk_groups_get(bk->groups, group, strlen(group));
    if (!bk->cfg->slave_read_enable || !grp)
        return 0;
    if (res->msg_count <= 0)
        return grp->broker_id;
    st_store_stats_t st;
    st_store_stats(bk->store, &st);
    int slow = st.commitlog_max_offset - res->max_phys_scanned > p->in_memory_max;
    return slow ? grp->which_broker_when_consume_slowly : grp->broker_id;
}

static void pull_reply(bk_pull_t *p, rmq_conn_t *conn, const Rmq__PullMessageRequest *h, rmq_reply_to_t to,
                       const st_get_result_t *res, int status, struct evbuffer *body)
{
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__PullMessageResponse pr = RMQ__PULL_MESSAGE_RESPONSE__INIT;
    pr.suggest_which_broker_id = pull_suggest(p, h->consumer_group, res);
    pr.next_begin_offset = res->next_begin_offset;
    pr.min_offset = res->min_offset;
    pr.max_offset = res->max_offset;
    pr.msg_count = status == RMQ__STATUS__SUCCESS ? res->msg_count : 0;
    resp.header_case = RMQ__COMMAND__HEADER_PULL_RESP;
    resp.pull_resp = &pr;
    if (status == RMQ__STATUS__SUCCESS) {
        bk_stats_add(&p->bk->stats, BK_STAT_GET_FOUND, res->msg_count);
        bk_stats_add(&p->bk->stats, BK_STAT_GET_TRANSFERRED, res->bytes);
        bk_groupstats_add(p->bk->groupstats, h->consumer_group, h->topic, res->msg_count);
        bk_metrics_messages_out(p->bk->metrics, h->topic, (uint64_t)res->msg_count, (uint64_t)res->bytes);
    } else {
        bk_stats_add(&p->bk->stats, BK_STAT_GET_MISS, 1);
    }
    rmq_conn_reply(conn, to, &resp, status, NULL, body);
}

/* Executes a pull; first (not a release from the hold) may store the commit
 * offset and park the pull when nothing is there yet. */
static void pull_execute(bk_pull_t *p, rmq_conn_t *conn, rmq_frame_t *req, int first)
{
    bk_broker_t *bk = p->bk;
    rmq_reply_to_t to = rmq_reply_to(req->cmd);
    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_PULL, "PullMessageRequest (pull)"))
        return;
    const Rmq__PullMessageRequest *h = req->cmd->pull;
    const bk_topic_t *topic = pull_check(p, conn, to, h);
    if (!topic)
        return;
    pull_filter_t pf;
    if (filter_parse(pull_expression(p, h), &pf) != 0) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SUBSCRIPTION_PARSE_FAILED,
                        "cannot parse subscription '%.200s' (want * or TagA || TagB, at most %d tags)",
                        h->subscription, PULL_MAX_TAGS);
        return;
    }
    int64_t max_msgs = bk->cfg->max_transfer_count_on_message_in_memory;
    int64_t max_bytes = bk->cfg->max_transfer_bytes_on_message_in_memory;
    if (h->max_msg_nums > 0 && h->max_msg_nums < max_msgs)
        max_msgs = h->max_msg_nums;
    if (h->max_msg_bytes > 0 && h->max_msg_bytes < max_bytes)
        max_bytes = h->max_msg_bytes;
    if (first && (h->sys_flag & RMQ__PULL_FLAG__PULL_COMMIT_OFFSET) && bk->cfg->broker_role != BK_SLAVE)
        bk_offsets_commit(bk->offsets, h->topic, h->consumer_group, h->queue_id, h->commit_offset);
    struct evbuffer *body = evbuffer_new();
    if (!body) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    st_get_result_t res;
    st_store_get(bk->store, topic->name, h->queue_id, h->queue_offset, (int32_t)max_msgs, max_bytes,
                 &pf.f, body, &res);
    int status = pull_status(h, &res);
    if (status == RMQ__STATUS__PULL_NOT_FOUND && first && (h->sys_flag & RMQ__PULL_FLAG__PULL_SUSPEND) &&
        !bk->stopping) {
        int64_t wait = bk->cfg->long_polling_enable ? h->suspend_timeout_millis : bk->cfg->short_polling_time_mills;
        if (wait > 0 && bk_hold_add(p->hold, conn, req, topic->name, h->queue_id, h->queue_offset, &pf.f,
                                    rmq_mono_ms() + wait) == RMQ_OK) {
            evbuffer_free(body);
            return;
        }
    }
    pull_reply(p, conn, h, to, &res, status, body);
    evbuffer_free(body);
}

static void pull_handle(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    pull_execute(arg, conn, req, 1);
}

/* Hold callback: new data arrived or the deadline passed. */
static void pull_released(rmq_conn_t *conn, rmq_frame_t *req, int expired, void *arg)
{
    pull_execute(arg, conn, req, 0);
}

void bk_pull_arrived(const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code, void *arg)
{
    bk_pull_t *p = arg;
    bk_hold_arrived(p->hold, topic, queue_id, max_offset, tag_code);
}

void bk_pull_conn_closed(bk_pull_t *p, rmq_conn_t *conn)
{
    bk_hold_conn_closed(p->hold, conn);
}

size_t bk_pull_held(const bk_pull_t *p)
{
    return bk_hold_count(p->hold);
}

void bk_pull_release_all(bk_pull_t *p)
{
    bk_hold_release_all(p->hold);
}

bk_pull_t *bk_pull_new(bk_broker_t *bk)
{
    bk_pull_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->bk = bk;
    p->in_memory_max = (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 100 *
                       bk->cfg->access_message_in_memory_max_ratio;
    if (!(p->hold = bk_hold_new(bk->base, pull_released, p))) {
        free(p);
        return NULL;
    }
    return p;
}

void bk_pull_free(bk_pull_t *p)
{
    if (!p)
        return;
    bk_hold_free(p->hold);
    free(p);
}

void bk_pull_install(bk_broker_t *bk)
{
    rmq_server_handle(bk->srv, RMQ__REQUEST_CODE__PULL_MESSAGE, pull_handle, bk->pull);
}
