/* bk_groupstats.h: messages each consumer group pulled from each topic
 * (RocketMQ's GROUP_GET_NUMS) and their rate over the last minute, which
 * GET_CONSUME_STATS answers as consumeTps. The pull path counts, the
 * housekeeping tick samples once a second, and a (group, topic) pair that
 * pulled nothing for ten minutes is forgotten. Loop thread only. */
#ifndef BK_GROUPSTATS_H
#define BK_GROUPSTATS_H

#include <stdint.h>

#define BK_GROUPSTATS_WINDOW_SECS 60
#define BK_GROUPSTATS_IDLE_SECS 600

typedef struct bk_groupstats bk_groupstats_t;

/* An empty table. Owner: caller (bk_groupstats_free). NULL when out of memory. */
bk_groupstats_t *bk_groupstats_new(void);
void bk_groupstats_free(bk_groupstats_t *gs);

/* Counts n messages group was handed from topic (names already validated). */
void bk_groupstats_add(bk_groupstats_t *gs, const char *group, const char *topic, int64_t n);

/* Takes this second's sample of every pair; drops pairs idle for
 * BK_GROUPSTATS_IDLE_SECS. */
void bk_groupstats_sample(bk_groupstats_t *gs);

/* Messages per second group pulled from topic (every topic when topic is
 * "") over the last BK_GROUPSTATS_WINDOW_SECS, or over the seconds sampled
 * so far when the broker is younger. */
double bk_groupstats_tps(const bk_groupstats_t *gs, const char *group, const char *topic);

#endif
