/* ns_server.h: the name server: the route table behind an rmq_server, one
 * handler per request code, route removal when a broker's connection
 * closes, and one timer that expires silent brokers. Everything runs on the
 * thread of the event base it is given. */
#ifndef NS_SERVER_H
#define NS_SERVER_H

#include <event2/event.h>

#include "ns_config.h"
#include "ns_route.h"
#include "rmq_err.h"

typedef struct ns_server ns_server_t;

/* Creates a name server on base; cfg is borrowed and must outlive it.
 * Not listening yet. NULL on ENOMEM. Owner: caller. */
ns_server_t *ns_server_new(struct event_base *base, const ns_config_t *cfg);

/* Loads the KV config from kvConfigPath (when set), then listens on
 * bindAddress:listenPort. Logs why on failure. */
rmq_err_t ns_server_start(ns_server_t *ns);

/* The bound port, after start. */
int ns_server_port(const ns_server_t *ns);

/* The route table (owned by ns), for tests and diagnostics. Loop thread. */
ns_route_t *ns_server_route(ns_server_t *ns);

/* Closes every connection, stops the timer and frees the table. */
void ns_server_free(ns_server_t *ns);

#endif
