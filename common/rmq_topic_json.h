/* rmq_topic_json.h: RocketMQ's TopicList written as JSON (the answer of
 * every topic listing, name server and broker alike), and its TopicConfig
 * read from a parsed JSON object
 * (fastjson's view of its class: topicName, readQueueNums, writeQueueNums,
 * perm, topicSysFlag, order, topicFilterType), the one reader of it for
 * every body that carries topic configs: a broker's registration at the
 * name server (RegisterBrokerBody) and mqadmin's UPDATE_AND_CREATE_TOPIC_LIST
 * at a broker (CreateTopicListRequestBody). Any thread. */
#ifndef RMQ_TOPIC_JSON_H
#define RMQ_TOPIC_JSON_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "rmq_err.h"
#include "rmq_json.h"

typedef struct rmq_topic_json {
    const char *name;                /* borrowed from the JSON tree */
    int32_t read_queues;
    int32_t write_queues;
    int32_t perm;                    /* 0..15 */
    int32_t sys_flag;                /* 0 when absent */
    int order;                       /* 0 when absent */
} rmq_topic_json_t;

/* 1 if s names one of RocketMQ's TopicFilterType values. */
int rmq_topic_filter_type_valid(const char *s);

/* Reads TopicConfig object tc into *out: topicName (a string),
 * readQueueNums, writeQueueNums and perm are required integers (perm in
 * [0, 15], queue numbers in [0, INT32_MAX]); topicSysFlag, order (a
 * boolean) and topicFilterType (SINGLE_TAG or MULTI_TAG) are optional.
 * RMQ_OK, or RMQ_EPROTO with why saying "<where>: <what was wrong>". */
rmq_err_t rmq_topic_json_read(const rmq_json_t *tc, const char *where, rmq_topic_json_t *out, char *why,
                              size_t whylen);

/* Appends TopicList {"brokerAddr":...,"topicList":[topics[0..n)]} to out
 * ("brokerAddr" only when broker_addr is not NULL). */
void rmq_topic_list_json(struct evbuffer *out, const char *const *topics, size_t n, const char *broker_addr);

#endif
