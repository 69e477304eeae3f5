/* topicload_main.c: the topicload driver for scripts/bench-topics.sh:
 *   topicload create BROKER PREFIX FROM TO QUEUES BATCH WINDOW
 *   topicload routes NAMESRV PREFIX FROM TO QUEUES WINDOW
 *   topicload stats BROKER PREFIX FROM TO WINDOW
 *   topicload list NAMESRV PREFIX FROM TO
 * prints one line of key=value figures and exits 0 when nothing failed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_err.h"
#include "topicload.h"

static int usage(void)
{
    fprintf(stderr, "usage: topicload create BROKER PREFIX FROM TO QUEUES BATCH WINDOW\n"
                    "       topicload routes NAMESRV PREFIX FROM TO QUEUES WINDOW\n"
                    "       topicload stats BROKER PREFIX FROM TO WINDOW\n"
                    "       topicload list NAMESRV PREFIX FROM TO\n");
    return 2;
}

int main(int argc, char **argv)
{
    tl_result_t res = {0};
    int create = argc == 9 && strcmp(argv[1], "create") == 0;
    int stats = argc == 7 && strcmp(argv[1], "stats") == 0;
    int list = argc == 6 && strcmp(argv[1], "list") == 0;

    if (!create && !stats && !list && !(argc == 8 && strcmp(argv[1], "routes") == 0))
        return usage();
    long from = atol(argv[4]), to = atol(argv[5]);
    int queues = stats || list ? 1 : atoi(argv[6]);
    if (from < 0 || to < from || queues < 1)
        return usage();
    if (list)
        tl_listed(argv[2], argv[3], from, to, &res);
    else if (stats)
        tl_stats(argv[2], argv[3], from, to, atoi(argv[6]), &res);
    else if (create)
        tl_create(argv[2], argv[3], from, to, queues, atoi(argv[7]), atoi(argv[8]), &res);
    else
        tl_routes(argv[2], argv[3], from, to, queues, atoi(argv[7]), &res);
    printf("ok=%ld failed=%ld first_error=%d secs=%.3f p50_us=%llu p99_us=%llu max_us=%llu\n", res.ok,
           res.failed, res.first_error, res.secs,
           (unsigned long long)rmq_histogram_percentile(&res.lat_us, 0.50),
           (unsigned long long)rmq_histogram_percentile(&res.lat_us, 0.99),
           (unsigned long long)res.lat_us.max);
    return res.failed == 0 ? 0 : 1;
}
