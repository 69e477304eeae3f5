/* test_grpc_route.c: a name-server route rendered as RocketMQ 5 message
 * queues (rmq_grpc_route.c): masters only, real queue ids, each queue's
 * permission from the read/write counts and the perm bits, the master's
 * address as its endpoints (IPv4, IPv6), the message types the topic's
 * message.type names (every type when none), and routes refused for a
 * bad address or too many queues. */
#include "rmq_grpc_route.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"
#include "rmq_topic_attr.h"

#define PERM(name) APACHE__ROCKETMQ__V2__PERMISSION__##name

/* A route being built: queue data and broker data with their addresses. */
typedef struct route_fixture {
    Rmq__TopicRouteData rd;
    Rmq__QueueData qd[4], *qdp[4];
    Rmq__BrokerData bd[4], *bdp[4];
    Rmq__BrokerAddr ba[8], *bap[8];
    size_t nba;
} route_fixture_t;

static void fixture_init(route_fixture_t *f)
{
    rmq__topic_route_data__init(&f->rd);
    f->rd.queue_datas = f->qdp;
    f->rd.broker_datas = f->bdp;
    f->nba = 0;
}

static void add_queues(route_fixture_t *f, const char *broker, int r, int w, int perm)
{
    Rmq__QueueData *q = &f->qd[f->rd.n_queue_datas];
    rmq__queue_data__init(q);
    q->broker_name = (char *)broker;
    q->read_queue_nums = r;
    q->write_queue_nums = w;
    q->perm = perm;
    f->qdp[f->rd.n_queue_datas++] = q;
}

/* A broker name with addr at broker id id (a second call adds an address). */
static void add_broker(route_fixture_t *f, const char *broker, int64_t id, const char *addr)
{
    Rmq__BrokerData *b = NULL;
    for (size_t i = 0; i < f->rd.n_broker_datas; i++)
        if (f->bdp[i]->broker_name == broker)
            b = f->bdp[i];
    if (!b) {
        b = &f->bd[f->rd.n_broker_datas];
        rmq__broker_data__init(b);
        b->broker_name = (char *)broker;
        b->addrs = &f->bap[f->nba];
        f->bdp[f->rd.n_broker_datas++] = b;
    }
    Rmq__BrokerAddr *a = &f->ba[f->nba];
    rmq__broker_addr__init(a);
    a->broker_id = id;
    a->addr = (char *)addr;
    f->bap[f->nba++] = a;
    b->n_addrs++;
}

START_TEST(test_masters_real_ids_and_perms)
{
    route_fixture_t f;
    rmq_grpc_route_t r = {0};
    char why[256];
    fixture_init(&f);
    add_queues(&f, "broker-a", 4, 2, 6);          /* ids 0-1 read-write, 2-3 read-only */
    add_queues(&f, "broker-b", 2, 2, 4);          /* a read-only topic there */
    add_queues(&f, "broker-c", 8, 8, 6);          /* no master now: listed nowhere */
    add_broker(&f, "broker-a", 0, "10.0.0.1:10911");
    add_broker(&f, "broker-a", 1, "10.0.0.2:10911");
    add_broker(&f, "broker-b", 0, "[fe80::1]:10921");
    add_broker(&f, "broker-c", 1, "10.0.0.3:10911");
    ck_assert_int_eq(rmq_grpc_route_build(&f.rd, "T", &r, why, sizeof(why)), RMQ_OK);
    ck_assert_uint_eq(r.n, 6);
    const Apache__Rocketmq__V2__Permission want[] = {PERM(READ_WRITE), PERM(READ_WRITE), PERM(READ), PERM(READ),
                                                      PERM(READ), PERM(READ)};
    const int ids[] = {0, 1, 2, 3, 0, 1};
    for (size_t i = 0; i < r.n; i++) {
        const Apache__Rocketmq__V2__MessageQueue *q = r.queues[i];
        ck_assert_int_eq(q->id, ids[i]);
        ck_assert_int_eq(q->permission, want[i]);
        ck_assert_str_eq(q->topic->name, "T");
        ck_assert_int_eq(q->broker->id, 0);
        ck_assert_uint_eq(q->n_accept_message_types, 4);
    }
    const Apache__Rocketmq__V2__Endpoints *a = r.queues[0]->broker->endpoints, *b = r.queues[4]->broker->endpoints;
    ck_assert_str_eq(r.queues[0]->broker->name, "broker-a");
    ck_assert_int_eq(a->scheme, APACHE__ROCKETMQ__V2__ADDRESS_SCHEME__IPv4);
    ck_assert_str_eq(a->addresses[0]->host, "10.0.0.1");
    ck_assert_int_eq(a->addresses[0]->port, 10911);
    ck_assert_int_eq(b->scheme, APACHE__ROCKETMQ__V2__ADDRESS_SCHEME__IPv6);
    ck_assert_str_eq(b->addresses[0]->host, "fe80::1");
    ck_assert_int_eq(b->addresses[0]->port, 10921);
    rmq_grpc_route_deinit(&r);
}
END_TEST

START_TEST(test_write_only_and_none)
{
    route_fixture_t f;
    rmq_grpc_route_t r = {0};
    char why[256];
    fixture_init(&f);
    add_queues(&f, "broker-a", 1, 3, 2);          /* write bit only: 0-2 writable, none readable */
    add_broker(&f, "broker-a", 0, "broker-a.example:10911");
    ck_assert_int_eq(rmq_grpc_route_build(&f.rd, "T", &r, why, sizeof(why)), RMQ_OK);
    ck_assert_uint_eq(r.n, 3);
    ck_assert_int_eq(r.queues[0]->permission, PERM(WRITE));
    ck_assert_int_eq(r.queues[2]->permission, PERM(WRITE));
    ck_assert_int_eq(r.queues[0]->broker->endpoints->scheme, APACHE__ROCKETMQ__V2__ADDRESS_SCHEME__DOMAIN_NAME);
    rmq_grpc_route_deinit(&r);
    fixture_init(&f);
    add_queues(&f, "broker-a", 2, 2, 0);
    add_broker(&f, "broker-a", 0, "10.0.0.1:1");
    ck_assert_int_eq(rmq_grpc_route_build(&f.rd, "T", &r, why, sizeof(why)), RMQ_OK);
    ck_assert_int_eq(r.queues[1]->permission, PERM(NONE));
    rmq_grpc_route_deinit(&r);
}
END_TEST

START_TEST(test_refused_routes)
{
    route_fixture_t f;
    rmq_grpc_route_t r = {0};
    char why[256] = "";
    fixture_init(&f);
    add_queues(&f, "broker-a", 4, 4, 6);
    add_broker(&f, "broker-a", 0, "no-port");
    ck_assert_int_eq(rmq_grpc_route_build(&f.rd, "T", &r, why, sizeof(why)), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "no-port"));
    rmq_grpc_route_deinit(&r);
    fixture_init(&f);
    add_queues(&f, "broker-a", RMQ_QUEUE_NUMS_MAX + 1, 1, 6);
    add_broker(&f, "broker-a", 0, "10.0.0.1:1");
    ck_assert_int_eq(rmq_grpc_route_build(&f.rd, "T", &r, why, sizeof(why)), RMQ_EINVAL);
    rmq_grpc_route_deinit(&r);
}
END_TEST

START_TEST(test_message_type_accepted)
{
    static const struct {
        rmq_topic_msg_type_t topic;
        size_t n;
        Apache__Rocketmq__V2__MessageType first;
    } cases[] = {
        {RMQ_TOPIC_MSG_FIFO, 1, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__FIFO},
        {RMQ_TOPIC_MSG_NORMAL, 1, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL},
        {RMQ_TOPIC_MSG_DELAY, 1, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__DELAY},
        {RMQ_TOPIC_MSG_TRANSACTION, 1, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__TRANSACTION},
        {RMQ_TOPIC_MSG_MIXED, 4, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL},
        {RMQ_TOPIC_MSG_UNSPECIFIED, 4, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL},
        {RMQ_TOPIC_MSG_ABSENT, 4, APACHE__ROCKETMQ__V2__MESSAGE_TYPE__NORMAL},
    };
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        route_fixture_t f;
        rmq_grpc_route_t r = {0};
        char why[256];
        fixture_init(&f);
        add_queues(&f, "broker-a", 2, 2, 6);
        f.qd[0].message_type = (int32_t)cases[c].topic;
        add_broker(&f, "broker-a", 0, "10.0.0.1:10911");
        ck_assert_int_eq(rmq_grpc_route_build(&f.rd, "T", &r, why, sizeof(why)), RMQ_OK);
        for (size_t i = 0; i < r.n; i++) {
            ck_assert_uint_eq(r.queues[i]->n_accept_message_types, cases[c].n);
            ck_assert_int_eq(r.queues[i]->accept_message_types[0], cases[c].first);
        }
        rmq_grpc_route_deinit(&r);
    }
}
END_TEST

static Suite *grpc_route_suite(void)
{
    Suite *s = suite_create("grpc_route");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_masters_real_ids_and_perms);
    tcase_add_test(tc, test_write_only_and_none);
    tcase_add_test(tc, test_refused_routes);
    tcase_add_test(tc, test_message_type_accepted);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(grpc_route_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
