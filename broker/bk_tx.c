/* bk_tx.c: half messages, END_TRANSACTION and the check-back (see
 * bk_tx.h). Outcomes are kept in a hash of half-message commit-log offsets
 * (resolved, or how often checked), rebuilt from the op queue at start;
 * producers of each group are the sessions that named the group in a
 * HEART_BEAT (referenced while known); a check-back goes through the
 * session (core/bk_session.h). Loop thread. */
#include "bk_tx.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_routes.h"
#include "fr_status.h"
#include "bk_props.h"
#include "bk_schedule.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_time.h"

#define TX_DONE (-1)
#define CHECKS_PER_ROUND 1000
#define READ_BATCH 32
#define OP_TAG "d"

typedef struct tx_slot {
    int64_t key;                     /* half phys + 1; 0 = empty */
    int32_t val;                     /* TX_DONE, or checks sent */
} tx_slot_t;

typedef struct tx_producer {
    char *group;
    bk_session_t *ss;                /* referenced */
    int64_t seen_ms;
} tx_producer_t;

struct bk_tx {
    bk_broker_t *bk;
    bk_props_buf_t pb;               /* divert */
    bk_props_buf_t cpb;              /* commit */
    tx_slot_t *slots;
    size_t cap, used;
    tx_producer_t *prods;
    size_t nprods, prods_cap;
    int64_t scan_from;               /* half queue offset: everything before is resolved */
    struct event *timer;
};

/* ---- outcome table --------------------------------------------------------- */

static tx_slot_t *slot_find(bk_tx_t *tx, int64_t phys, int create)
{
    int64_t key = phys + 1;

    if (create && (tx->used + 1) * 2 > tx->cap) {
        size_t cap = tx->cap ? tx->cap * 2 : 1024;
        tx_slot_t *slots = calloc(cap, sizeof(*slots));

        if (!slots)
            return NULL;
        for (size_t i = 0; i < tx->cap; i++) {
            if (!tx->slots[i].key)
                continue;
            size_t j = (size_t)((uint64_t)tx->slots[i].key * 0x9E3779B97F4A7C15ull >> 17) & (cap - 1);
            while (slots[j].key)
                j = (j + 1) & (cap - 1);
            slots[j] = tx->slots[i];
        }
        free(tx->slots);
        tx->slots = slots;
        tx->cap = cap;
    }
    if (!tx->cap)
        return NULL;
    size_t j = (size_t)((uint64_t)key * 0x9E3779B97F4A7C15ull >> 17) & (tx->cap - 1);
    while (tx->slots[j].key && tx->slots[j].key != key)
        j = (j + 1) & (tx->cap - 1);
    if (tx->slots[j].key == key)
        return &tx->slots[j];
    if (!create)
        return NULL;
    tx->slots[j].key = key;
    tx->slots[j].val = 0;
    tx->used++;
    return &tx->slots[j];
}

static int is_done(bk_tx_t *tx, int64_t phys)
{
    tx_slot_t *s = slot_find(tx, phys, 0);
    return s && s->val == TX_DONE;
}

static void mark_done(bk_tx_t *tx, int64_t phys)
{
    tx_slot_t *s = slot_find(tx, phys, 1);
    if (s)
        s->val = TX_DONE;
}

/* ---- stores ---------------------------------------------------------------- */

/* Append callback of an op record: logs a failed wait (the record is in
 * the log; a check-back after a restart may ask again). */
static void op_appended(const bk_append_out_t *out, void *arg)
{
    if (out->r.status != BK_OK)
        LOG_WARN_RL("transaction: the outcome record of a half message is not durable: %s", out->r.why);
}

/* Fills m with the op record of a resolved half message (body: its offset in buf). */
static void op_msg(st_msg_t *m, int64_t half_phys, char *buf, size_t len)
{
    static const char props[] = "TAGS\x01" OP_TAG;
    int n = snprintf(buf, len, "%" PRId64, half_phys);

    memset(m, 0, sizeof(*m));
    m->topic = BK_TX_OP_TOPIC;
    m->topic_len = strlen(BK_TX_OP_TOPIC);
    m->born_timestamp = rmq_wall_ms();
    m->body = buf;
    m->body_len = (size_t)n;
    m->properties = props;
    m->properties_len = strlen(props);
    m->tag_code = st_tag_hash(OP_TAG, 1);
}

/* Stores the op record of a resolved half message; when conn is not NULL
 * answers it once the record is durable. Returns 1 if stored. */
static int op_put(bk_tx_t *tx, int64_t half_phys, rmq_conn_t *conn, rmq_reply_to_t to)
{
    char body[24];
    st_msg_t m;
    bk_append_out_t out;
    int stored;

    op_msg(&m, half_phys, body, sizeof body);
    if (conn)
        stored = fr_append_reply(tx->bk->append, &m, 1, conn, to, "END_TRANSACTION");
    else {
        if (bk_append_put(tx->bk->append, &m, 1, &out, op_appended, NULL))
            op_appended(&out, NULL);
        stored = out.stored;
    }
    if (stored)
        mark_done(tx, half_phys);
    else
        LOG_ERROR_RL("transaction: cannot store the outcome of the half message at %" PRId64, half_phys);
    return stored;
}

/* Fills m with the committed message of half record rec under its real
 * topic (through the scheduler when it is delayed). 1, or 0 with r set:
 * BK_SYSTEM_ERROR when it may work later, another status when the half
 * can never be delivered (no destination, or one that does not exist). */
static int commit_msg(bk_tx_t *tx, const rmq_record_t *rec, st_msg_t *m, bk_result_t *r)
{
    static const char *const drop[] = {RMQ_PROP_REAL_TOPIC, RMQ_PROP_REAL_QID, RMQ_PROP_TRAN_MSG,
                                       RMQ_PROP_TX_CHECK_TIMES, NULL};
    size_t tlen = 0, vl = 0;
    const char *topic = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_REAL_TOPIC, &tlen);
    int64_t qid = bk_props_int(rec->properties, rec->properties_len, RMQ_PROP_REAL_QID, -1, NULL);
    const char *tag, *why = NULL;
    rmq_err_t rc;

    memset(m, 0, sizeof(*m));
    if (!topic || tlen == 0 || tlen > RMQ_TOPIC_MAX || qid < 0)
        return bk_result_set(r, BK_MESSAGE_ILLEGAL, "the half message has no REAL_TOPIC / REAL_QID"), 0;
    if (!bk_produce_dest_check(tx->bk->produce, topic, tlen, qid, r))
        return 0;
    if (bk_props_copy(&tx->cpb, rec->properties, rec->properties_len, drop) != RMQ_OK)
        return bk_result_set(r, BK_SYSTEM_ERROR, "out of memory"), 0;
    m->topic = topic;
    m->topic_len = tlen;
    m->queue_id = (int32_t)qid;
    m->flag = rec->flag;
    m->sys_flag = rec->sys_flag;
    m->born_timestamp = rec->born_timestamp;
    m->born_ip = rec->born_ip;
    m->born_port = (uint16_t)rec->born_port;
    m->reconsume_times = rec->reconsume_times;
    m->body = rec->body;
    m->body_len = rec->body_len;
    m->properties = tx->cpb.data;
    m->properties_len = tx->cpb.len;
    tag = rmq_props_get(m->properties, m->properties_len, RMQ_PROP_TAGS, &vl);
    m->tag_code = tag ? st_tag_hash(tag, vl) : 0;
    rc = bk_schedule_divert(tx->bk->schedule, m, &why);   /* a delayed transactional message */
    if (rc != RMQ_OK)
        return bk_result_set(r, rc == RMQ_EINVAL ? BK_MESSAGE_ILLEGAL : BK_SYSTEM_ERROR, "%s",
                             why ? why : rmq_strerror(rc)), 0;
    return 1;
}

/* ---- send path -------------------------------------------------------------- */

rmq_err_t bk_tx_divert(bk_tx_t *tx, st_msg_t *m, const char **why)
{
    size_t vl = 0;
    const char *v;
    char real_topic[RMQ_TOPIC_MAX + 1];

    *why = NULL;
    if (!tx || !m->properties || !m->properties_len)
        return RMQ_OK;
    v = rmq_props_get(m->properties, m->properties_len, RMQ_PROP_TRAN_MSG, &vl);
    if (!v || vl != 4 || memcmp(v, "true", 4) != 0)
        return RMQ_OK;
    if (m->topic_len == strlen(BK_TX_HALF_TOPIC) && !memcmp(m->topic, BK_TX_HALF_TOPIC, m->topic_len))
        return RMQ_OK;
    if (!rmq_props_get(m->properties, m->properties_len, RMQ_PROP_PRODUCER_GROUP, &vl) || vl == 0) {
        *why = "a transactional message (TRAN_MSG=true) needs its producer group in PGROUP";
        return RMQ_EINVAL;
    }
    snprintf(real_topic, sizeof real_topic, "%.*s", (int)m->topic_len, m->topic);
    if (bk_props_copy(&tx->pb, m->properties, m->properties_len, NULL) != RMQ_OK ||
        bk_props_put(&tx->pb, RMQ_PROP_REAL_TOPIC, real_topic) != RMQ_OK ||
        bk_props_put_int(&tx->pb, RMQ_PROP_REAL_QID, m->queue_id) != RMQ_OK)
        return RMQ_ENOMEM;
    if (tx->pb.len > RMQ_PROPS_MAX) {
        *why = "properties too long after adding the transaction properties";
        return RMQ_EINVAL;
    }
    m->topic = BK_TX_HALF_TOPIC;
    m->topic_len = strlen(BK_TX_HALF_TOPIC);
    m->queue_id = 0;
    m->properties = tx->pb.data;
    m->properties_len = tx->pb.len;
    m->tag_code = 0;
    return RMQ_OK;
}

/* ---- producers ------------------------------------------------------------------ */

static void prod_remove(bk_tx_t *tx, size_t i)
{
    bk_session_unref(tx->prods[i].ss);
    free(tx->prods[i].group);
    tx->prods[i] = tx->prods[--tx->nprods];
}

void bk_tx_heartbeat(bk_tx_t *tx, bk_session_t *ss, const Rmq__HeartbeatData *hb)
{
    int64_t now = rmq_mono_ms();

    if (!tx)
        return;
    for (size_t g = 0; g < hb->n_producer_groups; g++) {
        const char *group = hb->producer_groups[g];
        size_t i;

        for (i = 0; i < tx->nprods; i++)
            if (tx->prods[i].ss == ss && !strcmp(tx->prods[i].group, group))
                break;
        if (i < tx->nprods) {
            tx->prods[i].seen_ms = now;
            continue;
        }
        if (tx->nprods == tx->prods_cap) {
            size_t cap = tx->prods_cap ? tx->prods_cap * 2 : 8;
            tx_producer_t *p = realloc(tx->prods, cap * sizeof(*p));

            if (!p)
                return;
            tx->prods = p;
            tx->prods_cap = cap;
        }
        if (!(tx->prods[tx->nprods].group = strdup(group)))
            return;
        bk_session_ref(ss);
        tx->prods[tx->nprods].ss = ss;
        tx->prods[tx->nprods].seen_ms = now;
        tx->nprods++;
    }
}

void bk_tx_session_closed(bk_tx_t *tx, bk_session_t *ss)
{
    for (size_t i = 0; tx && i < tx->nprods;)
        if (tx->prods[i].ss == ss)
            prod_remove(tx, i);
        else
            i++;
}

/* The freshest open session of a producer of group, or NULL. */
static bk_session_t *producer_of(bk_tx_t *tx, const char *group, size_t len)
{
    tx_producer_t *best = NULL;

    for (size_t i = 0; i < tx->nprods; i++)
        if (strlen(tx->prods[i].group) == len && !memcmp(tx->prods[i].group, group, len) &&
            bk_session_is_open(tx->prods[i].ss) && (!best || tx->prods[i].seen_ms > best->seen_ms))
            best = &tx->prods[i];
    return best ? best->ss : NULL;
}

/* ---- reading queues ---------------------------------------------------------------- */

typedef void (*record_fn)(bk_tx_t *tx, const rmq_record_t *rec, int64_t queue_offset, void *arg, int *stop);

/* Calls fn for each record of topic/0 from offset on, until fn sets stop
 * or the queue ends; returns the offset after the last record handed over. */
static int64_t read_queue(bk_tx_t *tx, const char *topic, int64_t offset, record_fn fn, void *arg)
{
    st_tag_filter_t all = {.match_all = 1};
    int stop = 0;

    while (!stop) {
        struct evbuffer *buf = evbuffer_new();
        st_get_result_t res;

        if (!buf)
            break;
        st_store_get(tx->bk->store, topic, 0, offset, READ_BATCH, 4 << 20, &all, buf, &res);
        if (res.status == ST_GET_OFFSET_TOO_SMALL || res.status == ST_GET_MESSAGE_WAS_REMOVING) {
            offset = res.next_begin_offset > offset ? res.next_begin_offset : res.min_offset;
            evbuffer_free(buf);
            if (offset <= 0)
                break;
            continue;
        }
        if (res.status != ST_GET_FOUND || res.msg_count == 0) {
            if (res.status == ST_GET_NO_MATCHED_MESSAGE && res.next_begin_offset > offset)
                offset = res.next_begin_offset;
            else
                stop = 1;
            evbuffer_free(buf);
            continue;
        }
        size_t len = evbuffer_get_length(buf), pos = 0;
        const uint8_t *data = evbuffer_pullup(buf, -1);

        while (pos < len && !stop) {
            rmq_record_t rec;

            if (rmq_record_decode(data + pos, len - pos, 0, &rec) != RMQ_OK)
                break;
            fn(tx, &rec, rec.queue_offset, arg, &stop);
            if (!stop)
                offset = rec.queue_offset + 1;
            pos += rec.total_size;
        }
        if (pos < len && !stop) {
            LOG_ERROR_RL("transaction: undecodable record in %s at queue offset %" PRId64, topic, offset);
            stop = 1;
        }
        evbuffer_free(buf);
    }
    return offset;
}

static void load_op(bk_tx_t *tx, const rmq_record_t *rec, int64_t qoff, void *arg, int *stop)
{
    char num[24];
    int64_t half;

    if (rec->body_len == 0 || rec->body_len >= sizeof num)
        return;
    memcpy(num, rec->body, rec->body_len);
    num[rec->body_len] = '\0';
    if (sscanf(num, "%" SCNd64, &half) == 1 && half >= 0)
        mark_done(tx, half);
}

/* ---- checker -------------------------------------------------------------------------- */

typedef struct scan_ctx {
    int64_t now_ms;
    int sent;
    int front;                       /* every half before this one is resolved */
} scan_ctx_t;

/* Asks a producer of its group for the state of one half message. */
static void check_send(bk_tx_t *tx, const rmq_record_t *rec, int64_t qoff)
{
    bk_broker_t *bk = tx->bk;
    size_t glen = 0, ulen = 0;
    const char *group = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_PRODUCER_GROUP, &glen);
    const char *uniq = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_UNIQ_KEY, &ulen);
    bk_session_t *ss = group ? producer_of(tx, group, glen) : NULL;
    char g[256], u[128], id[33];

    if (!ss) {
        LOG_WARN_RL("transaction: no producer of group %.*s is connected to check the half message at %" PRId64,
                    (int)glen, group ? group : "", rec->phys_offset);
        return;
    }
    snprintf(g, sizeof g, "%.*s", (int)glen, group);
    snprintf(u, sizeof u, "%.*s", (int)ulen, uniq ? uniq : "");
    st_store_msg_id(rec->store_ip, (uint16_t)rec->store_port, rec->phys_offset, id);
    bk_tx_check_t chk = {
        .tran_state_table_offset = qoff,
        .commit_log_offset = rec->phys_offset,
        .msg_id = u,
        .transaction_id = u,
        .offset_msg_id = id,
        .producer_group = g,
        .broker_addr = bk->addr,
    };
    struct evbuffer *raw = evbuffer_new();
    rmq_err_t rc = raw ? st_store_read_record(bk->store, rec->phys_offset, raw) : RMQ_ENOMEM;

    if (rc == RMQ_OK) {
        chk.record_len = evbuffer_get_length(raw);
        chk.record = evbuffer_pullup(raw, -1);
        rc = bk_session_check_transaction(ss, &chk);
    }
    if (raw)
        evbuffer_free(raw);
    if (rc != RMQ_OK)
        LOG_WARN_RL("transaction: the check-back to %s failed", bk_session_peer(ss));
}

static void scan_half(bk_tx_t *tx, const rmq_record_t *rec, int64_t qoff, void *arg, int *stop)
{
    scan_ctx_t *sc = arg;
    tx_slot_t *s;

    if (is_done(tx, rec->phys_offset)) {
        if (sc->front)
            tx->scan_from = qoff + 1;
        return;
    }
    sc->front = 0;
    if (sc->now_ms - rec->store_timestamp < tx->bk->cfg->transaction_time_out || sc->sent >= CHECKS_PER_ROUND) {
        *stop = 1;                   /* younger halves follow */
        return;
    }
    if (!(s = slot_find(tx, rec->phys_offset, 1)))
        return;
    if (s->val >= tx->bk->cfg->transaction_check_max) {
        LOG_WARN("transaction: half message at %" PRId64 " unresolved after %d checks: rolled back",
                 rec->phys_offset, s->val);
        op_put(tx, rec->phys_offset, NULL, (rmq_reply_to_t){0});
        return;
    }
    s->val++;
    sc->sent++;
    check_send(tx, rec, qoff);
}

static void check_tick(evutil_socket_t fd, short what, void *arg)
{
    bk_tx_t *tx = arg;
    bk_broker_t *bk = tx->bk;
    int64_t now = rmq_mono_ms();
    scan_ctx_t sc = {rmq_wall_ms(), 0, 1};

    for (size_t i = 0; i < tx->nprods;)
        if (now - tx->prods[i].seen_ms > bk->cfg->channel_expired_timeout || !bk_session_is_open(tx->prods[i].ss))
            prod_remove(tx, i);
        else
            i++;
    if (bk->cfg->broker_role == BK_SLAVE || bk->stopping)
        return;
    int64_t min = st_store_min_offset(bk->store, BK_TX_HALF_TOPIC, 0);
    if (tx->scan_from < min)
        tx->scan_from = min;
    read_queue(tx, BK_TX_HALF_TOPIC, tx->scan_from, scan_half, &sc);
}

/* ---- END_TRANSACTION ---------------------------------------------------------------------- */

void fr_end_transaction(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    bk_tx_t *tx = bk->tx;
    const Rmq__EndTransactionRequest *h;
    struct evbuffer *buf = NULL;
    rmq_record_t rec;
    size_t glen = 0;
    const char *group;
    rmq_reply_to_t to = rmq_reply_to(req->cmd);
    bk_result_t r;

    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_END_TRANSACTION, "EndTransactionRequest (end_transaction)"))
        return;
    h = req->cmd->end_transaction;
    if (!bk_append_writable(bk->append, &r)) {
        fr_reply_result(conn, to, &r, "END_TRANSACTION");
        return;
    }
    if (!(buf = evbuffer_new()) || st_store_read_record(bk->store, h->commit_log_offset, buf) != RMQ_OK ||
        rmq_record_decode(evbuffer_pullup(buf, -1), evbuffer_get_length(buf), 0, &rec) != RMQ_OK) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__TRANSACTION_FAILED, "no half message at commit-log offset %" PRId64,
                        h->commit_log_offset);
        goto out;
    }
    group = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_PRODUCER_GROUP, &glen);
    if (rec.topic_len != strlen(BK_TX_HALF_TOPIC) || memcmp(rec.topic, BK_TX_HALF_TOPIC, rec.topic_len) != 0 ||
        !group || glen != strlen(h->producer_group) || memcmp(group, h->producer_group, glen) != 0) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__BAD_REQUEST,
                        "the message at %" PRId64 " is not a half message of producer group %.200s",
                        h->commit_log_offset, h->producer_group);
        goto out;
    }
    if (is_done(tx, h->commit_log_offset) || h->state == RMQ__TRANSACTION_STATE__TX_UNKNOWN) {
        rmq_conn_reply(conn, to, NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
        goto out;
    }
    if (h->state == RMQ__TRANSACTION_STATE__TX_COMMIT) {
        st_msg_t m;

        if (!commit_msg(tx, &rec, &m, &r)) {
            fr_reply_result(conn, to, &r, "commit");
            if (r.status != BK_SYSTEM_ERROR) {      /* never deliverable: dropped, not checked back */
                LOG_WARN("transaction: half message at %" PRId64 " dropped at commit: %s", h->commit_log_offset,
                         r.why);
                op_put(tx, h->commit_log_offset, NULL, to);
            }
            goto out;
        }
        if (!fr_append_reply(bk->append, &m, 1, conn, to, "commit"))   /* answered once durable */
            goto out;
        op_put(tx, h->commit_log_offset, NULL, to);
    } else if (h->state == RMQ__TRANSACTION_STATE__TX_ROLLBACK) {
        if (!op_put(tx, h->commit_log_offset, conn, to))                 /* answered once durable */
            goto out;
    } else {
        rmq_conn_replyf(conn, to, RMQ__STATUS__BAD_REQUEST, "END_TRANSACTION: unknown state %d", (int)h->state);
        goto out;
    }
    LOG_INFO("transaction: half message %s at %" PRId64 " %s%s", h->msg_id, h->commit_log_offset,
             h->state == RMQ__TRANSACTION_STATE__TX_COMMIT ? "committed" : "rolled back",
             h->from_transaction_check ? " (check-back)" : "");
out:
    if (buf)
        evbuffer_free(buf);
}

/* ---- lifetime ------------------------------------------------------------------------------- */

bk_tx_t *bk_tx_new(bk_broker_t *bk)
{
    bk_tx_t *tx = calloc(1, sizeof(*tx));
    int64_t ms = bk->cfg->transaction_check_interval;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    if (!tx)
        return NULL;
    tx->bk = bk;
    read_queue(tx, BK_TX_OP_TOPIC, st_store_min_offset(bk->store, BK_TX_OP_TOPIC, 0), load_op, NULL);
    tx->scan_from = st_store_min_offset(bk->store, BK_TX_HALF_TOPIC, 0);
    tx->timer = event_new(bk->base, -1, EV_PERSIST, check_tick, tx);
    if (!tx->timer || event_add(tx->timer, &tv) != 0) {
        bk_tx_free(tx);
        return NULL;
    }
    return tx;
}

void bk_tx_free(bk_tx_t *tx)
{
    if (!tx)
        return;
    if (tx->timer)
        event_free(tx->timer);
    while (tx->nprods)
        prod_remove(tx, 0);
    free(tx->prods);
    free(tx->slots);
    bk_props_buf_free(&tx->pb);
    bk_props_buf_free(&tx->cpb);
    free(tx);
}
