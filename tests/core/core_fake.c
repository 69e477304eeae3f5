/* core_fake.c: a fake client session for core tests: it records what the
 * core asks of a client (ids-changed notices, offset resets, transaction
 * checks, closes)
 * instead of sending anything. */
#include "core_fake.h"

#include <stdio.h>
#include <string.h>

static rmq_err_t fake_notify(bk_session_t *ss, const char *group)
{
    core_fake_session_t *f = (core_fake_session_t *)ss;
    f->notified++;
    snprintf(f->group, sizeof f->group, "%s", group);
    return RMQ_OK;
}

static rmq_err_t fake_reset(bk_session_t *ss, const bk_offset_reset_t *rs)
{
    core_fake_session_t *f = (core_fake_session_t *)ss;
    f->reset++;
    f->reset_offset0 = rs->n ? rs->offsets[0] : -1;
    return RMQ_OK;
}

static rmq_err_t fake_check(bk_session_t *ss, const bk_tx_check_t *chk)
{
    core_fake_session_t *f = (core_fake_session_t *)ss;
    f->checked++;
    f->check_offset = chk->commit_log_offset;
    return RMQ_OK;
}

static int fake_is_open(const bk_session_t *ss)
{
    return !((const core_fake_session_t *)ss)->closed;
}

static const char *fake_peer(const bk_session_t *ss)
{
    return "fake:1";
}

static void fake_close(bk_session_t *ss, const char *reason)
{
    ((core_fake_session_t *)ss)->closed = 1;
}

static void fake_free(bk_session_t *ss)
{
    ((core_fake_session_t *)ss)->freed = 1;
}

static const bk_session_ops_t fake_ops = {.protocol = "fake", .notify_ids_changed = fake_notify, .reset_offset = fake_reset,
                                          .check_transaction = fake_check, .is_open = fake_is_open,
                                          .peer = fake_peer, .close = fake_close, .free = fake_free};

void core_fake_session_init(core_fake_session_t *f)
{
    memset(f, 0, sizeof *f);
    bk_session_init(&f->base, &fake_ops);
}
