/* ns_hist.c: the console's hour of samples (ns_hist.h): one ring of slot
 * times shared by every series, each series two float rings beside it (NaN:
 * not sampled in that slot), the tables of the three kinds allocated at
 * once. */
#include "ns_hist.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <stdio.h>

typedef struct hist_series {
    char name[NS_HIST_NAME_MAX + 1];             /* "" when free */
    float a[NS_HIST_SLOTS], b[NS_HIST_SLOTS];
} hist_series_t;

static const size_t kind_cap[NS_HIST_KIND_COUNT] = {
    [NS_HIST_BROKER] = NS_HIST_BROKERS, [NS_HIST_TOPIC] = NS_HIST_TOPICS, [NS_HIST_GROUP] = NS_HIST_GROUPS};

struct ns_hist {
    int64_t t_ms[NS_HIST_SLOTS];                 /* each slot's wall clock */
    size_t head;                                 /* the newest slot */
    size_t filled;                               /* slots opened, at most NS_HIST_SLOTS */
    hist_series_t *series[NS_HIST_KIND_COUNT];   /* kind_cap[kind] each */
    size_t used[NS_HIST_KIND_COUNT];
};

ns_hist_t *ns_hist_new(void)
{
    ns_hist_t *h = calloc(1, sizeof(*h));
    for (int k = 0; h && k < NS_HIST_KIND_COUNT; k++) {
        if (!(h->series[k] = calloc(kind_cap[k], sizeof(hist_series_t)))) {
            ns_hist_free(h);
            return NULL;
        }
    }
    return h;
}

void ns_hist_free(ns_hist_t *h)
{
    for (int k = 0; h && k < NS_HIST_KIND_COUNT; k++)
        free(h->series[k]);
    free(h);
}

static void series_clear_slot(hist_series_t *s, size_t slot)
{
    s->a[slot] = s->b[slot] = NAN;
}

void ns_hist_tick(ns_hist_t *h, int64_t wall_ms)
{
    h->head = h->filled ? (h->head + 1) % NS_HIST_SLOTS : 0;
    if (h->filled < NS_HIST_SLOTS)
        h->filled++;
    h->t_ms[h->head] = wall_ms;
    for (int k = 0; k < NS_HIST_KIND_COUNT; k++)
        for (size_t i = 0; i < h->used[k]; i++)
            series_clear_slot(&h->series[k][i], h->head);
}

/* The mean of s's first values over the slots it was sampled in (0: none). */
static double series_mean(const ns_hist_t *h, const hist_series_t *s)
{
    double sum = 0;
    size_t n = 0;
    for (size_t i = 0; i < h->filled; i++)
        if (!isnan(s->a[i])) {
            sum += s->a[i];
            n++;
        }
    return n ? sum / (double)n : 0;
}

static hist_series_t *series_find(const ns_hist_t *h, ns_hist_kind_t kind, const char *name)
{
    for (size_t i = 0; i < h->used[kind]; i++)
        if (strcmp(h->series[kind][i].name, name) == 0)
            return &h->series[kind][i];
    return NULL;
}

/* A series for name, whose first value now is a: a free one, else the one
 * with the lowest mean when a is above it; NULL when none is given up. */
static hist_series_t *series_claim(ns_hist_t *h, ns_hist_kind_t kind, const char *name, double a)
{
    hist_series_t *s = NULL;
    if (h->used[kind] < kind_cap[kind]) {
        s = &h->series[kind][h->used[kind]++];
    } else {
        double low = 0;
        for (size_t i = 0; i < h->used[kind]; i++) {
            double m = series_mean(h, &h->series[kind][i]);
            if (!s || m < low) {
                s = &h->series[kind][i];
                low = m;
            }
        }
        if (a <= low)
            return NULL;
    }
    snprintf(s->name, sizeof(s->name), "%s", name);
    for (size_t i = 0; i < NS_HIST_SLOTS; i++)
        series_clear_slot(s, i);
    return s;
}

void ns_hist_add(ns_hist_t *h, ns_hist_kind_t kind, const char *name, double a, double b)
{
    if (!h->filled || (unsigned)kind >= NS_HIST_KIND_COUNT || strlen(name) > NS_HIST_NAME_MAX)
        return;
    hist_series_t *s = series_find(h, kind, name);
    if (!s && !(s = series_claim(h, kind, name, a)))
        return;
    s->a[h->head] = (float)(isnan(s->a[h->head]) ? a : s->a[h->head] + a);
    s->b[h->head] = (float)(isnan(s->b[h->head]) ? b : s->b[h->head] + b);
}

int ns_hist_kept(const ns_hist_t *h, ns_hist_kind_t kind, const char *name)
{
    return (unsigned)kind < NS_HIST_KIND_COUNT && series_find(h, kind, name) != NULL;
}

size_t ns_hist_count(const ns_hist_t *h, ns_hist_kind_t kind)
{
    return (unsigned)kind < NS_HIST_KIND_COUNT ? h->used[kind] : 0;
}

void ns_hist_each(const ns_hist_t *h, ns_hist_kind_t kind, ns_hist_name_fn fn, void *arg)
{
    for (size_t i = 0; i < ns_hist_count(h, kind); i++)
        fn(h->series[kind][i].name, arg);
}

void ns_hist_render(const ns_hist_t *h, ns_hist_kind_t kind, const char *name, int one_value,
                    struct evbuffer *out)
{
    const hist_series_t *s = (unsigned)kind < NS_HIST_KIND_COUNT ? series_find(h, kind, name) : NULL;
    size_t shown = 0;
    evbuffer_add(out, "[", 1);
    for (size_t k = 0; s && k < h->filled; k++) {
        size_t i = (h->head + NS_HIST_SLOTS - h->filled + 1 + k) % NS_HIST_SLOTS;
        if (isnan(s->a[i]))
            continue;
        evbuffer_add_printf(out, "%s[%" PRId64 ",%.2f", shown++ ? "," : "", h->t_ms[i], (double)s->a[i]);
        if (!one_value)
            evbuffer_add_printf(out, ",%.2f", (double)s->b[i]);
        evbuffer_add(out, "]", 1);
    }
    evbuffer_add(out, "]", 1);
}
