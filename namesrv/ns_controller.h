/* ns_controller.h: the controller embedded in the name server
 * (enableControllerInNamesrv=true, controllerType=etcd): automatic
 * failover of broker groups, with the consensus kept in etcd.
 *
 * Leadership: every name server with the controller grants itself a lease
 * (controllerLeaseTtlSeconds) and campaigns for <prefix>/leader with a txn
 * "create revision == 0 -> put under my lease"; the key's create revision
 * is the fencing token. The winner acts until (send time of its last
 * successful keepalive + TTL - margin), on the monotonic clock; the others
 * stand by and campaign again every TTL/3.
 *
 * State: one key per group, <prefix>/groups/<cluster>/<broker name>, whose
 * value is ns_ctl_state_t. The leader changes it only by txns comparing the
 * fencing token (the leader key's create revision is still ours) and the
 * state key's mod revision; a txn refused for the token ends leadership, one
 * refused for the revision reloads the group.
 *
 * Members: brokers register and heartbeat to every controller (standbys
 * too, so a new leader knows who is alive). When a group's master has been
 * silent for its heartbeat timeout, the leader elects a new master from the
 * live members of the sync state set (any live member if
 * enableElectUncleanMaster, or if the group never had one), raises
 * masterEpoch, commits it, and moves the winner to brokerId 0 in this name
 * server's route table. Loop thread only. */
#ifndef NS_CONTROLLER_H
#define NS_CONTROLLER_H

#include <stddef.h>
#include <stdint.h>

#include <event2/event.h>

#include "controller.pb-c.h"
#include "ns_config.h"
#include "ns_ctl_state.h"
#include "ns_route.h"
#include "rmq_err.h"

typedef struct ns_controller ns_controller_t;

/* A controller on base over cfg's controller keys; route (may be NULL) is
 * the table elections update. node names this controller in the leader key
 * (the name server's address). NULL with the key and rule in err on a bad
 * configuration (controllerType, controllerEtcdEndpoints), or ENOMEM.
 * Owner: caller. */
ns_controller_t *ns_controller_new(struct event_base *base, const ns_config_t *cfg, ns_route_t *route,
                                   const char *node, char *err, size_t errlen);

/* Starts campaigning (lease, leader key, timers). */
rmq_err_t ns_controller_start(ns_controller_t *ctl);

/* 1 while this controller holds leadership and its lease is still valid. */
int ns_controller_is_leader(const ns_controller_t *ctl);

/* The fencing token (the leader key's create revision), 0 unless leader. */
int64_t ns_controller_token(const ns_controller_t *ctl);

/* A register or heartbeat from a broker over connection conn_id: records
 * it as alive, may elect the group's first master. RMQ_OK with the group's
 * state in out (leader only: it confirms a master's lease); RMQ_EAGAIN when
 * this controller stands by, has not loaded the group yet or is committing
 * a new master (out holds what it knows); RMQ_EINVAL (why) for a bad field;
 * RMQ_ENOMEM. */
rmq_err_t ns_controller_heartbeat(ns_controller_t *ctl, const Rmq__ControllerBrokerRequest *req,
                                  uint64_t conn_id, ns_ctl_state_t *out, char *why, size_t whylen);

/* Connection conn_id closed: each replica whose last heartbeat came over
 * it is probed at its broker address; if its port refuses the connection
 * (most likely the process is gone: kill -9, crash) it is no candidate for
 * master until it beats again. A master is still replaced only once its
 * lease surely lapsed (ns_ctl_master_lapse_ms): a refusing port may be a
 * firewall in front of a live master. RocketMQ's controller acts on the
 * close alone (DefaultBrokerHeartbeatManager.onBrokerChannelClose); it has
 * no lease to keep. */
void ns_controller_conn_closed(ns_controller_t *ctl, uint64_t conn_id);

/* The state of a group: RMQ_OK (leader), RMQ_EAGAIN (standby: last known),
 * RMQ_ENOTFOUND. */
rmq_err_t ns_controller_replica_info(const ns_controller_t *ctl, const char *cluster,
                                     const char *broker_name, ns_ctl_state_t *out);

/* The HA address broker_id of the group last reported in a heartbeat, or
 * "" when it has not been heard (or reports none). Borrowed from ctl. */
const char *ns_controller_ha_addr(const ns_controller_t *ctl, const char *cluster, const char *broker_name,
                                  int64_t broker_id);

/* How many master changes (first masters and elections) this controller
 * has committed as leader. */
uint64_t ns_controller_elections(const ns_controller_t *ctl);

#define NS_CTL_ELECTIONS_KEPT 32

/* A master change (a first master or a failover) this controller committed
 * as leader. */
typedef struct ns_ctl_election {
    int64_t wall_ms;                          /* when the txn committed */
    char cluster[NS_NAME_MAX + 1];
    char broker_name[NS_NAME_MAX + 1];
    int64_t old_master_id;                    /* -1: the group had none */
    char old_master_addr[NS_CTL_ADDR_MAX + 1];
    int64_t new_master_id;
    char new_master_addr[NS_CTL_ADDR_MAX + 1];
    int64_t master_epoch;                     /* the new master's */
} ns_ctl_election_t;

/* The i-th most recent (0: newest) of the last NS_CTL_ELECTIONS_KEPT
 * master changes this controller committed, or NULL past the last one.
 * Borrowed from ctl until its next election. */
const ns_ctl_election_t *ns_controller_election(const ns_controller_t *ctl, size_t i);

/* Copies up to max replicas of a group, as their heartbeats last described
 * them (alive as of now), into out; returns how many (0: unknown group). */
size_t ns_controller_members(const ns_controller_t *ctl, const char *cluster, const char *broker_name,
                             ns_ctl_member_t *out, size_t max);

typedef void (*ns_ctl_group_fn)(const char *cluster, const char *broker_name, const ns_ctl_state_t *st,
                                void *arg);

/* Calls fn for every group this controller has heard of, with the state it
 * last read or committed (a standby's may be stale). */
void ns_controller_each_group(const ns_controller_t *ctl, ns_ctl_group_fn fn, void *arg);

/* A master's request to change its group's sync state set (leader only).
 * RMQ_EAGAIN: accepted, the txn is in flight and out holds the state it
 * commits. RMQ_ESTATUS with the wire status in *status and why: this
 * controller stands by, the sender is not the master, its master epoch or
 * set epoch is stale, the new set lacks the master or names an unknown
 * replica, or another change of the group is in flight. */
rmq_err_t ns_controller_alter_sync_state_set(ns_controller_t *ctl,
                                             const Rmq__AlterSyncStateSetRequest *req,
                                             ns_ctl_state_t *out, int *status, char *why,
                                             size_t whylen);

/* Frees ctl; its lease lapses after controllerLeaseTtlSeconds, then a
 * standby takes over. */
void ns_controller_free(ns_controller_t *ctl);

#endif
