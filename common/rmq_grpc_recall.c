/* rmq_grpc_recall.c: RecallMessage forwarded to the master its handle
 * names (see rmq_grpc_recall.h): one remoting connection per recall,
 * signed as the caller, kept on the front's pending list until the master
 * answers or the front is freed. */
#include "rmq_grpc_recall.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apache/rocketmq/v2/service.pb-c.h"
#include "rmq_grpc_pb.h"
#include "rmq_recall_handle.h"
#include "rmq_remoting_client.h"

#define CODE(name) APACHE__ROCKETMQ__V2__CODE__##name
#define RECALL_TIMEOUT_MS 3000       /* the master's answer to a forwarded recall */
#define RECALL_CONNECT_MS 3000

/* A RecallMessage waiting for its master's answer. */
typedef struct recall_fwd {
    struct recall_fwd *prev, *next;  /* the front's pending list */
    rmq_recall_fwds_t *fw;
    rmq_grpc_call_t *call;
    rmq_rclient_t *rc;               /* its own connection, signed as the caller */
    rmq_acl_credentials_t cred;
    char broker[RMQ_RECALL_NAME_MAX + 1];
} recall_fwd_t;

struct rmq_recall_fwds {
    struct event_base *base;
    SSL_CTX *client_tls;             /* borrowed; NULL: plaintext */
    recall_fwd_t *pending;
};

rmq_recall_fwds_t *rmq_recall_fwds_new(struct event_base *base, SSL_CTX *client_tls)
{
    rmq_recall_fwds_t *fw = calloc(1, sizeof(*fw));
    if (fw) {
        fw->base = base;
        fw->client_tls = client_tls;
    }
    return fw;
}

void rmq_recall_fwds_free(rmq_recall_fwds_t *fw)
{
    if (!fw)
        return;
    while (fw->pending)
        rmq_rclient_free(fw->pending->rc);   /* its answer unlinks it */
    free(fw);
}

/* The v2 code of a master's remoting answer: RocketMQ's proxy's table
 * (ResponseBuilder: SUCCESS, SYSTEM_BUSY, REQUEST_CODE_NOT_SUPPORTED, the
 * rest INTERNAL_SERVER_ERROR), with the permission and topic refusals a
 * broker's own gRPC front gives for the same recall. */
static int v2_code_of_remoting(int code)
{
    switch (code) {
    case RMQ_REMOTING_SUCCESS: return CODE(OK);
    case RMQ_REMOTING_SYSTEM_BUSY: return CODE(TOO_MANY_REQUESTS);
    case RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED: return CODE(NOT_IMPLEMENTED);
    case RMQ_REMOTING_NO_PERMISSION: return CODE(FORBIDDEN);
    case RMQ_REMOTING_TOPIC_NOT_EXIST: return CODE(TOPIC_NOT_FOUND);
    default: return CODE(INTERNAL_SERVER_ERROR);
    }
}

static void recall_unlink(recall_fwd_t *f)
{
    if (f->prev)
        f->prev->next = f->next;
    else
        f->fw->pending = f->next;
    if (f->next)
        f->next->prev = f->prev;
}

/* The master's answer (or why there is none) back to the caller. */
static void on_recall_answer(rmq_err_t err, const rmq_remoting_request_t *resp, void *arg)
{
    recall_fwd_t *f = arg;
    Apache__Rocketmq__V2__RecallMessageResponse out = APACHE__ROCKETMQ__V2__RECALL_MESSAGE_RESPONSE__INIT;
    Apache__Rocketmq__V2__Status st = APACHE__ROCKETMQ__V2__STATUS__INIT;
    char why[320];
    const char *id = resp ? rmq_remoting_field(resp, "msgId") : NULL;
    if (err != RMQ_OK) {
        st.code = err == RMQ_ETIMEDOUT ? CODE(PROXY_TIMEOUT) : CODE(INTERNAL_SERVER_ERROR);
        snprintf(why, sizeof(why), "recall failed, broker %s did not answer: %s", f->broker, rmq_strerror(err));
    } else {
        st.code = v2_code_of_remoting(resp->code);
        snprintf(why, sizeof(why), "%s", resp->code == RMQ_REMOTING_SUCCESS ? "OK" : resp->remark);
    }
    st.message = why;
    out.status = &st;
    out.message_id = st.code == CODE(OK) && id ? (char *)id : "";
    rmq_grpc_answer(f->call, &out.base);
    recall_unlink(f);
    if (err != RMQ_ESHUTDOWN)        /* else the client is being freed already */
        rmq_rclient_free(f->rc);
    free(f);
}

int rmq_recall_forward(rmq_recall_fwds_t *fw, rmq_grpc_call_t *call, const rmq_acl_credentials_t *cred,
                       const char *broker, const char *addr, const char *topic, const char *handle, char *why,
                       size_t whylen)
{
    recall_fwd_t *f = calloc(1, sizeof(*f));
    if (!f)
        return snprintf(why, whylen, "out of memory"), 0;
    f->fw = fw;
    f->call = call;
    snprintf(f->broker, sizeof(f->broker), "%s", broker);
    int sign = cred && cred->access_key[0];
    if (sign)
        f->cred = *cred;
    rmq_rclient_opts_t opts = {RECALL_CONNECT_MS, fw->client_tls, sign ? &f->cred : NULL};
    const rmq_remoting_field_t fields[] = {{"topic", (char *)topic}, {"recallHandle", (char *)handle},
                                           {"brokerName", (char *)broker}};
    f->rc = rmq_rclient_new(fw->base, addr, &opts);
    if (!f->rc || rmq_rclient_call(f->rc, RMQ_REMOTING_RECALL_MESSAGE, fields, sizeof(fields) / sizeof(fields[0]),
                                   NULL, 0, RECALL_TIMEOUT_MS, on_recall_answer, f) != RMQ_OK) {
        rmq_rclient_free(f->rc);
        free(f);
        return snprintf(why, whylen, "recall failed, broker %s at %s cannot be reached", broker, addr), 0;
    }
    f->next = fw->pending;
    if (fw->pending)
        fw->pending->prev = f;
    fw->pending = f;
    return 1;
}
