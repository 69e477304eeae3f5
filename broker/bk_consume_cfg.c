/* bk_consume_cfg.c: the pull core's configuration from the broker's (see bk_consume_cfg.h). */
#include "bk_consume_cfg.h"

#include <string.h>
#include <unistd.h>

void bk_consume_cfg_fill(const bk_node_t *node, bk_consume_config_t *cc)
{
    memset(cc, 0, sizeof(*cc));
    cc->base = node->base;
    cc->store = node->store;
    cc->topics = node->topics;
    cc->groups = node->groups;
    cc->offsets = node->offsets;
    cc->is_slave = bk_node_role(node) == BK_SLAVE;
    cc->permission = node->cfg->broker_permission;
    cc->max_transfer_count = node->cfg->max_transfer_count_on_message_in_memory;
    cc->max_transfer_bytes = node->cfg->max_transfer_bytes_on_message_in_memory;
    cc->long_polling = node->cfg->long_polling_enable;
    cc->short_polling_ms = node->cfg->short_polling_time_mills;
    cc->slave_read_enable = node->cfg->slave_read_enable;
    cc->property_filter = node->cfg->enable_property_filter;
    cc->in_memory_max = bk_consume_cfg_in_memory_max(node->cfg);
    cc->addr = node->addr;
}

int64_t bk_consume_cfg_in_memory_max(const bk_config_t *cfg)
{
    return (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 100 *
           cfg->access_message_in_memory_max_ratio;
}
