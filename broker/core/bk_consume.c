/* bk_consume.c: a consumer's pull on neutral requests (see bk_consume.h). */
#include "bk_consume.h"

#include <stdalign.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "bk_hold.h"
#include "rmq_message.h"
#include "rmq_subexpr.h"
#include "rmq_time.h"

#define PULL_MAX_TAGS 64
#define SQL_CACHE_MAX 100            /* compiled SQL92 expressions kept (RocketMQ's parser keeps 100) */

/* A compiled SQL92 expression and its text. */
typedef struct sql_cached {
    char *expr;
    rmq_sql92_t *q;
} sql_cached_t;

struct bk_consume {
    bk_consume_config_t cfg;
    bk_hold_t *hold;
    int stopping;
    sql_cached_t sql[SQL_CACHE_MAX];
    size_t sql_next;                 /* the slot the next compiled expression takes */
};

/* A held pull: its neutral request (strings owned) and where its answer goes. */
typedef struct parked {
    bk_pull_req_t req;
    char *strs;                      /* group, topic, subscription, NUL-separated */
    bk_session_t *ss;                /* borrowed: the hold references it */
    const bk_pull_front_t *front;
    void *front_arg;
    void *conn;                      /* held through front->hold */
    alignas(max_align_t) unsigned char to[BK_PULL_TO_MAX];
} parked_t;

typedef struct pull_filter {
    st_tag_filter_t f;
    int64_t codes[PULL_MAX_TAGS];
} pull_filter_t;

/* rmq_subexpr_fn: adds a tag's hash to the filter (refused past PULL_MAX_TAGS). */
static rmq_err_t filter_add(const char *tag, size_t len, void *arg)
{
    pull_filter_t *pf = arg;
    if (pf->f.n_codes == PULL_MAX_TAGS)
        return RMQ_EINVAL;
    pf->codes[pf->f.n_codes++] = st_tag_hash(tag, len);
    return RMQ_OK;
}

/* Parses a tag expression into tag hashes; -1 if malformed or naming
 * more than PULL_MAX_TAGS tags. */
static int filter_parse(const char *expr, pull_filter_t *pf)
{
    pf->f.codes = pf->codes;
    return rmq_subexpr_parse(expr, &pf->f.match_all, filter_add, pf) == RMQ_OK ? 0 : -1;
}

/* st_tag_filter_t accept: a stored record's properties against a SQL92 expression. */
static int sql_accept(const void *arg, const uint8_t *record, size_t len)
{
    rmq_record_t rec;
    if (rmq_record_decode(record, len, 0, &rec) != RMQ_OK)
        return 0;
    rmq_sql92_props_t p = {rec.properties, rec.properties_len};
    return rmq_sql92_match(arg, rmq_sql92_props_get, &p);
}

/* expr compiled: from the cache, or compiled now and kept. NULL with r
 * set when it does not compile. */
static const rmq_sql92_t *sql_compiled(bk_consume_t *c, const char *expr, bk_result_t *r)
{
    for (size_t i = 0; i < SQL_CACHE_MAX; i++)
        if (c->sql[i].expr && strcmp(c->sql[i].expr, expr) == 0)
            return c->sql[i].q;
    char why[256];
    rmq_sql92_t *q;
    rmq_err_t rc = rmq_sql92_compile(expr, &q, why, sizeof(why));
    if (rc != RMQ_OK)
        return bk_result_set(r, rc == RMQ_ENOMEM ? BK_SYSTEM_ERROR : BK_SUBSCRIPTION_PARSE_FAILED,
                             "cannot parse subscription '%.200s': %s", expr, rc == RMQ_ENOMEM ? "out of memory" : why),
               NULL;
    char *copy = strdup(expr);
    if (!copy) {
        rmq_sql92_free(q);
        return bk_result_set(r, BK_SYSTEM_ERROR, "out of memory"), NULL;
    }
    sql_cached_t *slot = &c->sql[c->sql_next];
    c->sql_next = (c->sql_next + 1) % SQL_CACHE_MAX;
    free(slot->expr);
    rmq_sql92_free(slot->q);
    *slot = (sql_cached_t){copy, q};
    return q;
}

/* The filter of expr of type into pf: tag hashes, or every tag and a
 * SQL92 expression checked on each record (refused unless
 * enablePropertyFilter, as RocketMQ does). -1 with r set when refused. */
static int filter_build(bk_consume_t *c, const char *expr, rmq_expr_type_t type, pull_filter_t *pf,
                        bk_result_t *r)
{
    memset(pf, 0, sizeof(*pf));
    if (type == RMQ_EXPR_TAG) {
        if (filter_parse(expr, pf) == 0)
            return 0;
        return bk_result_set(r, BK_SUBSCRIPTION_PARSE_FAILED,
                             "cannot parse subscription '%.200s' (want * or TagA || TagB, at most %d tags)",
                             expr, PULL_MAX_TAGS), -1;
    }
    if (!c->cfg.property_filter)
        return bk_result_set(r, BK_SYSTEM_ERROR, "The broker does not support consumer to filter message by %s",
                             type == RMQ_EXPR_SQL92 ? "SQL92" : "this expression type"), -1;
    if (type != RMQ_EXPR_SQL92)
        return bk_result_set(r, BK_SUBSCRIPTION_PARSE_FAILED, "expression types are TAG and SQL92"), -1;
    const rmq_sql92_t *q = sql_compiled(c, expr, r);
    if (!q)
        return -1;
    pf->f.match_all = 1;
    pf->f.accept = sql_accept;
    pf->f.accept_arg = q;
    return 0;
}

/* Neutral status for a store result; also corrects next_begin_offset per 7.2. */
static bk_pull_status_t pull_status(const bk_pull_req_t *req, st_get_result_t *res)
{
    switch (res->status) {
    case ST_GET_FOUND:
        return BK_PULL_FOUND;
    case ST_GET_NO_MATCHED_LOGIC_QUEUE:
    case ST_GET_NO_MESSAGE_IN_QUEUE:
        res->next_begin_offset = 0;
        return req->queue_offset != 0 ? BK_PULL_OFFSET_MOVED : BK_PULL_NOT_FOUND;
    case ST_GET_OFFSET_TOO_SMALL:
        res->next_begin_offset = res->min_offset;
        return BK_PULL_OFFSET_MOVED;
    case ST_GET_OFFSET_OVERFLOW_ONE:
        res->next_begin_offset = req->queue_offset;
        return BK_PULL_NOT_FOUND;
    case ST_GET_OFFSET_OVERFLOW_BADLY:
        res->next_begin_offset = res->max_offset;
        return BK_PULL_OFFSET_MOVED;
    case ST_GET_OFFSET_FOUND_NULL:
        return BK_PULL_NOT_FOUND;
    case ST_GET_NO_MATCHED_MESSAGE:
    case ST_GET_MESSAGE_WAS_REMOVING:
    default:
        return BK_PULL_RETRY_IMMEDIATELY;
    }
}

/* The topic a pull reads: its config, or on a slave that holds records of
 * the queue but no config yet (the master's change still on its way), a
 * readable stand-in written into scratch. NULL when neither. */
static const bk_topic_t *pull_topic(bk_consume_t *c, const bk_pull_req_t *req, bk_topic_t *scratch)
{
    const bk_topic_t *topic = bk_topics_get(c->cfg.topics, req->topic, strlen(req->topic));
    if (topic || !c->cfg.is_slave || req->queue_id < 0 ||
        st_store_max_offset(c->cfg.store, req->topic, req->queue_id) <= 0)
        return topic;
    *scratch = (bk_topic_t){.read_queues = req->queue_id + 1, .perm = BK_PERM_READ};
    snprintf(scratch->name, sizeof(scratch->name), "%s", req->topic);
    return scratch;
}

/* Checks names, group, topic and queue; NULL with r set on failure. scratch
 * may receive a slave's stand-in for the topic (pull_topic). */
static const bk_topic_t *pull_check(bk_consume_t *c, const bk_pull_req_t *req, bk_result_t *r,
                                    bk_topic_t *scratch)
{
    const char *why;
    if (!(c->cfg.permission & BK_PERM_READ))
        return bk_result_set(r, BK_NO_PERMISSION, "broker %s is not readable", c->cfg.addr), NULL;
    if (!rmq_name_is_valid(req->topic, strlen(req->topic), &why))
        return bk_result_set(r, BK_NAME_ILLEGAL, "PULL_MESSAGE: topic '%.200s' %s", req->topic, why), NULL;
    if (!rmq_name_is_valid(req->group, strlen(req->group), &why))
        return bk_result_set(r, BK_NAME_ILLEGAL, "PULL_MESSAGE: consumer group '%.200s' %s", req->group, why), NULL;
    const bk_group_t *grp = bk_groups_use(c->cfg.groups, req->group, strlen(req->group));
    if (!grp)
        return bk_result_set(r, BK_GROUP_NOT_EXIST,
                             "subscription group %.200s does not exist (autoCreateSubscriptionGroup=false)",
                             req->group), NULL;
    if (!grp->consume_enable)
        return bk_result_set(r, BK_NO_PERMISSION, "group %.200s may not consume", req->group), NULL;
    const bk_topic_t *topic = pull_topic(c, req, scratch);
    if (!topic)
        return bk_result_set(r, BK_TOPIC_NOT_EXIST, "topic %.200s does not exist on broker %s", req->topic,
                             c->cfg.addr), NULL;
    if (!(topic->perm & BK_PERM_READ))
        return bk_result_set(r, BK_NO_PERMISSION, "topic %.200s is not readable (perm %d)", req->topic,
                             topic->perm), NULL;
    if (req->queue_id < 0 || req->queue_id >= topic->read_queues)
        return bk_result_set(r, BK_BAD_REQUEST, "PULL_MESSAGE: queueId %d out of range: topic %.200s has %d read queues",
                             req->queue_id, req->topic, topic->read_queues), NULL;
    return topic;
}

/* suggestWhichBrokerId (RocketMQ): with slaveReadEnable, a pull whose data
 * lies further behind the log end than in_memory_max goes to the group's
 * whichBrokerWhenConsumeSlowly and any other to its brokerId; without it,
 * always the master (0). */
static int64_t pull_suggest(bk_consume_t *c, const char *group, const st_get_result_t *res)
{
    const bk_group_t *grp = bk_groups_get(c->cfg.groups, group, strlen(group));
    if (!c->cfg.slave_read_enable || !grp)
        return 0;
    if (res->msg_count <= 0)
        return grp->broker_id;
    st_store_stats_t st;
    st_store_stats(c->cfg.store, &st);
    int slow = st.commitlog_max_offset - res->max_phys_scanned > c->cfg.in_memory_max;
    return slow ? grp->which_broker_when_consume_slowly : grp->broker_id;
}

/* Frees what an answered pull's out owns. */
static void pull_out_clear(bk_pull_out_t *out)
{
    if (out->body)
        evbuffer_free(out->body);
    out->body = NULL;
}

/* Copies req and call's reply address into a parked pull (strings owned);
 * NULL when out of memory. */
static parked_t *park_new(const bk_pull_req_t *req, bk_session_t *ss, const bk_pull_call_t *call)
{
    size_t gl = strlen(req->group) + 1, tl = strlen(req->topic) + 1, sl = strlen(req->subscription) + 1;
    parked_t *pk = malloc(sizeof(*pk));
    char *strs = malloc(gl + tl + sl);
    if (!pk || !strs) {
        free(pk);
        free(strs);
        return NULL;
    }
    pk->req = *req;
    pk->strs = strs;
    pk->req.group = memcpy(strs, req->group, gl);
    pk->req.topic = memcpy(strs + gl, req->topic, tl);
    pk->req.subscription = memcpy(strs + gl + tl, req->subscription, sl);
    pk->ss = ss;
    pk->front = call->front;
    pk->front_arg = call->front_arg;
    pk->conn = call->conn;
    memcpy(pk->to, call->to, call->to_len);
    return pk;
}

/* Executes a pull; a first run (call not NULL, not a release from the
 * hold) may store the commit offset and hold the pull when nothing is there
 * yet. 1 answered in out, 0 held. */
static int pull_execute(bk_consume_t *c, const bk_pull_req_t *req, bk_session_t *ss, const bk_pull_call_t *call,
                        bk_pull_out_t *out)
{
    memset(out, 0, sizeof(*out));
    bk_topic_t scratch;
    const bk_topic_t *topic = pull_check(c, req, &out->r, &scratch);
    if (!topic)
        return 1;
    pull_filter_t pf;
    if (filter_build(c, req->subscription, req->expr_type, &pf, &out->r) != 0)
        return 1;
    int64_t max_msgs = c->cfg.max_transfer_count, max_bytes = c->cfg.max_transfer_bytes;
    if (req->max_msg_nums > 0 && req->max_msg_nums < max_msgs)
        max_msgs = req->max_msg_nums;
    if (req->max_msg_bytes > 0 && req->max_msg_bytes < max_bytes)
        max_bytes = req->max_msg_bytes;
    if (call && req->commit && !c->cfg.is_slave)
        bk_offsets_commit(c->cfg.offsets, req->topic, req->group, req->queue_id, req->commit_offset);
    if (!(out->body = evbuffer_new()))
        return bk_result_set(&out->r, BK_SYSTEM_ERROR, "out of memory"), 1;
    st_get_result_t res;
    st_store_get(c->cfg.store, topic->name, req->queue_id, req->queue_offset, (int32_t)max_msgs, max_bytes, &pf.f,
                 out->body, &res);
    out->status = pull_status(req, &res);
    if (out->status == BK_PULL_NOT_FOUND && call && req->suspend && ss && !c->stopping) {
        int64_t wait = c->cfg.long_polling ? req->suspend_timeout_ms : c->cfg.short_polling_ms;
        parked_t *pk = wait > 0 ? park_new(req, ss, call) : NULL;
        if (pk && bk_hold_add(c->hold, ss, pk, topic->name, req->queue_id, req->queue_offset, &pf.f,
                              rmq_mono_ms() + wait) == RMQ_OK) {
            call->front->hold(call->conn);
            pull_out_clear(out);
            return 0;
        }
        if (pk) {
            free(pk->strs);
            free(pk);
        }
    }
    out->next_begin_offset = res.next_begin_offset;
    out->min_offset = res.min_offset;
    out->max_offset = res.max_offset;
    out->msg_count = out->status == BK_PULL_FOUND ? res.msg_count : 0;
    out->bytes = res.bytes;
    out->suggest_broker_id = pull_suggest(c, req->group, &res);
    return 1;
}

/* Hands an answered pull's outcome to the counters. */
static void pull_count(const bk_consume_t *c, const bk_pull_req_t *req, const bk_pull_out_t *out)
{
    if (out->r.status == BK_OK)
        bk_counts_delivered(c->cfg.counts, req->group, req->topic, out->msg_count, out->bytes);
}

/* Hold callback: new data arrived or the deadline passed; answer now. */
static void pull_released(void *parked, int expired, void *arg)
{
    bk_consume_t *c = arg;
    parked_t *pk = parked;
    bk_pull_out_t out;
    pull_execute(c, &pk->req, pk->ss, NULL, &out);
    pull_count(c, &pk->req, &out);
    pk->front->answer(pk->front_arg, pk->conn, pk->to, &pk->req, &out);
    pull_out_clear(&out);
}

/* Hold drop: releases a parked pull's connection and frees it. */
static void pull_dropped(void *parked, void *arg)
{
    parked_t *pk = parked;
    (void)arg;
    pk->front->release(pk->conn);
    free(pk->strs);
    free(pk);
}

bk_consume_t *bk_consume_new(const bk_consume_config_t *cfg)
{
    bk_consume_t *c = calloc(1, sizeof(*c));
    if (!c)
        return NULL;
    c->cfg = *cfg;
    if (!(c->hold = bk_hold_new(cfg->base, pull_released, pull_dropped, c))) {
        free(c);
        return NULL;
    }
    return c;
}

void bk_consume_set_slave(bk_consume_t *c, int is_slave)
{
    c->cfg.is_slave = is_slave;
}

void bk_consume_free(bk_consume_t *c)
{
    if (!c)
        return;
    bk_hold_free(c->hold);
    for (size_t i = 0; i < SQL_CACHE_MAX; i++) {
        free(c->sql[i].expr);
        rmq_sql92_free(c->sql[i].q);
    }
    free(c);
}

void bk_consume_pull(bk_consume_t *c, const bk_pull_req_t *req, bk_session_t *ss, const bk_pull_call_t *call)
{
    bk_pull_out_t out;
    if (!pull_execute(c, req, ss, call, &out))
        return;
    pull_count(c, req, &out);
    call->front->answer(call->front_arg, call->conn, call->to, req, &out);
    pull_out_clear(&out);
}

int bk_consume_check_subscription(bk_consume_t *c, const char *expr, rmq_expr_type_t type, bk_result_t *r)
{
    pull_filter_t pf;
    return filter_build(c, expr, type, &pf, r) == 0;
}

void bk_consume_arrived(bk_consume_t *c, const char *topic, int32_t queue_id, int64_t max_offset,
                        int64_t tag_code)
{
    bk_hold_arrived(c->hold, topic, queue_id, max_offset, tag_code);
}

void bk_consume_session_closed(bk_consume_t *c, bk_session_t *ss)
{
    bk_hold_session_closed(c->hold, ss);
}

size_t bk_consume_held(const bk_consume_t *c)
{
    return bk_hold_count(c->hold);
}

void bk_consume_stop(bk_consume_t *c)
{
    c->stopping = 1;
    bk_hold_release_all(c->hold);
}
