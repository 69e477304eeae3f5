/* gr_status.c: neutral status and rmq_err_t -> v2 Code, in one table each,
 * and the v2 Status of an answer. */
#include "gr_status.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

int gr_status_set(gr_status_t *st, gr_code_t code, const char *fmt, ...)
{
    va_list ap;

    st->code = code;
    va_start(ap, fmt);
    vsnprintf(st->message, sizeof st->message, fmt, ap);
    va_end(ap);
    return 0;
}

int gr_status_of_result(gr_status_t *st, const bk_result_t *r)
{
    const char *text = r->status == BK_OK ? "OK" : r->why;
    size_t n = strnlen(text, sizeof st->message - 1);

    st->code = gr_code_of_status(r->status);
    memcpy(st->message, text, n);
    st->message[n] = '\0';
    return 0;
}

gr_code_t gr_code_of_status(bk_status_t status)
{
    static const gr_code_t code[] = {
        [BK_OK] = APACHE__ROCKETMQ__V2__CODE__OK,
        [BK_BAD_REQUEST] = APACHE__ROCKETMQ__V2__CODE__BAD_REQUEST,
        [BK_MESSAGE_ILLEGAL] = APACHE__ROCKETMQ__V2__CODE__BAD_REQUEST,
        [BK_MESSAGE_TOO_LARGE] = APACHE__ROCKETMQ__V2__CODE__MESSAGE_BODY_TOO_LARGE,
        [BK_NAME_ILLEGAL] = APACHE__ROCKETMQ__V2__CODE__ILLEGAL_TOPIC,
        [BK_NO_PERMISSION] = APACHE__ROCKETMQ__V2__CODE__FORBIDDEN,
        [BK_TOPIC_NOT_EXIST] = APACHE__ROCKETMQ__V2__CODE__TOPIC_NOT_FOUND,
        [BK_GROUP_NOT_EXIST] = APACHE__ROCKETMQ__V2__CODE__CONSUMER_GROUP_NOT_FOUND,
        [BK_NOT_MASTER] = APACHE__ROCKETMQ__V2__CODE__FORBIDDEN,
        [BK_SHUTDOWN] = APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR,
        [BK_DISK_FULL] = APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR,
        [BK_WRITE_ERROR] = APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR,
        [BK_FLUSH_DISK_TIMEOUT] = APACHE__ROCKETMQ__V2__CODE__MASTER_PERSISTENCE_TIMEOUT,
        [BK_FLUSH_SLAVE_TIMEOUT] = APACHE__ROCKETMQ__V2__CODE__SLAVE_PERSISTENCE_TIMEOUT,
        [BK_SLAVE_NOT_AVAILABLE] = APACHE__ROCKETMQ__V2__CODE__HA_NOT_AVAILABLE,
        [BK_IN_SYNC_REPLICAS_NOT_ENOUGH] = APACHE__ROCKETMQ__V2__CODE__HA_NOT_AVAILABLE,
        [BK_BUSY] = APACHE__ROCKETMQ__V2__CODE__TOO_MANY_REQUESTS,
        [BK_TRANSACTION_FAILED] = APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR,
        [BK_SUBSCRIPTION_PARSE_FAILED] = APACHE__ROCKETMQ__V2__CODE__ILLEGAL_FILTER_EXPRESSION,
        [BK_NOT_FOUND] = APACHE__ROCKETMQ__V2__CODE__NOT_FOUND,
        /* RocketMQ's proxy has no code for ILLEGAL_OPERATION: its default */
        [BK_ILLEGAL_OPERATION] = APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR,
        [BK_INVALID_PARAMETER] = APACHE__ROCKETMQ__V2__CODE__BAD_REQUEST,
        [BK_SYSTEM_ERROR] = APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR,
    };
    if ((unsigned)status < sizeof(code) / sizeof(code[0]) && code[status] != 0)
        return code[status];
    return APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR;
}

gr_code_t gr_code_of_err(rmq_err_t err)
{
    switch (err) {
    case RMQ_OK: return APACHE__ROCKETMQ__V2__CODE__OK;
    case RMQ_EINVAL:
    case RMQ_EPROTO: return APACHE__ROCKETMQ__V2__CODE__BAD_REQUEST;
    case RMQ_ETOOBIG: return APACHE__ROCKETMQ__V2__CODE__PAYLOAD_TOO_LARGE;
    case RMQ_ENOTFOUND: return APACHE__ROCKETMQ__V2__CODE__NOT_FOUND;
    case RMQ_EBUSY: return APACHE__ROCKETMQ__V2__CODE__TOO_MANY_REQUESTS;
    case RMQ_ETIMEDOUT: return APACHE__ROCKETMQ__V2__CODE__PROXY_TIMEOUT;
    case RMQ_ECORRUPT: return APACHE__ROCKETMQ__V2__CODE__MESSAGE_CORRUPTED;
    default: return APACHE__ROCKETMQ__V2__CODE__INTERNAL_SERVER_ERROR;
    }
}

gr_code_t gr_code_overall(const gr_code_t *codes, size_t n)
{
    for (size_t i = 1; i < n; i++)
        if (codes[i] != codes[0])
            return APACHE__ROCKETMQ__V2__CODE__MULTIPLE_RESULTS;
    return n ? codes[0] : APACHE__ROCKETMQ__V2__CODE__OK;
}

void gr_status_to_pb(const gr_status_t *st, Apache__Rocketmq__V2__Status *out)
{
    apache__rocketmq__v2__status__init(out);
    out->code = st->code;
    out->message = (char *)st->message;
}
