/* fuzz_http_basic.c: libFuzzer target for rmq_http_basic_parse, the
 * decoder of a peer's "Authorization: Basic ..." header on the metrics and
 * console port. Whatever the bytes, it must not read or write out of
 * bounds; on success the fields are NUL-terminated inside their arrays,
 * the access key is not empty and holds no colon (it ends at the first). */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_http.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *value = malloc(size + 1);
    rmq_acl_credentials_t cred;
    if (!value)
        return 0;
    memcpy(value, data, size);
    value[size] = '\0';
    if (rmq_http_basic_parse(value, &cred) == 0) {
        size_t ak = strnlen(cred.access_key, sizeof(cred.access_key));
        size_t sk = strnlen(cred.secret_key, sizeof(cred.secret_key));
        assert(ak > 0 && ak < sizeof(cred.access_key) && sk < sizeof(cred.secret_key));
        assert(memchr(cred.access_key, ':', ak) == NULL);
    }
    free(value);
    return 0;
}
