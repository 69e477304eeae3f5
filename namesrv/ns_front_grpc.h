/* ns_front_grpc.h: the name server's RocketMQ 5 gRPC front-end: QueryRoute
 * only (GRPC-NOTES.md §3.1), for 5.x clients whose access point is the
 * name server; everything else a client calls goes to the brokers of the
 * route, and gets UNIMPLEMENTED here. */
#ifndef NS_FRONT_GRPC_H
#define NS_FRONT_GRPC_H

#include "ns_server.h"

/* Registers the gRPC codec on srv with QueryRoute answered from ns's
 * route table. With access control on only whitelisted peers may ask
 * while gRPC signatures are not checked. Set-up time, loop thread; ns must
 * outlive srv's connections. */
rmq_err_t ns_front_grpc_install(ns_server_t *ns, rmq_server_t *srv);

#endif
