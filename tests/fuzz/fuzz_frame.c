/* fuzz_frame.c: libFuzzer target for the frame and header decoder. Feeds
 * the input as a stream of frames to rmq_frame_decode_bytes, then again
 * through an evbuffer in two uneven pieces to rmq_frame_decode, checking
 * that both paths agree on every frame and on the final verdict. The rmq
 * codec's probe (which picks a connection's codec from its first bytes)
 * sees every prefix of the input: it must decide by RMQ_CODEC_PROBE_MAX
 * bytes, never take back a decision as bytes arrive, and claim any input
 * whose first frame decodes (unless its header opens with '{', a remoting
 * JSON header). */
#include "rmq_frame.h"
#include "rmq_transport.h"

#include <stdlib.h>

#define FUZZ_MAX_FRAME (1u << 20)

/* Decodes frames from the flat bytes until an error or the end; returns the
 * number of frames and the final result. */
static size_t decode_flat(const uint8_t *data, size_t size, rmq_err_t *last)
{
    size_t off = 0, used, n = 0;
    rmq_frame_t f = { 0 };

    while ((*last = rmq_frame_decode_bytes(data + off, size - off, FUZZ_MAX_FRAME, &f, &used,
                                           NULL)) == RMQ_OK) {
        if (f.cmd == NULL || f.body == NULL || used < RMQ_FRAME_PREFIX)
            abort();
        off += used;
        n++;
        rmq_frame_clear(&f);
    }
    if (f.cmd != NULL || f.body != NULL)
        abort();
    return n;
}

/* Same through an evbuffer filled in two pieces split at a data-chosen byte. */
static size_t decode_stream(const uint8_t *data, size_t size, rmq_err_t *last)
{
    struct evbuffer *in = evbuffer_new();
    rmq_frame_t f = { 0 };
    size_t split = size > 0 ? data[0] % (size + 1) : 0, n = 0;

    evbuffer_add(in, data, split);
    while ((*last = rmq_frame_decode(in, FUZZ_MAX_FRAME, &f, NULL)) == RMQ_OK) {
        n++;
        rmq_frame_clear(&f);
    }
    if (*last == RMQ_EAGAIN) {
        evbuffer_add(in, data + split, size - split);
        while ((*last = rmq_frame_decode(in, FUZZ_MAX_FRAME, &f, NULL)) == RMQ_OK) {
            n++;
            rmq_frame_clear(&f);
        }
    }
    evbuffer_free(in);
    return n;
}

/* Runs the probe over every prefix up to RMQ_CODEC_PROBE_MAX bytes. */
static void probe_check(const uint8_t *data, size_t size, size_t frames)
{
    rmq_codec_probe_t first = RMQ_CODEC_MORE, v = RMQ_CODEC_MORE;

    for (size_t len = 0; len <= size && len <= RMQ_CODEC_PROBE_MAX; len++) {
        v = rmq_codec_rmq.probe(data, len, FUZZ_MAX_FRAME);
        if (first != RMQ_CODEC_MORE && v != first)
            abort();
        if (first == RMQ_CODEC_MORE)
            first = v;
    }
    if (size >= RMQ_CODEC_PROBE_MAX && v == RMQ_CODEC_MORE)
        abort();
    if (frames > 0 && v == RMQ_CODEC_NO && !(size > RMQ_FRAME_PREFIX && data[RMQ_FRAME_PREFIX] == '{'))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    rmq_err_t flat_err, stream_err;
    size_t flat = decode_flat(data, size, &flat_err);
    size_t stream = decode_stream(data, size, &stream_err);

    if (flat != stream || flat_err != stream_err)
        abort();
    probe_check(data, size, flat);
    return 0;
}
