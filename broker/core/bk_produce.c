/* bk_produce.c: a producer's send on neutral requests (see bk_produce.h):
 * what a client may not decide (the broker's own topics, the reserved
 * properties) is refused or stripped here, the broker's CLUSTER, region
 * and trace switch stamped here, and the destination of a message the
 * broker re-stores is checked here too. */
#include "bk_produce.h"

#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

struct bk_produce {
    bk_produce_config_t cfg;
    uint32_t rr;                     /* round-robin queue choice for queue_id < 0 */
    rmq_props_buf_t pb;              /* properties rewritten: reserved ones stripped, the stamps added */
};

bk_produce_t *bk_produce_new(const bk_produce_config_t *cfg)
{
    bk_produce_t *p = calloc(1, sizeof(*p));
    if (p)
        p->cfg = *cfg;
    return p;
}

void bk_produce_free(bk_produce_t *p)
{
    if (!p)
        return;
    rmq_props_buf_free(&p->pb);
    free(p);
}

/* Resolves the topic of req (auto-created when allowed); 0 with r set. */
static int produce_topic(bk_produce_t *p, const bk_produce_req_t *req, size_t tlen, bk_produce_target_t *tgt,
                         bk_result_t *r)
{
    tgt->topic = bk_topics_get(p->cfg.topics, req->topic, tlen);
    if (!tgt->topic && p->cfg.auto_create_topic)
        tgt->topic = bk_topics_auto_create(p->cfg.topics, req->topic, tlen, req->default_topic,
                                           req->default_topic_queue_nums);
    if (!tgt->topic)
        return bk_result_set(r, BK_TOPIC_NOT_EXIST, "topic %.200s does not exist on broker %s%s", req->topic,
                             p->cfg.addr, p->cfg.auto_create_topic ? "" : " (autoCreateTopicEnable=false)"), 0;
    if (!(tgt->topic->perm & BK_PERM_WRITE))
        return bk_result_set(r, BK_NO_PERMISSION, "topic %.200s is not writable (perm %d)", req->topic,
                             tgt->topic->perm), 0;
    return 1;
}

int bk_produce_check(bk_produce_t *p, const bk_produce_req_t *req, bk_produce_target_t *tgt, bk_result_t *r)
{
    const char *why = NULL;
    size_t tlen = strlen(req->topic);
    if (!bk_append_writable(p->cfg.append, r))
        return 0;
    if (!rmq_name_is_valid(req->topic, tlen, &why))
        return bk_result_set(r, BK_NAME_ILLEGAL, "%s: topic '%.200s' %s", req->cmd, req->topic, why), 0;
    if (!bk_perm_check(req->who, req->reply ? BK_OP_SEND_REPLY : BK_OP_SEND, req->topic, NULL, r))
        return 0;
    if (rmq_topic_send_forbidden(req->topic, tlen))
        return bk_result_set(r, BK_NO_PERMISSION, "%s: sending message to topic[%.200s] is forbidden: the broker "
                             "keeps it for itself", req->cmd, req->topic), 0;
    if (req->producer_group[0] && !rmq_name_is_valid(req->producer_group, strlen(req->producer_group), &why))
        return bk_result_set(r, BK_NAME_ILLEGAL, "%s: producer group '%.200s' %s", req->cmd, req->producer_group,
                             why), 0;
    if ((int64_t)req->body_len > p->cfg.max_message_size)
        return bk_result_set(r, BK_MESSAGE_TOO_LARGE, "%s: body of %zu bytes is over maxMessageSize %lld", req->cmd,
                             req->body_len, (long long)p->cfg.max_message_size), 0;
    if (!produce_topic(p, req, tlen, tgt, r))
        return 0;
    tgt->queue_id = req->queue_id;
    if (tgt->queue_id < 0 && tgt->topic->write_queues > 0)
        tgt->queue_id = (int32_t)(p->rr++ % (uint32_t)tgt->topic->write_queues);
    if (tgt->queue_id < 0 || tgt->queue_id >= tgt->topic->write_queues)
        return bk_result_set(r, BK_BAD_REQUEST, "%s: queueId %d out of range: topic %.200s has %d write queues",
                             req->cmd, req->queue_id, req->topic, tgt->topic->write_queues), 0;
    return 1;
}

/* 1 if the pair p has a reserved name. */
static int prop_is_reserved(const rmq_prop_t *p)
{
    for (const char *const *name = rmq_props_reserved; *name; name++)
        if ((*name)[0] == p->name[0] && strlen(*name) == p->name_len && memcmp(*name, p->name, p->name_len) == 0)
            return 1;
    return 0;
}

/* 1 if p asks the broker to divert its message: TRAN_MSG=true (a half
 * message), a DELAY level or a delivery time (bk_schedule.c's properties). */
static int prop_diverts(const rmq_prop_t *p)
{
    if (RMQ_PROP_NAME_IS(p, RMQ_PROP_TRAN_MSG))
        return p->value_len == 4 && memcmp(p->value, "true", 4) == 0;
    if (rmq_prop_delays(p))
        return p->value_len > 0 && !(p->value_len == 1 && p->value[0] == '0');
    return 0;
}

enum { PROPS_RESERVED = 1, PROPS_DIVERT = 2 };

/* What the properties of m hold (one pass over them): PROPS_RESERVED for
 * a reserved name, PROPS_DIVERT (asked only with divert) for a property
 * that diverts the message. */
static int props_scan(const st_msg_t *m, int divert)
{
    size_t pos = 0;
    rmq_prop_t pr;
    int found = 0;
    while (rmq_props_next(m->properties, m->properties_len, &pos, &pr)) {
        if (pr.name_len && prop_is_reserved(&pr))
            found |= PROPS_RESERVED;
        if (divert && prop_diverts(&pr))
            return found | PROPS_DIVERT;
    }
    return found;
}

/* The broker's stamps after CLUSTER, as RocketMQ 5's broker puts them on
 * every message of a send: its region and trace switch (a 5.x client's
 * consumer drops the trace record of a message without MSG_REGION). */
static const struct {
    const char *name, *value;
} stamps[] = {{RMQ_PROP_MSG_REGION, RMQ_REGION_DEFAULT}, {RMQ_PROP_TRACE_ON, "true"}};

/* Bytes the stamps with CLUSTER=cluster add to a message's properties. */
static size_t stamps_len(const char *cluster)
{
    size_t n = sizeof(RMQ_PROP_CLUSTER) + strlen(cluster) + 2;
    for (size_t i = 0; i < sizeof(stamps) / sizeof(stamps[0]); i++)
        n += strlen(stamps[i].name) + strlen(stamps[i].value) + 2;
    return n;
}

/* Appends CLUSTER=cluster and the stamps to pb. */
static rmq_err_t stamps_put(rmq_props_buf_t *pb, const char *cluster)
{
    rmq_err_t rc = rmq_props_buf_put(pb, RMQ_PROP_CLUSTER, cluster);
    for (size_t i = 0; rc == RMQ_OK && i < sizeof(stamps) / sizeof(stamps[0]); i++)
        rc = rmq_props_buf_put(pb, stamps[i].name, stamps[i].value);
    return rc;
}

/* Copies the unreserved pairs of m's properties to the end of pb (room
 * reserved by the caller, so pb does not move), then CLUSTER=cluster and
 * the stamps unless cluster is NULL, and points m at them. A run of
 * adjacent kept pairs is copied in one append, as a pair: the run's first
 * name, and all that follows it up to the run's end as the value. */
static rmq_err_t rewrite_one(rmq_props_buf_t *pb, st_msg_t *m, const char *cluster)
{
    size_t start = pb->len ? pb->len + 1 : 0;    /* past the \x02 the first append adds */
    size_t pos = 0;
    rmq_prop_t pr, run = {0};
    int in_run = 0;
    while (rmq_props_next(m->properties, m->properties_len, &pos, &pr)) {
        int keep = !prop_is_reserved(&pr);
        if (keep && in_run && pr.name == run.value + run.value_len + 1) {
            run.value_len = (size_t)(pr.value + pr.value_len - run.value);
            continue;
        }
        if (in_run && rmq_props_buf_append(pb, run.name, run.name_len, run.value, run.value_len) != RMQ_OK)
            return RMQ_ENOMEM;
        run = pr;
        in_run = keep;
    }
    if (in_run && rmq_props_buf_append(pb, run.name, run.name_len, run.value, run.value_len) != RMQ_OK)
        return RMQ_ENOMEM;
    if (cluster && stamps_put(pb, cluster) != RMQ_OK)
        return RMQ_ENOMEM;
    m->properties = pb->data + (pb->len > start ? start : 0);
    m->properties_len = pb->len > start ? pb->len - start : 0;
    return RMQ_OK;
}

/* Rewrites the properties of msgs[0..n), a client's send, into p's
 * scratch: the reserved ones (rmq_props_reserved) stripped, since only the
 * broker sets them, and CLUSTER=brokerClusterName added, as RocketMQ's
 * broker stamps it on every message it stores (a responder builds its
 * reply to a request from it), with the stamps after it. Without a
 * cluster to stamp, messages without a reserved property are left as
 * they are. A batch (n > 1) may
 * not hold a message the broker would divert (it stores a batch as it
 * is): RMQ_EINVAL with *bad its index. RMQ_OK or RMQ_ENOMEM otherwise. */
static rmq_err_t produce_props(bk_produce_t *p, st_msg_t *msgs, size_t n, size_t *bad)
{
    const char *cluster = p->cfg.cluster;
    size_t need = 0, stamp = cluster ? stamps_len(cluster) : 0;
    for (size_t i = 0; i < n; i++) {
        /* stamping rewrites every message anyway: only a batch's diverts need a scan then */
        int found = cluster && n == 1 ? 0 : props_scan(&msgs[i], n > 1);
        if (found & PROPS_DIVERT)
            return *bad = i, RMQ_EINVAL;
        if ((found & PROPS_RESERVED) || cluster)
            need += msgs[i].properties_len + 1 + stamp;
    }
    if (!need)
        return RMQ_OK;
    p->pb.len = 0;
    if (rmq_props_buf_reserve(&p->pb, need) != RMQ_OK)
        return RMQ_ENOMEM;
    for (size_t i = 0; i < n; i++)
        if ((cluster || (props_scan(&msgs[i], 0) & PROPS_RESERVED)) &&
            rewrite_one(&p->pb, &msgs[i], cluster) != RMQ_OK)
            return RMQ_ENOMEM;
    return RMQ_OK;
}

int bk_produce_dest_check(const bk_produce_t *p, const char *topic, size_t len, int64_t queue_id, bk_result_t *r)
{
    const bk_topic_t *t = bk_topics_get(p->cfg.topics, topic, len);
    if (!t || rmq_topic_send_forbidden(topic, len))
        return bk_result_set(r, BK_TOPIC_NOT_EXIST, "topic %.*s does not exist on broker %s", (int)len, topic,
                             p->cfg.addr), 0;
    if (queue_id < 0 || queue_id >= t->write_queues)
        return bk_result_set(r, BK_BAD_REQUEST, "queueId %lld out of range: topic %.*s has %d write queues",
                             (long long)queue_id, (int)len, topic, t->write_queues), 0;
    return 1;
}

int bk_produce_store(bk_produce_t *p, const bk_produce_target_t *tgt, st_msg_t *msgs, size_t n,
                     bk_append_out_t *out, bk_append_fn cb, void *arg)
{
    size_t bad = 0;
    rmq_err_t rc = produce_props(p, msgs, n, &bad);
    if (rc != RMQ_OK) {
        memset(out, 0, sizeof(*out));
        if (rc == RMQ_EINVAL)
            bk_result_set(&out->r, BK_MESSAGE_ILLEGAL, "SEND_BATCH_MESSAGE: message %zu of %zu is transactional "
                          "(" RMQ_PROP_TRAN_MSG ") or delayed (" RMQ_PROP_DELAY ", " RMQ_PROP_DELIVER_AT " or TIMER_*): a batch "
                          "may hold neither; send such a message on its own", bad + 1, n);
        else
            bk_result_set(&out->r, BK_SYSTEM_ERROR, "SEND_MESSAGE: out of memory rewriting its properties");
        return 1;
    }
    for (size_t i = 0; i < n; i++) {
        msgs[i].topic = tgt->topic->name;
        msgs[i].topic_len = strlen(tgt->topic->name);
        msgs[i].queue_id = tgt->queue_id;
    }
    if (n == 1 && p->cfg.divert) {
        const char *why = NULL;
        rc = p->cfg.divert(p->cfg.divert_arg, msgs, &why);
        if (rc != RMQ_OK) {
            memset(out, 0, sizeof(*out));
            bk_result_set(&out->r, rc == RMQ_EINVAL ? BK_MESSAGE_ILLEGAL : BK_SYSTEM_ERROR, "SEND_MESSAGE: %s",
                          why ? why : rmq_strerror(rc));
            return 1;
        }
    }
    return bk_append_put(p->cfg.append, msgs, n, out, cb, arg);
}
