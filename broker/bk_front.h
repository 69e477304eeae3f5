/* bk_front.h: the broker as its front-ends see it (front/rmq,
 * front/remoting, and the gRPC front to come in front/grpc), handed to
 * each front when bk_broker.c wires it, once every core module is open.
 *
 * What a front gets, and all it gets:
 *   - node (bk_node.h): the settings, the opened store and tables, the
 *     append path, the security contexts (TLS, ACL), the broker's address,
 *     and the role, brokerId and current HA asked through its callbacks;
 *   - srv: the server it installs its request codes (or its codec) on;
 *   - the core's operations, one module per request family: produce and
 *     send (waiting and back-pressure shared by every front), consume
 *     (pulls and their hold, answered through the front's callback),
 *     pop consumption (invisibility, receipt handles, revive), sendback,
 *     tx, locks, offsets, admin, clients (and the sessions a front opens
 *     over its connections, core/bk_session.h), the delay scheduler;
 *   - the counters it reads: stats, per-group pull rates, stats items,
 *     metrics (the core feeds them through the broker's hooks).
 * A front decodes its wire into the core's neutral requests, asks
 * core/bk_perm.h whether the caller may, calls these, and encodes the
 * neutral results; it never sees the broker object. Everything is
 * borrowed and outlives the front. Loop thread only. */
#ifndef BK_FRONT_H
#define BK_FRONT_H

#include "rmq_acl_live.h"
#include "bk_admin_ops.h"
#include "bk_clients.h"
#include "bk_consume.h"
#include "bk_groupstats.h"
#include "bk_lock.h"
#include "bk_metrics.h"
#include "bk_node.h"
#include "bk_offset_ops.h"
#include "bk_pop.h"
#include "bk_produce.h"
#include "bk_recall.h"
#include "bk_schedule.h"
#include "bk_send.h"
#include "bk_sendback.h"
#include "bk_stats.h"
#include "bk_statsitems.h"
#include "bk_tx.h"
#include "rmq_rpc.h"

typedef struct bk_front {
    const bk_node_t *node;
    rmq_server_t *srv;
    bk_produce_t *produce;
    bk_send_t *send;
    bk_consume_t *consume;
    bk_pop_t *pop;
    bk_sendback_t *sendback;
    bk_tx_t *tx;
    bk_lock_t *locks;
    bk_offset_ops_t *offset_ops;
    bk_admin_ops_t *admin_ops;
    bk_clients_t *clients;
    bk_schedule_t *schedule;
    bk_recall_t *recall;
    bk_stats_t *stats;
    bk_groupstats_t *groupstats;
    const bk_statsitems_t *statsitems;
    bk_metrics_t *metrics;
    rmq_acl_live_t *acl;          /* the live ACL; NULL: access control off */
} bk_front_t;

#endif
