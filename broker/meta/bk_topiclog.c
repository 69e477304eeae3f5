/* bk_topiclog.c: the topic change log's record codec and its file
 * operations (see bk_topiclog.h). A replay stops at the first record that
 * is not whole or fails its CRC and cuts the file there, so the next
 * append follows the last good record. */
#include "bk_topiclog.h"

#include <endian.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bk_topics_pb.h"
#include "rmq_crc32c.h"
#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_file.h"

/* Makes room for need more bytes in buf. */
static rmq_err_t buf_reserve(bk_topiclog_buf_t *buf, size_t need)
{
    if (buf->cap - buf->len >= need)
        return RMQ_OK;
    size_t cap = buf->cap ? buf->cap : 256;
    while (cap - buf->len < need)
        cap *= 2;
    uint8_t *data = realloc(buf->data, cap);
    if (!data)
        return RMQ_ENOMEM;
    buf->data = data;
    buf->cap = cap;
    return RMQ_OK;
}

rmq_err_t bk_topiclog_encode(bk_topiclog_buf_t *buf, const Rmq__HaMeta *meta)
{
    size_t n = rmq__ha_meta__get_packed_size(meta);
    if (n > BK_TOPICLOG_RECORD_MAX)
        return RMQ_ETOOBIG;
    if (buf_reserve(buf, BK_TOPICLOG_HEADER + n) != RMQ_OK)
        return RMQ_ENOMEM;
    uint8_t *p = buf->data + buf->len;
    rmq__ha_meta__pack(meta, p + BK_TOPICLOG_HEADER);
    uint32_t len_be = htobe32((uint32_t)n), crc_be = htobe32(rmq_crc32c(0, p + BK_TOPICLOG_HEADER, n));
    memcpy(p, &len_be, 4);
    memcpy(p + 4, &crc_be, 4);
    buf->len += BK_TOPICLOG_HEADER + n;
    return RMQ_OK;
}

/* RMQ_OK if meta is a topic change with a usable name (and valid
 * attributes), else why says not. */
static rmq_err_t record_check(const Rmq__HaMeta *meta, char *why, size_t whylen)
{
    const char *name = NULL;
    if (meta->change_case == RMQ__HA_META__CHANGE_TOPIC)
        name = meta->topic->topic_name;
    else if (meta->change_case == RMQ__HA_META__CHANGE_DELETED_TOPIC)
        name = meta->deleted_topic;
    if (!name) {
        snprintf(why, whylen, "record of change kind %d is not a topic's", (int)meta->change_case);
        return RMQ_ECORRUPT;
    }
    if (!name[0] || strlen(name) > RMQ_TOPIC_MAX) {
        snprintf(why, whylen, "topic name of %zu bytes (1..%u)", strlen(name), RMQ_TOPIC_MAX);
        return RMQ_ECORRUPT;
    }
    bk_topic_t topic;
    if (meta->change_case == RMQ__HA_META__CHANGE_TOPIC &&
        bk_topic_from_pb(meta->topic, 1, &topic, why, whylen) != RMQ_OK)
        return RMQ_ECORRUPT;
    return RMQ_OK;
}

rmq_err_t bk_topiclog_decode(const uint8_t *data, size_t len, size_t *used, Rmq__HaMeta **meta, char *why,
                             size_t whylen)
{
    uint32_t n, crc;
    *meta = NULL;
    if (len < BK_TOPICLOG_HEADER)
        return RMQ_EAGAIN;
    memcpy(&n, data, 4);
    memcpy(&crc, data + 4, 4);
    n = be32toh(n);
    crc = be32toh(crc);
    if (n == 0 || n > BK_TOPICLOG_RECORD_MAX) {
        snprintf(why, whylen, "record length %u (1..%u)", n, BK_TOPICLOG_RECORD_MAX);
        return RMQ_ECORRUPT;
    }
    if (len - BK_TOPICLOG_HEADER < n)
        return RMQ_EAGAIN;
    if (rmq_crc32c(0, data + BK_TOPICLOG_HEADER, n) != crc) {
        snprintf(why, whylen, "record CRC mismatch");
        return RMQ_ECORRUPT;
    }
    Rmq__HaMeta *m = rmq__ha_meta__unpack(NULL, n, data + BK_TOPICLOG_HEADER);
    if (!m) {
        snprintf(why, whylen, "record is not a HaMeta");
        return RMQ_ECORRUPT;
    }
    rmq_err_t rc = record_check(m, why, whylen);
    if (rc != RMQ_OK) {
        rmq__ha_meta__free_unpacked(m, NULL);
        return rc;
    }
    *meta = m;
    *used = BK_TOPICLOG_HEADER + n;
    return RMQ_OK;
}

/* Cuts path to len bytes durably. */
static rmq_err_t log_truncate(const char *path, size_t len)
{
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return RMQ_EIO;
    rmq_err_t rc = ftruncate(fd, (off_t)len) == 0 && fdatasync(fd) == 0 ? RMQ_OK : RMQ_EIO;
    close(fd);
    return rc;
}

/* Creates path empty and makes its directory entry durable. */
static rmq_err_t log_create(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return RMQ_EIO;
    int ok = fsync(fd) == 0;
    close(fd);
    return ok ? rmq_file_sync_parent(path) : RMQ_EIO;
}

rmq_err_t bk_topiclog_replay(const char *path, bk_topiclog_apply_fn fn, void *arg, size_t *good_len, char *err,
                             size_t errlen)
{
    char *data = NULL, why[160] = "a record torn by a crash";
    size_t len = 0, off = 0, used = 0;
    rmq_err_t rc = rmq_file_read_all(path, &data, &len);
    *good_len = 0;
    if (rc == RMQ_ENOTFOUND) {
        rc = log_create(path);
        if (rc != RMQ_OK)
            snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return rc;
    }
    if (rc != RMQ_OK) {
        snprintf(err, errlen, "%s: %s", path, rmq_strerror(rc));
        return rc;
    }
    Rmq__HaMeta *meta;
    while (off < len && (rc = bk_topiclog_decode((const uint8_t *)data + off, len - off, &used, &meta, why,
                                                 sizeof why)) == RMQ_OK) {
        int stop = fn(arg, meta);
        rmq__ha_meta__free_unpacked(meta, NULL);
        if (stop) {
            free(data);
            snprintf(err, errlen, "%s: out of memory replaying", path);
            return RMQ_ENOMEM;
        }
        off += used;
    }
    free(data);
    *good_len = off;
    if (off == len)
        return RMQ_OK;
    LOG_WARN("%s: %zu bytes after offset %zu dropped (%s)", path, len - off, off, why);
    rc = log_truncate(path, off);
    if (rc != RMQ_OK)
        snprintf(err, errlen, "%s: cannot cut the log at %zu: %s", path, off, strerror(errno));
    return rc;
}

rmq_err_t bk_topiclog_append(const char *path, const void *data, size_t len)
{
    int fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC);
    if (fd < 0) {
        LOG_ERROR_RL("%s: open: %s", path, strerror(errno));
        return RMQ_EIO;
    }
    const uint8_t *p = data;
    size_t left = len;
    rmq_err_t rc = RMQ_OK;
    while (left > 0 && rc == RMQ_OK) {
        ssize_t n = write(fd, p, left);
        if (n > 0) {
            p += n;
            left -= (size_t)n;
        } else if (n == 0 || errno != EINTR) {
            rc = n < 0 && errno == ENOSPC ? RMQ_ENOSPC : RMQ_EIO;
            LOG_ERROR_RL("%s: write: %s", path, n < 0 ? strerror(errno) : "wrote nothing");
        }
    }
    if (rc == RMQ_OK && fdatasync(fd) != 0) {
        rc = RMQ_EIO;
        LOG_ERROR_RL("%s: fdatasync: %s", path, strerror(errno));
    }
    close(fd);
    return rc;
}

rmq_err_t bk_topiclog_reset(const char *path)
{
    rmq_err_t rc = log_truncate(path, 0);
    if (rc != RMQ_OK)
        LOG_ERROR_RL("%s: truncate: %s", path, strerror(errno));
    return rc;
}
