/* bk_config.h: the broker's configuration (RocketMQ property names), one
 * table driving defaults, parsing, validation and printing. */
#ifndef BK_CONFIG_H
#define BK_CONFIG_H

#include <stdint.h>
#include <stdio.h>

#include "rmq_acl.h"
#include "rmq_config.h"
#include "rmq_tls_config.h"
#include "st_store.h"

typedef enum bk_role { BK_ASYNC_MASTER = 0, BK_SYNC_MASTER = 1, BK_SLAVE = 2 } bk_role_t;
/* namesrvProtocol: how the broker registers with its name servers. */
typedef enum bk_ns_protocol { BK_NS_NATIVE = 0, BK_NS_REMOTING = 1 } bk_ns_protocol_t;

typedef struct bk_config {
    char *broker_cluster_name;
    char *broker_name;
    int64_t broker_id;
    int broker_role;                    /* bk_role_t */
    int flush_disk_type;                /* st_flush_type_t */
    int64_t listen_port;
    char *broker_ip1;
    char *namesrv_addr;
    int namesrv_protocol;               /* bk_ns_protocol_t */
    int compressed_register;            /* namesrvProtocol=remoting: zlib RegisterBrokerBody */
    char *store_path_root_dir;
    char *store_path_commit_log;
    char *store_path_epoch_file;        /* "": ROOT/epochFileCheckpoint */
    int64_t maped_file_size_commit_log;
    int64_t maped_file_size_consume_queue;
    int64_t flush_interval_commit_log;
    int64_t flush_commit_log_least_pages;
    int64_t flush_commit_log_thorough_interval;
    int64_t sync_flush_timeout;
    int64_t max_message_size;
    char *delete_when;
    int64_t file_reserved_time;
    int64_t disk_max_used_space_ratio;
    int64_t disk_full_ratio;
    int warm_maped_file_enable;
    int transient_store_pool_enable;
    int64_t transient_store_pool_size;
    int auto_create_topic_enable;
    int auto_create_subscription_group;
    int validate_system_topic_when_update_topic; /* validateSystemTopicWhenUpdateTopic */
    int enable_mixed_message_type;      /* enableMixedMessageType */
    int64_t default_topic_queue_nums;
    int64_t register_name_server_period;
    int64_t register_broker_timeout_mills;
    int64_t flush_consumer_offset_interval;
    int long_polling_enable;
    int64_t short_polling_time_mills;
    int64_t send_queue_capacity;
    int64_t wait_time_mills_in_send_queue;
    int64_t max_transfer_count_on_message_in_memory;
    int64_t max_transfer_bytes_on_message_in_memory;
    int64_t stats_item_capacity;        /* statsItemCapacity */
    int64_t channel_expired_timeout;
    int64_t max_heartbeat_groups;       /* maxHeartbeatGroups */
    int64_t max_connection_groups;      /* maxConnectionGroups */
    int64_t ha_listen_port;
    int64_t ha_transfer_batch_size;
    int64_t ha_housekeeping_interval;
    int64_t ha_slave_fallbehind_max;
    char *ha_master_address;
    /* controller mode (automatic failover; bk_controller.c) */
    int enable_controller_mode;         /* enableControllerMode */
    int64_t controller_mode_start_epoch; /* 0: the controller names epochs */
    char *controller_addr;              /* controllerAddr, host:port;host:port */
    int64_t controller_heart_beat_timeout_mills;
    int64_t broker_heartbeat_interval;
    int64_t check_sync_state_set_period;
    int64_t ha_max_time_slave_not_catchup;
    int64_t broker_election_priority;
    int all_ack_in_sync_state_set;      /* allAckInSyncStateSet */
    int64_t in_sync_replicas;           /* inSyncReplicas, the master counted */
    int64_t min_in_sync_replicas;       /* minInSyncReplicas */
    int slave_read_enable;
    int enable_property_filter;
    int recall_message_enable;
    int trace_topic_enable;             /* traceTopicEnable */
    char *msg_trace_topic_name;         /* msgTraceTopicName */
    int64_t slave_sync_interval;
    int64_t access_message_in_memory_max_ratio;
    int64_t broker_permission;
    char *log_path;
    char *log_level;
    int64_t log_max_file_size;
    int64_t log_max_files;
    int64_t metrics_port;
    int64_t max_frame_size;
    int64_t client_idle_timeout;
    /* key index, ordered-consumption locks, transactions (bk_query/bk_lock/bk_tx) */
    int message_index_enable;
    int64_t max_hash_slot_num;
    int64_t max_index_num;
    int64_t default_query_max_num;
    int64_t rebalance_lock_max_live_time;
    int64_t transaction_time_out;
    int64_t transaction_check_max;
    int64_t transaction_check_interval;
    char *message_delay_level;          /* delay levels, "1s 5s ... 2h" (bk_schedule.c) */
    rmq_tls_config_t tls;               /* tlsMode, tlsCertPath, ... (rmq_tls_config.h) */
    rmq_acl_config_t acl;               /* aclEnable, aclFile, aclAccessKey, aclSecretKey */
} bk_config_t;

/* The table (static, read-only). */
const rmq_cfg_table_t *bk_config_table(void);

/* Sets every key to its default. Owner of the strings: cfg (bk_config_deinit). */
rmq_err_t bk_config_init(bk_config_t *cfg);
void bk_config_deinit(bk_config_t *cfg);

/* Cross-key checks (e.g. brokerId 0 iff not SLAVE, unless controller mode). On error writes one
 * line naming the key, the value and the rule into err. */
rmq_err_t bk_config_check(const bk_config_t *cfg, char *err, size_t errlen);
/* The controllers name this broker's role (enableControllerMode with
 * controllerAddr); enableControllerMode alone keeps brokerRole's role and
 * only adds epochs, truncation and the confirm offset. */
int bk_config_controlled(const bk_config_t *cfg);

void bk_config_print(const bk_config_t *cfg, FILE *out);

/* Fills the store's configuration from cfg; strings are borrowed from cfg. */
void bk_config_to_store(const bk_config_t *cfg, st_store_config_t *sc);

/* brokerRole as its property value ("ASYNC_MASTER", "SYNC_MASTER", "SLAVE"). */
const char *bk_role_name(bk_role_t role);

#endif
