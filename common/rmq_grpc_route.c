/* rmq_grpc_route.c: name-server route -> RocketMQ 5 message queues (see
 * rmq_grpc_route.h). */
#include "rmq_grpc_route.h"

#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apache/rocketmq/v2/service.pb-c.h"
#include "rmq_grpc_pb.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "rmq_topic_attr.h"

#define ROUTE_PERM_WRITE 2           /* RocketMQ's PermName bits */
#define ROUTE_PERM_READ 4

static const Apache__Rocketmq__V2__MessageType every_type[] = {
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL,
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__FIFO,
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__DELAY,
    APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION,
};

/* The message types a queue of a topic with message.type t accepts, as
 * RocketMQ 5's proxy answers them (RouteActivity): the one type named,
 * all four for MIXED, and (unlike the proxy, which answers UNSPECIFIED)
 * all four when the topic names none or UNSPECIFIED, so clients send
 * every kind to topics created without attributes. Sets *n. */
static const Apache__Rocketmq__V2__MessageType *accepted_types(int32_t t, size_t *n)
{
    *n = 1;
    switch (t) {
    case RMQ_TOPIC_MSG_NORMAL:
        return &every_type[0];
    case RMQ_TOPIC_MSG_FIFO:
        return &every_type[1];
    case RMQ_TOPIC_MSG_DELAY:
        return &every_type[2];
    case RMQ_TOPIC_MSG_TRANSACTION:
        return &every_type[3];
    default:
        *n = sizeof(every_type) / sizeof(every_type[0]);
        return every_type;
    }
}

const char *rmq_grpc_route_master(Rmq__BrokerData *const *brokers, size_t n, const char *broker_name)
{
    for (size_t b = 0; b < n; b++) {
        const Rmq__BrokerData *bd = brokers[b];
        if (strcmp(bd->broker_name, broker_name) != 0)
            continue;
        for (size_t a = 0; a < bd->n_addrs; a++)
            if (bd->addrs[a]->broker_id == 0 && bd->addrs[a]->addr[0])
                return bd->addrs[a]->addr;
    }
    return NULL;
}

/* The master's address of broker_name in route, or NULL. */
static const char *master_of(const Rmq__TopicRouteData *route, const char *broker_name)
{
    return rmq_grpc_route_master(route->broker_datas, route->n_broker_datas, broker_name);
}

static int32_t queue_count(const Rmq__QueueData *qd)
{
    int32_t n = qd->read_queue_nums > qd->write_queue_nums ? qd->read_queue_nums : qd->write_queue_nums;
    return n > 0 ? n : 0;
}

/* Queue i's permission from the queue counts and the topic's perm bits. */
static Apache__Rocketmq__V2__Permission queue_permission(const Rmq__QueueData *qd, int32_t i)
{
    int r = i < qd->read_queue_nums && (qd->perm & ROUTE_PERM_READ);
    int w = i < qd->write_queue_nums && (qd->perm & ROUTE_PERM_WRITE);
    return r && w ? APACHE__ROCKETMQ__V2__PERMISSION__READ_WRITE
           : r    ? APACHE__ROCKETMQ__V2__PERMISSION__READ
           : w    ? APACHE__ROCKETMQ__V2__PERMISSION__WRITE
                  : APACHE__ROCKETMQ__V2__PERMISSION__NONE;
}

/* Fills broker b (named name) with the endpoints of addr. */
static rmq_err_t broker_fill(rmq_grpc_route_t *r, size_t b, const char *name, const char *addr, char *why,
                             size_t whylen)
{
    char host[256];
    int port;
    unsigned char probe[16];
    if (rmq_addr_split(addr, host, sizeof(host), &port) != RMQ_OK) {
        snprintf(why, whylen, "broker %s has the master address '%.200s', no host:port", name, addr);
        return RMQ_EINVAL;
    }
    if (!(r->hosts[b] = strdup(host)))
        return RMQ_ENOMEM;
    Apache__Rocketmq__V2__Address *ad = &r->address[b];
    Apache__Rocketmq__V2__Endpoints *ep = &r->endpoints[b];
    Apache__Rocketmq__V2__Broker *br = &r->broker[b];
    apache__rocketmq__v2__address__init(ad);
    ad->host = r->hosts[b];
    ad->port = port;
    r->address_ptr[b] = ad;
    apache__rocketmq__v2__endpoints__init(ep);
    ep->scheme = inet_pton(AF_INET, host, probe) == 1    ? APACHE__ROCKETMQ__V2__ADDRESS_SCHEME__IPv4
                 : inet_pton(AF_INET6, host, probe) == 1 ? APACHE__ROCKETMQ__V2__ADDRESS_SCHEME__IPv6
                                                         : APACHE__ROCKETMQ__V2__ADDRESS_SCHEME__DOMAIN_NAME;
    ep->n_addresses = 1;
    ep->addresses = &r->address_ptr[b];
    apache__rocketmq__v2__broker__init(br);
    br->name = (char *)name;
    br->id = 0;
    br->endpoints = ep;
    return RMQ_OK;
}

/* Appends qd's queues, served by broker b. */
static void queues_add(rmq_grpc_route_t *r, const Rmq__QueueData *qd, size_t b)
{
    for (int32_t i = 0; i < queue_count(qd); i++) {
        Apache__Rocketmq__V2__MessageQueue *mq = &r->queue[r->n];
        apache__rocketmq__v2__message_queue__init(mq);
        mq->topic = &r->topic;
        mq->id = i;
        mq->permission = queue_permission(qd, i);
        mq->broker = &r->broker[b];
        mq->accept_message_types =
            (Apache__Rocketmq__V2__MessageType *)accepted_types(qd->message_type, &mq->n_accept_message_types);
        r->queues[r->n++] = mq;
    }
}

rmq_err_t rmq_grpc_route_build(const Rmq__TopicRouteData *route, const char *topic, rmq_grpc_route_t *out,
                               char *why, size_t whylen)
{
    size_t nq = 0, nb = route->n_queue_datas;
    for (size_t q = 0; q < route->n_queue_datas; q++) {
        const Rmq__QueueData *qd = route->queue_datas[q];
        if (queue_count(qd) > RMQ_QUEUE_NUMS_MAX) {
            snprintf(why, whylen, "broker %.200s has %d queues of the topic, over %d", qd->broker_name,
                     queue_count(qd), RMQ_QUEUE_NUMS_MAX);
            return RMQ_EINVAL;
        }
        if (master_of(route, qd->broker_name))
            nq += (size_t)queue_count(qd);
        if (nq > RMQ_QUEUE_NUMS_MAX) {
            snprintf(why, whylen, "the route has more than %d queues", RMQ_QUEUE_NUMS_MAX);
            return RMQ_EINVAL;
        }
    }
    apache__rocketmq__v2__resource__init(&out->topic);
    out->topic.name = (char *)topic;
    out->queues = calloc(nq + 1, sizeof(*out->queues));
    out->queue = calloc(nq + 1, sizeof(*out->queue));
    out->broker = calloc(nb + 1, sizeof(*out->broker));
    out->endpoints = calloc(nb + 1, sizeof(*out->endpoints));
    out->address = calloc(nb + 1, sizeof(*out->address));
    out->address_ptr = calloc(nb + 1, sizeof(*out->address_ptr));
    out->hosts = calloc(nb + 1, sizeof(*out->hosts));
    if (!out->queues || !out->queue || !out->broker || !out->endpoints || !out->address || !out->address_ptr ||
        !out->hosts)
        return RMQ_ENOMEM;
    for (size_t q = 0; q < route->n_queue_datas; q++) {
        const Rmq__QueueData *qd = route->queue_datas[q];
        const char *master = master_of(route, qd->broker_name);
        if (!master)
            continue;                /* no master now: its queues take no sends, list none */
        rmq_err_t rc = broker_fill(out, out->nbrokers, qd->broker_name, master, why, whylen);
        if (rc != RMQ_OK)
            return rc;
        queues_add(out, qd, out->nbrokers++);
    }
    return RMQ_OK;
}

void rmq_grpc_route_deinit(rmq_grpc_route_t *r)
{
    for (size_t b = 0; r->hosts && b < r->nbrokers; b++)
        free(r->hosts[b]);
    free(r->hosts);
    free(r->address_ptr);
    free(r->address);
    free(r->endpoints);
    free(r->broker);
    free(r->queue);
    free(r->queues);
    *r = (rmq_grpc_route_t){0};
}

/* The permission of broker b's queues together: READ_WRITE, READ, or
 * NONE when none of them is readable. */
static Apache__Rocketmq__V2__Permission broker_read_permission(const rmq_grpc_route_t *route, size_t b)
{
    Apache__Rocketmq__V2__Permission perm = APACHE__ROCKETMQ__V2__PERMISSION__NONE;
    for (size_t i = 0; i < route->n; i++) {
        Apache__Rocketmq__V2__Permission p = route->queues[i]->permission;
        if (route->queues[i]->broker != &route->broker[b])
            continue;
        if (p == APACHE__ROCKETMQ__V2__PERMISSION__READ_WRITE)
            return p;
        if (p == APACHE__ROCKETMQ__V2__PERMISSION__READ)
            perm = p;
    }
    return perm;
}

size_t rmq_grpc_route_assign(const rmq_grpc_route_t *route, int per_queue, Apache__Rocketmq__V2__MessageQueue *out)
{
    size_t n = 0;
    for (size_t i = 0; i < route->n; i++) {
        const Apache__Rocketmq__V2__MessageQueue *q = route->queues[i];
        size_t b = (size_t)(q->broker - route->broker);
        Apache__Rocketmq__V2__Permission perm = per_queue ? q->permission : broker_read_permission(route, b);
        int readable = perm == APACHE__ROCKETMQ__V2__PERMISSION__READ ||
                       perm == APACHE__ROCKETMQ__V2__PERMISSION__READ_WRITE;
        if (!readable || (!per_queue && n && out[n - 1].broker == q->broker))
            continue;
        apache__rocketmq__v2__message_queue__init(&out[n]);
        out[n].topic = q->topic;
        out[n].id = per_queue ? q->id : -1;
        out[n].permission = perm;
        out[n].broker = q->broker;
        n++;
    }
    return n;
}

void rmq_grpc_route_answer(rmq_grpc_call_t *call, const Rmq__TopicRouteData *rd, const char *topic)
{
    const ProtobufCMessageDescriptor *desc = &apache__rocketmq__v2__query_route_response__descriptor;
    rmq_grpc_route_t route = {0};
    char why[320] = "";
    rmq_err_t rc = rmq_grpc_route_build(rd, topic, &route, why, sizeof(why));
    if (rc != RMQ_OK) {
        rmq_grpc_answer_status(call, desc, APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR,
                               rc == RMQ_ENOMEM ? "out of memory" : why);
    } else if (route.n == 0) {
        snprintf(why, sizeof(why), "topic %.200s has no master broker now", topic);
        rmq_grpc_answer_status(call, desc, APACHE__ROCKETMQ__V2__CODE__TOPIC_NOT_FOUND, why);
    } else {
        Apache__Rocketmq__V2__QueryRouteResponse resp = APACHE__ROCKETMQ__V2__QUERY_ROUTE_RESPONSE__INIT;
        Apache__Rocketmq__V2__Status status = APACHE__ROCKETMQ__V2__STATUS__INIT;
        status.code = APACHE__ROCKETMQ__V2__CODE__OK;
        status.message = "OK";
        resp.status = &status;
        resp.n_message_queues = route.n;
        resp.message_queues = route.queues;
        rmq_grpc_answer(call, &resp.base);
    }
    rmq_grpc_route_deinit(&route);
}
