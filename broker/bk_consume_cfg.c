/* bk_consume_cfg.c: the pull core's configuration from the broker's (see bk_consume_cfg.h). */
#include "bk_consume_cfg.h"

#include <string.h>
#include <unistd.h>

void bk_consume_cfg_fill(const bk_node_t *bk, bk_consume_config_t *cc)
{
    memset(cc, 0, sizeof(*cc));
    cc->base = bk->base;
    cc->store = bk->store;
    cc->topics = bk->topics;
    cc->groups = bk->groups;
    cc->offsets = bk->offsets;
    cc->is_slave = bk_node_role(bk) == BK_SLAVE;
    cc->permission = bk->cfg->broker_permission;
    cc->max_transfer_count = bk->cfg->max_transfer_count_on_message_in_memory;
    cc->max_transfer_bytes = bk->cfg->max_transfer_bytes_on_message_in_memory;
    cc->long_polling = bk->cfg->long_polling_enable;
    cc->short_polling_ms = bk->cfg->short_polling_time_mills;
    cc->slave_read_enable = bk->cfg->slave_read_enable;
    cc->in_memory_max = bk_consume_cfg_in_memory_max(bk->cfg);
    cc->addr = bk->addr;
}

int64_t bk_consume_cfg_in_memory_max(const bk_config_t *cfg)
{
    return (int64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE) / 100 *
           cfg->access_message_in_memory_max_ratio;
}
