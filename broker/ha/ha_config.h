/* ha_config.h: the HA channel's settings, a plain struct the broker fills
 * from its properties (RocketMQ names in the comments). Zero numeric fields
 * other than listen_port take the defaults below. The broker computes the HA
 * port (haListenPort, else listenPort + 1); 0 binds an ephemeral port. */
#ifndef HA_CONFIG_H
#define HA_CONFIG_H

#include <stdint.h>

#include <openssl/ssl.h>

#include "rmq_acl.h"
#include "st_epoch.h"

#define HA_DEFAULT_TRANSFER_BATCH (256 * 1024)
#define HA_DEFAULT_HEARTBEAT_MS 5000
#define HA_DEFAULT_HOUSEKEEPING_MS 20000
#define HA_DEFAULT_FALLBEHIND_MAX (256LL * 1024 * 1024)
#define HA_DEFAULT_RECONNECT_MS 3000
#define HA_DEFAULT_OUT_BATCHES 4

typedef struct ha_config {
    const char *cluster_name;        /* brokerClusterName */
    const char *broker_name;         /* brokerName */
    int64_t broker_id;               /* brokerId: 0 master, > 0 slave */
    const char *listen_host;         /* master: bind address; NULL: 0.0.0.0 */
    int listen_port;                 /* master: haListenPort (listenPort + 1); 0: ephemeral */
    uint32_t transfer_batch_size;    /* haTransferBatchSize: bytes per chunk (max HA_CHUNK_MAX) */
    int heartbeat_interval_ms;       /* haSendHeartbeatInterval */
    int housekeeping_interval_ms;    /* haHousekeepingInterval: drop a peer silent this long */
    int64_t slave_fallbehind_max;    /* haSlaveFallbehindMax: SLAVE_NOT_AVAILABLE beyond it */
    int reconnect_interval_ms;       /* slave: wait between connection attempts */
    int max_out_batches;             /* master: chunks queued per slave before waiting */
    /* TLS and access control (borrowed; outlive the master / slave) */
    SSL_CTX *ssl_ctx;                /* master: server context; slave: client context; NULL: plaintext */
    int tls_mode;                    /* master: rmq_tls_mode_t; permissive takes TLS and plaintext */
    const rmq_acl_t *acl;            /* master: handshakes must be signed by an admin; NULL: off */
    const char *access_key;          /* slave: signs its handshake when set (aclAccessKey) */
    const char *secret_key;          /* slave: aclSecretKey */
    /* controller mode (enableControllerMode): the broker's epoch file
     * (borrowed). A master answers epoch queries from it; a slave queries
     * first, cuts its log to the point both agree on and appends the
     * master's epochs as it replicates past their starts. NULL: classic HA */
    st_epoch_t *epochs;
} ha_config_t;

/* Copies cfg into out, replacing zero numeric fields with defaults and
 * clamping the batch size. Strings stay borrowed. Any thread. */
void ha_config_resolve(const ha_config_t *cfg, ha_config_t *out);

#endif
