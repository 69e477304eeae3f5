/* bk_offsets_pb.h: the protobuf views of the consumer-offset table (admin,
 * slave sync, metrics, persistence). Not for the core. Loop thread only. */
#ifndef BK_OFFSETS_PB_H
#define BK_OFFSETS_PB_H

#include "bk_offsets.h"
#include "rmq.pb-c.h"

/* A heap ConsumerOffsetTable snapshot, optionally only of group (NULL: all);
 * free with bk_offsets_table_free. NULL when out of memory. */
Rmq__ConsumerOffsetTable *bk_offsets_table_new(const bk_offsets_t *o, const char *group);
void bk_offsets_table_free(Rmq__ConsumerOffsetTable *tab);

#endif
