/* bk_groupstats.c: per (group, topic) pull counters in a bk_map keyed
 * "topic@group" (names cannot contain '@'). All entries are sampled in
 * lockstep, so one ring position serves them all; an entry starts with a
 * ring of zeros, which is what it would have held had it existed since boot. */
#include "bk_groupstats.h"

#include <stdlib.h>
#include <string.h>

#include "bk_map.h"
#include "bk_stats.h"
#include "rmq_log.h"
#include "rmq_message.h"

#define GS_SAMPLES (BK_GROUPSTATS_WINDOW_SECS + 1)

typedef struct gs_entry {
    int64_t total;                /* messages pulled since the entry was made */
    int64_t ring[GS_SAMPLES];     /* total at each of the last samples */
    int idle;                     /* samples in a row without a pull */
} gs_entry_t;

struct bk_groupstats {
    bk_map_t *map;                /* "topic@group" -> gs_entry_t, owned */
    bk_ring_t pos;
};

bk_groupstats_t *bk_groupstats_new(void)
{
    bk_groupstats_t *gs = calloc(1, sizeof(*gs));
    if (!gs)
        return NULL;
    if (!(gs->map = bk_map_new())) {
        free(gs);
        return NULL;
    }
    return gs;
}

void bk_groupstats_free(bk_groupstats_t *gs)
{
    if (!gs)
        return;
    bk_map_free(gs->map, free);
    free(gs);
}

void bk_groupstats_add(bk_groupstats_t *gs, const char *group, const char *topic, int64_t n)
{
    char key[2 * RMQ_TOPIC_MAX + 2];
    size_t klen = rmq_topic_group_key(key, sizeof(key), topic, group);
    if (!klen)
        return;
    gs_entry_t *e = bk_map_get(gs->map, key, klen);
    if (!e) {
        if (!(e = calloc(1, sizeof(*e))) || bk_map_put(gs->map, key, klen, e) != RMQ_OK) {
            free(e);
            LOG_WARN_RL("consume stats: out of memory, pulls of group %s from %s not counted", group, topic);
            return;
        }
    }
    e->total += n;
}

void bk_groupstats_sample(bk_groupstats_t *gs)
{
    size_t prev = gs->pos.head, cursor = 0;
    const char *key;
    void *val;
    bk_ring_advance(&gs->pos, GS_SAMPLES);
    while (bk_map_next(gs->map, &cursor, &key, &val)) {
        gs_entry_t *e = val;
        e->idle = e->total == e->ring[prev] ? e->idle + 1 : 0;
        if (e->idle >= BK_GROUPSTATS_IDLE_SECS)
            free(bk_map_del_current(gs->map, &cursor));
        else
            e->ring[gs->pos.head] = e->total;
    }
}

/* Messages per second of one entry over the window. */
static double gs_rate(const bk_groupstats_t *gs, const gs_entry_t *e)
{
    size_t secs = BK_GROUPSTATS_WINDOW_SECS;
    size_t old = bk_ring_past(&gs->pos, GS_SAMPLES, &secs);
    return secs ? (double)(e->ring[gs->pos.head] - e->ring[old]) / (double)secs : 0;
}

double bk_groupstats_tps(const bk_groupstats_t *gs, const char *group, const char *topic)
{
    if (topic[0]) {
        char key[2 * RMQ_TOPIC_MAX + 2];
        size_t klen = rmq_topic_group_key(key, sizeof(key), topic, group);
        const gs_entry_t *e = klen ? bk_map_get(gs->map, key, klen) : NULL;
        return e ? gs_rate(gs, e) : 0;
    }
    size_t cursor = 0;
    const char *key;
    void *val;
    double tps = 0;
    while (bk_map_next(gs->map, &cursor, &key, &val))
        if (strcmp(strrchr(key, '@') + 1, group) == 0)
            tps += gs_rate(gs, val);
    return tps;
}
