/* bk_persist.h: writes metadata files (topics, subscription groups,
 * consumer offsets) on a worker thread so the event loop never waits on
 * fsync. Each write replaces its file atomically (st_file_write_atomic);
 * when several writes of one path are queued, only the newest is written. */
#ifndef BK_PERSIST_H
#define BK_PERSIST_H

#include <stddef.h>

#include "rmq_err.h"

typedef struct bk_persist bk_persist_t;

/* Starts the worker thread. Owner: caller. NULL on failure. */
bk_persist_t *bk_persist_new(void);
/* Queues data (malloc'ed, taken) to replace path. Any thread. */
rmq_err_t bk_persist_submit(bk_persist_t *p, const char *path, void *data, size_t len);

/* Called on the writer thread once a job's file is replaced (rc RMQ_OK) or
 * the write failed. */
typedef void (*bk_persist_done_fn)(void *arg, rmq_err_t rc);
/* Like bk_persist_submit, and done(arg, rc) runs after the write. Such a
 * job is never merged with another: its caller keeps at most one in flight
 * per path. On RMQ_ENOMEM done is not called. Any thread. */
rmq_err_t bk_persist_submit_cb(bk_persist_t *p, const char *path, void *data, size_t len,
                               bk_persist_done_fn done, void *arg);
/* Writes everything queued, stops the thread and frees p. Blocks. */
void bk_persist_free(bk_persist_t *p);
/* Number of writes that failed so far (each is logged). Any thread. */
unsigned long bk_persist_failures(bk_persist_t *p);

#endif
