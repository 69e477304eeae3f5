/* bk_tx.h: transactional messages on the broker (RocketMQ's two-phase
 * protocol). A SEND_MESSAGE with TRAN_MSG=true is stored as a half message
 * in RMQ_SYS_TRANS_HALF_TOPIC (queue 0; REAL_TOPIC/REAL_QID keep where it
 * goes), invisible to consumers. END_TRANSACTION commits (the message is
 * stored again under its real topic, through the delay scheduler) or rolls
 * back; either way an op record (body: the half's commit-log offset) goes
 * to RMQ_SYS_TRANS_OP_HALF_TOPIC, so the outcome survives a restart (the op
 * queue is re-read at start). On a master a checker scans halves older than
 * transactionTimeOut without an op record every transactionCheckInterval
 * and asks a producer session of the half's
 * group (PGROUP; producers announce their groups in HEART_BEAT), rolling
 * back after transactionCheckMax checks. Check counts live in memory.
 * Loop thread. */
#ifndef BK_TX_H
#define BK_TX_H

#include "bk_broker.h"

#define BK_TX_HALF_TOPIC RMQ_TOPIC_TRANS_HALF
#define BK_TX_OP_TOPIC RMQ_TOPIC_TRANS_OP

typedef struct bk_tx bk_tx_t;

/* Re-reads the op queue and starts the checker (masters). NULL on ENOMEM.
 * Owner: the caller (bk_tx_free). */
bk_tx_t *bk_tx_new(bk_broker_t *bk);
void bk_tx_free(bk_tx_t *tx);

/* Send path: a TRAN_MSG=true message is redirected to the half topic (m's
 * topic, queue, properties and tag code rewritten; the properties buffer
 * is tx's, valid until the next call). RMQ_EINVAL with *why for a message
 * that cannot be a half message. */
rmq_err_t bk_tx_divert(bk_tx_t *tx, st_msg_t *m, const char **why);

/* HEART_BEAT: remembers session ss as a producer of each of hb's producer groups. */
void bk_tx_heartbeat(bk_tx_t *tx, bk_session_t *ss, const Rmq__HeartbeatData *hb);
/* Forgets the session of a closing connection. */
void bk_tx_session_closed(bk_tx_t *tx, bk_session_t *ss);

#endif
