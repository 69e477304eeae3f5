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

/* data[0..len) unpacked as desc's message into one arena (its strings,
 * bytes and sub-messages cost no malloc each), or NULL when it is none or
 * memory ran out. Free it with rmq_grpc_unpacked_free. */
void *rmq_grpc_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len);

/* Frees a message of rmq_grpc_unpack or rmq_grpc_decode (NULL is fine). */
void rmq_grpc_unpacked_free(void *msg);

/* The request of a unary call decoded as desc's message by
 * rmq_grpc_unpack, or NULL after finishing the call with grpc-status
 * INVALID_ARGUMENT naming the message. */
void *rmq_grpc_decode(rmq_grpc_call_t *call, const ProtobufCMessageDescriptor *desc);

/* Packs resp and replies with it (grpc-status 0), or finishes with
 * INTERNAL when out of memory. */
void rmq_grpc_answer(rmq_grpc_call_t *call, const ProtobufCMessage *resp);

/* Replies with a response of type desc holding only Status{code, message}. */
void rmq_grpc_answer_status(rmq_grpc_call_t *call, const ProtobufCMessageDescriptor *desc, int code,
                            const char *message);

#endif
