/* fuzz_http_basic.c: libFuzzer target for the decoders of a peer's
 * authorization header: rmq_http_basic_parse ("Authorization: Basic ..." on
 * the metrics and console port) and rmq_grpc_auth_parse (RocketMQ 5's
 * "MQv2-HMAC-SHA1 Credential=..., Signature=..." on gRPC calls). Whatever
 * the bytes, neither may read or write out of bounds; on success the fields
 * are NUL-terminated inside their arrays and the access key is not empty
 * (Basic's holds no colon: it ends at the first). */
#include <assert.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_grpc_auth.h"
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
    char ak[RMQ_GRPC_AUTH_KEY_MAX + 1], sig[RMQ_GRPC_AUTH_KEY_MAX + 1];
    const char *why = NULL;
    if (rmq_grpc_auth_parse(value, ak, sig, &why) == 0)
        assert(ak[0] && sig[0] && strlen(ak) <= RMQ_GRPC_AUTH_KEY_MAX && strlen(sig) <= RMQ_GRPC_AUTH_KEY_MAX);
    else
        assert(why != NULL);
    free(value);
    return 0;
}
