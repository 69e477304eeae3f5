/* gr_status.h: the gRPC front's answer status: a v2 Code and its message,
 * carried in each response's Status with grpc-status 0 (GRPC-NOTES.md §1.2,
 * §2.2), and the one table from the core's neutral statuses (and rmq_err_t)
 * to v2 Codes. Any thread. */
#ifndef GR_STATUS_H
#define GR_STATUS_H

#include <stddef.h>

#include "apache/rocketmq/v2/definition.pb-c.h"
#include "bk_status.h"
#include "rmq_err.h"

typedef Apache__Rocketmq__V2__Code gr_code_t;

typedef struct gr_status {
    gr_code_t code;
    char message[BK_WHY_MAX];
} gr_status_t;

/* Sets st to code with a printf-formatted message; returns 0, so a
 * predicate can "return gr_status_set(...)". */
int gr_status_set(gr_status_t *st, gr_code_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Sets st to the v2 form of the core's result r: its code, and "OK" or
 * r's reason (copied, no formatting: a send's answer path); returns 0,
 * as gr_status_set does. */
int gr_status_of_result(gr_status_t *st, const bk_result_t *r);

/* The v2 code of a neutral status (BK_NAME_ILLEGAL names a topic here:
 * ILLEGAL_TOPIC; a group's caller says ILLEGAL_CONSUMER_GROUP itself). */
gr_code_t gr_code_of_status(bk_status_t status);

/* The v2 code of an internal error (a decode or mapping failure). */
gr_code_t gr_code_of_err(rmq_err_t err);

/* The top-level code of a batch answer (SendMessage, AckMessage) whose
 * entries got codes[0..n): that code when all agree (OK for none), else
 * MULTIPLE_RESULTS, as the proxy answers. */
gr_code_t gr_code_overall(const gr_code_t *codes, size_t n);

/* st as a v2 Status: out's message points into st (st outlives out). */
void gr_status_to_pb(const gr_status_t *st, Apache__Rocketmq__V2__Status *out);

#endif
