/* ns_front_rmq.h: the name server's native-protocol front-end: rmq request
 * handlers over the name server's operations (ns_server.h). */
#ifndef NS_FRONT_RMQ_H
#define NS_FRONT_RMQ_H

#include "ns_server.h"
#include "rmq_rpc.h"

/* Routes every name-server request code of srv's rmq codec to ns. Set-up
 * time, loop thread; ns must outlive srv's connections. */
void ns_front_rmq_install(ns_server_t *ns, rmq_server_t *srv);

#endif
