/* fr_remoting.h: the broker's RocketMQ remoting front-end, on the broker's
 * own port next to the native protocol (the transport picks the codec from
 * a connection's first bytes). Each handler reads its request's extFields,
 * has the core check what the signer may do on the names it read (the
 * codec checks only the signature; bk_perm.h decides), calls the core (core/bk_produce.c for sends, core/bk_consume.c for pulls
 * and their hold for long polling) or the broker's tables, and answers
 * with RocketMQ's response codes, header fields and bodies. What the front
 * asks of the broker's offset and client tables goes through one function
 * per operation (fr_remoting_core.c). Loop thread only. */
#ifndef FR_REMOTING_H
#define FR_REMOTING_H

#include <stddef.h>
#include <stdint.h>

#include "bk_batch.h"
#include "bk_front.h"
#include "bk_consume.h"
#include "bk_perm.h"
#include "bk_query.h"
#include "bk_status.h"
#include "rmq_codec_remoting.h"


typedef struct fr_remoting fr_remoting_t;
typedef struct fr_rm_ask fr_rm_ask_t;

struct fr_remoting {
    bk_front_t *fe;
    int32_t next_opaque;             /* of requests the broker sends (ids changed, questions) */
    fr_rm_ask_t *asks;               /* questions put to clients, awaiting their answer (fr_remoting_diag.c) */
    bk_batch_t batch;                /* batch scratch, reused: messages, merged properties, msgIds */
};

/* ---- what bk_broker.c calls --------------------------------------------- */

/* Registers the remoting codec and its handlers on fe->srv (after the
 * native handlers). NULL with err filled on failure. */
fr_remoting_t *fr_remoting_start(bk_front_t *fe, char *err, size_t errlen);
void fr_remoting_free(fr_remoting_t *rm);

/* ---- shared by the front's files ---------------------------------------- */

/* Where a deferred answer goes: what rmq_remoting_reply reads of a request. */
typedef struct fr_rm_to {
    int serialize_type;
    int32_t opaque;
    int32_t flags;
    int version;
} fr_rm_to_t;

fr_rm_to_t fr_rm_to(const rmq_remoting_request_t *req);
/* Answers to on conn with rep (nothing for a oneway request). */
void fr_rm_reply_to(rmq_conn_t *conn, const fr_rm_to_t *to, const rmq_remoting_reply_t *rep);

/* RocketMQ's response code for a neutral status. */
int fr_rm_status_code(bk_status_t status);
/* Answers SUCCESS with body (NULL: none), or SYSTEM_ERROR when body could
 * not be made contiguous (out of memory). */
void fr_rm_reply_body(rmq_conn_t *conn, const rmq_remoting_request_t *req, struct evbuffer *body);
/* Answers req with r's code and reason. */
void fr_rm_reply_result(rmq_conn_t *conn, const rmq_remoting_request_t *req, const bk_result_t *r);

/* extField key (or, when not NULL, its SEND_MESSAGE_V2 alias alt). With
 * required, answers SYSTEM_ERROR naming the field and returns NULL when it
 * is absent; otherwise dflt. */
const char *fr_rm_str(rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *key, const char *alt,
                      int required, const char *dflt);
/* An integer extField in [min, max]; absent: dflt unless required. 0 with
 * *out set; -1 after answering SYSTEM_ERROR naming the field and the rule. */
int fr_rm_int(rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *key, const char *alt,
              int required, int64_t min, int64_t max, int64_t dflt, int64_t *out);

/* A boolean extField ("true" or "false", any case); absent: dflt unless
 * required. 0 with *out set; -1 after answering SYSTEM_ERROR naming it. */
int fr_rm_bool(rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *key, int required, int dflt,
               int *out);

/* Who signed req (a request the codec admitted): 0 with who filled
 * (account NULL when access control is off or the peer is whitelisted);
 * -1 after answering NO_PERMISSION when no known account signed it. */
int fr_rm_caller(const fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req, bk_caller_t *who);

/* Whether the signer of req may do the operation its code is (fr_rm_op)
 * on topic and group, the names of the decoded request the handler is
 * about to execute (NULL where it names none): 1, or 0 after answering
 * NO_PERMISSION with the core's reason. */
int fr_rm_allowed(const fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *topic,
                  const char *group);

/* One served code: its handler and the core's operation it is. */
typedef struct fr_rm_route {
    int code;
    rmq_remoting_handler_fn fn;
    bk_op_t op;
} fr_rm_route_t;

/* The i-th served code, or NULL past the last (for the permission test). */
const fr_rm_route_t *fr_rm_route_at(size_t i);
/* The operation code is (BK_OP_UNDECLARED for a code not served). */
bk_op_t fr_rm_op(int code);

/* The session of a remoting connection, created on first use (borrowed);
 * NULL when out of memory. Its pushes use req's encoding. */
bk_session_t *fr_rm_session_of(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req);

/* ---- the broker core's operations, one function each (fr_remoting_core.c) */

int64_t fr_rm_core_offset_query(bk_front_t *fe, const char *topic, const char *group, int32_t queue_id);
/* 1 when the queue still starts at offset 0 and that message (if any) ends
 * within accessMessageInMemoryMaxRatio of memory from the log's end, the
 * "not in disk" of RocketMQ's checkInDiskByConsumeOffset; else 0. */
int fr_rm_core_queue_head_in_memory(bk_front_t *fe, const char *topic, int32_t queue_id);
/* Commits offset through the core (which streams it to slaves); BK_OK or a
 * refusal with r set. */
bk_status_t fr_rm_core_offset_commit(bk_front_t *fe, const char *topic, const char *group, int32_t queue_id,
                                     int64_t offset, bk_result_t *r);
/* Registers the groups of hb (creating subscription groups and their retry
 * topics) and the client on session ss. 0, or -1 with r set. */
int fr_rm_core_heartbeat(bk_front_t *fe, bk_session_t *ss, const bk_caller_t *who, const bk_heartbeat_t *hb,
                         bk_result_t *r);
/* Removes client_id from group (every group if ""), where session ss registered it. */
void fr_rm_core_unregister(bk_front_t *fe, bk_session_t *ss, const char *client_id, const char *group);
size_t fr_rm_core_consumer_ids(bk_front_t *fe, const char *group, const char **ids, size_t cap);
/* The group's subscription expression for topic from heartbeats, or NULL;
 * its type into *type. */
const char *fr_rm_core_subscription(bk_front_t *fe, const char *group, const char *topic, rmq_expr_type_t *type);

/* ---- handlers (rmq_remoting_handler_fn; arg is the fr_remoting_t) ------- */

void fr_rm_handle_send(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
/* RECALL_MESSAGE (370): a timer message's delete marker through the core's
 * recall and send, answered with RecallMessageResponseHeader (msgId). */
void fr_rm_handle_recall(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_view(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_pull(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_heartbeat(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_unregister(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_consumer_list(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_check_client(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_offset_query(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_offset_update(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_queue_offset(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
/* LOCK_BATCH_MQ, UNLOCK_BATCH_MQ (fr_remoting_locks.c) */
void fr_rm_handle_lock(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_unlock(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
/* QUERY_MESSAGE (fr_remoting_query.c; VIEW_MESSAGE_BY_ID above is there too) */
void fr_rm_handle_query(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
/* fr_remoting_tx.c */
void fr_rm_handle_send_back(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_end_transaction(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);

/* POP_MESSAGE, ACK_MESSAGE, CHANGE_MESSAGE_INVISIBLETIME, BATCH_ACK_MESSAGE (fr_remoting_pop.c) */
void fr_rm_handle_pop(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_ack(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_change_invisible(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_batch_ack(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
/* fr_remoting_assign.c */
void fr_rm_handle_query_assignment(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_request_mode(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);

/* administration (fr_remoting_admin.c) and queries by key (fr_remoting_query.c) */
void fr_rm_handle_update_topic(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_delete_topic(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_update_group(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_delete_group(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_reset_offset(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_clone_offset(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_update_topic_list(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_update_group_list(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_consumer_status(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_consumer_connections(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_broker_stats(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_broker_consume_stats(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
/* The reads of one shape (read the names, ask the core, answer a JSON
 * body), one row each in fr_remoting_admin.c: GET_ALL_TOPIC_CONFIG,
 * GET_BROKER_RUNTIME_INFO, GET_ALL_SUBSCRIPTIONGROUP_CONFIG,
 * GET_TOPIC_STATS_INFO, GET_CONSUME_STATS, QUERY_TOPIC_CONSUME_BY_WHO,
 * GET_PRODUCER_CONNECTION_LIST, GET_ALL_PRODUCER_INFO,
 * GET_TOPIC_CONFIG. */
void fr_rm_handle_json_read(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_broker_config(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_update_broker_config(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);

/* RocketMQ's ACL admin codes 50-54 (fr_remoting_acl.c) */
void fr_rm_handle_acl_update(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_acl_delete(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_acl_version(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_acl_white(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_acl_config(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);

/* GET_CONSUMER_RUNNING_INFO, CONSUME_MESSAGE_DIRECTLY: put to the client
 * named, its answer handed back (fr_remoting_diag.c). */
void fr_rm_handle_running_info(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
void fr_rm_handle_consume_directly(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);
/* RocketMQ's Broker2Client.callClient waits this long for a client. */
#define FR_RM_ASK_TIMEOUT_MS 10000
/* A client's response to a question of the broker (rmq_remoting_on_response). */
void fr_rm_handle_answer(rmq_conn_t *conn, const rmq_remoting_request_t *resp, void *arg);
/* Records a question about to be sent to conn: fn(arg, answer) follows
 * once, on its response or after timeout_ms. Returns the opaque the request
 * must carry, or 0 when out of memory (fn never called). */
int32_t fr_rm_ask_add(fr_remoting_t *rm, rmq_conn_t *conn, int64_t timeout_ms, bk_client_answer_fn fn, void *arg);
/* Forgets the question of opaque (it could not be sent; fn never called). */
void fr_rm_ask_cancel(fr_remoting_t *rm, int32_t opaque);
/* Answers every question in flight "the broker is stopping". */
void fr_rm_ask_free_all(fr_remoting_t *rm);

/* Frees rm's send scratch (fr_remoting_send.c). */
void fr_rm_send_free(fr_remoting_t *rm);

/* ---- what a send and a reply share (fr_remoting_send.c) ------------------ */

/* The header fields of a send (SendMessageRequestHeader / V2). */
typedef struct fr_rm_send_hdr {
    const char *producer_group, *topic, *default_topic, *properties;
    int64_t default_queue_nums, queue_id, sys_flag, born_ts, flag, reconsume_times;
} fr_rm_send_hdr_t;

/* What a send and a reply do first: SYSTEM_BUSY when sendQueueCapacity
 * is full, the header read into h, the caller and the core's check of the
 * send (cmd names it in refusals; reply: BK_OP_SEND_REPLY's right) with
 * its destination into tgt. 1, or 0 after answering. */
int fr_rm_send_begin(fr_remoting_t *rm, rmq_conn_t *conn, const rmq_remoting_request_t *req, const char *cmd,
                     int reply, fr_rm_send_hdr_t *h, bk_produce_target_t *tgt);
/* The one message of a (non-batch) send into *m: h's fields, req's body,
 * the connection's peer as born host (borrowed from req). */
void fr_rm_send_message(rmq_conn_t *conn, const rmq_remoting_request_t *req, const fr_rm_send_hdr_t *h, st_msg_t *m);
/* SEND_REPLY_MESSAGE (324), SEND_REPLY_MESSAGE_V2 (325): a responder's
 * reply pushed to its requester and stored (fr_remoting_reply.c). */
void fr_rm_handle_reply(rmq_conn_t *conn, const rmq_remoting_request_t *req, void *arg);

#endif
