/* bk_consume_cfg.h: the pull core's configuration (core/bk_consume.h) as
 * the broker's settings and tables (bk_node.h) give it: the one pull
 * core every front-end's pulls go through. */
#ifndef BK_CONSUME_CFG_H
#define BK_CONSUME_CFG_H

#include "bk_consume.h"
#include "bk_node.h"

/* Fills cc from node (pointers borrowed). */
void bk_consume_cfg_fill(const bk_node_t *node, bk_consume_config_t *cc);

/* accessMessageInMemoryMaxRatio of the host's memory, in bytes: how far
 * behind the commit log's end data still counts as in memory. */
int64_t bk_consume_cfg_in_memory_max(const bk_config_t *cfg);

#endif
