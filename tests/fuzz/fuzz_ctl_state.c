/* fuzz_ctl_state.c: libFuzzer target for the controller's group state
 * decoder (namesrv/ns_ctl_state.h), whose input comes from etcd: every
 * value decodes or is refused with a reason; a decoded state re-encodes
 * and decodes to the same state. */
#include "ns_ctl_state.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    ns_ctl_state_t st, back;
    char why[256] = "";

    if (ns_ctl_state_decode((const char *)data, size, &st, why, sizeof why) != RMQ_OK) {
        if (why[0] == '\0')
            abort();
        return 0;
    }
    struct evbuffer *out = evbuffer_new();
    if (!out || ns_ctl_state_encode(&st, out) != RMQ_OK)
        abort();
    size_t n = evbuffer_get_length(out);
    if (ns_ctl_state_decode((const char *)evbuffer_pullup(out, -1), n, &back, why, sizeof why) != RMQ_OK ||
        memcmp(&st, &back, sizeof st) != 0)
        abort();
    evbuffer_free(out);
    return 0;
}
