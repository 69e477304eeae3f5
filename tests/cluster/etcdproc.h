/* etcdproc.h: private etcd servers for the controller tests. Each member
 * gets its own data directory under the case's scratch directory and
 * loopback ports picked free at start; it runs as a harness child, so
 * hn_case_end / hn_cleanup kill it whatever the test did. Needs etcd on
 * PATH (scripts/bootstrap.sh installs etcd-server). */
#ifndef ETCDPROC_H
#define ETCDPROC_H

#include <stddef.h>

#include "harness.h"

#define HN_ETCD_MAX_MEMBERS 3

typedef struct hn_etcd {
    size_t n;
    hn_daemon_t member[HN_ETCD_MAX_MEMBERS];
    int client_port[HN_ETCD_MAX_MEMBERS];
    int peer_port[HN_ETCD_MAX_MEMBERS];
    char endpoints[256];          /* "127.0.0.1:P1,127.0.0.1:P2,..." */
} hn_etcd_t;

/* 1 if an etcd binary is on PATH (tests skip their etcd cases without). */
int hn_etcd_available(void);

/* Starts an n-member cluster (1..HN_ETCD_MAX_MEMBERS) in dir and waits up
 * to timeout_ms until every member reports healthy. 0, or -1 with the logs
 * printed (every member started is then killed). */
int hn_etcd_start(hn_etcd_t *e, const char *dir, size_t n, int timeout_ms);

/* 1 if member i answers GET /health with "health":"true". */
int hn_etcd_member_healthy(const hn_etcd_t *e, size_t i);

/* A loopback port free right now (the kernel's pick), or -1. */
int hn_free_port(void);

/* GET path from 127.0.0.1:port over HTTP/1.0 into buf (NUL-terminated,
 * status line and headers included, cut at len - 1); the bytes read, or
 * -1 when it cannot connect or send. */
int hn_http_get(int port, const char *path, char *buf, size_t len);

/* SIGKILL every member still running. */
void hn_etcd_kill(hn_etcd_t *e);

#endif
