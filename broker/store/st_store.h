/* st_store.h: the message store facade: commit log, consume queues,
 * dispatch, flush, checkpoint, recovery and retention behind one object.
 * No networking. The event-loop thread is the single writer: appends,
 * dispatch and reads happen there without locks. Disk syncs run on the
 * store's flush thread; file pre-creation and deletion on its housekeeping
 * thread. Results that another thread produces (durable offset, latched
 * errors) are posted back to the loop through rmq_loop_post. */
#ifndef ST_STORE_H
#define ST_STORE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "rmq_err.h"
#include "rmq_loop.h"
#include "rmq_message.h"

typedef struct st_store st_store_t;

typedef enum st_flush_type { ST_ASYNC_FLUSH = 0, ST_SYNC_FLUSH = 1 } st_flush_type_t;

typedef struct st_store_config {
    const char *root_dir;            /* storePathRootDir */
    const char *commitlog_dir;       /* storePathCommitLog; NULL: root/commitlog */
    const char *consumequeue_dir;    /* NULL: root/consumequeue */
    int64_t commitlog_file_size;     /* mapedFileSizeCommitLog (1 GiB) */
    int64_t cq_entries_per_file;     /* mapedFileSizeConsumeQueue / 20 (300000) */
    st_flush_type_t flush_type;      /* flushDiskType */
    int flush_interval_ms;           /* flushIntervalCommitLog (500) */
    int flush_least_pages;           /* flushCommitLogLeastPages (4) */
    int flush_thorough_interval_ms;  /* flushCommitLogThoroughInterval (10000) */
    int sync_flush_timeout_ms;       /* syncFlushTimeout (5000) */
    int64_t max_message_size;        /* maxMessageSize, body bytes (4 MiB) */
    int file_reserved_hours;         /* fileReservedTime (72) */
    const char *delete_when;         /* deleteWhen, e.g. "04" or "04;16" */
    int disk_max_used_ratio;         /* diskMaxUsedSpaceRatio percent (75) */
    int disk_full_ratio;             /* refuse writes above this percent (90) */
    int warm_mapped_files;           /* warmMapedFileEnable */
    uint32_t store_host_ip;          /* IPv4, host byte order, for records and msg ids */
    uint8_t store_host_ip6[16];      /* with store_host_v6: the IPv6 address instead */
    int store_host_v6;               /* brokerIP1 is IPv6: records carry RMQ_SYSFLAG_STOREHOST_V6 */
    uint16_t store_host_port;        /* listenPort */
    int read_only_role;              /* slave: refuse put(), accept append_raw() */
    int message_index_disable;       /* !messageIndexEnable: no key index */
    int32_t max_hash_slot_num;       /* key index slots per file (0: 500000) */
    int32_t max_index_num;           /* key index entries per file (0: 2000000) */
    /* transientStorePoolEnable: appends go to pooled buffers, one commit-log
     * file long, and reach the file with write() as they are made (then
     * fdatasync), never through the mapping (st_pool.h) */
    int transient_store_pool;
    int transient_store_pool_size;   /* transientStorePoolSize, buffers (5) */
} st_store_config_t;

/* Store-level put outcome, mapped to a wire Status by the broker. */
typedef enum st_put_status {
    ST_PUT_OK = 0,
    ST_PUT_MESSAGE_ILLEGAL,          /* size, topic or properties over a limit */
    ST_PUT_DISK_FULL,                /* disk above disk_full_ratio, or ENOSPC */
    ST_PUT_WRITE_ERROR,              /* latched read-only after a failed write or sync */
    ST_PUT_NOT_WRITABLE_ROLE,        /* slave */
    ST_PUT_SHUTDOWN,
    ST_PUT_CREATE_FILE_FAILED,
} st_put_status_t;

/* One message to append. Pointers are borrowed for the call. */
typedef struct st_msg {
    const char *topic;
    size_t topic_len;
    int32_t queue_id;
    int32_t flag;
    int32_t sys_flag;
    int64_t born_timestamp;
    uint32_t born_ip;                /* IPv4, host byte order */
    uint16_t born_port;
    const uint8_t *born_ip6;         /* 16 bytes: the born host is IPv6 (born_ip unused); NULL: IPv4 */
    int32_t reconsume_times;
    const void *body;
    size_t body_len;
    const char *properties;          /* name\x01value\x02..., may be NULL */
    size_t properties_len;
    int64_t tag_code;                /* hash of TAGS, 0 if none (st_tag_hash) */
} st_msg_t;

/* m's sys_flag as its record in st stores it: the IPv6 host bits say
 * which hosts are IPv6 (m's born host, st's store host: the record's
 * layout), whatever the client sent in them. */
int32_t st_msg_sys_flag(const st_store_t *st, const st_msg_t *m);
/* The size of m's record in st's commit log. */
size_t st_msg_record_size(const st_store_t *st, const st_msg_t *m);

typedef struct st_put_result {
    st_put_status_t status;
    int64_t phys_offset;             /* first record */
    int64_t end_offset;              /* end of the last record: wait for durability past it */
    int64_t queue_offset;            /* first record's queue offset */
    int32_t count;
    int64_t store_timestamp;
    char msg_id[RMQ_MSG_ID_MAX + 1]; /* first record: 32 (IPv4 store host) or 56 hex chars */
    const char *why;                 /* static text for non-OK */
} st_put_result_t;

/* Pull outcome (RocketMQ GetMessageStatus). */
typedef enum st_get_status {
    ST_GET_FOUND = 0,
    ST_GET_NO_MATCHED_MESSAGE,       /* scanned, none matched the filter */
    ST_GET_MESSAGE_WAS_REMOVING,     /* commit-log data already deleted */
    ST_GET_OFFSET_FOUND_NULL,
    ST_GET_OFFSET_OVERFLOW_BADLY,    /* offset > max */
    ST_GET_OFFSET_OVERFLOW_ONE,      /* offset == max: long-poll candidate */
    ST_GET_OFFSET_TOO_SMALL,         /* offset < min */
    ST_GET_NO_MATCHED_LOGIC_QUEUE,   /* no such topic/queue */
    ST_GET_NO_MESSAGE_IN_QUEUE,      /* queue exists but is empty */
} st_get_status_t;

/* Tag filter: match everything, or one of n tag hashes; then, when accept
 * is set, its verdict on each record that passed (the record's bytes,
 * valid for the call; 0 skips it): RocketMQ's isMatchedByCommitLog. */
typedef struct st_tag_filter {
    int match_all;
    const int64_t *codes;
    size_t n_codes;
    int (*accept)(const void *arg, const uint8_t *record, size_t len);
    const void *accept_arg;
} st_tag_filter_t;

typedef struct st_get_result {
    st_get_status_t status;
    int64_t next_begin_offset;
    int64_t min_offset;
    int64_t max_offset;
    int32_t msg_count;
    int64_t bytes;
    int64_t max_phys_scanned;        /* for suggesting a slave to slow consumers */
} st_get_result_t;

typedef struct st_store_stats {
    int64_t commitlog_min_offset;
    int64_t commitlog_max_offset;    /* write position */
    int64_t flushed_offset;          /* durable position */
    int64_t flush_syncs;             /* commit-log syncs (group commits) so far */
    int64_t flush_sync_us;           /* time the flush thread spent in them */
    int64_t dispatched_offset;       /* consume queues built up to here */
    int64_t put_count;
    int64_t put_bytes;
    double disk_used_ratio;          /* 0..1 of the commit-log file system */
    int writable;                    /* 0 when latched read-only or disk full */
    int disk_full;
    int write_error;                 /* latched */
    int64_t earliest_store_time;
    int64_t put_latency_max_us;
    /* files rolled into: pre-created by the housekeeping thread vs created
     * on the loop thread (the first file of a queue always is) */
    int64_t index_files_precreated, index_files_created_sync;
    int64_t cq_files_precreated, cq_files_created_sync;
} st_store_stats_t;

/* Called on the loop thread for each dispatched message: the queue has new
 * data up to max_offset (exclusive). Wakes long-polling pulls. */
typedef void (*st_arrival_fn)(const char *topic, int32_t queue_id, int64_t max_offset,
                              int64_t tag_code, void *arg);

/* Called on the loop thread when a SYNC_FLUSH wait ends: RMQ_OK once durable,
 * RMQ_ETIMEDOUT past the deadline, RMQ_EIO if the sync failed. */
typedef void (*st_flush_fn)(rmq_err_t err, void *arg);

/* Opens (creating directories as needed) and recovers the store: clean
 * restart from the checkpoint, or after a crash (abort file present) scan
 * from the last durable point verifying CRCs, truncate a torn tail, and trim
 * or rebuild consume queues. Creates the abort file. On failure returns NULL
 * and writes the reason into err. Loop thread (before the loop runs). */
st_store_t *st_store_open(const st_store_config_t *cfg, char *err, size_t errlen);

/* Starts the flush and housekeeping threads; results are posted through
 * poster (owned by the caller, bound to base, the loop that owns the store;
 * both must outlive st_store_close). base also carries the SYNC_FLUSH
 * timeout timer. Loop thread. */
rmq_err_t st_store_start(st_store_t *st, struct event_base *base, rmq_loop_poster_t *poster);

/* Flushes everything, stops threads, writes the checkpoint, removes the abort
 * file (only if all data reached disk), unmaps and frees. Loop thread. */
void st_store_close(st_store_t *st);

void st_store_set_arrival_cb(st_store_t *st, st_arrival_fn fn, void *arg);

/* Appends one message and dispatches it to its consume queue. Never blocks
 * on disk sync. Loop thread. */
void st_store_put(st_store_t *st, const st_msg_t *msg, st_put_result_t *res);

/* Appends n messages of one topic/queue atomically (one file, consecutive
 * queue offsets). res->msg_id is the first id; ids of the others follow from
 * their offsets (st_store_msg_id). Loop thread. */
void st_store_put_batch(st_store_t *st, const st_msg_t *msgs, size_t n, st_put_result_t *res);

/* The status that refuses every write now (shutting down, slave role,
 * latched write error, disk full), or ST_PUT_OK; *why names it. Loop thread. */
st_put_status_t st_store_write_refusal(const st_store_t *st, const char **why);

/* SYNC_FLUSH group commit: cb runs once the durable offset reaches
 * end_offset (often at once), or RMQ_ETIMEDOUT after sync_flush_timeout_ms,
 * or RMQ_EIO if the store latched a write error (RMQ_ESHUTDOWN if it closes
 * first). One disk sync releases every waiter it covers. cb may run before
 * this returns (already durable, or already latched). Returns RMQ_OK, or
 * RMQ_ENOMEM and cb never runs. Loop thread. */
rmq_err_t st_store_wait_flush(st_store_t *st, int64_t end_offset, st_flush_fn cb, void *arg);

/* Reads up to max_msgs / max_bytes messages of topic/queue from offset,
 * filtered by tag hash and filter->accept, appending the raw records to
 * out as references into the mapped commit log (no copy; the segment stays
 * mapped until out drops them). Never crosses a consume-queue file. Loop thread. */
void st_store_get(st_store_t *st, const char *topic, int32_t queue_id, int64_t offset,
                  int32_t max_msgs, int64_t max_bytes, const st_tag_filter_t *filter,
                  struct evbuffer *out, st_get_result_t *res);

/* Pulls (st_store_get) serve only records that end at or below the
 * commit-log offset phys (a controller-mode master's confirm offset: what
 * every in-sync replica holds); a pull that reaches it finds
 * ST_GET_OFFSET_OVERFLOW_ONE. Negative: no limit (the default). Raising
 * it runs the arrival callback again for each queue whose newest record it
 * made readable (with that record's tag), so held pulls wake. Loop. */
void st_store_set_read_limit(st_store_t *st, int64_t phys);

/* Queue offsets: next offset to be assigned (max), first available (min). */
int64_t st_store_max_offset(st_store_t *st, const char *topic, int32_t queue_id);
int64_t st_store_min_offset(st_store_t *st, const char *topic, int32_t queue_id);
/* First queue offset whose store time >= ts (max offset if none). */
int64_t st_store_offset_by_time(st_store_t *st, const char *topic, int32_t queue_id, int64_t ts);
/* Store timestamp of the message at queue offset, or -1. */
int64_t st_store_time_at(st_store_t *st, const char *topic, int32_t queue_id, int64_t offset);

/* Copies the record at a physical offset (msg id) into out. RMQ_ENOTFOUND if
 * there is no valid record there. Loop thread. */
rmq_err_t st_store_read_record(st_store_t *st, int64_t phys_offset, struct evbuffer *out);

/* QUERY_MESSAGE: appends copies of up to max_num records of topic carrying
 * key (a KEYS word or the UNIQ_KEY) stored within [begin_ms, end_ms],
 * newest index files first; *count says how many. RMQ_ENOTFOUND if the
 * index is disabled. Loop thread. */
rmq_err_t st_store_query_key(st_store_t *st, const char *topic, const char *key, int64_t begin_ms,
                             int64_t end_ms, int32_t max_num, struct evbuffer *out, int32_t *count);

/* The store time and commit-log end of the newest indexed record (0, 0
 * when nothing is indexed): QUERY_MESSAGE's indexLastUpdateTimestamp and
 * indexLastUpdatePhyoffset. Loop thread. */
void st_store_index_last(st_store_t *st, int64_t *end_ts, int64_t *end_phys);

/* Removes a topic's consume queues (commit-log data ages out normally). */
void st_store_delete_topic(st_store_t *st, const char *topic);

void st_store_stats(st_store_t *st, st_store_stats_t *out);

/* Replication (slave side): appends raw commit-log bytes at offset, which
 * must equal the current max offset (RMQ_EINVAL otherwise; an empty store
 * accepts any multiple of the file size as its first offset), then
 * dispatches every complete record (RMQ_ECORRUPT if one fails its checks;
 * RMQ_EREADONLY after a write error; RMQ_ENOSPC/RMQ_EIO if a file cannot be
 * created). Loop thread. */
rmq_err_t st_store_append_raw(st_store_t *st, int64_t offset, const void *data, size_t len);

/* Cuts the log back to offset (a record boundary at or above the first
 * retained offset) with everything derived from it: consume-queue units
 * and key-index entries of the records at or past it, the checkpoint, the
 * queues' max offsets. Crash-safe: a durable marker holds the target until
 * the store is consistent again, and an open that finds it finishes the
 * cut. Blocks the loop for the rebuild (briefly stops the store's threads).
 * RMQ_OK (also when offset is at or past the end), RMQ_EINVAL below the
 * retained log, RMQ_EREADONLY after a write error; the reason in err.
 * After a failure past the marker the store latches read-only and the
 * next open completes the cut. Loop thread. */
rmq_err_t st_store_truncate(st_store_t *st, int64_t offset, char *err, size_t errlen);

/* Before a store that received replicated bytes takes its first put as a
 * master: cuts the log back to the end of its last whole, CRC-valid record
 * (HA chunks are byte ranges, so a slave often ends partway through one)
 * with st_store_truncate, so records appended next follow a whole record
 * and recovery and slaves read past it. Whole records all stay. A no-op
 * (no scan) when every record is dispatched and none is partial. Logs the
 * bytes cut at WARN. Errors as st_store_truncate. Loop thread. */
rmq_err_t st_store_trim_torn_tail(st_store_t *st, char *err, size_t errlen);

/* Replication (master side): references up to max_len commit-log bytes from
 * offset, never across a file, into out. Returns bytes added (0 if none yet),
 * or RMQ_ENOTFOUND if offset is below the retained log. Loop thread. */
int64_t st_store_read_raw(st_store_t *st, int64_t offset, size_t max_len, struct evbuffer *out);

/* The offset message id of the record at phys_offset in st's commit log:
 * rmq_msg_id_format of its store host (32 hex digits, 56 when IPv6). Any thread. */
void st_store_msg_id(const st_store_t *st, int64_t phys_offset, char out[RMQ_MSG_ID_MAX + 1]);
/* Java String.hashCode of a tag, as RocketMQ's tag code. */
int64_t st_tag_hash(const char *tag, size_t len);

#endif
