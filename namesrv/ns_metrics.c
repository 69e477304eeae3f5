/* ns_metrics.c: the name server's metric families, read from the route
 * table, the server's counters and the console's own counters. */
#include "ns_metrics.h"

#include "ns_server.h"
#include "rmq_metrics.h"

void ns_metrics_render(ns_server_t *ns, const ns_metrics_extra_t *extra, struct evbuffer *out)
{
    const ns_stats_t *st = ns_server_stats(ns);
    ns_route_t *rt = ns_server_route(ns);
    char lb[64];

    rmq_metrics_family(out, "rmq_namesrv_brokers_live", "gauge",
                       "Broker addresses (masters and slaves) registered and not expired.");
    rmq_metrics_sample_u64(out, "rmq_namesrv_brokers_live", NULL, ns_route_live_count(rt));
    rmq_metrics_family(out, "rmq_namesrv_broker_names", "gauge", "Broker names (master-slave sets) in the route.");
    rmq_metrics_sample_u64(out, "rmq_namesrv_broker_names", NULL, ns_route_broker_name_count(rt));
    rmq_metrics_family(out, "rmq_namesrv_topics", "gauge", "Topics in the route.");
    rmq_metrics_sample_u64(out, "rmq_namesrv_topics", NULL, ns_route_topic_count(rt));

    rmq_metrics_family(out, "rmq_namesrv_registrations_total", "counter",
                       "REGISTER_BROKER requests by result.");
    lb[0] = '\0';
    rmq_metrics_label(lb, sizeof(lb), "result", "accepted");
    rmq_metrics_sample_u64(out, "rmq_namesrv_registrations_total", lb, st->registrations_total);
    lb[0] = '\0';
    rmq_metrics_label(lb, sizeof(lb), "result", "refused");
    rmq_metrics_sample_u64(out, "rmq_namesrv_registrations_total", lb, st->registrations_refused_total);

    rmq_metrics_family(out, "rmq_namesrv_route_queries_total", "counter",
                       "GET_ROUTEINFO_BY_TOPIC requests by result.");
    lb[0] = '\0';
    rmq_metrics_label(lb, sizeof(lb), "result", "found");
    rmq_metrics_sample_u64(out, "rmq_namesrv_route_queries_total", lb,
                           st->route_queries_total - st->route_not_found_total);
    lb[0] = '\0';
    rmq_metrics_label(lb, sizeof(lb), "result", "not_found");
    rmq_metrics_sample_u64(out, "rmq_namesrv_route_queries_total", lb, st->route_not_found_total);

    rmq_metrics_family(out, "rmq_namesrv_brokers_removed_total", "counter",
                       "Broker addresses removed from the route, by reason.");
    lb[0] = '\0';
    rmq_metrics_label(lb, sizeof(lb), "reason", "expired");
    rmq_metrics_sample_u64(out, "rmq_namesrv_brokers_removed_total", lb, st->expired_total);
    lb[0] = '\0';
    rmq_metrics_label(lb, sizeof(lb), "reason", "connection_closed");
    rmq_metrics_sample_u64(out, "rmq_namesrv_brokers_removed_total", lb, st->conn_closed_removed_total);

    rmq_metrics_family(out, "rmq_namesrv_connections", "gauge", "Open client and broker connections.");
    rmq_metrics_sample_u64(out, "rmq_namesrv_connections", NULL, ns_server_conn_count(ns));

    rmq_metrics_family(out, "rmq_namesrv_http_requests_total", "counter",
                       "Requests served on metricsPort (metrics, console files and API).");
    rmq_metrics_sample_u64(out, "rmq_namesrv_http_requests_total", NULL, extra->http_requests_total);
    rmq_metrics_family(out, "rmq_namesrv_console_broker_calls_total", "counter",
                       "Requests the console sent to brokers, by result.");
    lb[0] = '\0';
    rmq_metrics_label(lb, sizeof(lb), "result", "ok");
    rmq_metrics_sample_u64(out, "rmq_namesrv_console_broker_calls_total", lb,
                           extra->broker_calls_total - extra->broker_call_errors_total);
    lb[0] = '\0';
    rmq_metrics_label(lb, sizeof(lb), "result", "error");
    rmq_metrics_sample_u64(out, "rmq_namesrv_console_broker_calls_total", lb, extra->broker_call_errors_total);

    rmq_metrics_family(out, "rmq_namesrv_start_time_seconds", "gauge", "Wall-clock start time, Unix seconds.");
    rmq_metrics_sample(out, "rmq_namesrv_start_time_seconds", NULL, (double)extra->start_wall_ms / 1000.0);
}
