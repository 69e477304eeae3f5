/* fr_remoting_core.c: what the remoting front asks of the broker's offset
 * and client tables, one function per operation, so that the tables can
 * move (into broker/core/) by changing these bodies alone. */
#include <string.h>

#include "bk_ha.h"
#include "bk_sendback.h"
#include "bk_tx.h"
#include "fr_remoting.h"
#include "rmq_message.h"

int64_t fr_rm_core_offset_query(bk_broker_t *bk, const char *topic, const char *group, int32_t queue_id)
{
    return bk_offsets_query(bk->offsets, topic, group, queue_id);
}

rmq_err_t fr_rm_core_offset_commit(bk_broker_t *bk, const char *topic, const char *group, int32_t queue_id,
                                   int64_t offset)
{
    rmq_err_t rc = bk_offsets_commit(bk->offsets, topic, group, queue_id, offset);
    if (rc == RMQ_OK)
        bk_ha_offset_committed(bk->ha, topic, group, queue_id);
    return rc;
}

int fr_rm_core_heartbeat(bk_broker_t *bk, bk_session_t *ss, const Rmq__HeartbeatData *hb, bk_result_t *r)
{
    const char *why;
    for (size_t i = 0; i < hb->n_consumers; i++) {
        const char *g = hb->consumers[i]->group_name;
        if (!rmq_name_is_valid(g, strlen(g), &why)) {
            bk_result_set(r, BK_NAME_ILLEGAL, "HEART_BEAT: consumer group '%.100s' %s", g, why);
            return -1;
        }
    }
    for (size_t i = 0; i < hb->n_consumers; i++) {
        const char *g = hb->consumers[i]->group_name;
        bk_groups_use(bk->groups, g, strlen(g));
        if (hb->consumers[i]->message_model == RMQ__MESSAGE_MODEL__CLUSTERING)
            bk_sendback_retry_topic(bk, g);
    }
    bk_clients_heartbeat(bk->clients, ss, hb);
    bk_tx_heartbeat(bk->tx, ss, hb);
    return 0;
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
