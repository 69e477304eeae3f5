/* rmq_loop.h: posting work to another thread's libevent loop. The owning
 * loop runs posted functions in FIFO order on its own thread; posting never
 * blocks and never touches the loop's buffers. Needs evthread_use_pthreads()
 * (rmq_loop_global_init) before any base is created. */
#ifndef RMQ_LOOP_H
#define RMQ_LOOP_H

#include <event2/event.h>

#include "rmq_err.h"

typedef struct rmq_loop_poster rmq_loop_poster_t;
typedef void (*rmq_loop_fn)(void *arg);

/* Enables libevent's pthread support; call once in main before any base. */
void rmq_loop_global_init(void);

/* Creates a poster bound to base (owner: the caller, free on base's thread). */
rmq_loop_poster_t *rmq_loop_poster_new(struct event_base *base);

/* Frees the poster; jobs still queued are run first (on the calling thread,
 * which must be base's thread). */
void rmq_loop_poster_free(rmq_loop_poster_t *p);

/* Queues fn(arg) to run on base's thread. Any thread. RMQ_ENOMEM on failure. */
rmq_err_t rmq_loop_post(rmq_loop_poster_t *p, rmq_loop_fn fn, void *arg);

#endif
