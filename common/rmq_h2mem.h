/* rmq_h2mem.h: the allocator of one HTTP/2 connection: nghttp2's (a dozen
 * or more small blocks per request: the stream, frames, header buffers,
 * HPACK table entries) and the gRPC codec's calls. The pool keeps freed
 * blocks on free lists by size class and hands them back, so a request on
 * a warm connection costs no malloc and no free. Loop thread only: the
 * pool has no lock. */
#ifndef RMQ_H2MEM_H
#define RMQ_H2MEM_H

#include <nghttp2/nghttp2.h>

typedef struct rmq_h2mem rmq_h2mem_t;

/* A new pool, the caller's reference; NULL when out of memory. */
rmq_h2mem_t *rmq_h2mem_new(void);

/* The allocator to start a session with (nghttp2_session_server_new3);
 * the pool's, valid until it is freed. */
nghttp2_mem *rmq_h2mem_mem(rmq_h2mem_t *pool);

/* malloc, realloc, calloc and free of pool's blocks (a block goes back to
 * the pool it came from). */
void *rmq_h2mem_alloc(rmq_h2mem_t *pool, size_t size);
void *rmq_h2mem_realloc(rmq_h2mem_t *pool, void *p, size_t size);
void *rmq_h2mem_calloc(rmq_h2mem_t *pool, size_t nmemb, size_t size);
void rmq_h2mem_free(rmq_h2mem_t *pool, void *p);

/* The owner lets go of pool (after nghttp2_session_del): the cached
 * blocks are freed now, the pool itself when the last block still out
 * (an nghttp2_rcbuf a call keeps) comes back. */
void rmq_h2mem_release(rmq_h2mem_t *pool);

#endif
