/* bk_statsitems.h: RocketMQ's broker statistics items (BrokerStatsManager:
 * TOPIC_PUT_NUMS, TOPIC_PUT_SIZE, GROUP_GET_NUMS, GROUP_GET_SIZE,
 * SNDBCK_PUT_NUMS, BROKER_PUT_NUMS, BROKER_GET_NUMS), each a (value, times)
 * counter per key, sampled as RocketMQ's StatsItem is: every 10 s for the
 * minute window (7 samples), every 10 min for the hour (7), every hour for
 * the day (25). VIEW_BROKER_STATS_DATA reads the three windows' sum, tps
 * and avgpt. Fixed memory: a table of statsItemCapacity items allocated
 * once; a new key in a full table takes the slot of the item counted least
 * recently. Keys: a topic, "topic@group", or the cluster name (BROKER_*).
 * A caller counting the same item often keeps a bk_si_ref_t to it, which
 * skips the lookup by key while the item keeps its slot. Loop thread only. */
#ifndef BK_STATSITEMS_H
#define BK_STATSITEMS_H

#include <stddef.h>
#include <stdint.h>

typedef enum bk_si_kind {
    BK_SI_TOPIC_PUT_NUMS,
    BK_SI_TOPIC_PUT_SIZE,
    BK_SI_GROUP_GET_NUMS,
    BK_SI_GROUP_GET_SIZE,
    BK_SI_SNDBCK_PUT_NUMS,
    BK_SI_BROKER_PUT_NUMS,
    BK_SI_BROKER_GET_NUMS,
    BK_SI_KIND_COUNT
} bk_si_kind_t;

typedef enum bk_si_window { BK_SI_MINUTE, BK_SI_HOUR, BK_SI_DAY, BK_SI_WINDOW_COUNT } bk_si_window_t;

/* RocketMQ's StatsSnapshot of one window: value added between its oldest
 * and newest sample, per second, and per counted call. */
typedef struct bk_si_snapshot {
    int64_t sum;
    double tps;
    double avgpt;
    int64_t times;
} bk_si_snapshot_t;

typedef struct bk_statsitems bk_statsitems_t;

/* Where one item (kind, key) was last found: its slot and the number of
 * the claim that gave the slot that item. Zeroed: not found yet. */
typedef struct bk_si_ref {
    size_t slot;
    uint64_t claim;
} bk_si_ref_t;

/* A table of capacity items whose first samples are due at now_ms (a
 * monotonic clock). Owner: caller. NULL when out of memory or capacity 0. */
bk_statsitems_t *bk_statsitems_new(size_t capacity, int64_t now_ms);
void bk_statsitems_free(bk_statsitems_t *t);

/* The kind RocketMQ names name (e.g. "TOPIC_PUT_NUMS"), or -1. */
int bk_statsitems_kind(const char *name);

/* Adds value and times to the item (kind, key); t NULL: nothing. A key that
 * does not fit an item (over 2 * RMQ_TOPIC_MAX + 1 bytes) is not counted. */
void bk_statsitems_add(bk_statsitems_t *t, bk_si_kind_t kind, const char *key, int64_t value, int64_t times);
/* bk_statsitems_add of the item ref was last found for (kind, key, which
 * must be the same every time for one ref): straight into its slot while
 * the item still holds it, else looked up by key and ref pointed at it. */
void bk_statsitems_add_ref(bk_statsitems_t *t, bk_si_ref_t *ref, bk_si_kind_t kind, const char *key,
                           int64_t value, int64_t times);
/* Same with the key "topic@group". */
void bk_statsitems_add_group(bk_statsitems_t *t, bk_si_kind_t kind, const char *topic, const char *group,
                             int64_t value, int64_t times);

/* Takes every window's sample that is due at now_ms (called once a second). */
void bk_statsitems_tick(bk_statsitems_t *t, int64_t now_ms);

/* The minute, hour and day snapshots of (kind, key) into out; 1, or 0 when
 * no such item is kept. */
int bk_statsitems_view(const bk_statsitems_t *t, bk_si_kind_t kind, const char *key,
                       bk_si_snapshot_t out[BK_SI_WINDOW_COUNT]);

/* One item of bk_statsitems_top: its key (borrowed until the table next
 * changes), running value and what it added over the minute window (and
 * since its last sample). */
typedef struct bk_si_top {
    const char *key;
    int64_t value;
    int64_t recent;
} bk_si_top_t;

/* Up to n items of kind that added most over the minute window, most first,
 * into out; how many. The name server's console charts these (the topics
 * busiest now) from runtime info. */
size_t bk_statsitems_top(const bk_statsitems_t *t, bk_si_kind_t kind, bk_si_top_t *out, size_t n);

#endif
