/* fr_perm.h: who signed a request of the rmq protocol (the account the
 * codec's signature check admitted), and whether the core (bk_perm.h) lets
 * them do the operation the request's code is (fr_routes.c) on the topic
 * and group the handler decoded. Loop thread. */
#ifndef FR_PERM_H
#define FR_PERM_H

#include "bk_front.h"
#include "bk_perm.h"

/* Fills who with the signer of req (account NULL when access control is
 * off or the peer is whitelisted): 0, or -1 after answering NO_PERMISSION. */
int fr_caller(const bk_front_t *fe, rmq_conn_t *conn, const rmq_frame_t *req, bk_caller_t *who);

/* 1 if the signer of req may do the operation of req's code on topic and
 * group (the decoded request's names; NULL where it names none); else 0
 * after answering NO_PERMISSION with the core's reason. */
int fr_allowed(const bk_front_t *fe, rmq_conn_t *conn, const rmq_frame_t *req, const char *topic,
               const char *group);

#endif
