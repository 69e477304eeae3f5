/* rmq_time.h: clocks. Monotonic time for every timeout and expiry; wall
 * clock only for timestamps stored in messages or shown to people. */
#ifndef RMQ_TIME_H
#define RMQ_TIME_H

#include <stdint.h>

/* Monotonic milliseconds / microseconds / nanoseconds. Any thread. */
int64_t rmq_mono_ms(void);
int64_t rmq_mono_us(void);
int64_t rmq_mono_ns(void);

/* Wall-clock milliseconds since the Unix epoch. Any thread. */
int64_t rmq_wall_ms(void);

/* Sleeps for ms milliseconds (restarts after signals). */
void rmq_sleep_ms(int64_t ms);

/* Sleeps until the monotonic clock reads mono_us (rmq_mono_us's scale);
 * returns at once when that time has passed. Restarts after signals. */
void rmq_sleep_until_us(int64_t mono_us);

#endif
