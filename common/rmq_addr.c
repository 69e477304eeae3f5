/* rmq_addr.c: parsing "host:port" addresses, including "[v6]:port". */
#include "rmq_rpc.h"

#include <stdlib.h>
#include <string.h>

/* Splits addr into host (without brackets) and port 1..65535. Any thread. */
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
        if (colon == NULL || memchr(addr, ':', (size_t)(colon - addr)) != NULL)
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
