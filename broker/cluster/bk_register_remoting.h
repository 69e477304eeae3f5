/* bk_register_remoting.h: registration with Apache RocketMQ name servers
 * (namesrvProtocol=remoting), as a RocketMQ 4.9 broker does it with
 * forceRegister=false: REGISTER_BROKER (103) with a RegisterBrokerBody at
 * start and after topics change, QUERY_DATA_VERSION (322) every
 * registerNameServerPeriod (which keeps the broker alive there; "changed"
 * brings a full registration), UNREGISTER_BROKER (104) on a clean stop.
 * A slave takes the master and HA addresses the answers name. bk_register.c
 * hands its calls here when the property says so. Loop thread only. */
#ifndef BK_REGISTER_REMOTING_H
#define BK_REGISTER_REMOTING_H

#include "bk_node.h"

typedef struct bk_regrem bk_regrem_t;

/* For the name servers addrs[0..n) (numeric host:port, checked by the
 * caller). NULL with err on a bad address or out of memory. */
bk_regrem_t *bk_regrem_new(const bk_node_t *node, const char *const *addrs, size_t n, char *err, size_t errlen);
void bk_regrem_free(bk_regrem_t *r);

void bk_regrem_start(bk_regrem_t *r);
/* Topics changed: a full registration at the end of this loop pass (or
 * after the one in flight). */
void bk_regrem_changed(bk_regrem_t *r);
void bk_regrem_role_changed(bk_regrem_t *r, const char *master_addr, const char *ha_addr);
void bk_regrem_stop(bk_regrem_t *r, int timeout_ms, void (*done)(void *arg), void *arg);

const char *bk_regrem_master_addr(const bk_regrem_t *r);
const char *bk_regrem_ha_addr(const bk_regrem_t *r);
size_t bk_regrem_ok_count(const bk_regrem_t *r);
uint64_t bk_regrem_bytes_sent(const bk_regrem_t *r);

#endif
