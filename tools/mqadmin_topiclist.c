/* mqadmin_topiclist.c: updateTopicList -f FILE: creates or updates many
 * topics with one UPDATE_AND_CREATE_TOPIC_LIST per target, on a cluster's
 * masters (-c) or one broker (-b). FILE is what RocketMQ's updateTopicList
 * reads: a JSON array of TopicConfig objects,
 *   [{"topicName":"T1","readQueueNums":8,"writeQueueNums":8,"perm":6,
 *     "order":false,"topicSysFlag":0}, ...]
 * where only topicName is required (queues default to 8, perm to 6) and
 * other members (topicFilterType, attributes) are ignored. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"
#include "rmq_json.h"

#define LIST_FILE_MAX (64u << 20)

/* Reads path whole into a heap buffer; NULL with a message on stderr. */
static char *read_file(const char *cmd, const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0;

    if (!f) {
        fprintf(stderr, "mqadmin: %s: %s: %s\n", cmd, path, strerror(errno));
        return NULL;
    }
    for (;;) {
        if (n == cap) {
            cap = cap ? cap * 2 : 65536;
            char *grown = cap <= LIST_FILE_MAX ? realloc(buf, cap) : NULL;
            if (!grown) {
                fprintf(stderr, "mqadmin: %s: %s: larger than %u bytes or out of memory\n", cmd, path,
                        LIST_FILE_MAX);
                goto err;
            }
            buf = grown;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        fprintf(stderr, "mqadmin: %s: %s: read error\n", cmd, path);
        goto err;
    }
    fclose(f);
    *len = n;
    return buf;
err:
    fclose(f);
    free(buf);
    return NULL;
}

/* An optional integer member in [min, max] (def when absent); -1 with a message when bad. */
static int member_int(const char *cmd, size_t i, const rmq_json_t *obj, const char *key, int64_t def,
                      int64_t min, int64_t max, int32_t *out)
{
    const rmq_json_t *v = rmq_json_get(obj, key);
    int64_t x = def;

    if (v && rmq_json_int(v, min, max, &x) != 0) {
        fprintf(stderr, "mqadmin: %s: entry %zu: %s must be an integer %" PRId64 "..%" PRId64 "\n", cmd, i,
                key, min, max);
        return -1;
    }
    *out = (int32_t)x;
    return 0;
}

/* Fills tc from entry i of the list (strings borrowed from obj). */
static int parse_entry(const char *cmd, size_t i, const rmq_json_t *obj, Rmq__TopicConfig *tc)
{
    const rmq_json_t *name = rmq_json_get(obj, "topicName");
    const rmq_json_t *order = rmq_json_get(obj, "order");

    rmq__topic_config__init(tc);
    if (obj->type != RMQ_JSON_OBJECT || !name || name->type != RMQ_JSON_STRING) {
        fprintf(stderr, "mqadmin: %s: entry %zu: not an object with a string topicName\n", cmd, i);
        return -1;
    }
    if (order && order->type != RMQ_JSON_BOOL) {
        fprintf(stderr, "mqadmin: %s: entry %zu: order must be true or false\n", cmd, i);
        return -1;
    }
    tc->topic_name = name->str;
    tc->order = order && strcmp(order->str, "true") == 0;
    if (member_int(cmd, i, obj, "readQueueNums", 8, 1, 1024, &tc->read_queue_nums) != 0 ||
        member_int(cmd, i, obj, "writeQueueNums", 8, 1, 1024, &tc->write_queue_nums) != 0 ||
        member_int(cmd, i, obj, "perm", 6, 0, 7, &tc->perm) != 0 ||
        member_int(cmd, i, obj, "topicSysFlag", 0, 0, INT32_MAX, &tc->topic_sys_flag) != 0)
        return -1;
    return 0;
}

int adm_cmd_update_topic_list(adm_ctx_t *ctx)
{
    Rmq__TopicConfigTable tab = RMQ__TOPIC_CONFIG_TABLE__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__TopicConfig *items = NULL, **ptrs = NULL;
    rmq_json_t *doc = NULL;
    char err[256];
    size_t len = 0;
    adm_table_t t;
    int rc = 1;

    if (!adm_opt(ctx, 'c') == !adm_opt(ctx, 'b')) {
        fprintf(stderr, "mqadmin: %s: give either -c CLUSTER or -b BROKERADDR\n", ctx->cmd);
        return 1;
    }
    char *text = read_file(ctx->cmd, adm_opt(ctx, 'f'), &len);
    if (!text)
        return 1;
    doc = rmq_json_parse(text, len, err, sizeof err);
    if (!doc || doc->type != RMQ_JSON_ARRAY || doc->n == 0) {
        fprintf(stderr, "mqadmin: %s: %s: %s\n", ctx->cmd, adm_opt(ctx, 'f'),
                doc ? "not a non-empty JSON array of topic configs" : err);
        goto out;
    }
    items = calloc(doc->n, sizeof *items);
    ptrs = calloc(doc->n, sizeof *ptrs);
    if (!items || !ptrs) {
        fprintf(stderr, "mqadmin: %s: out of memory\n", ctx->cmd);
        goto out;
    }
    for (size_t i = 0; i < doc->n; i++) {
        if (parse_entry(ctx->cmd, i, doc->items[i], &items[i]) != 0)
            goto out;
        ptrs[i] = &items[i];
    }
    tab.topics = ptrs;
    tab.n_topics = doc->n;
    req.code = RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC_LIST;
    req.header_case = RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE;
    req.topic_config_table = &tab;
    adm_table_init(&t, 3);
    adm_table_row(&t, "BROKER_NAME", "ADDR", "RESULT");
    char done[64];
    snprintf(done, sizeof done, "%zu topics updated", doc->n);
    rc = adm_change_targets(ctx, &req, done, &t);
    adm_table_print(&t, stdout);
    adm_table_free(&t);
out:
    free(items);
    free(ptrs);
    rmq_json_free(doc);
    free(text);
    return rc;
}
