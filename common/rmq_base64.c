/* rmq_base64.c: base64 decoding (see rmq_base64.h) over OpenSSL's block decoder. */
#include "rmq_base64.h"

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
