/* rmq_countdown.c: answers awaited with a deadline (rmq_countdown.h). */
#include "rmq_countdown.h"

#include "rmq_log.h"

void rmq_countdown_init(rmq_countdown_t *cd, struct event_base *base, const char *what)
{
    *cd = (rmq_countdown_t){.base = base, .what = what};
}

void rmq_countdown_deinit(rmq_countdown_t *cd)
{
    if (cd->timer)
        event_free(cd->timer);
    cd->timer = NULL;
    cd->done = NULL;
}

void rmq_countdown_expect(rmq_countdown_t *cd)
{
    cd->pending++;
}

/* Calls done once, and stops the deadline. */
static void countdown_finish(rmq_countdown_t *cd)
{
    void (*done)(void *) = cd->done;
    cd->done = NULL;
    if (cd->timer)
        event_del(cd->timer);
    if (done)
        done(cd->done_arg);
}

static void countdown_timeout(evutil_socket_t fd, short what, void *arg)
{
    rmq_countdown_t *cd = arg;
    LOG_WARN("%s: %zu did not answer in time", cd->what, cd->pending);
    countdown_finish(cd);
}

void rmq_countdown_arm(rmq_countdown_t *cd, int timeout_ms, void (*done)(void *arg), void *arg)
{
    cd->done = done;
    cd->done_arg = arg;
    if (cd->pending == 0) {
        countdown_finish(cd);
        return;
    }
    struct timeval tv = {(time_t)(timeout_ms / 1000), (suseconds_t)(timeout_ms % 1000) * 1000};
    if (!cd->timer)
        cd->timer = evtimer_new(cd->base, countdown_timeout, cd);
    if (cd->timer)
        evtimer_add(cd->timer, &tv);
}

void rmq_countdown_answer(rmq_countdown_t *cd)
{
    if (cd->pending > 0 && --cd->pending == 0)
        countdown_finish(cd);
}
