/* fuzz_record.c: rmq_record_decode on arbitrary bytes, with and without
 * CRC checks, walking the input record by record as recovery does; a
 * decoded record must lie inside the input. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include "rmq_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walks data as a sequence of records; aborts if a result is inconsistent. */
static void walk(const uint8_t *data, size_t size, int verify)
{
    size_t pos = 0;

    while (pos < size) {
        rmq_record_t rec;
        rmq_err_t rc = rmq_record_decode(data + pos, size - pos, verify, &rec);
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
        pos += rec.total_size;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);

    /* a heap copy of the exact size lets ASan catch any overread */
    for (size_t i = 0; i < size; i++)
        copy[i] = data[i];
    walk(copy, size, 1);
    walk(copy, size, 0);
    free(copy);
    return 0;
}
