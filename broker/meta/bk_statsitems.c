/* bk_statsitems.c: the stats items in one array of slots allocated at
 * start, found through a bk_map keyed by the kind's letter and the key. A
 * slot keeps its running (value, times) and each window's samples oldest
 * first; every used slot is sampled when a window's period comes round. */
#include "bk_statsitems.h"

#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "rmq_message.h"

#define SI_KEY_MAX (2 * RMQ_TOPIC_MAX + 2)       /* "topic@group" and its NUL */
#define SI_SAMPLES (7 + 7 + 25)                  /* the windows' keep, together */

typedef struct si_sample {
    int64_t ms, times, value;
} si_sample_t;

typedef struct si_slot {
    char key[SI_KEY_MAX + 1];                    /* kind letter, then the key; "" when free */
    int64_t value, times;
    uint64_t touched;                            /* the table's add count when last counted */
    uint64_t claim;                              /* the table's claim count when it took this item */
    si_sample_t samples[SI_SAMPLES];             /* each window's, oldest first, from its first */
    uint8_t n[BK_SI_WINDOW_COUNT];               /* samples each window holds */
} si_slot_t;

/* RocketMQ's sampling: period and samples kept per window, and where its
 * samples start in a slot. */
static const struct {
    int64_t period_ms;
    size_t keep, first;
} windows[BK_SI_WINDOW_COUNT] = {
    [BK_SI_MINUTE] = {10 * 1000, 7, 0},
    [BK_SI_HOUR] = {10 * 60 * 1000, 7, 7},
    [BK_SI_DAY] = {60 * 60 * 1000, 25, 14},
};
_Static_assert(14 + 25 == SI_SAMPLES, "the windows' samples fill a slot's");

static const char *const kind_names[BK_SI_KIND_COUNT] = {
    [BK_SI_TOPIC_PUT_NUMS] = "TOPIC_PUT_NUMS",   [BK_SI_TOPIC_PUT_SIZE] = "TOPIC_PUT_SIZE",
    [BK_SI_GROUP_GET_NUMS] = "GROUP_GET_NUMS",   [BK_SI_GROUP_GET_SIZE] = "GROUP_GET_SIZE",
    [BK_SI_SNDBCK_PUT_NUMS] = "SNDBCK_PUT_NUMS", [BK_SI_BROKER_PUT_NUMS] = "BROKER_PUT_NUMS",
    [BK_SI_BROKER_GET_NUMS] = "BROKER_GET_NUMS",
};

struct bk_statsitems {
    si_slot_t *slots;
    size_t cap, used;
    bk_map_t *index;                             /* slot key -> slot */
    uint64_t adds;
    uint64_t claims;                             /* items that took a slot so far */
    int64_t due_ms[BK_SI_WINDOW_COUNT];          /* next sample of each window */
};

bk_statsitems_t *bk_statsitems_new(size_t capacity, int64_t now_ms)
{
    bk_statsitems_t *t = capacity ? calloc(1, sizeof(*t)) : NULL;
    if (!t)
        return NULL;
    t->cap = capacity;
    t->slots = calloc(capacity, sizeof(*t->slots));
    t->index = bk_map_new();
    if (!t->slots || !t->index) {
        bk_statsitems_free(t);
        return NULL;
    }
    for (int w = 0; w < BK_SI_WINDOW_COUNT; w++)
        t->due_ms[w] = now_ms;
    return t;
}

void bk_statsitems_free(bk_statsitems_t *t)
{
    if (!t)
        return;
    if (t->index)
        bk_map_free(t->index, NULL);
    free(t->slots);
    free(t);
}

int bk_statsitems_kind(const char *name)
{
    for (int k = 0; name && k < BK_SI_KIND_COUNT; k++)
        if (strcmp(name, kind_names[k]) == 0)
            return k;
    return -1;
}

/* Writes the slot key of (kind, key) into buf; its length, or 0 if too long. */
static size_t slot_key(char *buf, bk_si_kind_t kind, const char *key)
{
    size_t n = strlen(key);
    if (n + 1 > SI_KEY_MAX)
        return 0;
    buf[0] = (char)('A' + (int)kind);
    memcpy(buf + 1, key, n + 1);
    return n + 1;
}

/* The slot a new key takes: a free one, else the one counted least recently
 * (its item forgotten). */
static si_slot_t *slot_claim(bk_statsitems_t *t)
{
    if (t->used < t->cap)
        return &t->slots[t->used++];
    si_slot_t *old = &t->slots[0];
    for (size_t i = 1; i < t->cap; i++)
        if (t->slots[i].touched < old->touched)
            old = &t->slots[i];
    bk_map_del(t->index, old->key, strlen(old->key));
    return old;
}

/* The slot of (kind, key), claimed for it when new; NULL when the key does
 * not fit or the index is out of memory. */
static si_slot_t *slot_find(bk_statsitems_t *t, bk_si_kind_t kind, const char *key)
{
    char sk[SI_KEY_MAX + 1];
    size_t len = t && (unsigned)kind < BK_SI_KIND_COUNT ? slot_key(sk, kind, key) : 0;
    if (!len)
        return NULL;
    si_slot_t *s = bk_map_get(t->index, sk, len);
    if (s)
        return s;
    s = slot_claim(t);
    memset(s, 0, sizeof(*s));
    memcpy(s->key, sk, len + 1);
    if (bk_map_put(t->index, s->key, len, s) != RMQ_OK) {
        s->key[0] = '\0';                        /* out of memory: not counted, reclaimed first */
        return NULL;
    }
    s->claim = ++t->claims;
    return s;
}

static void slot_add(bk_statsitems_t *t, si_slot_t *s, int64_t value, int64_t times)
{
    s->value += value;
    s->times += times;
    s->touched = ++t->adds;
}

void bk_statsitems_add(bk_statsitems_t *t, bk_si_kind_t kind, const char *key, int64_t value, int64_t times)
{
    si_slot_t *s = slot_find(t, kind, key);
    if (s)
        slot_add(t, s, value, times);
}

void bk_statsitems_add_ref(bk_statsitems_t *t, bk_si_ref_t *ref, bk_si_kind_t kind, const char *key,
                           int64_t value, int64_t times)
{
    si_slot_t *s = t && ref->claim && ref->slot < t->used ? &t->slots[ref->slot] : NULL;
    if (!s || s->claim != ref->claim) {
        if (!(s = slot_find(t, kind, key)))
            return;
        *ref = (bk_si_ref_t){(size_t)(s - t->slots), s->claim};
    }
    slot_add(t, s, value, times);
}

void bk_statsitems_add_group(bk_statsitems_t *t, bk_si_kind_t kind, const char *topic, const char *group,
                             int64_t value, int64_t times)
{
    char key[SI_KEY_MAX + 1];
    size_t tl = strlen(topic), gl = strlen(group);
    if (tl + 1 + gl >= sizeof(key))
        return;
    memcpy(key, topic, tl);
    key[tl] = '@';
    memcpy(key + tl + 1, group, gl + 1);
    bk_statsitems_add(t, kind, key, value, times);
}

/* RocketMQ's StatsItem.sampling*: a first sample of zeros one period back,
 * then the running totals; the oldest beyond keep dropped. */
static void slot_sample(si_slot_t *s, bk_si_window_t w, int64_t now_ms)
{
    si_sample_t *r = &s->samples[windows[w].first];
    if (s->n[w] == 0)
        r[s->n[w]++] = (si_sample_t){now_ms - windows[w].period_ms, 0, 0};
    if (s->n[w] == windows[w].keep) {
        memmove(&r[0], &r[1], (windows[w].keep - 1) * sizeof(r[0]));
        s->n[w]--;
    }
    r[s->n[w]++] = (si_sample_t){now_ms, s->times, s->value};
}

void bk_statsitems_tick(bk_statsitems_t *t, int64_t now_ms)
{
    for (int w = 0; t && w < BK_SI_WINDOW_COUNT; w++) {
        if (now_ms < t->due_ms[w])
            continue;
        for (size_t i = 0; i < t->used; i++)
            if (t->slots[i].key[0])
                slot_sample(&t->slots[i], w, now_ms);
        t->due_ms[w] += windows[w].period_ms;
        if (t->due_ms[w] <= now_ms)              /* fell behind (a stalled loop): from now on */
            t->due_ms[w] = now_ms + windows[w].period_ms;
    }
}

/* RocketMQ's StatsItem.computeStatsData over one window's samples. */
static bk_si_snapshot_t slot_snapshot(const si_slot_t *s, bk_si_window_t w)
{
    bk_si_snapshot_t ss = {0, 0.0, 0.0, 0};
    if (s->n[w] < 2)
        return ss;
    const si_sample_t *first = &s->samples[windows[w].first], *last = first + s->n[w] - 1;
    ss.sum = last->value - first->value;
    ss.tps = (double)ss.sum * 1000.0 / (double)(last->ms - first->ms);
    ss.times = last->times - first->times;
    if (ss.times > 0)
        ss.avgpt = (double)ss.sum / (double)ss.times;
    return ss;
}

int bk_statsitems_view(const bk_statsitems_t *t, bk_si_kind_t kind, const char *key,
                       bk_si_snapshot_t out[BK_SI_WINDOW_COUNT])
{
    char sk[SI_KEY_MAX + 1];
    size_t len = t && (unsigned)kind < BK_SI_KIND_COUNT ? slot_key(sk, kind, key) : 0;
    const si_slot_t *s = len ? bk_map_get(t->index, sk, len) : NULL;
    if (!s)
        return 0;
    for (int w = 0; w < BK_SI_WINDOW_COUNT; w++)
        out[w] = slot_snapshot(s, w);
    return 1;
}

/* What s added over the minute window and since its last sample. */
static int64_t slot_recent(const si_slot_t *s)
{
    return s->value - (s->n[BK_SI_MINUTE] ? s->samples[windows[BK_SI_MINUTE].first].value : 0);
}

size_t bk_statsitems_top(const bk_statsitems_t *t, bk_si_kind_t kind, bk_si_top_t *out, size_t n)
{
    size_t got = 0;
    for (size_t i = 0; t && n && i < t->used; i++) {
        const si_slot_t *s = &t->slots[i];
        int64_t recent = slot_recent(s);
        if (s->key[0] != (char)('A' + (int)kind) || recent <= 0)
            continue;
        if (got == n && recent <= out[n - 1].recent)
            continue;
        size_t at = got < n ? got++ : n - 1;
        for (; at > 0 && out[at - 1].recent < recent; at--)
            out[at] = out[at - 1];
        out[at] = (bk_si_top_t){s->key + 1, s->value, recent};
    }
    return got;
}
