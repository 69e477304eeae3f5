/* ns_metrics.h: the name server's Prometheus families (rmq_namesrv_*). */
#ifndef NS_METRICS_H
#define NS_METRICS_H

#include <stdint.h>

#include <event2/buffer.h>

typedef struct ns_server ns_server_t;

/* Extra numbers the console keeps, shown with the server's own. */
typedef struct ns_metrics_extra {
    uint64_t http_requests_total;
    uint64_t broker_calls_total;
    uint64_t broker_call_errors_total;
    int64_t start_wall_ms;
} ns_metrics_extra_t;

/* Appends every rmq_namesrv_* family in text format 0.0.4 to out. Loop thread. */
void ns_metrics_render(ns_server_t *ns, const ns_metrics_extra_t *extra, struct evbuffer *out);

#endif
