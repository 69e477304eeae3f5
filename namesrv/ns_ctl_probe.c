/* ns_ctl_probe.c: one non-blocking connect and its verdict (ns_ctl_probe.h). */
#include "ns_ctl_probe.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include <event2/util.h>

#include "rmq_rpc.h"

struct ns_ctl_probe {
    struct event_base *base;
    struct event *ev;
    evutil_socket_t fd;
    char addr[256];
    int timeout_ms;
    int started;                  /* the connect was issued */
    ns_ctl_probe_fn done;
    void *arg;
};

void ns_ctl_probe_cancel(ns_ctl_probe_t *p)
{
    if (!p)
        return;
    if (p->ev)
        event_free(p->ev);
    if (p->fd >= 0)
        evutil_closesocket(p->fd);
    free(p);
}

/* The verdict of a finished (or failed) connect from its errno. */
static ns_ctl_probe_result_t verdict(int err)
{
    if (err == 0)
        return NS_CTL_PROBE_LISTENING;
    return err == ECONNREFUSED ? NS_CTL_PROBE_REFUSED : NS_CTL_PROBE_UNKNOWN;
}

static void finish(ns_ctl_probe_t *p, ns_ctl_probe_result_t res)
{
    p->done(res, p->arg);
    ns_ctl_probe_cancel(p);
}

static void on_connected(evutil_socket_t fd, short what, void *arg)
{
    ns_ctl_probe_t *p = arg;
    int err = 0;
    socklen_t len = sizeof err;

    if (!(what & EV_WRITE))
        finish(p, NS_CTL_PROBE_UNKNOWN);          /* timed out */
    else
        finish(p, getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 ? verdict(err) : NS_CTL_PROBE_UNKNOWN);
}

/* After the delay: issues the connect and waits for it (or answers now). */
static void on_delay(evutil_socket_t fd, short what, void *arg)
{
    ns_ctl_probe_t *p = arg;
    struct sockaddr_storage ss;
    int sslen = sizeof ss;
    struct timeval tv = { p->timeout_ms / 1000, (p->timeout_ms % 1000) * 1000 };

    event_free(p->ev);
    p->ev = NULL;
    if (rmq_addr_sockaddr(p->addr, &ss, &sslen) != RMQ_OK ||
        (p->fd = socket(ss.ss_family, SOCK_STREAM, 0)) < 0 || evutil_make_socket_nonblocking(p->fd) != 0) {
        finish(p, NS_CTL_PROBE_UNKNOWN);
        return;
    }
    if (connect(p->fd, (struct sockaddr *)&ss, (socklen_t)sslen) == 0) {
        finish(p, NS_CTL_PROBE_LISTENING);
        return;
    }
    if (errno != EINPROGRESS) {
        finish(p, verdict(errno));
        return;
    }
    p->ev = event_new(p->base, p->fd, EV_WRITE, on_connected, p);
    if (!p->ev || event_add(p->ev, &tv) != 0)
        finish(p, NS_CTL_PROBE_UNKNOWN);
}

ns_ctl_probe_t *ns_ctl_probe_start(struct event_base *base, const char *addr, int delay_ms, int timeout_ms,
                                   ns_ctl_probe_fn done, void *arg)
{
    ns_ctl_probe_t *p = calloc(1, sizeof *p);
    struct timeval tv = { delay_ms / 1000, (delay_ms % 1000) * 1000 };

    if (!p)
        return NULL;
    p->base = base;
    p->fd = -1;
    p->timeout_ms = timeout_ms;
    p->done = done;
    p->arg = arg;
    snprintf(p->addr, sizeof p->addr, "%s", addr);
    if (!(p->ev = evtimer_new(base, on_delay, p)) || evtimer_add(p->ev, &tv) != 0) {
        ns_ctl_probe_cancel(p);
        return NULL;
    }
    return p;
}
