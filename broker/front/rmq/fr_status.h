/* fr_status.h: the rmq front-end's one table from the core's neutral
 * statuses to rmq wire statuses, and the reply of a neutral result. */
#ifndef FR_STATUS_H
#define FR_STATUS_H

#include "bk_append.h"
#include "bk_status.h"
#include "rmq_rpc.h"

/* 1 if req carries header case want; else replies BAD_REQUEST naming the
 * command and the header it needs (header_name) and returns 0. */
int fr_need_header(rmq_conn_t *conn, const rmq_frame_t *req, int want, const char *header_name);

/* The RMQ__STATUS__* code of a neutral status. */
int fr_status_wire(bk_status_t status);

/* Answers to with r's wire status; its reason as the remark, after
 * "prefix: " when prefix is not NULL. Loop thread. */
void fr_reply_result(rmq_conn_t *conn, rmq_reply_to_t to, const bk_result_t *r, const char *prefix);

/* A reply kept until an append ends (the connection referenced). */
typedef struct fr_pending fr_pending_t;

/* Keeps conn's reply to; prefix (static, may be NULL) opens a failure's
 * remark. NULL when out of memory. */
fr_pending_t *fr_pending_new(rmq_conn_t *conn, rmq_reply_to_t to, const char *prefix);

/* bk_append_fn: answers SUCCESS (no header; the result's reason, if any, as
 * the remark) or the failure, then frees p. */
void fr_pending_answer(const bk_append_out_t *out, void *p);

/* Stores msgs[0..n) through the append path and answers to once the append
 * ended (SUCCESS, no header). Returns 1 if the log holds the messages.
 * Loop thread. */
int fr_append_reply(bk_append_t *ap, const st_msg_t *msgs, size_t n, rmq_conn_t *conn, rmq_reply_to_t to,
                    const char *prefix);

#endif
