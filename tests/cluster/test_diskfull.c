/* test_diskfull.c: a broker whose store fills its disk. The store root is
 * a 48 MiB tmpfs mounted for the test (skipped, with a TAP SKIP line, when
 * the mount is not permitted), mostly taken by a filler file so that the
 * first 4 MiB commit-log file fits and the next does not. After a few
 * hundred messages a second filler takes every byte left, so the broker's
 * own small writes (checkpoint, metadata) fail with ENOSPC while its
 * preallocated commit-log file still has room. Messages are sent until the
 * broker answers SERVICE_NOT_AVAILABLE_DISK_FULL (1001): only SUCCESS or
 * that status, never a write-error latch (1002), no crash, no hang; more
 * sends keep getting it. Every message acknowledged before is pulled back
 * intact. Then the fillers are deleted and writes must resume (the disk
 * check runs every 10 s: HOUSE_INTERVAL_MS in st_house.c), and everything
 * acknowledged is pulled back again. The mount is always removed in
 * teardown. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <event2/buffer.h>

#include "harness.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "wire.h"

#define TOPIC "FullTopic"
#define GROUP "full_group"
#define TMPFS_MB 48
#define SEG_SIZE (4 * 1024 * 1024)
#define BODY_LEN 4000
#define MAX_MSGS 4000
#define RPC_TIMEOUT_MS 10000

static const char *case_dir;
static char mnt[PATH_MAX];
static int mounted;

/* ---- helpers ---------------------------------------------------------- */

static int mount_tmpfs(const char *dir, char *why, size_t len)
{
    char opts[64];

    snprintf(opts, sizeof opts, "size=%dm", TMPFS_MB);
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        snprintf(why, len, "mkdir %s: %s", dir, strerror(errno));
        return -1;
    }
    if (mount("tmpfs", dir, "tmpfs", 0, opts) != 0) {
        snprintf(why, len, "mount tmpfs on %s: %s", dir, strerror(errno));
        return -1;
    }
    return 0;
}

static long long free_bytes(const char *dir)
{
    struct statvfs sv;

    ck_assert_int_eq(statvfs(dir, &sv), 0);
    return (long long)sv.f_bavail * (long long)sv.f_frsize;
}

/* Writes a file of len bytes (real blocks, not a hole), or until the
 * disk is full when len < 0. */
static void write_filler(const char *path, long long len)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    static char block[1 << 12];

    ck_assert_int_ge(fd, 0);
    memset(block, 0x5a, sizeof block);
    while (len != 0) {
        size_t n = len < 0 || len > (long long)sizeof block ? sizeof block : (size_t)len;
        ssize_t w = write(fd, block, n);

        if (len < 0 && w < 0 && errno == ENOSPC)
            break;
        ck_assert_int_gt(w, 0);
        if (len > 0)
            len -= w;
    }
    close(fd);
}

static void body_gen(int i, uint8_t *buf)
{
    for (int k = 0; k < BODY_LEN; k++)
        buf[k] = (uint8_t)(i * 31 + k * 7 + (k >> 8));
}

static int call(rmq_sync_t *s, const char *addr, Rmq__Command *req, const void *body, size_t len,
                rmq_frame_t *resp)
{
    if (rmq_sync_call(s, addr, req, body, len, RPC_TIMEOUT_MS, resp) != RMQ_OK)
        return -1;
    return resp->cmd->status;
}

static int send_one(rmq_sync_t *s, const char *addr, int i)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__SendMessageRequest h = RMQ__SEND_MESSAGE_REQUEST__INIT;
    rmq_frame_t resp = { 0 };
    uint8_t body[BODY_LEN];
    char props[32];
    int st;

    body_gen(i, body);
    snprintf(props, sizeof props, "KEYS\001%d\002", i);
    h.producer_group = (char *)"full_producer";
    h.topic = (char *)TOPIC;
    h.queue_id = 0;
    h.properties = props;
    req.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_SEND;
    req.send = &h;
    st = call(s, addr, &req, body, sizeof body, &resp);
    rmq_frame_clear(&resp);
    return st;
}

/* Pulls the whole queue; every record must pass its CRC and carry the body
 * of its index. Returns how many acked messages are missing. */
static int pull_check(rmq_sync_t *s, const char *addr, const uint8_t *acked, int n, int *served)
{
    uint8_t *seen = calloc((size_t)n, 1), want[BODY_LEN];
    int64_t offset = 0;
    int missing = 0;

    *served = 0;
    for (;;) {
        Rmq__Command req;
        Rmq__PullMessageRequest h;
        rmq_frame_t resp = { 0 };
        size_t len, off = 0;
        const uint8_t *data;
        int st;

        wire_pull_hdr(&req, &h, GROUP, TOPIC, 0, offset);
        h.max_msg_nums = 256;
        st = call(s, addr, &req, NULL, 0, &resp);
        if (st != RMQ__STATUS__SUCCESS) {
            ck_assert_msg(st == RMQ__STATUS__PULL_NOT_FOUND, "pull at %lld: status %d", (long long)offset, st);
            rmq_frame_clear(&resp);
            break;
        }
        len = evbuffer_get_length(resp.body);
        data = evbuffer_pullup(resp.body, -1);
        while (off < len) {
            rmq_record_t rec;
            size_t vlen;
            const char *key;
            int idx;

            ck_assert_int_eq(rmq_record_decode(data + off, len - off, 1, &rec), RMQ_OK);
            key = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_KEYS, &vlen);
            ck_assert_ptr_nonnull(key);
            idx = atoi(key);
            ck_assert(idx >= 0 && idx < n);
            body_gen(idx, want);
            ck_assert_msg(rec.body_len == BODY_LEN && memcmp(want, rec.body, BODY_LEN) == 0,
                          "message %d corrupted", idx);
            seen[idx] = 1;
            (*served)++;
            off += rec.total_size;
        }
        offset = resp.cmd->pull_resp->next_begin_offset;
        rmq_frame_clear(&resp);
    }
    for (int i = 0; i < n; i++)
        if (acked[i] && !seen[i])
            missing++;
    free(seen);
    return missing;
}

/* ---- fixture ------------------------------------------------------------- */

static void setup(void)
{
    char why[512];

    case_dir = hn_case_begin("diskfull");
    ck_assert_ptr_nonnull(case_dir);
    snprintf(mnt, sizeof mnt, "%s/mnt", case_dir);
    ck_assert_msg(mount_tmpfs(mnt, why, sizeof why) == 0, "%s", why);
    mounted = 1;
}

static void teardown(void)
{
    hn_cleanup();                 /* the broker must be gone before the unmount */
    if (mounted && umount2(mnt, MNT_DETACH) != 0)
        fprintf(stderr, "# umount %s: %s\n", mnt, strerror(errno));
    mounted = 0;
    hn_case_end();
}

/* ---- case -------------------------------------------------------------------- */

START_TEST(test_disk_full_refuses_then_resumes)
{
    char props[PATH_MAX + 512], addr[64], filler[PATH_MAX + 16];
    char filler2[PATH_MAX + 16];
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "full" };
    rmq_sync_t *s;
    hn_daemon_t bk;
    uint8_t *acked = calloc(MAX_MSGS, 1);
    int i, st = 0, n_acked = 0, full_at = -1, served, other = 0, after_fill = 0;
    long long t0, resumed_ms;

    /* leave room for the first commit-log file and a little more, not two */
    snprintf(filler, sizeof filler, "%s/filler", mnt);
    write_filler(filler, free_bytes(mnt) - SEG_SIZE - 2 * 1024 * 1024);
    fprintf(stderr, "# tmpfs %d MiB, %lld bytes free after the filler\n", TMPFS_MB, free_bytes(mnt));

    snprintf(props, sizeof props,
             "brokerName=broker-f\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store\n"
             "mapedFileSizeCommitLog=%d\nmapedFileSizeConsumeQueue=60000\nmaxMessageSize=65536\n"
             "diskMaxUsedSpaceRatio=95\ndiskFullRatio=99\nlogLevel=info\n"
             "maxHashSlotNum=1000\nmaxIndexNum=4000\n",   /* a small key index, where there is one */
             mnt, SEG_SIZE);
    ck_assert_int_eq(hn_daemon_start_conf(&bk, case_dir, "broker/mqbroker", "broker", props, addr, sizeof addr), 0);
    s = rmq_sync_new(&opts);
    {
        Rmq__Command req;
        Rmq__TopicConfig tc;
        rmq_frame_t resp = { 0 };

        wire_topic_request(&req, &tc, TOPIC, 1);
        ck_assert_int_eq(call(s, addr, &req, NULL, 0, &resp), RMQ__STATUS__SUCCESS);
        rmq_frame_clear(&resp);
    }

    /* fill until the broker refuses with the disk-full status; after 300
     * messages nothing is left on the disk but the log file's free room */
    snprintf(filler2, sizeof filler2, "%s/filler2", mnt);
    for (i = 0; i < MAX_MSGS; i++) {
        if (i == 300) {
            write_filler(filler2, -1);
            fprintf(stderr, "# disk filled to %lld bytes free after message 300\n", free_bytes(mnt));
            usleep(1500 * 1000);     /* past a checkpoint interval (1 s) */
        }
        st = send_one(s, addr, i);
        if (i >= 300 && st == RMQ__STATUS__SUCCESS)
            after_fill++;
        if (st == RMQ__STATUS__SUCCESS) {
            acked[i] = 1;
            n_acked++;
            continue;
        }
        if (st == RMQ__STATUS__SERVICE_NOT_AVAILABLE_DISK_FULL) {
            full_at = i;
            break;
        }
        other++;
        fprintf(stderr, "# message %d: status %d\n", i, st);
    }
    fprintf(stderr, "# %d messages acked (%d with the disk at 0 bytes free), disk full at message %d\n",
            n_acked, after_fill, full_at);
    ck_assert_int_eq(other, 0);
    ck_assert_msg(full_at > 0, "no SERVICE_NOT_AVAILABLE_DISK_FULL after %d messages (last status %d)", i, st);
    for (int k = 1; k <= 5; k++)
        ck_assert_int_eq(send_one(s, addr, full_at + k), RMQ__STATUS__SERVICE_NOT_AVAILABLE_DISK_FULL);
    ck_assert_int_eq(pull_check(s, addr, acked, MAX_MSGS, &served), 0);
    ck_assert_int_eq(served, n_acked);

    /* free space: writes resume */
    ck_assert_int_eq(unlink(filler), 0);
    ck_assert_int_eq(unlink(filler2), 0);
    t0 = hn_now_ms();
    i = full_at + 6;
    while ((st = send_one(s, addr, i)) == RMQ__STATUS__SERVICE_NOT_AVAILABLE_DISK_FULL &&
           hn_now_ms() - t0 < 30000)
        usleep(200 * 1000);
    resumed_ms = hn_now_ms() - t0;
    ck_assert_msg(st == RMQ__STATUS__SUCCESS, "writes did not resume after freeing space: status %d", st);
    acked[i] = 1;
    n_acked++;
    fprintf(stderr, "# writes resumed %lld ms after the fillers were deleted\n", resumed_ms);
    for (int k = 1; k <= 200 && i + k < MAX_MSGS; k++) {
        ck_assert_int_eq(send_one(s, addr, i + k), RMQ__STATUS__SUCCESS);
        acked[i + k] = 1;
        n_acked++;
    }
    ck_assert_int_eq(pull_check(s, addr, acked, MAX_MSGS, &served), 0);
    ck_assert_int_eq(served, n_acked);
    rmq_sync_free(s);
    free(acked);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *diskfull_suite(void)
{
    Suite *s = suite_create("diskfull");
    TCase *tc = tcase_create("process");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_disk_full_refuses_then_resumes);
    suite_add_tcase(s, tc);
    return s;
}

/* Skips the whole program (TAP "1..0 # SKIP") when a tmpfs cannot be mounted. */
static int can_mount(char *why, size_t len)
{
    char dir[] = "/tmp/rmq-diskfull-probe-XXXXXX";
    int ok;

    if (!mkdtemp(dir)) {
        snprintf(why, len, "mkdtemp: %s", strerror(errno));
        return 0;
    }
    ok = mount_tmpfs(dir, why, len) == 0;
    if (ok)
        umount2(dir, MNT_DETACH);
    rmdir(dir);
    return ok;
}

int main(void)
{
    char why[512];

    if (!can_mount(why, sizeof why)) {
        printf("1..0 # SKIP needs a tmpfs mount (root): %s\n", why);
        return 0;
    }
    return hn_run_suite(diskfull_suite());
}
