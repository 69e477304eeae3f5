/* rmq_rebalance.c: the queue allocation strategy of a clustering consumer
 * group (RocketMQ's AllocateMessageQueueAveragely): pure arithmetic over the
 * sorted queue list and the sorted member ids, no networking. */
#include <string.h>

#include "rmq_client_int.h"

void rmq_rebalance_allocate(size_t nqueues, const char *const *cids, size_t ncids, const char *me,
                            size_t *start, size_t *count)
{
    *start = 0;
    *count = 0;
    size_t idx = ncids;
    for (size_t i = 0; i < ncids; i++)
        if (strcmp(cids[i], me) == 0) {
            idx = i;
            break;
        }
    if (idx == ncids || nqueues == 0)
        return;
    size_t mod = nqueues % ncids;
    size_t size;
    if (nqueues <= ncids)
        size = 1;
    else
        size = nqueues / ncids + (idx < mod ? 1 : 0);
    size_t first = (mod > 0 && idx < mod) ? idx * size : idx * size + mod;
    if (first >= nqueues)
        return;
    *start = first;
    *count = size < nqueues - first ? size : nqueues - first;
}
