/* test_powerloss.c: power-loss images of a SYNC_FLUSH broker's store.
 *
 * Sender threads load a SYNC_FLUSH broker and record every acknowledged
 * message (index, physical offset from its msg id; the body follows from
 * the index). At random moments the test snapshots the acked set, then
 * SIGSTOPs the broker, copies its store (cp -a: commit log, consume queues,
 * checkpoint, the abort file of a running broker) and SIGCONTs it. With the
 * broker stopped the copy is a consistent point-in-time image of its page
 * cache, which holds everything a power cut could have kept and more; the
 * variants then take away what a power cut may lose, i.e. bytes past the
 * durable offset (SYNC_FLUSH acks only after the sync, so every message
 * acked before the copy lies below it; and the image's checkpoint proves
 * the log synced up to its offset, so nothing below that is lost either):
 *   full   the image as copied;
 *   cut    the last commit-log file with data truncated at a random byte
 *          between the end of the last acked record (or the checkpoint) and the end of the
 *          written data, and the (pre-created, empty) files after it gone:
 *          a copy cut mid-file, the file shorter than its size;
 *   zeroed from a random byte past the last acked record (and the checkpoint) to a page
 *          boundary, plus up to three pages, zeroed (changes that never
 *          reached the disk: the page with the acked end was synced whole).
 * A fresh mqbroker is started on each (new ports): it must start, every
 * record it serves must pass its CRC, and every message acked before the
 * copy began must be served with an identical body.
 *
 * Delayed messages (issue 20 item 1): delayed messages are sent with
 * SYNC_FLUSH to a broker whose flush thread wakes only when a waiter asks
 * (flushIntervalCommitLog=60000); once their copies are in the real topic
 * the broker is stopped, its durable offset (flushedOffset, which nothing
 * moves any more) noted and its store copied; the copy loses everything past
 * that offset (zeroed). A fresh broker on it must deliver every
 * acknowledged delayed message to its real topic: a level's persisted
 * cursor may not pass a copy that was not durable.
 *
 * With RMQ_TEST_TRANSIENT_POOL set (the powerloss_pool test) every broker
 * runs with transientStorePoolEnable: each append is write()n to the file
 * as it is made and the flush fdatasyncs it, so the image holds only what
 * was synced; every acknowledged message must still be in it. */
#include <check.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "harness.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "wire.h"

#define TOPIC "PowerTopic"
#define GROUP "power_group"
#define QUEUES 4
#define SENDERS 4
#define MAX_MSGS 200000
#define BODY_MAX 1024
#define SEG_SIZE (1024 * 1024)
#define MAX_LOG_FILES 1024       /* MAX_MSGS * BODY_MAX / SEG_SIZE is about 200 */
#define SNAPSHOTS 3
#define RPC_TIMEOUT_MS 10000

static const char *case_dir;

/* ---- messages ------------------------------------------------------------- */

static size_t body_gen(int i, uint8_t *buf)
{
    size_t len = 1 + wire_mix((uint64_t)i) % BODY_MAX;

    for (size_t k = 0; k < len; k++)
        buf[k] = (uint8_t)wire_mix((uint64_t)i * 7919u + k);
    return len;
}

/* ---- daemons ----------------------------------------------------------------- */

/* The pool property when the test runs in its transient-pool variant. */
static const char *pool_props(void)
{
    return getenv("RMQ_TEST_TRANSIENT_POOL") ? "transientStorePoolEnable=true\n" : "";
}

static void broker_start(hn_daemon_t *d, const char *name, const char *store, char *addr, size_t len)
{
    char props[2048];
    int n = snprintf(props, sizeof props,
             "brokerName=broker-p\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s\n"
             "flushDiskType=SYNC_FLUSH\nmapedFileSizeCommitLog=%d\nmapedFileSizeConsumeQueue=20000\n"
             "maxMessageSize=65536\nmaxTransferCountOnMessageInMemory=1024\n"
             "maxTransferBytesOnMessageInMemory=4194304\nlogLevel=info\n%s",
             store, SEG_SIZE, pool_props());

    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "properties for %s do not fit", store);
    ck_assert_msg(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", name, props, addr, len) == 0,
                  "mqbroker did not start on %s", store);
}

static int create_topic(const char *addr)
{
    static const wire_link_t ln = {
        .opts = { .connect_timeout_ms = 3000, .name = "admin" },
        .timeout_ms = RPC_TIMEOUT_MS,
    };
    Rmq__Command req;
    Rmq__TopicConfig tc;

    wire_topic_request(&req, &tc, TOPIC, QUEUES);
    return wire_call_with(&ln, addr, &req, NULL, 0, NULL);
}

/* ---- load ---------------------------------------------------------------------- */

typedef struct load {
    const char *addr;
    atomic_int stop;
    atomic_int next;                 /* next index to send */
    _Atomic int64_t phys[MAX_MSGS];  /* record offset + 1 once acked, 0 before */
    atomic_int acked, failed;
} load_t;

static int64_t msg_id_offset(const char *id)
{
    return id && strlen(id) == 32 ? (int64_t)strtoull(id + 16, NULL, 16) : -1;
}

static void *sender_main(void *arg)
{
    load_t *ld = arg;
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "sender" };
    rmq_sync_t *s = rmq_sync_new(&opts);
    uint8_t body[BODY_MAX];
    char props[64];

    while (!atomic_load(&ld->stop)) {
        int i = atomic_fetch_add(&ld->next, 1);
        Rmq__Command req = RMQ__COMMAND__INIT;
        Rmq__SendMessageRequest h = RMQ__SEND_MESSAGE_REQUEST__INIT;
        rmq_frame_t resp = { 0 };
        size_t len;

        if (i >= MAX_MSGS)
            break;
        len = body_gen(i, body);
        snprintf(props, sizeof props, "KEYS\001%d\002", i);
        h.producer_group = (char *)"power_producer";
        h.topic = (char *)TOPIC;
        h.queue_id = i % QUEUES;
        h.properties = props;
        req.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
        req.header_case = RMQ__COMMAND__HEADER_SEND;
        req.send = &h;
        if (rmq_sync_call(s, ld->addr, &req, body, len, RPC_TIMEOUT_MS, &resp) == RMQ_OK &&
            resp.cmd->status == RMQ__STATUS__SUCCESS && resp.cmd->header_case == RMQ__COMMAND__HEADER_SEND_RESP) {
            int64_t phys = msg_id_offset(resp.cmd->send_resp->msg_id);

            atomic_store(&ld->phys[i], phys + 1);
            atomic_fetch_add(&ld->acked, 1);
        } else {
            atomic_fetch_add(&ld->failed, 1);
        }
        rmq_frame_clear(&resp);
    }
    rmq_sync_free(s);
    return NULL;
}

/* ---- snapshots ------------------------------------------------------------------- */

typedef struct snapshot {
    char dir[PATH_MAX];
    int nmsgs;                       /* indices below this were considered */
    uint8_t *acked;                  /* acked before the copy began */
    int64_t acked_phys;              /* offset of the last of them in the log */
    int n_acked;
} snapshot_t;

static char proc_state(pid_t pid)
{
    char path[64], buf[512], *p;
    FILE *f;
    size_t n;

    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    if (!(f = fopen(path, "r")))
        return '?';
    n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    return p && p[1] ? p[2] : '?';
}

static void run_ok(const char *const *argv)
{
    hn_result_t res;

    ck_assert_int_eq(hn_run(argv, 30000, &res), 0);
    ck_assert_msg(res.status == 0, "%s failed: %s", argv[0], res.err ? res.err : "");
    hn_result_free(&res);
}

/* Snapshots the acked set, then copies the stopped broker's store. */
static void take_snapshot(load_t *ld, hn_daemon_t *bk, const char *store, int k, snapshot_t *sn)
{
    char dst[PATH_MAX];
    long long deadline;

    sn->nmsgs = atomic_load(&ld->next);
    if (sn->nmsgs > MAX_MSGS)
        sn->nmsgs = MAX_MSGS;
    sn->acked = calloc((size_t)sn->nmsgs + 1, 1);
    sn->acked_phys = -1;
    sn->n_acked = 0;
    for (int i = 0; i < sn->nmsgs; i++) {
        int64_t phys = atomic_load(&ld->phys[i]) - 1;

        if (phys >= 0) {
            sn->acked[i] = 1;
            sn->n_acked++;
            if (phys > sn->acked_phys)
                sn->acked_phys = phys;
        }
    }
    ck_assert_int_eq(kill(bk->pid, SIGSTOP), 0);
    deadline = hn_now_ms() + 5000;
    while (proc_state(bk->pid) != 'T' && hn_now_ms() < deadline)
        usleep(1000);
    ck_assert_int_eq(proc_state(bk->pid), 'T');
    snprintf(dst, sizeof dst, "%s/copy%d", case_dir, k);
    {
        const char *argv[] = { "/bin/cp", "-a", store, dst, NULL };

        run_ok(argv);
    }
    ck_assert_int_eq(kill(bk->pid, SIGCONT), 0);
    snprintf(sn->dir, sizeof sn->dir, "%s", dst);
}

/* Copies snapshot src into a new directory for one variant. */
static void variant_dir(const snapshot_t *sn, const char *tag, char *out, size_t len)
{
    ck_assert_int_lt(snprintf(out, len, "%s-%s", sn->dir, tag), (int)len);
    const char *argv[] = { "/bin/cp", "-a", sn->dir, out, NULL };

    run_ok(argv);
}

/* The last commit-log file of store that holds records (the broker
 * pre-creates an empty next file): its path and start offset. With
 * drop_later, the files after it are removed, as from a copy cut there. */
static int64_t last_log_file(const char *store, char *path, size_t len, int drop_later)
{
    static char names[MAX_LOG_FILES][64];
    char cmd[PATH_MAX + 64], line[PATH_MAX];
    int n = 0, pick = -1;
    int64_t start = -1;
    FILE *p;

    snprintf(cmd, sizeof cmd, "ls %s/commitlog | sort", store);
    ck_assert_ptr_nonnull(p = popen(cmd, "r"));
    while (fgets(line, sizeof line, p)) {
        ck_assert_msg(n < MAX_LOG_FILES, "%s: more than %d commit-log files", store, MAX_LOG_FILES);
        line[strcspn(line, "\n")] = '\0';
        snprintf(names[n++], sizeof names[0], "%.63s", line);
    }
    pclose(p);
    for (int i = 0; i < n; i++) {
        uint8_t head[8];
        int fd;

        ck_assert_int_lt(snprintf(path, len, "%s/commitlog/%s", store, names[i]), (int)len);
        fd = open(path, O_RDONLY);
        ck_assert_int_ge(fd, 0);
        if (pread(fd, head, sizeof head, 0) == (ssize_t)sizeof head &&
            (head[0] | head[1] | head[2] | head[3]) != 0)
            pick = i;
        close(fd);
    }
    ck_assert_int_ge(pick, 0);
    for (int i = pick + 1; drop_later && i < n; i++) {
        ck_assert_int_lt(snprintf(path, len, "%s/commitlog/%s", store, names[i]), (int)len);
        ck_assert_int_eq(unlink(path), 0);
    }
    ck_assert_int_lt(snprintf(path, len, "%s/commitlog/%s", store, names[pick]), (int)len);
    start = strtoll(names[pick], NULL, 10);
    return start;
}

/* End of the valid records of the file at path (from its start); *acked_end
 * is set to the end of the record at acked_rel (0 if acked_rel < 0). */
static int64_t written_end(const char *path, int64_t acked_rel, int64_t *acked_end)
{
    int fd = open(path, O_RDONLY);
    struct stat sb;
    uint8_t *data;
    size_t off = 0;

    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(fstat(fd, &sb), 0);
    data = malloc((size_t)sb.st_size);
    ck_assert_int_eq(pread(fd, data, (size_t)sb.st_size, 0), sb.st_size);
    close(fd);
    *acked_end = 0;
    for (;;) {
        rmq_record_t rec;

        if (rmq_record_decode(data + off, (size_t)sb.st_size - off, 1, &rec) != RMQ_OK)
            break;
        if ((int64_t)off == acked_rel)
            *acked_end = (int64_t)(off + rec.total_size);
        off += rec.total_size;
    }
    ck_assert_msg(acked_rel < 0 || *acked_end > 0, "%s: no record at the last acked offset %lld", path,
                  (long long)acked_rel);
    free(data);
    return (int64_t)off;
}

static int64_t rand_between(unsigned *seed, int64_t lo, int64_t hi)
{
    if (hi <= lo)
        return lo;
    return lo + (int64_t)(((uint64_t)rand_r(seed) << 31 | (uint64_t)rand_r(seed)) % (uint64_t)(hi - lo + 1));
}

/* cut: truncates the last commit-log file inside [acked end, written end]. */
/* The first byte of the last log file (at start) a power cut may lose:
 * past the last acked record (acked_end) and past what the image's
 * checkpoint proves synced (its commit-log offset, at byte 16 of
 * store/checkpoint, big-endian), at most the written end. */
static int64_t loss_floor(const char *dir, int64_t start, int64_t acked_end, int64_t wend)
{
    char path[PATH_MAX + 16];
    uint8_t cp[64];
    int64_t cl = 0, lo = acked_end;

    snprintf(path, sizeof path, "%s/checkpoint", dir);
    int fd = open(path, O_RDONLY);
    if (fd >= 0 && pread(fd, cp, sizeof cp, 0) == (ssize_t)sizeof cp)
        for (int i = 0; i < 8; i++)
            cl = cl << 8 | cp[16 + i];
    if (fd >= 0)
        close(fd);
    if (cl - start > lo)
        lo = cl - start;
    return lo < wend ? lo : wend;
}

static void make_cut(const snapshot_t *sn, unsigned *seed, char *dir, size_t len)
{
    char path[PATH_MAX];
    int64_t start, wend, lo, cut;

    variant_dir(sn, "cut", dir, len);
    start = last_log_file(dir, path, sizeof path, 1);
    ck_assert_int_ge(start, 0);
    wend = written_end(path, sn->acked_phys >= start ? sn->acked_phys - start : -1, &lo);
    lo = loss_floor(dir, start, lo, wend);
    cut = rand_between(seed, lo, wend);
    fprintf(stderr, "# %s: last file %lld, acked end %lld, written end %lld, cut at %lld\n", dir,
            (long long)start, (long long)lo, (long long)wend, (long long)cut);
    ck_assert_int_eq(truncate(path, cut > 0 ? cut : 1), 0);
}

/* zeroed: zeroes from a random byte past the acked end to a page boundary
 * and up to three more pages: the page holding the acked end was synced
 * whole, later changes to it and later pages may never have been. */
static void make_zeroed(const snapshot_t *sn, unsigned *seed, char *dir, size_t len)
{
    char path[PATH_MAX];
    int64_t start, wend, lo, from, to;
    int fd;
    static uint8_t zero[4 * 4096 + 4096];

    variant_dir(sn, "zeroed", dir, len);
    start = last_log_file(dir, path, sizeof path, 0);
    wend = written_end(path, sn->acked_phys >= start ? sn->acked_phys - start : -1, &lo);
    lo = loss_floor(dir, start, lo, wend);
    from = rand_between(seed, lo, wend);
    to = (from / 4096 + 1) * 4096 + 4096 * rand_between(seed, 0, 3);
    if (to > SEG_SIZE)
        to = SEG_SIZE;
    fprintf(stderr, "# %s: zeroing [%lld, %lld) of file %lld (acked end %lld, written end %lld)\n", dir,
            (long long)from, (long long)to, (long long)start, (long long)lo, (long long)wend);
    fd = open(path, O_WRONLY);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(pwrite(fd, zero, (size_t)(to - from), from), to - from);
    close(fd);
}

/* ---- verification --------------------------------------------------------------- */

/* Starts a broker on store, pulls every queue, checks CRCs and the acked set. */
static void verify_copy(const snapshot_t *sn, const char *store, const char *name)
{
    hn_daemon_t bk;
    char addr[64];
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "verify" };
    rmq_sync_t *s;
    uint8_t *seen = calloc((size_t)MAX_MSGS, 1), want[BODY_MAX];
    int served = 0, missing = 0, dups = 0;

    broker_start(&bk, name, store, addr, sizeof addr);
    s = rmq_sync_new(&opts);
    for (int q = 0; q < QUEUES; q++) {
        int64_t offset = 0;

        for (;;) {
            Rmq__Command req;
            Rmq__PullMessageRequest h;
            rmq_frame_t resp = { 0 };
            size_t len, off = 0;
            const uint8_t *data;
            int st;

            wire_pull_hdr(&req, &h, GROUP, TOPIC, q, offset);
            ck_assert_int_eq(rmq_sync_call(s, addr, &req, NULL, 0, RPC_TIMEOUT_MS, &resp), RMQ_OK);
            st = resp.cmd->status;
            if (st != RMQ__STATUS__SUCCESS) {
                ck_assert_msg(st == RMQ__STATUS__PULL_NOT_FOUND || st == RMQ__STATUS__PULL_OFFSET_MOVED ||
                              st == RMQ__STATUS__PULL_RETRY_IMMEDIATELY,
                              "%s: pull q%d at %lld: status %d %s", name, q, (long long)offset, st,
                              resp.cmd->remark);
                if (st == RMQ__STATUS__PULL_RETRY_IMMEDIATELY &&
                    resp.cmd->header_case == RMQ__COMMAND__HEADER_PULL_RESP &&
                    resp.cmd->pull_resp->next_begin_offset > offset) {
                    offset = resp.cmd->pull_resp->next_begin_offset;
                    rmq_frame_clear(&resp);
                    continue;
                }
                rmq_frame_clear(&resp);
                break;
            }
            len = evbuffer_get_length(resp.body);
            data = evbuffer_pullup(resp.body, -1);
            while (off < len) {
                rmq_record_t rec;
                size_t vlen, blen;
                const char *key;
                int idx;

                ck_assert_msg(rmq_record_decode(data + off, len - off, 1, &rec) == RMQ_OK,
                              "%s: a served record fails its checks (q%d, offset %lld)", name, q,
                              (long long)offset);
                key = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_KEYS, &vlen);
                ck_assert_ptr_nonnull(key);
                idx = atoi(key);
                ck_assert_int_ge(idx, 0);
                ck_assert_int_lt(idx, MAX_MSGS);
                blen = body_gen(idx, want);
                ck_assert_msg(blen == rec.body_len && memcmp(want, rec.body, blen) == 0,
                              "%s: message %d served with a different body", name, idx);
                if (seen[idx]++)
                    dups++;
                served++;
                off += rec.total_size;
            }
            ck_assert_int_gt(resp.cmd->pull_resp->next_begin_offset, offset);
            offset = resp.cmd->pull_resp->next_begin_offset;
            rmq_frame_clear(&resp);
        }
    }
    for (int i = 0; i < sn->nmsgs; i++)
        if (sn->acked[i] && !seen[i]) {
            if (missing++ < 5)
                fprintf(stderr, "# %s: acked message %d missing\n", name, i);
        }
    fprintf(stderr, "# %s: %d acked before the copy, %d served, %d missing, %d duplicates\n", name,
            sn->n_acked, served, missing, dups);
    ck_assert_int_eq(missing, 0);
    ck_assert_int_eq(dups, 0);
    rmq_sync_free(s);
    free(seen);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
}

/* ---- case ------------------------------------------------------------------------ */

static void setup(void)
{
    case_dir = hn_case_begin("powerloss");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

START_TEST(test_powerloss_copies_recover)
{
    static load_t ld;
    hn_daemon_t bk;
    char addr[64], store[PATH_MAX];
    pthread_t th[SENDERS];
    snapshot_t sn[SNAPSHOTS];
    unsigned seed = (unsigned)time(NULL) ^ (unsigned)getpid();

    fprintf(stderr, "# seed %u\n", seed);
    snprintf(store, sizeof store, "%s/store", case_dir);
    broker_start(&bk, "broker", store, addr, sizeof addr);
    ck_assert_int_eq(create_topic(addr), RMQ__STATUS__SUCCESS);
    memset(&ld, 0, sizeof ld);
    ld.addr = addr;
    for (int t = 0; t < SENDERS; t++)
        ck_assert_int_eq(pthread_create(&th[t], NULL, sender_main, &ld), 0);
    for (int k = 0; k < SNAPSHOTS; k++) {
        usleep((useconds_t)(300 + rand_r(&seed) % 1200) * 1000);
        take_snapshot(&ld, &bk, store, k, &sn[k]);
        fprintf(stderr, "# snapshot %d: %d acked, last at %lld\n", k, sn[k].n_acked,
                (long long)sn[k].acked_phys);
    }
    atomic_store(&ld.stop, 1);
    for (int t = 0; t < SENDERS; t++)
        pthread_join(th[t], NULL);
    fprintf(stderr, "# load: %d acked, %d failed\n", atomic_load(&ld.acked), atomic_load(&ld.failed));
    ck_assert_int_eq(atomic_load(&ld.failed), 0);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);

    for (int k = 0; k < SNAPSHOTS; k++) {
        char dir[PATH_MAX], name[64];

        ck_assert_int_gt(sn[k].n_acked, 0);
        snprintf(name, sizeof name, "full%d", k);
        variant_dir(&sn[k], "full", dir, sizeof dir);
        verify_copy(&sn[k], dir, name);
        snprintf(name, sizeof name, "cut%d", k);
        make_cut(&sn[k], &seed, dir, sizeof dir);
        verify_copy(&sn[k], dir, name);
        snprintf(name, sizeof name, "zeroed%d", k);
        make_zeroed(&sn[k], &seed, dir, sizeof dir);
        verify_copy(&sn[k], dir, name);
        free(sn[k].acked);
    }
    hn_case_passed();
}
END_TEST

/* ---- delayed messages --------------------------------------------------------- */

#define DELAY_TOPIC "PowerDelayTopic"
#define DELAY_MSGS 20

static void delay_broker_start(hn_daemon_t *d, const char *name, const char *store, char *addr, size_t len)
{
    char props[2048];
    int n = snprintf(props, sizeof props,
             "brokerName=broker-d\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s\nflushDiskType=SYNC_FLUSH\n"
             "flushIntervalCommitLog=60000\nmapedFileSizeCommitLog=%d\nmaxMessageSize=65536\nmessageDelayLevel=2s\n%s",
             store, SEG_SIZE, pool_props());
    ck_assert_msg(n > 0 && (size_t)n < sizeof props, "properties for %s do not fit", store);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", name, props, addr, len), 0);
}

/* The broker's flushedOffset (GET_BROKER_RUNTIME_INFO), or -1. */
static long long flushed_offset(const char *addr)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    rmq_frame_t resp = { 0 };
    char value[64] = "";
    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    if (wire_call(addr, &req, NULL, 0, &resp) == RMQ__STATUS__SUCCESS)
        wire_runtime_value(&resp, "flushedOffset", value, sizeof value);
    rmq_frame_clear(&resp);
    return value[0] ? strtoll(value, NULL, 10) : -1;
}

/* GET_MAX_OFFSET of topic queue 0 on addr, or -1. */
static long long queue_max(const char *addr, const char *topic)
{
    Rmq__Command req;
    Rmq__QueueRequest qr;
    rmq_frame_t resp = { 0 };
    wire_max_offset_request(&req, &qr, topic, 0);
    long long off = wire_call(addr, &req, NULL, 0, &resp) == RMQ__STATUS__SUCCESS ? wire_resp_offset(&resp) : -1;
    rmq_frame_clear(&resp);
    return off;
}

typedef struct queue_at {
    const char *addr;
    long long want;
} queue_at_t;

static int delay_delivered(void *arg)
{
    const queue_at_t *q = arg;
    return queue_max(q->addr, DELAY_TOPIC) >= q->want;
}

/* Zeroes the commit log of store from offset on (a power cut keeps nothing
 * past the durable offset): the rest of its file, and every later file. */
static void zero_log_from(const char *store, long long offset)
{
    char path[PATH_MAX + 64];
    static uint8_t zeros[SEG_SIZE];
    for (long long base = offset / SEG_SIZE * SEG_SIZE;; base += SEG_SIZE) {
        snprintf(path, sizeof path, "%s/commitlog/%020lld", store, base);
        int fd = open(path, O_WRONLY);
        if (fd < 0)
            break;
        long long from = base < offset ? offset - base : 0;
        ck_assert_int_eq(pwrite(fd, zeros, (size_t)(SEG_SIZE - from), (off_t)from), SEG_SIZE - from);
        close(fd);
    }
}

START_TEST(test_powerloss_delayed_delivery)
{
    hn_daemon_t bk, again;
    char addr[64], addr2[64], store[PATH_MAX], copy[PATH_MAX], props[] = "DELAY\0011\002", body[32];
    snprintf(store, sizeof store, "%s/dstore", case_dir);
    snprintf(copy, sizeof copy, "%s/dcopy", case_dir);
    delay_broker_start(&bk, "dbroker", store, addr, sizeof addr);
    Rmq__Command treq;
    Rmq__TopicConfig tc;
    wire_topic_request(&treq, &tc, DELAY_TOPIC, 1);
    ck_assert_int_eq(wire_call(addr, &treq, NULL, 0, NULL), RMQ__STATUS__SUCCESS);
    for (int i = 0; i < DELAY_MSGS; i++) {
        Rmq__Command req;
        Rmq__SendMessageRequest h;
        snprintf(body, sizeof body, "delayed-%d", i);
        wire_send_hdr(&req, &h, "power_producer", DELAY_TOPIC, 0, props);
        ck_assert_int_eq(wire_call(addr, &req, body, strlen(body), NULL), RMQ__STATUS__SUCCESS);
    }
    ck_assert_int_eq(queue_max(addr, DELAY_TOPIC), 0);
    /* Delivery has started: the copies are in the topic; the cursor is written 100 ms after a change. */
    queue_at_t q = { addr, DELAY_MSGS };
    ck_assert_msg(hn_wait_until(delay_delivered, &q, 15000), "delayed messages not delivered: %lld",
                  queue_max(addr, DELAY_TOPIC));
    usleep(600 * 1000);
    long long durable = flushed_offset(addr);
    ck_assert_int_gt(durable, 0);
    ck_assert_int_eq(kill(bk.pid, SIGSTOP), 0);
    long long deadline = hn_now_ms() + 5000;
    while (proc_state(bk.pid) != 'T' && hn_now_ms() < deadline)
        usleep(1000);
    const char *argv[] = { "/bin/cp", "-a", store, copy, NULL };
    run_ok(argv);
    hn_daemon_kill9(&bk);
    fprintf(stderr, "# delayed: power lost at durable offset %lld\n", durable);
    zero_log_from(copy, durable);

    delay_broker_start(&again, "dagain", copy, addr2, sizeof addr2);
    for (int i = 0; i < DELAY_MSGS; i++) {
        snprintf(body, sizeof body, "delayed-%d", i);
        wire_want_body_t w = { addr2, GROUP, DELAY_TOPIC, body, 0 };
        ck_assert_msg(hn_wait_until(wire_queue_has, &w, 10000), "acknowledged delayed message %d lost", i);
    }
    ck_assert_int_eq(hn_daemon_stop(&again, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *powerloss_suite(void)
{
    Suite *s = suite_create("powerloss");
    TCase *tc = tcase_create("process");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, test_powerloss_copies_recover);
    suite_add_tcase(s, tc);
    TCase *td = tcase_create("delay");
    tcase_add_checked_fixture(td, setup, teardown);
    tcase_set_timeout(td, 120);
    tcase_add_test(td, test_powerloss_delayed_delivery);
    suite_add_tcase(s, td);
    return s;
}

int main(void)
{
    return hn_run_suite(powerloss_suite());
}
