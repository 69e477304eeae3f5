/* ha_slave.h: the slave side of the HA channel. Connects to the master's HA
 * address (which may change at runtime: the broker learns it from the name
 * server), handshakes with its commit-log end and tail checksum, appends each
 * streamed chunk at exactly its own end (st_store_append_raw dispatches the
 * consume queues), acks the new end, heartbeats when idle, and drops and
 * reconnects a silent or misbehaving master. Loop thread only. */
#ifndef HA_SLAVE_H
#define HA_SLAVE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "ha.pb-c.h"
#include "ha_config.h"
#include "st_store.h"

typedef struct ha_slave ha_slave_t;

typedef struct ha_slave_state {
    int connected;                   /* handshake accepted, streaming */
    char master_addr[128];           /* "" when unknown */
    int64_t acked_offset;            /* last offset reported to the master */
    int64_t connects;                /* accepted handshakes since creation */
    char last_error[256];            /* "" if none since the last accepted handshake */
} ha_slave_state_t;

/* Creates an idle slave (no master address yet). The store is borrowed and
 * must outlive the slave. Owner: caller. Loop thread. */
ha_slave_t *ha_slave_new(struct event_base *base, st_store_t *st, const ha_config_t *cfg);

/* Closes the connection and frees. Loop thread. */
void ha_slave_free(ha_slave_t *slave);

/* Sets or changes the master's HA address "host:port" (NULL or "": stop).
 * Same address: no-op. A new one drops the current link and connects now.
 * Hostnames are resolved with a blocking lookup; give numeric addresses on
 * a busy loop. Loop thread. */
void ha_slave_set_master(ha_slave_t *slave, const char *addr);

void ha_slave_state(const ha_slave_t *slave, ha_slave_state_t *out);

/* Applies one metadata change from the master, in log order. 0, or -1 with
 * the reason in why (the link is dropped and retried). meta is borrowed for
 * the call. */
typedef int (*ha_meta_fn)(const Rmq__HaMeta *meta, void *arg, char *why, size_t whylen);

/* Sets the metadata callback; from the next handshake on the slave asks the
 * master for its metadata changes. Loop thread. */
void ha_slave_on_meta(ha_slave_t *slave, ha_meta_fn fn, void *arg);

/* The master's confirm offset arrived (HA_REC_CONFIRM). */
typedef void (*ha_confirm_fn)(int64_t confirm, void *arg);

/* Sets the confirm callback (with a metadata callback set too); from the
 * next handshake on the slave asks the master for its confirm offset.
 * Loop thread. */
void ha_slave_on_confirm(ha_slave_t *slave, ha_confirm_fn fn, void *arg);

#endif
