/* bk_topic_admin.c: topic creation requests (see bk_topic_admin.h): the one
 * check of a TopicConfig from the wire, the table updates, and the deferred
 * answer released when bk_topics reports the change durable. */
#include "bk_topic_admin.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_log.h"
#include "rmq_message.h"

#define QUEUES_MAX 1024
#define PERM_MAX 7

/* An answer held until the table is on disk. */
typedef struct topic_ack {
    rmq_conn_t *conn;        /* referenced */
    rmq_reply_to_t to;
} topic_ack_t;

/* 0 if tc may be applied; else the status to answer, with why filled. */
static int topic_check(const Rmq__TopicConfig *tc, char *why, size_t whylen)
{
    const char *rule;
    const char *name = tc->topic_name ? tc->topic_name : "";
    if (!rmq_name_is_valid(name, strlen(name), &rule)) {
        snprintf(why, whylen, "topic '%.200s' %s", name, rule);
        return RMQ__STATUS__NAME_ILLEGAL;
    }
    if (tc->read_queue_nums < 1 || tc->read_queue_nums > QUEUES_MAX || tc->write_queue_nums < 1 ||
        tc->write_queue_nums > QUEUES_MAX || tc->perm < 0 || tc->perm > PERM_MAX) {
        snprintf(why, whylen, "topic %.200s: queues must be 1..%d and perm 0..%d (got read %d write %d perm %d)",
                 name, QUEUES_MAX, PERM_MAX, tc->read_queue_nums, tc->write_queue_nums, tc->perm);
        return RMQ__STATUS__BAD_REQUEST;
    }
    return 0;
}

/* Creates or replaces tc (checked) in the table. */
static rmq_err_t topic_apply(bk_broker_t *bk, const Rmq__TopicConfig *tc)
{
    bk_topic_t topic = {.read_queues = tc->read_queue_nums, .write_queues = tc->write_queue_nums,
                        .perm = tc->perm, .order = tc->order, .sys_flag = tc->topic_sys_flag};
    snprintf(topic.name, sizeof(topic.name), "%s", tc->topic_name);
    return bk_topics_update(bk->topics, &topic);
}

/* The table is durable (or not): answer, then drop the connection reference. */
static void topic_ack_done(void *arg, rmq_err_t rc)
{
    topic_ack_t *ack = arg;
    if (rc == RMQ_OK)
        rmq_conn_reply(ack->conn, ack->to, NULL, RMQ__STATUS__SUCCESS, NULL, NULL);
    else if (rc != RMQ_ESHUTDOWN)
        rmq_conn_replyf(ack->conn, ack->to, RMQ__STATUS__SYSTEM_ERROR,
                        "%s: the topic table could not be written: %s", rmq_request_name(ack->to.code),
                        rmq_strerror(rc));
    rmq_conn_unref(ack->conn);
    free(ack);
}

/* Answers req SUCCESS once every change so far is on disk. */
static void topic_ack_when_durable(bk_broker_t *bk, rmq_conn_t *conn, const rmq_frame_t *req)
{
    topic_ack_t *ack = malloc(sizeof(*ack));
    if (ack) {
        ack->conn = conn;
        ack->to = rmq_reply_to(req->cmd);
        rmq_conn_ref(conn);
        if (bk_topics_wait_durable(bk->topics, topic_ack_done, ack) == RMQ_OK)
            return;
        rmq_conn_unref(conn);
        free(ack);
    }
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR, "%s: out of memory",
                    rmq_request_name(req->cmd->code));
}

/* Applies n checked configs; on a failure answers and returns 0. */
static int topics_apply_all(bk_broker_t *bk, rmq_conn_t *conn, const rmq_frame_t *req,
                            Rmq__TopicConfig *const *tcs, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (topic_apply(bk, tcs[i]) != RMQ_OK) {
            rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__SYSTEM_ERROR,
                            "%s: out of memory at topic %zu of %zu", rmq_request_name(req->cmd->code), i, n);
            return 0;
        }
    }
    return 1;
}

/* UPDATE_AND_CREATE_TOPIC: creates or replaces one topic; registration follows. */
static void h_update_topic(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    char why[512];
    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_TOPIC_CONFIG, "TopicConfig (topic_config)"))
        return;
    Rmq__TopicConfig *tc = req->cmd->topic_config;
    int status = topic_check(tc, why, sizeof(why));
    if (status) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), status, "UPDATE_AND_CREATE_TOPIC: %s", why);
        return;
    }
    if (topics_apply_all(bk, conn, req, &tc, 1))
        topic_ack_when_durable(bk, conn, req);
}

/* UPDATE_AND_CREATE_TOPIC_LIST: checks every topic first (one bad entry
 * refuses the whole request, naming it), then applies them all; one table
 * write and one registration carry the lot. */
static void h_update_topic_list(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    bk_broker_t *bk = arg;
    char why[512];
    if (!bk_need_header(conn, req, RMQ__COMMAND__HEADER_TOPIC_CONFIG_TABLE, "TopicConfigTable (topic_config_table)"))
        return;
    const Rmq__TopicConfigTable *tab = req->cmd->topic_config_table;
    if (tab->n_topics < 1 || tab->n_topics > BK_TOPIC_LIST_MAX) {
        rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__BAD_REQUEST,
                        "UPDATE_AND_CREATE_TOPIC_LIST: 1..%d topics per request (got %zu)", BK_TOPIC_LIST_MAX,
                        tab->n_topics);
        return;
    }
    for (size_t i = 0; i < tab->n_topics; i++) {
        int status = topic_check(tab->topics[i], why, sizeof(why));
        if (status) {
            rmq_conn_replyf(conn, rmq_reply_to(req->cmd), status,
                            "UPDATE_AND_CREATE_TOPIC_LIST: entry %zu: %s (no topic was changed)", i, why);
            return;
        }
    }
    LOG_INFO("UPDATE_AND_CREATE_TOPIC_LIST from %s: %zu topics", rmq_conn_peer(conn), tab->n_topics);
    if (topics_apply_all(bk, conn, req, tab->topics, tab->n_topics))
        topic_ack_when_durable(bk, conn, req);
}

void bk_topic_admin_install(bk_broker_t *bk)
{
    rmq_server_handle(bk->srv, RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC, h_update_topic, bk);
    rmq_server_handle(bk->srv, RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC_LIST, h_update_topic_list, bk);
}
