/* rmq_signal.h: a daemon's stop signals. The first SIGTERM or SIGINT runs a
 * stop callback on the loop's thread; later ones are logged and ignored, while
 * the loop winds down and also after it has ended, so a daemon that is
 * stopping cleanly always gets to exit with its own status. */
#ifndef RMQ_SIGNAL_H
#define RMQ_SIGNAL_H

#include <event2/event.h>

typedef struct rmq_stop_signals rmq_stop_signals_t;
typedef void (*rmq_stop_fn)(int sig, void *arg);

/* Arms SIGTERM and SIGINT on base: the first one calls fn(sig, arg) on base's
 * thread. Call on the main thread before starting other threads (a signal
 * that reaches another thread while arming is lost). NULL on failure. */
rmq_stop_signals_t *rmq_stop_signals_new(struct event_base *base, rmq_stop_fn fn, void *arg);

/* Disarms the events; SIGTERM and SIGINT stay ignored until the process
 * exits. Call before freeing base; NULL is a no-op. */
void rmq_stop_signals_free(rmq_stop_signals_t *s);

#endif
