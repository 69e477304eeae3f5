/* fuzz_remoting_locks.c: the broker remoting front's queue-lock bodies
 * (broker/front/remoting/fr_remoting_locks.c) over arbitrary input: a
 * Lock/UnlockBatchRequestBody either fails with a reason or yields a group,
 * a client id and queues that each have a topic and a queue id in range;
 * its LockBatchResponseBody answer (every queue held) is JSON the same
 * reader takes back, with as many queues. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fr_remoting_locks.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The answer for lb with every queue held parses back to n_mqs queues. */
static void answer(const fr_rm_lock_body_t *lb)
{
    uint8_t *held = malloc(lb->req.n_mqs + 1);
    struct evbuffer *out = evbuffer_new();
    char err[128];
    memset(held, 1, lb->req.n_mqs + 1);
    if (!out || fr_rm_lock_answer_encode(out, lb, held) != RMQ_OK)
        abort();
    rmq_json_t *doc = rmq_json_parse((const char *)evbuffer_pullup(out, -1), evbuffer_get_length(out), err,
                                     sizeof err);
    const rmq_json_t *set = doc ? rmq_json_get(doc, "lockOKMQSet") : NULL;
    if (!set || set->type != RMQ_JSON_ARRAY || set->n != lb->req.n_mqs)
        abort();
    rmq_json_free(doc);
    evbuffer_free(out);
    free(held);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fr_rm_lock_body_t lb;
    char why[192];
    uint8_t *copy = malloc(size ? size : 1);
    memcpy(copy, data, size);
    why[0] = '\0';
    rmq_err_t rc = fr_rm_lock_body_parse(copy, size, &lb, why, sizeof why);
    if (rc != RMQ_OK) {
        if (!why[0])
            abort();
        free(copy);
        return 0;
    }
    if (!lb.req.group[0] || !lb.req.client_id[0])
        abort();
    for (size_t i = 0; i < lb.req.n_mqs; i++)
        if (!lb.mqs[i].topic[0] || lb.mqs[i].queue_id < 0 || !lb.broker_names[i])
            abort();
    answer(&lb);
    fr_rm_lock_body_clear(&lb);
    free(copy);
    return 0;
}
