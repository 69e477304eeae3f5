/* test_broker_tables.c: the broker's in-process pieces without sockets:
 * the hash map, the naming rule, the configuration table and its cross-key
 * rules, and the metadata tables (topics, groups, consumer offsets) with
 * their persistence across a reload. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bk_config.h"
#include "bk_groups_pb.h"
#include "bk_map.h"
#include "bk_offsets_pb.h"
#include "bk_persist.h"
#include "bk_topics_pb.h"
#include "rmq_message.h"
#include "rmq_file.h"

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "/tmp/rmq-bk-tables-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

START_TEST(test_map_put_get_delete_iterate)
{
    bk_map_t *m = bk_map_new();
    static int vals[1000];
    char key[32];
    for (int i = 0; i < 1000; i++) {
        vals[i] = i;
        int n = snprintf(key, sizeof key, "k%d", i);
        ck_assert_int_eq(bk_map_put(m, key, (size_t)n, &vals[i]), RMQ_OK);
    }
    ck_assert_uint_eq(bk_map_count(m), 1000);
    ck_assert_ptr_eq(bk_map_get(m, "k517", 4), &vals[517]);
    ck_assert_ptr_null(bk_map_get(m, "k1000", 5));
    ck_assert_ptr_eq(bk_map_del(m, "k3", 2), &vals[3]);
    ck_assert_ptr_null(bk_map_del(m, "k3", 2));
    /* delete every even value while iterating; every entry is seen once */
    size_t cursor = 0, seen = 0;
    const char *k;
    void *v;
    while (bk_map_next(m, &cursor, &k, &v)) {
        seen++;
        if (*(int *)v % 2 == 0)
            ck_assert_ptr_eq(bk_map_del_current(m, &cursor), v);
    }
    ck_assert_uint_eq(seen, 999);
    ck_assert_uint_eq(bk_map_count(m), 499);
    cursor = 0;
    while (bk_map_next(m, &cursor, &k, &v))
        ck_assert_int_eq(*(int *)v % 2, 1);
    bk_map_free(m, NULL);
}
END_TEST

START_TEST(test_names)
{
    const char *why = NULL;
    ck_assert(rmq_name_is_valid("%RETRY%group_a-1|x", 18, &why));
    ck_assert(!rmq_name_is_valid("", 0, &why));
    ck_assert(!rmq_name_is_valid("a b", 3, &why));
    ck_assert_ptr_nonnull(strstr(why, "%|a-zA-Z0-9_-"));
    char longname[200];
    memset(longname, 'a', sizeof longname);
    ck_assert(rmq_name_is_valid(longname, 127, &why));
    ck_assert(!rmq_name_is_valid(longname, 128, &why));
    ck_assert_ptr_nonnull(strstr(why, "127"));
}
END_TEST

START_TEST(test_config_rules)
{
    bk_config_t cfg;
    char err[512];
    ck_assert_int_eq(bk_config_init(&cfg), RMQ_OK);
    ck_assert_int_eq(cfg.listen_port, 10911);
    ck_assert_int_eq(cfg.flush_disk_type, 0);
    ck_assert_int_eq(bk_config_check(&cfg, err, sizeof err), RMQ_OK);
    const char *text = "mappedFileSizeCommitLog=1048576\nbrokerRole=SYNC_MASTER\nflushDiskType=SYNC_FLUSH\n";
    ck_assert_int_eq(rmq_config_load_text(bk_config_table(), &cfg, text, strlen(text), "t", err, sizeof err), RMQ_OK);
    ck_assert_int_eq(cfg.maped_file_size_commit_log, 1048576);
    ck_assert_int_eq(cfg.broker_role, BK_SYNC_MASTER);
    st_store_config_t sc;
    bk_config_to_store(&cfg, &sc);
    ck_assert_int_eq(sc.flush_type, ST_SYNC_FLUSH);
    ck_assert_uint_eq(sc.store_host_ip, 0x7f000001u);
    ck_assert_int_eq(rmq_config_set(bk_config_table(), &cfg, "listenPort", "70000", err, sizeof err), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "listenPort=70000"));
    ck_assert_int_eq(rmq_config_set(bk_config_table(), &cfg, "brokerRole", "SLAVE", err, sizeof err), RMQ_OK);
    ck_assert_int_eq(bk_config_check(&cfg, err, sizeof err), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "brokerId=0"));
    ck_assert_int_eq(rmq_config_set(bk_config_table(), &cfg, "brokerId", "1", err, sizeof err), RMQ_OK);
    ck_assert_int_eq(bk_config_check(&cfg, err, sizeof err), RMQ_OK);
    ck_assert_int_eq(rmq_config_set(bk_config_table(), &cfg, "namesrvAddr", "127.0.0.1:9876; 127.0.0.1:9877",
                                    err, sizeof err), RMQ_OK);
    ck_assert_int_eq(bk_config_check(&cfg, err, sizeof err), RMQ_OK);
    ck_assert_int_eq(rmq_config_set(bk_config_table(), &cfg, "namesrvAddr", "127.0.0.1:9876;nohost", err, sizeof err),
                     RMQ_OK);
    ck_assert_int_eq(bk_config_check(&cfg, err, sizeof err), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "'nohost'"));
    ck_assert_int_eq(rmq_config_set(bk_config_table(), &cfg, "namesrvAddr", "", err, sizeof err), RMQ_OK);
    ck_assert_int_eq(rmq_config_set(bk_config_table(), &cfg, "brokerIP1", "host.example", err, sizeof err), RMQ_OK);
    ck_assert_int_eq(bk_config_check(&cfg, err, sizeof err), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "brokerIP1=host.example"));
    bk_config_deinit(&cfg);
}
END_TEST

static int changes;

static void on_change(void *arg, const char *name)
{
    changes++;
}

START_TEST(test_metadata_persists)
{
    char err[512];
    bk_persist_t *p = bk_persist_new();
    bk_topics_t *t = bk_topics_new(dir, p, 1, 8, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    bk_topics_on_change(t, on_change, NULL);
    const bk_topic_t *tbw = bk_topics_get(t, "TBW102", 6);
    ck_assert_ptr_nonnull(tbw);
    ck_assert_int_eq(tbw->write_queues, 8);
    Rmq__DataVersion dv0, dv1;
    bk_topics_version(t, &dv0);
    const bk_topic_t *auto_t = bk_topics_auto_create(t, "AutoTopic", 9, "TBW102", 4);
    ck_assert_ptr_nonnull(auto_t);
    ck_assert_int_eq(auto_t->write_queues, 4);
    ck_assert_int_eq(auto_t->perm, RMQ__PERM__PERM_READ | RMQ__PERM__PERM_WRITE);
    ck_assert_ptr_null(bk_topics_auto_create(t, "Other", 5, "NoTemplate", 4));
    bk_topics_version(t, &dv1);
    ck_assert_int_gt(dv1.counter, dv0.counter);
    ck_assert_int_eq(changes, 1);

    bk_groups_t *g = bk_groups_new(dir, p, 1, err, sizeof err);
    ck_assert_ptr_nonnull(bk_groups_use(g, "gA", 2));
    ck_assert_int_eq(bk_groups_get(g, "gA", 2)->retry_max_times, 16);

    bk_offsets_t *o = bk_offsets_new(dir, p, err, sizeof err);
    ck_assert_int_eq(bk_offsets_commit(o, "AutoTopic", "gA", 3, 77), RMQ_OK);
    ck_assert_int_eq(bk_offsets_query(o, "AutoTopic", "gA", 3), 77);
    ck_assert_int_eq(bk_offsets_query(o, "AutoTopic", "gA", 2), -1);
    bk_offsets_persist(o);
    bk_offsets_free(o);
    bk_groups_free(g);
    bk_topics_free(t);
    bk_persist_free(p);

    /* reload */
    p = bk_persist_new();
    t = bk_topics_new(dir, p, 0, 8, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    ck_assert_ptr_nonnull(bk_topics_get(t, "AutoTopic", 9));
    ck_assert_ptr_null(bk_topics_get(t, "TBW102", 6));    /* auto-create now off */
    g = bk_groups_new(dir, p, 0, err, sizeof err);
    ck_assert_ptr_nonnull(bk_groups_get(g, "gA", 2));
    ck_assert_ptr_null(bk_groups_use(g, "gB", 2));
    o = bk_offsets_new(dir, p, err, sizeof err);
    ck_assert_int_eq(bk_offsets_query(o, "AutoTopic", "gA", 3), 77);
    bk_offsets_delete_topic(o, "AutoTopic");
    ck_assert_int_eq(bk_offsets_query(o, "AutoTopic", "gA", 3), -1);
    bk_offsets_free(o);
    bk_groups_free(g);
    bk_topics_free(t);
    bk_persist_free(p);

    /* a corrupt file is an error naming the file */
    char path[300];
    snprintf(path, sizeof path, "%s/topics.pb", dir);
    FILE *f = fopen(path, "w");
    fputs("\xff\xff\xff garbage", f);
    fclose(f);
    p = bk_persist_new();
    ck_assert_ptr_null(bk_topics_new(dir, p, 1, 8, err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "topics.pb"));
    bk_persist_free(p);
}
END_TEST

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    long n = -1;
    if (f && fseek(f, 0, SEEK_END) == 0)
        n = ftell(f);
    if (f)
        fclose(f);
    return n;
}

static void topic_put(bk_topics_t *t, const char *name, int queues)
{
    bk_topic_t topic = {.read_queues = queues, .write_queues = queues, .perm = 6};
    snprintf(topic.name, sizeof topic.name, "%s", name);
    ck_assert_int_eq(bk_topics_update(t, &topic), RMQ_OK);
}

/* Topic changes are records of config/topics.log: the table is the table
 * file plus the log's newer records; a torn last record is cut; records a
 * newer table file already holds (a crash between a compaction's table
 * write and its log reset) are skipped. */
START_TEST(test_topic_change_log)
{
    char err[512], pb[300], log[300];
    snprintf(pb, sizeof pb, "%s/topics.pb", dir);
    snprintf(log, sizeof log, "%s/topics.log", dir);
    bk_persist_t *p = bk_persist_new();
    bk_topics_t *t = bk_topics_new(dir, p, 0, 8, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    topic_put(t, "LogA", 4);
    topic_put(t, "LogB", 4);
    topic_put(t, "LogA", 8);
    ck_assert_int_eq(bk_topics_delete(t, "LogB"), RMQ_OK);
    Rmq__DataVersion dv0, dv1;
    bk_topics_version(t, &dv0);
    bk_persist_free(p);          /* the appends ran; no table file: a crash now */
    bk_topics_free(t);
    ck_assert_int_ne(access(pb, F_OK), 0);
    long good = file_size(log);
    ck_assert_int_gt(good, 0);

    FILE *f = fopen(log, "ab");  /* a header promising 64 bytes, 3 of them written */
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite("\0\0\0\x40\x12\x34\x56\x78" "abc", 1, 11, f), 11);
    fclose(f);
    p = bk_persist_new();
    t = bk_topics_new(dir, p, 0, 8, err, sizeof err);
    ck_assert_msg(t != NULL, "%s", err);
    ck_assert_int_eq(bk_topics_get(t, "LogA", 4)->write_queues, 8);
    ck_assert_ptr_null(bk_topics_get(t, "LogB", 4));
    bk_topics_version(t, &dv1);
    ck_assert_int_eq(dv1.counter, dv0.counter);
    ck_assert_int_eq(dv1.timestamp, dv0.timestamp);
    ck_assert_int_eq(file_size(log), good);
    bk_persist_free(p);
    bk_topics_free(t);

    Rmq__TopicConfig tc;
    Rmq__TopicConfig *tcp = &tc;
    Rmq__TopicConfigTable tab = RMQ__TOPIC_CONFIG_TABLE__INIT;
    bk_topic_t a16 = {.read_queues = 16, .write_queues = 16, .perm = 6};
    strcpy(a16.name, "LogA");
    bk_topic_to_pb(&a16, &tc);
    tab.topics = &tcp;
    tab.n_topics = 1;
    tab.data_version = &dv0;
    uint8_t buf[256];
    size_t len = rmq__topic_config_table__pack(&tab, buf);
    ck_assert_int_eq(rmq_file_write_atomic(pb, buf, len), RMQ_OK);
    p = bk_persist_new();
    t = bk_topics_new(dir, p, 0, 8, err, sizeof err);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(bk_topics_get(t, "LogA", 4)->write_queues, 16);
    ck_assert_uint_eq(bk_topics_count(t), 1);
    bk_persist_free(p);
    bk_topics_free(t);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("broker_tables");
    TCase *tc = tcase_create("tables");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, test_map_put_get_delete_iterate);
    tcase_add_test(tc, test_names);
    tcase_add_test(tc, test_config_rules);
    tcase_add_test(tc, test_topic_change_log);
    tcase_add_test(tc, test_metadata_persists);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
