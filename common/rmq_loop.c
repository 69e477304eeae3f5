/* rmq_loop.c: cross-thread posting into a libevent loop. A poster owns a
 * mutex-protected FIFO of jobs and one fd-less event on the owner's base.
 * Posting appends a job and, when the queue was empty, makes the event
 * active (libevent wakes the base's thread); the event's callback takes the
 * whole queue under the lock and runs it on the owner thread, unlocked. */
#include "rmq_loop.h"

#include <event2/thread.h>
#include <pthread.h>
#include <stdlib.h>

typedef struct rmq_loop_job {
    struct rmq_loop_job *next;
    rmq_loop_fn fn;
    void *arg;
} rmq_loop_job_t;

struct rmq_loop_poster {
    pthread_mutex_t lock;
    rmq_loop_job_t *head;   /* guarded by lock */
    rmq_loop_job_t *tail;   /* guarded by lock */
    struct event *ev;       /* guarded by lock; NULL once freeing */
};

static pthread_once_t global_once = PTHREAD_ONCE_INIT;

static void global_init_once(void)
{
    evthread_use_pthreads();
}

void rmq_loop_global_init(void)
{
    pthread_once(&global_once, global_init_once);
}

/* Detaches and returns the queued jobs, oldest first; the queue is left empty. */
static rmq_loop_job_t *queue_take(rmq_loop_poster_t *p)
{
    pthread_mutex_lock(&p->lock);
    rmq_loop_job_t *jobs = p->head;
    p->head = NULL;
    p->tail = NULL;
    pthread_mutex_unlock(&p->lock);
    return jobs;
}

/* Runs and frees a detached list of jobs in order; returns how many ran. */
static size_t jobs_run(rmq_loop_job_t *job)
{
    size_t n = 0;
    while (job) {
        rmq_loop_job_t *next = job->next;
        job->fn(job->arg);
        free(job);
        job = next;
        n++;
    }
    return n;
}

/* Event callback on the owner thread: runs what was queued when it started;
 * jobs posted meanwhile re-activate the event for the next loop pass. */
static void poster_drain_cb(evutil_socket_t fd, short what, void *arg)
{
    jobs_run(queue_take(arg));
}

rmq_loop_poster_t *rmq_loop_poster_new(struct event_base *base)
{
    rmq_loop_poster_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    p->ev = event_new(base, -1, 0, poster_drain_cb, p);
    if (!p->ev)
        goto err;
    if (pthread_mutex_init(&p->lock, NULL) != 0)
        goto err_event;
    return p;
err_event:
    event_free(p->ev);
err:
    free(p);
    return NULL;
}

void rmq_loop_poster_free(rmq_loop_poster_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->lock);
    struct event *ev = p->ev;
    p->ev = NULL;
    pthread_mutex_unlock(&p->lock);
    event_free(ev);
    while (jobs_run(queue_take(p)) > 0)
        ;
    pthread_mutex_destroy(&p->lock);
    free(p);
}

/* Activation happens under the lock so it cannot race with free clearing ev. */
rmq_err_t rmq_loop_post(rmq_loop_poster_t *p, rmq_loop_fn fn, void *arg)
{
    rmq_loop_job_t *job = malloc(sizeof(*job));
    if (!job)
        return RMQ_ENOMEM;
    job->next = NULL;
    job->fn = fn;
    job->arg = arg;
    pthread_mutex_lock(&p->lock);
    int was_empty = p->head == NULL;
    if (was_empty)
        p->head = job;
    else
        p->tail->next = job;
    p->tail = job;
    if (was_empty && p->ev)
        event_active(p->ev, EV_READ, 0);
    pthread_mutex_unlock(&p->lock);
    return RMQ_OK;
}
