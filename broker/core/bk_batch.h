/* bk_batch.h: the scratch a front-end splits a batch send into (the
 * messages, their merged properties, the answer's comma-joined ids), kept
 * and reused across sends of one front-end. Whatever the wire's batch
 * encoding, the rules here are the same: an entry's properties followed by
 * the batch-level ones, and the ids of records stored one after another. */
#ifndef BK_BATCH_H
#define BK_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"
#include "st_store.h"

typedef struct bk_batch {
    st_msg_t *msgs;
    size_t msgs_cap;
    char *props;                     /* every message's merged properties, one after another */
    size_t props_cap;
    size_t props_len;
    char *ids;
    size_t ids_cap;
} bk_batch_t;

/* Grows *buf to at least need bytes (kept for reuse); -1 when out of memory. */
int bk_scratch_reserve(void **buf, size_t *cap, size_t need);

/* Room for n messages whose merged properties total at most props_total
 * bytes; empties props. RMQ_OK or RMQ_ENOMEM. */
rmq_err_t bk_batch_reserve(bk_batch_t *b, size_t n, size_t props_total);

/* Sets m's properties to own followed by extra (\x02 between), appended to
 * b->props (room reserved by bk_batch_reserve). */
void bk_batch_props(bk_batch_t *b, st_msg_t *m, const char *own, size_t own_len, const char *extra,
                    size_t extra_len);

/* The comma-joined message ids of b->msgs[0..n), stored one after another
 * in st from commit-log offset phys; NULL when out of memory. */
const char *bk_batch_ids(bk_batch_t *b, const st_store_t *st, int64_t phys, size_t n);

void bk_batch_free(bk_batch_t *b);

#endif
