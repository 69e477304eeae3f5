/* test_store_truncate.c: st_store_truncate on real store files: the commit
 * log (several segments), the consume queues and the key index are cut back
 * to a record boundary and later appends continue from there; a truncation
 * interrupted like a crash (after the marker, after the commit log is cut)
 * is finished by the next open; the same with the store's threads running;
 * the read limit (confirm offset) hides what lies past it. A slave store
 * that received a master's log in byte-range chunks keeps a partial record
 * at its end while it follows, and loses it (st_store_trim_torn_tail) when
 * promoted, so what it acknowledges as master survives a crash and its own
 * slaves replicate past that point. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "rmq_loop.h"
#include "rmq_time.h"
#include "st_checkpoint.h"
#include "rmq_file.h"
#include "st_internal.h"
#include "test_store_util.h"

#define N_MSGS 120
#define CUT_AT 70                    /* the first message cut */

static ts_env_t env;

static void setup(void)
{
    ts_env_init(&env);
}

static void teardown(void)
{
    ts_env_cleanup(&env);
}

/* Puts message seq, a body of len bytes, on queue seq % 2 of "Tr" with key
 * "k<seq>"; its phys offset goes to *phys when not NULL. */
static void put_keyed_len(st_store_t *st, uint32_t seq, size_t len, int64_t *phys)
{
    uint8_t *body = malloc(len);
    char props[64];
    st_msg_t m = {0};
    st_put_result_t res;

    ts_body(seq, body, len);
    m.properties_len = (size_t)snprintf(props, sizeof(props), "KEYS\x01k%u", seq);
    m.properties = props;
    m.topic = "Tr";
    m.topic_len = 2;
    m.queue_id = (int32_t)(seq % 2);
    m.born_timestamp = 1000 + seq;
    m.body = body;
    m.body_len = len;
    st_store_put(st, &m, &res);
    ck_assert_int_eq(res.status, ST_PUT_OK);
    if (phys)
        *phys = res.phys_offset;
    free(body);
}

/* put_keyed_len with 1500 to 2999 bytes, by seq. */
static void put_keyed(st_store_t *st, uint32_t seq, int64_t *phys)
{
    put_keyed_len(st, seq, 1500 + (seq * 37) % 1500, phys);
}

/* Puts messages [from, to); returns the phys offset of message cut_seq
 * (-1 if not in the range). */
static int64_t put_range(st_store_t *st, uint32_t from, uint32_t to, uint32_t cut_seq)
{
    int64_t cut = -1, phys;

    for (uint32_t i = from; i < to; i++) {
        put_keyed(st, i, &phys);
        if (i == cut_seq)
            cut = phys;
    }
    return cut;
}

/* Checks that the store holds exactly messages [0, upto), then messages
 * [first_new, first_new + n_new) written after the cut, queue by queue,
 * and that the key index finds the kept ones and none of the cut ones. */
static void check_store(st_store_t *st, uint32_t upto, uint32_t first_new, uint32_t n_new)
{
    for (int32_t q = 0; q < 2; q++) {
        int64_t k = 0;

        for (uint32_t seq = 0; seq < upto + n_new; seq++) {
            uint32_t want = seq < upto ? seq : first_new + (seq - upto);
            struct evbuffer *buf;
            st_get_result_t gr;
            rmq_record_t rec;
            uint8_t *flat;

            if ((int32_t)(want % 2) != q)
                continue;
            buf = evbuffer_new();
            st_store_get(st, "Tr", q, k, 1, 0, NULL, buf, &gr);
            ck_assert_int_eq(gr.status, ST_GET_FOUND);
            ck_assert_uint_eq(ts_records(buf, &rec, 1, &flat), 1);
            ts_check_body(&rec, want);
            free(flat);
            evbuffer_free(buf);
            k++;
        }
        ck_assert_int_eq(st_store_max_offset(st, "Tr", q), k);
    }
    for (uint32_t seq = 0; seq < N_MSGS; seq++) {
        struct evbuffer *out = evbuffer_new();
        char key[16];
        int32_t count = -1;
        int kept = seq < upto || (seq >= first_new && seq < first_new + n_new);

        snprintf(key, sizeof(key), "k%u", seq);
        ck_assert_int_eq(st_store_query_key(st, "Tr", key, 0, INT64_MAX, 4, out, &count), RMQ_OK);
        ck_assert_msg(count == (kept ? 1 : 0), "key %s: %d hits", key, (int)count);
        evbuffer_free(out);
    }
}

/* The cut's invariants on disk: the checkpoint does not point past it and
 * no marker is left. */
static void check_files(int64_t cut)
{
    char path[256];
    st_checkpoint_t cp;

    ts_path(&env, path, sizeof(path), "checkpoint");
    ck_assert_int_eq(st_checkpoint_read(path, &cp), RMQ_OK);
    ck_assert_int_le(cp.cl_offset, cut);
    ts_path(&env, path, sizeof(path), "truncate");
    ck_assert_int_ne(access(path, F_OK), 0);
}

START_TEST(test_truncate_cuts_log_queues_index)
{
    st_store_t *st = ts_open(&env);
    int64_t cut = put_range(st, 0, N_MSGS, CUT_AT), phys;
    st_store_stats_t stats;
    char err[256], path[256];

    ck_assert_int_gt(cut, 2 * TS_FILE_SIZE);     /* several commit-log files */
    st_store_stats(st, &stats);
    ck_assert_int_gt(stats.commitlog_max_offset, cut + TS_FILE_SIZE);
    ck_assert_int_eq(st_store_truncate(st, cut, err, sizeof(err)), RMQ_OK);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.commitlog_max_offset, cut);
    ck_assert_int_eq(stats.dispatched_offset, cut);
    check_store(st, CUT_AT, 0, 0);
    check_files(cut);
    snprintf(path, sizeof(path), "commitlog/%020lld", (long long)((cut / TS_FILE_SIZE + 1) * TS_FILE_SIZE));
    ts_path(&env, err, sizeof(err), path);
    ck_assert_int_ne(access(err, F_OK), 0);      /* files past the cut are gone */
    put_keyed(st, 100, &phys);                   /* appends continue at the cut */
    ck_assert_int_eq(phys, cut);
    put_range(st, 101, 110, 0);
    check_store(st, CUT_AT, 100, 10);
    st_store_close(st);
    st = ts_open(&env);
    check_store(st, CUT_AT, 100, 10);
    st_store_close(st);
}
END_TEST

START_TEST(test_truncate_bounds)
{
    st_store_t *st = ts_open(&env);
    st_store_stats_t stats;
    char err[256] = "";

    put_range(st, 0, 10, 0);
    st_store_stats(st, &stats);
    ck_assert_int_eq(st_store_truncate(st, stats.commitlog_max_offset, err, sizeof(err)), RMQ_OK);
    ck_assert_int_eq(st_store_truncate(st, stats.commitlog_max_offset + 100, err, sizeof(err)), RMQ_OK);
    check_store(st, 10, 0, 0);
    ck_assert_int_eq(st_store_truncate(st, -1, err, sizeof(err)), RMQ_EINVAL);
    ck_assert_ptr_nonnull(strstr(err, "below its first retained offset"));
    ck_assert_int_eq(st_store_truncate(st, 0, err, sizeof(err)), RMQ_OK);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.commitlog_max_offset, 0);
    ck_assert_int_eq(st_store_max_offset(st, "Tr", 0), 0);
    put_range(st, 0, 4, 0);
    check_store(st, 4, 0, 0);
    st_store_close(st);
}
END_TEST

/* truncate_point hook: exits (a kill -9 as far as the files go) at the
 * point named by arg. */
static void crash_at(st_store_t *st, const char *point, void *arg)
{
    (void)st;
    if (strcmp(point, arg) == 0)
        _exit(0);
}

static void child_truncate_and_crash(ts_env_t *e, const char *point)
{
    st_store_t *st = ts_open(e);
    st_hooks_t hooks = { .truncate_point = crash_at, .truncate_arg = (void *)point };
    int64_t cut = put_range(st, 0, N_MSGS, CUT_AT);
    char err[256];

    ck_assert_int_eq(st_store_flush_now(st), RMQ_OK);
    st_store_set_hooks(st, &hooks);
    st_store_truncate(st, cut, err, sizeof(err));
    ck_abort_msg("the truncation went past %s", point);
}

static void child_crash_after_marker(ts_env_t *e)
{
    child_truncate_and_crash(e, "marker");
}

static void child_crash_after_cut(ts_env_t *e)
{
    child_truncate_and_crash(e, "cut");
}

/* Checks a store reopened after an interrupted truncation: the cut done. */
static void check_finished(void)
{
    st_store_t *st = ts_open(&env);
    st_store_stats_t stats;
    char path[256];
    int64_t phys;

    ts_path(&env, path, sizeof(path), "truncate");
    ck_assert_int_ne(access(path, F_OK), 0);
    check_store(st, CUT_AT, 0, 0);
    st_store_stats(st, &stats);
    ck_assert_int_eq(stats.dispatched_offset, stats.commitlog_max_offset);
    put_keyed(st, 100, &phys);
    ck_assert_int_eq(phys, stats.commitlog_max_offset);
    check_store(st, CUT_AT, 100, 1);
    check_files(stats.commitlog_max_offset);
    st_store_close(st);
}

START_TEST(test_crash_after_marker_finishes_at_open)
{
    char path[256], *text;
    size_t len;
    int64_t off;

    ts_crash_child(&env, child_crash_after_marker);
    ts_path(&env, path, sizeof(path), "truncate");
    ck_assert_int_eq(access(path, F_OK), 0);     /* the crash left the marker */
    ck_assert_int_eq(rmq_file_read_all(path, &text, &len), RMQ_OK);
    off = strtoll(text, NULL, 10);
    free(text);
    ck_assert_int_gt(off, 2 * TS_FILE_SIZE);
    check_finished();
}
END_TEST

START_TEST(test_crash_after_cut_finishes_at_open)
{
    ts_crash_child(&env, child_crash_after_cut);
    check_finished();
}
END_TEST

START_TEST(test_corrupt_marker_refuses_open)
{
    st_store_t *st = ts_open(&env);
    char path[256], err[256];

    put_range(st, 0, 4, 0);
    st_store_close(st);
    ts_path(&env, path, sizeof(path), "truncate");
    ck_assert_int_eq(rmq_file_write_atomic(path, "12x\n", 4), RMQ_OK);
    ck_assert_ptr_null(st_store_open(&env.cfg, err, sizeof(err)));
    ck_assert_ptr_nonnull(strstr(err, "truncation marker"));
}
END_TEST

START_TEST(test_truncate_with_threads_running)
{
    struct event_base *base;
    rmq_loop_poster_t *poster;
    st_store_t *st = ts_open(&env);
    int64_t cut, phys;
    char err[256];

    rmq_loop_global_init();
    base = event_base_new();
    poster = rmq_loop_poster_new(base);
    ck_assert_int_eq(st_store_start(st, base, poster), RMQ_OK);
    cut = put_range(st, 0, N_MSGS, CUT_AT);
    for (int i = 0; i < 10; i++) {
        event_base_loop(base, EVLOOP_NONBLOCK);
        rmq_sleep_ms(20);
    }
    ck_assert_int_eq(st_store_truncate(st, cut, err, sizeof(err)), RMQ_OK);
    check_store(st, CUT_AT, 0, 0);
    put_keyed(st, 100, &phys);
    ck_assert_int_eq(phys, cut);
    st_store_stats_t stats;
    st_store_stats(st, &stats);
    for (int i = 0; i < 150 && stats.flushed_offset <= cut; i++) {  /* the flush thread runs again */
        event_base_loop(base, EVLOOP_NONBLOCK);
        rmq_sleep_ms(20);
        st_store_stats(st, &stats);
    }
    ck_assert_int_gt(stats.flushed_offset, cut);
    check_store(st, CUT_AT, 100, 1);
    st_store_close(st);
    rmq_loop_poster_free(poster);
    event_base_free(base);
}
END_TEST

static int arrivals;

static void count_arrival(const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code, void *arg)
{
    (void)topic, (void)queue_id, (void)max_offset, (void)tag_code, (void)arg;
    arrivals++;
}

START_TEST(test_read_limit_hides_the_tail)
{
    st_store_t *st = ts_open(&env);
    int64_t cut = put_range(st, 0, 10, 6), end;
    st_store_stats_t stats;
    struct evbuffer *buf = evbuffer_new();
    st_get_result_t gr;

    st_store_set_read_limit(st, cut);
    st_store_get(st, "Tr", 0, 0, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_FOUND);
    ck_assert_int_eq(gr.msg_count, 3);           /* 0, 2, 4; 6 ends past the limit */
    ck_assert_int_eq(gr.next_begin_offset, 3);
    evbuffer_drain(buf, evbuffer_get_length(buf));
    st_store_get(st, "Tr", 0, 3, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.status, ST_GET_OFFSET_OVERFLOW_ONE);
    ck_assert_int_eq(gr.next_begin_offset, 3);
    ck_assert_uint_eq(evbuffer_get_length(buf), 0);
    st_store_stats(st, &stats);
    end = stats.commitlog_max_offset;
    st_store_set_arrival_cb(st, count_arrival, NULL);
    st_store_set_read_limit(st, cut + 1);        /* nothing newest became readable */
    ck_assert_int_eq(arrivals, 0);
    st_store_set_read_limit(st, end);            /* both queues' newest records did */
    ck_assert_int_eq(arrivals, 2);
    st_store_set_read_limit(st, -1);
    ck_assert_int_eq(arrivals, 2);
    st_store_get(st, "Tr", 0, 3, 32, 0, NULL, buf, &gr);
    ck_assert_int_eq(gr.msg_count, 2);
    evbuffer_free(buf);
    st_store_close(st);
}
END_TEST

static int64_t last_arrival_offset;
static int32_t last_arrival_queue;

static void note_arrival(const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code, void *arg)
{
    (void)topic, (void)tag_code, (void)arg;
    arrivals++;
    last_arrival_queue = queue_id;
    last_arrival_offset = max_offset;
}

/* A held pull is woken only by records it can read: not by appends past
 * the read limit, and by a raised limit that uncovers some of a queue's
 * records though not its newest. */
START_TEST(test_read_limit_wakes_only_for_readable_records)
{
    st_store_t *st = ts_open(&env);
    int64_t second, third;
    st_store_stats_t stats;

    put_range(st, 0, 2, 0);
    st_store_stats(st, &stats);
    st_store_set_read_limit(st, stats.commitlog_max_offset);
    arrivals = 0;
    st_store_set_arrival_cb(st, note_arrival, NULL);
    put_keyed(st, 2, &second);                   /* queue 0, offset 1 */
    put_keyed(st, 4, &third);                    /* queue 0, offset 2 */
    ck_assert_int_eq(arrivals, 0);
    st_store_set_read_limit(st, third);          /* offset 1 is readable, 2 is not */
    ck_assert_int_eq(arrivals, 1);
    ck_assert_int_eq(last_arrival_queue, 0);
    ck_assert_int_eq(last_arrival_offset, 2);
    st_store_set_read_limit(st, -1);
    ck_assert_int_eq(arrivals, 2);
    ck_assert_int_eq(last_arrival_offset, 3);
    ck_assert_int_gt(third, second);
    st_store_close(st);
}
END_TEST

/* ---- a promoted slave's torn tail ---- */

static ts_env_t slave_env, replica_env;
static int64_t torn_at;              /* where the copy to the slave stops */
static size_t promoted_len;          /* message 100's body */
static uint32_t whole_msgs;          /* messages [0, whole_msgs) reach the slave whole */

static void promote_setup(void)
{
    ts_env_init(&env);
    ts_env_init(&slave_env);
    ts_env_init(&replica_env);
}

static void promote_teardown(void)
{
    ts_env_cleanup(&replica_env);
    ts_env_cleanup(&slave_env);
    ts_env_cleanup(&env);
}

/* Copies from's log, from to's end up to upto, into to as HA does: chunks
 * of st_store_read_raw (never across a file) handed to st_store_append_raw,
 * the last one ending wherever upto falls. */
static void replicate(st_store_t *from, st_store_t *to, int64_t upto)
{
    st_store_stats_t stats;
    int64_t pos;

    st_store_stats(to, &stats);
    for (pos = stats.commitlog_max_offset; pos < upto;) {
        struct evbuffer *buf = evbuffer_new();
        int64_t n = st_store_read_raw(from, pos, (size_t)(upto - pos < 5000 ? upto - pos : 5000), buf);

        ck_assert_int_gt(n, 0);
        ck_assert_int_eq(st_store_append_raw(to, pos, evbuffer_pullup(buf, -1), (size_t)n), RMQ_OK);
        evbuffer_free(buf);
        pos += n;
    }
}

/* The size of the record at phys in st's log. */
static int64_t record_size(st_store_t *st, int64_t phys)
{
    struct evbuffer *buf = evbuffer_new();
    int64_t n;

    ck_assert_int_eq(st_store_read_record(st, phys, buf), RMQ_OK);
    n = (int64_t)evbuffer_get_length(buf);
    evbuffer_free(buf);
    return n;
}

/* The commit-log offset of the record st's key index finds for key. */
static int64_t keyed_phys(st_store_t *st, const char *key)
{
    struct evbuffer *out = evbuffer_new();
    int32_t count = 0;
    rmq_record_t rec;
    uint8_t *flat;

    ck_assert_int_eq(st_store_query_key(st, "Tr", key, 0, INT64_MAX, 1, out, &count), RMQ_OK);
    ck_assert_msg(count == 1, "no record of key %s", key);
    ck_assert_uint_eq(ts_records(out, &rec, 1, &flat), 1);
    free(flat);
    evbuffer_free(out);
    return rec.phys_offset;
}

/* The slave's life up to a kill -9: the master's log up to torn_at, the
 * promotion, message 100 put (acknowledged), no close and no checkpoint
 * past the trim's. */
static void child_promote_put_crash(ts_env_t *e)
{
    st_store_t *m = ts_open(&env), *s = ts_open(e);
    char err[256];

    replicate(m, s, torn_at);
    st_store_close(m);
    ck_assert_msg(st_store_trim_torn_tail(s, err, sizeof err) == RMQ_OK, "%s", err);
    put_keyed_len(s, 100, promoted_len, NULL);
}

/* After child_promote_put_crash: the reopened slave holds the whole
 * messages and message 100 right after them, its log ends there, and a
 * store following it replicates all of it. */
static void check_promoted(int64_t whole_end)
{
    st_store_t *s = ts_open(&slave_env), *r;
    st_store_stats_t stats;
    int64_t phys, end;

    st_store_stats(s, &stats);
    ck_assert_msg(stats.commitlog_max_offset > whole_end, "the log ends at %lld, where the torn record began: "
                  "what was put after it is gone", (long long)stats.commitlog_max_offset);
    phys = keyed_phys(s, "k100");

    /* right after the whole records, or at the next file if it did not fit */
    ck_assert(phys == whole_end || (phys % TS_FILE_SIZE == 0 && phys > whole_end && phys - whole_end < TS_FILE_SIZE));
    end = phys + record_size(s, phys);
    st_store_stats(s, &stats);
    ck_assert_int_eq(stats.commitlog_max_offset, end);
    ck_assert_int_eq(stats.dispatched_offset, end);
    check_store(s, whole_msgs, 100, 1);
    r = ts_open(&replica_env);
    replicate(s, r, end);
    st_store_stats(r, &stats);
    ck_assert_int_eq(stats.dispatched_offset, end);
    check_store(r, whole_msgs, 100, 1);
    st_store_close(r);
    st_store_close(s);
}

START_TEST(test_promoted_slave_trims_a_torn_record)
{
    st_store_t *m = ts_open(&env);
    int64_t last = put_range(m, 0, 40, 39);

    ck_assert_int_gt(last, TS_FILE_SIZE);        /* the copy crosses a file */
    st_store_close(m);
    whole_msgs = 39;
    torn_at = last + 700;                        /* message 39 reaches the slave in part */
    promoted_len = 2000;
    ts_crash_child(&slave_env, child_promote_put_crash);
    check_promoted(last);
}
END_TEST

START_TEST(test_promoted_slave_trims_a_torn_blank)
{
    st_store_t *m = ts_open(&env);
    int64_t phys[40], blank = -1;

    for (uint32_t i = 0; i < 40; i++)
        put_keyed(m, i, &phys[i]);
    for (uint32_t i = 1; i < 40 && blank < 0; i++) {
        if (phys[i] % TS_FILE_SIZE == 0) {
            blank = phys[i - 1] + record_size(m, phys[i - 1]);
            whole_msgs = i;
        }
    }
    ck_assert_int_gt(blank, 0);
    ck_assert_int_lt(blank, phys[whole_msgs]);   /* the first file ends with a blank */
    torn_at = blank + (phys[whole_msgs] - blank) / 2;
    promoted_len = 200;                          /* it fits in what the blank leaves of the file */
    ck_assert_int_gt(phys[whole_msgs] - torn_at, 400);
    st_store_close(m);
    ts_crash_child(&slave_env, child_promote_put_crash);
    check_promoted(blank);
}
END_TEST

/* Without a crash: a store following the promoted slave replicates its
 * log, messages 100 to 102 included, with every record dispatched. */
START_TEST(test_slave_of_promoted_slave_replicates_past_the_tear)
{
    st_store_t *m = ts_open(&env), *s = ts_open(&slave_env), *r = ts_open(&replica_env);
    int64_t last = put_range(m, 0, 40, 39), phys;
    st_store_stats_t ss, rs;
    char err[256];

    replicate(m, s, last + 700);
    ck_assert_msg(st_store_trim_torn_tail(s, err, sizeof err) == RMQ_OK, "%s", err);
    phys = put_range(s, 100, 103, 100);          /* past where the torn record would end */
    st_store_stats(s, &ss);
    replicate(s, r, ss.commitlog_max_offset);
    ck_assert_int_eq(phys, last);
    st_store_stats(r, &rs);
    ck_assert_int_eq(rs.dispatched_offset, ss.commitlog_max_offset);
    check_store(r, 39, 100, 3);
    st_store_close(r);
    st_store_close(s);
    st_store_close(m);
}
END_TEST

START_TEST(test_following_slave_keeps_its_partial_record)
{
    st_store_t *m = ts_open(&env), *s = ts_open(&slave_env);
    int64_t last = put_range(m, 0, 40, 39);
    st_store_stats_t ms, ss;
    char err[256], path[256];

    replicate(m, s, last + 700);
    st_store_stats(s, &ss);
    ck_assert_int_eq(ss.commitlog_max_offset, last + 700);
    ck_assert_int_eq(ss.dispatched_offset, last);
    st_store_stats(m, &ms);
    replicate(m, s, ms.commitlog_max_offset);    /* the master sends the rest */
    st_store_stats(s, &ss);
    ck_assert_int_eq(ss.dispatched_offset, ms.commitlog_max_offset);
    ck_assert_int_eq(st_store_trim_torn_tail(s, err, sizeof err), RMQ_OK);   /* nothing torn: no cut */
    st_store_stats(s, &ss);
    ck_assert_int_eq(ss.commitlog_max_offset, ms.commitlog_max_offset);
    ts_path(&slave_env, path, sizeof(path), "truncate");
    ck_assert_int_ne(access(path, F_OK), 0);
    check_store(s, 40, 0, 0);
    st_store_close(s);
    st_store_close(m);
}
END_TEST

/* A promotion killed after the trim's marker: nothing was appended yet. */
static void child_trim_crash_after_marker(ts_env_t *e)
{
    st_store_t *m = ts_open(&env), *s = ts_open(e);
    st_hooks_t hooks = { .truncate_point = crash_at, .truncate_arg = (void *)"marker" };
    char err[256];

    replicate(m, s, torn_at);
    st_store_close(m);
    ck_assert_int_eq(st_store_flush_now(s), RMQ_OK);   /* the copy is on disk, as a slave's soon is */
    st_store_set_hooks(s, &hooks);
    st_store_trim_torn_tail(s, err, sizeof err);
    ck_abort_msg("the trim went past its marker");
}

START_TEST(test_promotion_killed_during_the_trim)
{
    st_store_t *m = ts_open(&env), *s;
    int64_t last = put_range(m, 0, 40, 39), phys;
    st_store_stats_t stats;

    st_store_close(m);
    torn_at = last + 700;
    ts_crash_child(&slave_env, child_trim_crash_after_marker);
    s = ts_open(&slave_env);                     /* the open finishes the cut */
    st_store_stats(s, &stats);
    ck_assert_int_eq(stats.commitlog_max_offset, last);
    check_store(s, 39, 0, 0);
    put_keyed(s, 100, &phys);
    ck_assert_int_eq(phys, last);
    check_store(s, 39, 100, 1);
    st_store_close(s);
}
END_TEST

static Suite *truncate_suite(void)
{
    Suite *s = suite_create("store_truncate");
    TCase *tc = tcase_create("truncate");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_truncate_cuts_log_queues_index);
    tcase_add_test(tc, test_truncate_bounds);
    tcase_add_test(tc, test_crash_after_marker_finishes_at_open);
    tcase_add_test(tc, test_crash_after_cut_finishes_at_open);
    tcase_add_test(tc, test_corrupt_marker_refuses_open);
    tcase_add_test(tc, test_truncate_with_threads_running);
    tcase_add_test(tc, test_read_limit_hides_the_tail);
    tcase_add_test(tc, test_read_limit_wakes_only_for_readable_records);
    suite_add_tcase(s, tc);
    tc = tcase_create("promote");
    tcase_add_checked_fixture(tc, promote_setup, promote_teardown);
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, test_promoted_slave_trims_a_torn_record);
    tcase_add_test(tc, test_promoted_slave_trims_a_torn_blank);
    tcase_add_test(tc, test_slave_of_promoted_slave_replicates_past_the_tear);
    tcase_add_test(tc, test_following_slave_keeps_its_partial_record);
    tcase_add_test(tc, test_promotion_killed_during_the_trim);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    SRunner *sr = srunner_create(truncate_suite());
    int failed;

    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
