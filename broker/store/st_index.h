/* st_index.h: the message key index (RocketMQ IndexFile). Every message
 * with KEYS (space-separated) or UNIQ_KEY is indexed under "topic#key" in
 * a hash file covering a range of the commit log: header (40 bytes) +
 * slots (4 bytes each) + entries (20 bytes each); a slot holds the newest
 * entry number of its hash, each entry the previous one (0 ends a chain).
 * Files live in ROOT/index, named by the commit-log offset of the first
 * record they index; a full file is sealed (synced on the housekeeping
 * thread, then recorded in ROOT/index/checkpoint as durable) and a new one
 * begun. Built on dispatch, idempotent for replayed records, rebuilt from
 * the commit log after a crash, deleted with the commit log it points to.
 * The next file is pre-created on the housekeeping thread and renamed into
 * place at the roll (st_index.c). Loop thread throughout, unless noted. */
#ifndef ST_INDEX_H
#define ST_INDEX_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_err.h"

typedef struct st_index st_index_t;
struct st_store;

#define ST_INDEX_HEADER 40
#define ST_INDEX_SLOT 4
#define ST_INDEX_ENTRY 20

/* One header, decoded (host byte order in the file; the files never leave
 * the host that wrote them). */
typedef struct st_index_header {
    int64_t begin_ts, end_ts;        /* store times of the first / last entry, ms */
    int64_t begin_phys, end_phys;    /* first record indexed / end of the last */
    int32_t slot_num;
    int32_t index_count;             /* next entry number; starts at 1 */
} st_index_header_t;

/* Bytes of one file with these sizes. */
int64_t st_index_file_size(int32_t slot_num, int32_t index_num);

/* Creates the (empty) index over dir (created if missing). slot_num and
 * index_num size new files. disabled: every operation is a no-op. The
 * caller owns the result (st_index_free). */
st_index_t *st_index_new(const char *dir, int32_t slot_num, int32_t index_num, int disabled);
/* Unmaps and frees without syncing (a clean close calls st_index_sync_all
 * first). */
void st_index_free(st_index_t *ix);

/* Recovery at open (after the commit log is validated and truncated to
 * cl_end): loads the files, keeps the ones wholly durable (after a crash:
 * covered by index/checkpoint) and below cl_end, deletes the rest and
 * re-indexes the commit log from where the kept ones end. */
rmq_err_t st_index_recover(struct st_store *st, int crashed);

/* Indexes one record's keys (no-op for records already indexed, without
 * keys, or with the index disabled). RMQ_OK, or an I/O error creating a
 * file (the record stays unindexed; logged). */
rmq_err_t st_index_add(struct st_store *st, const char *topic, size_t topic_len, const char *props,
                       size_t props_len, int64_t phys, int32_t size, int64_t store_ts);

/* Finds up to max commit-log offsets of records of topic with key whose
 * store time may lie in [begin_ms, end_ms], newest files first. Candidates
 * only: hashes collide; the caller verifies the records. Returns the count. */
size_t st_index_lookup(st_index_t *ix, const char *topic, const char *key, int64_t begin_ms,
                       int64_t end_ms, int64_t *phys, size_t max);

/* Deletes (on the housekeeping thread) sealed files that only point below
 * the commit log's new minimum. */
void st_index_retain(struct st_store *st, int64_t cl_min);

/* Syncs every file and records them all as durable. Loop thread at close. */
rmq_err_t st_index_sync_all(struct st_store *st);

/* Asks the housekeeping thread to pre-create the next file (see st_index.c)
 * when none is ready or in flight and the active file is at least half full
 * or there is none. No-op unless the housekeeping thread runs. Loop thread. */
void st_index_want_spare(struct st_store *st);

/* Files taken from a pre-created spare and files created on the loop since
 * open, and whether a spare is ready now (stats, tests). */
void st_index_file_stats(const st_index_t *ix, int64_t *precreated, int64_t *created_sync,
                         int *spare_ready);

/* Number of files (tests). */
size_t st_index_file_count(const st_index_t *ix);
/* Header of file i, oldest first (tests). */
void st_index_file_header(const st_index_t *ix, size_t i, st_index_header_t *h);

#endif
