/* ns_ctl_state.h: the controller's per-broker-group state as it is kept in
 * etcd (RocketMQ's ReplicasInfoManager fields), its JSON value codec, and
 * the election rule. Pure data and functions: no network, no clock.
 *
 * Value: {"masterBrokerId":N,"masterAddress":"host:port","masterEpoch":N,
 *         "syncStateSet":[id,...],"syncStateSetEpoch":N,
 *         "masterHeartbeatTimeoutMs":N}; masterBrokerId -1 (and an empty
 * address) while the group has no master; masterHeartbeatTimeoutMs 0 (or
 * absent, as states written before it have it) when unknown. */
#ifndef NS_CTL_STATE_H
#define NS_CTL_STATE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "rmq_err.h"

#define NS_CTL_MAX_REPLICAS 16
#define NS_CTL_ADDR_MAX 255
/* The longest controllerHeartBeatTimeoutMills a broker may announce (an
 * hour, the name server's own bound), so lease arithmetic cannot overflow. */
#define NS_CTL_TIMEOUT_MAX_MS 3600000

typedef struct ns_ctl_state {
    int64_t master_id;                        /* -1: no master */
    char master_addr[NS_CTL_ADDR_MAX + 1];
    int64_t master_epoch;
    int64_t sync_set[NS_CTL_MAX_REPLICAS];    /* broker ids, no repeats */
    size_t n_sync;
    int64_t sync_set_epoch;
    int64_t master_timeout_ms;                /* the master's controllerHeartBeatTimeoutMills; 0: unknown */
} ns_ctl_state_t;

/* One replica as the controller sees it: from its registration and its
 * last heartbeat. */
typedef struct ns_ctl_member {
    int64_t broker_id;
    char addr[NS_CTL_ADDR_MAX + 1];
    int alive;                                /* heartbeat within the timeout */
    int64_t epoch;                            /* the last master epoch it has */
    int64_t max_offset;                       /* its commit log's end */
    int64_t priority;                         /* brokerElectionPriority: lower preferred */
    int64_t timeout_ms;                       /* its controllerHeartBeatTimeoutMills */
} ns_ctl_member_t;

/* A group with no master yet. */
void ns_ctl_state_init(ns_ctl_state_t *st);

/* Appends st's JSON value to out. RMQ_ENOMEM. */
rmq_err_t ns_ctl_state_encode(const ns_ctl_state_t *st, struct evbuffer *out);

/* Parses a value read from etcd into st. RMQ_EPROTO with what was wrong in
 * why (not JSON, a field missing or of the wrong type, an id repeated, too
 * many ids, a negative epoch, a timeout out of [0, NS_CTL_TIMEOUT_MAX_MS]). */
rmq_err_t ns_ctl_state_decode(const char *text, size_t len, ns_ctl_state_t *st, char *why,
                              size_t whylen);

/* 1 if broker_id is in st's sync state set. */
int ns_ctl_state_in_sync(const ns_ctl_state_t *st, int64_t broker_id);

/* The member to make master among members[0..n): alive ones in the sync
 * state set (any alive one when unclean), ranked by epoch (higher first),
 * then max offset (higher), then priority (lower), then broker id (lower);
 * -1 when there is none. */
int ns_ctl_elect(const ns_ctl_state_t *st, const ns_ctl_member_t *members, size_t n, int unclean);

/* The monotonic time after which a leader may replace its group's master:
 * the later of the master's last heartbeat here (heard_ms; NS_CTL_NEVER
 * when none) and the start of this leadership, plus the master's
 * controllerHeartBeatTimeoutMills. Why this is the lease's end: the rule
 * in ns_ctl_state.c. */
#define NS_CTL_NEVER INT64_MIN
int64_t ns_ctl_master_lapse_ms(int64_t heard_ms, int64_t leader_since_ms, int64_t timeout_ms);

/* The state after members[winner] becomes master: masterEpoch + 1, the
 * sync state set the winner alone, its epoch + 1, the winner's heartbeat
 * timeout. */
void ns_ctl_state_promote(const ns_ctl_state_t *st, const ns_ctl_member_t *winner,
                          ns_ctl_state_t *next);

#endif
