/* rmq_grpc_route.h: a topic's route as the name server keeps it
 * (Rmq__TopicRouteData) rendered as RocketMQ 5 message queues
 * (GRPC-NOTES.md §3.1), the one conversion the name server's and the
 * broker's QueryRoute (and the broker's QueryAssignment) share: masters
 * only (broker id 0), the real queue ids, queue i readable when i <
 * readQueueNums and writable when i < writeQueueNums, masked by the
 * topic's perm bits; the endpoints are the master's registered address
 * (gRPC shares its listenPort); a queue accepts the message types its
 * topic's message.type attribute names (all four when it names none).
 * The conversion is a pure function (any thread); the answer runs on the
 * loop thread. */
#ifndef RMQ_GRPC_ROUTE_H
#define RMQ_GRPC_ROUTE_H

#include <stddef.h>

#include "apache/rocketmq/v2/definition.pb-c.h"
#include "namesrv.pb-c.h"
#include "rmq_codec_grpc.h"
#include "rmq_err.h"

/* The rendered queues and everything they point to (owned). */
typedef struct rmq_grpc_route {
    Apache__Rocketmq__V2__MessageQueue **queues;   /* n of them, pointing into the arrays below */
    size_t n;
    Apache__Rocketmq__V2__MessageQueue *queue;
    Apache__Rocketmq__V2__Broker *broker;          /* one per master */
    Apache__Rocketmq__V2__Endpoints *endpoints;
    Apache__Rocketmq__V2__Address *address;
    Apache__Rocketmq__V2__Address **address_ptr;
    char **hosts;                                  /* one per master */
    size_t nbrokers;
    Apache__Rocketmq__V2__Resource topic;
} rmq_grpc_route_t;

/* The master's address (broker id 0) of broker set broker_name among
 * brokers[0..n) (a route's, or the name server's cluster info), or NULL. */
const char *rmq_grpc_route_master(Rmq__BrokerData *const *brokers, size_t n, const char *broker_name);

/* Renders topic's route into *out (zero it first; strings of route and
 * topic are borrowed, so they must outlive *out). RMQ_OK (n may be 0: no
 * master serves the topic), RMQ_EINVAL (a master address that is no
 * host:port, more than RMQ_QUEUE_NUMS_MAX queues on a broker or in all,
 * named in why),
 * RMQ_ENOMEM. */
rmq_err_t rmq_grpc_route_build(const Rmq__TopicRouteData *route, const char *topic, rmq_grpc_route_t *out,
                               char *why, size_t whylen);
void rmq_grpc_route_deinit(rmq_grpc_route_t *r);

/* The assignments of route (GRPC-NOTES.md §3.2), the one rule the gRPC
 * QueryAssignment and the remoting QUERY_ASSIGNMENT share: with per_queue
 * (an orderly group), each readable queue; else one queue -1 ("any queue":
 * pop balances) per master with a readable queue, its permission the best
 * of that master's queues. Every client of a group gets this same list, in
 * the route's order. Fills out[0..) (room for route->n, pointing into
 * route); how many. */
size_t rmq_grpc_route_assign(const rmq_grpc_route_t *route, int per_queue, Apache__Rocketmq__V2__MessageQueue *out);

/* Answers a QueryRoute call with topic's route rd: OK and the queues,
 * TOPIC_NOT_FOUND when no master serves it, or INTERNAL_SERVER_ERROR. */
void rmq_grpc_route_answer(rmq_grpc_call_t *call, const Rmq__TopicRouteData *rd, const char *topic);

#endif
