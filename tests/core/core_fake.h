/* core_fake.h: a fake client session for core tests and fuzzers (see
 * core_fake.c). */
#ifndef CORE_FAKE_H
#define CORE_FAKE_H

#include <stdint.h>

#include "bk_session.h"

/* What the core asked of the fake client: counts and the last arguments. */
typedef struct core_fake_session {
    bk_session_t base;
    int notified, reset, checked, closed, freed;
    int64_t reset_offset0;           /* the last reset's offset of queue 0 */
    char group[64];
    int64_t check_offset;
} core_fake_session_t;

/* Zeroes f and initializes its session with one reference (the caller's). */
void core_fake_session_init(core_fake_session_t *f);

#endif
