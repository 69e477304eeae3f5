/* bk_register.h: registration with every name server: at start, every
 * registerNameServerPeriod (a data-version query; the whole table only when
 * the name server lacks it), and when topics change (just those topics,
 * coalesced: one request in flight per name server); UNREGISTER_BROKER on a
 * clean stop with a bounded wait. Keeps the master / HA address a name
 * server returns (a slave uses it). Loop thread only. */
#ifndef BK_REGISTER_H
#define BK_REGISTER_H

#include "bk_node.h"

typedef struct bk_register bk_register_t;

/* Parses addrs ("host:port;host:port", may be empty). NULL on bad input
 * (err says which address) or out of memory. */
bk_register_t *bk_register_new(const bk_node_t *node, const char *addrs, char *err, size_t errlen);
/* Fails pending requests and frees. */
void bk_register_free(bk_register_t *r);

/* Registers now and starts the periodic timer. */
void bk_register_start(bk_register_t *r);
/* Topic name changed: registers it with every name server at the end of
 * this loop pass, or with the request after the one in flight. */
void bk_register_topic_changed(bk_register_t *r, const char *name);
/* Unregisters from every name server, then calls done(arg) once all have
 * answered or after timeout_ms. */
void bk_register_stop(bk_register_t *r, int timeout_ms, void (*done)(void *arg), void *arg);

/* Controller mode: the role (so the registered brokerId) changed and the
 * controller names the master at master_addr / ha_addr ("" while this
 * broker is master or none is known): registers the whole table with
 * every name server now. Name-server answers then no longer name the
 * master. */
void bk_register_role_changed(bk_register_t *r, const char *master_addr, const char *ha_addr);

/* Master client / HA addresses from the last register response, or as the
 * controller named them ("" if none). */
const char *bk_register_master_addr(const bk_register_t *r);
const char *bk_register_ha_addr(const bk_register_t *r);
/* Name servers that accepted the last registration. */
size_t bk_register_ok_count(const bk_register_t *r);
/* Bytes of requests sent to name servers so far (headers and bodies). */
uint64_t bk_register_bytes_sent(const bk_register_t *r);

#endif
