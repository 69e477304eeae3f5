/* bk_stats.h: request counters and their rates over 10 s, 1 min and 10 min
 * windows (RocketMQ's "putTps" style: three space-separated numbers),
 * sampled once a second by the broker's housekeeping timer, and the ring
 * position arithmetic other per-second samplers (bk_groupstats) share.
 * Loop thread. */
#ifndef BK_STATS_H
#define BK_STATS_H

#include <stddef.h>
#include <stdint.h>

enum bk_stat { BK_STAT_PUT, BK_STAT_GET_FOUND, BK_STAT_GET_MISS, BK_STAT_GET_TRANSFERRED, BK_STAT_BUSY, BK_STAT_N };

#define BK_STATS_SAMPLES 601

/* Where the newest of a ring of once-a-second samples sits. */
typedef struct bk_ring {
    size_t head;                                 /* index of the newest sample */
    size_t filled;                               /* samples taken, at most the ring's size */
} bk_ring_t;

/* Moves head to the slot the next sample goes to in a ring of cap slots. */
void bk_ring_advance(bk_ring_t *r, size_t cap);
/* Cuts *secs to the seconds the samples taken span and returns the slot of
 * the sample that many seconds before the newest; *secs 0: no rate yet. */
size_t bk_ring_past(const bk_ring_t *r, size_t cap, size_t *secs);

typedef struct bk_stats {
    int64_t total[BK_STAT_N];
    int64_t ring[BK_STATS_SAMPLES][BK_STAT_N];   /* totals, one sample per second */
    bk_ring_t pos;
} bk_stats_t;

static inline void bk_stats_add(bk_stats_t *s, enum bk_stat which, int64_t n)
{
    s->total[which] += n;
}

/* Records the current totals as the newest one-second sample. */
void bk_stats_sample(bk_stats_t *s);
/* Writes "tps10s tps1m tps10m" of which into buf. */
void bk_stats_tps(const bk_stats_t *s, enum bk_stat which, char *buf, size_t len);
/* Same for the sum of two counters. */
void bk_stats_tps2(const bk_stats_t *s, enum bk_stat a, enum bk_stat b, char *buf, size_t len);

#endif
