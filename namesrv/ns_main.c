/* ns_main.c: mqnamesrv, a thin main over ns_server: options, config,
 * logging, the ready file for scripts and tests, signals, clean stop. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <event2/event.h>

#include "ns_config.h"
#include "ns_server.h"
#include "rmq_log.h"
#include "rmq_security.h"
#include "rmq_signal.h"

#define EXIT_USAGE 2

typedef struct ns_opts {
    const char *config_path;
    const char *ready_file;
    int print_config;
} ns_opts_t;

static void usage(FILE *out)
{
    fprintf(out,
            "usage: mqnamesrv [-c FILE] [-p] [--ready-file FILE]\n"
            "  -c FILE            load configuration from a .properties file\n"
            "  -p                 print the effective configuration and exit\n"
            "  --ready-file FILE  once listening, write listenPort=<port> to FILE\n"
            "  -h                 this help\n");
}

/* Parses argv into opts; returns -1 (after printing usage) on a bad option,
 * 1 for -h, 0 otherwise. */
static int parse_args(int argc, char **argv, ns_opts_t *opts)
{
    static const struct option longopts[] = {
        { "ready-file", required_argument, NULL, 'r' },
        { "help", no_argument, NULL, 'h' },
        { NULL, 0, NULL, 0 },
    };
    int c;

    while ((c = getopt_long(argc, argv, "c:ph", longopts, NULL)) != -1) {
        switch (c) {
        case 'c':
            opts->config_path = optarg;
            break;
        case 'p':
            opts->print_config = 1;
            break;
        case 'r':
            opts->ready_file = optarg;
            break;
        case 'h':
            usage(stdout);
            return 1;
        default:
            usage(stderr);
            return -1;
        }
    }
    if (optind < argc) {
        fprintf(stderr, "mqnamesrv: unexpected argument '%s'\n", argv[optind]);
        usage(stderr);
        return -1;
    }
    return 0;
}

/* Writes "listenPort=<port>\nmetricsPort=<port>\n" to path atomically (temp file, rename). */
static int write_ready_file(const char *path, int port, int metrics_port)
{
    char tmp[4200];
    FILE *f;

    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    f = fopen(tmp, "w");
    if (!f)
        return -errno;
    fprintf(f, "listenPort=%d\nmetricsPort=%d\n", port, metrics_port);
    if (fclose(f) != 0 || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return -e;
    }
    return 0;
}

/* The first SIGTERM or SIGINT ends the loop. */
static void on_stop(int sig, void *arg)
{
    (void)sig;
    event_base_loopbreak(arg);
}

/* Runs the server until SIGTERM or SIGINT; returns the exit status. */
static int run(ns_config_t *cfg, const ns_opts_t *opts)
{
    struct event_base *base = event_base_new();
    ns_server_t *ns = NULL;
    rmq_stop_signals_t *stop = NULL;
    int status = EXIT_FAILURE;

    if (!base)
        goto out;
    stop = rmq_stop_signals_new(base, on_stop, base);
    ns = ns_server_new(base, cfg);
    if (!ns || !stop) {
        LOG_ERROR("start-up failed: out of memory or event set-up error; exiting");
        goto out;
    }
    if (ns_server_start(ns) != RMQ_OK)
        goto out;
    if (opts->ready_file) {
        int rc = write_ready_file(opts->ready_file, ns_server_port(ns),
                                  ns_server_metrics_port(ns));
        if (rc) {
            LOG_ERROR("cannot write ready file %s: %s; stopping", opts->ready_file, strerror(-rc));
            goto out;
        }
    }
    event_base_dispatch(base);
    status = EXIT_SUCCESS;
    if (opts->ready_file)
        unlink(opts->ready_file);
    LOG_INFO("name server stopped");
out:
    ns_server_free(ns);
    rmq_stop_signals_free(stop);
    if (base)
        event_base_free(base);
    return status;
}

int main(int argc, char **argv)
{
    ns_opts_t opts = { 0 };
    ns_config_t cfg = { 0 };
    char err[1024];
    int status = EXIT_USAGE;

    int rc = parse_args(argc, argv, &opts);
    if (rc)
        return rc > 0 ? EXIT_SUCCESS : EXIT_USAGE;
    if (ns_config_defaults(&cfg) != RMQ_OK)
        goto out;
    if (opts.config_path &&
        rmq_config_load(ns_config_table(), &cfg, opts.config_path, err, sizeof err) != RMQ_OK) {
        fprintf(stderr, "mqnamesrv: %s\n", err);
        goto out;
    }
    if (!opts.print_config && rmq_security_check(&cfg.tls, &cfg.acl, err, sizeof err) != RMQ_OK) {
        fprintf(stderr, "mqnamesrv: %s\n", err);
        goto out;
    }
    if (opts.print_config) {
        rmq_config_print(ns_config_table(), &cfg, stdout);
        status = EXIT_SUCCESS;
        goto out;
    }
    rc = rmq_log_open("mqnamesrv", cfg.log_path[0] ? cfg.log_path : NULL, cfg.log_level);
    if (rc) {
        fprintf(stderr, "mqnamesrv: logPath=%s: cannot open for appending: %s\n", cfg.log_path,
                strerror(-rc));
        goto out;
    }
    rmq_log_set_rotation(cfg.log_max_file_size, (int)cfg.log_max_files);
    rmq_config_log(ns_config_table(), &cfg, opts.config_path);
    signal(SIGPIPE, SIG_IGN);
    status = run(&cfg, &opts);
    rmq_log_close();
out:
    ns_config_deinit(&cfg);
    return status;
}
