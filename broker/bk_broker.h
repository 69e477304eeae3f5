/* bk_broker.h: the one broker object: configuration, store, server,
 * metadata tables, request handlers and name-server registration. No
 * globals: a test may run two brokers in one process. Everything here runs
 * on the loop thread of base. */
#ifndef BK_BROKER_H
#define BK_BROKER_H

#include <stdint.h>

#include <event2/event.h>

#include "rmq_acl_live.h"
#include "bk_append.h"
#include "bk_clients.h"
#include "bk_consume.h"
#include "bk_counts.h"
#include "bk_config.h"
#include "bk_groups_pb.h"
#include "bk_groupstats.h"
#include "bk_front.h"
#include "bk_node.h"
#include "bk_offsets_pb.h"
#include "bk_produce.h"
#include "bk_send.h"
#include "bk_pop.h"
#include "bk_sendback.h"
#include "bk_persist.h"
#include "bk_stats.h"
#include "bk_statsitems.h"
#include "bk_tx.h"
#include "bk_topics_pb.h"
#include "rmq_loop.h"
#include "rmq_rpc.h"
#include "rmq_security.h"
#include "st_store.h"

typedef struct fr_send fr_send_t;
typedef struct bk_register bk_register_t;
typedef struct bk_controller bk_controller_t;
typedef struct bk_ha bk_ha_t;
typedef struct bk_schedule bk_schedule_t;
typedef struct bk_metrics bk_metrics_t;
typedef struct bkm_topic bk_metrics_topic_t;
typedef struct bk_lock bk_lock_t;
typedef struct bk_offset_ops bk_offset_ops_t;
typedef struct bk_admin_ops bk_admin_ops_t;
typedef struct fr_remoting fr_remoting_t;
typedef struct gr_front gr_front_t;

#define BK_SEND_COUNTED_SLOTS 64

/* The counters a send to one topic goes to (broker_stored), found once for
 * the topic table's entry topic, while the table's epoch is still epoch. */
typedef struct bk_send_counted {
    const bk_topic_t *topic;      /* NULL: free */
    uint64_t epoch;
    bk_si_ref_t put_nums, put_size;
    bk_metrics_topic_t *metrics;
} bk_send_counted_t;

typedef struct bk_broker {
    bk_config_t *cfg;             /* borrowed; outlives the broker */
    struct event_base *base;      /* borrowed */
    rmq_loop_poster_t *poster;
    rmq_server_t *srv;
    st_store_t *store;
    bk_persist_t *persist;
    bk_topics_t *topics;
    bk_groups_t *groups;
    bk_offsets_t *offsets;
    bk_clients_t *clients;
    bk_append_t *append;          /* the one append path (core/bk_append.c) */
    bk_produce_t *produce;        /* producers' sends (core/bk_produce.c) */
    bk_sendback_t *sendback;      /* retry and dead letters (core/bk_sendback.c) */
    bk_pop_t *pop;                /* pop consumption (core/bk_pop.c) */
    bk_send_t *send;              /* every front's send waiting and back-pressure (core/bk_send.c) */
    fr_send_t *fr_send;           /* the native front's send queue (front/rmq/fr_send.c) */
    bk_consume_t *consume;        /* every front's pulls and their hold (core/bk_consume.c) */
    bk_register_t *reg;
    bk_ha_t *ha;                  /* HA master or slave; rebuilt when the role changes */
    bk_role_t role;               /* the current role: read it with bk_broker_role */
    int sync_acks;                /* SYNC_MASTER waits for slaves (controller mode: as the ack rule asks) */
    bk_controller_t *ctl;         /* enableControllerMode: the controllers' client; NULL otherwise */
    rmq_security_t sec;           /* TLS contexts, ACL, own credentials (tls*, acl* keys) */
    rmq_acl_live_t *acl_live;     /* sec.acl kept live (reloads, admin edits); NULL: access control off */
    bk_schedule_t *schedule;      /* delayed messages (bk_schedule.c) */
    bk_recall_t *recall;          /* recalls of timer messages (core/bk_recall.c) */
    bk_metrics_t *metrics;        /* counters and the metricsPort endpoint */
    bk_counts_t counts;           /* what the core counts (core/bk_counts.h): to statistics, stats items, metrics */
    bk_counts_t metrics_counts;   /* the metrics' share of it, once they run */
    bk_lock_t *locks;             /* orderly queue locks (core/bk_lock.c) */
    bk_offset_ops_t *offset_ops;  /* consumer and queue offsets (core/bk_offset_ops.c) */
    bk_admin_ops_t *admin_ops;    /* topics, groups, runtime info (core/bk_admin_ops.c) */
    bk_tx_t *tx;                  /* transactions: half messages, check-back (core/bk_tx.c) */
    fr_remoting_t *remoting;      /* RocketMQ remoting front (front/remoting/) */
    gr_front_t *grpc;             /* RocketMQ 5 gRPC front (front/grpc/) */
    bk_stats_t stats;
    bk_groupstats_t *groupstats;  /* per (group, topic) pulls: consumeTps */
    bk_statsitems_t *statsitems;  /* RocketMQ's broker stats items (VIEW_BROKER_STATS_DATA) */
    bk_send_counted_t send_counted[BK_SEND_COUNTED_SLOTS];   /* by topic entry address */
    bk_si_ref_t broker_put_nums;  /* BROKER_PUT_NUMS of the cluster */
    bk_si_ref_t broker_get_nums;  /* BROKER_GET_NUMS of the cluster */
    bk_node_t node;               /* what cluster links and metrics are handed (bk_node.h) */
    bk_front_t front;             /* what the fronts are handed (bk_front.h) */
    struct event *tick;           /* 1 s housekeeping: stats, client expiry, offsets */
    struct event *drain;          /* clean stop: waits for unanswered sends */
    int64_t drain_deadline_ms;
    int64_t boot_ms;              /* wall clock at start: the registration epoch */
    int64_t last_offsets_ms;
    uint64_t ticks;
    int port;                     /* bound client port */
    int vip_port;                 /* listenPort - 2 when served, else -1 */
    int stopping;
    char addr[80];                /* brokerIP1:port */
    char config_dir[4096];
    void (*stopped)(void *arg);
    void *stopped_arg;
} bk_broker_t;

/* Creates a broker over cfg (borrowed) on base. Nothing is opened yet. */
bk_broker_t *bk_broker_new(bk_config_t *cfg, struct event_base *base);

/* Listens, opens and recovers the store, loads metadata, installs handlers
 * and starts registration. On failure writes the reason into err. */
rmq_err_t bk_broker_start(bk_broker_t *bk, char *err, size_t errlen);

/* Starts a clean stop (only after a successful bk_broker_start): refuses
 * new sends, answers held pulls, waits (bounded) for sends in flight to be
 * answered, unregisters from name servers (bounded), then calls done(arg). */
void bk_broker_stop(bk_broker_t *bk, void (*done)(void *arg), void *arg);

/* Persists offsets and metadata, closes the store (flushing it) and frees
 * everything. */
void bk_broker_free(bk_broker_t *bk);

/* The role the broker acts in now: brokerRole, or in controller mode the
 * one the controller named last (SLAVE until it names one). */
bk_role_t bk_broker_role(const bk_broker_t *bk);

/* The brokerId it registers with the name servers: brokerId, or in
 * controller mode 0 while it is master. */
int64_t bk_broker_id(const bk_broker_t *bk);

/* Controller mode: acts as role from now on. A master (ASYNC_MASTER or
 * SYNC_MASTER) rebuilds HA as the master listener and begins epoch before
 * it opens writes; a SLAVE refuses writes at once, then rebuilds HA to
 * follow master_ha (may be "" while unknown; master_addr is its client
 * address). Registers the new role with the name servers. On failure
 * (the HA listener or the epoch file) the broker stays a slave, with the
 * reason in err. */
rmq_err_t bk_broker_switch_role(bk_broker_t *bk, bk_role_t role, int64_t epoch, const char *master_addr,
                                const char *master_ha, char *err, size_t errlen);

/* Controller mode, SYNC_MASTER: whether sends wait for a slave's ack (while
 * the in-sync set holds a slave, or one is being added). */
void bk_broker_set_sync_acks(bk_broker_t *bk, int wait);

int bk_broker_port(const bk_broker_t *bk);
/* The VIP channel's port (listenPort - 2), -1 when not served. */
int bk_broker_vip_port(const bk_broker_t *bk);
int bk_broker_ha_port(const bk_broker_t *bk);

/* Called when topic name changed (registers it with the name servers). */
void bk_broker_topics_changed(void *arg, const char *name);

#endif
