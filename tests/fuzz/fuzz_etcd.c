/* fuzz_etcd.c: libFuzzer target for the etcd answer decoder (rmq_etcd.h).
 * The first byte picks the call and whether the HTTP status is 200; the
 * rest is the body. Every answer decodes or is refused with a message; a
 * decoded answer's pairs are NUL-terminated copies of their lengths and an
 * error carries no pairs. */
#include "rmq_etcd.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rmq_etcd_result_t res;

    if (size == 0)
        return 0;
    rmq_etcd_call_t call = (rmq_etcd_call_t)(data[0] % 6);
    int status = data[0] & 0x80 ? 400 + (data[0] & 0x7f) : 200;
    rmq_err_t rc = rmq_etcd_decode(call, status, (const char *)data + 1, size - 1, &res);
    if (rc != res.err || (rc != RMQ_OK && (res.msg[0] == '\0' || res.n_kvs != 0)))
        abort();
    if (status != 200 && rc == RMQ_OK)
        abort();
    for (size_t i = 0; i < res.n_kvs; i++)
        if (!res.kvs[i].key || !res.kvs[i].value || res.kvs[i].key[res.kvs[i].key_len] != '\0' ||
            res.kvs[i].value[res.kvs[i].value_len] != '\0')
            abort();
    rmq_etcd_result_clear(&res);
    return 0;
}
