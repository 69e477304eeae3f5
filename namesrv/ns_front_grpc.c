/* ns_front_grpc.c: QueryRoute on the name server (see ns_front_grpc.h):
 * the topic's route as v2 message queues (rmq_grpc_route.h), or
 * TOPIC_NOT_FOUND (gRPC clients get no auto-created topic). */
#include "ns_front_grpc.h"

#include <stdio.h>

#include "apache/rocketmq/v2/service.pb-c.h"
#include "rmq_grpc_auth.h"
#include "rmq_grpc_pb.h"
#include "rmq_grpc_route.h"
#include "rmq_time.h"

#define CODE(name) APACHE__ROCKETMQ__V2__CODE__##name

/* 1 if the caller may ask (access control off, a whitelisted peer, or a
 * valid signature of a known account: QueryRoute needs only a signer, as
 * GET_ROUTEINFO_BY_TOPIC); else 0 with why set. */
static int caller_admitted(const ns_server_t *ns, rmq_grpc_call_t *call, char *why, size_t whylen)
{
    const rmq_acl_account_t *account;
    const rmq_acl_t *acl = ns_server_acl(ns);
    return !acl || rmq_grpc_authenticate(acl, rmq_conn_peer(rmq_grpc_call_conn(call)),
                                         rmq_grpc_call_header(call, "authorization"),
                                         rmq_grpc_call_header(call, "x-mq-date-time"), rmq_wall_ms(), "QueryRoute",
                                         &account, why, whylen) >= 0;
}

static void handle_query_route(rmq_grpc_call_t *call, void *arg)
{
    ns_server_t *ns = arg;
    const ProtobufCMessageDescriptor *desc = &apache__rocketmq__v2__query_route_response__descriptor;
    Apache__Rocketmq__V2__QueryRouteRequest *req =
        rmq_grpc_decode(call, &apache__rocketmq__v2__query_route_request__descriptor);
    if (!req)
        return;
    char why[320];
    const char *topic = req->topic ? req->topic->name : "";
    rmq_err_t err = RMQ_OK;
    Rmq__TopicRouteData *rd = NULL;
    if (!caller_admitted(ns, call, why, sizeof(why))) {
        rmq_grpc_answer_status(call, desc, CODE(UNAUTHORIZED), why);
    } else if (!topic[0]) {
        rmq_grpc_answer_status(call, desc, CODE(ILLEGAL_TOPIC), "QueryRoute names no topic");
    } else if (!(rd = ns_server_route_query(ns, topic, &err))) {
        snprintf(why, sizeof(why), "topic %.200s %s", topic, err == RMQ_ENOTFOUND ? "does not exist" : "out of memory");
        rmq_grpc_answer_status(call, desc, err == RMQ_ENOTFOUND ? CODE(TOPIC_NOT_FOUND) : CODE(INTERNAL_SERVER_ERROR),
                               why);
    } else {
        rmq_grpc_route_answer(call, rd, topic);
        rmq__topic_route_data__free_unpacked(rd, NULL);
    }
    rmq_grpc_unpacked_free(req);
}

rmq_err_t ns_front_grpc_install(ns_server_t *ns, rmq_server_t *srv)
{
    const rmq_grpc_method_t methods[] = {
        {"/apache.rocketmq.v2.MessagingService/QueryRoute", RMQ_GRPC_UNARY_REQUEST, handle_query_route, ns},
    };
    return rmq_grpc_install(srv, methods, sizeof(methods) / sizeof(methods[0]));
}
