/* v2_wire_sample.c: the gRPC front's side of tests/proto/check_v2_wire.sh.
 * "encode message" writes a delivered v2 Message (gr_message_from_record of
 * a stored record), "encode settings" a Telemetry Settings reply, both
 * packed by our generated code, to stdout; "decode send" reads a packed
 * SendMessageRequest (encoded by protoc from apache/rocketmq-apis' own
 * .proto) on stdin and prints the stored message gr_message_to_store makes
 * of its first message, one "name=value" line per property. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apache/rocketmq/v2/service.pb-c.h"
#include "gr_message.h"
#include "gr_settings.h"

static int write_all(const uint8_t *buf, size_t len)
{
    return fwrite(buf, 1, len, stdout) == len && fflush(stdout) == 0 ? 0 : 1;
}

static int encode_message(void)
{
    rmq_props_buf_t pb = {0};
    rmq_record_t rec = {0};
    gr_deliver_ctx_t ctx = {.receipt_handle = "handle-1", .invisible_ms = 15000, .max_body_size = 1 << 20};
    gr_delivered_t d;
    int rc = 1;

    if (rmq_props_buf_put(&pb, RMQ_PROP_UNIQ_KEY, "01A1B2C3D4E5F60708090A0B0C0D0E0F10") != RMQ_OK ||
        rmq_props_buf_put(&pb, RMQ_PROP_TAGS, "TagA") != RMQ_OK ||
        rmq_props_buf_put(&pb, RMQ_PROP_KEYS, "k1 k2") != RMQ_OK ||
        rmq_props_buf_put(&pb, RMQ_PROP_SHARDING_KEY, "g1") != RMQ_OK ||
        rmq_props_buf_put(&pb, "color", "red") != RMQ_OK)
        goto out;
    rec.topic = "TopicA";
    rec.topic_len = 6;
    rec.queue_id = 2;
    rec.queue_offset = 41;
    rec.reconsume_times = 2;
    rec.born_timestamp = 1767000000123;
    rec.born_ip = 0x0A000001;
    rec.store_timestamp = 1767000000456;
    rec.store_ip = 0x0A000009;
    rec.store_port = 10911;
    rec.body = (const uint8_t *)"abc";
    rec.body_len = 3;
    rec.properties = pb.data;
    rec.properties_len = (uint16_t)pb.len;
    if (gr_message_from_record(&rec, &ctx, &d) != RMQ_OK)
        goto out;
    size_t len = apache__rocketmq__v2__message__get_packed_size(&d.msg);
    uint8_t *buf = malloc(len + 1);
    if (buf) {
        apache__rocketmq__v2__message__pack(&d.msg, buf);
        rc = write_all(buf, len);
        free(buf);
    }
    gr_delivered_deinit(&d);
out:
    rmq_props_buf_free(&pb);
    return rc;
}

static int encode_settings(void)
{
    Apache__Rocketmq__V2__Settings s = APACHE__ROCKETMQ__V2__SETTINGS__INIT;
    Apache__Rocketmq__V2__Publishing pub = APACHE__ROCKETMQ__V2__PUBLISHING__INIT;
    Apache__Rocketmq__V2__Resource topic = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    Apache__Rocketmq__V2__Resource *topics[] = {&topic};
    gr_settings_config_t cfg = {.max_body_size = 4 << 20, .receive_batch_size = 32, .long_polling_max_ms = 20000,
                                .producer_max_attempts = 3};
    gr_settings_reply_t r;
    gr_status_t st;

    topic.name = "TopicA";
    pub.topics = topics;
    pub.n_topics = 1;
    s._client_type_case = APACHE__ROCKETMQ__V2__SETTINGS___CLIENT_TYPE_CLIENT_TYPE;
    s.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER;
    s.pub_sub_case = APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING;
    s.publishing = &pub;
    if (!gr_settings_reply(&s, &cfg, NULL, &r, &st))
        return 1;
    size_t len = apache__rocketmq__v2__telemetry_command__get_packed_size(&r.cmd);
    uint8_t *buf = malloc(len + 1);
    if (!buf)
        return 1;
    apache__rocketmq__v2__telemetry_command__pack(&r.cmd, buf);
    int rc = write_all(buf, len);
    free(buf);
    return rc;
}

static int decode_send(void)
{
    static uint8_t in[1 << 20];
    size_t len = fread(in, 1, sizeof in, stdin), pos = 0;
    gr_send_ctx_t ctx = {.now_ms = 1767000000000, .max_delay_ms = 86400000, .max_body_size = 1 << 20,
                         .peer_host = "192.0.2.7"};
    gr_store_msg_t sm = {0};
    gr_status_t st;
    st_msg_t m;
    rmq_prop_t p;
    int rc = 1;

    Apache__Rocketmq__V2__SendMessageRequest *req = apache__rocketmq__v2__send_message_request__unpack(NULL, len, in);
    if (!req || req->n_messages == 0) {
        fprintf(stderr, "not a SendMessageRequest with a message\n");
        goto out;
    }
    if (!gr_message_to_store(req->messages[0], &ctx, &sm, &m, &st)) {
        fprintf(stderr, "refused: %d %s\n", (int)st.code, st.message);
        goto out;
    }
    printf("topic=%.*s\nqueue_id=%d\nsys_flag=%d\nborn_timestamp=%lld\nbody=%.*s\n", (int)m.topic_len, m.topic,
           m.queue_id, m.sys_flag, (long long)m.born_timestamp, (int)m.body_len, (const char *)m.body);
    while (rmq_props_next(m.properties, m.properties_len, &pos, &p))
        printf("%.*s=%.*s\n", (int)p.name_len, p.name, (int)p.value_len, p.value);
    rc = 0;
out:
    if (req)
        apache__rocketmq__v2__send_message_request__free_unpacked(req, NULL);
    gr_store_msg_deinit(&sm);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 3 && strcmp(argv[1], "encode") == 0 && strcmp(argv[2], "message") == 0)
        return encode_message();
    if (argc == 3 && strcmp(argv[1], "encode") == 0 && strcmp(argv[2], "settings") == 0)
        return encode_settings();
    if (argc == 3 && strcmp(argv[1], "decode") == 0 && strcmp(argv[2], "send") == 0)
        return decode_send();
    fprintf(stderr, "usage: %s encode message|settings, or decode send\n", argv[0]);
    return 2;
}
