/* st_checkpoint.h: the store checkpoint file: the commit-log offset below
 * which both the log and every consume-queue unit for it are durable, the
 * log's minimum offset and the store time of the last message covered.
 * Format (64 bytes, big-endian): "RMQCKPT1" | u32 version (1) | u32 0
 * | i64 cl_offset | i64 cl_min | i64 store_ts | 20 zero bytes
 * | u32 crc32c of the 60 bytes before it. Replaced atomically. */
#ifndef ST_CHECKPOINT_H
#define ST_CHECKPOINT_H

#include <stdint.h>

#include "rmq_err.h"

typedef struct st_checkpoint {
    int64_t cl_offset;
    int64_t cl_min;
    int64_t store_ts;
} st_checkpoint_t;

/* Writes the checkpoint durably (tmp, fsync, rename, fsync dir). Blocking:
 * flush thread, or the loop at open/close. */
rmq_err_t st_checkpoint_write(const char *path, const st_checkpoint_t *cp);

/* Reads it: RMQ_ENOTFOUND if absent, RMQ_ECORRUPT if it fails its checks. */
rmq_err_t st_checkpoint_read(const char *path, st_checkpoint_t *cp);

#endif
