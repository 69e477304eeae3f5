/* rmq_grpc_pb.c: protobuf-c requests and responses of gRPC calls (see
 * rmq_grpc_pb.h). */
#include "rmq_grpc_pb.h"

#include <stdio.h>
#include <stdlib.h>

#include "apache/rocketmq/v2/definition.pb-c.h"

void *rmq_grpc_decode(rmq_grpc_call_t *call, const ProtobufCMessageDescriptor *desc)
{
    size_t len;
    const uint8_t *data = rmq_grpc_call_request(call, &len);
    ProtobufCMessage *m = protobuf_c_message_unpack(desc, NULL, len, data);
    if (!m) {
        char why[200];
        snprintf(why, sizeof(why), "the request is no %s (%zu bytes)", desc->name, len);
        rmq_grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT, why);
    }
    return m;
}

void rmq_grpc_answer(rmq_grpc_call_t *call, const ProtobufCMessage *resp)
{
    size_t len = protobuf_c_message_get_packed_size(resp);
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        rmq_grpc_finish(call, RMQ_GRPC_INTERNAL, "out of memory");
        return;
    }
    protobuf_c_message_pack(resp, buf);
    rmq_grpc_reply(call, buf, len);
    free(buf);
}

void rmq_grpc_answer_status(rmq_grpc_call_t *call, const ProtobufCMessageDescriptor *desc, int code,
                            const char *message)
{
    const ProtobufCFieldDescriptor *f = protobuf_c_message_descriptor_get_field_by_name(desc, "status");
    ProtobufCMessage *resp = calloc(1, desc->sizeof_message);
    if (!f || f->type != PROTOBUF_C_TYPE_MESSAGE || !resp) {
        free(resp);
        rmq_grpc_finish(call, RMQ_GRPC_INTERNAL, message);
        return;
    }
    Apache__Rocketmq__V2__Status status = APACHE__ROCKETMQ__V2__STATUS__INIT;
    status.code = code;
    status.message = (char *)(message ? message : "");
    desc->message_init(resp);
    *(Apache__Rocketmq__V2__Status **)((char *)resp + f->offset) = &status;
    rmq_grpc_answer(call, resp);
    free(resp);
}
