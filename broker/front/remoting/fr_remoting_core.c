/* fr_remoting_core.c: what the remoting front asks of the broker core's
 * offset and client operations (core/bk_offset_ops.c, core/bk_clients.c),
 * one function per operation. */
#include "bk_clients.h"
#include "bk_offset_ops.h"
#include "fr_remoting.h"

int64_t fr_rm_core_offset_query(bk_broker_t *bk, const char *topic, const char *group, int32_t queue_id)
{
    bk_offset_key_t key = {topic, group, queue_id};
    int64_t off = -1;
    bk_result_t r;
    return bk_offset_query(bk->offset_ops, &key, &off, &r) == BK_OK ? off : -1;
}

bk_status_t fr_rm_core_offset_commit(bk_broker_t *bk, const char *topic, const char *group, int32_t queue_id,
                                     int64_t offset, bk_result_t *r)
{
    bk_offset_key_t key = {topic, group, queue_id};
    return bk_offset_commit(bk->offset_ops, &key, offset, r);
}

int fr_rm_core_heartbeat(bk_broker_t *bk, bk_session_t *ss, const bk_heartbeat_t *hb, bk_result_t *r)
{
    return bk_clients_heartbeat(bk->clients, ss, hb, r) < 0 ? -1 : 0;
}

void fr_rm_core_unregister(bk_broker_t *bk, const char *client_id, const char *group)
{
    bk_clients_unregister(bk->clients, client_id, group);
}

size_t fr_rm_core_consumer_ids(bk_broker_t *bk, const char *group, const char **ids, size_t cap)
{
    return bk_clients_ids(bk->clients, group, ids, cap);
}

const char *fr_rm_core_subscription(bk_broker_t *bk, const char *group, const char *topic)
{
    return bk_clients_subscription(bk->clients, group, topic);
}
