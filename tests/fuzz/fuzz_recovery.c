/* fuzz_recovery.c: libFuzzer target for store recovery over arbitrary disk
 * contents. The input becomes a store directory (tiny files, in /dev/shm
 * when available):
 *   u8 flags | u64 checkpoint offset | u16 cq length | cq bytes | log bytes
 * flags: 1 abort file (crash recovery), 2 write a checkpoint (at a record
 * boundary of the valid prefix chosen by the offset field), 4 repair the
 * CRC and 8 the self offset of every record-shaped chunk in the log bytes
 * (so mutations reach past the CRC check), 16 use the cq bytes as the
 * consume-queue file of topic T queue 0. The log bytes fill up to two
 * commit-log files. st_store_open must then succeed (unless the injected
 * consume queue is malformed), everything from the log's minimum to its
 * write position must be valid records or end-of-file blanks, every record
 * a rebuilt consume queue serves must pass its CRC and name that queue
 * (an injected one is only checked for memory safety), and a
 * second open (clean restart) must find the same log end.
 * flags & 32 instead hands the (repaired) log bytes to an empty store as a
 * slave receives them (st_store_append_raw, in two byte ranges split where
 * the checkpoint field says), then promotes it (st_store_trim_torn_tail)
 * and puts one message: the log must then be valid records up to the end
 * of that message, and stay so after a reopen. */
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "rmq_crc32c.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "st_checkpoint.h"
#include "st_store.h"

#define SEG_SIZE 36864          /* 9 pages: the smallest file the store accepts here */
#define CQ_PER_FILE 64
#define CQ_FILE (CQ_PER_FILE * 20)
#define MAX_QUEUES 16

static char root[256];

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static void put64(uint8_t *p, uint64_t v)
{
    put32(p, (uint32_t)(v >> 32));
    put32(p + 4, (uint32_t)v);
}

static int rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void rm_tree(const char *path)
{
    nftw(path, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static void write_file(const char *path, const uint8_t *data, size_t len, size_t size)
{
    FILE *f = fopen(path, "wb");

    if (!f)
        abort();
    if (len)
        fwrite(data, 1, len, f);
    if (ftruncate(fileno(f), (off_t)size) != 0)
        abort();
    fclose(f);
}

/* Gives every record-shaped chunk a matching CRC and/or self offset. */
static void repair(uint8_t *seg, int64_t start, int fix_crc, int fix_off)
{
    size_t pos = 0;

    while (pos + RMQ_RECORD_FIXED <= SEG_SIZE) {
        uint32_t total = get32(seg + pos), magic = get32(seg + pos + 4);

        if ((magic != RMQ_MAGIC_MESSAGE && magic != RMQ_MAGIC_MESSAGE_HOSTS) || total < RMQ_RECORD_FIXED || total > SEG_SIZE - pos)
            break;
        if (fix_off)
            put64(seg + pos + 28, (uint64_t)(start + (int64_t)pos));
        if (fix_crc)
            put32(seg + pos + 8, rmq_crc32c(0, seg + pos + 12, total - 12));
        pos += total;
    }
}

/* The checkpoint the store would have written: a record boundary of the
 * valid prefix of the log (a checkpoint is CRC-protected and only ever
 * covers synced records, so any other value is not a reachable state).
 * pick chooses among the boundaries. */
static int64_t checkpoint_offset(const uint8_t *log, size_t len, uint64_t pick)
{
    int64_t bounds[256];
    size_t nb = 0, pos = 0;

    bounds[nb++] = 0;
    while (pos < len && nb < 256) {
        rmq_record_t rec;
        size_t in_seg = SEG_SIZE - pos % SEG_SIZE;
        rmq_err_t rc = rmq_record_decode(log + pos, in_seg < len - pos ? in_seg : len - pos, 1, &rec);

        if (rc == RMQ_ENOTFOUND && rec.total_size == in_seg)
            pos += in_seg;
        else if (rc == RMQ_OK && rec.phys_offset == (int64_t)pos)
            pos += rec.total_size;
        else
            break;
        bounds[nb++] = (int64_t)pos;
    }
    return bounds[pick % nb];
}

typedef struct queue_id {
    char topic[RMQ_TOPIC_MAX + 1];
    int32_t qid;
} queue_id_t;

/* Walks [min, write position) and checks every byte is in a valid record or
 * a blank; collects the queues it names. Returns the write position. */
static int64_t check_log(st_store_t *st, queue_id_t *qs, size_t *nq)
{
    st_store_stats_t stats;
    int64_t pos;

    st_store_stats(st, &stats);
    pos = stats.commitlog_min_offset;
    while (pos < stats.commitlog_max_offset) {
        struct evbuffer *buf = evbuffer_new();
        int64_t got = st_store_read_raw(st, pos, SEG_SIZE, buf);
        const uint8_t *p;
        size_t off = 0;

        if (got <= 0)
            abort();
        p = evbuffer_pullup(buf, -1);
        while (off < (size_t)got) {
            rmq_record_t rec;
            rmq_err_t rc = rmq_record_decode(p + off, (size_t)got - off, 1, &rec);

            if (rc == RMQ_ENOTFOUND) {
                /* a blank ends its file: nothing may follow in this chunk */
                if ((pos + (int64_t)off) % SEG_SIZE + rec.total_size != SEG_SIZE)
                    abort();
                off = (size_t)got;
                break;
            }
            if (rc != RMQ_OK || rec.phys_offset != pos + (int64_t)off) {
                fprintf(stderr, "bad record served at %lld: %d\n", (long long)(pos + (int64_t)off), rc);
                abort();
            }
            if (*nq < MAX_QUEUES) {
                memcpy(qs[*nq].topic, rec.topic, rec.topic_len);
                qs[*nq].topic[rec.topic_len] = '\0';
                qs[*nq].qid = rec.queue_id;
                (*nq)++;
            }
            off += rec.total_size;
        }
        evbuffer_free(buf);
        pos += got;
    }
    return stats.commitlog_max_offset;
}

/* Pulls a whole queue; every served record must pass its CRC and name it.
 * With trusted == 0 (an injected, possibly garbage consume-queue file) the
 * store serves whatever its units point at, so only the bounds are
 * checked (ASan does the rest). */
static void check_queue(st_store_t *st, const char *topic, int32_t qid, int trusted)
{
    st_tag_filter_t all = { 1, NULL, 0 };
    int64_t off = st_store_min_offset(st, topic, qid);
    int rounds = 0;

    while (rounds++ < 64) {
        struct evbuffer *buf = evbuffer_new();
        st_get_result_t res;
        const uint8_t *p;
        size_t len, at = 0;

        st_store_get(st, topic, qid, off, 32, 1 << 20, &all, buf, &res);
        len = evbuffer_get_length(buf);
        p = evbuffer_pullup(buf, -1);
        for (int32_t i = 0; trusted && i < res.msg_count; i++) {
            rmq_record_t rec;

            rmq_err_t rc = rmq_record_decode(p + at, len - at, 1, &rec);

            if (rc != RMQ_OK || rec.queue_id != qid || rec.topic_len != strlen(topic) ||
                memcmp(rec.topic, topic, rec.topic_len) != 0) {
                fprintf(stderr, "queue %s/%d served a bad record at %lld (+%d): %s, queue %d, topic %.*s\n",
                        topic, qid, (long long)off, i, rmq_strerror(rc), rec.queue_id,
                        rc == RMQ_OK ? (int)rec.topic_len : 0, rc == RMQ_OK ? rec.topic : "");
                abort();
            }
            at += rec.total_size;
        }
        if (trusted && at != len)
            abort();
        evbuffer_free(buf);
        if (res.status != ST_GET_FOUND && res.status != ST_GET_NO_MATCHED_MESSAGE &&
            res.status != ST_GET_MESSAGE_WAS_REMOVING && res.status != ST_GET_OFFSET_FOUND_NULL)
            break;
        if (res.next_begin_offset <= off)
            break;
        off = res.next_begin_offset;
    }
}

static st_store_t *open_store(void)
{
    st_store_config_t cfg;
    char err[512];
    st_store_t *st;

    memset(&cfg, 0, sizeof(cfg));
    cfg.root_dir = root;
    cfg.commitlog_file_size = SEG_SIZE;
    cfg.cq_entries_per_file = CQ_PER_FILE;
    cfg.max_message_size = 1024;
    cfg.flush_type = ST_ASYNC_FLUSH;
    cfg.disk_max_used_ratio = 95;
    cfg.disk_full_ratio = 99;
    st = st_store_open(&cfg, err, sizeof(err));
    return st;
}

/* flags & 32: the log bytes arrive by replication, split at split, then
 * the store is promoted and takes one put. */
static void replicate_and_promote(const uint8_t *log, size_t log_len, size_t split)
{
    static const uint8_t body[] = "promoted";
    st_msg_t m = { .topic = "T", .topic_len = 1, .body = body, .body_len = sizeof body - 1 };
    queue_id_t qs[MAX_QUEUES];
    st_put_result_t res;
    size_t nq = 0;
    char err[512];
    st_store_t *st = open_store();

    if (!st)
        abort();
    if (st_store_append_raw(st, 0, log, split) == RMQ_OK)
        st_store_append_raw(st, (int64_t)split, log + split, log_len - split);
    if (st_store_trim_torn_tail(st, err, sizeof err) != RMQ_OK) {
        fprintf(stderr, "trim: %s\n", err);
        abort();
    }
    st_store_put(st, &m, &res);
    if (res.status != ST_PUT_OK || check_log(st, qs, &nq) != res.end_offset)
        abort();
    st_store_close(st);
    st = open_store();
    nq = 0;
    if (!st || check_log(st, qs, &nq) != res.end_offset)
        abort();
    check_queue(st, "T", 0, 1);
    st_store_close(st);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[512];
    uint8_t *log;
    size_t log_len, cq_len;
    int flags;
    uint64_t cp_off = 0;
    st_store_t *st;
    queue_id_t qs[MAX_QUEUES];
    size_t nq = 0;
    int64_t end;

    if (!root[0]) {
        const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";

        snprintf(root, sizeof(root), "%s/fuzz_recovery.%d", base, (int)getpid());
        rmq_log_set_level(getenv("FUZZ_LOG") ? RMQ_LOG_DEBUG : RMQ_LOG_OFF);
    }
    if (size < 11)
        return 0;
    flags = data[0];
    for (int i = 0; i < 8; i++)
        cp_off = cp_off << 8 | data[1 + i];
    cq_len = ((size_t)data[9] << 8 | data[10]) % (CQ_FILE + 1);
    data += 11;
    size -= 11;
    if (cq_len > size)
        cq_len = size;

    rm_tree(root);
    mkdir(root, 0755);
    snprintf(path, sizeof(path), "%s/commitlog", root);
    mkdir(path, 0755);
    log_len = size - cq_len > 2 * SEG_SIZE ? 2 * SEG_SIZE : size - cq_len;
    log = calloc(2, SEG_SIZE);
    memcpy(log, data + cq_len, log_len);
    if (flags & 32) {
        for (int s = 0; s < 2; s++)
            repair(log + (size_t)s * SEG_SIZE, (int64_t)s * SEG_SIZE, flags & 4, flags & 8);
        replicate_and_promote(log, log_len, (size_t)(cp_off % (log_len + 1)));
        free(log);
        return 0;
    }
    for (int s = 0; s < 2; s++) {
        if (s == 1 && log_len <= SEG_SIZE)
            break;
        repair(log + (size_t)s * SEG_SIZE, (int64_t)s * SEG_SIZE, flags & 4, flags & 8);
        snprintf(path, sizeof(path), "%s/commitlog/%020lld", root, (long long)s * SEG_SIZE);
        write_file(path, log + (size_t)s * SEG_SIZE, SEG_SIZE, SEG_SIZE);
    }
    if (flags & 2)
        cp_off = (uint64_t)checkpoint_offset(log, log_len, cp_off);
    free(log);
    if (flags & 16) {
        static const char *const dirs[] = { "consumequeue", "consumequeue/T", "consumequeue/T/0" };

        for (size_t i = 0; i < 3; i++) {
            snprintf(path, sizeof(path), "%s/%s", root, dirs[i]);
            mkdir(path, 0755);
        }
        snprintf(path, sizeof(path), "%s/consumequeue/T/0/%020d", root, 0);
        write_file(path, data, cq_len, CQ_FILE);
    }
    if (flags & 2) {
        st_checkpoint_t cp = { (int64_t)cp_off, 0, 0 };

        snprintf(path, sizeof(path), "%s/checkpoint", root);
        st_checkpoint_write(path, &cp);
    }
    if (flags & 1) {
        snprintf(path, sizeof(path), "%s/abort", root);
        write_file(path, NULL, 0, 0);
    }

    st = open_store();
    if (!st) {
        if (!(flags & 16))
            abort();        /* a commit log alone must always recover */
        return 0;
    }
    end = check_log(st, qs, &nq);
    for (size_t i = 0; i < nq; i++)
        check_queue(st, qs[i].topic, qs[i].qid, !(flags & 16));
    check_queue(st, "T", 0, !(flags & 16));
    st_store_close(st);

    st = open_store();
    if (!st)
        abort();
    nq = 0;
    if (check_log(st, qs, &nq) != end)
        abort();
    check_queue(st, "T", 0, !(flags & 16));
    st_store_close(st);
    return 0;
}
