/* rmq_topic_attr.h: RocketMQ 5's topic attributes (its TopicAttributes):
 * the four keys, the values each allows and whether it may change after
 * the topic is created; the modification UPDATE_AND_CREATE_TOPIC carries
 * ("+key=value,-key", RocketMQ's AttributeParser) applied to a topic's
 * attributes with RocketMQ's rules and error texts (its AttributeUtil);
 * and the one text a topic keeps them in, on disk, to slaves and name
 * servers: "key=value,key=value" in key order, the keys set only ("" for
 * none). The one place these rules live. Pure functions, any thread. */
#ifndef RMQ_TOPIC_ATTR_H
#define RMQ_TOPIC_ATTR_H

#include <stddef.h>

#include "rmq_err.h"

/* Room for the text of all four keys at their longest values, NUL included. */
#define RMQ_TOPIC_ATTRS_MAX 128

/* message.type of a topic (TopicMessageType); ABSENT when not set. */
typedef enum rmq_topic_msg_type {
    RMQ_TOPIC_MSG_ABSENT = 0,
    RMQ_TOPIC_MSG_UNSPECIFIED,
    RMQ_TOPIC_MSG_NORMAL,
    RMQ_TOPIC_MSG_FIFO,
    RMQ_TOPIC_MSG_DELAY,
    RMQ_TOPIC_MSG_TRANSACTION,
    RMQ_TOPIC_MSG_MIXED,
} rmq_topic_msg_type_t;

/* Applies modification mod[0..len) ("" or NULL: none) to the attributes
 * text current of a topic being created (create: only "+key=value"
 * allowed, unchangeable keys too) or updated (unchangeable keys refused;
 * "-key" removes a key the topic has), writing the result text into
 * out[0..cap) (cap >= RMQ_TOPIC_ATTRS_MAX). RMQ_OK, or RMQ_EINVAL with
 * RocketMQ's message in why (nothing written to out). */
rmq_err_t rmq_topic_attrs_alter(const char *current, int create, const char *mod, size_t len, char *out,
                                size_t cap, char *why, size_t whylen);

/* RMQ_OK if text[0..len) is a valid attributes text as kept (from disk or
 * a peer: known keys in order, each once, with an allowed value), else
 * RMQ_EINVAL naming what is wrong in why. */
rmq_err_t rmq_topic_attrs_check(const char *text, size_t len, char *why, size_t whylen);

/* Iterates the "key=value" pairs of a valid text: *cursor starts at 0;
 * 1 with key and value (NUL-terminated, truncated to their caps) filled,
 * 0 at the end. */
int rmq_topic_attrs_next(const char *text, size_t *cursor, char *key, size_t kcap, char *value, size_t vcap);

/* message.type of a valid text. */
rmq_topic_msg_type_t rmq_topic_attrs_msg_type(const char *text);

/* The message.type a modification mod[0..len) sets ("+message.type=V"),
 * RMQ_TOPIC_MSG_ABSENT when it sets none: what RocketMQ's broker checks
 * against enableMixedMessageType. Meant for a modification
 * rmq_topic_attrs_alter accepted. */
rmq_topic_msg_type_t rmq_topic_attrs_mod_msg_type(const char *mod, size_t len);

#endif
