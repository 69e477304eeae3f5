/* bk_controller.h: the broker's side of controller mode
 * (enableControllerMode): registers with every controller in
 * controllerAddr (CONTROLLER_REGISTER_BROKER, then BROKER_HEARTBEAT every
 * brokerHeartbeatInterval), takes the group's state from the active
 * controller's answers (master id, address, HA address, epoch, sync state
 * set), switches the broker's role to match, and, while master, keeps the
 * sync state set in step with its slaves (CONTROLLER_ALTER_SYNC_STATE_SET)
 * and holds a lease: a master whose last confirmed heartbeat was sent more
 * than controllerHeartBeatTimeoutMills less a margin ago stops
 * acknowledging writes until a controller confirms it again. Loop thread
 * only. */
#ifndef BK_CONTROLLER_H
#define BK_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>

#include "bk_node.h"

/* A client of the controllers in node's controllerAddr. NULL with the
 * reason in err (a malformed address, out of memory). */
bk_controller_t *bk_controller_new(const bk_node_t *node, char *err, size_t errlen);

/* Registers with every controller now and starts the timers. */
void bk_controller_start(bk_controller_t *c);

/* Drops requests in flight and frees; the broker keeps its current role. */
void bk_controller_free(bk_controller_t *c);

/* The margin before a lease's end at which a master stops acknowledging:
 * a quarter of the timeout, at most 1 s (as the controller's own lease). */
int64_t bk_controller_lease_margin_ms(int64_t timeout_ms);

/* The master epoch of the role the broker acts in now (0 before the
 * controllers named one); name servers order registrations by it. */
int64_t bk_controller_epoch(const bk_controller_t *c);

/* Calls add(key, value, arg) for each controller runtime-info entry
 * (controllerMasterId, controllerMasterEpoch, controllerSyncStateSet,
 * controllerFenced, ...). */
void bk_controller_describe(const bk_controller_t *c, void (*add)(const char *key, const char *value, void *arg),
                            void *arg);

#endif
