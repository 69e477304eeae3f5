/* fuzz_batch.c: rmq_batch_decode looped over an arbitrary batch body, as
 * the broker does for SEND_BATCH_MESSAGE; each entry must lie inside the
 * input and re-encode to the same bytes. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    uint8_t *copy = malloc(size ? size : 1);
    size_t pos = 0;

    memcpy(copy, data, size);
    while (pos < size) {
        rmq_batch_entry_t e;
        size_t used;
        uint8_t *again;

        if (rmq_batch_decode(copy + pos, size - pos, &e, &used) != RMQ_OK)
            break;
        if (used == 0 || used > size - pos || used != rmq_batch_entry_size(e.body_len, e.properties_len))
            abort();
        again = malloc(used);
        if (rmq_batch_encode(&e, again) != used || memcmp(again, copy + pos, used) != 0)
            abort();
        free(again);
        pos += used;
    }
    free(copy);
    return 0;
}
