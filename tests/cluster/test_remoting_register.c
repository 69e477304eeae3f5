/* test_remoting_register.c: RocketMQ brokers' name-server requests on
 * mqnamesrv's port (a real mqnamesrv on loopback, a blocking remoting
 * client speaking as a RocketMQ broker would).
 *
 * register_json: REGISTER_BROKER with a JSON RegisterBrokerBody (and its
 * bodyCrc32) puts the master's topics in the route; a slave's registration
 * is answered with the master's address and HA address, and the KV table
 * of ORDER_TOPIC_CONFIG comes back as the body; QUERY_DATA_VERSION says
 * changed=false for the registered version and true for another; wiping
 * and adding write permission count the broker's topics and change the
 * routes' perm; DELETE_TOPIC_IN_NAMESRV with another cluster's name keeps
 * the topic, with its own drops it; UNREGISTER_BROKER of
 * the slave then the master empties the route.
 *
 * register_compressed: the zlib form RocketMQ sends with compressed=true
 * registers the same topics (in both header encodings); closing the
 * connection a broker registered over takes it out of the route, as for a
 * native broker.
 *
 * bad_input: bad JSON, a missing header field, a missing dataVersion, a
 * topic without perm, a body that is not zlib, a truncated zlib form, a
 * wrong bodyCrc32 and a bad DataVersion body each get SYSTEM_ERROR with a
 * remark naming what was wrong, and change nothing.
 *
 * config_and_expiry: UPDATE_NAMESRV_CONFIG applies brokerChannelExpiredTime
 * at once (GET_NAMESRV_CONFIG shows it, and a silent broker leaves the
 * route after it), refuses the config paths with NO_PERMISSION as
 * RocketMQ does, and a key that cannot change at runtime, an unknown key
 * and a bad value with a remark naming them.
 *
 * rmq_broker_remoting: mqbroker with namesrvProtocol=remoting registers
 * with mqnamesrv as a RocketMQ broker would (one master with the JSON body,
 * one with compressedRegister=true, and a slave of it): a topic created on
 * each master reaches the route, the slave learns its master's HA address
 * from the answer and replicates, and stopped, each master unregisters
 * (UNREGISTER_BROKER answered) and leaves the route.
 *
 * rmq_broker_remoting_signed: with aclEnable=true on the name server, a
 * broker's registration signed with ACL 1.0 (aclAccessKey, an admin) is
 * accepted and an unsigned one refused with NO_PERMISSION. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "harness.h"
#include "rmq_codec_remoting.h"
#include "rmq_json.h"
#include "remwire.h"

#define WAIT_MS 30000
#define MASTER "127.0.0.1:31911"
#define MASTER_HA "127.0.0.1:31912"
#define SLAVE "127.0.0.1:31921"

static const char *case_dir;
static char ns_addr[64];

static void setup(void)
{
    case_dir = hn_case_begin("remoting_register");
}

static void teardown(void)
{
    hn_case_end();
}

static void ns_start(hn_daemon_t *d)
{
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", ns_addr, sizeof ns_addr),
                     0);
}

/* One request on fd with a body; returns the response code (-1: none). */
static int call_on(int fd, int type, int code, const rmq_remoting_field_t *f, size_t n, const void *body,
                   size_t len, rem_resp_t *r)
{
    static int32_t opaque = 100;
    int32_t op = ++opaque;

    rem_send(fd, type, code, op, 0, f, n, body, len);
    if (rem_recv(fd, r, 5000) != 0)
        return -1;
    ck_assert_int_eq(r->msg.opaque, op);
    return r->msg.code;
}

/* call_on over a fresh connection, with the response cleared unless r. */
static int call(int code, const rmq_remoting_field_t *f, size_t n, const void *body, size_t len, rem_resp_t *r)
{
    rem_resp_t tmp;
    int fd = rem_connect(ns_addr);
    int rc = call_on(fd, RMQ_REMOTING_JSON, code, f, n, body, len, r ? r : &tmp);

    close(fd);
    if (!r && rc >= 0)
        rem_resp_clear(&tmp);
    return rc;
}

static rmq_json_t *body_json(const rem_resp_t *r)
{
    char err[128];
    rmq_json_t *j = rmq_json_parse((const char *)r->msg.body, r->msg.body_len, err, sizeof err);

    ck_assert_msg(j != NULL, "body is not JSON: %s: %.*s", err, (int)r->msg.body_len, (const char *)r->msg.body);
    return j;
}

/* The route of topic: 17 when absent; else 0 with *perm of broker name's
 * queue data (-1 when it has none) and its master address in addr. */
static int route_of(const char *topic, const char *name, int64_t *perm, char *addr, size_t alen)
{
    rmq_remoting_field_t f = { "topic", (char *)topic };
    rem_resp_t r;
    int code = call(105, &f, 1, NULL, 0, &r);

    if (code != RMQ_REMOTING_SUCCESS) {
        rem_resp_clear(&r);
        return code;
    }
    rmq_json_t *j = body_json(&r);
    const rmq_json_t *qd = rmq_json_get(j, "queueDatas"), *bd = rmq_json_get(j, "brokerDatas");
    *perm = -1;
    addr[0] = '\0';
    for (size_t i = 0; qd && i < qd->n; i++)
        if (strcmp(rmq_json_scalar(rmq_json_get(qd->items[i], "brokerName")), name) == 0)
            ck_assert_int_eq(rmq_json_int(rmq_json_get(qd->items[i], "perm"), 0, 15, perm), 0);
    for (size_t i = 0; bd && i < bd->n; i++) {
        const char *a = rmq_json_scalar(rmq_json_get(rmq_json_get(bd->items[i], "brokerAddrs"), "0"));
        if (strcmp(rmq_json_scalar(rmq_json_get(bd->items[i], "brokerName")), name) == 0 && a)
            snprintf(addr, alen, "%s", a);
    }
    rmq_json_free(j);
    rem_resp_clear(&r);
    return 0;
}

/* The header of a registration of broker-m id `id` at addr. */
static size_t reg_fields(rmq_remoting_field_t *f, const char *id, const char *addr, const char *ha,
                         const char *compressed, char *crc)
{
    size_t n = 0;
    f[n++] = (rmq_remoting_field_t){ "clusterName", "MigCluster" };
    f[n++] = (rmq_remoting_field_t){ "brokerName", "broker-m" };
    f[n++] = (rmq_remoting_field_t){ "brokerAddr", (char *)addr };
    f[n++] = (rmq_remoting_field_t){ "brokerId", (char *)id };
    f[n++] = (rmq_remoting_field_t){ "haServerAddr", (char *)ha };
    f[n++] = (rmq_remoting_field_t){ "compressed", (char *)compressed };
    if (crc)
        f[n++] = (rmq_remoting_field_t){ "bodyCrc32", crc };
    return n;
}

/* A RegisterBrokerBody as RocketMQ 4.9's fastjson writes it, at version counter. */
static int json_body(char *out, size_t len, int counter)
{
    return snprintf(out, len,
                    "{\"filterServerList\":[],\"topicConfigSerializeWrapper\":{\"dataVersion\":"
                    "{\"counter\":%d,\"timestamp\":1700000000000},\"topicConfigTable\":{"
                    "\"MigT1\":{\"order\":false,\"perm\":6,\"readQueueNums\":4,\"topicFilterType\":"
                    "\"SINGLE_TAG\",\"topicName\":\"MigT1\",\"topicSysFlag\":0,\"writeQueueNums\":4},"
                    "\"MigT2\":{\"order\":true,\"perm\":6,\"readQueueNums\":2,\"topicFilterType\":"
                    "\"SINGLE_TAG\",\"topicName\":\"MigT2\",\"topicSysFlag\":0,\"writeQueueNums\":2}}}}",
                    counter);
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24), p[1] = (uint8_t)(v >> 16), p[2] = (uint8_t)(v >> 8), p[3] = (uint8_t)v;
}

/* Appends an i32 length and s to buf at *pos. */
static void add_chunk(uint8_t *buf, size_t *pos, const char *s)
{
    put_be32(buf + *pos, (uint32_t)strlen(s));
    memcpy(buf + *pos + 4, s, strlen(s));
    *pos += 4 + strlen(s);
}

/* RegisterBrokerBody.encode(true) of topics lines[0..n); returns the
 * compressed length (truncate_to > 0: the raw form cut to that many bytes). */
static size_t compressed_body(uint8_t *out, size_t cap, const char *const *lines, size_t n, size_t truncate_to)
{
    uint8_t raw[4096];
    size_t pos = 0;

    add_chunk(raw, &pos, "{\"counter\":3,\"timestamp\":1700000000001}");
    put_be32(raw + pos, (uint32_t)n);
    pos += 4;
    for (size_t i = 0; i < n; i++)
        add_chunk(raw, &pos, lines[i]);
    add_chunk(raw, &pos, "[]");
    uLongf zlen = cap;
    ck_assert_int_eq(compress2(out, &zlen, raw, truncate_to ? truncate_to : pos, Z_BEST_COMPRESSION), Z_OK);
    return zlen;
}

START_TEST(register_json)
{
    hn_daemon_t ns;
    rmq_remoting_field_t f[8];
    rem_resp_t r;
    char body[2048], crc[16], addr[64];
    int64_t perm;

    ns_start(&ns);
    rmq_remoting_field_t kv[3] = { { "namespace", "ORDER_TOPIC_CONFIG" }, { "key", "MigT2" },
                                   { "value", "broker-m:2" } };
    ck_assert_int_eq(call(100, kv, 3, NULL, 0, NULL), RMQ_REMOTING_SUCCESS);

    int len = json_body(body, sizeof body, 1);
    snprintf(crc, sizeof crc, "%" PRIu32, (uint32_t)(crc32(0, (const Bytef *)body, (uInt)len) & 0x7fffffff));
    int mfd = rem_connect(ns_addr);
    size_t n = reg_fields(f, "0", MASTER, MASTER_HA, "false", crc);
    ck_assert_int_eq(call_on(mfd, RMQ_REMOTING_JSON, 103, f, n, body, (size_t)len, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "masterAddr"), "");
    rmq_json_t *j = body_json(&r);
    ck_assert_str_eq(rmq_json_scalar(rmq_json_get(rmq_json_get(j, "table"), "MigT2")), "broker-m:2");
    rmq_json_free(j);
    rem_resp_clear(&r);
    ck_assert_int_eq(route_of("MigT1", "broker-m", &perm, addr, sizeof addr), 0);
    ck_assert_int_eq(perm, 6);
    ck_assert_str_eq(addr, MASTER);
    ck_assert_int_eq(route_of("MigT2", "broker-m", &perm, addr, sizeof addr), 0);

    /* the slave learns its master's addresses */
    int sfd = rem_connect(ns_addr);
    n = reg_fields(f, "1", SLAVE, "", "false", NULL);
    ck_assert_int_eq(call_on(sfd, RMQ_REMOTING_ROCKETMQ, 103, f, n, body, (size_t)len, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "masterAddr"), MASTER);
    ck_assert_str_eq(rem_field(&r, "haServerAddr"), MASTER_HA);
    rem_resp_clear(&r);

    /* data version: unchanged, then changed */
    n = reg_fields(f, "0", MASTER, MASTER_HA, "false", NULL) - 2;
    const char *same = "{\"counter\":1,\"timestamp\":1700000000000}";
    const char *other = "{\"counter\":2,\"timestamp\":1700000000000}";
    ck_assert_int_eq(call_on(mfd, RMQ_REMOTING_JSON, 322, f, n, same, strlen(same), &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "changed"), "false");
    rem_resp_clear(&r);
    ck_assert_int_eq(call_on(mfd, RMQ_REMOTING_JSON, 322, f, n, other, strlen(other), &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "changed"), "true");
    rem_resp_clear(&r);

    /* write permission */
    rmq_remoting_field_t bn = { "brokerName", "broker-m" };
    ck_assert_int_eq(call(205, &bn, 1, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "wipeTopicCount"), "2");
    rem_resp_clear(&r);
    ck_assert_int_eq(route_of("MigT1", "broker-m", &perm, addr, sizeof addr), 0);
    ck_assert_int_eq(perm, 4);
    ck_assert_int_eq(call(327, &bn, 1, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rem_field(&r, "addTopicCount"), "2");
    rem_resp_clear(&r);
    ck_assert_int_eq(route_of("MigT1", "broker-m", &perm, addr, sizeof addr), 0);
    ck_assert_int_eq(perm, 6);

    /* delete a topic, then unregister slave and master */
    rmq_remoting_field_t t1_other[2] = { { "topic", "MigT1" }, { "clusterName", "OtherCluster" } };
    ck_assert_int_eq(call(216, t1_other, 2, NULL, 0, NULL), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(route_of("MigT1", "broker-m", &perm, addr, sizeof addr), 0);
    rmq_remoting_field_t t2[2] = { { "topic", "MigT2" }, { "clusterName", "MigCluster" } };
    ck_assert_int_eq(call(216, t2, 2, NULL, 0, NULL), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(route_of("MigT2", "broker-m", &perm, addr, sizeof addr), RMQ_REMOTING_TOPIC_NOT_EXIST);
    n = reg_fields(f, "1", SLAVE, "", "false", NULL) - 2;
    ck_assert_int_eq(call(104, f, n, NULL, 0, NULL), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(route_of("MigT1", "broker-m", &perm, addr, sizeof addr), 0);
    n = reg_fields(f, "0", MASTER, "", "false", NULL) - 2;
    ck_assert_int_eq(call(104, f, n, NULL, 0, NULL), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(route_of("MigT1", "broker-m", &perm, addr, sizeof addr), RMQ_REMOTING_TOPIC_NOT_EXIST);
    close(sfd);
    close(mfd);
    hn_case_passed();
}
END_TEST

START_TEST(register_compressed)
{
    hn_daemon_t ns;
    rmq_remoting_field_t f[8];
    rem_resp_t r;
    uint8_t z[4096];
    char addr[64];
    int64_t perm;
    static const char *const lines[] = { "MigZ1 8 8 6 SINGLE_TAG", "MigZ2 1 1 4 MULTI_TAG" };

    ns_start(&ns);
    size_t zlen = compressed_body(z, sizeof z, lines, 2, 0);
    int fd = rem_connect(ns_addr);
    size_t n = reg_fields(f, "0", MASTER, MASTER_HA, "true", NULL);
    ck_assert_int_eq(call_on(fd, RMQ_REMOTING_ROCKETMQ, 103, f, n, z, zlen, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(r.msg.serialize_type, RMQ_REMOTING_ROCKETMQ);
    rem_resp_clear(&r);
    ck_assert_int_eq(route_of("MigZ1", "broker-m", &perm, addr, sizeof addr), 0);
    ck_assert_int_eq(perm, 6);
    ck_assert_str_eq(addr, MASTER);
    ck_assert_int_eq(route_of("MigZ2", "broker-m", &perm, addr, sizeof addr), 0);
    ck_assert_int_eq(perm, 4);
    close(fd);               /* the broker's connection closes: it leaves the route */
    for (int i = 0; i < 100 && route_of("MigZ1", "broker-m", &perm, addr, sizeof addr) == 0; i++)
        usleep(50 * 1000);
    ck_assert_int_eq(route_of("MigZ1", "broker-m", &perm, addr, sizeof addr), RMQ_REMOTING_TOPIC_NOT_EXIST);
    hn_case_passed();
}
END_TEST

/* A registration that must be refused with a remark holding want. */
static void refused(int code, const rmq_remoting_field_t *f, size_t n, const void *body, size_t len,
                    const char *want)
{
    rem_resp_t r;

    ck_assert_int_eq(call(code, f, n, body, len, &r), RMQ_REMOTING_SYSTEM_ERROR);
    ck_assert_msg(strstr(r.msg.remark, want) != NULL, "remark '%s' does not name '%s'", r.msg.remark, want);
    rem_resp_clear(&r);
}

START_TEST(bad_input)
{
    hn_daemon_t ns;
    rmq_remoting_field_t f[8];
    char body[2048], addr[64];
    uint8_t z[4096];
    int64_t perm;
    static const char *const lines[] = { "MigZ1 8 8 6 SINGLE_TAG" }, *const bad_line[] = { "MigZ1 8 x 6 SINGLE_TAG" };

    ns_start(&ns);
    size_t n = reg_fields(f, "0", MASTER, MASTER_HA, "false", NULL);
    refused(103, f, n, "{\"topicConfigSerializeWrapper\":", 31, "not JSON");
    refused(103, f, 2, "{}", 2, "brokerAddr");
    const char *nover = "{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{}}}";
    refused(103, f, n, nover, strlen(nover), "dataVersion");
    const char *noperm = "{\"topicConfigSerializeWrapper\":{\"dataVersion\":{\"counter\":1,\"timestamp\":1},"
                         "\"topicConfigTable\":{\"MigB\":{\"topicName\":\"MigB\",\"readQueueNums\":1,"
                         "\"writeQueueNums\":1}}}}";
    refused(103, f, n, noperm, strlen(noperm), "perm");
    rmq_remoting_field_t badid[8];
    memcpy(badid, f, sizeof badid);
    badid[3].value = "x";
    refused(103, badid, n, "{}", 2, "brokerId");
    int len = json_body(body, sizeof body, 1);
    n = reg_fields(f, "0", MASTER, MASTER_HA, "false", "12345");
    refused(103, f, n, body, (size_t)len, "crc32 not match");

    n = reg_fields(f, "0", MASTER, MASTER_HA, "true", NULL);
    refused(103, f, n, body, (size_t)len, "zlib");
    size_t zlen = compressed_body(z, sizeof z, lines, 1, 20);
    refused(103, f, n, z, zlen, "truncated");
    zlen = compressed_body(z, sizeof z, bad_line, 1, 0);
    refused(103, f, n, z, zlen, "MigZ1 8 x 6");

    n = reg_fields(f, "0", MASTER, MASTER_HA, "false", NULL) - 2;
    refused(322, f, n, "{\"counter\":\"a\"}", 15, "DataVersion body");
    refused(322, f, n, "[", 1, "not JSON");
    ck_assert_int_eq(route_of("MigT1", "broker-m", &perm, addr, sizeof addr), RMQ_REMOTING_TOPIC_NOT_EXIST);
    ck_assert_int_eq(route_of("MigZ1", "broker-m", &perm, addr, sizeof addr), RMQ_REMOTING_TOPIC_NOT_EXIST);
    hn_case_passed();
}
END_TEST

/* UPDATE_NAMESRV_CONFIG with text; returns the code, remark checked to hold want. */
static int update_config(const char *text, const char *want)
{
    rem_resp_t r;
    int code = call(318, NULL, 0, text, strlen(text), &r);

    if (want)
        ck_assert_msg(strstr(r.msg.remark, want) != NULL, "remark '%s' does not name '%s'", r.msg.remark, want);
    rem_resp_clear(&r);
    return code;
}

START_TEST(config_and_expiry)
{
    hn_daemon_t ns;
    rmq_remoting_field_t f[8];
    rem_resp_t r;
    char body[2048], addr[64];
    int64_t perm;

    ns_start(&ns);
    ck_assert_int_eq(update_config("kvConfigPath=/tmp/x\n", "config path"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(update_config("listenPort=1\n", "listenPort cannot change"), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(update_config("noSuchKey=1\n", "noSuchKey"), RMQ_REMOTING_SYSTEM_ERROR);
    ck_assert_int_eq(update_config("brokerChannelExpiredTime=abc\n", "brokerChannelExpiredTime"),
                     RMQ_REMOTING_SYSTEM_ERROR);
    ck_assert_int_eq(update_config("brokerChannelExpiredTime=1500\nscanNotActiveBrokerInterval=200\n", NULL),
                     RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(call(319, NULL, 0, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_ptr_nonnull(memmem(r.msg.body, r.msg.body_len, "brokerChannelExpiredTime=1500", 29));
    rem_resp_clear(&r);

    int len = json_body(body, sizeof body, 1);
    int fd = rem_connect(ns_addr);        /* stays open: the broker goes silent, not away */
    size_t n = reg_fields(f, "0", MASTER, MASTER_HA, "false", NULL);
    ck_assert_int_eq(call_on(fd, RMQ_REMOTING_JSON, 103, f, n, body, (size_t)len, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    ck_assert_int_eq(route_of("MigT1", "broker-m", &perm, addr, sizeof addr), 0);
    for (int i = 0; i < 200 && route_of("MigT1", "broker-m", &perm, addr, sizeof addr) == 0; i++)
        usleep(50 * 1000);
    ck_assert_int_eq(route_of("MigT1", "broker-m", &perm, addr, sizeof addr), RMQ_REMOTING_TOPIC_NOT_EXIST);
    close(fd);
    hn_case_passed();
}
END_TEST

/* props of an mqbroker registering over remoting (extra ends them) in buf. */
static const char *rem_broker_props(char *buf, size_t len, const char *name, int id, const char *extra)
{
    int n = snprintf(buf, len,
                     "brokerClusterName=MigCluster\nbrokerName=%s\nbrokerId=%d\nbrokerRole=%s\nlistenPort=0\n"
                     "haListenPort=0\nbrokerIP1=127.0.0.1\nstorePathRootDir=%s/store-%s-%d\n"
                     "mapedFileSizeCommitLog=16777216\nnamesrvAddr=%s\nnamesrvProtocol=remoting\n"
                     "registerNameServerPeriod=1000\n%s",
                     name, id, id ? "SLAVE" : "ASYNC_MASTER", case_dir, name, id, ns_addr, extra);
    ck_assert_msg(n > 0 && (size_t)n < len, "broker properties do not fit");
    return buf;
}

/* UPDATE_AND_CREATE_TOPIC of topic (4 queues) on the broker at addr. */
static void rem_topic_create(const char *addr, const char *topic)
{
    rmq_remoting_field_t f[] = {{"topic", (char *)topic}, {"defaultTopic", "TBW102"}, {"readQueueNums", "4"},
                                {"writeQueueNums", "4"}, {"perm", "6"}, {"topicFilterType", "SINGLE_TAG"},
                                {"topicSysFlag", "0"}, {"order", "false"}};
    rem_resp_t r;
    int fd = rem_connect(addr);
    ck_assert_int_eq(call_on(fd, RMQ_REMOTING_JSON, 17, f, sizeof f / sizeof f[0], NULL, 0, &r),
                     RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    close(fd);
}

typedef struct routed {
    const char *topic, *name, *addr;  /* addr NULL: waits for the route to go */
} routed_t;

static int routed_cond(void *arg)
{
    const routed_t *w = arg;
    int64_t perm;
    char addr[64];
    int code = route_of(w->topic, w->name, &perm, addr, sizeof addr);
    if (!w->addr)
        return code == RMQ_REMOTING_TOPIC_NOT_EXIST || (code == 0 && perm < 0);
    return code == 0 && perm == 6 && strcmp(addr, w->addr) == 0;
}

/* 1 once dir/NAME.log holds text. */
typedef struct logged {
    char path[512];
    const char *text;
} logged_t;

static int logged_cond(void *arg)
{
    const logged_t *w = arg;
    char buf[1 << 16];
    FILE *f = fopen(w->path, "r");
    size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
    if (f)
        fclose(f);
    buf[n] = '\0';
    return strstr(buf, w->text) != NULL;
}

START_TEST(rmq_broker_remoting)
{
    hn_daemon_t ns, bp, bz, sz;
    char props[2048], p_addr[64], z_addr[64], s_addr[64];

    ns_start(&ns);
    ck_assert_int_eq(hn_daemon_start_conf(&bp, case_dir, "broker/mqbroker", "bp",
                                          rem_broker_props(props, sizeof props, "broker-p", 0, ""), p_addr,
                                          sizeof p_addr), 0);
    ck_assert_int_eq(hn_daemon_start_conf(&bz, case_dir, "broker/mqbroker", "bz",
                                          rem_broker_props(props, sizeof props, "broker-z", 0,
                                                           "compressedRegister=true\n"),
                                          z_addr, sizeof z_addr), 0);
    ck_assert_int_eq(hn_daemon_start_conf(&sz, case_dir, "broker/mqbroker", "sz",
                                          rem_broker_props(props, sizeof props, "broker-z", 1, ""), s_addr,
                                          sizeof s_addr), 0);
    rem_topic_create(p_addr, "RemRegP");
    rem_topic_create(z_addr, "RemRegZ");
    routed_t wp = {"RemRegP", "broker-p", p_addr}, wz = {"RemRegZ", "broker-z", z_addr};
    ck_assert_msg(hn_wait_until(routed_cond, &wp, WAIT_MS), "broker-p's topic never reached the route");
    ck_assert_msg(hn_wait_until(routed_cond, &wz, WAIT_MS), "broker-z's topic never reached the route");

    logged_t ha = {.text = "accepted, streaming"};
    snprintf(ha.path, sizeof ha.path, "%s/bz.log", case_dir);
    ck_assert_msg(hn_wait_until(logged_cond, &ha, WAIT_MS), "the slave never reached its master's HA port");

    ck_assert_int_eq(hn_daemon_stop(&bp, 10000), 0);
    ck_assert_int_eq(hn_daemon_stop(&sz, 10000), 0);
    ck_assert_int_eq(hn_daemon_stop(&bz, 10000), 0);
    wp.addr = NULL;
    wz.addr = NULL;
    ck_assert_msg(hn_wait_until(routed_cond, &wp, 5000), "broker-p did not leave the route");
    ck_assert_msg(hn_wait_until(routed_cond, &wz, 5000), "broker-z did not leave the route");
    logged_t unreg = {.text = "unregistered from RocketMQ name server"};
    snprintf(unreg.path, sizeof unreg.path, "%s/bp.log", case_dir);
    ck_assert_msg(logged_cond(&unreg), "broker-p did not log its UNREGISTER_BROKER's answer");
    snprintf(unreg.path, sizeof unreg.path, "%s/bz.log", case_dir);
    ck_assert_msg(logged_cond(&unreg), "broker-z did not log its UNREGISTER_BROKER's answer");
    hn_case_passed();
}
END_TEST

/* A name server with aclEnable=true takes a remoting registration signed
 * with ACL 1.0 as the broker's aclAccessKey (an admin), and refuses an
 * unsigned one with a remark naming why, which the broker logs. */
START_TEST(rmq_broker_remoting_signed)
{
    hn_daemon_t ns, bs, bu;
    char acl[1024], props[2048], extra[1200], s_addr[64], u_addr[64];

    ck_assert_ptr_nonnull(hn_write_file(case_dir, "plain.acl",
                                        "account.admin.secretKey=admin-secret-1\naccount.admin.admin=true\n", acl,
                                        sizeof acl));
    snprintf(props, sizeof props, "listenPort=0\nbindAddress=127.0.0.1\naclEnable=true\naclFile=%s\n", acl);
    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "ns", props, ns_addr, sizeof ns_addr),
                     0);
    snprintf(extra, sizeof extra, "aclEnable=true\naclFile=%s\naclAccessKey=admin\naclSecretKey=admin-secret-1\n", acl);
    ck_assert_int_eq(hn_daemon_start_conf(&bs, case_dir, "broker/mqbroker", "bs",
                                          rem_broker_props(props, sizeof props, "broker-s", 0, extra), s_addr,
                                          sizeof s_addr), 0);
    ck_assert_int_eq(hn_daemon_start_conf(&bu, case_dir, "broker/mqbroker", "bu",
                                          rem_broker_props(props, sizeof props, "broker-u", 0, ""), u_addr,
                                          sizeof u_addr), 0);
    hn_log_wait_t ok = {&bs, "registered with RocketMQ name server"};
    ck_assert_msg(hn_wait_until(hn_log_wait_cond, &ok, WAIT_MS), "the signed registration was not accepted");
    hn_log_wait_t no = {&bu, "register with RocketMQ name server"};
    ck_assert_msg(hn_wait_until(hn_log_wait_cond, &no, WAIT_MS), "the unsigned broker logged no failed registration");
    ck_assert_msg(hn_daemon_log_has(&bu, "failed: no permission"), "the unsigned broker's log does not say no permission");
    ck_assert_msg(!hn_daemon_log_has(&bu, "registered with"), "an unsigned registration was accepted");
    ck_assert_int_eq(hn_daemon_stop(&bu, 10000), 0);
    ck_assert_int_eq(hn_daemon_stop(&bs, 10000), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, 10000), 0);
    hn_case_passed();
}
END_TEST

static Suite *register_suite(void)
{
    Suite *s = suite_create("remoting_register");
    TCase *tc = tcase_create("remoting_register");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, register_json);
    tcase_add_test(tc, register_compressed);
    tcase_add_test(tc, bad_input);
    tcase_add_test(tc, config_and_expiry);
    tcase_add_test(tc, rmq_broker_remoting);
    tcase_add_test(tc, rmq_broker_remoting_signed);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(register_suite());
}
