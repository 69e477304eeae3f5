/* ns_config.h: the name server's configuration, one table (rmq_config)
 * driving defaults, .properties parsing, validation and -p printing. */
#ifndef NS_CONFIG_H
#define NS_CONFIG_H

#include <stdint.h>

#include "rmq_acl.h"
#include "rmq_config.h"
#include "rmq_tls_config.h"

typedef struct ns_config {
    int64_t listen_port;                  /* listenPort; 0: ephemeral */
    char *bind_address;                   /* bindAddress */
    int64_t broker_channel_expired_ms;    /* brokerChannelExpiredTime */
    int64_t scan_interval_ms;             /* scanNotActiveBrokerInterval: longest gap between checks */
    char *kv_config_path;                 /* kvConfigPath; empty: KV config kept in memory only */
    char *log_path;                       /* logPath; empty: stderr only */
    int log_level;                        /* logLevel: rmq_log_level_t */
    int64_t log_max_file_size;            /* logMaxFileSize: rotate past this many bytes; 0: never */
    int64_t log_max_files;                /* logMaxFiles: rotated files kept */
    int64_t metrics_port;                 /* metricsPort: /metrics and the console; 0: off */
    int64_t console_history_period_ms;    /* consoleHistoryPeriodMs: one slot of the console's hour */
    int64_t max_frame_size;               /* maxFrameSize */
    int64_t idle_timeout_s;               /* serverChannelMaxIdleTimeSeconds; 0: never */
    int controller_enable;                /* enableControllerInNamesrv */
    int controller_type;                  /* controllerType: 0 etcd */
    char *controller_etcd_endpoints;      /* controllerEtcdEndpoints */
    char *controller_etcd_prefix;         /* controllerEtcdPrefix */
    int64_t controller_lease_ttl_s;       /* controllerLeaseTtlSeconds */
    int64_t controller_heartbeat_timeout_ms; /* controllerHeartBeatTimeoutMills: default for brokers */
    int controller_elect_unclean;         /* enableElectUncleanMaster */
    rmq_tls_config_t tls;                 /* tlsMode, tlsCertPath, ... (rmq_tls_config.h) */
    rmq_acl_config_t acl;                 /* aclEnable, aclFile (rmq_acl.h) */
} ns_config_t;

/* The table describing ns_config_t. Static, any thread. */
const rmq_cfg_table_t *ns_config_table(void);

/* Fills cfg with the defaults (cfg zeroed by the caller first). */
rmq_err_t ns_config_defaults(ns_config_t *cfg);

/* Applies properties text[0..len) (UPDATE_NAMESRV_CONFIG's body) to cfg:
 * all pairs or none. RMQ_EREADONLY: a key that cannot change while the
 * name server runs (the config paths among them); RMQ_ENOTFOUND: an unknown
 * key; RMQ_EINVAL: a bad value; RMQ_ENOMEM. why names the key and rule. */
rmq_err_t ns_config_update(ns_config_t *cfg, const char *text, size_t len, char *why, size_t whylen);

/* Frees cfg's strings. */
void ns_config_deinit(ns_config_t *cfg);

#endif
