/* rmq_grpc_pb.h: a gRPC call's protobuf-c plumbing every RocketMQ 5 front
 * shares (the broker's and the name server's): the request decoded as a
 * message (bytes that are none get grpc-status INVALID_ARGUMENT naming
 * it), a response packed and sent, and a response holding only its
 * Status (every apache.rocketmq.v2 response has one as field `status`;
 * application errors ride there with grpc-status 0, as the proxy
 * answers). Loop thread only, like the codec. */
#ifndef RMQ_GRPC_PB_H
#define RMQ_GRPC_PB_H

#include <protobuf-c/protobuf-c.h>

#include "rmq_codec_grpc.h"

/* The request of a unary call decoded as desc's message (free it with
 * protobuf_c_message_free_unpacked), or NULL after finishing the call with
 * grpc-status INVALID_ARGUMENT naming the message. */
void *rmq_grpc_decode(rmq_grpc_call_t *call, const ProtobufCMessageDescriptor *desc);

/* Packs resp and replies with it (grpc-status 0), or finishes with
 * INTERNAL when out of memory. */
void rmq_grpc_answer(rmq_grpc_call_t *call, const ProtobufCMessage *resp);

/* Replies with a response of type desc holding only Status{code, message}. */
void rmq_grpc_answer_status(rmq_grpc_call_t *call, const ProtobufCMessageDescriptor *desc, int code,
                            const char *message);

#endif
