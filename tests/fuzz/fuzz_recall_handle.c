/* fuzz_recall_handle.c: the recall handle parser (common/rmq_recall_handle.c)
 * over arbitrary input, as RECALL_MESSAGE's recallHandle or gRPC
 * RecallMessage's recall_handle brings it: it either refuses or yields
 * fields that format into a handle the parser reads back to the same
 * fields. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_recall_handle.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rmq_recall_handle_t h, back;
    char text[RMQ_RECALL_HANDLE_MAX];
    char *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    if (rmq_recall_handle_parse(copy, size, &h) == RMQ_OK) {
        size_t n = rmq_recall_handle_format(&h, text, sizeof(text));
        if (n == 0 || rmq_recall_handle_parse(text, n, &back) != RMQ_OK || memcmp(&h, &back, sizeof(h)) != 0)
            abort();
    }
    free(copy);
    return 0;
}
