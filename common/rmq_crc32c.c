/* rmq_crc32c.c: CRC-32C (Castagnoli, reflected polynomial 0x82F63B78).
 * Owns the slicing-by-8 tables (built once) and the choice between the
 * SSE4.2 crc32 instruction and the table code, made per call from the
 * CPU feature flags that libgcc caches at start-up. */
#include "rmq_crc32c.h"

#include <pthread.h>
#include <string.h>

#if defined(__x86_64__)
#include <nmmintrin.h>
#define RMQ_CRC32C_HW 1
#endif

#define CRC32C_POLY 0x82F63B78u

static uint32_t crc_table[8][256];
static pthread_once_t crc_table_once = PTHREAD_ONCE_INIT;

/* Fills crc_table: row 0 is the bytewise table, row k advances k more zero bytes. */
static void crc_table_build(void)
{
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = n;
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (CRC32C_POLY & (0u - (crc & 1u)));
        crc_table[0][n] = crc;
    }
    for (uint32_t n = 0; n < 256; n++) {
        uint32_t crc = crc_table[0][n];
        for (int k = 1; k < 8; k++) {
            crc = crc_table[0][crc & 0xff] ^ (crc >> 8);
            crc_table[k][n] = crc;
        }
    }
}

/* Loads 8 bytes from any address as a little-endian 64-bit value. */
static uint64_t load_le64(const unsigned char *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

uint32_t rmq_crc32c_sw(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    pthread_once(&crc_table_once, crc_table_build);
    crc = ~crc;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w = load_le64(p) ^ crc;
        crc = crc_table[7][w & 0xff] ^ crc_table[6][(w >> 8) & 0xff] ^
              crc_table[5][(w >> 16) & 0xff] ^ crc_table[4][(w >> 24) & 0xff] ^
              crc_table[3][(w >> 32) & 0xff] ^ crc_table[2][(w >> 40) & 0xff] ^
              crc_table[1][(w >> 48) & 0xff] ^ crc_table[0][w >> 56];
    }
    while (len-- > 0)
        crc = crc_table[0][(crc ^ *p++) & 0xff] ^ (crc >> 8);
    return ~crc;
}

#ifdef RMQ_CRC32C_HW
/* The same function with the crc32 instruction; only call when the CPU has SSE4.2. */
__attribute__((target("sse4.2")))
static uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t len)
{
    const unsigned char *p = buf;
    uint64_t c = (uint32_t)~crc;
    for (; len >= 8; p += 8, len -= 8) {
        uint64_t w;
        memcpy(&w, p, sizeof(w));
        c = _mm_crc32_u64(c, w);
    }
    uint32_t c32 = (uint32_t)c;
    while (len-- > 0)
        c32 = _mm_crc32_u8(c32, *p++);
    return ~c32;
}
#endif

uint32_t rmq_crc32c(uint32_t crc, const void *buf, size_t len)
{
#ifdef RMQ_CRC32C_HW
    if (__builtin_cpu_supports("sse4.2"))
        return crc32c_hw(crc, buf, len);
#endif
    return rmq_crc32c_sw(crc, buf, len);
}
