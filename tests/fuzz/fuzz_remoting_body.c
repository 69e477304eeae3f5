/* fuzz_remoting_body.c: the broker remoting front's decoders of peer bytes
 * (broker/front/remoting/fr_remoting_wire.c) over arbitrary input: a
 * RocketMQ batch body looped as SEND_BATCH_MESSAGE does (each entry inside
 * the input, re-encoding to the same bytes), a HeartbeatData JSON body
 * (every consumer and subscription it yields has its strings), stored
 * records re-encoded for a pull (same length, never past the input, read
 * back by the MessageDecoder V1 reader with the same hosts), and a
 * half message re-encoded under its real topic for a check-back (one whole
 * record with its body CRC), and a CheckClientRequestBody (its
 * subscription's strings present when it has one). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fr_remoting_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void batch(const uint8_t *data, size_t size)
{
    size_t pos = 0;
    while (pos < size) {
        rmq_batch_entry_t e;
        size_t used = 0;
        const char *why = NULL;
        if (fr_rm_batch_decode(data + pos, size - pos, &e, &used, &why) != RMQ_OK) {
            if (!why)
                abort();
            break;
        }
        if (used == 0 || used > size - pos || used != fr_rm_batch_entry_size(e.body_len, e.properties_len))
            abort();
        uint8_t *again = malloc(used);
        fr_rm_batch_encode(&e, again);
        if (memcmp(again + 12, data + pos + 12, used - 12) != 0)   /* magic and CRC are written as 0 */
            abort();
        free(again);
        pos += used;
    }
}

static void heartbeat(const uint8_t *data, size_t size)
{
    fr_rm_heartbeat_t hb;
    char why[128];
    if (fr_rm_heartbeat_parse(data, size, &hb, why, sizeof why) != RMQ_OK)
        return;
    if (!hb.hb.client_id)
        abort();
    for (size_t i = 0; i < hb.hb.nproducers; i++)
        if (!hb.hb.producer_groups[i])
            abort();
    for (size_t i = 0; i < hb.hb.nconsumers; i++) {
        const bk_hb_consumer_t *c = &hb.hb.consumers[i];
        if (!c->group)
            abort();
        for (size_t j = 0; j < c->nsubs; j++)
            if (!c->subs[j].topic || !c->subs[j].expr)
                abort();
    }
    fr_rm_heartbeat_clear(&hb);
}

/* Stored records re-encoded for a pull: each reads back as MessageDecoder
 * V1 with the stored record's fields and host layout. */
static void records(const uint8_t *data, size_t size)
{
    uint8_t *out = malloc(size ? size : 1);
    int32_t n = 0;
    if (fr_rm_messages_encode(data, size, out, &n) == RMQ_OK) {
        size_t pos = 0;
        for (int32_t i = 0; i < n; i++) {
            rmq_record_t in, m;
            if (rmq_record_decode(data + pos, size - pos, 0, &in) != RMQ_OK ||
                rmq_record_decode_rocketmq(out + pos, size - pos, &m) != RMQ_OK || m.total_size != in.total_size ||
                m.sys_flag != in.sys_flag || m.born_port != in.born_port || m.store_port != in.store_port ||
                memcmp(m.born_ip6, in.born_ip6, 16) != 0 || memcmp(m.store_ip6, in.store_ip6, 16) != 0 ||
                m.body_len != in.body_len || (int32_t)m.crc != fr_rm_body_crc(m.body, m.body_len))
                abort();
            pos += in.total_size;
        }
        if (pos != size)
            abort();
    }
    free(out);
}

/* A check-back's message: one whole MessageDecoder V1 record (IPv6 hosts
 * as RocketMQ lays them out), or an error. */
static void check_message(const uint8_t *data, size_t size)
{
    uint8_t *msg = NULL;
    size_t len = 0;
    rmq_record_t rec;
    if (fr_rm_check_message_encode(data, size, &msg, &len) != RMQ_OK)
        return;
    if (rmq_record_decode_rocketmq(msg, len, &rec) != RMQ_OK || rec.total_size != len ||
        (int32_t)rec.crc != fr_rm_body_crc(rec.body, rec.body_len))
        abort();
    free(msg);
}

/* CHECK_CLIENT_CONFIG's body: a subscription has its expression. */
static void check_client(const uint8_t *data, size_t size)
{
    fr_rm_check_client_t cc;
    char why[128];
    if (fr_rm_check_client_parse(data, size, &cc, why, sizeof why) != RMQ_OK)
        return;
    if (cc.has_sub && !cc.expr)
        abort();
    rmq_json_free(cc.doc);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    batch(copy, size);
    heartbeat(copy, size);
    records(copy, size);
    check_message(copy, size);
    check_client(copy, size);
    free(copy);
    return 0;
}
