/* test_hostile.c: hostile clients against a real mqbroker and mqnamesrv.
 * While a well-behaved client thread keeps sending and pulling (every body
 * checked), the test throws at both daemons: random bytes, truncated
 * frames, huge declared lengths, a header_len larger than its frame, valid
 * frames with garbage or mutated protobuf headers, every request code with
 * no header and with a header of the wrong type, slow-loris connections (1
 * byte per 100 ms) and thousands of idle connections (2,000 by default,
 * RMQ_HOSTILE_CONNS for a longer run; RLIMIT_NOFILE is raised here and the
 * daemons inherit it). Frames a server must refuse close that connection
 * only. The broker's RSS is sampled from /proc and must stay bounded; both
 * daemons exit 0 on SIGTERM afterwards. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <arpa/inet.h>
#include <event2/buffer.h>

#include "harness.h"
#include "rmq_message.h"
#include "rmq_rpc.h"
#include "wire.h"

#define TOPIC "HostileTopic"
#define GROUP "hostile_group"
#define RPC_TIMEOUT_MS 5000
#define RSS_LIMIT_KB (512 * 1024)
#define DEFAULT_CONNS 2000
#define BODY_MAX 512

static const char *case_dir;

/* ---- daemons ----------------------------------------------------------- */

static void ns_start(hn_daemon_t *d, char *addr, size_t len)
{
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "namesrv/mqnamesrv", "ns",
                                          "listenPort=0\nbindAddress=127.0.0.1\n", addr, len), 0);
}

static void broker_start(hn_daemon_t *d, const char *ns, char *addr, size_t len)
{
    char props[2048];

    snprintf(props, sizeof props,
             "brokerName=broker-h\nlistenPort=0\nhaListenPort=0\nstorePathRootDir=%s/store\n"
             "mapedFileSizeCommitLog=4194304\nmapedFileSizeConsumeQueue=600000\n"
             "maxMessageSize=65536\nlogLevel=warn\nnamesrvAddr=%s\n",
             case_dir, ns);
    ck_assert_int_eq(hn_daemon_start_conf(d, case_dir, "broker/mqbroker", "broker", props, addr, len), 0);
}

/* VmRSS (or VmHWM) of pid in KiB, -1 if unreadable. */
static long proc_status_kb(pid_t pid, const char *field)
{
    char path[64], line[256];
    long kb = -1;
    size_t flen = strlen(field);
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/status", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, field, flen) == 0 && line[flen] == ':')
            kb = strtol(line + flen + 1, NULL, 10);
    fclose(f);
    return kb;
}

/* The soft "Max open files" limit of pid, from /proc/PID/limits. */
static long proc_nofile(pid_t pid)
{
    char path[64], line[256];
    long v = -1;
    FILE *f;

    snprintf(path, sizeof path, "/proc/%d/limits", (int)pid);
    if (!(f = fopen(path, "r")))
        return -1;
    while (fgets(line, sizeof line, f))
        if (strncmp(line, "Max open files", 14) == 0)
            v = strtol(line + 14, NULL, 10);
    fclose(f);
    return v;
}

static int alive(const hn_daemon_t *d)
{
    return d->pid > 0 && kill(d->pid, 0) == 0 && proc_status_kb(d->pid, "VmRSS") > 0;
}

/* ---- messages ------------------------------------------------------------ */

/* Body of message i: "i:" then bytes derived from i. */
static size_t body_gen(int i, uint8_t *buf)
{
    int n = snprintf((char *)buf, BODY_MAX, "%d:", i);
    size_t len = (size_t)n + 1 + wire_mix((uint64_t)i) % (BODY_MAX - 32);

    for (size_t k = (size_t)n; k < len; k++)
        buf[k] = (uint8_t)wire_mix((uint64_t)i * 1000003u + k);
    return len;
}

static int sync_call(rmq_sync_t *s, const char *addr, Rmq__Command *req, const void *body, size_t len,
                     rmq_frame_t *resp)
{
    if (rmq_sync_call(s, addr, req, body, len, RPC_TIMEOUT_MS, resp) != RMQ_OK)
        return -1;
    return resp->cmd->status;
}

static int create_topic(const char *addr)
{
    static const wire_link_t ln = {
        .opts = { .connect_timeout_ms = 3000, .name = "admin" },
        .timeout_ms = RPC_TIMEOUT_MS,
    };
    Rmq__Command req;
    Rmq__TopicConfig tc;

    wire_topic_request(&req, &tc, TOPIC, 1);
    return wire_call_with(&ln, addr, &req, NULL, 0, NULL);
}

/* ---- the well-behaved client (its own thread) ---------------------------- */

typedef struct good_client {
    const char *addr;
    pthread_t thread;
    atomic_int stop;
    atomic_int sent, send_fail, busy, pulled, pull_bad, pull_fail;
    atomic_long max_ms;
    int first_fail;
} good_client_t;

static void note_latency(good_client_t *gc, long long t0)
{
    long ms = (long)(hn_now_ms() - t0);

    if (ms > atomic_load(&gc->max_ms))
        atomic_store(&gc->max_ms, ms);
}

/* Checks every record of a pull body; returns how many, -1 if one is bad. */
static int check_pulled(struct evbuffer *body, int *next_index)
{
    size_t len = evbuffer_get_length(body), off = 0;
    const uint8_t *data = evbuffer_pullup(body, -1);
    uint8_t want[BODY_MAX];
    int n = 0;

    while (off < len) {
        rmq_record_t rec;
        size_t wlen;
        int idx;

        if (rmq_record_decode(data + off, len - off, 1, &rec) != RMQ_OK)
            return -1;
        idx = atoi((const char *)rec.body);
        wlen = body_gen(idx, want);
        if (idx != *next_index || wlen != rec.body_len || memcmp(want, rec.body, wlen) != 0)
            return -1;
        (*next_index)++;
        off += rec.total_size;
        n++;
    }
    return n;
}

static void *good_main(void *arg)
{
    good_client_t *gc = arg;
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "good" };
    rmq_sync_t *s = rmq_sync_new(&opts);
    uint8_t body[BODY_MAX];
    int64_t pull_offset = 0;
    int next_pull = 0, i = 0;

    while (!atomic_load(&gc->stop)) {
        Rmq__Command req = RMQ__COMMAND__INIT;
        Rmq__SendMessageRequest h = RMQ__SEND_MESSAGE_REQUEST__INIT;
        rmq_frame_t resp = { 0 };
        size_t len = body_gen(i, body);
        long long t0 = hn_now_ms();
        int st;

        h.producer_group = (char *)"hostile_producer";
        h.topic = (char *)TOPIC;
        h.queue_id = 0;
        h.properties = (char *)"";
        req.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
        req.header_case = RMQ__COMMAND__HEADER_SEND;
        req.send = &h;
        st = sync_call(s, gc->addr, &req, body, len, &resp);
        rmq_frame_clear(&resp);
        note_latency(gc, t0);
        if (st == RMQ__STATUS__SYSTEM_BUSY) {
            /* flow control (waitTimeMillsInSendQueue) when the loop is
             * slowed by a burst of accepts: back off and resend, as a
             * producer does */
            atomic_fetch_add(&gc->busy, 1);
            usleep(10000);
            continue;
        }
        if (st != RMQ__STATUS__SUCCESS) {
            if (!atomic_load(&gc->send_fail))
                gc->first_fail = st;
            atomic_fetch_add(&gc->send_fail, 1);
            usleep(10000);
            continue;
        }
        atomic_fetch_add(&gc->sent, 1);
        i++;
        usleep(1000);   /* a steady trickle, not a benchmark: keeps the store small */
        if (i % 8 == 0) {
            Rmq__Command preq;
            Rmq__PullMessageRequest ph;

            wire_pull_hdr(&preq, &ph, GROUP, TOPIC, 0, pull_offset);
            ph.max_msg_nums = 64;
            t0 = hn_now_ms();
            st = sync_call(s, gc->addr, &preq, NULL, 0, &resp);
            note_latency(gc, t0);
            if (st == RMQ__STATUS__SUCCESS) {
                int n = check_pulled(resp.body, &next_pull);

                if (n < 0)
                    atomic_fetch_add(&gc->pull_bad, 1);
                else
                    atomic_fetch_add(&gc->pulled, n);
                pull_offset = resp.cmd->pull_resp->next_begin_offset;
            } else if (st != RMQ__STATUS__PULL_NOT_FOUND && st != RMQ__STATUS__PULL_RETRY_IMMEDIATELY) {
                atomic_fetch_add(&gc->pull_fail, 1);
            }
            rmq_frame_clear(&resp);
        }
    }
    rmq_sync_free(s);
    return NULL;
}

/* Waits until the good client has made n more sends; 1 if it did. */
static int good_progress(good_client_t *gc, int n, int timeout_ms)
{
    int target = atomic_load(&gc->sent) + n;
    long long deadline = hn_now_ms() + timeout_ms;

    while (atomic_load(&gc->sent) < target && hn_now_ms() < deadline)
        usleep(10000);
    return atomic_load(&gc->sent) >= target;
}

/* ---- raw sockets ---------------------------------------------------------- */

static int port_of(const char *addr)
{
    return atoi(strrchr(addr, ':') + 1);
}

/* A connected (blocking) TCP socket to 127.0.0.1:port. */
static int tcp_connect(int port)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ck_assert_int_ge(fd, 0);
    ck_assert_msg(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0, "connect: %s", strerror(errno));
    return fd;
}

static void write_all(int fd, const void *data, size_t len)
{
    const uint8_t *p = data;

    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return;     /* the server may close first: fine */
        p += n;
        len -= (size_t)n;
    }
}

typedef enum peer_outcome { PEER_SILENT = 0, PEER_REPLIED = 1, PEER_CLOSED = 2 } peer_outcome_t;

/* Waits for the peer's first move: bytes (PEER_REPLIED), EOF or reset
 * (PEER_CLOSED), or nothing until the timeout (PEER_SILENT). */
static peer_outcome_t drain(int fd, int timeout_ms)
{
    struct pollfd p = { fd, POLLIN, 0 };
    char buf[4096];
    ssize_t n;

    if (poll(&p, 1, timeout_ms) <= 0)
        return PEER_SILENT;
    n = recv(fd, buf, sizeof buf, 0);
    if (n == 0 || (n < 0 && errno == ECONNRESET))
        return PEER_CLOSED;
    return n > 0 ? PEER_REPLIED : PEER_SILENT;
}

/* Encodes cmd (+ body) as one frame into out (heap, caller frees). */
static uint8_t *frame_bytes(Rmq__Command *cmd, const void *body, size_t blen, size_t *len)
{
    struct evbuffer *b = evbuffer_new();
    uint8_t *out;

    cmd->version = 1;
    ck_assert_int_eq(rmq_frame_encode(b, cmd, body, blen), RMQ_OK);
    *len = evbuffer_get_length(b);
    out = malloc(*len);
    evbuffer_remove(b, out, *len);
    evbuffer_free(b);
    return out;
}

static void put_be32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

/* A SEND_MESSAGE frame for a junk topic (the good client's topic only
 * ever holds its own messages). */
static uint8_t *send_frame(size_t *len)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    Rmq__SendMessageRequest h = RMQ__SEND_MESSAGE_REQUEST__INIT;

    h.producer_group = (char *)"hostile_producer";
    h.topic = (char *)"HostileJunk";
    h.properties = (char *)"TAGS\001t\002KEYS\001k\002";
    req.code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    req.header_case = RMQ__COMMAND__HEADER_SEND;
    req.send = &h;
    req.opaque = 7;
    return frame_bytes(&req, "hostile body", 12, len);
}

/* ---- phases ------------------------------------------------------------------ */

typedef struct tally {
    int silent, replied, closed;
} tally_t;

static void count(tally_t *t, peer_outcome_t o)
{
    if (o == PEER_SILENT)
        t->silent++;
    else if (o == PEER_REPLIED)
        t->replied++;
    else
        t->closed++;
}

/* Random bytes, and valid frames cut short, each on its own connection. */
static void phase_random_and_truncated(int port, unsigned *seed, tally_t *t)
{
    size_t flen;
    uint8_t *frame = send_frame(&flen);

    for (int i = 0; i < 60; i++) {
        uint8_t junk[2048];
        size_t n = 1 + (size_t)rand_r(seed) % sizeof junk;
        int fd = tcp_connect(port);

        for (size_t k = 0; k < n; k++)
            junk[k] = (uint8_t)rand_r(seed);
        write_all(fd, junk, n);
        count(t, drain(fd, 1000));
        close(fd);
    }
    for (size_t cut = 1; cut < flen; cut += 3) {
        int fd = tcp_connect(port);

        write_all(fd, frame, cut);
        close(fd);      /* half a frame, then gone */
    }
    free(frame);
}

/* Frames a server must refuse: each closes its own connection. */
static void phase_bad_lengths(int port)
{
    uint8_t huge[8], over[64], garbage[32];
    int fd;

    /* declared frame length far over maxFrameSize */
    put_be32(huge, 0xFFFFFFF0u);
    put_be32(huge + 4, 16);
    fd = tcp_connect(port);
    write_all(fd, huge, sizeof huge);
    ck_assert_msg(drain(fd, 3000) == PEER_CLOSED, "huge declared length: connection not closed");
    close(fd);

    /* header_len larger than the frame */
    memset(over, 0, sizeof over);
    put_be32(over, 16);
    put_be32(over + 4, 1000);
    fd = tcp_connect(port);
    write_all(fd, over, 4 + 16);
    ck_assert_msg(drain(fd, 3000) == PEER_CLOSED, "header_len > frame: connection not closed");
    close(fd);

    /* frame length smaller than the header_len field itself */
    put_be32(over, 2);
    put_be32(over + 4, 0);
    fd = tcp_connect(port);
    write_all(fd, over, 8);
    ck_assert_msg(drain(fd, 3000) == PEER_CLOSED, "frame shorter than its prefix: connection not closed");
    close(fd);

    /* a complete frame whose header is not protobuf (0xff.. is no valid tag) */
    put_be32(garbage, 28);
    put_be32(garbage + 4, 16);
    memset(garbage + 8, 0xff, 24);
    fd = tcp_connect(port);
    write_all(fd, garbage, sizeof garbage);
    ck_assert_msg(drain(fd, 3000) == PEER_CLOSED, "garbage protobuf header: connection not closed");
    close(fd);
}

/* Valid frames with a few random header bytes changed. */
static void phase_mutated_headers(int port, unsigned *seed, int rounds, tally_t *t)
{
    size_t flen;
    uint8_t *frame = send_frame(&flen);
    uint32_t hlen = (uint32_t)frame[4] << 24 | (uint32_t)frame[5] << 16 | (uint32_t)frame[6] << 8 | frame[7];

    for (int i = 0; i < rounds; i++) {
        uint8_t *m = malloc(flen);
        int flips = 1 + rand_r(seed) % 4, fd;

        memcpy(m, frame, flen);
        for (int k = 0; k < flips; k++)
            m[8 + (size_t)rand_r(seed) % hlen] = (uint8_t)rand_r(seed);
        fd = tcp_connect(port);
        write_all(fd, m, flen);
        count(t, drain(fd, 1000));
        close(fd);
        free(m);
    }
    free(frame);
}

/* Every request code with no header, then with a header of the wrong type:
 * each gets an answer. */
static void phase_every_code(const char *addr, int *answered, int *codes)
{
    rmq_client_opts_t opts = { .connect_timeout_ms = 3000, .name = "codes" };
    rmq_sync_t *s = rmq_sync_new(&opts);
    const ProtobufCEnumDescriptor *d = &rmq__request_code__descriptor;
    Rmq__KvConfig kv = RMQ__KV_CONFIG__INIT;
    Rmq__GroupRequest gr = RMQ__GROUP_REQUEST__INIT;

    kv.namespace_ = (char *)"x";
    kv.key = (char *)"y";
    kv.value = (char *)"z";
    gr.consumer_group = (char *)"";
    for (unsigned i = 0; i < d->n_values; i++) {
        for (int variant = 0; variant < 3; variant++) {
            Rmq__Command req = RMQ__COMMAND__INIT;
            rmq_frame_t resp = { 0 };

            req.code = d->values[i].value;
            if (variant == 1) {
                req.header_case = RMQ__COMMAND__HEADER_KV;
                req.kv = &kv;
            } else if (variant == 2) {
                req.header_case = RMQ__COMMAND__HEADER_GROUP;
                req.group = &gr;
            }
            (*codes)++;
            if (rmq_sync_call(s, addr, &req, "\x01\x02", 2, RPC_TIMEOUT_MS, &resp) == RMQ_OK)
                (*answered)++;
            else
                fprintf(stderr, "# %s (variant %d) got no answer\n", d->values[i].name, variant);
            rmq_frame_clear(&resp);
        }
    }
    rmq_sync_free(s);
}

/* Slow loris: n connections each send one small valid request a byte every
 * 100 ms, plus n that declare a 1 MiB frame and dribble a little of it.
 * The complete ones must be answered. Returns how many were. */
static int phase_slow_loris(int port, int n)
{
    Rmq__Command req = RMQ__COMMAND__INIT;
    size_t flen;
    uint8_t *frame;
    int *fds = calloc((size_t)n * 2, sizeof(int)), answered = 0;
    uint8_t partial[8];

    req.code = RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO;
    req.opaque = 42;
    frame = frame_bytes(&req, NULL, 0, &flen);
    put_be32(partial, 1u << 20);
    put_be32(partial + 4, 4);
    for (int i = 0; i < 2 * n; i++) {
        fds[i] = tcp_connect(port);
        int one = 1;
        setsockopt(fds[i], IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    }
    for (size_t b = 0; b < flen; b++) {
        for (int i = 0; i < n; i++) {
            write_all(fds[i], frame + b, 1);
            write_all(fds[n + i], b < sizeof partial ? partial + b : (const uint8_t *)"x", 1);
        }
        usleep(100 * 1000);
    }
    for (int i = 0; i < n; i++)
        if (drain(fds[i], 2000) != PEER_SILENT)
            answered++;
    for (int i = 0; i < 2 * n; i++)
        close(fds[i]);
    free(fds);
    free(frame);
    return answered;
}

/* Opens n idle connections to port (batches of 250, each confirmed by poll).
 * Returns the fds (caller closes) and how many connected. */
static int *open_idle(int port, int n, int *connected)
{
    int *fds = malloc((size_t)n * sizeof(int));
    struct pollfd *pf = malloc((size_t)n * sizeof(*pf));
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };

    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    *connected = 0;
    for (int base = 0; base < n; base += 250) {
        int m = n - base < 250 ? n - base : 250;
        long long deadline = hn_now_ms() + 10000;
        int pending = 0;

        for (int i = 0; i < m; i++) {
            int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

            ck_assert_msg(fd >= 0, "socket: %s (RLIMIT_NOFILE too low?)", strerror(errno));
            fds[base + i] = fd;
            if (connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0)
                (*connected)++;
            else if (errno == EINPROGRESS)
                pending++;
            pf[i].fd = errno == EINPROGRESS ? fd : -1;
            pf[i].events = POLLOUT;
        }
        while (pending > 0 && hn_now_ms() < deadline) {
            if (poll(pf, (nfds_t)m, 200) <= 0)
                continue;
            for (int i = 0; i < m; i++) {
                int err = 0;
                socklen_t el = sizeof err;

                if (pf[i].fd < 0 || !pf[i].revents)
                    continue;
                getsockopt(pf[i].fd, SOL_SOCKET, SO_ERROR, &err, &el);
                if (!err)
                    (*connected)++;
                pf[i].fd = -1;
                pending--;
            }
        }
    }
    free(pf);
    return fds;
}

/* ---- fixture and case ------------------------------------------------------------ */

static void setup(void)
{
    case_dir = hn_case_begin("hostile");
    ck_assert_ptr_nonnull(case_dir);
}

static void teardown(void)
{
    hn_case_end();
}

START_TEST(test_hostile_clients)
{
    const char *env = getenv("RMQ_HOSTILE_CONNS");
    int conns = env ? atoi(env) : DEFAULT_CONNS, ns_conns = conns / 4;
    rlim_t want = (rlim_t)(conns + ns_conns) + 4096;
    struct rlimit rl;
    hn_daemon_t ns, bk;
    char ns_addr[64], addr[64];
    good_client_t gc;
    unsigned seed = (unsigned)time(NULL);
    tally_t junk = { 0 }, mutated = { 0 }, ns_mutated = { 0 };
    long rss0, rss_idle, rss_end, hwm, anon0, anon_idle, anon_end;
    int answered = 0, codes = 0, ns_answered = 0, ns_codes = 0, connected, ns_connected, loris;
    int *idle, *ns_idle;

    /* raise the fd limit before the daemons start: they inherit it */
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < want) {
        struct rlimit nrl = { want, rl.rlim_max > want ? rl.rlim_max : want };

        if (setrlimit(RLIMIT_NOFILE, &nrl) != 0) {
            nrl.rlim_max = rl.rlim_max;
            nrl.rlim_cur = rl.rlim_max < want ? rl.rlim_max : want;
            ck_assert_int_eq(setrlimit(RLIMIT_NOFILE, &nrl), 0);
        }
    }
    ck_assert_int_eq(getrlimit(RLIMIT_NOFILE, &rl), 0);
    if (rl.rlim_cur < want) {
        conns = rl.rlim_cur > 2048 ? (int)((rl.rlim_cur - 1024) * 4 / 5) : 500;
        ns_conns = conns / 4;
        fprintf(stderr, "# RLIMIT_NOFILE is %lu: %d idle connections only\n", (unsigned long)rl.rlim_cur,
                conns);
    }
    fprintf(stderr, "# seed %u, %d idle connections to the broker, %d to the name server\n", seed, conns,
            ns_conns);

    ns_start(&ns, ns_addr, sizeof ns_addr);
    broker_start(&bk, ns_addr, addr, sizeof addr);
    ck_assert_msg(proc_nofile(bk.pid) >= (long)conns + 1000, "broker inherited RLIMIT_NOFILE %ld",
                  proc_nofile(bk.pid));
    ck_assert_int_ge(proc_nofile(ns.pid), (long)ns_conns + 100);
    ck_assert_int_eq(create_topic(addr), RMQ__STATUS__SUCCESS);

    memset(&gc, 0, sizeof gc);
    gc.addr = addr;
    ck_assert_int_eq(pthread_create(&gc.thread, NULL, good_main, &gc), 0);
    ck_assert_msg(good_progress(&gc, 20, 10000), "the good client does not get going");
    rss0 = proc_status_kb(bk.pid, "VmRSS");
    anon0 = proc_status_kb(bk.pid, "RssAnon");

    /* 1. random bytes and truncated frames, both daemons */
    phase_random_and_truncated(port_of(addr), &seed, &junk);
    phase_random_and_truncated(port_of(ns_addr), &seed, &junk);
    ck_assert(alive(&bk) && alive(&ns));
    ck_assert_msg(good_progress(&gc, 10, 5000), "client stalled after random bytes");

    /* 2. lengths a server must refuse: those connections close */
    phase_bad_lengths(port_of(addr));
    phase_bad_lengths(port_of(ns_addr));
    ck_assert_msg(good_progress(&gc, 10, 5000), "client stalled after bad lengths");

    /* 3. mutated headers, every code with no or a wrong header */
    phase_mutated_headers(port_of(addr), &seed, 300, &mutated);
    phase_mutated_headers(port_of(ns_addr), &seed, 100, &ns_mutated);
    phase_every_code(addr, &answered, &codes);
    phase_every_code(ns_addr, &ns_answered, &ns_codes);
    ck_assert(alive(&bk) && alive(&ns));
    ck_assert_int_eq(answered, codes);
    ck_assert_int_eq(ns_answered, ns_codes);
    ck_assert_msg(good_progress(&gc, 10, 5000), "client stalled after garbage headers");

    /* 4. slow loris */
    loris = phase_slow_loris(port_of(addr), 20);
    ck_assert_int_eq(loris, 20);
    ck_assert_msg(good_progress(&gc, 10, 5000), "client stalled after slow loris");

    /* 5. thousands of idle connections while the client keeps going */
    idle = open_idle(port_of(addr), conns, &connected);
    ns_idle = open_idle(port_of(ns_addr), ns_conns, &ns_connected);
    ck_assert_int_eq(connected, conns);
    ck_assert_int_eq(ns_connected, ns_conns);
    ck_assert_msg(good_progress(&gc, 50, 10000), "client stalled with %d idle connections", conns);
    sleep(1);
    rss_idle = proc_status_kb(bk.pid, "VmRSS");
    anon_idle = proc_status_kb(bk.pid, "RssAnon");
    ck_assert_int_eq(create_topic(addr), RMQ__STATUS__SUCCESS);   /* a new connection still served */
    for (int i = 0; i < conns; i++)
        close(idle[i]);
    for (int i = 0; i < ns_conns; i++)
        close(ns_idle[i]);
    free(idle);
    free(ns_idle);
    ck_assert_msg(good_progress(&gc, 20, 5000), "client stalled after the idle connections closed");

    atomic_store(&gc.stop, 1);
    pthread_join(gc.thread, NULL);
    rss_end = proc_status_kb(bk.pid, "VmRSS");
    anon_end = proc_status_kb(bk.pid, "RssAnon");
    hwm = proc_status_kb(bk.pid, "VmHWM");
    /* VmRSS includes the mapped commit log (RssFile); the heap is RssAnon */
    fprintf(stderr, "# broker RSS (anon): %ld (%ld) KiB at start, %ld (%ld) KiB with %d idle connections, "
                    "%ld (%ld) KiB at end, peak RSS %ld KiB; name server peak %ld KiB\n",
            rss0, anon0, rss_idle, anon_idle, conns, rss_end, anon_end, hwm,
            proc_status_kb(ns.pid, "VmHWM"));
    fprintf(stderr, "# good client: %d sent, %d pulled and checked, %d send failures (first status %d), "
                    "%d SYSTEM_BUSY resent, slowest call %ld ms\n",
            atomic_load(&gc.sent), atomic_load(&gc.pulled), atomic_load(&gc.send_fail), gc.first_fail,
            atomic_load(&gc.busy), atomic_load(&gc.max_ms));
    fprintf(stderr, "# random bytes: %d closed, %d answered, %d silent; mutated headers broker %d/%d/%d, "
                    "name server %d/%d/%d; %d+%d code probes answered\n",
            junk.closed, junk.replied, junk.silent, mutated.closed, mutated.replied, mutated.silent,
            ns_mutated.closed, ns_mutated.replied, ns_mutated.silent, answered, ns_answered);
    ck_assert_int_eq(atomic_load(&gc.send_fail), 0);
    ck_assert_int_eq(atomic_load(&gc.pull_bad), 0);
    ck_assert_int_eq(atomic_load(&gc.pull_fail), 0);
    ck_assert_int_gt(atomic_load(&gc.pulled), 0);
    ck_assert_int_lt(hwm, RSS_LIMIT_KB);
    ck_assert_int_lt(anon_idle, RSS_LIMIT_KB);
    ck_assert_int_lt(anon_end, RSS_LIMIT_KB);
    ck_assert_int_eq(hn_daemon_stop(&bk, HN_STOP_TIMEOUT_MS), 0);
    ck_assert_int_eq(hn_daemon_stop(&ns, HN_STOP_TIMEOUT_MS), 0);
    hn_case_passed();
}
END_TEST

static Suite *hostile_suite(void)
{
    Suite *s = suite_create("hostile");
    TCase *tc = tcase_create("process");

    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 180);
    tcase_add_test(tc, test_hostile_clients);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return hn_run_suite(hostile_suite());
}
