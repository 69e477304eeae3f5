/* bk_query.h: reading stored messages back on neutral requests: one message
 * by its commit-log offset (what a message id names), and the messages of a
 * topic by key from the key index. The reader says which topics the caller
 * may read: a message id or offset names any record of the log, so the
 * record's own topic is checked where the record is read. Also the reader
 * type the send-back path (bk_sendback.h) checks with. Loop thread only. */
#ifndef BK_QUERY_H
#define BK_QUERY_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "bk_status.h"
#include "st_store.h"

/* Who is asking, as the front-end's access control sees it: may_read(arg,
 * topic) is 1 if the caller may read (subscribe to) messages of topic, else
 * 0 with why (a reason naming the caller and the topic) filled. A NULL
 * reader, or a NULL may_read, reads everything (access control off, or a
 * trusted peer). */
typedef struct bk_reader {
    int (*may_read)(void *arg, const char *topic, char *why, size_t whylen);
    void *arg;
} bk_reader_t;

/* 1 if rd may read topic[0..len); else 0 with r set (BK_NO_PERMISSION). */
int bk_reader_check(const bk_reader_t *rd, const char *topic, size_t len, bk_result_t *r);

/* Appends the raw record at commit-log offset to body (the caller's) if rd
 * may read its topic. BK_OK, BK_BAD_REQUEST (no record there) or
 * BK_NO_PERMISSION, with r's reason; body is left as it was on failure. */
bk_status_t bk_query_view(st_store_t *store, int64_t offset, const bk_reader_t *rd, struct evbuffer *body,
                          bk_result_t *r);

/* A search by key as the front-end decoded it. Strings are borrowed. */
typedef struct bk_query_key_req {
    const char *topic;
    const char *key;                 /* a KEYS word or the UNIQ_KEY */
    int32_t max_num;                 /* <= 0 or over the limit: the limit */
    int64_t begin_ms;
    int64_t end_ms;                  /* <= 0: no end */
} bk_query_key_req_t;

/* Appends the raw records of req->topic carrying req->key within the time
 * range, newest first and at most max_num (defaultQueryMaxNum) of them, to
 * body; *count says how many. BK_OK (count >= 1), BK_NOT_FOUND (none, or
 * the index is off: the reason says which), BK_BAD_REQUEST (no topic or
 * key) or BK_SYSTEM_ERROR, with r's reason. */
bk_status_t bk_query_key(st_store_t *store, const bk_query_key_req_t *req, int32_t max_num, struct evbuffer *body,
                         int32_t *count, bk_result_t *r);

#endif
