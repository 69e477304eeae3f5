/* test_gr_message.c: the gRPC front's message mapping both ways (a v2
 * message stored and read back as v2; a message stored the way the
 * remoting front stores one, read as v2), the send-side refusals with the
 * proxy's codes, the Telemetry Settings reply, and the status code table. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "bk_props.h"
#include "gr_message.h"
#include "gr_settings.h"
#include "gr_status.h"

#define CODE(x) APACHE__ROCKETMQ__V2__CODE__##x
#define SP(x) APACHE__ROCKETMQ__V2__SYSTEM_PROPERTIES__##x

static const int64_t NOW_MS = 1767000000000;

/* A v2 message under construction, with storage for what it points to. */
typedef struct v2msg {
    Apache__Rocketmq__V2__Message msg;
    Apache__Rocketmq__V2__Resource topic;
    Apache__Rocketmq__V2__SystemProperties sys;
    Apache__Rocketmq__V2__Message__UserPropertiesEntry user[200];
    Apache__Rocketmq__V2__Message__UserPropertiesEntry *user_ptrs[200];
    Google__Protobuf__Timestamp born, deliver;
    Google__Protobuf__Duration orphan;
    char *keys[4];
} v2msg_t;

static void v2msg_init(v2msg_t *v, const char *topic, const char *id, const char *body)
{
    memset(v, 0, sizeof(*v));
    apache__rocketmq__v2__message__init(&v->msg);
    apache__rocketmq__v2__resource__init(&v->topic);
    apache__rocketmq__v2__system_properties__init(&v->sys);
    v->topic.name = (char *)topic;
    v->sys.message_id = (char *)id;
    v->sys.message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL;
    v->sys.body_encoding = APACHE__ROCKETMQ__V2__ENCODING__IDENTITY;
    v->msg.topic = &v->topic;
    v->msg.system_properties = &v->sys;
    v->msg.body.data = (uint8_t *)body;
    v->msg.body.len = strlen(body);
    v->msg.user_properties = v->user_ptrs;
}

static void v2msg_user(v2msg_t *v, const char *k, const char *val)
{
    size_t i = v->msg.n_user_properties++;
    apache__rocketmq__v2__message__user_properties_entry__init(&v->user[i]);
    v->user[i].key = (char *)k;
    v->user[i].value = (char *)val;
    v->user_ptrs[i] = &v->user[i];
}

static const gr_send_ctx_t send_ctx = {
    .now_ms = NOW_MS, .max_delay_ms = 86400000, .max_body_size = 4 << 20, .peer_host = "192.0.2.7",
};

static const gr_deliver_ctx_t deliver_ctx = {
    .receipt_handle = "rh-1", .invisible_ms = 30000, .delivery_attempt = 0, .max_body_size = 4 << 20,
};

/* Stores m as the commit log would (queue offset 7, store host
 * 10.0.0.9:10911) and decodes it into *rec; *buf holds it (free it). */
static void store_record(const st_msg_t *m, uint8_t **buf, rmq_record_t *rec)
{
    rmq_record_t in = {0};
    size_t size;

    in.queue_id = m->queue_id;
    in.sys_flag = m->sys_flag;
    in.born_timestamp = m->born_timestamp;
    in.born_ip = m->born_ip;
    in.born_port = m->born_port;
    in.store_timestamp = NOW_MS + 5;
    in.store_ip = 0x0A000009;
    in.store_port = 10911;
    in.reconsume_times = m->reconsume_times;
    in.body = m->body;
    in.body_len = (uint32_t)m->body_len;
    in.topic = m->topic;
    in.topic_len = (uint8_t)m->topic_len;
    in.properties = m->properties;
    in.properties_len = (uint16_t)m->properties_len;
    size = rmq_record_size(in.sys_flag, in.body_len, in.topic_len, in.properties_len);
    *buf = malloc(size);
    ck_assert_ptr_nonnull(*buf);
    rmq_record_encode(&in, *buf);
    rmq_record_patch(*buf, 7, 4096, NOW_MS + 5);
    ck_assert_int_eq(rmq_record_decode(*buf, size, 1, rec), RMQ_OK);
}

/* Packs d's message and unpacks it again: what a client decodes. */
static Apache__Rocketmq__V2__Message *over_the_wire(const gr_delivered_t *d)
{
    size_t len = apache__rocketmq__v2__message__get_packed_size(&d->msg);
    uint8_t *wire = malloc(len + 1);
    Apache__Rocketmq__V2__Message *out;

    apache__rocketmq__v2__message__pack(&d->msg, wire);
    out = apache__rocketmq__v2__message__unpack(NULL, len, wire);
    free(wire);
    ck_assert_ptr_nonnull(out);
    return out;
}

static const char *user_prop(const Apache__Rocketmq__V2__Message *m, const char *key)
{
    for (size_t i = 0; i < m->n_user_properties; i++)
        if (strcmp(m->user_properties[i]->key, key) == 0)
            return m->user_properties[i]->value;
    return NULL;
}

static const char *stored_prop(const st_msg_t *m, const char *name, char *out)
{
    size_t vl = 0;
    const char *v = rmq_props_get(m->properties, m->properties_len, name, &vl);
    if (!v)
        return NULL;
    memcpy(out, v, vl);
    out[vl] = '\0';
    return out;
}

START_TEST(test_round_trip_v2_store_v2)
{
    v2msg_t v;
    gr_store_msg_t sm = {0};
    gr_status_t st;
    st_msg_t m;
    uint8_t *buf;
    rmq_record_t rec;
    gr_delivered_t d;
    char val[256];

    v2msg_init(&v, "TopicA", "01A1B2C3D4E5F60708090A0B0C0D0E0F10", "hello body");
    v2msg_user(&v, "color", "red");
    v2msg_user(&v, "n", "1");
    v.sys._tag_case = SP(_TAG_TAG);
    v.sys.tag = "TagA";
    v.keys[0] = "k1";
    v.keys[1] = "k2";
    v.sys.keys = v.keys;
    v.sys.n_keys = 2;
    v.sys.message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__FIFO;
    v.sys._message_group_case = SP(_MESSAGE_GROUP_MESSAGE_GROUP);
    v.sys.message_group = "order-42";
    v.sys._trace_context_case = SP(_TRACE_CONTEXT_TRACE_CONTEXT);
    v.sys.trace_context = "00-trace";
    v.sys.born_host = "client-host";
    google__protobuf__timestamp__init(&v.born);
    v.born.seconds = NOW_MS / 1000 - 1;
    v.born.nanos = 250000000;
    v.sys.born_timestamp = &v.born;
    v.sys.queue_id = 3;

    ck_assert_int_eq(gr_message_to_store(&v.msg, &send_ctx, &sm, &m, &st), 1);
    ck_assert_int_eq(st.code, CODE(OK));
    ck_assert_int_eq(m.queue_id, 3);
    ck_assert_int_eq(m.born_timestamp, NOW_MS - 750);
    ck_assert_int_eq(m.sys_flag, 0);
    ck_assert_int_eq(m.tag_code, st_tag_hash("TagA", 4));
    /* what the other fronts read */
    ck_assert_str_eq(stored_prop(&m, RMQ_PROP_UNIQ_KEY, val), "01A1B2C3D4E5F60708090A0B0C0D0E0F10");
    ck_assert_str_eq(stored_prop(&m, RMQ_PROP_TAGS, val), "TagA");
    ck_assert_str_eq(stored_prop(&m, RMQ_PROP_KEYS, val), "k1 k2");
    ck_assert_str_eq(stored_prop(&m, "color", val), "red");
    ck_assert_str_eq(stored_prop(&m, RMQ_PROP_SHARDING_KEY, val), "order-42");
    ck_assert_str_eq(stored_prop(&m, RMQ_PROP_BORN_HOST, val), "client-host");
    ck_assert_ptr_null(stored_prop(&m, RMQ_PROP_TRAN_MSG, val));

    store_record(&m, &buf, &rec);
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    Apache__Rocketmq__V2__Message *out = over_the_wire(&d);
    const Apache__Rocketmq__V2__SystemProperties *sys = out->system_properties;
    ck_assert_str_eq(out->topic->name, "TopicA");
    ck_assert_uint_eq(out->n_user_properties, 2);
    ck_assert_str_eq(user_prop(out, "color"), "red");
    ck_assert_str_eq(user_prop(out, "n"), "1");
    ck_assert_int_eq(sys->_tag_case, SP(_TAG_TAG));
    ck_assert_str_eq(sys->tag, "TagA");
    ck_assert_uint_eq(sys->n_keys, 2);
    ck_assert_str_eq(sys->keys[0], "k1");
    ck_assert_str_eq(sys->keys[1], "k2");
    ck_assert_str_eq(sys->message_id, "01A1B2C3D4E5F60708090A0B0C0D0E0F10");
    ck_assert_int_eq(sys->message_type, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__FIFO);
    ck_assert_str_eq(sys->message_group, "order-42");
    ck_assert_str_eq(sys->trace_context, "00-trace");
    ck_assert_str_eq(sys->born_host, "client-host");
    ck_assert_int_eq(sys->born_timestamp->seconds, NOW_MS / 1000 - 1);
    ck_assert_int_eq(sys->born_timestamp->nanos, 250000000);
    ck_assert_str_eq(sys->store_host, "10.0.0.9:10911");
    ck_assert_int_eq(sys->queue_id, 3);
    ck_assert_int_eq(sys->_queue_offset_case, SP(_QUEUE_OFFSET_QUEUE_OFFSET));
    ck_assert_int_eq(sys->queue_offset, 7);
    ck_assert_int_eq(sys->delivery_attempt, 1);
    ck_assert_str_eq(sys->receipt_handle, "rh-1");
    ck_assert_int_eq(sys->invisible_duration->seconds, 30);
    ck_assert_int_eq(sys->body_encoding, APACHE__ROCKETMQ__V2__ENCODING__IDENTITY);
    ck_assert_int_eq(sys->body_digest->type, APACHE__ROCKETMQ__V2__DIGEST_TYPE__MD5);
    ck_assert_str_eq(sys->body_digest->checksum, "CA3600EB668444890020C72BF0DEFAA1");
    ck_assert_uint_eq(out->body.len, strlen("hello body"));
    ck_assert_mem_eq(out->body.data, "hello body", out->body.len);
    ck_assert_int_eq(sys->_delivery_timestamp_case, 0);
    ck_assert_int_eq(sys->_dead_letter_queue_case, 0);
    apache__rocketmq__v2__message__free_unpacked(out, NULL);
    gr_delivered_deinit(&d);
    free(buf);
    gr_store_msg_deinit(&sm);
}
END_TEST

START_TEST(test_md5_digest_upper_hex)
{
    /* MD5("abc") */
    st_msg_t m = {0};
    uint8_t *buf;
    rmq_record_t rec;
    gr_delivered_t d;

    m.topic = "T";
    m.topic_len = 1;
    m.body = "abc";
    m.body_len = 3;
    store_record(&m, &buf, &rec);
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    ck_assert_str_eq(d.sys.body_digest->checksum, "900150983CD24FB0D6963F7D28E17F72");
    gr_delivered_deinit(&d);
    free(buf);
}
END_TEST

/* A message as the remoting front stores a 4.x producer's send. */
START_TEST(test_remoting_stored_reads_as_v2)
{
    rmq_props_buf_t pb = {0};
    st_msg_t m = {0};
    uint8_t *buf;
    rmq_record_t rec;
    gr_delivered_t d;

    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_UNIQ_KEY, "7F0000010A2B18B4AAC2000000000001"), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_TAGS, "TagB"), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_KEYS, "a  b"), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_WAIT, "true"), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, "color", "blue"), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, "MAX_RECONSUME_TIMES", "16"), RMQ_OK);
    m.topic = "TopicB";
    m.topic_len = 6;
    m.queue_id = 1;
    m.born_timestamp = NOW_MS - 10;
    m.born_ip = 0x0A000001;
    m.born_port = 1234;
    m.reconsume_times = 2;
    m.body = "x";
    m.body_len = 1;
    m.properties = pb.data;
    m.properties_len = pb.len;
    store_record(&m, &buf, &rec);

    gr_deliver_ctx_t ctx = deliver_ctx;
    ctx.receipt_handle = NULL;
    ctx.invisible_ms = -1;
    ck_assert_int_eq(gr_message_from_record(&rec, &ctx, &d), RMQ_OK);
    Apache__Rocketmq__V2__Message *out = over_the_wire(&d);
    const Apache__Rocketmq__V2__SystemProperties *sys = out->system_properties;
    ck_assert_uint_eq(out->n_user_properties, 1);
    ck_assert_str_eq(user_prop(out, "color"), "blue");
    ck_assert_str_eq(sys->message_id, "7F0000010A2B18B4AAC2000000000001");
    ck_assert_str_eq(sys->tag, "TagB");
    ck_assert_uint_eq(sys->n_keys, 2);
    ck_assert_str_eq(sys->keys[0], "a");
    ck_assert_str_eq(sys->keys[1], "b");
    ck_assert_int_eq(sys->message_type, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL);
    ck_assert_str_eq(sys->born_host, "10.0.0.1");
    ck_assert_int_eq(sys->delivery_attempt, 3);
    ck_assert_int_eq(sys->_receipt_handle_case, 0);
    ck_assert_int_eq(sys->_invisible_duration_case, 0);
    ck_assert_int_eq(sys->queue_id, 1);
    apache__rocketmq__v2__message__free_unpacked(out, NULL);
    gr_delivered_deinit(&d);
    free(buf);
    rmq_props_buf_free(&pb);
}
END_TEST

/* A 4.x producer's zlib-compressed body goes out inflated, IDENTITY. */
START_TEST(test_compressed_body_inflated)
{
    static const char plain[] = "a body a 4.x producer compressed, a body a 4.x producer compressed";
    uint8_t z[256];
    uLongf zlen = sizeof z;
    st_msg_t m = {0};
    uint8_t *buf;
    rmq_record_t rec;
    gr_delivered_t d;

    ck_assert_int_eq(compress(z, &zlen, (const Bytef *)plain, sizeof plain - 1), Z_OK);
    m.topic = "T";
    m.topic_len = 1;
    m.sys_flag = GR_SYSFLAG_COMPRESSED;
    m.body = z;
    m.body_len = zlen;
    store_record(&m, &buf, &rec);
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    ck_assert_uint_eq(d.msg.body.len, sizeof plain - 1);
    ck_assert_mem_eq(d.msg.body.data, plain, sizeof plain - 1);
    ck_assert_int_eq(d.sys.body_encoding, APACHE__ROCKETMQ__V2__ENCODING__IDENTITY);
    gr_delivered_deinit(&d);

    gr_deliver_ctx_t small = deliver_ctx;
    small.max_body_size = 10;
    ck_assert_int_eq(gr_message_from_record(&rec, &small, &d), RMQ_ECORRUPT);
    gr_delivered_deinit(&d);
    rec.body_len -= 4;                              /* truncated stream */
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_ECORRUPT);
    gr_delivered_deinit(&d);
    free(buf);
}
END_TEST

/* No UNIQ_KEY: the offset id; a retry copy shows its original topic, a
 * half message its real one. */
START_TEST(test_offset_id_and_delivered_topic)
{
    rmq_props_buf_t pb = {0};
    st_msg_t m = {0};
    uint8_t *buf;
    rmq_record_t rec;
    gr_delivered_t d;
    char id[RMQ_MSG_ID_MAX + 1];

    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_RETRY_TOPIC, "Orig"), RMQ_OK);
    m.topic = "%RETRY%g1";
    m.topic_len = strlen(m.topic);
    m.body = "b";
    m.body_len = 1;
    m.properties = pb.data;
    m.properties_len = pb.len;
    store_record(&m, &buf, &rec);
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    rmq_record_msg_id(&rec, id);
    ck_assert_str_eq(d.sys.message_id, id);
    ck_assert_str_eq(d.topic.name, "Orig");
    gr_delivered_deinit(&d);
    free(buf);

    /* a transaction's half message, as a check-back shows it */
    pb.len = 0;
    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_UNIQ_KEY, "01CD"), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_TRAN_MSG, "true"), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_REAL_TOPIC, "TopicTx"), RMQ_OK);
    m.topic = RMQ_TOPIC_TRANS_HALF;
    m.topic_len = strlen(m.topic);
    m.properties = pb.data;
    m.properties_len = pb.len;
    store_record(&m, &buf, &rec);
    gr_deliver_ctx_t check = deliver_ctx;
    check.receipt_handle = NULL;
    ck_assert_int_eq(gr_message_from_record(&rec, &check, &d), RMQ_OK);
    ck_assert_str_eq(d.topic.name, "TopicTx");
    ck_assert_str_eq(d.sys.message_id, "01CD");
    ck_assert_int_eq(d.sys.message_type, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION);
    ck_assert_uint_eq(d.msg.n_user_properties, 0);
    gr_delivered_deinit(&d);
    free(buf);

    /* an ordinary topic keeps its name whatever REAL_TOPIC says */
    m.topic = "Plain";
    m.topic_len = strlen(m.topic);
    store_record(&m, &buf, &rec);
    ck_assert_int_eq(gr_message_from_record(&rec, &check, &d), RMQ_OK);
    ck_assert_str_eq(d.topic.name, "Plain");
    gr_delivered_deinit(&d);
    free(buf);
    rmq_props_buf_free(&pb);
}
END_TEST

START_TEST(test_delay_transaction_dlq)
{
    v2msg_t v;
    gr_store_msg_t sm = {0};
    gr_status_t st;
    st_msg_t m;
    uint8_t *buf;
    rmq_record_t rec;
    gr_delivered_t d;
    char val[64];

    v2msg_init(&v, "TopicD", "01FF", "delayed");
    v.sys.message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__DELAY;
    google__protobuf__timestamp__init(&v.deliver);
    v.deliver.seconds = NOW_MS / 1000 + 65;
    v.sys._delivery_timestamp_case = SP(_DELIVERY_TIMESTAMP_DELIVERY_TIMESTAMP);
    v.sys.delivery_timestamp = &v.deliver;
    ck_assert_int_eq(gr_message_to_store(&v.msg, &send_ctx, &sm, &m, &st), 1);
    ck_assert_int_eq(bk_props_int(m.properties, m.properties_len, RMQ_PROP_TIMER_DELIVER_MS, -1, NULL),
                     (NOW_MS / 1000 + 65) * 1000);
    ck_assert_int_eq(bk_props_int(m.properties, m.properties_len, RMQ_PROP_DELIVER_AT, -1, NULL),
                     (NOW_MS / 1000 + 65) * 1000);
    store_record(&m, &buf, &rec);
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    ck_assert_int_eq(d.sys.message_type, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__DELAY);
    ck_assert_int_eq(d.sys.delivery_timestamp->seconds, NOW_MS / 1000 + 65);
    gr_delivered_deinit(&d);
    free(buf);

    v2msg_init(&v, "TopicTx", "01EE", "half");
    v.sys.message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION;
    google__protobuf__duration__init(&v.orphan);
    v.orphan.seconds = 30;
    v.sys._orphaned_transaction_recovery_duration_case =
        SP(_ORPHANED_TRANSACTION_RECOVERY_DURATION_ORPHANED_TRANSACTION_RECOVERY_DURATION);
    v.sys.orphaned_transaction_recovery_duration = &v.orphan;
    ck_assert_int_eq(gr_message_to_store(&v.msg, &send_ctx, &sm, &m, &st), 1);
    ck_assert_int_eq(m.sys_flag, GR_SYSFLAG_TX_PREPARED);
    ck_assert_str_eq(stored_prop(&m, RMQ_PROP_TRAN_MSG, val), "true");
    ck_assert_str_eq(stored_prop(&m, RMQ_PROP_PRODUCER_GROUP, val), "TopicTx");
    ck_assert_str_eq(stored_prop(&m, RMQ_PROP_CHECK_IMMUNITY_SEC, val), "30");
    store_record(&m, &buf, &rec);
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    ck_assert_int_eq(d.sys.message_type, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION);
    ck_assert_int_eq(d.sys.orphaned_transaction_recovery_duration->seconds, 30);
    ck_assert_uint_eq(d.msg.n_user_properties, 0);
    gr_delivered_deinit(&d);
    free(buf);

    rmq_props_buf_t pb = {0};
    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_DLQ_ORIGIN_TOPIC, "TopicA"), RMQ_OK);
    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_DLQ_ORIGIN_MESSAGE_ID, "01AB"), RMQ_OK);
    memset(&m, 0, sizeof m);
    m.topic = "%DLQ%g";
    m.topic_len = strlen(m.topic);
    m.body = "b";
    m.body_len = 1;
    m.properties = pb.data;
    m.properties_len = pb.len;
    store_record(&m, &buf, &rec);
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    ck_assert_str_eq(d.topic.name, "%DLQ%g");
    ck_assert_str_eq(d.sys.dead_letter_queue->topic, "TopicA");
    ck_assert_str_eq(d.sys.dead_letter_queue->message_id, "01AB");
    gr_delivered_deinit(&d);
    free(buf);
    rmq_props_buf_free(&pb);
    gr_store_msg_deinit(&sm);
}
END_TEST

START_TEST(test_gzip_body_stored_inflated)
{
    static const char plain[] = "gzip me gzip me gzip me";
    uint8_t gz[256];
    z_stream zs = {0};
    v2msg_t v;
    gr_store_msg_t sm = {0};
    gr_status_t st;
    st_msg_t m;

    ck_assert_int_eq(deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY), Z_OK);
    zs.next_in = (Bytef *)plain;
    zs.avail_in = sizeof plain - 1;
    zs.next_out = gz;
    zs.avail_out = sizeof gz;
    ck_assert_int_eq(deflate(&zs, Z_FINISH), Z_STREAM_END);
    v2msg_init(&v, "T", "01AA", "");
    v.msg.body.data = gz;
    v.msg.body.len = zs.total_out;
    deflateEnd(&zs);
    v.sys.body_encoding = APACHE__ROCKETMQ__V2__ENCODING__GZIP;
    ck_assert_int_eq(gr_message_to_store(&v.msg, &send_ctx, &sm, &m, &st), 1);
    ck_assert_uint_eq(m.body_len, sizeof plain - 1);
    ck_assert_mem_eq(m.body, plain, m.body_len);
    ck_assert_int_eq(m.sys_flag & GR_SYSFLAG_COMPRESSED, 0);

    v.msg.body.len -= 3;
    ck_assert_int_eq(gr_message_to_store(&v.msg, &send_ctx, &sm, &m, &st), 0);
    ck_assert_int_eq(st.code, CODE(MESSAGE_CORRUPTED));
    gr_store_msg_deinit(&sm);
}
END_TEST

/* Runs one refused send and checks its code. */
static void expect_refused(const v2msg_t *v, gr_code_t code)
{
    gr_store_msg_t sm = {0};
    gr_status_t st;
    st_msg_t m;

    ck_assert_int_eq(gr_message_to_store(&v->msg, &send_ctx, &sm, &m, &st), 0);
    ck_assert_int_eq(st.code, code);
    ck_assert_str_ne(st.message, "");
    gr_store_msg_deinit(&sm);
}

START_TEST(test_send_refusals)
{
    v2msg_t v;

    v2msg_init(&v, "T", "01AA", "b");
    v2msg_user(&v, RMQ_PROP_TAGS, "x");
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_PROPERTY_KEY));
    v2msg_init(&v, "T", "01AA", "b");
    v2msg_user(&v, "k", "bad\x01value");
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_PROPERTY_KEY));
    v2msg_init(&v, "T", "01AA", "b");
    v2msg_user(&v, RMQ_PROP_DELIVER_AT, "1");
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_PROPERTY_KEY));
    v2msg_init(&v, "T", "01AA", "b");
    for (int i = 0; i < GR_USER_PROPS_MAX + 1; i++) {
        static char names[GR_USER_PROPS_MAX + 1][16];
        snprintf(names[i], sizeof names[i], "p%d", i);
        v2msg_user(&v, names[i], "v");
    }
    expect_refused(&v, CODE(MESSAGE_PROPERTIES_TOO_LARGE));

    v2msg_init(&v, "T", "01AA", "b");
    v.sys._tag_case = SP(_TAG_TAG);
    v.sys.tag = "a||b";
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_TAG));
    v.sys.tag = "  ";
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_TAG));

    v2msg_init(&v, "T", "01AA", "b");
    v.keys[0] = " ";
    v.sys.keys = v.keys;
    v.sys.n_keys = 1;
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_KEY));

    v2msg_init(&v, "T", "", "b");
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_ID));
    v2msg_init(&v, "", "01AA", "b");
    expect_refused(&v, CODE(ILLEGAL_TOPIC));
    v2msg_init(&v, "T", "01AA", "");
    expect_refused(&v, CODE(MESSAGE_BODY_EMPTY));

    v2msg_init(&v, "T", "01AA", "b");
    v.sys._message_group_case = SP(_MESSAGE_GROUP_MESSAGE_GROUP);
    v.sys.message_group = "0123456789012345678901234567890123456789012345678901234567890123";
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_GROUP));

    v2msg_init(&v, "T", "01AA", "b");
    google__protobuf__timestamp__init(&v.deliver);
    v.deliver.seconds = NOW_MS / 1000 + 2 * 86400;
    v.sys._delivery_timestamp_case = SP(_DELIVERY_TIMESTAMP_DELIVERY_TIMESTAMP);
    v.sys.delivery_timestamp = &v.deliver;
    expect_refused(&v, CODE(ILLEGAL_DELIVERY_TIME));
    v.deliver.seconds = INT64_MAX;
    expect_refused(&v, CODE(ILLEGAL_DELIVERY_TIME));

    v2msg_init(&v, "T", "01AA", "b");
    v.sys.message_type = APACHE__ROCKETMQ__V2__MESSAGE_TYPE__LITE;
    expect_refused(&v, CODE(UNSUPPORTED));

    v2msg_init(&v, "T", "01AA", "b");
    v.msg.system_properties = NULL;
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_ID));
}
END_TEST

/* No value a client sends may carry the properties string's separators:
 * "x\x02DELAY\x013" in a message id would store a second property. */
START_TEST(test_no_property_injection)
{
    v2msg_t v;

    v2msg_init(&v, "T", "01AA\x02" "DELAY\x01" "3", "b");
    expect_refused(&v, CODE(ILLEGAL_MESSAGE_ID));
    v2msg_init(&v, "T", "01AA", "b");
    v.sys.born_host = "h\x02TRAN_MSG\x01true";
    expect_refused(&v, CODE(BAD_REQUEST));
    v2msg_init(&v, "T", "01AA", "b");
    v.sys._trace_context_case = SP(_TRACE_CONTEXT_TRACE_CONTEXT);
    v.sys.trace_context = "t\x02__STARTDELIVERTIME\x01" "1";
    expect_refused(&v, CODE(BAD_REQUEST));
}
END_TEST

START_TEST(test_blank_born_host_is_the_peer)
{
    v2msg_t v;
    gr_store_msg_t sm = {0};
    gr_status_t st;
    st_msg_t m;
    char val[64];

    v2msg_init(&v, "T", "01AA", "b");
    v.sys.born_host = " ";
    v.sys._delivery_attempt_case = SP(_DELIVERY_ATTEMPT_DELIVERY_ATTEMPT);
    v.sys.delivery_attempt = 4;
    ck_assert_int_eq(gr_message_to_store(&v.msg, &send_ctx, &sm, &m, &st), 1);
    ck_assert_str_eq(stored_prop(&m, RMQ_PROP_BORN_HOST, val), "192.0.2.7");
    ck_assert_int_eq(m.reconsume_times, 3);
    ck_assert_int_eq(m.born_timestamp, NOW_MS);
    gr_store_msg_deinit(&sm);
}
END_TEST

/* Times from a peer or a record that overflow milliseconds: no time, or
 * the limit, never undefined arithmetic (UBSan halts on it). */
START_TEST(test_time_overflow_saturates)
{
    Google__Protobuf__Duration huge = GOOGLE__PROTOBUF__DURATION__INIT;
    rmq_props_buf_t pb = {0};
    st_msg_t m = {0};
    uint8_t *buf;
    rmq_record_t rec;
    gr_delivered_t d;

    /* reconsume times at the limit (fuzz_grpc_v2 found it): attempt saturates */
    st_msg_t worn = {.topic = "T", .topic_len = 1, .body = "b", .body_len = 1, .reconsume_times = INT32_MAX};
    store_record(&worn, &buf, &rec);
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    ck_assert_int_eq(d.sys.delivery_attempt, INT32_MAX);
    gr_delivered_deinit(&d);
    free(buf);

    huge.seconds = INT64_MAX;
    ck_assert_int_eq(gr_duration_ms(&huge), INT64_MAX);
    huge.seconds = INT64_MIN;
    ck_assert_int_eq(gr_duration_ms(&huge), INT64_MIN);

    ck_assert_int_eq(rmq_props_buf_put(&pb, RMQ_PROP_TIMER_DELAY_SEC, "10"), RMQ_OK);
    m.topic = "T";
    m.topic_len = 1;
    m.body = "b";
    m.body_len = 1;
    m.properties = pb.data;
    m.properties_len = pb.len;
    store_record(&m, &buf, &rec);
    rec.store_timestamp = INT64_MAX - 5;
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    ck_assert_int_eq(d.sys._delivery_timestamp_case, 0);
    ck_assert_int_eq(d.sys.message_type, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__DELAY);
    gr_delivered_deinit(&d);
    rec.store_timestamp = 1000;
    ck_assert_int_eq(gr_message_from_record(&rec, &deliver_ctx, &d), RMQ_OK);
    ck_assert_int_eq(d.sys.delivery_timestamp->seconds, 11);
    gr_delivered_deinit(&d);
    free(buf);
    rmq_props_buf_free(&pb);
}
END_TEST

/* ---- Settings ------------------------------------------------------------- */

static const gr_settings_config_t settings_cfg = {
    .max_body_size = 4 << 20, .receive_batch_size = 32, .long_polling_max_ms = 20000, .producer_max_attempts = 3,
};

/* Packs r's command and unpacks it again. */
static Apache__Rocketmq__V2__TelemetryCommand *reply_wire(const gr_settings_reply_t *r)
{
    size_t len = apache__rocketmq__v2__telemetry_command__get_packed_size(&r->cmd);
    uint8_t *wire = malloc(len + 1);
    Apache__Rocketmq__V2__TelemetryCommand *out;

    apache__rocketmq__v2__telemetry_command__pack(&r->cmd, wire);
    out = apache__rocketmq__v2__telemetry_command__unpack(NULL, len, wire);
    free(wire);
    ck_assert_ptr_nonnull(out);
    return out;
}

START_TEST(test_settings_producer)
{
    Apache__Rocketmq__V2__Settings s = APACHE__ROCKETMQ__V2__SETTINGS__INIT;
    Apache__Rocketmq__V2__Publishing pub = APACHE__ROCKETMQ__V2__PUBLISHING__INIT;
    Apache__Rocketmq__V2__Resource topic = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    Apache__Rocketmq__V2__Resource *topics[] = {&topic};
    Apache__Rocketmq__V2__UA ua = APACHE__ROCKETMQ__V2__UA__INIT;
    gr_settings_reply_t r;
    gr_status_t st;

    topic.name = "TopicA";
    pub.topics = topics;
    pub.n_topics = 1;
    pub.validate_message_type = 1;
    ua.language = APACHE__ROCKETMQ__V2__LANGUAGE__JAVA;
    ua.version = "5.0.7";
    s._client_type_case = APACHE__ROCKETMQ__V2__SETTINGS___CLIENT_TYPE_CLIENT_TYPE;
    s.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER;
    s.pub_sub_case = APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING;
    s.publishing = &pub;
    s.user_agent = &ua;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, NULL, &r, &st), 1);
    Apache__Rocketmq__V2__TelemetryCommand *c = reply_wire(&r);
    ck_assert_int_eq(c->_status_case, APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND___STATUS_STATUS);
    ck_assert_int_eq(c->status->code, CODE(OK));
    ck_assert_int_eq(c->command_case, APACHE__ROCKETMQ__V2__TELEMETRY_COMMAND__COMMAND_SETTINGS);
    const Apache__Rocketmq__V2__Settings *o = c->settings;
    ck_assert_int_eq(o->client_type, APACHE__ROCKETMQ__V2__CLIENT_TYPE__PRODUCER);
    ck_assert_int_eq(o->backoff_policy->max_attempts, 3);
    ck_assert_int_eq(o->backoff_policy->strategy_case, APACHE__ROCKETMQ__V2__RETRY_POLICY__STRATEGY_EXPONENTIAL_BACKOFF);
    ck_assert_int_eq(o->backoff_policy->exponential_backoff->initial->nanos, 10000000);
    ck_assert_int_eq(o->backoff_policy->exponential_backoff->max->seconds, 1);
    ck_assert(o->backoff_policy->exponential_backoff->multiplier == 2.0f);
    ck_assert_int_eq(o->pub_sub_case, APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING);
    ck_assert_int_eq(o->publishing->max_body_size, 4 << 20);
    ck_assert_int_eq(o->publishing->validate_message_type, 0);
    ck_assert_uint_eq(o->publishing->n_topics, 1);
    ck_assert_str_eq(o->publishing->topics[0]->name, "TopicA");
    ck_assert_str_eq(o->user_agent->version, "5.0.7");
    ck_assert_ptr_nonnull(o->metric);
    ck_assert_int_eq(o->metric->on, 0);
    apache__rocketmq__v2__telemetry_command__free_unpacked(c, NULL);

    s.pub_sub_case = APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB__NOT_SET;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, NULL, &r, &st), 0);
    ck_assert_int_eq(st.code, CODE(BAD_REQUEST));
    s._client_type_case = APACHE__ROCKETMQ__V2__SETTINGS___CLIENT_TYPE__NOT_SET;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, NULL, &r, &st), 0);
    ck_assert_int_eq(st.code, CODE(UNRECOGNIZED_CLIENT_TYPE));
}
END_TEST

START_TEST(test_settings_consumers)
{
    Apache__Rocketmq__V2__Settings s = APACHE__ROCKETMQ__V2__SETTINGS__INIT;
    Apache__Rocketmq__V2__Subscription sub = APACHE__ROCKETMQ__V2__SUBSCRIPTION__INIT;
    Apache__Rocketmq__V2__Resource group = APACHE__ROCKETMQ__V2__RESOURCE__INIT;
    Google__Protobuf__Duration poll = GOOGLE__PROTOBUF__DURATION__INIT;
    gr_group_policy_t policy = {.retry_max_times = 3, .consume_orderly = 1};
    gr_settings_reply_t r;
    gr_status_t st;

    group.name = "GID";
    sub._group_case = APACHE__ROCKETMQ__V2__SUBSCRIPTION___GROUP_GROUP;
    sub.group = &group;
    s._client_type_case = APACHE__ROCKETMQ__V2__SETTINGS___CLIENT_TYPE_CLIENT_TYPE;
    s.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__PUSH_CONSUMER;
    s.pub_sub_case = APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_SUBSCRIPTION;
    s.subscription = &sub;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, &policy, &r, &st), 1);
    Apache__Rocketmq__V2__TelemetryCommand *c = reply_wire(&r);
    const Apache__Rocketmq__V2__Settings *o = c->settings;
    ck_assert_int_eq(o->backoff_policy->max_attempts, 4);
    ck_assert_int_eq(o->backoff_policy->exponential_backoff->initial->seconds, 1);
    ck_assert_int_eq(o->backoff_policy->exponential_backoff->max->seconds, 7200);
    ck_assert_str_eq(o->subscription->group->name, "GID");
    ck_assert_int_eq(o->subscription->_fifo_case, APACHE__ROCKETMQ__V2__SUBSCRIPTION___FIFO_FIFO);
    ck_assert_int_eq(o->subscription->fifo, 1);
    ck_assert_int_eq(o->subscription->receive_batch_size, 32);
    ck_assert_int_eq(o->subscription->long_polling_timeout->seconds, 20);
    apache__rocketmq__v2__telemetry_command__free_unpacked(c, NULL);

    /* a simple consumer's own poll time, at most the max; group defaults */
    s.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__SIMPLE_CONSUMER;
    sub._long_polling_timeout_case = APACHE__ROCKETMQ__V2__SUBSCRIPTION___LONG_POLLING_TIMEOUT_LONG_POLLING_TIMEOUT;
    sub.long_polling_timeout = &poll;
    poll.seconds = 5;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, NULL, &r, &st), 1);
    ck_assert_int_eq(r.subscription.long_polling_timeout->seconds, 5);
    ck_assert_int_eq(r.backoff.max_attempts, 17);
    ck_assert_int_eq(r.subscription.fifo, 0);
    poll.seconds = 30;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, NULL, &r, &st), 1);
    ck_assert_int_eq(r.subscription.long_polling_timeout->seconds, 20);
    poll.seconds = INT64_MAX;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, NULL, &r, &st), 1);
    ck_assert_int_eq(r.subscription.long_polling_timeout->seconds, 20);

    sub._group_case = APACHE__ROCKETMQ__V2__SUBSCRIPTION___GROUP__NOT_SET;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, NULL, &r, &st), 0);
    ck_assert_int_eq(st.code, CODE(ILLEGAL_CONSUMER_GROUP));
    s.pub_sub_case = APACHE__ROCKETMQ__V2__SETTINGS__PUB_SUB_PUBLISHING;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, NULL, &r, &st), 0);
    ck_assert_int_eq(st.code, CODE(BAD_REQUEST));
    s.client_type = APACHE__ROCKETMQ__V2__CLIENT_TYPE__PULL_CONSUMER;
    ck_assert_int_eq(gr_settings_reply(&s, &settings_cfg, NULL, &r, &st), 0);
    ck_assert_int_eq(st.code, CODE(UNSUPPORTED));
}
END_TEST

START_TEST(test_code_mapping)
{
    ck_assert_int_eq(gr_code_of_status(BK_OK), CODE(OK));
    ck_assert_int_eq(gr_code_of_status(BK_TOPIC_NOT_EXIST), CODE(TOPIC_NOT_FOUND));
    ck_assert_int_eq(gr_code_of_status(BK_GROUP_NOT_EXIST), CODE(CONSUMER_GROUP_NOT_FOUND));
    ck_assert_int_eq(gr_code_of_status(BK_NO_PERMISSION), CODE(FORBIDDEN));
    ck_assert_int_eq(gr_code_of_status(BK_BUSY), CODE(TOO_MANY_REQUESTS));
    ck_assert_int_eq(gr_code_of_status(BK_MESSAGE_TOO_LARGE), CODE(MESSAGE_BODY_TOO_LARGE));
    ck_assert_int_eq(gr_code_of_status(BK_FLUSH_DISK_TIMEOUT), CODE(MASTER_PERSISTENCE_TIMEOUT));
    ck_assert_int_eq(gr_code_of_status(BK_FLUSH_SLAVE_TIMEOUT), CODE(SLAVE_PERSISTENCE_TIMEOUT));
    ck_assert_int_eq(gr_code_of_status(BK_SLAVE_NOT_AVAILABLE), CODE(HA_NOT_AVAILABLE));
    ck_assert_int_eq(gr_code_of_status(BK_SUBSCRIPTION_PARSE_FAILED), CODE(ILLEGAL_FILTER_EXPRESSION));
    ck_assert_int_eq(gr_code_of_status(BK_SYSTEM_ERROR), CODE(INTERNAL_SERVER_ERROR));
    ck_assert_int_eq(gr_code_of_status((bk_status_t)999), CODE(INTERNAL_SERVER_ERROR));
    /* every neutral status has a code */
    for (int s = BK_OK; s <= BK_SYSTEM_ERROR; s++)
        ck_assert_int_ne(gr_code_of_status((bk_status_t)s), CODE(CODE_UNSPECIFIED));
    ck_assert_int_eq(gr_code_of_err(RMQ_EPROTO), CODE(BAD_REQUEST));
    ck_assert_int_eq(gr_code_of_err(RMQ_ENOMEM), CODE(INTERNAL_SERVER_ERROR));

    gr_code_t same[] = {CODE(OK), CODE(OK)}, mixed[] = {CODE(OK), CODE(TOPIC_NOT_FOUND)};
    ck_assert_int_eq(gr_code_overall(NULL, 0), CODE(OK));
    ck_assert_int_eq(gr_code_overall(same, 2), CODE(OK));
    ck_assert_int_eq(gr_code_overall(mixed + 1, 1), CODE(TOPIC_NOT_FOUND));
    ck_assert_int_eq(gr_code_overall(mixed, 2), CODE(MULTIPLE_RESULTS));

    gr_status_t st;
    Apache__Rocketmq__V2__Status pb;
    gr_status_set(&st, CODE(ILLEGAL_TOPIC), "topic %s", "x");
    gr_status_to_pb(&st, &pb);
    ck_assert_int_eq(pb.code, 40002);
    ck_assert_str_eq(pb.message, "topic x");
}
END_TEST

static Suite *gr_message_suite(void)
{
    Suite *s = suite_create("gr_message");
    TCase *tc = tcase_create("core");

    tcase_add_test(tc, test_round_trip_v2_store_v2);
    tcase_add_test(tc, test_md5_digest_upper_hex);
    tcase_add_test(tc, test_remoting_stored_reads_as_v2);
    tcase_add_test(tc, test_compressed_body_inflated);
    tcase_add_test(tc, test_offset_id_and_delivered_topic);
    tcase_add_test(tc, test_delay_transaction_dlq);
    tcase_add_test(tc, test_gzip_body_stored_inflated);
    tcase_add_test(tc, test_send_refusals);
    tcase_add_test(tc, test_blank_born_host_is_the_peer);
    tcase_add_test(tc, test_no_property_injection);
    tcase_add_test(tc, test_time_overflow_saturates);
    tcase_add_test(tc, test_settings_producer);
    tcase_add_test(tc, test_settings_consumers);
    tcase_add_test(tc, test_code_mapping);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(gr_message_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
