/* fuzz_grpc_v2.c: libFuzzer target for the apache.rocketmq.v2 request
 * decoders the gRPC front serves (a peer's bytes, unpacked into an arena as
 * the front unpacks them: rmq_grpc_unpack) and what the front does
 * with them before the core: the first byte picks the message type (or a
 * stored record for the delivery mapping), the rest is its protobuf.
 * SendMessage's messages go through gr_message_to_store, a Telemetry
 * command's settings through gr_settings_reply (packed), a record through
 * gr_message_from_record (packed), and a name server's route answer (the
 * broker's QueryRoute asks its name servers) through rmq_grpc_route_build
 * (packed). Nothing may crash or leak, what is
 * stored must point inside the request or the mapping's own buffers, and
 * every stored property must be a user key or one the mapping sets. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "apache/rocketmq/v2/service.pb-c.h"
#include "gr_message.h"
#include "gr_settings.h"
#include "rmq_grpc_pb.h"
#include "rmq_grpc_route.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The request messages of the served RPCs, in selector order. */
static const ProtobufCMessageDescriptor *const requests[] = {
    &apache__rocketmq__v2__query_route_request__descriptor,
    &apache__rocketmq__v2__heartbeat_request__descriptor,
    &apache__rocketmq__v2__send_message_request__descriptor,
    &apache__rocketmq__v2__query_assignment_request__descriptor,
    &apache__rocketmq__v2__receive_message_request__descriptor,
    &apache__rocketmq__v2__ack_message_request__descriptor,
    &apache__rocketmq__v2__forward_message_to_dead_letter_queue_request__descriptor,
    &apache__rocketmq__v2__end_transaction_request__descriptor,
    &apache__rocketmq__v2__telemetry_command__descriptor,
    &apache__rocketmq__v2__notify_client_termination_request__descriptor,
    &apache__rocketmq__v2__change_invisible_duration_request__descriptor,
};
#define N_REQUESTS (sizeof(requests) / sizeof(requests[0]))

static void pack_and_drop(const ProtobufCMessage *m)
{
    size_t len = protobuf_c_message_get_packed_size(m);
    uint8_t *buf = malloc(len + 1);
    if (buf) {
        protobuf_c_message_pack(m, buf);
        free(buf);
    }
}

/* 1 if name[0..len) is a user property key of msg. */
static int is_user_key(const Apache__Rocketmq__V2__Message *msg, const char *name, size_t len)
{
    for (size_t i = 0; i < msg->n_user_properties; i++)
        if (strlen(msg->user_properties[i]->key) == len && memcmp(msg->user_properties[i]->key, name, len) == 0)
            return 1;
    return 0;
}

/* Every stored property is a user key or one the mapping sets: no value a
 * client sent smuggled in another. */
static void check_props(const Apache__Rocketmq__V2__Message *msg, const st_msg_t *m)
{
    size_t pos = 0, pieces = 1;
    rmq_prop_t p;

    for (size_t i = 0; i < m->properties_len; i++)
        pieces += m->properties[i] == '\x02';
    while (rmq_props_next(m->properties, m->properties_len, &pos, &p)) {
        if (!gr_prop_is_system(p.name, p.name_len) && !is_user_key(msg, p.name, p.name_len))
            abort();
        pieces--;
    }
    if (pieces != 0)
        abort();
}

static void send_messages(const Apache__Rocketmq__V2__SendMessageRequest *req)
{
    gr_send_ctx_t ctx = {.now_ms = 1767000000000, .max_delay_ms = 86400000, .max_body_size = 1 << 16,
                         .peer_host = "192.0.2.7"};
    gr_store_msg_t sm = {0};
    gr_status_t st;
    st_msg_t m;

    for (size_t i = 0; i < req->n_messages; i++) {
        if (!gr_message_to_store(req->messages[i], &ctx, &sm, &m, &st))
            continue;
        if (m.properties_len && (m.properties != sm.props.data || m.properties_len > RMQ_PROPS_MAX))
            abort();
        if (m.body != req->messages[i]->body.data && m.body != sm.body)
            abort();
        check_props(req->messages[i], &m);
    }
    gr_store_msg_deinit(&sm);
}

static void telemetry(const Apache__Rocketmq__V2__TelemetryCommand *cmd)
{
    gr_settings_config_t cfg = {.max_body_size = 4 << 20, .receive_batch_size = 32, .long_polling_max_ms = 20000,
                                .producer_max_attempts = 3};
    gr_group_policy_t group = {.retry_max_times = 16, .consume_orderly = 1};
    gr_settings_reply_t r;
    gr_status_t st;

    if (cmd->command_case != APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS || !cmd->settings)
        return;
    if (gr_settings_reply(cmd->settings, &cfg, &group, &r, &st))
        pack_and_drop(&r.cmd.base);
}

static void deliver_record(const uint8_t *data, size_t size)
{
    gr_deliver_ctx_t ctx = {.receipt_handle = "h", .invisible_ms = 1000, .max_body_size = 1 << 16};
    rmq_record_t rec;
    gr_delivered_t d;

    if (rmq_record_decode(data, size, 0, &rec) != RMQ_OK)
        return;
    if (gr_message_from_record(&rec, &ctx, &d) == RMQ_OK)
        pack_and_drop(&d.msg.base);
    gr_delivered_deinit(&d);
}

/* A name server's route (its GET_ROUTEINFO_BY_TOPIC answer) as v2 queues. */
static void route_queues(const uint8_t *data, size_t size)
{
    Rmq__TopicRouteData *rd = rmq__topic_route_data__unpack(NULL, size, data);
    rmq_grpc_route_t r = {0};
    char why[256];

    if (!rd)
        return;
    if (rmq_grpc_route_build(rd, "T", &r, why, sizeof(why)) == RMQ_OK)
        for (size_t i = 0; i < r.n; i++)
            pack_and_drop(&r.queues[i]->base);
    rmq_grpc_route_deinit(&r);
    rmq__topic_route_data__free_unpacked(rd, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    size_t kind = data[0] % (N_REQUESTS + 2);
    if (kind == N_REQUESTS) {
        deliver_record(data + 1, size - 1);
        return 0;
    }
    if (kind == N_REQUESTS + 1) {
        route_queues(data + 1, size - 1);
        return 0;
    }
    ProtobufCMessage *m = rmq_grpc_unpack(requests[kind], data + 1, size - 1);
    if (!m)
        return 0;
    if (requests[kind] == &apache__rocketmq__v2__send_message_request__descriptor)
        send_messages((const Apache__Rocketmq__V2__SendMessageRequest *)m);
    else if (requests[kind] == &apache__rocketmq__v2__telemetry_command__descriptor)
        telemetry((const Apache__Rocketmq__V2__TelemetryCommand *)m);
    pack_and_drop(m);
    rmq_grpc_unpacked_free(m);
    return 0;
}
