/* mqadmin_dlq.c: queryDlq and resendDlq. The dead letters of group G live
 * in topic %DLQ%G (one queue per broker that buried some). queryDlq pulls
 * every queue of it from its min offset (never committing an offset) and
 * prints each message's id, original id, original topic (RETRY_TOPIC),
 * reconsume times, store time and a body preview. resendDlq sends each dead
 * letter (or only the one whose id, original id or UNIQ_KEY is -i) back to
 * its original topic on the same broker set's master, as a fresh message
 * (reconsume times 0, retry properties dropped); the dead letter itself
 * stays in the DLQ. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define TOOLS_GROUP "TOOLS_CONSUMER"
#define PRODUCER_GROUP "TOOLS_PRODUCER"
#define PULL_BATCH 32
#define BODY_PREVIEW 64
#define MAX_MESSAGES 100000

/* What each command does with one dead letter. */
typedef struct dlq_walk {
    adm_ctx_t *ctx;
    const char *broker;           /* broker name of the queue being read */
    const char *read_addr;        /* where it is read */
    const char *master;           /* where resends go (NULL: no master) */
    int resend;
    const char *want_id;          /* resend: only this id */
    adm_table_t *t;
    long matched;
    int failed;
} dlq_walk_t;

/* The value of property name as a NUL-terminated copy in buf ("" if absent). */
static const char *prop_copy(const rmq_record_t *rec, const char *name, char *buf, size_t cap)
{
    size_t vl = 0;
    const char *v = rmq_props_get(rec->properties, rec->properties_len, name, &vl);
    snprintf(buf, cap, "%.*s", v ? (int)vl : 0, v ? v : "");
    return buf;
}

/* rec's properties without the retry/schedule ones, into out (cap bytes). */
static size_t props_for_resend(const rmq_record_t *rec, char *out, size_t cap)
{
    static const char *const drop[] = {RMQ_PROP_RETRY_TOPIC, RMQ_PROP_DELAY, RMQ_PROP_REAL_TOPIC, RMQ_PROP_REAL_QID,
                                       RMQ_PROP_DELIVER_AT, RMQ_PROP_WAIT, NULL};
    size_t pos = 0, n = 0;
    const char *p = rec->properties;
    while (pos < rec->properties_len) {
        const char *piece = p + pos;
        const char *end = memchr(piece, '\x02', rec->properties_len - pos);
        size_t plen = end ? (size_t)(end - piece) : rec->properties_len - pos;
        pos += plen + 1;
        const char *sep = memchr(piece, '\x01', plen);
        int dropped = !sep;
        for (size_t i = 0; sep && drop[i]; i++)
            if (strlen(drop[i]) == (size_t)(sep - piece) && memcmp(drop[i], piece, (size_t)(sep - piece)) == 0)
                dropped = 1;
        if (dropped || n + plen + 2 > cap)
            continue;
        if (n)
            out[n++] = '\x02';
        memcpy(out + n, piece, plen);
        n += plen;
    }
    out[n] = '\0';
    return n;
}

/* Sends rec to its original topic at w->master; adds a result row. */
static void resend_one(dlq_walk_t *w, const rmq_record_t *rec, const char *id, const char *topic)
{
    Rmq__SendMessageRequest sm = RMQ__SEND_MESSAGE_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    char *props = malloc((size_t)rec->properties_len + 1);

    if (!props) {
        fprintf(stderr, "mqadmin: out of memory\n");
        exit(1);
    }
    props_for_resend(rec, props, (size_t)rec->properties_len + 1);
    sm.producer_group = (char *)PRODUCER_GROUP;
    sm.topic = (char *)topic;
    sm.default_topic = (char *)"TBW102";
    sm.default_topic_queue_nums = 4;
    sm.queue_id = -1;
    sm.flag = rec->flag;
    sm.born_timestamp = rmq_wall_ms();
    sm.properties = props;
    req.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_SEND;
    req.send = &sm;
    if (!w->master) {
        fprintf(stderr, "mqadmin: %s: broker %s has no master to resend %s to\n", w->ctx->cmd, w->broker, id);
        w->failed = 1;
    } else if (adm_broker_call(w->ctx, w->master, &req, rec->body, rec->body_len, RMQ__COMMAND__HEADER_SEND_RESP,
                               "send_resp", &resp) != 0) {
        w->failed = 1;
    } else {
        adm_table_row(w->t, w->broker, id, topic, resp.cmd->send_resp->msg_id, "RESENT");
        rmq_frame_clear(&resp);
    }
    free(props);
}

/* Handles one dead letter: a row (queryDlq) or a resend (resendDlq). */
static void dlq_record(dlq_walk_t *w, const rmq_record_t *rec)
{
    char id[RMQ_MSG_ID_MAX + 1], origin[128], uniq[128], topic[RMQ_TOPIC_MAX + 1], times[16], qoff[24], stored[40];
    rmq_record_msg_id(rec, id);
    prop_copy(rec, RMQ_PROP_ORIGIN_MESSAGE_ID, origin, sizeof origin);
    prop_copy(rec, RMQ_PROP_UNIQ_KEY, uniq, sizeof uniq);
    prop_copy(rec, RMQ_PROP_RETRY_TOPIC, topic, sizeof topic);
    if (w->want_id && strcmp(w->want_id, id) != 0 && strcmp(w->want_id, origin) != 0 && strcmp(w->want_id, uniq) != 0)
        return;
    w->matched++;
    if (w->resend) {
        if (!topic[0]) {
            fprintf(stderr, "mqadmin: %s: dead letter %s has no RETRY_TOPIC property; skipped\n", w->ctx->cmd, id);
            w->failed = 1;
            return;
        }
        resend_one(w, rec, id, topic);
        return;
    }
    snprintf(times, sizeof times, "%d", rec->reconsume_times);
    snprintf(qoff, sizeof qoff, "%" PRId64, rec->queue_offset);
    adm_time_format(rec->store_timestamp, stored, sizeof stored);
    char *body = adm_cell_escape(rec->body, rec->body_len, BODY_PREVIEW);
    adm_table_row(w->t, w->broker, qoff, id, origin[0] ? origin : uniq, topic[0] ? topic : "-", times, stored, body);
    free(body);
}

/* Reads queue q of the DLQ topic from its min offset to the end. */
static void dlq_queue(dlq_walk_t *w, const char *dlq, int32_t q)
{
    Rmq__QueueRequest qr = RMQ__QUEUE_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    int64_t offset;
    long seen = 0;

    qr.topic = (char *)dlq;
    qr.queue_id = q;
    req.code = RMQ__REQUEST_CODE__GET_MIN_OFFSET;
    req.header_case = RMQ__COMMAND__HEADER_QUEUE;
    req.queue = &qr;
    if (adm_broker_call(w->ctx, w->read_addr, &req, NULL, 0, RMQ__COMMAND__HEADER_OFFSET_RESP, "offset_resp",
                        &resp) != 0) {
        w->failed = 1;
        return;
    }
    offset = resp.cmd->offset_resp->offset;
    rmq_frame_clear(&resp);
    while (seen < MAX_MESSAGES) {
        Rmq__PullMessageRequest pr = RMQ__PULL_MESSAGE_REQUEST__INIT;
        Rmq__Command preq = RMQ__COMMAND__INIT;
        pr.consumer_group = (char *)TOOLS_GROUP;
        pr.topic = (char *)dlq;
        pr.queue_id = q;
        pr.queue_offset = offset;
        pr.max_msg_nums = PULL_BATCH;
        pr.subscription = (char *)"*";
        preq.code = RMQ__REQUEST_CODE__PULL_MESSAGE;
        preq.header_case = RMQ__COMMAND__HEADER_PULL;
        preq.pull = &pr;
        rmq_err_t err = rmq_sync_call(w->ctx->sync, w->read_addr, &preq, NULL, 0, ADM_TIMEOUT_MS, &resp);
        if (err != RMQ_OK) {
            fprintf(stderr, "mqadmin: %s: broker %s: %s\n", w->ctx->cmd, w->read_addr, adm_call_error(w->ctx, err));
            w->failed = 1;
            return;
        }
        int found = resp.cmd->status == RMQ__STATUS__SUCCESS;
        int64_t next = resp.cmd->header_case == RMQ__COMMAND__HEADER_PULL_RESP ? resp.cmd->pull_resp->next_begin_offset
                                                                              : offset;
        size_t len = found ? evbuffer_get_length(resp.body) : 0, off = 0;
        const uint8_t *data = len ? evbuffer_pullup(resp.body, (ssize_t)len) : NULL;
        while (off < len) {
            rmq_record_t rec;
            if (rmq_record_decode(data + off, len - off, 1, &rec) != RMQ_OK) {
                fprintf(stderr, "mqadmin: %s: broker %s: a pulled record does not decode\n", w->ctx->cmd,
                        w->read_addr);
                w->failed = 1;
                break;
            }
            dlq_record(w, &rec);
            seen++;
            off += rec.total_size;
        }
        rmq_frame_clear(&resp);
        if (!found || next <= offset)
            return;
        offset = next;
    }
}

/* Walks every queue of %DLQ%group; returns the exit status. */
static int dlq_walk(adm_ctx_t *ctx, int resend)
{
    const char *group = adm_opt(ctx, 'g');
    char dlq[RMQ_TOPIC_MAX + 2];
    rmq_frame_t route = { 0 };
    adm_table_t t;

    if ((size_t)snprintf(dlq, sizeof dlq, "%s%s", RMQ_DLQ_PREFIX, group) > RMQ_TOPIC_MAX) {
        fprintf(stderr, "mqadmin: %s: group name too long\n", ctx->cmd);
        return 1;
    }
    if (adm_topic_route(ctx, dlq, &route) != 0) {
        fprintf(stderr, "mqadmin: %s: group %s has no dead-letter queue (no message failed too often)\n", ctx->cmd,
                group);
        return 1;
    }
    const Rmq__TopicRouteData *rd = route.cmd->topic_route;
    dlq_walk_t w = { .ctx = ctx, .resend = resend, .want_id = adm_opt(ctx, 'i'), .t = &t };
    if (resend) {
        adm_table_init(&t, 5);
        adm_table_row(&t, "BROKER_NAME", "DLQ_MSG_ID", "TOPIC", "NEW_MSG_ID", "STATUS");
    } else {
        adm_table_init(&t, 8);
        adm_table_row(&t, "BROKER_NAME", "QUEUE_OFFSET", "MSG_ID", "ORIGIN_MSG_ID", "TOPIC", "RECONSUME_TIMES",
                      "STORE_TIME", "BODY");
    }
    for (size_t i = 0; i < rd->n_queue_datas; i++) {
        const Rmq__QueueData *qd = rd->queue_datas[i];
        w.broker = qd->broker_name;
        w.read_addr = w.master = NULL;
        for (size_t b = 0; b < rd->n_broker_datas; b++)
            if (strcmp(rd->broker_datas[b]->broker_name, qd->broker_name) == 0) {
                w.read_addr = adm_broker_readable(rd->broker_datas[b]);
                w.master = adm_broker_master(rd->broker_datas[b]);
            }
        if (!w.read_addr) {
            fprintf(stderr, "mqadmin: %s: broker %s has no address in the route\n", ctx->cmd, qd->broker_name);
            w.failed = 1;
            continue;
        }
        for (int32_t q = 0; q < qd->read_queue_nums; q++)
            dlq_queue(&w, dlq, q);
    }
    adm_table_print(&t, stdout);
    adm_table_free(&t);
    rmq_frame_clear(&route);
    if (w.want_id && w.matched == 0) {
        fprintf(stderr, "mqadmin: %s: no dead letter of group %s has id %s\n", ctx->cmd, group, w.want_id);
        return 1;
    }
    return w.failed;
}

int adm_cmd_query_dlq(adm_ctx_t *ctx)
{
    return dlq_walk(ctx, 0);
}

int adm_cmd_resend_dlq(adm_ctx_t *ctx)
{
    return dlq_walk(ctx, 1);
}
