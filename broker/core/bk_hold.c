/* bk_hold.c: the held-pull structure: a map from "topic@queue" to a list of
 * held pulls, plus one list of all held pulls sorted by deadline (inserted
 * from the tail: deadlines mostly arrive in order) and one timer armed for
 * its head. Released pulls are collected first and re-executed afterwards,
 * so callbacks never see the lists half-changed. */
#include "bk_hold.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "rmq_log.h"
#include "rmq_time.h"

typedef struct held {
    struct held *dprev, *dnext;       /* deadline list */
    struct held *qprev, *qnext;       /* per-queue list */
    struct hqueue *q;
    bk_session_t *ss;                 /* referenced */
    void *parked;                     /* owned */
    int64_t offset;
    int64_t deadline_ms;
    int match_all;
    size_t n_codes;
    int64_t codes[BK_HOLD_MAX_CODES];
} held_t;

typedef struct hqueue {
    held_t *head;
    size_t keylen;
    char key[];
} hqueue_t;

struct bk_hold {
    bk_map_t *queues;
    held_t *dhead, *dtail;
    size_t count;
    struct event *timer;
    int64_t armed_ms;                 /* deadline the timer is set for; 0: none */
    bk_hold_fn fn;
    bk_hold_drop_fn drop;
    void *arg;
};

/* Formats the "topic@queue" key; returns its length (0 if too long). */
static size_t hold_key(char *buf, size_t cap, const char *topic, int32_t queue_id)
{
    int n = snprintf(buf, cap, "%s@%d", topic, queue_id);
    return n < 0 || (size_t)n >= cap ? 0 : (size_t)n;
}

/* Arms the timer for the earliest deadline (or disarms it). */
static void hold_arm(bk_hold_t *h)
{
    if (!h->dhead) {
        event_del(h->timer);
        h->armed_ms = 0;
        return;
    }
    if (h->armed_ms == h->dhead->deadline_ms)
        return;
    int64_t wait = h->dhead->deadline_ms - rmq_mono_ms();
    if (wait < 0)
        wait = 0;
    struct timeval tv = {(time_t)(wait / 1000), (suseconds_t)(wait % 1000) * 1000};
    event_add(h->timer, &tv);
    h->armed_ms = h->dhead->deadline_ms;
}

/* Unlinks hd from both lists (frees an emptied queue entry). */
static void hold_unlink(bk_hold_t *h, held_t *hd)
{
    if (hd->dprev)
        hd->dprev->dnext = hd->dnext;
    else
        h->dhead = hd->dnext;
    if (hd->dnext)
        hd->dnext->dprev = hd->dprev;
    else
        h->dtail = hd->dprev;
    hqueue_t *q = hd->q;
    if (hd->qprev)
        hd->qprev->qnext = hd->qnext;
    else
        q->head = hd->qnext;
    if (hd->qnext)
        hd->qnext->qprev = hd->qprev;
    if (!q->head) {
        bk_map_del(h->queues, q->key, q->keylen);
        free(q);
    }
    hd->dprev = hd->dnext = hd->qprev = hd->qnext = NULL;
    hd->q = NULL;
    h->count--;
}

static void held_free(bk_hold_t *h, held_t *hd)
{
    h->drop(hd->parked, h->arg);
    bk_session_unref(hd->ss);
    free(hd);
}

/* Re-executes and frees a detached list (linked by dnext). */
static void hold_release(bk_hold_t *h, held_t *list, int expired)
{
    while (list) {
        held_t *hd = list;
        list = hd->dnext;
        if (bk_session_is_open(hd->ss))
            h->fn(hd->parked, expired, h->arg);
        held_free(h, hd);
    }
}

/* Timer: releases every pull whose deadline has passed. */
static void hold_timer(evutil_socket_t fd, short what, void *arg)
{
    bk_hold_t *h = arg;
    int64_t now = rmq_mono_ms();
    held_t *list = NULL, **tail = &list;
    h->armed_ms = 0;
    while (h->dhead && h->dhead->deadline_ms <= now) {
        held_t *hd = h->dhead;
        hold_unlink(h, hd);
        *tail = hd;
        tail = &hd->dnext;
    }
    hold_arm(h);
    hold_release(h, list, 1);
}

bk_hold_t *bk_hold_new(struct event_base *base, bk_hold_fn fn, bk_hold_drop_fn drop, void *arg)
{
    bk_hold_t *h = calloc(1, sizeof(*h));
    if (!h)
        return NULL;
    h->fn = fn;
    h->drop = drop;
    h->arg = arg;
    h->queues = bk_map_new();
    h->timer = evtimer_new(base, hold_timer, h);
    if (!h->queues || !h->timer) {
        bk_hold_free(h);
        return NULL;
    }
    return h;
}

void bk_hold_free(bk_hold_t *h)
{
    if (!h)
        return;
    while (h->dhead) {
        held_t *hd = h->dhead;
        hold_unlink(h, hd);
        held_free(h, hd);
    }
    if (h->timer)
        event_free(h->timer);
    bk_map_free(h->queues, free);
    free(h);
}

/* Inserts hd into the deadline list, scanning from the tail. */
static void hold_insert_deadline(bk_hold_t *h, held_t *hd)
{
    held_t *after = h->dtail;
    while (after && after->deadline_ms > hd->deadline_ms)
        after = after->dprev;
    hd->dprev = after;
    hd->dnext = after ? after->dnext : h->dhead;
    if (hd->dnext)
        hd->dnext->dprev = hd;
    else
        h->dtail = hd;
    if (after)
        after->dnext = hd;
    else
        h->dhead = hd;
}

rmq_err_t bk_hold_add(bk_hold_t *h, bk_session_t *ss, void *parked, const char *topic, int32_t queue_id,
                      int64_t offset, const st_tag_filter_t *filter, int64_t deadline_ms)
{
    char key[160];
    size_t klen = hold_key(key, sizeof(key), topic, queue_id);
    if (!klen)
        return RMQ_EINVAL;
    hqueue_t *q = bk_map_get(h->queues, key, klen);
    if (!q) {
        if (!(q = calloc(1, sizeof(*q) + klen + 1)))
            return RMQ_ENOMEM;
        memcpy(q->key, key, klen);
        q->keylen = klen;
        if (bk_map_put(h->queues, q->key, klen, q) != RMQ_OK) {
            free(q);
            return RMQ_ENOMEM;
        }
    }
    held_t *hd = calloc(1, sizeof(*hd));
    if (!hd) {
        if (!q->head) {
            bk_map_del(h->queues, key, klen);
            free(q);
        }
        return RMQ_ENOMEM;
    }
    bk_session_ref(ss);
    hd->ss = ss;
    hd->parked = parked;
    hd->offset = offset;
    hd->deadline_ms = deadline_ms;
    hd->match_all = filter->match_all || filter->n_codes > BK_HOLD_MAX_CODES;
    if (!hd->match_all) {
        hd->n_codes = filter->n_codes;
        memcpy(hd->codes, filter->codes, filter->n_codes * sizeof(hd->codes[0]));
    }
    hd->q = q;
    hd->qnext = q->head;
    if (q->head)
        q->head->qprev = hd;
    q->head = hd;
    hold_insert_deadline(h, hd);
    h->count++;
    hold_arm(h);
    return RMQ_OK;
}

/* 1 if a message with tag_code passes hd's filter (no tag code: always). */
static int held_matches(const held_t *hd, int64_t tag_code)
{
    if (hd->match_all || tag_code == 0)
        return 1;
    for (size_t i = 0; i < hd->n_codes; i++)
        if (hd->codes[i] == tag_code)
            return 1;
    return 0;
}

void bk_hold_arrived(bk_hold_t *h, const char *topic, int32_t queue_id, int64_t max_offset,
                     int64_t tag_code)
{
    if (h->count == 0)
        return;
    char key[160];
    size_t klen = hold_key(key, sizeof(key), topic, queue_id);
    hqueue_t *q = klen ? bk_map_get(h->queues, key, klen) : NULL;
    if (!q)
        return;
    held_t *list = NULL, **tail = &list;
    held_t *hd = q->head;
    while (hd) {
        held_t *next = hd->qnext;
        if (hd->offset < max_offset && held_matches(hd, tag_code)) {
            hold_unlink(h, hd);   /* frees q once it empties: then next is NULL */
            *tail = hd;
            tail = &hd->dnext;
        }
        hd = next;
    }
    if (!list)
        return;
    hold_arm(h);
    hold_release(h, list, 0);
}

void bk_hold_session_closed(bk_hold_t *h, bk_session_t *ss)
{
    held_t *hd = h->dhead;
    while (hd) {
        held_t *next = hd->dnext;
        if (hd->ss == ss) {
            hold_unlink(h, hd);
            held_free(h, hd);
        }
        hd = next;
    }
    hold_arm(h);
}

void bk_hold_release_all(bk_hold_t *h)
{
    held_t *list = NULL, **tail = &list;
    while (h->dhead) {
        held_t *hd = h->dhead;
        hold_unlink(h, hd);
        *tail = hd;
        tail = &hd->dnext;
    }
    hold_arm(h);
    hold_release(h, list, 1);
}

size_t bk_hold_count(const bk_hold_t *h)
{
    return h->count;
}
