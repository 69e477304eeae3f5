/* rmq_message.c: the stored record and batch-entry codecs (layouts in
 * rmq_message.h) and the properties strings they carry: reading and
 * building them. Decoders take untrusted bytes (disk after a crash, peers)
 * and never read outside the buffer they are given. */
#include "rmq_message.h"

#include <stdlib.h>
#include <string.h>

#include "rmq_crc32c.h"

#define REC_OFF_CRC 8u
#define REC_OFF_QUEUE_OFFSET 20u
#define REC_OFF_PHYS_OFFSET 28u
#define REC_OFF_STORE_TS 56u
#define REC_OFF_BODY_LEN 84u
#define BATCH_FIXED 14u

static void put_u16(uint8_t *p, uint16_t v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
}

static void put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put_u64(uint8_t *p, uint64_t v)
{
    put_u32(p, (uint32_t)(v >> 32));
    put_u32(p + 4, (uint32_t)v);
}

static uint16_t get_u16(const uint8_t *p)
{
    return (uint16_t)((uint16_t)p[0] << 8 | p[1]);
}

static uint32_t get_u32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t get_u64(const uint8_t *p)
{
    return (uint64_t)get_u32(p) << 32 | get_u32(p + 4);
}

size_t rmq_record_size(size_t body_len, size_t topic_len, size_t props_len)
{
    return RMQ_RECORD_FIXED + body_len + 1 + topic_len + 2 + props_len;
}

/* Recomputes the CRC field of an encoded record of total_size bytes. */
static void record_seal(uint8_t *out, size_t total_size)
{
    put_u32(out + REC_OFF_CRC, rmq_crc32c(0, out + REC_OFF_CRC + 4, total_size - REC_OFF_CRC - 4));
}

size_t rmq_record_encode(const rmq_record_t *rec, uint8_t *out)
{
    size_t total = rmq_record_size(rec->body_len, rec->topic_len, rec->properties_len);
    uint8_t *p = out;

    put_u32(p, (uint32_t)total);
    put_u32(p + 4, RMQ_MAGIC_MESSAGE);
    put_u32(p + 12, (uint32_t)rec->queue_id);
    put_u32(p + 16, (uint32_t)rec->flag);
    put_u64(p + 20, (uint64_t)rec->queue_offset);
    put_u64(p + 28, (uint64_t)rec->phys_offset);
    put_u32(p + 36, (uint32_t)rec->sys_flag);
    put_u64(p + 40, (uint64_t)rec->born_timestamp);
    put_u32(p + 48, rec->born_ip);
    put_u32(p + 52, rec->born_port);
    put_u64(p + 56, (uint64_t)rec->store_timestamp);
    put_u32(p + 64, rec->store_ip);
    put_u32(p + 68, rec->store_port);
    put_u32(p + 72, (uint32_t)rec->reconsume_times);
    put_u64(p + 76, (uint64_t)rec->prepared_tx_offset);
    put_u32(p + REC_OFF_BODY_LEN, rec->body_len);
    p += RMQ_RECORD_FIXED;
    if (rec->body_len)
        memcpy(p, rec->body, rec->body_len);
    p += rec->body_len;
    *p++ = rec->topic_len;
    if (rec->topic_len)
        memcpy(p, rec->topic, rec->topic_len);
    p += rec->topic_len;
    put_u16(p, rec->properties_len);
    p += 2;
    if (rec->properties_len)
        memcpy(p, rec->properties, rec->properties_len);
    record_seal(out, total);
    return total;
}

void rmq_record_patch(uint8_t *rec, int64_t queue_offset, int64_t phys_offset, int64_t store_ts)
{
    put_u64(rec + REC_OFF_QUEUE_OFFSET, (uint64_t)queue_offset);
    put_u64(rec + REC_OFF_PHYS_OFFSET, (uint64_t)phys_offset);
    put_u64(rec + REC_OFF_STORE_TS, (uint64_t)store_ts);
    record_seal(rec, get_u32(rec));
}

/* Fills the fixed header fields of rec from a record of at least
 * RMQ_RECORD_FIXED bytes. */
static void record_read_fixed(const uint8_t *p, rmq_record_t *rec)
{
    rec->total_size = get_u32(p);
    rec->crc = get_u32(p + REC_OFF_CRC);
    rec->queue_id = (int32_t)get_u32(p + 12);
    rec->flag = (int32_t)get_u32(p + 16);
    rec->queue_offset = (int64_t)get_u64(p + 20);
    rec->phys_offset = (int64_t)get_u64(p + 28);
    rec->sys_flag = (int32_t)get_u32(p + 36);
    rec->born_timestamp = (int64_t)get_u64(p + 40);
    rec->born_ip = get_u32(p + 48);
    rec->born_port = get_u32(p + 52);
    rec->store_timestamp = (int64_t)get_u64(p + 56);
    rec->store_ip = get_u32(p + 64);
    rec->store_port = get_u32(p + 68);
    rec->reconsume_times = (int32_t)get_u32(p + 72);
    rec->prepared_tx_offset = (int64_t)get_u64(p + 76);
    rec->body_len = get_u32(p + REC_OFF_BODY_LEN);
}

/* Checks the variable part of a complete record of rec->total_size bytes
 * and points rec's body/topic/properties into it. */
static rmq_err_t record_read_variable(const uint8_t *p, rmq_record_t *rec)
{
    size_t total = rec->total_size;
    size_t pos = RMQ_RECORD_FIXED;

    if (rec->body_len > total - pos - 3)
        return RMQ_ECORRUPT;
    rec->body = p + pos;
    pos += rec->body_len;
    rec->topic_len = p[pos++];
    if (rec->topic_len == 0 || rec->topic_len > RMQ_TOPIC_MAX || rec->topic_len > total - pos - 2)
        return RMQ_ECORRUPT;
    rec->topic = (const char *)p + pos;
    pos += rec->topic_len;
    rec->properties_len = get_u16(p + pos);
    pos += 2;
    if (rec->properties_len > RMQ_PROPS_MAX || rec->properties_len != total - pos)
        return RMQ_ECORRUPT;
    rec->properties = (const char *)p + pos;
    return RMQ_OK;
}

rmq_err_t rmq_record_decode(const uint8_t *data, size_t len, int verify_crc, rmq_record_t *rec)
{
    uint32_t magic;

    memset(rec, 0, sizeof(*rec));
    if (len < 8)
        return RMQ_EAGAIN;
    rec->total_size = get_u32(data);
    magic = get_u32(data + 4);
    if (magic == RMQ_MAGIC_BLANK)
        return rec->total_size >= 8 ? RMQ_ENOTFOUND : RMQ_ECORRUPT;
    if (magic != RMQ_MAGIC_MESSAGE || rec->total_size < rmq_record_size(0, 1, 0))
        return RMQ_ECORRUPT;
    if (len < RMQ_RECORD_FIXED)
        return RMQ_EAGAIN;
    record_read_fixed(data, rec);
    if (rec->body_len > rec->total_size - RMQ_RECORD_FIXED - 3)
        return RMQ_ECORRUPT;
    if (rec->total_size > len)
        return RMQ_EAGAIN;
    if (record_read_variable(data, rec) != RMQ_OK)
        return RMQ_ECORRUPT;
    if (verify_crc &&
        rmq_crc32c(0, data + REC_OFF_CRC + 4, rec->total_size - REC_OFF_CRC - 4) != rec->crc)
        return RMQ_ECORRUPT;
    return RMQ_OK;
}

void rmq_hex_upper(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789ABCDEF";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

int rmq_props_next(const char *props, size_t len, size_t *pos, rmq_prop_t *p)
{
    while (props && *pos < len) {
        const char *piece = props + *pos;
        const char *end = memchr(piece, '\x02', len - *pos);
        size_t plen = end ? (size_t)(end - piece) : len - *pos;
        const char *sep = memchr(piece, '\x01', plen);

        *pos += plen + 1;
        if (!sep)
            continue;
        p->name = piece;
        p->name_len = (size_t)(sep - piece);
        p->value = sep + 1;
        p->value_len = plen - p->name_len - 1;
        return 1;
    }
    return 0;
}

const char *rmq_props_get(const char *props, size_t len, const char *name, size_t *vlen)
{
    size_t nlen = strlen(name);
    size_t pos = 0;
    int nameable = !memchr(name, '\x01', nlen);

    /* one memchr per piece: a name (no \x01 or \x02 in it) matches when
     * the piece starts with it and its first \x01 follows; a name holding
     * \x01 names no pair */
    while (nameable && props && pos < len) {
        const char *piece = props + pos;
        const char *end = memchr(piece, '\x02', len - pos);
        size_t plen = end ? (size_t)(end - piece) : len - pos;

        if (plen > nlen && piece[nlen] == '\x01' && memcmp(piece, name, nlen) == 0) {
            *vlen = plen - nlen - 1;
            return piece + nlen + 1;
        }
        pos += plen + 1;
    }
    *vlen = 0;
    return NULL;
}

rmq_err_t rmq_props_buf_reserve(rmq_props_buf_t *pb, size_t need)
{
    if (pb->len + need + 1 <= pb->cap)
        return RMQ_OK;
    size_t cap = pb->cap ? pb->cap : 256;
    while (cap < pb->len + need + 1)
        cap *= 2;
    char *grown = realloc(pb->data, cap);
    if (!grown)
        return RMQ_ENOMEM;
    pb->data = grown;
    pb->cap = cap;
    return RMQ_OK;
}

rmq_err_t rmq_props_buf_append(rmq_props_buf_t *pb, const char *name, size_t name_len,
                               const char *value, size_t value_len)
{
    if (rmq_props_buf_reserve(pb, name_len + value_len + 2) != RMQ_OK)
        return RMQ_ENOMEM;
    if (pb->len)
        pb->data[pb->len++] = '\x02';
    memcpy(pb->data + pb->len, name, name_len);
    pb->len += name_len;
    pb->data[pb->len++] = '\x01';
    memcpy(pb->data + pb->len, value, value_len);
    pb->len += value_len;
    pb->data[pb->len] = '\0';
    return RMQ_OK;
}

rmq_err_t rmq_props_buf_put(rmq_props_buf_t *pb, const char *name, const char *value)
{
    return rmq_props_buf_append(pb, name, strlen(name), value, strlen(value));
}

void rmq_props_buf_free(rmq_props_buf_t *pb)
{
    free(pb->data);
    memset(pb, 0, sizeof(*pb));
}

size_t rmq_batch_entry_size(size_t body_len, size_t props_len)
{
    return BATCH_FIXED + body_len + props_len;
}

rmq_err_t rmq_batch_decode(const uint8_t *data, size_t len, rmq_batch_entry_t *e, size_t *used)
{
    uint32_t total;

    memset(e, 0, sizeof(*e));
    *used = 0;
    if (len < BATCH_FIXED)
        return RMQ_EPROTO;
    total = get_u32(data);
    if (total < BATCH_FIXED || total > len)
        return RMQ_EPROTO;
    e->flag = (int32_t)get_u32(data + 4);
    e->body_len = get_u32(data + 8);
    if (e->body_len > total - BATCH_FIXED)
        return RMQ_EPROTO;
    e->body = data + 12;
    e->properties_len = get_u16(data + 12 + e->body_len);
    if (e->properties_len > RMQ_PROPS_MAX ||
        (size_t)e->properties_len != total - BATCH_FIXED - e->body_len)
        return RMQ_EPROTO;
    e->properties = (const char *)data + 14 + e->body_len;
    *used = total;
    return RMQ_OK;
}

size_t rmq_batch_encode(const rmq_batch_entry_t *e, uint8_t *out)
{
    size_t total = rmq_batch_entry_size(e->body_len, e->properties_len);

    put_u32(out, (uint32_t)total);
    put_u32(out + 4, (uint32_t)e->flag);
    put_u32(out + 8, e->body_len);
    if (e->body_len)
        memcpy(out + 12, e->body, e->body_len);
    put_u16(out + 12 + e->body_len, e->properties_len);
    if (e->properties_len)
        memcpy(out + 14 + e->body_len, e->properties, e->properties_len);
    return total;
}

int rmq_name_is_valid(const char *name, size_t len, const char **why)
{
    if (len == 0) {
        *why = "must not be empty";
        return 0;
    }
    if (len > RMQ_TOPIC_MAX) {
        *why = "must be at most 127 bytes";
        return 0;
    }
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '%' || c == '|' || c == '_' || c == '-';
        if (!ok) {
            *why = "may contain only the characters %|a-zA-Z0-9_-";
            return 0;
        }
    }
    return 1;
}

const char *const rmq_props_reserved[] = {RMQ_PROP_REAL_TOPIC, RMQ_PROP_REAL_QID, RMQ_PROP_TX_CHECK_TIMES, NULL};

int rmq_topic_is_system(const char *name, size_t len)
{
    static const char *const sys[] = {RMQ_TOPIC_SCHEDULE, RMQ_TOPIC_TRANS_HALF, RMQ_TOPIC_TRANS_OP};
    for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
        if (strlen(sys[i]) == len && memcmp(sys[i], name, len) == 0)
            return 1;
    return 0;
}
