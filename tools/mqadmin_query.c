/* mqadmin_query.c: queryMsgByKey: asks every broker of the topic's route
 * (its master, else a slave) for the messages carrying a key (a KEYS word
 * or the UNIQ_KEY) within a store-time range (QUERY_MESSAGE, answered from
 * the broker's key index) and prints one row per message: id, broker,
 * queue, offset, store time, keys, tags. A broker with nothing is not an
 * error; an unreachable one is reported and makes the exit status 1. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"
#include "rmq_message.h"

#define QUERY_MAX_DEFAULT 64

/* Asks one broker; appends rows to t. Returns -1 if it failed (printed). */
static int query_broker(adm_ctx_t *ctx, const char *name, const char *addr, Rmq__QueryMessageRequest *q,
                        adm_table_t *t, int *found)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    rmq_err_t err;

    req.code = RMQ__REQUEST_CODE__QUERY_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_QUERY_MESSAGE;
    req.query_message = q;
    err = rmq_sync_call(ctx->sync, addr, &req, NULL, 0, ADM_TIMEOUT_MS, &resp);
    if (err != RMQ_OK) {
        fprintf(stderr, "mqadmin: %s: broker %s: %s\n", ctx->cmd, addr, adm_call_error(ctx, err));
        return -1;
    }
    if (resp.cmd->status == RMQ__STATUS__QUERY_NOT_FOUND) {
        rmq_frame_clear(&resp);
        return 0;
    }
    if (resp.cmd->status != RMQ__STATUS__SUCCESS) {
        char where[512];

        snprintf(where, sizeof where, "%s: broker %s", ctx->cmd, addr);
        adm_check_resp(where, &resp, 0, NULL);
        rmq_frame_clear(&resp);
        return -1;
    }
    size_t len = resp.body ? evbuffer_get_length(resp.body) : 0, pos = 0;
    const uint8_t *data = len ? evbuffer_pullup(resp.body, (ssize_t)len) : NULL;

    while (pos < len) {
        rmq_record_t rec;
        char id[RMQ_MSG_ID_MAX + 1], qid[16], qoff[24], store[40];

        if (rmq_record_decode(data + pos, len - pos, 1, &rec) != RMQ_OK) {
            fprintf(stderr, "mqadmin: %s: broker %s: a record at body byte %zu does not decode\n", ctx->cmd, addr,
                    pos);
            break;
        }
        char *keys = adm_prop_cell(&rec, RMQ_PROP_KEYS, 200);
        char *tags = adm_prop_cell(&rec, RMQ_PROP_TAGS, 100);
        char *uniq = adm_prop_cell(&rec, RMQ_PROP_UNIQ_KEY, 64);

        rmq_record_msg_id(&rec, id);
        snprintf(qid, sizeof qid, "%d", rec.queue_id);
        snprintf(qoff, sizeof qoff, "%" PRId64, rec.queue_offset);
        adm_time_format(rec.store_timestamp, store, sizeof store);
        adm_table_row(t, id, uniq, name, qid, qoff, store, tags, keys);
        free(keys);
        free(tags);
        free(uniq);
        (*found)++;
        pos += rec.total_size;
    }
    rmq_frame_clear(&resp);
    return 0;
}

int adm_cmd_query_msg_by_key(adm_ctx_t *ctx)
{
    const char *topic = adm_opt(ctx, 't'), *key = adm_opt(ctx, 'k');
    Rmq__QueryMessageRequest q = RMQ__QUERY_MESSAGE_REQUEST__INIT;
    rmq_frame_t route = { 0 };
    adm_table_t t;
    int64_t begin, end, max;
    int failed = 0, found = 0;

    if (adm_opt_int(ctx, 'b', 0, 0, INT64_MAX, &begin) != 0 || adm_opt_int(ctx, 'e', 0, 0, INT64_MAX, &end) != 0 ||
        adm_opt_int(ctx, 'm', QUERY_MAX_DEFAULT, 1, 1024, &max) != 0)
        return 1;
    if (adm_topic_route(ctx, topic, &route) != 0)
        return 1;
    q.topic = (char *)topic;
    q.key = (char *)key;
    q.max_num = (int32_t)max;
    q.begin_timestamp = begin;
    q.end_timestamp = end;
    adm_table_init(&t, 8);
    adm_table_row(&t, "#Message ID", "#Unique Key", "#Broker", "#QID", "#Offset", "#Store Time", "#Tags", "#Keys");
    const Rmq__TopicRouteData *rd = route.cmd->topic_route;

    for (size_t i = 0; i < rd->n_broker_datas; i++) {
        const Rmq__BrokerData *bd = rd->broker_datas[i];
        const char *addr = adm_broker_readable(bd);

        if (!addr) {
            fprintf(stderr, "mqadmin: %s: broker %s has no address\n", ctx->cmd, bd->broker_name);
            failed = 1;
            continue;
        }
        if (query_broker(ctx, bd->broker_name, addr, &q, &t, &found) != 0)
            failed = 1;
    }
    if (found > 0)
        adm_table_print(&t, stdout);
    else
        printf("no message of topic %s with key %s\n", topic, key);
    adm_table_free(&t);
    rmq_frame_clear(&route);
    return failed;
}

int adm_query_by_uniq(adm_ctx_t *ctx, const char *topic, const char *id, int full)
{
    Rmq__QueryMessageRequest q = RMQ__QUERY_MESSAGE_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t route = { 0 };
    int found = 0;

    if (adm_topic_route(ctx, topic, &route) != 0)
        return -1;
    q.topic = (char *)topic;
    q.key = (char *)id;
    q.max_num = 32;
    req.code = RMQ__REQUEST_CODE__QUERY_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_QUERY_MESSAGE;
    req.query_message = &q;
    const Rmq__TopicRouteData *rd = route.cmd->topic_route;

    for (size_t i = 0; i < rd->n_broker_datas; i++) {
        const char *addr = adm_broker_readable(rd->broker_datas[i]);
        rmq_frame_t resp = { 0 };

        if (!addr || rmq_sync_call(ctx->sync, addr, &req, NULL, 0, ADM_TIMEOUT_MS, &resp) != RMQ_OK)
            continue;
        size_t len = resp.cmd->status == RMQ__STATUS__SUCCESS && resp.body ? evbuffer_get_length(resp.body) : 0;
        const uint8_t *data = len ? evbuffer_pullup(resp.body, (ssize_t)len) : NULL;

        for (size_t pos = 0; pos < len;) {
            rmq_record_t rec;
            char oid[RMQ_MSG_ID_MAX + 1];

            if (rmq_record_decode(data + pos, len - pos, 1, &rec) != RMQ_OK)
                break;
            rmq_record_msg_id(&rec, oid);
            if (found++)
                printf("\n");
            adm_print_record(oid, &rec, full);
            pos += rec.total_size;
        }
        rmq_frame_clear(&resp);
    }
    rmq_frame_clear(&route);
    return found;
}
