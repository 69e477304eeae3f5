/* test_ns_route.c: the name server's route table (namesrv/ns_route.c) and
 * its sorted vector, without any networking: registration, slaves and
 * masters, epochs, unregister, expiry, connection loss, queries, write
 * permission, KV config, delta registrations and version queries, and
 * many new topics merged in one registration. */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ns_route.h"
#include "ns_vec.h"

#define MAX_TOPICS 4

/* A register request with its topic configs, built on the stack. */
typedef struct reg {
    Rmq__RegisterBrokerRequest req;
    Rmq__DataVersion dv;
    Rmq__TopicConfig tc[MAX_TOPICS];
    Rmq__TopicConfig *tcp[MAX_TOPICS];
} reg_t;

static void reg_init(reg_t *r, const char *cluster, const char *name, const char *addr,
                     int64_t id, int64_t epoch)
{
    rmq__register_broker_request__init(&r->req);
    rmq__data_version__init(&r->dv);
    r->req.cluster_name = (char *)cluster;
    r->req.broker_name = (char *)name;
    r->req.broker_addr = (char *)addr;
    r->req.broker_id = id;
    r->req.epoch = epoch;
    r->req.data_version = &r->dv;
    r->req.topics = r->tcp;
    r->dv.timestamp = 1000;
    r->dv.counter = 1;
}

static void reg_ha(reg_t *r, const char *ha)
{
    r->req.ha_server_addr = (char *)ha;
}

static void reg_topic(reg_t *r, const char *topic, int rq, int wq, int perm)
{
    Rmq__TopicConfig *tc = &r->tc[r->req.n_topics];

    ck_assert_uint_lt(r->req.n_topics, MAX_TOPICS);
    rmq__topic_config__init(tc);
    tc->topic_name = (char *)topic;
    tc->read_queue_nums = rq;
    tc->write_queue_nums = wq;
    tc->perm = perm;
    r->tcp[r->req.n_topics++] = tc;
}

static rmq_err_t do_register(ns_route_t *rt, reg_t *r, uint64_t conn, int64_t now,
                             ns_register_result_t *res)
{
    char why[256] = "";
    return ns_route_register(rt, &r->req, conn, now, res, why, sizeof why);
}

static rmq_err_t do_unregister(ns_route_t *rt, const char *name, const char *addr, int64_t id,
                               int64_t epoch)
{
    Rmq__UnregisterBrokerRequest u = RMQ__UNREGISTER_BROKER_REQUEST__INIT;
    char why[256] = "";

    u.cluster_name = (char *)"c1";
    u.broker_name = (char *)name;
    u.broker_addr = (char *)addr;
    u.broker_id = id;
    u.epoch = epoch;
    return ns_route_unregister(rt, &u, why, sizeof why);
}

/* Registers broker-a master (10911, HA 10912) and slave (10921), broker-b
 * master (10931), with TopicA on both names and TopicB on broker-b. */
static void setup_2m1s(ns_route_t *rt, int64_t now)
{
    reg_t r;
    ns_register_result_t res;

    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    reg_ha(&r, "127.0.0.1:10912");
    reg_topic(&r, "TopicA", 4, 4, 6);
    ck_assert_int_eq(do_register(rt, &r, 1, now, &res), RMQ_OK);

    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 1, 5);
    reg_topic(&r, "TopicA", 4, 4, 6);
    ck_assert_int_eq(do_register(rt, &r, 2, now, &res), RMQ_OK);

    reg_init(&r, "c1", "broker-b", "127.0.0.1:10931", 0, 5);
    reg_topic(&r, "TopicA", 8, 8, 6);
    reg_topic(&r, "TopicB", 2, 2, 6);
    ck_assert_int_eq(do_register(rt, &r, 3, now, &res), RMQ_OK);
}

/* The queue data of broker_name in topic's route, or NULL. */
static const Rmq__QueueData *route_queue(const Rmq__TopicRouteData *rd, const char *broker_name)
{
    for (size_t i = 0; i < rd->n_queue_datas; i++)
        if (strcmp(rd->queue_datas[i]->broker_name, broker_name) == 0)
            return rd->queue_datas[i];
    return NULL;
}

/* The address of id in broker_name's data in the route, or NULL. */
static const char *route_addr(const Rmq__TopicRouteData *rd, const char *broker_name, int64_t id)
{
    for (size_t i = 0; i < rd->n_broker_datas; i++) {
        const Rmq__BrokerData *bd = rd->broker_datas[i];
        if (strcmp(bd->broker_name, broker_name) != 0)
            continue;
        for (size_t a = 0; a < bd->n_addrs; a++)
            if (bd->addrs[a]->broker_id == id)
                return bd->addrs[a]->addr;
    }
    return NULL;
}

static int vec_int_cmp(const void *item, const void *key)
{
    int a = *(const int *)item, b = *(const int *)key;
    return (a > b) - (a < b);
}

START_TEST(test_vec_sorted)
{
    ns_vec_t v;
    int found;

    ns_vec_init(&v, sizeof(int));
    for (int i = 0; i < 200; i++) {
        int key = (i * 73) % 200;
        size_t at = ns_vec_search(&v, vec_int_cmp, &key, &found);
        ck_assert(!found);
        *(int *)ns_vec_insert_at(&v, at) = key;
    }
    ck_assert_uint_eq(v.len, 200);
    for (int i = 0; i < 200; i++)
        ck_assert_int_eq(*(int *)ns_vec_at(&v, (size_t)i), i);
    int key = 50;
    size_t at = ns_vec_search(&v, vec_int_cmp, &key, &found);
    ck_assert(found);
    ns_vec_remove_at(&v, at);
    ck_assert_ptr_null(ns_vec_find(&v, vec_int_cmp, &key));
    key = 51;
    ck_assert_int_eq(*(int *)ns_vec_find(&v, vec_int_cmp, &key), 51);
    ck_assert_uint_eq(v.len, 199);
    ns_vec_deinit(&v);
}
END_TEST

START_TEST(test_register_and_route)
{
    ns_route_t *rt = ns_route_new();
    rmq_err_t err;

    setup_2m1s(rt, 100);
    ck_assert_uint_eq(ns_route_live_count(rt), 3);
    ck_assert_uint_eq(ns_route_broker_name_count(rt), 2);
    ck_assert_uint_eq(ns_route_topic_count(rt), 2);

    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_int_eq(err, RMQ_OK);
    ck_assert_uint_eq(rd->n_queue_datas, 2);
    ck_assert_uint_eq(rd->n_broker_datas, 2);
    ck_assert_str_eq(rd->queue_datas[0]->broker_name, "broker-a");
    ck_assert_int_eq(route_queue(rd, "broker-b")->read_queue_nums, 8);
    ck_assert_str_eq(route_addr(rd, "broker-a", 0), "127.0.0.1:10911");
    ck_assert_str_eq(route_addr(rd, "broker-a", 1), "127.0.0.1:10921");
    ck_assert_str_eq(rd->broker_datas[0]->cluster, "c1");
    ck_assert(!rd->order_topic);
    rmq__topic_route_data__free_unpacked(rd, NULL);

    ck_assert_ptr_null(ns_route_topic(rt, "NoSuchTopic", &err));
    ck_assert_int_eq(err, RMQ_ENOTFOUND);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_slave_learns_master)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    reg_t r;

    /* a slave registering before its master learns nothing */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 1, 5);
    ck_assert_int_eq(do_register(rt, &r, 2, 100, &res), RMQ_OK);
    ck_assert_str_eq(res.master_addr, "");
    ck_assert_str_eq(res.master_ha_addr, "");
    /* slaves never create queue data */
    ck_assert_uint_eq(ns_route_topic_count(rt), 0);

    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    reg_ha(&r, "127.0.0.1:10912");
    ck_assert_int_eq(do_register(rt, &r, 1, 100, &res), RMQ_OK);
    ck_assert_str_eq(res.master_addr, "");

    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 1, 5);
    ck_assert_int_eq(do_register(rt, &r, 2, 200, &res), RMQ_OK);
    ck_assert_str_eq(res.master_addr, "127.0.0.1:10911");
    ck_assert_str_eq(res.master_ha_addr, "127.0.0.1:10912");
    ns_route_free(rt);
}
END_TEST

START_TEST(test_data_version_guards_queue_data)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    rmq_err_t err;
    reg_t r;

    setup_2m1s(rt, 100);
    ck_assert_uint_eq(ns_route_wipe_write_perm(rt, "broker-a"), 1);

    /* same data version: queue data (and the wiped perm) kept */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    reg_topic(&r, "TopicA", 16, 16, 6);
    ck_assert_int_eq(do_register(rt, &r, 1, 200, &res), RMQ_OK);
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_int_eq(route_queue(rd, "broker-a")->perm, 4);
    ck_assert_int_eq(route_queue(rd, "broker-a")->read_queue_nums, 4);
    rmq__topic_route_data__free_unpacked(rd, NULL);

    /* new data version: rewritten */
    r.dv.counter = 2;
    ck_assert_int_eq(do_register(rt, &r, 1, 300, &res), RMQ_OK);
    rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_int_eq(route_queue(rd, "broker-a")->perm, 6);
    ck_assert_int_eq(route_queue(rd, "broker-a")->read_queue_nums, 16);
    rmq__topic_route_data__free_unpacked(rd, NULL);

    /* a slave's topics never touch queue data */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 1, 5);
    r.dv.counter = 9;
    reg_topic(&r, "TopicA", 1, 1, 2);
    reg_topic(&r, "SlaveOnly", 1, 1, 6);
    ck_assert_int_eq(do_register(rt, &r, 2, 300, &res), RMQ_OK);
    rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_int_eq(route_queue(rd, "broker-a")->read_queue_nums, 16);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ck_assert_ptr_null(ns_route_topic(rt, "SlaveOnly", &err));
    ns_route_free(rt);
}
END_TEST

START_TEST(test_stale_register_ignored)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    char why[256] = "";
    reg_t r;

    setup_2m1s(rt, 100);
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 4);
    reg_ha(&r, "127.0.0.1:99");
    ck_assert_int_eq(ns_route_register(rt, &r.req, 9, 500, &res, why, sizeof why), RMQ_EEXIST);
    ck_assert_ptr_nonnull(strstr(why, "epoch 4"));
    /* the newer registration is untouched: same conn, same timestamp */
    ck_assert_uint_eq(ns_route_remove_conn(rt, 9), 0);
    ck_assert_uint_eq(ns_route_expire(rt, 100 + 1000, 1000), 0);
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 1, 5);
    ck_assert_int_eq(do_register(rt, &r, 2, 500, &res), RMQ_OK);
    ck_assert_str_eq(res.master_ha_addr, "127.0.0.1:10912");

    /* a restart (newer epoch) is accepted */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 6);
    ck_assert_int_eq(do_register(rt, &r, 7, 600, &res), RMQ_OK);
    ck_assert_uint_eq(ns_route_remove_conn(rt, 7), 1);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_unregister)
{
    ns_route_t *rt = ns_route_new();
    rmq_err_t err;

    setup_2m1s(rt, 100);
    ck_assert_int_eq(do_unregister(rt, "broker-a", "127.0.0.1:1", 0, 5), RMQ_ENOTFOUND);
    ck_assert_int_eq(do_unregister(rt, "broker-a", "127.0.0.1:10911", 1, 5), RMQ_ENOTFOUND);
    ck_assert_int_eq(do_unregister(rt, "broker-b", "127.0.0.1:10931", 0, 5), RMQ_OK);
    ck_assert_uint_eq(ns_route_live_count(rt), 2);
    ck_assert_uint_eq(ns_route_broker_name_count(rt), 1);
    /* TopicB lived only on broker-b; TopicA keeps broker-a only */
    ck_assert_ptr_null(ns_route_topic(rt, "TopicB", &err));
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_uint_eq(rd->n_queue_datas, 1);
    ck_assert_ptr_null(route_queue(rd, "broker-b"));
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_stale_unregister_keeps_newer)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    reg_t r;

    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 7);
    reg_topic(&r, "TopicA", 4, 4, 6);
    ck_assert_int_eq(do_register(rt, &r, 1, 100, &res), RMQ_OK);
    /* the unregister of the previous run (epoch 6) arrives late */
    ck_assert_int_eq(do_unregister(rt, "broker-a", "127.0.0.1:10911", 0, 6), RMQ_EEXIST);
    ck_assert_uint_eq(ns_route_live_count(rt), 1);
    ck_assert_uint_eq(ns_route_topic_count(rt), 1);
    ck_assert_int_eq(do_unregister(rt, "broker-a", "127.0.0.1:10911", 0, 7), RMQ_OK);
    ck_assert_uint_eq(ns_route_live_count(rt), 0);
    ck_assert_uint_eq(ns_route_topic_count(rt), 0);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_master_leaves_slave_stays)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    rmq_err_t err;
    reg_t r;

    setup_2m1s(rt, 100);
    ck_assert_uint_eq(ns_route_remove_conn(rt, 1), 1);   /* broker-a master */
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_uint_eq(rd->n_queue_datas, 2);
    ck_assert_int_eq(route_queue(rd, "broker-a")->perm, 6);
    ck_assert_ptr_null(route_addr(rd, "broker-a", 0));
    ck_assert_str_eq(route_addr(rd, "broker-a", 1), "127.0.0.1:10921");
    rmq__topic_route_data__free_unpacked(rd, NULL);

    /* the slave's answer no longer names a master */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 1, 5);
    ck_assert_int_eq(do_register(rt, &r, 2, 200, &res), RMQ_OK);
    ck_assert_str_eq(res.master_addr, "");

    /* the last address of broker-a leaves: its queue data goes */
    ck_assert_int_eq(do_unregister(rt, "broker-a", "127.0.0.1:10921", 1, 5), RMQ_OK);
    rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_uint_eq(rd->n_queue_datas, 1);
    ck_assert_ptr_null(route_queue(rd, "broker-a"));
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_expire)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    reg_t r;

    ck_assert_int_eq(ns_route_next_expiry(rt, 1000), INT64_MAX);
    setup_2m1s(rt, 100);
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 1, 5);
    ck_assert_int_eq(do_register(rt, &r, 2, 600, &res), RMQ_OK);
    ck_assert_int_eq(ns_route_next_expiry(rt, 1000), 1100);
    ck_assert_uint_eq(ns_route_expire(rt, 1100, 1000), 0);   /* not more than the timeout */
    ck_assert_uint_eq(ns_route_expire(rt, 1101, 1000), 2);
    ck_assert_uint_eq(ns_route_live_count(rt), 1);
    ck_assert_uint_eq(ns_route_broker_name_count(rt), 1);     /* broker-a, slave only */
    ck_assert_uint_eq(ns_route_topic_count(rt), 1);           /* TopicB gone */
    ck_assert_int_eq(ns_route_next_expiry(rt, 1000), 1600);
    ck_assert_uint_eq(ns_route_expire(rt, 1601, 1000), 1);
    ck_assert_uint_eq(ns_route_broker_name_count(rt), 0);
    ck_assert_uint_eq(ns_route_topic_count(rt), 0);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_cluster_info_and_topic_list)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    reg_t r;

    setup_2m1s(rt, 100);
    reg_init(&r, "c2", "broker-c", "127.0.0.1:10951", 0, 5);
    reg_topic(&r, "Alpha", 1, 1, 6);
    ck_assert_int_eq(do_register(rt, &r, 4, 150, &res), RMQ_OK);

    Rmq__ClusterInfo *ci = ns_route_cluster_info(rt, 200, 1000000);
    ck_assert_uint_eq(ci->n_brokers, 3);
    ck_assert_uint_eq(ci->n_clusters, 2);
    ck_assert_str_eq(ci->clusters[0]->cluster_name, "c1");
    ck_assert_uint_eq(ci->clusters[0]->n_broker_names, 2);
    ck_assert_str_eq(ci->clusters[0]->broker_names[1], "broker-b");
    ck_assert_str_eq(ci->clusters[1]->cluster_name, "c2");
    ck_assert_uint_eq(ci->n_live, 4);
    ck_assert_str_eq(ci->live[0]->broker_addr, "127.0.0.1:10911");
    ck_assert_str_eq(ci->live[0]->ha_server_addr, "127.0.0.1:10912");
    ck_assert_int_eq(ci->live[0]->last_update_ms, 1000000 - 100);
    ck_assert_int_eq(ci->live[0]->data_version->counter, 1);
    rmq__cluster_info__free_unpacked(ci, NULL);

    Rmq__TopicList *tl = ns_route_topic_list(rt);
    ck_assert_uint_eq(tl->n_topics, 3);
    ck_assert_str_eq(tl->topics[0], "Alpha");
    ck_assert_str_eq(tl->topics[2], "TopicB");
    rmq__topic_list__free_unpacked(tl, NULL);

    /* a cluster goes with its last broker name */
    ck_assert_uint_eq(ns_route_remove_conn(rt, 4), 1);
    ci = ns_route_cluster_info(rt, 200, 1000000);
    ck_assert_uint_eq(ci->n_clusters, 1);
    rmq__cluster_info__free_unpacked(ci, NULL);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_delete_topic_and_perm)
{
    ns_route_t *rt = ns_route_new();
    rmq_err_t err;

    setup_2m1s(rt, 100);
    ck_assert_int_eq(ns_route_delete_topic(rt, "TopicB", NULL), RMQ_OK);
    ck_assert_int_eq(ns_route_delete_topic(rt, "TopicB", NULL), RMQ_ENOTFOUND);
    ck_assert_ptr_null(ns_route_topic(rt, "TopicB", &err));

    /* by cluster: only that cluster's queue data goes; the topic with the last */
    reg_t r;
    ns_register_result_t res;
    reg_init(&r, "c2", "broker-x", "127.0.0.1:10951", 0, 5);
    reg_topic(&r, "TopicC", 4, 4, 6);
    ck_assert_int_eq(do_register(rt, &r, 5, 100, &res), RMQ_OK);
    reg_init(&r, "c1", "broker-b", "127.0.0.1:10931", 0, 5);
    r.dv.counter = 9;
    reg_topic(&r, "TopicC", 2, 2, 6);
    ck_assert_int_eq(do_register(rt, &r, 3, 100, &res), RMQ_OK);
    ck_assert_int_eq(ns_route_delete_topic(rt, "TopicC", "c1"), RMQ_OK);
    Rmq__TopicRouteData *rc = ns_route_topic(rt, "TopicC", &err);
    ck_assert_ptr_nonnull(rc);
    ck_assert_ptr_null(route_queue(rc, "broker-b"));
    ck_assert_ptr_nonnull(route_queue(rc, "broker-x"));
    rmq__topic_route_data__free_unpacked(rc, NULL);
    ck_assert_int_eq(ns_route_delete_topic(rt, "TopicC", "c2"), RMQ_OK);
    ck_assert_ptr_null(ns_route_topic(rt, "TopicC", &err));

    ck_assert_uint_eq(ns_route_wipe_write_perm(rt, "broker-b"), 1);
    ck_assert_uint_eq(ns_route_wipe_write_perm(rt, "broker-x"), 0);
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_int_eq(route_queue(rd, "broker-b")->perm, 4);
    ck_assert_int_eq(route_queue(rd, "broker-a")->perm, 6);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ck_assert_uint_eq(ns_route_add_write_perm(rt, "broker-b"), 1);
    rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_int_eq(route_queue(rd, "broker-b")->perm, 6);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_kv)
{
    ns_route_t *rt = ns_route_new();
    rmq_err_t err;

    setup_2m1s(rt, 100);
    ck_assert_ptr_null(ns_route_kv_get(rt, "ns", "k"));
    ck_assert_int_eq(ns_route_kv_put(rt, "ns", "k", "v1"), RMQ_OK);
    ck_assert_int_eq(ns_route_kv_put(rt, "ns", "k", "v2"), RMQ_OK);
    ck_assert_int_eq(ns_route_kv_put(rt, "other", "k", "x"), RMQ_OK);
    ck_assert_str_eq(ns_route_kv_get(rt, "ns", "k"), "v2");
    ck_assert_str_eq(ns_route_kv_get(rt, "other", "k"), "x");
    ck_assert_int_eq(ns_route_kv_put(rt, "", "k", "x"), RMQ_EINVAL);
    ck_assert_int_eq(ns_route_kv_delete(rt, "ns", "k"), RMQ_OK);
    ck_assert_int_eq(ns_route_kv_delete(rt, "ns", "k"), RMQ_ENOTFOUND);
    ck_assert_ptr_null(ns_route_kv_get(rt, "ns", "k"));

    ck_assert_int_eq(ns_route_kv_put(rt, NS_ORDER_TOPIC_NS, "TopicA", "broker-a:4"), RMQ_OK);
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert(rd->order_topic);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_bad_register)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    char why[256] = "";
    char longname[NS_NAME_MAX + 2];
    reg_t r;

    reg_init(&r, "c1", "", "127.0.0.1:10911", 0, 5);
    ck_assert_int_eq(ns_route_register(rt, &r.req, 1, 100, &res, why, sizeof why), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "broker_name"));
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", -1, 5);
    ck_assert_int_eq(ns_route_register(rt, &r.req, 1, 100, &res, why, sizeof why), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "broker_id"));
    memset(longname, 'x', sizeof longname - 1);
    longname[sizeof longname - 1] = '\0';
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    reg_topic(&r, longname, 1, 1, 6);
    ck_assert_int_eq(ns_route_register(rt, &r.req, 1, 100, &res, why, sizeof why), RMQ_EINVAL);
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    reg_topic(&r, "T", -1, 1, 6);
    ck_assert_int_eq(ns_route_register(rt, &r.req, 1, 100, &res, why, sizeof why), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(why, "topic T"));
    ck_assert_uint_eq(ns_route_live_count(rt), 0);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_address_takeover)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    rmq_err_t err;
    reg_t r;

    setup_2m1s(rt, 100);
    /* a new master for broker-a on another address replaces the old one */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:20911", 0, 5);
    ck_assert_int_eq(do_register(rt, &r, 5, 200, &res), RMQ_OK);
    ck_assert_uint_eq(ns_route_live_count(rt), 3);
    ck_assert_uint_eq(ns_route_remove_conn(rt, 1), 0);
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_str_eq(route_addr(rd, "broker-a", 0), "127.0.0.1:20911");
    rmq__topic_route_data__free_unpacked(rd, NULL);

    /* the slave's address is promoted to master (id 1 -> 0) */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 0, 6);
    ck_assert_int_eq(do_register(rt, &r, 6, 300, &res), RMQ_OK);
    rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_str_eq(route_addr(rd, "broker-a", 0), "127.0.0.1:10921");
    ck_assert_ptr_null(route_addr(rd, "broker-a", 1));
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ck_assert_uint_eq(ns_route_live_count(rt), 2);
    ns_route_free(rt);
}
END_TEST

/* The controller's election moves a slave to id 0 at once; the old
 * master's address leaves; its re-registration as master keeps the slot. */
START_TEST(test_set_master)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    rmq_err_t err;
    reg_t r;

    setup_2m1s(rt, 100);
    ck_assert_int_eq(ns_route_set_master(rt, "broker-a", "127.0.0.1:10999", 2), RMQ_ENOTFOUND);
    ck_assert_int_eq(ns_route_set_master(rt, "broker-b", "127.0.0.1:10921", 2), RMQ_ENOTFOUND);
    ck_assert_int_eq(ns_route_set_master(rt, "broker-a", "127.0.0.1:10921", 2), RMQ_OK);
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_str_eq(route_addr(rd, "broker-a", 0), "127.0.0.1:10921");
    ck_assert_ptr_null(route_addr(rd, "broker-a", 1));
    ck_assert_int_eq(route_queue(rd, "broker-a")->perm, 6);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    /* already master: nothing to do */
    ck_assert_int_eq(ns_route_set_master(rt, "broker-a", "127.0.0.1:10921", 2), RMQ_OK);
    /* the old master's connection closing removes nothing any more */
    ck_assert_uint_eq(ns_route_remove_conn(rt, 1), 0);
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 0, 5);
    reg_topic(&r, "TopicA", 4, 4, 6);
    ck_assert_int_eq(do_register(rt, &r, 2, 200, &res), RMQ_OK);
    rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_str_eq(route_addr(rd, "broker-a", 0), "127.0.0.1:10921");
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ns_route_free(rt);
}
END_TEST

/* An address moving to another id of its own set keeps the set's queue
 * data, also when it is the set's only address: in a controller-mode chaos
 * run a master alone in its set registered as a slave (id 0 -> 1), and the
 * route lost broker-a's queues for good, as its registration as master
 * again (same data version) adds none. */
START_TEST(test_move_within_set_keeps_queues)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    rmq_err_t err;
    reg_t r;

    setup_2m1s(rt, 100);
    ck_assert_uint_eq(ns_route_remove_conn(rt, 2), 1);
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 1, 5);
    r.req.master_epoch = 2;
    ck_assert_int_eq(do_register(rt, &r, 1, 200, &res), RMQ_OK);
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_ptr_nonnull(route_queue(rd, "broker-a"));
    ck_assert_str_eq(route_addr(rd, "broker-a", 1), "127.0.0.1:10911");
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ck_assert_int_eq(ns_route_set_master(rt, "broker-a", "127.0.0.1:10911", 3), RMQ_OK);
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    r.req.master_epoch = 3;
    reg_topic(&r, "TopicA", 4, 4, 6);
    ck_assert_int_eq(do_register(rt, &r, 1, 300, &res), RMQ_OK);
    rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_str_eq(route_addr(rd, "broker-a", 0), "127.0.0.1:10911");
    ck_assert_int_eq(route_queue(rd, "broker-a")->read_queue_nums, 4);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ns_route_free(rt);
}
END_TEST

/* The slave the controller elected, registering at its old master epoch
 * before it applied its promotion, is not moved back to its old id; a
 * master the controllers replaced, still registering as master at its old
 * epoch, cannot take id 0 back from the one elected after it; as a slave,
 * or once elected again at a newer epoch, it registers. */
START_TEST(test_replaced_master_refused)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    char why[256] = "";
    rmq_err_t err;
    reg_t r;

    setup_2m1s(rt, 100);
    ck_assert_int_eq(ns_route_set_master(rt, "broker-a", "127.0.0.1:10921", 2), RMQ_OK);
    /* the elected slave's registration sent before it applied its promotion
     * does not move it back to id 1 */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10921", 1, 5);
    r.req.master_epoch = 1;
    ck_assert_int_eq(ns_route_register(rt, &r.req, 2, 150, &res, why, sizeof why), RMQ_EEXIST);
    ck_assert_str_eq(why, "registration of 127.0.0.1:10921 as broker-a id 1 refused: the controller made it "
                          "master at master epoch 2, newer than 1");
    ck_assert_int_eq(ns_route_query_version(rt, &r.req, 2, 150, &res), 1);
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    r.req.master_epoch = 1;
    reg_topic(&r, "TopicA", 4, 4, 6);
    ck_assert_int_eq(ns_route_register(rt, &r.req, 1, 200, &res, why, sizeof why), RMQ_EEXIST);
    ck_assert_str_eq(why, "registration of 127.0.0.1:10911 as broker-a id 0 refused: 127.0.0.1:10921 holds it "
                          "at master epoch 2, newer than 1");
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_str_eq(route_addr(rd, "broker-a", 0), "127.0.0.1:10921");
    rmq__topic_route_data__free_unpacked(rd, NULL);
    r.req.broker_id = 1;
    r.req.master_epoch = 2;
    ck_assert_int_eq(do_register(rt, &r, 1, 300, &res), RMQ_OK);
    ck_assert_str_eq(res.master_addr, "127.0.0.1:10921");
    r.req.broker_id = 0;
    r.req.master_epoch = 3;
    ck_assert_int_eq(do_register(rt, &r, 1, 400, &res), RMQ_OK);
    rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_str_eq(route_addr(rd, "broker-a", 0), "127.0.0.1:10911");
    ck_assert_ptr_nonnull(route_queue(rd, "broker-a"));
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ns_route_free(rt);
}
END_TEST

START_TEST(test_delta_and_version_query)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    Rmq__DataVersion base;
    rmq_err_t err;
    reg_t r;

    /* unknown broker: the query asks for the table, a delta is refused */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    ck_assert_int_eq(ns_route_query_version(rt, &r.req, 1, 100, &res), 1);
    base = r.dv;
    r.req.delta = 1;
    r.req.base_version = &base;
    reg_topic(&r, "TopicD", 4, 4, 6);
    ck_assert_int_eq(do_register(rt, &r, 1, 100, &res), RMQ_ENOTFOUND);
    ck_assert_ptr_null(ns_route_topic(rt, "TopicD", &err));

    /* whole table at version 1, then a delta over it at version 2 */
    r.req.delta = 0;
    r.req.n_topics = 0;
    reg_topic(&r, "TopicA", 4, 4, 6);
    ck_assert_int_eq(do_register(rt, &r, 1, 100, &res), RMQ_OK);
    ck_assert_int_eq(ns_route_query_version(rt, &r.req, 1, 150, &res), 0);
    r.req.delta = 1;
    r.req.n_topics = 0;
    reg_topic(&r, "TopicD", 2, 2, 6);
    r.dv.counter = 2;
    ck_assert_int_eq(do_register(rt, &r, 1, 200, &res), RMQ_OK);
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicD", &err);
    ck_assert_ptr_nonnull(rd);
    ck_assert_int_eq(route_queue(rd, "broker-a")->write_queue_nums, 2);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ck_assert_uint_eq(ns_route_topic_count(rt), 2);    /* TopicA stays */

    /* a delta over a version the name server no longer holds is refused */
    r.dv.counter = 3;
    ck_assert_int_eq(do_register(rt, &r, 1, 300, &res), RMQ_ENOTFOUND);
    /* the query matches only the version and epoch held */
    r.dv.counter = 2;
    ck_assert_int_eq(ns_route_query_version(rt, &r.req, 1, 300, &res), 0);
    r.req.epoch = 6;
    ck_assert_int_eq(ns_route_query_version(rt, &r.req, 1, 300, &res), 1);
    /* the query refreshed liveness: nothing expires at 300 + 200 */
    ck_assert_uint_eq(ns_route_expire(rt, 500, 250), 0);
    ns_route_free(rt);
}
END_TEST

/* Deletes reach the route: a delta names them, a complete table leaves
 * them out; only the registering broker name's queue data goes, and a
 * topic goes with its last queue data. */
START_TEST(test_deletes_in_registrations)
{
    ns_route_t *rt = ns_route_new();
    ns_register_result_t res;
    Rmq__DataVersion base;
    rmq_err_t err;
    reg_t r;
    char *gone[] = {"TopicB", "NoSuchTopic"}, *bad[] = {""};

    setup_2m1s(rt, 100);     /* TopicA on broker-a and broker-b, TopicB on broker-b */
    reg_init(&r, "c1", "broker-b", "127.0.0.1:10931", 0, 5);
    base = r.dv;
    r.req.delta = 1;
    r.req.base_version = &base;
    r.req.deleted_topics = bad;
    r.req.n_deleted_topics = 1;
    r.dv.counter = 2;
    ck_assert_int_eq(do_register(rt, &r, 0, 200, &res), RMQ_EINVAL);
    r.req.deleted_topics = gone;
    r.req.n_deleted_topics = 2;
    ck_assert_int_eq(do_register(rt, &r, 0, 200, &res), RMQ_OK);
    ck_assert_ptr_null(ns_route_topic(rt, "TopicB", &err));
    ck_assert_int_eq(err, RMQ_ENOTFOUND);

    /* broker-b's complete table without TopicA: broker-a's queues stay */
    r.req.delta = 0;
    r.req.n_deleted_topics = 0;
    r.req.complete = 1;
    reg_topic(&r, "TopicC", 2, 2, 6);
    r.dv.counter = 3;
    ck_assert_int_eq(do_register(rt, &r, 0, 300, &res), RMQ_OK);
    Rmq__TopicRouteData *rd = ns_route_topic(rt, "TopicA", &err);
    ck_assert_ptr_nonnull(rd);
    ck_assert_ptr_nonnull(route_queue(rd, "broker-a"));
    ck_assert_ptr_null(route_queue(rd, "broker-b"));
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ck_assert_uint_eq(ns_route_topic_count(rt), 2);    /* TopicA, TopicC */

    /* a table without complete only adds */
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    reg_topic(&r, "TopicE", 1, 1, 6);
    r.dv.counter = 9;
    ck_assert_int_eq(do_register(rt, &r, 0, 400, &res), RMQ_OK);
    ck_assert_uint_eq(ns_route_topic_count(rt), 3);
    ns_route_free(rt);
}
END_TEST

/* Registers n topics (names "T<i*7919 % n>", unordered, one repeated: the
 * later config wins) in one request and checks they are all found and
 * listed sorted; then a complete table of half of them drops the rest, and
 * a small delta over the big table adds and updates. */
START_TEST(test_many_topics_merge)
{
    enum { N = 5000 };
    ns_route_t *rt = ns_route_new();
    Rmq__TopicConfig *tc = calloc(N + 1, sizeof(*tc));
    Rmq__TopicConfig **tcp = calloc(N + 1, sizeof(*tcp));
    char (*names)[16] = calloc(N, 16);
    ns_register_result_t res;
    rmq_err_t err;
    reg_t r;

    for (int i = 0; i < N; i++) {
        snprintf(names[i], 16, "T%d", (i * 7919) % N);
        rmq__topic_config__init(&tc[i]);
        tc[i].topic_name = names[i];
        tc[i].read_queue_nums = tc[i].write_queue_nums = 8;
        tc[i].perm = 6;
        tcp[i] = &tc[i];
    }
    tc[N] = tc[0];                       /* the same topic twice */
    tc[N].write_queue_nums = 4;
    tcp[N] = &tc[N];
    reg_init(&r, "c1", "broker-a", "127.0.0.1:10911", 0, 5);
    reg_topic(&r, "T7", 8, 8, 6);        /* an existing topic first */
    ck_assert_int_eq(do_register(rt, &r, 1, 100, &res), RMQ_OK);
    r.req.topics = tcp;
    r.req.n_topics = N + 1;
    r.dv.counter = 2;
    ck_assert_int_eq(do_register(rt, &r, 1, 100, &res), RMQ_OK);
    ck_assert_uint_eq(ns_route_topic_count(rt), N);
    for (int i = 0; i < N; i++) {
        Rmq__TopicRouteData *rd = ns_route_topic(rt, names[i], &err);
        ck_assert_msg(rd != NULL, "%s not found", names[i]);
        rmq__topic_route_data__free_unpacked(rd, NULL);
    }
    Rmq__TopicList *tl = ns_route_topic_list(rt);
    ck_assert_uint_eq(tl->n_topics, N);
    for (size_t i = 1; i < tl->n_topics; i++)
        ck_assert_int_lt(strcmp(tl->topics[i - 1], tl->topics[i]), 0);
    rmq__topic_list__free_unpacked(tl, NULL);
    Rmq__TopicRouteData *rd = ns_route_topic(rt, names[0], &err);
    ck_assert_int_eq(route_queue(rd, "broker-a")->write_queue_nums, 4);
    rmq__topic_route_data__free_unpacked(rd, NULL);

    r.req.complete = 1;                  /* tcp[0, N/2): the rest goes */
    r.req.n_topics = N / 2;
    r.dv.counter = 3;
    ck_assert_int_eq(do_register(rt, &r, 1, 100, &res), RMQ_OK);
    ck_assert_uint_eq(ns_route_topic_count(rt), N / 2);
    for (int i = 0; i < N; i++) {
        rd = ns_route_topic(rt, names[i], &err);
        ck_assert_msg((rd != NULL) == (i < N / 2), "%s: %s", names[i], rd ? "kept" : "dropped");
        if (rd)
            rmq__topic_route_data__free_unpacked(rd, NULL);
    }

    Rmq__DataVersion base = r.dv;
    Rmq__TopicConfig *delta[] = {&tc[N - 1], &tc[1]};
    tc[1].write_queue_nums = 2;
    r.req.complete = 0;
    r.req.delta = 1;
    r.req.base_version = &base;
    r.req.topics = delta;
    r.req.n_topics = 2;
    r.dv.counter = 4;
    ck_assert_int_eq(do_register(rt, &r, 1, 100, &res), RMQ_OK);
    ck_assert_uint_eq(ns_route_topic_count(rt), N / 2 + 1);
    rd = ns_route_topic(rt, names[N - 1], &err);
    ck_assert_ptr_nonnull(rd);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    rd = ns_route_topic(rt, names[1], &err);
    ck_assert_int_eq(route_queue(rd, "broker-a")->write_queue_nums, 2);
    rmq__topic_route_data__free_unpacked(rd, NULL);
    ns_route_free(rt);
    free(tc);
    free(tcp);
    free(names);
}
END_TEST

static Suite *route_suite(void)
{
    Suite *s = suite_create("ns_route");
    TCase *tc = tcase_create("route");

    tcase_set_timeout(tc, 10);
    tcase_add_test(tc, test_vec_sorted);
    tcase_add_test(tc, test_register_and_route);
    tcase_add_test(tc, test_slave_learns_master);
    tcase_add_test(tc, test_data_version_guards_queue_data);
    tcase_add_test(tc, test_stale_register_ignored);
    tcase_add_test(tc, test_unregister);
    tcase_add_test(tc, test_stale_unregister_keeps_newer);
    tcase_add_test(tc, test_master_leaves_slave_stays);
    tcase_add_test(tc, test_expire);
    tcase_add_test(tc, test_cluster_info_and_topic_list);
    tcase_add_test(tc, test_delete_topic_and_perm);
    tcase_add_test(tc, test_kv);
    tcase_add_test(tc, test_bad_register);
    tcase_add_test(tc, test_address_takeover);
    tcase_add_test(tc, test_set_master);
    tcase_add_test(tc, test_move_within_set_keeps_queues);
    tcase_add_test(tc, test_replaced_master_refused);
    tcase_add_test(tc, test_delta_and_version_query);
    tcase_add_test(tc, test_deletes_in_registrations);
    tcase_add_test(tc, test_many_topics_merge);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(route_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
