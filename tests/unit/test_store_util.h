/* test_store_util.h: helpers shared by the store unit tests: a temp dir per
 * case, a small-file configuration, message puts and record checks. */
#ifndef TEST_STORE_UTIL_H
#define TEST_STORE_UTIL_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "rmq_message.h"
#include "st_store.h"

#define TS_FILE_SIZE (64 * 1024)
#define TS_CQ_PER_FILE 64

typedef struct ts_env {
    char dir[64];
    st_store_config_t cfg;
} ts_env_t;

/* Creates a temp dir and a configuration with 64 KiB commit-log files and
 * 64-unit consume-queue files; the transient store pool (two buffers) is
 * on when RMQ_TEST_TRANSIENT_POOL is set (the *_pool suites). */
void ts_env_init(ts_env_t *env);
/* Removes the temp dir and everything under it. */
void ts_env_cleanup(ts_env_t *env);

/* Opens the store or fails the test with the reason. */
st_store_t *ts_open(const ts_env_t *env);

/* Puts one message whose body is derived from seq (len bytes) with an
 * optional tag; the outcome goes into res. */
void ts_put(st_store_t *st, const char *topic, int32_t qid, uint32_t seq, size_t len,
            const char *tag, st_put_result_t *res);

/* Fills buf with the body of message seq. */
void ts_body(uint32_t seq, uint8_t *buf, size_t len);

/* Decodes every record in buf (CRC checked); returns how many, storing up
 * to max of them in out (pointers into *flat, which the caller frees). */
size_t ts_records(struct evbuffer *buf, rmq_record_t *out, size_t max, uint8_t **flat);

/* Checks that rec carries the body of message seq. */
void ts_check_body(const rmq_record_t *rec, uint32_t seq);

/* Reads queue qid of topic from offset 0: count messages, each at its
 * queue offset, message i's body that of seq first_seq + i * seq_step. */
void ts_check_queue(st_store_t *st, const char *topic, int32_t qid, uint32_t first_seq,
                    uint32_t seq_step, int64_t count);

/* Path of a file under the store root. */
void ts_path(const ts_env_t *env, char *out, size_t len, const char *rel);

/* Runs fn(env) in a child process that exits without closing anything
 * (a kill-style crash), and waits for it. */
void ts_crash_child(ts_env_t *env, void (*fn)(ts_env_t *env));

#endif
