/* bk_persist.c: the metadata writer thread. Jobs sit in a FIFO guarded by
 * one mutex; a newer write for the same path replaces the queued one, so a
 * burst of offset updates costs one write. A work job (path NULL) runs its
 * function in queue order and is never merged: its owner coalesces. */
#include "bk_persist.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_log.h"
#include "rmq_file.h"

typedef struct bk_job {
    struct bk_job *next;
    bk_persist_work_fn work;     /* set: a work job (path and data NULL) */
    char *path;
    void *data;
    size_t len;
    bk_persist_done_fn done;     /* a work job's */
    void *done_arg;
} bk_job_t;

struct bk_persist {
    pthread_t thread;
    pthread_mutex_t mu;
    pthread_cond_t cond;
    bk_job_t *head, *tail;
    int stopping;
    unsigned long failures;
};

static void job_free(bk_job_t *j)
{
    free(j->path);
    free(j->data);
    free(j);
}

/* Worker thread: writes jobs until stopping and the queue is empty. */
static void *persist_main(void *arg)
{
    bk_persist_t *p = arg;
    pthread_mutex_lock(&p->mu);
    for (;;) {
        while (!p->head && !p->stopping)
            pthread_cond_wait(&p->cond, &p->mu);
        bk_job_t *j = p->head;
        if (!j)
            break;
        p->head = j->next;
        if (!p->head)
            p->tail = NULL;
        pthread_mutex_unlock(&p->mu);
        rmq_err_t rc = j->work ? j->work(j->done_arg) : rmq_file_write_atomic(j->path, j->data, j->len);
        if (rc != RMQ_OK && !j->work)
            LOG_ERROR("persist %s: %s", j->path, rmq_strerror(rc));
        if (j->done)
            j->done(j->done_arg, rc);
        job_free(j);
        pthread_mutex_lock(&p->mu);
        if (rc != RMQ_OK)
            p->failures++;
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

bk_persist_t *bk_persist_new(void)
{
    bk_persist_t *p = calloc(1, sizeof(*p));
    if (!p)
        return NULL;
    pthread_mutex_init(&p->mu, NULL);
    pthread_cond_init(&p->cond, NULL);
    if (pthread_create(&p->thread, NULL, persist_main, p) != 0) {
        pthread_mutex_destroy(&p->mu);
        pthread_cond_destroy(&p->cond);
        free(p);
        return NULL;
    }
    return p;
}

/* Appends j to the queue and wakes the thread. */
static void persist_enqueue(bk_persist_t *p, bk_job_t *j)
{
    if (p->tail)
        p->tail->next = j;
    else
        p->head = j;
    p->tail = j;
    pthread_cond_signal(&p->cond);
}

rmq_err_t bk_persist_run(bk_persist_t *p, bk_persist_work_fn work, bk_persist_done_fn done, void *arg)
{
    bk_job_t *j = malloc(sizeof(*j));
    if (!j)
        return RMQ_ENOMEM;
    *j = (bk_job_t){.work = work, .done = done, .done_arg = arg};
    pthread_mutex_lock(&p->mu);
    persist_enqueue(p, j);
    pthread_mutex_unlock(&p->mu);
    return RMQ_OK;
}

rmq_err_t bk_persist_submit(bk_persist_t *p, const char *path, void *data, size_t len)
{
    char *copy = strdup(path);
    if (!copy) {
        free(data);
        return RMQ_ENOMEM;
    }
    pthread_mutex_lock(&p->mu);
    for (bk_job_t *j = p->head; j; j = j->next) {
        if (j->path && strcmp(j->path, path) == 0) {
            free(j->data);
            j->data = data;
            j->len = len;
            pthread_mutex_unlock(&p->mu);
            free(copy);
            return RMQ_OK;
        }
    }
    bk_job_t *j = malloc(sizeof(*j));
    if (!j) {
        pthread_mutex_unlock(&p->mu);
        free(copy);
        free(data);
        return RMQ_ENOMEM;
    }
    *j = (bk_job_t){.path = copy, .data = data, .len = len};
    persist_enqueue(p, j);
    pthread_mutex_unlock(&p->mu);
    return RMQ_OK;
}

void bk_persist_free(bk_persist_t *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&p->mu);
    p->stopping = 1;
    pthread_cond_signal(&p->cond);
    pthread_mutex_unlock(&p->mu);
    pthread_join(p->thread, NULL);
    pthread_mutex_destroy(&p->mu);
    pthread_cond_destroy(&p->cond);
    free(p);
}

unsigned long bk_persist_failures(bk_persist_t *p)
{
    pthread_mutex_lock(&p->mu);
    unsigned long n = p->failures;
    pthread_mutex_unlock(&p->mu);
    return n;
}
