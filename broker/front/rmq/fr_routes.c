/* fr_routes.c: the native (rmq) front-end's code-to-handler table: every request
 * code the broker serves over the rmq protocol, the handler that decodes it
 * and the core's operation it is (what it touches and needs). The broker's own links (registration, metadata sync, HA) are clients and
 * are not here. */
#include "fr_routes.h"

/* Every code served: its handler and the core's operation (bk_perm.h: what
 * it touches and needs, checked on the decoded request). A send's check is
 * the core's send itself (bk_produce_check); the others ask fr_allowed,
 * which finds the operation here by code (under ACL only: sends and pulls
 * first). */
static const fr_route_t routes[] = {
    {RMQ__REQUEST_CODE__SEND_MESSAGE, fr_send, BK_OP_SEND},
    {RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE, fr_send, BK_OP_SEND},
    {RMQ__REQUEST_CODE__PULL_MESSAGE, fr_pull, BK_OP_PULL},
    {RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, fr_query_consumer_offset, BK_OP_OFFSET_QUERY},
    {RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET, fr_update_consumer_offset, BK_OP_OFFSET_COMMIT},
    {RMQ__REQUEST_CODE__GET_MAX_OFFSET, fr_queue_offset, BK_OP_QUEUE_OFFSET},
    {RMQ__REQUEST_CODE__GET_MIN_OFFSET, fr_queue_offset, BK_OP_QUEUE_OFFSET},
    {RMQ__REQUEST_CODE__GET_EARLIEST_MSG_STORETIME, fr_queue_offset, BK_OP_QUEUE_OFFSET},
    {RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP, fr_queue_offset, BK_OP_QUEUE_OFFSET},
    {RMQ__REQUEST_CODE__VIEW_MESSAGE_BY_ID, fr_view_message, BK_OP_VIEW},
    {RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO, fr_runtime_info, BK_OP_RUNTIME_INFO},
    {RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC, fr_update_topic, BK_OP_TOPIC_UPDATE},
    {RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC_LIST, fr_update_topic_list, BK_OP_TOPIC_UPDATE},
    {RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER, fr_delete_topic, BK_OP_TOPIC_DELETE},
    {RMQ__REQUEST_CODE__GET_ALL_TOPIC_CONFIG, fr_all_topics, BK_OP_TOPIC_LIST},
    {RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO, fr_topic_stats, BK_OP_TOPIC_STATS},
    {RMQ__REQUEST_CODE__UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, fr_update_group, BK_OP_GROUP_UPDATE},
    {RMQ__REQUEST_CODE__DELETE_SUBSCRIPTIONGROUP, fr_delete_group, BK_OP_GROUP_DELETE},
    {RMQ__REQUEST_CODE__GET_ALL_SUBSCRIPTIONGROUP_CONFIG, fr_all_groups, BK_OP_GROUP_LIST},
    {RMQ__REQUEST_CODE__GET_ALL_CONSUMER_OFFSET, fr_all_offsets, BK_OP_ALL_OFFSETS},
    {RMQ__REQUEST_CODE__GET_CONSUME_STATS, fr_consume_stats, BK_OP_CONSUME_STATS},
    {RMQ__REQUEST_CODE__HEART_BEAT, fr_heartbeat, BK_OP_HEARTBEAT},
    {RMQ__REQUEST_CODE__UNREGISTER_CLIENT, fr_unregister_client, BK_OP_UNREGISTER},
    {RMQ__REQUEST_CODE__GET_CONSUMER_LIST_BY_GROUP, fr_consumer_list, BK_OP_CONSUMER_LIST},
    {RMQ__REQUEST_CODE__END_TRANSACTION, fr_end_transaction, BK_OP_END_TRANSACTION},
    {RMQ__REQUEST_CODE__GET_ALL_DELAY_OFFSET, fr_get_all_delay_offset, BK_OP_DELAY_OFFSETS},
    {RMQ__REQUEST_CODE__CONSUMER_SEND_MSG_BACK, fr_send_back, BK_OP_SEND_BACK},
    {RMQ__REQUEST_CODE__LOCK_BATCH_MQ, fr_lock, BK_OP_QUEUE_LOCK},
    {RMQ__REQUEST_CODE__UNLOCK_BATCH_MQ, fr_unlock, BK_OP_QUEUE_LOCK},
    {RMQ__REQUEST_CODE__QUERY_MESSAGE, fr_query_message, BK_OP_QUERY_BY_KEY},
};

const fr_route_t *fr_route_at(size_t i)
{
    return i < sizeof(routes) / sizeof(routes[0]) ? &routes[i] : NULL;
}

bk_op_t fr_routes_op(int code)
{
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        if (routes[i].code == code)
            return routes[i].op;
    return BK_OP_UNDECLARED;
}

void fr_routes_install(bk_front_t *fe, fr_send_t *s)
{
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        rmq_server_handle(fe->srv, routes[i].code, routes[i].fn, routes[i].op == BK_OP_SEND ? (void *)s : (void *)fe);
}
