/* fr_schedule.h: the rmq front of the delay scheduler (core/bk_schedule.c):
 * its progress file in the rmq format (config/delayOffset.pb, a
 * DelayOffsetTable), the slave's merge of its master's table, and
 * GET_ALL_DELAY_OFFSET (fr_routes.h). Loop thread. */
#ifndef FR_SCHEDULE_H
#define FR_SCHEDULE_H

#include "bk_front.h"
#include "bk_schedule.h"

/* The scheduler over node's config (messageDelayLevel, fileReservedTime,
 * role) with config_dir/delayOffset.pb as its progress file, storing
 * through produce and counting in stats. node's store, append path, topics
 * and persist must be open. NULL with err. */
bk_schedule_t *fr_schedule_new(const bk_node_t *node, bk_produce_t *produce, bk_stats_t *stats,
                               const char *config_dir, char *err, size_t errlen);

/* The progress file's decoder: a packed DelayOffsetTable into p (levels
 * outside 1..BK_SCHEDULE_LEVELS_MAX ignored); RMQ_ECORRUPT if it is not
 * one. The encoder packs p into malloc'd bytes (NULL: out of memory). */
rmq_err_t fr_schedule_decode(const uint8_t *data, size_t len, bk_schedule_progress_t *p);
uint8_t *fr_schedule_encode(const bk_schedule_progress_t *p, size_t *len);

/* Slave side: merges the master's table (larger wins) into s. */
void fr_schedule_apply(bk_schedule_t *s, const Rmq__DelayOffsetTable *tab);

#endif
