/* bk_topics_pb.h: the protobuf views of the topic table (registration,
 * admin answers, persistence). Not for the core. Loop thread only. */
#ifndef BK_TOPICS_PB_H
#define BK_TOPICS_PB_H

#include "bk_topics.h"
#include "ha.pb-c.h"
#include "rmq.pb-c.h"

/* A heap TopicConfigTable snapshot (with the data version); free with
 * bk_topics_table_free. NULL when out of memory. */
Rmq__TopicConfigTable *bk_topics_table_new(const bk_topics_t *t);
void bk_topics_table_free(Rmq__TopicConfigTable *tab);

/* Copies the current data version into dv. */
void bk_topics_version(const bk_topics_t *t, Rmq__DataVersion *dv);

/* Fills a TopicConfig message from a topic (strings borrowed from topic). */
void bk_topic_to_pb(const bk_topic_t *topic, Rmq__TopicConfig *pb);

/* Fills topic from a TopicConfig (disk, the master, a request); its
 * attributes too when with_attrs (the kept text, checked: RMQ_EINVAL with
 * why when they are not valid, and topic has none). */
rmq_err_t bk_topic_from_pb(const Rmq__TopicConfig *pb, int with_attrs, bk_topic_t *topic, char *why, size_t whylen);

/* Fills meta with one change of t, the typed change its log records and
 * an HA master streams: topic created or replaced (topic set) or name
 * deleted (topic NULL), with t's version now. meta points into tc, dv and
 * the strings given, which must outlive it. */
void bk_topics_change_meta(const bk_topics_t *t, const char *name, const bk_topic_t *topic, Rmq__HaMeta *meta,
                           Rmq__TopicConfig *tc, Rmq__DataVersion *dv);

#endif
