/* bk_unregister.h: the UNREGISTER_BROKER round at a clean stop, shared by
 * both registration paths (bk_register.c over the native protocol,
 * bk_register_remoting.c over remoting): each name server's answer counted
 * once and logged, and the wait for all of them with a deadline
 * (rmq_countdown.h). Embedded in the registration; loop thread only. */
#ifndef BK_UNREGISTER_H
#define BK_UNREGISTER_H

#include "rmq_countdown.h"

typedef struct bk_unreg {
    rmq_countdown_t answers;
    const char *peer;          /* names one name server in log lines (not copied) */
    char what[64];             /* the countdown's name: "unregister: <peer>s" */
} bk_unreg_t;

/* Prepares u on base; peer (kept, not copied) is "name server" or the like. */
void bk_unreg_init(bk_unreg_t *u, struct event_base *base, const char *peer);
/* Frees the deadline timer; the stop callback is not called. */
void bk_unreg_deinit(bk_unreg_t *u);

/* The request to one name server went out: its answer is awaited, and
 * *pending (that name server's flag) says so. */
void bk_unreg_sent(bk_unreg_t *u, int *pending);
/* The answer from the name server at addr came (ok: it unregistered; else
 * why not). Logged and counted once, only while *pending. */
void bk_unreg_answered(bk_unreg_t *u, int *pending, const char *addr, int ok, const char *why);
/* Once every request is out: done(arg) runs when the last answer comes or
 * after timeout_ms, at once when none is awaited. */
void bk_unreg_wait(bk_unreg_t *u, int timeout_ms, void (*done)(void *arg), void *arg);

#endif
