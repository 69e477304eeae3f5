/* mqadmin_produce.c: sendMessage. Picks one writable queue at random among
 * the masters of the topic's route (narrowed by -b BROKERNAME and -q
 * QUEUEID), sends the body with its tags and keys, and prints where it was
 * stored and its id. One attempt: a failure is reported, never retried. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "mqadmin.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define PRODUCER_GROUP "TOOLS_PRODUCER"

/* A writable queue of a master. */
typedef struct send_queue {
    const char *broker;
    const char *addr;
    int32_t queue_id;
} send_queue_t;

/* The writable queues of the route's masters that match -b and -q into a
 * new array (*n entries, caller frees; may be empty). */
static send_queue_t *writable_queues(const adm_ctx_t *ctx, const Rmq__TopicRouteData *rd, int64_t want_q,
                                     size_t *n)
{
    const char *want_b = adm_opt(ctx, 'b');
    size_t cap = 0, k = 0;
    send_queue_t *qs;

    for (size_t i = 0; i < rd->n_queue_datas; i++)
        cap += (size_t)(rd->queue_datas[i]->write_queue_nums > 0 ? rd->queue_datas[i]->write_queue_nums : 0);
    if (!(qs = calloc(cap ? cap : 1, sizeof *qs))) {
        fprintf(stderr, "mqadmin: out of memory\n");
        exit(1);
    }
    for (size_t i = 0; i < rd->n_queue_datas; i++) {
        const Rmq__QueueData *qd = rd->queue_datas[i];
        const char *addr = NULL;
        for (size_t b = 0; b < rd->n_broker_datas && !addr; b++)
            if (strcmp(rd->broker_datas[b]->broker_name, qd->broker_name) == 0)
                addr = adm_broker_master(rd->broker_datas[b]);
        if (!addr || !(qd->perm & RMQ__PERM__PERM_WRITE) || (want_b && strcmp(want_b, qd->broker_name) != 0))
            continue;
        for (int32_t q = 0; q < qd->write_queue_nums; q++)
            if (want_q < 0 || want_q == q)
                qs[k++] = (send_queue_t){ qd->broker_name, addr, q };
    }
    *n = k;
    return qs;
}

/* "TAGS\x01tags\x02KEYS\x01keys\x02" for the given parts (caller frees), or
 * NULL after printing when a part holds a separator byte. */
static char *build_props(const adm_ctx_t *ctx)
{
    const char *tags = adm_opt(ctx, 'c'), *keys = adm_opt(ctx, 'k');
    size_t len = (tags ? strlen(tags) : 0) + (keys ? strlen(keys) : 0) + 32;
    char *props = malloc(len);

    if (!props) {
        fprintf(stderr, "mqadmin: out of memory\n");
        return NULL;
    }
    if ((tags && strpbrk(tags, "\x01\x02")) || (keys && strpbrk(keys, "\x01\x02"))) {
        fprintf(stderr, "mqadmin: %s: tags and keys may not contain the bytes 0x01 or 0x02\n", ctx->cmd);
        free(props);
        return NULL;
    }
    snprintf(props, len, "%s%s%s%s%s%s", tags ? RMQ_PROP_TAGS "\x01" : "", tags ? tags : "", tags ? "\x02" : "",
             keys ? RMQ_PROP_KEYS "\x01" : "", keys ? keys : "", keys ? "\x02" : "");
    return props;
}

/* Sends the body to sq; prints the result row; returns the exit status. */
static int send_to(adm_ctx_t *ctx, const char *topic, const send_queue_t *sq, char *props)
{
    Rmq__SendMessageRequest sm = RMQ__SEND_MESSAGE_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    const char *body = adm_opt(ctx, 'p');
    char qid[16], qoff[24];
    adm_table_t t;

    sm.producer_group = (char *)PRODUCER_GROUP;
    sm.topic = (char *)topic;
    sm.queue_id = sq->queue_id;
    sm.born_timestamp = rmq_wall_ms();
    sm.properties = props;
    req.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_SEND;
    req.send = &sm;
    if (adm_broker_call(ctx, sq->addr, &req, body, strlen(body), RMQ__COMMAND__HEADER_SEND_RESP,
                        "send_resp", &resp) != 0)
        return 1;
    snprintf(qid, sizeof qid, "%d", resp.cmd->send_resp->queue_id);
    snprintf(qoff, sizeof qoff, "%" PRId64, resp.cmd->send_resp->queue_offset);
    adm_table_init(&t, 6);
    adm_table_row(&t, "BROKER_NAME", "ADDR", "QUEUE", "QUEUE_OFFSET", "MSG_ID", "STATUS");
    adm_table_row(&t, sq->broker, sq->addr, qid, qoff, resp.cmd->send_resp->msg_id, "SEND_OK");
    adm_table_print(&t, stdout);
    adm_table_free(&t);
    rmq_frame_clear(&resp);
    return 0;
}

int adm_cmd_send_message(adm_ctx_t *ctx)
{
    const char *topic = adm_opt(ctx, 't');
    rmq_frame_t route = { 0 };
    send_queue_t *qs = NULL;
    char *props = NULL;
    int64_t want_q;
    size_t n = 0;
    int rc = 1;

    if (adm_opt_int(ctx, 'q', -1, 0, 65535, &want_q) != 0 || !(props = build_props(ctx)))
        goto out;
    if (adm_topic_route(ctx, topic, &route) != 0)
        goto out;
    qs = writable_queues(ctx, route.cmd->topic_route, want_q, &n);
    if (n == 0) {
        fprintf(stderr, "mqadmin: %s: topic %s has no writable queue on a master%s%s%s\n", ctx->cmd, topic,
                adm_opt(ctx, 'b') ? " of broker " : "", adm_opt(ctx, 'b') ? adm_opt(ctx, 'b') : "",
                want_q >= 0 ? " with that queue id" : "");
        goto out;
    }
    srand((unsigned)time(NULL) ^ (unsigned)getpid());
    rc = send_to(ctx, topic, &qs[(size_t)rand() % n], props);
out:
    free(qs);
    free(props);
    rmq_frame_clear(&route);
    return rc;
}
