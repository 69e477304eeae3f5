/* ha_config.c: defaults and clamping for ha_config_t. */
#include "ha_config.h"

#include "ha_codec.h"

void ha_config_resolve(const ha_config_t *cfg, ha_config_t *out)
{
    *out = *cfg;
    if (out->transfer_batch_size == 0)
        out->transfer_batch_size = HA_DEFAULT_TRANSFER_BATCH;
    if (out->transfer_batch_size > HA_CHUNK_MAX)
        out->transfer_batch_size = HA_CHUNK_MAX;
    if (out->heartbeat_interval_ms <= 0)
        out->heartbeat_interval_ms = HA_DEFAULT_HEARTBEAT_MS;
    if (out->housekeeping_interval_ms <= 0)
        out->housekeeping_interval_ms = HA_DEFAULT_HOUSEKEEPING_MS;
    if (out->slave_fallbehind_max <= 0)
        out->slave_fallbehind_max = HA_DEFAULT_FALLBEHIND_MAX;
    if (out->reconnect_interval_ms <= 0)
        out->reconnect_interval_ms = HA_DEFAULT_RECONNECT_MS;
    if (out->max_out_batches <= 0)
        out->max_out_batches = HA_DEFAULT_OUT_BATCHES;
    if (!out->listen_host)
        out->listen_host = "0.0.0.0";
}
