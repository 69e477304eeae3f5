/* ns_front_remoting.h: the name server's RocketMQ remoting front-end:
 * remoting request handlers (rmq_codec_remoting.h) over the name server's
 * operations (ns_server.h), answering with RocketMQ's JSON bodies. */
#ifndef NS_FRONT_REMOTING_H
#define NS_FRONT_REMOTING_H

#include "ns_server.h"
#include "rmq_codec_remoting.h"

/* Registers the remoting codec on srv and routes the name-server codes it
 * serves to ns. Set-up time, loop thread; ns must outlive srv's connections. */
rmq_err_t ns_front_remoting_install(ns_server_t *ns, rmq_server_t *srv);

#endif
