/* fr_reader.h: the core's reader (bk_query.h) for a request of the rmq
 * protocol: may the signer of this request read a topic, asked of the
 * broker's ACL once the core has read the record a request names by offset
 * or id. Loop thread; valid for the handler's call only. */
#ifndef FR_READER_H
#define FR_READER_H

#include "bk_broker.h"
#include "bk_query.h"

typedef struct fr_reader {
    bk_reader_t base;                /* what the core is given */
    const rmq_acl_t *acl;
    const char *peer;
    const Rmq__Command *cmd;
} fr_reader_t;

/* bk_reader_t.may_read over the signer of rd (an fr_reader_t) of the request. */
int fr_reader_may_read(void *arg, const char *topic, char *why, size_t whylen);

/* Fills rd for req from conn on bk (access control off: reads everything);
 * returns &rd->base. */
const bk_reader_t *fr_reader_init(fr_reader_t *rd, const bk_broker_t *bk, const rmq_conn_t *conn,
                                  const rmq_frame_t *req);

#endif
