/* rmq_addr.c: addresses: parsing "host:port" (including "[v6]:port" and
 * RocketMQ's "v6:port"), the plain IPv4 form of IPv4-mapped peers, and
 * listening sockets (the wildcard one dual-stack). */
#include "rmq_rpc.h"

#include <errno.h>
#include <netdb.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "rmq_log.h"

/* 1 if s[0..n) is an IPv6 literal. */
static int is_ip6_literal(const char *s, size_t n)
{
    char buf[INET6_ADDRSTRLEN];
    struct in6_addr a;

    if (n >= sizeof(buf))
        return 0;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return inet_pton(AF_INET6, buf, &a) == 1;
}

/* Splits addr into host (without brackets) and port 1..65535. The host is
 * "[v6]", a name or IPv4 literal without ':', or, as RocketMQ writes a
 * broker's IPv6 address (ip + ":" + port, read back up to the last ':'),
 * an IPv6 literal without brackets. Any thread. */
rmq_err_t rmq_addr_split(const char *addr, char *host, size_t hostlen, int *port)
{
    const char *host_start = addr, *host_end, *colon;

    if (addr == NULL)
        return RMQ_EINVAL;
    if (addr[0] == '[') {
        host_start = addr + 1;
        host_end = strchr(host_start, ']');
        if (host_end == NULL || host_end[1] != ':')
            return RMQ_EINVAL;
        colon = host_end + 1;
    } else {
        colon = strrchr(addr, ':');
        if (colon == NULL || (memchr(addr, ':', (size_t)(colon - addr)) != NULL &&
                              !is_ip6_literal(addr, (size_t)(colon - addr))))
            return RMQ_EINVAL;
        host_end = colon;
    }
    size_t n = (size_t)(host_end - host_start);
    if (n == 0 || n >= hostlen)
        return RMQ_EINVAL;

    char *end;
    long p = strtol(colon + 1, &end, 10);
    if (colon[1] == '\0' || *end != '\0' || p < 1 || p > 65535)
        return RMQ_EINVAL;
    memcpy(host, host_start, n);
    host[n] = '\0';
    *port = (int)p;
    return RMQ_OK;
}

/* Reads a numeric addr (rmq_addr_split's forms, the host an IPv4 or IPv6
 * literal) into ss and *sslen. RMQ_EINVAL for a host name or a bad
 * address. Any thread. */
rmq_err_t rmq_addr_sockaddr(const char *addr, struct sockaddr_storage *ss, int *sslen)
{
    char host[INET6_ADDRSTRLEN];
    int port;

    memset(ss, 0, sizeof(*ss));
    if (rmq_addr_split(addr, host, sizeof(host), &port) != RMQ_OK)
        return RMQ_EINVAL;
    struct sockaddr_in *in = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *in6 = (struct sockaddr_in6 *)ss;
    if (inet_pton(AF_INET, host, &in->sin_addr) == 1) {
        in->sin_family = AF_INET;
        in->sin_port = htons((uint16_t)port);
        *sslen = (int)sizeof(*in);
        return RMQ_OK;
    }
    if (inet_pton(AF_INET6, host, &in6->sin6_addr) == 1) {
        in6->sin6_family = AF_INET6;
        in6->sin6_port = htons((uint16_t)port);
        *sslen = (int)sizeof(*in6);
        return RMQ_OK;
    }
    return RMQ_EINVAL;
}

/* 1 if a and b name the same address: equal numeric addresses in any of
 * their forms ("::1:10911", "[::1]:10911"), else equal text. */
int rmq_addr_equal(const char *a, const char *b)
{
    struct sockaddr_storage sa, sb;
    int la, lb;

    if (rmq_addr_sockaddr(a, &sa, &la) != RMQ_OK || rmq_addr_sockaddr(b, &sb, &lb) != RMQ_OK)
        return strcmp(a, b) == 0;
    return la == lb && memcmp(&sa, &sb, (size_t)la) == 0;
}

/* Writes into out the address sa names: an IPv4-mapped IPv6 one
 * (::ffff:a.b.c.d, how a dual-stack socket shows an IPv4 peer) as the plain
 * IPv4 one, any other copied. Returns the length of out's address. Any thread. */
socklen_t rmq_sockaddr_unmap(const struct sockaddr *sa, struct sockaddr_storage *out)
{
    const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)sa;

    memset(out, 0, sizeof(*out));
    if (sa->sa_family == AF_INET6 && IN6_IS_ADDR_V4MAPPED(&in6->sin6_addr)) {
        struct sockaddr_in *in = (struct sockaddr_in *)out;
        in->sin_family = AF_INET;
        in->sin_port = in6->sin6_port;
        memcpy(&in->sin_addr, &in6->sin6_addr.s6_addr[12], 4);
        return sizeof(*in);
    }
    socklen_t len = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6)
                    : sa->sa_family == AF_INET ? sizeof(struct sockaddr_in) : sizeof(struct sockaddr);
    memcpy(out, sa, len);
    return len;
}

/* 1 for a listen host meaning "every address": NULL, "", 0.0.0.0 or ::. */
static int host_is_wildcard(const char *host)
{
    return host == NULL || host[0] == '\0' || strcmp(host, "0.0.0.0") == 0 || strcmp(host, "::") == 0;
}

/* A non-blocking, close-on-exec socket bound to sa and listening, or -1
 * with errno set. dual: an AF_INET6 socket takes IPv4 peers too. */
static int listen_on(const struct sockaddr *sa, socklen_t len, int dual, int backlog)
{
    int one = 1, zero = 0;
    int fd = socket(sa->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

    if (fd < 0)
        return -1;
    if (setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) != 0 ||
        (dual && setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &zero, sizeof(zero)) != 0) ||
        bind(fd, sa, len) != 0 || listen(fd, backlog) != 0) {
        int saved = errno;
        close(fd);
        errno = saved;
        return -1;
    }
    return fd;
}

/* The wildcard listener: one dual-stack socket on [::]:port, or 0.0.0.0:port
 * when the host has no IPv6. */
static int listen_any(const char *what, int port, int backlog)
{
    struct sockaddr_in6 any6 = { .sin6_family = AF_INET6, .sin6_port = htons((uint16_t)port),
                                 .sin6_addr = IN6ADDR_ANY_INIT };
    int fd = listen_on((struct sockaddr *)&any6, sizeof(any6), 1, backlog);

    if (fd >= 0 || (errno != EAFNOSUPPORT && errno != EADDRNOTAVAIL && errno != EPROTONOSUPPORT))
        return fd;
    LOG_INFO("%s: no IPv6 on this host (%s); listening on IPv4 only", what, strerror(errno));
    struct sockaddr_in any4 = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port),
                                .sin_addr.s_addr = htonl(INADDR_ANY) };
    return listen_on((struct sockaddr *)&any4, sizeof(any4), 0, backlog);
}

/* A listening socket on host:port (port 0: ephemeral). The wildcard host
 * (NULL, "", 0.0.0.0, ::) gets one socket for IPv4 and IPv6 peers alike;
 * any other host (a literal or a name, resolved with a blocking lookup)
 * just that address. Returns the socket (owner: caller) or -1 with err
 * naming what failed. what names the listener in logs. Start-up only. */
int rmq_listen_socket(const char *what, const char *host, int port, int backlog, char *err,
                      size_t errlen)
{
    struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
                              .ai_flags = AI_PASSIVE | AI_NUMERICSERV }, *ai = NULL;
    char portstr[16];
    int fd;

    if (host_is_wildcard(host)) {
        fd = listen_any(what, port, backlog);
    } else {
        snprintf(portstr, sizeof(portstr), "%d", port);
        int rc = getaddrinfo(host, portstr, &hints, &ai);
        if (rc != 0) {
            snprintf(err, errlen, "cannot resolve listen address %s:%d: %s", host, port, gai_strerror(rc));
            return -1;
        }
        fd = listen_on(ai->ai_addr, ai->ai_addrlen, 0, backlog);
        freeaddrinfo(ai);
    }
    if (fd < 0)
        snprintf(err, errlen, "cannot listen on %s:%d: %s", host_is_wildcard(host) ? "*" : host, port,
                 strerror(errno));
    return fd;
}

/* The port sockaddr sa is bound to, or -1 for a family without ports. */
int rmq_sockaddr_port(const struct sockaddr *sa)
{
    if (sa->sa_family == AF_INET)
        return ntohs(((const struct sockaddr_in *)sa)->sin_port);
    if (sa->sa_family == AF_INET6)
        return ntohs(((const struct sockaddr_in6 *)sa)->sin6_port);
    return -1;
}

/* The port the listening socket fd is bound to, or -1. */
int rmq_listen_port(int fd)
{
    struct sockaddr_storage ss;
    socklen_t len = sizeof(ss);

    return getsockname(fd, (struct sockaddr *)&ss, &len) == 0 ? rmq_sockaddr_port((struct sockaddr *)&ss) : -1;
}

/* "ip:port" or "[ip6]:port" of sa into out, an IPv4-mapped one as plain
 * IPv4 (rmq_sockaddr_unmap): the one text of a peer's address. */
void rmq_sockaddr_text(const struct sockaddr *sa, char *out, size_t outlen)
{
    struct sockaddr_storage plain;
    char ip[INET6_ADDRSTRLEN] = "?";

    rmq_sockaddr_unmap(sa, &plain);
    if (plain.ss_family == AF_INET) {
        const struct sockaddr_in *in = (const struct sockaddr_in *)&plain;
        inet_ntop(AF_INET, &in->sin_addr, ip, sizeof(ip));
        snprintf(out, outlen, "%s:%d", ip, ntohs(in->sin_port));
    } else if (plain.ss_family == AF_INET6) {
        const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&plain;
        inet_ntop(AF_INET6, &in6->sin6_addr, ip, sizeof(ip));
        snprintf(out, outlen, "[%s]:%d", ip, ntohs(in6->sin6_port));
    } else {
        snprintf(out, outlen, "?");
    }
}
