/* topicload.c: the pipelined topic creator and route checker (see
 * topicload.h): one client, a window of requests in flight, each answer
 * issuing the next request, the loop broken when all are answered. */
#include "topicload.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_rpc.h"
#include "rmq_time.h"

#define TL_TIMEOUT_MS 30000
#define TL_NAME_MAX 128

typedef struct tl_run tl_run_t;

typedef enum tl_kind { TL_CREATE, TL_ROUTES, TL_STATS, TL_LIST } tl_kind_t;

/* One request in flight: which topics it carries, when it left. */
typedef struct tl_slot {
    tl_run_t *run;
    long first, count;
    int64_t sent_us;
} tl_slot_t;

struct tl_run {
    struct event_base *base;
    rmq_client_t *cli;
    const char *prefix;
    long from, next, to;
    int queues, batch, window, inflight;
    tl_kind_t kind;
    tl_result_t *res;
};

static void tl_fail(tl_result_t *res, long n, int why)
{
    if (!res->first_error)
        res->first_error = why;
    res->failed += n;
}

/* The answer to a route lookup: ok when its queue data has the queues. */
static int route_ok(const tl_run_t *run, const rmq_frame_t *resp)
{
    if (resp->cmd->status != RMQ__STATUS__SUCCESS ||
        resp->cmd->header_case != RMQ__COMMAND__HEADER_TOPIC_ROUTE)
        return 0;
    const Rmq__TopicRouteData *rd = resp->cmd->topic_route;
    for (size_t i = 0; i < rd->n_queue_datas; i++)
        if (rd->queue_datas[i]->write_queue_nums == run->queues)
            return 1;
    return 0;
}

/* How many of the slot's topics a topic list answer names. */
static long list_count(const tl_run_t *run, const tl_slot_t *slot, const rmq_frame_t *resp)
{
    if (resp->cmd->status != RMQ__STATUS__SUCCESS || resp->cmd->header_case != RMQ__COMMAND__HEADER_TOPIC_LIST)
        return 0;
    const Rmq__TopicList *tl = resp->cmd->topic_list;
    size_t plen = strlen(run->prefix);
    long n = 0;
    for (size_t i = 0; i < tl->n_topics; i++) {
        const char *name = tl->topics[i], *digits = name + plen;
        char *end;
        if (strncmp(name, run->prefix, plen) != 0 || *digits < '0' || *digits > '9')
            continue;
        long k = strtol(digits, &end, 10);
        n += *end == '\0' && k >= slot->first && k < slot->first + slot->count;
    }
    return n;
}

static void tl_pump(tl_run_t *run);

static void tl_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    tl_slot_t *slot = arg;
    tl_run_t *run = slot->run;
    run->inflight--;
    rmq_histogram_record(&run->res->lat_us, (uint64_t)(rmq_mono_us() - slot->sent_us));
    if (run->kind == TL_LIST) {
        long n = err == RMQ_OK ? list_count(run, slot, resp) : 0;
        run->res->ok += n;
        if (n < slot->count)
            tl_fail(run->res, slot->count - n, err != RMQ_OK ? err : -1);
        free(slot);
        tl_pump(run);
        return;
    }
    int good = err == RMQ_OK && (run->kind == TL_ROUTES ? route_ok(run, resp) : resp->cmd->status == RMQ__STATUS__SUCCESS);
    if (good && run->res->ok_map)
        memset(run->res->ok_map + (slot->first - run->from), 1, (size_t)slot->count);
    if (good)
        run->res->ok += slot->count;
    else
        tl_fail(run->res, slot->count, err != RMQ_OK ? err : resp->cmd->status ? resp->cmd->status : -1);
    free(slot);
    tl_pump(run);
}

/* Sends one request for topics [slot->first, +count). */
static rmq_err_t tl_send(tl_run_t *run, tl_slot_t *slot)
{
    size_t n = run->kind == TL_LIST ? 0 : (size_t)slot->count;
    Rmq__TopicConfig *items = calloc(n, sizeof(*items));
    Rmq__TopicConfig **ptrs = calloc(n, sizeof(*ptrs));
    char (*names)[TL_NAME_MAX] = calloc(n, TL_NAME_MAX);
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__TopicConfigTable tab = RMQ__TOPIC_CONFIG_TABLE__INIT;
    rmq_err_t err = RMQ_ENOMEM;
    if (run->kind == TL_LIST) {
        req.code = RMQ__REQUEST_CODE__GET_ALL_TOPIC_LIST_FROM_NAMESERVER;
        slot->sent_us = rmq_mono_us();
        err = rmq_client_call(run->cli, &req, NULL, 0, TL_TIMEOUT_MS, tl_done, slot);
        goto out;
    }
    if (!items || !ptrs || !names)
        goto out;
    for (long i = 0; i < slot->count; i++) {
        snprintf(names[i], TL_NAME_MAX, "%s%ld", run->prefix, slot->first + i);
        rmq__topic_config__init(&items[i]);
        items[i].topic_name = names[i];
        items[i].read_queue_nums = items[i].write_queue_nums = run->queues;
        items[i].perm = RMQ__PERM__PERM_READ | RMQ__PERM__PERM_WRITE;
        ptrs[i] = &items[i];
    }
    if (run->kind != TL_CREATE) {
        tr.topic = names[0];
        req.code = run->kind == TL_ROUTES ? RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC
                                          : RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO;
        req.header_case = RMQ__COMMAND__HEADER_TOPIC;
        req.topic = &tr;
    } else if (run->batch == 1) {
        req.code = RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC;
        req.header_case = RMQ__COMMAND__HEADER_TOPIC_CONFIG;
        req.topic_config = &items[0];
    } else {
        tab.topics = ptrs;
        tab.n_topics = (size_t)slot->count;
        req.code = RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC_LIST;
        req.header_case = RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE;
        req.topic_config_table = &tab;
    }
    slot->sent_us = rmq_mono_us();
    err = rmq_client_call(run->cli, &req, NULL, 0, TL_TIMEOUT_MS, tl_done, slot);
out:
    free(items);
    free(ptrs);
    free(names);
    return err;
}

static void tl_pump(tl_run_t *run)
{
    while (run->next < run->to && run->inflight < run->window) {
        tl_slot_t *slot = malloc(sizeof(*slot));
        long n = run->to - run->next < run->batch ? run->to - run->next : run->batch;
        rmq_err_t err = slot ? RMQ_OK : RMQ_ENOMEM;
        if (slot) {
            *slot = (tl_slot_t){run, run->next, n, 0};
            err = tl_send(run, slot);
        }
        run->next += n;
        if (err != RMQ_OK) {
            free(slot);
            tl_fail(run->res, n, err);
            continue;
        }
        run->inflight++;
    }
    if (run->inflight == 0 && run->next >= run->to)
        event_base_loopbreak(run->base);
}

/* Runs requests for [from, to) against addr until all are answered. */
static void tl_run(tl_run_t *run, const char *addr, long from, long to, tl_result_t *res)
{
    unsigned char *ok_map = res->ok_map;
    memset(res, 0, sizeof(*res));
    rmq_histogram_init(&res->lat_us);
    if ((res->ok_map = ok_map))
        memset(ok_map, 0, (size_t)(to - from));
    run->from = from;
    run->base = event_base_new();
    rmq_client_opts_t opts = {.connect_timeout_ms = 3000, .name = "topicload"};
    run->cli = run->base ? rmq_client_new(run->base, addr, &opts) : NULL;
    run->next = from;
    run->to = to;
    run->res = res;
    if (!run->cli) {
        tl_fail(res, to - from, RMQ_ENOMEM);
    } else {
        int64_t t0 = rmq_mono_us();
        tl_pump(run);
        if (run->inflight)
            event_base_dispatch(run->base);
        res->secs = (double)(rmq_mono_us() - t0) / 1e6;
        rmq_client_free(run->cli);
    }
    if (run->base)
        event_base_free(run->base);
}

void tl_create(const char *addr, const char *prefix, long from, long to, int queues, int batch,
               int window, tl_result_t *res)
{
    tl_run_t run = {.prefix = prefix, .queues = queues, .batch = batch < 1 ? 1 : batch, .window = window};
    tl_run(&run, addr, from, to, res);
}

void tl_routes(const char *ns_addr, const char *prefix, long from, long to, int queues, int window,
               tl_result_t *res)
{
    tl_run_t run = {.prefix = prefix, .queues = queues, .batch = 1, .window = window, .kind = TL_ROUTES};
    tl_run(&run, ns_addr, from, to, res);
}

void tl_stats(const char *addr, const char *prefix, long from, long to, int window, tl_result_t *res)
{
    tl_run_t run = {.prefix = prefix, .queues = 1, .batch = 1, .window = window, .kind = TL_STATS};
    tl_run(&run, addr, from, to, res);
}

void tl_listed(const char *ns_addr, const char *prefix, long from, long to, tl_result_t *res)
{
    long n = to - from;
    tl_run_t run = {.prefix = prefix, .queues = 1, .batch = n > 0 ? (int)n : 1, .window = 1, .kind = TL_LIST};
    tl_run(&run, ns_addr, from, to, res);
}
