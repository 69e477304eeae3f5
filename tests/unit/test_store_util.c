/* test_store_util.c: helpers shared by the store unit tests. */
#define _XOPEN_SOURCE 700
#include "test_store_util.h"

#include <check.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

void ts_env_init(ts_env_t *env)
{
    memset(env, 0, sizeof(*env));
    snprintf(env->dir, sizeof(env->dir), "/tmp/rmq-store-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(env->dir));
    env->cfg.root_dir = env->dir;
    env->cfg.commitlog_file_size = TS_FILE_SIZE;
    env->cfg.cq_entries_per_file = TS_CQ_PER_FILE;
    env->cfg.flush_type = ST_ASYNC_FLUSH;
    env->cfg.flush_interval_ms = 50;
    env->cfg.flush_least_pages = 4;
    env->cfg.flush_thorough_interval_ms = 1000;
    env->cfg.sync_flush_timeout_ms = 5000;
    env->cfg.max_message_size = 16 * 1024;
    env->cfg.file_reserved_hours = 72;
    env->cfg.delete_when = "04";
    env->cfg.disk_max_used_ratio = 75;
    env->cfg.disk_full_ratio = 90;
    env->cfg.store_host_ip = 0x7F000001;
    env->cfg.store_host_port = 10911;
    env->cfg.transient_store_pool = getenv("RMQ_TEST_TRANSIENT_POOL") != NULL;
    env->cfg.transient_store_pool_size = 2;
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void ts_env_cleanup(ts_env_t *env)
{
    nftw(env->dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

st_store_t *ts_open(const ts_env_t *env)
{
    char err[256] = "";
    st_store_t *st = st_store_open(&env->cfg, err, sizeof(err));

    ck_assert_msg(st != NULL, "open: %s", err);
    return st;
}

void ts_body(uint32_t seq, uint8_t *buf, size_t len)
{
    uint32_t x = seq * 2654435761u + 1;

    for (size_t i = 0; i < len; i++) {
        x ^= x << 13;
        x ^= x >> 17;
        x ^= x << 5;
        buf[i] = (uint8_t)x;
    }
    if (len >= 4) {
        buf[0] = (uint8_t)(seq >> 24);
        buf[1] = (uint8_t)(seq >> 16);
        buf[2] = (uint8_t)(seq >> 8);
        buf[3] = (uint8_t)seq;
    }
}

void ts_put(st_store_t *st, const char *topic, int32_t qid, uint32_t seq, size_t len,
            const char *tag, st_put_result_t *res)
{
    uint8_t *body = malloc(len ? len : 1);
    char props[64] = "";
    st_msg_t m = {0};

    ts_body(seq, body, len);
    if (tag)
        snprintf(props, sizeof(props), "TAGS\x01%s", tag);
    m.topic = topic;
    m.topic_len = strlen(topic);
    m.queue_id = qid;
    m.born_timestamp = 1000 + seq;
    m.body = body;
    m.body_len = len;
    m.properties = props;
    m.properties_len = strlen(props);
    m.tag_code = tag ? st_tag_hash(tag, strlen(tag)) : 0;
    st_store_put(st, &m, res);
    free(body);
}

size_t ts_records(struct evbuffer *buf, rmq_record_t *out, size_t max, uint8_t **flat)
{
    size_t len = evbuffer_get_length(buf), pos = 0, n = 0;

    *flat = malloc(len ? len : 1);
    evbuffer_copyout(buf, *flat, len);
    while (pos < len) {
        rmq_record_t rec;

        ck_assert_int_eq(rmq_record_decode(*flat + pos, len - pos, 1, &rec), RMQ_OK);
        if (n < max)
            out[n] = rec;
        n++;
        pos += rec.total_size;
    }
    return n;
}

void ts_check_body(const rmq_record_t *rec, uint32_t seq)
{
    uint8_t *want = malloc(rec->body_len ? rec->body_len : 1);

    ts_body(seq, want, rec->body_len);
    ck_assert_mem_eq(rec->body, want, rec->body_len);
    free(want);
}

void ts_path(const ts_env_t *env, char *out, size_t len, const char *rel)
{
    snprintf(out, len, "%s/%s", env->dir, rel);
}

void ts_crash_child(ts_env_t *env, void (*fn)(ts_env_t *env))
{
    int status;
    pid_t pid = fork();

    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        fn(env);
        _exit(0);
    }
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

void ts_check_queue(st_store_t *st, const char *topic, int32_t qid, uint32_t first_seq,
                    uint32_t seq_step, int64_t count)
{
    int64_t offset = 0, seen = 0;

    while (offset < count) {
        struct evbuffer *buf = evbuffer_new();
        st_get_result_t gr;
        rmq_record_t recs[64];
        uint8_t *flat;
        size_t n;

        st_store_get(st, topic, qid, offset, 32, 0, NULL, buf, &gr);
        ck_assert_int_eq(gr.status, ST_GET_FOUND);
        n = ts_records(buf, recs, 64, &flat);
        ck_assert_uint_eq(n, (size_t)gr.msg_count);
        for (size_t i = 0; i < n; i++) {
            ck_assert_int_eq(recs[i].queue_offset, offset + (int64_t)i);
            ts_check_body(&recs[i], first_seq + (uint32_t)(offset + (int64_t)i) * seq_step);
        }
        seen += (int64_t)n;
        offset = gr.next_begin_offset;
        free(flat);
        evbuffer_free(buf);
    }
    ck_assert_int_eq(seen, count);
}
