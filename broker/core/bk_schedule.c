/* bk_schedule.c: the delay scheduler (see bk_schedule.h for the design):
 * divert on send, per-level cursors and timers, the timer queue's heap and
 * cursor, delivery into the real topic through the append path, and the
 * progress (persisted through the front-end's codec). */
#include "bk_schedule.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_props.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_time.h"
#include "rmq_file.h"

#define DELAY_BATCH 256              /* deliveries per timer pass before yielding */
#define DELAY_READ_BATCH 64          /* records per store read while rebuilding */
#define DELAY_READ_BYTES (64ll << 20)
#define DELAY_RETRY_MS 1000          /* after a failed put or read */
#define DELAY_PERSIST_MS 100         /* progress written this soon after a change */

typedef struct sched_level {
    struct bk_schedule *s;
    int level;                       /* 1..N */
    int64_t delay_ms;
    int64_t offset;                  /* next queue offset to deliver */
    int64_t durable;                 /* persisted cursor: deliveries below it are durable */
    struct event *ev;
} sched_level_t;

/* A delivery whose copy is not yet known durable, in delivery order. A
 * durable copy proves every earlier one durable too (the log is written in
 * order, flushed and acknowledged by offset), so its success applies every
 * entry up to it. */
typedef struct sched_flight {
    struct sched_flight *next;
    struct bk_schedule *s;
    sched_level_t *lv;               /* NULL: a timer-queue entry */
    int64_t offset;                  /* level: cursor after it; timer: its queue offset */
    int64_t due;                     /* timer: its due time */
} sched_flight_t;

typedef struct timer_ent {
    int64_t due;
    int64_t off;
} timer_ent_t;

struct bk_schedule {
    bk_schedule_config_t cfg;
    int n;                           /* levels; the timer queue's id is n */
    sched_level_t *levels;
    int running;                     /* master, started */
    int loaded;                      /* progress file read: may be written */
    /* timer queue */
    timer_ent_t *heap;
    size_t hlen, hcap;
    int64_t cur_due, cur_off;        /* cursor: (due, off) <= it were delivered */
    int64_t dur_due, dur_off;        /* persisted cursor: (due, off) <= it are durable */
    int64_t lost_low;                /* lowest timer offset whose wait failed unconfirmed; INT64_MAX if none */
    sched_flight_t *fl_head, *fl_tail;
    int64_t low;                     /* loaded low-water offset */
    int64_t scanned;                 /* entries below are in the heap or delivered */
    struct event *timer_ev;
    int64_t armed_due;               /* due timer_ev is armed for; INT64_MAX if not */
    /* recalls: the keys ("<topic>+<UNIQ_KEY>") of the delete markers read
     * and not yet due, sorted (strcmp) */
    char **dels;
    size_t ndel, capdel;
    /* persistence */
    struct event *persist_ev;
    char path[4200];
    char delay_levels[1025];         /* cfg.delay_levels, copied */
    /* scratch */
    bk_props_buf_t pb;
    struct evbuffer *rd;
};

static const char *const sched_drop[] = {RMQ_PROP_DELAY, RMQ_PROP_REAL_TOPIC, RMQ_PROP_REAL_QID,
                                         RMQ_PROP_DELIVER_AT, NULL};
/* What a diverted copy drops: the above but DELAY, and RocketMQ 5's timer
 * properties, which it gets back as one absolute TIMER_DELIVER_MS. */
static const char *const divert_drop[] = {RMQ_PROP_REAL_TOPIC, RMQ_PROP_REAL_QID, RMQ_PROP_DELIVER_AT,
                                          RMQ_PROP_TIMER_DELAY_SEC, RMQ_PROP_TIMER_DELAY_MS,
                                          RMQ_PROP_TIMER_DELIVER_MS, NULL};

/* ---- levels ------------------------------------------------------------- */

int bk_schedule_parse_levels(const char *levels, int64_t *delays_ms, char *err, size_t errlen)
{
    int n = 0;
    const char *p = levels;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        if (!*p)
            break;
        char *end = NULL;
        long long v = strtoll(p, &end, 10);
        int64_t unit = 0;
        if (end != p && v > 0) {
            switch (*end) {
            case 's': unit = 1000; break;
            case 'm': unit = 60 * 1000; break;
            case 'h': unit = 3600 * 1000; break;
            case 'd': unit = 86400 * 1000; break;
            default: break;
            }
        }
        if (!unit || (end[1] && end[1] != ' ' && end[1] != '\t' && end[1] != ',') || v > 365 * 86400) {
            int tl = 0;
            while (p[tl] && p[tl] != ' ' && tl < 32)
                tl++;
            snprintf(err, errlen, "messageDelayLevel=%s: bad level '%.*s' (want a positive number with unit s, m, h or d)",
                     levels, tl, p);
            return -1;
        }
        if (n == BK_SCHEDULE_LEVELS_MAX) {
            snprintf(err, errlen, "messageDelayLevel=%s: more than %d levels", levels, BK_SCHEDULE_LEVELS_MAX);
            return -1;
        }
        delays_ms[n++] = (int64_t)v * unit;
        p = end + 1;
    }
    if (n == 0)
        snprintf(err, errlen, "messageDelayLevel=%s: needs at least one level", levels);
    return n ? n : -1;
}

int bk_schedule_levels(const bk_schedule_t *s)
{
    return s->n;
}

int64_t bk_schedule_horizon_ms(const bk_schedule_t *s)
{
    return s->cfg.horizon_ms;
}

size_t bk_schedule_timer_pending(const bk_schedule_t *s)
{
    return s->hlen;
}

/* ---- timers ------------------------------------------------------------- */

static void arm(struct event *ev, int64_t ms)
{
    if (ms < 0)
        ms = 0;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    evtimer_add(ev, &tv);
}

/* ---- persistence -------------------------------------------------------- */

/* Smallest queue offset of the timer queue that may still be pending. */
static int64_t timer_low(const bk_schedule_t *s)
{
    int64_t low = s->scanned < s->lost_low ? s->scanned : s->lost_low;
    for (size_t i = 0; i < s->hlen; i++)
        if (s->heap[i].off < low)
            low = s->heap[i].off;
    for (const sched_flight_t *f = s->fl_head; f; f = f->next)
        if (!f->lv && f->offset < low)
            low = f->offset;
    return low;
}

void bk_schedule_progress(const bk_schedule_t *s, bk_schedule_progress_t *p)
{
    memset(p, 0, sizeof(*p));
    p->n_levels = s->n;
    for (int i = 0; i < s->n; i++)
        p->offsets[i] = s->levels[i].durable;
    p->timer_due = s->dur_due;
    p->timer_offset = s->dur_off;
    p->timer_low = s->running ? timer_low(s) : s->low;
    snprintf(p->delay_levels, sizeof(p->delay_levels), "%s", s->delay_levels);
}

static void persist_now(bk_schedule_t *s)
{
    size_t len = 0;
    bk_schedule_progress_t p;
    bk_schedule_progress(s, &p);
    uint8_t *buf = s->cfg.encode(&p, &len);
    if (!buf || bk_persist_submit(s->cfg.persist, s->path, buf, len) != RMQ_OK)
        LOG_ERROR_RL("delay scheduler: cannot queue the write of %s (out of memory)", s->path);
}

static void persist_fire(evutil_socket_t fd, short what, void *arg)
{
    persist_now(arg);
}

/* Progress changed: write it soon (one write per DELAY_PERSIST_MS at most). */
static void progress_changed(bk_schedule_t *s)
{
    if (!evtimer_pending(s->persist_ev, NULL))
        arm(s->persist_ev, DELAY_PERSIST_MS);
}

/* Loads s->path (missing: start from zero). */
static rmq_err_t progress_load(bk_schedule_t *s, char *err, size_t errlen)
{
    char *data = NULL;
    size_t len = 0;
    rmq_err_t rc = rmq_file_read_all(s->path, &data, &len);
    if (rc == RMQ_ENOTFOUND)
        return RMQ_OK;
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "%s: %s", s->path, rmq_strerror(rc));
        return rc;
    }
    bk_schedule_progress_t *p = calloc(1, sizeof(*p));
    rc = p ? s->cfg.decode((const uint8_t *)data, len, p) : RMQ_ENOMEM;
    free(data);
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "%s: %s", s->path, rc == RMQ_ENOMEM ? "out of memory" : "not a valid progress file");
        free(p);
        return rc == RMQ_ENOMEM ? rc : RMQ_ECORRUPT;
    }
    for (int i = 0; i < p->n_levels && i < s->n; i++)
        if (p->offsets[i] > 0)
            s->levels[i].offset = s->levels[i].durable = p->offsets[i];
    s->cur_due = s->dur_due = p->timer_due;
    s->cur_off = s->dur_off = p->timer_offset;
    s->low = p->timer_low > 0 ? p->timer_low : 0;
    if (p->delay_levels[0] && strcmp(p->delay_levels, s->delay_levels) != 0)
        LOG_WARN("delay scheduler: %s was written with messageDelayLevel=%s, now %s: pending messages keep "
                 "their level number", s->path, p->delay_levels, s->delay_levels);
    free(p);
    return RMQ_OK;
}

void bk_schedule_merge(bk_schedule_t *s, const bk_schedule_progress_t *p)
{
    int changed = 0;
    if (!s)
        return;
    for (int i = 0; i < p->n_levels && i < s->n; i++) {
        if (p->offsets[i] > s->levels[i].offset) {
            s->levels[i].offset = s->levels[i].durable = p->offsets[i];
            changed = 1;
        }
    }
    if (p->timer_due > s->cur_due || (p->timer_due == s->cur_due && p->timer_offset > s->cur_off)) {
        s->cur_due = s->dur_due = p->timer_due;
        s->cur_off = s->dur_off = p->timer_offset;
        changed = 1;
    }
    if (p->timer_low > s->low) {
        s->low = p->timer_low;
        changed = 1;
    }
    if (changed && !s->running)
        progress_changed(s);
}

/* ---- reading and delivering ----------------------------------------------- */

/* Reads up to max records of queue q from off into s->rd. Returns the
 * store status; *next = next_begin_offset. */
static st_get_status_t sched_read(bk_schedule_t *s, int32_t q, int64_t off, int32_t max, int64_t *next)
{
    static const st_tag_filter_t all = {.match_all = 1};
    st_get_result_t res;
    evbuffer_drain(s->rd, evbuffer_get_length(s->rd));
    st_store_get(s->cfg.store, BK_SCHEDULE_TOPIC, q, off, max, DELAY_READ_BYTES, &all, s->rd, &res);
    *next = res.next_begin_offset;
    return res.status;
}

/* Decodes the first record of s->rd. RMQ_OK or an error. */
static rmq_err_t sched_first(bk_schedule_t *s, rmq_record_t *rec)
{
    size_t len = evbuffer_get_length(s->rd);
    const uint8_t *data = len ? evbuffer_pullup(s->rd, -1) : NULL;
    return data ? rmq_record_decode(data, len, 0, rec) : RMQ_ENOTFOUND;
}

/* Applies a durable flight to the persisted cursors. */
static void flight_apply(bk_schedule_t *s, const sched_flight_t *f)
{
    if (f->lv) {
        if (f->offset > f->lv->durable)
            f->lv->durable = f->offset;
    } else if (f->due > s->dur_due || (f->due == s->dur_due && f->offset > s->dur_off)) {
        s->dur_due = f->due;
        s->dur_off = f->offset;
    }
}

/* Append callback (loop thread): the copy of f is durable (every flight
 * before it too), or its wait failed (then it and the unconfirmed flights
 * before it stay behind the persisted cursors until a later copy is durable). */
static void sched_appended(const bk_append_out_t *out, void *arg)
{
    sched_flight_t *f = arg, *g;
    bk_schedule_t *s = f->s;
    int ok = out->r.status == BK_OK;
    if (!ok)
        LOG_WARN_RL("delay scheduler: a delivered copy is not durable yet (%s); its progress is kept back",
                    out->r.why);
    do {
        g = s->fl_head;
        s->fl_head = g->next;
        if (ok)
            flight_apply(s, g);
        else if (!g->lv && g->offset < s->lost_low)
            s->lost_low = g->offset;
        if (g != f)
            free(g);
    } while (g != f);
    if (!s->fl_head)
        s->fl_tail = NULL;
    if (ok)
        s->lost_low = INT64_MAX;
    free(f);
    progress_changed(s);
}

/* A cursor moved without a copy (gone or undeliverable entries): the
 * persisted one follows at once when no copy is in flight, else with the
 * next durable one. */
static void sched_skipped(bk_schedule_t *s, sched_level_t *lv, int64_t due, int64_t off)
{
    sched_flight_t f = {.s = s, .lv = lv, .offset = off, .due = due};
    if (!s->fl_head)
        flight_apply(s, &f);
    progress_changed(s);
}

/* Re-stores a due message in its real topic and queue through the append
 * path; the flight (lv, offset, due) records what its durability advances.
 * 0 on success, 1 if it cannot ever be delivered (skip it), -1 to retry
 * later. */
static int sched_deliver(bk_schedule_t *s, const rmq_record_t *rec, sched_level_t *lv, int64_t offset,
                         int64_t due)
{
    size_t tl = 0;
    const char *topic = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_REAL_TOPIC, &tl);
    int ok = 0;
    int64_t qid = bk_props_int(rec->properties, rec->properties_len, RMQ_PROP_REAL_QID, -1, &ok);
    if (!topic || tl == 0 || tl > RMQ_TOPIC_MAX || qid < 0 || qid > INT32_MAX) {
        LOG_WARN_RL("delay scheduler: %s queue %d offset %" PRId64 " has no valid REAL_TOPIC/REAL_QID; skipped",
                    BK_SCHEDULE_TOPIC, rec->queue_id, rec->queue_offset);
        return 1;
    }
    bk_result_t dest;
    if (!bk_produce_dest_check(s->cfg.produce, topic, tl, qid, &dest)) {
        LOG_WARN_RL("delay scheduler: %s queue %d offset %" PRId64 " dropped: %s", BK_SCHEDULE_TOPIC,
                    rec->queue_id, rec->queue_offset, dest.why);
        return 1;
    }
    if (bk_props_copy(&s->pb, rec->properties, rec->properties_len, sched_drop) != RMQ_OK)
        return -1;
    size_t taglen = 0;
    const char *tag = rmq_props_get(s->pb.data, s->pb.len, RMQ_PROP_TAGS, &taglen);
    st_msg_t m = {
        .topic = topic,
        .topic_len = tl,
        .queue_id = (int32_t)qid,
        .flag = rec->flag,
        .sys_flag = rec->sys_flag,
        .born_timestamp = rec->born_timestamp,
        .born_ip = rec->born_ip,
        .born_port = (uint16_t)rec->born_port,
        .born_ip6 = rmq_record_born_ip6(rec),
        .reconsume_times = rec->reconsume_times,
        .body = rec->body,
        .body_len = rec->body_len,
        .properties = s->pb.data,
        .properties_len = s->pb.len,
        .tag_code = tag ? st_tag_hash(tag, taglen) : 0,
    };
    sched_flight_t *f = calloc(1, sizeof(*f));
    bk_append_out_t out;
    if (!f)
        return -1;
    *f = (sched_flight_t){.s = s, .lv = lv, .offset = offset, .due = due};
    int done = bk_append_put(s->cfg.append, &m, 1, &out, sched_appended, f);
    if (!out.stored) {
        free(f);
        LOG_WARN_RL("delay scheduler: cannot deliver to %.*s: %s; retrying", (int)tl, topic, out.r.why);
        return out.r.status == BK_MESSAGE_ILLEGAL ? 1 : -1;
    }
    if (s->fl_tail)
        s->fl_tail->next = f;
    else
        s->fl_head = f;
    s->fl_tail = f;
    if (done)
        sched_appended(&out, f);
    bk_stats_add(s->cfg.stats, BK_STAT_PUT, 1);
    return 0;
}

/* ---- per-level queues ------------------------------------------------------- */

/* Timer of one level: delivers every due entry from its cursor in order,
 * then sleeps until the next one is due (or until an arrival). */
static void level_run(evutil_socket_t fd, short what, void *arg)
{
    sched_level_t *lv = arg;
    bk_schedule_t *s = lv->s;
    int32_t q = lv->level - 1;
    if (!s->running)
        return;
    int64_t now = rmq_wall_ms();
    for (int i = 0; i < DELAY_BATCH; i++) {
        if (lv->offset >= st_store_max_offset(s->cfg.store, BK_SCHEDULE_TOPIC, q))
            return;                  /* idle: the arrival callback wakes us */
        int64_t next = lv->offset;
        rmq_record_t rec;
        st_get_status_t st = sched_read(s, q, lv->offset, 1, &next);
        if (st != ST_GET_FOUND || sched_first(s, &rec) != RMQ_OK) {
            if (st != ST_GET_FOUND && next > lv->offset) {
                LOG_WARN("delay scheduler: level %d offsets %" PRId64 "..%" PRId64 " are gone; skipped",
                         lv->level, lv->offset, next);
                lv->offset = next;
                sched_skipped(s, lv, 0, next);
                continue;
            }
            arm(lv->ev, DELAY_RETRY_MS);
            return;
        }
        int64_t due = rec.store_timestamp + lv->delay_ms;
        /* A due time further than the level's delay means the clock went back: deliver now. */
        if (due > now && due - now <= lv->delay_ms) {
            arm(lv->ev, due - now);
            return;
        }
        int r = sched_deliver(s, &rec, lv, lv->offset + 1, 0);
        if (r < 0) {
            arm(lv->ev, DELAY_RETRY_MS);
            return;
        }
        lv->offset++;
        if (r > 0)
            sched_skipped(s, lv, 0, lv->offset);
    }
    arm(lv->ev, 0);                  /* yield to other events, then go on */
}

/* ---- the timer queue ---------------------------------------------------- */

static int ent_less(const timer_ent_t *a, const timer_ent_t *b)
{
    return a->due < b->due || (a->due == b->due && a->off < b->off);
}

static int heap_push(bk_schedule_t *s, int64_t due, int64_t off)
{
    if (s->hlen == s->hcap) {
        size_t cap = s->hcap ? s->hcap * 2 : 256;
        timer_ent_t *h = realloc(s->heap, cap * sizeof(*h));
        if (!h)
            return -1;
        s->heap = h;
        s->hcap = cap;
    }
    size_t i = s->hlen++;
    s->heap[i] = (timer_ent_t){due, off};
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!ent_less(&s->heap[i], &s->heap[p]))
            break;
        timer_ent_t t = s->heap[i];
        s->heap[i] = s->heap[p];
        s->heap[p] = t;
        i = p;
    }
    return 0;
}

static timer_ent_t heap_pop(bk_schedule_t *s)
{
    timer_ent_t top = s->heap[0];
    s->heap[0] = s->heap[--s->hlen];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, m = i;
        if (l < s->hlen && ent_less(&s->heap[l], &s->heap[m]))
            m = l;
        if (r < s->hlen && ent_less(&s->heap[r], &s->heap[m]))
            m = r;
        if (m == i)
            break;
        timer_ent_t t = s->heap[i];
        s->heap[i] = s->heap[m];
        s->heap[m] = t;
        i = m;
    }
    return top;
}

/* ---- recalls ---------------------------------------------------------------- */

/* Where key is or would go in s->dels; *found set when it is there. */
static size_t del_find(const bk_schedule_t *s, const char *key, int *found)
{
    size_t lo = 0, hi = s->ndel;
    *found = 0;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = strcmp(s->dels[mid], key);
        if (c == 0)
            return *found = 1, mid;
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* A delete marker's key read from the timer queue: its message is not delivered. */
static void del_add(bk_schedule_t *s, const char *key, size_t len)
{
    int found;
    char *k = strndup(key, len);
    size_t at = k ? del_find(s, k, &found) : 0;
    if (k && found) {
        free(k);
        return;
    }
    if (k && s->ndel == s->capdel) {
        size_t cap = s->capdel ? s->capdel * 2 : 16;
        char **d = realloc(s->dels, cap * sizeof(*d));
        if (d) {
            s->dels = d;
            s->capdel = cap;
        }
    }
    if (!k || s->ndel == s->capdel) {
        free(k);
        LOG_ERROR_RL("delay scheduler: out of memory keeping a recall; its message may still be delivered");
        return;
    }
    memmove(&s->dels[at + 1], &s->dels[at], (s->ndel - at) * sizeof(*s->dels));
    s->dels[at] = k;
    s->ndel++;
}

/* A delete marker became due: its message's due time has passed. */
static void del_remove(bk_schedule_t *s, const char *key, size_t len)
{
    char k[RMQ_PROPS_MAX + 1];
    int found;
    snprintf(k, sizeof(k), "%.*s", (int)len, key);
    size_t at = del_find(s, k, &found);
    if (!found)
        return;
    free(s->dels[at]);
    memmove(&s->dels[at], &s->dels[at + 1], (s->ndel - at - 1) * sizeof(*s->dels));
    s->ndel--;
}

/* Notes rec's delete key if rec is a delete marker. */
static void del_note(bk_schedule_t *s, const rmq_record_t *rec)
{
    size_t len = 0;
    const char *key = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_TIMER_DEL_UNIQKEY, &len);
    if (key && len)
        del_add(s, key, len);
}

/* 1 if the due timer-queue record rec is not to be delivered: a delete
 * marker (its key is dropped: the message it recalls was due before it),
 * or a message a marker recalled. */
static int timer_recalled(bk_schedule_t *s, const rmq_record_t *rec)
{
    size_t len = 0, tl = 0, il = 0;
    int found = 0;
    const char *key = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_TIMER_DEL_UNIQKEY, &len);
    if (key) {
        del_remove(s, key, len);
        return 1;
    }
    if (!s->ndel)
        return 0;                    /* no recall pending: nothing more to read */
    const char *topic = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_REAL_TOPIC, &tl);
    const char *id = rmq_props_get(rec->properties, rec->properties_len, RMQ_PROP_UNIQ_KEY, &il);
    if (!topic || !id || tl + il + 1 > RMQ_PROPS_MAX)
        return 0;
    char k[RMQ_PROPS_MAX + 1];
    snprintf(k, sizeof(k), "%.*s+%.*s", (int)tl, topic, (int)il, id);
    del_find(s, k, &found);
    if (found)
        LOG_INFO("delay scheduler: timer queue offset %" PRId64 " (%s) was recalled; not delivered",
                 rec->queue_offset, k);
    return found;
}

/* 1 if (due, off) was delivered according to the cursor. */
static int timer_done(const bk_schedule_t *s, int64_t due, int64_t off)
{
    return due < s->cur_due || (due == s->cur_due && off <= s->cur_off);
}

/* Arms the timer for the heap's earliest entry if that is sooner than armed. */
static void timer_rearm(bk_schedule_t *s)
{
    if (!s->running || s->hlen == 0)
        return;
    int64_t due = s->heap[0].due;
    if (evtimer_pending(s->timer_ev, NULL) && s->armed_due <= due)
        return;
    s->armed_due = due;
    arm(s->timer_ev, due - rmq_wall_ms());
}

/* Reads timer-queue entries [s->scanned, max) into the heap (skipping the
 * delivered ones). The due of an entry is its __STARTDELIVERTIME. */
static void timer_scan(bk_schedule_t *s)
{
    int32_t q = s->n;
    int64_t max = st_store_max_offset(s->cfg.store, BK_SCHEDULE_TOPIC, q);
    while (s->scanned < max) {
        int64_t next = s->scanned;
        st_get_status_t st = sched_read(s, q, s->scanned, DELAY_READ_BATCH, &next);
        if (st != ST_GET_FOUND) {
            if (next <= s->scanned) {
                LOG_WARN_RL("delay scheduler: cannot read the timer queue at %" PRId64 "; will retry",
                            s->scanned);
                return;
            }
            s->scanned = next;
            continue;
        }
        size_t len = evbuffer_get_length(s->rd), pos = 0;
        const uint8_t *data = evbuffer_pullup(s->rd, -1);
        while (pos < len) {
            rmq_record_t rec;
            if (rmq_record_decode(data + pos, len - pos, 0, &rec) != RMQ_OK)
                break;
            pos += rec.total_size;
            int64_t due = bk_props_int(rec.properties, rec.properties_len, RMQ_PROP_DELIVER_AT,
                                       rec.store_timestamp, NULL);
            if (timer_done(s, due, rec.queue_offset))
                continue;
            if (heap_push(s, due, rec.queue_offset) != 0) {
                LOG_ERROR_RL("delay scheduler: out of memory for the timer heap");
                return;
            }
            del_note(s, &rec);
        }
        s->scanned = next;
    }
}

/* Timer of the timer queue: delivers every due entry in (due, offset) order. */
static void timer_run(evutil_socket_t fd, short what, void *arg)
{
    bk_schedule_t *s = arg;
    s->armed_due = INT64_MAX;
    if (!s->running)
        return;
    timer_scan(s);
    int64_t now = rmq_wall_ms();
    for (int i = 0; i < DELAY_BATCH && s->hlen > 0; i++) {
        if (s->heap[0].due > now)
            break;
        timer_ent_t e = s->heap[0];
        int64_t next = e.off;
        rmq_record_t rec;
        st_get_status_t st = sched_read(s, s->n, e.off, 1, &next);
        int r;
        if (st == ST_GET_FOUND && sched_first(s, &rec) == RMQ_OK && rec.queue_offset == e.off)
            r = timer_recalled(s, &rec) ? 1 : sched_deliver(s, &rec, NULL, e.off, e.due);
        else if (st == ST_GET_OFFSET_TOO_SMALL || st == ST_GET_MESSAGE_WAS_REMOVING) {
            LOG_WARN("delay scheduler: timer queue offset %" PRId64 " is gone; skipped", e.off);
            r = 1;
        } else
            r = -1;
        if (r < 0) {
            s->armed_due = now + DELAY_RETRY_MS;
            arm(s->timer_ev, DELAY_RETRY_MS);
            return;
        }
        heap_pop(s);
        s->cur_due = e.due;
        s->cur_off = e.off;
        if (r > 0)
            sched_skipped(s, NULL, e.due, e.off);
    }
    if (s->hlen > 0 && s->heap[0].due <= now) {
        s->armed_due = now;
        arm(s->timer_ev, 0);
    } else
        timer_rearm(s);
}

/* ---- send-path hook ------------------------------------------------------- */

/* One delivery-time property: *at (wall ms) from now + value * scale, or the
 * value itself with scale 0; 0 if absent, -1 if not an integer, 1 if set. */
static int deliver_prop(const st_msg_t *m, const char *name, int64_t scale, int64_t now, int64_t *at)
{
    size_t vl;
    int ok = 1;
    if (!rmq_props_get(m->properties, m->properties_len, name, &vl))
        return 0;
    int64_t v = bk_props_int(m->properties, m->properties_len, name, 0, &ok);
    if (!ok)
        return -1;
    if (scale == 0)
        *at = v;
    else if (v > 0 && v > (INT64_MAX - now) / scale)
        *at = INT64_MAX;             /* beyond any horizon */
    else
        *at = now + (v < 0 ? 0 : v * scale);
    return 1;
}

/* The delivery time a message asks for, in RocketMQ 5 broker's order:
 * TIMER_DELAY_SEC, TIMER_DELAY_MS, TIMER_DELIVER_MS; then rmq's and ONS's
 * __STARTDELIVERTIME. *at 0 when none; *timer 1 when a TIMER_ property set
 * it. RMQ_EINVAL with why naming the malformed property. */
static rmq_err_t deliver_time(const st_msg_t *m, int64_t now, int64_t *at, int *timer, const char **why)
{
    static const struct {
        const char *name;
        int64_t scale;
    } props[] = {
        {RMQ_PROP_TIMER_DELAY_SEC, 1000},
        {RMQ_PROP_TIMER_DELAY_MS, 1},
        {RMQ_PROP_TIMER_DELIVER_MS, 0},
        {RMQ_PROP_DELIVER_AT, 0},
    };
    *at = 0;
    *timer = 0;
    for (size_t i = 0; i < sizeof props / sizeof props[0]; i++) {
        int rc = deliver_prop(m, props[i].name, props[i].scale, now, at);
        if (rc < 0) {
            *why = i == 0 ? "property " RMQ_PROP_TIMER_DELAY_SEC " is not an integer (seconds)"
                 : i == 1 ? "property " RMQ_PROP_TIMER_DELAY_MS " is not an integer (ms)"
                 : i == 2 ? "property " RMQ_PROP_TIMER_DELIVER_MS " is not an integer (wall ms)"
                 : "property " RMQ_PROP_DELIVER_AT " is not an integer (wall ms)";
            return RMQ_EINVAL;
        }
        if (rc > 0) {
            *timer = i < 3;
            return RMQ_OK;
        }
    }
    return RMQ_OK;
}

rmq_err_t bk_schedule_divert(bk_schedule_t *s, st_msg_t *m, const char **why)
{
    *why = NULL;
    if (!s || !m->properties || !m->properties_len)
        return RMQ_OK;
    if (m->topic_len == strlen(BK_SCHEDULE_TOPIC) && memcmp(m->topic, BK_SCHEDULE_TOPIC, m->topic_len) == 0)
        return RMQ_OK;
    /* one pass: most messages name no delay, and half messages (TRAN_MSG=true,
     * their type whatever else they name) are delayed at commit, not here */
    if (rmq_props_msg_type(m->properties, m->properties_len) != RMQ_MSG_DELAY)
        return RMQ_OK;
    int ok_level = 1, timer = 0;
    int64_t level = bk_props_int(m->properties, m->properties_len, RMQ_PROP_DELAY, 0, &ok_level);
    if (!ok_level) {
        *why = "property DELAY is not an integer";
        return RMQ_EINVAL;
    }
    int64_t now = rmq_wall_ms(), at = 0;
    if (level <= 0 && deliver_time(m, now, &at, &timer, why) != RMQ_OK)
        return RMQ_EINVAL;           /* a DELAY level wins over the timer properties, as in RocketMQ */
    int32_t q;
    int64_t due;
    if (at > now) {
        if (at - now > s->cfg.horizon_ms) {
            *why = "delivery time (" RMQ_PROP_TIMER_DELAY_SEC ", " RMQ_PROP_TIMER_DELAY_MS ", " RMQ_PROP_TIMER_DELIVER_MS
                   " or " RMQ_PROP_DELIVER_AT ") is beyond fileReservedTime";
            return RMQ_EINVAL;
        }
        /* Clamp so the entry sorts after the cursor even if the clock went back. */
        due = at;
        if (due < s->cur_due)
            due = s->cur_due;
        q = s->n;
    } else if (level > 0) {
        if (level > s->n)
            level = s->n;
        q = (int32_t)level - 1;
        due = now + s->levels[q].delay_ms;
    } else
        return RMQ_OK;
    char real_topic[RMQ_TOPIC_MAX + 1];
    size_t tl = m->topic_len <= RMQ_TOPIC_MAX ? m->topic_len : RMQ_TOPIC_MAX;
    memcpy(real_topic, m->topic, tl);
    real_topic[tl] = '\0';
    if (bk_props_copy(&s->pb, m->properties, m->properties_len, divert_drop) != RMQ_OK ||
        bk_props_put(&s->pb, RMQ_PROP_REAL_TOPIC, real_topic) != RMQ_OK ||
        bk_props_put_int(&s->pb, RMQ_PROP_REAL_QID, m->queue_id) != RMQ_OK ||
        (q == s->n && bk_props_put_int(&s->pb, RMQ_PROP_DELIVER_AT, due) != RMQ_OK) ||
        (timer && bk_props_put_int(&s->pb, RMQ_PROP_TIMER_DELIVER_MS, due) != RMQ_OK))
        return RMQ_ENOMEM;
    if (s->pb.len > RMQ_PROPS_MAX) {
        *why = "properties too long after adding the schedule properties";
        return RMQ_EINVAL;
    }
    m->topic = BK_SCHEDULE_TOPIC;
    m->topic_len = strlen(BK_SCHEDULE_TOPIC);
    m->queue_id = q;
    m->properties = s->pb.data;
    m->properties_len = s->pb.len;
    m->tag_code = due;
    size_t vl;
    if (q == s->n && rmq_props_get(m->properties, m->properties_len, RMQ_PROP_TIMER_DEL_UNIQKEY, &vl))
        m->tag_code = -due;          /* a delete marker: its arrival reads it (bk_schedule_arrived) */
    return RMQ_OK;
}

void bk_schedule_arrived(bk_schedule_t *s, const char *topic, int32_t queue_id, int64_t max_offset,
                         int64_t tag_code)
{
    if (!s || !s->running || strcmp(topic, BK_SCHEDULE_TOPIC) != 0 || queue_id < 0 || queue_id > s->n)
        return;
    if (queue_id < s->n) {
        sched_level_t *lv = &s->levels[queue_id];
        if (!evtimer_pending(lv->ev, NULL))
            arm(lv->ev, 0);
        return;
    }
    if (tag_code > 0 && max_offset - 1 == s->scanned && !timer_done(s, tag_code, s->scanned)) {
        if (heap_push(s, tag_code, s->scanned) != 0) {
            LOG_ERROR_RL("delay scheduler: out of memory for the timer heap");
            return;
        }
        s->scanned = max_offset;
    } else
        timer_scan(s);
    timer_rearm(s);
}

/* ---- life cycle ------------------------------------------------------------- */

bk_schedule_t *bk_schedule_new(const bk_schedule_config_t *cfg, char *err, size_t errlen)
{
    int64_t delays[BK_SCHEDULE_LEVELS_MAX];
    int n = bk_schedule_parse_levels(cfg->delay_levels, delays, err, errlen);
    if (n < 0)
        return NULL;
    bk_schedule_t *s = calloc(1, sizeof(*s));
    if (!s || !(s->levels = calloc((size_t)n, sizeof(*s->levels))) || !(s->rd = evbuffer_new()) ||
        !(s->timer_ev = evtimer_new(cfg->base, timer_run, s)) ||
        !(s->persist_ev = evtimer_new(cfg->base, persist_fire, s)))
        goto oom;
    s->cfg = *cfg;
    snprintf(s->path, sizeof(s->path), "%s", cfg->path);
    snprintf(s->delay_levels, sizeof(s->delay_levels), "%s", cfg->delay_levels);
    s->cfg.path = s->path;
    s->cfg.delay_levels = s->delay_levels;
    s->n = n;
    s->cur_off = s->dur_off = -1;
    s->lost_low = INT64_MAX;
    s->armed_due = INT64_MAX;
    for (int i = 0; i < n; i++) {
        sched_level_t *lv = &s->levels[i];
        lv->s = s;
        lv->level = i + 1;
        lv->delay_ms = delays[i];
        if (!(lv->ev = evtimer_new(cfg->base, level_run, lv)))
            goto oom;
    }
    if (progress_load(s, err, errlen) != RMQ_OK) {
        bk_schedule_free(s);
        return NULL;
    }
    s->loaded = 1;
    return s;
oom:
    snprintf(err, errlen, "out of memory for the delay scheduler");
    bk_schedule_free(s);
    return NULL;
}

void bk_schedule_start(bk_schedule_t *s)
{
    if (s->cfg.is_slave)
        return;
    const bk_topic_t *t = bk_topics_get(s->cfg.topics, BK_SCHEDULE_TOPIC, strlen(BK_SCHEDULE_TOPIC));
    if (!t || t->read_queues < s->n + 1 || t->write_queues < s->n + 1) {
        bk_topic_t nt = {.read_queues = s->n + 1, .write_queues = s->n + 1,
                         .perm = BK_PERM_READ | BK_PERM_WRITE};
        snprintf(nt.name, sizeof(nt.name), "%s", BK_SCHEDULE_TOPIC);
        if (bk_topics_update(s->cfg.topics, &nt) != RMQ_OK)
            LOG_ERROR("delay scheduler: cannot create topic %s", BK_SCHEDULE_TOPIC);
    }
    s->running = 1;
    for (int i = 0; i < s->n; i++) {
        sched_level_t *lv = &s->levels[i];
        int64_t min = st_store_min_offset(s->cfg.store, BK_SCHEDULE_TOPIC, i);
        int64_t max = st_store_max_offset(s->cfg.store, BK_SCHEDULE_TOPIC, i);
        if (lv->offset > max) {
            LOG_WARN("delay scheduler: level %d progress %" PRId64 " is past the queue end %" PRId64,
                     lv->level, lv->offset, max);
            lv->offset = max;
        }
        if (lv->offset < min)
            lv->offset = min;
        lv->durable = lv->offset;
        arm(lv->ev, 0);
    }
    int64_t max = st_store_max_offset(s->cfg.store, BK_SCHEDULE_TOPIC, s->n);
    s->scanned = s->low < max ? s->low : max;
    int64_t t0 = rmq_mono_ms();
    timer_scan(s);
    if (s->hlen || max)
        LOG_INFO("delay scheduler: %zu timed messages pending (timer queue %" PRId64 "..%" PRId64 " read in %lld ms)",
                 s->hlen, s->low, max, (long long)(rmq_mono_ms() - t0));
    timer_rearm(s);
}

void bk_schedule_stop(bk_schedule_t *s)
{
    if (s)
        s->running = 0;
}

void bk_schedule_set_slave(bk_schedule_t *s, int is_slave)
{
    s->cfg.is_slave = is_slave;
    if (is_slave)
        s->running = 0;
}

void bk_schedule_free(bk_schedule_t *s)
{
    if (!s)
        return;
    if (s->loaded && s->cfg.persist)
        persist_now(s);
    s->running = 0;
    for (int i = 0; s->levels && i < s->n; i++)
        if (s->levels[i].ev)
            event_free(s->levels[i].ev);
    free(s->levels);
    if (s->timer_ev)
        event_free(s->timer_ev);
    if (s->persist_ev)
        event_free(s->persist_ev);
    if (s->rd)
        evbuffer_free(s->rd);
    bk_props_buf_free(&s->pb);
    while (s->fl_head) {
        sched_flight_t *f = s->fl_head;
        s->fl_head = f->next;
        free(f);
    }
    free(s->heap);
    for (size_t i = 0; i < s->ndel; i++)
        free(s->dels[i]);
    free(s->dels);
    free(s);
}
