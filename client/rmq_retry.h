/* rmq_retry.h: the push consumer's side of retry and dead letters: sending
 * a failed message back to its broker (CONSUMER_SEND_MSG_BACK), the name of
 * a group's retry topic, and giving a message pulled from the retry topic
 * back its original topic (property RETRY_TOPIC) before the callback sees
 * it. Loop thread unless noted. */
#ifndef RMQ_RETRY_H
#define RMQ_RETRY_H

#include "rmq/rmq.h"
#include "rmq_client_int.h"
#include "rmq_message.h"

/* 1 if topic is a retry topic ("%RETRY%..."). Any thread. */
int rmq_retry_is_retry_topic(const char *topic);

/* Writes "%RETRY%group" into out; RMQ_EINVAL if it is longer than a topic may be. Any thread. */
rmq_err_t rmq_retry_topic_name(const char *group, char *out, size_t cap);

/* Asks the broker at addr to retry msg later for group (delay level 0: the
 * broker's choice, 3 + reconsume times) or, once it was redelivered
 * max_reconsume times, to move it to the group's dead-letter queue. cb runs
 * once on the loop thread (RMQ_OK with a response whose status the caller
 * checks, or an error); not at all when this returns an error. */
rmq_err_t rmq_retry_send_back(rmq_instance_t *in, const char *addr, const char *group,
                              const rmq_message_ext_t *msg, int max_reconsume, int timeout_ms,
                              rmq_instance_cb cb, void *arg);

/* If m came from a retry topic and carries RETRY_TOPIC, returns a copy
 * whose topic is the original one and frees m; otherwise (or when out of
 * memory) returns m unchanged. Any thread. */
rmq_message_ext_t *rmq_retry_restore_topic(rmq_message_ext_t *m);

#endif
