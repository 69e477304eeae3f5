/* fuzz_topiclog.c: libFuzzer target for the topic change log's record
 * decoder (broker/meta/bk_topiclog.h), over a whole log as a replay reads it:
 * each record decodes or the log ends there (torn: too few bytes; corrupt:
 * with a reason); a decoded record is a topic change with a name of 1..127
 * bytes, inside the input, and encodes again to a record that decodes to
 * the same change. */
#include "bk_topiclog.h"

#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The topic name a decoded change is about. */
static const char *change_name(const Rmq__HaMeta *meta)
{
    if (meta->change_case == RMQ__HA_META__CHANGE_TOPIC)
        return meta->topic->topic_name;
    if (meta->change_case == RMQ__HA_META__CHANGE_DELETED_TOPIC)
        return meta->deleted_topic;
    abort();
}

/* Encodes meta again and checks the record decodes to the same change. */
static void check_roundtrip(const Rmq__HaMeta *meta)
{
    bk_topiclog_buf_t buf = {0};
    char why[160];
    size_t used;
    Rmq__HaMeta *again;
    rmq_err_t rc = bk_topiclog_encode(&buf, meta);
    if (rc == RMQ_ETOOBIG)
        return;                  /* non-canonical varints can pack larger than they came */
    if (rc != RMQ_OK)
        abort();
    if (bk_topiclog_decode(buf.data, buf.len, &used, &again, why, sizeof why) != RMQ_OK || used != buf.len ||
        again->change_case != meta->change_case || strcmp(change_name(again), change_name(meta)) != 0)
        abort();
    rmq__ha_meta__free_unpacked(again, NULL);
    free(buf.data);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    size_t off = 0;
    while (off < size) {
        char why[160] = "";
        size_t used = 0;
        Rmq__HaMeta *meta;
        rmq_err_t rc = bk_topiclog_decode(data + off, size - off, &used, &meta, why, sizeof why);
        if (rc == RMQ_EAGAIN || (rc == RMQ_ECORRUPT && why[0]))
            break;
        if (rc != RMQ_OK || !meta || used <= BK_TOPICLOG_HEADER || used > size - off)
            abort();
        size_t len = strlen(change_name(meta));
        if (len < 1 || len > RMQ_TOPIC_MAX)
            abort();
        check_roundtrip(meta);
        rmq__ha_meta__free_unpacked(meta, NULL);
        off += used;
    }
    return 0;
}
