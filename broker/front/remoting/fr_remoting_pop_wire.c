/* fr_remoting_pop_wire.c: the BatchAckMessageRequestBody reader (see
 * fr_remoting_pop_wire.h). */
#include "fr_remoting_pop_wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_base64.h"

#define BITSET_TEXT_MAX 4096         /* base64 of a BitSet of FR_RM_BATCH_ACK_MAX bits, with room */

/* Member short (or long) of ack; NULL when neither is there. */
static const rmq_json_t *member(const rmq_json_t *ack, const char *short_name, const char *long_name)
{
    const rmq_json_t *v = rmq_json_get(ack, short_name);
    return v ? v : rmq_json_get(ack, long_name);
}

/* A string member; NULL with why set when absent or no string. */
static const char *str_member(const rmq_json_t *ack, const char *s, const char *l, size_t i, char *why, size_t wl)
{
    const rmq_json_t *v = member(ack, s, l);
    if (v && v->type == RMQ_JSON_STRING && v->len > 0)
        return v->str;
    snprintf(why, wl, "BatchAck body: acks[%zu].%s (%s) missing or not a string", i, s, l);
    return NULL;
}

/* An integer member in [min, max]; 0, or -1 with why set. */
static int int_member(const rmq_json_t *ack, const char *s, const char *l, int64_t min, int64_t max, size_t i,
                      int64_t *out, char *why, size_t wl)
{
    if (rmq_json_int(member(ack, s, l), min, max, out) == 0)
        return 0;
    snprintf(why, wl, "BatchAck body: acks[%zu].%s (%s) missing or not an integer in [%" PRId64 ", %" PRId64 "]",
             i, s, l, min, max);
    return -1;
}

/* The handle fields every message of ack shares (queue_offset is the start
 * offset); 0, or -1 with why set. */
static int ack_fields(const rmq_json_t *ack, size_t i, const char *broker, bk_pop_handle_t *h, char *why, size_t wl)
{
    int64_t so, q, rq = 0, pt, it;
    const char *retry = str_member(ack, "r", "retry", i, why, wl);
    if (!retry)
        return -1;
    if (strcmp(retry, "0") != 0 && strcmp(retry, "1") != 0) {
        snprintf(why, wl, "BatchAck body: acks[%zu].r is '%.8s', want 0 or 1", i, retry);
        return -1;
    }
    if (int_member(ack, "so", "startOffset", 0, INT64_MAX, i, &so, why, wl) != 0 ||
        int_member(ack, "q", "queueId", 0, INT32_MAX, i, &q, why, wl) != 0 ||
        (member(ack, "rq", "reviveQueueId") &&
         int_member(ack, "rq", "reviveQueueId", INT32_MIN, INT32_MAX, i, &rq, why, wl) != 0) ||
        int_member(ack, "pt", "popTime", 0, INT64_MAX, i, &pt, why, wl) != 0 ||
        int_member(ack, "it", "invisibleTime", 0, INT64_MAX, i, &it, why, wl) != 0)
        return -1;
    *h = (bk_pop_handle_t){.ck_offset = so, .pop_time = pt, .invisible_ms = it, .revive_qid = (int32_t)rq,
                           .type = retry[0] - '0', .queue_id = (int32_t)q, .queue_offset = so};
    snprintf(h->broker, sizeof(h->broker), "%s", broker);
    return 0;
}

/* Appends one acked message to ba; -1 past FR_RM_BATCH_ACK_MAX or out of memory. */
static int acked_add(fr_rm_batch_ack_t *ba, size_t *cap, const fr_rm_acked_t *a)
{
    if (ba->n == FR_RM_BATCH_ACK_MAX)
        return -1;
    if (ba->n == *cap) {
        size_t nc = *cap ? *cap * 2 : 16;
        fr_rm_acked_t *grown = realloc(ba->acked, nc * sizeof(*grown));
        if (!grown)
            return -1;
        ba->acked = grown;
        *cap = nc;
    }
    ba->acked[ba->n++] = *a;
    return 0;
}

/* Adds the messages of acks[i] (one per set bit of its bitSet); 0, or -1
 * with why set. */
static int ack_add(fr_rm_batch_ack_t *ba, size_t *cap, const rmq_json_t *ack, size_t i, const char *broker,
                   char *why, size_t wl)
{
    fr_rm_acked_t a;
    if (!ack || ack->type != RMQ_JSON_OBJECT)
        return snprintf(why, wl, "BatchAck body: acks[%zu] is not an object", i), -1;
    if (!(a.group = str_member(ack, "c", "consumerGroup", i, why, wl)) ||
        !(a.topic = str_member(ack, "t", "topic", i, why, wl)) || ack_fields(ack, i, broker, &a.h, why, wl) != 0)
        return -1;
    const rmq_json_t *b = member(ack, "b", "bitSet");
    char *bits = NULL;
    size_t nbytes = 0;
    if (b && b->type != RMQ_JSON_NULL &&
        (b->type != RMQ_JSON_STRING || rmq_base64_decode(b->str, b->len, BITSET_TEXT_MAX, &bits, &nbytes) != 0))
        return snprintf(why, wl, "BatchAck body: acks[%zu].b is not a base64 BitSet of at most %d bytes of text", i,
                        BITSET_TEXT_MAX), -1;
    int64_t start = a.h.queue_offset;
    for (size_t bit = 0; bit < nbytes * 8; bit++) {
        if (!((unsigned char)bits[bit / 8] >> (bit % 8) & 1))
            continue;
        if ((int64_t)bit > INT64_MAX - start || (a.h.queue_offset = start + (int64_t)bit, acked_add(ba, cap, &a) != 0)) {
            free(bits);
            return snprintf(why, wl, "BatchAck body: more than %d messages or an offset out of range",
                            FR_RM_BATCH_ACK_MAX), -1;
        }
    }
    free(bits);
    return 0;
}

rmq_err_t fr_rm_batch_ack_parse(const uint8_t *body, size_t len, fr_rm_batch_ack_t *out, char *why, size_t whylen)
{
    char err[128];
    size_t cap = 0;
    memset(out, 0, sizeof(*out));
    if (!(out->doc = rmq_json_parse((const char *)body, len, err, sizeof(err)))) {
        snprintf(why, whylen, "BatchAck body: %s", err);
        return RMQ_EPROTO;
    }
    const rmq_json_t *acks = rmq_json_get(out->doc, "acks");
    const rmq_json_t *bn = rmq_json_get(out->doc, "brokerName");
    const char *broker = bn && bn->type == RMQ_JSON_STRING && bn->len <= BK_POP_BROKER_MAX ? bn->str : "";
    if (!acks || acks->type != RMQ_JSON_ARRAY) {
        snprintf(why, whylen, "BatchAck body: acks missing or not an array");
        fr_rm_batch_ack_clear(out);
        return RMQ_EPROTO;
    }
    for (size_t i = 0; i < acks->n; i++) {
        if (ack_add(out, &cap, acks->items[i], i, broker, why, whylen) != 0) {
            fr_rm_batch_ack_clear(out);
            return RMQ_EPROTO;
        }
    }
    return RMQ_OK;
}

void fr_rm_batch_ack_clear(fr_rm_batch_ack_t *ba)
{
    rmq_json_free(ba->doc);
    free(ba->acked);
    memset(ba, 0, sizeof(*ba));
}
