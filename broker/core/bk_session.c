/* bk_session.c: session references and the calls through a front-end's
 * operations (see bk_session.h). */
#include "bk_session.h"

#include <stdlib.h>

void bk_session_init(bk_session_t *ss, const bk_session_ops_t *ops)
{
    ss->ops = ops;
    ss->refs = 1;
    ss->groups = 0;
}

void bk_session_ref(bk_session_t *ss)
{
    ss->refs++;
}

void bk_session_unref(bk_session_t *ss)
{
    if (ss && --ss->refs == 0)
        ss->ops->free(ss);
}

rmq_err_t bk_session_notify_ids_changed(bk_session_t *ss, const char *group)
{
    return ss->ops->notify_ids_changed(ss, group);
}

rmq_err_t bk_session_reset_offset(bk_session_t *ss, const bk_offset_reset_t *rs)
{
    return ss->ops->reset_offset ? ss->ops->reset_offset(ss, rs) : RMQ_EINVAL;
}

void bk_offset_reset_clear(bk_offset_reset_t *rs)
{
    free(rs->offsets);
    rs->offsets = NULL;
    rs->n = 0;
}

rmq_err_t bk_session_ask(bk_session_t *ss, const bk_client_ask_t *q, bk_client_answer_fn fn, void *arg)
{
    return ss->ops->ask ? ss->ops->ask(ss, q, fn, arg) : RMQ_EINVAL;
}

rmq_err_t bk_session_check_transaction(bk_session_t *ss, const bk_tx_check_t *chk)
{
    return ss->ops->check_transaction(ss, chk);
}

int bk_session_is_open(const bk_session_t *ss)
{
    return ss->ops->is_open(ss);
}

const char *bk_session_peer(const bk_session_t *ss)
{
    return ss->ops->peer(ss);
}

void bk_session_close(bk_session_t *ss, const char *reason)
{
    ss->ops->close(ss, reason);
}
