/* bk_sendback.h: retry and dead letters. CONSUMER_SEND_MSG_BACK re-stores a
 * message a consumer failed to process on the group's retry topic
 * %RETRY%<group> through the delay scheduler (level = the request's, or
 * 3 + reconsumeTimes), with reconsumeTimes + 1, RETRY_TOPIC (the original
 * topic) and ORIGIN_MESSAGE_ID; once reconsumeTimes reached the group's
 * (or the request's) maximum it goes to %DLQ%<group> instead, at once.
 * Both topics are created on demand (one queue, read-write). Loop thread. */
#ifndef BK_SENDBACK_H
#define BK_SENDBACK_H

#include "bk_broker.h"

/* The group's retry topic, created on a master when missing (the heartbeat
 * of a clustering consumer calls this, so the consumer can subscribe to it
 * before the first failure). NULL on a slave, for a group with
 * retryQueueNums 0, or when the name is too long. */
const bk_topic_t *bk_sendback_retry_topic(bk_broker_t *bk, const char *group);

#endif
