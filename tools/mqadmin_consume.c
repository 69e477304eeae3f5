/* mqadmin_consume.c: consumeMessage. Pulls (never suspended, never
 * committing an offset) the readable queues of the topic's route, narrowed
 * by -b BROKERNAME and -i QUEUEID, from -o OFFSET or each queue's min
 * offset, until COUNT messages were printed or the queues are drained. A
 * broker name is read at its master, else at a slave. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"
#include "rmq_message.h"

#define CONSUMER_GROUP "TOOLS_CONSUMER"
#define PULL_BATCH 32
#define BODY_CELL_MAX 4096
#define RETRIES_MAX 3

/* One queue being read and where the printed rows go. */
typedef struct pull_state {
    adm_ctx_t *ctx;
    const char *topic;
    const char *broker;
    const char *addr;
    int32_t queue_id;
    int64_t offset;
    int64_t *left;                /* messages still to print, shared by queues */
    adm_table_t *t;
} pull_state_t;

/* The queue's min offset into *out; -1 printed. */
static int queue_min_offset(pull_state_t *ps, int64_t *out)
{
    Rmq__QueueRequest qr = RMQ__QUEUE_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };

    qr.topic = (char *)ps->topic;
    qr.queue_id = ps->queue_id;
    req.code = RMQ__REQUEST_CODE__GET_MIN_OFFSET;
    req.header_case = RMQ__COMMAND__HEADER_QUEUE;
    req.queue = &qr;
    if (adm_broker_call(ps->ctx, ps->addr, &req, NULL, 0, RMQ__COMMAND__HEADER_OFFSET_RESP,
                        "offset_resp", &resp) != 0)
        return -1;
    *out = resp.cmd->offset_resp->offset;
    rmq_frame_clear(&resp);
    return 0;
}

/* Adds a row per record of a pull body (at most *ps->left); -1 printed if
 * the body does not decode. */
static int print_records(pull_state_t *ps, struct evbuffer *body)
{
    size_t len = evbuffer_get_length(body), off = 0;
    const uint8_t *data = evbuffer_pullup(body, (ssize_t)len);

    while (off < len && *ps->left > 0) {
        rmq_record_t rec;
        rmq_err_t err = rmq_record_decode(data + off, len - off, 1, &rec);
        if (err != RMQ_OK) {
            fprintf(stderr, "mqadmin: %s: broker %s: pulled record at byte %zu does not decode: %s\n",
                    ps->ctx->cmd, ps->addr, off, rmq_strerror(err));
            return -1;
        }
        char id[RMQ_MSG_ID_MAX + 1], qid[16], qoff[24];
        char *tags = adm_prop_cell(&rec, RMQ_PROP_TAGS, BODY_CELL_MAX);
        char *keys = adm_prop_cell(&rec, RMQ_PROP_KEYS, BODY_CELL_MAX);
        char *text = adm_cell_escape(rec.body, rec.body_len, BODY_CELL_MAX);
        rmq_record_msg_id(&rec, id);
        snprintf(qid, sizeof qid, "%d", rec.queue_id);
        snprintf(qoff, sizeof qoff, "%" PRId64, rec.queue_offset);
        adm_table_row(ps->t, ps->broker, qid, qoff, id, tags, keys, text);
        free(tags);
        free(keys);
        free(text);
        (*ps->left)--;
        off += rec.total_size;
    }
    return 0;
}

/* One PULL_MESSAGE at ps->offset; 1 to go on, 0 when the queue is done, -1 printed. */
static int pull_once(pull_state_t *ps, int *retries)
{
    Rmq__PullMessageRequest pr = RMQ__PULL_MESSAGE_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    const char *group = adm_opt(ps->ctx, 'g');
    int more = 0;

    pr.consumer_group = (char *)(group ? group : CONSUMER_GROUP);
    pr.topic = (char *)ps->topic;
    pr.queue_id = ps->queue_id;
    pr.queue_offset = ps->offset;
    pr.max_msg_nums = (int32_t)(*ps->left < PULL_BATCH ? *ps->left : PULL_BATCH);
    pr.subscription = (char *)"*";
    req.code = RMQ__REQUEST_CODE__PULL_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_PULL;
    req.pull = &pr;
    rmq_err_t err = rmq_sync_call(ps->ctx->sync, ps->addr, &req, NULL, 0, ADM_TIMEOUT_MS, &resp);
    if (err != RMQ_OK) {
        fprintf(stderr, "mqadmin: %s: broker %s: %s\n", ps->ctx->cmd, ps->addr, adm_call_error(ps->ctx, err));
        return -1;
    }
    int64_t next = resp.cmd->header_case == RMQ__COMMAND__HEADER_PULL_RESP ? resp.cmd->pull_resp->next_begin_offset
                                                                          : ps->offset;
    switch (resp.cmd->status) {
    case RMQ__STATUS__SUCCESS:
        more = print_records(ps, resp.body) == 0 ? 1 : -1;
        break;
    case RMQ__STATUS__PULL_NOT_FOUND:
        break;
    case RMQ__STATUS__PULL_OFFSET_MOVED:
        fprintf(stderr, "mqadmin: %s: %s queue %d: offset %" PRId64 " is out of range, reading from %" PRId64 "\n",
                ps->ctx->cmd, ps->broker, ps->queue_id, ps->offset, next);
        more = (*retries)++ < RETRIES_MAX;
        break;
    case RMQ__STATUS__PULL_RETRY_IMMEDIATELY:
        more = (*retries)++ < RETRIES_MAX;
        break;
    default:
        fprintf(stderr, "mqadmin: %s: broker %s: %s: %s\n", ps->ctx->cmd, ps->addr,
                rmq_status_name(resp.cmd->status), resp.cmd->remark);
        more = -1;
    }
    ps->offset = next;
    rmq_frame_clear(&resp);
    return more;
}

/* Reads one queue until it is drained or enough was printed; 0 or 1. */
static int consume_queue(pull_state_t *ps)
{
    int64_t start;
    int retries = 0, more = 1;

    if (adm_opt_int(ps->ctx, 'o', -1, 0, INT64_MAX, &start) != 0)
        return 1;
    if (start < 0 && queue_min_offset(ps, &start) != 0)
        return 1;
    ps->offset = start;
    while (more > 0 && *ps->left > 0)
        more = pull_once(ps, &retries);
    return more < 0;
}

/* Reads the matching queues of one queue data entry; 0 or 1. */
static int consume_broker(adm_ctx_t *ctx, const Rmq__TopicRouteData *rd, const Rmq__QueueData *qd,
                          int64_t want_q, int64_t *left, adm_table_t *t)
{
    pull_state_t ps = { .ctx = ctx, .topic = adm_opt(ctx, 't'), .broker = qd->broker_name, .left = left, .t = t };
    int rc = 0;

    for (size_t b = 0; b < rd->n_broker_datas && !ps.addr; b++)
        if (strcmp(rd->broker_datas[b]->broker_name, qd->broker_name) == 0)
            ps.addr = adm_broker_readable(rd->broker_datas[b]);
    if (!ps.addr) {
        fprintf(stderr, "mqadmin: %s: broker %s has no address in the route\n", ctx->cmd, qd->broker_name);
        return 1;
    }
    for (int32_t q = 0; q < qd->read_queue_nums && *left > 0; q++)
        if (want_q < 0 || want_q == q) {
            ps.queue_id = q;
            rc |= consume_queue(&ps);
        }
    return rc;
}

int adm_cmd_consume_message(adm_ctx_t *ctx)
{
    const char *want_b = adm_opt(ctx, 'b');
    rmq_frame_t route = { 0 };
    int64_t want_q, left;
    size_t matched = 0;
    adm_table_t t;
    int rc = 0;

    if (adm_opt_int(ctx, 'i', -1, 0, 65535, &want_q) != 0 || adm_opt_int(ctx, 'c', 32, 1, 1000000, &left) != 0)
        return 1;
    if (adm_topic_route(ctx, adm_opt(ctx, 't'), &route) != 0)
        return 1;
    adm_table_init(&t, 7);
    adm_table_row(&t, "BROKER_NAME", "QUEUE", "OFFSET", "MSG_ID", "TAGS", "KEYS", "BODY");
    for (size_t i = 0; i < route.cmd->topic_route->n_queue_datas && left > 0; i++) {
        const Rmq__QueueData *qd = route.cmd->topic_route->queue_datas[i];
        if ((want_b && strcmp(want_b, qd->broker_name) != 0) || qd->read_queue_nums <= want_q)
            continue;
        matched++;
        rc |= consume_broker(ctx, route.cmd->topic_route, qd, want_q, &left, &t);
    }
    if (matched == 0) {
        fprintf(stderr, "mqadmin: %s: topic %s has no readable queue%s%s%s\n", ctx->cmd, adm_opt(ctx, 't'),
                want_b ? " on broker " : "", want_b ? want_b : "", want_q >= 0 ? " with that queue id" : "");
        rc = 1;
    } else {
        adm_table_print(&t, stdout);
    }
    adm_table_free(&t);
    rmq_frame_clear(&route);
    return rc;
}
