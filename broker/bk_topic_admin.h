/* bk_topic_admin.h: the requests that create or replace topics:
 * UPDATE_AND_CREATE_TOPIC (one) and UPDATE_AND_CREATE_TOPIC_LIST (many in
 * one request, RocketMQ's code 18). Both answer only once the topic table
 * holding the change is on disk, so an acknowledged topic survives a crash.
 * Loop thread. */
#ifndef BK_TOPIC_ADMIN_H
#define BK_TOPIC_ADMIN_H

#include "bk_broker.h"

#define BK_TOPIC_LIST_MAX 100000   /* topics in one UPDATE_AND_CREATE_TOPIC_LIST */

/* Routes both request codes to their handlers on bk's server. */
void bk_topic_admin_install(bk_broker_t *bk);

#endif
