/* rmq_metrics.h: writing the Prometheus text exposition format (0.0.4)
 * into an evbuffer, and a fixed-bucket latency histogram to feed it.
 *
 * Conventions the daemons follow: names rmq_<daemon>_<what>_<unit>,
 * counters end in _total, latencies are histograms in seconds. A family is
 * one rmq_metrics_family line pair followed by its samples. Label sets are
 * built with rmq_metrics_label into a caller buffer (values escaped). */
#ifndef RMQ_METRICS_H
#define RMQ_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

/* Bucket upper bounds in seconds, 100 us .. 10 s, plus +Inf. */
#define RMQ_MHIST_BOUNDS 16

typedef struct rmq_mhist {
    uint64_t counts[RMQ_MHIST_BOUNDS + 1];   /* per bucket, not cumulative; last is +Inf */
    uint64_t count;
    uint64_t sum_us;
} rmq_mhist_t;

/* Records one latency in microseconds (negative counts as 0). Not
 * thread-safe: one owner thread. */
void rmq_mhist_observe_us(rmq_mhist_t *h, int64_t us);

/* Upper bound of bucket i (0..RMQ_MHIST_BOUNDS-1) in seconds. */
double rmq_mhist_bound(int i);

/* Writes "# HELP name help" and "# TYPE name type" (type: counter, gauge,
 * histogram). */
void rmq_metrics_family(struct evbuffer *out, const char *name, const char *type, const char *help);

/* Appends key="value" (comma-separated after the first) to the label set
 * in buf (NUL-terminated, start with ""). Escapes \, " and newline. A
 * label that does not fit is dropped whole. */
void rmq_metrics_label(char *buf, size_t cap, const char *key, const char *value);
/* Same with an integer value. */
void rmq_metrics_label_int(char *buf, size_t cap, const char *key, long long value);

/* One sample line "name{labels} value"; labels NULL or "" for none. */
void rmq_metrics_sample(struct evbuffer *out, const char *name, const char *labels, double value);
void rmq_metrics_sample_u64(struct evbuffer *out, const char *name, const char *labels, uint64_t value);
void rmq_metrics_sample_i64(struct evbuffer *out, const char *name, const char *labels, int64_t value);

/* The samples of histogram family name: name_bucket{labels,le=...}
 * (cumulative, ending with +Inf), name_sum (seconds) and name_count. */
void rmq_metrics_hist(struct evbuffer *out, const char *name, const char *labels, const rmq_mhist_t *h);

#endif
