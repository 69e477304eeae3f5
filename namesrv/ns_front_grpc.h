/* ns_front_grpc.h: the name server's RocketMQ 5 gRPC front-end
 * (GRPC-NOTES.md §3.1), for 5.x clients whose access point is the name
 * server: QueryRoute, and RecallMessage (the one other call a client sends
 * to its access point), forwarded to the broker its handle names. Everything
 * else a client calls goes to the brokers of the route, and gets
 * UNIMPLEMENTED here. */
#ifndef NS_FRONT_GRPC_H
#define NS_FRONT_GRPC_H

#include <event2/event.h>

#include <openssl/ssl.h>

#include "ns_server.h"

typedef struct ns_front_grpc ns_front_grpc_t;

/* Registers the gRPC codec on srv with QueryRoute answered from ns's route
 * table and RecallMessage forwarded over remoting (in TLS with client_tls,
 * borrowed; NULL: plaintext). With access control on, a caller must sign
 * its call (rmq_grpc_auth.h) or come from a whitelisted address; a
 * forwarded recall is signed as the caller's account. NULL when out of
 * memory. Set-up time, loop thread; ns must outlive srv's connections. */
ns_front_grpc_t *ns_front_grpc_new(ns_server_t *ns, struct event_base *base, SSL_CTX *client_tls,
                                   rmq_server_t *srv);
/* Answers the recalls still waiting for a broker (INTERNAL_SERVER_ERROR)
 * and frees; before srv is freed. */
void ns_front_grpc_free(ns_front_grpc_t *fg);

#endif
