/* fr_routes.h: the native (rmq) front-end's request handlers, one per request
 * family operation, and the one table that maps request codes to them. Each
 * handler takes the front's view of the broker (bk_front_t *, bk_front.h) as
 * its argument; a send's takes the front's send queue (fr_send_t *). */
#ifndef FR_ROUTES_H
#define FR_ROUTES_H

#include "bk_clients.h"
#include "bk_front.h"
#include "bk_perm.h"
#include "rmq_rpc.h"

typedef struct fr_send fr_send_t;

/* fr_offsets.c */
void fr_query_consumer_offset(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_update_consumer_offset(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_queue_offset(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_all_offsets(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_consume_stats(rmq_conn_t *conn, rmq_frame_t *req, void *fe);

/* fr_admin.c */
void fr_runtime_info(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_update_topic(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_update_topic_list(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_delete_topic(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_all_topics(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_topic_stats(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_update_group(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_delete_group(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_all_groups(rmq_conn_t *conn, rmq_frame_t *req, void *fe);

/* fr_clients.c */
/* Fills hb from the wire heartbeat w (strings borrowed from w); the arrays
 * are allocated in *cons and *subs (the caller frees both, set or not).
 * 0 when out of memory. */
int fr_heartbeat_decode(const Rmq__HeartbeatData *w, bk_heartbeat_t *hb, bk_hb_consumer_t **cons,
                        bk_hb_sub_t **subs);
void fr_heartbeat(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_unregister_client(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_consumer_list(rmq_conn_t *conn, rmq_frame_t *req, void *fe);

/* fr_tx.c */
/* The wire transaction state as the core's (bk_tx_state_t); -1 for a value
 * the protocol does not define. */
int fr_tx_state(Rmq__TransactionState s);
void fr_end_transaction(rmq_conn_t *conn, rmq_frame_t *req, void *fe);

/* fr_schedule.c */
void fr_get_all_delay_offset(rmq_conn_t *conn, rmq_frame_t *req, void *fe);

/* fr_sendback.c */
void fr_send_back(rmq_conn_t *conn, rmq_frame_t *req, void *fe);

/* fr_locks.c */
void fr_lock(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_unlock(rmq_conn_t *conn, rmq_frame_t *req, void *fe);

/* fr_send.c: the native front's queue of sends (the core's waiting and
 * back-pressure behind it); arg of fr_send is the fr_send_t. */
fr_send_t *fr_send_new(bk_front_t *fe);
void fr_send_free(fr_send_t *s);
void fr_send(rmq_conn_t *conn, rmq_frame_t *req, void *s);

/* fr_pull.c */
void fr_pull(rmq_conn_t *conn, rmq_frame_t *req, void *fe);

/* fr_query.c */
void fr_query_message(rmq_conn_t *conn, rmq_frame_t *req, void *fe);
void fr_view_message(rmq_conn_t *conn, rmq_frame_t *req, void *fe);

/* Registers every native request code of the table on fe->srv: the sends
 * with s, the others with fe. */
void fr_routes_install(bk_front_t *fe, fr_send_t *s);

/* One served code: its handler and the core's operation it is. */
typedef struct fr_route {
    int code;
    rmq_handler_fn fn;
    bk_op_t op;
} fr_route_t;

/* The i-th served code, or NULL past the last (for the permission test). */
const fr_route_t *fr_route_at(size_t i);
/* The operation code is (BK_OP_UNDECLARED for a code not served). */
bk_op_t fr_routes_op(int code);

#endif
