/* ns_metrics.c: the name server's metric families, read from the route
 * table, the server's counters, the console's own counters and, with
 * enableControllerInNamesrv, the controller (leadership, elections, each
 * group's master and epoch). */
#include "ns_metrics.h"

#include "ns_controller.h"
#include "ns_server.h"
#include "rmq_metrics.h"

#define NSM_LABELS 600

static double st_master_epoch(const ns_ctl_state_t *st) { return (double)st->master_epoch; }
static double st_master_id(const ns_ctl_state_t *st) { return (double)st->master_id; }
static double st_sync_size(const ns_ctl_state_t *st) { return (double)st->n_sync; }

/* One per-group family: its name, help and the state field it shows. */
typedef struct nsm_group {
    const char *name;
    const char *help;
    double (*value)(const ns_ctl_state_t *st);
    struct evbuffer *out;
} nsm_group_t;

static void ctl_group_sample(const char *cluster, const char *broker_name, const ns_ctl_state_t *st, void *arg)
{
    const nsm_group_t *g = arg;
    char lb[NSM_LABELS] = "";

    rmq_metrics_label(lb, sizeof(lb), "cluster", cluster);
    rmq_metrics_label(lb, sizeof(lb), "broker", broker_name);
    rmq_metrics_sample(g->out, g->name, lb, g->value(st));
}

/* The controller's families (enableControllerInNamesrv only). */
static void render_controller(const ns_controller_t *ctl, struct evbuffer *out)
{
    nsm_group_t groups[] = {
        { "rmq_namesrv_controller_master_epoch", "Each broker group's master epoch, as this controller knows it.",
          st_master_epoch, out },
        { "rmq_namesrv_controller_master_id", "Each broker group's master replica id (-1: none).", st_master_id, out },
        { "rmq_namesrv_controller_sync_state_set_size", "Replicas in each broker group's in-sync set.", st_sync_size,
          out },
    };

    rmq_metrics_family(out, "rmq_namesrv_controller_leader", "gauge",
                       "1 while this name server's controller is the leader, 0 while it stands by.");
    rmq_metrics_sample(out, "rmq_namesrv_controller_leader", NULL, ns_controller_is_leader(ctl));
    rmq_metrics_family(out, "rmq_namesrv_controller_elections_total", "counter",
                       "Master changes (first masters and failovers) this controller committed as leader.");
    rmq_metrics_sample_u64(out, "rmq_namesrv_controller_elections_total", NULL, ns_controller_elections(ctl));
    for (size_t i = 0; i < sizeof groups / sizeof groups[0]; i++) {
        rmq_metrics_family(out, groups[i].name, "gauge", groups[i].help);
        ns_controller_each_group(ctl, ctl_group_sample, &groups[i]);
    }
}

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

    if (ns_server_controller(ns))
        render_controller(ns_server_controller(ns), out);
}
