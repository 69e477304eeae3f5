/* rmq_pq.h: a push consumer's process queue: the messages of one message
 * queue pulled but not yet consumed, and the offset that may be committed
 * (the lowest one not yet consumed). Shared by the loop thread (adds) and
 * the consume threads (completions), so guarded by its own mutex. */
#ifndef RMQ_PQ_H
#define RMQ_PQ_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

typedef struct rmq_pq {
    pthread_mutex_t mu;
    int64_t *offs;                  /* ring of cached offsets, increasing */
    uint8_t *done;                  /* consumed flag per ring slot */
    size_t head, len, cap;
    int64_t pulled_next;            /* next offset to pull, as of the last add */
    size_t bytes;                   /* body bytes cached and not consumed */
    size_t pending;                 /* messages cached and not consumed */
} rmq_pq_t;

void rmq_pq_init(rmq_pq_t *pq, int64_t start);
void rmq_pq_deinit(rmq_pq_t *pq);
/* Records n pulled offsets (increasing) of total bytes, then the next pull offset. */
int rmq_pq_add(rmq_pq_t *pq, const int64_t *offs, size_t n, size_t bytes, int64_t next);
/* Sets the next pull offset when nothing is cached (OFFSET_MOVED, NOT_FOUND). */
void rmq_pq_set_next(rmq_pq_t *pq, int64_t next);
/* Marks offset consumed (bytes of body). */
void rmq_pq_done(rmq_pq_t *pq, int64_t offset, size_t bytes);
/* The lowest offset not yet consumed (the commit offset). */
int64_t rmq_pq_commit_offset(rmq_pq_t *pq);
/* Messages and bytes cached and not consumed. */
void rmq_pq_load(rmq_pq_t *pq, size_t *count, size_t *bytes);

#endif
