/* fuzz_ha.c: libFuzzer target for the HA stream decoders: the input is read
 * as a handshake frame (both message types; an epoch answer's list too), then as a master -> slave chunk
 * stream (each typed metadata record's body through ha_meta_unpack and each
 * confirm record's through ha_ack_parse, as the slave would), as one
 * metadata body, and as a slave -> master ack stream. */
#include <stddef.h>
#include <stdint.h>

#include "ha_codec.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void fuzz_frames(const uint8_t *data, size_t size)
{
    Rmq__HaHandshake *hs;
    Rmq__HaHandshakeResponse *resp;
    uint32_t n;

    if (ha_frame_parse(data, size, &n) != RMQ_OK || size - HA_FRAME_HDR < n)
        return;
    if (ha_handshake_unpack(data + HA_FRAME_HDR, n, &hs) == RMQ_OK)
        rmq__ha_handshake__free_unpacked(hs, NULL);
    if (ha_response_unpack(data + HA_FRAME_HDR, n, &resp) == RMQ_OK)
        rmq__ha_handshake_response__free_unpacked(resp, NULL);
}

static void fuzz_meta(const uint8_t *body, size_t len)
{
    Rmq__HaMeta *meta;

    if (ha_meta_unpack(body, len, &meta) == RMQ_OK)
        rmq__ha_meta__free_unpacked(meta, NULL);
}

static void fuzz_acks(const uint8_t *data, size_t size)
{
    int64_t off;

    for (size_t pos = 0; ha_ack_parse(data + pos, size - pos, &off) == RMQ_OK; pos += HA_ACK_LEN)
        ;
}

static void fuzz_chunks(const uint8_t *data, size_t size)
{
    size_t pos = 0;
    ha_chunk_t c;
    volatile uint8_t sink = 0;

    while (ha_chunk_parse(data + pos, size - pos, HA_CHUNK_MAX, &c) == RMQ_OK &&
           c.frame_len <= size - pos) {
        if (c.type == HA_REC_META)
            fuzz_meta(data + pos + HA_CHUNK_HDR, c.len);
        else if (c.type == HA_REC_CONFIRM)
            fuzz_acks(data + pos + HA_CHUNK_HDR, c.len);
        else if (c.len > 0)
            sink ^= data[pos + c.frame_len - 1];
        pos += c.frame_len;
    }
    (void)sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_frames(data, size);
    fuzz_chunks(data, size);
    fuzz_meta(data, size);
    fuzz_acks(data, size);
    return 0;
}
