/* rmq_countdown.h: waiting, with a deadline, for a number of answers on one
 * libevent loop. The owner counts each request it sends, then arms the
 * countdown with a timeout and a callback, and counts each answer; the
 * callback runs once, when the last answer comes or the deadline passes,
 * whichever is first. Embedded
 * (init/deinit); every call on the base's thread. */
#ifndef RMQ_COUNTDOWN_H
#define RMQ_COUNTDOWN_H

#include <stddef.h>

#include <event2/event.h>

typedef struct rmq_countdown {
    struct event_base *base;
    struct event *timer;       /* the deadline, once armed */
    size_t pending;            /* answers still awaited */
    const char *what;          /* names the waiters in the timeout warning (not copied) */
    void (*done)(void *arg);
    void *done_arg;
} rmq_countdown_t;

/* Prepares cd on base, nothing awaited. what (kept, not copied) names
 * those answering in the timeout warning, e.g. "unregister: name servers". */
void rmq_countdown_init(rmq_countdown_t *cd, struct event_base *base, const char *what);

/* Frees the deadline timer; done is not called. */
void rmq_countdown_deinit(rmq_countdown_t *cd);

/* One more answer awaited (a request went out). */
void rmq_countdown_expect(rmq_countdown_t *cd);

/* Once the requests are out: done(arg) runs when the last answer comes or
 * after timeout_ms, and at once when no answer is awaited. */
void rmq_countdown_arm(rmq_countdown_t *cd, int timeout_ms, void (*done)(void *arg), void *arg);

/* One awaited answer came; the last one ends the countdown. */
void rmq_countdown_answer(rmq_countdown_t *cd);

#endif
