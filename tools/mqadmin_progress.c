/* mqadmin_progress.c: consumerProgress. Asks every broker name (of the
 * topic's route with -t, else of the whole cluster info; its master, else a
 * slave) for the group's consume stats, prints one row per queue sorted by
 * topic, broker name and queue (INFLIGHT: a pop consumer's messages popped
 * and not acked, RocketMQ 5's #Inflight), then the totals. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "mqadmin.h"

typedef struct prog_row {
    char *topic;                  /* owned */
    const char *broker;           /* points into the route or cluster info */
    int32_t queue_id;
    int64_t broker_offset;
    int64_t consumer_offset;
    int64_t pull_offset;
    int64_t last_ts;
} prog_row_t;

typedef struct progress {
    prog_row_t *rows;
    size_t n, cap;
    double tps;
} progress_t;

static void oom(void)
{
    fprintf(stderr, "mqadmin: out of memory\n");
    exit(1);
}

static void progress_add(progress_t *p, const char *broker, const Rmq__QueueConsumeStats *qs)
{
    prog_row_t *r;

    if (p->n == p->cap) {
        p->cap = p->cap ? p->cap * 2 : 32;
        p->rows = realloc(p->rows, p->cap * sizeof *p->rows);
        if (!p->rows)
            oom();
    }
    r = &p->rows[p->n++];
    if (!(r->topic = strdup(qs->topic)))
        oom();
    r->broker = broker;
    r->queue_id = qs->queue_id;
    r->broker_offset = qs->broker_offset;
    r->consumer_offset = qs->consumer_offset;
    r->pull_offset = qs->pull_offset;
    r->last_ts = qs->last_timestamp;
}

static void progress_free(progress_t *p)
{
    for (size_t i = 0; i < p->n; i++)
        free(p->rows[i].topic);
    free(p->rows);
}

static int row_cmp(const void *a, const void *b)
{
    const prog_row_t *ra = a, *rb = b;
    int c = strcmp(ra->topic, rb->topic);

    if (c == 0)
        c = strcmp(ra->broker, rb->broker);
    return c ? c : (ra->queue_id > rb->queue_id) - (ra->queue_id < rb->queue_id);
}

/* Messages not yet consumed in a queue (all of them without an offset). */
static int64_t row_diff(const prog_row_t *r)
{
    return r->broker_offset - (r->consumer_offset > 0 ? r->consumer_offset : 0);
}

/* Messages popped and not acked in a queue (0 for a queue nobody pops). */
static int64_t row_inflight(const prog_row_t *r)
{
    return r->pull_offset > r->consumer_offset ? r->pull_offset - r->consumer_offset : 0;
}

/* Adds one broker name's consume stats to p; 0, or 1 after printing why not. */
static int progress_broker(adm_ctx_t *ctx, const Rmq__BrokerData *bd, progress_t *p)
{
    Rmq__ConsumeStatsRequest csr = RMQ__CONSUME_STATS_REQUEST__INIT;
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    const char *addr = adm_broker_readable(bd);

    if (!addr)
        return 0;
    csr.consumer_group = (char *)adm_opt(ctx, 'g');
    csr.topic = (char *)(adm_opt(ctx, 't') ? adm_opt(ctx, 't') : "");
    req.code = RMQ__REQUEST_CODE__GET_CONSUME_STATS;
    req.header_case = RMQ__COMMAND__HEADER_CONSUME_STATS_REQ;
    req.consume_stats_req = &csr;
    if (adm_broker_call(ctx, addr, &req, NULL, 0, RMQ__COMMAND__HEADER_CONSUME_STATS, "consume_stats",
                        &resp) != 0)
        return 1;
    for (size_t q = 0; q < resp.cmd->consume_stats->n_queues; q++)
        progress_add(p, bd->broker_name, resp.cmd->consume_stats->queues[q]);
    p->tps += resp.cmd->consume_stats->consume_tps;
    rmq_frame_clear(&resp);
    return 0;
}

static void progress_print(progress_t *p)
{
    adm_table_t t;
    int64_t total = 0, inflight = 0;

    qsort(p->rows, p->n, sizeof *p->rows, row_cmp);
    adm_table_init(&t, 8);
    adm_table_row(&t, "TOPIC", "BROKER_NAME", "QUEUE", "BROKER_OFFSET", "CONSUMER_OFFSET", "DIFF", "INFLIGHT",
                  "LAST_TIME");
    for (size_t i = 0; i < p->n; i++) {
        const prog_row_t *r = &p->rows[i];
        char q[16], bo[24], co[24], diff[24], fl[24], last[40];
        snprintf(q, sizeof q, "%d", r->queue_id);
        snprintf(bo, sizeof bo, "%" PRId64, r->broker_offset);
        snprintf(co, sizeof co, "%" PRId64, r->consumer_offset);
        snprintf(diff, sizeof diff, "%" PRId64, row_diff(r));
        snprintf(fl, sizeof fl, "%" PRId64, row_inflight(r));
        adm_time_format(r->last_ts, last, sizeof last);
        adm_table_row(&t, r->topic, r->broker, q, bo, co, diff, fl, last);
        total += row_diff(r);
        inflight += row_inflight(r);
    }
    adm_table_print(&t, stdout);
    adm_table_free(&t);
    printf("\nConsume TPS: %.2f\nDiff Total: %" PRId64 "\nInflight Total: %" PRId64 "\n", p->tps, total, inflight);
}

int adm_cmd_consumer_progress(adm_ctx_t *ctx)
{
    const char *topic = adm_opt(ctx, 't');
    rmq_frame_t meta = { 0 };
    const Rmq__BrokerData *const *brokers;
    size_t nbrokers;
    progress_t p = { 0 };
    int rc = 0;

    if (topic ? adm_topic_route(ctx, topic, &meta) != 0 : adm_cluster_info(ctx, &meta) != 0)
        return 1;
    brokers = (const Rmq__BrokerData *const *)(topic ? meta.cmd->topic_route->broker_datas
                                                     : meta.cmd->cluster_info->brokers);
    nbrokers = topic ? meta.cmd->topic_route->n_broker_datas : meta.cmd->cluster_info->n_brokers;
    for (size_t i = 0; i < nbrokers; i++)
        if (progress_broker(ctx, brokers[i], &p) != 0)
            rc = 1;
    if (p.n == 0 && rc == 0) {
        fprintf(stderr, "mqadmin: %s: group %s has no committed offsets%s%s\n", ctx->cmd, adm_opt(ctx, 'g'),
                topic ? " on topic " : "", topic ? topic : "");
        rc = 1;
    } else {
        progress_print(&p);
    }
    progress_free(&p);
    rmq_frame_clear(&meta);
    return rc;
}
