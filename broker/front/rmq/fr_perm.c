/* fr_perm.c: the rmq front's caller (the signer of a request) and its one
 * permission check through the core's table (fr_perm.h). */
#include "fr_perm.h"

#include "fr_routes.h"
#include "fr_status.h"
#include "rmq_acl.h"

int fr_caller(const bk_front_t *fe, rmq_conn_t *conn, const rmq_frame_t *req, bk_caller_t *who)
{
    char remark[512];
    *who = (bk_caller_t){NULL, NULL, NULL};
    if (!fe->node->sec->acl)
        return 0;                    /* access control off: trusted, nothing to name */
    who->request = rmq_request_name(req->cmd->code);
    who->peer = rmq_conn_peer(conn);
    if (rmq_acl_request_signer(fe->node->sec->acl, who->peer, req->cmd, &who->account, remark, sizeof remark) >= 0)
        return 0;
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__NO_PERMISSION, "%s", remark);
    return -1;
}

int fr_allowed(const bk_front_t *fe, rmq_conn_t *conn, const rmq_frame_t *req, const char *topic,
               const char *group)
{
    bk_caller_t who;
    bk_result_t r;
    if (fr_caller(fe, conn, req, &who) != 0)
        return 0;
    if (!who.account || bk_perm_check(&who, fr_routes_op(req->cmd->code), topic, group, &r))
        return 1;
    fr_reply_result(conn, rmq_reply_to(req->cmd), &r, NULL);
    return 0;
}
