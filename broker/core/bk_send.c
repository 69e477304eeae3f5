/* bk_send.c: the sends of every front-end between decoding and answer:
 * back-pressure against sendQueueCapacity over all fronts, the
 * waitTimeMillsInSendQueue rule, and the pool of sends waiting for the
 * append path. Waiters are reused (a spare list), so the steady state does
 * not allocate per message. */
#include <stdalign.h>
#include <stdlib.h>
#include <string.h>

#include "bk_recall.h"
#include "bk_send.h"
#include "rmq_log.h"

/* A send whose answer waits for the append path. */
typedef struct send_waiter {
    struct send_waiter *prev, *next; /* waiting list; next alone: spare list */
    bk_send_t *s;
    const bk_send_front_t *front;
    void *front_arg;
    void *conn;                      /* held while waiting */
    int32_t queue_id;
    char *ids;                       /* batch: heap comma-joined ids, or the call's; else NULL */
    char *recall;                    /* heap recall handle of a timer message, else NULL */
    alignas(max_align_t) unsigned char to[BK_SEND_TO_MAX];
} send_waiter_t;

struct bk_send {
    bk_send_config_t cfg;
    send_waiter_t *waiting;
    send_waiter_t *spare;
    size_t n_waiting;                /* in the waiting list */
    size_t n_queued;                 /* in the fronts' queues */
};

bk_send_t *bk_send_new(const bk_send_config_t *cfg)
{
    bk_send_t *s = calloc(1, sizeof(*s));
    if (s)
        s->cfg = *cfg;
    return s;
}

size_t bk_send_waiting(const bk_send_t *s)
{
    return s->n_queued + s->n_waiting;
}

size_t bk_send_capacity(const bk_send_t *s)
{
    return s->cfg.capacity;
}

int64_t bk_send_wait_ms(const bk_send_t *s)
{
    return s->cfg.wait_ms;
}

int bk_send_full(bk_send_t *s)
{
    if (bk_send_waiting(s) < s->cfg.capacity)
        return 0;
    bk_stats_add(s->cfg.stats, BK_STAT_BUSY, 1);
    return 1;
}

void bk_send_queued(bk_send_t *s)
{
    s->n_queued++;
}

void bk_send_dequeued(bk_send_t *s)
{
    s->n_queued--;
}

int bk_send_too_late(bk_send_t *s, int64_t waited_ms)
{
    if (waited_ms <= s->cfg.wait_ms)
        return 0;
    bk_stats_add(s->cfg.stats, BK_STAT_BUSY, 1);
    return 1;
}

/* ---- waiters ------------------------------------------------------------ */

static send_waiter_t *waiter_get(bk_send_t *s, const bk_send_call_t *call, int32_t queue_id)
{
    send_waiter_t *w = s->spare;
    if (w)
        s->spare = w->next;
    else if (!(w = malloc(sizeof(*w))))
        return NULL;
    w->prev = NULL;
    w->s = s;
    w->front = call->front;
    w->front_arg = call->front_arg;
    w->conn = NULL;
    w->queue_id = queue_id;
    w->ids = NULL;
    w->recall = NULL;
    memcpy(w->to, call->to, call->to_len);
    w->next = s->waiting;
    if (s->waiting)
        s->waiting->prev = w;
    s->waiting = w;
    s->n_waiting++;
    return w;
}

/* Unlinks w, releases its connection and returns it to the spare list. */
static void waiter_put(bk_send_t *s, send_waiter_t *w)
{
    if (w->prev)
        w->prev->next = w->next;
    else
        s->waiting = w->next;
    if (w->next)
        w->next->prev = w->prev;
    s->n_waiting--;
    if (w->conn)
        w->front->release(w->conn);
    free(w->ids);
    free(w->recall);
    w->next = s->spare;
    s->spare = w;
}

/* Append callback (loop thread): the send is durable as configured, or failed. */
static void send_appended(const bk_append_out_t *out, void *arg)
{
    send_waiter_t *w = arg;
    w->front->answer(w->front_arg, w->conn, w->to, out, w->ids, w->recall, w->queue_id);
    waiter_put(w->s, w);
}

/* ---- store -------------------------------------------------------------- */

void bk_send_store(bk_send_t *s, const bk_send_call_t *call, const bk_produce_target_t *tgt, st_msg_t *msgs,
                   size_t n)
{
    bk_append_out_t out;
    const char *ids = call->ids, *recall = NULL;
    char handle[RMQ_RECALL_HANDLE_MAX];
    send_waiter_t *w = waiter_get(s, call, tgt->queue_id);
    rmq_msg_type_t type = rmq_props_msg_type(msgs[0].properties, msgs[0].properties_len);   /* before a divert */
    if (!w) {
        memset(&out, 0, sizeof(out));
        bk_result_set(&out.r, BK_SYSTEM_ERROR, "out of memory waiting for the send");
        call->front->answer(call->front_arg, call->conn, call->to, &out, NULL, NULL, tgt->queue_id);
        return;
    }
    int done = bk_produce_store(s->cfg.produce, tgt, msgs, n, &out, send_appended, w);
    if (out.stored) {
        bk_stats_add(s->cfg.stats, BK_STAT_PUT, out.put.count);
        bk_counts_stored(s->cfg.counts, tgt->topic, type, out.put.count, call->body_len);
        if (n > 1)
            ids = bk_batch_ids(call->batch, s->cfg.store, out.put.phys_offset, n);
        else if (bk_recall_handle_of(&msgs[0], s->cfg.broker_name, handle, sizeof(handle)))
            recall = handle;
    }
    if (done) {
        call->front->answer(call->front_arg, call->conn, call->to, &out, ids, recall, tgt->queue_id);
        waiter_put(s, w);
        return;
    }
    call->front->hold(call->conn);
    w->conn = call->conn;
    if (ids && !(w->ids = strdup(ids)))
        LOG_ERROR_RL("send: out of memory keeping the ids of a batch of %zu; its answer names the first", n);
    if (recall && !(w->recall = strdup(recall)))
        LOG_ERROR_RL("send: out of memory keeping a recall handle; the answer goes without it");
}

void bk_send_free(bk_send_t *s)
{
    if (!s)
        return;
    while (s->waiting)
        waiter_put(s, s->waiting);
    while (s->spare) {
        send_waiter_t *w = s->spare;
        s->spare = w->next;
        free(w);
    }
    free(s);
}
