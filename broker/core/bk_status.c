/* bk_status.c: filling a neutral result and naming its status. */
#include "bk_status.h"

#include <stdarg.h>
#include <stdio.h>

bk_status_t bk_result_set(bk_result_t *r, bk_status_t status, const char *fmt, ...)
{
    va_list ap;
    r->status = status;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof(r->why), fmt, ap);
    va_end(ap);
    return status;
}

const char *bk_status_name(bk_status_t status)
{
    static const char *const names[] = {
        [BK_OK] = "OK",
        [BK_BAD_REQUEST] = "BAD_REQUEST",
        [BK_MESSAGE_ILLEGAL] = "MESSAGE_ILLEGAL",
        [BK_MESSAGE_TOO_LARGE] = "MESSAGE_TOO_LARGE",
        [BK_NAME_ILLEGAL] = "NAME_ILLEGAL",
        [BK_NO_PERMISSION] = "NO_PERMISSION",
        [BK_TOPIC_NOT_EXIST] = "TOPIC_NOT_EXIST",
        [BK_GROUP_NOT_EXIST] = "GROUP_NOT_EXIST",
        [BK_NOT_MASTER] = "NOT_MASTER",
        [BK_SHUTDOWN] = "SHUTDOWN",
        [BK_DISK_FULL] = "DISK_FULL",
        [BK_WRITE_ERROR] = "WRITE_ERROR",
        [BK_FLUSH_DISK_TIMEOUT] = "FLUSH_DISK_TIMEOUT",
        [BK_FLUSH_SLAVE_TIMEOUT] = "FLUSH_SLAVE_TIMEOUT",
        [BK_SLAVE_NOT_AVAILABLE] = "SLAVE_NOT_AVAILABLE",
        [BK_BUSY] = "BUSY",
        [BK_TRANSACTION_FAILED] = "TRANSACTION_FAILED",
        [BK_SUBSCRIPTION_PARSE_FAILED] = "SUBSCRIPTION_PARSE_FAILED",
        [BK_NOT_FOUND] = "NOT_FOUND",
        [BK_ILLEGAL_OPERATION] = "ILLEGAL_OPERATION",
        [BK_INVALID_PARAMETER] = "INVALID_PARAMETER",
        [BK_SYSTEM_ERROR] = "SYSTEM_ERROR",
        [BK_IN_SYNC_REPLICAS_NOT_ENOUGH] = "IN_SYNC_REPLICAS_NOT_ENOUGH",
    };
    if ((unsigned)status < sizeof(names) / sizeof(names[0]) && names[status])
        return names[status];
    return "UNKNOWN";
}
