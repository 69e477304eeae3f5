/* fuzz_msgprops.c: libFuzzer target for rmq_props_get, the lookup over a
 * message's "name\x01value\x02..." property string (carried in send
 * headers, batch entries and stored records, so peer- and disk-supplied).
 * The first byte is the name's length, then the name, then the property
 * string. The result must lie inside the input and agree with a plainly
 * written reference lookup; the well-known names are looked up too. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

/* Reference: first piece "name\x01value" among the \x02-separated pieces. */
static const char *ref_get(const char *props, size_t len, const char *name, size_t *vlen)
{
    size_t nlen = strlen(name), start = 0;

    for (size_t i = 0; i <= len; i++) {
        if (i < len && props[i] != '\x02')
            continue;
        size_t plen = i - start;
        const char *piece = props + start;

        if (plen > nlen && piece[nlen] == '\x01' && memcmp(piece, name, nlen) == 0 &&
            memchr(piece, '\x01', nlen) == NULL) {
            *vlen = plen - nlen - 1;
            return piece + nlen + 1;
        }
        start = i + 1;
    }
    *vlen = 0;
    return NULL;
}

static void check_one(const char *props, size_t len, const char *name)
{
    size_t vlen = 12345, rlen;
    const char *v = rmq_props_get(props, len, name, &vlen);
    const char *r = ref_get(props, len, name, &rlen);

    if (v != r || vlen != rlen)
        abort();
    if (v && (v < props || v + vlen > props + len))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const known[] = { RMQ_PROP_TAGS, RMQ_PROP_KEYS, RMQ_PROP_UNIQ_KEY,
                                         RMQ_PROP_WAIT, RMQ_PROP_DELAY, "" };
    size_t nlen;
    char *name, *props;

    if (size == 0)
        return 0;
    nlen = data[0] % 32;
    if (nlen > size - 1)
        nlen = size - 1;
    name = malloc(nlen + 1);
    memcpy(name, data + 1, nlen);
    name[nlen] = '\0';
    /* an exact-size copy so ASan catches a read one past the end */
    props = malloc(size - 1 - nlen ? size - 1 - nlen : 1);
    memcpy(props, data + 1 + nlen, size - 1 - nlen);
    check_one(props, size - 1 - nlen, name);
    for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++)
        check_one(props, size - 1 - nlen, known[i]);
    free(props);
    free(name);
    return 0;
}
