/* st_pool.c: the transient store pool's buffers (see st_pool.h). */
#include "st_pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "rmq_log.h"

struct st_pool {
    int n, nfree;
    int64_t size;
    uint8_t **all;                   /* every buffer, for st_pool_free */
    uint8_t **free_bufs;             /* stack of buffers not lent out */
};

/* Maps one buffer (address space only until its pages are touched). */
static uint8_t *pool_map(int64_t size)
{
    void *p = mmap(NULL, (size_t)size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);

    if (p == MAP_FAILED)
        return NULL;
    madvise(p, (size_t)size, MADV_HUGEPAGE);   /* fewer first-touch faults where THP is on */
    return p;
}

rmq_err_t st_pool_new(int n, int64_t size, st_pool_t **out)
{
    st_pool_t *pool = calloc(1, sizeof(*pool));

    *out = NULL;
    if (!pool || n <= 0 || !(pool->all = calloc((size_t)n, sizeof(*pool->all))) ||
        !(pool->free_bufs = calloc((size_t)n, sizeof(*pool->free_bufs)))) {
        st_pool_free(pool);
        return RMQ_ENOMEM;
    }
    pool->size = size;
    for (int i = 0; i < n; i++) {
        if (!(pool->all[i] = pool_map(size))) {
            LOG_ERROR("transientStorePool: mmap of a %lld-byte buffer: %s", (long long)size, strerror(errno));
            st_pool_free(pool);
            return RMQ_ENOMEM;
        }
        pool->free_bufs[pool->n++] = pool->all[i];
    }
    pool->nfree = pool->n;
    LOG_INFO("transientStorePool: %d buffers of %lld bytes of address space", n, (long long)size);
    *out = pool;
    return RMQ_OK;
}

void st_pool_free(st_pool_t *pool)
{
    if (!pool)
        return;
    for (int i = 0; i < pool->n; i++)
        munmap(pool->all[i], (size_t)pool->size);
    free(pool->all);
    free(pool->free_bufs);
    free(pool);
}

uint8_t *st_pool_borrow(st_pool_t *pool)
{
    if (pool->nfree == 0) {
        LOG_WARN_RL("transientStorePool: all %d buffers lent out; this commit-log file is written "
                    "through its mapping", pool->n);
        return NULL;
    }
    return pool->free_bufs[--pool->nfree];
}

void st_pool_return(st_pool_t *pool, uint8_t *buf)
{
    pool->free_bufs[pool->nfree++] = buf;
}

int st_pool_lent(const st_pool_t *pool)
{
    return pool->n - pool->nfree;
}
