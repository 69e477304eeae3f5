/* bk_config.c: the broker's configuration table: every key, its default,
 * bounds and one-line help, plus the few rules that span keys. */
#include "bk_config.h"

#include <arpa/inet.h>
#include <stddef.h>
#include <string.h>

#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_rpc.h"

#define KB 1024ll
#define MB (1024ll * 1024)
#define GB (1024ll * 1024 * 1024)

static const char *const roles[] = {"ASYNC_MASTER", "SYNC_MASTER", "SLAVE", NULL};
static const char *const flush_types[] = {"ASYNC_FLUSH", "SYNC_FLUSH", NULL};
static const char *const ns_protocols[] = {"native", "remoting", NULL};   /* bk_ns_protocol_t */

#define F(field) offsetof(bk_config_t, field)
#define INT(key, field, def, lo, hi, help) {key, RMQ_CFG_INT, F(field), def, lo, hi, NULL, help}
#define BOOL(key, field, def, help) {key, RMQ_CFG_BOOL, F(field), def, 0, 0, NULL, help}
#define STR(key, field, def, max, help) {key, RMQ_CFG_STR, F(field), def, 0, max, NULL, help}
#define ENUM(key, field, def, ch, help) {key, RMQ_CFG_ENUM, F(field), def, 0, 0, ch, help}

static const rmq_cfg_entry_t entries[] = {
    STR("brokerClusterName", broker_cluster_name, "DefaultCluster", 127, "cluster this broker belongs to"),
    STR("brokerName", broker_name, "broker-a", 127, "broker set name shared by a master and its slaves"),
    INT("brokerId", broker_id, "0", 0, 1024, "0 for the master, >= 1 for slaves; controller mode: the fixed replica id, >= 1"),
    ENUM("brokerRole", broker_role, "ASYNC_MASTER", roles, "ASYNC_MASTER, SYNC_MASTER or SLAVE; controller mode: SYNC_MASTER makes an elected master wait for its in-sync slaves"),
    ENUM("flushDiskType", flush_disk_type, "ASYNC_FLUSH", flush_types, "ASYNC_FLUSH or SYNC_FLUSH (group commit)"),
    INT("listenPort", listen_port, "10911", 0, 65535, "client port; 0 picks an ephemeral port"),
    STR("brokerIP1", broker_ip1, "127.0.0.1", 64, "IPv4 or IPv6 address (without brackets) clients and name servers use; an IPv6 one makes message ids 56 hex digits"),
    STR("namesrvAddr", namesrv_addr, "", 4096, "name servers, host:port;host:port"),
    ENUM("namesrvProtocol", namesrv_protocol, "native", ns_protocols,
         "native: register with rmq name servers; remoting: with Apache RocketMQ name servers (REGISTER_BROKER over RocketMQ's remoting protocol, plain TCP), to migrate a cluster one process at a time"),
    BOOL("compressedRegister", compressed_register, "false", "namesrvProtocol=remoting: send the topic table zlib-compressed (RocketMQ's compressed RegisterBrokerBody)"),
    STR("storePathRootDir", store_path_root_dir, "store", 4096, "store root directory"),
    STR("storePathCommitLog", store_path_commit_log, "", 4096, "commit log directory; empty: ROOT/commitlog"),
    STR("storePathEpochFile", store_path_epoch_file, "", 4096, "controller mode: the epoch file; empty: ROOT/epochFileCheckpoint"),
    INT("mapedFileSizeCommitLog", maped_file_size_commit_log, "1073741824", 64 * KB, 16 * GB, "commit-log file size in bytes"),
    INT("mapedFileSizeConsumeQueue", maped_file_size_consume_queue, "6000000", 20 * 16, GB, "consume-queue file size (20-byte units)"),
    INT("flushIntervalCommitLog", flush_interval_commit_log, "500", 1, 60000, "ASYNC_FLUSH interval, ms"),
    INT("flushCommitLogLeastPages", flush_commit_log_least_pages, "4", 0, 1 << 20, "ASYNC_FLUSH: pages needed before a sync"),
    INT("flushCommitLogThoroughInterval", flush_commit_log_thorough_interval, "10000", 1, 3600000, "ASYNC_FLUSH: sync at least this often, ms"),
    INT("syncFlushTimeout", sync_flush_timeout, "5000", 1, 600000, "SYNC_FLUSH: answer FLUSH_DISK_TIMEOUT after this, ms"),
    INT("maxMessageSize", max_message_size, "4194304", 1, 64 * MB, "largest message body (and batch body), bytes"),
    STR("deleteWhen", delete_when, "04", 64, "hours of day to delete expired files, e.g. 04;16"),
    INT("fileReservedTime", file_reserved_time, "72", 1, 24 * 365, "keep commit-log files this many hours"),
    INT("diskMaxUsedSpaceRatio", disk_max_used_space_ratio, "75", 10, 95, "delete early above this disk use, percent"),
    INT("diskFullRatio", disk_full_ratio, "90", 10, 99, "refuse writes above this disk use, percent"),
    BOOL("warmMapedFileEnable", warm_maped_file_enable, "false", "touch new commit-log files' pages ahead of use; with transientStorePoolEnable, write zeros over pre-created files instead (later fdatasyncs convert no unwritten extents; costs one file of writes per file)"),
    BOOL("transientStorePoolEnable", transient_store_pool_enable, "false",
         "appends go to pooled buffers (one commit-log file each) and reach the file with a write() per append, synced with fdatasync, instead of through the mapping (faster SYNC_FLUSH group commit); unlike RocketMQ's pool, a process crash loses nothing the mapping would have kept (commitIntervalCommitLog and commitCommitLogLeastPages have no use here); not on a slave outside controller mode; a file loaded at start-up is written through its mapping until the next roll"),
    INT("transientStorePoolSize", transient_store_pool_size, "5", 1, 64,
        "transientStorePoolEnable: buffers, each mapedFileSizeCommitLog bytes of address space but about 2 MiB of memory (the pages of what is in the file go back to the kernel)"),
    BOOL("autoCreateTopicEnable", auto_create_topic_enable, "true", "create unknown topics on send (via TBW102)"),
    BOOL("autoCreateSubscriptionGroup", auto_create_subscription_group, "true", "create unknown consumer groups on use"),
    BOOL("validateSystemTopicWhenUpdateTopic", validate_system_topic_when_update_topic, "true",
         "refuse an operator's create, update or delete of a system topic (RocketMQ's list, the cluster's and the broker's names, the reply topic, msgTraceTopicName with traceTopicEnable) with RocketMQ's INVALID_PARAMETER"),
    BOOL("enableMixedMessageType", enable_mixed_message_type, "false",
         "allow an operator to set the topic attribute message.type=MIXED (refused otherwise, as RocketMQ does)"),
    INT("defaultTopicQueueNums", default_topic_queue_nums, "8", 1, 1024, "queues of TBW102, the auto-create template"),
    INT("registerNameServerPeriod", register_name_server_period, "30000", 1000, 60000, "register with name servers this often, ms"),
    INT("registerBrokerTimeoutMills", register_broker_timeout_mills, "24000", 100, 600000,
        "wait this long for a name server to answer a registration or version query, ms"),
    INT("flushConsumerOffsetInterval", flush_consumer_offset_interval, "5000", 100, 600000, "persist consumer offsets this often, ms"),
    BOOL("longPollingEnable", long_polling_enable, "true", "hold empty pulls up to their suspend time"),
    INT("shortPollingTimeMills", short_polling_time_mills, "1000", 1, 60000, "hold time of empty pulls without long polling, ms"),
    INT("sendQueueCapacity", send_queue_capacity, "10000", 1, 1000000, "sends queued or waiting for disk before SYSTEM_BUSY"),
    INT("waitTimeMillsInSendQueue", wait_time_mills_in_send_queue, "200", 1, 60000, "answer SYSTEM_BUSY to sends queued longer, ms"),
    INT("maxTransferCountOnMessageInMemory", max_transfer_count_on_message_in_memory, "32", 1, 65536, "messages per pull at most"),
    INT("maxTransferBytesOnMessageInMemory", max_transfer_bytes_on_message_in_memory, "262144", 1024, 64 * MB, "bytes per pull at most"),
    INT("statsItemCapacity", stats_item_capacity, "4096", 16, 1000000,
        "broker stats items kept (statsAll, VIEW_BROKER_STATS_DATA; about 1.2 KB each); more: the least recently counted is forgotten"),
    INT("channelExpiredTimeout", channel_expired_timeout, "120000", 1000, 3600000, "drop clients without a heartbeat this long, ms"),
    INT("maxHeartbeatGroups", max_heartbeat_groups, "1024", 1, 1000000, "producer and consumer groups one heartbeat may name; more: refused BAD_REQUEST"),
    INT("maxConnectionGroups", max_connection_groups, "4096", 1, 1000000, "producer and consumer groups one connection may hold together; more: refused BAD_REQUEST"),
    INT("haListenPort", ha_listen_port, "-1", -1, 65535, "HA port; -1: listenPort + 1 (ephemeral if listenPort is 0); 0: ephemeral"),
    INT("haTransferBatchSize", ha_transfer_batch_size, "32768", 1024, 64 * MB, "HA: bytes per transfer at most"),
    INT("haHousekeepingInterval", ha_housekeeping_interval, "20000", 1000, 600000, "HA: drop a silent slave after this, ms"),
    INT("haSlaveFallbehindMax", ha_slave_fallbehind_max, "268435456", 0, 64 * GB, "SYNC_MASTER: slave in sync range, bytes"),
    STR("haMasterAddress", ha_master_address, "", 256, "slave: master HA address (else from the name server)"),
    BOOL("enableControllerMode", enable_controller_mode, "false",
         "epochs, log truncation on rejoin, reads up to the confirm offset; with controllerAddr the controllers name this group's master (automatic failover) and brokerId is the fixed replica id >= 1"),
    INT("controllerModeStartEpoch", controller_mode_start_epoch, "0", 0, INT64_MAX, "controller mode without controllerAddr (tests, manual recovery): roles as brokerRole says, and a master begins this epoch at startup; 0: none"),
    STR("controllerAddr", controller_addr, "", 4096, "controller mode: controllers (name servers with the controller), host:port;host:port"),
    INT("controllerHeartBeatTimeoutMills", controller_heart_beat_timeout_mills, "10000", 500, 600000,
        "controller mode: a master silent this long is replaced; it stops acknowledging writes a margin before, ms"),
    INT("brokerHeartbeatInterval", broker_heartbeat_interval, "1000", 50, 60000, "controller mode: heartbeat every controller this often, ms"),
    INT("checkSyncStateSetPeriod", check_sync_state_set_period, "5000", 100, 600000,
        "controller mode, master: check which slaves are in sync this often, ms"),
    INT("haMaxTimeSlaveNotCatchup", ha_max_time_slave_not_catchup, "15000", 100, 3600000,
        "controller mode, master: a slave not caught up for this long leaves the sync state set, ms"),
    BOOL("allAckInSyncStateSet", all_ack_in_sync_state_set, "true",
         "controller mode, SYNC_MASTER: a send is acknowledged once every member of the sync state set has it (no acknowledged message lost on failover; RocketMQ's default is false); false: inSyncReplicas decides"),
    INT("inSyncReplicas", in_sync_replicas, "1", 1, 16,
        "controller mode, SYNC_MASTER without allAckInSyncStateSet: replicas (the master counted) that must have a send before it is acknowledged"),
    INT("minInSyncReplicas", min_in_sync_replicas, "1", 1, 16,
        "controller mode, SYNC_MASTER: sends are refused (IN_SYNC_REPLICAS_NOT_ENOUGH) while the sync state set is smaller"),
    INT("brokerElectionPriority", broker_election_priority, "2147483647", 0, INT64_MAX,
        "controller mode: election preference among equally advanced replicas, lower first"),
    INT("slaveSyncInterval", slave_sync_interval, "10000", 100, 3600000, "slave: copy topics, groups and offsets from the master this often, ms"),
    INT("accessMessageInMemoryMaxRatio", access_message_in_memory_max_ratio, "40", 0, 100, "slaveReadEnable: pulls further behind than this percent of RAM go to a slave"),
    BOOL("slaveReadEnable", slave_read_enable, "false", "suggest slaves to consumers that fall behind"),
    BOOL("traceTopicEnable", trace_topic_enable, "false",
         "create the message-trace topic (msgTraceTopicName, one queue, readable and writable) at start, as RocketMQ does, for clients with enableMsgTrace"),
    STR("msgTraceTopicName", msg_trace_topic_name, RMQ_TOPIC_TRACE, RMQ_TOPIC_MAX, "traceTopicEnable: the message-trace topic's name"),
    BOOL("enablePropertyFilter", enable_property_filter, "false", "serve SQL92 subscriptions (filters over message properties)"),
    BOOL("recallMessageEnable", recall_message_enable, "false", "serve RECALL_MESSAGE: cancel a timer message by its recall handle"),
    INT("brokerPermission", broker_permission, "6", 0, 7, "broker perm bits: 2 write, 4 read"),
    STR("logPath", log_path, "", 4096, "log file; empty: stderr only"),
    STR("logLevel", log_level, "info", 16, "debug, info, warn or error"),
    INT("logMaxFileSize", log_max_file_size, "1073741824", 0, INT64_MAX, "rotate the log file before it grows past this many bytes; 0 never"),
    INT("logMaxFiles", log_max_files, "10", 1, 1000, "rotated log files kept (logPath.1 newest .. logPath.N oldest)"),
    INT("metricsPort", metrics_port, "0", 0, 65535, "HTTP port serving Prometheus /metrics on all addresses (HTTPS when tlsMode is on; an account when aclEnable, which needs TLS); 0 off"),
    INT("maxFrameSize", max_frame_size, "16777216", 4096, 256 * MB, "largest request frame, bytes"),
    BOOL("messageIndexEnable", message_index_enable, "true", "index messages by KEYS and UNIQ_KEY (QUERY_MESSAGE)"),
    INT("maxHashSlotNum", max_hash_slot_num, "500000", 1, 50000000, "key index: hash slots per index file"),
    INT("maxIndexNum", max_index_num, "2000000", 2, 200000000, "key index: entries per index file"),
    INT("defaultQueryMaxNum", default_query_max_num, "32", 1, 1024, "QUERY_MESSAGE: records per answer at most"),
    INT("rebalanceLockMaxLiveTime", rebalance_lock_max_live_time, "60000", 1000, 3600000, "orderly queue locks expire without renewal after this, ms"),
    INT("transactionTimeOut", transaction_time_out, "6000", 100, 86400000, "check back half messages older than this, ms"),
    INT("transactionCheckMax", transaction_check_max, "15", 1, 1000, "check a half message this many times, then roll it back"),
    INT("transactionCheckInterval", transaction_check_interval, "60000", 100, 3600000, "scan for unresolved half messages this often, ms"),
    INT("clientIdleTimeout", client_idle_timeout, "120000", 0, 3600000, "close silent connections after this, ms; 0 never"),
    STR("messageDelayLevel", message_delay_level, "1s 5s 10s 30s 1m 2m 3m 4m 5m 6m 7m 8m 9m 10m 20m 30m 1h 2h", 1024,
        "delay of each level 1..N, units s m h d (also the retry schedule)"),
    RMQ_TLS_CFG_ENTRIES(bk_config_t, tls),
    RMQ_ACL_CFG_SERVER_ENTRIES(bk_config_t, acl),
    RMQ_ACL_CFG_CLIENT_ENTRIES(bk_config_t, acl),
};

static const char *const aliases[] = {
    "mappedFileSizeCommitLog", "mapedFileSizeCommitLog",
    "mappedFileSizeConsumeQueue", "mapedFileSizeConsumeQueue",
    "warmMappedFileEnable", "warmMapedFileEnable",
    NULL, NULL,
};

static const rmq_cfg_table_t table = {entries, sizeof(entries) / sizeof(entries[0]), aliases};

const rmq_cfg_table_t *bk_config_table(void)
{
    return &table;
}

rmq_err_t bk_config_init(bk_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    return rmq_config_defaults(&table, cfg);
}

void bk_config_deinit(bk_config_t *cfg)
{
    rmq_config_deinit(&table, cfg);
}

/* Checks every "host:port" of key's value addrs ("a:p;b:p"). */
static rmq_err_t check_addrs(const char *key, const char *addrs, char *err, size_t errlen)
{
    for (const char *p = addrs; *p;) {
        size_t len = strcspn(p, ";");
        char one[256], host[256];
        int port = 0;
        snprintf(one, sizeof(one), "%.*s", (int)len, p);
        if (len > 0 && (len >= sizeof(one) || rmq_addr_split(one, host, sizeof(host), &port) != RMQ_OK ||
                        port <= 0 || port > 65535)) {
            snprintf(err, errlen, "%s=%s: '%s' must be host:port (several separated by ;)", key, addrs, one);
            return RMQ_EINVAL;
        }
        p += len;
        if (*p == ';')
            p++;
    }
    return RMQ_OK;
}

static rmq_err_t check_controller(const bk_config_t *cfg, char *err, size_t errlen);
static rmq_err_t check_common(const bk_config_t *cfg, char *err, size_t errlen);

int bk_config_controlled(const bk_config_t *cfg)
{
    return cfg->enable_controller_mode && cfg->controller_addr[0];
}

/* Reads brokerIP1 into the store host of sc (IPv4, or IPv6 with
 * store_host_v6); 0 if it is neither literal. */
static int broker_ip_parse(const char *ip, st_store_config_t *sc)
{
    struct in_addr a;

    if (inet_pton(AF_INET, ip, &a) == 1) {
        sc->store_host_ip = ntohl(a.s_addr);
        sc->store_host_v6 = 0;
        return 1;
    }
    sc->store_host_ip = 0;
    sc->store_host_v6 = inet_pton(AF_INET6, ip, sc->store_host_ip6) == 1;
    return sc->store_host_v6;
}

rmq_err_t bk_config_check(const bk_config_t *cfg, char *err, size_t errlen)
{
    st_store_config_t sc;
    if (!broker_ip_parse(cfg->broker_ip1, &sc)) {
        snprintf(err, errlen, "brokerIP1=%s: must be an IPv4 or IPv6 address (IPv6 without brackets)",
                 cfg->broker_ip1);
        return RMQ_EINVAL;
    }
    if (bk_config_controlled(cfg))
        return check_controller(cfg, err, errlen);
    if (cfg->broker_role == BK_SLAVE && cfg->broker_id == 0) {
        snprintf(err, errlen, "brokerId=0: a SLAVE needs a brokerId >= 1");
        return RMQ_EINVAL;
    }
    if (cfg->broker_role != BK_SLAVE && cfg->broker_id != 0) {
        snprintf(err, errlen, "brokerId=%lld: a master (brokerRole=%s) must have brokerId 0",
                 (long long)cfg->broker_id, roles[cfg->broker_role]);
        return RMQ_EINVAL;
    }
    return check_common(cfg, err, errlen);
}

/* Controller mode: a fixed replica id, the controllers, no fixed master. */
static rmq_err_t check_controller(const bk_config_t *cfg, char *err, size_t errlen)
{
    if (cfg->broker_id < 1) {
        snprintf(err, errlen, "brokerId=%lld: enableControllerMode=true needs the replica's fixed id >= 1 "
                 "(the controller names the master; it registers as brokerId 0 while it is)", (long long)cfg->broker_id);
        return RMQ_EINVAL;
    }
    if (cfg->controller_mode_start_epoch) {
        snprintf(err, errlen, "controllerModeStartEpoch=%lld: the controllers name the epochs when controllerAddr is "
                 "set; leave it 0", (long long)cfg->controller_mode_start_epoch);
        return RMQ_EINVAL;
    }
    if (cfg->ha_master_address[0]) {
        snprintf(err, errlen, "haMasterAddress=%s: the controller names the master in controller mode; leave it empty",
                 cfg->ha_master_address);
        return RMQ_EINVAL;
    }
    rmq_err_t rc = check_addrs("controllerAddr", cfg->controller_addr, err, errlen);
    return rc == RMQ_OK ? check_common(cfg, err, errlen) : rc;
}

/* The rules every mode shares. */
static rmq_err_t check_common(const bk_config_t *cfg, char *err, size_t errlen)
{
    if (rmq_log_level_parse(cfg->log_level) < 0) {
        snprintf(err, errlen, "logLevel=%s: must be one of debug, info, warn, error, off", cfg->log_level);
        return RMQ_EINVAL;
    }
    const char *why;
    if (!rmq_name_is_valid(cfg->msg_trace_topic_name, strlen(cfg->msg_trace_topic_name), &why)) {
        snprintf(err, errlen, "msgTraceTopicName=%s: %s", cfg->msg_trace_topic_name, why);
        return RMQ_EINVAL;
    }
    if (cfg->disk_full_ratio < cfg->disk_max_used_space_ratio) {
        snprintf(err, errlen, "diskFullRatio=%lld: must be >= diskMaxUsedSpaceRatio (%lld)",
                 (long long)cfg->disk_full_ratio, (long long)cfg->disk_max_used_space_ratio);
        return RMQ_EINVAL;
    }
    return check_addrs("namesrvAddr", cfg->namesrv_addr, err, errlen);
}

void bk_config_print(const bk_config_t *cfg, FILE *out)
{
    rmq_config_print(&table, cfg, out);
}

void bk_config_to_store(const bk_config_t *cfg, st_store_config_t *sc)
{
    memset(sc, 0, sizeof(*sc));
    broker_ip_parse(cfg->broker_ip1, sc);
    sc->root_dir = cfg->store_path_root_dir;
    sc->commitlog_dir = cfg->store_path_commit_log[0] ? cfg->store_path_commit_log : NULL;
    sc->commitlog_file_size = cfg->maped_file_size_commit_log;
    sc->cq_entries_per_file = cfg->maped_file_size_consume_queue / 20;
    sc->flush_type = cfg->flush_disk_type == 1 ? ST_SYNC_FLUSH : ST_ASYNC_FLUSH;
    sc->flush_interval_ms = (int)cfg->flush_interval_commit_log;
    sc->flush_least_pages = (int)cfg->flush_commit_log_least_pages;
    sc->flush_thorough_interval_ms = (int)cfg->flush_commit_log_thorough_interval;
    sc->sync_flush_timeout_ms = (int)cfg->sync_flush_timeout;
    sc->max_message_size = cfg->max_message_size;
    sc->file_reserved_hours = (int)cfg->file_reserved_time;
    sc->delete_when = cfg->delete_when;
    sc->disk_max_used_ratio = (int)cfg->disk_max_used_space_ratio;
    sc->disk_full_ratio = (int)cfg->disk_full_ratio;
    sc->warm_mapped_files = cfg->warm_maped_file_enable;
    sc->transient_store_pool_size = (int)cfg->transient_store_pool_size;
    sc->store_host_port = (uint16_t)cfg->listen_port;
    /* controller mode: the role changes at runtime; the append path refuses a slave's writes */
    sc->read_only_role = cfg->broker_role == BK_SLAVE && !bk_config_controlled(cfg);
    /* as RocketMQ 5: not on a classic slave, whose replicated bytes would
     * otherwise wait in process memory (the controller-mode store keeps it:
     * its role changes at runtime) */
    sc->transient_store_pool = cfg->transient_store_pool_enable && !sc->read_only_role;
    sc->message_index_disable = !cfg->message_index_enable;
    sc->max_hash_slot_num = (int32_t)cfg->max_hash_slot_num;
    sc->max_index_num = (int32_t)cfg->max_index_num;
}

const char *bk_role_name(bk_role_t role)
{
    return (unsigned)role < sizeof(roles) / sizeof(roles[0]) - 1 ? roles[role] : "ASYNC_MASTER";
}
