/* bk_topiclog.h: the topic table's append-only change log
 * (config/topics.log). Each topic change is one record
 *   u32 payload length | u32 CRC32C of the payload | payload
 * (big-endian), the payload a packed HaMeta holding the topic (created or
 * replaced) or its name (deleted) and the table's data version after the
 * change: the same typed change an HA master streams to its slaves. The
 * full table file (topics.pb) plus the log's records newer than the table's
 * version is the table; a torn or corrupt record ends the log. Blocking I/O
 * on the metadata writer thread (appends, resets) or at start-up (replay);
 * encoding and decoding touch no file and run on any thread. */
#ifndef BK_TOPICLOG_H
#define BK_TOPICLOG_H

#include <stddef.h>
#include <stdint.h>

#include "ha.pb-c.h"
#include "rmq_err.h"

#define BK_TOPICLOG_HEADER 8u
#define BK_TOPICLOG_RECORD_MAX 4096u     /* payload bytes of one record */

/* A growable byte buffer of encoded records. */
typedef struct bk_topiclog_buf {
    uint8_t *data;
    size_t len, cap;
} bk_topiclog_buf_t;

/* Appends meta's record to buf. RMQ_ETOOBIG past BK_TOPICLOG_RECORD_MAX,
 * RMQ_ENOMEM; buf is unchanged on error. Any thread. */
rmq_err_t bk_topiclog_encode(bk_topiclog_buf_t *buf, const Rmq__HaMeta *meta);

/* Decodes the record at data[0..len): RMQ_OK with *used its size and *meta
 * (owner: caller, rmq__ha_meta__free_unpacked); RMQ_EAGAIN when len holds
 * less than a whole record (a torn tail); RMQ_ECORRUPT with why filled for
 * a bad length or CRC, a payload that is not a HaMeta, or a change that is
 * not a topic's or whose name is empty or over RMQ_TOPIC_MAX bytes. Any
 * thread. */
rmq_err_t bk_topiclog_decode(const uint8_t *data, size_t len, size_t *used, Rmq__HaMeta **meta, char *why,
                             size_t whylen);

/* Called once per record in log order; non-zero stops the replay with
 * RMQ_ENOMEM. */
typedef int (*bk_topiclog_apply_fn)(void *arg, const Rmq__HaMeta *meta);

/* Reads path (missing: created empty, its directory synced), applies every
 * whole record through fn and cuts what follows the last good one (a
 * record torn by a crash), logging where and why. *good_len is the log's
 * length after. RMQ_EIO / RMQ_ENOMEM with err filled. Start-up only. */
rmq_err_t bk_topiclog_replay(const char *path, bk_topiclog_apply_fn fn, void *arg, size_t *good_len, char *err,
                             size_t errlen);

/* Appends data[0..len) to path and fdatasyncs it. The file must exist (a
 * replay created it). Writer thread. */
rmq_err_t bk_topiclog_append(const char *path, const void *data, size_t len);

/* Empties path durably (the table file now holds every change). Writer
 * thread. */
rmq_err_t bk_topiclog_reset(const char *path);

#endif
