/* fuzz_remoting.c: libFuzzer target for the RocketMQ remoting frame and
 * both header decoders (rmq_codec_remoting.h). Decodes the input as a
 * stream of frames; each decoded request is encoded again in both header
 * encodings and decoded back, and must come back the same (code, opaque,
 * flags, remark, extFields, body). Both codecs' probes see every prefix up
 * to RMQ_CODEC_PROBE_MAX bytes: neither may take back a decision, both
 * must decide by then, and they may never both answer YES on the same
 * bytes; a remoting probe must claim a first frame that decodes with a
 * binary header or a JSON header opening with '{'. A JSON header the
 * decoder read (its one-pass reader or rmq_json's tree) must read the same
 * through rmq_json's tree, and every key must find its first field. */
#include "rmq_codec_remoting.h"

#include "rmq_json.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define FUZZ_MAX_FRAME (1u << 20)

/* Aborts unless a and b carry the same request. */
static void same_request(const rmq_remoting_request_t *a, const rmq_remoting_request_t *b)
{
    if (a->code != b->code || a->opaque != b->opaque || a->flags != b->flags ||
        strcmp(a->remark, b->remark) != 0 || a->n_fields != b->n_fields ||
        a->body_len != b->body_len || (a->body_len && memcmp(a->body, b->body, a->body_len)))
        abort();
    for (size_t i = 0; i < a->n_fields; i++)
        if (strcmp(a->fields[i].key, b->fields[i].key) != 0 ||
            strcmp(a->fields[i].value, b->fields[i].value) != 0)
            abort();
}

/* 1 if every string of req is valid UTF-8 (what a JSON header can carry). */
static int all_utf8(const rmq_remoting_request_t *req)
{
    if (!rmq_json_utf8_valid(req->remark, strlen(req->remark)))
        return 0;
    for (size_t i = 0; i < req->n_fields; i++)
        if (!rmq_json_utf8_valid(req->fields[i].key, strlen(req->fields[i].key)) ||
            !rmq_json_utf8_valid(req->fields[i].value, strlen(req->fields[i].value)))
            return 0;
    return 1;
}

/* Aborts unless rmq_remoting_field finds each key of req at its first field. */
static void lookup_agrees(const rmq_remoting_request_t *req)
{
    for (size_t i = 0; i < req->n_fields; i++) {
        size_t j = 0;
        while (strcmp(req->fields[j].key, req->fields[i].key) != 0)
            j++;
        if (rmq_remoting_field(req, req->fields[i].key) != req->fields[j].value)
            abort();
    }
}

/* Aborts unless the JSON header of frame reads as req through rmq_json's
 * tree: code, remark, and every non-null extFields member in order. */
static void json_agrees(const uint8_t *frame, const rmq_remoting_request_t *req)
{
    size_t hl = (size_t)frame[5] << 16 | (size_t)frame[6] << 8 | frame[7], n = 0;
    char err[128];
    int64_t code;
    rmq_json_t *h = rmq_json_parse((const char *)frame + 8, hl, err, sizeof(err));

    if (h == NULL || h->type != RMQ_JSON_OBJECT ||
        rmq_json_int(rmq_json_get(h, "code"), 0, INT32_MAX, &code) != 0 || code != req->code)
        abort();
    const char *remark = rmq_json_scalar(rmq_json_get(h, "remark"));
    if (strcmp(remark != NULL ? remark : "", req->remark) != 0)
        abort();
    const rmq_json_t *ext = rmq_json_get(h, "extFields");
    for (size_t i = 0; ext != NULL && ext->type == RMQ_JSON_OBJECT && i < ext->n; i++) {
        if (ext->items[i]->type == RMQ_JSON_NULL)
            continue;
        if (n >= req->n_fields || strcmp(ext->keys[i], req->fields[n].key) != 0 ||
            strcmp(rmq_json_scalar(ext->items[i]), req->fields[n].value) != 0)
            abort();
        n++;
    }
    if (n != req->n_fields)
        abort();
    rmq_json_free(h);
}

/* Encodes req in type and decodes it back; the result must match. */
static void round_trip(const rmq_remoting_request_t *req, int type)
{
    struct evbuffer *b = evbuffer_new();
    rmq_remoting_reply_t rep = { req->code, req->remark, req->fields, req->n_fields, req->body,
                                 req->body_len };
    rmq_remoting_request_t back;
    const char *why;
    size_t used;

    if (b == NULL || (type == RMQ_REMOTING_JSON && !all_utf8(req))) {
        if (b != NULL)
            evbuffer_free(b);
        return;
    }
    if (rmq_remoting_encode(b, type, req->code, req->opaque, req->flags, req->version, &rep) ==
        RMQ_OK) {
        size_t len = evbuffer_get_length(b);
        const uint8_t *p = evbuffer_pullup(b, -1);
        if (rmq_remoting_decode(p, len, UINT32_MAX, &back, &used, &why) != RMQ_OK || used != len)
            abort();
        same_request(req, &back);
        rmq_remoting_request_clear(&back);
    }
    evbuffer_free(b);
}

static void probe_check(const uint8_t *data, size_t size, int first_decodes)
{
    const rmq_codec_t *codecs[2] = { &rmq_codec_rmq, &rmq_codec_remoting };
    rmq_codec_probe_t first[2] = { RMQ_CODEC_MORE, RMQ_CODEC_MORE }, v[2] = { 0, 0 };

    for (size_t len = 0; len <= size && len <= RMQ_CODEC_PROBE_MAX; len++) {
        for (int c = 0; c < 2; c++) {
            v[c] = codecs[c]->probe(data, len, FUZZ_MAX_FRAME);
            if (first[c] != RMQ_CODEC_MORE && v[c] != first[c])
                abort();
            if (first[c] == RMQ_CODEC_MORE)
                first[c] = v[c];
        }
        if (v[0] == RMQ_CODEC_YES && v[1] == RMQ_CODEC_YES)
            abort();
    }
    if (size >= RMQ_CODEC_PROBE_MAX && (v[0] == RMQ_CODEC_MORE || v[1] == RMQ_CODEC_MORE))
        abort();
    if (first_decodes && size > 8 && (data[4] == 1 || data[8] == '{') && v[1] != RMQ_CODEC_YES)
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rmq_remoting_request_t req;
    const char *why;
    size_t off = 0, used, frames = 0;

    while (rmq_remoting_decode(data + off, size - off, FUZZ_MAX_FRAME, &req, &used, &why) ==
           RMQ_OK) {
        if (used < 8 || used > size - off)
            abort();
        lookup_agrees(&req);
        if (req.serialize_type == RMQ_REMOTING_JSON)
            json_agrees(data + off, &req);
        round_trip(&req, RMQ_REMOTING_JSON);
        round_trip(&req, RMQ_REMOTING_ROCKETMQ);
        rmq_remoting_request_clear(&req);
        off += used;
        frames++;
    }
    if (req.fields != NULL || req.remark != NULL)
        abort();
    probe_check(data, size, frames > 0);
    return 0;
}
