/* fr_session.h: the rmq front-end's session (core/bk_session.h) over an
 * rmq connection: ids-changed notices and transaction check-backs as
 * oneway rmq requests. A connection gets its session on first use; the
 * connection's reference is dropped when it closes. Loop thread only. */
#ifndef FR_SESSION_H
#define FR_SESSION_H

#include "bk_session.h"
#include "rmq_rpc.h"

/* The session of conn, created on first use (borrowed: bk_session_ref to
 * keep it). NULL when out of memory. */
bk_session_t *fr_session_of(rmq_conn_t *conn);

/* The session of conn if it has one, else NULL (borrowed). */
bk_session_t *fr_session_find(const rmq_conn_t *conn);

/* conn closed: drops its reference to its session. */
void fr_session_conn_closed(rmq_conn_t *conn);

#endif
