/* bk_node.h: the broker as its cluster links (cluster/) and metrics see it,
 * handed to them when bk_broker.c wires them: the opened tables and
 * settings (borrowed), and the few things only the broker object knows,
 * asked or told through callbacks (the role the append path acts in, the
 * brokerId it registers with, the current HA, the controllers' client, a
 * role switch). Nothing here includes bk_broker.h, so the links do not
 * reach back into the broker object. Loop thread only. */
#ifndef BK_NODE_H
#define BK_NODE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "bk_append.h"
#include "bk_config.h"
#include "bk_groups.h"
#include "bk_offsets.h"
#include "bk_persist.h"
#include "bk_topics.h"
#include "rmq.pb-c.h"
#include "rmq_security.h"
#include "st_store.h"

typedef struct bk_ha bk_ha_t;
typedef struct bk_controller bk_controller_t;

/* What the broker answers and does for its links; arg is the broker. */
typedef struct bk_node_ops {
    bk_role_t (*role)(void *arg);          /* the role it acts in now */
    int64_t (*id)(void *arg);              /* the brokerId it registers with */
    bk_ha_t *(*ha)(void *arg);             /* the current HA (rebuilt when the role changes) */
    bk_controller_t *(*ctl)(void *arg);    /* the controllers' client; NULL off controller mode */
    int (*stopping)(void *arg);            /* a clean stop has begun */
    const char *(*master_addr)(void *arg); /* the master's client address a name server named ("" if none) */
    /* Controller mode: acts as role from now on (bk_broker_switch_role). */
    rmq_err_t (*switch_role)(void *arg, bk_role_t role, int64_t epoch, const char *master_addr,
                             const char *master_ha, char *err, size_t errlen);
    /* Controller mode, SYNC_MASTER: whether sends wait for a slave's ack. */
    void (*set_sync_acks)(void *arg, int wait);
    /* A slave applies its master's delay offsets (the scheduler's). */
    void (*delay_offsets)(void *arg, const Rmq__DelayOffsetTable *table);
} bk_node_ops_t;

typedef struct bk_node {
    const bk_config_t *cfg;
    struct event_base *base;
    st_store_t *store;
    bk_persist_t *persist;
    bk_topics_t *topics;
    bk_groups_t *groups;
    bk_offsets_t *offsets;
    bk_append_t *append;        /* the one append path: leases and in-sync counts */
    rmq_security_t *sec;
    char *addr;                 /* brokerIP1:port (the broker's own buffer) */
    int64_t boot_ms;            /* wall clock at start: the registration epoch */
    const bk_node_ops_t *ops;
    void *arg;
} bk_node_t;

static inline bk_role_t bk_node_role(const bk_node_t *n)
{
    return n->ops->role(n->arg);
}

static inline int64_t bk_node_id(const bk_node_t *n)
{
    return n->ops->id(n->arg);
}

static inline bk_ha_t *bk_node_ha(const bk_node_t *n)
{
    return n->ops->ha(n->arg);
}

static inline int bk_node_stopping(const bk_node_t *n)
{
    return n->ops->stopping(n->arg);
}

#endif
