/* topicload.h: many topics over the native protocol, pipelined on one
 * connection, for the topic-scale test and scripts/bench-topics.sh:
 * creation through the broker's admin requests (one topic per
 * UPDATE_AND_CREATE_TOPIC, or many per UPDATE_AND_CREATE_TOPIC_LIST),
 * route lookups at the name server and topic lookups at a broker. Topic i is named PREFIX + i. Blocking
 * (each call runs its own event base); no Check asserts, so a plain driver
 * can use it. */
#ifndef TOPICLOAD_H
#define TOPICLOAD_H

#include <stdint.h>

#include "rmq_histogram.h"

typedef struct tl_result {
    long ok;                    /* topics created, or routes found as expected */
    long failed;                /* topics whose request failed, or routes missing or wrong */
    int first_error;            /* status or rmq_err_t of the first failure (0: none) */
    double secs;
    rmq_histogram_t lat_us;     /* per request round trip */
    unsigned char *ok_map;      /* optional (caller's, to - from bytes): 1 per topic that was ok */
} tl_result_t;

/* Each call clears *res but keeps res->ok_map (zeroed, then filled): start
 * from a zeroed tl_result_t. */

/* Creates topics [from, to) with queues read and write queues on the
 * broker at addr: batch topics per request (1: UPDATE_AND_CREATE_TOPIC),
 * window requests in flight. */
void tl_create(const char *addr, const char *prefix, long from, long to, int queues, int batch,
               int window, tl_result_t *res);

/* Looks up the route of topics [from, to) at the name server ns_addr with
 * window requests in flight; a route counts as ok when it has queue data of
 * queues write queues. */
void tl_routes(const char *ns_addr, const char *prefix, long from, long to, int queues, int window,
               tl_result_t *res);

/* Asks the broker at addr for each topic of [from, to)
 * (GET_TOPIC_STATS_INFO) with window requests in flight; a topic counts as
 * ok when the broker has it (a slave's copy catching up, for one). */
void tl_stats(const char *addr, const char *prefix, long from, long to, int window, tl_result_t *res);

/* Asks the name server at ns_addr for its topic list
 * (GET_ALL_TOPIC_LIST_FROM_NAMESERVER, one request); ok counts the topics
 * of [from, to) it names. */
void tl_listed(const char *ns_addr, const char *prefix, long from, long to, tl_result_t *res);

#endif
