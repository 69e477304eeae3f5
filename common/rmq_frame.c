/* rmq_frame.c: the frame codec. Owns the byte layout of a frame
 * (u32 frame_len | u32 header_len | Command header | body), the length checks
 * made before anything is allocated for a frame, and the names of wire enums.
 * Bodies move between evbuffers by reference; only headers are (un)packed,
 * a header into one arena per frame (see below). */
#include "rmq_frame.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <protobuf-c/protobuf-c.h>

static uint32_t get_be32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* Checks the 8-byte prefix against max_frame; fills both lengths. Pure. */
static rmq_err_t check_prefix(const uint8_t prefix[RMQ_FRAME_PREFIX], uint32_t max_frame,
                              uint32_t *frame_len, uint32_t *header_len, const char **why)
{
    *frame_len = get_be32(prefix);
    *header_len = get_be32(prefix + 4);
    if (max_frame == 0)
        max_frame = RMQ_FRAME_MAX_DEFAULT;
    if (*frame_len < 4) {
        *why = "frame length below 4";
        return RMQ_EPROTO;
    }
    if (*frame_len > max_frame) {
        *why = "frame length over the maximum";
        return RMQ_ETOOBIG;
    }
    if (*header_len > *frame_len - 4) {
        *why = "header length beyond the frame";
        return RMQ_EPROTO;
    }
    return RMQ_OK;
}

rmq_err_t rmq_frame_check_prefix(const uint8_t *prefix, uint32_t max_frame, const char **why)
{
    uint32_t frame_len, header_len;

    return check_prefix(prefix, max_frame, &frame_len, &header_len, why);
}

/* ---- header arena ---------------------------------------------------------
 * A frame's unpacked header lives in one arena: protobuf-c allocates the
 * message before its members, so the Command is the first allocation of the
 * arena's first block and freeing the frame's cmd frees the block (a cmd
 * moves between frames like any pointer). One malloc and one free per
 * header instead of one of each per string and sub-message; blocks past the
 * first (large headers) are chained behind it. */

typedef struct arena_block {
    struct arena_block *next;       /* first block: the further blocks */
    size_t used, cap;
    size_t pad;                     /* data aligned for any type */
    unsigned char data[];
} arena_block_t;

#define ARENA_ALIGN 16u
#define ARENA_FIRST (1024u - sizeof(arena_block_t))   /* a send's header fits */
#define ARENA_MORE 4096u

_Static_assert(offsetof(arena_block_t, data) % ARENA_ALIGN == 0, "arena data misaligned");

static arena_block_t *arena_block_new(size_t cap)
{
    arena_block_t *b = malloc(sizeof(*b) + cap);

    if (b != NULL)
        *b = (arena_block_t){ .cap = cap };
    return b;
}

/* protobuf-c's alloc: bump allocation in the first block, else in the
 * newest further block, else in a new one. */
static void *arena_alloc(void *arg, size_t n)
{
    arena_block_t *first = arg, *b;

    if (n > SIZE_MAX - ARENA_MORE)
        return NULL;
    n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
    b = first->cap - first->used >= n ? first : first->next;
    if (b == NULL || b->cap - b->used < n) {
        if ((b = arena_block_new(n > ARENA_MORE ? n : ARENA_MORE)) == NULL)
            return NULL;
        b->next = first->next;
        first->next = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

/* protobuf-c's free: nothing; the arena goes as a whole. */
static void arena_free_one(void *arg, void *p)
{
    (void)arg;
    (void)p;
}

static void arena_free(arena_block_t *first)
{
    while (first != NULL) {
        arena_block_t *next = first->next;
        free(first);
        first = next;
    }
}

static rmq_err_t unpack_header(const uint8_t *data, uint32_t len, Rmq__Command **cmd,
                               const char **why)
{
    arena_block_t *first = arena_block_new(ARENA_FIRST);
    ProtobufCAllocator alloc = { arena_alloc, arena_free_one, first };

    *cmd = NULL;
    if (first == NULL) {
        *why = "out of memory unpacking the header";
        return RMQ_ENOMEM;
    }
    Rmq__Command *c = rmq__command__unpack(&alloc, len, data);
    if (c == NULL || (void *)c != first->data) {
        arena_free(first);
        *why = c == NULL ? "header does not unpack" : "protobuf-c allocated the header after its members";
        return RMQ_EPROTO;
    }
    *cmd = c;
    return RMQ_OK;
}

/* Takes one frame from the front of in; see rmq_frame.h. Loop thread of in. */
rmq_err_t rmq_frame_decode(struct evbuffer *in, uint32_t max_frame, rmq_frame_t *frame,
                           const char **why)
{
    uint8_t prefix[RMQ_FRAME_PREFIX];
    uint32_t frame_len, header_len;
    const char *dummy;
    rmq_err_t err;

    if (why == NULL)
        why = &dummy;
    if (evbuffer_copyout(in, prefix, sizeof(prefix)) < (ev_ssize_t)sizeof(prefix))
        return RMQ_EAGAIN;
    err = check_prefix(prefix, max_frame, &frame_len, &header_len, why);
    if (err != RMQ_OK)
        return err;
    if (evbuffer_get_length(in) - 4 < frame_len)
        return RMQ_EAGAIN;

    const uint8_t *hdr = evbuffer_pullup(in, (ev_ssize_t)(RMQ_FRAME_PREFIX + header_len));
    if (hdr == NULL) {
        *why = "out of memory pulling up the header";
        return RMQ_ENOMEM;
    }
    err = unpack_header(hdr + RMQ_FRAME_PREFIX, header_len, &frame->cmd, why);
    if (err != RMQ_OK)
        return err;

    size_t body_len = (size_t)frame_len - 4 - header_len;
    frame->body = evbuffer_new();
    if (frame->body == NULL) {
        rmq_frame_clear(frame);
        *why = "out of memory";
        return RMQ_ENOMEM;
    }
    evbuffer_drain(in, RMQ_FRAME_PREFIX + header_len);
    if (body_len > 0 && evbuffer_remove_buffer(in, frame->body, body_len) != (int)body_len) {
        rmq_frame_clear(frame);
        *why = "body move failed";
        return RMQ_ENOMEM;
    }
    return RMQ_OK;
}

/* Same as rmq_frame_decode over flat bytes; the body is copied. Any thread. */
rmq_err_t rmq_frame_decode_bytes(const uint8_t *data, size_t len, uint32_t max_frame,
                                 rmq_frame_t *frame, size_t *used, const char **why)
{
    uint32_t frame_len, header_len;
    const char *dummy;
    rmq_err_t err;

    if (why == NULL)
        why = &dummy;
    *used = 0;
    if (len < RMQ_FRAME_PREFIX)
        return RMQ_EAGAIN;
    err = check_prefix(data, max_frame, &frame_len, &header_len, why);
    if (err != RMQ_OK)
        return err;
    if (len - 4 < frame_len)
        return RMQ_EAGAIN;
    err = unpack_header(data + RMQ_FRAME_PREFIX, header_len, &frame->cmd, why);
    if (err != RMQ_OK)
        return err;

    size_t body_len = (size_t)frame_len - 4 - header_len;
    frame->body = evbuffer_new();
    if (frame->body == NULL ||
        evbuffer_add(frame->body, data + RMQ_FRAME_PREFIX + header_len, body_len) != 0) {
        rmq_frame_clear(frame);
        *why = "out of memory";
        return RMQ_ENOMEM;
    }
    *used = 4 + (size_t)frame_len;
    return RMQ_OK;
}

void rmq_frame_clear(rmq_frame_t *frame)
{
    if (frame->cmd != NULL)
        arena_free((arena_block_t *)((unsigned char *)frame->cmd - offsetof(arena_block_t, data)));
    if (frame->body != NULL)
        evbuffer_free(frame->body);
    frame->cmd = NULL;
    frame->body = NULL;
}

/* A ProtobufCBuffer that packs into a stack scratch first and grows on the
 * heap; failed is set when growing fails (the bytes are then incomplete). */
typedef struct pack_buf {
    ProtobufCBuffer base;
    uint8_t *data;
    size_t len, cap;
    int heap, failed;
} pack_buf_t;

static void pack_buf_append(ProtobufCBuffer *b, size_t len, const uint8_t *data)
{
    pack_buf_t *pb = (pack_buf_t *)b;

    if (pb->failed)
        return;
    if (len > pb->cap - pb->len) {
        size_t cap = pb->cap * 2;
        while (cap - pb->len < len)
            cap *= 2;
        uint8_t *grown = pb->heap ? realloc(pb->data, cap) : malloc(cap);
        if (grown == NULL) {
            pb->failed = 1;
            return;
        }
        if (!pb->heap)
            memcpy(grown, pb->data, pb->len);
        pb->data = grown;
        pb->cap = cap;
        pb->heap = 1;
    }
    memcpy(pb->data + pb->len, data, len);
    pb->len += len;
}

/* Appends prefix and packed header for a body of body_len bytes. The header
 * is packed once (pack_to_buffer: no separate sizing pass) into a stack
 * scratch and copied behind its prefix. Loop thread of out. */
static rmq_err_t encode_head(struct evbuffer *out, const Rmq__Command *cmd, size_t body_len)
{
    uint8_t scratch[512];
    pack_buf_t pb = { .base.append = pack_buf_append, .data = scratch, .cap = sizeof(scratch) };
    struct evbuffer_iovec vec;
    rmq_err_t err = RMQ_ENOMEM;

    rmq__command__pack_to_buffer(cmd, &pb.base);
    if (pb.failed)
        goto out;
    err = RMQ_ETOOBIG;
    if (body_len > UINT32_MAX - 4 - pb.len)
        goto out;
    err = RMQ_ENOMEM;
    if (evbuffer_reserve_space(out, (ev_ssize_t)(RMQ_FRAME_PREFIX + pb.len), &vec, 1) != 1)
        goto out;
    uint8_t *p = vec.iov_base;
    put_be32(p, (uint32_t)(4 + pb.len + body_len));
    put_be32(p + 4, (uint32_t)pb.len);
    memcpy(p + RMQ_FRAME_PREFIX, pb.data, pb.len);
    vec.iov_len = RMQ_FRAME_PREFIX + pb.len;
    if (evbuffer_commit_space(out, &vec, 1) == 0)
        err = RMQ_OK;
out:
    if (pb.heap)
        free(pb.data);
    return err;
}

rmq_err_t rmq_frame_encode(struct evbuffer *out, const Rmq__Command *cmd,
                           const void *body, size_t body_len)
{
    if (body == NULL)
        body_len = 0;
    rmq_err_t err = encode_head(out, cmd, body_len);
    if (err != RMQ_OK)
        return err;
    if (body_len > 0 && evbuffer_add(out, body, body_len) != 0)
        return RMQ_ENOMEM;
    return RMQ_OK;
}

rmq_err_t rmq_frame_encode_buf(struct evbuffer *out, const Rmq__Command *cmd,
                               struct evbuffer *body)
{
    size_t body_len = body != NULL ? evbuffer_get_length(body) : 0;
    rmq_err_t err = encode_head(out, cmd, body_len);
    if (err != RMQ_OK)
        return err;
    if (body_len > 0 && evbuffer_add_buffer(out, body) != 0)
        return RMQ_ENOMEM;
    return RMQ_OK;
}

static const char *enum_name(const ProtobufCEnumDescriptor *desc, int value)
{
    const ProtobufCEnumValue *v = protobuf_c_enum_descriptor_get_value(desc, value);
    return v != NULL ? v->name : "UNKNOWN";
}

const char *rmq_status_name(int status)
{
    return enum_name(&rmq__status__descriptor, status);
}

const char *rmq_request_name(int code)
{
    return enum_name(&rmq__request_code__descriptor, code);
}
