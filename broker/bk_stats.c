/* bk_stats.c: rate windows over a ring of per-second counter samples. */
#include "bk_stats.h"

#include <stdio.h>

void bk_stats_sample(bk_stats_t *s)
{
    s->head = (s->head + 1) % BK_STATS_SAMPLES;
    for (int i = 0; i < BK_STAT_N; i++)
        s->ring[s->head][i] = s->total[i];
    if (s->filled < BK_STATS_SAMPLES)
        s->filled++;
}

/* Rate per second of a+b over the last secs seconds (fewer if not sampled yet). */
static double stats_rate(const bk_stats_t *s, int a, int b, size_t secs)
{
    if (s->filled < 2)
        return 0;
    if (secs > s->filled - 1)
        secs = s->filled - 1;
    size_t old = (s->head + BK_STATS_SAMPLES - secs) % BK_STATS_SAMPLES;
    int64_t d = s->ring[s->head][a] - s->ring[old][a];
    if (b >= 0)
        d += s->ring[s->head][b] - s->ring[old][b];
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
