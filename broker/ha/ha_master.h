/* ha_master.h: the master side of the HA channel. Listens on the HA port,
 * checks each slave's handshake (same cluster and broker name, log not ahead
 * of or diverged from ours), then streams the commit log to it straight from
 * the mapped files and collects its acks, which release SYNC_MASTER waiters
 * (ha_sync.h). In controller mode it first answers a slave's epoch query
 * from the epoch file. Everything on the broker's loop thread; no locks. */
#ifndef HA_MASTER_H
#define HA_MASTER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "ha.pb-c.h"
#include "ha_config.h"
#include "ha_sync.h"
#include "st_store.h"

typedef struct ha_master ha_master_t;

/* One slave as shown by brokerStatus. */
typedef struct ha_slave_info {
    char addr[64];                   /* peer "ip:port" */
    int64_t broker_id;
    int64_t acked_offset;
    int64_t lag_bytes;               /* master max offset - acked */
    int in_sync;                     /* lag within haSlaveFallbehindMax */
    int64_t connected_since_ms;      /* wall clock, handshake accepted */
} ha_slave_info_t;

/* Binds cfg->listen_host:listen_port and starts accepting slaves. The store
 * is borrowed and must outlive the master. On failure returns NULL with the
 * reason in err. Loop thread. */
ha_master_t *ha_master_new(struct event_base *base, st_store_t *st, const ha_config_t *cfg,
                           char *err, size_t errlen);

/* Closes every slave connection, answers SYNC waiters HA_SYNC_SHUTDOWN,
 * stops listening and frees. Loop thread. */
void ha_master_free(ha_master_t *master);

/* The bound HA port (useful with listen_port 0). */
int ha_master_port(const ha_master_t *master);

/* The broker calls this after each append (put, batch): streaming to every
 * slave is scheduled for the end of this loop pass, so many appends in one
 * pass go out as one chunk. Cheap; loop thread. */
void ha_master_notify_append(ha_master_t *master);

#define HA_META_KEEP 1024            /* metadata changes kept for slaves */

/* Records a metadata change at the current log end and schedules it to
 * every slave that takes typed records, after the log bytes before it; the
 * last HA_META_KEEP changes are kept for slaves that reconnect. meta is
 * packed (not kept). RMQ_ETOOBIG over HA_RECORD_MAX, RMQ_ENOMEM. Loop
 * thread. */
rmq_err_t ha_master_push_meta(ha_master_t *master, const Rmq__HaMeta *meta);

/* The SYNC_MASTER waiter set fed by this master's slaves. Borrowed. */
ha_sync_t *ha_master_sync(ha_master_t *master);

/* Controller mode: the confirm offset to stream to slaves that take it
 * (HA_REC_CONFIRM), so they serve pulls only below it; -1: the log end (the
 * sync state set is the master alone). Slaves are told after the next
 * chunk, or at once when idle. Loop thread. */
void ha_master_set_confirm(ha_master_t *master, int64_t confirm);

#define HA_ACK_SET_MAX 64

/* Which acks release a SYNC_MASTER waiter (RocketMQ's GroupTransferService
 * rules). Classic mode, the default: any one streaming slave's (need 1).
 * need > 1: acks from need distinct streaming slaves (inSyncReplicas - 1).
 * all_in_set: the ack of every broker id in set[0..n_set) but the master's
 * own (allAckInSyncStateSet); a member not streaming holds every waiter,
 * and a set of the master alone releases them at once. Copies set (at most
 * HA_ACK_SET_MAX ids). Loop thread. */
void ha_master_set_acks(ha_master_t *master, int need, int all_in_set, const int64_t *set, size_t n_set);

/* Calls fn(arg) whenever a slave's acked offset changes or a slave starts
 * or stops streaming (fn NULL: none). fn must not free the master. Loop. */
void ha_master_on_progress(ha_master_t *master, void (*fn)(void *arg), void *arg);

/* Slaves that passed the handshake. Fills up to n entries; returns how many
 * there are. Loop thread. */
size_t ha_master_slaves(ha_master_t *master, ha_slave_info_t *out, size_t n);

#endif
