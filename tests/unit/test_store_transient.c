/* test_store_transient.c: the transient store pool (transientStorePoolEnable):
 * every append is in the file as soon as it is made, before any flush, and
 * every reader (pulls, HA raw reads, reads by id) sees those bytes; rolls
 * give buffers back at once; a buffer's pages the file holds go back to the
 * kernel; a process crash keeps every append; a
 * SYNC_FLUSH waiter is released only once its bytes are written to the file
 * and synced; a commit leaves no unwritten extent just past what it wrote
 * (so the group commit's fdatasyncs convert none). */
#include <check.h>
#include <fcntl.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/event.h>

#include "rmq_loop.h"
#include "rmq_time.h"
#include "st_internal.h"
#include "test_store_util.h"

static ts_env_t env;

static void setup(void)
{
    ts_env_init(&env);
    env.cfg.transient_store_pool = 1;
    env.cfg.transient_store_pool_size = 2;
}

static void teardown(void)
{
    ts_env_cleanup(&env);
}

/* Reads [off, off + len) of the commit-log file starting at 0. */
static void read_file(uint8_t *out, int64_t off, size_t len)
{
    char path[256];
    int fd;

    ts_path(&env, path, sizeof(path), "commitlog/00000000000000000000");
    fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pread(fd, out, len, off), (ssize_t)len);
    close(fd);
}

/* The commit log's raw bytes [0, len) as an HA read serves them. */
static void read_raw(st_store_t *st, uint8_t *out, size_t len)
{
    struct evbuffer *buf = evbuffer_new();

    ck_assert_int_eq(st_store_read_raw(st, 0, len, buf), (int64_t)len);
    ck_assert_int_eq(evbuffer_remove(buf, out, len), (int)len);
    evbuffer_free(buf);
}

/* Checks that queue of topic holds n messages from offset 0, then again
 * after closing st and opening the store anew; closes it. */
static void check_reopened(st_store_t *st, const char *topic, int32_t queue, int64_t n)
{
    ts_check_queue(st, topic, queue, 0, 1, n);
    st_store_close(st);
    st = ts_open(&env);
    ts_check_queue(st, topic, queue, 0, 1, n);
    st_store_close(st);
}

START_TEST(test_every_append_in_the_file)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res;
    struct evbuffer *one = evbuffer_new();
    uint8_t raw[16384], file[16384];
    int64_t end;

    for (uint32_t i = 0; i < 40; i++) {
        ts_put(st, "Pool", 0, i, 100 + i * 7, NULL, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
    }
    end = res.end_offset;
    ck_assert_int_lt(end, (int64_t)sizeof(raw));
    /* no flush yet: the file already holds every byte the readers see */
    ck_assert_ptr_nonnull(atomic_load(&st->cl.segs[0]->wbuf));
    read_file(file, 0, (size_t)end);
    read_raw(st, raw, (size_t)end);
    ck_assert_int_eq(memcmp(file, raw, (size_t)end), 0);
    ck_assert_int_eq(st_store_read_record(st, res.phys_offset, one), RMQ_OK);
    ck_assert_int_eq((int64_t)evbuffer_get_length(one), end - res.phys_offset);
    ck_assert_int_eq(memcmp(evbuffer_pullup(one, -1), raw + res.phys_offset,
                            (size_t)(end - res.phys_offset)), 0);
    evbuffer_free(one);
    check_reopened(st, "Pool", 0, 40);
}
END_TEST

START_TEST(test_rolls_return_buffers)
{
    st_store_t *st = ts_open(&env);
    st_put_result_t res;
    uint32_t seq = 0;

    /* never flushed: each full file is already in its file, so a roll gives
     * its buffer back and the pool never runs dry */
    for (; seq < 600; seq++) {
        ts_put(st, "Roll", 1, seq, 700 + (seq * 37) % 900, NULL, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
        ck_assert_int_eq(st_pool_lent(st->pool), 1);
    }
    ck_assert_int_ge(st->cl.nseg, 4);
    ck_assert_ptr_nonnull(atomic_load(&st->cl.segs[st->cl.nseg - 1]->wbuf));
    ts_check_queue(st, "Roll", 1, 0, 1, 600);
    st_store_close(st);
    st = ts_open(&env);
    ts_check_queue(st, "Roll", 1, 0, 1, 600);
    /* the file active at open is written through its mapping until a roll */
    ck_assert_ptr_null(atomic_load(&st->cl.segs[st->cl.nseg - 1]->wbuf));
    for (; seq < 700; seq++) {
        ts_put(st, "Roll", 1, seq, 700 + (seq * 37) % 900, NULL, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
    }
    ck_assert_ptr_nonnull(atomic_load(&st->cl.segs[st->cl.nseg - 1]->wbuf));
    check_reopened(st, "Roll", 1, 700);
}
END_TEST

/* Resident pages of buf[0, len) (mincore). */
static int64_t resident_pages(const uint8_t *buf, int64_t len)
{
    int64_t pages = len / 4096, n = 0;
    unsigned char *vec = calloc((size_t)pages, 1);

    ck_assert_ptr_nonnull(vec);
    ck_assert_int_eq(mincore((void *)buf, (size_t)len, vec), 0);
    for (int64_t i = 0; i < pages; i++)
        n += vec[i] & 1;
    free(vec);
    return n;
}

START_TEST(test_written_buffer_released)
{
    st_store_t *st;
    st_put_result_t res;
    uint32_t seq = 0;
    uint8_t *buf;

    env.cfg.commitlog_file_size = 4 * ST_RELEASE_CHUNK;
    st = ts_open(&env);
    ts_put(st, "Release", 0, seq++, 4000, NULL, &res);
    buf = atomic_load(&st->cl.segs[0]->wbuf);
    ck_assert_ptr_nonnull(buf);
    do
        ts_put(st, "Release", 0, seq++, 4000, NULL, &res);
    while (res.end_offset < 2 * ST_RELEASE_CHUNK + 8192);
    /* the two chunks wholly in the file hold no memory; the third does */
    ck_assert_int_eq(resident_pages(buf, 2 * ST_RELEASE_CHUNK), 0);
    ck_assert_int_gt(resident_pages(buf + 2 * ST_RELEASE_CHUNK, ST_RELEASE_CHUNK), 0);
    check_reopened(st, "Release", 0, seq);
}
END_TEST

static void crash_after_appends(ts_env_t *e)
{
    st_store_t *st = ts_open(e);
    st_put_result_t res;

    for (uint32_t i = 0; i < 50; i++)
        ts_put(st, "Crash", 0, i, 200, NULL, &res);
    if (st_store_flush_now(st) != RMQ_OK)
        _exit(1);
    for (uint32_t i = 50; i < 80; i++)
        ts_put(st, "Crash", 0, i, 200, NULL, &res);
}

START_TEST(test_crash_keeps_every_append)
{
    st_store_t *st;

    ts_crash_child(&env, crash_after_appends);
    st = ts_open(&env);
    /* the 30 sends after the last flush were written to the file as they
     * were appended: a process crash (not a power cut) loses none of them,
     * as through the mapping */
    ck_assert_int_eq(st_store_max_offset(st, "Crash", 0), 80);
    ts_check_queue(st, "Crash", 0, 0, 1, 80);
    st_store_close(st);
}
END_TEST

typedef struct sync_ctx {
    st_store_t *st;
    int64_t end;
    int done, ok, covered;
} sync_ctx_t;

/* A waiter's release: its bytes must be in the file and synced by now. */
static void on_synced(rmq_err_t err, void *arg)
{
    sync_ctx_t *c = arg;
    st_segment_t *seg = st_commitlog_find(&c->st->cl, c->end - 1);
    int64_t rel = c->end - seg->start;

    c->done++;
    c->ok += err == RMQ_OK;
    c->covered += atomic_load(&seg->committed) >= rel && atomic_load(&seg->flushed) >= rel;
}

START_TEST(test_sync_flush_waiters_after_write_and_sync)
{
    struct event_base *base;
    rmq_loop_poster_t *poster;
    st_store_t *st;
    sync_ctx_t ctx[200];
    int64_t deadline;
    int done = 0;

    env.cfg.flush_type = ST_SYNC_FLUSH;
    rmq_loop_global_init();
    base = event_base_new();
    poster = rmq_loop_poster_new(base);
    st = ts_open(&env);
    ck_assert_int_eq(st_store_start(st, base, poster), RMQ_OK);
    for (int i = 0; i < 200; i++) {
        st_put_result_t res;

        ts_put(st, "Sync", i % 4, (uint32_t)i, 300 + i, NULL, &res);
        ck_assert_int_eq(res.status, ST_PUT_OK);
        ctx[i] = (sync_ctx_t){ .st = st, .end = res.end_offset };
        ck_assert_int_eq(st_store_wait_flush(st, res.end_offset, on_synced, &ctx[i]), RMQ_OK);
        if (i % 16 == 0)
            event_base_loop(base, EVLOOP_NONBLOCK);
    }
    deadline = rmq_mono_ms() + 20000;
    while (rmq_mono_ms() < deadline) {
        done = 0;
        for (int i = 0; i < 200; i++)
            done += ctx[i].done;
        if (done == 200)
            break;
        event_base_loop(base, EVLOOP_NONBLOCK);
        rmq_sleep_ms(1);
    }
    for (int i = 0; i < 200; i++) {
        ck_assert_int_eq(ctx[i].ok, 1);
        ck_assert_int_eq(ctx[i].covered, 1);
    }
    ck_assert_int_ge(st->cl.nseg, 2);
    st_store_close(st);
    rmq_loop_poster_free(poster);
    event_base_free(base);
    st = ts_open(&env);
    for (int q = 0; q < 4; q++)
        ck_assert_int_eq(st_store_max_offset(st, "Sync", q), 50);
    st_store_close(st);
}
END_TEST

/* Bytes of [from, to) of the first commit-log file in unwritten extents
 * (allocated, never written: the next sync there also commits their
 * conversion); 0 where FIEMAP is not supported (no such extents). */
static int64_t unwritten_bytes(int64_t from, int64_t to)
{
    enum { MAX_EXTENTS = 64 };
    struct {
        struct fiemap map;
        struct fiemap_extent ext[MAX_EXTENTS];
    } q;
    char path[256];
    int64_t total = 0;
    int fd, rc;

    ts_path(&env, path, sizeof(path), "commitlog/00000000000000000000");
    fd = open(path, O_RDONLY);
    ck_assert_int_ge(fd, 0);
    memset(&q, 0, sizeof(q));
    q.map.fm_start = (uint64_t)from;
    q.map.fm_length = (uint64_t)(to - from);
    q.map.fm_flags = FIEMAP_FLAG_SYNC;
    q.map.fm_extent_count = MAX_EXTENTS;
    rc = ioctl(fd, FS_IOC_FIEMAP, &q.map);
    close(fd);
    if (rc != 0)
        return 0;
    for (uint32_t i = 0; i < q.map.fm_mapped_extents; i++) {
        const struct fiemap_extent *e = &q.ext[i];
        int64_t lo = (int64_t)e->fe_logical, hi = lo + (int64_t)e->fe_length;

        if (!(e->fe_flags & FIEMAP_EXTENT_UNWRITTEN))
            continue;
        lo = lo > from ? lo : from;
        hi = hi < to ? hi : to;
        total += hi > lo ? hi - lo : 0;
    }
    return total;
}

START_TEST(test_commit_zeroes_ahead)
{
    st_store_t *st;
    st_put_result_t res;
    uint32_t seq = 0;

    env.cfg.commitlog_file_size = 4 * ST_ZERO_AHEAD;
    st = ts_open(&env);
    ts_put(st, "Ahead", 0, seq++, 300, NULL, &res);
    ck_assert_int_eq(st_store_flush_now(st), RMQ_OK);
    ck_assert_int_eq(unwritten_bytes(0, res.end_offset + ST_ZERO_AHEAD / 2), 0);
    /* past half the window the next commit zeroes further ahead */
    while (res.end_offset < ST_ZERO_AHEAD)
        ts_put(st, "Ahead", 0, seq++, 4000, NULL, &res);
    ck_assert_int_eq(st_store_flush_now(st), RMQ_OK);
    ck_assert_int_eq(unwritten_bytes(0, res.end_offset + ST_ZERO_AHEAD / 2), 0);
    check_reopened(st, "Ahead", 0, seq);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("store_transient");
    TCase *tc = tcase_create("pool");
    SRunner *sr;
    int failed;

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_every_append_in_the_file);
    tcase_add_test(tc, test_rolls_return_buffers);
    tcase_add_test(tc, test_written_buffer_released);
    tcase_add_test(tc, test_crash_keeps_every_append);
    tcase_add_test(tc, test_sync_flush_waiters_after_write_and_sync);
    tcase_add_test(tc, test_commit_zeroes_ahead);
    suite_add_tcase(s, tc);
    sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
