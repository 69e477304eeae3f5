/* fr_remoting_admin_wire.h: the JSON bodies of RocketMQ's administration
 * requests and answers, as pure functions (no broker, no connection) so
 * the fuzz target and the tests call them directly. Field names are
 * RocketMQ's (fastjson's view of its classes):
 *
 * - SubscriptionGroupConfig, read from UPDATE_AND_CREATE_SUBSCRIPTIONGROUP
 *   and written in GET_ALL_SUBSCRIPTIONGROUP_CONFIG: groupName,
 *   consumeEnable, consumeFromMinEnable, consumeBroadcastEnable,
 *   retryQueueNums, retryMaxTimes, brokerId, whichBrokerWhenConsumeSlowly,
 *   notifyConsumerIdsChangedEnable;
 * - SubscriptionGroupList {groupConfigList}, read from
 *   UPDATE_AND_CREATE_SUBSCRIPTIONGROUP_LIST;
 * - TopicConfig: topicName, readQueueNums, writeQueueNums, perm,
 *   topicFilterType, topicSysFlag, order (read by rmq_topic_json.h, from
 *   UPDATE_AND_CREATE_TOPIC_LIST's CreateTopicListRequestBody {topicConfigList});
 * - MessageQueue {brokerName, queueId, topic}, which fastjson also writes
 *   as a map key (TopicStatsTable.offsetTable, ConsumeStats.offsetTable:
 *   an object where a string would stand; RocketMQ's clients read it so);
 * - DataVersion {counter, timestamp};
 * - GetConsumerStatusBody {messageQueueTable}, a client's answer to
 *   GET_CONSUMER_STATUS_FROM_CLIENT.
 * Writers append to an evbuffer; strings are escaped by rmq_json_str. */
#ifndef FR_REMOTING_ADMIN_WIRE_H
#define FR_REMOTING_ADMIN_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "bk_groups.h"
#include "bk_session.h"
#include "bk_topics.h"
#include "rmq_err.h"

/* Appends string literal lit (without its NUL) to evbuffer b. */
#define FR_RM_ADD(b, lit) evbuffer_add((b), (lit), sizeof(lit) - 1)

/* Reads a SubscriptionGroupConfig body into *out: groupName is required;
 * an absent field takes RocketMQ's default (consume and broadcast enabled,
 * 1 retry queue, 16 retries, broker 0, slow-consumption broker 1). A
 * boolean is a JSON boolean or the string "true"/"false"; a number a JSON
 * integer (or a string holding one) in its field's range. RMQ_OK, or
 * RMQ_EPROTO with why naming the field and the rule. */
rmq_err_t fr_rm_group_parse(const uint8_t *body, size_t len, bk_group_t *out, char *why, size_t whylen);

/* The most entries a list body (SubscriptionGroupList,
 * CreateTopicListRequestBody) may carry. */
#define FR_RM_ADMIN_LIST_MAX 1024

/* Reads a SubscriptionGroupList body {groupConfigList: [...]}: each entry
 * as fr_rm_group_parse reads one, into a fresh array *out (caller frees)
 * of *n groups, 1 to FR_RM_ADMIN_LIST_MAX. RMQ_OK; RMQ_EPROTO with why
 * naming the entry and field; RMQ_ENOMEM. */
rmq_err_t fr_rm_group_list_parse(const uint8_t *body, size_t len, bk_group_t **out, size_t *n, char *why,
                                 size_t whylen);
/* One entry of a topic list: its config and its attributes map as a
 * modification text (rmq_topic_attr.h; "" when the entry has none). */
typedef struct fr_rm_topic_item {
    bk_topic_t topic;
    char attr_mod[256];
} fr_rm_topic_item_t;

/* Reads a CreateTopicListRequestBody {topicConfigList: [TopicConfig...]}
 * (rmq_topic_json.h; attributes keyed "+key" or "-key", as RocketMQ's
 * request carries them) into a fresh array *out (caller frees) of *n
 * entries, 1 to FR_RM_ADMIN_LIST_MAX. Names and attributes are checked by
 * the core, not here. RMQ_OK; RMQ_EPROTO with why; RMQ_ENOMEM. */
rmq_err_t fr_rm_topic_list_parse(const uint8_t *body, size_t len, fr_rm_topic_item_t **out, size_t *n, char *why,
                                 size_t whylen);

/* Finds the messageQueueTable member of a client's GetConsumerStatusBody
 * (fastjson: a map whose keys are MessageQueue objects, so not strict
 * JSON) and points *table at its text, an object with balanced brackets,
 * to be copied as it is into the broker's answer. 0, or -1 when the body
 * has no such member or its brackets or strings do not close. */
int fr_rm_consumer_status_table(const uint8_t *body, size_t len, const uint8_t **table, size_t *table_len);

/* Appends grp as a SubscriptionGroupConfig object. */
void fr_rm_group_json(struct evbuffer *out, const bk_group_t *grp);
/* Appends topic as a TopicConfig object. */
void fr_rm_topic_json(struct evbuffer *out, const bk_topic_t *topic);
/* Appends a MessageQueue object. */
void fr_rm_mq_json(struct evbuffer *out, const char *topic, const char *broker_name, int32_t queue_id);
/* Appends rs as a ResetOffsetBody {offsetTable: {MessageQueue: offset}}. */
void fr_rm_reset_offset_json(struct evbuffer *out, const bk_offset_reset_t *rs, const char *broker_name);
/* Appends a DataVersion object. */
void fr_rm_data_version_json(struct evbuffer *out, int64_t counter, int64_t timestamp);

#endif
