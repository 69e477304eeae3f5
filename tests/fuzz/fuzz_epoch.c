/* fuzz_epoch.c: libFuzzer target for the epoch file parser
 * (broker/store/st_epoch.h): every text parses or is refused with the
 * line; a parsed list is strictly ascending in epoch and never decreasing
 * in offset, and its consistent end with itself is its own end. */
#include "st_epoch.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static st_epoch_entry_t e[64];
    char why[256] = "";
    size_t n;

    if (st_epoch_parse((const char *)data, size, e, 64, &n, why, sizeof why) != RMQ_OK) {
        if (strncmp(why, "line ", 5) != 0)
            abort();
        return 0;
    }
    for (size_t i = 0; i < n; i++)
        if (e[i].epoch < 1 || e[i].start_offset < 0 ||
            (i && (e[i].epoch <= e[i - 1].epoch || e[i].start_offset < e[i - 1].start_offset)))
            abort();
    int64_t end = n ? e[n - 1].start_offset : 0;
    if (n && st_epoch_consistent_end(e, n, end, e, n, end) != end)
        abort();
    return 0;
}
