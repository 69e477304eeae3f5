/* fuzz_confirm.c: libFuzzer target for ROOT/confirmOffset's reader
 * (broker/ha/ha_confirm.h): every byte string is read or refused with a
 * reason; what is read is a non-negative offset that the writer turns back
 * into exactly the bytes read. */
#include "ha_confirm.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char why[128] = "", text[HA_CONFIRM_TEXT_MAX];
    int64_t v = -1;

    if (ha_confirm_parse((const char *)data, size, &v, why, sizeof why) != RMQ_OK) {
        if (why[0] == '\0' || v != -1)
            abort();
        return 0;
    }
    if (v < 0 || ha_confirm_format(text, v) != size || memcmp(text, data, size) != 0)
        abort();
    return 0;
}
