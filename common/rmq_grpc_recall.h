/* rmq_grpc_recall.h: a RocketMQ 5 RecallMessage whose handle names another
 * broker, forwarded to that broker set's master as remoting RECALL_MESSAGE
 * (370), as RocketMQ's proxy does, signed as the caller, and the master's
 * answer given back to the gRPC call. A 5.x producer sends its recalls to
 * its access point, which may be the name server or any broker of the
 * route, while the handle names the broker that stored the message. The
 * name server (ns_front_grpc.c) forwards every recall; a broker
 * (gr_send.c) those naming another broker. Loop thread only. */
#ifndef RMQ_GRPC_RECALL_H
#define RMQ_GRPC_RECALL_H

#include <stddef.h>

#include <event2/event.h>

#include <openssl/ssl.h>

#include "rmq_acl.h"
#include "rmq_codec_grpc.h"

/* The recalls of one front waiting for a master's answer. */
typedef struct rmq_recall_fwds rmq_recall_fwds_t;

/* Connections go out on base, in TLS with client_tls (borrowed; NULL:
 * plaintext). NULL when out of memory. */
rmq_recall_fwds_t *rmq_recall_fwds_new(struct event_base *base, SSL_CTX *client_tls);
/* Answers the recalls still waiting (INTERNAL_SERVER_ERROR) and frees;
 * before the server of their calls is freed. */
void rmq_recall_fwds_free(rmq_recall_fwds_t *fw);

/* Sends call's recall (topic, handle naming broker) to the master at addr
 * on a connection of its own, signed with cred (copied; NULL or an empty
 * access key: unsigned),
 * and answers call with the master's answer: OK with the message id, or
 * the refusal in v2 codes (RocketMQ's proxy's table: SYSTEM_BUSY
 * TOO_MANY_REQUESTS, REQUEST_CODE_NOT_SUPPORTED NOT_IMPLEMENTED,
 * NO_PERMISSION FORBIDDEN, TOPIC_NOT_EXIST TOPIC_NOT_FOUND, the rest
 * INTERNAL_SERVER_ERROR with the master's remark; PROXY_TIMEOUT when it
 * did not answer in time). 1, or 0 with why set when it could not be sent
 * (call unanswered). */
int rmq_recall_forward(rmq_recall_fwds_t *fw, rmq_grpc_call_t *call, const rmq_acl_credentials_t *cred,
                       const char *broker, const char *addr, const char *topic, const char *handle, char *why,
                       size_t whylen);

#endif
