/* test_fr_remoting.c: the remoting front's body layouts
 * (broker/front/remoting/fr_remoting_wire.c): MessageDecoder's body CRC
 * against zlib's check value, RocketMQ batch entries (round trip, each
 * malformed length refused with its reason), stored records re-encoded as
 * MessageDecoder V1 (only the magic, the CRC word and an old record's
 * stray IPv6 host bits change; IPv6 hosts as RocketMQ lays them out), a
 * check-back's half message under its real topic and queue, a
 * Java client's HeartbeatData read into the broker's view, and the
 * ConsumerListBody answer. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "fr_remoting_wire.h"

/* The big-endian u32 at p (unsigned, so a high first byte is no overflow). */
static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

START_TEST(test_body_crc)
{
    /* CRC-32 check value of "123456789" is 0xCBF43926; RocketMQ clears the top bit */
    ck_assert_int_eq(fr_rm_body_crc("123456789", 9), 0x4BF43926);
    ck_assert_int_eq(fr_rm_body_crc("", 0), 0);
}
END_TEST

START_TEST(test_batch)
{
    uint8_t buf[256];
    rmq_batch_entry_t e = {7, (const uint8_t *)"body", 4, "TAGS\001A", 6}, d;
    size_t used = 0, n = fr_rm_batch_encode(&e, buf);
    const char *why = NULL;
    ck_assert_uint_eq(n, fr_rm_batch_entry_size(4, 6));
    ck_assert_uint_eq(n, 32);
    ck_assert_int_eq(buf[3], 32);                              /* totalSize */
    ck_assert_int_eq(buf[7] | buf[11], 0);                     /* magic and bodyCRC: 0 */
    ck_assert_int_eq(fr_rm_batch_decode(buf, n, &d, &used, &why), RMQ_OK);
    ck_assert_uint_eq(used, n);
    ck_assert_int_eq(d.flag, 7);
    ck_assert_uint_eq(d.body_len, 4);
    ck_assert(memcmp(d.body, "body", 4) == 0);
    ck_assert_uint_eq(d.properties_len, 6);
    ck_assert(memcmp(d.properties, "TAGS\001A", 6) == 0);

    ck_assert_int_eq(fr_rm_batch_decode(buf, 21, &d, &used, &why), RMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(why, "fixed"));
    ck_assert_int_eq(fr_rm_batch_decode(buf, n - 1, &d, &used, &why), RMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(why, "totalSize"));
    buf[19] = 200;                                             /* bodyLen past the entry */
    ck_assert_int_eq(fr_rm_batch_decode(buf, n, &d, &used, &why), RMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(why, "bodyLen"));
    buf[19] = 4;
    buf[25] = 9;                                               /* propertiesLen disagrees */
    ck_assert_int_eq(fr_rm_batch_decode(buf, n, &d, &used, &why), RMQ_EPROTO);
    ck_assert_ptr_nonnull(strstr(why, "add up"));
}
END_TEST

/* Stored records as MessageDecoder V1: an IPv4 one (a stray IPv6 host
 * bit in an old record cleared) and one with an IPv6 born host (16-byte
 * host, its sysFlag bit kept, RocketMQ's magic). */
START_TEST(test_messages_encode)
{
    rmq_record_t rec = {
        .queue_id = 3, .flag = 1, .queue_offset = 9, .phys_offset = 4096,
        .sys_flag = 1, .born_timestamp = 11, .born_ip = 0x7f000001,
        .born_port = 5000, .store_timestamp = 12, .store_ip = 0x7f000001, .store_port = 10911,
        .body = (const uint8_t *)"123456789", .body_len = 9, .topic = "T", .topic_len = 1,
        .properties = "TAGS\001A", .properties_len = 6,
    };
    size_t one = rmq_record_size(0, 9, 1, 6), six = rmq_record_size(RMQ_SYSFLAG_BORNHOST_V6, 9, 1, 6);
    uint8_t *in = malloc(one + six), *out = malloc(one + six);
    rmq_record_encode(&rec, in);
    in[39] |= RMQ_SYSFLAG_BORNHOST_V6;                       /* stray bit of an old record */
    rec.sys_flag |= RMQ_SYSFLAG_BORNHOST_V6;
    rec.born_ip = 0;
    rec.born_ip6[15] = 1;
    ck_assert_uint_eq(rmq_record_encode(&rec, in + one), six);
    ck_assert_uint_eq(six, one + 12);
    int32_t count = 0;
    ck_assert_int_eq(fr_rm_messages_encode(in, one + six, out, &count), RMQ_OK);
    ck_assert_int_eq(count, 2);
    for (int i = 0; i < 2; i++) {
        size_t at = i ? one : 0, len = i ? six : one;
        const uint8_t *m = out + at, *r = in + at;
        rmq_record_t d;
        ck_assert(memcmp(m, r, 4) == 0);                      /* totalSize */
        ck_assert_uint_eq(be32(m + 4), RMQ_MAGIC_MESSAGE);
        ck_assert_uint_eq(be32(m + 8), 0x4BF43926);
        ck_assert(memcmp(m + 12, r + 12, 24) == 0);            /* queueId .. physicalOffset */
        ck_assert_int_eq(m[39], i ? 1 | RMQ_SYSFLAG_BORNHOST_V6 : 1);
        ck_assert(memcmp(m + 40, r + 40, len - 40) == 0);      /* the rest as stored */
        ck_assert_int_eq(rmq_record_decode_rocketmq(m, len, &d), RMQ_OK);
        ck_assert_uint_eq(d.total_size, len);
        ck_assert_uint_eq(d.born_port, 5000);
        ck_assert_uint_eq(d.store_ip, 0x7f000001);
        ck_assert_mem_eq(d.body, "123456789", 9);
        if (i)
            ck_assert_mem_eq(d.born_ip6, rec.born_ip6, 16);
        else
            ck_assert_uint_eq(d.born_ip, 0x7f000001);
    }
    ck_assert_int_eq(fr_rm_messages_encode(in, one + 10, out, &count), RMQ_ECORRUPT);
    free(in);
    free(out);
}
END_TEST

START_TEST(test_check_message)
{
    const char *props = "REAL_TOPIC\001RealT\002REAL_QID\0012\002PGROUP\001G";
    rmq_record_t rec = {
        .queue_id = 0, .queue_offset = 5, .phys_offset = 8192, .sys_flag = 4, .store_ip = 0x7f000001,
        .body = (const uint8_t *)"123456789", .body_len = 9, .topic = "RMQ_SYS_TRANS_HALF_TOPIC", .topic_len = 24,
        .properties = props, .properties_len = (uint16_t)strlen(props),
    };
    size_t len = rmq_record_size(rec.sys_flag, 9, 24, rec.properties_len), out_len = 0;
    uint8_t *in = malloc(len + 1), *out = NULL;
    rmq_record_t m;
    rmq_record_encode(&rec, in);
    ck_assert_int_eq(fr_rm_check_message_encode(in, len, &out, &out_len), RMQ_OK);
    ck_assert_uint_eq(out_len, len - 24 + 5);
    ck_assert_int_eq(rmq_record_decode(out, out_len, 0, &m), RMQ_OK);
    ck_assert_int_eq((int32_t)m.crc, 0x4BF43926);
    ck_assert_uint_eq(m.topic_len, 5);
    ck_assert(memcmp(m.topic, "RealT", 5) == 0);
    ck_assert_int_eq(m.queue_id, 2);
    ck_assert_int_eq(m.queue_offset, 5);
    ck_assert_int_eq(m.phys_offset, 8192);
    ck_assert_uint_eq(m.properties_len, rec.properties_len);
    free(out);
    ck_assert_int_eq(fr_rm_check_message_encode(in, len - 1, &out, &out_len), RMQ_ECORRUPT);
    in[len] = 0;
    ck_assert_int_eq(fr_rm_check_message_encode(in, len + 1, &out, &out_len), RMQ_ECORRUPT);   /* one record only */
    free(in);
}
END_TEST

START_TEST(test_heartbeat)
{
    const char *body =
        "{\"clientID\":\"127.0.0.1@42\",\"consumerDataSet\":[{\"consumeFromWhere\":\"CONSUME_FROM_FIRST_OFFSET\","
        "\"consumeType\":\"CONSUME_PASSIVELY\",\"groupName\":\"G\",\"messageModel\":\"BROADCASTING\","
        "\"subscriptionDataSet\":[{\"classFilterMode\":false,\"codeSet\":[],\"expressionType\":\"TAG\","
        "\"subString\":\"TagA || TagB\",\"subVersion\":1700000000123,\"tagsSet\":[\"TagA\",\"TagB\"],"
        "\"topic\":\"T\"},{\"topic\":\"%RETRY%G\",\"subString\":\"*\",\"subVersion\":1}],\"unitMode\":false}],"
        "\"producerDataSet\":[{\"groupName\":\"P\"},{\"groupName\":\"CLIENT_INNER_PRODUCER\"}]}";
    fr_rm_heartbeat_t hb;
    char why[128];
    ck_assert_int_eq(fr_rm_heartbeat_parse((const uint8_t *)body, strlen(body), &hb, why, sizeof why), RMQ_OK);
    ck_assert_str_eq(hb.hb.client_id, "127.0.0.1@42");
    ck_assert_uint_eq(hb.hb.nproducers, 2);
    ck_assert_str_eq(hb.hb.producer_groups[0], "P");
    ck_assert_uint_eq(hb.hb.nconsumers, 1);
    const bk_hb_consumer_t *c = &hb.hb.consumers[0];
    ck_assert_str_eq(c->group, "G");
    ck_assert_int_eq(c->clustering, 0);
    ck_assert_uint_eq(c->nsubs, 2);
    ck_assert_str_eq(c->subs[0].topic, "T");
    ck_assert_str_eq(c->subs[0].expr, "TagA || TagB");
    ck_assert_str_eq(c->subs[1].topic, "%RETRY%G");
    ck_assert_str_eq(c->subs[1].expr, "*");
    fr_rm_heartbeat_clear(&hb);

    const char *bad[] = {
        "{\"clientID\":", "[]", "{\"consumerDataSet\":[]}", "{\"clientID\":\"c\",\"consumerDataSet\":{}}",
        "{\"clientID\":\"c\",\"consumerDataSet\":[{\"subscriptionDataSet\":[]}]}",
        "{\"clientID\":\"c\",\"consumerDataSet\":[{\"groupName\":\"G\",\"subscriptionDataSet\":[{}]}]}",
        "{\"clientID\":\"c\",\"producerDataSet\":[1]}",
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        ck_assert_int_eq(fr_rm_heartbeat_parse((const uint8_t *)bad[i], strlen(bad[i]), &hb, why, sizeof why),
                         RMQ_EPROTO);
        ck_assert(why[0] != '\0');
    }
}
END_TEST

START_TEST(test_consumer_list)
{
    const char *ids[] = {"a@1", "b\"2"};
    struct evbuffer *b = evbuffer_new();
    ck_assert_int_eq(fr_rm_consumer_list_encode(b, ids, 2), RMQ_OK);
    const char *want = "{\"consumerIdList\":[\"a@1\",\"b\\\"2\"]}";
    ck_assert_uint_eq(evbuffer_get_length(b), strlen(want));
    ck_assert(memcmp(evbuffer_pullup(b, -1), want, strlen(want)) == 0);
    evbuffer_free(b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fr_remoting");
    TCase *tc = tcase_create("wire");
    SRunner *sr;
    int failed;

    tcase_add_test(tc, test_body_crc);
    tcase_add_test(tc, test_batch);
    tcase_add_test(tc, test_messages_encode);
    tcase_add_test(tc, test_check_message);
    tcase_add_test(tc, test_heartbeat);
    tcase_add_test(tc, test_consumer_list);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
