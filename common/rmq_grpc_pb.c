/* rmq_grpc_pb.c: protobuf-c requests and responses of gRPC calls (see
 * rmq_grpc_pb.h). A request is unpacked into an arena: chunks handed out
 * by a bump pointer and freed together, so its strings, bytes and
 * sub-messages cost no malloc and no free each. */
#include "rmq_grpc_pb.h"

#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apache/rocketmq/v2/definition.pb-c.h"

#define ARENA_SLACK 1024   /* bytes of a first chunk beyond twice the request's */
#define ANSWER_STACK 1024  /* bytes of a response packed without malloc */

/* A chunk of an arena; the first one's first allocation is the message
 * (protobuf_c_message_unpack allocates the message before its fields). */
typedef struct arena_chunk {
    struct arena_chunk *next;    /* the chunk made before this one */
    size_t used, cap;
    max_align_t data[];
} arena_chunk_t;

/* The arena: the newest chunk, whose chain leads back to the first. */
typedef struct arena {
    arena_chunk_t *last;
    arena_chunk_t *first;
} arena_t;

static arena_chunk_t *chunk_new(arena_chunk_t *next, size_t cap)
{
    arena_chunk_t *c = malloc(offsetof(arena_chunk_t, data) + cap);
    if (c)
        *c = (arena_chunk_t){.next = next, .used = 0, .cap = cap};
    return c;
}

static void *arena_alloc(void *data, size_t size)
{
    arena_t *a = data;
    size_t need = (size + sizeof(max_align_t) - 1) / sizeof(max_align_t) * sizeof(max_align_t);
    if (need < size)
        return NULL;
    if (a->last->cap - a->last->used < need) {
        arena_chunk_t *c = chunk_new(a->last, need > a->last->cap ? need : a->last->cap);
        if (!c)
            return NULL;
        a->last = c;
    }
    void *p = (char *)a->last->data + a->last->used;
    a->last->used += need;
    return p;
}

/* Frees are the arena's, all at once. */
static void arena_free(void *data, void *p)
{
    (void)data;
    (void)p;
}

static void arena_release(arena_chunk_t *c)
{
    while (c) {
        arena_chunk_t *next = c->next;
        free(c);
        c = next;
    }
}

/* The chunk chain of an unpacked message sits before it: the newest
 * chunk's address is kept in the first chunk's first word. */
void *rmq_grpc_unpack(const ProtobufCMessageDescriptor *desc, const uint8_t *data, size_t len)
{
    arena_t a = {0};
    ProtobufCAllocator alloc = {.alloc = arena_alloc, .free = arena_free, .allocator_data = &a};
    ProtobufCMessage *m = NULL;
    a.first = a.last = chunk_new(NULL, 2 * len + ARENA_SLACK);
    if (a.first) {
        a.first->used = sizeof(max_align_t);   /* room for the newest chunk's address */
        m = protobuf_c_message_unpack(desc, &alloc, len, data);
    }
    if (m && (void *)m == (void *)(a.first->data + 1)) {
        memcpy(a.first->data, &a.last, sizeof(a.last));
        return m;
    }
    arena_release(a.last);
    return NULL;
}

void *rmq_grpc_decode(rmq_grpc_call_t *call, const ProtobufCMessageDescriptor *desc)
{
    size_t len;
    const uint8_t *data = rmq_grpc_call_request(call, &len);
    void *m = rmq_grpc_unpack(desc, data, len);
    if (m)
        return m;
    char why[200];
    snprintf(why, sizeof(why), "the request is no %s (%zu bytes)", desc->name, len);
    rmq_grpc_finish(call, RMQ_GRPC_INVALID_ARGUMENT, why);
    return NULL;
}

void rmq_grpc_unpacked_free(void *msg)
{
    if (!msg)
        return;
    max_align_t *slot = (max_align_t *)msg - 1;
    arena_chunk_t *last;
    memcpy(&last, slot, sizeof(last));
    arena_release(last);
}

/* A small response is packed on the stack (rmq_grpc_reply copies it). */
void rmq_grpc_answer(rmq_grpc_call_t *call, const ProtobufCMessage *resp)
{
    uint8_t small[ANSWER_STACK];
    size_t len = protobuf_c_message_get_packed_size(resp);
    uint8_t *buf = len <= sizeof(small) ? small : malloc(len);
    if (!buf) {
        rmq_grpc_finish(call, RMQ_GRPC_INTERNAL, "out of memory");
        return;
    }
    protobuf_c_message_pack(resp, buf);
    rmq_grpc_reply(call, buf, len);
    if (buf != small)
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
