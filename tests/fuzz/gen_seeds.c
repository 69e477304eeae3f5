/* gen_seeds.c: writes the seed corpora of fuzz_request, fuzz_recovery,
 * fuzz_properties, fuzz_msgprops, fuzz_sql92, and the IPv6-host records of
 * fuzz_record and fuzz_remoting_body into DIR (tests/fuzz/corpus). Run it
 * by hand after changing an input layout: gen_seeds tests/fuzz/corpus */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <event2/buffer.h>
#include <zlib.h>

#include "rmq_frame.h"
#include "rmq_message.h"

static const char *out_dir;

static void emit(const char *sub, const char *name, const void *data, size_t len)
{
    char path[1024];
    FILE *f;

    snprintf(path, sizeof(path), "%s/%s", out_dir, sub);
    mkdir(path, 0755);
    snprintf(path, sizeof(path), "%s/%s/%s", out_dir, sub, name);
    if (!(f = fopen(path, "wb")) || fwrite(data, 1, len, f) != len) {
        perror(path);
        exit(1);
    }
    fclose(f);
}

static void emit_buf(const char *sub, const char *name, struct evbuffer *b)
{
    size_t len = evbuffer_get_length(b);

    emit(sub, name, evbuffer_pullup(b, -1), len);
    evbuffer_drain(b, len);
}

/* ---- fuzz_request ---- */

static void frame(struct evbuffer *b, Rmq__Command *c, const void *body, size_t len)
{
    c->version = 1;
    if (rmq_frame_encode(b, c, body, len) != RMQ_OK)
        exit(1);
}

/* Transactions as fuzz_request signs them (even opaque; flags 8: account
 * b): a half message's send, a producer heartbeat, END_TRANSACTION commit
 * by its account and rollback by another (even offset: fuzz_request's
 * stored half message). */
static void seeds_request_tx(struct evbuffer *b)
{
    Rmq__Command c;
    Rmq__SendMessageRequest sm = RMQ__SEND_MESSAGE_REQUEST__INIT;
    Rmq__HeartbeatData hb = RMQ__HEARTBEAT_DATA__INIT;
    Rmq__ConsumerData cd = RMQ__CONSUMER_DATA__INIT, *cds[1] = { &cd };
    Rmq__EndTransactionRequest et = RMQ__END_TRANSACTION_REQUEST__INIT;
    char *pgs[] = { (char *)"g", (char *)"other" };

    rmq__command__init(&c);
    sm.producer_group = (char *)"g";
    sm.topic = (char *)"t";
    sm.default_topic = (char *)"TBW102";
    sm.properties = (char *)"TRAN_MSG\001true\002PGROUP\001g\002REAL_TOPIC\001u\002REAL_QID\0019\002";
    c.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    c.header_case = RMQ__COMMAND__HEADER_SEND;
    c.send = &sm;
    frame(b, &c, "half", 4);
    rmq__command__init(&c);
    cd.group_name = (char *)"cg";
    cd.message_model = RMQ__MESSAGE_MODEL__CLUSTERING;
    hb.client_id = (char *)"127.0.0.1@2";
    hb.producer_groups = pgs;
    hb.n_producer_groups = 2;
    hb.consumers = cds;
    hb.n_consumers = 1;
    c.code = RMQ__REQUEST_CODE__HEART_BEAT;
    c.header_case = RMQ__COMMAND__HEADER_HEARTBEAT;
    c.heartbeat = &hb;
    frame(b, &c, NULL, 0);
    c.flags = 8;
    frame(b, &c, NULL, 0);
    emit_buf("request", "tx_send_heartbeat", b);
    rmq__command__init(&c);
    et.producer_group = (char *)"g";
    et.commit_log_offset = 0;
    et.msg_id = (char *)"u1";
    et.state = RMQ__TRANSACTION_STATE__TX_ROLLBACK;
    c.code = RMQ__REQUEST_CODE__END_TRANSACTION;
    c.header_case = RMQ__COMMAND__HEADER_END_TRANSACTION;
    c.end_transaction = &et;
    c.flags = 8;
    frame(b, &c, NULL, 0);
    c.flags = 0;
    et.state = RMQ__TRANSACTION_STATE__TX_COMMIT;
    frame(b, &c, NULL, 0);
    et.commit_log_offset = 77;
    frame(b, &c, NULL, 0);
    emit_buf("request", "end_transaction", b);
}

static void seeds_request(void)
{
    struct evbuffer *b = evbuffer_new();
    Rmq__Command c;
    Rmq__TopicConfig tc = RMQ__TOPIC_CONFIG__INIT, *tcs[1] = { &tc };
    Rmq__DataVersion dv = RMQ__DATA_VERSION__INIT;
    Rmq__RegisterBrokerRequest rb = RMQ__REGISTER_BROKER_REQUEST__INIT;
    Rmq__UnregisterBrokerRequest ub = RMQ__UNREGISTER_BROKER_REQUEST__INIT;
    Rmq__TopicRequest tr = RMQ__TOPIC_REQUEST__INIT;
    Rmq__KvConfig kv = RMQ__KV_CONFIG__INIT;
    Rmq__BrokerPermRequest bp = RMQ__BROKER_PERM_REQUEST__INIT;
    Rmq__SendMessageRequest sm = RMQ__SEND_MESSAGE_REQUEST__INIT;
    Rmq__PullMessageRequest pm = RMQ__PULL_MESSAGE_REQUEST__INIT;
    Rmq__HeartbeatData hb = RMQ__HEARTBEAT_DATA__INIT;
    Rmq__ConsumerData cd = RMQ__CONSUMER_DATA__INIT, *cds[1] = { &cd };
    Rmq__SubscriptionData sd = RMQ__SUBSCRIPTION_DATA__INIT, *sds[1] = { &sd };
    Rmq__ConsumerSendMsgBackRequest sb = RMQ__CONSUMER_SEND_MSG_BACK_REQUEST__INIT;
    uint8_t batch[256];
    rmq_batch_entry_t e = { 0, (const uint8_t *)"hello", 5, "KEYS\001k1\002", 8 };
    size_t blen;

    tc.topic_name = (char *)"TopicA";
    tc.read_queue_nums = tc.write_queue_nums = 4;
    tc.perm = 6;
    dv.timestamp = 1;
    dv.counter = 2;
    rb.cluster_name = (char *)"DefaultCluster";
    rb.broker_name = (char *)"broker-a";
    rb.broker_addr = (char *)"127.0.0.1:10911";
    rb.ha_server_addr = (char *)"127.0.0.1:10912";
    rb.data_version = &dv;
    rb.topics = tcs;
    rb.n_topics = 1;
    rb.broker_perm = 6;
    rb.epoch = 5;

    /* register, route, cluster info, topic list */
    rmq__command__init(&c);
    c.code = RMQ__REQUEST_CODE__REGISTER_BROKER;
    c.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER;
    c.register_broker = &rb;
    frame(b, &c, NULL, 0);
    rb.broker_id = 1;
    rb.broker_addr = (char *)"127.0.0.1:10921";
    frame(b, &c, NULL, 0);
    rmq__command__init(&c);
    tr.topic = (char *)"TopicA";
    c.code = RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC;
    c.header_case = RMQ__COMMAND__HEADER_TOPIC;
    c.topic = &tr;
    frame(b, &c, NULL, 0);
    rmq__command__init(&c);
    c.code = RMQ__REQUEST_CODE__GET_BROKER_CLUSTER_INFO;
    frame(b, &c, NULL, 0);
    c.code = RMQ__REQUEST_CODE__GET_ALL_TOPIC_LIST_FROM_NAMESERVER;
    frame(b, &c, NULL, 0);
    emit_buf("request", "register_route", b);

    /* register, wipe perm, unregister, delete topic, expiry */
    rmq__command__init(&c);
    c.code = RMQ__REQUEST_CODE__REGISTER_BROKER;
    c.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER;
    c.register_broker = &rb;
    frame(b, &c, NULL, 0);
    rmq__command__init(&c);
    bp.broker_name = (char *)"broker-a";
    c.code = RMQ__REQUEST_CODE__WIPE_WRITE_PERM_OF_BROKER;
    c.header_case = RMQ__COMMAND__HEADER_BROKER_PERM;
    c.broker_perm = &bp;
    frame(b, &c, NULL, 0);
    rmq__command__init(&c);
    ub.cluster_name = rb.cluster_name;
    ub.broker_name = rb.broker_name;
    ub.broker_addr = rb.broker_addr;
    ub.broker_id = 1;
    ub.epoch = 5;
    c.code = RMQ__REQUEST_CODE__UNREGISTER_BROKER;
    c.header_case = RMQ__COMMAND__HEADER_UNREGISTER_BROKER;
    c.unregister_broker = &ub;
    frame(b, &c, NULL, 0);
    rmq__command__init(&c);
    c.code = RMQ__REQUEST_CODE__DELETE_TOPIC_IN_NAMESRV;
    c.header_case = RMQ__COMMAND__HEADER_TOPIC;
    c.topic = &tr;
    frame(b, &c, NULL, 0);
    rmq__command__init(&c);
    c.code = RMQ__REQUEST_CODE__HEART_BEAT;
    c.opaque = 8;
    c.version = 5000;
    frame(b, &c, NULL, 0);
    emit_buf("request", "register_wipe_unregister", b);

    /* the broker's registration flow: version query, whole table compressed
     * in the body, delta over it, query again, route */
    rb.broker_id = 0;
    rb.broker_addr = (char *)"127.0.0.1:10911";
    rb.topics = NULL;
    rb.n_topics = 0;
    rmq__command__init(&c);
    c.code = RMQ__REQUEST_CODE__QUERY_DATA_VERSION;
    c.header_case = RMQ__COMMAND__HEADER_REGISTER_BROKER;
    c.register_broker = &rb;
    frame(b, &c, NULL, 0);
    {
        Rmq__TopicConfigTable tab = RMQ__TOPIC_CONFIG_TABLE__INIT;
        uint8_t raw[256], z[512];
        uLongf zlen = sizeof z;
        tab.topics = tcs;
        tab.n_topics = 1;
        tab.data_version = &dv;
        size_t rawlen = rmq__topic_config_table__pack(&tab, raw);
        if (compress2(z, &zlen, raw, rawlen, Z_BEST_SPEED) != Z_OK)
            exit(1);
        rb.topics_in_body = 1;
        c.code = RMQ__REQUEST_CODE__REGISTER_BROKER;
        frame(b, &c, z, zlen);
    }
    Rmq__DataVersion base = dv;
    rb.topics_in_body = 0;
    rb.delta = 1;
    rb.base_version = &base;
    dv.counter = 3;
    tc.topic_name = (char *)"TopicB";
    rb.topics = tcs;
    rb.n_topics = 1;
    frame(b, &c, NULL, 0);
    rb.delta = 0;
    rb.base_version = NULL;
    rb.topics = NULL;
    rb.n_topics = 0;
    c.code = RMQ__REQUEST_CODE__QUERY_DATA_VERSION;
    frame(b, &c, NULL, 0);
    rmq__command__init(&c);
    tr.topic = (char *)"TopicB";
    c.code = RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC;
    c.header_case = RMQ__COMMAND__HEADER_TOPIC;
    c.topic = &tr;
    frame(b, &c, NULL, 0);
    emit_buf("request", "register_compressed_delta", b);
    tc.topic_name = (char *)"TopicA";

    /* KV */
    rmq__command__init(&c);
    kv.namespace_ = (char *)"ORDER_TOPIC_CONFIG";
    kv.key = (char *)"TopicA";
    kv.value = (char *)"broker-a:4";
    c.code = RMQ__REQUEST_CODE__PUT_KV_CONFIG;
    c.header_case = RMQ__COMMAND__HEADER_KV;
    c.kv = &kv;
    frame(b, &c, NULL, 0);
    c.code = RMQ__REQUEST_CODE__GET_KV_CONFIG;
    frame(b, &c, NULL, 0);
    c.code = RMQ__REQUEST_CODE__DELETE_KV_CONFIG;
    frame(b, &c, NULL, 0);
    emit_buf("request", "kv", b);

    /* send, batch send, pull, heartbeat, send back */
    rmq__command__init(&c);
    sm.producer_group = (char *)"pg";
    sm.topic = (char *)"TopicA";
    sm.default_topic = (char *)"TBW102";
    sm.default_topic_queue_nums = 4;
    sm.queue_id = 1;
    sm.properties = (char *)"TAGS\001TagA\002KEYS\001k1 k2\002";
    c.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    c.header_case = RMQ__COMMAND__HEADER_SEND;
    c.send = &sm;
    frame(b, &c, "hello", 5);
    emit_buf("request", "send", b);
    blen = rmq_batch_encode(&e, batch);
    blen += rmq_batch_encode(&e, batch + blen);
    sm.batch = 1;
    c.code = RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE;
    frame(b, &c, batch, blen);
    emit_buf("request", "send_batch", b);
    rmq__command__init(&c);
    pm.consumer_group = (char *)"cg";
    pm.topic = (char *)"TopicA";
    pm.max_msg_nums = 32;
    pm.sys_flag = 2;
    pm.suspend_timeout_millis = 15000;
    pm.subscription = (char *)"TagA || TagB";
    c.code = RMQ__REQUEST_CODE__PULL_MESSAGE;
    c.header_case = RMQ__COMMAND__HEADER_PULL;
    c.pull = &pm;
    frame(b, &c, NULL, 0);
    emit_buf("request", "pull", b);
    rmq__command__init(&c);
    sd.topic = (char *)"TopicA";
    sd.sub_string = (char *)"TagA||TagB";
    cd.group_name = (char *)"cg";
    cd.subscriptions = sds;
    cd.n_subscriptions = 1;
    hb.client_id = (char *)"127.0.0.1@1";
    hb.consumers = cds;
    hb.n_consumers = 1;
    c.code = RMQ__REQUEST_CODE__HEART_BEAT;
    c.header_case = RMQ__COMMAND__HEADER_HEARTBEAT;
    c.heartbeat = &hb;
    frame(b, &c, NULL, 0);
    rmq__command__init(&c);
    sb.offset = 1234;
    sb.group = (char *)"cg";
    sb.origin_msg_id = (char *)"7F00000100002A9F00000000000004D2";
    sb.origin_topic = (char *)"TopicA";
    c.code = RMQ__REQUEST_CODE__CONSUMER_SEND_MSG_BACK;
    c.header_case = RMQ__COMMAND__HEADER_SEND_BACK;
    c.send_back = &sb;
    frame(b, &c, NULL, 0);
    emit_buf("request", "heartbeat_sendback", b);
    seeds_request_tx(b);
    evbuffer_free(b);
}

/* ---- fuzz_recovery ---- */

#define SEG_SIZE 36864

/* A record; hosts: its RMQ_SYSFLAG_* IPv6 host bits (::1 for those hosts). */
static size_t put_record_hosts(uint8_t *out, int64_t phys, int32_t qid, int64_t qoff, const char *topic,
                               const char *body, int32_t hosts)
{
    rmq_record_t r = { 0 };

    r.sys_flag = hosts;
    if (hosts) {                     /* (the IPv4-only seeds predate hosts) */
        r.born_ip6[15] = r.store_ip6[15] = 1;
        r.born_ip = (hosts & RMQ_SYSFLAG_BORNHOST_V6) ? 0 : 0x7F000001;
        r.store_ip = (hosts & RMQ_SYSFLAG_STOREHOST_V6) ? 0 : 0x7F000001;
        r.born_port = 40000;
        r.store_port = 10911;
    }
    r.queue_id = qid;
    r.queue_offset = qoff;
    r.phys_offset = phys;
    r.born_timestamp = r.store_timestamp = 1700000000000 + (qoff & 0xffff);
    r.body = (const uint8_t *)body;
    r.body_len = (uint32_t)strlen(body);
    r.topic = topic;
    r.topic_len = (uint8_t)strlen(topic);
    r.properties = "TAGS\001a\002";
    r.properties_len = 7;
    return rmq_record_encode(&r, out);
}

static size_t put_record(uint8_t *out, int64_t phys, int32_t qid, int64_t qoff, const char *topic,
                         const char *body)
{
    return put_record_hosts(out, phys, qid, qoff, topic, body, 0);
}

static void put_be(uint8_t *p, uint64_t v, int n)
{
    for (int i = 0; i < n; i++)
        p[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
}

/* header: flags, checkpoint offset, cq length; then cq bytes, then the log */
static void emit_recovery(const char *name, int flags, uint64_t cp, const uint8_t *cq, size_t cq_len,
                          const uint8_t *log, size_t log_len)
{
    uint8_t *buf = malloc(11 + cq_len + log_len);

    buf[0] = (uint8_t)flags;
    put_be(buf + 1, cp, 8);
    put_be(buf + 9, cq_len, 2);
    if (cq_len)
        memcpy(buf + 11, cq, cq_len);
    memcpy(buf + 11 + cq_len, log, log_len);
    emit("recovery", name, buf, 11 + cq_len + log_len);
    free(buf);
}

static void seeds_recovery(void)
{
    uint8_t *log = calloc(2, SEG_SIZE), cq[20 * 8] = { 0 };
    size_t pos = 0, n = 0, torn;
    int64_t qoff[2] = { 0, 0 };

    while (pos < 1500) {
        int q = (int)(n % 2);
        size_t rs = put_record(log + pos, (int64_t)pos, q, qoff[q], q ? "T" : "TopicB",
                               n % 3 ? "body" : "a longer message body");

        if (q == 0 && qoff[0] < 8) {
            put_be(cq + qoff[0] * 20, pos, 8);
            put_be(cq + qoff[0] * 20 + 8, rs, 4);
        }
        qoff[q]++;
        pos += rs;
        n++;
    }
    emit_recovery("clean_few", 2, pos, NULL, 0, log, pos + 64);
    emit_recovery("crash_few", 1, 0, NULL, 0, log, pos + 64);
    torn = pos - 30;
    emit_recovery("crash_torn", 1 | 2, 200, NULL, 0, log, torn);
    emit_recovery("crash_fixcrc", 1 | 4 | 8, 0, NULL, 0, log, pos);
    emit_recovery("clean_cq", 2 | 16, pos, cq, sizeof(cq), log, pos);
    emit_recovery("crash_cq", 1 | 16, 0, cq, sizeof(cq), log, pos);
    /* a full first file ending in a blank, records in the second */
    {
        uint8_t *l2 = calloc(2, SEG_SIZE);
        size_t p2 = 0;

        memcpy(l2, log, pos);
        p2 = pos;
        put_be(l2 + p2, SEG_SIZE - p2, 4);
        put_be(l2 + p2 + 4, RMQ_MAGIC_BLANK, 4);
        p2 = SEG_SIZE;
        p2 += put_record(l2 + p2, (int64_t)p2, 0, qoff[0], "TopicB", "second file");
        emit_recovery("two_files", 1, 0, NULL, 0, l2, p2 + 16);
        emit_recovery("two_files_clean", 2, (uint64_t)p2, NULL, 0, l2, p2 + 16);
        free(l2);
    }
    /* regressions: a topic that is a path, a queue offset near INT64_MAX, a
     * jump far ahead of the queue (each must stay out of the index) */
    {
        uint8_t *l3 = calloc(1, SEG_SIZE);
        size_t p3 = put_record(l3, 0, 0, 0, "../escape", "x");

        emit_recovery("bad_topic", 1, 0, NULL, 0, l3, p3 + 16);
        memset(l3, 0, SEG_SIZE);
        p3 = put_record(l3, 0, 0, INT64_MAX - 5, "T", "x");
        emit_recovery("huge_queue_offset", 1, 0, NULL, 0, l3, p3 + 16);
        memset(l3, 0, SEG_SIZE);
        p3 = put_record(l3, 0, 0, 0, "T", "x");
        p3 += put_record(l3 + p3, (int64_t)p3, 0, 1000000, "T", "y");
        emit_recovery("queue_offset_jump", 1, 0, NULL, 0, l3, p3 + 16);
        /* an old store's IPv4 records followed by records with IPv6 hosts */
        memset(l3, 0, SEG_SIZE);
        p3 = 0;
        for (int i = 0; i < 8; i++)
            p3 += put_record_hosts(l3 + p3, (int64_t)p3, 0, i, "T", "mixed", i < 4 ? 0 : (i - 3) << 4 & 0x30);
        emit_recovery("mixed_hosts", 1, 0, NULL, 0, l3, p3 + 16);
        emit_recovery("mixed_hosts_clean", 2, (uint64_t)p3, NULL, 0, l3, p3 + 16);
        free(l3);
    }
    free(log);
}

/* ---- fuzz_record / fuzz_remoting_body ---- */

/* Records of each host layout, alone and as one pull body. */
static void seeds_record_hosts(void)
{
    static const char *const names[4] = {"hosts_ipv4", "hosts_born6", "hosts_store6", "hosts_both6"};
    uint8_t all[4 * 256];
    size_t pos = 0;

    for (int32_t h = 0; h < 4; h++) {
        size_t n = put_record_hosts(all + pos, (int64_t)pos, 1, h, "TopicV6", "body", h << 4);
        emit("record", names[h], all + pos, n);
        emit("remoting_body", names[h], all + pos, n);
        pos += n;
    }
    emit("record", "hosts_all", all, pos);
    emit("remoting_body", "hosts_all", all, pos);
}

/* ---- fuzz_properties / fuzz_msgprops ---- */

static void seed_text(const char *sub, const char *name, int sel, const char *text)
{
    size_t len = strlen(text);
    char *buf = malloc(len + 1);

    buf[0] = (char)sel;
    memcpy(buf + 1, text, len);
    emit(sub, name, buf, len + 1);
    free(buf);
}

static void seeds_properties(void)
{
    seed_text("properties", "broker", 0,
              "brokerClusterName=DefaultCluster\nbrokerName=broker-a\nbrokerId=0\n"
              "deleteWhen=04\nfileReservedTime=48\nbrokerRole=SYNC_MASTER\n"
              "flushDiskType=SYNC_FLUSH\nlistenPort=10911\nnamesrvAddr=127.0.0.1:9876;h:1\n"
              "storePathRootDir=/tmp/store\nmapedFileSizeCommitLog=1048576\n");
    seed_text("properties", "namesrv", 1,
              "listenPort=9876\nbindAddress=0.0.0.0\nkvConfigPath=/tmp/kv.json\n"
              "logLevel=warn\nserverChannelMaxIdleTimeSeconds=120\n");
    seed_text("properties", "escapes", 0,
              "# comment\n! other comment\n  brokerName : broker\\u002Db \\\n   continued\n"
              "storePathRootDir=\\ lead\\ttab\\\\ \\u00e9\\uD83D\\uDE00\nlogPath   /x/y\r\n"
              "key\\=with\\:sep=v\nmappedFileSizeCommitLog=65536\n");
    seed_text("properties", "bad_values", 0,
              "brokerId=abc\nlistenPort=99999\nbrokerRole=MASTER\nwarmMapedFileEnable=yes\n");
    seed_text("properties", "bad_unicode", 3, "a=\\u12\nb=\\uD800x\nc=\\uZZZZ\nd=1\n");
    seed_text("msgprops", "tags", 4, "TAGSTAGS\001TagA\002KEYS\001k1 k2\002");
    seed_text("msgprops", "uniq", 8, "UNIQ_KEYKEYS\001a\002UNIQ_KEY\001ABC\002WAIT\001true");
    seed_text("msgprops", "odd", 1, "\001\002\001\001x\002\002");
}

/* ---- fuzz_sql92: an expression, a NUL, a properties string ---- */

static void seed_sql92(const char *name, const char *expr, const char *props)
{
    size_t el = strlen(expr), pl = strlen(props);
    char *buf = malloc(el + 1 + pl);

    memcpy(buf, expr, el + 1);
    memcpy(buf + el + 1, props, pl);
    emit("sql92", name, buf, el + 1 + pl);
    free(buf);
}

static void seeds_sql92(void)
{
    seed_sql92("compare", "a > 5 AND b = 'x' OR c <= 1.5E2", "a\0016\002b\001x");
    seed_sql92("in-between", "TAGS IN ('TagA', 'TagB') AND n NOT BETWEEN -1 AND 10L", "TAGS\001TagA\002n\00111");
    seed_sql92("null-bool", "NOT (a IS NULL) AND (b > 1) = TRUE -- c\n", "a\001true\002b\0012");
    seed_sql92("comment", "/* x */ s <> 'it''s' AND .5 < f", "s\001y\002f\0011");
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: gen_seeds CORPUS_DIR\n");
        return 2;
    }
    out_dir = argv[1];
    seeds_request();
    seeds_recovery();
    seeds_record_hosts();
    seeds_properties();
    seeds_sql92();
    return 0;
}
