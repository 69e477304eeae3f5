/* rmq_histogram.h: a log-linear latency histogram. Fixed memory, no
 * allocation per record; one per thread on hot paths, merged at the end.
 * Values are non-negative integers (for example microseconds); relative
 * error of a reported percentile is below 1/32. Not thread-safe. */
#ifndef RMQ_HISTOGRAM_H
#define RMQ_HISTOGRAM_H

#include <stdint.h>

#define RMQ_HIST_SUB_BITS 5          /* 32 linear sub-buckets per power of two */
#define RMQ_HIST_BUCKETS (64 * (1 << RMQ_HIST_SUB_BITS))

typedef struct rmq_histogram {
    uint64_t counts[RMQ_HIST_BUCKETS];
    uint64_t total;
    uint64_t sum;
    uint64_t min;
    uint64_t max;
} rmq_histogram_t;

void rmq_histogram_init(rmq_histogram_t *h);
void rmq_histogram_record(rmq_histogram_t *h, uint64_t value);
/* Adds every count of src into dst. */
void rmq_histogram_merge(rmq_histogram_t *dst, const rmq_histogram_t *src);
/* Value at quantile q in [0,1] (upper edge of its bucket, capped at max); 0 if empty. */
uint64_t rmq_histogram_percentile(const rmq_histogram_t *h, double q);
double rmq_histogram_mean(const rmq_histogram_t *h);

#endif
