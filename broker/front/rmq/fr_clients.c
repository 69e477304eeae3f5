/* fr_clients.c: the rmq protocol's decode and encode for the client
 * registry (core/bk_clients.h): HEART_BEAT (HeartbeatData into the neutral
 * heartbeat), UNREGISTER_CLIENT and GET_CONSUMER_LIST_BY_GROUP. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_front.h"
#include "fr_routes.h"
#include "fr_perm.h"
#include "fr_session.h"
#include "fr_status.h"

/* The core's value of the wire's ConsumeFromWhere (an unknown one: last offset). */
static bk_consume_from_t consume_from(Rmq__ConsumeFromWhere w)
{
    switch (w) {
    case RMQ__CONSUME_FROM_WHERE__CONSUME_FROM_FIRST_OFFSET: return BK_CONSUME_FROM_FIRST;
    case RMQ__CONSUME_FROM_WHERE__CONSUME_FROM_TIMESTAMP: return BK_CONSUME_FROM_TIMESTAMP;
    default: return BK_CONSUME_FROM_LAST;
    }
}

int fr_heartbeat_decode(const Rmq__HeartbeatData *w, bk_heartbeat_t *hb, bk_hb_consumer_t **cons,
                            bk_hb_sub_t **subs)
{
    size_t nsubs = 0, k = 0;
    for (size_t i = 0; i < w->n_consumers; i++)
        nsubs += w->consumers[i]->n_subscriptions;
    *cons = calloc(w->n_consumers ? w->n_consumers : 1, sizeof(**cons));
    *subs = calloc(nsubs ? nsubs : 1, sizeof(**subs));
    if (!*cons || !*subs)
        return 0;
    for (size_t i = 0; i < w->n_consumers; i++) {
        const Rmq__ConsumerData *cd = w->consumers[i];
        (*cons)[i] = (bk_hb_consumer_t){cd->group_name, cd->message_model == RMQ__MESSAGE_MODEL__CLUSTERING,
                                        *subs + k, cd->n_subscriptions, cd->pull_mode,
                                        consume_from(cd->consume_from_where)};
        for (size_t j = 0; j < cd->n_subscriptions; j++, k++)
            (*subs)[k] = (bk_hb_sub_t){cd->subscriptions[j]->topic, cd->subscriptions[j]->sub_string};
    }
    *hb = (bk_heartbeat_t){w->client_id, (const char *const *)w->producer_groups, w->n_producer_groups, *cons,
                           w->n_consumers};
    return 1;
}

/* HEART_BEAT: records the client's consumer and producer groups. */
void fr_heartbeat(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    rmq_reply_to_t to = rmq_reply_to(req->cmd);
    bk_hb_consumer_t *cons = NULL;
    bk_hb_sub_t *subs = NULL;
    bk_heartbeat_t hb;
    bk_result_t r;
    bk_session_t *ss;
    bk_caller_t who;

    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_HEARTBEAT, "HeartbeatData (heartbeat)"))
        return;
    if (fr_caller(fe, conn, req, &who) != 0)
        return;
    if (!(ss = fr_session_of(conn)) || !fr_heartbeat_decode(req->cmd->heartbeat, &hb, &cons, &subs))
        rmq_conn_replyf(conn, to, RMQ__STATUS__SYSTEM_ERROR, "HEART_BEAT: out of memory");
    else if (bk_clients_heartbeat(fe->clients, ss, &who, &hb, &r) < 0)
        fr_reply_result(conn, to, &r, NULL);
    else
        rmq_conn_reply(conn, to, NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
    free(cons);
    free(subs);
}

/* UNREGISTER_CLIENT: removes the client from its consumer group(s), where
 * this connection registered it. */
void fr_unregister_client(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_UNREGISTER_CLIENT,
                        "UnregisterClientRequest (unregister_client)"))
        return;
    const Rmq__UnregisterClientRequest *h = req->cmd->unregister_client;
    if (!fr_allowed(fe, conn, req, NULL, h->consumer_group))
        return;
    bk_session_t *ss = fr_session_find(conn);
    if (ss && (h->consumer_group[0] || !h->producer_group[0]))
        bk_clients_unregister(fe->clients, ss, h->client_id, h->consumer_group);
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
}

/* GET_CONSUMER_LIST_BY_GROUP's answer under construction: the ids and,
 * in the same order, each client described (strings borrowed from the
 * registry but the peer, copied). */
typedef struct consumer_list {
    char **ids;
    Rmq__ConsumerClient *clients;
    Rmq__ConsumerClient **ptrs;
    char (*peers)[64];
    size_t n, cap;
} consumer_list_t;

/* bk_client_view_fn: appends one client to the list (beyond cap: ignored). */
static void consumer_list_add(void *arg, const bk_client_view_t *v)
{
    consumer_list_t *cl = arg;
    if (cl->n == cl->cap)
        return;
    Rmq__ConsumerClient *c = &cl->clients[cl->n];
    rmq__consumer_client__init(c);
    snprintf(cl->peers[cl->n], sizeof(cl->peers[0]), "%s", v->addr);
    c->client_id = (char *)v->client_id;
    c->addr = cl->peers[cl->n];
    c->language = (char *)v->language;
    c->version = v->version;
    c->protocol = (char *)v->protocol;
    c->last_heartbeat_ms = v->last_heartbeat_ms;
    cl->ids[cl->n] = (char *)v->client_id;
    cl->ptrs[cl->n++] = c;
}

static void consumer_list_free(consumer_list_t *cl)
{
    free(cl->ids);
    free(cl->clients);
    free(cl->ptrs);
    free(cl->peers);
}

/* GET_CONSUMER_LIST_BY_GROUP: client ids and each client (address,
 * language, version, protocol, last heartbeat), or CONSUMER_NOT_ONLINE. */
void fr_consumer_list(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_GROUP, "GroupRequest (group)"))
        return;
    const char *group = req->cmd->group->consumer_group;
    if (!fr_allowed(fe, conn, req, NULL, group))
        return;
    size_t n = bk_clients_ids(fe->clients, group, NULL, 0);
    if (n == 0) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__CONSUMER_NOT_ONLINE,
                        "no consumer of group %.200s is connected to broker %s", group, fe->node->addr);
        return;
    }
    consumer_list_t cl = {calloc(n, sizeof(char *)), calloc(n, sizeof(Rmq__ConsumerClient)),
                          calloc(n, sizeof(Rmq__ConsumerClient *)), calloc(n, sizeof(cl.peers[0])), 0, n};
    if (!cl.ids || !cl.clients || !cl.ptrs || !cl.peers) {
        consumer_list_free(&cl);
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    bk_clients_each_client(fe->clients, group, consumer_list_add, &cl);
    Rmq__Command resp = RMQ__COMMAND__INIT;
    Rmq__ConsumerList pb = RMQ__CONSUMER_LIST__INIT;
    pb.client_ids = cl.ids;
    pb.n_client_ids = cl.n;
    pb.clients = cl.ptrs;
    pb.n_clients = cl.n;
    resp.header_case = RMQ__COMMAND__HEADER_CONSUMER_LIST;
    resp.consumer_list = &pb;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    consumer_list_free(&cl);
}
