/* fuzz_delayoffset.c: libFuzzer target for the delay scheduler's progress
 * file (config/delayOffset.pb, front/rmq/fr_schedule.c), read from disk at
 * start: any bytes decode or are refused RMQ_ECORRUPT, never more levels
 * than the scheduler holds; what decodes encodes, and that decodes to the
 * same progress. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fr_schedule.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static bk_schedule_progress_t p, q;
    size_t len = 0;

    if (fr_schedule_decode(data, size, &p) != RMQ_OK)
        return 0;
    if (p.n_levels < 0 || p.n_levels > BK_SCHEDULE_LEVELS_MAX)
        abort();
    uint8_t *buf = fr_schedule_encode(&p, &len);
    if (!buf)
        return 0;
    if (fr_schedule_decode(buf, len, &q) != RMQ_OK || q.timer_due != p.timer_due ||
        q.timer_offset != p.timer_offset || q.timer_low != p.timer_low ||
        strcmp(q.delay_levels, p.delay_levels) != 0 ||
        memcmp(q.offsets, p.offsets, sizeof(p.offsets)) != 0)
        abort();
    free(buf);
    return 0;
}
