/* tests/package/rmq_pkgcheck.c: a librmq user built only from the installed
 * headers and library, through pkg-config (tests/package/test_install.sh,
 * tests/package/test_package.sh). Without arguments it checks what needs no
 * server: error strings, a producer refused for a missing group with the
 * reason, a producer created, started, shut down and freed. With NAMESRV
 * TOPIC BODY it then also sends BODY to TOPIC synchronously and prints the
 * stored message's id, broker and queue. Exits 0 when every check passed. */
#include <stdio.h>
#include <string.h>

#include <rmq/rmq.h>

/* Prints one "ok"/"FAIL" line for a check; returns 0 when it held, else 1. */
static int check(int held, const char *what)
{
    printf("%s: %s\n", held ? "ok" : "FAIL", what);
    return held ? 0 : 1;
}

/* Error strings and a refused producer: library code reached, no server. */
static int check_offline(void)
{
    rmq_producer_opts_t no_group = { .namesrv = "127.0.0.1:1" };
    rmq_error_t e;
    rmq_producer_t *p;
    int bad = 0;

    bad += check(strlen(rmq_strerror(RMQ_ETIMEDOUT)) > 0 &&
                 strcmp(rmq_strerror(RMQ_ETIMEDOUT), rmq_strerror(RMQ_OK)) != 0,
                 "rmq_strerror names RMQ_ETIMEDOUT");
    bad += check(strcmp(rmq_status_name(-12345), "UNKNOWN") == 0,
                 "rmq_status_name of an unknown status is UNKNOWN");
    memset(&e, 0, sizeof(e));
    p = rmq_producer_new(&no_group, &e);
    bad += check(p == NULL && e.err == RMQ_EINVAL && strstr(e.text, "group") != NULL,
                 "a producer without a group is refused, naming the group");
    if (p != NULL)
        rmq_producer_free(p);
    return bad;
}

/* Creates and starts a producer for namesrv; with topic set, sends body to
 * it and prints where it was stored. Returns the number of failed checks. */
static int check_producer(const char *namesrv, const char *topic, const char *body)
{
    rmq_producer_opts_t po = { .group = "PkgCheckGroup", .namesrv = namesrv };
    rmq_message_t m = { .topic = topic, .tags = "pkgcheck", .body = body };
    rmq_send_result_t r;
    rmq_error_t e;
    rmq_producer_t *p;
    int bad = 0;

    p = rmq_producer_new(&po, &e);
    if (check(p != NULL, "rmq_producer_new") != 0) {
        fprintf(stderr, "rmq_producer_new: %s\n", e.text);
        return 1;
    }
    bad += check(rmq_producer_start(p) == RMQ_OK, "rmq_producer_start");
    if (topic != NULL && bad == 0) {
        m.body_len = strlen(body);
        if (check(rmq_producer_send(p, &m, 5000, &r) == RMQ_OK && r.status == RMQ_SEND_OK,
                  "rmq_producer_send") != 0) {
            fprintf(stderr, "rmq_producer_send: %s\n", r.error.text);
            bad++;
        } else {
            printf("sent msgId=%s broker=%s queue=%d offset=%lld\n", r.msg_id,
                   r.broker_name, (int)r.queue_id, (long long)r.queue_offset);
        }
    }
    rmq_producer_shutdown(p);
    rmq_producer_free(p);
    return bad;
}

int main(int argc, char **argv)
{
    int bad;

    if (argc != 1 && argc != 4) {
        fprintf(stderr, "usage: rmq_pkgcheck [NAMESRV TOPIC BODY]\n");
        return 2;
    }
    bad = check_offline();
    if (argc == 4)
        bad += check_producer(argv[1], argv[2], argv[3]);
    else
        bad += check_producer("127.0.0.1:1", NULL, NULL);
    return bad == 0 ? 0 : 1;
}
