/* fr_sendback.c: the rmq front-end of CONSUMER_SEND_MSG_BACK: decodes the
 * ConsumerSendMsgBackRequest header into the core's neutral request
 * (core/bk_sendback.c, which reads the record, checks it and stores the
 * retry or dead-letter copy) and answers its result. */
#include "bk_front.h"
#include "bk_sendback.h"
#include "fr_routes.h"
#include "fr_perm.h"
#include "fr_status.h"

#define SENDBACK_OP "CONSUMER_SEND_MSG_BACK"

/* CONSUMER_SEND_MSG_BACK: the message at offset failed in group; retry it
 * later or bury it in the group's dead-letter queue. */
void fr_send_back(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_front_t *fe = arg;
    rmq_reply_to_t to = rmq_reply_to(req->cmd);
    if (!fr_need_header(conn, req, RMQ__COMMAND__HEADER_SEND_BACK, "ConsumerSendMsgBackRequest (send_back)"))
        return;
    const Rmq__ConsumerSendMsgBackRequest *h = req->cmd->send_back;
    bk_caller_t who;
    bk_perm_reader_t rd;
    if (!fr_allowed(fe, conn, req, NULL, h->group) || fr_caller(fe, conn, req, &who) != 0)
        return;
    bk_sendback_req_t sr = {
        .group = h->group,
        .offset = h->offset,
        .delay_level = h->delay_level,
        .max_reconsume_times = h->max_reconsume_times,
        .origin_topic = h->origin_topic,
        .origin_msg_id = h->origin_msg_id,
        .reader = bk_perm_reader_init(&rd, &who, BK_OP_SEND_BACK),
    };
    bk_append_out_t out;
    fr_pending_t *p = fr_pending_new(conn, to, SENDBACK_OP);
    if (!p) {
        rmq_conn_replyf(conn, to, RMQ__STATUS__SYSTEM_ERROR, SENDBACK_OP ": out of memory");
        return;
    }
    if (bk_sendback_run(fe->sendback, &sr, &out, fr_pending_answer, p))
        fr_pending_answer(&out, p);
    if (out.stored)
        bk_stats_add(fe->stats, BK_STAT_PUT, 1);
}
