/* fr_remoting_assign.c: the server-side rebalance of RocketMQ 5's remoting
 * push consumer in pop mode (setClientRebalance(false)): QUERY_ASSIGNMENT
 * (400; QueryAssignmentRequestBody -> QueryAssignmentResponseBody) and
 * SET_MESSAGE_REQUEST_MODE (401; SetMessageRequestModeRequestBody).
 * The assignments follow the rule the gRPC QueryAssignment follows
 * (rmq_grpc_route_assign): every client of the group pops every master's
 * queues (queue -1, mode POP), as RocketMQ does with popShareQueueNum 0.
 * The route is this broker's own topic config: rmq answers for the queues
 * it serves, with no name-server round trip. A retry topic %RETRY%group gets
 * no assignment: a pop consumer's retries come back through its pops of
 * the topic (bk_pop.h), not through %RETRY%group. POP is the only mode
 * served, so SET_MESSAGE_REQUEST_MODE accepts POP and refuses PULL (such a
 * consumer rebalances itself) and, as RocketMQ does, any retry topic. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/buffer.h>

#include "fr_remoting.h"
#include "fr_remoting_admin_wire.h"
#include "rmq_grpc_route.h"
#include "rmq_json.h"
#include "rmq_message.h"

#define ROUTE_BROKER_MASTER 0

/* The names a request body gave (borrowed from its parsed JSON). */
typedef struct assign_names {
    const char *topic;
    const char *group;
    const char *mode;                /* SET_MESSAGE_REQUEST_MODE only */
} assign_names_t;

/* The string member key of body, or NULL after naming it in why. */
static const char *body_str(const rmq_json_t *body, const char *key, char *why, size_t whylen)
{
    const char *s = rmq_json_scalar(rmq_json_get(body, key));
    if (!s || !s[0])
        snprintf(why, whylen, "the body has no %s", key);
    return s && s[0] ? s : NULL;
}

/* Parses req's JSON body into *json and n: topic and consumerGroup (and
 * mode, with_mode). 0, or -1 after answering SYSTEM_ERROR naming what is
 * wrong (*json freed). */
static int body_names(rmq_conn_t *conn, const rmq_remoting_request_t *req, int with_mode, rmq_json_t **json,
                      assign_names_t *n)
{
    char why[160] = "";
    *json = rmq_json_parse((const char *)req->body, req->body_len, why, sizeof(why));
    *n = (assign_names_t){0};
    if (*json && (n->topic = body_str(*json, "topic", why, sizeof(why))) &&
        (n->group = body_str(*json, "consumerGroup", why, sizeof(why))) &&
        (!with_mode || (n->mode = body_str(*json, "mode", why, sizeof(why)))))
        return 0;
    rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "request code %d: %s", req->code, why);
    rmq_json_free(*json);
    *json = NULL;
    return -1;
}

/* Appends the POP assignments of topic t (NULL: none), served by this
 * broker (none while it acts as a slave), to b as QueryAssignmentResponseBody. RMQ_OK, RMQ_EINVAL (why) or RMQ_ENOMEM. */
static rmq_err_t assignments_json(const fr_remoting_t *rm, const bk_topic_t *t, struct evbuffer *b, char *why,
                                  size_t whylen)
{
    if (!t) {
        FR_RM_ADD(b, "{\"messageQueueAssignments\":[]}");
        return RMQ_OK;
    }
    const bk_config_t *cfg = rm->fe->node->cfg;
    Rmq__QueueData qd = RMQ__QUEUE_DATA__INIT;
    Rmq__BrokerAddr ba = RMQ__BROKER_ADDR__INIT;
    Rmq__BrokerData bd = RMQ__BROKER_DATA__INIT;
    Rmq__TopicRouteData rd = RMQ__TOPIC_ROUTE_DATA__INIT;
    Rmq__QueueData *qds[] = {&qd};
    Rmq__BrokerAddr *bas[] = {&ba};
    Rmq__BrokerData *bds[] = {&bd};
    qd.broker_name = bd.broker_name = cfg->broker_name;
    qd.read_queue_nums = t->read_queues;
    qd.write_queue_nums = t->write_queues;
    qd.perm = t->perm;
    ba.broker_id = ROUTE_BROKER_MASTER;
    ba.addr = rm->fe->node->addr;
    bd.n_addrs = bk_node_role(rm->fe->node) == BK_SLAVE ? 0 : 1;   /* a slave serves no master queue */
    bd.addrs = bas;
    rd.n_queue_datas = rd.n_broker_datas = 1;
    rd.queue_datas = qds;
    rd.broker_datas = bds;
    rmq_grpc_route_t route = {0};
    rmq_err_t rc = rmq_grpc_route_build(&rd, t->name, &route, why, whylen);
    Apache__Rocketmq__V2__MessageQueue *mq = rc == RMQ_OK ? calloc(route.n + 1, sizeof(*mq)) : NULL;
    if (rc == RMQ_OK && !mq)
        rc = RMQ_ENOMEM;
    size_t n = mq ? rmq_grpc_route_assign(&route, 0, mq) : 0;
    FR_RM_ADD(b, "{\"messageQueueAssignments\":[");
    for (size_t i = 0; i < n; i++) {
        if (i)
            FR_RM_ADD(b, ",");
        FR_RM_ADD(b, "{\"messageQueue\":");
        fr_rm_mq_json(b, t->name, mq[i].broker->name, mq[i].id);
        FR_RM_ADD(b, ",\"mode\":\"POP\",\"attachments\":{}}");
    }
    FR_RM_ADD(b, "]}");
    free(mq);
    rmq_grpc_route_deinit(&route);
    return rc;
}

/* Whether topic is a retry topic (%RETRY%group), which no mode applies to. */
static int retry_topic(const char *topic)
{
    return strncmp(topic, RMQ_RETRY_PREFIX, strlen(RMQ_RETRY_PREFIX)) == 0;
}

/* Answers req with b as its body, or SYSTEM_ERROR with why. */
static void reply_assignments(rmq_conn_t *conn, const rmq_remoting_request_t *req, struct evbuffer *b,
                              rmq_err_t rc, const char *why)
{
    size_t len = rc == RMQ_OK ? evbuffer_get_length(b) : 0;
    const void *data = len ? evbuffer_pullup(b, -1) : NULL;
    if (rc == RMQ_OK && data) {
        rmq_remoting_reply_t rep = {.code = RMQ_REMOTING_SUCCESS, .body = data, .body_len = len};
        rmq_remoting_reply(conn, req, &rep);
    } else {
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR, "QUERY_ASSIGNMENT: %s",
                            rc == RMQ_EINVAL ? why : "out of memory");
    }
}

void fr_rm_handle_query_assignment(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    rmq_json_t *json;
    assign_names_t n;
    if (body_names(conn, req, 0, &json, &n) != 0)
        return;
    if (fr_rm_allowed(rm, conn, req, n.topic, n.group)) {
        const bk_topic_t *t = bk_topics_get(rm->fe->node->topics, n.topic, strlen(n.topic));
        struct evbuffer *b = evbuffer_new();
        char why[320] = "";
        if (!t && !retry_topic(n.topic))
            rmq_remoting_replyf(conn, req, RMQ_REMOTING_TOPIC_NOT_EXIST, "No topic %.200s in broker %s", n.topic,
                                rm->fe->node->addr);
        else
            reply_assignments(conn, req, b, b ? assignments_json(rm, retry_topic(n.topic) ? NULL : t, b, why,
                                                                 sizeof(why))
                                              : RMQ_ENOMEM,
                              why);
        if (b)
            evbuffer_free(b);
    }
    rmq_json_free(json);
}

/* SET_MESSAGE_REQUEST_MODE's answer to mode for topic: accepted (POP, the
 * only mode served, nothing to store) or refused. */
static void answer_request_mode(rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *topic,
                                const char *mode)
{
    rmq_remoting_reply_t ok = {.code = RMQ_REMOTING_SUCCESS};
    if (retry_topic(topic))
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_NO_PERMISSION, "retry topic is not allowed to set mode");
    else if (strcmp(mode, "POP") != 0)
        rmq_remoting_replyf(conn, req, RMQ_REMOTING_SYSTEM_ERROR,
                            "SET_MESSAGE_REQUEST_MODE: mode %.40s not served: rmq assigns in POP mode only; a PULL "
                            "consumer rebalances itself (setClientRebalance(true))", mode);
    else
        rmq_remoting_reply(conn, req, &ok);
}

void fr_rm_handle_request_mode(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg)
{
    fr_remoting_t *rm = arg;
    rmq_json_t *json;
    assign_names_t n;
    if (body_names(conn, req, 1, &json, &n) != 0)
        return;
    if (fr_rm_allowed(rm, conn, req, n.topic, n.group))
        answer_request_mode(conn, req, n.topic, n.mode);
    rmq_json_free(json);
}
