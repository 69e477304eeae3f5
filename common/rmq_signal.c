/* rmq_signal.c: stop signals for the daemons. Before libevent takes SIGTERM
 * and SIGINT, their disposition becomes a handler that does nothing: libevent
 * saves it and puts it back when the events are freed, so a signal during or
 * after teardown is swallowed instead of killing the process with the default
 * action. The signals are blocked while arming, so none arriving then is lost
 * (a no-op handler, unlike SIG_IGN, leaves pending signals pending). */
#include "rmq_signal.h"

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdlib.h>

#include "rmq_log.h"

struct rmq_stop_signals {
    struct event *term;
    struct event *intr;
    rmq_stop_fn fn;
    void *arg;
    bool stopping;
};

static void swallow(int sig)
{
    (void)sig;
}

/* First stop signal: run the callback; later ones: say so and carry on. */
static void on_signal(evutil_socket_t sig, short what, void *arg)
{
    rmq_stop_signals_t *s = arg;

    (void)what;
    if (s->stopping) {
        LOG_INFO("signal %d: already stopping; ignored", (int)sig);
        return;
    }
    s->stopping = true;
    LOG_INFO("signal %d: stopping", (int)sig);
    s->fn((int)sig, s->arg);
}

/* Makes sig's disposition the no-op handler and adds its event on base. */
static struct event *arm(struct event_base *base, int sig, rmq_stop_signals_t *s)
{
    struct sigaction sa = { .sa_handler = swallow, .sa_flags = SA_RESTART };
    struct event *ev;

    sigemptyset(&sa.sa_mask);
    if (sigaction(sig, &sa, NULL) != 0)
        return NULL;
    ev = evsignal_new(base, sig, on_signal, s);
    if (ev && evsignal_add(ev, NULL) != 0) {
        event_free(ev);
        ev = NULL;
    }
    return ev;
}

rmq_stop_signals_t *rmq_stop_signals_new(struct event_base *base, rmq_stop_fn fn, void *arg)
{
    rmq_stop_signals_t *s = calloc(1, sizeof *s);
    sigset_t stop, old;

    if (!s)
        return NULL;
    s->fn = fn;
    s->arg = arg;
    sigemptyset(&stop);
    sigaddset(&stop, SIGTERM);
    sigaddset(&stop, SIGINT);
    pthread_sigmask(SIG_BLOCK, &stop, &old);
    s->term = arm(base, SIGTERM, s);
    s->intr = s->term ? arm(base, SIGINT, s) : NULL;
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!s->intr) {
        rmq_stop_signals_free(s);
        return NULL;
    }
    return s;
}

void rmq_stop_signals_free(rmq_stop_signals_t *s)
{
    if (!s)
        return;
    if (s->term)
        event_free(s->term);
    if (s->intr)
        event_free(s->intr);
    free(s);
}
