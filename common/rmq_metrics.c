/* rmq_metrics.c: Prometheus text format writer and fixed-bucket histograms. */
#include "rmq_metrics.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static const double bounds_s[RMQ_MHIST_BOUNDS] = {
    0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
    0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10,
};
static const int64_t bounds_us[RMQ_MHIST_BOUNDS] = {
    100, 250, 500, 1000, 2500, 5000, 10000, 25000,
    50000, 100000, 250000, 500000, 1000000, 2500000, 5000000, 10000000,
};

double rmq_mhist_bound(int i)
{
    return bounds_s[i];
}

void rmq_mhist_observe_us(rmq_mhist_t *h, int64_t us)
{
    if (us < 0)
        us = 0;
    int i = 0;
    while (i < RMQ_MHIST_BOUNDS && us > bounds_us[i])
        i++;
    h->counts[i]++;
    h->count++;
    h->sum_us += (uint64_t)us;
}

void rmq_metrics_family(struct evbuffer *out, const char *name, const char *type, const char *help)
{
    evbuffer_add_printf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void rmq_metrics_label(char *buf, size_t cap, const char *key, const char *value)
{
    size_t len = strlen(buf), start = len;
    int n = snprintf(buf + len, cap - len, "%s%s=\"", len ? "," : "", key);
    if (n < 0 || (size_t)n >= cap - len)
        goto drop;
    len += (size_t)n;
    for (const char *p = value; *p; p++) {
        const char *esc = *p == '\\' ? "\\\\" : *p == '"' ? "\\\"" : *p == '\n' ? "\\n" : NULL;
        size_t need = esc ? 2 : 1;
        if (len + need + 2 > cap)
            goto drop;
        if (esc)
            memcpy(buf + len, esc, 2);
        else
            buf[len] = *p;
        len += need;
    }
    if (len + 2 > cap)
        goto drop;
    buf[len++] = '"';
    buf[len] = '\0';
    return;
drop:
    buf[start] = '\0';
}

void rmq_metrics_label_int(char *buf, size_t cap, const char *key, long long value)
{
    char v[24];
    snprintf(v, sizeof(v), "%lld", value);
    rmq_metrics_label(buf, cap, key, v);
}

/* "name{labels}" or "name" into out. */
static void sample_name(struct evbuffer *out, const char *name, const char *labels)
{
    if (labels && labels[0])
        evbuffer_add_printf(out, "%s{%s} ", name, labels);
    else
        evbuffer_add_printf(out, "%s ", name);
}

void rmq_metrics_sample(struct evbuffer *out, const char *name, const char *labels, double value)
{
    sample_name(out, name, labels);
    if (isnan(value))
        evbuffer_add_printf(out, "NaN\n");
    else if (isinf(value))
        evbuffer_add_printf(out, "%s\n", value > 0 ? "+Inf" : "-Inf");
    else
        evbuffer_add_printf(out, "%.17g\n", value);
}

void rmq_metrics_sample_u64(struct evbuffer *out, const char *name, const char *labels, uint64_t value)
{
    sample_name(out, name, labels);
    evbuffer_add_printf(out, "%" PRIu64 "\n", value);
}

void rmq_metrics_sample_i64(struct evbuffer *out, const char *name, const char *labels, int64_t value)
{
    sample_name(out, name, labels);
    evbuffer_add_printf(out, "%" PRId64 "\n", value);
}

void rmq_metrics_hist(struct evbuffer *out, const char *name, const char *labels, const rmq_mhist_t *h)
{
    char full[128];
    const char *sep = labels && labels[0] ? "," : "";
    uint64_t cum = 0;
    snprintf(full, sizeof(full), "%s_bucket", name);
    for (int i = 0; i <= RMQ_MHIST_BOUNDS; i++) {
        cum += h->counts[i];
        if (i < RMQ_MHIST_BOUNDS)
            evbuffer_add_printf(out, "%s{%s%sle=\"%g\"} %" PRIu64 "\n", full, labels ? labels : "", sep,
                                bounds_s[i], cum);
        else
            evbuffer_add_printf(out, "%s{%s%sle=\"+Inf\"} %" PRIu64 "\n", full, labels ? labels : "", sep,
                                cum);
    }
    snprintf(full, sizeof(full), "%s_sum", name);
    rmq_metrics_sample(out, full, labels, (double)h->sum_us / 1e6);
    snprintf(full, sizeof(full), "%s_count", name);
    rmq_metrics_sample_u64(out, full, labels, h->count);
}
