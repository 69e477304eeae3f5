/* bk_broker.c: the broker object: opens everything in order (listener,
 * metadata, store, HA, handlers, registration), runs the one-second
 * housekeeping tick (rate samples, client expiry, offset persistence), and
 * tears everything down in reverse order on a clean stop. */
#include "bk_broker.h"

#include <arpa/inet.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bk_admin_ops.h"
#include "bk_consume_cfg.h"
#include "bk_controller.h"
#include "bk_ha.h"
#include "fr_remoting.h"
#include "gr_front.h"
#include "fr_session.h"
#include "bk_lock.h"
#include "bk_offset_ops.h"
#include "bk_metrics.h"
#include "fr_routes.h"
#include "bk_register.h"
#include "bk_tx.h"
#include "fr_schedule.h"
#include "bk_sendback.h"
#include "rmq_codec_grpc.h"
#include "rmq_log.h"
#include "rmq_time.h"
#include "rmq_file.h"

#define CLIENT_EXPIRY_CHECK_MS 10000
#define UNREGISTER_WAIT_MS 3000
#define DRAIN_POLL_MS 20

bk_broker_t *bk_broker_new(bk_config_t *cfg, struct event_base *base)
{
    bk_broker_t *bk = calloc(1, sizeof(*bk));
    if (!bk)
        return NULL;
    bk->cfg = cfg;
    bk->base = base;
    bk->role = bk_config_controlled(cfg) ? BK_SLAVE : (bk_role_t)cfg->broker_role;
    bk->sync_acks = !bk_config_controlled(cfg);
    return bk;
}

bk_role_t bk_broker_role(const bk_broker_t *bk)
{
    return bk->role;
}

int64_t bk_broker_id(const bk_broker_t *bk)
{
    return bk_config_controlled(bk->cfg) && bk->role != BK_SLAVE ? 0 : bk->cfg->broker_id;
}

/* Hands the current role to every part that acts on it. */
static void broker_role_spread(bk_broker_t *bk)
{
    int slave = bk->role == BK_SLAVE;
    bk_append_set_role(bk->append, slave, bk->sync_acks ? bk_ha_sync(bk->ha) : NULL);
    bk_sendback_set_slave(bk->sendback, slave);
    bk_pop_set_slave(bk->pop, slave);
    bk_schedule_set_slave(bk->schedule, slave);
    bk_consume_set_slave(bk->consume, slave);
    bk_admin_ops_set_role(bk->admin_ops, bk_role_name(bk->role));
}

void bk_broker_set_sync_acks(bk_broker_t *bk, int wait)
{
    if (bk->sync_acks == wait)
        return;
    bk->sync_acks = wait;
    LOG_INFO("broker %s: sends %s", bk->addr, wait && bk_ha_sync(bk->ha) ? "wait for an in-sync slave's ack"
                                                                        : "are acknowledged without a slave");
    broker_role_spread(bk);
}

/* Rebuilds HA for the current role; bk->ha is NULL on failure (err filled).
 * Every switch to master passes here: with the slave's HA gone and before
 * the master's begins its epoch, the log loses the partial record a
 * byte-range chunk may have left at its end, so the epoch starts, and new
 * records follow, at the end of a whole one. */
static rmq_err_t broker_ha_rebuild(bk_broker_t *bk, char *err, size_t errlen)
{
    rmq_err_t rc;

    bk_append_set_role(bk->append, 1, NULL);    /* no append waits on the HA being freed */
    bk_ha_free(bk->ha);
    bk->ha = NULL;
    if (bk->role != BK_SLAVE && (rc = st_store_trim_torn_tail(bk->store, err, errlen)) != RMQ_OK)
        return rc;
    bk->ha = bk_ha_new(&bk->node, err, errlen);
    return bk->ha ? RMQ_OK : RMQ_EIO;
}

rmq_err_t bk_broker_switch_role(bk_broker_t *bk, bk_role_t role, int64_t epoch, const char *master_addr,
                                const char *master_ha, char *err, size_t errlen)
{
    bk_role_t was = bk->role;
    rmq_err_t rc = RMQ_OK;

    if (role == BK_SLAVE) {
        bk->role = BK_SLAVE;
        broker_role_spread(bk);                 /* writes stop before anything else */
        if (was != BK_SLAVE || !bk->ha)
            rc = broker_ha_rebuild(bk, err, errlen);
        bk_ha_follow(bk->ha, master_ha);
    } else {
        bk->role = role;
        rc = broker_ha_rebuild(bk, err, errlen);
        if (rc == RMQ_OK)
            rc = bk_ha_epoch_begin(bk->ha, epoch, err, errlen);
        if (rc != RMQ_OK) {
            char why[256];
            bk->role = BK_SLAVE;
            if (broker_ha_rebuild(bk, why, sizeof why) != RMQ_OK)
                LOG_ERROR("broker %s: no HA after a failed switch to master: %s", bk->addr, why);
        }
    }
    broker_role_spread(bk);
    if (bk->role != BK_SLAVE && was == BK_SLAVE)
        bk_schedule_start(bk->schedule);
    bk_register_role_changed(bk->reg, bk->role == BK_SLAVE ? master_addr : "",
                             bk->role == BK_SLAVE ? master_ha : "");
    LOG_INFO("broker %s: %s -> %s at master epoch %lld%s%s", bk->addr, bk_role_name(was), bk_role_name(bk->role),
             (long long)epoch, bk->role == BK_SLAVE && master_ha[0] ? ", following " : "",
             bk->role == BK_SLAVE ? master_ha : "");
    return rc;
}

int bk_broker_port(const bk_broker_t *bk)
{
    return bk->port;
}

int bk_broker_vip_port(const bk_broker_t *bk)
{
    return bk->vip_port;
}

int bk_broker_ha_port(const bk_broker_t *bk)
{
    return bk_ha_port(bk->ha);
}

void bk_broker_topics_changed(void *arg, const char *name)
{
    bk_broker_t *bk = arg;
    if (bk->reg)
        bk_register_topic_changed(bk->reg, name);
}

/* Housekeeping, once a second on the loop thread. */
static void broker_tick(evutil_socket_t fd, short what, void *arg)
{
    bk_broker_t *bk = arg;
    int64_t now = rmq_mono_ms();
    bk_stats_sample(&bk->stats);
    bk_groupstats_sample(bk->groupstats);
    bk_statsitems_tick(bk->statsitems, now);
    if (++bk->ticks % (CLIENT_EXPIRY_CHECK_MS / 1000) == 0)
        bk_clients_expire(bk->clients, now);
    if (now - bk->last_offsets_ms >= bk->cfg->flush_consumer_offset_interval) {
        bk_offsets_persist(bk->offsets);
        bk->last_offsets_ms = now;
    }
}

/* Store arrival: wakes held pulls and pops and the delay scheduler. */
static void broker_arrived(const char *topic, int32_t queue_id, int64_t max_offset, int64_t tag_code, void *arg)
{
    bk_broker_t *bk = arg;
    bk_consume_arrived(bk->consume, topic, queue_id, max_offset, tag_code);
    bk_schedule_arrived(bk->schedule, topic, queue_id, max_offset, tag_code);
    if (bk->pop)
        bk_pop_arrived(bk->pop, topic, queue_id, max_offset, tag_code);
}

/* Server close hook: forget what a closing connection held. */
static void broker_conn_closed(rmq_conn_t *conn, void *arg)
{
    bk_broker_t *bk = arg;
    bk_session_t *ss = fr_session_find(conn);
    if (ss && bk->consume)
        bk_consume_session_closed(bk->consume, ss);
    if (ss && bk->clients)
        bk_clients_session_closed(bk->clients, ss);
    if (ss)
        bk_tx_session_closed(bk->tx, ss);
    if (ss && bk->pop)
        bk_pop_session_closed(bk->pop, ss);
    fr_session_conn_closed(conn);
}

/* The counters of sends to topic: those found for its entry before, or,
 * when the entry is new to its slot or the topic table freed an entry
 * since, a fresh start (its stats items found again on the first add). */
static bk_send_counted_t *send_counted(bk_broker_t *bk, const bk_topic_t *topic)
{
    bk_send_counted_t *c = &bk->send_counted[((uintptr_t)topic / sizeof(*topic)) % BK_SEND_COUNTED_SLOTS];
    uint64_t epoch = bk_topics_epoch(bk->topics);
    if (c->topic != topic || c->epoch != epoch)
        *c = (bk_send_counted_t){topic, epoch, {0, 0}, {0, 0}, bk_metrics_topic(bk->metrics, topic->name)};
    return c;
}

/* bk_counts_t of the core (bk->counts): each event goes to the broker's
 * statistics, its stats items and its metrics (bk->metrics_counts; a
 * send's straight to the counters send_counted keeps). */
static void broker_stored(void *arg, const bk_topic_t *topic, rmq_msg_type_t type, int32_t count, size_t body_len)
{
    bk_broker_t *bk = arg;
    bk_send_counted_t *c = send_counted(bk, topic);
    bk_metrics_topic_stored(c->metrics, type, count, body_len);
    bk_statsitems_add_ref(bk->statsitems, &c->put_nums, BK_SI_TOPIC_PUT_NUMS, topic->name, count, 1);
    bk_statsitems_add_ref(bk->statsitems, &c->put_size, BK_SI_TOPIC_PUT_SIZE, topic->name, (int64_t)body_len, 1);
    bk_statsitems_add_ref(bk->statsitems, &bk->broker_put_nums, BK_SI_BROKER_PUT_NUMS,
                          bk->cfg->broker_cluster_name, count, 0);
}

static void broker_delivered(void *arg, const char *group, const char *topic, int64_t msgs, int64_t bytes)
{
    bk_broker_t *bk = arg;
    if (msgs <= 0) {
        bk_stats_add(&bk->stats, BK_STAT_GET_MISS, 1);
        return;
    }
    bk_stats_add(&bk->stats, BK_STAT_GET_FOUND, msgs);
    bk_stats_add(&bk->stats, BK_STAT_GET_TRANSFERRED, bytes);
    bk_groupstats_add(bk->groupstats, group, topic, msgs);
    bk_counts_delivered(&bk->metrics_counts, group, topic, msgs, bytes);
    bk_statsitems_add_group(bk->statsitems, BK_SI_GROUP_GET_NUMS, topic, group, msgs, 1);
    bk_statsitems_add_group(bk->statsitems, BK_SI_GROUP_GET_SIZE, topic, group, bytes, 1);
    bk_statsitems_add_ref(bk->statsitems, &bk->broker_get_nums, BK_SI_BROKER_GET_NUMS, bk->cfg->broker_cluster_name,
                          msgs, 0);
}

static void broker_sent_back(void *arg, const char *group, const char *topic)
{
    bk_broker_t *bk = arg;
    bk_counts_sent_back(&bk->metrics_counts, group, topic);
    bk_statsitems_add_group(bk->statsitems, BK_SI_SNDBCK_PUT_NUMS, topic, group, 1, 1);
}

static void broker_dead_lettered(void *arg, const char *group, const char *topic)
{
    bk_broker_t *bk = arg;
    bk_counts_dead_lettered(&bk->metrics_counts, group, topic);
}

static void broker_tx_ended(void *arg, const char *topic, int commit)
{
    bk_broker_t *bk = arg;
    bk_counts_tx_ended(&bk->metrics_counts, topic, commit);
}

/* The pop core over the broker's tables (RocketMQ's defaults: 20 % of pops
 * try the retry topic first; a closed client's messages are visible again
 * after 1 s). */
static bk_pop_t *broker_pop_new(bk_broker_t *bk)
{
    bk_pop_config_t pc = {
        .base = bk->base,
        .store = bk->store,
        .topics = bk->topics,
        .groups = bk->groups,
        .offsets = bk->offset_ops,
        .sendback = bk->sendback,
        .broker_name = bk->cfg->broker_name,
        .addr = bk->addr,
        .is_slave = bk_broker_role(bk) == BK_SLAVE,
        .permission = bk->cfg->broker_permission,
        .retry_percent = 20,
        .max_transfer_count = bk->cfg->max_transfer_count_on_message_in_memory,
        .max_transfer_bytes = bk->cfg->max_transfer_bytes_on_message_in_memory,
        .release_ms = 1000,
        .counts = &bk->counts,
    };
    return bk_pop_new(&pc);
}

/* The VIP channel of RocketMQ's clients (vipChannelEnabled, the default up
 * to 4.4 and in rocketmq-dashboard): the same server on listenPort - 2.
 * None with an ephemeral listenPort; a port in use is a warning, not a
 * failed start, since only clients that ask for it need it. */
static void broker_listen_vip(bk_broker_t *bk)
{
    int port = (int)bk->cfg->listen_port - 2;

    bk->vip_port = -1;
    if (port <= 0)
        return;
    if (rmq_server_listen(bk->srv, "0.0.0.0", port) != RMQ_OK) {
        LOG_WARN("VIP channel: cannot listen on listenPort - 2 = %d (above: why); clients with "
                 "vipChannelEnabled=true cannot reach this broker", port);
        return;
    }
    bk->vip_port = port;
}

/* Creates the server and listens on listenPort (0: ephemeral), and on the
 * VIP channel's port. */
static rmq_err_t broker_listen(bk_broker_t *bk, char *err, size_t errlen)
{
    rmq_server_opts_t opts = {
        .max_frame = (uint32_t)bk->cfg->max_frame_size,
        .idle_timeout_ms = (int)bk->cfg->client_idle_timeout,
        .name = "broker",
    };
    rmq_security_server_opts(&bk->sec, &opts);
    if (!(bk->srv = rmq_server_new(bk->base, &opts))) {
        snprintf(err, errlen, "cannot create the server");
        return RMQ_ENOMEM;
    }
    rmq_acl_attach(bk->srv, bk->sec.acl, RMQ_ACL_SIGNER_ONLY);
    rmq_err_t rc = rmq_server_listen(bk->srv, "0.0.0.0", (int)bk->cfg->listen_port);
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "listenPort=%lld: cannot listen: %s", (long long)bk->cfg->listen_port,
                 rmq_strerror(rc));
        return rc;
    }
    bk->port = rmq_server_port(bk->srv);
    broker_listen_vip(bk);
    snprintf(bk->addr, sizeof(bk->addr), "%s:%d", bk->cfg->broker_ip1, bk->port);
    rmq_server_on_close(bk->srv, broker_conn_closed, bk);
    return RMQ_OK;
}

/* Adds the topic NAME with one read and one write queue, readable and
 * writable, when the table lacks it (a NAME too long is skipped): RocketMQ's TopicConfigManager creates
 * its reply and trace topics so at start. */
static rmq_err_t broker_start_topic(bk_broker_t *bk, const char *name)
{
    bk_topic_t t = {.read_queues = 1, .write_queues = 1, .perm = BK_PERM_READ | BK_PERM_WRITE};
    int n = snprintf(t.name, sizeof(t.name), "%s", name);
    if (n < 0 || (size_t)n >= sizeof(t.name) || bk_topics_get(bk->topics, t.name, (size_t)n))
        return RMQ_OK;
    return bk_topics_update(bk->topics, &t);
}

/* The topics made at start: the cluster's reply topic,
 * <brokerClusterName>_REPLY_TOPIC (responders send their replies to it,
 * SEND_REPLY_MESSAGE), and with traceTopicEnable the message-trace topic
 * msgTraceTopicName (clients with enableMsgTrace send their trace records
 * to it, found by message id with QUERY_MESSAGE). */
static rmq_err_t broker_start_topics(bk_broker_t *bk)
{
    char reply[RMQ_TOPIC_MAX + sizeof(RMQ_REPLY_TOPIC_SUFFIX)];
    rmq_reply_topic(bk->cfg->broker_cluster_name, reply, sizeof(reply));
    rmq_err_t rc = broker_start_topic(bk, reply);
    if (rc == RMQ_OK && bk->cfg->trace_topic_enable)
        rc = broker_start_topic(bk, bk->cfg->msg_trace_topic_name);
    return rc;
}

/* Loads topics, subscription groups and consumer offsets from ROOT/config. */
static rmq_err_t broker_load_metadata(bk_broker_t *bk, char *err, size_t errlen)
{
    snprintf(bk->config_dir, sizeof(bk->config_dir), "%s/config", bk->cfg->store_path_root_dir);
    rmq_err_t rc = rmq_file_mkdirs(bk->config_dir);
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "storePathRootDir=%s: cannot create %s: %s", bk->cfg->store_path_root_dir,
                 bk->config_dir, rmq_strerror(rc));
        return rc;
    }
    if (!(bk->persist = bk_persist_new())) {
        snprintf(err, errlen, "cannot start the metadata writer thread");
        return RMQ_ENOMEM;
    }
    bk->topics = bk_topics_new(bk->config_dir, bk->persist, bk->cfg->auto_create_topic_enable,
                               (int32_t)bk->cfg->default_topic_queue_nums, err, errlen);
    if (!bk->topics)
        return RMQ_ECORRUPT;
    if (broker_start_topics(bk) != RMQ_OK || bk_topics_start(bk->topics, bk->base) != RMQ_OK) {
        snprintf(err, errlen, "topics: out of memory");
        return RMQ_ENOMEM;
    }
    bk_topics_on_change(bk->topics, bk_broker_topics_changed, bk);
    bk->groups = bk_groups_new(bk->config_dir, bk->persist, bk->cfg->auto_create_subscription_group, err, errlen);
    if (!bk->groups)
        return RMQ_ECORRUPT;
    bk->offsets = bk_offsets_new(bk->config_dir, bk->persist, err, errlen);
    return bk->offsets ? RMQ_OK : RMQ_ECORRUPT;
}

/* Opens, recovers and starts the store. */
static rmq_err_t broker_open_store(bk_broker_t *bk, char *err, size_t errlen)
{
    st_store_config_t sc;
    bk_config_to_store(bk->cfg, &sc);
    sc.store_host_port = (uint16_t)bk->port;
    if (!(bk->poster = rmq_loop_poster_new(bk->base))) {
        snprintf(err, errlen, "cannot create the loop poster");
        return RMQ_ENOMEM;
    }
    if (!(bk->store = st_store_open(&sc, err, errlen)))
        return RMQ_EIO;
    rmq_err_t rc = st_store_start(bk->store, bk->base, bk->poster);
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "cannot start the store threads: %s", rmq_strerror(rc));
        return rc;
    }
    return RMQ_OK;
}

/* Stop step: waits (bounded) for sends still queued or waiting for the
 * disk to be answered, then unregisters from the name servers. */
static void broker_drain(evutil_socket_t fd, short what, void *arg)
{
    bk_broker_t *bk = arg;
    if (bk_send_waiting(bk->send) > 0 && rmq_mono_ms() < bk->drain_deadline_ms) {
        struct timeval tv = {0, DRAIN_POLL_MS * 1000};
        evtimer_add(bk->drain, &tv);
        return;
    }
    if (bk_send_waiting(bk->send) > 0)
        LOG_WARN("stopping with %zu sends unanswered", bk_send_waiting(bk->send));
    bk_register_stop(bk->reg, UNREGISTER_WAIT_MS, bk->stopped, bk->stopped_arg);
}

/* Produce hook: a single message may be delayed (scheduler) or a
 * transaction's half message. */
static rmq_err_t broker_divert(void *arg, st_msg_t *m, const char **why)
{
    bk_broker_t *bk = arg;
    rmq_err_t rc = bk_schedule_divert(bk->schedule, m, why);   /* DELAY / __STARTDELIVERTIME */
    return rc == RMQ_OK ? bk_tx_divert(bk->tx, m, why) : rc;  /* TRAN_MSG: half message */
}

/* Offset hook: a committed offset is streamed to the slaves. */
static void broker_offset_committed(void *arg, const char *topic, const char *group, int32_t queue_id)
{
    bk_broker_t *bk = arg;
    bk_ha_offset_committed(bk->ha, topic, group, queue_id);
}

/* Admin hook: a created or updated group gets its retry topic. */
static void broker_group_updated(void *arg, const char *group)
{
    bk_sendback_retry_topic(((bk_broker_t *)arg)->sendback, group);
}

/* Admin hook: runtime info ends with the replication keys. */
static void broker_describe(void *arg, bk_kv_fn add, void *add_arg)
{
    bk_broker_t *bk = arg;
    bk_ha_describe(bk->ha, add, add_arg);
    if (bk->ctl)
        bk_controller_describe(bk->ctl, add, add_arg);
}

/* Creates the core's offset and admin operations over the opened tables. */
static rmq_err_t broker_admin_new(bk_broker_t *bk, char *err, size_t errlen)
{
    bk_offset_ops_config_t oc = {
        .store = bk->store,
        .offsets = bk->offsets,
        .groupstats = bk->groupstats,
        .topics = bk->topics,
        .clients = bk->clients,
        .committed = broker_offset_committed,
        .committed_arg = bk,
    };
    bk_admin_ops_config_t ac = {
        .store = bk->store,
        .topics = bk->topics,
        .groups = bk->groups,
        .offsets = bk->offsets,
        .clients = bk->clients,
        .stats = &bk->stats,
        .addr = bk->addr,
        .cluster = bk->cfg->broker_cluster_name,
        .broker_name = bk->cfg->broker_name,
        .trace_topic = bk->cfg->trace_topic_enable ? bk->cfg->msg_trace_topic_name : NULL,
        .validate_system_topic = bk->cfg->validate_system_topic_when_update_topic,
        .mixed_message_type = bk->cfg->enable_mixed_message_type,
        .role = bk_role_name(bk_broker_role(bk)),
        .boot_ms = bk->boot_ms,
        .send_queue_capacity = bk->cfg->send_queue_capacity,
        .group_updated = broker_group_updated,
        .describe = broker_describe,
        .arg = bk,
    };
    bk->offset_ops = bk_offset_ops_new(&oc);
    bk->admin_ops = bk_admin_ops_new(&ac);
    if (!bk->offset_ops || !bk->admin_ops) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    return RMQ_OK;
}

/* Commit hook of a transaction: a delayed message goes through the scheduler. */
static rmq_err_t broker_tx_divert(void *arg, st_msg_t *m, const char **why)
{
    bk_broker_t *bk = arg;
    return bk_schedule_divert(bk->schedule, m, why);
}

/* Heartbeat hook: a consumer group gets its subscription group and, when
 * clustering, its retry topic (so the consumer can subscribe to %RETRY%g). */
static void broker_consumer_group(void *arg, const char *group, int clustering)
{
    bk_broker_t *bk = arg;
    bk_groups_use(bk->groups, group, strlen(group));
    if (clustering)
        bk_sendback_retry_topic(bk->sendback, group);
}

/* Creates the transaction checker and the client registry (which hands it
 * producer groups). */
static rmq_err_t broker_tx_clients(bk_broker_t *bk, char *err, size_t errlen)
{
    bk_tx_config_t tc = {
        .base = bk->base,
        .store = bk->store,
        .append = bk->append,
        .produce = bk->produce,
        .addr = bk->addr,
        .check_interval_ms = bk->cfg->transaction_check_interval,
        .time_out_ms = bk->cfg->transaction_time_out,
        .check_max = bk->cfg->transaction_check_max,
        .producer_expire_ms = bk->cfg->channel_expired_timeout,
        .max_groups_per_conn = bk->cfg->max_connection_groups,
        .divert = broker_tx_divert,
        .divert_arg = bk,
        .counts = &bk->counts,
    };
    bk_clients_config_t cc = {
        .expire_ms = bk->cfg->channel_expired_timeout,
        .max_groups_per_heartbeat = bk->cfg->max_heartbeat_groups,
        .max_groups_per_conn = bk->cfg->max_connection_groups,
        .consumer_group = broker_consumer_group,
        .arg = bk,
    };
    if (!(bk->tx = bk_tx_new(&tc)))
        goto err;
    cc.tx = bk->tx;
    if (!(bk->clients = bk_clients_new(&cc)))
        goto err;
    return RMQ_OK;
err:
    snprintf(err, errlen, "out of memory");
    return RMQ_ENOMEM;
}

static bk_role_t node_role(void *arg)
{
    return bk_broker_role(arg);
}

static int64_t node_id(void *arg)
{
    return bk_broker_id(arg);
}

static bk_ha_t *node_ha(void *arg)
{
    return ((bk_broker_t *)arg)->ha;
}

static bk_controller_t *node_ctl(void *arg)
{
    return ((bk_broker_t *)arg)->ctl;
}

static int node_stopping(void *arg)
{
    return ((bk_broker_t *)arg)->stopping;
}

static const char *node_master_addr(void *arg)
{
    bk_broker_t *bk = arg;
    return bk->reg ? bk_register_master_addr(bk->reg) : "";
}

static rmq_err_t node_switch_role(void *arg, bk_role_t role, int64_t epoch, const char *master_addr,
                                  const char *master_ha, char *err, size_t errlen)
{
    return bk_broker_switch_role(arg, role, epoch, master_addr, master_ha, err, errlen);
}

static void node_set_sync_acks(void *arg, int wait)
{
    bk_broker_set_sync_acks(arg, wait);
}

static void node_delay_offsets(void *arg, const Rmq__DelayOffsetTable *table)
{
    fr_schedule_apply(((bk_broker_t *)arg)->schedule, table);
}

static const bk_node_ops_t broker_node_ops = {
    .role = node_role,
    .id = node_id,
    .ha = node_ha,
    .ctl = node_ctl,
    .stopping = node_stopping,
    .master_addr = node_master_addr,
    .switch_role = node_switch_role,
    .set_sync_acks = node_set_sync_acks,
    .delay_offsets = node_delay_offsets,
};

/* Hands the opened tables and the broker's answers to what cluster links
 * and metrics see (bk_node.h); the append path joins once created. */
static void broker_node_wire(bk_broker_t *bk)
{
    bk->node = (bk_node_t){
        .cfg = bk->cfg,
        .base = bk->base,
        .store = bk->store,
        .persist = bk->persist,
        .topics = bk->topics,
        .groups = bk->groups,
        .offsets = bk->offsets,
        .append = bk->append,
        .sec = &bk->sec,
        .addr = bk->addr,
        .boot_ms = bk->boot_ms,
        .ops = &broker_node_ops,
        .arg = bk,
    };
}

static uint64_t send_queue_depth(const void *send)
{
    return bk_send_waiting(send);
}

static uint64_t pulls_held(const void *consume)
{
    return bk_consume_held(consume);
}

static void pop_inflight(const void *pop, bk_metrics_pair_fn fn, void *arg)
{
    bk_pop_each_inflight(pop, fn, arg);
}

/* Starts metrics, registers the gauges of the core's send pool and pull
 * hold, and has the core's counts (broker_stored and the others) feed it. */
static rmq_err_t broker_metrics_start(bk_broker_t *bk, char *err, size_t errlen)
{
    if (!(bk->metrics = bk_metrics_start(&bk->node, bk->srv, &bk->stats, err, errlen)))
        return RMQ_EIO;
    bk_metrics_register_gauge(bk->metrics, BK_GAUGE_SEND_QUEUE_DEPTH, send_queue_depth, bk->send);
    bk_metrics_register_gauge(bk->metrics, BK_GAUGE_PULLS_HELD, pulls_held, bk->consume);
    bk_metrics_counts(bk->metrics, &bk->metrics_counts);
    return RMQ_OK;
}

/* Hands the fronts what they see of the broker (bk_front.h), once every
 * core module is open, and starts them: the native front's codes, then the
 * remoting codec and its codes, then the gRPC codec and its methods. */
static rmq_err_t broker_fronts_start(bk_broker_t *bk, char *err, size_t errlen)
{
    bk->front = (bk_front_t){
        .node = &bk->node,
        .srv = bk->srv,
        .produce = bk->produce,
        .send = bk->send,
        .consume = bk->consume,
        .sendback = bk->sendback,
        .tx = bk->tx,
        .locks = bk->locks,
        .offset_ops = bk->offset_ops,
        .admin_ops = bk->admin_ops,
        .clients = bk->clients,
        .schedule = bk->schedule,
        .recall = bk->recall,
        .pop = bk->pop,
        .stats = &bk->stats,
        .groupstats = bk->groupstats,
        .statsitems = bk->statsitems,
        .metrics = bk->metrics,
        .acl = bk->acl_live,
    };
    if (!(bk->fr_send = fr_send_new(&bk->front))) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    fr_routes_install(&bk->front, bk->fr_send);
    if (!(bk->remoting = fr_remoting_start(&bk->front, err, errlen)))
        return RMQ_ENOMEM;
    if (!(bk->grpc = gr_front_start(&bk->front, err, errlen)))
        return RMQ_ENOMEM;
    return RMQ_OK;
}

/* Append hook: a stored append is streamed to the slaves. */
static void broker_appended(void *arg)
{
    bk_broker_t *bk = arg;
    bk_ha_notify_append(bk->ha);
}

rmq_err_t bk_broker_start(bk_broker_t *bk, char *err, size_t errlen)
{
    bk->boot_ms = rmq_wall_ms();
    rmq_err_t rc = rmq_security_init(&bk->sec, &bk->cfg->tls, &bk->cfg->acl, err, errlen);
    if (rc == RMQ_OK && bk->sec.acl && !(bk->acl_live = rmq_acl_live_new(bk->base, bk->sec.acl, bk->cfg->acl.file))) {
        snprintf(err, errlen, "aclFile=%s: cannot watch it or arm SIGHUP", bk->cfg->acl.file);
        rc = RMQ_ENOMEM;
    }
    if (rc == RMQ_OK)
        rc = broker_listen(bk, err, errlen);
    if (rc == RMQ_OK)
        rc = broker_load_metadata(bk, err, errlen);
    if (rc == RMQ_OK)
        rc = broker_open_store(bk, err, errlen);
    if (rc != RMQ_OK)
        return rc;
    broker_node_wire(bk);
    if (!(bk->ha = bk_ha_new(&bk->node, err, errlen)))
        return RMQ_EIO;
    bk_append_config_t ac = {
        .store = bk->store,
        .sync = bk_ha_sync(bk->ha),
        .sync_flush = bk->cfg->flush_disk_type == ST_SYNC_FLUSH,
        .sync_flush_timeout_ms = bk->cfg->sync_flush_timeout,
        .is_slave = bk_broker_role(bk) == BK_SLAVE,
        .permission = bk->cfg->broker_permission,
        .addr = bk->addr,
        .appended = broker_appended,
        .appended_arg = bk,
    };
    if (!(bk->append = bk_append_new(&ac))) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    bk->node.append = bk->append;
    bk_produce_config_t pc = {
        .append = bk->append,
        .topics = bk->topics,
        .auto_create_topic = bk->cfg->auto_create_topic_enable,
        .max_message_size = bk->cfg->max_message_size,
        .addr = bk->addr,
        .cluster = bk->cfg->broker_cluster_name,
        .divert = broker_divert,
        .divert_arg = bk,
    };
    if (!(bk->produce = bk_produce_new(&pc))) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    if (!(bk->statsitems = bk_statsitems_new((size_t)bk->cfg->stats_item_capacity, rmq_mono_ms()))) {
        snprintf(err, errlen, "out of memory for %" PRId64 " stats items (statsItemCapacity)",
                 bk->cfg->stats_item_capacity);
        return RMQ_ENOMEM;
    }
    bk->counts = (bk_counts_t){
        .stored = broker_stored,
        .delivered = broker_delivered,
        .sent_back = broker_sent_back,
        .dead_lettered = broker_dead_lettered,
        .tx_ended = broker_tx_ended,
        .arg = bk,
    };
    bk_send_config_t sc = {
        .produce = bk->produce,
        .store = bk->store,
        .stats = &bk->stats,
        .capacity = (size_t)bk->cfg->send_queue_capacity,
        .wait_ms = bk->cfg->wait_time_mills_in_send_queue,
        .counts = &bk->counts,
        .broker_name = bk->cfg->broker_name,
    };
    if (!(bk->send = bk_send_new(&sc))) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    bk_consume_config_t cc;
    bk_consume_cfg_fill(&bk->node, &cc);
    cc.counts = &bk->counts;
    bk->consume = bk_consume_new(&cc);
    bk->groupstats = bk_groupstats_new();
    bk->tick = event_new(bk->base, -1, EV_PERSIST, broker_tick, bk);
    bk->drain = evtimer_new(bk->base, broker_drain, bk);
    if (!bk->consume || !bk->groupstats || !bk->tick || !bk->drain) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    if ((rc = broker_metrics_start(bk, err, errlen)) != RMQ_OK)
        return rc;
    if (!(bk->schedule = fr_schedule_new(&bk->node, bk->produce, &bk->stats, bk->config_dir, err, errlen)))
        return RMQ_EINVAL;
    bk_recall_config_t rcc = {
        .append = bk->append,
        .topics = bk->topics,
        .broker_name = bk->cfg->broker_name,
        .enabled = bk->cfg->recall_message_enable,
        .horizon_ms = bk_schedule_horizon_ms(bk->schedule),
    };
    if (!(bk->recall = bk_recall_new(&rcc))) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    bk_sendback_config_t sbc = {
        .store = bk->store,
        .append = bk->append,
        .topics = bk->topics,
        .groups = bk->groups,
        .schedule = bk->schedule,
        .is_slave = bk_broker_role(bk) == BK_SLAVE,
        .addr = bk->addr,
        .counts = &bk->counts,
    };
    if (!(bk->sendback = bk_sendback_new(&sbc))) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    if (!(bk->reg = bk_register_new(&bk->node, bk->cfg->namesrv_addr, err, errlen)))
        return RMQ_EINVAL;
    if (!(bk->locks = bk_lock_new(bk->cfg->rebalance_lock_max_live_time))) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    if ((rc = broker_tx_clients(bk, err, errlen)) != RMQ_OK)
        return rc;
    if ((rc = broker_admin_new(bk, err, errlen)) != RMQ_OK)
        return rc;
    if (!(bk->pop = broker_pop_new(bk))) {
        snprintf(err, errlen, "out of memory");
        return RMQ_ENOMEM;
    }
    bk_metrics_register_inflight(bk->metrics, pop_inflight, bk->pop);
    if ((rc = broker_fronts_start(bk, err, errlen)) != RMQ_OK)
        return rc;
    st_store_set_arrival_cb(bk->store, broker_arrived, bk);
    bk_schedule_start(bk->schedule);
    struct timeval sec = {1, 0};
    event_add(bk->tick, &sec);
    bk->last_offsets_ms = rmq_mono_ms();
    bk_register_start(bk->reg);
    if (bk_config_controlled(bk->cfg)) {
        if (!(bk->ctl = bk_controller_new(&bk->node, err, errlen)))
            return RMQ_EINVAL;
        bk_controller_start(bk->ctl);
    }
    LOG_INFO("broker %s (%s%s, cluster %s, %s) listening on %s, HA port %d", bk->cfg->broker_name,
             bk_role_name(bk_broker_role(bk)), bk->ctl ? " until the controller names the master" : "",
             bk->cfg->broker_cluster_name, bk->cfg->flush_disk_type == ST_SYNC_FLUSH ? "SYNC_FLUSH" : "ASYNC_FLUSH",
             bk->addr, bk_broker_ha_port(bk));
    return RMQ_OK;
}

void bk_broker_stop(bk_broker_t *bk, void (*done)(void *arg), void *arg)
{
    if (bk->stopping)
        return;
    bk->stopping = 1;
    bk_controller_free(bk->ctl);         /* no role switch while stopping */
    bk->ctl = NULL;
    bk_append_stop(bk->append);
    bk_schedule_stop(bk->schedule);
    bk->stopped = done;
    bk->stopped_arg = arg;
    LOG_INFO("broker %s stopping", bk->addr);
    bk_consume_stop(bk->consume);
    rmq_grpc_goaway(bk->srv);
    if (bk->grpc)
        gr_front_stop(bk->grpc);
    if (bk->pop)
        bk_pop_stop(bk->pop);
    bk_offsets_persist(bk->offsets);
    bk->drain_deadline_ms = rmq_mono_ms() + bk->cfg->sync_flush_timeout + 1000;
    broker_drain(-1, 0, bk);
}

void bk_broker_free(bk_broker_t *bk)
{
    if (!bk)
        return;
    if (bk->tick)
        event_free(bk->tick);
    if (bk->drain)
        event_free(bk->drain);
    bk_controller_free(bk->ctl);
    bk->ctl = NULL;
    bk_metrics_free(bk->metrics);
    bk->metrics = NULL;
    if (bk->offsets)
        bk_offsets_persist(bk->offsets);
    bk_ha_free(bk->ha);
    bk->ha = NULL;
    if (bk->store)
        st_store_close(bk->store);
    bk->store = NULL;
    bk_produce_free(bk->produce);
    bk->produce = NULL;
    bk_pop_free(bk->pop);
    bk->pop = NULL;
    bk_sendback_free(bk->sendback);
    bk->sendback = NULL;
    bk_append_free(bk->append);     /* the store and HA ended every wait */
    bk->append = NULL;
    bk_schedule_free(bk->schedule); /* after its deliveries' waits: persists what is durable */
    bk->schedule = NULL;
    bk_recall_free(bk->recall);
    bk->recall = NULL;
    if (bk->poster)
        rmq_loop_poster_free(bk->poster);
    fr_send_free(bk->fr_send);
    bk->fr_send = NULL;
    bk_send_free(bk->send);          /* after the native front's queue */
    bk->send = NULL;
    bk_consume_free(bk->consume);
    bk->consume = NULL;
    fr_remoting_free(bk->remoting);
    bk->remoting = NULL;
    gr_front_free(bk->grpc);
    bk->grpc = NULL;
    bk_groupstats_free(bk->groupstats);
    bk->groupstats = NULL;
    bk_statsitems_free(bk->statsitems);
    bk->statsitems = NULL;
    bk_clients_free(bk->clients);
    bk->clients = NULL;
    bk_lock_free(bk->locks);
    bk->locks = NULL;
    bk_offset_ops_free(bk->offset_ops);
    bk->offset_ops = NULL;
    bk_admin_ops_free(bk->admin_ops);
    bk->admin_ops = NULL;
    bk_tx_free(bk->tx);
    bk->tx = NULL;
    bk_register_free(bk->reg);
    if (bk->srv)
        rmq_server_free(bk->srv);
    rmq_acl_live_free(bk->acl_live);
    rmq_security_deinit(&bk->sec);
    bk_persist_free(bk->persist);
    bk_offsets_free(bk->offsets);
    bk_groups_free(bk->groups);
    bk_topics_free(bk->topics);
    free(bk);
}
