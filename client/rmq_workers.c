/* rmq_workers.c: the consume thread pool: a mutex + condvar FIFO and n
 * threads that run items until stopped. */
#include "rmq_workers.h"

#include <pthread.h>
#include <stdlib.h>

struct rmq_workers {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    rmq_work_t *head;
    rmq_work_t **tail;
    int stopping;
    int stopped;
    pthread_t *threads;
    int n;
    rmq_work_fn fn;
    void *arg;
};

/* A worker: takes the oldest item and runs it, until stopping. */
static void *workers_main(void *arg)
{
    rmq_workers_t *ws = arg;
    pthread_mutex_lock(&ws->mu);
    for (;;) {
        while (!ws->head && !ws->stopping)
            pthread_cond_wait(&ws->cv, &ws->mu);
        if (ws->stopping)
            break;
        rmq_work_t *w = ws->head;
        ws->head = w->next;
        if (!ws->head)
            ws->tail = &ws->head;
        pthread_mutex_unlock(&ws->mu);
        w->next = NULL;
        ws->fn(w, 1, ws->arg);
        pthread_mutex_lock(&ws->mu);
    }
    pthread_mutex_unlock(&ws->mu);
    return NULL;
}

rmq_workers_t *rmq_workers_new(int n, rmq_work_fn fn, void *arg)
{
    rmq_workers_t *ws = calloc(1, sizeof *ws);
    if (!ws)
        return NULL;
    ws->threads = calloc((size_t)n, sizeof *ws->threads);
    if (!ws->threads) {
        free(ws);
        return NULL;
    }
    pthread_mutex_init(&ws->mu, NULL);
    pthread_cond_init(&ws->cv, NULL);
    ws->tail = &ws->head;
    ws->fn = fn;
    ws->arg = arg;
    for (int i = 0; i < n; i++) {
        if (pthread_create(&ws->threads[i], NULL, workers_main, ws) != 0)
            break;
        ws->n++;
    }
    if (ws->n == 0) {
        rmq_workers_free(ws);
        return NULL;
    }
    return ws;
}

void rmq_workers_push(rmq_workers_t *ws, rmq_work_t *w)
{
    w->next = NULL;
    pthread_mutex_lock(&ws->mu);
    if (ws->stopping) {
        pthread_mutex_unlock(&ws->mu);
        ws->fn(w, 0, ws->arg);
        return;
    }
    *ws->tail = w;
    ws->tail = &w->next;
    pthread_cond_signal(&ws->cv);
    pthread_mutex_unlock(&ws->mu);
}

void rmq_workers_stop(rmq_workers_t *ws)
{
    pthread_mutex_lock(&ws->mu);
    if (ws->stopped) {
        pthread_mutex_unlock(&ws->mu);
        return;
    }
    ws->stopping = 1;
    ws->stopped = 1;
    pthread_cond_broadcast(&ws->cv);
    pthread_mutex_unlock(&ws->mu);
    for (int i = 0; i < ws->n; i++)
        pthread_join(ws->threads[i], NULL);
    pthread_mutex_lock(&ws->mu);
    rmq_work_t *w = ws->head;
    ws->head = NULL;
    ws->tail = &ws->head;
    pthread_mutex_unlock(&ws->mu);
    while (w) {
        rmq_work_t *next = w->next;
        ws->fn(w, 0, ws->arg);
        w = next;
    }
}

void rmq_workers_free(rmq_workers_t *ws)
{
    if (!ws)
        return;
    rmq_workers_stop(ws);
    pthread_mutex_destroy(&ws->mu);
    pthread_cond_destroy(&ws->cv);
    free(ws->threads);
    free(ws);
}
