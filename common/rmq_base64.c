/* rmq_base64.c: base64 decoding, and URL-safe base64 both ways (see rmq_base64.h), over OpenSSL's block codec. */
#include "rmq_base64.h"

#include <stdint.h>
#include <stdlib.h>

#include <openssl/evp.h>

int rmq_base64_decode(const char *text, size_t n, size_t max, char **out, size_t *out_len)
{
    size_t pad = 0;

    *out = NULL;
    if (n % 4 != 0 || n > max)
        return -1;
    while (pad < 2 && pad < n && text[n - 1 - pad] == '=')
        pad++;
    for (size_t i = 0; i < n - pad; i++)
        if (!((text[i] >= 'A' && text[i] <= 'Z') || (text[i] >= 'a' && text[i] <= 'z') ||
              (text[i] >= '0' && text[i] <= '9') || text[i] == '+' || text[i] == '/'))
            return -1;
    unsigned char *dec = malloc(n / 4 * 3 + 1);
    if (!dec)
        return -1;
    int len = n ? EVP_DecodeBlock(dec, (const unsigned char *)text, (int)n) : 0;
    if (len < (int)pad) {
        free(dec);
        return -1;
    }
    len -= (int)pad;              /* EVP_DecodeBlock counts padding as zero bytes */
    dec[len] = '\0';
    *out = (char *)dec;
    *out_len = (size_t)len;
    return 0;
}

size_t rmq_base64url_encode(const void *data, size_t n, char *out, size_t cap)
{
    size_t len = (n + 2) / 3 * 4;
    if (cap <= len || n > INT32_MAX / 2)
        return 0;
    EVP_EncodeBlock((unsigned char *)out, data, (int)n);
    for (size_t i = 0; i < len; i++)
        out[i] = out[i] == '+' ? '-' : out[i] == '/' ? '_' : out[i];
    out[len] = '\0';
    return len;
}

int rmq_base64url_decode(const char *text, size_t n, size_t max, char **out, size_t *out_len)
{
    *out = NULL;
    if (n > max || n % 4 == 1)
        return -1;
    size_t padded = (n + 3) / 4 * 4;
    char *std = malloc(padded + 1);
    if (!std)
        return -1;
    for (size_t i = 0; i < padded; i++) {
        char c = i < n ? text[i] : '=';
        /* the standard alphabet's own '+' and '/' are not URL-safe base64: refused */
        std[i] = c == '-' ? '+' : c == '_' ? '/' : c == '+' || c == '/' ? '!' : c;
    }
    int rc = rmq_base64_decode(std, padded, max + 3, out, out_len);
    free(std);
    return rc;
}
