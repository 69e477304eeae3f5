/* ns_front_grpc.c: the name server's gRPC methods (see ns_front_grpc.h):
 * QueryRoute, the topic's route as v2 message queues (rmq_grpc_route.h),
 * or TOPIC_NOT_FOUND (gRPC clients get no auto-created topic); and
 * RecallMessage, which a 5.x producer sends to its access point: forwarded
 * to the master of the broker its handle names (rmq_grpc_recall.h). */
#include "ns_front_grpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apache/rocketmq/v2/service.pb-c.h"
#include "rmq_grpc_auth.h"
#include "rmq_grpc_pb.h"
#include "rmq_grpc_recall.h"
#include "rmq_grpc_route.h"
#include "rmq_recall_handle.h"
#include "rmq_time.h"

#define CODE(name) APACHE__ROCKETMQ__V2__CODE__##name

struct ns_front_grpc {
    ns_server_t *ns;
    rmq_recall_fwds_t *recalls;      /* recalls waiting for their master */
};

/* 1 if the caller may call action (access control off, a whitelisted peer,
 * or a valid signature of a known account, set in *account: NULL for the
 * first two); else 0 with why set. */
static int caller_admitted(const ns_server_t *ns, rmq_grpc_call_t *call, const char *action,
                           const rmq_acl_account_t **account, char *why, size_t whylen)
{
    const rmq_acl_t *acl = ns_server_acl(ns);
    *account = NULL;
    return !acl || rmq_grpc_authenticate(acl, rmq_conn_peer(rmq_grpc_call_conn(call)),
                                         rmq_grpc_call_header(call, "authorization"),
                                         rmq_grpc_call_header(call, "x-mq-date-time"), rmq_wall_ms(), action,
                                         account, why, whylen) >= 0;
}

/* QueryRoute needs only a signer, as GET_ROUTEINFO_BY_TOPIC. */
static void handle_query_route(rmq_grpc_call_t *call, void *arg)
{
    ns_front_grpc_t *fg = arg;
    const ProtobufCMessageDescriptor *desc = &apache__rocketmq__v2__query_route_response__descriptor;
    Apache__Rocketmq__V2__QueryRouteRequest *req =
        rmq_grpc_decode(call, &apache__rocketmq__v2__query_route_request__descriptor);
    if (!req)
        return;
    char why[320];
    const char *topic = req->topic ? req->topic->name : "";
    const rmq_acl_account_t *account;
    rmq_err_t err = RMQ_OK;
    Rmq__TopicRouteData *rd = NULL;
    if (!caller_admitted(fg->ns, call, "QueryRoute", &account, why, sizeof(why))) {
        rmq_grpc_answer_status(call, desc, CODE(UNAUTHORIZED), why);
    } else if (!topic[0]) {
        rmq_grpc_answer_status(call, desc, CODE(ILLEGAL_TOPIC), "QueryRoute names no topic");
    } else if (!(rd = ns_server_route_query(fg->ns, topic, &err))) {
        snprintf(why, sizeof(why), "topic %.200s %s", topic, err == RMQ_ENOTFOUND ? "does not exist" : "out of memory");
        rmq_grpc_answer_status(call, desc, err == RMQ_ENOTFOUND ? CODE(TOPIC_NOT_FOUND) : CODE(INTERNAL_SERVER_ERROR),
                               why);
    } else {
        rmq_grpc_route_answer(call, rd, topic);
        rmq__topic_route_data__free_unpacked(rd, NULL);
    }
    rmq_grpc_unpacked_free(req);
}

/* ---- RecallMessage ------------------------------------------------------------ */

/* The master address of broker set name in the route into addr; 0 when
 * the route has none. */
static int master_of(ns_server_t *ns, const char *name, char *addr, size_t cap)
{
    Rmq__ClusterInfo *ci = ns_route_cluster_info(ns_server_route(ns), rmq_mono_ms(), rmq_wall_ms());
    const char *master = ci ? rmq_grpc_route_master(ci->brokers, ci->n_brokers, name) : NULL;
    int found = master && snprintf(addr, cap, "%s", master) < (int)cap;
    if (ci)
        rmq__cluster_info__free_unpacked(ci, NULL);
    return found;
}

/* RecallMessage: checked here as far as the route needs (a topic, a handle
 * naming a broker set with a master), the rest by that broker. */
static void handle_recall(rmq_grpc_call_t *call, void *arg)
{
    ns_front_grpc_t *fg = arg;
    const ProtobufCMessageDescriptor *desc = &apache__rocketmq__v2__recall_message_response__descriptor;
    Apache__Rocketmq__V2__RecallMessageRequest *req =
        rmq_grpc_decode(call, &apache__rocketmq__v2__recall_message_request__descriptor);
    if (!req)
        return;
    char why[320], addr[64];
    const rmq_acl_account_t *account = NULL;
    rmq_acl_credentials_t cred;
    rmq_recall_handle_t h;
    const char *topic = req->topic ? req->topic->name : "";
    if (!caller_admitted(fg->ns, call, "RecallMessage", &account, why, sizeof(why)))
        rmq_grpc_answer_status(call, desc, CODE(UNAUTHORIZED), why);
    else if (!topic[0])
        rmq_grpc_answer_status(call, desc, CODE(ILLEGAL_TOPIC), "RecallMessage names no topic");
    else if (rmq_recall_handle_parse(req->recall_handle, strlen(req->recall_handle), &h) != RMQ_OK)
        rmq_grpc_answer_status(call, desc, CODE(INTERNAL_SERVER_ERROR), "recall handle is invalid");
    else if (!master_of(fg->ns, h.broker_name, addr, sizeof(addr))) {
        snprintf(why, sizeof(why), "recall failed, broker %s has no master in the route", h.broker_name);
        rmq_grpc_answer_status(call, desc, CODE(INTERNAL_SERVER_ERROR), why);
    } else {
        rmq_acl_credentials_of(account, &cred);
        if (!rmq_recall_forward(fg->recalls, call, &cred, h.broker_name, addr, topic, req->recall_handle, why,
                                sizeof(why)))
            rmq_grpc_answer_status(call, desc, CODE(INTERNAL_SERVER_ERROR), why);
    }
    rmq_grpc_unpacked_free(req);
}

/* ---- set-up --------------------------------------------------------------------- */

ns_front_grpc_t *ns_front_grpc_new(ns_server_t *ns, struct event_base *base, SSL_CTX *client_tls,
                                   rmq_server_t *srv)
{
    ns_front_grpc_t *fg = calloc(1, sizeof(*fg));
    if (!fg)
        return NULL;
    fg->ns = ns;
    if (!(fg->recalls = rmq_recall_fwds_new(base, client_tls))) {
        free(fg);
        return NULL;
    }
    const rmq_grpc_method_t methods[] = {
        {"/apache.rocketmq.v2.MessagingService/QueryRoute", RMQ_GRPC_UNARY_REQUEST, handle_query_route, fg},
        {"/apache.rocketmq.v2.MessagingService/RecallMessage", RMQ_GRPC_UNARY_REQUEST, handle_recall, fg},
    };
    if (rmq_grpc_install(srv, methods, sizeof(methods) / sizeof(methods[0])) != RMQ_OK) {
        ns_front_grpc_free(fg);
        return NULL;
    }
    return fg;
}

void ns_front_grpc_free(ns_front_grpc_t *fg)
{
    if (!fg)
        return;
    rmq_recall_fwds_free(fg->recalls);
    free(fg);
}
