/* bk_main.c: the mqbroker executable: command line, configuration, logging,
 * signals, the ready file, and the event loop around one bk_broker. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <event2/event.h>

#include "bk_broker.h"
#include "bk_metrics.h"
#include "rmq_log.h"
#include "rmq_security.h"
#include "rmq_signal.h"
#include "rmq_file.h"

typedef struct main_opts {
    const char *config;
    const char *namesrv;
    const char *ready_file;
    int print;
} main_opts_t;

static void usage(FILE *out)
{
    fprintf(out, "usage: mqbroker [-c FILE.properties] [-n \"host:port;host:port\"] [-p] [--ready-file FILE]\n"
                 "  -c FILE         broker configuration (RocketMQ property names)\n"
                 "  -n ADDRS        name servers (overrides namesrvAddr)\n"
                 "  -p              print the effective configuration and exit\n"
                 "  --ready-file F  write listenPort=N, haListenPort=M (and the others) to F once listening\n");
}

/* Parses argv; returns 0, or 2 after printing the problem. */
static int parse_args(int argc, char **argv, main_opts_t *o)
{
    static const struct option longs[] = {
        {"ready-file", required_argument, NULL, 'r'},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    int c;
    memset(o, 0, sizeof(*o));
    while ((c = getopt_long(argc, argv, "c:n:ph", longs, NULL)) != -1) {
        switch (c) {
        case 'c': o->config = optarg; break;
        case 'n': o->namesrv = optarg; break;
        case 'p': o->print = 1; break;
        case 'r': o->ready_file = optarg; break;
        case 'h': usage(stdout); exit(0);
        default: usage(stderr); return 2;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "mqbroker: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return 2;
    }
    return 0;
}

/* Defaults, then the file, then -n; prints one line and returns 2 on a bad value. */
static int load_config(const main_opts_t *o, bk_config_t *cfg)
{
    char err[1024];
    if (bk_config_init(cfg) != RMQ_OK) {
        fprintf(stderr, "mqbroker: bad built-in defaults\n");
        return 2;
    }
    if (o->config && rmq_config_load(bk_config_table(), cfg, o->config, err, sizeof(err)) != RMQ_OK) {
        fprintf(stderr, "mqbroker: %s\n", err);
        return 2;
    }
    if (o->namesrv && rmq_config_set(bk_config_table(), cfg, "namesrvAddr", o->namesrv, err, sizeof(err)) != RMQ_OK) {
        fprintf(stderr, "mqbroker: -n: %s\n", err);
        return 2;
    }
    if (bk_config_check(cfg, err, sizeof(err)) != RMQ_OK) {
        fprintf(stderr, "mqbroker: %s\n", err);
        return 2;
    }
    if (!o->print && rmq_security_check(&cfg->tls, &cfg->acl, err, sizeof(err)) != RMQ_OK) {
        fprintf(stderr, "mqbroker: %s\n", err);
        return 2;
    }
    return 0;
}

/* Leaves the loop after a short pause so the last answers reach their peers. */
static void stopped(void *arg)
{
    struct timeval tv = {0, 100 * 1000};
    event_base_loopexit(arg, &tv);
}

typedef struct sig_ctx {
    bk_broker_t *bk;
    struct event_base *base;
} sig_ctx_t;

/* The first SIGTERM / SIGINT starts a clean stop; the loop exits when it is done. */
static void on_stop(int sig, void *arg)
{
    sig_ctx_t *s = arg;
    (void)sig;
    bk_broker_stop(s->bk, stopped, s->base);
}

/* Writes the ready file atomically; returns 0 or -1. */
static int write_ready(const char *path, const bk_broker_t *bk)
{
    char buf[160];
    int n = snprintf(buf, sizeof(buf), "listenPort=%d\nhaListenPort=%d\nmetricsPort=%d\nvipListenPort=%d\n",
                     bk_broker_port(bk), bk_broker_ha_port(bk), bk_metrics_port(bk->metrics), bk_broker_vip_port(bk));
    rmq_err_t rc = rmq_file_write_atomic(path, buf, (size_t)n);
    if (rc != RMQ_OK) {
        LOG_ERROR("--ready-file %s: %s", path, rmq_strerror(rc));
        return -1;
    }
    return 0;
}

/* Runs the broker until a signal stops it; returns the exit status. */
static int run(bk_config_t *cfg, const main_opts_t *o)
{
    struct event_base *base = event_base_new();
    bk_broker_t *bk = base ? bk_broker_new(cfg, base) : NULL;
    sig_ctx_t sc = {bk, base};
    rmq_stop_signals_t *stop = NULL;
    char err[1024] = "";
    int status = 1;
    if (!bk) {
        LOG_ERROR("out of memory");
        goto out;
    }
    stop = rmq_stop_signals_new(base, on_stop, &sc);
    if (!stop) {
        LOG_ERROR("cannot install signal handlers");
        goto out;
    }
    if (bk_broker_start(bk, err, sizeof(err)) != RMQ_OK) {
        LOG_ERROR("cannot start: %s", err);
        goto out;
    }
    if (o->ready_file && write_ready(o->ready_file, bk) != 0)
        goto out;
    event_base_dispatch(base);
    status = 0;
out:
    bk_broker_free(bk);
    rmq_stop_signals_free(stop);
    if (base)
        event_base_free(base);
    if (status == 0)
        LOG_INFO("stopped cleanly");
    return status;
}

int main(int argc, char **argv)
{
    main_opts_t o;
    bk_config_t cfg;
    int rc = parse_args(argc, argv, &o);
    if (rc != 0)
        return rc;
    rmq_loop_global_init();
    if ((rc = load_config(&o, &cfg)) != 0) {
        bk_config_deinit(&cfg);
        return rc;
    }
    if (o.print) {
        bk_config_print(&cfg, stdout);
        bk_config_deinit(&cfg);
        return 0;
    }
    signal(SIGPIPE, SIG_IGN);
    int lrc = rmq_log_open("mqbroker", cfg.log_path[0] ? cfg.log_path : NULL,
                           (rmq_log_level_t)rmq_log_level_parse(cfg.log_level));
    if (lrc != 0)
        LOG_WARN("logPath=%s: cannot open: %s; logging to stderr only", cfg.log_path, strerror(-lrc));
    rmq_log_set_rotation(cfg.log_max_file_size, (int)cfg.log_max_files);
    rmq_config_log(bk_config_table(), &cfg, o.config);
    rc = run(&cfg, &o);
    rmq_log_close();
    bk_config_deinit(&cfg);
    return rc;
}
