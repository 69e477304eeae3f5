/* bk_reground.h: the timing both registration paths share (bk_register.c
 * over the native protocol, bk_register_remoting.c over remoting): every
 * registerNameServerPeriod one round over the name servers, each idle one
 * sent what it is owed or else a version query (which keeps the broker
 * alive there), and, at the end of a loop pass after a change, each sent
 * what it is owed. The paths differ only in their wire: what they send and
 * what counts as owed, asked of them per name server (index i). Embedded
 * in the registration; loop thread only. */
#ifndef BK_REGROUND_H
#define BK_REGROUND_H

#include <stddef.h>

#include <event2/event.h>

#include "bk_node.h"

typedef struct bk_reground_wire {
    /* A new period begins for name server i (a failure's backoff ends); may be NULL. */
    void (*period)(void *arg, size_t i);
    int (*idle)(void *arg, size_t i);       /* no request in flight */
    int (*owed)(void *arg, size_t i);       /* more than a version query is owed */
    void (*send_owed)(void *arg, size_t i); /* sends what i is owed, if anything and if it is idle */
    void (*send_query)(void *arg, size_t i);
} bk_reground_wire_t;

typedef struct bk_reground {
    const bk_node_t *node;
    const bk_reground_wire_t *wire;
    void *arg;
    size_t n;                  /* name servers */
    struct event *period;
    struct event *soon;
} bk_reground_t;

/* Prepares g for n name servers of arg, driven through wire. RMQ_ENOMEM. */
rmq_err_t bk_reground_init(bk_reground_t *g, const bk_node_t *node, size_t n, const bk_reground_wire_t *wire,
                           void *arg);
void bk_reground_deinit(bk_reground_t *g);

/* A round now, then one every registerNameServerPeriod. */
void bk_reground_start(bk_reground_t *g);
/* Something is owed: each name server is sent it at the end of this loop pass. */
void bk_reground_soon(bk_reground_t *g);
/* No more rounds (clean stop). */
void bk_reground_stop(bk_reground_t *g);

#endif
