/* test_message.c: the record and batch codecs: round trips, every
 * truncation, corruption detection (magic, lengths, CRC), blanks, patching
 * (each for IPv4 and IPv6 hosts), an old-format record read as before,
 * RocketMQ's V1 layout, host text and message ids, and properties strings:
 * lookup, iteration and building. */
#include "rmq_message.h"

#include "rmq_crc32c.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char PROPS[] = "TAGS\x01tagA\x02KEYS\x01k1 k2\x02UNIQ_KEY\x01" "0A0B0C";

static const uint8_t BORN6[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};
static const uint8_t STORE6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x01};

/* The host bits of loop iteration i: IPv4, born IPv6, store IPv6, both. */
static int32_t hosts_of(int i)
{
    static const int32_t bits[4] = {0, RMQ_SYSFLAG_BORNHOST_V6, RMQ_SYSFLAG_STOREHOST_V6, RMQ_SYSFLAG_HOSTS_V6};
    return bits[i];
}

/* Encodes a sample record with hosts (RMQ_SYSFLAG_* IPv6 bits) into a
 * malloc'ed buffer; *len gets its size. */
static uint8_t *sample_hosts(size_t *len, rmq_record_t *rec, int32_t hosts)
{
    static const char body[] = "hello, record";
    uint8_t *buf;

    memset(rec, 0, sizeof(*rec));
    rec->queue_id = 3;
    rec->flag = -7;
    rec->queue_offset = 123456789012LL;
    rec->phys_offset = 987654321LL;
    rec->sys_flag = 0x2 | hosts;
    rec->born_timestamp = 1700000000123LL;
    rec->born_ip = (hosts & RMQ_SYSFLAG_BORNHOST_V6) ? 0 : 0x7F000001;
    rec->born_port = 40000;
    if (hosts & RMQ_SYSFLAG_BORNHOST_V6)
        memcpy(rec->born_ip6, BORN6, 16);
    rec->store_timestamp = 1700000000456LL;
    rec->store_ip = (hosts & RMQ_SYSFLAG_STOREHOST_V6) ? 0 : 0x0A000001;
    rec->store_port = 10911;
    if (hosts & RMQ_SYSFLAG_STOREHOST_V6)
        memcpy(rec->store_ip6, STORE6, 16);
    rec->reconsume_times = 2;
    rec->prepared_tx_offset = 0;
    rec->body = (const uint8_t *)body;
    rec->body_len = sizeof(body) - 1;
    rec->topic = "TopicTest";
    rec->topic_len = 9;
    rec->properties = PROPS;
    rec->properties_len = sizeof(PROPS) - 1;
    *len = rmq_record_size(hosts, rec->body_len, rec->topic_len, rec->properties_len);
    buf = malloc(*len);
    ck_assert_uint_eq(rmq_record_encode(rec, buf), *len);
    return buf;
}

static uint8_t *sample(size_t *len, rmq_record_t *rec)
{
    return sample_hosts(len, rec, 0);
}

START_TEST(test_record_round_trip)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample(&len, &in);

    ck_assert_uint_eq(len, RMQ_RECORD_FIXED + in.body_len + 1 + in.topic_len + 2 + in.properties_len);
    ck_assert_int_eq(rmq_record_decode(buf, len, 1, &out), RMQ_OK);
    ck_assert_uint_eq(out.total_size, len);
    ck_assert_int_eq(out.queue_id, 3);
    ck_assert_int_eq(out.flag, -7);
    ck_assert_int_eq(out.queue_offset, in.queue_offset);
    ck_assert_int_eq(out.phys_offset, in.phys_offset);
    ck_assert_int_eq(out.sys_flag, 2);
    ck_assert_int_eq(out.born_timestamp, in.born_timestamp);
    ck_assert_uint_eq(out.born_ip, in.born_ip);
    ck_assert_uint_eq(out.born_port, in.born_port);
    ck_assert_int_eq(out.store_timestamp, in.store_timestamp);
    ck_assert_uint_eq(out.store_ip, in.store_ip);
    ck_assert_uint_eq(out.store_port, in.store_port);
    ck_assert_int_eq(out.reconsume_times, 2);
    ck_assert_uint_eq(out.body_len, in.body_len);
    ck_assert_mem_eq(out.body, in.body, in.body_len);
    ck_assert_uint_eq(out.topic_len, 9);
    ck_assert_mem_eq(out.topic, "TopicTest", 9);
    ck_assert_uint_eq(out.properties_len, in.properties_len);
    ck_assert_mem_eq(out.properties, PROPS, in.properties_len);
    free(buf);
}
END_TEST

START_TEST(test_record_every_truncation_is_eagain)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample_hosts(&len, &in, hosts_of(_i));

    for (size_t cut = 0; cut < len; cut++) {
        uint8_t *copy = malloc(cut ? cut : 1);

        memcpy(copy, buf, cut);
        ck_assert_int_eq(rmq_record_decode(copy, cut, 1, &out), RMQ_EAGAIN);
        free(copy);
    }
    free(buf);
}
END_TEST

START_TEST(test_record_every_flipped_byte_detected)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample_hosts(&len, &in, hosts_of(_i));

    for (size_t i = 0; i < len; i++) {
        rmq_err_t rc;

        buf[i] ^= 0x40;
        rc = rmq_record_decode(buf, len, 1, &out);
        ck_assert_msg(rc == RMQ_ECORRUPT || rc == RMQ_EAGAIN, "byte %zu: %d", i, rc);
        buf[i] ^= 0x40;
    }
    ck_assert_int_eq(rmq_record_decode(buf, len, 1, &out), RMQ_OK);
    free(buf);
}
END_TEST

START_TEST(test_record_crc_only_when_asked)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample(&len, &in);

    buf[RMQ_RECORD_FIXED] ^= 1;
    ck_assert_int_eq(rmq_record_decode(buf, len, 1, &out), RMQ_ECORRUPT);
    ck_assert_int_eq(rmq_record_decode(buf, len, 0, &out), RMQ_OK);
    free(buf);
}
END_TEST

START_TEST(test_record_patch)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample_hosts(&len, &in, hosts_of(_i));

    rmq_record_patch(buf, 42, 4096, 1234);
    ck_assert_int_eq(rmq_record_decode(buf, len, 1, &out), RMQ_OK);
    ck_assert_int_eq(out.queue_offset, 42);
    ck_assert_int_eq(out.phys_offset, 4096);
    ck_assert_int_eq(out.store_timestamp, 1234);
    ck_assert_int_eq(rmq_record_store_ts(buf), 1234);
    ck_assert_int_eq(out.born_timestamp, in.born_timestamp);
    ck_assert_uint_eq(out.born_port, in.born_port);
    ck_assert_uint_eq(out.store_port, in.store_port);
    free(buf);
}
END_TEST

START_TEST(test_record_ipv6_round_trip)
{
    rmq_record_t in, out;
    size_t len;
    int32_t hosts = hosts_of(_i);
    uint8_t *buf = sample_hosts(&len, &in, hosts);
    size_t extra = (hosts & RMQ_SYSFLAG_BORNHOST_V6 ? 12 : 0) + (hosts & RMQ_SYSFLAG_STOREHOST_V6 ? 12 : 0);

    ck_assert_uint_eq(len, RMQ_RECORD_FIXED + extra + in.body_len + 1 + in.topic_len + 2 + in.properties_len);
    ck_assert_uint_eq((uint32_t)buf[4] << 24 | (uint32_t)buf[5] << 16 | (uint32_t)buf[6] << 8 | buf[7],
                      hosts ? RMQ_MAGIC_MESSAGE_HOSTS : RMQ_MAGIC_MESSAGE);
    ck_assert_int_eq(rmq_record_decode(buf, len, 1, &out), RMQ_OK);
    ck_assert_uint_eq(out.total_size, len);
    ck_assert_int_eq(out.sys_flag, 2 | hosts);
    ck_assert_uint_eq(out.born_ip, in.born_ip);
    ck_assert_mem_eq(out.born_ip6, in.born_ip6, 16);
    ck_assert_uint_eq(out.born_port, 40000);
    ck_assert_uint_eq(out.store_ip, in.store_ip);
    ck_assert_mem_eq(out.store_ip6, in.store_ip6, 16);
    ck_assert_uint_eq(out.store_port, 10911);
    ck_assert_int_eq(out.store_timestamp, in.store_timestamp);
    ck_assert_int_eq(out.reconsume_times, 2);
    ck_assert_mem_eq(out.body, in.body, in.body_len);
    ck_assert_mem_eq(out.topic, "TopicTest", 9);
    ck_assert_mem_eq(out.properties, PROPS, in.properties_len);
    ck_assert_ptr_eq(rmq_record_born_ip6(&out), (hosts & RMQ_SYSFLAG_BORNHOST_V6) ? out.born_ip6 : NULL);
    free(buf);
}
END_TEST

/* A record as every store before IPv6 hosts wrote it, built byte by byte,
 * with stray host bits in its sysFlag (a native client could send them):
 * read as before, IPv4 hosts, the bits cleared. */
START_TEST(test_record_old_layout_reads_as_before)
{
    uint8_t buf[RMQ_RECORD_FIXED + 3 + 1 + 1 + 2];
    static const uint8_t fixed[RMQ_RECORD_FIXED] = {
        0, 0, 0, sizeof buf, 0xDA, 0xA3, 0x20, 0xA7, 0, 0, 0, 0,  /* size, magic, crc (below) */
        0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 7,           /* queue 1, flag 0, queue offset 7 */
        0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 0x31,                 /* phys 4096, sysFlag 0x31 */
        0, 0, 0, 0, 0, 0, 0, 9, 127, 0, 0, 1, 0, 0, 0x9c, 0x40,   /* born ts 9, 127.0.0.1:40000 */
        0, 0, 0, 0, 0, 0, 0, 10, 10, 0, 0, 1, 0, 0, 0x2a, 0x9f,   /* store ts 10, 10.0.0.1:10911 */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3,           /* reconsume 0, prepared 0, body 3 */
    };
    rmq_record_t out, re;
    char text[RMQ_HOST_TEXT_MAX], id[RMQ_MSG_ID_MAX + 1];

    memcpy(buf, fixed, sizeof fixed);
    memcpy(buf + RMQ_RECORD_FIXED, "abc\001T\000\000", 6);
    uint32_t crc = rmq_crc32c(0, buf + 12, sizeof buf - 12);
    buf[8] = (uint8_t)(crc >> 24), buf[9] = (uint8_t)(crc >> 16), buf[10] = (uint8_t)(crc >> 8), buf[11] = (uint8_t)crc;
    ck_assert_int_eq(rmq_record_decode(buf, sizeof buf, 1, &out), RMQ_OK);
    ck_assert_int_eq(out.sys_flag, 0x01);
    ck_assert_uint_eq(out.born_ip, 0x7F000001);
    ck_assert_uint_eq(out.born_port, 40000);
    ck_assert_uint_eq(out.store_ip, 0x0A000001);
    ck_assert_uint_eq(out.store_port, 10911);
    ck_assert_int_eq(out.store_timestamp, 10);
    ck_assert_int_eq(rmq_record_store_ts(buf), 10);
    ck_assert_mem_eq(out.body, "abc", 3);
    ck_assert_mem_eq(out.topic, "T", 1);
    rmq_record_host_text(&out, 0, text, sizeof text);
    ck_assert_str_eq(text, "127.0.0.1:40000");
    rmq_record_msg_id(&out, id);
    ck_assert_str_eq(id, "0A00000100002A9F0000000000001000");
    /* re-encoded as IPv4 it is the same bytes but the cleared bits */
    uint8_t again[sizeof buf];
    ck_assert_uint_eq(rmq_record_encode(&out, again), sizeof buf);
    ck_assert_int_eq(rmq_record_decode(again, sizeof again, 1, &re), RMQ_OK);
    ck_assert_mem_eq(again + 12, buf + 12, 27);
    ck_assert_mem_eq(again + 40, buf + 40, sizeof buf - 40);
    ck_assert_int_eq(again[39], 0x01);
}
END_TEST

/* The new magic without an IPv6 host bit is never written: corrupt. */
START_TEST(test_record_hosts_magic_needs_a_v6_bit)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample_hosts(&len, &in, RMQ_SYSFLAG_BORNHOST_V6);

    ck_assert_int_eq(rmq_record_decode(buf, len, 0, &out), RMQ_OK);
    buf[39] &= (uint8_t)~RMQ_SYSFLAG_HOSTS_V6;
    ck_assert_int_eq(rmq_record_decode(buf, len, 0, &out), RMQ_ECORRUPT);
    free(buf);
}
END_TEST

/* MessageDecoder's V1 with IPv6 hosts: RocketMQ's magic, the same host
 * layout as our record of the same hosts. */
START_TEST(test_record_rocketmq_layout)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample_hosts(&len, &in, RMQ_SYSFLAG_HOSTS_V6);
    char text[RMQ_HOST_TEXT_MAX], id[RMQ_MSG_ID_MAX + 1];

    ck_assert_int_eq(rmq_record_decode_rocketmq(buf, len, &out), RMQ_ECORRUPT);   /* our magic */
    buf[7] = 0xA7;
    ck_assert_int_eq(rmq_record_decode_rocketmq(buf, len, &out), RMQ_OK);
    ck_assert_int_eq(out.sys_flag, 2 | RMQ_SYSFLAG_HOSTS_V6);
    ck_assert_mem_eq(out.born_ip6, BORN6, 16);
    ck_assert_mem_eq(out.store_ip6, STORE6, 16);
    ck_assert_mem_eq(out.body, in.body, in.body_len);
    rmq_record_host_text(&out, 0, text, sizeof text);
    ck_assert_str_eq(text, "[2001:db8::1]:40000");
    rmq_record_host_text(&out, 1, text, sizeof text);
    ck_assert_str_eq(text, "[::1]:10911");
    rmq_record_msg_id(&out, id);     /* createMessageId: 16 + 4 + 8 bytes */
    ck_assert_str_eq(id, "0000000000000000000000000000000100002A9F000000003ADE68B1");
    for (size_t cut = 0; cut < len; cut++)
        ck_assert_int_eq(rmq_record_decode_rocketmq(buf, cut, &out), RMQ_EAGAIN);
    free(buf);
}
END_TEST

START_TEST(test_record_blank_and_garbage)
{
    uint8_t blank[8] = {0, 0, 0x10, 0, 0xCB, 0xD4, 0x31, 0x94};
    uint8_t zeros[128] = {0};
    rmq_record_t out;

    ck_assert_int_eq(rmq_record_decode(blank, sizeof(blank), 1, &out), RMQ_ENOTFOUND);
    ck_assert_uint_eq(out.total_size, 4096);
    ck_assert_int_eq(rmq_record_decode(zeros, sizeof(zeros), 1, &out), RMQ_ECORRUPT);
    blank[0] = blank[1] = blank[2] = 0;
    blank[3] = 4;
    ck_assert_int_eq(rmq_record_decode(blank, sizeof(blank), 1, &out), RMQ_ECORRUPT);
}
END_TEST

START_TEST(test_record_size_claims_checked)
{
    rmq_record_t in, out;
    size_t len;
    uint8_t *buf = sample(&len, &in);

    /* body length larger than the record */
    buf[84] = 0x7F;
    ck_assert_int_eq(rmq_record_decode(buf, len, 0, &out), RMQ_ECORRUPT);
    free(buf);
    buf = sample(&len, &in);
    /* total size one byte short of the content */
    buf[3] = (uint8_t)(buf[3] - 1);
    ck_assert_int_eq(rmq_record_decode(buf, len, 0, &out), RMQ_ECORRUPT);
    free(buf);
}
END_TEST

/* Offset message ids read back: 32 digits an IPv4 store host, 56 an IPv6
 * one (the address as a broker address), anything else refused. */
START_TEST(test_msg_id_parse)
{
    static const uint8_t ip6[16] = { 0x20, 0x01, 0x0d, 0xb8, [15] = 7 };
    char id[RMQ_MSG_ID_MAX + 1], addr[RMQ_HOST_TEXT_MAX] = "untouched";
    int64_t off;

    rmq_msg_id_format(0, 0x0A0B0C0D, NULL, 10911, 0x123456789ALL, id);
    ck_assert_str_eq(id, "0A0B0C0D00002A9F000000123456789A");
    ck_assert_int_eq(rmq_msg_id_parse(id, addr, sizeof addr, &off), RMQ_OK);
    ck_assert_str_eq(addr, "10.11.12.13:10911");
    ck_assert_int_eq(off, 0x123456789ALL);
    ck_assert_int_eq(rmq_msg_id_parse("0a0b0c0d00002a9f000000123456789a", addr, sizeof addr, &off), RMQ_OK);
    rmq_msg_id_format(1, 0, ip6, 10911, 4096, id);
    ck_assert_uint_eq(strlen(id), 56);
    ck_assert_int_eq(rmq_msg_id_parse(id, addr, sizeof addr, &off), RMQ_OK);
    ck_assert_str_eq(addr, "[2001:db8::7]:10911");
    ck_assert_int_eq(off, 4096);
    strcpy(addr, "untouched");
    ck_assert_int_eq(rmq_msg_id_parse("0A0B0C0D00002A9F00000012345678", addr, sizeof addr, &off), RMQ_EINVAL);
    ck_assert_int_eq(rmq_msg_id_parse("0A0B0C0D00002A9F000000123456789G", addr, sizeof addr, &off), RMQ_EINVAL);
    ck_assert_int_eq(rmq_msg_id_parse("0A0B0C0D000000000000000000000001", addr, sizeof addr, &off), RMQ_EINVAL);
    ck_assert_int_eq(rmq_msg_id_parse("0A0B0C0D00002A9F8000000000000000", addr, sizeof addr, &off), RMQ_EINVAL);
    ck_assert_int_eq(rmq_msg_id_parse("", addr, sizeof addr, &off), RMQ_EINVAL);
    ck_assert_int_eq(rmq_msg_id_parse(NULL, addr, sizeof addr, &off), RMQ_EINVAL);
    ck_assert_str_eq(addr, "untouched");
}
END_TEST

/* RocketMQ's order: a transaction wins over a delay, a delay over FIFO. */
START_TEST(test_props_msg_type)
{
    const char *p = "TAGS\001A";
    ck_assert_int_eq(rmq_props_msg_type(p, strlen(p)), RMQ_MSG_NORMAL);
    p = "TRAN_MSG\001false";
    ck_assert_int_eq(rmq_props_msg_type(p, strlen(p)), RMQ_MSG_NORMAL);
    p = "__SHARDINGKEY\001g";
    ck_assert_int_eq(rmq_props_msg_type(p, strlen(p)), RMQ_MSG_FIFO);
    p = "__SHARDINGKEY\001g\002TIMER_DELAY_SEC\0015";
    ck_assert_int_eq(rmq_props_msg_type(p, strlen(p)), RMQ_MSG_DELAY);
    p = "DELAY\0013\002TRAN_MSG\001true";
    ck_assert_int_eq(rmq_props_msg_type(p, strlen(p)), RMQ_MSG_TRANSACTION);
    ck_assert_str_eq(rmq_msg_type_name(RMQ_MSG_TRANSACTION), "TRANSACTION");
    ck_assert_str_eq(rmq_msg_type_name(RMQ_MSG_NORMAL), "NORMAL");
    ck_assert_str_eq(rmq_msg_type_name(RMQ_MSG_TYPES), "UNSPECIFIED");
}
END_TEST

START_TEST(test_props_get)
{
    size_t vlen;
    const char *v = rmq_props_get(PROPS, sizeof(PROPS) - 1, "KEYS", &vlen);

    ck_assert_ptr_nonnull(v);
    ck_assert_uint_eq(vlen, 5);
    ck_assert_mem_eq(v, "k1 k2", 5);
    v = rmq_props_get(PROPS, sizeof(PROPS) - 1, "UNIQ_KEY", &vlen);
    ck_assert_uint_eq(vlen, 6);
    ck_assert_ptr_null(rmq_props_get(PROPS, sizeof(PROPS) - 1, "TAG", &vlen));
    ck_assert_ptr_null(rmq_props_get(PROPS, sizeof(PROPS) - 1, "DELAY", &vlen));
    ck_assert_ptr_null(rmq_props_get("", 0, "TAGS", &vlen));
    v = rmq_props_get("A\x01" "1\x02", 4, "A", &vlen);
    ck_assert_uint_eq(vlen, 1);
}
END_TEST

START_TEST(test_batch_round_trip_and_errors)
{
    rmq_batch_entry_t e[3] = {
        { 1, (const uint8_t *)"abc", 3, "TAGS\x01x", 6 },
        { 2, (const uint8_t *)"", 0, "", 0 },
        { -1, (const uint8_t *)"0123456789", 10, NULL, 0 },
    };
    uint8_t buf[256];
    size_t len = 0, pos = 0, used;
    rmq_batch_entry_t out;

    for (int i = 0; i < 3; i++)
        len += rmq_batch_encode(&e[i], buf + len);
    ck_assert_uint_eq(len, rmq_batch_entry_size(3, 6) + rmq_batch_entry_size(0, 0) +
                               rmq_batch_entry_size(10, 0));
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(rmq_batch_decode(buf + pos, len - pos, &out, &used), RMQ_OK);
        ck_assert_int_eq(out.flag, e[i].flag);
        ck_assert_uint_eq(out.body_len, e[i].body_len);
        ck_assert_mem_eq(out.body, e[i].body, e[i].body_len);
        ck_assert_uint_eq(out.properties_len, e[i].properties_len);
        pos += used;
    }
    ck_assert_uint_eq(pos, len);
    for (size_t cut = 0; cut < rmq_batch_entry_size(3, 6); cut++)
        ck_assert_int_eq(rmq_batch_decode(buf, cut, &out, &used), RMQ_EPROTO);
    buf[11] = 200; /* body length past the entry */
    ck_assert_int_eq(rmq_batch_decode(buf, len, &out, &used), RMQ_EPROTO);
}
END_TEST

START_TEST(test_props_next_skips_pieces_without_separator)
{
    static const char props[] = "A\x01" "1\x02junk\x02\x01" "e\x02" "B\x01\x02" "C\x01x\x01y";
    size_t pos = 0;
    rmq_prop_t p;

    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 1);
    ck_assert_mem_eq(p.name, "A", 1);
    ck_assert_uint_eq(p.name_len, 1);
    ck_assert_mem_eq(p.value, "1", 1);
    ck_assert_uint_eq(p.value_len, 1);
    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 1);
    ck_assert_uint_eq(p.name_len, 0);   /* empty names are the caller's call */
    ck_assert_uint_eq(p.value_len, 1);
    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 1);
    ck_assert_mem_eq(p.name, "B", 1);
    ck_assert_uint_eq(p.value_len, 0);
    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 1);
    ck_assert_mem_eq(p.name, "C", 1);
    ck_assert_uint_eq(p.value_len, 3);   /* split at the first \x01 only */
    ck_assert_mem_eq(p.value, "x\x01y", 3);
    ck_assert_int_eq(rmq_props_next(props, sizeof(props) - 1, &pos, &p), 0);
    pos = 0;
    ck_assert_int_eq(rmq_props_next(NULL, 0, &pos, &p), 0);
    ck_assert_int_eq(rmq_props_next("", 0, &pos, &p), 0);
}
END_TEST

START_TEST(test_props_buf_builds_and_grows)
{
    rmq_props_buf_t pb = {0};
    char name[16];

    ck_assert_int_eq(rmq_props_buf_put(&pb, "TAGS", "tagA"), RMQ_OK);
    ck_assert_str_eq(pb.data, "TAGS\x01tagA");
    ck_assert_uint_eq(pb.len, 9);
    ck_assert_int_eq(rmq_props_buf_append(&pb, "KEYSxx", 4, "k1 k2!", 5), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, "UNIQ_KEY", "0A0B0C"), RMQ_OK);
    ck_assert_uint_eq(pb.len, sizeof(PROPS) - 1);
    ck_assert_mem_eq(pb.data, PROPS, sizeof(PROPS));
    for (int i = 0; i < 200; i++) {
        snprintf(name, sizeof(name), "N%d", i);
        ck_assert_int_eq(rmq_props_buf_put(&pb, name, "value"), RMQ_OK);
    }
    ck_assert_uint_lt(pb.len, pb.cap);
    ck_assert_uint_eq(strlen(pb.data), pb.len);
    size_t vlen;
    const char *v = rmq_props_get(pb.data, pb.len, "N199", &vlen);
    ck_assert_ptr_nonnull(v);
    ck_assert_mem_eq(v, "value", vlen);
    rmq_props_buf_free(&pb);
    ck_assert_ptr_null(pb.data);
    ck_assert_uint_eq(pb.len + pb.cap, 0);
}
END_TEST

START_TEST(test_props_buf_reserve_and_empty_values)
{
    rmq_props_buf_t pb = {0};

    ck_assert_int_eq(rmq_props_buf_reserve(&pb, 0), RMQ_OK);
    ck_assert_ptr_nonnull(pb.data);
    ck_assert_uint_ge(pb.cap, 1);
    ck_assert_int_eq(rmq_props_buf_reserve(&pb, 1000), RMQ_OK);
    ck_assert_uint_ge(pb.cap, 1001);
    ck_assert_int_eq(rmq_props_buf_put(&pb, "E", ""), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, "F", "f"), RMQ_OK);
    ck_assert_uint_eq(pb.len, 6);
    ck_assert_mem_eq(pb.data, "E\x01\x02" "F\x01" "f", 7);
    rmq_props_buf_free(&pb);
}
END_TEST

/* RocketMQ's TopicValidator: the system set and prefix, the narrower set no client may send to. */
START_TEST(test_system_topics)
{
    char reply[32];
    ck_assert(rmq_topic_in_system_set("TBW102"));
    ck_assert(rmq_topic_in_system_set("RMQ_SYS_TRACE_TOPIC"));
    ck_assert(rmq_topic_in_system_set("CHECKPOINT_TOPIC"));
    ck_assert(rmq_topic_in_system_set("rmq_sys_REVIVE_LOG_C"));
    ck_assert(!rmq_topic_in_system_set("rmq_sys"));
    ck_assert(!rmq_topic_in_system_set("AppTopic"));
    ck_assert(!rmq_topic_in_system_set("%RETRY%g"));
    ck_assert(rmq_topic_send_forbidden("SCHEDULE_TOPIC_XXXX", 19));
    ck_assert(rmq_topic_send_forbidden("OFFSET_MOVED_EVENT", 18));
    ck_assert(rmq_topic_send_forbidden("SELF_TEST_TOPIC", 15));
    ck_assert(rmq_topic_send_forbidden("TRANS_CHECK_MAX_TIME_TOPIC", 26));
    ck_assert(!rmq_topic_send_forbidden("RMQ_SYS_TRACE_TOPIC", 19));
    ck_assert(rmq_reply_topic("C1", reply, sizeof reply));
    ck_assert_str_eq(reply, "C1_REPLY_TOPIC");
    ck_assert(!rmq_reply_topic("ClusterNameTooLongForIt", reply, 20));
}
END_TEST

static Suite *message_suite(void)
{
    Suite *s = suite_create("message");
    TCase *tc = tcase_create("codec");

    tcase_add_test(tc, test_record_round_trip);
    tcase_add_loop_test(tc, test_record_every_truncation_is_eagain, 0, 4);
    tcase_add_loop_test(tc, test_record_every_flipped_byte_detected, 0, 4);
    tcase_add_test(tc, test_record_crc_only_when_asked);
    tcase_add_loop_test(tc, test_record_patch, 0, 4);
    tcase_add_loop_test(tc, test_record_ipv6_round_trip, 0, 4);
    tcase_add_test(tc, test_record_old_layout_reads_as_before);
    tcase_add_test(tc, test_record_hosts_magic_needs_a_v6_bit);
    tcase_add_test(tc, test_record_rocketmq_layout);
    tcase_add_test(tc, test_record_blank_and_garbage);
    tcase_add_test(tc, test_record_size_claims_checked);
    tcase_add_test(tc, test_msg_id_parse);
    tcase_add_test(tc, test_props_get);
    tcase_add_test(tc, test_props_msg_type);
    tcase_add_test(tc, test_props_next_skips_pieces_without_separator);
    tcase_add_test(tc, test_props_buf_builds_and_grows);
    tcase_add_test(tc, test_props_buf_reserve_and_empty_values);
    tcase_add_test(tc, test_batch_round_trip_and_errors);
    tcase_add_test(tc, test_system_topics);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(message_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
