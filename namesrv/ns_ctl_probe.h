/* ns_ctl_probe.h: "is a process still listening at host:port?", asked by
 * the controller when a master's heartbeat connection closes. One
 * non-blocking connect: refused means nothing listens there any more (the
 * broker process is gone, its kernel answers for it); connected means
 * something listens; a timeout or any other error says nothing. Loop
 * thread only. */
#ifndef NS_CTL_PROBE_H
#define NS_CTL_PROBE_H

#include <event2/event.h>

typedef enum ns_ctl_probe_result {
    NS_CTL_PROBE_REFUSED = 0,     /* nothing listens at the address */
    NS_CTL_PROBE_LISTENING,       /* a connection was accepted */
    NS_CTL_PROBE_UNKNOWN,         /* timeout, unreachable, bad address */
} ns_ctl_probe_result_t;

typedef struct ns_ctl_probe ns_ctl_probe_t;

typedef void (*ns_ctl_probe_fn)(ns_ctl_probe_result_t res, void *arg);

/* Connects to addr ("ip:port") on base delay_ms from now and calls done
 * once, from the loop (never from inside this call), at most timeout_ms
 * after the connect; the probe frees itself after done returns. The delay
 * lets a dying process's kernel close all of its sockets, not just the one
 * whose close prompted the probe. NULL on ENOMEM (done is not called). Owner: the
 * probe; ns_ctl_probe_cancel before done frees it without a call. */
ns_ctl_probe_t *ns_ctl_probe_start(struct event_base *base, const char *addr, int delay_ms, int timeout_ms,
                                   ns_ctl_probe_fn done, void *arg);

/* Frees a probe whose done has not run yet; done never runs. */
void ns_ctl_probe_cancel(ns_ctl_probe_t *p);

#endif
