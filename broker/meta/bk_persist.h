/* bk_persist.h: writes metadata files (topics, subscription groups,
 * consumer offsets) on a worker thread so the event loop never waits on
 * fsync. Each write replaces its file atomically (rmq_file_write_atomic);
 * when several writes of one path are queued, only the newest is written.
 * Other blocking work (the topic table's change log and its compaction)
 * runs there too, in submission order with the writes. */
#ifndef BK_PERSIST_H
#define BK_PERSIST_H

#include <stddef.h>

#include "rmq_err.h"

typedef struct bk_persist bk_persist_t;

/* Starts the worker thread. Owner: caller. NULL on failure. */
bk_persist_t *bk_persist_new(void);
/* Queues data (malloc'ed, taken) to replace path. Any thread. */
rmq_err_t bk_persist_submit(bk_persist_t *p, const char *path, void *data, size_t len);

/* Blocking work for the writer thread, and what runs after it there with
 * its result (and owns arg). */
typedef rmq_err_t (*bk_persist_work_fn)(void *arg);
typedef void (*bk_persist_done_fn)(void *arg, rmq_err_t rc);
/* Queues work(arg), then done(arg, rc), behind what is queued; never
 * merged with another job. On RMQ_ENOMEM neither runs. Any thread. */
rmq_err_t bk_persist_run(bk_persist_t *p, bk_persist_work_fn work, bk_persist_done_fn done, void *arg);
/* Writes everything queued, stops the thread and frees p. Blocks. */
void bk_persist_free(bk_persist_t *p);
/* Number of writes and work jobs that failed so far (each is logged). Any
 * thread. */
unsigned long bk_persist_failures(bk_persist_t *p);

#endif
