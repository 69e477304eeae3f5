/* bk_reground.c: the registration rounds both paths share (see bk_reground.h). */
#include "bk_reground.h"


/* Every period: a version query to each idle name server, or what it is owed. */
static void reground_tick(evutil_socket_t fd, short what, void *arg)
{
    bk_reground_t *g = arg;
    const bk_reground_wire_t *w = g->wire;
    for (size_t i = 0; i < g->n; i++) {
        if (w->period)
            w->period(g->arg, i);
        if (!w->idle(g->arg, i) || bk_node_stopping(g->node))
            continue;
        if (w->owed(g->arg, i))
            w->send_owed(g->arg, i);
        else
            w->send_query(g->arg, i);
    }
}

/* End of a loop pass with changes: each idle name server gets what it is owed. */
static void reground_soon(evutil_socket_t fd, short what, void *arg)
{
    bk_reground_t *g = arg;
    for (size_t i = 0; i < g->n; i++)
        g->wire->send_owed(g->arg, i);
}

rmq_err_t bk_reground_init(bk_reground_t *g, const bk_node_t *node, size_t n, const bk_reground_wire_t *wire,
                           void *arg)
{
    *g = (bk_reground_t){.node = node, .wire = wire, .arg = arg, .n = n};
    g->period = event_new(node->base, -1, EV_PERSIST, reground_tick, g);
    g->soon = event_new(node->base, -1, 0, reground_soon, g);
    return g->period && g->soon ? RMQ_OK : RMQ_ENOMEM;
}

void bk_reground_deinit(bk_reground_t *g)
{
    if (g->period)
        event_free(g->period);
    if (g->soon)
        event_free(g->soon);
    g->period = g->soon = NULL;
}

void bk_reground_start(bk_reground_t *g)
{
    int64_t ms = g->node->cfg->register_name_server_period;
    struct timeval tv = {(time_t)(ms / 1000), (suseconds_t)(ms % 1000) * 1000};
    event_add(g->period, &tv);
    reground_tick(-1, 0, g);
}

void bk_reground_soon(bk_reground_t *g)
{
    if (g->n && !event_pending(g->soon, EV_TIMEOUT, NULL))
        event_active(g->soon, EV_TIMEOUT, 0);
}

void bk_reground_stop(bk_reground_t *g)
{
    event_del(g->period);
    event_del(g->soon);
}
