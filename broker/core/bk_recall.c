/* bk_recall.c: the handle a timer message answers with, and the checks
 * that turn a recall into its delete marker (see bk_recall.h). */
#include "bk_recall.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_props.h"
#include "rmq_time.h"

#define RECALL_TAG "_RECALL_TAG_"     /* RocketMQ's tag of a marker */

struct bk_recall {
    bk_recall_config_t cfg;
};

/* ---- handles ----------------------------------------------------------------- */

size_t bk_recall_handle_of(const st_msg_t *m, const char *broker_name, char *out, size_t cap)
{
    size_t tl = 0, il = 0, ml = 0;
    int ok = 0;
    if (m->topic_len != strlen(RMQ_TOPIC_SCHEDULE) || memcmp(m->topic, RMQ_TOPIC_SCHEDULE, m->topic_len) != 0)
        return 0;                    /* most sends: no timer, so no handle (and no zeroed handle either) */
    rmq_recall_handle_t h = {0};
    const char *topic = rmq_props_get(m->properties, m->properties_len, RMQ_PROP_REAL_TOPIC, &tl);
    const char *id = rmq_props_get(m->properties, m->properties_len, RMQ_PROP_UNIQ_KEY, &il);
    int64_t due = bk_props_int(m->properties, m->properties_len, RMQ_PROP_TIMER_DELIVER_MS, -1, &ok);
    if (!topic || tl == 0 || tl > RMQ_TOPIC_MAX || !id || il == 0 || il > RMQ_RECALL_NAME_MAX || !ok || due < 0 ||
        strlen(broker_name) > RMQ_RECALL_NAME_MAX ||
        rmq_props_get(m->properties, m->properties_len, RMQ_PROP_TIMER_DEL_UNIQKEY, &ml) ||
        (tl >= strlen(RMQ_RETRY_PREFIX) && memcmp(topic, RMQ_RETRY_PREFIX, strlen(RMQ_RETRY_PREFIX)) == 0))
        return 0;
    memcpy(h.topic, topic, tl);
    memcpy(h.msg_id, id, il);
    snprintf(h.broker_name, sizeof(h.broker_name), "%s", broker_name);
    h.timestamp = due + 1;           /* just after the message: its marker sorts after it */
    return rmq_recall_handle_format(&h, out, cap);
}

/* ---- recall ------------------------------------------------------------------ */

bk_recall_t *bk_recall_new(const bk_recall_config_t *cfg)
{
    bk_recall_t *rc = calloc(1, sizeof(*rc));
    if (rc)
        rc->cfg = *cfg;
    return rc;
}

void bk_recall_free(bk_recall_t *rc)
{
    free(rc);
}

/* The handle of req for this broker and topic: 1 with h filled, or 0 with
 * r set to RocketMQ's ILLEGAL_OPERATION and remark. */
static int recall_handle(const bk_recall_t *rc, const bk_recall_req_t *req, rmq_recall_handle_t *h, bk_result_t *r)
{
    if (rmq_recall_handle_parse(req->handle, strlen(req->handle), h) != RMQ_OK)
        return bk_result_set(r, BK_ILLEGAL_OPERATION, "recall handle is invalid"), 0;
    if (strcmp(h->topic, req->topic) != 0)
        return bk_result_set(r, BK_ILLEGAL_OPERATION, "recall failed, topic not match"), 0;
    if (strcmp(h->broker_name, rc->cfg.broker_name) != 0)
        return bk_result_set(r, BK_ILLEGAL_OPERATION, "recall failed, broker service not available (the handle "
                             "names broker %.100s)", h->broker_name), 0;
    int64_t now = rmq_wall_ms();
    if (h->timestamp <= now || h->timestamp - now >= rc->cfg.horizon_ms)
        return bk_result_set(r, BK_ILLEGAL_OPERATION, "recall failed, timestamp invalid (%s)",
                             h->timestamp <= now ? "the message was delivered" : "beyond the timer's horizon"), 0;
    return 1;
}

int bk_recall_elsewhere(const bk_recall_t *rc, const char *handle, char *broker)
{
    rmq_recall_handle_t h;
    if (rmq_recall_handle_parse(handle, strlen(handle), &h) != RMQ_OK || strcmp(h.broker_name, rc->cfg.broker_name) == 0)
        return 0;
    memcpy(broker, h.broker_name, sizeof(h.broker_name));
    return 1;
}

/* Fills mk with the delete marker of h on topic t. */
static void recall_marker(const rmq_recall_handle_t *h, const bk_topic_t *t, bk_recall_marker_t *mk)
{
    static const char tag[] = RECALL_TAG;
    int n = snprintf(mk->props, sizeof(mk->props),
                     RMQ_PROP_TAGS "\001" RECALL_TAG "\002" RMQ_PROP_TIMER_DEL_UNIQKEY "\001%s+%s\002" RMQ_PROP_UNIQ_KEY
                     "\001%s\002" RMQ_PROP_TIMER_DELIVER_MS "\001%" PRId64,
                     h->topic, h->msg_id, h->msg_id, h->timestamp);
    snprintf(mk->msg_id, sizeof(mk->msg_id), "%s", h->msg_id);
    mk->tgt = (bk_produce_target_t){.topic = t, .queue_id = 0};
    mk->msg = (st_msg_t){
        .topic = t->name,
        .topic_len = strlen(t->name),
        .born_timestamp = rmq_wall_ms(),
        .body = "0",
        .body_len = 1,
        .properties = mk->props,
        .properties_len = (size_t)n,
        .tag_code = st_tag_hash(tag, sizeof(tag) - 1),
    };
}

int bk_recall_check(const bk_recall_t *rc, const bk_recall_req_t *req, bk_recall_marker_t *mk, bk_result_t *r)
{
    const char *why = NULL;
    rmq_recall_handle_t h;
    if (!rc->cfg.enabled)
        return bk_result_set(r, BK_NO_PERMISSION, "recall failed, operation is forbidden (recallMessageEnable=false)"),
               0;
    if (!bk_append_writable(rc->cfg.append, r))
        return 0;
    size_t tlen = strlen(req->topic);
    if (!rmq_name_is_valid(req->topic, tlen, &why))
        return bk_result_set(r, BK_NAME_ILLEGAL, "RECALL_MESSAGE: topic '%.200s' %s", req->topic, why), 0;
    if (!bk_perm_check(req->who, BK_OP_RECALL, req->topic, NULL, r))
        return 0;
    const bk_topic_t *t = bk_topics_get(rc->cfg.topics, req->topic, tlen);
    if (!t || rmq_topic_send_forbidden(req->topic, tlen))
        return bk_result_set(r, BK_TOPIC_NOT_EXIST, "recall failed, the topic[%.200s] not exist", req->topic), 0;
    if (!recall_handle(rc, req, &h, r))
        return 0;
    recall_marker(&h, t, mk);
    return 1;
}
