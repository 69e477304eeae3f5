/* rmq_time.c: monotonic and wall clocks. */
#include "rmq_time.h"

#include <errno.h>
#include <time.h>

static int64_t clock_ns(clockid_t id)
{
    struct timespec ts;
    clock_gettime(id, &ts);
    return (int64_t)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

int64_t rmq_mono_ns(void) { return clock_ns(CLOCK_MONOTONIC); }
int64_t rmq_mono_us(void) { return clock_ns(CLOCK_MONOTONIC) / 1000; }
int64_t rmq_mono_ms(void) { return clock_ns(CLOCK_MONOTONIC) / 1000000; }
int64_t rmq_wall_ms(void) { return clock_ns(CLOCK_REALTIME) / 1000000; }

void rmq_sleep_ms(int64_t ms)
{
    struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000L };
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR) {
    }
}

void rmq_sleep_until_us(int64_t mono_us)
{
    struct timespec ts = { .tv_sec = mono_us / 1000000, .tv_nsec = (mono_us % 1000000) * 1000L };
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR) {
    }
}
