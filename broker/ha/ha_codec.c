/* ha_codec.c: encoding and bounds-checked parsing of HA frames, chunk
 * headers and acks. Pure except ha_frame_add, which writes an evbuffer. */
#include "ha_codec.h"

#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

#define HA_NAME_MAX 255
#define HA_REC_FLAG 0x80000000u
#define HA_REC_TYPE_SHIFT 24
#define HA_REC_TYPE_MASK 0x7fu
#define HA_REC_LEN_MASK 0x00ffffffu

static uint64_t get_u64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static uint32_t get_u32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void put_u64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

void ha_chunk_hdr_encode(uint8_t out[HA_CHUNK_HDR], int64_t offset, uint32_t len)
{
    put_u64(out, (uint64_t)offset);
    put_u32(out + 8, len);
}

void ha_record_hdr_encode(uint8_t out[HA_CHUNK_HDR], int64_t offset, uint32_t type, uint32_t len)
{
    put_u64(out, (uint64_t)offset);
    put_u32(out + 8, HA_REC_FLAG | (type & HA_REC_TYPE_MASK) << HA_REC_TYPE_SHIFT |
                         (len & HA_REC_LEN_MASK));
}

rmq_err_t ha_chunk_parse(const uint8_t *data, size_t len, uint32_t max_body, ha_chunk_t *c)
{
    uint64_t off;
    uint32_t word, body, type = HA_REC_LOG;

    if (len < HA_CHUNK_HDR)
        return RMQ_EAGAIN;
    off = get_u64(data);
    word = body = get_u32(data + 8);
    if (word & HA_REC_FLAG) {
        type = (word >> HA_REC_TYPE_SHIFT) & HA_REC_TYPE_MASK;
        body = word & HA_REC_LEN_MASK;
        if (type == HA_REC_LOG || body > HA_RECORD_MAX || (type == HA_REC_CONFIRM && body != HA_ACK_LEN))
            return RMQ_EPROTO;
    } else if (body > max_body) {
        return RMQ_EPROTO;
    }
    if (off > (uint64_t)INT64_MAX || off + body > (uint64_t)INT64_MAX)
        return RMQ_EPROTO;
    c->offset = (int64_t)off;
    c->type = type;
    c->len = body;
    c->frame_len = HA_CHUNK_HDR + (size_t)body;
    return RMQ_OK;
}

void ha_ack_encode(uint8_t out[HA_ACK_LEN], int64_t offset)
{
    put_u64(out, (uint64_t)offset);
}

rmq_err_t ha_ack_parse(const uint8_t *data, size_t len, int64_t *offset)
{
    uint64_t v;

    if (len < HA_ACK_LEN)
        return RMQ_EAGAIN;
    v = get_u64(data);
    if (v > (uint64_t)INT64_MAX)
        return RMQ_EPROTO;
    *offset = (int64_t)v;
    return RMQ_OK;
}

rmq_err_t ha_frame_parse(const uint8_t *data, size_t len, uint32_t *body_len)
{
    uint32_t n;

    if (len < HA_FRAME_HDR)
        return RMQ_EAGAIN;
    n = get_u32(data);
    if (n == 0 || n > HA_HANDSHAKE_MAX)
        return RMQ_EPROTO;
    *body_len = n;
    return RMQ_OK;
}

static int name_ok(const char *s)
{
    return s && s[0] && strlen(s) <= HA_NAME_MAX;
}

static int handshake_ok(const Rmq__HaHandshake *hs)
{
    if (!name_ok(hs->cluster_name) || !name_ok(hs->broker_name))
        return 0;
    if (hs->broker_id < 0 || hs->max_offset < 0)
        return 0;
    if (hs->tail_len == 0)
        return 1;
    return hs->tail_offset >= 0 && hs->tail_offset <= hs->max_offset &&
           (int64_t)hs->tail_len <= hs->max_offset - hs->tail_offset;
}

rmq_err_t ha_handshake_unpack(const uint8_t *body, size_t len, Rmq__HaHandshake **out)
{
    Rmq__HaHandshake *hs = rmq__ha_handshake__unpack(NULL, len, body);

    *out = NULL;
    if (!hs)
        return RMQ_EPROTO;
    if (!handshake_ok(hs)) {
        rmq__ha_handshake__free_unpacked(hs, NULL);
        return RMQ_EPROTO;
    }
    *out = hs;
    return RMQ_OK;
}

/* An epoch answer's list: at most HA_EPOCHS_MAX entries in the epoch
 * file's order, none starting past the master's log end. */
static int epochs_ok(const Rmq__HaHandshakeResponse *r)
{
    st_epoch_entry_t prev;

    if (r->n_epochs > HA_EPOCHS_MAX || (!r->epoch_answer && r->n_epochs > 0))
        return 0;
    for (size_t i = 0; i < r->n_epochs; i++) {
        const Rmq__HaEpoch *e = r->epochs[i];

        if (!st_epoch_follows(i ? &prev : NULL, e->epoch, e->start_offset) ||
            e->start_offset > r->master_max_offset)
            return 0;
        prev = (st_epoch_entry_t){ e->epoch, e->start_offset };
    }
    return 1;
}

static int response_ok(const Rmq__HaHandshakeResponse *r)
{
    if (!r->accepted)
        return r->reason != NULL;
    return r->start_offset >= 0 && r->master_min_offset >= 0 &&
           r->master_max_offset >= r->start_offset && epochs_ok(r);
}

rmq_err_t ha_response_unpack(const uint8_t *body, size_t len, Rmq__HaHandshakeResponse **out)
{
    Rmq__HaHandshakeResponse *r = rmq__ha_handshake_response__unpack(NULL, len, body);

    *out = NULL;
    if (!r)
        return RMQ_EPROTO;
    if (!response_ok(r)) {
        rmq__ha_handshake_response__free_unpacked(r, NULL);
        return RMQ_EPROTO;
    }
    *out = r;
    return RMQ_OK;
}

/* 1 if s is a valid topic or group name (the one naming rule, rmq_message.h). */
static int meta_name_ok(const char *s)
{
    const char *why;
    return s && rmq_name_is_valid(s, strlen(s), &why);
}

static int meta_ok(const Rmq__HaMeta *m)
{
    switch (m->change_case) {
    case RMQ__HA_META__CHANGE_TOPIC: return m->topic && meta_name_ok(m->topic->topic_name);
    case RMQ__HA_META__CHANGE_DELETED_TOPIC: return meta_name_ok(m->deleted_topic);
    case RMQ__HA_META__CHANGE_GROUP: return m->group && meta_name_ok(m->group->group_name);
    case RMQ__HA_META__CHANGE_DELETED_GROUP: return meta_name_ok(m->deleted_group);
    default: return 0;
    }
}

rmq_err_t ha_meta_unpack(const uint8_t *body, size_t len, Rmq__HaMeta **out)
{
    Rmq__HaMeta *m = rmq__ha_meta__unpack(NULL, len, body);

    *out = NULL;
    if (!m)
        return RMQ_EPROTO;
    if (!meta_ok(m)) {
        rmq__ha_meta__free_unpacked(m, NULL);
        return RMQ_EPROTO;
    }
    *out = m;
    return RMQ_OK;
}

rmq_err_t ha_frame_add(struct evbuffer *out, const ProtobufCMessage *msg)
{
    size_t n = protobuf_c_message_get_packed_size(msg);
    uint8_t hdr[HA_FRAME_HDR];
    uint8_t *buf;
    rmq_err_t rc = RMQ_OK;

    if (n > HA_HANDSHAKE_MAX)
        return RMQ_ETOOBIG;
    buf = malloc(n ? n : 1);
    if (!buf)
        return RMQ_ENOMEM;
    protobuf_c_message_pack(msg, buf);
    put_u32(hdr, (uint32_t)n);
    if (evbuffer_add(out, hdr, sizeof(hdr)) != 0 || evbuffer_add(out, buf, n) != 0)
        rc = RMQ_ENOMEM;
    free(buf);
    return rc;
}
