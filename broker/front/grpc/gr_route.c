/* gr_route.c: QueryRoute on the broker (GRPC-NOTES.md §3.1), for 5.x
 * clients whose access point is a broker: the topic's route asked of the
 * broker's name servers (namesrvAddr, in turn until one answers, over the
 * native protocol, GET_ROUTEINFO_BY_TOPIC; gr_route_fetch, which
 * QueryAssignment shares) and rendered by the conversion the name server's
 * QueryRoute uses (rmq_grpc_route.h); a topic the name server does not
 * know is TOPIC_NOT_FOUND (gRPC clients get no auto-created topic). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gr_front.h"
#include "rmq_frame.h"
#include "rmq_grpc_route.h"

#define CODE(name) APACHE__ROCKETMQ__V2__CODE__##name
#define GR_ROUTE_TIMEOUT_MS 3000

static const ProtobufCMessageDescriptor *const route_resp = &apache__rocketmq__v2__query_route_response__descriptor;

/* One route fetch waiting for a name server. */
typedef struct gr_route_fetch {
    gr_front_t *gf;
    rmq_grpc_call_t *call;
    const ProtobufCMessageDescriptor *resp;   /* the call's response, for a status-only answer */
    gr_route_fn answer;
    void *arg;
    char *topic;
    size_t tried;
    char why[256];                   /* the last name server's failure */
} gr_route_fetch_t;

static void fetch_next(gr_route_fetch_t *rf);

/* Ends the fetch; rd NULL: the call was answered with a status. */
static void fetch_end(gr_route_fetch_t *rf, const Rmq__TopicRouteData *rd)
{
    rf->answer(rf->call, rd, rf->topic, rf->arg);
    free(rf->topic);
    free(rf);
}

/* A name server's answer: the route, a definite "no such topic", or a
 * failure that moves on to the next name server. */
static void fetch_done(rmq_err_t err, rmq_frame_t *resp, void *arg)
{
    gr_route_fetch_t *rf = arg;
    const char *addr = rf->gf->ns[(rf->tried - 1) % rf->gf->nns];
    if (err == RMQ_OK && resp->cmd->status == RMQ__STATUS__TOPIC_NOT_EXIST) {
        char why[320];
        snprintf(why, sizeof(why), "topic %.200s does not exist", rf->topic);
        rmq_grpc_answer_status(rf->call, rf->resp, CODE(TOPIC_NOT_FOUND), why);
        fetch_end(rf, NULL);
    } else if (err == RMQ_OK && resp->cmd->status == RMQ__STATUS__SUCCESS &&
               resp->cmd->header_case == RMQ__COMMAND__HEADER_TOPIC_ROUTE) {
        fetch_end(rf, resp->cmd->topic_route);
    } else if (err == RMQ_ESHUTDOWN) {   /* the broker is stopping: ask no other */
        rmq_grpc_answer_status(rf->call, rf->resp, CODE(INTERNAL_SERVER_ERROR), "the broker is stopping");
        fetch_end(rf, NULL);
    } else {
        snprintf(rf->why, sizeof(rf->why), "name server %s: %s", addr,
                 err != RMQ_OK ? rmq_strerror(err) : resp->cmd->remark[0] ? resp->cmd->remark : "no route in the answer");
        fetch_next(rf);
    }
}

/* Asks the next untried name server, or answers that none could. */
static void fetch_next(gr_route_fetch_t *rf)
{
    gr_front_t *gf = rf->gf;
    while (rf->tried < gf->nns) {
        const char *addr = gf->ns[rf->tried++ % gf->nns];
        rmq_client_t *cli = rmq_client_pool_get(gf->ns_pool, addr);
        Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
        Rmq__Command req = RMQ__COMMAND__INIT;
        tr.topic = rf->topic;
        req.code = RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC;
        req.header_case = RMQ__COMMAND__HEADER_TOPIC;
        req.topic = &tr;
        rmq_err_t err = cli ? rmq_client_call(cli, &req, NULL, 0, GR_ROUTE_TIMEOUT_MS, fetch_done, rf) : RMQ_ENOMEM;
        if (err == RMQ_OK)
            return;
        snprintf(rf->why, sizeof(rf->why), "name server %s: %s", addr, rmq_strerror(err));
    }
    rmq_grpc_answer_status(rf->call, rf->resp, CODE(INTERNAL_SERVER_ERROR), rf->why);
    fetch_end(rf, NULL);
}

int gr_route_fetch(gr_front_t *gf, rmq_grpc_call_t *call, const char *topic, const ProtobufCMessageDescriptor *resp,
                   gr_route_fn answer, void *arg, gr_status_t *st)
{
    gr_route_fetch_t *rf = calloc(1, sizeof(*rf));
    if (!rf || !(rf->topic = strdup(topic))) {
        free(rf);
        return gr_status_set(st, CODE(INTERNAL_SERVER_ERROR), "out of memory");
    }
    rf->gf = gf;
    rf->call = call;
    rf->resp = resp;
    rf->answer = answer;
    rf->arg = arg;
    snprintf(rf->why, sizeof(rf->why), "the broker knows no name server (namesrvAddr)");
    fetch_next(rf);
    return 1;
}

/* gr_route_fn: QueryRoute's answer. */
static void route_answer(rmq_grpc_call_t *call, const Rmq__TopicRouteData *rd, const char *topic, void *arg)
{
    (void)arg;
    if (rd)
        rmq_grpc_route_answer(call, rd, topic);
}

static void handle_query_route(rmq_grpc_call_t *call, void *arg)
{
    gr_front_t *gf = arg;
    Apache__Rocketmq__V2__QueryRouteRequest *req =
        rmq_grpc_decode(call, &apache__rocketmq__v2__query_route_request__descriptor);
    if (!req)
        return;
    gr_status_t st;
    bk_caller_t who;
    const char *topic = req->topic ? req->topic->name : "";
    if (!topic[0])
        gr_status_set(&st, CODE(ILLEGAL_TOPIC), "QueryRoute names no topic");
    if (!topic[0] || !gr_call_caller(gf, call, &who, &st) ||
        !gr_route_fetch(gf, call, topic, route_resp, route_answer, NULL, &st))
        gr_call_answer_status(call, route_resp, &st);
    rmq_grpc_unpacked_free(req);
}

static const rmq_grpc_method_t rows[] = {
    {GR_PATH("QueryRoute"), RMQ_GRPC_UNARY_REQUEST, handle_query_route, NULL},
};

const gr_methods_t gr_route_methods = {rows, sizeof(rows) / sizeof(rows[0])};
