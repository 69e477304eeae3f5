/* bk_tx.c: half messages, the end of a transaction and the check-back (see
 * bk_tx.h). Outcomes are kept in a hash of half-message commit-log offsets
 * (resolved, or how often checked), rebuilt from the op queue at start.
 * Producers are indexed by (session, group) for heartbeats and by group for
 * check-backs; a session holds at most max_groups_per_conn of them. A
 * check-back goes through the session (bk_session.h). Loop thread. */
#include "bk_tx.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "bk_props.h"
#include "rmq_log.h"
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
    char *key;                       /* pair key: session and group */
    const char *group;               /* inside key */
    bk_session_t *ss;                /* referenced */
    int64_t seen_ms;
    char *client_id;                 /* of its latest heartbeat */
    char language[16];
    int32_t version;
} tx_producer_t;

/* The producers of one group. */
typedef struct tx_pgroup {
    tx_producer_t **v;
    size_t n, cap;
} tx_pgroup_t;

struct bk_tx {
    bk_tx_config_t cfg;
    bk_props_buf_t pb;               /* divert */
    bk_props_buf_t cpb;              /* commit */
    tx_slot_t *slots;
    size_t cap, used;
    bk_map_t *pairs;                 /* pair key -> tx_producer_t (owned) */
    bk_map_t *groups;                /* group -> tx_pgroup_t (owned; producers borrowed) */
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

/* Stores the op record of a resolved half message. With cb, like
 * bk_append_put (1: final now in *out, 0: cb follows); without, the outcome
 * is only logged. *stored tells whether the log holds it. Returns 1 when
 * the outcome is final now. */
static int op_put(bk_tx_t *tx, int64_t half_phys, bk_append_out_t *out, bk_append_fn cb, void *arg)
{
    char body[24];
    st_msg_t m;
    bk_append_out_t own;
    int now;

    if (!cb) {
        out = &own;
        cb = op_appended;
    }
    op_msg(&m, half_phys, body, sizeof body);
    now = bk_append_put(tx->cfg.append, &m, 1, out, cb, arg);
    if (out->stored)
        mark_done(tx, half_phys);
    else
        LOG_ERROR_RL("transaction: cannot store the outcome of the half message at %" PRId64, half_phys);
    if (now && out == &own)
        op_appended(out, NULL);
    return now;
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
    if (!bk_produce_dest_check(tx->cfg.produce, topic, tlen, qid, r))
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
    m->born_ip6 = rmq_record_born_ip6(rec);
    m->reconsume_times = rec->reconsume_times;
    m->body = rec->body;
    m->body_len = rec->body_len;
    m->properties = tx->cpb.data;
    m->properties_len = tx->cpb.len;
    tag = rmq_props_get(m->properties, m->properties_len, RMQ_PROP_TAGS, &vl);
    m->tag_code = tag ? st_tag_hash(tag, vl) : 0;
    rc = tx->cfg.divert ? tx->cfg.divert(tx->cfg.divert_arg, m, &why) : RMQ_OK;   /* a delayed transactional message */
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

/* The pair key of (ss, group) into a new string; NULL when out of memory. */
static char *pair_key(const bk_session_t *ss, const char *group, size_t *len)
{
    size_t glen = strlen(group);
    char *key = malloc(glen + 24);

    if (!key)
        return NULL;
    int n = snprintf(key, glen + 24, "%p|", (const void *)ss);
    memcpy(key + n, group, glen + 1);
    *len = (size_t)n + glen;
    return key;
}

static tx_producer_t *pair_find(const bk_tx_t *tx, const bk_session_t *ss, const char *group)
{
    size_t len;
    char *key = pair_key(ss, group, &len);
    tx_producer_t *p = key ? bk_map_get(tx->pairs, key, len) : NULL;

    free(key);
    return p;
}

static void pgroup_free(void *v)
{
    tx_pgroup_t *g = v;

    if (g)
        free(g->v);
    free(g);
}

/* Forgets producer p (its pair entry already removed by the caller). */
static void prod_drop(bk_tx_t *tx, tx_producer_t *p)
{
    size_t glen = strlen(p->group);
    tx_pgroup_t *g = bk_map_get(tx->groups, p->group, glen);

    for (size_t i = 0; g && i < g->n; i++)
        if (g->v[i] == p) {
            g->v[i] = g->v[--g->n];
            break;
        }
    if (g && g->n == 0)
        pgroup_free(bk_map_del(tx->groups, p->group, glen));
    p->ss->groups--;
    bk_session_unref(p->ss);
    free(p->client_id);
    free(p->key);
    free(p);
}

/* Takes who p is from heartbeat hb; 0 when out of memory. */
static int prod_seen(tx_producer_t *p, const bk_heartbeat_t *hb, int64_t now)
{
    if (!p->client_id || strcmp(p->client_id, hb->client_id) != 0) {
        char *id = strdup(hb->client_id);
        if (!id)
            return 0;
        free(p->client_id);
        p->client_id = id;
    }
    snprintf(p->language, sizeof(p->language), "%s", hb->language ? hb->language : "");
    p->version = hb->version;
    p->seen_ms = now;
    return 1;
}

/* Records ss as a producer of group; the new producer, or NULL when out of memory. */
static tx_producer_t *prod_add(bk_tx_t *tx, bk_session_t *ss, const char *group)
{
    tx_producer_t *p = calloc(1, sizeof(*p));
    size_t len, glen = strlen(group);
    tx_pgroup_t *g = bk_map_get(tx->groups, group, glen);

    if (!p || !(p->key = pair_key(ss, group, &len)))
        goto err;
    p->group = p->key + len - glen;
    if (!g && (!(g = calloc(1, sizeof(*g))) || bk_map_put(tx->groups, group, glen, g) != RMQ_OK)) {
        free(g);
        g = NULL;
        goto err;
    }
    if (g->n == g->cap) {
        size_t cap = g->cap ? g->cap * 2 : 4;
        tx_producer_t **v = realloc(g->v, cap * sizeof(*v));

        if (!v)
            goto err;
        g->v = v;
        g->cap = cap;
    }
    if (bk_map_put(tx->pairs, p->key, len, p) != RMQ_OK)
        goto err;
    g->v[g->n++] = p;
    bk_session_ref(ss);
    ss->groups++;
    p->ss = ss;
    return p;
err:
    if (g && g->n == 0)
        pgroup_free(bk_map_del(tx->groups, group, glen));
    if (p)
        free(p->key);
    free(p);
    return NULL;
}

/* 1 if group is the Java client's internal producer group (RMQ_INNER_PRODUCER_GROUP). */
static int group_is_inner(const char *group)
{
    return strcmp(group, RMQ_INNER_PRODUCER_GROUP) == 0;
}

int bk_tx_heartbeat(bk_tx_t *tx, bk_session_t *ss, const bk_heartbeat_t *hb, bk_result_t *r)
{
    int64_t now = rmq_mono_ms();
    size_t fresh = 0, n = hb->nproducers;
    const char *const *groups = hb->producer_groups;

    for (size_t i = 0; i < n; i++)
        if (!group_is_inner(groups[i]) && !pair_find(tx, ss, groups[i]))
            fresh++;
    if (fresh && (int64_t)(ss->groups + fresh) > tx->cfg.max_groups_per_conn)
        return bk_result_set(r, BK_BAD_REQUEST, "%zu more producer groups would make %zu on this connection, over "
                             "maxConnectionGroups=%lld", fresh, ss->groups + fresh,
                             (long long)tx->cfg.max_groups_per_conn), 0;
    for (size_t i = 0; i < n; i++) {
        if (group_is_inner(groups[i]))
            continue;
        tx_producer_t *p = pair_find(tx, ss, groups[i]);

        if (!p)
            p = prod_add(tx, ss, groups[i]);
        if (!p || !prod_seen(p, hb, now))
            return bk_result_set(r, BK_SYSTEM_ERROR, "out of memory recording producer group %.200s",
                                 groups[i]), 0;
    }
    return 1;
}

/* Drops every producer the predicate matches. */
static void prods_remove_where(bk_tx_t *tx, int (*match)(const tx_producer_t *p, const void *arg), const void *arg)
{
    size_t cursor = 0;
    const char *key;
    void *val;

    while (bk_map_next(tx->pairs, &cursor, &key, &val))
        if (match(val, arg))
            prod_drop(tx, bk_map_del_current(tx->pairs, &cursor));
}

static int match_session(const tx_producer_t *p, const void *arg)
{
    return p->ss == arg;
}

static int match_stale(const tx_producer_t *p, const void *arg)
{
    return p->seen_ms < *(const int64_t *)arg || !bk_session_is_open(p->ss);
}

static int match_any(const tx_producer_t *p, const void *arg)
{
    return 1;
}

void bk_tx_session_closed(bk_tx_t *tx, bk_session_t *ss)
{
    if (tx && ss->groups)
        prods_remove_where(tx, match_session, ss);
}

void bk_tx_each_producer(const bk_tx_t *tx, const char *group, bk_client_view_fn fn, void *arg)
{
    const tx_pgroup_t *g = bk_map_get(tx->groups, group, strlen(group));
    for (size_t i = 0; g && i < g->n; i++) {
        const tx_producer_t *p = g->v[i];
        const char *peer = bk_session_is_open(p->ss) ? bk_session_peer(p->ss) : NULL;
        bk_client_view_t v = {p->client_id, peer ? peer : "", p->language, p->version,
                              rmq_wall_ms() - (rmq_mono_ms() - p->seen_ms)};
        fn(arg, &v);
    }
}

void bk_tx_each_group(const bk_tx_t *tx, bk_clients_name_fn fn, void *arg)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(tx->groups, &cursor, &key, &val))
        fn(arg, key);
}

size_t bk_tx_producer_count(const bk_tx_t *tx)
{
    return bk_map_count(tx->pairs);
}

/* The freshest open session of the producer with client_id, or NULL. */
static bk_session_t *producer_by_id(const bk_tx_t *tx, const char *client_id)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    const tx_producer_t *best = NULL;
    while (bk_map_next(tx->pairs, &cursor, &key, &val)) {
        const tx_producer_t *p = val;
        if (p->client_id && strcmp(p->client_id, client_id) == 0 && bk_session_is_open(p->ss) &&
            (!best || p->seen_ms > best->seen_ms))
            best = p;
    }
    return best ? best->ss : NULL;
}

bk_status_t bk_tx_ask_producer(const bk_tx_t *tx, const bk_client_ask_t *q, bk_client_answer_fn fn, void *arg,
                               bk_result_t *r)
{
    bk_session_t *ss = producer_by_id(tx, q->client_id);
    if (!ss)
        return bk_result_set(r, BK_SYSTEM_ERROR, "push reply message fail, channel of <%.200s> not found.",
                             q->client_id);
    rmq_err_t err = bk_session_ask(ss, q, fn, arg);
    if (err == RMQ_EINVAL)
        return bk_result_set(r, BK_SYSTEM_ERROR, "push reply message fail: the client <%.200s> speaks a "
                             "protocol the broker cannot push replies to", q->client_id);
    if (err != RMQ_OK)
        return bk_result_set(r, BK_SYSTEM_ERROR, "push reply message to <%.200s> fail: %s", q->client_id,
                             rmq_strerror(err));
    return BK_OK;
}

/* The freshest open session of a producer of group, or NULL. */
static bk_session_t *producer_of(bk_tx_t *tx, const char *group, size_t len)
{
    const tx_pgroup_t *g = bk_map_get(tx->groups, group, len);
    tx_producer_t *best = NULL;

    for (size_t i = 0; g && i < g->n; i++)
        if (bk_session_is_open(g->v[i]->ss) && (!best || g->v[i]->seen_ms > best->seen_ms))
            best = g->v[i];
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
        st_store_get(tx->cfg.store, topic, 0, offset, READ_BATCH, 4 << 20, &all, buf, &res);
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
    size_t glen = 0, ulen = 0;
    const char *group = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_PRODUCER_GROUP, &glen);
    const char *uniq = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_UNIQ_KEY, &ulen);
    bk_session_t *ss = group ? producer_of(tx, group, glen) : NULL;
    char g[256], u[128], id[RMQ_MSG_ID_MAX + 1];

    if (!ss) {
        LOG_WARN_RL("transaction: no producer of group %.*s is connected to check the half message at %" PRId64,
                    (int)glen, group ? group : "", rec->phys_offset);
        return;
    }
    snprintf(g, sizeof g, "%.*s", (int)glen, group);
    snprintf(u, sizeof u, "%.*s", (int)ulen, uniq ? uniq : "");
    rmq_record_msg_id(rec, id);
    bk_tx_check_t chk = {
        .tran_state_table_offset = qoff,
        .commit_log_offset = rec->phys_offset,
        .msg_id = u,
        .transaction_id = u,
        .offset_msg_id = id,
        .producer_group = g,
        .broker_addr = tx->cfg.addr,
    };
    struct evbuffer *raw = evbuffer_new();
    rmq_err_t rc = raw ? st_store_read_record(tx->cfg.store, rec->phys_offset, raw) : RMQ_ENOMEM;

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
    if (sc->now_ms - rec->store_timestamp < tx->cfg.time_out_ms || sc->sent >= CHECKS_PER_ROUND) {
        *stop = 1;                   /* younger halves follow */
        return;
    }
    if (!(s = slot_find(tx, rec->phys_offset, 1)))
        return;
    if (s->val >= tx->cfg.check_max) {
        LOG_WARN("transaction: half message at %" PRId64 " unresolved after %d checks: rolled back",
                 rec->phys_offset, s->val);
        op_put(tx, rec->phys_offset, NULL, NULL, NULL);
        return;
    }
    s->val++;
    sc->sent++;
    check_send(tx, rec, qoff);
}

void bk_tx_check_now(bk_tx_t *tx)
{
    int64_t stale = rmq_mono_ms() - tx->cfg.producer_expire_ms;
    scan_ctx_t sc = {rmq_wall_ms(), 0, 1};
    bk_result_t r;

    prods_remove_where(tx, match_stale, &stale);
    if (!bk_append_writable(tx->cfg.append, &r))   /* a slave, stopping, or read-only: no outcome can be stored */
        return;
    int64_t min = st_store_min_offset(tx->cfg.store, BK_TX_HALF_TOPIC, 0);
    if (tx->scan_from < min)
        tx->scan_from = min;
    read_queue(tx, BK_TX_HALF_TOPIC, tx->scan_from, scan_half, &sc);
}

static void check_tick(evutil_socket_t fd, short what, void *arg)
{
    bk_tx_check_now(arg);
}

/* ---- ending a transaction ----------------------------------------------------------------- */

/* The half message req names, decoded from buf into rec; 1, or 0 with r set
 * (no record there, not a half message of req's group, or the account
 * lacks PUB on its real topic). */
static int end_half(bk_tx_t *tx, const bk_tx_end_req_t *req, struct evbuffer *buf, rmq_record_t *rec,
                    bk_result_t *r)
{
    size_t glen = 0, tlen = 0;
    const char *group, *topic;
    bk_perm_reader_t rd;

    if (st_store_read_record(tx->cfg.store, req->commit_log_offset, buf) != RMQ_OK ||
        rmq_record_decode(evbuffer_pullup(buf, -1), evbuffer_get_length(buf), 0, rec) != RMQ_OK)
        return bk_result_set(r, BK_TRANSACTION_FAILED, "no half message at commit-log offset %" PRId64,
                             req->commit_log_offset), 0;
    group = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_PRODUCER_GROUP, &glen);
    if (rec->topic_len != strlen(BK_TX_HALF_TOPIC) || memcmp(rec->topic, BK_TX_HALF_TOPIC, rec->topic_len) != 0 ||
        !group || glen != strlen(req->producer_group) || memcmp(group, req->producer_group, glen) != 0)
        return bk_result_set(r, BK_BAD_REQUEST, "the message at %" PRId64 " is not a half message of producer "
                             "group %.100s", req->commit_log_offset, req->producer_group), 0;
    topic = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_REAL_TOPIC, &tlen);
    return bk_reader_check(bk_perm_reader_init(&rd, req->who, BK_OP_END_TRANSACTION), topic ? topic : "",
                           topic ? tlen : 0, r);
}

/* Commits half record rec: stores it under its real topic, then its op
 * record; like bk_tx_end. A half that can never be delivered is dropped. */
static int end_commit(bk_tx_t *tx, const bk_tx_end_req_t *req, const rmq_record_t *rec, bk_append_out_t *out,
                      bk_append_fn cb, void *arg)
{
    st_msg_t m;
    bk_result_t r;
    int now;

    if (!commit_msg(tx, rec, &m, &r)) {
        memset(out, 0, sizeof(*out));
        bk_result_set(&out->r, r.status, "commit: %s", r.why);
        if (r.status != BK_SYSTEM_ERROR) {      /* never deliverable: dropped, not checked back */
            LOG_WARN("transaction: half message at %" PRId64 " dropped at commit: %s", req->commit_log_offset, r.why);
            op_put(tx, req->commit_log_offset, NULL, NULL, NULL);
        }
        return 1;
    }
    now = bk_append_put(tx->cfg.append, &m, 1, out, cb, arg);   /* answered once durable */
    if (out->stored)
        op_put(tx, req->commit_log_offset, NULL, NULL, NULL);
    return now;
}

/* Tells the counters half record rec was committed or rolled back, under
 * its real topic. */
static void tx_ended(bk_tx_t *tx, const rmq_record_t *rec, int commit)
{
    size_t len = 0;
    char topic[RMQ_TOPIC_MAX + 1];
    const char *t = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_REAL_TOPIC, &len);
    snprintf(topic, sizeof(topic), "%.*s", t ? (int)len : 0, t ? t : "");
    bk_counts_tx_ended(tx->cfg.counts, topic, commit);
}

int bk_tx_end(bk_tx_t *tx, const bk_tx_end_req_t *req, bk_append_out_t *out, bk_append_fn cb, void *arg)
{
    struct evbuffer *buf = evbuffer_new();
    rmq_record_t rec;
    int now = 1;

    memset(out, 0, sizeof(*out));
    if (!buf) {
        bk_result_set(&out->r, BK_SYSTEM_ERROR, "out of memory");
        return 1;
    }
    if (!bk_append_writable(tx->cfg.append, &out->r) || !end_half(tx, req, buf, &rec, &out->r))
        goto out;
    if (is_done(tx, req->commit_log_offset) || req->state == BK_TX_UNKNOWN)
        goto out;
    if (req->state == BK_TX_COMMIT)
        now = end_commit(tx, req, &rec, out, cb, arg);
    else if (req->state == BK_TX_ROLLBACK)
        now = op_put(tx, req->commit_log_offset, out, cb, arg);   /* answered once durable */
    else {
        bk_result_set(&out->r, BK_BAD_REQUEST, "END_TRANSACTION: unknown state %d", req->state);
        goto out;
    }
    if (out->stored) {
        LOG_INFO("transaction: half message %s at %" PRId64 " %s%s", req->msg_id ? req->msg_id : "",
                 req->commit_log_offset, req->state == BK_TX_COMMIT ? "committed" : "rolled back",
                 req->from_check ? " (check-back)" : "");
        tx_ended(tx, &rec, req->state == BK_TX_COMMIT);
    }
out:
    evbuffer_free(buf);
    return now;
}

/* ---- lifetime ------------------------------------------------------------------------------- */

bk_tx_t *bk_tx_new(const bk_tx_config_t *cfg)
{
    bk_tx_t *tx = calloc(1, sizeof(*tx));
    int64_t ms = cfg->check_interval_ms;
    struct timeval tv = {ms / 1000, (ms % 1000) * 1000};

    if (!tx)
        return NULL;
    tx->cfg = *cfg;
    tx->pairs = bk_map_new();
    tx->groups = bk_map_new();
    if (!tx->pairs || !tx->groups)
        goto err;
    read_queue(tx, BK_TX_OP_TOPIC, st_store_min_offset(cfg->store, BK_TX_OP_TOPIC, 0), load_op, NULL);
    tx->scan_from = st_store_min_offset(cfg->store, BK_TX_HALF_TOPIC, 0);
    tx->timer = event_new(cfg->base, -1, EV_PERSIST, check_tick, tx);
    if (!tx->timer || event_add(tx->timer, &tv) != 0)
        goto err;
    return tx;
err:
    bk_tx_free(tx);
    return NULL;
}

void bk_tx_free(bk_tx_t *tx)
{
    if (!tx)
        return;
    if (tx->timer)
        event_free(tx->timer);
    if (tx->pairs && tx->groups)
        prods_remove_where(tx, match_any, NULL);
    bk_map_free(tx->pairs, NULL);
    bk_map_free(tx->groups, pgroup_free);
    free(tx->slots);
    bk_props_buf_free(&tx->pb);
    bk_props_buf_free(&tx->cpb);
    free(tx);
}
