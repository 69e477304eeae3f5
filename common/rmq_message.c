/* rmq_message.c: the stored record and batch-entry codecs (layouts in
 * rmq_message.h) and the properties strings they carry: reading and
 * building them. Decoders take untrusted bytes (disk after a crash, peers)
 * and never read outside the buffer they are given. */
#include "rmq_message.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_crc32c.h"
#include "rmq_fmt.h"

#define REC_OFF_CRC 8u
#define REC_OFF_QUEUE_OFFSET 20u
#define REC_OFF_PHYS_OFFSET 28u
#define REC_OFF_SYS_FLAG 36u
#define REC_OFF_BORN_HOST 48u
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

/* Where the host-dependent fields of a record start. */
typedef struct rec_layout {
    size_t store_ts;                /* i64 store_ts */
    size_t store_host;
    size_t reconsume;               /* i32 reconsume_times, then i64 prepared_tx_offset */
    size_t body_len;                /* u32 body_len; the body follows */
} rec_layout_t;

static size_t host_len(int32_t sys_flag, int32_t bit)
{
    return (sys_flag & bit) ? 8u + RMQ_RECORD_HOST6_EXTRA : 8u;
}

/* The layout of a record whose hosts are sized by sys_flag's IPv6 bits. */
static rec_layout_t record_layout(int32_t sys_flag)
{
    rec_layout_t l;
    l.store_ts = REC_OFF_BORN_HOST + host_len(sys_flag, RMQ_SYSFLAG_BORNHOST_V6);
    l.store_host = l.store_ts + 8;
    l.reconsume = l.store_host + host_len(sys_flag, RMQ_SYSFLAG_STOREHOST_V6);
    l.body_len = l.reconsume + 12;
    return l;
}

/* The sys_flag bits that size the hosts of the encoded record at p (its
 * magic and sys_flag words readable): none under the old magic. */
static int32_t record_host_bits(const uint8_t *p)
{
    if (get_u32(p + 4) != RMQ_MAGIC_MESSAGE_HOSTS)
        return 0;
    return (int32_t)get_u32(p + REC_OFF_SYS_FLAG) & RMQ_SYSFLAG_HOSTS_V6;
}

size_t rmq_record_size(int32_t sys_flag, size_t body_len, size_t topic_len, size_t props_len)
{
    return record_layout(sys_flag).body_len + 4 + body_len + 1 + topic_len + 2 + props_len;
}

/* Recomputes the CRC field of an encoded record of total_size bytes. */
static void record_seal(uint8_t *out, size_t total_size)
{
    put_u32(out + REC_OFF_CRC, rmq_crc32c(0, out + REC_OFF_CRC + 4, total_size - REC_OFF_CRC - 4));
}

/* Writes one host (4- or 16-byte address, u32 port) at p; returns its size. */
static size_t host_put(uint8_t *p, int v6, uint32_t ip, const uint8_t ip6[16], uint32_t port)
{
    if (v6)
        memcpy(p, ip6, 16);
    else
        put_u32(p, ip);
    put_u32(p + (v6 ? 16 : 4), port);
    return v6 ? 20 : 8;
}

size_t rmq_record_encode(const rmq_record_t *rec, uint8_t *out)
{
    int32_t hosts = rec->sys_flag & RMQ_SYSFLAG_HOSTS_V6;
    rec_layout_t l = record_layout(hosts);
    size_t total = rmq_record_size(hosts, rec->body_len, rec->topic_len, rec->properties_len);
    uint8_t *p = out;

    put_u32(p, (uint32_t)total);
    put_u32(p + 4, hosts ? RMQ_MAGIC_MESSAGE_HOSTS : RMQ_MAGIC_MESSAGE);
    put_u32(p + 12, (uint32_t)rec->queue_id);
    put_u32(p + 16, (uint32_t)rec->flag);
    put_u64(p + REC_OFF_QUEUE_OFFSET, (uint64_t)rec->queue_offset);
    put_u64(p + REC_OFF_PHYS_OFFSET, (uint64_t)rec->phys_offset);
    put_u32(p + REC_OFF_SYS_FLAG, (uint32_t)rec->sys_flag);
    put_u64(p + 40, (uint64_t)rec->born_timestamp);
    host_put(p + REC_OFF_BORN_HOST, hosts & RMQ_SYSFLAG_BORNHOST_V6, rec->born_ip, rec->born_ip6,
             rec->born_port);
    put_u64(p + l.store_ts, (uint64_t)rec->store_timestamp);
    host_put(p + l.store_host, hosts & RMQ_SYSFLAG_STOREHOST_V6, rec->store_ip, rec->store_ip6,
             rec->store_port);
    put_u32(p + l.reconsume, (uint32_t)rec->reconsume_times);
    put_u64(p + l.reconsume + 4, (uint64_t)rec->prepared_tx_offset);
    put_u32(p + l.body_len, rec->body_len);
    p += l.body_len + 4;
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
    put_u64(rec + record_layout(record_host_bits(rec)).store_ts, (uint64_t)store_ts);
    record_seal(rec, get_u32(rec));
}

int64_t rmq_record_store_ts(const uint8_t *rec)
{
    return (int64_t)get_u64(rec + record_layout(record_host_bits(rec)).store_ts);
}

/* Reads one host at p (IPv6 when v6) into *ip or ip6, and *port. */
static void host_get(const uint8_t *p, int v6, uint32_t *ip, uint8_t ip6[16], uint32_t *port)
{
    if (v6)
        memcpy(ip6, p, 16);
    else
        *ip = get_u32(p);
    *port = get_u32(p + (v6 ? 16 : 4));
}

/* Fills the fixed header fields of rec from a record of at least
 * l->body_len + 4 bytes laid out as l, its hosts sized by hosts. */
static void record_read_fixed(const uint8_t *p, int32_t hosts, const rec_layout_t *l, rmq_record_t *rec)
{
    rec->total_size = get_u32(p);
    rec->crc = get_u32(p + REC_OFF_CRC);
    rec->queue_id = (int32_t)get_u32(p + 12);
    rec->flag = (int32_t)get_u32(p + 16);
    rec->queue_offset = (int64_t)get_u64(p + REC_OFF_QUEUE_OFFSET);
    rec->phys_offset = (int64_t)get_u64(p + REC_OFF_PHYS_OFFSET);
    rec->sys_flag = ((int32_t)get_u32(p + REC_OFF_SYS_FLAG) & ~RMQ_SYSFLAG_HOSTS_V6) | hosts;
    rec->born_timestamp = (int64_t)get_u64(p + 40);
    host_get(p + REC_OFF_BORN_HOST, hosts & RMQ_SYSFLAG_BORNHOST_V6, &rec->born_ip, rec->born_ip6,
             &rec->born_port);
    rec->store_timestamp = (int64_t)get_u64(p + l->store_ts);
    host_get(p + l->store_host, hosts & RMQ_SYSFLAG_STOREHOST_V6, &rec->store_ip, rec->store_ip6,
             &rec->store_port);
    rec->reconsume_times = (int32_t)get_u32(p + l->reconsume);
    rec->prepared_tx_offset = (int64_t)get_u64(p + l->reconsume + 4);
    rec->body_len = get_u32(p + l->body_len);
}

/* Checks the variable part, from pos, of a complete record of
 * rec->total_size bytes and points rec's body/topic/properties into it. */
static rmq_err_t record_read_variable(const uint8_t *p, size_t pos, rmq_record_t *rec)
{
    size_t total = rec->total_size;

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

/* The IPv6 host bits of the record at p (40 bytes readable) as its format
 * says: ours by its magic, RocketMQ's V1 (rocketmq) by its sysFlag alone.
 * -1 when the magic is not the format's. */
static int32_t decode_host_bits(const uint8_t *p, int rocketmq)
{
    uint32_t magic = get_u32(p + 4);
    if (rocketmq)
        return magic == RMQ_MAGIC_MESSAGE ? (int32_t)get_u32(p + REC_OFF_SYS_FLAG) & RMQ_SYSFLAG_HOSTS_V6 : -1;
    if (magic == RMQ_MAGIC_MESSAGE)
        return 0;
    if (magic != RMQ_MAGIC_MESSAGE_HOSTS)
        return -1;
    int32_t hosts = record_host_bits(p);
    return hosts ? hosts : -1;      /* the new magic is written only with an IPv6 host */
}

/* rmq_record_decode of our record, or (rocketmq) of MessageDecoder's V1
 * message, whose third word is no CRC of ours (verify_crc must be 0). */
static rmq_err_t record_decode(const uint8_t *data, size_t len, int verify_crc, int rocketmq, rmq_record_t *rec)
{
    uint32_t magic;

    memset(rec, 0, sizeof(*rec));
    if (len < 8)
        return RMQ_EAGAIN;
    rec->total_size = get_u32(data);
    magic = get_u32(data + 4);
    if (magic == RMQ_MAGIC_BLANK && !rocketmq)
        return rec->total_size >= 8 ? RMQ_ENOTFOUND : RMQ_ECORRUPT;
    if ((magic != RMQ_MAGIC_MESSAGE && magic != RMQ_MAGIC_MESSAGE_HOSTS) ||
        rec->total_size < rmq_record_size(0, 0, 1, 0))
        return RMQ_ECORRUPT;
    if (len < RMQ_RECORD_FIXED)
        return RMQ_EAGAIN;
    int32_t hosts = decode_host_bits(data, rocketmq);
    if (hosts < 0)
        return RMQ_ECORRUPT;
    rec_layout_t l = record_layout(hosts);
    size_t fixed = l.body_len + 4;
    if (rec->total_size < fixed + 3)
        return RMQ_ECORRUPT;
    if (len < fixed)
        return RMQ_EAGAIN;
    record_read_fixed(data, hosts, &l, rec);
    if (rec->body_len > rec->total_size - fixed - 3)
        return RMQ_ECORRUPT;
    if (rec->total_size > len)
        return RMQ_EAGAIN;
    if (record_read_variable(data, fixed, rec) != RMQ_OK)
        return RMQ_ECORRUPT;
    if (verify_crc &&
        rmq_crc32c(0, data + REC_OFF_CRC + 4, rec->total_size - REC_OFF_CRC - 4) != rec->crc)
        return RMQ_ECORRUPT;
    return RMQ_OK;
}

rmq_err_t rmq_record_decode(const uint8_t *data, size_t len, int verify_crc, rmq_record_t *rec)
{
    return record_decode(data, len, verify_crc, 0, rec);
}

rmq_err_t rmq_record_decode_rocketmq(const uint8_t *data, size_t len, rmq_record_t *rec)
{
    return record_decode(data, len, 0, 1, rec);
}

const uint8_t *rmq_record_born_ip6(const rmq_record_t *rec)
{
    return (rec->sys_flag & RMQ_SYSFLAG_BORNHOST_V6) ? rec->born_ip6 : NULL;
}

void rmq_record_host_text(const rmq_record_t *rec, int store, char *out, size_t cap)
{
    int v6 = (rec->sys_flag & (store ? RMQ_SYSFLAG_STOREHOST_V6 : RMQ_SYSFLAG_BORNHOST_V6)) != 0;
    uint32_t ip = store ? rec->store_ip : rec->born_ip, port = store ? rec->store_port : rec->born_port;
    char addr[INET6_ADDRSTRLEN] = "?";

    if (v6) {
        inet_ntop(AF_INET6, store ? rec->store_ip6 : rec->born_ip6, addr, sizeof addr);
        snprintf(out, cap, "[%s]:%" PRIu32, addr, port);
    } else {
        snprintf(out, cap, "%" PRIu32 ".%" PRIu32 ".%" PRIu32 ".%" PRIu32 ":%" PRIu32, ip >> 24, ip >> 16 & 255,
                 ip >> 8 & 255, ip & 255, port);
    }
}

void rmq_msg_id_format(int v6, uint32_t ip, const uint8_t *ip6, uint32_t port, int64_t phys_offset,
                       char out[RMQ_MSG_ID_MAX + 1])
{
    uint8_t raw[28];
    size_t n = v6 ? 16 : 4;

    if (v6)
        memcpy(raw, ip6, 16);
    else
        put_u32(raw, ip);
    put_u32(raw + n, port);
    put_u64(raw + n + 4, (uint64_t)phys_offset);
    rmq_hex_upper(raw, n + 12, out);
}

void rmq_record_msg_id(const rmq_record_t *rec, char out[RMQ_MSG_ID_MAX + 1])
{
    rmq_msg_id_format((rec->sys_flag & RMQ_SYSFLAG_STOREHOST_V6) != 0, rec->store_ip, rec->store_ip6,
                      rec->store_port, rec->phys_offset, out);
}

rmq_err_t rmq_msg_id_parse(const char *id, char *addr, size_t cap, int64_t *phys_offset)
{
    uint8_t raw[28];
    size_t len = id ? strlen(id) : 0, n = len == 56 ? 16 : 4;
    rmq_record_t rec = {0};

    if ((len != 32 && len != 56) || rmq_hex_decode(id, len / 2, raw) != RMQ_OK)
        return RMQ_EINVAL;
    rec.store_port = get_u32(raw + n);
    rec.phys_offset = (int64_t)get_u64(raw + n + 4);
    if (rec.store_port == 0 || rec.store_port > 65535 || rec.phys_offset < 0)
        return RMQ_EINVAL;
    if (n == 16) {
        rec.sys_flag = RMQ_SYSFLAG_STOREHOST_V6;
        memcpy(rec.store_ip6, raw, 16);
    } else {
        rec.store_ip = get_u32(raw);
    }
    rmq_record_host_text(&rec, 1, addr, cap);
    *phys_offset = rec.phys_offset;
    return RMQ_OK;
}

/* The value of hex digit c (either case), or -1. */
static int hex_value(char c)
{
    return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                          : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

rmq_err_t rmq_hex_decode(const char *in, size_t n, uint8_t *out)
{
    for (size_t i = 0; i < n; i++) {
        int hi = hex_value(in[2 * i]), lo = hi < 0 ? -1 : hex_value(in[2 * i + 1]);
        if (lo < 0)
            return RMQ_EINVAL;
        out[i] = (uint8_t)(hi << 4 | lo);
    }
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

int rmq_prop_delays(const rmq_prop_t *p)
{
    return RMQ_PROP_NAME_IS(p, RMQ_PROP_DELAY) || RMQ_PROP_NAME_IS(p, RMQ_PROP_TIMER_DELIVER_MS) ||
           RMQ_PROP_NAME_IS(p, RMQ_PROP_TIMER_DELAY_SEC) || RMQ_PROP_NAME_IS(p, RMQ_PROP_TIMER_DELAY_MS) ||
           RMQ_PROP_NAME_IS(p, RMQ_PROP_DELIVER_AT);
}

rmq_msg_type_t rmq_props_msg_type(const char *props, size_t len)
{
    size_t pos = 0;
    rmq_prop_t p;
    int tx_seen = 0, delay = 0, fifo = 0;
    while (rmq_props_next(props, len, &pos, &p)) {
        if (RMQ_PROP_NAME_IS(&p, RMQ_PROP_TRAN_MSG)) {
            if (!tx_seen && p.value_len == 4 && memcmp(p.value, "true", 4) == 0)
                return RMQ_MSG_TRANSACTION;
            tx_seen = 1;                 /* the first TRAN_MSG decides, as a lookup finds it */
        } else if (rmq_prop_delays(&p)) {
            delay = 1;
        } else if (RMQ_PROP_NAME_IS(&p, RMQ_PROP_SHARDING_KEY)) {
            fifo = 1;
        }
    }
    return delay ? RMQ_MSG_DELAY : fifo ? RMQ_MSG_FIFO : RMQ_MSG_NORMAL;
}

const char *rmq_msg_type_name(rmq_msg_type_t t)
{
    static const char *const names[RMQ_MSG_TYPES] = {"NORMAL", "FIFO", "DELAY", "TRANSACTION"};
    return t < RMQ_MSG_TYPES ? names[t] : "UNSPECIFIED";
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

const char *const rmq_props_reserved[] = {RMQ_PROP_REAL_TOPIC, RMQ_PROP_REAL_QID, RMQ_PROP_TX_CHECK_TIMES,
                                             RMQ_PROP_CLUSTER, RMQ_PROP_MSG_REGION, RMQ_PROP_TRACE_ON, NULL};

int rmq_reply_topic(const char *cluster, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s" RMQ_REPLY_TOPIC_SUFFIX, cluster);
    return n >= 0 && (size_t)n < cap;
}

const char *const rmq_topics_system[] = {RMQ_TOPIC_AUTO_CREATE, RMQ_TOPIC_SCHEDULE, "BenchmarkTest",
                                         RMQ_TOPIC_TRANS_HALF, RMQ_TOPIC_TRACE, RMQ_TOPIC_TRANS_OP,
                                         RMQ_TOPIC_TRANS_CHECK_MAX_TIME, RMQ_TOPIC_SELF_TEST, RMQ_TOPIC_OFFSET_MOVED,
                                         "CHECKPOINT_TOPIC", NULL};

int rmq_topic_in_system_set(const char *name)
{
    if (strncmp(name, RMQ_TOPIC_SYSTEM_PREFIX, strlen(RMQ_TOPIC_SYSTEM_PREFIX)) == 0)
        return 1;
    for (const char *const *t = rmq_topics_system; *t; t++)
        if (strcmp(*t, name) == 0)
            return 1;
    return 0;
}

int rmq_topic_send_forbidden(const char *name, size_t len)
{
    static const char *const sys[] = {RMQ_TOPIC_SCHEDULE,  RMQ_TOPIC_TRANS_HALF,           RMQ_TOPIC_TRANS_OP,
                                      RMQ_TOPIC_SELF_TEST, RMQ_TOPIC_TRANS_CHECK_MAX_TIME, RMQ_TOPIC_OFFSET_MOVED};
    for (size_t i = 0; i < sizeof(sys) / sizeof(sys[0]); i++)
        if (strlen(sys[i]) == len && memcmp(sys[i], name, len) == 0)
            return 1;
    return 0;
}

size_t rmq_group_topic_name(char *buf, size_t cap, const char *prefix, const char *group, const char *pop_topic)
{
    rmq_join_t j;
    rmq_join_init(&j, buf, cap);
    rmq_join_str(&j, prefix);
    rmq_join_str(&j, group);
    if (pop_topic) {
        rmq_join_char(&j, '_');
        rmq_join_str(&j, pop_topic);
    }
    return rmq_join_end(&j);
}

size_t rmq_topic_group_key(char *buf, size_t cap, const char *topic, const char *group)
{
    rmq_join_t j;
    rmq_join_init(&j, buf, cap);
    rmq_join_str(&j, topic);
    rmq_join_char(&j, '@');
    rmq_join_str(&j, group);
    return rmq_join_end(&j);
}
