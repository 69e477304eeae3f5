/* bk_perm.c: the one table of what each broker operation touches and
 * needs, and the checks every front-end runs through it on decoded
 * requests (bk_perm.h). Rights follow RocketMQ's ACL (PlainAccessValidator,
 * and ACL 2.0's action per request header) where it asks something; where
 * it asks nothing of a plain account, a listing of every topic or group,
 * the broker's configuration and runtime figures are admin, and anything
 * that names a topic or group needs SUB there. */
#include "bk_perm.h"

#include <stdio.h>
#include <string.h>

#include "rmq_log.h"
#include "rmq_message.h"

#define TOPIC BK_TOUCH_TOPIC
#define GROUP BK_TOUCH_GROUP
#define RECORD BK_TOUCH_RECORD

static const bk_perm_t perms[BK_OP_COUNT] = {
    [BK_OP_UNDECLARED] = {"an undeclared operation", BK_TOUCH_BROKER, BK_RIGHT_UNDECLARED},
    [BK_OP_SEND] = {"SEND_MESSAGE", TOPIC, BK_RIGHT_PUB},
    [BK_OP_SEND_REPLY] = {"SEND_REPLY_MESSAGE", TOPIC, BK_RIGHT_PUB},
    [BK_OP_PULL] = {"PULL_MESSAGE", TOPIC | GROUP, BK_RIGHT_SUB},
    [BK_OP_OFFSET_QUERY] = {"QUERY_CONSUMER_OFFSET", TOPIC | GROUP, BK_RIGHT_SUB},
    [BK_OP_OFFSET_COMMIT] = {"UPDATE_CONSUMER_OFFSET", TOPIC | GROUP, BK_RIGHT_SUB},
    [BK_OP_QUEUE_OFFSET] = {"a queue offset query", TOPIC, BK_RIGHT_SUB},
    [BK_OP_VIEW] = {"VIEW_MESSAGE_BY_ID", RECORD, BK_RIGHT_SUB},
    [BK_OP_QUERY_BY_KEY] = {"QUERY_MESSAGE", TOPIC, BK_RIGHT_SUB},
    [BK_OP_HEARTBEAT] = {"HEART_BEAT", BK_TOUCH_GROUPS, BK_RIGHT_SUB},
    /* removes only the caller's own registrations (bk_clients_unregister) */
    [BK_OP_UNREGISTER] = {"UNREGISTER_CLIENT", GROUP, BK_RIGHT_SIGNED},
    [BK_OP_CONSUMER_LIST] = {"GET_CONSUMER_LIST_BY_GROUP", GROUP, BK_RIGHT_SUB},
    [BK_OP_CHECK_CLIENT] = {"CHECK_CLIENT_CONFIG", GROUP, BK_RIGHT_SIGNED},
    [BK_OP_QUEUE_LOCK] = {"a queue lock", GROUP, BK_RIGHT_SUB},
    [BK_OP_SEND_BACK] = {"CONSUMER_SEND_MSG_BACK", GROUP | RECORD, BK_RIGHT_SUB},
    [BK_OP_END_TRANSACTION] = {"END_TRANSACTION", RECORD, BK_RIGHT_PUB},
    [BK_OP_RECALL] = {"RECALL_MESSAGE", TOPIC, BK_RIGHT_PUB},
    [BK_OP_TOPIC_UPDATE] = {"UPDATE_AND_CREATE_TOPIC", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_TOPIC_DELETE] = {"DELETE_TOPIC_IN_BROKER", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_TOPIC_LIST] = {"GET_ALL_TOPIC_CONFIG", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_SYSTEM_TOPICS] = {"GET_SYSTEM_TOPIC_LIST_FROM_BROKER", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_TOPIC_CONFIG] = {"GET_TOPIC_CONFIG", TOPIC, BK_RIGHT_SUB},
    [BK_OP_TOPIC_STATS] = {"GET_TOPIC_STATS_INFO", TOPIC, BK_RIGHT_SUB},
    [BK_OP_TOPIC_CONSUMERS] = {"QUERY_TOPIC_CONSUME_BY_WHO", TOPIC, BK_RIGHT_SUB},
    [BK_OP_GROUP_UPDATE] = {"UPDATE_AND_CREATE_SUBSCRIPTIONGROUP", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_GROUP_DELETE] = {"DELETE_SUBSCRIPTIONGROUP", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_GROUP_LIST] = {"GET_ALL_SUBSCRIPTIONGROUP_CONFIG", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_CONSUMER_CONNECTIONS] = {"GET_CONSUMER_CONNECTION_LIST", GROUP, BK_RIGHT_SUB},
    [BK_OP_PRODUCER_CONNECTIONS] = {"GET_PRODUCER_CONNECTION_LIST", GROUP, BK_RIGHT_SUB},
    [BK_OP_ALL_PRODUCERS] = {"GET_ALL_PRODUCER_INFO", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_CONSUME_STATS] = {"GET_CONSUME_STATS", GROUP, BK_RIGHT_SUB},
    [BK_OP_CONSUME_TIME_SPAN] = {"QUERY_CONSUME_TIME_SPAN", TOPIC | GROUP, BK_RIGHT_SUB},
    [BK_OP_OFFSET_RESET] = {"INVOKE_BROKER_TO_RESET_OFFSET", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_OFFSET_CLONE] = {"CLONE_GROUP_OFFSET", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_ALL_OFFSETS] = {"GET_ALL_CONSUMER_OFFSET", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_DELAY_OFFSETS] = {"GET_ALL_DELAY_OFFSET", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_RUNTIME_INFO] = {"GET_BROKER_RUNTIME_INFO", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_BROKER_STATS] = {"VIEW_BROKER_STATS_DATA", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_BROKER_CONSUME_STATS] = {"GET_BROKER_CONSUME_STATS", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_BROKER_CONFIG] = {"GET_BROKER_CONFIG", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_BROKER_CONFIG_UPDATE] = {"UPDATE_BROKER_CONFIG", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_POP] = {"POP_MESSAGE", TOPIC | GROUP, BK_RIGHT_SUB},
    [BK_OP_POP_ACK] = {"ACK_MESSAGE", TOPIC | GROUP, BK_RIGHT_SUB},
    [BK_OP_CONSUMER_RUNNING_INFO] = {"GET_CONSUMER_RUNNING_INFO", GROUP, BK_RIGHT_SUB},
    [BK_OP_CONSUMER_STATUS] = {"INVOKE_BROKER_TO_GET_CONSUMER_STATUS", TOPIC | GROUP, BK_RIGHT_SUB},
    /* a message consumed again by a live client, as a reset does */
    [BK_OP_CONSUME_DIRECTLY] = {"CONSUME_MESSAGE_DIRECTLY", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_QUERY_ASSIGNMENT] = {"QUERY_ASSIGNMENT", TOPIC | GROUP, BK_RIGHT_SUB},
    [BK_OP_REQUEST_MODE] = {"SET_MESSAGE_REQUEST_MODE", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    /* RocketMQ's ACL admin codes: the policy itself, and every secret key in it */
    [BK_OP_ACL_UPDATE] = {"UPDATE_AND_CREATE_ACL_CONFIG", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_ACL_DELETE] = {"DELETE_ACL_CONFIG", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_ACL_WHITE] = {"UPDATE_GLOBAL_WHITE_ADDRS_CONFIG", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_ACL_VERSION] = {"GET_BROKER_CLUSTER_ACL_INFO", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
    [BK_OP_ACL_CONFIG] = {"GET_BROKER_CLUSTER_ACL_CONFIG", BK_TOUCH_BROKER, BK_RIGHT_ADMIN},
};

const bk_perm_t *bk_perm_of(bk_op_t op)
{
    return (unsigned)op < BK_OP_COUNT ? &perms[op] : &perms[BK_OP_UNDECLARED];
}

/* Asks the policy for needs[0..n) of op; 1, or 0 with r set and the refusal logged. */
static int allows(const bk_caller_t *who, const rmq_acl_need_t *needs, size_t n, const char *op, bk_result_t *r)
{
    char why[512];
    if (rmq_acl_allows(who->account, needs, n, op, why, sizeof why))
        return 1;
    LOG_WARN_RL("refused %s from %s: %s", op, who->peer ? who->peer : "a client", why);
    bk_result_set(r, BK_NO_PERMISSION, "%s", why);
    return 0;
}

int bk_perm_check(const bk_caller_t *who, bk_op_t op, const char *topic, const char *group, bk_result_t *r)
{
    const bk_perm_t *p = bk_perm_of(op);
    int perm = p->needs == BK_RIGHT_PUB ? RMQ_ACL_PERM_PUB : RMQ_ACL_PERM_SUB;
    rmq_acl_need_t needs[2];
    size_t n = 0;
    if (!who || !who->account)
        return 1;
    switch (p->needs) {
    case BK_RIGHT_SIGNED:
        return 1;
    case BK_RIGHT_UNDECLARED:
    case BK_RIGHT_ADMIN:
        needs[n++] = (rmq_acl_need_t){RMQ_ACL_ADMIN, 0, NULL};
        break;
    case BK_RIGHT_PUB:
    case BK_RIGHT_SUB:
        if (p->touches & BK_TOUCH_TOPIC)
            needs[n++] = (rmq_acl_need_t){RMQ_ACL_TOPIC, perm, topic};
        if (p->touches & BK_TOUCH_GROUP)
            needs[n++] = (rmq_acl_need_t){RMQ_ACL_GROUP, perm, group};
        break;
    }
    return allows(who, needs, n, who->request ? who->request : p->name, r);
}

int bk_perm_check_heartbeat(const bk_caller_t *who, const bk_heartbeat_t *hb, bk_result_t *r)
{
    if (!who || !who->account)
        return 1;
    const char *op = who->request ? who->request : perms[BK_OP_HEARTBEAT].name;
    for (size_t i = 0; i < hb->nconsumers; i++) {
        rmq_acl_need_t g = {RMQ_ACL_GROUP, RMQ_ACL_PERM_SUB, hb->consumers[i].group};
        if (!allows(who, &g, 1, op, r))
            return 0;
    }
    rmq_acl_resource_t producer_kind = hb->producers_by_topic ? RMQ_ACL_TOPIC : RMQ_ACL_GROUP;
    for (size_t i = 0; i < hb->nproducers; i++) {
        rmq_acl_need_t g = {producer_kind, RMQ_ACL_PERM_PUB, hb->producer_groups[i]};
        if (strcmp(g.name, RMQ_INNER_PRODUCER_GROUP) == 0)
            continue;                /* grants nothing: the checker records no such producer */
        if (!allows(who, &g, 1, op, r))
            return 0;
    }
    return 1;
}

/* bk_reader_t.may_read of a bk_perm_reader_t. */
static int reader_may_read(void *arg, const char *topic, char *why, size_t whylen)
{
    const bk_perm_reader_t *rd = arg;
    const bk_perm_t *p = bk_perm_of(rd->op);
    rmq_acl_need_t need = {RMQ_ACL_TOPIC, p->needs == BK_RIGHT_PUB ? RMQ_ACL_PERM_PUB : RMQ_ACL_PERM_SUB, topic};
    return rmq_acl_allows(rd->who.account, &need, 1, rd->who.request ? rd->who.request : p->name, why, whylen);
}

const bk_reader_t *bk_perm_reader_init(bk_perm_reader_t *rd, const bk_caller_t *who, bk_op_t op)
{
    rd->who = who ? *who : (bk_caller_t){NULL, NULL, NULL};
    rd->op = op;
    rd->base.may_read = rd->who.account ? reader_may_read : NULL;
    rd->base.arg = rd;
    return &rd->base;
}
