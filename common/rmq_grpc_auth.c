/* rmq_grpc_auth.c: RocketMQ 5's gRPC call signature (see the header):
 * parsing the authorization value, signing the date-time, and deciding
 * who a call comes from with the ACL policy's shared checks. */
#include "rmq_grpc_auth.h"

#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>

#define GRPC_AUTH_SCHEME "MQv2-HMAC-SHA1"

/* Copies [from, to) without surrounding blanks into out (max bytes + NUL);
 * -1 if it does not fit. */
static int copy_trimmed(const char *from, const char *to, char *out, size_t max)
{
    while (from < to && isspace((unsigned char)*from))
        from++;
    while (to > from && isspace((unsigned char)to[-1]))
        to--;
    if ((size_t)(to - from) > max)
        return -1;
    memcpy(out, from, (size_t)(to - from));
    out[to - from] = '\0';
    return 0;
}

/* One "Key=Value" item of [from, to): the Credential's access key or the
 * Signature into their buffers; other keys (SignedHeaders) are skipped. */
static int parse_item(const char *from, const char *to, char *access_key, char *signature, const char **why)
{
    const char *eq = memchr(from, '=', (size_t)(to - from));
    char key[32];
    if (!eq || copy_trimmed(from, eq, key, sizeof key - 1) != 0)
        return 0;
    if (strcmp(key, "Credential") == 0) {
        const char *slash = memchr(eq + 1, '/', (size_t)(to - eq - 1));
        if (copy_trimmed(eq + 1, slash ? slash : to, access_key, RMQ_GRPC_AUTH_KEY_MAX) != 0)
            return *why = "its Credential is too long", -1;
    } else if (strcmp(key, "Signature") == 0 &&
               copy_trimmed(eq + 1, to, signature, RMQ_GRPC_AUTH_KEY_MAX) != 0) {
        return *why = "its Signature is too long", -1;
    }
    return 0;
}

int rmq_grpc_auth_parse(const char *authorization, char access_key[RMQ_GRPC_AUTH_KEY_MAX + 1],
                        char signature[RMQ_GRPC_AUTH_KEY_MAX + 1], const char **why)
{
    size_t scheme_len = strlen(GRPC_AUTH_SCHEME);
    access_key[0] = signature[0] = '\0';
    if (strncmp(authorization, GRPC_AUTH_SCHEME, scheme_len) != 0 || authorization[scheme_len] != ' ')
        return *why = "it is not " GRPC_AUTH_SCHEME " Credential=..., SignedHeaders=..., Signature=...", -1;
    const char *p = authorization + scheme_len + 1;
    while (*p) {
        const char *end = strchr(p, ',');
        if (!end)
            end = p + strlen(p);
        if (parse_item(p, end, access_key, signature, why) != 0)
            return -1;
        p = *end ? end + 1 : end;
    }
    if (!access_key[0] || !signature[0])
        return *why = !access_key[0] ? "it names no Credential" : "it has no Signature", -1;
    return 0;
}

void rmq_grpc_auth_sign(const char *secret, const char *date_time, char out[41])
{
    static const char hex[] = "0123456789ABCDEF";
    uint8_t mac[EVP_MAX_MD_SIZE];
    unsigned maclen = 0;
    out[0] = '\0';
    if (!HMAC(EVP_sha1(), secret, (int)strlen(secret), (const uint8_t *)date_time, strlen(date_time), mac, &maclen) ||
        maclen != 20)
        return;                      /* no signature matches "" */
    for (unsigned i = 0; i < maclen; i++) {
        out[2 * i] = hex[mac[i] >> 4];
        out[2 * i + 1] = hex[mac[i] & 15];
    }
    out[40] = '\0';
}

int rmq_grpc_authenticate(const rmq_acl_t *acl, const char *peer, const char *authorization,
                          const char *date_time, int64_t now_ms, const char *op,
                          const rmq_acl_account_t **account, char *remark, size_t remarklen)
{
    char access_key[RMQ_GRPC_AUTH_KEY_MAX + 1], signature[RMQ_GRPC_AUTH_KEY_MAX + 1], want[41];
    const char *why = NULL;
    *account = NULL;
    if (!authorization || !authorization[0]) {
        if (rmq_acl_account_of(acl, peer, NULL, account) > 0)
            return 1;
        snprintf(remark, remarklen, "no permission: %s from %s is not signed (the client sets no credentials) "
                 "and the address is not whitelisted", op, peer);
        return -1;
    }
    if (rmq_grpc_auth_parse(authorization, access_key, signature, &why) != 0) {
        snprintf(remark, remarklen, "no permission: %s: metadata authorization: %s", op, why);
        return -1;
    }
    /* the date-time signs no clock (the header): the signing time given is now */
    int rc = rmq_acl_authenticate(acl, peer, access_key, now_ms, now_ms, op, account, remark, remarklen);
    if (rc != 0)
        return rc > 0 ? 1 : -1;
    for (char *s = signature; *s; s++)
        *s = (char)toupper((unsigned char)*s);
    rmq_grpc_auth_sign(rmq_acl_account_secret(*account), date_time ? date_time : "", want);
    if (!date_time || !rmq_acl_sig_equal(want, signature)) {
        snprintf(remark, remarklen, "no permission: account %s: signature of %s does not match its x-mq-date-time%s",
                 rmq_acl_account_key(*account), op, date_time ? "" : " (absent)");
        *account = NULL;
        return -1;
    }
    return 0;
}
