/* st_dispatch.c: building consume queues from commit-log records: one
 * record at a time right after an append, or a range of the log parsed
 * record by record (replicated bytes, recovery). Idempotent: a record whose
 * queue offset is already built is skipped. Loop thread. */
#include <inttypes.h>
#include <stdint.h>

#include "rmq_log.h"
#include "rmq_message.h"
#include "st_internal.h"

int64_t st_props_tag_code(const char *props, size_t len)
{
    size_t vlen;
    const char *v = props ? rmq_props_get(props, len, RMQ_PROP_TAGS, &vlen) : NULL;

    return v ? st_tag_hash(v, vlen) : 0;
}

/* Fills queue offsets [cq->max_offset, upto) with dummy units. */
static void fill_gap(st_store_t *st, st_cq_t *cq, int64_t upto)
{
    LOG_WARN("consume queue %s/%d: filling a gap %" PRId64 "..%" PRId64, cq->topic,
             (int)cq->queue_id, cq->max_offset, upto);
    while (cq->max_offset < upto)
        st_cq_write(&st->cqs, cq, cq->max_offset, 0, ST_CQ_DUMMY_SIZE, 0);
}

/* The store's topic rule (st_store.c, msg_illegal) for records that did
 * not come through a put: replicated bytes or a recovered log. The topic
 * names a directory, so anything else (a "../" from a bad peer) is refused. */
static int dispatch_topic_ok(const char *topic, size_t len, int32_t queue_id)
{
    if (len == 0 || len > RMQ_TOPIC_MAX || queue_id < 0)
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = topic[i];

        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '%' || c == '|' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

rmq_err_t st_dispatch_one(st_store_t *st, const char *topic, size_t topic_len, int32_t queue_id,
                          int64_t queue_offset, int64_t phys, int32_t size, int64_t tag_code,
                          int notify)
{
    st_cq_t *cq;
    int64_t first;
    rmq_err_t rc;

    if (!dispatch_topic_ok(topic, topic_len, queue_id)) {
        LOG_ERROR_RL("record at %" PRId64 ": topic or queue id breaks the naming rule; not indexed",
                     phys);
        return RMQ_OK;
    }
    cq = st_cq_table_get(&st->cqs, topic, topic_len, queue_id);
    if (!cq)
        return RMQ_ENOMEM;
    if (cq->nseg > 0 && queue_offset < cq->max_offset)
        return RMQ_OK;
    if (queue_offset < 0 || queue_offset > INT64_MAX / ST_CQ_UNIT - 2 * st->cqs.per_file ||
        (cq->nseg > 0 && queue_offset - cq->max_offset > st->cqs.per_file)) {
        /* a CRC-valid record with an impossible queue offset, or one far
         * ahead of its queue (corruption, or a bad replication peer):
         * filling the gap would create a file per per_file units without
         * bound, so leave it out of the index */
        LOG_ERROR_RL("consume queue %s/%d: record at %" PRId64 " jumps from queue offset %" PRId64
                     " to %" PRId64 "; not indexed", cq->topic, (int)queue_id, phys,
                     cq->max_offset, queue_offset);
        return RMQ_OK;
    }
    first = cq->nseg > 0 ? cq->max_offset : queue_offset;
    rc = st_cq_prepare(&st->cqs, cq, first, queue_offset - first + 1);
    if (rc != RMQ_OK)
        return rc;
    if (queue_offset < cq->max_offset)
        return RMQ_OK;
    if (queue_offset > cq->max_offset)
        fill_gap(st, cq, queue_offset);
    st_cq_write(&st->cqs, cq, queue_offset, phys, size, tag_code);
    st_house_want_cq_spare(st, cq);
    if (notify && st->arrival && phys + size <= st->read_limit)
        st->arrival(cq->topic, queue_id, queue_offset + 1, tag_code, st->arrival_arg);
    return RMQ_OK;
}

/* Dispatches one decoded record found at pos. */
static rmq_err_t dispatch_record(st_store_t *st, const rmq_record_t *rec, int64_t pos, int notify)
{
    if (rec->phys_offset != pos) {
        LOG_ERROR("record at %" PRId64 " claims offset %" PRId64, pos, rec->phys_offset);
        return RMQ_ECORRUPT;
    }
    st_index_add(st, rec->topic, rec->topic_len, rec->properties, rec->properties_len, pos,
                 (int32_t)rec->total_size, rec->store_timestamp);
    return st_dispatch_one(st, rec->topic, rec->topic_len, rec->queue_id, rec->queue_offset, pos,
                           (int32_t)rec->total_size,
                           st_props_tag_code(rec->properties, rec->properties_len), notify);
}

int64_t st_dispatch_range(st_store_t *st, int64_t from, int64_t to, int verify_crc, int notify)
{
    int64_t pos = from;

    while (pos < to) {
        st_segment_t *seg = st_commitlog_find(&st->cl, pos);
        int64_t seg_end, lim;
        rmq_record_t rec;
        rmq_err_t rc;

        if (!seg)
            break;
        seg_end = seg->start + seg->size;
        lim = to < seg_end ? to : seg_end;
        rc = rmq_record_decode(st_segment_rptr(seg, pos - seg->start, lim - pos), (size_t)(lim - pos),
                               verify_crc, &rec);
        if (rc == RMQ_ENOTFOUND && pos + rec.total_size == seg_end) {
            if (seg_end > to)
                break;               /* the blank's end has not arrived yet (HA chunks are byte ranges) */
            pos = seg_end;
            continue;
        }
        if (rc == RMQ_EAGAIN && lim < seg_end)
            break;
        if (rc == RMQ_OK)
            rc = dispatch_record(st, &rec, pos, notify);
        if (rc != RMQ_OK) {
            LOG_ERROR("dispatch stopped at %" PRId64 ": %s", pos, rmq_strerror(rc));
            atomic_store(&st->dispatched, pos);
            return rc == RMQ_EAGAIN || rc == RMQ_ENOTFOUND ? RMQ_ECORRUPT : rc;
        }
        pos += rec.total_size;
    }
    atomic_store(&st->dispatched, pos);
    return pos;
}
