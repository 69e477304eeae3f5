/* test_client_route.c: librmq's route handling: TopicRouteData flattened
 * into sorted publish queues (writable, masters only) and subscribe queues
 * (readable), read addresses with slave fallback, and round-robin queue
 * picking that steers around failed brokers. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_client_int.h"

typedef struct fixture {
    Rmq__TopicRouteData rd;
    Rmq__QueueData qd[3];
    Rmq__QueueData *qdp[3];
    Rmq__BrokerData bd[3];
    Rmq__BrokerData *bdp[3];
    Rmq__BrokerAddr ba[4];
    Rmq__BrokerAddr *bap[3][2];
} fixture_t;

/* broker-b: master + slave, 4 rw queues; broker-a: master, 2 write / 3 read;
 * broker-c: slave only (master gone), 2 rw queues. Listed out of order. */
static void fixture_init(fixture_t *f)
{
    memset(f, 0, sizeof *f);
    rmq__topic_route_data__init(&f->rd);
    const char *names[3] = {"broker-b", "broker-a", "broker-c"};
    int rq[3] = {4, 3, 2}, wq[3] = {4, 2, 2};
    for (int i = 0; i < 3; i++) {
        rmq__queue_data__init(&f->qd[i]);
        f->qd[i].broker_name = (char *)names[i];
        f->qd[i].read_queue_nums = rq[i];
        f->qd[i].write_queue_nums = wq[i];
        f->qd[i].perm = RMQ__PERM__PERM_READ | RMQ__PERM__PERM_WRITE;
        f->qdp[i] = &f->qd[i];
        rmq__broker_data__init(&f->bd[i]);
        f->bd[i].broker_name = (char *)names[i];
        f->bdp[i] = &f->bd[i];
    }
    for (int i = 0; i < 4; i++)
        rmq__broker_addr__init(&f->ba[i]);
    f->ba[0].broker_id = 0;
    f->ba[0].addr = "127.0.0.1:1001";
    f->ba[1].broker_id = 1;
    f->ba[1].addr = "127.0.0.1:1002";
    f->ba[2].broker_id = 0;
    f->ba[2].addr = "127.0.0.1:2001";
    f->ba[3].broker_id = 2;
    f->ba[3].addr = "127.0.0.1:3002";
    f->bap[0][0] = &f->ba[1];
    f->bap[0][1] = &f->ba[0];
    f->bd[0].addrs = f->bap[0];
    f->bd[0].n_addrs = 2;
    f->bap[1][0] = &f->ba[2];
    f->bd[1].addrs = f->bap[1];
    f->bd[1].n_addrs = 1;
    f->bap[2][0] = &f->ba[3];
    f->bd[2].addrs = f->bap[2];
    f->bd[2].n_addrs = 1;
    f->rd.queue_datas = f->qdp;
    f->rd.n_queue_datas = 3;
    f->rd.broker_datas = f->bdp;
    f->rd.n_broker_datas = 3;
}

START_TEST(test_route_queues_sorted_masters_only)
{
    fixture_t f;
    fixture_init(&f);
    rmq_route_t *r = rmq_route_from_proto(&f.rd);
    ck_assert_ptr_nonnull(r);
    ck_assert_uint_eq(r->nbrokers, 3);
    ck_assert_str_eq(r->brokers[0].name, "broker-a");
    ck_assert_str_eq(r->brokers[1].master, "127.0.0.1:1001");
    ck_assert_str_eq(r->brokers[1].slave, "127.0.0.1:1002");
    ck_assert_str_eq(r->brokers[2].master, "");
    ck_assert_uint_eq(r->npub, 6);
    ck_assert_str_eq(r->pub[0].broker_name, "broker-a");
    ck_assert_int_eq(r->pub[1].queue_id, 1);
    ck_assert_str_eq(r->pub[2].broker_name, "broker-b");
    ck_assert_int_eq(r->pub[5].queue_id, 3);
    ck_assert_uint_eq(r->nsub, 9);
    ck_assert_str_eq(r->sub[8].broker_name, "broker-c");
    ck_assert_str_eq(rmq_route_read_addr(r, "broker-c"), "127.0.0.1:3002");
    ck_assert_str_eq(rmq_route_read_addr(r, "broker-b"), "127.0.0.1:1001");
    ck_assert_ptr_null(rmq_route_master_addr(r, "broker-c"));
    ck_assert_ptr_null(rmq_route_read_addr(r, "nope"));
    rmq_route_t *r2 = rmq_route_from_proto(&f.rd);
    ck_assert(rmq_route_equal(r, r2));
    rmq_route_free(r2);
    rmq_route_free(r);
}
END_TEST

START_TEST(test_route_perm_respected)
{
    fixture_t f;
    fixture_init(&f);
    f.qd[0].perm = RMQ__PERM__PERM_READ;
    f.qd[1].perm = RMQ__PERM__PERM_WRITE;
    rmq_route_t *r = rmq_route_from_proto(&f.rd);
    ck_assert_uint_eq(r->npub, 2);
    ck_assert_str_eq(r->pub[0].broker_name, "broker-a");
    ck_assert_uint_eq(r->nsub, 6);
    ck_assert_str_eq(r->sub[0].broker_name, "broker-b");
    rmq_route_free(r);
}
END_TEST

static int avoid_b(const char *name, void *arg)
{
    return strcmp(name, (const char *)arg) == 0;
}

START_TEST(test_route_pick_round_robin_and_avoid)
{
    fixture_t f;
    fixture_init(&f);
    rmq_route_t *r = rmq_route_from_proto(&f.rd);
    uint32_t ctr = 0;
    int seen[6] = {0};
    for (int i = 0; i < 12; i++)
        seen[rmq_route_pick(r, &ctr, NULL, NULL, NULL)]++;
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(seen[i], 2);
    for (int i = 0; i < 20; i++) {
        int idx = rmq_route_pick(r, &ctr, "broker-a", NULL, NULL);
        ck_assert_str_eq(r->pub[idx].broker_name, "broker-b");
        idx = rmq_route_pick(r, &ctr, NULL, avoid_b, "broker-b");
        ck_assert_str_eq(r->pub[idx].broker_name, "broker-a");
    }
    int idx = rmq_route_pick(r, &ctr, "broker-a", avoid_b, "broker-b");
    ck_assert_str_eq(r->pub[idx].broker_name, "broker-b");
    rmq_route_free(r);
    f.rd.n_queue_datas = 0;
    r = rmq_route_from_proto(&f.rd);
    ck_assert_int_eq(rmq_route_pick(r, &ctr, NULL, NULL, NULL), -1);
    rmq_route_free(r);
}
END_TEST

START_TEST(test_route_only_one_broker_retry_same)
{
    fixture_t f;
    fixture_init(&f);
    f.rd.n_queue_datas = 1;
    rmq_route_t *r = rmq_route_from_proto(&f.rd);
    uint32_t ctr = 7;
    int idx = rmq_route_pick(r, &ctr, "broker-b", NULL, NULL);
    ck_assert_int_ge(idx, 0);
    ck_assert_str_eq(r->pub[idx].broker_name, "broker-b");
    rmq_route_free(r);
}
END_TEST

static Suite *client_route_suite(void)
{
    Suite *s = suite_create("client_route");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_route_queues_sorted_masters_only);
    tcase_add_test(tc, test_route_perm_respected);
    tcase_add_test(tc, test_route_pick_round_robin_and_avoid);
    tcase_add_test(tc, test_route_only_one_broker_retry_same);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(client_route_suite());
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
