/* st_checkpoint.c: encoding and atomic replacement of the checkpoint file. */
#include "st_checkpoint.h"

#include <stdlib.h>
#include <string.h>

#include "rmq_crc32c.h"
#include "rmq_file.h"

#define CP_SIZE 64
#define CP_MAGIC "RMQCKPT1"
#define CP_VERSION 1u

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;

    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (24 - 8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

rmq_err_t st_checkpoint_write(const char *path, const st_checkpoint_t *cp)
{
    uint8_t buf[CP_SIZE] = {0};

    memcpy(buf, CP_MAGIC, 8);
    put32(buf + 8, CP_VERSION);
    put64(buf + 16, (uint64_t)cp->cl_offset);
    put64(buf + 24, (uint64_t)cp->cl_min);
    put64(buf + 32, (uint64_t)cp->store_ts);
    put32(buf + 60, rmq_crc32c(0, buf, 60));
    return rmq_file_write_atomic(path, buf, sizeof(buf));
}

rmq_err_t st_checkpoint_read(const char *path, st_checkpoint_t *cp)
{
    char *data;
    size_t len;
    const uint8_t *p;
    rmq_err_t rc = rmq_file_read_all(path, &data, &len);

    if (rc != RMQ_OK)
        return rc;
    p = (const uint8_t *)data;
    if (len != CP_SIZE || memcmp(p, CP_MAGIC, 8) != 0 || get32(p + 8) != CP_VERSION ||
        get32(p + 60) != rmq_crc32c(0, p, 60)) {
        free(data);
        return RMQ_ECORRUPT;
    }
    cp->cl_offset = (int64_t)get64(p + 16);
    cp->cl_min = (int64_t)get64(p + 24);
    cp->store_ts = (int64_t)get64(p + 32);
    free(data);
    return RMQ_OK;
}
