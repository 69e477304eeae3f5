/* ha_slave.c: the slave side of the HA channel. One connection at a time to
 * the configured master: connect, handshake (commit-log end + tail CRC), then
 * append each chunk at exactly the local end and ack the new end once per
 * read. A periodic tick heartbeats the end when idle and drops a silent
 * master; every drop is logged, kept as last_error, and followed by a
 * reconnect after reconnect_interval_ms. With a metadata callback the
 * handshake asks for typed records, and each HA_REC_META record is handed
 * to it at its place between the chunks; a record type this build does not
 * know drops the link with a reason (nothing of it reaches the log).
 *
 * Controller mode (an epoch file in the config): the first frame is an
 * epoch query; with the master's epochs the slave finds where both logs
 * agree (st_epoch_consistent_end), cuts its log and epoch file there
 * (st_store_truncate, st_epoch_truncate), sends the real handshake, and
 * appends each master epoch to its file once its log reaches the start. */
#include "ha_slave.h"

#include <inttypes.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

#include <event2/buffer.h>
#include <event2/bufferevent.h>

#include "ha_codec.h"
#include "ha_tail.h"
#include "rmq_log.h"
#include "rmq_rpc.h"
#include "rmq_time.h"
#include "rmq_tls_config.h"

#define HA_NAME_CAP 256
#define HA_IOV_MAX 16

typedef enum ha_slave_phase {
    SLAVE_IDLE = 0,                  /* no connection; maybe a retry timer */
    SLAVE_CONNECTING,
    SLAVE_EPOCHS,                    /* controller mode: epoch query sent */
    SLAVE_HANDSHAKING,               /* handshake sent, waiting for the answer */
    SLAVE_STREAMING,
} ha_slave_phase_t;

struct ha_slave {
    struct event_base *base;
    st_store_t *st;
    ha_config_t cfg;
    char cluster_name[HA_NAME_CAP];
    char broker_name[HA_NAME_CAP];
    char master_addr[128];
    struct bufferevent *bev;
    ha_slave_phase_t phase;
    int64_t next;                    /* offset the next chunk must start at */
    int64_t acked;                   /* last end reported to the master */
    int64_t connects;
    int64_t last_read_ms;
    int64_t last_write_ms;
    char last_error[256];
    struct event *retry_ev;
    struct event *tick_ev;
    ha_meta_fn on_meta;              /* NULL: the handshake asks for log bytes only */
    void *meta_arg;
    ha_confirm_fn on_confirm;        /* NULL: no confirm offsets asked for */
    void *confirm_arg;
    /* controller mode: the master's epochs from its answer; those from
     * theirs_next on go into the epoch file once the log reaches their start */
    st_epoch_entry_t *theirs;        /* HA_EPOCHS_MAX slots */
    size_t n_theirs, theirs_next;
};

static void slave_connect(ha_slave_t *slave);

/* The highest typed record type this slave takes (0: log bytes only). */
static uint32_t slave_record_version(const ha_slave_t *slave)
{
    if (!slave->on_meta)
        return 0;
    return slave->on_confirm ? HA_REC_CONFIRM : HA_REC_META;
}

static void ms_to_tv(int ms, struct timeval *tv)
{
    tv->tv_sec = ms / 1000;
    tv->tv_usec = (ms % 1000) * 1000;
}

/* Closes the link (if any) without scheduling a retry. */
static void slave_disconnect(ha_slave_t *slave)
{
    if (slave->bev)
        bufferevent_free(slave->bev);
    slave->bev = NULL;
    slave->phase = SLAVE_IDLE;
}

/* Drops the link for a reason (kept as last_error; logged unless it repeats
 * the previous failure) and schedules a reconnect. Safe inside the
 * bufferevent's own callbacks. */
static void slave_drop(ha_slave_t *slave, const char *reason)
{
    struct timeval tv;

    if (slave->phase == SLAVE_STREAMING)
        LOG_WARN("HA: link to master %s dropped at offset %" PRId64 ": %s", slave->master_addr,
                 slave->next, reason);
    else if (strcmp(reason, slave->last_error) != 0)
        LOG_WARN("HA: master %s: %s (retrying every %d ms)", slave->master_addr, reason,
                 slave->cfg.reconnect_interval_ms);
    snprintf(slave->last_error, sizeof(slave->last_error), "%s", reason);
    slave_disconnect(slave);
    ms_to_tv(slave->cfg.reconnect_interval_ms, &tv);
    event_add(slave->retry_ev, &tv);
}

static void slave_write(ha_slave_t *slave, const void *data, size_t len)
{
    bufferevent_write(slave->bev, data, len);
    slave->last_write_ms = rmq_mono_ms();
}

/* Reports the local end to the master (the replication ack). */
static void slave_ack(ha_slave_t *slave)
{
    uint8_t buf[HA_ACK_LEN];

    ha_ack_encode(buf, slave->next);
    slave_write(slave, buf, sizeof(buf));
    slave->acked = slave->next;
}

/* Sends the handshake: names, id, local end and tail CRC; with query set
 * the controller-mode epoch query instead. */
static void slave_send_handshake(ha_slave_t *slave, int query)
{
    Rmq__HaHandshake hs = RMQ__HA_HANDSHAKE__INIT;
    st_store_stats_t stats;
    uint32_t crc = 0;
    char why[160];

    st_store_stats(slave->st, &stats);
    hs.cluster_name = slave->cluster_name;
    hs.broker_name = slave->broker_name;
    hs.broker_id = slave->cfg.broker_id;
    hs.max_offset = stats.commitlog_max_offset;
    ha_tail_range(stats.commitlog_min_offset, stats.commitlog_max_offset, &hs.tail_offset,
                  &hs.tail_len);
    if (hs.tail_len > 0 && ha_tail_crc(slave->st, hs.tail_offset, hs.tail_len, &crc) != RMQ_OK) {
        snprintf(why, sizeof(why), "cannot read own log tail [%" PRId64 ", +%u)", hs.tail_offset,
                 hs.tail_len);
        slave_drop(slave, why);
        return;
    }
    hs.tail_crc = crc;
    hs.meta_version = slave_record_version(slave);
    hs.epoch_query = query;
    char sig[65];
    if (slave->cfg.access_key && slave->cfg.access_key[0]) {
        hs.access_key = (char *)slave->cfg.access_key;
        hs.auth_timestamp_ms = rmq_wall_ms();
        rmq_acl_sign_ha(slave->cfg.secret_key, hs.cluster_name, hs.broker_name, hs.broker_id,
                        hs.max_offset, hs.auth_timestamp_ms, sig);
        hs.signature = sig;
    }
    if (ha_frame_add(bufferevent_get_output(slave->bev), &hs.base) != RMQ_OK) {
        slave_drop(slave, "out of memory building the handshake");
        return;
    }
    slave->next = stats.commitlog_max_offset;
    slave->last_write_ms = rmq_mono_ms();
    slave->phase = query ? SLAVE_EPOCHS : SLAVE_HANDSHAKING;
}

/* Appends to the epoch file each of the master's epochs the local log has
 * reached the start of. RMQ_OK, else the reason in why. */
static rmq_err_t slave_note_epochs(ha_slave_t *slave, char *why, size_t whylen)
{
    char ewhy[200];

    while (slave->theirs_next < slave->n_theirs &&
           slave->theirs[slave->theirs_next].start_offset <= slave->next) {
        const st_epoch_entry_t *e = &slave->theirs[slave->theirs_next];
        rmq_err_t rc = st_epoch_append(slave->cfg.epochs, e->epoch, e->start_offset, ewhy, sizeof(ewhy));

        if (rc != RMQ_OK) {
            snprintf(why, whylen, "cannot record the master's epoch %" PRId64 ": %s", e->epoch, ewhy);
            return rc;
        }
        slave->theirs_next++;
    }
    return RMQ_OK;
}

/* Cuts the local log and epoch file to the point where they agree with the
 * master's (epochs theirs, log ending at their_end), and keeps the master's
 * later epochs for slave_note_epochs. A log without epochs is left to the
 * handshake's tail check. 0, or -1 with the reason in why. */
static int slave_align(ha_slave_t *slave, const Rmq__HaHandshakeResponse *r, char *why, size_t whylen)
{
    st_epoch_t *ef = slave->cfg.epochs;
    size_t n_mine = st_epoch_count(ef);
    const st_epoch_entry_t *mine = st_epoch_entries(ef);
    st_store_stats_t stats;
    char err[300];
    int64_t end;

    slave->n_theirs = r->n_epochs;
    slave->theirs_next = 0;
    for (size_t i = 0; i < r->n_epochs; i++)
        slave->theirs[i] = (st_epoch_entry_t){ r->epochs[i]->epoch, r->epochs[i]->start_offset };
    st_store_stats(slave->st, &stats);
    if (n_mine == 0)
        return 0;
    end = st_epoch_consistent_end(mine, n_mine, stats.commitlog_max_offset, slave->theirs,
                                  slave->n_theirs, r->master_max_offset);
    if (end < 0) {
        snprintf(why, whylen, "no epoch in common with the master (local epochs %" PRId64 "..%" PRId64
                 ", master sent %zu); this log cannot follow it: clear the store", mine[0].epoch,
                 mine[n_mine - 1].epoch, slave->n_theirs);
        return -1;
    }
    if (end < stats.commitlog_max_offset) {
        LOG_WARN("HA: local log %" PRId64 "..%" PRId64 " diverged from master %s at %" PRId64
                 ": truncating", stats.commitlog_min_offset, stats.commitlog_max_offset,
                 slave->master_addr, end);
        if (st_store_truncate(slave->st, end, err, sizeof(err)) != RMQ_OK) {
            snprintf(why, whylen, "cannot truncate the log to %" PRId64 ": %s", end, err);
            return -1;
        }
    }
    if (st_epoch_truncate(ef, end) != RMQ_OK) {
        snprintf(why, whylen, "cannot truncate the epoch file to %" PRId64, end);
        return -1;
    }
    n_mine = st_epoch_count(ef);
    while (slave->theirs_next < slave->n_theirs && n_mine > 0 &&
           slave->theirs[slave->theirs_next].epoch <= mine[n_mine - 1].epoch)
        slave->theirs_next++;
    return 0;
}

/* Handles the answer to the epoch query: aligns the log, then sends the
 * real handshake. Returns 0, or -1 if dropped. */
static int slave_on_epochs(ha_slave_t *slave, const Rmq__HaHandshakeResponse *r)
{
    char why[400];

    if (!r->accepted || !r->epoch_answer) {
        snprintf(why, sizeof(why), "master did not answer the epoch query: %s",
                 r->accepted ? "it does not run in controller mode (or is older)" : r->reason);
        slave_drop(slave, why);
        return -1;
    }
    if (slave_align(slave, r, why, sizeof(why)) != 0) {
        slave_drop(slave, why);
        return -1;
    }
    slave_send_handshake(slave, 0);
    return slave->phase == SLAVE_HANDSHAKING ? 0 : -1;
}

/* Handles the master's answer. Returns 0 when streaming, -1 if dropped. */
static int slave_on_response(ha_slave_t *slave, const Rmq__HaHandshakeResponse *r)
{
    char why[400];

    if (!r->accepted) {
        snprintf(why, sizeof(why), "master refused the handshake: %s", r->reason);
        slave_drop(slave, why);
        return -1;
    }
    if (slave->next != 0 && r->start_offset != slave->next) {
        snprintf(why, sizeof(why), "master would start at %" PRId64 ", local log ends at %" PRId64,
                 r->start_offset, slave->next);
        slave_drop(slave, why);
        return -1;
    }
    slave->next = r->start_offset;
    slave->acked = r->start_offset;
    if (slave->cfg.epochs && slave_note_epochs(slave, why, sizeof(why)) != RMQ_OK) {
        slave_drop(slave, why);
        return -1;
    }
    slave->phase = SLAVE_STREAMING;
    slave->connects++;
    slave->last_error[0] = '\0';
    LOG_INFO("HA: streaming from master %s at offset %" PRId64 " (master log %" PRId64
             "..%" PRId64 ")", slave->master_addr, r->start_offset, r->master_min_offset,
             r->master_max_offset);
    return 0;
}

/* Reads the handshake answer if complete. Returns 0 if more bytes are
 * needed or streaming started, -1 if dropped. */
static int slave_read_response(ha_slave_t *slave, struct evbuffer *in)
{
    uint8_t hdr[HA_FRAME_HDR];
    uint32_t n;
    const uint8_t *body;
    Rmq__HaHandshakeResponse *r;
    rmq_err_t rc;
    int ret;

    if (evbuffer_copyout(in, hdr, sizeof(hdr)) < (ev_ssize_t)sizeof(hdr))
        return 0;
    if (ha_frame_parse(hdr, sizeof(hdr), &n) != RMQ_OK) {
        slave_drop(slave, "bad handshake answer length");
        return -1;
    }
    if (evbuffer_get_length(in) < HA_FRAME_HDR + (size_t)n)
        return 0;
    body = evbuffer_pullup(in, HA_FRAME_HDR + n);
    rc = body ? ha_response_unpack(body + HA_FRAME_HDR, n, &r) : RMQ_ENOMEM;
    evbuffer_drain(in, HA_FRAME_HDR + n);
    if (rc != RMQ_OK) {
        slave_drop(slave, "malformed handshake answer");
        return -1;
    }
    ret = slave->phase == SLAVE_EPOCHS ? slave_on_epochs(slave, r) : slave_on_response(slave, r);
    rmq__ha_handshake_response__free_unpacked(r, NULL);
    return ret;
}

/* Appends the first len bytes of in (a chunk body) at slave->next, one
 * buffer segment at a time, without copying. */
static rmq_err_t slave_append(ha_slave_t *slave, struct evbuffer *in, size_t len)
{
    while (len > 0) {
        struct evbuffer_iovec v[HA_IOV_MAX];
        int n = evbuffer_peek(in, (ev_ssize_t)len, NULL, v, HA_IOV_MAX);
        size_t done = 0;

        if (n > HA_IOV_MAX)
            n = HA_IOV_MAX;
        for (int i = 0; i < n && done < len; i++) {
            size_t take = v[i].iov_len < len - done ? v[i].iov_len : len - done;
            rmq_err_t rc = st_store_append_raw(slave->st, slave->next, v[i].iov_base, take);

            if (rc != RMQ_OK)
                return rc;
            slave->next += (int64_t)take;
            done += take;
        }
        evbuffer_drain(in, done);
        len -= done;
    }
    return RMQ_OK;
}

/* Hands the HA_REC_META record of len bytes at the front of in to on_meta
 * and drains it. RMQ_OK, else the reason in why. */
static rmq_err_t slave_apply_meta(ha_slave_t *slave, struct evbuffer *in, uint32_t len, char *why,
                                  size_t whylen)
{
    const uint8_t *body = len ? evbuffer_pullup(in, len) : (const uint8_t *)"";
    Rmq__HaMeta *meta = NULL;
    rmq_err_t rc = body ? ha_meta_unpack(body, len, &meta) : RMQ_ENOMEM;

    evbuffer_drain(in, len);
    if (rc != RMQ_OK) {
        snprintf(why, whylen, "malformed metadata record at offset %" PRId64 " (%s)", slave->next,
                 rmq_strerror(rc));
        return rc;
    }
    if (slave->on_meta(meta, slave->meta_arg, why, whylen) != 0)
        rc = RMQ_EPROTO;
    rmq__ha_meta__free_unpacked(meta, NULL);
    return rc;
}

/* Applies every complete chunk in in. Returns -1 if the link was dropped. */
static int slave_read_chunks(ha_slave_t *slave, struct evbuffer *in)
{
    uint8_t hdr[HA_CHUNK_HDR];
    ha_chunk_t c;
    char why[400];
    rmq_err_t rc;

    while (evbuffer_copyout(in, hdr, sizeof(hdr)) == (ev_ssize_t)sizeof(hdr)) {
        if (ha_chunk_parse(hdr, sizeof(hdr), HA_CHUNK_MAX, &c) != RMQ_OK) {
            slave_drop(slave, "malformed chunk header from master");
            return -1;
        }
        if (c.offset != slave->next) {
            snprintf(why, sizeof(why), "master sent offset %" PRId64 ", local log ends at %" PRId64,
                     c.offset, slave->next);
            slave_drop(slave, why);
            return -1;
        }
        if (c.type > slave_record_version(slave) || (c.type == HA_REC_CONFIRM && c.len != HA_ACK_LEN)) {
            snprintf(why, sizeof(why), "master sent a record of type %u (%u bytes) at offset %" PRId64
                     ", which this slave does not take (it handles typed records up to %u); "
                     "upgrade the slave", c.type, c.len, c.offset, slave_record_version(slave));
            slave_drop(slave, why);
            return -1;
        }
        if (evbuffer_get_length(in) < c.frame_len)
            break;
        evbuffer_drain(in, HA_CHUNK_HDR);
        if (c.type == HA_REC_CONFIRM) {
            uint8_t body[HA_ACK_LEN];
            int64_t confirm;
            evbuffer_remove(in, body, sizeof body);
            if (ha_ack_parse(body, sizeof body, &confirm) != RMQ_OK) {
                slave_drop(slave, "negative confirm offset from master");
                return -1;
            }
            slave->on_confirm(confirm, slave->confirm_arg);
            continue;
        }
        if (c.type == HA_REC_META) {
            if (slave_apply_meta(slave, in, c.len, why, sizeof(why)) != RMQ_OK) {
                slave_drop(slave, why);
                return -1;
            }
            continue;
        }
        rc = slave_append(slave, in, c.len);
        if (rc != RMQ_OK) {
            snprintf(why, sizeof(why), "appending at offset %" PRId64 " failed: %s", slave->next,
                     rmq_strerror(rc));
            slave_drop(slave, why);
            return -1;
        }
        if (slave->cfg.epochs && slave_note_epochs(slave, why, sizeof(why)) != RMQ_OK) {
            slave_drop(slave, why);
            return -1;
        }
    }
    return 0;
}

static void slave_on_read(struct bufferevent *bev, void *arg)
{
    ha_slave_t *slave = arg;
    struct evbuffer *in = bufferevent_get_input(bev);

    slave->last_read_ms = rmq_mono_ms();
    if (slave->phase == SLAVE_EPOCHS && slave_read_response(slave, in) != 0)
        return;
    if (slave->phase == SLAVE_HANDSHAKING && slave_read_response(slave, in) != 0)
        return;
    if (slave->phase != SLAVE_STREAMING || slave_read_chunks(slave, in) != 0)
        return;
    if (slave->next != slave->acked)
        slave_ack(slave);
}

static void slave_on_event(struct bufferevent *bev, short what, void *arg)
{
    ha_slave_t *slave = arg;
    char why[300], tls[256];
    int one = 1;

    if (what & BEV_EVENT_CONNECTED) {
        setsockopt(bufferevent_getfd(bev), IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        slave_send_handshake(slave, slave->cfg.epochs != NULL);
        return;
    }
    if (what & BEV_EVENT_EOF)
        snprintf(why, sizeof(why), "master closed the connection");
    else if (rmq_tls_bev_error(bev, tls, sizeof(tls))[0])
        snprintf(why, sizeof(why), "TLS: %.250s", tls);
    else if (slave->phase == SLAVE_CONNECTING)
        snprintf(why, sizeof(why), "cannot connect: %s",
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    else
        snprintf(why, sizeof(why), "socket error: %s",
                 evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    slave_drop(slave, why);
}

/* Starts a non-blocking connect: numeric addresses directly, names through
 * a blocking lookup. Returns 0, or -1 with the reason in why. */
static int slave_start_connect(ha_slave_t *slave, char *why, size_t whylen)
{
    struct sockaddr_storage ss;
    int sslen = (int)sizeof(ss);
    char host[128];
    int port;

    if (rmq_addr_sockaddr(slave->master_addr, &ss, &sslen) == RMQ_OK) {
        if (bufferevent_socket_connect(slave->bev, (struct sockaddr *)&ss, sslen) == 0)
            return 0;
    } else if (rmq_addr_split(slave->master_addr, host, sizeof(host), &port) == RMQ_OK) {
        if (bufferevent_socket_connect_hostname(slave->bev, NULL, AF_UNSPEC, host, port) == 0)
            return 0;
    } else {
        snprintf(why, whylen, "bad master HA address \"%s\"", slave->master_addr);
        return -1;
    }
    snprintf(why, whylen, "cannot connect: %s",
             evutil_socket_error_to_string(EVUTIL_SOCKET_ERROR()));
    return -1;
}

/* Connects to master_addr if one is set. Loop thread. */
static void slave_connect(ha_slave_t *slave)
{
    char why[200];

    event_del(slave->retry_ev);
    slave_disconnect(slave);
    if (!slave->master_addr[0])
        return;
    slave->bev = rmq_tls_bev_connect(slave->base, slave->cfg.ssl_ctx);
    if (!slave->bev) {
        slave_drop(slave, "out of memory creating the connection");
        return;
    }
    bufferevent_setcb(slave->bev, slave_on_read, NULL, slave_on_event, slave);
    bufferevent_set_max_single_read(slave->bev, HA_CHUNK_HDR + slave->cfg.transfer_batch_size);
    bufferevent_enable(slave->bev, EV_READ | EV_WRITE);
    slave->phase = SLAVE_CONNECTING;
    slave->last_read_ms = rmq_mono_ms();
    if (slave_start_connect(slave, why, sizeof(why)) != 0)
        slave_drop(slave, why);
}

static void slave_on_retry(evutil_socket_t fd, short what, void *arg)
{
    slave_connect(arg);
}

/* Drops a master silent for housekeeping_interval_ms (a hung connect too);
 * heartbeats the local end when nothing was sent for heartbeat_interval_ms. */
static void slave_on_tick(evutil_socket_t fd, short what, void *arg)
{
    ha_slave_t *slave = arg;
    int64_t now = rmq_mono_ms();
    char why[96];

    if (slave->phase == SLAVE_IDLE)
        return;
    if (now - slave->last_read_ms > slave->cfg.housekeeping_interval_ms) {
        snprintf(why, sizeof(why), "master silent for %" PRId64 " ms", now - slave->last_read_ms);
        slave_drop(slave, why);
    } else if (slave->phase == SLAVE_STREAMING &&
               now - slave->last_write_ms >= slave->cfg.heartbeat_interval_ms) {
        slave_ack(slave);
    }
}

ha_slave_t *ha_slave_new(struct event_base *base, st_store_t *st, const ha_config_t *cfg)
{
    ha_slave_t *slave = calloc(1, sizeof(*slave));
    struct timeval tv;
    int period;

    if (!slave)
        return NULL;
    slave->base = base;
    slave->st = st;
    ha_config_resolve(cfg, &slave->cfg);
    snprintf(slave->cluster_name, sizeof(slave->cluster_name), "%s",
             cfg->cluster_name ? cfg->cluster_name : "");
    snprintf(slave->broker_name, sizeof(slave->broker_name), "%s",
             cfg->broker_name ? cfg->broker_name : "");
    slave->acked = -1;
    if (cfg->epochs && !(slave->theirs = calloc(HA_EPOCHS_MAX, sizeof(*slave->theirs)))) {
        free(slave);
        return NULL;
    }
    slave->retry_ev = evtimer_new(base, slave_on_retry, slave);
    slave->tick_ev = event_new(base, -1, EV_PERSIST, slave_on_tick, slave);
    period = slave->cfg.heartbeat_interval_ms < slave->cfg.housekeeping_interval_ms
                 ? slave->cfg.heartbeat_interval_ms : slave->cfg.housekeeping_interval_ms;
    ms_to_tv(period / 4 > 10 ? period / 4 : 10, &tv);
    if (!slave->retry_ev || !slave->tick_ev || event_add(slave->tick_ev, &tv) != 0) {
        ha_slave_free(slave);
        return NULL;
    }
    return slave;
}

void ha_slave_free(ha_slave_t *slave)
{
    if (!slave)
        return;
    slave_disconnect(slave);
    if (slave->retry_ev)
        event_free(slave->retry_ev);
    if (slave->tick_ev)
        event_free(slave->tick_ev);
    free(slave->theirs);
    free(slave);
}

void ha_slave_set_master(ha_slave_t *slave, const char *addr)
{
    if (!addr)
        addr = "";
    if (strcmp(addr, slave->master_addr) == 0)
        return;
    if (slave->master_addr[0])
        LOG_INFO("HA: master address changes from %s to %s", slave->master_addr,
                 addr[0] ? addr : "(none)");
    snprintf(slave->master_addr, sizeof(slave->master_addr), "%s", addr);
    slave->last_error[0] = '\0';
    slave_connect(slave);
}

void ha_slave_state(const ha_slave_t *slave, ha_slave_state_t *out)
{
    out->connected = slave->phase == SLAVE_STREAMING;
    snprintf(out->master_addr, sizeof(out->master_addr), "%s", slave->master_addr);
    out->acked_offset = slave->acked;
    out->connects = slave->connects;
    snprintf(out->last_error, sizeof(out->last_error), "%s", slave->last_error);
}

void ha_slave_on_meta(ha_slave_t *slave, ha_meta_fn fn, void *arg)
{
    slave->on_meta = fn;
    slave->meta_arg = arg;
}

void ha_slave_on_confirm(ha_slave_t *slave, ha_confirm_fn fn, void *arg)
{
    slave->on_confirm = fn;
    slave->confirm_arg = arg;
}
