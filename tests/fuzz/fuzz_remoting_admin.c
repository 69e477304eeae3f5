/* fuzz_remoting_admin.c: the broker remoting front's decoders of the
 * administration bodies a peer sends (broker/front/remoting/
 * fr_remoting_admin_wire.c) over arbitrary input, the first byte choosing
 * which:
 * 0: SubscriptionGroupConfig: a parse either fails with a reason or yields
 *    a group with a valid name, and writing that group back out
 *    (fr_rm_group_json) reads back to the same group;
 * 1: SubscriptionGroupList and 2: CreateTopicListRequestBody: a parse
 *    fails with a reason, or yields 1 to FR_RM_ADMIN_LIST_MAX entries
 *    (valid group names);
 * 3: a client's GetConsumerStatusBody: the messageQueueTable found lies
 *    inside the input and is an object's text, brackets first and last. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fr_remoting_admin_wire.h"
#include "rmq_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void group_round_trip(const uint8_t *in, size_t size)
{
    bk_group_t grp, again;
    char why[256] = "";
    const char *rule;
    if (fr_rm_group_parse(in, size, &grp, why, sizeof why) != RMQ_OK) {
        if (!why[0])
            abort();
        return;
    }
    if (!rmq_name_is_valid(grp.name, strlen(grp.name), &rule))
        abort();
    struct evbuffer *b = evbuffer_new();
    fr_rm_group_json(b, &grp);
    size_t len = evbuffer_get_length(b);
    if (fr_rm_group_parse(evbuffer_pullup(b, -1), len, &again, why, sizeof why) != RMQ_OK ||
        memcmp(&grp, &again, sizeof grp) != 0)
        abort();
    evbuffer_free(b);
}

/* 1 if a list parse's outcome needs a look at its n entries: RMQ_OK with
 * 1 to FR_RM_ADMIN_LIST_MAX of them; aborts on a refusal without a reason
 * or a count out of bounds. */
static int list_parsed(rmq_err_t rc, const char *why, size_t n)
{
    if (rc == RMQ_EPROTO && !why[0])
        abort();
    if (rc != RMQ_OK)
        return 0;
    if (n == 0 || n > FR_RM_ADMIN_LIST_MAX)
        abort();
    return 1;
}

static void group_list(const uint8_t *in, size_t size)
{
    bk_group_t *groups;
    size_t n;
    char why[256] = "";
    const char *rule;
    rmq_err_t rc = fr_rm_group_list_parse(in, size, &groups, &n, why, sizeof why);
    if (!list_parsed(rc, why, n))
        return;
    for (size_t i = 0; i < n; i++)
        if (!rmq_name_is_valid(groups[i].name, strlen(groups[i].name), &rule))
            abort();
    free(groups);
}

static void topic_list(const uint8_t *in, size_t size)
{
    fr_rm_topic_item_t *items;
    size_t n;
    char why[256] = "";
    rmq_err_t rc = fr_rm_topic_list_parse(in, size, &items, &n, why, sizeof why);
    if (!list_parsed(rc, why, n))
        return;
    for (size_t i = 0; i < n; i++) {
        const bk_topic_t *t = &items[i].topic;
        if (t->perm < 0 || t->perm > 15 || t->read_queues < 0 || t->write_queues < 0 ||
            strnlen(items[i].attr_mod, sizeof(items[i].attr_mod)) == sizeof(items[i].attr_mod))
            abort();
    }
    free(items);
}

static void consumer_status(const uint8_t *in, size_t size)
{
    const uint8_t *table;
    size_t len;
    if (fr_rm_consumer_status_table(in, size, &table, &len) != 0)
        return;
    if (table < in || len < 2 || table + len > in + size || table[0] != '{' || table[len - 1] != '}')
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size == 0)
        return 0;
    uint8_t *copy = malloc(size - 1 ? size - 1 : 1);
    memcpy(copy, data + 1, size - 1);
    switch (data[0] & 3) {
    case 0:
        group_round_trip(copy, size - 1);
        break;
    case 1:
        group_list(copy, size - 1);
        break;
    case 2:
        topic_list(copy, size - 1);
        break;
    default:
        consumer_status(copy, size - 1);
        break;
    }
    free(copy);
    return 0;
}
