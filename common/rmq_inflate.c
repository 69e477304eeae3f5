/* rmq_inflate.c: the bounded inflate (rmq_inflate.h). */
#include "rmq_inflate.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

rmq_err_t rmq_inflate(const uint8_t *in, size_t len, int window_bits, size_t max, uint8_t **out, size_t *outlen,
                      char *why, size_t whylen)
{
    z_stream zs = {0};
    size_t cap = len * 4 + 1024, used = 0;
    uint8_t *buf = NULL;
    rmq_err_t err = RMQ_ECORRUPT;

    if (cap > max)
        cap = max;
    if (inflateInit2(&zs, window_bits) != Z_OK)
        return RMQ_ENOMEM;
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    for (;;) {
        uint8_t *grown = realloc(buf, cap ? cap : 1);
        if (!grown) {
            err = RMQ_ENOMEM;
            goto out;
        }
        buf = grown;
        zs.next_out = buf + used;
        zs.avail_out = (uInt)(cap - used);
        int zrc = inflate(&zs, Z_NO_FLUSH);
        used = cap - zs.avail_out;
        if (zrc == Z_STREAM_END)
            break;
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
            snprintf(why, whylen, "not zlib data (%s)", zs.msg ? zs.msg : "inflate failed");
            goto out;
        }
        if (zs.avail_out != 0) {
            snprintf(why, whylen, "zlib data is truncated");
            goto out;
        }
        if (cap == max) {
            snprintf(why, whylen, "inflates to more than %zu bytes", max);
            goto out;
        }
        cap = cap * 2 > max ? max : cap * 2;
    }
    if (zs.avail_in != 0) {
        snprintf(why, whylen, "%u bytes after the zlib stream", zs.avail_in);
        goto out;
    }
    *out = buf;
    *outlen = used;
    buf = NULL;
    err = RMQ_OK;
out:
    inflateEnd(&zs);
    free(buf);
    return err;
}
