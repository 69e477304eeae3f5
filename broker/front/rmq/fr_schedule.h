/* fr_schedule.h: the rmq front of the delay scheduler (core/bk_schedule.c):
 * its progress file in the rmq format (config/delayOffset.pb, a
 * DelayOffsetTable), the slave's merge of its master's table, and
 * GET_ALL_DELAY_OFFSET (fr_routes.h). Loop thread. */
#ifndef FR_SCHEDULE_H
#define FR_SCHEDULE_H

#include "bk_broker.h"
#include "bk_schedule.h"

/* The scheduler of bk over its config (messageDelayLevel, fileReservedTime,
 * role) with config/delayOffset.pb as its progress file. bk's store,
 * append path, produce, topics and persist must be open. NULL with err. */
bk_schedule_t *fr_schedule_new(bk_broker_t *bk, char *err, size_t errlen);

/* The progress file's decoder: a packed DelayOffsetTable into p (levels
 * outside 1..BK_SCHEDULE_LEVELS_MAX ignored); RMQ_ECORRUPT if it is not
 * one. The encoder packs p into malloc'd bytes (NULL: out of memory). */
rmq_err_t fr_schedule_decode(const uint8_t *data, size_t len, bk_schedule_progress_t *p);
uint8_t *fr_schedule_encode(const bk_schedule_progress_t *p, size_t *len);

/* Slave side: merges the master's table (larger wins) into s. */
void fr_schedule_apply(bk_schedule_t *s, const Rmq__DelayOffsetTable *tab);

#endif
