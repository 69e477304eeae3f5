/* bk_unregister.c: the stop-time UNREGISTER_BROKER round (bk_unregister.h). */
#include "bk_unregister.h"

#include <stdio.h>

#include "rmq_log.h"

void bk_unreg_init(bk_unreg_t *u, struct event_base *base, const char *peer)
{
    u->peer = peer;
    snprintf(u->what, sizeof(u->what), "unregister: %ss", peer);
    rmq_countdown_init(&u->answers, base, u->what);
}

void bk_unreg_deinit(bk_unreg_t *u)
{
    rmq_countdown_deinit(&u->answers);
}

void bk_unreg_sent(bk_unreg_t *u, int *pending)
{
    *pending = 1;
    rmq_countdown_expect(&u->answers);
}

void bk_unreg_answered(bk_unreg_t *u, int *pending, const char *addr, int ok, const char *why)
{
    if (!*pending)
        return;
    *pending = 0;
    if (ok)
        LOG_INFO("unregistered from %s %s", u->peer, addr);
    else
        LOG_WARN("unregister from %s %s failed: %s", u->peer, addr, why);
    rmq_countdown_answer(&u->answers);
}

void bk_unreg_wait(bk_unreg_t *u, int timeout_ms, void (*done)(void *arg), void *arg)
{
    rmq_countdown_arm(&u->answers, timeout_ms, done, arg);
}
