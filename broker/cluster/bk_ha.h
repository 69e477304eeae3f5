/* bk_ha.h: the broker's side of replication: owns the HA master (listener,
 * SYNC_MASTER waiters, topic and group changes streamed to the slaves) or
 * the HA slave (link to the master's HA address, metadata copy), and
 * describes either for runtime info. Loop thread only. */
#ifndef BK_HA_H
#define BK_HA_H

#include <stddef.h>
#include <stdint.h>

#include "bk_node.h"
#include "ha_master.h"
#include "ha_sync.h"

typedef struct bk_ha bk_ha_t;

/* Starts the master listener or the idle slave over the opened store; a
 * slave with haMasterAddress connects at once. NULL with err filled. */
bk_ha_t *bk_ha_new(const bk_node_t *node, char *err, size_t errlen);
void bk_ha_free(bk_ha_t *ha);

/* Controller mode: this broker became master at epoch and is about to take
 * writes: records <epoch, log end> durably in the epoch file (nothing when
 * the file ends with epoch: this broker led it before a restart). RMQ_EINVAL
 * (err) off controller mode, on a slave, or for an epoch below the last
 * one; the write's error otherwise (nothing recorded: do not take writes).
 * Loop thread. */
rmq_err_t bk_ha_epoch_begin(bk_ha_t *ha, int64_t epoch, char *err, size_t errlen);

/* Controller mode: the confirm offset, below which every member of the sync
 * state set holds the log (a master: the log end when the set is the master
 * alone; a slave: the last one its master sent, or the one it kept); pulls
 * serve only records below it. -1 off controller mode. Loop thread. */
int64_t bk_ha_confirm_offset(const bk_ha_t *ha);

/* Controller mode: the epoch of the commit-log byte at phys (the newest
 * epoch of the file starting at or before it), which a master stamps on its
 * send answers; 0 off controller mode or before the first epoch. Loop thread. */
int64_t bk_ha_epoch_at(const bk_ha_t *ha, int64_t phys);

/* Controller mode, master: the sync state set the controller holds (broker
 * ids; the master's own id may be among them). Until it is first called
 * every streaming slave counts as in sync. A member that is not connected
 * holds the confirm offset where it is. Copies the ids. Loop thread. */
void bk_ha_set_sync_state_set(bk_ha_t *ha, const int64_t *broker_ids, size_t n);

/* Master: which slave acks release a SYNC_MASTER send (ha_master_set_acks:
 * need distinct slaves, or every member of set when all_in_set). No-op on a
 * slave. Copies set. Loop thread. */
void bk_ha_set_acks(bk_ha_t *ha, int need, int all_in_set, const int64_t *set, size_t n);

/* The bound HA port (0 on a slave). */
int bk_ha_port(const bk_ha_t *ha);

/* After each stored put or batch: schedules streaming to the slaves. */
void bk_ha_notify_append(bk_ha_t *ha);

/* SYNC_MASTER waiters; NULL unless brokerRole is SYNC_MASTER. */
ha_sync_t *bk_ha_sync(bk_ha_t *ha);

/* A client committed an offset on this broker (UPDATE_CONSUMER_OFFSET): a
 * slave hands it to its master once reachable; a master ignores it. */
void bk_ha_offset_committed(bk_ha_t *ha, const char *topic, const char *group, int32_t queue_id);

/* A name server named the master's HA address (slave only; ignored when
 * haMasterAddress is set). */
void bk_ha_master_seen(bk_ha_t *ha, const char *ha_addr);

/* A master's connected slaves (at most n into out); 0 on a slave. */
size_t bk_ha_slaves(bk_ha_t *ha, ha_slave_info_t *out, size_t n);

/* Controller mode, slave: follow the master at ha_addr (the controller
 * named it; "" keeps the current one). */
void bk_ha_follow(bk_ha_t *ha, const char *ha_addr);

/* Calls add(key, value, arg) for each HA runtime-info entry. */
void bk_ha_describe(bk_ha_t *ha, void (*add)(const char *key, const char *value, void *arg), void *arg);

#endif
