/* fr_routes.c: the native (rmq) front-end's code-to-handler table: every request
 * code the broker serves over the rmq protocol, and the handler that decodes
 * it. The broker's own links (registration, metadata sync, HA) are clients and
 * are not here. */
#include "fr_routes.h"

#include "bk_broker.h"

static const struct {
    int code;
    rmq_handler_fn fn;
} routes[] = {
    {RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET, fr_query_consumer_offset},
    {RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET, fr_update_consumer_offset},
    {RMQ__REQUEST_CODE__GET_MAX_OFFSET, fr_queue_offset},
    {RMQ__REQUEST_CODE__GET_MIN_OFFSET, fr_queue_offset},
    {RMQ__REQUEST_CODE__GET_EARLIEST_MSG_STORETIME, fr_queue_offset},
    {RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP, fr_queue_offset},
    {RMQ__REQUEST_CODE__VIEW_MESSAGE_BY_ID, fr_view_message},
    {RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO, fr_runtime_info},
    {RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC, fr_update_topic},
    {RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC_LIST, fr_update_topic_list},
    {RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER, fr_delete_topic},
    {RMQ__REQUEST_CODE__GET_ALL_TOPIC_CONFIG, fr_all_topics},
    {RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO, fr_topic_stats},
    {RMQ__REQUEST_CODE__UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, fr_update_group},
    {RMQ__REQUEST_CODE__DELETE_SUBSCRIPTIONGROUP, fr_delete_group},
    {RMQ__REQUEST_CODE__GET_ALL_SUBSCRIPTIONGROUP_CONFIG, fr_all_groups},
    {RMQ__REQUEST_CODE__GET_ALL_CONSUMER_OFFSET, fr_all_offsets},
    {RMQ__REQUEST_CODE__GET_CONSUME_STATS, fr_consume_stats},
    {RMQ__REQUEST_CODE__HEART_BEAT, fr_heartbeat},
    {RMQ__REQUEST_CODE__UNREGISTER_CLIENT, fr_unregister_client},
    {RMQ__REQUEST_CODE__GET_CONSUMER_LIST_BY_GROUP, fr_consumer_list},
    {RMQ__REQUEST_CODE__END_TRANSACTION, fr_end_transaction},
    {RMQ__REQUEST_CODE__GET_ALL_DELAY_OFFSET, fr_get_all_delay_offset},
    {RMQ__REQUEST_CODE__CONSUMER_SEND_MSG_BACK, fr_send_back},
    {RMQ__REQUEST_CODE__LOCK_BATCH_MQ, fr_lock},
    {RMQ__REQUEST_CODE__UNLOCK_BATCH_MQ, fr_unlock},
    {RMQ__REQUEST_CODE__SEND_MESSAGE, fr_send},
    {RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE, fr_send},
    {RMQ__REQUEST_CODE__PULL_MESSAGE, fr_pull},
    {RMQ__REQUEST_CODE__QUERY_MESSAGE, fr_query_message},
};

void fr_routes_install(bk_broker_t *bk)
{
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
        rmq_server_handle(bk->srv, routes[i].code, routes[i].fn, bk);
}
