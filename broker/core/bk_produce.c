/* bk_produce.c: a producer's send on neutral requests (see bk_produce.h). */
#include "bk_produce.h"

#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

struct bk_produce {
    bk_produce_config_t cfg;
    uint32_t rr;                     /* round-robin queue choice for queue_id < 0 */
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
    if (req->producer_group[0] && !rmq_name_is_valid(req->producer_group, strlen(req->producer_group), &why))
        return bk_result_set(r, BK_NAME_ILLEGAL, "%s: producer group '%.200s' %s", req->cmd, req->producer_group,
                             why), 0;
    if ((int64_t)req->body_len > p->cfg.max_message_size)
        return bk_result_set(r, BK_MESSAGE_ILLEGAL, "%s: body of %zu bytes is over maxMessageSize %lld", req->cmd,
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

int bk_produce_store(bk_produce_t *p, const bk_produce_target_t *tgt, st_msg_t *msgs, size_t n,
                     bk_append_out_t *out, bk_append_fn cb, void *arg)
{
    for (size_t i = 0; i < n; i++) {
        msgs[i].topic = tgt->topic->name;
        msgs[i].topic_len = strlen(tgt->topic->name);
        msgs[i].queue_id = tgt->queue_id;
    }
    if (n == 1 && p->cfg.divert) {
        const char *why = NULL;
        rmq_err_t rc = p->cfg.divert(p->cfg.divert_arg, msgs, &why);
        if (rc != RMQ_OK) {
            memset(out, 0, sizeof(*out));
            bk_result_set(&out->r, rc == RMQ_EINVAL ? BK_MESSAGE_ILLEGAL : BK_SYSTEM_ERROR, "SEND_MESSAGE: %s",
                          why ? why : rmq_strerror(rc));
            return 1;
        }
    }
    return bk_append_put(p->cfg.append, msgs, n, out, cb, arg);
}
