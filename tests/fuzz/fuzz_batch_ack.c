/* fuzz_batch_ack.c: the broker remoting front's BatchAckMessageRequestBody
 * reader (broker/front/remoting/fr_remoting_pop_wire.c) over arbitrary
 * input: it either refuses with a reason or yields at most
 * FR_RM_BATCH_ACK_MAX messages, each with a group, a topic, a topic type
 * of 0 or 1 and an offset at or past its start offset. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fr_remoting_pop_wire.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fr_rm_batch_ack_t ba;
    char why[192];
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    if (fr_rm_batch_ack_parse(copy, size, &ba, why, sizeof(why)) == RMQ_OK) {
        if (ba.n > FR_RM_BATCH_ACK_MAX)
            abort();
        for (size_t i = 0; i < ba.n; i++) {
            const fr_rm_acked_t *a = &ba.acked[i];
            if (!a->group[0] || !a->topic[0] || (a->h.type != 0 && a->h.type != 1) ||
                a->h.queue_offset < a->h.ck_offset)
                abort();
        }
        fr_rm_batch_ack_clear(&ba);
    } else if (!why[0]) {
        abort();
    }
    free(copy);
    return 0;
}
