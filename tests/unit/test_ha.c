/* test_ha.c: the HA channel in one process: a master store and a slave store
 * on one event base, replicated over 127.0.0.1 ephemeral ports. Covers
 * catch-up from empty across several commit-log files, streaming while
 * appending, SYNC_MASTER waiters (released by acks, timed out by a frozen
 * slave, refused with no slave), handshake refusals, reconnects, heartbeats,
 * a silent master, metadata records in log order (none to a slave that did
 * not ask; a type the slave does not know refused with a reason), and the
 * pure codec and waiter heap. */
#include "ha_codec.h"
#include "ha_confirm.h"
#include "ha_master.h"
#include "ha_slave.h"
#include "ha_sync.h"
#include "rmq_log.h"
#include "rmq_loop.h"
#include "rmq_time.h"
#include "st_store.h"

#include <arpa/inet.h>
#include <check.h>
#include <ftw.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#define TOPIC "TopicHA"
#define N_QUEUES 4
#define SEG_SIZE (128 * 1024)

typedef struct fx {
    char dir[64];
    struct event_base *base;
    struct event *poll_ev;
    rmq_loop_poster_t *poster;
    st_store_t *mst, *sst;
    ha_master_t *master;
    ha_slave_t *slave;
    ha_config_t mcfg, scfg;
} fx_t;

static fx_t F;

static st_store_t *open_store(const char *name, int read_only)
{
    char root[128], err[256];
    st_store_config_t cfg = { 0 };
    st_store_t *st;

    snprintf(root, sizeof(root), "%s/%s", F.dir, name);
    cfg.root_dir = root;
    cfg.commitlog_file_size = SEG_SIZE;
    cfg.cq_entries_per_file = 1000;
    cfg.flush_type = ST_ASYNC_FLUSH;
    cfg.flush_interval_ms = 50;
    cfg.max_message_size = 4 * 1024;
    cfg.disk_max_used_ratio = 99;
    cfg.disk_full_ratio = 100;
    cfg.store_host_ip = 0x7f000001;
    cfg.store_host_port = 10911;
    cfg.read_only_role = read_only;
    st = st_store_open(&cfg, err, sizeof(err));
    ck_assert_msg(st != NULL, "open %s: %s", name, err);
    ck_assert_int_eq(st_store_start(st, F.base, F.poster), RMQ_OK);
    return st;
}

static void on_poll(evutil_socket_t fd, short what, void *arg) {}

static void setup(void)
{
    struct timeval tv = { 0, 5000 };

    memset(&F, 0, sizeof(F));
    snprintf(F.dir, sizeof(F.dir), "/tmp/test_ha.XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(F.dir));
    F.base = event_base_new();
    F.poster = rmq_loop_poster_new(F.base);
    F.poll_ev = event_new(F.base, -1, EV_PERSIST, on_poll, NULL);
    event_add(F.poll_ev, &tv);
    F.mst = open_store("master", 0);
    F.sst = open_store("slave", 1);
    F.mcfg = (ha_config_t){ .cluster_name = "DefaultCluster", .broker_name = "broker-a",
                            .broker_id = 0, .listen_host = "127.0.0.1", .listen_port = 0,
                            .transfer_batch_size = 16 * 1024, .heartbeat_interval_ms = 100,
                            .housekeeping_interval_ms = 1000, .reconnect_interval_ms = 100 };
    F.scfg = F.mcfg;
    F.scfg.broker_id = 1;
}

static int rm_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    return remove(path);
}

static void teardown(void)
{
    ha_slave_free(F.slave);
    ha_master_free(F.master);
    st_store_close(F.sst);
    st_store_close(F.mst);
    event_free(F.poll_ev);
    rmq_loop_poster_free(F.poster);
    event_base_free(F.base);
    nftw(F.dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* Runs the loop until pred() holds or timeout_ms passes; returns pred(). */
static int run_until(int (*pred)(void), int timeout_ms)
{
    int64_t end = rmq_mono_ms() + timeout_ms;

    while (!pred() && rmq_mono_ms() < end)
        event_base_loop(F.base, EVLOOP_ONCE);
    return pred();
}

static int never(void) { return 0; }

static void run_for(int ms)
{
    run_until(never, ms);
}

static void start_master(void)
{
    char err[256];

    F.master = ha_master_new(F.base, F.mst, &F.mcfg, err, sizeof(err));
    ck_assert_msg(F.master != NULL, "%s", err);
}

/* Starts the slave with metadata callback fn (NULL: none, as an older slave). */
static void start_slave_with(ha_meta_fn fn)
{
    char addr[64];

    snprintf(addr, sizeof(addr), "127.0.0.1:%d", ha_master_port(F.master));
    F.slave = ha_slave_new(F.base, F.sst, &F.scfg);
    ck_assert_ptr_nonnull(F.slave);
    if (fn)
        ha_slave_on_meta(F.slave, fn, NULL);
    ha_slave_set_master(F.slave, addr);
}

static void start_slave(void)
{
    start_slave_with(NULL);
}

/* Appends n messages of body_len bytes (byte seed) to st; returns the last end. */
static int64_t put_n(st_store_t *st, int n, size_t body_len, char seed)
{
    char *body = malloc(body_len);
    st_put_result_t res = { 0 };

    memset(body, seed, body_len);
    for (int i = 0; i < n; i++) {
        st_msg_t m = { .topic = TOPIC, .topic_len = strlen(TOPIC), .queue_id = i % N_QUEUES,
                       .born_timestamp = rmq_wall_ms(), .born_ip = 0x7f000001,
                       .born_port = 5555, .body = body, .body_len = body_len };

        st_store_put(st, &m, &res);
        ck_assert_msg(res.status == ST_PUT_OK, "put: %s", res.why ? res.why : "?");
        if (st == F.mst && F.master)
            ha_master_notify_append(F.master);
    }
    free(body);
    return res.end_offset;
}

static int64_t max_of(st_store_t *st)
{
    st_store_stats_t s;

    st_store_stats(st, &s);
    return s.commitlog_max_offset;
}

static int64_t min_of(st_store_t *st)
{
    st_store_stats_t s;

    st_store_stats(st, &s);
    return s.commitlog_min_offset;
}

static ha_slave_state_t slave_state(void)
{
    ha_slave_state_t s;

    ha_slave_state(F.slave, &s);
    return s;
}

/* The slave holds the master's whole log and the master has seen its ack. */
static int caught_up(void)
{
    ha_slave_info_t info;

    return slave_state().connected && max_of(F.sst) == max_of(F.mst) &&
           slave_state().acked_offset == max_of(F.mst) && F.master &&
           ha_master_slaves(F.master, &info, 1) == 1 && info.acked_offset == max_of(F.mst);
}

static int slave_has_error(void)
{
    return slave_state().last_error[0] != '\0';
}

static int slave_connected(void)
{
    return slave_state().connected;
}

/* Copies st's whole commit log [min, max) into a new evbuffer. */
static struct evbuffer *read_log(st_store_t *st)
{
    struct evbuffer *buf = evbuffer_new();
    int64_t pos = min_of(st), end = max_of(st);

    while (pos < end) {
        int64_t n = st_store_read_raw(st, pos, (size_t)(end - pos), buf);

        ck_assert_int_gt(n, 0);
        pos += n;
    }
    return buf;
}

/* Both logs are byte-identical and the slave's queues match the master's. */
static void assert_replica_equal(void)
{
    struct evbuffer *a = read_log(F.mst), *b = read_log(F.sst);
    size_t len = evbuffer_get_length(a);

    ck_assert_int_eq(min_of(F.sst), min_of(F.mst));
    ck_assert_uint_eq(evbuffer_get_length(b), len);
    ck_assert(memcmp(evbuffer_pullup(a, -1), evbuffer_pullup(b, -1), len) == 0);
    for (int q = 0; q < N_QUEUES; q++)
        ck_assert_int_eq(st_store_max_offset(F.sst, TOPIC, q), st_store_max_offset(F.mst, TOPIC, q));
    evbuffer_free(a);
    evbuffer_free(b);
}

START_TEST(catch_up_from_empty)
{
    ha_slave_info_t info[2];

    put_n(F.mst, 500, 900, 'a');
    ck_assert_int_gt(max_of(F.mst), 3 * SEG_SIZE);
    start_master();
    start_slave();
    ck_assert(run_until(caught_up, 10000));
    assert_replica_equal();
    ck_assert_int_eq(st_store_max_offset(F.sst, TOPIC, 0), 125);
    ck_assert_uint_eq(ha_master_slaves(F.master, info, 2), 1);
    ck_assert_int_eq(info[0].broker_id, 1);
    ck_assert_int_eq(info[0].acked_offset, max_of(F.mst));
    ck_assert_int_eq(info[0].lag_bytes, 0);
    ck_assert(info[0].in_sync);
    ck_assert_int_gt(info[0].connected_since_ms, 0);
}
END_TEST

START_TEST(streaming_while_appending)
{
    start_master();
    start_slave();
    ck_assert(run_until(slave_connected, 5000));
    for (int round = 0; round < 30; round++) {
        put_n(F.mst, 15, 100 + (size_t)round * 37, (char)('a' + round % 26));
        run_for(5);
    }
    ck_assert_int_gt(max_of(F.mst), 2 * SEG_SIZE);
    ck_assert(run_until(caught_up, 10000));
    assert_replica_equal();
    ck_assert_int_eq(slave_state().connects, 1);
}
END_TEST

typedef struct waits {
    int done;
    int ok, timeout, other;
} waits_t;

static waits_t W;

static void on_sync(ha_sync_status_t status, void *arg)
{
    W.done++;
    if (status == HA_SYNC_OK)
        W.ok++;
    else if (status == HA_SYNC_FLUSH_SLAVE_TIMEOUT)
        W.timeout++;
    else
        W.other++;
}

static int all_done_50(void) { return W.done == 50; }
static int one_done(void) { return W.done >= 1; }

START_TEST(sync_released_by_acks)
{
    ha_sync_t *sync;

    memset(&W, 0, sizeof(W));
    start_master();
    start_slave();
    ck_assert(run_until(slave_connected, 5000));
    sync = ha_master_sync(F.master);
    for (int i = 0; i < 50; i++) {
        int64_t end = put_n(F.mst, 1, 500, 's');

        ck_assert_int_eq(ha_sync_wait(sync, end, rmq_mono_ms() + 5000, on_sync, NULL),
                         HA_SYNC_PENDING);
    }
    ck_assert_uint_eq(ha_sync_pending(sync), 50);
    ck_assert(run_until(all_done_50, 5000));
    ck_assert_int_eq(W.ok, 50);
    ck_assert_uint_eq(ha_sync_pending(sync), 0);
    ck_assert_int_eq(ha_sync_wait(sync, max_of(F.mst), rmq_mono_ms() + 5000, on_sync, NULL),
                     HA_SYNC_OK);
}
END_TEST

START_TEST(sync_slave_not_available)
{
    int64_t end;

    memset(&W, 0, sizeof(W));
    start_master();
    end = put_n(F.mst, 3, 100, 'n');
    ck_assert_int_eq(ha_sync_wait(ha_master_sync(F.master), end, rmq_mono_ms() + 5000, on_sync,
                                  NULL), HA_SYNC_SLAVE_NOT_AVAILABLE);
    ck_assert_int_eq(W.done, 0);
}
END_TEST

/* A slave that handshakes and then freezes: reads nothing, acks nothing. */
typedef struct frozen {
    struct bufferevent *bev;
    int answered;
    int accepted;
} frozen_t;

static frozen_t Z;

static void frozen_on_read(struct bufferevent *bev, void *arg)
{
    struct evbuffer *in = bufferevent_get_input(bev);
    uint8_t hdr[HA_FRAME_HDR];
    uint32_t n;
    Rmq__HaHandshakeResponse *r;

    if (evbuffer_copyout(in, hdr, 4) < 4 || ha_frame_parse(hdr, 4, &n) != RMQ_OK ||
        evbuffer_get_length(in) < 4 + n)
        return;
    ck_assert_int_eq(ha_response_unpack(evbuffer_pullup(in, 4 + n) + 4, n, &r), RMQ_OK);
    Z.accepted = r->accepted;
    Z.answered = 1;
    rmq__ha_handshake_response__free_unpacked(r, NULL);
    bufferevent_disable(bev, EV_READ);
}

static int frozen_answered(void) { return Z.answered; }

static void start_frozen_slave(int64_t max_offset)
{
    Rmq__HaHandshake hs = RMQ__HA_HANDSHAKE__INIT;
    struct sockaddr_in sin = { .sin_family = AF_INET };

    memset(&Z, 0, sizeof(Z));
    sin.sin_addr.s_addr = htonl(0x7f000001);
    sin.sin_port = htons((uint16_t)ha_master_port(F.master));
    Z.bev = bufferevent_socket_new(F.base, -1, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(Z.bev, frozen_on_read, NULL, NULL, NULL);
    bufferevent_enable(Z.bev, EV_READ | EV_WRITE);
    ck_assert_int_eq(bufferevent_socket_connect(Z.bev, (struct sockaddr *)&sin, sizeof(sin)), 0);
    hs.cluster_name = "DefaultCluster";
    hs.broker_name = "broker-a";
    hs.broker_id = 1;
    hs.max_offset = max_offset;
    ck_assert_int_eq(ha_frame_add(bufferevent_get_output(Z.bev), &hs.base), RMQ_OK);
}

START_TEST(sync_timeout_frozen_slave)
{
    int64_t end, t0;

    memset(&W, 0, sizeof(W));
    F.mcfg.housekeeping_interval_ms = 5000;
    start_master();
    start_frozen_slave(0);
    ck_assert(run_until(frozen_answered, 5000));
    ck_assert(Z.accepted);
    end = put_n(F.mst, 5, 200, 'f');
    t0 = rmq_mono_ms();
    ck_assert_int_eq(ha_sync_wait(ha_master_sync(F.master), end, t0 + 300, on_sync, NULL),
                     HA_SYNC_PENDING);
    ck_assert(run_until(one_done, 5000));
    ck_assert_int_eq(W.timeout, 1);
    ck_assert_int_ge(rmq_mono_ms() - t0, 300);
    ck_assert_uint_eq(ha_sync_pending(ha_master_sync(F.master)), 0);
    bufferevent_free(Z.bev);
}
END_TEST

START_TEST(refuse_wrong_broker_name)
{
    ha_slave_info_t info;

    F.scfg.broker_name = "broker-b";
    put_n(F.mst, 5, 100, 'w');
    start_master();
    start_slave();
    ck_assert(run_until(slave_has_error, 5000));
    ck_assert_msg(strstr(slave_state().last_error, "refused") &&
                  strstr(slave_state().last_error, "belongs to DefaultCluster/broker-b"),
                  "%s", slave_state().last_error);
    ck_assert(!slave_state().connected);
    ck_assert_uint_eq(ha_master_slaves(F.master, &info, 1), 0);
    ck_assert_int_eq(max_of(F.sst), 0);
}
END_TEST

START_TEST(refuse_slave_ahead)
{
    st_store_close(F.sst);
    F.sst = open_store("slave-rw", 0);
    put_n(F.sst, 20, 300, 'x');
    put_n(F.mst, 5, 300, 'x');
    start_master();
    start_slave();
    ck_assert(run_until(slave_has_error, 5000));
    ck_assert_msg(strstr(slave_state().last_error, "ahead of the master"), "%s",
                  slave_state().last_error);
    ck_assert(!slave_state().connected);
}
END_TEST

START_TEST(refuse_diverged_slave)
{
    st_store_close(F.sst);
    F.sst = open_store("slave-rw", 0);
    put_n(F.sst, 5, 300, 'y');
    put_n(F.mst, 10, 300, 'z');
    start_master();
    start_slave();
    ck_assert(run_until(slave_has_error, 5000));
    ck_assert_msg(strstr(slave_state().last_error, "diverged"), "%s", slave_state().last_error);
    ck_assert(!slave_state().connected);
}
END_TEST

START_TEST(resume_from_slave_offset)
{
    put_n(F.mst, 40, 700, 'r');
    start_master();
    start_slave();
    ck_assert(run_until(caught_up, 5000));
    ha_slave_free(F.slave);
    F.slave = NULL;
    put_n(F.mst, 40, 700, 's');
    start_slave();
    ck_assert(run_until(caught_up, 5000));
    assert_replica_equal();
}
END_TEST

static int slave_disconnected(void)
{
    return !slave_state().connected && slave_has_error();
}

static int connected_twice(void)
{
    return slave_state().connects == 2 && caught_up();
}

START_TEST(reconnect_after_master_drop)
{
    int port;

    put_n(F.mst, 30, 500, 'p');
    start_master();
    start_slave();
    ck_assert(run_until(caught_up, 5000));
    port = ha_master_port(F.master);
    ha_master_free(F.master);
    F.master = NULL;
    ck_assert(run_until(slave_disconnected, 5000));
    put_n(F.mst, 30, 500, 'q');
    F.mcfg.listen_port = port;
    start_master();
    ck_assert(run_until(connected_twice, 5000));
    assert_replica_equal();
}
END_TEST

START_TEST(heartbeat_keeps_idle_link)
{
    ha_slave_info_t info;

    F.mcfg.heartbeat_interval_ms = F.scfg.heartbeat_interval_ms = 50;
    F.mcfg.housekeeping_interval_ms = F.scfg.housekeeping_interval_ms = 300;
    put_n(F.mst, 5, 100, 'h');
    start_master();
    start_slave();
    ck_assert(run_until(caught_up, 5000));
    run_for(1500);
    ck_assert(slave_state().connected);
    ck_assert_int_eq(slave_state().connects, 1);
    ck_assert_str_eq(slave_state().last_error, "");
    ck_assert_uint_eq(ha_master_slaves(F.master, &info, 1), 1);
}
END_TEST

/* A master that accepts the handshake and then never sends anything. */
typedef struct mute {
    struct evconnlistener *lev;
    struct bufferevent *bevs[8];
    int n;
} mute_t;

static mute_t M;

static void mute_on_read(struct bufferevent *bev, void *arg)
{
    Rmq__HaHandshakeResponse resp = RMQ__HA_HANDSHAKE_RESPONSE__INIT;
    struct evbuffer *in = bufferevent_get_input(bev);

    if (evbuffer_get_length(in) == 0 || arg)
        return;
    evbuffer_drain(in, evbuffer_get_length(in));
    resp.accepted = 1;
    ha_frame_add(bufferevent_get_output(bev), &resp.base);
    bufferevent_setcb(bev, mute_on_read, NULL, NULL, bev);
}

static void mute_on_accept(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
                           int len, void *arg)
{
    struct bufferevent *bev = bufferevent_socket_new(F.base, fd, BEV_OPT_CLOSE_ON_FREE);

    ck_assert_int_lt(M.n, 8);
    M.bevs[M.n++] = bev;
    bufferevent_setcb(bev, mute_on_read, NULL, NULL, NULL);
    bufferevent_enable(bev, EV_READ);
}

static int reconnected_after_silence(void)
{
    return slave_state().connects >= 2;
}

START_TEST(silent_master_dropped)
{
    struct sockaddr_in sin = { .sin_family = AF_INET };
    socklen_t len = sizeof(sin);
    char addr[64];

    memset(&M, 0, sizeof(M));
    sin.sin_addr.s_addr = htonl(0x7f000001);
    M.lev = evconnlistener_new_bind(F.base, mute_on_accept, NULL, LEV_OPT_CLOSE_ON_FREE, 8,
                                    (struct sockaddr *)&sin, sizeof(sin));
    ck_assert_ptr_nonnull(M.lev);
    getsockname(evconnlistener_get_fd(M.lev), (struct sockaddr *)&sin, &len);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(sin.sin_port));
    F.scfg.housekeeping_interval_ms = 300;
    F.slave = ha_slave_new(F.base, F.sst, &F.scfg);
    ha_slave_set_master(F.slave, addr);
    ck_assert(run_until(slave_connected, 5000));
    ck_assert(run_until(slave_has_error, 5000));
    ck_assert_msg(strstr(slave_state().last_error, "silent"), "%s", slave_state().last_error);
    ck_assert(run_until(reconnected_after_silence, 5000));
    ha_slave_free(F.slave);
    F.slave = NULL;
    for (int i = 0; i < M.n; i++)
        bufferevent_free(M.bevs[i]);
    evconnlistener_free(M.lev);
}
END_TEST

START_TEST(master_address_change)
{
    put_n(F.mst, 10, 300, 'c');
    start_master();
    F.slave = ha_slave_new(F.base, F.sst, &F.scfg);
    ha_slave_set_master(F.slave, "127.0.0.1:1");
    ck_assert(run_until(slave_has_error, 5000));
    ck_assert_msg(strstr(slave_state().last_error, "connect"), "%s", slave_state().last_error);
    ha_slave_free(F.slave);
    F.slave = NULL;
    start_slave();
    ck_assert(run_until(caught_up, 5000));
    ck_assert_str_eq(slave_state().last_error, "");
}
END_TEST

/* ---- pure codec ---- */

START_TEST(codec_chunk_and_ack)
{
    uint8_t buf[HA_CHUNK_HDR];
    ha_chunk_t c;
    int64_t off;

    ha_chunk_hdr_encode(buf, 0x0102030405060708LL, 300);
    ck_assert_int_eq(ha_chunk_parse(buf, 11, 1000, &c), RMQ_EAGAIN);
    ck_assert_int_eq(ha_chunk_parse(buf, 12, 1000, &c), RMQ_OK);
    ck_assert_int_eq(c.offset, 0x0102030405060708LL);
    ck_assert_uint_eq(c.len, 300);
    ck_assert_uint_eq(c.frame_len, 312);
    ck_assert_int_eq(ha_chunk_parse(buf, 12, 299, &c), RMQ_EPROTO);
    memset(buf, 0xff, sizeof(buf));
    ck_assert_int_eq(ha_chunk_parse(buf, 12, UINT32_MAX, &c), RMQ_EPROTO);
    ha_chunk_hdr_encode(buf, INT64_MAX - 5, 10);
    ck_assert_int_eq(ha_chunk_parse(buf, 12, 1000, &c), RMQ_EPROTO);
    ha_ack_encode(buf, 12345);
    ck_assert_int_eq(ha_ack_parse(buf, 7, &off), RMQ_EAGAIN);
    ck_assert_int_eq(ha_ack_parse(buf, 8, &off), RMQ_OK);
    ck_assert_int_eq(off, 12345);
    ha_ack_encode(buf, -1);
    ck_assert_int_eq(ha_ack_parse(buf, 8, &off), RMQ_EPROTO);
}
END_TEST

START_TEST(confirm_file_text)
{
    static const char *const bad[] = { "", "12", "\n", "-1\n", "+1\n", " 1\n", "1 \n", "1\n\n",
                                       "0x10\n", "01\n", "12a\n", "9223372036854775808\n",
                                       "00000000000000000001\n" };
    char text[HA_CONFIRM_TEXT_MAX], why[128];
    int64_t v = 7;

    ck_assert_uint_eq(ha_confirm_format(text, 0), 2);
    ck_assert_int_eq(ha_confirm_parse(text, 2, &v, why, sizeof why), RMQ_OK);
    ck_assert_int_eq(v, 0);
    ck_assert_uint_eq(ha_confirm_format(text, INT64_MAX), 20);
    ck_assert_int_eq(ha_confirm_parse(text, 20, &v, why, sizeof why), RMQ_OK);
    ck_assert_int_eq(v, INT64_MAX);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        why[0] = '\0';
        ck_assert_msg(ha_confirm_parse(bad[i], strlen(bad[i]), &v, why, sizeof why) == RMQ_ECORRUPT, "%s", bad[i]);
        ck_assert_int_ne(why[0], '\0');
        ck_assert_int_eq(v, INT64_MAX);
    }
    /* a NUL inside, as a torn write leaves one */
    ck_assert_int_eq(ha_confirm_parse("12\0" "4\n", 5, &v, why, sizeof why), RMQ_ECORRUPT);
    ck_assert_str_eq(why, "byte 2 is not a decimal digit");
}
END_TEST

START_TEST(codec_typed_records)
{
    uint8_t buf[HA_CHUNK_HDR], body[64];
    Rmq__HaMeta meta = RMQ__HA_META__INIT, *out;
    Rmq__TopicConfig tc = RMQ__TOPIC_CONFIG__INIT;
    ha_chunk_t c;
    size_t n;

    ha_record_hdr_encode(buf, 4096, HA_REC_META, 20);
    ck_assert_int_eq(ha_chunk_parse(buf, 12, 10, &c), RMQ_OK);   /* max_body is for log bytes */
    ck_assert_int_eq(c.offset, 4096);
    ck_assert_uint_eq(c.type, HA_REC_META);
    ck_assert_uint_eq(c.len, 20);
    ck_assert_uint_eq(c.frame_len, 32);
    ha_record_hdr_encode(buf, 0, 9, 3);                           /* a type from a newer master */
    ck_assert_int_eq(ha_chunk_parse(buf, 12, 1000, &c), RMQ_OK);
    ck_assert_uint_eq(c.type, 9);
    ha_record_hdr_encode(buf, 0, HA_REC_META, HA_RECORD_MAX + 1);
    ck_assert_int_eq(ha_chunk_parse(buf, 12, UINT32_MAX, &c), RMQ_EPROTO);
    ha_chunk_hdr_encode(buf, 0, 0x80000010u);                     /* flag with type 0 */
    ck_assert_int_eq(ha_chunk_parse(buf, 12, UINT32_MAX, &c), RMQ_EPROTO);
    ha_record_hdr_encode(buf, 0, HA_REC_CONFIRM, HA_ACK_LEN);
    ck_assert_int_eq(ha_chunk_parse(buf, 12, 1000, &c), RMQ_OK);
    ck_assert_uint_eq(c.type, HA_REC_CONFIRM);
    ha_record_hdr_encode(buf, 0, HA_REC_CONFIRM, 4);              /* a confirm offset is 8 bytes */
    ck_assert_int_eq(ha_chunk_parse(buf, 12, 1000, &c), RMQ_EPROTO);
    ha_record_hdr_encode(buf, 0, HA_REC_CONFIRM, 12);
    ck_assert_int_eq(ha_chunk_parse(buf, 12, 1000, &c), RMQ_EPROTO);
    ha_chunk_hdr_encode(buf, 8, 100);
    ck_assert_int_eq(ha_chunk_parse(buf, 12, 1000, &c), RMQ_OK);
    ck_assert_uint_eq(c.type, HA_REC_LOG);

    tc.topic_name = (char *)"TopicA";
    meta.change_case = RMQ__HA_META__CHANGE_TOPIC;
    meta.topic = &tc;
    n = rmq__ha_meta__pack(&meta, body);
    ck_assert_int_eq(ha_meta_unpack(body, n, &out), RMQ_OK);
    ck_assert_str_eq(out->topic->topic_name, "TopicA");
    rmq__ha_meta__free_unpacked(out, NULL);
    tc.topic_name = (char *)"";
    n = rmq__ha_meta__pack(&meta, body);
    ck_assert_int_eq(ha_meta_unpack(body, n, &out), RMQ_EPROTO);
    ck_assert_ptr_null(out);
    meta.change_case = RMQ__HA_META__CHANGE__NOT_SET;             /* a change this build lacks */
    n = rmq__ha_meta__pack(&meta, body);
    ck_assert_int_eq(ha_meta_unpack(body, n, &out), RMQ_EPROTO);
    memset(body, 0xff, sizeof(body));
    ck_assert_int_eq(ha_meta_unpack(body, sizeof(body), &out), RMQ_EPROTO);
}
END_TEST

START_TEST(codec_handshake_frames)
{
    Rmq__HaHandshake hs = RMQ__HA_HANDSHAKE__INIT, *out;
    struct evbuffer *buf = evbuffer_new();
    uint8_t big[4] = { 0, 1, 0, 1 }, zero[4] = { 0 };
    uint32_t n;
    uint8_t *p;

    ck_assert_int_eq(ha_frame_parse(big, 3, &n), RMQ_EAGAIN);
    ck_assert_int_eq(ha_frame_parse(big, 4, &n), RMQ_EPROTO);
    ck_assert_int_eq(ha_frame_parse(zero, 4, &n), RMQ_EPROTO);
    hs.cluster_name = "c";
    hs.broker_name = "b";
    hs.broker_id = 2;
    hs.max_offset = 100;
    hs.tail_offset = 50;
    hs.tail_len = 50;
    ck_assert_int_eq(ha_frame_add(buf, &hs.base), RMQ_OK);
    p = evbuffer_pullup(buf, -1);
    ck_assert_int_eq(ha_frame_parse(p, evbuffer_get_length(buf), &n), RMQ_OK);
    ck_assert_uint_eq(n + 4, evbuffer_get_length(buf));
    ck_assert_int_eq(ha_handshake_unpack(p + 4, n, &out), RMQ_OK);
    ck_assert_str_eq(out->broker_name, "b");
    ck_assert_int_eq(out->max_offset, 100);
    rmq__ha_handshake__free_unpacked(out, NULL);
    evbuffer_drain(buf, evbuffer_get_length(buf));
    hs.tail_len = 51;                               /* tail past the end */
    ck_assert_int_eq(ha_frame_add(buf, &hs.base), RMQ_OK);
    p = evbuffer_pullup(buf, -1);
    ck_assert_int_eq(ha_handshake_unpack(p + 4, evbuffer_get_length(buf) - 4, &out), RMQ_EPROTO);
    ck_assert_ptr_null(out);
    evbuffer_drain(buf, evbuffer_get_length(buf));
    hs.tail_len = 0;
    hs.broker_name = "";                            /* missing name */
    ck_assert_int_eq(ha_frame_add(buf, &hs.base), RMQ_OK);
    p = evbuffer_pullup(buf, -1);
    ck_assert_int_eq(ha_handshake_unpack(p + 4, evbuffer_get_length(buf) - 4, &out), RMQ_EPROTO);
    ck_assert_int_eq(ha_handshake_unpack((const uint8_t *)"\xff\xff\xff", 3, &out), RMQ_EPROTO);
    evbuffer_free(buf);
}
END_TEST

/* Packs r and runs it through ha_response_unpack; returns the result. */
static rmq_err_t response_roundtrip(const Rmq__HaHandshakeResponse *r)
{
    struct evbuffer *buf = evbuffer_new();
    Rmq__HaHandshakeResponse *out;
    rmq_err_t rc;

    ck_assert_int_eq(ha_frame_add(buf, &r->base), RMQ_OK);
    rc = ha_response_unpack(evbuffer_pullup(buf, -1) + 4, evbuffer_get_length(buf) - 4, &out);
    if (rc == RMQ_OK)
        rmq__ha_handshake_response__free_unpacked(out, NULL);
    else
        ck_assert_ptr_null(out);
    evbuffer_free(buf);
    return rc;
}

START_TEST(codec_epoch_answer)
{
    Rmq__HaHandshakeResponse r = RMQ__HA_HANDSHAKE_RESPONSE__INIT;
    Rmq__HaEpoch e[3], *ptrs[3] = { &e[0], &e[1], &e[2] };

    for (int i = 0; i < 3; i++) {
        rmq__ha_epoch__init(&e[i]);
        e[i].epoch = i + 1;
        e[i].start_offset = 100 * i;
    }
    r.accepted = 1;
    r.epoch_answer = 1;
    r.master_max_offset = 300;
    r.n_epochs = 3;
    r.epochs = ptrs;
    ck_assert_int_eq(response_roundtrip(&r), RMQ_OK);
    e[2].start_offset = 301;                        /* starts past the master's log end */
    ck_assert_int_eq(response_roundtrip(&r), RMQ_EPROTO);
    e[2].start_offset = 50;                         /* start offsets going back */
    ck_assert_int_eq(response_roundtrip(&r), RMQ_EPROTO);
    e[2].start_offset = 200;
    e[2].epoch = 2;                                 /* epochs not ascending */
    ck_assert_int_eq(response_roundtrip(&r), RMQ_EPROTO);
    e[2].epoch = 3;
    r.epoch_answer = 0;                             /* epochs outside an answer */
    ck_assert_int_eq(response_roundtrip(&r), RMQ_EPROTO);
    r.n_epochs = 0;
    ck_assert_int_eq(response_roundtrip(&r), RMQ_OK);
}
END_TEST

/* ---- waiter heap with a fake ack source ---- */

typedef struct rel {
    int64_t order[1000];
    int n;
    int statuses[8];
} rel_t;

static rel_t R;

static void on_rel(ha_sync_status_t status, void *arg)
{
    R.order[R.n++] = (int64_t)(intptr_t)arg;
    R.statuses[status]++;
}

START_TEST(sync_heap_one_ack_frees_many)
{
    struct event_base *base = event_base_new();
    ha_sync_t *sync = ha_sync_new(base, 1000000);
    int64_t far = rmq_mono_ms() + 60000;

    memset(&R, 0, sizeof(R));
    ck_assert_int_eq(ha_sync_wait(sync, 10, far, on_rel, NULL), HA_SYNC_SLAVE_NOT_AVAILABLE);
    ha_sync_update(sync, 1, 0);
    ck_assert_int_eq(ha_sync_wait(sync, 0, far, on_rel, NULL), HA_SYNC_OK);
    ck_assert_int_eq(ha_sync_wait(sync, 1000001, far, on_rel, NULL),
                     HA_SYNC_SLAVE_NOT_AVAILABLE);
    for (int i = 0; i < 1000; i++) {
        int64_t end = 1 + (i * 7919) % 1000;    /* a permutation of 1..1000 */

        ck_assert_int_eq(ha_sync_wait(sync, end, far, on_rel, (void *)(intptr_t)end),
                         HA_SYNC_PENDING);
    }
    ha_sync_update(sync, 1, 499);
    ck_assert_int_eq(R.n, 499);
    ha_sync_update(sync, 0, -1);                /* slave gone: waiters keep waiting */
    ck_assert_int_eq(R.n, 499);
    ck_assert_uint_eq(ha_sync_pending(sync), 501);
    ha_sync_update(sync, 1, 1000);
    ck_assert_int_eq(R.n, 1000);
    for (int i = 0; i < 1000; i++)
        ck_assert_int_eq(R.order[i], i + 1);
    ck_assert_int_eq(R.statuses[HA_SYNC_OK], 1000);
    ha_sync_free(sync);
    event_base_free(base);
}
END_TEST

START_TEST(sync_heap_deadlines_and_shutdown)
{
    struct event_base *base = event_base_new();
    ha_sync_t *sync = ha_sync_new(base, 1000000);
    int64_t now = rmq_mono_ms();

    memset(&R, 0, sizeof(R));
    ha_sync_update(sync, 1, 0);
    ha_sync_wait(sync, 30, now + 150, on_rel, (void *)(intptr_t)3);
    ha_sync_wait(sync, 10, now + 50, on_rel, (void *)(intptr_t)1);
    ha_sync_wait(sync, 20, now + 100, on_rel, (void *)(intptr_t)2);
    ha_sync_wait(sync, 40, now + 60000, on_rel, (void *)(intptr_t)4);
    ha_sync_update(sync, 1, 10);                /* frees 1 */
    ck_assert_int_eq(R.n, 1);
    while (R.n < 3)
        event_base_loop(base, EVLOOP_ONCE);
    ck_assert_int_ge(rmq_mono_ms() - now, 150);
    ck_assert_int_eq(R.order[1], 2);
    ck_assert_int_eq(R.order[2], 3);
    ck_assert_int_eq(R.statuses[HA_SYNC_FLUSH_SLAVE_TIMEOUT], 2);
    ha_sync_free(sync);                         /* 4 answered SHUTDOWN */
    ck_assert_int_eq(R.n, 4);
    ck_assert_int_eq(R.statuses[HA_SYNC_SHUTDOWN], 1);
    event_base_free(base);
}
END_TEST

/* ---- metadata records ---- */

#define META_MAX 8

static struct {
    int n;
    char name[META_MAX][32];
    int64_t at[META_MAX];            /* slave log end when each arrived */
} MR;

static int on_meta(const Rmq__HaMeta *meta, void *arg, char *why, size_t whylen)
{
    if (MR.n < META_MAX) {
        snprintf(MR.name[MR.n], sizeof(MR.name[0]), "%s",
                 meta->change_case == RMQ__HA_META__CHANGE_TOPIC ? meta->topic->topic_name
                                                                 : meta->deleted_topic);
        MR.at[MR.n] = max_of(F.sst);
    }
    MR.n++;
    return 0;
}

/* Pushes a topic change (deleted: a delete) and returns the log end it belongs at. */
static int64_t push_topic(const char *name, int deleted)
{
    Rmq__HaMeta meta = RMQ__HA_META__INIT;
    Rmq__TopicConfig tc = RMQ__TOPIC_CONFIG__INIT;

    if (deleted) {
        meta.change_case = RMQ__HA_META__CHANGE_DELETED_TOPIC;
        meta.deleted_topic = (char *)name;
    } else {
        tc.topic_name = (char *)name;
        meta.change_case = RMQ__HA_META__CHANGE_TOPIC;
        meta.topic = &tc;
    }
    ck_assert_int_eq(ha_master_push_meta(F.master, &meta), RMQ_OK);
    return max_of(F.mst);
}

static int three_metas(void)
{
    return MR.n == 3 && caught_up();
}

START_TEST(meta_in_log_order)
{
    int64_t at[3];

    memset(&MR, 0, sizeof(MR));
    start_master();
    put_n(F.mst, 200, 900, 'a');
    at[0] = push_topic("TopicB", 0);
    put_n(F.mst, 100, 900, 'b');
    at[1] = push_topic("TopicB", 1);
    put_n(F.mst, 10, 900, 'c');
    start_slave_with(on_meta);       /* the kept changes replay from its start */
    ck_assert(run_until(caught_up, 10000));
    at[2] = push_topic("TopicC", 0);    /* while streaming */
    put_n(F.mst, 50, 900, 'd');
    ck_assert(run_until(three_metas, 10000));
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(MR.at[i], at[i]);
    ck_assert_str_eq(MR.name[0], "TopicB");
    ck_assert_str_eq(MR.name[2], "TopicC");
    assert_replica_equal();
}
END_TEST

START_TEST(meta_not_to_old_slave)
{
    memset(&MR, 0, sizeof(MR));
    start_master();
    start_slave();                   /* no metadata callback: an older slave */
    ck_assert(run_until(slave_connected, 5000));
    push_topic("TopicB", 0);
    put_n(F.mst, 20, 500, 'a');
    ck_assert(run_until(caught_up, 10000));
    run_for(300);
    ck_assert_str_eq(slave_state().last_error, "");
    ck_assert_int_eq(slave_state().connects, 1);
    assert_replica_equal();
}
END_TEST

static int all_kept_metas(void)
{
    return MR.n >= HA_META_KEEP && slave_connected();
}

START_TEST(meta_history_bounded)
{
    char name[32];

    memset(&MR, 0, sizeof(MR));
    start_master();
    for (int i = 0; i < HA_META_KEEP + 76; i++) {
        snprintf(name, sizeof(name), "T%d", i);
        push_topic(name, 0);
    }
    start_slave_with(on_meta);       /* gets the newest HA_META_KEEP, oldest first */
    ck_assert(run_until(all_kept_metas, 10000));
    run_for(200);
    ck_assert_int_eq(MR.n, HA_META_KEEP);
    ck_assert_str_eq(MR.name[0], "T76");
    ck_assert_str_eq(MR.name[1], "T77");
}
END_TEST

/* A fake master that accepts any handshake from an empty slave and then
 * sends a typed record of type 9 (a newer master's) and a log chunk. */
typedef struct fake_master {
    struct evconnlistener *lev;
    struct bufferevent *bev;
} fake_master_t;

static void fake_on_read(struct bufferevent *bev, void *arg)
{
    struct evbuffer *in = bufferevent_get_input(bev);
    Rmq__HaHandshakeResponse resp = RMQ__HA_HANDSHAKE_RESPONSE__INIT;
    uint8_t hdr[HA_CHUNK_HDR];
    uint32_t n;

    if (evbuffer_get_length(in) < HA_FRAME_HDR ||
        ha_frame_parse(evbuffer_pullup(in, HA_FRAME_HDR), HA_FRAME_HDR, &n) != RMQ_OK ||
        evbuffer_get_length(in) < HA_FRAME_HDR + n)
        return;
    evbuffer_drain(in, HA_FRAME_HDR + n);
    resp.accepted = 1;
    ck_assert_int_eq(ha_frame_add(bufferevent_get_output(bev), &resp.base), RMQ_OK);
    ha_record_hdr_encode(hdr, 0, 9, 4);
    bufferevent_write(bev, hdr, sizeof(hdr));
    bufferevent_write(bev, "abcd", 4);
    ha_chunk_hdr_encode(hdr, 0, 4);
    bufferevent_write(bev, hdr, sizeof(hdr));
    bufferevent_write(bev, "efgh", 4);
}

static void fake_on_accept(struct evconnlistener *lev, evutil_socket_t fd, struct sockaddr *sa,
                           int salen, void *arg)
{
    fake_master_t *fm = arg;

    if (fm->bev)
        bufferevent_free(fm->bev);
    fm->bev = bufferevent_socket_new(F.base, fd, BEV_OPT_CLOSE_ON_FREE);
    bufferevent_setcb(fm->bev, fake_on_read, NULL, NULL, fm);
    bufferevent_enable(fm->bev, EV_READ | EV_WRITE);
}

START_TEST(meta_unknown_type_refused)
{
    fake_master_t fm = { 0 };
    struct sockaddr_in sin = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
    socklen_t len = sizeof(sin);
    char addr[64];

    memset(&MR, 0, sizeof(MR));
    fm.lev = evconnlistener_new_bind(F.base, fake_on_accept, &fm, LEV_OPT_CLOSE_ON_FREE | LEV_OPT_REUSEABLE,
                                     8, (struct sockaddr *)&sin, sizeof(sin));
    ck_assert_ptr_nonnull(fm.lev);
    getsockname(evconnlistener_get_fd(fm.lev), (struct sockaddr *)&sin, &len);
    snprintf(addr, sizeof(addr), "127.0.0.1:%d", ntohs(sin.sin_port));
    F.slave = ha_slave_new(F.base, F.sst, &F.scfg);
    ck_assert_ptr_nonnull(F.slave);
    ha_slave_on_meta(F.slave, on_meta, NULL);
    ha_slave_set_master(F.slave, addr);
    ck_assert(run_until(slave_has_error, 5000));
    ck_assert_msg(strstr(slave_state().last_error, "type 9") != NULL, "%s", slave_state().last_error);
    ck_assert_int_eq(max_of(F.sst), 0);          /* nothing after it was appended either */
    ck_assert_int_eq(MR.n, 0);
    ha_slave_free(F.slave);
    F.slave = NULL;
    if (fm.bev)
        bufferevent_free(fm.bev);
    evconnlistener_free(fm.lev);
}
END_TEST

static Suite *ha_suite(void)
{
    Suite *s = suite_create("ha");
    TCase *pure = tcase_create("pure");
    TCase *net = tcase_create("net");

    tcase_add_test(pure, codec_chunk_and_ack);
    tcase_add_test(pure, codec_handshake_frames);
    tcase_add_test(pure, codec_epoch_answer);
    tcase_add_test(pure, codec_typed_records);
    tcase_add_test(pure, confirm_file_text);
    tcase_add_test(pure, sync_heap_one_ack_frees_many);
    tcase_add_test(pure, sync_heap_deadlines_and_shutdown);
    suite_add_tcase(s, pure);
    tcase_add_checked_fixture(net, setup, teardown);
    tcase_set_timeout(net, 30);
    tcase_add_test(net, catch_up_from_empty);
    tcase_add_test(net, streaming_while_appending);
    tcase_add_test(net, sync_released_by_acks);
    tcase_add_test(net, sync_slave_not_available);
    tcase_add_test(net, sync_timeout_frozen_slave);
    tcase_add_test(net, refuse_wrong_broker_name);
    tcase_add_test(net, refuse_slave_ahead);
    tcase_add_test(net, refuse_diverged_slave);
    tcase_add_test(net, resume_from_slave_offset);
    tcase_add_test(net, reconnect_after_master_drop);
    tcase_add_test(net, heartbeat_keeps_idle_link);
    tcase_add_test(net, silent_master_dropped);
    tcase_add_test(net, master_address_change);
    tcase_add_test(net, meta_in_log_order);
    tcase_add_test(net, meta_not_to_old_slave);
    tcase_add_test(net, meta_unknown_type_refused);
    tcase_add_test(net, meta_history_bounded);
    suite_add_tcase(s, net);
    return s;
}

int main(void)
{
    SRunner *sr;
    int failed;

    rmq_loop_global_init();
    rmq_log_set_level(RMQ_LOG_WARN);
    sr = srunner_create(ha_suite());
    srunner_run_all(sr, CK_ENV);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
