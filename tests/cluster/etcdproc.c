/* etcdproc.c: private etcd clusters for tests (see etcdproc.h). */
#include "etcdproc.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* The etcd binary on PATH into buf; NULL when there is none. */
static const char *etcd_path(char *buf, size_t len)
{
    const char *path = getenv("PATH");
    char dir[1024];

    while (path && *path) {
        size_t n = strcspn(path, ":");
        snprintf(dir, sizeof dir, "%.*s", (int)n, path);
        snprintf(buf, len, "%s/etcd", dir[0] ? dir : ".");
        if (access(buf, X_OK) == 0)
            return buf;
        path += n + (path[n] == ':');
    }
    return NULL;
}

int hn_etcd_available(void)
{
    char buf[1100];

    return etcd_path(buf, sizeof buf) != NULL;
}

int hn_free_port(void)
{
    struct sockaddr_in sa = { .sin_family = AF_INET };
    socklen_t len = sizeof sa;
    int fd = socket(AF_INET, SOCK_STREAM, 0), port = -1;

    if (fd < 0)
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
        getsockname(fd, (struct sockaddr *)&sa, &len) == 0)
        port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

int hn_http_get(int port, const char *path, char *buf, size_t len)
{
    struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
    char req[512];
    size_t got = 0;
    int fd = socket(AF_INET, SOCK_STREAM, 0), n = snprintf(req, sizeof req, "GET %s HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n", path);

    buf[0] = '\0';
    if (fd < 0)
        return -1;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (n <= 0 || (size_t)n >= sizeof req || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        write(fd, req, (size_t)n) != n) {
        close(fd);
        return -1;
    }
    for (;;) {
        struct pollfd p = { fd, POLLIN, 0 };
        if (poll(&p, 1, 3000) <= 0 || got == len - 1)
            break;
        ssize_t r = read(fd, buf + got, len - 1 - got);
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    buf[got] = '\0';
    close(fd);
    return (int)got;
}

int hn_etcd_member_healthy(const hn_etcd_t *e, size_t i)
{
    char buf[2048];

    return hn_http_get(e->client_port[i], "/health", buf, sizeof buf) > 0 && strstr(buf, "\"health\":\"true\"") != NULL;
}

/* Starts member i of e's cluster (ports and initial-cluster already set). */
static int member_spawn(hn_etcd_t *e, size_t i, const char *bin, const char *dir,
                        const char *cluster)
{
    char name[16], data[1100], client[64], peer[64];

    snprintf(name, sizeof name, "etcd%zu", i);
    snprintf(data, sizeof data, "%s/%s.data", dir, name);
    snprintf(client, sizeof client, "http://127.0.0.1:%d", e->client_port[i]);
    snprintf(peer, sizeof peer, "http://127.0.0.1:%d", e->peer_port[i]);
    const char *args[] = {
        "--name", name, "--data-dir", data,
        "--listen-client-urls", client, "--advertise-client-urls", client,
        "--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
        "--initial-cluster", cluster, "--initial-cluster-state", "new",
        "--initial-cluster-token", "rmq-test",
        "--heartbeat-interval", "50", "--election-timeout", "500",
        "--logger", "zap", NULL,
    };
    return hn_daemon_spawn(&e->member[i], bin, name, args);
}

typedef struct etcd_wait {
    hn_etcd_t *e;
    int exited;
} etcd_wait_t;

static int all_healthy_or_exited(void *arg)
{
    etcd_wait_t *w = arg;

    for (size_t i = 0; i < w->e->n; i++)
        if (hn_daemon_has_exited(&w->e->member[i]))
            return w->exited = 1;
    for (size_t i = 0; i < w->e->n; i++)
        if (!hn_etcd_member_healthy(w->e, i))
            return 0;
    return 1;
}

int hn_etcd_start(hn_etcd_t *e, const char *dir, size_t n, int timeout_ms)
{
    char bin[1100], cluster[512] = "";
    size_t used = 0;

    memset(e, 0, sizeof *e);
    if (n == 0 || n > HN_ETCD_MAX_MEMBERS || !etcd_path(bin, sizeof bin))
        return -1;
    e->n = n;
    for (size_t i = 0; i < n; i++) {
        e->client_port[i] = hn_free_port();
        e->peer_port[i] = hn_free_port();
        used += (size_t)snprintf(cluster + used, sizeof cluster - used, "%setcd%zu=http://127.0.0.1:%d",
                                 i ? "," : "", i, e->peer_port[i]);
        snprintf(e->endpoints + strlen(e->endpoints), sizeof e->endpoints - strlen(e->endpoints),
                 "%s127.0.0.1:%d", i ? "," : "", e->client_port[i]);
    }
    for (size_t i = 0; i < n; i++)
        if (member_spawn(e, i, bin, dir, cluster) != 0)
            goto fail;
    etcd_wait_t w = { e, 0 };
    if (hn_wait_until(all_healthy_or_exited, &w, timeout_ms) && !w.exited)
        return 0;
    fprintf(stderr, "harness: etcd (%zu members) %s within %d ms\n", n,
            w.exited ? "exited" : "not healthy", timeout_ms);
fail:
    for (size_t i = 0; i < n; i++)
        if (e->member[i].pid)
            hn_daemon_log_tail(&e->member[i], 30);
    hn_etcd_kill(e);
    return -1;
}

void hn_etcd_kill(hn_etcd_t *e)
{
    for (size_t i = 0; i < e->n; i++)
        hn_daemon_kill9(&e->member[i]);
}
