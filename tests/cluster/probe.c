/* probe.c: route probes through the client library (see probe.h). */
#include "probe.h"

#include <check.h>
#include <stdlib.h>

#include "harness.h"
#include "rmq/rmq.h"

size_t probe_route_queues(const char *ns_addr, const char *topic)
{
    rmq_error_t e;
    rmq_pull_consumer_t *pc = rmq_pull_consumer_new("probe", ns_addr, &e);
    ck_assert_ptr_nonnull(pc);
    ck_assert_int_eq(rmq_pull_consumer_start(pc), RMQ_OK);
    rmq_queue_t *qs = NULL;
    size_t n = 0;
    if (rmq_pull_consumer_queues(pc, topic, &qs, &n, &e) != RMQ_OK)
        n = 0;
    free(qs);
    rmq_pull_consumer_free(pc);
    return n;
}

typedef struct route_want {
    const char *ns_addr;
    const char *topic;
    size_t n;
} route_want_t;

static int route_has(void *arg)
{
    const route_want_t *w = arg;
    return probe_route_queues(w->ns_addr, w->topic) == w->n;
}

int probe_wait_route_queues(const char *ns_addr, const char *topic, size_t n, int timeout_ms)
{
    route_want_t w = { ns_addr, topic, n };
    return hn_wait_until(route_has, &w, timeout_ms);
}
