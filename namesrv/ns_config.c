/* ns_config.c: the name server's configuration table, and which of its
 * keys may change while it runs. */
#include "ns_config.h"

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static const char *const log_levels[] = { "debug", "info", "warn", "error", "off", NULL };
static const char *const controller_types[] = { "etcd", NULL };

#define NS_CFG(key, type, field, def, min, max, choices, help) \
    { key, type, offsetof(ns_config_t, field), def, min, max, choices, help }

static const rmq_cfg_entry_t ns_config_entries[] = {
    NS_CFG("listenPort", RMQ_CFG_INT, listen_port, "9876", 0, 65535, NULL,
           "TCP port for brokers and clients; 0 picks a free port"),
    NS_CFG("bindAddress", RMQ_CFG_STR, bind_address, "0.0.0.0", 0, 255, NULL,
           "address to listen on"),
    NS_CFG("brokerChannelExpiredTime", RMQ_CFG_INT, broker_channel_expired_ms, "120000", 100,
           86400000, NULL, "ms without a registration after which a broker leaves the route"),
    NS_CFG("scanNotActiveBrokerInterval", RMQ_CFG_INT, scan_interval_ms, "10000", 10, 3600000,
           NULL, "longest ms between two expiry checks (expiries are also timed precisely)"),
    NS_CFG("kvConfigPath", RMQ_CFG_STR, kv_config_path, "", 0, 4000, NULL,
           "file the KV config is loaded from and saved to; empty: memory only"),
    NS_CFG("logPath", RMQ_CFG_STR, log_path, "", 0, 4096, NULL,
           "log file; empty: stderr only"),
    NS_CFG("logLevel", RMQ_CFG_ENUM, log_level, "info", 0, 0, log_levels,
           "lowest level logged"),
    NS_CFG("logMaxFileSize", RMQ_CFG_INT, log_max_file_size, "1073741824", 0, INT64_MAX, NULL,
           "rotate the log file before it grows past this many bytes; 0: never"),
    NS_CFG("logMaxFiles", RMQ_CFG_INT, log_max_files, "10", 1, 1000, NULL,
           "rotated log files kept (logPath.1 newest .. logPath.N oldest)"),
    NS_CFG("metricsPort", RMQ_CFG_INT, metrics_port, "0", 0, 65535, NULL,
           "HTTP port for Prometheus /metrics and the web console on bindAddress (HTTPS when "
           "tlsMode is on; accounts when aclEnable, which needs TLS); 0: off"),
    NS_CFG("consoleHistoryPeriodMs", RMQ_CFG_INT, console_history_period_ms, "10000", 100, 60000, NULL,
           "the console keeps 360 samples of broker, topic and group rates, one per this many ms "
           "(10000: the last hour)"),
    NS_CFG("maxFrameSize", RMQ_CFG_INT, max_frame_size, "16777216", 1024, 1073741824, NULL,
           "largest frame accepted from a peer, bytes"),
    NS_CFG("serverChannelMaxIdleTimeSeconds", RMQ_CFG_INT, idle_timeout_s, "120", 0, 86400,
           NULL, "close a connection silent this long; 0: never"),
    NS_CFG("enableControllerInNamesrv", RMQ_CFG_BOOL, controller_enable, "false", 0, 0, NULL,
           "run the controller (automatic failover of controller-mode broker groups) in this name server"),
    NS_CFG("controllerType", RMQ_CFG_ENUM, controller_type, "etcd", 0, 0, controller_types,
           "where the controller keeps its consensus: etcd"),
    NS_CFG("controllerEtcdEndpoints", RMQ_CFG_STR, controller_etcd_endpoints, "", 0, 2000, NULL,
           "etcd client endpoints host:port[,host:port...]; needed with enableControllerInNamesrv"),
    NS_CFG("controllerEtcdPrefix", RMQ_CFG_STR, controller_etcd_prefix, "/rmq/controller", 1, 200, NULL,
           "etcd key prefix of the leader key and the group states"),
    NS_CFG("controllerLeaseTtlSeconds", RMQ_CFG_INT, controller_lease_ttl_s, "10", 2, 300, NULL,
           "controller leader lease; a standby takes over this long after the leader stops renewing"),
    NS_CFG("controllerHeartBeatTimeoutMills", RMQ_CFG_INT, controller_heartbeat_timeout_ms, "10000", 100,
           3600000, NULL, "ms of broker silence after which a master is replaced (when its heartbeat names none)"),
    NS_CFG("enableElectUncleanMaster", RMQ_CFG_BOOL, controller_elect_unclean, "false", 0, 0, NULL,
           "elect a master outside the sync state set when none in it is alive (may lose messages)"),
    RMQ_TLS_CFG_ENTRIES(ns_config_t, tls),
    RMQ_ACL_CFG_SERVER_ENTRIES(ns_config_t, acl),
};

static const rmq_cfg_table_t ns_config_tab = {
    ns_config_entries,
    sizeof ns_config_entries / sizeof ns_config_entries[0],
    NULL,
};

const rmq_cfg_table_t *ns_config_table(void)
{
    return &ns_config_tab;
}

rmq_err_t ns_config_defaults(ns_config_t *cfg)
{
    return rmq_config_defaults(&ns_config_tab, cfg);
}

void ns_config_deinit(ns_config_t *cfg)
{
    rmq_config_deinit(&ns_config_tab, cfg);
}

/* Keys UPDATE_NAMESRV_CONFIG may change while the name server runs: read
 * where they are used, none a string (so a shallow copy of the config is
 * a whole candidate). */
static const char *const ns_runtime_keys[] = {
    "brokerChannelExpiredTime", "scanNotActiveBrokerInterval", "logLevel", NULL,
};

/* One update in progress: the candidate config and the first refusal. */
typedef struct ns_update {
    ns_config_t next;
    rmq_err_t err;
    char *why;
    size_t whylen;
} ns_update_t;

static int is_runtime_key(const char *key)
{
    for (size_t i = 0; ns_runtime_keys[i] != NULL; i++)
        if (strcmp(ns_runtime_keys[i], key) == 0)
            return 1;
    return 0;
}

/* rmq_properties_parse callback: applies one pair to the candidate. */
static int update_pair(const char *key, const char *value, int line, void *arg)
{
    ns_update_t *u = arg;
    char cur[64];

    if (value == NULL) {
        snprintf(u->why, u->whylen, "line %d: malformed \\u escape in '%.100s'", line, key);
        u->err = RMQ_EINVAL;
    } else if (strcmp(key, "kvConfigPath") == 0 || strcmp(key, "configStorePath") == 0) {
        snprintf(u->why, u->whylen, "Can not update config path (%s)", key);
        u->err = RMQ_EREADONLY;
    } else if (is_runtime_key(key)) {
        u->err = rmq_config_set(&ns_config_tab, &u->next, key, value, u->why, u->whylen);
    } else if (rmq_config_get(&ns_config_tab, &u->next, key, cur, sizeof cur) != RMQ_ENOTFOUND) {
        snprintf(u->why, u->whylen, "%.100s cannot change while the name server runs (these can: "
                 "brokerChannelExpiredTime, scanNotActiveBrokerInterval, logLevel); set it in the "
                 "properties file and restart", key);
        u->err = RMQ_EREADONLY;
    } else {
        snprintf(u->why, u->whylen, "unknown name server property %.100s", key);
        u->err = RMQ_ENOTFOUND;
    }
    return u->err != RMQ_OK;
}

rmq_err_t ns_config_update(ns_config_t *cfg, const char *text, size_t len, char *why, size_t whylen)
{
    ns_update_t u = { .next = *cfg, .err = RMQ_OK, .why = why, .whylen = whylen };

    if (rmq_properties_parse(text, len, update_pair, &u) != 0 && u.err == RMQ_OK)
        u.err = RMQ_ENOMEM;
    if (u.err == RMQ_OK)
        *cfg = u.next;
    return u.err;
}
