/* gr_client.c: a RocketMQ 5 client's life on the broker (GRPC-NOTES.md
 * §2.3-§2.5): Telemetry (the client's Settings answered with the server's,
 * the stream kept for pushed commands), Heartbeat and
 * NotifyClientTermination. Settings and heartbeats register the client in
 * the core's registry (bk_clients: producers of each publishing topic,
 * whose group is the topic name, and consumer groups with their
 * subscriptions), so 5.x clients show up like remoting ones and
 * transaction check-backs find their producer. */
#include <stdlib.h>
#include <string.h>

#include "gr_front.h"
#include "gr_session.h"

#define GR_CLIENT_TOPICS_MAX 64      /* publishing topics or subscriptions registered from one Settings */

/* The client's registration, built from its settings (strings borrowed). */
typedef struct gr_registration {
    bk_heartbeat_t hb;
    const char *topics[GR_CLIENT_TOPICS_MAX];
    bk_hb_consumer_t consumer;
    bk_hb_sub_t subs[GR_CLIENT_TOPICS_MAX];
} gr_registration_t;

static int is_consumer(Apache__Rocketmq__V2__ClientType type)
{
    return type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__PUSH_CONSUMER ||
           type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__SIMPLE_CONSUMER;
}

/* A producer of every publishing topic (the proxy's producer group is the topic). */
static void registration_producer(gr_registration_t *g, const Apache__Rocketmq__V2__Publishing *pub)
{
    for (size_t i = 0; i < pub->n_topics && g->hb.nproducers < GR_CLIENT_TOPICS_MAX; i++) {
        if (pub->topics[i] && pub->topics[i]->name[0])
            g->topics[g->hb.nproducers++] = pub->topics[i]->name;
    }
    g->hb.producer_groups = g->topics;
    g->hb.producers_by_topic = 1;
}

/* A clustering consumer of the subscription's group, from its last offset
 * (the proxy's registerConsumer); a simple consumer pulls itself. */
static void registration_consumer(gr_registration_t *g, const Apache__Rocketmq__V2__Subscription *sub,
                                  Apache__Rocketmq__V2__ClientType type)
{
    size_t n = 0;
    for (size_t i = 0; i < sub->n_subscriptions && n < GR_CLIENT_TOPICS_MAX; i++) {
        const Apache__Rocketmq__V2__SubscriptionEntry *e = sub->subscriptions[i];
        if (!e->topic)
            continue;
        g->subs[n].topic = e->topic->name;
        g->subs[n++].expr = e->expression ? e->expression->expression : "*";
    }
    g->consumer = (bk_hb_consumer_t){
        .group = sub->_group_case ? sub->group->name : "",
        .clustering = 1,
        .subs = g->subs,
        .nsubs = n,
        .pull_mode = type == APACHE__ROCKETMQ__V2__CLIENT_TYPE__SIMPLE_CONSUMER,
        .consume_from = BK_CONSUME_FROM_LAST,
    };
    g->hb.consumers = &g->consumer;
    g->hb.nconsumers = 1;
}

/* Registers session gs's client in the core as its settings describe it:
 * 1, or 0 with st set (the core's refusal). */
static int register_client(gr_front_t *gf, gr_session_t *gs, const bk_caller_t *who,
                           const Apache__Rocketmq__V2__Settings *s, const char *language, gr_status_t *st)
{
    gr_registration_t g = {.hb = {.client_id = gs->client_id, .language = language}};
    if (s->pub_sub_case == APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING && s->publishing)
        registration_producer(&g, s->publishing);
    else if (s->pub_sub_case == APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_SUBSCRIPTION && s->subscription &&
             is_consumer(s->client_type))
        registration_consumer(&g, s->subscription, s->client_type);
    bk_result_t r;
    if (bk_clients_heartbeat(gf->fe->clients, &gs->base, who, &g.hb, &r) >= 0)
        return 1;
    return gr_status_of_result(st, &r);
}

/* ---- Telemetry ------------------------------------------------------------------- */

/* The group's retry policy for a consumer's Settings reply (NULL: RocketMQ's defaults). */
static const gr_group_policy_t *group_policy(gr_front_t *gf, const Apache__Rocketmq__V2__Settings *s,
                                             gr_group_policy_t *out)
{
    if (s->pub_sub_case != APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_SUBSCRIPTION || !s->subscription ||
        !s->subscription->_group_case)
        return NULL;
    const char *name = s->subscription->group->name;
    const bk_group_t *grp = bk_groups_get(gf->fe->node->groups, name, strlen(name));
    if (!grp)
        return NULL;
    *out = (gr_group_policy_t){.retry_max_times = grp->retry_max_times, .consume_orderly = grp->consume_orderly};
    return out;
}

/* One Telemetry stream, listed in its front: it holds a reference to its
 * session until it ends. */
typedef struct gr_telemetry {
    gr_front_t *gf;
    gr_session_t *gs;
    rmq_grpc_call_t *call;
    struct gr_telemetry *prev, *next;
} gr_telemetry_t;

/* Ends the stream with status (the proxy's way for a refused stream:
 * INVALID_ARGUMENT) and forgets it. */
static void telemetry_end(gr_telemetry_t *t, rmq_grpc_call_t *call, int status, const char *why)
{
    if (t->gs->telemetry == call)
        gr_session_set_telemetry(t->gs, NULL);
    if (t->prev)
        t->prev->next = t->next;
    else
        t->gf->streams = t->next;
    if (t->next)
        t->next->prev = t->prev;
    rmq_grpc_finish(call, status, why);
    bk_session_unref(&t->gs->base);
    free(t);
}

/* The client's Settings: answered with the server's, the client
 * registered; 0 after ending the stream on a refusal. */
static int telemetry_settings(gr_telemetry_t *t, rmq_grpc_call_t *call, Apache__Rocketmq__V2__TelemetryCommand *cmd)
{
    gr_settings_reply_t reply;
    gr_group_policy_t policy;
    gr_status_t st;
    bk_caller_t who;
    gr_front_t *gf = t->gf;
    const Apache__Rocketmq__V2__Settings *s = cmd->settings;
    if (!gr_settings_reply(s, &gf->settings, group_policy(gf, s, &policy), &reply, &st) ||
        !gr_call_caller(gf, call, &who, &st) ||
        !register_client(gf, t->gs, &who, s, rmq_grpc_call_header(call, "x-mq-language"), &st)) {
        apache__rocketmq__v2__telemetry_command__free_unpacked(cmd, NULL);
        telemetry_end(t, call, RMQ_GRPC_INVALID_ARGUMENT, st.message);
        return 0;
    }
    size_t len = apache__rocketmq__v2__telemetry_command__get_packed_size(&reply.cmd);
    uint8_t *buf = malloc(len ? len : 1);
    if (buf) {
        apache__rocketmq__v2__telemetry_command__pack(&reply.cmd, buf);
        rmq_grpc_write(call, buf, len);
    }
    free(buf);
    gr_session_set_settings(t->gs, cmd);
    gr_session_set_telemetry(t->gs, call);
    return 1;
}

static void telemetry_message(rmq_grpc_call_t *call, const uint8_t *data, size_t len, void *arg)
{
    gr_telemetry_t *t = arg;
    if (!data) {                     /* the client half-closed: so do we */
        telemetry_end(t, call, RMQ_GRPC_OK, NULL);
        return;
    }
    Apache__Rocketmq__V2__TelemetryCommand *cmd = apache__rocketmq__v2__telemetry_command__unpack(NULL, len, data);
    if (!cmd)
        telemetry_end(t, call, RMQ_GRPC_INVALID_ARGUMENT, "a Telemetry message is no apache.rocketmq.v2.TelemetryCommand");
    else if (cmd->command_case == APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS && cmd->settings)
        telemetry_settings(t, call, cmd);
    else                             /* results of pushed commands: nothing waits for them */
        apache__rocketmq__v2__telemetry_command__free_unpacked(cmd, NULL);
}

static void telemetry_cancel(rmq_grpc_call_t *call, void *arg)
{
    telemetry_end(arg, call, RMQ_GRPC_CANCELLED, NULL);
}

/* Telemetry (at the stream's headers): the stream becomes the session's. */
static void handle_telemetry(rmq_grpc_call_t *call, void *arg)
{
    gr_front_t *gf = arg;
    gr_status_t st;
    gr_session_t *gs = gr_call_session(gf, call, &st);
    gr_telemetry_t *t = gs ? malloc(sizeof(*t)) : NULL;
    if (!t) {
        int no_id = !gs && st.code == APACHE__ROCKETMQ__V2__CODE__CLIENT_ID_REQUIRED;
        rmq_grpc_finish(call, no_id ? RMQ_GRPC_INVALID_ARGUMENT : RMQ_GRPC_INTERNAL, no_id ? st.message : "out of memory");
        return;
    }
    *t = (gr_telemetry_t){.gf = gf, .gs = gs, .call = call, .next = gf->streams};
    if (gf->streams)
        gf->streams->prev = t;
    gf->streams = t;
    bk_session_ref(&gs->base);
    rmq_grpc_call_on_message(call, telemetry_message, t);
    rmq_grpc_call_on_cancel(call, telemetry_cancel, t);
}

void gr_front_stop(gr_front_t *gf)
{
    while (gf->streams)
        telemetry_end(gf->streams, gf->streams->call, RMQ_GRPC_OK, "the broker is stopping");
}

/* ---- Heartbeat, NotifyClientTermination ------------------------------------------ */

/* The session of a unary call's client that sent Settings: gs, or NULL
 * with st set (CLIENT_ID_REQUIRED, UNRECOGNIZED_CLIENT_TYPE). */
static gr_session_t *known_client(gr_front_t *gf, rmq_grpc_call_t *call, gr_status_t *st)
{
    gr_session_t *gs = gr_call_session(gf, call, st);
    if (!gs || gr_session_settings(gs))
        return gs;
    gr_status_set(st, APACHE__ROCKETMQ__V2__CODE__UNRECOGNIZED_CLIENT_TYPE,
                  "client %s sent no Settings on a Telemetry stream of this connection", gs->client_id);
    return NULL;
}

static void handle_heartbeat(rmq_grpc_call_t *call, void *arg)
{
    gr_front_t *gf = arg;
    const ProtobufCMessageDescriptor *resp = &apache__rocketmq__v2__heartbeat_response__descriptor;
    Apache__Rocketmq__V2__HeartbeatRequest *req = rmq_grpc_decode(call, &apache__rocketmq__v2__heartbeat_request__descriptor);
    if (!req)
        return;
    gr_status_t st;
    bk_caller_t who;
    gr_session_t *gs = known_client(gf, call, &st);
    if (gs && gr_call_caller(gf, call, &who, &st) &&
        register_client(gf, gs, &who, gr_session_settings(gs), rmq_grpc_call_header(call, "x-mq-language"), &st))
        gr_status_set(&st, APACHE__ROCKETMQ__V2__CODE__OK, "OK");
    gr_call_answer_status(call, resp, &st);
    rmq_grpc_unpacked_free(req);
}

/* The client leaves: its groups here (or the one it names), its producer
 * registrations, and its pop consumers' in-flight messages become visible
 * again (bk_pop's session close). */
static void handle_terminate(rmq_grpc_call_t *call, void *arg)
{
    gr_front_t *gf = arg;
    const ProtobufCMessageDescriptor *resp = &apache__rocketmq__v2__notify_client_termination_response__descriptor;
    Apache__Rocketmq__V2__NotifyClientTerminationRequest *req =
        rmq_grpc_decode(call, &apache__rocketmq__v2__notify_client_termination_request__descriptor);
    if (!req)
        return;
    gr_status_t st;
    bk_caller_t who;
    gr_session_t *gs = known_client(gf, call, &st);
    if (gs && gr_call_caller(gf, call, &who, &st)) {
        bk_front_t *fe = gf->fe;
        bk_clients_unregister(fe->clients, &gs->base, gs->client_id, req->_group_case ? req->group->name : "");
        bk_tx_session_closed(fe->tx, &gs->base);
        if (fe->pop)
            bk_pop_session_closed(fe->pop, &gs->base);
        gr_status_set(&st, APACHE__ROCKETMQ__V2__CODE__OK, "OK");
    }
    gr_call_answer_status(call, resp, &st);
    rmq_grpc_unpacked_free(req);
}

static const rmq_grpc_method_t rows[] = {
    {GR_PATH("Telemetry"), RMQ_GRPC_STREAM_REQUEST, handle_telemetry, NULL},
    {GR_PATH("Heartbeat"), RMQ_GRPC_UNARY_REQUEST, handle_heartbeat, NULL},
    {GR_PATH("NotifyClientTermination"), RMQ_GRPC_UNARY_REQUEST, handle_terminate, NULL},
};

const gr_methods_t gr_client_methods = {rows, sizeof(rows) / sizeof(rows[0])};
