/* rmq_h2mem.c: the nghttp2 allocator of one HTTP/2 connection (see
 * rmq_h2mem.h). Blocks of up to H2MEM_SMALL_MAX bytes come in power-of-two
 * size classes; a freed one goes on its class's free list while the pool
 * caches fewer than H2MEM_CACHE_MAX bytes, and the next request of the
 * class takes it back. Larger blocks are malloc's own. Each block opens
 * with a header (its class, the free-list link) and counts as out until
 * freed, so the pool outlives its owner as long as nghttp2 buffers it
 * handed out do. Under AddressSanitizer every block is malloc's, of the
 * size asked for, and goes back to free: ASan watches each one's bounds
 * and its use after free as it would without the pool. */
#include "rmq_h2mem.h"

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#if defined(__SANITIZE_ADDRESS__)
#define H2MEM_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define H2MEM_ASAN 1
#endif
#endif

#define H2MEM_MIN_SHIFT 5                            /* the smallest class: 32 bytes */
#define H2MEM_CLASSES 8                              /* 32 .. 4096 bytes */
#define H2MEM_SMALL_MAX ((size_t)1 << (H2MEM_MIN_SHIFT + H2MEM_CLASSES - 1))
#define H2MEM_LARGE UINT32_MAX                       /* the class of a malloc'd block */
#define H2MEM_CACHE_MAX ((size_t)256 << 10)          /* bytes on the free lists */
#ifdef H2MEM_ASAN
#define H2MEM_POOLED 0    /* AddressSanitizer sees each block at its size, and each free */
#else
#define H2MEM_POOLED 1
#endif

/* A block's header; the caller's bytes follow it, max_align_t aligned. */
typedef union h2_block {
    struct {
        union h2_block *next;    /* on a free list */
        uint32_t cls;            /* size class, H2MEM_LARGE for malloc's */
        size_t size;             /* a large block's bytes */
    } h;
    max_align_t align;
} h2_block_t;

struct rmq_h2mem {
    nghttp2_mem mem;
    h2_block_t *free[H2MEM_CLASSES];
    size_t cached;               /* bytes on the free lists */
    size_t out;                  /* blocks handed out and not freed */
    int released;                /* the owner let go */
};

static size_t class_size(uint32_t cls)
{
    return (size_t)1 << (H2MEM_MIN_SHIFT + cls);
}

/* The class of a request of size bytes (at most H2MEM_SMALL_MAX). */
static uint32_t class_of(size_t size)
{
    if (size <= class_size(0))
        return 0;
    return (uint32_t)(sizeof(unsigned long) * 8 - (size_t)__builtin_clzl(size - 1) - H2MEM_MIN_SHIFT);
}

static void *block_data(h2_block_t *b)
{
    return b + 1;
}

static h2_block_t *data_block(void *p)
{
    return (h2_block_t *)p - 1;
}

/* A block of cls off its free list, or a new one from malloc. */
static h2_block_t *small_take(rmq_h2mem_t *pool, uint32_t cls)
{
    h2_block_t *b = pool->free[cls];

    if (b == NULL) {
        b = malloc(sizeof(*b) + class_size(cls));
        if (b != NULL)
            b->h.cls = cls;
        return b;
    }
    pool->free[cls] = b->h.next;
    pool->cached -= class_size(cls);
    return b;
}

void *rmq_h2mem_alloc(rmq_h2mem_t *pool, size_t size)
{
    h2_block_t *b;

    if (H2MEM_POOLED && size <= H2MEM_SMALL_MAX) {
        b = small_take(pool, class_of(size));
    } else {
        b = size < SIZE_MAX - sizeof(*b) ? malloc(sizeof(*b) + size) : NULL;
        if (b != NULL) {
            b->h.cls = H2MEM_LARGE;
            b->h.size = size;
        }
    }
    if (b == NULL)
        return NULL;
    pool->out++;
    return block_data(b);
}

/* Frees the blocks on the free lists. */
static void pool_drop_cache(rmq_h2mem_t *pool)
{
    for (uint32_t cls = 0; cls < H2MEM_CLASSES; cls++) {
        while (pool->free[cls] != NULL) {
            h2_block_t *b = pool->free[cls];
            pool->free[cls] = b->h.next;
            free(b);
        }
    }
    pool->cached = 0;
}

static void pool_destroy(rmq_h2mem_t *pool)
{
    pool_drop_cache(pool);
    free(pool);
}

void rmq_h2mem_free(rmq_h2mem_t *pool, void *p)
{
    if (p == NULL)
        return;
    h2_block_t *b = data_block(p);
    pool->out--;
    if (b->h.cls == H2MEM_LARGE || pool->released ||
        pool->cached + class_size(b->h.cls) > H2MEM_CACHE_MAX) {
        free(b);
    } else {
        b->h.next = pool->free[b->h.cls];
        pool->free[b->h.cls] = b;
        pool->cached += class_size(b->h.cls);
    }
    if (pool->released && pool->out == 0)
        pool_destroy(pool);
}

/* A block that holds size already stays; a smaller one moves. */
void *rmq_h2mem_realloc(rmq_h2mem_t *pool, void *p, size_t size)
{
    if (p == NULL)
        return rmq_h2mem_alloc(pool, size);
    h2_block_t *b = data_block(p);
    size_t have = b->h.cls == H2MEM_LARGE ? b->h.size : class_size(b->h.cls);
    if (size <= have)
        return p;
    void *moved = rmq_h2mem_alloc(pool, size);
    if (moved == NULL)
        return NULL;
    memcpy(moved, p, have);
    rmq_h2mem_free(pool, p);
    return moved;
}

void *rmq_h2mem_calloc(rmq_h2mem_t *pool, size_t nmemb, size_t size)
{
    if (size != 0 && nmemb > SIZE_MAX / size)
        return NULL;
    void *p = rmq_h2mem_alloc(pool, nmemb * size);
    if (p != NULL)
        memset(p, 0, nmemb * size);
    return p;
}

/* ---- nghttp2_mem: the same, the pool as user data ---- */

static void *mem_malloc(size_t size, void *pool)
{
    return rmq_h2mem_alloc(pool, size);
}

static void mem_free(void *p, void *pool)
{
    rmq_h2mem_free(pool, p);
}

static void *mem_calloc(size_t nmemb, size_t size, void *pool)
{
    return rmq_h2mem_calloc(pool, nmemb, size);
}

static void *mem_realloc(void *p, size_t size, void *pool)
{
    return rmq_h2mem_realloc(pool, p, size);
}

rmq_h2mem_t *rmq_h2mem_new(void)
{
    rmq_h2mem_t *pool = calloc(1, sizeof(*pool));

    if (pool == NULL)
        return NULL;
    pool->mem = (nghttp2_mem){ pool, mem_malloc, mem_free, mem_calloc, mem_realloc };
    return pool;
}

nghttp2_mem *rmq_h2mem_mem(rmq_h2mem_t *pool)
{
    return &pool->mem;
}

void rmq_h2mem_release(rmq_h2mem_t *pool)
{
    if (pool == NULL)
        return;
    if (pool->out == 0) {
        pool_destroy(pool);
        return;
    }
    pool->released = 1;
    pool_drop_cache(pool);
}
