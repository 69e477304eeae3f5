/* rmq_histogram.c: log-linear bucketing for rmq_histogram_t. Values below
 * 32 get a bucket each; above, every power of two [2^m, 2^(m+1)) is split
 * into 32 equal sub-buckets, so a bucket is at most 1/32 of its lower edge
 * wide. Index = value for value < 32, else 32 * (m - 4) + sub-bucket. */
#include "rmq_histogram.h"

#include <math.h>
#include <string.h>

#define SUB_COUNT (1u << RMQ_HIST_SUB_BITS)

/* Returns the bucket index of value. */
static unsigned bucket_of(uint64_t value)
{
    if (value < SUB_COUNT)
        return (unsigned)value;
    unsigned msb = 63u - (unsigned)__builtin_clzll(value);
    unsigned shift = msb - RMQ_HIST_SUB_BITS;
    unsigned sub = (unsigned)(value >> shift) & (SUB_COUNT - 1);
    return SUB_COUNT * (shift + 1) + sub;
}

/* Returns the largest value that falls in bucket idx. */
static uint64_t bucket_upper(unsigned idx)
{
    if (idx < SUB_COUNT)
        return idx;
    unsigned shift = idx / SUB_COUNT - 1;
    uint64_t lower = (uint64_t)(SUB_COUNT + idx % SUB_COUNT) << shift;
    return lower + ((UINT64_C(1) << shift) - 1);
}

void rmq_histogram_init(rmq_histogram_t *h)
{
    memset(h, 0, sizeof(*h));
}

void rmq_histogram_record(rmq_histogram_t *h, uint64_t value)
{
    h->counts[bucket_of(value)]++;
    if (h->total == 0 || value < h->min)
        h->min = value;
    if (value > h->max)
        h->max = value;
    h->total++;
    h->sum += value;
}

void rmq_histogram_merge(rmq_histogram_t *dst, const rmq_histogram_t *src)
{
    if (src->total == 0)
        return;
    for (unsigned i = 0; i < RMQ_HIST_BUCKETS; i++)
        dst->counts[i] += src->counts[i];
    if (dst->total == 0 || src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
    dst->total += src->total;
    dst->sum += src->sum;
}

uint64_t rmq_histogram_percentile(const rmq_histogram_t *h, double q)
{
    if (h->total == 0)
        return 0;
    if (!(q > 0.0))
        q = 0.0;
    if (q > 1.0)
        q = 1.0;
    uint64_t rank = (uint64_t)ceil(q * (double)h->total);
    if (rank == 0)
        rank = 1;
    if (rank > h->total)
        rank = h->total;
    uint64_t seen = 0;
    for (unsigned i = 0; i < RMQ_HIST_BUCKETS; i++) {
        seen += h->counts[i];
        if (seen >= rank) {
            uint64_t upper = bucket_upper(i);
            return upper < h->max ? upper : h->max;
        }
    }
    return h->max;
}

double rmq_histogram_mean(const rmq_histogram_t *h)
{
    return h->total == 0 ? 0.0 : (double)h->sum / (double)h->total;
}
