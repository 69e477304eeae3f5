/* fuzz_topic_attr.c: libFuzzer target for the topic attributes
 * (rmq_topic_attr.h): the kept text (from disk or a peer) and the
 * "+key=value,-key" modification UPDATE_AND_CREATE_TOPIC carries. The
 * first byte picks creation or update; the rest is "current\nmodification".
 * Checks: a current text that passes the check is applied to; every result
 * passes the check, applies an empty modification to itself unchanged and
 * iterates back to the same text; a refusal names why. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_topic_attr.h"

/* Rebuilds text from its pairs; aborts unless it is the same. */
static void iterate_back(const char *text)
{
    char again[RMQ_TOPIC_ATTRS_MAX * 2] = "", key[64], value[64];
    size_t cursor = 0, at = 0;
    while (rmq_topic_attrs_next(text, &cursor, key, sizeof(key), value, sizeof(value)))
        at += (size_t)snprintf(again + at, sizeof(again) - at, "%s%s=%s", at ? "," : "", key, value);
    if (strcmp(again, text) != 0)
        abort();
    (void)rmq_topic_attrs_msg_type(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char current[RMQ_TOPIC_ATTRS_MAX] = "", out[RMQ_TOPIC_ATTRS_MAX], again[RMQ_TOPIC_ATTRS_MAX], why[256];
    if (size < 1)
        return 0;
    int create = data[0] & 1;
    const char *rest = (const char *)data + 1;
    size_t len = size - 1;
    const char *nl = memchr(rest, '\n', len);
    size_t clen = nl ? (size_t)(nl - rest) : 0;
    if (clen < sizeof(current) && rmq_topic_attrs_check(rest, clen, why, sizeof(why)) == RMQ_OK)
        memcpy(current, rest, clen);
    const char *mod = nl ? nl + 1 : rest;
    size_t mlen = len - (size_t)(mod - rest);
    why[0] = 0;
    if (rmq_topic_attrs_alter(current, create, mod, mlen, out, sizeof(out), why, sizeof(why)) != RMQ_OK) {
        if (!why[0])
            abort();
        return 0;
    }
    if (rmq_topic_attrs_check(out, strlen(out), why, sizeof(why)) != RMQ_OK ||
        rmq_topic_attrs_alter(out, 0, "", 0, again, sizeof(again), why, sizeof(why)) != RMQ_OK ||
        strcmp(out, again) != 0)
        abort();
    iterate_back(out);
    return 0;
}
