/* fuzz_remoting_admin.c: the broker remoting front's decoder of the one
 * administration body a peer sends (SubscriptionGroupConfig JSON,
 * broker/front/remoting/fr_remoting_admin_wire.c) over arbitrary input: a
 * parse either fails with a reason or yields a group with a valid name,
 * and writing that group back out (fr_rm_group_json) reads back to the
 * same group. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fr_remoting_admin_wire.h"
#include "rmq_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    bk_group_t grp, again;
    char why[256] = "";
    const char *rule;
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    if (fr_rm_group_parse(copy, size, &grp, why, sizeof why) != RMQ_OK) {
        if (!why[0])
            abort();
        goto out;
    }
    if (!rmq_name_is_valid(grp.name, strlen(grp.name), &rule))
        abort();
    struct evbuffer *b = evbuffer_new();
    fr_rm_group_json(b, &grp);
    size_t len = evbuffer_get_length(b);
    if (fr_rm_group_parse(evbuffer_pullup(b, -1), len, &again, why, sizeof why) != RMQ_OK ||
        memcmp(&grp, &again, sizeof grp) != 0)
        abort();
    evbuffer_free(b);
out:
    free(copy);
    return 0;
}
