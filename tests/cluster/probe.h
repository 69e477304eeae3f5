/* probe.h: what the cluster tests that use the client library (librmq) ask
 * the cluster through it: the queues of a topic's route as a client sees
 * them. Test thread only (failures are Check assertions). */
#ifndef PROBE_H
#define PROBE_H

#include <stddef.h>

/* Readable queues of topic in the route from the name servers ns_addr, as a
 * fresh pull consumer sees it (0 while the topic has no route). */
size_t probe_route_queues(const char *ns_addr, const char *topic);

/* Waits up to timeout_ms until probe_route_queues(ns_addr, topic) == n;
 * 1 if it came to that. */
int probe_wait_route_queues(const char *ns_addr, const char *topic, size_t n, int timeout_ms);

#endif
