/* rmq_crc32c.h: CRC-32C (Castagnoli), with the SSE4.2 crc32 instruction when
 * the CPU has it and a table-driven fallback otherwise. */
#ifndef RMQ_CRC32C_H
#define RMQ_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extends crc (0 to start) over buf. Any thread. */
uint32_t rmq_crc32c(uint32_t crc, const void *buf, size_t len);

/* The portable implementation, exposed so tests can compare both. */
uint32_t rmq_crc32c_sw(uint32_t crc, const void *buf, size_t len);

#endif
