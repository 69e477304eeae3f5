/* rmq_workers.h: a fixed pool of consume threads taking work items from
 * one FIFO. Items embed rmq_work_t as their first member. */
#ifndef RMQ_WORKERS_H
#define RMQ_WORKERS_H

typedef struct rmq_work {
    struct rmq_work *next;
} rmq_work_t;

typedef struct rmq_workers rmq_workers_t;

/* Runs an item (run = 1, on a worker thread) or discards it at shutdown
 * (run = 0, on the thread calling rmq_workers_free). Takes ownership. */
typedef void (*rmq_work_fn)(rmq_work_t *w, int run, void *arg);

/* Starts n threads. NULL on failure. */
rmq_workers_t *rmq_workers_new(int n, rmq_work_fn fn, void *arg);
/* Queues w. Any thread. */
void rmq_workers_push(rmq_workers_t *ws, rmq_work_t *w);
/* Stops taking items, joins the threads (items running finish first),
 * discards what is left. Not from a worker. */
void rmq_workers_stop(rmq_workers_t *ws);
void rmq_workers_free(rmq_workers_t *ws);

#endif
