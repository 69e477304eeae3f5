/* bk_hold.h: long polling. Pulls that found nothing wait here, keyed by
 * topic@queue and ordered by absolute deadline (one timer for the earliest).
 * A held pull is released when the store reports new data in its queue past
 * its offset that matches its tag filter, or at its deadline. What is held
 * is opaque (the core's parked neutral request); held pulls of a closed
 * session are dropped. Loop thread only. */
#ifndef BK_HOLD_H
#define BK_HOLD_H

#include <stdint.h>

#include <event2/event.h>

#include "bk_session.h"
#include "st_store.h"

typedef struct bk_hold bk_hold_t;

/* Called for a released pull whose session is still open: re-execute it
 * (expired: deadline passed). */
typedef void (*bk_hold_fn)(void *parked, int expired, void *arg);
/* Frees what was held, after fn or instead of it. */
typedef void (*bk_hold_drop_fn)(void *parked, void *arg);

bk_hold_t *bk_hold_new(struct event_base *base, bk_hold_fn fn, bk_hold_drop_fn drop, void *arg);
/* Drops every held pull without answering. */
void bk_hold_free(bk_hold_t *h);

/* Holds parked (owned from here on) for session ss (referenced) until data
 * past offset arrives in topic/queue_id or deadline_ms (monotonic). The
 * filter's codes are copied (more than BK_HOLD_MAX_CODES: match all). On
 * an error nothing is taken. */
rmq_err_t bk_hold_add(bk_hold_t *h, bk_session_t *ss, void *parked, const char *topic, int32_t queue_id,
                      int64_t offset, const st_tag_filter_t *filter, int64_t deadline_ms);

/* New data in topic/queue_id up to max_offset with this tag code. */
void bk_hold_arrived(bk_hold_t *h, const char *topic, int32_t queue_id, int64_t max_offset,
                     int64_t tag_code);
/* Drops the held pulls of a closed session. */
void bk_hold_session_closed(bk_hold_t *h, bk_session_t *ss);
/* Releases every held pull now as expired (clean stop). */
void bk_hold_release_all(bk_hold_t *h);
size_t bk_hold_count(const bk_hold_t *h);

#define BK_HOLD_MAX_CODES 16

#endif
