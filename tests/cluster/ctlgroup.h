/* ctlgroup.h: one broker group in controller mode for the cluster tests
 * and the failover benchmark: a private etcd, a name server running the
 * controller, and two mqbroker replicas of broker-a (enableControllerMode,
 * SYNC_MASTER when elected, brokerId 1 and 2, sends acknowledged once the
 * whole sync state set has them unless the settings say otherwise), each over its own store in
 * the case's scratch directory; plus the probes that watch them (runtime
 * info, one-message sends, the name server's route). Everything runs as
 * harness children. */
#ifndef CTLGROUP_H
#define CTLGROUP_H

#include <stddef.h>

#include "etcdproc.h"
#include "harness.h"

#define CG_REPLICAS 2
#define CG_PROBE_TOPIC "CtlProbeTopic"

/* The controller-mode timings (0: the broker's default). */
typedef struct cg_settings {
    int hb_timeout_ms;            /* controllerHeartBeatTimeoutMills */
    int hb_interval_ms;           /* brokerHeartbeatInterval */
    int check_ms;                 /* checkSyncStateSetPeriod */
    int catchup_ms;               /* haMaxTimeSlaveNotCatchup */
    int lease_s;                  /* the controller's controllerLeaseTtlSeconds */
    int console;                  /* 1: the name server serves its console (metricsPort) */
    const char *acks;             /* the replicas' ack-rule properties; NULL: the broker defaults (allAckInSyncStateSet=true) */
    const char *controller_addr[CG_REPLICAS]; /* each replica's controllerAddr; NULL: the name server */
} cg_settings_t;

typedef struct cg_group {
    const char *dir;
    cg_settings_t set;
    hn_etcd_t etcd;
    hn_daemon_t ns;
    char ns_addr[64];
    int console_port;             /* the name server's metricsPort; 0 without set.console */
    hn_daemon_t rep[CG_REPLICAS];
    char addr[CG_REPLICAS][64];
    int starts[CG_REPLICAS];      /* daemon names b1, b1.2, ... */
} cg_group_t;

/* Starts etcd, the name server and both replicas in dir. 0, or -1. */
int cg_start(cg_group_t *g, const char *dir, const cg_settings_t *set);

/* (Re)starts replica i over its store (a new client address), emptied
 * first when wipe. 0, or -1. */
int cg_replica_start(cg_group_t *g, int i, int wipe);

/* Waits until a replica reports itself master; its index, or -1. */
int cg_wait_master(cg_group_t *g, int timeout_ms);

/* The runtime-info value of key on addr into out ("" if absent); 0, or -1. */
int cg_runtime_get(const char *addr, const char *key, char *out, size_t len);

/* 1 if addr's runtime info has key == value. */
int cg_runtime_is(const char *addr, const char *key, const char *value);

/* Waits until addr's runtime key equals value; 1, or 0 after timeout_ms. */
int cg_wait_runtime(const char *addr, const char *key, const char *value, int timeout_ms);

/* Waits until the master at addr reports a sync state set of two; 1 or 0. */
int cg_wait_sync_set_full(const char *addr, int timeout_ms);

/* One message to CG_PROBE_TOPIC on addr: its status (-1 transport error),
 * the remark into why (may be NULL). */
int cg_probe_send(const char *addr, char *why, size_t len);

/* One message to CG_PROBE_TOPIC on addr: the master epoch its SUCCESS
 * answer carries (0: none), or -1 when it did not succeed. */
long long cg_probe_epoch(const char *addr);

/* Probes addr every 20 ms until a send answers SUCCESS: the ms that took, or -1. */
long long cg_until_send_ok(const char *addr, int timeout_ms);

/* The address the route of topic gives broker-a's broker id want, into out ("" if none). */
void cg_route_addr(const char *ns, const char *topic, long long want, char *out, size_t len);

#endif
