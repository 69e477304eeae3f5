/* ha_tail.c: CRC32C over a commit-log range for the handshake's divergence
 * check, read through st_store_read_raw (references, no copy). */
#include "ha_tail.h"

#include <event2/buffer.h>

#include "rmq_crc32c.h"

void ha_tail_range(int64_t min, int64_t max, int64_t *offset, uint32_t *len)
{
    int64_t start = max - HA_TAIL_CHECK > min ? max - HA_TAIL_CHECK : min;

    *offset = start;
    *len = (uint32_t)(max - start);
}

/* Extends crc over every byte in buf. */
static uint32_t crc_evbuffer(uint32_t crc, struct evbuffer *buf)
{
    struct evbuffer_iovec v[8];
    struct evbuffer_ptr pos;
    int n;

    evbuffer_ptr_set(buf, &pos, 0, EVBUFFER_PTR_SET);
    while ((n = evbuffer_peek(buf, -1, &pos, v, 8)) > 0) {
        size_t done = 0;
        int used = n < 8 ? n : 8;

        for (int i = 0; i < used; i++) {
            crc = rmq_crc32c(crc, v[i].iov_base, v[i].iov_len);
            done += v[i].iov_len;
        }
        if (n <= 8)
            break;
        evbuffer_ptr_set(buf, &pos, done, EVBUFFER_PTR_ADD);
    }
    return crc;
}

rmq_err_t ha_tail_crc(st_store_t *st, int64_t offset, uint32_t len, uint32_t *crc)
{
    struct evbuffer *buf = evbuffer_new();
    int64_t pos = offset, end = offset + len;
    rmq_err_t rc = RMQ_OK;

    if (!buf)
        return RMQ_ENOMEM;
    *crc = 0;
    while (pos < end) {
        int64_t n = st_store_read_raw(st, pos, (size_t)(end - pos), buf);

        if (n <= 0) {
            rc = n < 0 ? (rmq_err_t)n : RMQ_ENOTFOUND;
            break;
        }
        *crc = crc_evbuffer(*crc, buf);
        evbuffer_drain(buf, evbuffer_get_length(buf));
        pos += n;
    }
    evbuffer_free(buf);
    return rc;
}
