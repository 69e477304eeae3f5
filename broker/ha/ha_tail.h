/* ha_tail.h: the divergence check. A slave sends the CRC32C of the last few
 * KiB of its commit log; the master computes the same range of its own log
 * and refuses the slave if they differ. Internal to broker/ha. */
#ifndef HA_TAIL_H
#define HA_TAIL_H

#include <stdint.h>

#include "rmq_err.h"
#include "st_store.h"

#define HA_TAIL_CHECK 4096

/* The range a log [min, max) is checked over: its last HA_TAIL_CHECK bytes. */
void ha_tail_range(int64_t min, int64_t max, int64_t *offset, uint32_t *len);

/* CRC32C of st's commit-log bytes [offset, offset + len), read from the
 * mapped files (across file boundaries). RMQ_ENOTFOUND if any byte is not
 * in the retained log. Loop thread. */
rmq_err_t ha_tail_crc(st_store_t *st, int64_t offset, uint32_t len, uint32_t *crc);

#endif
