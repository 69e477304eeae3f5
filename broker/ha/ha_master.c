/* ha_master.c: the master side of the HA channel. One listener; per slave a
 * connection that reads the handshake, then streams commit-log chunks read
 * with st_store_read_raw (references into the mapped files, moved into the
 * socket's output without a copy) and reads the slave's acks. Appends are
 * pushed at the end of the loop pass that made them (ha_master_notify_append);
 * each slave's output holds at most max_out_batches chunks, refilled as the
 * socket drains. One periodic tick sends heartbeats to idle slaves and drops
 * silent ones. Closed connections are freed on the next loop pass, never
 * inside their own callbacks.
 *
 * Metadata changes (ha_master_push_meta) are kept in a bounded history,
 * each with the log end at the time it happened; a slave that asked for
 * them gets each one as a typed record right after the log bytes before
 * it, so it applies them in order with the messages. A reconnecting slave
 * gets the kept ones from its start offset on. */
#include "ha_master.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/listener.h>

#include "ha_codec.h"
#include "ha_tail.h"
#include "rmq_log.h"
#include "rmq_rpc.h"
#include "rmq_time.h"
#include "rmq_tls_config.h"

#define HA_NAME_CAP 256

typedef enum ha_conn_state {
    CONN_HANDSHAKE = 0,              /* waiting for the slave's handshake */
    CONN_STREAMING,                  /* accepted: pushing chunks, reading acks */
    CONN_REFUSING,                   /* refusal queued; close once it is sent */
    CONN_CLOSED,                     /* on the zombie list, freed next pass */
} ha_conn_state_t;

typedef struct ha_conn {
    ha_master_t *master;
    struct bufferevent *bev;
    struct evbuffer *chunk;          /* scratch: the chunk being moved to output */
    ha_conn_state_t state;
    char addr[64];
    int64_t broker_id;
    int64_t next_send;               /* offset of the next byte to push */
    int64_t acked;                   /* slave's last reported end */
    int64_t connected_since_ms;
    int64_t last_read_ms;
    int64_t last_write_ms;
    int epochs_sent;                 /* answered this connection's epoch query */
    int meta;                        /* slave takes HA_REC_META records */
    int confirms;                    /* ... and HA_REC_CONFIRM ones */
    int64_t confirm_sent;            /* the last confirm offset sent it; -1: none */
    uint64_t meta_next;              /* seq of the next change to send it */
    struct ha_conn *prev, *next;
} ha_conn_t;

/* One metadata change: a packed HaMeta and the log end when it happened. */
typedef struct ha_meta_ev {
    int64_t offset;
    uint32_t len;
    uint8_t *body;
} ha_meta_ev_t;

struct ha_master {
    struct event_base *base;
    st_store_t *st;
    ha_config_t cfg;
    char cluster_name[HA_NAME_CAP];
    char broker_name[HA_NAME_CAP];
    struct evconnlistener *listener;
    int port;
    ha_conn_t *conns;                /* live connections */
    ha_conn_t *zombies;              /* closed, freed by reap_ev */
    struct event *push_ev;           /* made active by notify_append */
    struct event *reap_ev;
    struct event *tick_ev;
    ha_sync_t *sync;
    ha_meta_ev_t meta[HA_META_KEEP]; /* ring: seq s at meta[s % HA_META_KEEP] */
    uint64_t meta_seq;               /* seq of the next change */
    size_t meta_count;               /* kept: seqs [meta_seq - meta_count, meta_seq) */
    int64_t meta_dropped_at;         /* log offset of the newest dropped change; -1: none */
    void (*on_progress)(void *arg);  /* a slave's ack or link changed */
    void *progress_arg;
    int64_t confirm;                 /* controller mode: the confirm offset; -1: the log end, -2: none */
    int ack_need;                    /* distinct slaves whose acks release a waiter */
    int ack_all;                     /* every member of ack_set instead */
    int64_t ack_set[HA_ACK_SET_MAX];
    size_t n_ack_set;
};

static void conn_pump(ha_conn_t *conn);

static void list_unlink(ha_conn_t **head, ha_conn_t *conn)
{
    if (conn->prev)
        conn->prev->next = conn->next;
    else
        *head = conn->next;
    if (conn->next)
        conn->next->prev = conn->prev;
    conn->prev = conn->next = NULL;
}

static void list_push(ha_conn_t **head, ha_conn_t *conn)
{
    conn->prev = NULL;
    conn->next = *head;
    if (*head)
        (*head)->prev = conn;
    *head = conn;
}

/* The best ack of slave id among the streaming connections, or -1. */
static int64_t slave_acked(const ha_master_t *master, int64_t id)
{
    int64_t best = -1;

    for (const ha_conn_t *c = master->conns; c; c = c->next)
        if (c->state == CONN_STREAMING && c->broker_id == id && c->acked > best)
            best = c->acked;
    return best;
}

/* allAckInSyncStateSet: the lowest ack among the set's members (the
 * master's own id skipped); *n 0 while one of them does not stream. */
static int64_t acks_all_in_set(const ha_master_t *master, int *n)
{
    int64_t low = INT64_MAX;

    *n = 1;
    for (size_t i = 0; i < master->n_ack_set; i++) {
        if (master->ack_set[i] == master->cfg.broker_id)
            continue;
        int64_t a = slave_acked(master, master->ack_set[i]);
        if (a < 0) {
            *n = 0;
            return -1;
        }
        if (a < low)
            low = a;
    }
    return low;
}

/* need distinct slaves: the need-th highest of their best acks; *n the
 * slaves streaming, 0 while they are fewer than need. */
static int64_t acks_of_distinct(const ha_master_t *master, int *n)
{
    int64_t ids[HA_ACK_SET_MAX], acks[HA_ACK_SET_MAX];
    size_t k = 0;

    for (const ha_conn_t *c = master->conns; c; c = c->next) {
        size_t i = 0;
        if (c->state != CONN_STREAMING)
            continue;
        while (i < k && ids[i] != c->broker_id)
            i++;
        if (i == k && k < HA_ACK_SET_MAX) {
            ids[k] = c->broker_id;
            acks[k++] = c->acked;
        } else if (i < k && c->acked > acks[i]) {
            acks[i] = c->acked;
        }
    }
    *n = k >= (size_t)master->ack_need ? (int)k : 0;
    if (!*n)
        return -1;
    /* the need-th highest: partial selection sort (a handful of slaves) */
    for (size_t i = 0; i < (size_t)master->ack_need; i++)
        for (size_t j = i + 1; j < k; j++)
            if (acks[j] > acks[i]) {
                int64_t t = acks[i];
                acks[i] = acks[j];
                acks[j] = t;
            }
    return acks[master->ack_need - 1];
}

/* Tells the waiter set how far the acks the rule asks for reach. */
static void master_update_sync(ha_master_t *master)
{
    int n;
    int64_t best = master->ack_all ? acks_all_in_set(master, &n) : acks_of_distinct(master, &n);

    ha_sync_update(master->sync, n, best);
    if (master->on_progress)
        master->on_progress(master->progress_arg);
}

void ha_master_set_acks(ha_master_t *master, int need, int all_in_set, const int64_t *set, size_t n_set)
{
    master->ack_need = need < 1 ? 1 : need;
    master->ack_all = all_in_set;
    master->n_ack_set = n_set < HA_ACK_SET_MAX ? n_set : HA_ACK_SET_MAX;
    for (size_t i = 0; i < master->n_ack_set; i++)
        master->ack_set[i] = set[i];
    master_update_sync(master);
}

void ha_master_set_confirm(ha_master_t *master, int64_t confirm)
{
    if (master->confirm == confirm && confirm != -1)
        return;
    master->confirm = confirm;
    event_active(master->push_ev, EV_READ, 0);
}

void ha_master_on_progress(ha_master_t *master, void (*fn)(void *arg), void *arg)
{
    master->on_progress = fn;
    master->progress_arg = arg;
}

/* Closes conn now (socket freed, struct freed on the next pass). Safe inside
 * conn's own callbacks; callers must not touch conn->bev afterwards. */
static void conn_close(ha_conn_t *conn, const char *reason)
{
    ha_master_t *master = conn->master;
    int was_streaming = conn->state == CONN_STREAMING;

    if (conn->state == CONN_CLOSED)
        return;
    if (was_streaming)
        LOG_WARN("HA: slave %s (broker id %" PRId64 ") dropped at acked offset %" PRId64 ": %s",
                 conn->addr, conn->broker_id, conn->acked, reason);
    else
        LOG_INFO("HA: connection from %s closed: %s", conn->addr, reason);
    conn->state = CONN_CLOSED;
    bufferevent_free(conn->bev);
    conn->bev = NULL;
    list_unlink(&master->conns, conn);
    list_push(&master->zombies, conn);
    event_active(master->reap_ev, EV_READ, 0);
    if (was_streaming)
        master_update_sync(master);
}

static void conn_free(ha_conn_t *conn)
{
    if (conn->bev)
        bufferevent_free(conn->bev);
    evbuffer_free(conn->chunk);
    free(conn);
}

/* Frees the connections closed since the last pass. Loop thread. */
static void master_on_reap(evutil_socket_t fd, short what, void *arg)
{
    ha_master_t *master = arg;

    while (master->zombies) {
        ha_conn_t *conn = master->zombies;

        list_unlink(&master->zombies, conn);
        conn_free(conn);
    }
}

/* Queues a refusal, logs it, and closes once it has been written. */
static void conn_refuse(ha_conn_t *conn, const char *reason)
{
    Rmq__HaHandshakeResponse resp = RMQ__HA_HANDSHAKE_RESPONSE__INIT;

    LOG_WARN_RL("HA: refusing slave %s: %s", conn->addr, reason);
    resp.accepted = 0;
    resp.reason = (char *)reason;
    if (ha_frame_add(bufferevent_get_output(conn->bev), &resp.base) != RMQ_OK) {
        conn_close(conn, "out of memory answering a handshake");
        return;
    }
    conn->state = CONN_REFUSING;
    bufferevent_disable(conn->bev, EV_READ);
    bufferevent_setwatermark(conn->bev, EV_WRITE, 0, 0);
}

/* Checks names, ids and offsets of a handshake against this master. On
 * acceptance returns 1 with *start set; else 0 with the reason in why. */
static int master_check_handshake(ha_master_t *master, const Rmq__HaHandshake *hs,
                                  const st_store_stats_t *stats, int64_t *start, char *why,
                                  size_t whylen)
{
    uint32_t crc;

    if (strcmp(hs->cluster_name, master->cluster_name) != 0 ||
        strcmp(hs->broker_name, master->broker_name) != 0) {
        snprintf(why, whylen, "slave belongs to %s/%s, this master is %s/%s", hs->cluster_name,
                 hs->broker_name, master->cluster_name, master->broker_name);
        return 0;
    }
    if (hs->broker_id <= 0) {
        snprintf(why, whylen, "slave says broker id %" PRId64 "; slaves need an id > 0",
                 hs->broker_id);
        return 0;
    }
    if (hs->max_offset > stats->commitlog_max_offset) {
        snprintf(why, whylen, "slave log is ahead of the master (slave max offset %" PRId64
                 " > master max offset %" PRId64 "); wipe the slave store or check roles",
                 hs->max_offset, stats->commitlog_max_offset);
        return 0;
    }
    if (hs->max_offset == 0) {
        *start = stats->commitlog_min_offset;
        return 1;
    }
    if (hs->max_offset < stats->commitlog_min_offset) {
        snprintf(why, whylen, "slave log ends at %" PRId64 ", below the master's retained log "
                 "(min offset %" PRId64 "); wipe the slave store to copy the whole log",
                 hs->max_offset, stats->commitlog_min_offset);
        return 0;
    }
    if (hs->tail_len > 0 && hs->tail_offset >= stats->commitlog_min_offset) {
        rmq_err_t rc = ha_tail_crc(master->st, hs->tail_offset, hs->tail_len, &crc);

        if (rc != RMQ_OK || crc != hs->tail_crc) {
            snprintf(why, whylen, "slave log diverged from the master's: bytes [%" PRId64
                     ", %" PRId64 ") differ (%s); wipe the slave store",
                     hs->tail_offset, hs->tail_offset + (int64_t)hs->tail_len,
                     rc != RMQ_OK ? rmq_strerror(rc) : "checksum mismatch");
            return 0;
        }
    }
    *start = hs->max_offset;
    return 1;
}

/* Drops older connections of the same slave (it reconnected before we saw
 * the old link die). */
static void master_drop_duplicates(ha_master_t *master, ha_conn_t *keep)
{
    ha_conn_t *c = master->conns, *next;

    for (; c; c = next) {
        next = c->next;
        if (c != keep && c->state == CONN_STREAMING && c->broker_id == keep->broker_id)
            conn_close(c, "replaced by a newer connection of the same slave");
    }
}

/* The seq of the first kept change at or after log offset start. */
static uint64_t meta_first_at(const ha_master_t *master, int64_t start)
{
    uint64_t seq = master->meta_seq - master->meta_count;

    while (seq < master->meta_seq && master->meta[seq % HA_META_KEEP].offset < start)
        seq++;
    return seq;
}

/* The change conn is to get next, or NULL if it has them all (or takes none). */
static const ha_meta_ev_t *conn_meta_pending(const ha_conn_t *conn)
{
    const ha_master_t *master = conn->master;

    if (!conn->meta || conn->meta_next >= master->meta_seq)
        return NULL;
    return &master->meta[conn->meta_next % HA_META_KEEP];
}

/* Queues the typed record of ev to conn. 0, or -1 if conn was closed. */
static int conn_send_meta(ha_conn_t *conn, const ha_meta_ev_t *ev, struct evbuffer *out)
{
    uint8_t hdr[HA_CHUNK_HDR];

    ha_record_hdr_encode(hdr, conn->next_send, HA_REC_META, ev->len);
    if (evbuffer_add(out, hdr, sizeof(hdr)) != 0 || evbuffer_add(out, ev->body, ev->len) != 0) {
        conn_close(conn, "out of memory queueing a metadata record");
        return -1;
    }
    conn->meta_next++;
    conn->last_write_ms = rmq_mono_ms();
    return 0;
}

/* Answers an accepted handshake and starts streaming from start. */
static void conn_accept(ha_conn_t *conn, const Rmq__HaHandshake *hs,
                        const st_store_stats_t *stats, int64_t start)
{
    Rmq__HaHandshakeResponse resp = RMQ__HA_HANDSHAKE_RESPONSE__INIT;

    resp.accepted = 1;
    resp.start_offset = start;
    resp.master_max_offset = stats->commitlog_max_offset;
    resp.master_min_offset = stats->commitlog_min_offset;
    if (ha_frame_add(bufferevent_get_output(conn->bev), &resp.base) != RMQ_OK) {
        conn_close(conn, "out of memory answering a handshake");
        return;
    }
    conn->state = CONN_STREAMING;
    conn->broker_id = hs->broker_id;
    conn->next_send = start;
    conn->acked = start;
    conn->meta = hs->meta_version >= HA_REC_META;
    conn->confirms = hs->meta_version >= HA_REC_CONFIRM;
    conn->confirm_sent = -1;
    conn->meta_next = meta_first_at(conn->master, start);
    if (conn->meta && start <= conn->master->meta_dropped_at)
        LOG_WARN("HA: slave %s starts at offset %" PRId64 ", before the oldest metadata change kept "
                 "(%d); it gets the older ones from the periodic sync", conn->addr, start, HA_META_KEEP);
    conn->connected_since_ms = rmq_wall_ms();
    conn->last_write_ms = rmq_mono_ms();
    LOG_INFO("HA: slave %s (broker id %" PRId64 ") accepted, streaming from offset %" PRId64
             " (master min %" PRId64 ", max %" PRId64 ")", conn->addr, hs->broker_id, start,
             stats->commitlog_min_offset, stats->commitlog_max_offset);
    master_drop_duplicates(conn->master, conn);
    master_update_sync(conn->master);
    conn_pump(conn);
}

/* Answers a controller-mode slave's epoch query with this master's newest
 * HA_EPOCHS_MAX epochs; the connection then waits for the real handshake. */
static void conn_answer_epochs(ha_conn_t *conn, const st_store_stats_t *stats)
{
    Rmq__HaHandshakeResponse resp = RMQ__HA_HANDSHAKE_RESPONSE__INIT;
    const st_epoch_t *ef = conn->master->cfg.epochs;
    size_t n = st_epoch_count(ef), skip = n > HA_EPOCHS_MAX ? n - HA_EPOCHS_MAX : 0;
    const st_epoch_entry_t *e = st_epoch_entries(ef) + skip;
    Rmq__HaEpoch *items = calloc(n - skip + 1, sizeof(*items));
    Rmq__HaEpoch **ptrs = calloc(n - skip + 1, sizeof(*ptrs));

    if (!items || !ptrs) {
        conn_close(conn, "out of memory answering an epoch query");
        goto out;
    }
    for (size_t i = 0; i < n - skip; i++) {
        rmq__ha_epoch__init(&items[i]);
        items[i].epoch = e[i].epoch;
        items[i].start_offset = e[i].start_offset;
        ptrs[i] = &items[i];
    }
    resp.accepted = 1;
    resp.epoch_answer = 1;
    resp.n_epochs = n - skip;
    resp.epochs = ptrs;
    resp.master_max_offset = stats->commitlog_max_offset;
    resp.master_min_offset = stats->commitlog_min_offset;
    if (ha_frame_add(bufferevent_get_output(conn->bev), &resp.base) != RMQ_OK) {
        conn_close(conn, "out of memory answering an epoch query");
        goto out;
    }
    conn->epochs_sent = 1;
    LOG_INFO("HA: slave %s asked for the epochs: sent %zu (log ends at %" PRId64 ")", conn->addr,
             n - skip, stats->commitlog_max_offset);
out:
    free(items);
    free(ptrs);
}

/* Handles a handshake frame that passed the ACL: an epoch query (controller
 * mode, once per connection) or the real handshake. */
static void conn_on_handshake(ha_conn_t *conn, const Rmq__HaHandshake *hs, const st_store_stats_t *stats)
{
    int64_t start = 0;
    char why[1200];

    if (hs->epoch_query && !conn->master->cfg.epochs)
        conn_refuse(conn, "slave asks for epochs, but this master does not run in controller mode "
                          "(enableControllerMode=false)");
    else if (hs->epoch_query && conn->epochs_sent)
        conn_refuse(conn, "second epoch query on one connection");
    else if (hs->epoch_query)
        conn_answer_epochs(conn, stats);
    else if (master_check_handshake(conn->master, hs, stats, &start, why, sizeof(why)))
        conn_accept(conn, hs, stats, start);
    else
        conn_refuse(conn, why);
}

/* Reads the handshake frame if complete. Returns 0 if more bytes are needed
 * or the handshake was handled, -1 if the connection was closed. */
static int conn_read_handshake(ha_conn_t *conn, struct evbuffer *in)
{
    uint8_t hdr[HA_FRAME_HDR];
    uint32_t n;
    const uint8_t *body;
    Rmq__HaHandshake *hs;
    st_store_stats_t stats;
    char why[1200];
    rmq_err_t rc;

    if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ev_ssize_t)sizeof(hdr))
        return 0;
    if (ha_frame_parse(hdr, sizeof(hdr), &n) != RMQ_OK) {
        conn_close(conn, "bad handshake frame length");
        return -1;
    }
    if (evbuffer_get_length(in) < HA_FRAME_HDR + (size_t)n)
        return 0;
    body = evbuffer_pullup(in, HA_FRAME_HDR + n);
    rc = body ? ha_handshake_unpack(body + HA_FRAME_HDR, n, &hs) : RMQ_ENOMEM;
    evbuffer_drain(in, HA_FRAME_HDR + n);
    if (rc != RMQ_OK) {
        conn_close(conn, "malformed handshake");
        return -1;
    }
    st_store_stats(conn->master->st, &stats);
    if (conn->master->cfg.acl &&
        rmq_acl_check_ha(conn->master->cfg.acl, conn->addr, hs->access_key, hs->signature,
                         hs->cluster_name, hs->broker_name, hs->broker_id, hs->max_offset,
                         hs->auth_timestamp_ms, rmq_wall_ms(), why, sizeof(why)) != 0)
        conn_refuse(conn, why);
    else
        conn_on_handshake(conn, hs, &stats);
    rmq__ha_handshake__free_unpacked(hs, NULL);
    return conn->state == CONN_CLOSED ? -1 : 0;
}

/* Consumes every complete ack; returns -1 if the connection was closed. */
static int conn_read_acks(ha_conn_t *conn, struct evbuffer *in)
{
    uint8_t buf[HA_ACK_LEN];
    int64_t ack, before = conn->acked;
    char why[160];

    while (evbuffer_remove(in, buf, sizeof(buf)) == (int)sizeof(buf)) {
        if (ha_ack_parse(buf, sizeof(buf), &ack) != RMQ_OK || ack < conn->acked ||
            ack > conn->next_send) {
            snprintf(why, sizeof(why), "bad ack %" PRId64 " (previous %" PRId64
                     ", sent up to %" PRId64 ")", ack, conn->acked, conn->next_send);
            conn_close(conn, why);
            return -1;
        }
        conn->acked = ack;
    }
    if (conn->acked != before)
        master_update_sync(conn->master);
    return 0;
}

static void conn_on_read(struct bufferevent *bev, void *arg)
{
    ha_conn_t *conn = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    conn->last_read_ms = rmq_mono_ms();
    while (conn->state == CONN_HANDSHAKE && evbuffer_get_length(in) > 0) {
        size_t before = evbuffer_get_length(in);

        if (conn_read_handshake(conn, in) != 0)
            return;
        if (evbuffer_get_length(in) == before)
            break;                   /* a frame still incomplete */
    }
    if (conn->state == CONN_STREAMING)
        conn_read_acks(conn, in);
    else if (conn->state == CONN_REFUSING)
        evbuffer_drain(in, evbuffer_get_length(in));
}

static void conn_on_write(struct bufferevent *bev, void *arg)
{
    ha_conn_t *conn = arg;

    if (conn->state == CONN_REFUSING && evbuffer_get_length(bufferevent_get_output(bev)) == 0)
        conn_close(conn, "handshake refused");
    else if (conn->state == CONN_STREAMING)
        conn_pump(conn);
}

static void conn_on_event(struct bufferevent *bev, short what, void *arg)
{
    ha_conn_t *conn = arg;
    char why[160];

    char tls[256];

    if (what == BEV_EVENT_CONNECTED)       /* TLS handshake done */
        return;
    if (what & BEV_EVENT_EOF)
        snprintf(why, sizeof(why), "slave closed the connection");
    else if (rmq_tls_bev_error(bev, tls, sizeof(tls))[0])
        snprintf(why, sizeof(why), "TLS: %.150s", tls);
    else
        snprintf(why, sizeof(why), "socket error: %s",
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    conn_close(conn, why);
}

/* Queues the confirm offset for conn if it moved past what conn was told
 * (the log end, when the set is the master alone: what conn was sent).
 * 0, or -1 after closing conn. */
static int conn_send_confirm(ha_conn_t *conn, struct evbuffer *out)
{
    int64_t c = conn->master->confirm == -1 ? conn->next_send : conn->master->confirm;
    uint8_t hdr[HA_CHUNK_HDR], body[HA_ACK_LEN];

    if (!conn->confirms || conn->master->confirm == -2 || c <= conn->confirm_sent)
        return 0;
    ha_record_hdr_encode(hdr, conn->next_send, HA_REC_CONFIRM, sizeof body);
    ha_ack_encode(body, c);
    if (evbuffer_add(out, hdr, sizeof hdr) != 0 || evbuffer_add(out, body, sizeof body) != 0) {
        conn_close(conn, "out of memory queueing the confirm offset");
        return -1;
    }
    conn->confirm_sent = c;
    return 0;
}

/* Moves commit-log chunks, and the metadata changes between them, into
 * conn's output until it holds max_out_batches batches or the log has
 * nothing more. A change goes out once the log bytes before it have, and a
 * chunk never runs past the next change. Loop thread. */
static void conn_pump(ha_conn_t *conn)
{
    ha_master_t *master = conn->master;
    struct evbuffer *out = bufferevent_get_output(conn->bev);
    size_t limit = (size_t)master->cfg.max_out_batches * master->cfg.transfer_batch_size;
    uint8_t hdr[HA_CHUNK_HDR];
    char why[160];

    while (conn->state == CONN_STREAMING && evbuffer_get_length(out) < limit) {
        const ha_meta_ev_t *ev = conn_meta_pending(conn);
        size_t max = master->cfg.transfer_batch_size;

        if (ev && ev->offset <= conn->next_send) {
            if (conn_send_meta(conn, ev, out) != 0)
                return;
            continue;
        }
        if (ev && ev->offset - conn->next_send < (int64_t)max)
            max = (size_t)(ev->offset - conn->next_send);
        int64_t n = st_store_read_raw(master->st, conn->next_send, max, conn->chunk);

        if (n == 0)
            break;
        if (n < 0) {
            snprintf(why, sizeof(why), "cannot read the log at offset %" PRId64 ": %s",
                     conn->next_send, rmq_strerror((int)n));
            conn_close(conn, why);
            return;
        }
        ha_chunk_hdr_encode(hdr, conn->next_send, (uint32_t)n);
        if (evbuffer_add(out, hdr, sizeof(hdr)) != 0 || evbuffer_add_buffer(out, conn->chunk) != 0) {
            conn_close(conn, "out of memory queueing a chunk");
            return;
        }
        conn->next_send += n;
        conn->last_write_ms = rmq_mono_ms();
    }
    if (conn->state == CONN_STREAMING)
        conn_send_confirm(conn, out);
}

/* Pushes newly appended data to every streaming slave. Loop thread. */
static void master_on_push(evutil_socket_t fd, short what, void *arg)
{
    ha_master_t *master = arg;
    ha_conn_t *c = master->conns, *next;

    for (; c; c = next) {
        next = c->next;
        if (c->state == CONN_STREAMING)
            conn_pump(c);
    }
}

/* Heartbeats slaves idle for heartbeat_interval_ms; drops ones silent for
 * housekeeping_interval_ms. Loop thread. */
static void master_on_tick(evutil_socket_t fd, short what, void *arg)
{
    ha_master_t *master = arg;
    int64_t now = rmq_mono_ms();
    ha_conn_t *c = master->conns, *next;
    uint8_t hdr[HA_CHUNK_HDR];
    char why[96];

    for (; c; c = next) {
        next = c->next;
        if (now - c->last_read_ms > master->cfg.housekeeping_interval_ms) {
            snprintf(why, sizeof(why), "silent for %" PRId64 " ms", now - c->last_read_ms);
            conn_close(c, why);
        } else if (c->state == CONN_STREAMING &&
                   now - c->last_write_ms >= master->cfg.heartbeat_interval_ms &&
                   evbuffer_get_length(bufferevent_get_output(c->bev)) == 0) {
            ha_chunk_hdr_encode(hdr, c->next_send, 0);
            bufferevent_write(c->bev, hdr, sizeof(hdr));
            c->last_write_ms = now;
        }
    }
}

/* A sniffed connection waiting for its first byte (tlsMode != disabled). */
typedef struct ha_pending {
    ha_master_t *master;
    struct sockaddr_storage sa;
} ha_pending_t;

static void master_start_conn(ha_master_t *master, evutil_socket_t fd, struct sockaddr *sa,
                              int tls);

/* Sniff result: TLS or (permissive only) plaintext; enforcing refuses the rest. */
static void master_on_sniffed(evutil_socket_t fd, int is_tls, void *arg)
{
    ha_pending_t *p = arg;
    ha_master_t *master = p->master;
    char peer[64];

    rmq_sockaddr_text((struct sockaddr *)&p->sa, peer, sizeof(peer));
    if (is_tls < 0) {
        LOG_INFO("HA: connection from %s closed before its first byte", peer);
    } else if (!is_tls && master->cfg.tls_mode == RMQ_TLS_ENFORCING) {
        LOG_WARN_RL("HA: refusing plaintext connection from %s (tlsMode=enforcing)", peer);
        evutil_closesocket(fd);
    } else {
        master_start_conn(master, fd, (struct sockaddr *)&p->sa, is_tls);
    }
    free(p);
}

static void master_on_accept(struct evconnlistener *lev, evutil_socket_t fd,
                             struct sockaddr *sa, int salen, void *arg)
{
    ha_master_t *master = arg;

    if (master->cfg.ssl_ctx == NULL || master->cfg.tls_mode == RMQ_TLS_DISABLED) {
        master_start_conn(master, fd, sa, 0);
        return;
    }
    ha_pending_t *p = calloc(1, sizeof(*p));
    if (p) {
        p->master = master;
        memcpy(&p->sa, sa, (size_t)salen < sizeof(p->sa) ? (size_t)salen : sizeof(p->sa));
    }
    if (!p || rmq_tls_sniff(master->base, fd, master->cfg.housekeeping_interval_ms,
                            master_on_sniffed, p) != RMQ_OK) {
        LOG_ERROR_RL("HA: out of memory accepting a slave connection");
        evutil_closesocket(fd);
        free(p);
    }
}

/* Wraps an accepted socket (TLS if tls) and waits for the handshake. */
static void master_start_conn(ha_master_t *master, evutil_socket_t fd, struct sockaddr *sa,
                              int tls)
{
    ha_conn_t *conn = calloc(1, sizeof(*conn));
    int one = 1;

    if (conn) {
        conn->chunk = evbuffer_new();
        conn->bev = rmq_tls_bev_accept(master->base, fd, master->cfg.ssl_ctx, tls);
    }
    if (!conn || !conn->chunk || !conn->bev) {
        LOG_ERROR_RL("HA: out of memory accepting a slave connection");
        if (conn && conn->bev)
            bufferevent_free(conn->bev);
        else
            evutil_closesocket(fd);
        if (conn && conn->chunk)
            evbuffer_free(conn->chunk);
        free(conn);
        return;
    }
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    conn->master = master;
    rmq_sockaddr_text(sa, conn->addr, sizeof(conn->addr));
    conn->last_read_ms = rmq_mono_ms();
    conn->acked = -1;
    list_push(&master->conns, conn);
    bufferevent_setcb(conn->bev, conn_on_read, conn_on_write, conn_on_event, conn);
    bufferevent_setwatermark(conn->bev, EV_WRITE, master->cfg.transfer_batch_size, 0);
    bufferevent_set_max_single_write(conn->bev, HA_CHUNK_HDR + master->cfg.transfer_batch_size);
    bufferevent_enable(conn->bev, EV_READ | EV_WRITE);
}

/* Binds the listener (the wildcard host dual-stack: rmq_listen_socket);
 * returns the bound port or -1 with err set. */
static int master_listen(ha_master_t *master, char *err, size_t errlen)
{
    if (master->cfg.listen_port < 0 || master->cfg.listen_port > 65535) {
        snprintf(err, errlen, "HA listen port %d is not 0..65535", master->cfg.listen_port);
        return -1;
    }
    int fd = rmq_listen_socket("HA", master->cfg.listen_host, master->cfg.listen_port, 64, err, errlen);
    if (fd < 0)
        return -1;
    master->listener = evconnlistener_new(master->base, master_on_accept, master,
                                          LEV_OPT_CLOSE_ON_FREE, 0, fd);
    if (!master->listener) {
        snprintf(err, errlen, "cannot watch the HA listening socket");
        close(fd);
        return -1;
    }
    return rmq_listen_port(fd);
}

/* Creates the events: push (active on append), reap, periodic tick. */
static int master_events(ha_master_t *master)
{
    int period = master->cfg.heartbeat_interval_ms < master->cfg.housekeeping_interval_ms
                     ? master->cfg.heartbeat_interval_ms : master->cfg.housekeeping_interval_ms;
    struct timeval tv;

    period = period / 4 > 10 ? period / 4 : 10;
    tv.tv_sec = period / 1000;
    tv.tv_usec = (period % 1000) * 1000;
    master->push_ev = event_new(master->base, -1, 0, master_on_push, master);
    master->reap_ev = event_new(master->base, -1, 0, master_on_reap, master);
    master->tick_ev = event_new(master->base, -1, EV_PERSIST, master_on_tick, master);
    if (!master->push_ev || !master->reap_ev || !master->tick_ev)
        return -1;
    return event_add(master->tick_ev, &tv);
}

ha_master_t *ha_master_new(struct event_base *base, st_store_t *st, const ha_config_t *cfg,
                           char *err, size_t errlen)
{
    ha_master_t *master = calloc(1, sizeof(*master));

    if (!master) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    master->base = base;
    master->st = st;
    master->meta_dropped_at = -1;
    ha_config_resolve(cfg, &master->cfg);
    snprintf(master->cluster_name, sizeof(master->cluster_name), "%s",
             cfg->cluster_name ? cfg->cluster_name : "");
    snprintf(master->broker_name, sizeof(master->broker_name), "%s",
             cfg->broker_name ? cfg->broker_name : "");
    master->ack_need = 1;
    master->confirm = -2;
    master->sync = ha_sync_new(base, master->cfg.slave_fallbehind_max);
    if (!master->sync || master_events(master) != 0) {
        snprintf(err, errlen, "out of memory");
        goto err;
    }
    master->port = master_listen(master, err, errlen);
    if (master->port < 0)
        goto err;
    LOG_INFO("HA: master %s/%s listening on %s:%d", master->cluster_name, master->broker_name,
             master->cfg.listen_host, master->port);
    return master;
err:
    ha_master_free(master);
    return NULL;
}

void ha_master_free(ha_master_t *master)
{
    if (!master)
        return;
    for (size_t i = 0; i < HA_META_KEEP; i++)
        free(master->meta[i].body);
    if (master->listener)
        evconnlistener_free(master->listener);
    while (master->conns)
        conn_close(master->conns, "master shutting down");
    if (master->reap_ev)
        master_on_reap(-1, 0, master);
    ha_sync_free(master->sync);
    if (master->push_ev)
        event_free(master->push_ev);
    if (master->reap_ev)
        event_free(master->reap_ev);
    if (master->tick_ev)
        event_free(master->tick_ev);
    free(master);
}

int ha_master_port(const ha_master_t *master)
{
    return master->port;
}

void ha_master_notify_append(ha_master_t *master)
{
    if (master->conns)
        event_active(master->push_ev, EV_READ, 0);
}

ha_sync_t *ha_master_sync(ha_master_t *master)
{
    return master->sync;
}

size_t ha_master_slaves(ha_master_t *master, ha_slave_info_t *out, size_t n)
{
    st_store_stats_t stats;
    size_t count = 0;

    st_store_stats(master->st, &stats);
    for (ha_conn_t *c = master->conns; c; c = c->next) {
        if (c->state != CONN_STREAMING)
            continue;
        if (count < n) {
            ha_slave_info_t *info = &out[count];

            snprintf(info->addr, sizeof(info->addr), "%s", c->addr);
            info->broker_id = c->broker_id;
            info->acked_offset = c->acked;
            info->lag_bytes = stats.commitlog_max_offset - c->acked;
            info->in_sync = info->lag_bytes <= master->cfg.slave_fallbehind_max;
            info->connected_since_ms = c->connected_since_ms;
        }
        count++;
    }
    return count;
}

/* Drops the oldest kept change; a streaming slave that had not got it yet
 * skips it (the periodic metadata sync brings it the result). */
static void meta_drop_oldest(ha_master_t *master)
{
    uint64_t oldest = master->meta_seq - master->meta_count;
    ha_meta_ev_t *ev = &master->meta[oldest % HA_META_KEEP];

    for (ha_conn_t *c = master->conns; c; c = c->next)
        if (c->state == CONN_STREAMING && c->meta && c->meta_next == oldest) {
            LOG_WARN_RL("HA: slave %s is %d metadata changes behind; it misses the oldest and "
                        "gets it from the periodic sync", c->addr, HA_META_KEEP);
            c->meta_next++;
        }
    master->meta_dropped_at = ev->offset;
    free(ev->body);
    ev->body = NULL;
    master->meta_count--;
}

rmq_err_t ha_master_push_meta(ha_master_t *master, const Rmq__HaMeta *meta)
{
    size_t n = rmq__ha_meta__get_packed_size(meta);
    st_store_stats_t stats;
    ha_meta_ev_t *ev;
    uint8_t *body;

    if (n > HA_RECORD_MAX)
        return RMQ_ETOOBIG;
    if (!(body = malloc(n ? n : 1)))
        return RMQ_ENOMEM;
    rmq__ha_meta__pack(meta, body);
    if (master->meta_count == HA_META_KEEP)
        meta_drop_oldest(master);
    st_store_stats(master->st, &stats);
    ev = &master->meta[master->meta_seq % HA_META_KEEP];
    ev->offset = stats.commitlog_max_offset;
    ev->len = (uint32_t)n;
    ev->body = body;
    master->meta_seq++;
    master->meta_count++;
    if (master->conns)
        event_active(master->push_ev, EV_READ, 0);
    return RMQ_OK;
}
