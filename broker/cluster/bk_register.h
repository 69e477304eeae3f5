/* bk_register.h: registration with every name server: at start, every
 * registerNameServerPeriod, and at once when topics change (coalesced per
 * loop pass); UNREGISTER_BROKER on a clean stop with a bounded wait. Keeps
 * the master / HA address a name server returns (a slave uses it). Loop
 * thread only. */
#ifndef BK_REGISTER_H
#define BK_REGISTER_H

#include "bk_broker.h"

/* Parses addrs ("host:port;host:port", may be empty). NULL on bad input
 * (err says which address) or out of memory. */
bk_register_t *bk_register_new(bk_broker_t *bk, const char *addrs, char *err, size_t errlen);
/* Fails pending requests and frees. */
void bk_register_free(bk_register_t *r);

/* Registers now and starts the periodic timer. */
void bk_register_start(bk_register_t *r);
/* Schedules a registration for the end of this loop pass. */
void bk_register_soon(bk_register_t *r);
/* Unregisters from every name server, then calls done(arg) once all have
 * answered or after timeout_ms. */
void bk_register_stop(bk_register_t *r, int timeout_ms, void (*done)(void *arg), void *arg);

/* Master client / HA addresses from the last register response ("" if none). */
const char *bk_register_master_addr(const bk_register_t *r);
const char *bk_register_ha_addr(const bk_register_t *r);
/* Name servers that accepted the last registration. */
size_t bk_register_ok_count(const bk_register_t *r);

#endif
