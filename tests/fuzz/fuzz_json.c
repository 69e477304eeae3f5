/* fuzz_json.c: libFuzzer target for the strict JSON reader (rmq_json.h):
 * any input parses or is refused with a message, within the depth and
 * value limits; a parsed tree is walked whole (every string is a C string
 * of its recorded length, every object member has a key). */
#include "rmq_json.h"

#include <stdlib.h>
#include <string.h>

/* Walks v; returns the number of values, aborting on a broken invariant. */
static size_t walk(const rmq_json_t *v, int depth)
{
    size_t n = 1;

    if (depth > RMQ_JSON_DEPTH_MAX + 1)
        abort();
    if (v->str != NULL && strlen(v->str) != v->len)
        abort();
    if ((v->type == RMQ_JSON_STRING || v->type == RMQ_JSON_NUMBER || v->type == RMQ_JSON_BOOL) !=
        (v->str != NULL))
        abort();
    for (size_t i = 0; i < v->n; i++) {
        if (v->type == RMQ_JSON_OBJECT && (v->keys == NULL || v->keys[i] == NULL))
            abort();
        n += walk(v->items[i], depth + 1);
    }
    return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[128];
    int64_t i;
    rmq_json_t *v = rmq_json_parse((const char *)data, size, err, sizeof(err));

    if (v == NULL) {
        if (err[0] == '\0')
            abort();
        return 0;
    }
    if (walk(v, 1) > RMQ_JSON_NODES_MAX)
        abort();
    (void)rmq_json_int(v, INT64_MIN, INT64_MAX, &i);
    (void)rmq_json_get(v, "code");
    rmq_json_free(v);
    return 0;
}
