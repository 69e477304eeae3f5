/* st_pool.h: the transient store pool (RocketMQ's transientStorePoolEnable):
 * a fixed number of page-aligned anonymous buffers, each one commit-log file
 * long, lent to the active commit-log segment. Appends are encoded into the
 * buffer and the loop write()s each append's bytes to the file as it
 * publishes them (st_segment_commit); the flush thread fdatasyncs the file.
 * So nobody writes through the file mapping and no sync write-protects
 * its pages, while the file holds every append as soon as the mapping
 * would (a process crash loses nothing more).
 *
 * Buffers are mapped at st_pool_new but only take memory as their pages are
 * touched, and the pages of what is in the file go back to the kernel
 * ST_RELEASE_CHUNK at a time (st_segment_commit), so a lent buffer holds
 * about one chunk of memory. Loop thread only. */
#ifndef ST_POOL_H
#define ST_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"

typedef struct st_pool st_pool_t;

/* n buffers of size bytes (a multiple of the page size). RMQ_ENOMEM if the
 * address space cannot be reserved. */
rmq_err_t st_pool_new(int n, int64_t size, st_pool_t **out);
/* Unmaps every buffer; all must have been returned. NULL is a no-op. */
void st_pool_free(st_pool_t *pool);
/* A free buffer (contents undefined), or NULL when all are lent out. */
uint8_t *st_pool_borrow(st_pool_t *pool);
/* Gives a borrowed buffer back. */
void st_pool_return(st_pool_t *pool, uint8_t *buf);
/* Buffers lent out now. */
int st_pool_lent(const st_pool_t *pool);

#endif
