/* st_epoch.h: the epoch file of a controller-mode broker (storePathEpochFile,
 * RocketMQ's EpochFileCache): one "<epoch> <startOffset>" line per master
 * epoch this commit log has held, epochs strictly ascending, start offsets
 * never decreasing. A new master appends <its epoch, its log end>; a broker
 * that follows a master finds the last epoch both logs share (same epoch,
 * same start) and truncates its log to where either copy of that epoch ends.
 * The file is replaced atomically (rmq_file_write_atomic), so a crash leaves
 * the old or the new list, never a torn one. Blocking I/O; one owner thread. */
#ifndef ST_EPOCH_H
#define ST_EPOCH_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"

#define ST_EPOCH_MAX 4096          /* entries a file may hold */

typedef struct st_epoch_entry {
    int64_t epoch;                 /* >= 1 */
    int64_t start_offset;          /* commit-log offset of the epoch's first byte */
} st_epoch_entry_t;

typedef struct st_epoch st_epoch_t;

/* 1 if <epoch, start_offset> may follow prev (NULL: the first entry):
 * epoch >= 1 and above prev's, start_offset >= 0 and not below prev's.
 * The one ordering rule of an epoch list (file, append, a master's list on
 * the wire). Pure. */
int st_epoch_follows(const st_epoch_entry_t *prev, int64_t epoch, int64_t start_offset);

/* Parses a file's text into out[0..cap); *n entries. RMQ_ECORRUPT with the
 * line and the rule in why: a line that is not two decimal integers, an
 * epoch below 1 or not above the previous one, an offset below 0 or below
 * the previous one, more than cap lines. Any thread. */
rmq_err_t st_epoch_parse(const char *text, size_t len, st_epoch_entry_t *out, size_t cap, size_t *n,
                         char *why, size_t whylen);

/* Opens (reads) the epoch file at path; a missing file is an empty list.
 * NULL with why (path and reason) when it cannot be read or parsed.
 * Owner: caller (st_epoch_close). */
st_epoch_t *st_epoch_open(const char *path, char *why, size_t whylen);
void st_epoch_close(st_epoch_t *ef);

size_t st_epoch_count(const st_epoch_t *ef);
const st_epoch_entry_t *st_epoch_entries(const st_epoch_t *ef);

/* Appends <epoch, start_offset> and rewrites the file durably. RMQ_EINVAL
 * (why) when epoch is not above the last or start_offset below the last
 * start; RMQ_ETOOBIG past ST_EPOCH_MAX; the write's error otherwise (the
 * list is then unchanged). */
rmq_err_t st_epoch_append(st_epoch_t *ef, int64_t epoch, int64_t start_offset, char *why, size_t whylen);

/* After the log was truncated to offset: drops every epoch starting at or
 * past it and rewrites the file durably when that changed anything. */
rmq_err_t st_epoch_truncate(st_epoch_t *ef, int64_t offset);

/* The offset up to which a log with epochs mine (ending at my_end) agrees
 * with a master's log with epochs theirs (ending at their_end): the end of
 * the newest epoch both hold with the same start, in whichever copy ends
 * first. -1 when they share no epoch. Pure; any thread. */
int64_t st_epoch_consistent_end(const st_epoch_entry_t *mine, size_t n_mine, int64_t my_end,
                                const st_epoch_entry_t *theirs, size_t n_theirs, int64_t their_end);

#endif
