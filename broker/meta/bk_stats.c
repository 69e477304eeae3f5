/* bk_stats.c: rate windows over a ring of per-second counter samples. */
#include "bk_stats.h"

#include <stdio.h>

void bk_ring_advance(bk_ring_t *r, size_t cap)
{
    r->head = (r->head + 1) % cap;
    if (r->filled < cap)
        r->filled++;
}

size_t bk_ring_past(const bk_ring_t *r, size_t cap, size_t *secs)
{
    if (r->filled < 2)
        *secs = 0;
    else if (*secs > r->filled - 1)
        *secs = r->filled - 1;
    return (r->head + cap - *secs) % cap;
}

void bk_stats_sample(bk_stats_t *s)
{
    bk_ring_advance(&s->pos, BK_STATS_SAMPLES);
    for (int i = 0; i < BK_STAT_N; i++)
        s->ring[s->pos.head][i] = s->total[i];
}

/* Rate per second of a+b over the last secs seconds (fewer if not sampled yet). */
static double stats_rate(const bk_stats_t *s, int a, int b, size_t secs)
{
    size_t old = bk_ring_past(&s->pos, BK_STATS_SAMPLES, &secs);
    if (secs == 0)
        return 0;
    int64_t d = s->ring[s->pos.head][a] - s->ring[old][a];
    if (b >= 0)
        d += s->ring[s->pos.head][b] - s->ring[old][b];
    return (double)d / (double)secs;
}

void bk_stats_tps2(const bk_stats_t *s, enum bk_stat a, enum bk_stat b, char *buf, size_t len)
{
    snprintf(buf, len, "%.2f %.2f %.2f", stats_rate(s, (int)a, (int)b, 10),
             stats_rate(s, (int)a, (int)b, 60), stats_rate(s, (int)a, (int)b, 600));
}

void bk_stats_tps(const bk_stats_t *s, enum bk_stat which, char *buf, size_t len)
{
    snprintf(buf, len, "%.2f %.2f %.2f", stats_rate(s, (int)which, -1, 10),
             stats_rate(s, (int)which, -1, 60), stats_rate(s, (int)which, -1, 600));
}
