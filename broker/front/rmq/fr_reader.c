/* fr_reader.c: the rmq front's reader for the core: the record's topic is
 * checked against the ACL account that signed the request (fr_reader.h). */
#include "fr_reader.h"

#include "rmq_acl.h"

int fr_reader_may_read(void *arg, const char *topic, char *why, size_t whylen)
{
    const fr_reader_t *rd = arg;
    return rmq_acl_request_may_read(rd->acl, rd->peer, rd->cmd, topic, why, whylen);
}

const bk_reader_t *fr_reader_init(fr_reader_t *rd, const bk_broker_t *bk, const rmq_conn_t *conn,
                                  const rmq_frame_t *req)
{
    rd->acl = bk->sec.acl;
    rd->peer = rmq_conn_peer(conn);
    rd->cmd = req->cmd;
    rd->base.may_read = bk->sec.acl ? fr_reader_may_read : NULL;
    rd->base.arg = rd;
    return &rd->base;
}
