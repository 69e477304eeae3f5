/* fuzz_record.c: rmq_record_decode on arbitrary bytes, with and without
 * CRC checks, walking the input record by record as recovery does, and
 * rmq_record_decode_rocketmq (MessageDecoder V1, hosts by the sysFlag's
 * IPv6 bits) the same way; a decoded record must lie inside the input and
 * re-encode to the same bytes (but the CRC word, and the sysFlag whose
 * stray host bits an old record loses). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Aborts unless rec, decoded from in, encodes back to in's bytes: size,
 * every field but the CRC and sysFlag words, the host layout. */
static void re_encode(const uint8_t *in, const rmq_record_t *rec)
{
    uint8_t *out = malloc(rec->total_size);

    if (rmq_record_size(rec->sys_flag, rec->body_len, rec->topic_len, rec->properties_len) != rec->total_size ||
        rmq_record_encode(rec, out) != rec->total_size || memcmp(out + 12, in + 12, 24) != 0 ||
        memcmp(out + 40, in + 40, rec->total_size - 40) != 0)
        abort();
    free(out);
}

/* Walks data as a sequence of records (rocketmq: MessageDecoder V1
 * messages); aborts if a result is inconsistent. */
static void walk(const uint8_t *data, size_t size, int verify, int rocketmq)
{
    size_t pos = 0;

    while (pos < size) {
        rmq_record_t rec;
        rmq_err_t rc = rocketmq ? rmq_record_decode_rocketmq(data + pos, size - pos, &rec)
                                : rmq_record_decode(data + pos, size - pos, verify, &rec);
        size_t vlen;

        if (rc == RMQ_ENOTFOUND) {
            if (rec.total_size < 8)
                abort();
            pos += rec.total_size;
            continue;
        }
        if (rc != RMQ_OK)
            break;
        if (rec.total_size > size - pos ||
            rec.body + rec.body_len > data + pos + rec.total_size ||
            (const uint8_t *)rec.properties + rec.properties_len != data + pos + rec.total_size)
            abort();
        rmq_props_get(rec.properties, rec.properties_len, RMQ_PROP_TAGS, &vlen);
        re_encode(data + pos, &rec);
        pos += rec.total_size;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);

    /* a heap copy of the exact size lets ASan catch any overread */
    for (size_t i = 0; i < size; i++)
        copy[i] = data[i];
    walk(copy, size, 1, 0);
    walk(copy, size, 0, 0);
    walk(copy, size, 0, 1);
    free(copy);
    return 0;
}
