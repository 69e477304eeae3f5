/* bk_pop.c: pop consumption on neutral requests (see bk_pop.h): the
 * per-queue pop state (cursor, committed offset, in-flight entries sorted by
 * offset) in a map keyed by group, topic and queue; the receipt handle
 * format; the one deadline timer that revives expired entries through the
 * send-back path (FIFO queues are never revived: their entries are
 * delivered again in place); pops that found nothing, held in bk_hold.c
 * under "topic@-1" (any queue of the topic). */
#include "bk_pop.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_hold.h"
#include "bk_map.h"
#include "rmq_fmt.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_subexpr.h"
#include "rmq_time.h"

#define POP_MAX_TAGS 64
#define POP_RESEND_MS 1000            /* a failed revive is tried again after this */
#define HANDLE_FIELDS 8

/* One in-flight message. */
typedef struct entry {
    int64_t offset;                  /* queue offset */
    int64_t phys;                    /* commit-log offset */
    int64_t pop_time;                /* the handle's generation */
    int64_t first_pop_time;
    int64_t deadline;                /* wall ms: visible again (revived) from here on */
    const bk_session_t *owner;       /* NULL once released */
    int32_t attempts;                /* FIFO: deliveries so far */
    int sending;                     /* its revive or DLQ copy is being stored */
} entry_t;

/* The pop state of one (group, topic, queue). */
typedef struct pq {
    char *group;
    char *topic;                     /* the queue's topic (a pop retry topic included) */
    char *pop_topic;                 /* the topic consumers pop (the retry topic's origin) */
    int32_t queue_id;
    int64_t cursor;                  /* next offset to pop */
    int64_t committed;               /* last stored committed offset (-1: none) */
    int order;                       /* popped FIFO: entries are delivered again, never revived */
    char attempt_id[BK_POP_ATTEMPT_MAX + 1]; /* FIFO: the attempt that got the batch in flight */
    entry_t *e;                      /* in flight, by ascending offset */
    size_t n, cap;
} pq_t;

/* A revive or DLQ copy under way (a node of the pop's list, so bk_pop_free
 * can detach it). */
typedef struct send_ctx {
    struct send_ctx *prev, *next;
    bk_pop_t *p;                     /* NULL once the pop is freed */
    pq_t *q;
    int64_t offset;
    int64_t pop_time;
} send_ctx_t;

struct bk_pop {
    bk_pop_config_t cfg;
    bk_map_t *queues;                /* "group\ntopic\nqueue" -> pq_t */
    struct event *timer;
    int64_t armed;                   /* wall ms the timer fires at (0: not armed) */
    struct evbuffer *scratch;        /* a queue's read */
    send_ctx_t *sending;
    size_t inflight;
    bk_hold_t *hold;                 /* pops waiting for messages */
    char broker[BK_POP_BROKER_MAX + 1];   /* cfg.broker_name as handles name it */
    int stopping;
};

/* A held pop: its request (strings owned) and the front's ctx. */
typedef struct parked {
    bk_pop_req_t req;
    char *strs;                      /* group, topic, expression, attempt id, NUL-separated */
    void *ctx;
} parked_t;

typedef struct pop_filter {
    st_tag_filter_t f;
    int64_t codes[POP_MAX_TAGS];
    const char *tags[POP_MAX_TAGS];
    size_t lens[POP_MAX_TAGS];
} pop_filter_t;

/* ---- receipt handles ---- */

/* Parses a decimal int64 of s[0..len) (an optional '-'); -1 if not one. */
static int parse_i64(const char *s, size_t len, int64_t *v)
{
    size_t i = s && len && s[0] == '-' ? 1 : 0;
    if (!s || len == i || len > 20)
        return -1;
    char buf[24];
    memcpy(buf, s, len);
    buf[len] = '\0';
    for (size_t k = i; k < len; k++)
        if (buf[k] < '0' || buf[k] > '9')
            return -1;
    return rmq_parse_i64(buf, v);
}

/* Fills field i of h from f[0..len); -1 when it is no valid value. */
static int handle_field(bk_pop_handle_t *h, int i, const char *f, size_t len)
{
    int64_t v = 0;
    if (i == 5) {
        if (len == 0 || len > BK_POP_BROKER_MAX)
            return -1;
        for (size_t k = 0; k < len; k++)
            if ((unsigned char)f[k] <= ' ' || f[k] == 0x7f)
                return -1;
        memcpy(h->broker, f, len);
        h->broker[len] = '\0';
        return 0;
    }
    if (parse_i64(f, len, &v) != 0)
        return -1;
    switch (i) {
    case 0: h->ck_offset = v; return 0;
    case 1: h->pop_time = v; return v >= 0 ? 0 : -1;
    case 2: h->invisible_ms = v; return v >= 0 ? 0 : -1;
    case 3: h->revive_qid = (int32_t)v; return v >= INT32_MIN && v <= INT32_MAX ? 0 : -1;
    case 4: h->type = (int32_t)v; return v == 0 || v == 1 ? 0 : -1;
    case 6: h->queue_id = (int32_t)v; return v >= 0 && v <= INT32_MAX ? 0 : -1;
    case 7: h->queue_offset = v; return v >= 0 ? 0 : -1;
    default: return 0;               /* the proxy's commit-log offset: checked as a number only */
    }
}

rmq_err_t bk_pop_handle_parse(const char *s, size_t len, bk_pop_handle_t *h)
{
    memset(h, 0, sizeof(*h));
    int i = 0;
    size_t start = 0;
    for (size_t k = 0; k <= len; k++) {
        if (k < len && s[k] != ' ')
            continue;
        if (i > HANDLE_FIELDS || handle_field(h, i, s + start, k - start) != 0)
            return RMQ_EINVAL;
        i++;
        start = k + 1;
    }
    return i == HANDLE_FIELDS || i == HANDLE_FIELDS + 1 ? RMQ_OK : RMQ_EINVAL;
}

size_t bk_pop_handle_format(const bk_pop_handle_t *h, char *buf, size_t cap)
{
    const int64_t before_broker[] = {h->ck_offset, h->pop_time, h->invisible_ms, h->revive_qid, h->type};
    rmq_join_t j;
    rmq_join_init(&j, buf, cap);
    for (size_t i = 0; i < sizeof(before_broker) / sizeof(before_broker[0]); i++) {
        rmq_join_i64(&j, before_broker[i]);
        rmq_join_char(&j, ' ');
    }
    rmq_join_str(&j, h->broker);
    rmq_join_char(&j, ' ');
    rmq_join_i64(&j, h->queue_id);
    rmq_join_char(&j, ' ');
    rmq_join_i64(&j, h->queue_offset);
    return rmq_join_end(&j);
}

/* ---- per-queue state ---- */

static size_t pq_key(char *buf, size_t cap, const char *group, const char *topic, int32_t queue_id)
{
    rmq_join_t j;
    rmq_join_init(&j, buf, cap);
    rmq_join_str(&j, group);
    rmq_join_char(&j, '\n');
    rmq_join_str(&j, topic);
    rmq_join_char(&j, '\n');
    rmq_join_i64(&j, queue_id);
    return rmq_join_end(&j);
}

static void pq_free(void *val)
{
    pq_t *q = val;
    free(q->group);
    free(q->topic);
    free(q->pop_topic);
    free(q->e);
    free(q);
}

/* Where a queue new to the pop state starts: the committed offset, else
 * RocketMQ's ConsumeInitMode.MAX (the last message; the first of a queue
 * that still holds its offset 0; a retry topic's min offset). */
static int64_t pq_start(bk_pop_t *p, const pq_t *q, int retry)
{
    int64_t min = st_store_min_offset(p->cfg.store, q->topic, q->queue_id);
    int64_t max = st_store_max_offset(p->cfg.store, q->topic, q->queue_id);
    int64_t c = q->committed;
    if (c < 0)
        c = retry || min == 0 ? min : max - 1;
    return c < min ? min : c > max ? max : c;
}

/* The state of group's queue of topic (popped as pop_topic), created when
 * missing; NULL when out of memory. */
static pq_t *pq_get(bk_pop_t *p, const char *group, const char *topic, const char *pop_topic, int32_t queue_id,
                    int retry)
{
    char key[3 * 256];
    size_t kl = pq_key(key, sizeof(key), group, topic, queue_id);
    pq_t *q = kl ? bk_map_get(p->queues, key, kl) : NULL;
    if (q || !kl)
        return q;
    if (!(q = calloc(1, sizeof(*q))) || !(q->group = strdup(group)) || !(q->topic = strdup(topic)) ||
        !(q->pop_topic = strdup(pop_topic))) {
        if (q)
            pq_free(q);
        return NULL;
    }
    q->queue_id = queue_id;
    bk_offset_key_t k = {.topic = topic, .group = group, .queue_id = queue_id};
    bk_result_t r;
    if (bk_offset_query(p->cfg.offsets, &k, &q->committed, &r) != BK_OK)
        q->committed = -1;
    q->cursor = pq_start(p, q, retry);
    if (bk_map_put(p->queues, key, kl, q) != RMQ_OK) {
        pq_free(q);
        return NULL;
    }
    return q;
}

/* Stores q's committed offset (the lowest offset not finished) when it moved. */
static void pq_commit(bk_pop_t *p, pq_t *q)
{
    int64_t v = q->n ? q->e[0].offset : q->cursor;
    if (v == q->committed || p->cfg.is_slave)
        return;
    bk_offset_key_t k = {.topic = q->topic, .group = q->group, .queue_id = q->queue_id};
    bk_result_t r;
    if (bk_offset_commit(p->cfg.offsets, &k, v, &r) == BK_OK)
        q->committed = v;
}

/* Index of the entry of offset in q, or -1. */
static ssize_t pq_find(const pq_t *q, int64_t offset)
{
    size_t lo = 0, hi = q->n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (q->e[mid].offset < offset)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < q->n && q->e[lo].offset == offset ? (ssize_t)lo : -1;
}

/* Adds an entry for offset (kept sorted); NULL when out of memory. */
static entry_t *pq_add(bk_pop_t *p, pq_t *q, int64_t offset)
{
    if (q->n == q->cap) {
        size_t cap = q->cap ? q->cap * 2 : 16;
        entry_t *e = realloc(q->e, cap * sizeof(*e));
        if (!e)
            return NULL;
        q->e = e;
        q->cap = cap;
    }
    size_t i = q->n;
    while (i > 0 && q->e[i - 1].offset > offset)
        i--;
    memmove(q->e + i + 1, q->e + i, (q->n - i) * sizeof(*q->e));
    q->n++;
    p->inflight++;
    memset(&q->e[i], 0, sizeof(q->e[i]));
    q->e[i].offset = offset;
    return &q->e[i];
}

/* Finishes entry i of q (acked, revived or sent to the DLQ). */
static void pq_finish(bk_pop_t *p, pq_t *q, size_t i)
{
    memmove(q->e + i, q->e + i + 1, (q->n - i - 1) * sizeof(*q->e));
    q->n--;
    p->inflight--;
    pq_commit(p, q);
}

/* ---- the deadline timer and revive ---- */

static void pop_arm_at(bk_pop_t *p, int64_t deadline)
{
    if (p->armed && p->armed <= deadline)
        return;
    int64_t wait = deadline - rmq_wall_ms();
    struct timeval tv = {.tv_sec = wait > 0 ? wait / 1000 : 0, .tv_usec = wait > 0 ? (wait % 1000) * 1000 : 0};
    evtimer_add(p->timer, &tv);
    p->armed = deadline;
}

/* Outcome of an entry's copy: finished when stored, else tried again later. */
static void send_done(bk_pop_t *p, pq_t *q, int64_t offset, int64_t pop_time, const bk_append_out_t *out)
{
    ssize_t i = pq_find(q, offset);
    if (i < 0 || q->e[i].pop_time != pop_time || !q->e[i].sending)
        return;
    if (out->r.status == BK_OK) {
        pq_finish(p, q, (size_t)i);
        return;
    }
    LOG_WARN_RL("pop of %s by %s: cannot re-store queue %d offset %" PRId64 " (%s); again in %d ms", q->topic,
                q->group, q->queue_id, offset, out->r.why, POP_RESEND_MS);
    q->e[i].sending = 0;
    q->e[i].deadline = rmq_wall_ms() + POP_RESEND_MS;
    pop_arm_at(p, q->e[i].deadline);
}

static void send_unlink(bk_pop_t *p, send_ctx_t *sc)
{
    if (sc->prev)
        sc->prev->next = sc->next;
    else if (p)
        p->sending = sc->next;
    if (sc->next)
        sc->next->prev = sc->prev;
}

/* bk_append_fn of a pending copy. */
static void send_cb(const bk_append_out_t *out, void *arg)
{
    send_ctx_t *sc = arg;
    if (sc->p) {
        send_unlink(sc->p, sc);
        send_done(sc->p, sc->q, sc->offset, sc->pop_time, out);
    }
    free(sc);
}

/* Copies entry i of q to the pop retry topic, or to the DLQ (dlq); the
 * entry is finished once the copy is stored. */
static void entry_send(bk_pop_t *p, pq_t *q, size_t i, int dlq)
{
    entry_t *e = &q->e[i];
    send_ctx_t *sc = calloc(1, sizeof(*sc));
    if (!sc) {
        e->deadline = rmq_wall_ms() + POP_RESEND_MS;
        return pop_arm_at(p, e->deadline);
    }
    *sc = (send_ctx_t){.p = p, .q = q, .offset = e->offset, .pop_time = e->pop_time, .next = p->sending};
    if (p->sending)
        p->sending->prev = sc;
    p->sending = sc;
    e->sending = 1;
    bk_sendback_req_t sr = {.group = q->group, .offset = e->phys, .delay_level = dlq ? -1 : 0,
                            .origin_topic = "", .origin_msg_id = "", .pop_topic = q->pop_topic,
                            .first_pop_time = e->first_pop_time};
    bk_append_out_t out;
    if (bk_sendback_run(p->cfg.sendback, &sr, &out, send_cb, sc))
        send_cb(&out, sc);
}

/* Timer: revives every expired entry, then re-arms for the next deadline. */
static void pop_timer(evutil_socket_t fd, short what, void *arg)
{
    (void)fd;
    (void)what;
    bk_pop_t *p = arg;
    int64_t now = rmq_wall_ms(), next = INT64_MAX;
    size_t cur = 0;
    const char *key;
    void *val;
    p->armed = 0;
    while (bk_map_next(p->queues, &cur, &key, &val)) {
        pq_t *q = val;
        for (size_t i = q->n; i-- > 0 && !q->order;) {
            if (q->e[i].sending)
                continue;
            if (q->e[i].deadline <= now)
                entry_send(p, q, i, 0);
            else if (q->e[i].deadline < next)
                next = q->e[i].deadline;
        }
    }
    if (next != INT64_MAX)
        pop_arm_at(p, next);
}

/* ---- pop ---- */

static rmq_err_t filter_add(const char *tag, size_t len, void *arg)
{
    pop_filter_t *pf = arg;
    if (pf->f.n_codes == POP_MAX_TAGS)
        return RMQ_EINVAL;
    pf->tags[pf->f.n_codes] = tag;
    pf->lens[pf->f.n_codes] = len;
    pf->codes[pf->f.n_codes++] = st_tag_hash(tag, len);
    return RMQ_OK;
}

/* The record's tag re-checked by name (the store filters by hash only). */
static int filter_match(const pop_filter_t *pf, const rmq_record_t *rec)
{
    if (pf->f.match_all)
        return 1;
    size_t vl = 0;
    const char *tag = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_TAGS, &vl);
    for (size_t i = 0; tag && i < pf->f.n_codes; i++)
        if (pf->lens[i] == vl && memcmp(pf->tags[i], tag, vl) == 0)
            return 1;
    return 0;
}

/* Adds record rec (raw: its bytes) of q's entry e to out, with its handle. */
static void deliver(bk_pop_t *p, const pq_t *q, const entry_t *e, const rmq_record_t *rec, const uint8_t *raw,
                    int retry, bk_pop_out_t *out)
{
    bk_pop_msg_t *m = &out->msgs[out->n++];
    bk_pop_handle_t h = {.ck_offset = rec->queue_offset, .pop_time = e->pop_time,
                         .invisible_ms = e->deadline - e->pop_time, .type = retry, .queue_id = q->queue_id,
                         .queue_offset = rec->queue_offset};
    memcpy(h.broker, p->broker, sizeof(h.broker));
    *m = (bk_pop_msg_t){.phys_offset = rec->phys_offset, .queue_id = q->queue_id, .queue_offset = rec->queue_offset,
                        .retry = retry, .attempt = rec->reconsume_times + e->attempts};
    bk_pop_handle_format(&h, m->handle, sizeof(m->handle));
    evbuffer_add(out->body, raw, rec->total_size);
}

/* Takes the records read from q into out (at most want): each matching one
 * becomes an in-flight entry, delivered or sent to the DLQ. */
static void pop_take(bk_pop_t *p, pq_t *q, const bk_pop_req_t *req, const bk_group_t *g, const pop_filter_t *pf,
                     bk_pop_out_t *out, int retry)
{
    size_t len = evbuffer_get_length(p->scratch), pos = 0;
    const uint8_t *d = evbuffer_pullup(p->scratch, -1);
    rmq_record_t rec;
    while (pos < len && rmq_record_decode(d + pos, len - pos, 0, &rec) == RMQ_OK) {
        const uint8_t *raw = d + pos;
        pos += rec.total_size;
        if (!filter_match(pf, &rec) || pq_find(q, rec.queue_offset) >= 0)
            continue;
        entry_t *e = pq_add(p, q, rec.queue_offset);
        if (!e)
            break;
        size_t vl = 0;
        const char *first = rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_FIRST_POP_TIME, &vl);
        int64_t fp = 0;
        *e = (entry_t){.offset = rec.queue_offset, .phys = rec.phys_offset, .pop_time = out->pop_time,
                       .first_pop_time = first && parse_i64(first, vl, &fp) == 0 ? fp : out->pop_time,
                       .deadline = out->pop_time + out->invisible_ms, .owner = req->ss};
        if (rec.reconsume_times >= g->retry_max_times) {
            entry_send(p, q, (size_t)(e - q->e), 1);
            continue;
        }
        e->attempts = 1;
        deliver(p, q, e, &rec, raw, retry, out);
    }
}

/* Pops up to want messages from one queue of topic into out. */
static void pop_queue(bk_pop_t *p, const bk_pop_req_t *req, const bk_group_t *g, const char *topic, int retry,
                      int32_t queue_id, const pop_filter_t *pf, size_t want, bk_pop_out_t *out)
{
    pq_t *q = pq_get(p, req->group, topic, req->topic, queue_id, retry);
    if (!q)
        return;
    st_get_result_t res;
    evbuffer_drain(p->scratch, evbuffer_get_length(p->scratch));
    st_store_get(p->cfg.store, topic, queue_id, q->cursor, (int32_t)want, p->cfg.max_transfer_bytes, &pf->f,
                 p->scratch, &res);
    switch (res.status) {
    case ST_GET_FOUND:
        pop_take(p, q, req, g, pf, out, retry);
        q->cursor = res.next_begin_offset;
        break;
    case ST_GET_NO_MATCHED_MESSAGE:
        q->cursor = res.next_begin_offset;
        break;
    case ST_GET_OFFSET_TOO_SMALL:
        q->cursor = res.min_offset;
        break;
    case ST_GET_OFFSET_OVERFLOW_BADLY:
        q->cursor = res.max_offset;
        break;
    default:
        break;
    }
    pq_commit(p, q);
}

/* Pops topic's readable queues from a random start until out holds want. */
static void pop_topic(bk_pop_t *p, const bk_pop_req_t *req, const bk_group_t *g, const bk_topic_t *t, int retry,
                      const pop_filter_t *pf, size_t want, bk_pop_out_t *out)
{
    int32_t n = t->read_queues, start = n > 0 ? rand() % n : 0;
    for (int32_t i = 0; i < n && out->n < want; i++)
        pop_queue(p, req, g, t->name, retry, (start + i) % n, pf, want - out->n, out);
}

/* 1 while a message of q's batch in flight is unacked and invisible. */
static int fifo_blocked(const pq_t *q, int64_t now)
{
    for (size_t i = 0; i < q->n; i++)
        if (q->e[i].deadline > now)
            return 1;
    return 0;
}

/* Delivers q's batch in flight again into out: renewed (new pop time,
 * invisible time and owner, one more attempt) or as it was (the same
 * attempt asking again). */
static void fifo_again(bk_pop_t *p, pq_t *q, const bk_pop_req_t *req, int renew, bk_pop_out_t *out)
{
    st_tag_filter_t all = {.match_all = 1};
    st_get_result_t res;
    int64_t first = q->e[0].offset, span = q->e[q->n - 1].offset - first + 1;
    evbuffer_drain(p->scratch, evbuffer_get_length(p->scratch));
    st_store_get(p->cfg.store, q->topic, q->queue_id, first, span > INT32_MAX ? INT32_MAX : (int32_t)span,
                 INT64_MAX, &all, p->scratch, &res);
    size_t len = evbuffer_get_length(p->scratch), pos = 0;
    const uint8_t *d = evbuffer_pullup(p->scratch, -1);
    rmq_record_t rec;
    if (!renew)
        out->pop_time = q->e[0].pop_time;
    while (pos < len && rmq_record_decode(d + pos, len - pos, 0, &rec) == RMQ_OK) {
        const uint8_t *raw = d + pos;
        pos += rec.total_size;
        ssize_t i = pq_find(q, rec.queue_offset);
        if (i < 0)
            continue;
        entry_t *e = &q->e[i];
        if (renew) {
            e->pop_time = out->pop_time;
            e->deadline = out->pop_time + out->invisible_ms;
            e->owner = req->ss;
            e->attempts++;
        }
        deliver(p, q, e, &rec, raw, 0, out);
    }
}

/* A FIFO pop of req->queue_id into out (msgs sized for the batch). */
static void pop_fifo(bk_pop_t *p, const bk_pop_req_t *req, pq_t *q, const bk_group_t *g, const pop_filter_t *pf,
                     size_t want, bk_pop_out_t *out)
{
    const char *attempt = req->attempt_id ? req->attempt_id : "";
    q->order = 1;
    if (q->n && fifo_blocked(q, out->pop_time)) {
        if (attempt[0] && strcmp(attempt, q->attempt_id) == 0)
            fifo_again(p, q, req, 0, out);
        return;
    }
    snprintf(q->attempt_id, sizeof(q->attempt_id), "%s", attempt);
    if (q->n) {
        fifo_again(p, q, req, 1, out);
        return;
    }
    pop_queue(p, req, g, q->topic, 0, q->queue_id, pf, want, out);
}

/* Messages left to pop on topic t's queues for req's group. */
static int64_t pop_rest(bk_pop_t *p, const bk_pop_req_t *req, const bk_topic_t *t)
{
    int64_t rest = 0;
    for (int32_t i = 0; i < t->read_queues; i++) {
        pq_t *q = pq_get(p, req->group, t->name, req->topic, i, 0);
        int64_t max = st_store_max_offset(p->cfg.store, t->name, i);
        if (q && max > q->cursor)
            rest += max - q->cursor;
    }
    return rest;
}

/* Checks broker, names, group, topic and the request; the group (and *topic),
 * or NULL with r set. */
static const bk_group_t *pop_check(bk_pop_t *p, const bk_pop_req_t *req, const bk_topic_t **topic, bk_result_t *r)
{
    const char *why;
    if (p->cfg.is_slave)
        return bk_result_set(r, BK_NOT_MASTER, "POP_MESSAGE: broker %s is a slave; pop from its master",
                             p->cfg.addr), NULL;
    if (!(p->cfg.permission & BK_PERM_READ))
        return bk_result_set(r, BK_NO_PERMISSION, "broker %s is not readable", p->cfg.addr), NULL;
    if (!rmq_name_is_valid(req->topic, strlen(req->topic), &why))
        return bk_result_set(r, BK_NAME_ILLEGAL, "POP_MESSAGE: topic '%.100s' %s", req->topic, why), NULL;
    if (!rmq_name_is_valid(req->group, strlen(req->group), &why))
        return bk_result_set(r, BK_NAME_ILLEGAL, "POP_MESSAGE: consumer group '%.100s' %s", req->group, why), NULL;
    if (req->max_msgs < 1 || req->invisible_ms < 1)
        return bk_result_set(r, BK_BAD_REQUEST, "POP_MESSAGE: maxMsgNums %d and invisibleTime %" PRId64
                             " must be positive", req->max_msgs, req->invisible_ms), NULL;
    const bk_group_t *g = bk_groups_use(p->cfg.groups, req->group, strlen(req->group));
    if (!g)
        return bk_result_set(r, BK_GROUP_NOT_EXIST, "subscription group %.100s does not exist on broker %s",
                             req->group, p->cfg.addr), NULL;
    if (!g->consume_enable)
        return bk_result_set(r, BK_NO_PERMISSION, "group %.100s may not consume", req->group), NULL;
    *topic = bk_topics_get(p->cfg.topics, req->topic, strlen(req->topic));
    if (!*topic)
        return bk_result_set(r, BK_TOPIC_NOT_EXIST, "topic %.100s does not exist on broker %s", req->topic,
                             p->cfg.addr), NULL;
    if (!((*topic)->perm & BK_PERM_READ))
        return bk_result_set(r, BK_NO_PERMISSION, "topic %.100s is not readable", req->topic), NULL;
    if (req->order && (req->queue_id < 0 || req->queue_id >= (*topic)->read_queues))
        return bk_result_set(r, BK_BAD_REQUEST, "POP_MESSAGE: FIFO pop of queue %d: topic %.100s has %d read queues",
                             req->queue_id, req->topic, (*topic)->read_queues), NULL;
    if (req->attempt_id && strlen(req->attempt_id) > BK_POP_ATTEMPT_MAX)
        return bk_result_set(r, BK_BAD_REQUEST, "POP_MESSAGE: attemptId longer than %d bytes", BK_POP_ATTEMPT_MAX),
               NULL;
    return g;
}

/* The group's pop retry topic of req, or NULL when it does not exist yet. */
static const bk_topic_t *pop_retry_topic(bk_pop_t *p, const char *group, const char *topic)
{
    char name[sizeof(((bk_topic_t *)0)->name)];
    size_t n = rmq_group_topic_name(name, sizeof(name), RMQ_RETRY_PREFIX, group, topic);
    if (n == 0)
        return NULL;
    const bk_topic_t *t = bk_topics_get(p->cfg.topics, name, n);
    return t && (t->perm & BK_PERM_READ) ? t : NULL;
}

/* Copies req into a parked pop (strings owned); NULL when out of memory. */
static parked_t *park_new(const bk_pop_req_t *req, void *ctx)
{
    const char *expr = req->expression ? req->expression : "*";
    const char *attempt = req->attempt_id ? req->attempt_id : "";
    size_t gl = strlen(req->group) + 1, tl = strlen(req->topic) + 1, el = strlen(expr) + 1, al = strlen(attempt) + 1;
    parked_t *pk = malloc(sizeof(*pk));
    char *strs = malloc(gl + tl + el + al);
    if (!pk || !strs) {
        free(pk);
        free(strs);
        return NULL;
    }
    pk->req = *req;
    pk->strs = strs;
    pk->req.group = memcpy(strs, req->group, gl);
    pk->req.topic = memcpy(strs + gl, req->topic, tl);
    pk->req.expression = memcpy(strs + gl + tl, expr, el);
    pk->req.attempt_id = memcpy(strs + gl + tl + el, attempt, al);
    pk->ctx = ctx;
    return pk;
}

static void park_free(parked_t *pk)
{
    free(pk->strs);
    free(pk);
}

/* Holds req (first execution, nothing found, a poll time); 1 when held. */
static int pop_hold(bk_pop_t *p, const bk_pop_req_t *req, const pop_filter_t *pf, void *ctx)
{
    if (p->stopping || req->poll_ms <= 0 || !req->ss || !req->answer || !req->ctx_free)
        return 0;
    parked_t *pk = park_new(req, ctx);
    if (!pk)
        return 0;
    if (bk_hold_add(p->hold, req->ss, pk, req->topic, -1, -1, &pf->f, rmq_mono_ms() + req->poll_ms) != RMQ_OK) {
        park_free(pk);
        return 0;
    }
    return 1;
}

/* Executes a pop; first (not a release from the hold) may hold it when
 * nothing is there. 1 answered in out, 0 held. */
static int pop_execute(bk_pop_t *p, const bk_pop_req_t *req, void *ctx, int first, bk_pop_out_t *out)
{
    memset(out, 0, sizeof(*out));
    const bk_topic_t *topic = NULL;
    const bk_group_t *g = pop_check(p, req, &topic, &out->r);
    if (!g)
        return 1;
    pop_filter_t pf;
    memset(&pf, 0, sizeof(pf));
    pf.f.codes = pf.codes;
    if (rmq_subexpr_parse(req->expression, &pf.f.match_all, filter_add, &pf) != RMQ_OK)
        return bk_result_set(&out->r, BK_SUBSCRIPTION_PARSE_FAILED,
                             "cannot parse expression '%.100s' (want * or TagA || TagB, at most %d tags)",
                             req->expression, POP_MAX_TAGS), 1;
    size_t want = (size_t)req->max_msgs;
    if (p->cfg.max_transfer_count > 0 && want > (size_t)p->cfg.max_transfer_count)
        want = (size_t)p->cfg.max_transfer_count;
    pq_t *fq = req->order ? pq_get(p, req->group, req->topic, req->topic, req->queue_id, 0) : NULL;
    if (req->order && !fq)
        return bk_result_set(&out->r, BK_SYSTEM_ERROR, "out of memory"), 1;
    size_t cap = fq && fq->n > want ? fq->n : want;
    if (!(out->msgs = calloc(cap, sizeof(*out->msgs))) || !(out->body = evbuffer_new()))
        return bk_pop_out_clear(out), bk_result_set(&out->r, BK_SYSTEM_ERROR, "out of memory"), 1;
    out->pop_time = rmq_wall_ms();
    out->invisible_ms = req->invisible_ms;
    if (fq) {
        pop_fifo(p, req, fq, g, &pf, want, out);
    } else {
        const bk_topic_t *rt = pop_retry_topic(p, req->group, req->topic);
        int retry_first = rt && rand() % 100 < p->cfg.retry_percent;
        if (retry_first)
            pop_topic(p, req, g, rt, 1, &pf, want, out);
        pop_topic(p, req, g, topic, 0, &pf, want, out);
        if (!retry_first && rt)
            pop_topic(p, req, g, rt, 1, &pf, want, out);
    }
    out->rest = pop_rest(p, req, topic);
    if (out->n && !fq)
        pop_arm_at(p, out->pop_time + out->invisible_ms);
    else if (!out->n && first && !(fq && fq->n) && pop_hold(p, req, &pf, ctx))
        return bk_pop_out_clear(out), 0;
    bk_counts_delivered(p->cfg.counts, req->group, req->topic, (int64_t)out->n, (int64_t)evbuffer_get_length(out->body));
    return 1;
}

int bk_pop_run(bk_pop_t *p, const bk_pop_req_t *req, void *ctx, bk_pop_out_t *out)
{
    return pop_execute(p, req, ctx, 1, out);
}

/* Hold callback: a message arrived or the poll time passed; answer now. */
static void pop_released(void *parked, int expired, void *arg)
{
    (void)expired;
    bk_pop_t *p = arg;
    parked_t *pk = parked;
    bk_pop_out_t out;
    if (pk->req.gone && pk->req.gone(pk->ctx))
        return;
    pop_execute(p, &pk->req, pk->ctx, 0, &out);
    pk->req.answer(&pk->req, &out, pk->ctx);
    bk_pop_out_clear(&out);
}

/* Hold drop: frees a held pop and its ctx. */
static void pop_dropped(void *parked, void *arg)
{
    (void)arg;
    parked_t *pk = parked;
    pk->req.ctx_free(pk->ctx);
    park_free(pk);
}

void bk_pop_out_clear(bk_pop_out_t *out)
{
    if (out->body)
        evbuffer_free(out->body);
    free(out->msgs);
    out->body = NULL;
    out->msgs = NULL;
    out->n = 0;
}

/* ---- ack, change invisible, release ---- */

/* The in-flight entry h names for group on topic (*qp its queue), or -1
 * with r set (INVALID_RECEIPT_HANDLE). */
static ssize_t handle_entry(bk_pop_t *p, const char *group, const char *topic_in, const bk_pop_handle_t *h, pq_t **qp,
                            bk_result_t *r)
{
    char topic[sizeof(((bk_topic_t *)0)->name)], key[3 * 256];
    int as_retry = h->type == 1 && strncmp(topic_in, RMQ_RETRY_PREFIX, strlen(RMQ_RETRY_PREFIX)) != 0;
    if (as_retry)
        rmq_group_topic_name(topic, sizeof(topic), RMQ_RETRY_PREFIX, group, topic_in);
    const char *name = as_retry ? topic : topic_in;
    size_t kl = pq_key(key, sizeof(key), group, name, h->queue_id);
    pq_t *q = kl ? bk_map_get(p->queues, key, kl) : NULL;
    ssize_t i = q ? pq_find(q, h->queue_offset) : -1;
    if (i < 0)
        return bk_result_set(r, BK_BAD_REQUEST, "INVALID_RECEIPT_HANDLE: %.100s queue %d offset %" PRId64
                             " is not in flight for %.100s (acked, revived or never popped)", name, h->queue_id,
                             h->queue_offset, group), -1;
    const entry_t *e = &q->e[i];
    if (e->pop_time != h->pop_time)
        return bk_result_set(r, BK_BAD_REQUEST, "INVALID_RECEIPT_HANDLE: stale handle of %.100s queue %d offset %"
                             PRId64 " (its invisible time was changed since)", name, h->queue_id, h->queue_offset), -1;
    if (e->sending || e->deadline <= rmq_wall_ms())
        return bk_result_set(r, BK_BAD_REQUEST, "INVALID_RECEIPT_HANDLE: expired handle of %.100s queue %d offset %"
                             PRId64, name, h->queue_id, h->queue_offset), -1;
    *qp = q;
    return i;
}

/* Parses req->handle into *h; 0, or -1 with r set. */
static int handle_parse(const bk_pop_ack_req_t *req, bk_pop_handle_t *h, bk_result_t *r)
{
    if (bk_pop_handle_parse(req->handle, strlen(req->handle), h) == RMQ_OK)
        return 0;
    bk_result_set(r, BK_BAD_REQUEST, "INVALID_RECEIPT_HANDLE: malformed receipt handle '%.80s'", req->handle);
    return -1;
}

/* The in-flight entry req's handle names: its index in *qp, *h parsed; or
 * -1 with r set (malformed, unknown, stale or expired handle). */
static ssize_t req_entry(bk_pop_t *p, const bk_pop_ack_req_t *req, bk_pop_handle_t *h, pq_t **qp, bk_result_t *r)
{
    if (handle_parse(req, h, r) != 0)
        return -1;
    return handle_entry(p, req->group, req->topic, h, qp, r);
}

bk_status_t bk_pop_ack_fields(bk_pop_t *p, const char *group, const char *topic, const bk_pop_handle_t *h,
                              bk_result_t *r)
{
    pq_t *q = NULL;
    ssize_t i = handle_entry(p, group, topic, h, &q, r);
    if (i < 0)
        return r->status;
    pq_finish(p, q, (size_t)i);
    return bk_result_ok(r);
}

bk_status_t bk_pop_ack(bk_pop_t *p, const bk_pop_ack_req_t *req, bk_result_t *r)
{
    bk_pop_handle_t h;
    if (handle_parse(req, &h, r) != 0)
        return r->status;
    return bk_pop_ack_fields(p, req->group, req->topic, &h, r);
}

bk_status_t bk_pop_change_invisible(bk_pop_t *p, const bk_pop_ack_req_t *req, int64_t invisible_ms,
                                    char *new_handle, size_t cap, int64_t *pop_time, bk_result_t *r)
{
    if (invisible_ms < 0)
        return bk_result_set(r, BK_BAD_REQUEST, "ILLEGAL_INVISIBLE_TIME: %" PRId64 " ms", invisible_ms);
    pq_t *q = NULL;
    bk_pop_handle_t h;
    ssize_t i = req_entry(p, req, &h, &q, r);
    if (i < 0)
        return r->status;
    entry_t *e = &q->e[i];
    int64_t now = rmq_wall_ms();
    e->pop_time = now > e->pop_time ? now : e->pop_time + 1;
    e->deadline = e->pop_time + invisible_ms;
    h.pop_time = e->pop_time;
    h.invisible_ms = invisible_ms;
    *pop_time = e->pop_time;
    if (!bk_pop_handle_format(&h, new_handle, cap))
        return bk_result_set(r, BK_SYSTEM_ERROR, "receipt handle longer than %zu bytes", cap);
    pop_arm_at(p, e->deadline);
    return bk_result_ok(r);
}

bk_status_t bk_pop_dead_letter(bk_pop_t *p, const bk_pop_ack_req_t *req, bk_result_t *r)
{
    pq_t *q = NULL;
    bk_pop_handle_t h;
    ssize_t i = req_entry(p, req, &h, &q, r);
    if (i < 0)
        return r->status;
    entry_send(p, q, (size_t)i, 1);
    return bk_result_ok(r);
}

/* The pop topic whose pop retry topic is topic, or NULL when topic is none
 * known to the pop state (scans the queues: retry arrivals are rare). */
static const char *pop_topic_of_retry(bk_pop_t *p, const char *topic)
{
    size_t cur = 0;
    const char *key;
    void *val;
    while (bk_map_next(p->queues, &cur, &key, &val)) {
        const pq_t *q = val;
        if (strcmp(q->topic, topic) == 0)
            return q->pop_topic;
    }
    return NULL;
}

void bk_pop_arrived(bk_pop_t *p, const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code)
{
    (void)queue_id;
    if (bk_hold_count(p->hold) == 0)
        return;
    const char *pop_topic = strncmp(topic, RMQ_RETRY_PREFIX, strlen(RMQ_RETRY_PREFIX)) == 0
                                ? pop_topic_of_retry(p, topic) : topic;
    if (pop_topic)
        bk_hold_arrived(p->hold, pop_topic, -1, max_offset, tag_code);
}

void bk_pop_session_closed(bk_pop_t *p, bk_session_t *ss)
{
    int64_t soon = rmq_wall_ms() + p->cfg.release_ms;
    size_t cur = 0;
    const char *key;
    void *val;
    bk_hold_session_closed(p->hold, ss);
    while (bk_map_next(p->queues, &cur, &key, &val)) {
        pq_t *q = val;
        for (size_t i = 0; i < q->n; i++) {
            if (q->e[i].owner != ss)
                continue;
            q->e[i].owner = NULL;
            if (q->e[i].deadline > soon)
                q->e[i].deadline = soon;
            pop_arm_at(p, q->e[i].deadline);
        }
    }
}

void bk_pop_stop(bk_pop_t *p)
{
    p->stopping = 1;
    bk_hold_release_all(p->hold);
}

size_t bk_pop_inflight(const bk_pop_t *p)
{
    return p->inflight;
}

void bk_pop_each_inflight(const bk_pop_t *p, bk_pop_inflight_fn fn, void *arg)
{
    size_t cursor = 0;
    const char *key;
    void *val;
    while (bk_map_next(p->queues, &cursor, &key, &val)) {
        const pq_t *q = val;
        if (q->n)
            fn(q->group, q->pop_topic, (int64_t)q->n, arg);
    }
}

int64_t bk_pop_pull_offset(const bk_pop_t *p, const char *group, const char *topic, int32_t queue_id,
                           int64_t consumer_offset)
{
    char key[3 * 256];
    size_t kl = pq_key(key, sizeof(key), group, topic, queue_id);
    const pq_t *q = kl ? bk_map_get(p->queues, key, kl) : NULL;
    return q && q->cursor > consumer_offset ? q->cursor : consumer_offset;
}

/* ---- life ---- */

bk_pop_t *bk_pop_new(const bk_pop_config_t *cfg)
{
    bk_pop_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->cfg = *cfg;
    snprintf(p->broker, sizeof(p->broker), "%s", cfg->broker_name);
    if (!(p->queues = bk_map_new()) || !(p->scratch = evbuffer_new()) ||
        !(p->timer = evtimer_new(cfg->base, pop_timer, p)) ||
        !(p->hold = bk_hold_new(cfg->base, pop_released, pop_dropped, p))) {
        bk_pop_free(p);
        return NULL;
    }
    return p;
}

void bk_pop_set_slave(bk_pop_t *p, int is_slave)
{
    p->cfg.is_slave = is_slave;
}

void bk_pop_free(bk_pop_t *p)
{
    if (!p)
        return;
    for (send_ctx_t *sc = p->sending; sc; sc = sc->next)
        sc->p = NULL;
    if (p->hold)
        bk_hold_free(p->hold);
    if (p->timer)
        event_free(p->timer);
    if (p->scratch)
        evbuffer_free(p->scratch);
    if (p->queues)
        bk_map_free(p->queues, pq_free);
    free(p);
}
