/* bk_heartbeat.c: the client-facing requests over bk_clients: HEART_BEAT
 * (registers consumer groups and auto-creates their subscription groups),
 * UNREGISTER_CLIENT and GET_CONSUMER_LIST_BY_GROUP. */
#include <stdlib.h>
#include <string.h>

#include "bk_broker.h"
#include "bk_sendback.h"
#include "bk_tx.h"
#include "fr_routes.h"
#include "fr_session.h"
#include "rmq_log.h"
#include "rmq_message.h"

/* HEART_BEAT: records the client's consumer groups (creating subscription groups). */
void fr_heartbeat(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_HEARTBEAT, "HeartbeatData (heartbeat)"))
        return;
    const Rmq__HeartbeatData *hb = req->cmd->heartbeat;
    const char *why;
    for (size_t i = 0; i < hb->n_consumers; i++) {
        const char *g = hb->consumers[i]->group_name;
        if (!rmq_name_is_valid(g, strlen(g), &why)) {
            rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__NAME_ILLEGAL,
                            "HEART_BEAT: consumer group '%.200s' %s", g, why);
            return;
        }
        bk_groups_use(bk->groups, g, strlen(g));
        if (hb->consumers[i]->message_model == RMQ__MESSAGE_MODEL__CLUSTERING)
            bk_sendback_retry_topic(bk->sendback, g);   /* so the consumer can subscribe to %RETRY%g */
    }
    if (!hb->client_id[0]) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST, "HEART_BEAT: empty client_id");
        return;
    }
    bk_session_t *ss = fr_session_of(conn);
    if (!ss) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "HEART_BEAT: out of memory");
        return;
    }
    bk_clients_heartbeat(bk->clients, ss, hb);
    bk_tx_heartbeat(bk->tx, ss, hb);   /* producer groups: where transaction checks go */
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
}

/* UNREGISTER_CLIENT: removes the client from its consumer group(s). */
void fr_unregister_client(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_UNREGISTER_CLIENT,
                        "UnregisterClientRequest (unregister_client)"))
        return;
    const Rmq__UnregisterClientRequest *h = req->cmd->unregister_client;
    if (h->consumer_group[0] || !h->producer_group[0])
        bk_clients_unregister(bk->clients, h->client_id, h->consumer_group);
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
}

/* GET_CONSUMER_LIST_BY_GROUP: client ids, or CONSUMER_NOT_ONLINE. */
void fr_consumer_list(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_GROUP, "GroupRequest (group)"))
        return;
    const char *group = req->cmd->group->consumer_group;
    size_t n = bk_clients_ids(bk->clients, group, NULL, 0);
    if (n == 0) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__CONSUMER_NOT_ONLINE,
                        "no consumer of group %.200s is connected to broker %s", group, bk->addr);
        return;
    }
    const char **ids = calloc(n, sizeof(*ids));
    if (!ids) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    bk_clients_ids(bk->clients, group, ids, n);
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__ConsumerList cl = RMQ__CONSUMER_LIST__INIT;
    cl.client_ids = (char **)ids;
    cl.n_client_ids = n;
    resp.header_case = RMQ__COMMAND__HEADER_CONSUMER_LIST;
    resp.consumer_list = &cl;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    free(ids);
}
