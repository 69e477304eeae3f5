/* fuzz_ns_register.c: the name server's decoders of RocketMQ brokers'
 * registration bodies (namesrv/ns_rembody.c) and of UPDATE_NAMESRV_CONFIG's
 * properties body (ns_config_update) over arbitrary input. The first byte
 * picks: a RegisterBrokerBody as JSON, as the compressed form (the bytes
 * as sent, or the rest zlib-compressed here so the inner binary layout is
 * reached), a DataVersion body, or a config update. Checks: a refusal
 * always names its reason; an accepted body's topics have names of 1 to
 * NS_NAME_MAX bytes, perm bits in 0..15 and no negative queue count; a
 * config update changes only the runtime keys (nothing else, whether
 * accepted or refused). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "ns_config.h"
#include "ns_rembody.h"
#include "ns_route.h"
#include "rmq_log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_body(const uint8_t *data, size_t size, int compressed)
{
    ns_rembody_t b;
    char why[256] = "";

    if (ns_rembody_decode(data, size, compressed, &b, why, sizeof why) != RMQ_OK) {
        if (why[0] == '\0' || memchr(why, '\0', sizeof why) == NULL)
            abort();
        return;
    }
    for (size_t i = 0; i < b.n_topics; i++) {
        size_t len = strlen(b.topics[i]->topic_name);
        if (len == 0 || len > NS_NAME_MAX || b.topics[i]->perm < 0 || b.topics[i]->perm > 15 ||
            b.topics[i]->read_queue_nums < 0 || b.topics[i]->write_queue_nums < 0)
            abort();
    }
    ns_rembody_clear(&b);
}

/* The rest zlib-compressed, decoded as the compressed form. */
static void check_deflated(const uint8_t *data, size_t size)
{
    uLongf zlen = compressBound(size);
    uint8_t *z = malloc(zlen);

    if (z && compress2(z, &zlen, data, size, Z_BEST_SPEED) == Z_OK)
        check_body(z, zlen, 1);
    free(z);
}

static void check_version(const uint8_t *data, size_t size)
{
    Rmq__DataVersion dv;
    char why[256] = "";

    if (ns_rembody_version_decode(data, size, &dv, why, sizeof why) != RMQ_OK && why[0] == '\0')
        abort();
}

/* cfg as printed properties text (heap). */
static char *config_text(const ns_config_t *cfg)
{
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);

    if (f == NULL)
        abort();
    rmq_config_print(ns_config_table(), cfg, f);
    fclose(f);
    return text;
}

static void check_config(const uint8_t *data, size_t size)
{
    ns_config_t cfg = { 0 };
    char why[512] = "";

    if (ns_config_defaults(&cfg) != RMQ_OK)
        abort();
    char *before = config_text(&cfg);
    int64_t expired = cfg.broker_channel_expired_ms, scan = cfg.scan_interval_ms;
    int level = cfg.log_level;
    rmq_err_t err = ns_config_update(&cfg, (const char *)data, size, why, sizeof why);
    if (err != RMQ_OK && err != RMQ_ENOMEM && why[0] == '\0')
        abort();
    cfg.broker_channel_expired_ms = expired;    /* what may change, put back */
    cfg.scan_interval_ms = scan;
    cfg.log_level = level;
    char *after = config_text(&cfg);
    if (strcmp(before, after) != 0)
        abort();
    free(before);
    free(after);
    ns_config_deinit(&cfg);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rmq_log_set_level(RMQ_LOG_OFF);
    if (size < 1)
        return 0;
    switch (data[0] % 5) {
    case 0: check_body(data + 1, size - 1, 0); break;
    case 1: check_body(data + 1, size - 1, 1); break;
    case 2: check_deflated(data + 1, size - 1); break;
    case 3: check_version(data + 1, size - 1); break;
    default: check_config(data + 1, size - 1); break;
    }
    return 0;
}
