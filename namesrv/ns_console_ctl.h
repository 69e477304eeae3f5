/* ns_console_ctl.h: the console's controller view (/api/controller), read
 * from the controller embedded in this name server: the same state the
 * Prometheus families and mqadmin getSyncStateSet show. Loop thread only. */
#ifndef NS_CONSOLE_CTL_H
#define NS_CONSOLE_CTL_H

#include <event2/buffer.h>

#include "ns_controller.h"

/* Appends ctl's view as JSON to out:
 *   {"leader":B,"electionsTotal":N,
 *    "groups":[{"cluster","broker","masterBrokerId","masterAddress","masterEpoch",
 *               "syncStateSet":[id...],"syncStateSetEpoch",
 *               "replicas":[{"brokerId","addr","role","alive","inSync","epoch",
 *                            "maxOffset","lagBytes"}]}],
 *    "elections":[{"timeMs","cluster","broker","oldMasterId","oldMasterAddress",
 *                  "newMasterId","newMasterAddress","masterEpoch"}]}   (newest first)
 * A replica's role is MASTER, SLAVE or DOWN (its heartbeat lapsed, or an
 * in-sync id never heard of); maxOffset is its commit-log end from its last
 * heartbeat and lagBytes the master's less its own (null while the master
 * is unheard of). */
void ns_console_ctl_render(const ns_controller_t *ctl, struct evbuffer *out);

#endif
