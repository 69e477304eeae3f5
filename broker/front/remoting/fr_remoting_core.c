/* fr_remoting_core.c: what the remoting front asks of the broker core's
 * offset and client operations (core/bk_offset_ops.c, core/bk_clients.c)
 * and of the store, one function per operation. */
#include <event2/buffer.h>

#include "bk_clients.h"
#include "bk_consume_cfg.h"
#include "bk_offset_ops.h"
#include "fr_remoting.h"

int64_t fr_rm_core_offset_query(bk_front_t *fe, const char *topic, const char *group, int32_t queue_id)
{
    bk_offset_key_t key = {topic, group, queue_id};
    int64_t off = -1;
    bk_result_t r;
    return bk_offset_query(fe->offset_ops, &key, &off, &r) == BK_OK ? off : -1;
}

int fr_rm_core_queue_head_in_memory(bk_front_t *fe, const char *topic, int32_t queue_id)
{
    static const st_tag_filter_t all = {.match_all = 1};
    st_get_result_t res = {0};
    st_store_stats_t stats;
    struct evbuffer *buf;

    if (st_store_min_offset(fe->node->store, topic, queue_id) > 0 || !(buf = evbuffer_new()))
        return 0;
    st_store_get(fe->node->store, topic, queue_id, 0, 1, INT32_MAX, &all, buf, &res);
    evbuffer_free(buf);
    if (res.status == ST_GET_MESSAGE_WAS_REMOVING)
        return 0;
    if (res.msg_count == 0)
        return 1;
    st_store_stats(fe->node->store, &stats);
    return stats.commitlog_max_offset - res.max_phys_scanned <= bk_consume_cfg_in_memory_max(fe->node->cfg);
}

bk_status_t fr_rm_core_offset_commit(bk_front_t *fe, const char *topic, const char *group, int32_t queue_id,
                                     int64_t offset, bk_result_t *r)
{
    bk_offset_key_t key = {topic, group, queue_id};
    return bk_offset_commit(fe->offset_ops, &key, offset, r);
}

int fr_rm_core_heartbeat(bk_front_t *fe, bk_session_t *ss, const bk_caller_t *who, const bk_heartbeat_t *hb,
                         bk_result_t *r)
{
    return bk_clients_heartbeat(fe->clients, ss, who, hb, r) < 0 ? -1 : 0;
}

void fr_rm_core_unregister(bk_front_t *fe, bk_session_t *ss, const char *client_id, const char *group)
{
    bk_clients_unregister(fe->clients, ss, client_id, group);
}

size_t fr_rm_core_consumer_ids(bk_front_t *fe, const char *group, const char **ids, size_t cap)
{
    return bk_clients_ids(fe->clients, group, ids, cap);
}

const char *fr_rm_core_subscription(bk_front_t *fe, const char *group, const char *topic, rmq_expr_type_t *type)
{
    return bk_clients_subscription(fe->clients, group, topic, type);
}
