/* test_ipv6.c: the cluster reached over IPv6 ([::1]), with real mqnamesrv /
 * mqbroker processes whose listeners are dual-stack (the wildcard bind).
 * The broker has brokerIP1=::1 and reaches the name server at "::1:port"
 * (RocketMQ's way of writing an IPv6 address); it registers "::1:port".
 *
 * native_v6: the native producer (name server "[::1]:port") and pull
 * consumer (name server "::1:port") send and pull over IPv6; the offset
 * message id is 56 hex digits (IPv6 store host, port, offset), names the
 * broker and the commit-log offset the consumer sees, and mqadmin
 * queryMsgById finds the message by it with IPv6 born and store hosts.
 *
 * ipv4_client: a remoting client on 127.0.0.1 of the same dual-stack port
 * stays an IPv4 born host: sysFlag 0x10 clear and the 8-byte ip | port
 * layout with 127.0.0.1 byte for byte, the store host the broker's IPv6
 * one (0x20, 16 bytes); PULL_MESSAGE and VIEW_MESSAGE_BY_ID over [::1].
 *
 * Skipped (TAP "1..0 # SKIP") on a host without the IPv6 loopback. */
#include <check.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "probe.h"
#include "remwire.h"
#include "rmq/rmq.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "wire.h"

#define TOPIC "V6Topic"
#define QUEUES 2
#define CMD_TIMEOUT_MS 30000

static const char *case_dir;
static hn_daemon_t ns, bk;
static int ns_port, bk_port;
static char bk_addr6[64];          /* "[::1]:port" */

/* 1 if this host can bind ::1. */
static int have_ipv6_loopback(void)
{
    char err[128];
    int fd = rmq_listen_socket("ipv6 probe", "::1", 0, 1, err, sizeof(err));

    if (fd >= 0)
        close(fd);
    return fd >= 0;
}

static void setup(void)
{
    char props[2048], ns6[64], unused[64];

    case_dir = hn_case_begin("ipv6");
    ck_assert_int_eq(hn_daemon_start_conf(&ns, case_dir, "namesrv/mqnamesrv", "ns", "listenPort=0\n", unused,
                                          sizeof unused), 0);
    ns_port = hn_daemon_port(&ns, "listenPort");
    snprintf(ns6, sizeof ns6, "::1:%d", ns_port);
    int n = snprintf(props, sizeof props,
                     "brokerClusterName=V6Cluster\nbrokerName=broker-a\nbrokerId=0\nlistenPort=0\n"
                     "haListenPort=0\nstorePathRootDir=%s/store\nmapedFileSizeCommitLog=1048576\nmaxMessageSize=262144\n"
                     "brokerIP1=::1\nnamesrvAddr=%s\n", case_dir, ns6);
    ck_assert(n > 0 && (size_t)n < sizeof props);
    ck_assert_int_eq(hn_daemon_start_conf(&bk, case_dir, "broker/mqbroker", "broker-a", props, unused,
                                          sizeof unused), 0);
    bk_port = hn_daemon_port(&bk, "listenPort");
    snprintf(bk_addr6, sizeof bk_addr6, "[::1]:%d", bk_port);
    Rmq__Command req;
    Rmq__TopicConfig tc;
    wire_topic_request(&req, &tc, TOPIC, QUEUES);
    ck_assert_int_eq(wire_call(bk_addr6, &req, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
    snprintf(ns6, sizeof ns6, "[::1]:%d", ns_port);
    ck_assert(probe_wait_route_queues(ns6, TOPIC, QUEUES, 20000));
}

static void teardown(void)
{
    hn_case_end();
}

/* The id's expected first 40 digits: ::1 and the broker's port. */
static void id_prefix(char *out, size_t len)
{
    snprintf(out, len, "00000000000000000000000000000001%08X", (unsigned)bk_port);
}

START_TEST(native_v6)
{
    char ns_br[64], ns_rq[64], prefix[48], addr[RMQ_HOST_TEXT_MAX], want[96];
    rmq_error_t err;
    int64_t phys;

    snprintf(ns_br, sizeof ns_br, "[::1]:%d", ns_port);
    snprintf(ns_rq, sizeof ns_rq, "::1:%d", ns_port);
    rmq_producer_opts_t po = { .group = "v6_pg", .namesrv = ns_br };
    rmq_producer_t *p = rmq_producer_new(&po, &err);
    ck_assert_ptr_nonnull(p);
    ck_assert_int_eq(rmq_producer_start(p), RMQ_OK);
    rmq_message_t m = { .topic = TOPIC, .tags = "TagV6", .body = "over-v6", .body_len = 7 };
    rmq_send_result_t res;
    ck_assert_int_eq(rmq_producer_send(p, &m, 5000, &res), RMQ_OK);
    ck_assert_int_eq(res.error.err, RMQ_OK);
    rmq_producer_free(p);

    ck_assert_uint_eq(strlen(res.offset_msg_id), 56);
    id_prefix(prefix, sizeof prefix);
    ck_assert_msg(strncmp(res.offset_msg_id, prefix, 40) == 0, "id %s", res.offset_msg_id);
    ck_assert_int_eq(rmq_msg_id_parse(res.offset_msg_id, addr, sizeof addr, &phys), RMQ_OK);
    ck_assert_str_eq(addr, bk_addr6);

    rmq_pull_consumer_t *c = rmq_pull_consumer_new("v6_cg", ns_rq, &err);
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(rmq_pull_consumer_start(c), RMQ_OK);
    rmq_queue_t q = { .topic = TOPIC, .queue_id = res.queue_id };
    snprintf(q.broker_name, sizeof q.broker_name, "%s", res.broker_name);
    rmq_pull_result_t pr;
    ck_assert_int_eq(rmq_pull_consumer_pull(c, &q, "*", res.queue_offset, 1, 0, &pr, &err), RMQ_OK);
    ck_assert_int_eq(pr.status, RMQ_PULL_FOUND);
    ck_assert_uint_eq(pr.count, 1);
    ck_assert_int_eq(pr.msgs[0]->commit_log_offset, phys);
    ck_assert_mem_eq(pr.msgs[0]->body, "over-v6", 7);
    rmq_pull_result_clear(&pr);
    rmq_pull_consumer_free(c);

    char bin[PATH_MAX];
    const char *argv[] = { hn_build_path("tools/mqadmin", bin, sizeof bin), "queryMsgById", "-n", ns_br, "-i",
                           res.offset_msg_id, NULL };
    hn_result_t out;
    ck_assert_int_eq(hn_run(argv, CMD_TIMEOUT_MS, &out), 0);
    ck_assert_msg(out.status == 0, "queryMsgById: %s%s", out.out, out.err);
    ck_assert_ptr_nonnull(strstr(out.out, "over-v6"));
    snprintf(want, sizeof want, "[::1]:%d", bk_port);
    ck_assert_msg(strstr(out.out, want) != NULL, "no store host %s in:\n%s", want, out.out);
    ck_assert_msg(strstr(out.out, "Born Host:") && strstr(strstr(out.out, "Born Host:"), "[::1]:"),
                  "born host not IPv6:\n%s", out.out);
    hn_result_free(&out);
    hn_case_passed();
}
END_TEST

/* SEND_MESSAGE_V2 of body to queue 0 from a connection to addr; the msgId. */
static void remoting_send(const char *addr, const char *body, char *msg_id, size_t len)
{
    rmq_remoting_field_t f[] = {
        {"a", "v6_pg"}, {"b", TOPIC}, {"c", "TBW102"}, {"d", "4"}, {"e", "0"}, {"f", "0"},
        {"g", "1700000000000"}, {"h", "0"}, {"i", "TAGS\001T4"}, {"j", "0"}, {"k", "false"}, {"m", "false"},
    };
    rem_resp_t r;
    int fd = rem_connect(addr);

    rem_send(fd, RMQ_REMOTING_ROCKETMQ, 310, 1, 0, f, sizeof f / sizeof f[0], body, strlen(body));
    ck_assert_int_eq(rem_recv(fd, &r, 20000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    snprintf(msg_id, len, "%s", rem_field(&r, "msgId"));
    rem_resp_clear(&r);
    close(fd);
}

/* The born host of an IPv4 client's record in RocketMQ's layout: 8 bytes,
 * 127.0.0.1; the store host ::1 (16 bytes) and the broker's port. */
static void check_ipv4_born(const uint8_t *p, size_t len, const char *body)
{
    static const uint8_t loop6[16] = { [15] = 1 };
    rmq_record_t rec;

    ck_assert_int_eq(rmq_record_decode_rocketmq(p, len, &rec), RMQ_OK);
    ck_assert_int_eq(rec.sys_flag & RMQ_SYSFLAG_HOSTS_V6, RMQ_SYSFLAG_STOREHOST_V6);
    ck_assert_uint_eq(rec.total_size, rmq_record_size(0, rec.body_len, rec.topic_len, rec.properties_len) +
                                          RMQ_RECORD_HOST6_EXTRA);
    /* size, magic, crc, queue, flag, queue offset, phys, sysFlag, born ts: 48 bytes, then ip | port */
    ck_assert_mem_eq(p + 48, "\x7f\x00\x00\x01", 4);
    ck_assert_uint_eq(rec.born_ip, 0x7F000001);
    ck_assert_mem_eq(rec.store_ip6, loop6, 16);
    ck_assert_uint_eq(rec.store_port, (uint32_t)bk_port);
    ck_assert_uint_eq(rec.body_len, strlen(body));
    ck_assert_mem_eq(rec.body, body, rec.body_len);
}

START_TEST(ipv4_client)
{
    char addr4[64], msg_id[128], host[RMQ_HOST_TEXT_MAX], off[24], prefix[48];
    int64_t phys;
    rem_resp_t r;

    snprintf(addr4, sizeof addr4, "127.0.0.1:%d", bk_port);
    remoting_send(addr4, "from-v4", msg_id, sizeof msg_id);
    ck_assert_uint_eq(strlen(msg_id), 56);
    id_prefix(prefix, sizeof prefix);
    ck_assert_msg(strncmp(msg_id, prefix, 40) == 0, "id %s", msg_id);
    ck_assert_int_eq(rmq_msg_id_parse(msg_id, host, sizeof host, &phys), RMQ_OK);
    ck_assert_str_eq(host, bk_addr6);

    int fd = rem_connect(bk_addr6);
    snprintf(off, sizeof off, "%lld", (long long)phys);
    rmq_remoting_field_t vf = {"offset", off};
    rem_send(fd, RMQ_REMOTING_JSON, 33, 2, 0, &vf, 1, NULL, 0);
    ck_assert_int_eq(rem_recv(fd, &r, 20000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    check_ipv4_born(r.msg.body, r.msg.body_len, "from-v4");
    rem_resp_clear(&r);

    rmq_remoting_field_t pf[] = {
        {"consumerGroup", "v6_cg"}, {"topic", TOPIC}, {"queueId", "0"}, {"queueOffset", "0"},
        {"maxMsgNums", "1"}, {"sysFlag", "0"}, {"commitOffset", "0"}, {"suspendTimeoutMillis", "0"},
        {"subVersion", "0"}, {"expressionType", "TAG"},
    };
    rem_send(fd, RMQ_REMOTING_JSON, 11, 3, 0, pf, sizeof pf / sizeof pf[0], NULL, 0);
    ck_assert_int_eq(rem_recv(fd, &r, 20000), 0);
    ck_assert_int_eq(r.msg.code, RMQ_REMOTING_SUCCESS);
    check_ipv4_born(r.msg.body, r.msg.body_len, "from-v4");
    rem_resp_clear(&r);
    close(fd);
    hn_case_passed();
}
END_TEST

int main(void)
{
    if (!have_ipv6_loopback()) {
        printf("1..0 # SKIP no IPv6 loopback (::1) on this host\n");
        return 0;
    }
    Suite *s = suite_create("ipv6");
    TCase *tc = tcase_create("ipv6");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, native_v6);
    tcase_add_test(tc, ipv4_client);
    suite_add_tcase(s, tc);
    return hn_run_suite(s);
}
