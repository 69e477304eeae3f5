/* rmq_retry.c: send-back of failed messages and topic restoration for
 * messages redelivered through %RETRY%<group> (see rmq_retry.h). */
#include "rmq_retry.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rmq_message.h"

int rmq_retry_is_retry_topic(const char *topic)
{
    return strncmp(topic, RMQ_RETRY_PREFIX, strlen(RMQ_RETRY_PREFIX)) == 0;
}

rmq_err_t rmq_retry_topic_name(const char *group, char *out, size_t cap)
{
    int n = snprintf(out, cap, "%s%s", RMQ_RETRY_PREFIX, group);
    return n < 0 || (size_t)n >= cap || (size_t)n > RMQ_TOPIC_MAX ? RMQ_EINVAL : RMQ_OK;
}

rmq_err_t rmq_retry_send_back(rmq_instance_t *in, const char *addr, const char *group,
                              const rmq_message_ext_t *msg, int max_reconsume, int timeout_ms,
                              rmq_instance_cb cb, void *arg)
{
    Rmq__ConsumerSendMsgBackRequest h = RMQ__CONSUMER_SEND_MSG_BACK_REQUEST__INIT;
    h.offset = msg->commit_log_offset;
    h.group = (char *)group;
    h.delay_level = 0;
    h.origin_msg_id = (char *)msg->msg_id;
    h.origin_topic = (char *)msg->topic;
    h.max_reconsume_times = max_reconsume;
    Rmq__Command req = RMQ__COMMAND__INIT;
    req.code = RMQ__REQUEST_CODE__CONSUMER_SEND_MSG_BACK;
    req.header_case = RMQ__COMMAND__HEADER_SEND_BACK;
    req.send_back = &h;
    return rmq_instance_call(in, addr, &req, NULL, 0, timeout_ms, cb, arg);
}

rmq_message_ext_t *rmq_retry_restore_topic(rmq_message_ext_t *m)
{
    size_t vl = 0;
    if (!rmq_retry_is_retry_topic(m->topic))
        return m;
    const char *orig = rmq_props_get(m->properties, m->properties_len, RMQ_PROP_RETRY_TOPIC, &vl);
    if (!orig || vl == 0 || vl > RMQ_TOPIC_MAX)
        return m;
    rmq_record_t rec = {
        .queue_id = m->queue_id,
        .flag = m->flag,
        .queue_offset = m->queue_offset,
        .phys_offset = m->commit_log_offset,
        .born_timestamp = m->born_timestamp,
        .store_timestamp = m->store_timestamp,
        .reconsume_times = m->reconsume_times,
        .body = m->body,
        .body_len = (uint32_t)m->body_len,
        .topic = orig,
        .topic_len = (uint8_t)vl,
        .properties = m->properties,
        .properties_len = (uint16_t)m->properties_len,
    };
    rmq_message_ext_t *copy = rmq_msg_ext_from_record(&rec, m->broker_name);
    if (!copy)
        return m;
    free(m);
    return copy;
}
