/* ns_front_grpc.c: the name server's gRPC methods (see ns_front_grpc.h):
 * QueryRoute, the topic's route as v2 message queues (rmq_grpc_route.h),
 * or TOPIC_NOT_FOUND (gRPC clients get no auto-created topic); and
 * RecallMessage, which a 5.x producer sends to its access point: forwarded
 * as RECALL_MESSAGE (370) to the master of the broker its handle names, as
 * RocketMQ's proxy does, signed as the caller. */
#include "ns_front_grpc.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apache/rocketmq/v2/service.pb-c.h"
#include "rmq_grpc_auth.h"
#include "rmq_grpc_pb.h"
#include "rmq_grpc_route.h"
#include "rmq_recall_handle.h"
#include "rmq_remoting_client.h"
#include "rmq_time.h"

#define CODE(name) APACHE__ROCKETMQ__V2__CODE__##name
#define RECALL_TIMEOUT_MS 3000       /* the broker's answer to a forwarded recall */
#define RECALL_CONNECT_MS 3000

/* A RecallMessage waiting for its broker's answer. */
typedef struct recall_fwd {
    struct recall_fwd *prev, *next;  /* the front's pending list */
    ns_front_grpc_t *fg;
    rmq_grpc_call_t *call;
    rmq_rclient_t *rc;               /* its own connection, signed as the caller */
    rmq_acl_credentials_t cred;
    char broker[RMQ_RECALL_NAME_MAX + 1];
} recall_fwd_t;

struct ns_front_grpc {
    ns_server_t *ns;
    struct event_base *base;
    SSL_CTX *client_tls;             /* borrowed; NULL: plaintext */
    recall_fwd_t *pending;
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

/* The v2 code of a broker's remoting answer: RocketMQ's proxy's table
 * (ResponseBuilder: SUCCESS, SYSTEM_BUSY, REQUEST_CODE_NOT_SUPPORTED, the
 * rest INTERNAL_SERVER_ERROR), with the permission and topic refusals the
 * broker's own gRPC front gives for the same recall. */
static int v2_code_of_remoting(int code)
{
    switch (code) {
    case RMQ_REMOTING_SUCCESS: return CODE(OK);
    case RMQ_REMOTING_SYSTEM_BUSY: return CODE(TOO_MANY_REQUESTS);
    case RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED: return CODE(NOT_IMPLEMENTED);
    case RMQ_REMOTING_NO_PERMISSION: return CODE(FORBIDDEN);
    case RMQ_REMOTING_TOPIC_NOT_EXIST: return CODE(TOPIC_NOT_FOUND);
    default: return CODE(INTERNAL_SERVER_ERROR);
    }
}

static void recall_unlink(recall_fwd_t *f)
{
    if (f->prev)
        f->prev->next = f->next;
    else
        f->fg->pending = f->next;
    if (f->next)
        f->next->prev = f->prev;
}

/* The broker's answer (or why there is none) back to the caller. */
static void on_recall_answer(rmq_err_t err, const rmq_remoting_request_t *resp, void *arg)
{
    recall_fwd_t *f = arg;
    Apache__Rocketmq__V2__RecallMessageResponse out = APACHE__ROCKETMQ__V2__RECALL_MESSAGE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st = APACHE__ROCKETMQ__V2__STATUS__INIT;
    char why[320];
    const char *id = resp ? rmq_remoting_field(resp, "msgId") : NULL;
    if (err != RMQ_OK) {
        st.code = err == RMQ_ETIMEDOUT ? CODE(PROXY_TIMEOUT) : CODE(INTERNAL_SERVER_ERROR);
        snprintf(why, sizeof(why), "recall failed, broker %s did not answer: %s", f->broker, rmq_strerror(err));
    } else {
        st.code = v2_code_of_remoting(resp->code);
        snprintf(why, sizeof(why), "%s", resp->code == RMQ_REMOTING_SUCCESS ? "OK" : resp->remark);
    }
    st.message = why;
    out.status = &st;
    out.message_id = st.code == CODE(OK) && id ? (char *)id : "";
    rmq_grpc_answer(f->call, &out.base);
    recall_unlink(f);
    if (err != RMQ_ESHUTDOWN)        /* else the client is being freed already */
        rmq_rclient_free(f->rc);
    free(f);
}

/* The master address of broker set name in the route into addr; 0 when
 * the route has none. */
static int master_of(ns_server_t *ns, const char *name, char *addr, size_t cap)
{
    Rmq__ClusterInfo *ci = ns_route_cluster_info(ns_server_route(ns), rmq_mono_ms(), rmq_wall_ms());
    int found = 0;
    for (size_t i = 0; ci && !found && i < ci->n_brokers; i++) {
        const Rmq__BrokerData *bd = ci->brokers[i];
        for (size_t j = 0; strcmp(bd->broker_name, name) == 0 && !found && j < bd->n_addrs; j++)
            if (bd->addrs[j]->broker_id == 0)
                found = snprintf(addr, cap, "%s", bd->addrs[j]->addr) < (int)cap;
    }
    if (ci)
        rmq__cluster_info__free_unpacked(ci, NULL);
    return found;
}

/* Sends the recall to addr on a connection of its own; 0 with why set
 * when it could not be sent. */
static int recall_forward(ns_front_grpc_t *fg, rmq_grpc_call_t *call, const rmq_acl_account_t *account,
                          const char *broker, const char *addr, const char *topic, const char *handle, char *why,
                          size_t whylen)
{
    recall_fwd_t *f = calloc(1, sizeof(*f));
    if (!f)
        return snprintf(why, whylen, "out of memory"), 0;
    f->fg = fg;
    f->call = call;
    snprintf(f->broker, sizeof(f->broker), "%s", broker);
    if (account) {
        snprintf(f->cred.access_key, sizeof(f->cred.access_key), "%s", rmq_acl_account_key(account));
        snprintf(f->cred.secret_key, sizeof(f->cred.secret_key), "%s", rmq_acl_account_secret(account));
    }
    rmq_rclient_opts_t opts = {RECALL_CONNECT_MS, fg->client_tls, account ? &f->cred : NULL};
    const rmq_remoting_field_t fields[] = {{"topic", (char *)topic}, {"recallHandle", (char *)handle},
                                           {"brokerName", (char *)broker}};
    f->rc = rmq_rclient_new(fg->base, addr, &opts);
    if (!f->rc || rmq_rclient_call(f->rc, RMQ_REMOTING_RECALL_MESSAGE, fields, sizeof(fields) / sizeof(fields[0]),
                                   NULL, 0, RECALL_TIMEOUT_MS, on_recall_answer, f) != RMQ_OK) {
        rmq_rclient_free(f->rc);
        free(f);
        return snprintf(why, whylen, "recall failed, broker %s at %s cannot be reached", broker, addr), 0;
    }
    f->next = fg->pending;
    if (fg->pending)
        fg->pending->prev = f;
    fg->pending = f;
    return 1;
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
    const rmq_acl_account_t *account;
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
    } else if (!recall_forward(fg, call, account, h.broker_name, addr, topic, req->recall_handle, why, sizeof(why)))
        rmq_grpc_answer_status(call, desc, CODE(INTERNAL_SERVER_ERROR), why);
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
    fg->base = base;
    fg->client_tls = client_tls;
    const rmq_grpc_method_t methods[] = {
        {"/apache.rocketmq.v2.MessagingService/QueryRoute", RMQ_GRPC_UNARY_REQUEST, handle_query_route, fg},
        {"/apache.rocketmq.v2.MessagingService/RecallMessage", RMQ_GRPC_UNARY_REQUEST, handle_recall, fg},
    };
    if (rmq_grpc_install(srv, methods, sizeof(methods) / sizeof(methods[0])) != RMQ_OK) {
        free(fg);
        return NULL;
    }
    return fg;
}

void ns_front_grpc_free(ns_front_grpc_t *fg)
{
    if (!fg)
        return;
    while (fg->pending)
        rmq_rclient_free(fg->pending->rc);   /* its answer unlinks it */
    free(fg);
}
