/* test_remoting.c: RocketMQ's remoting protocol on the name server's port,
 * with real mqnamesrv / mqbroker processes on loopback and a blocking
 * remoting client over plain sockets (frames built by the codec's encoder,
 * plus hand-written JSON headers the way ali-ons writes them).
 *
 * routes: an rmq broker registers a topic of 4 queues; GET_ROUTEINFO_BY_TOPIC
 * in both header encodings (each answered in its own) lists broker-a with
 * its queues and its master address under brokerAddrs "0"; an unknown topic
 * gets TOPIC_NOT_EXIST naming it; cluster info, the topic lists (all, by
 * cluster) and the system topics list the broker and its cluster.
 *
 * wire_quirks: extFields sent as JSON numbers and booleans are read as
 * text (PUT_KV_CONFIG then GET_KV_CONFIG); an unknown code gets
 * REQUEST_CODE_NOT_SUPPORTED naming it; a oneway request gets no reply; a
 * frame over maxFrameSize closes its connection without a reply; while a
 * remoting connection stays open, a native rmq client is served on the
 * same port, and the remoting connection is still served after it.
 *
 * acl: with aclEnable, a request signed with ACL 1.0 by a known account is
 * served, a wrong signature, an unknown account and a missing AccessKey
 * get NO_PERMISSION, and a non-admin account may read the route but not
 * change the KV config. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "rmq_codec_remoting.h"
#include "rmq_json.h"
#include "remwire.h"
#include "wire.h"

#define QUEUES 4
#define WAIT_MS 30000
#define NS_MAX_FRAME 65536

static const char *case_dir;
static char ns_addr[64];

static void setup(void)
{
    case_dir = hn_case_begin("remoting");
}

static void teardown(void)
{
    hn_case_end();
}

/* One request on a fresh connection; returns the response code (-1: none). */
static int rem_call(int type, int code, const rmq_remoting_field_t *fields, size_t n,
                    rem_resp_t *r)
{
    int fd = rem_connect(ns_addr);

    rem_send(fd, type, code, 42, 0, fields, n, NULL, 0);
    int rc = rem_recv(fd, r, 5000);
    close(fd);
    if (rc != 0)
        return -1;
    ck_assert_int_eq(r->msg.opaque, 42);
    ck_assert_int_eq(r->msg.serialize_type, type);
    return r->msg.code;
}

/* The response body as JSON (caller frees). */
static rmq_json_t *body_json(const rem_resp_t *r)
{
    char err[128];
    rmq_json_t *j = rmq_json_parse((const char *)r->msg.body, r->msg.body_len, err, sizeof err);

    ck_assert_msg(j != NULL, "body is not JSON: %s: %.*s", err, (int)r->msg.body_len,
                  (const char *)r->msg.body);
    return j;
}

static const char *jstr(const rmq_json_t *v)
{
    const char *s = rmq_json_scalar(v);
    return s ? s : "";
}

/* 1 if the JSON array arr holds the string s. */
static int array_has(const rmq_json_t *arr, const char *s)
{
    for (size_t i = 0; arr && i < arr->n; i++)
        if (strcmp(jstr(arr->items[i]), s) == 0)
            return 1;
    return 0;
}

/* ---- daemons -------------------------------------------------------------- */

static void ns_start(hn_daemon_t *d, const char *extra)
{
    char props[1024];
    int n = snprintf(props, sizeof props, "listenPort=0\nbindAddress=127.0.0.1\nmaxFrameSize=%d\n%s",
                     NS_MAX_FRAME, extra);
    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "name-server properties do not fit");
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", "ns", props, ns_addr,
                                          sizeof ns_addr), 0);
}

static void broker_start(hn_daemon_t *d, char *addr, size_t len)
{
    char props[2048];
    int n = snprintf(props, sizeof props,
                     "brokerClusterName=RemCluster\nbrokerName=broker-a\nbrokerId=0\nlistenPort=0\n"
                     "haListenPort=0\nbrokerRole=ASYNC_MASTER\nstorePathRootDir=%s/store\n"
                     "mapedFileSizeCommitLog=16777216\nbrokerIP1=127.0.0.1\nnamesrvAddr=%s\n"
                     "registerNameServerPeriod=1000\n", case_dir, ns_addr);
    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "broker properties do not fit");
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", "broker-a", props, addr,
                                          len), 0);
}

static int route_ready(void *arg)
{
    rmq_remoting_field_t f = { "topic", arg };
    rem_resp_t r;
    int code = rem_call(RMQ_REMOTING_JSON, 105, &f, 1, &r);

    rem_resp_clear(&r);
    return code == RMQ_REMOTING_SUCCESS;
}

/* namesrv and broker-a with topic RemTopic of QUEUES queues in the route. */
static void cluster_start(hn_daemon_t *ns, hn_daemon_t *bk, char *baddr, size_t len)
{
    Rmq__Command req;
    Rmq__TopicConfig tc;

    ns_start(ns, "");
    broker_start(bk, baddr, len);
    wire_topic_request(&req, &tc, "RemTopic", QUEUES);
    ck_assert_int_eq(wire_call(baddr, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
    ck_assert_msg(hn_wait_until(route_ready, "RemTopic", WAIT_MS), "RemTopic never reached the route");
}

/* ---- routes ---------------------------------------------------------------- */

/* Checks a TopicRouteData body: broker-a at baddr serving QUEUES queues. */
static void check_route(const rem_resp_t *r, const char *baddr)
{
    rmq_json_t *j = body_json(r);
    const rmq_json_t *qd = rmq_json_get(j, "queueDatas"), *bd = rmq_json_get(j, "brokerDatas");
    int64_t n;

    ck_assert(qd && qd->type == RMQ_JSON_ARRAY && qd->n == 1);
    ck_assert_str_eq(jstr(rmq_json_get(qd->items[0], "brokerName")), "broker-a");
    ck_assert_int_eq(rmq_json_int(rmq_json_get(qd->items[0], "writeQueueNums"), 0, 1024, &n), 0);
    ck_assert_int_eq(n, QUEUES);
    ck_assert_int_eq(rmq_json_int(rmq_json_get(qd->items[0], "readQueueNums"), 0, 1024, &n), 0);
    ck_assert_int_eq(n, QUEUES);
    ck_assert_int_eq(rmq_json_int(rmq_json_get(qd->items[0], "perm"), 0, 7, &n), 0);
    ck_assert_int_eq(n & 6, 6);
    ck_assert(rmq_json_get(qd->items[0], "topicSysFlag") != NULL);
    ck_assert(bd && bd->type == RMQ_JSON_ARRAY && bd->n == 1);
    ck_assert_str_eq(jstr(rmq_json_get(bd->items[0], "cluster")), "RemCluster");
    ck_assert_str_eq(jstr(rmq_json_get(rmq_json_get(bd->items[0], "brokerAddrs"), "0")), baddr);
    ck_assert(rmq_json_get(j, "filterServerTable") != NULL);
    rmq_json_free(j);
}

START_TEST(routes)
{
    hn_daemon_t ns, bk;
    char baddr[64];
    rem_resp_t r;
    rmq_remoting_field_t topic = { "topic", "RemTopic" }, missing = { "topic", "NoSuchTopic" };
    rmq_remoting_field_t cluster = { "cluster", "RemCluster" }, other = { "cluster", "Other" };

    cluster_start(&ns, &bk, baddr, sizeof baddr);
    ck_assert_int_eq(rem_call(RMQ_REMOTING_JSON, 105, &topic, 1, &r), RMQ_REMOTING_SUCCESS);
    check_route(&r, baddr);
    rem_resp_clear(&r);
    ck_assert_int_eq(rem_call(RMQ_REMOTING_ROCKETMQ, 105, &topic, 1, &r), RMQ_REMOTING_SUCCESS);
    check_route(&r, baddr);
    rem_resp_clear(&r);

    ck_assert_int_eq(rem_call(RMQ_REMOTING_JSON, 105, &missing, 1, &r), RMQ_REMOTING_TOPIC_NOT_EXIST);
    ck_assert_ptr_nonnull(strstr(r.msg.remark, "NoSuchTopic"));
    rem_resp_clear(&r);

    ck_assert_int_eq(rem_call(RMQ_REMOTING_JSON, 106, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    rmq_json_t *j = body_json(&r);
    const rmq_json_t *bat = rmq_json_get(rmq_json_get(j, "brokerAddrTable"), "broker-a");
    ck_assert_str_eq(jstr(rmq_json_get(rmq_json_get(bat, "brokerAddrs"), "0")), baddr);
    ck_assert(array_has(rmq_json_get(rmq_json_get(j, "clusterAddrTable"), "RemCluster"), "broker-a"));
    rmq_json_free(j);
    rem_resp_clear(&r);

    ck_assert_int_eq(rem_call(RMQ_REMOTING_JSON, 206, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    j = body_json(&r);
    ck_assert(array_has(rmq_json_get(j, "topicList"), "RemTopic"));
    rmq_json_free(j);
    rem_resp_clear(&r);

    ck_assert_int_eq(rem_call(RMQ_REMOTING_ROCKETMQ, 224, &cluster, 1, &r), RMQ_REMOTING_SUCCESS);
    j = body_json(&r);
    ck_assert(array_has(rmq_json_get(j, "topicList"), "RemTopic"));
    rmq_json_free(j);
    rem_resp_clear(&r);
    ck_assert_int_eq(rem_call(RMQ_REMOTING_JSON, 224, &other, 1, &r), RMQ_REMOTING_SUCCESS);
    j = body_json(&r);
    ck_assert(!array_has(rmq_json_get(j, "topicList"), "RemTopic"));
    rmq_json_free(j);
    rem_resp_clear(&r);

    ck_assert_int_eq(rem_call(RMQ_REMOTING_JSON, 304, NULL, 0, &r), RMQ_REMOTING_SUCCESS);
    j = body_json(&r);
    ck_assert(array_has(rmq_json_get(j, "topicList"), "RemCluster"));
    ck_assert(array_has(rmq_json_get(j, "topicList"), "broker-a"));
    ck_assert_str_eq(jstr(rmq_json_get(j, "brokerAddr")), baddr);
    rmq_json_free(j);
    rem_resp_clear(&r);
    hn_case_passed();
}
END_TEST

/* ---- wire quirks ------------------------------------------------------------ */

/* Sends a hand-written JSON header (as ali-ons writes it) with no body. */
static void send_raw_json(int fd, const char *header)
{
    size_t n = strlen(header);
    uint8_t prefix[8];
    uint32_t total = (uint32_t)(4 + n);

    prefix[0] = (uint8_t)(total >> 24), prefix[1] = (uint8_t)(total >> 16);
    prefix[2] = (uint8_t)(total >> 8), prefix[3] = (uint8_t)total;
    prefix[4] = 0, prefix[5] = (uint8_t)(n >> 16), prefix[6] = (uint8_t)(n >> 8);
    prefix[7] = (uint8_t)n;
    write_all(fd, prefix, 8);
    write_all(fd, header, n);
}

START_TEST(wire_quirks)
{
    hn_daemon_t ns, bk;
    char baddr[64];
    rem_resp_t r;
    int fd;

    cluster_start(&ns, &bk, baddr, sizeof baddr);

    /* numbers and booleans in extFields */
    fd = rem_connect(ns_addr);
    send_raw_json(fd, "{\"code\":100,\"language\":\"NODE\",\"opaque\":7,\"version\":1,\"flag\":0,"
                      "\"extFields\":{\"namespace\":\"nsq\",\"key\":\"k1\",\"value\":42}}");
    ck_assert_int_eq(rem_recv(fd, &r, 5000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(r.msg.opaque, 7);
    rem_resp_clear(&r);
    send_raw_json(fd, "{\"code\":100,\"opaque\":8,\"flag\":0,\"extFields\":{\"namespace\":\"nsq\","
                      "\"key\":\"k2\",\"value\":true,\"unitMode\":false}}");
    ck_assert_int_eq(rem_recv(fd, &r, 5000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    close(fd);
    rmq_remoting_field_t get1[] = { { "namespace", "nsq" }, { "key", "k1" } };
    ck_assert_int_eq(rem_call(RMQ_REMOTING_ROCKETMQ, 101, get1, 2, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rmq_remoting_field(&r.msg, "value"), "42");
    rem_resp_clear(&r);
    rmq_remoting_field_t get2[] = { { "namespace", "nsq" }, { "key", "k2" } };
    ck_assert_int_eq(rem_call(RMQ_REMOTING_JSON, 101, get2, 2, &r), RMQ_REMOTING_SUCCESS);
    ck_assert_str_eq(rmq_remoting_field(&r.msg, "value"), "true");
    rem_resp_clear(&r);

    /* unknown code */
    ck_assert_int_eq(rem_call(RMQ_REMOTING_JSON, 777, NULL, 0, &r),
                     RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED);
    ck_assert_ptr_nonnull(strstr(r.msg.remark, "777"));
    rem_resp_clear(&r);

    /* oneway: no reply; the next request's reply comes first */
    rmq_remoting_field_t topic = { "topic", "RemTopic" };
    fd = rem_connect(ns_addr);
    rem_send(fd, RMQ_REMOTING_JSON, 105, 100, RMQ_REMOTING_FLAG_ONEWAY, &topic, 1, NULL, 0);
    rem_send(fd, RMQ_REMOTING_JSON, 105, 101, 0, &topic, 1, NULL, 0);
    ck_assert_int_eq(rem_recv(fd, &r, 5000), 0);
    ck_assert_int_eq(r.msg.opaque, 101);
    rem_resp_clear(&r);
    ck_assert_int_eq(rem_recv(fd, &r, 500), -1);

    /* a native client on the same port while this remoting connection is open */
    Rmq__Command req;
    Rmq__TopicRequest tr;
    wire_topic_query(&req, &tr, RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC, "RemTopic");
    ck_assert_int_eq(wire_call(ns_addr, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
    rem_send(fd, RMQ_REMOTING_ROCKETMQ, 105, 102, 0, &topic, 1, NULL, 0);
    ck_assert_int_eq(rem_recv(fd, &r, 5000), 0);
    ck_assert_int_eq(r.msg.opaque, 102);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    close(fd);

    /* a frame over maxFrameSize, first on its connection or after a
     * request: closed, no reply; the server goes on */
    uint8_t big[9] = { 0, 1, 0, 1, 0, 0, 0, 2, '{' };
    fd = rem_connect(ns_addr);
    write_all(fd, big, sizeof big);
    ck_assert_int_eq(rem_recv(fd, &r, 5000), -1);
    close(fd);
    fd = rem_connect(ns_addr);
    rem_send(fd, RMQ_REMOTING_JSON, 105, 103, 0, &topic, 1, NULL, 0);
    ck_assert_int_eq(rem_recv(fd, &r, 5000), 0);
    rem_resp_clear(&r);
    write_all(fd, big, sizeof big);
    ck_assert_int_eq(rem_recv(fd, &r, 5000), -1);
    close(fd);
    ck_assert_int_eq(rem_call(RMQ_REMOTING_JSON, 105, &topic, 1, &r), RMQ_REMOTING_SUCCESS);
    rem_resp_clear(&r);
    hn_case_passed();
}
END_TEST

/* ---- ACL 1.0 ---------------------------------------------------------------- */

/* Sends fields plus AccessKey (and Signature with secret, unless NULL) and
 * returns the response code. */
static int signed_call(int code, const rmq_remoting_field_t *fields, size_t n, const char *ak,
                       const char *secret, const char *bad_sig)
{
    rmq_remoting_field_t all[8];
    rmq_remoting_request_t view = { 0 };
    char sig[29];
    size_t k = 0;
    rem_resp_t r;

    for (size_t i = 0; i < n; i++)
        all[k++] = fields[i];
    if (ak)
        all[k++] = (rmq_remoting_field_t){ "AccessKey", (char *)ak };
    view.fields = all;
    view.n_fields = k;
    if (secret) {
        rmq_remoting_sign(&view, secret, sig);
        all[k++] = (rmq_remoting_field_t){ "Signature", bad_sig ? (char *)bad_sig : sig };
    }
    int rc = rem_call(RMQ_REMOTING_JSON, code, all, k, &r);
    rem_resp_clear(&r);
    return rc;
}

START_TEST(acl)
{
    hn_daemon_t ns;
    char path[1024], props[1200];
    rmq_remoting_field_t kv[] = { { "namespace", "n" }, { "key", "k" }, { "value", "v" } };

    ck_assert_ptr_nonnull(hn_write_file(case_dir, "plain.acl",
                                        "account.admin1.secretKey=adminsecret1\n"
                                        "account.admin1.admin=true\n"
                                        "account.reader.secretKey=readersecret\n",
                                        path, sizeof path));
    int n = snprintf(props, sizeof props, "aclEnable=true\naclFile=%s\n", path);
    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "ACL properties do not fit");
    ns_start(&ns, props);

    ck_assert_int_eq(signed_call(206, NULL, 0, "reader", "readersecret", NULL), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(signed_call(206, NULL, 0, "reader", "readersecret", "AAAAAAAAAAAAAAAAAAAAAAAAAAA="),
                     RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(206, NULL, 0, "reader", "wrongsecret", NULL), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(206, NULL, 0, "nobody", "readersecret", NULL), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(206, NULL, 0, NULL, NULL, NULL), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(100, kv, 3, "reader", "readersecret", NULL), RMQ_REMOTING_NO_PERMISSION);
    ck_assert_int_eq(signed_call(100, kv, 3, "admin1", "adminsecret1", NULL), RMQ_REMOTING_SUCCESS);
    ck_assert_int_eq(signed_call(101, kv, 2, "reader", "readersecret", NULL), RMQ_REMOTING_SUCCESS);
    hn_case_passed();
}
END_TEST

static Suite *remoting_suite(void)
{
    Suite *s = suite_create("remoting");
    TCase *tc = tcase_create("remoting");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, routes);
    tcase_add_test(tc, wire_quirks);
    tcase_add_test(tc, acl);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(remoting_suite());
}
