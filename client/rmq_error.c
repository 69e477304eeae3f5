/* rmq_error.c: filling rmq_error_t values: the error, the broker status and
 * one readable line, from local failures and from rpc outcomes. */
#include <stdio.h>
#include <string.h>

#include "rmq_client_int.h"

rmq_err_t rmq_error_set(rmq_error_t *e, rmq_err_t err, int status, const char *fmt, ...)
{
    if (!e)
        return err;
    e->err = err;
    e->status = status;
    int n = snprintf(e->text, sizeof e->text, "%s", rmq_strerror(err));
    if (status != 0 && n >= 0 && (size_t)n < sizeof e->text)
        n += snprintf(e->text + n, sizeof e->text - (size_t)n, ": %s", rmq_status_name(status));
    if (fmt && fmt[0] && n >= 0 && (size_t)n < sizeof e->text) {
        n += snprintf(e->text + n, sizeof e->text - (size_t)n, ": ");
        if (n >= 0 && (size_t)n < sizeof e->text) {
            va_list ap;
            va_start(ap, fmt);
            vsnprintf(e->text + n, sizeof e->text - (size_t)n, fmt, ap);
            va_end(ap);
        }
    }
    return err;
}

rmq_err_t rmq_error_from_rpc(rmq_error_t *e, rmq_err_t err, const rmq_frame_t *resp,
                             const char *what)
{
    if (err != RMQ_OK)
        return rmq_error_set(e, err, 0, "%s", what);
    if (!resp || !resp->cmd)
        return rmq_error_set(e, RMQ_EPROTO, 0, "%s: no response header", what);
    int status = resp->cmd->status;
    if (status == RMQ__STATUS__SUCCESS) {
        rmq_error_set(e, RMQ_OK, 0, NULL);
        return RMQ_OK;
    }
    const char *remark = resp->cmd->remark ? resp->cmd->remark : "";
    return rmq_error_set(e, RMQ_ESTATUS, status, "%s%s%s", what, remark[0] ? ": " : "", remark);
}
