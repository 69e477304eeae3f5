/* fr_schedule.c: the delay scheduler's rmq forms (see fr_schedule.h): the
 * neutral progress to and from a DelayOffsetTable (one QueueOffset
 * {queue_id = level, offset} per level), for the progress file, the slave's
 * metadata sync and GET_ALL_DELAY_OFFSET. */
#include "fr_schedule.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fr_routes.h"
#include "fr_perm.h"

/* The table of p; its entries point into qo/qop (BK_SCHEDULE_LEVELS_MAX)
 * and into p. */
static void progress_table(const bk_schedule_progress_t *p, Rmq__DelayOffsetTable *tab, Rmq__QueueOffset *qo,
                           Rmq__QueueOffset **qop)
{
    rmq__delay_offset_table__init(tab);
    for (int i = 0; i < p->n_levels; i++) {
        rmq__queue_offset__init(&qo[i]);
        qo[i].queue_id = i + 1;
        qo[i].offset = p->offsets[i];
        qop[i] = &qo[i];
    }
    tab->n_levels = (size_t)p->n_levels;
    tab->levels = qop;
    tab->timer_due = p->timer_due;
    tab->timer_offset = p->timer_offset;
    tab->timer_low = p->timer_low;
    tab->delay_levels = (char *)p->delay_levels;
}

/* The progress of tab (levels outside 1..BK_SCHEDULE_LEVELS_MAX ignored). */
static void table_progress(const Rmq__DelayOffsetTable *tab, bk_schedule_progress_t *p)
{
    memset(p, 0, sizeof(*p));
    for (size_t i = 0; i < tab->n_levels; i++) {
        int lv = tab->levels[i]->queue_id;
        if (lv < 1 || lv > BK_SCHEDULE_LEVELS_MAX)
            continue;
        p->offsets[lv - 1] = tab->levels[i]->offset;
        if (lv > p->n_levels)
            p->n_levels = lv;
    }
    p->timer_due = tab->timer_due;
    p->timer_offset = tab->timer_offset;
    p->timer_low = tab->timer_low;
    snprintf(p->delay_levels, sizeof(p->delay_levels), "%s", tab->delay_levels ? tab->delay_levels : "");
}

uint8_t *fr_schedule_encode(const bk_schedule_progress_t *p, size_t *len)
{
    Rmq__DelayOffsetTable tab;
    Rmq__QueueOffset qo[BK_SCHEDULE_LEVELS_MAX], *qop[BK_SCHEDULE_LEVELS_MAX];
    progress_table(p, &tab, qo, qop);
    *len = rmq__delay_offset_table__get_packed_size(&tab);
    uint8_t *buf = malloc(*len ? *len : 1);
    if (buf)
        rmq__delay_offset_table__pack(&tab, buf);
    return buf;
}

rmq_err_t fr_schedule_decode(const uint8_t *data, size_t len, bk_schedule_progress_t *p)
{
    Rmq__DelayOffsetTable *tab = rmq__delay_offset_table__unpack(NULL, len, data);
    if (!tab)
        return RMQ_ECORRUPT;
    table_progress(tab, p);
    rmq__delay_offset_table__free_unpacked(tab, NULL);
    return RMQ_OK;
}

bk_schedule_t *fr_schedule_new(const bk_node_t *node, bk_produce_t *produce, bk_stats_t *stats,
                               const char *config_dir, char *err, size_t errlen)
{
    char path[PATH_MAX + 32];
    snprintf(path, sizeof(path), "%s/delayOffset.pb", config_dir);
    bk_schedule_config_t sc = {
        .base = node->base,
        .store = node->store,
        .append = node->append,
        .topics = node->topics,
        .produce = produce,
        .persist = node->persist,
        .stats = stats,
        .delay_levels = node->cfg->message_delay_level,
        .horizon_ms = node->cfg->file_reserved_time * 3600 * 1000,
        .is_slave = bk_node_role(node) == BK_SLAVE,
        .path = path,
        .encode = fr_schedule_encode,
        .decode = fr_schedule_decode,
    };
    return bk_schedule_new(&sc, err, errlen);
}

void fr_schedule_apply(bk_schedule_t *s, const Rmq__DelayOffsetTable *tab)
{
    bk_schedule_progress_t *p = calloc(1, sizeof(*p));
    if (!p)
        return;
    table_progress(tab, p);
    bk_schedule_merge(s, p);
    free(p);
}

/* GET_ALL_DELAY_OFFSET: the scheduler's persisted progress (slaves copy it). */
void fr_get_all_delay_offset(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    Rmq__DelayOffsetTable tab;
    Rmq__QueueOffset qo[BK_SCHEDULE_LEVELS_MAX], *qop[BK_SCHEDULE_LEVELS_MAX];
    if (!fr_allowed(fe, conn, req, NULL, NULL))
        return;
    bk_schedule_progress_t *p = calloc(1, sizeof(*p));
    if (!p) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "out of memory");
        return;
    }
    bk_schedule_progress(fe->schedule, p);
    progress_table(p, &tab, qo, qop);
    Rmq__Command resp = RMQ__COMMAND__INIT;
    resp.header_case = RMQ__COMMAND__HEADER_DELAY_OFFSET_TABLE;
    resp.delay_offset_table = &tab;
    rmq_conn_reply(conn, rmq_reply_to(req->cmd), &resp, RMQ__STATUS__SUCCESS, NULL, NULL);
    free(p);
}
