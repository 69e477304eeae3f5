/* ns_rembody.h: the bodies of RocketMQ's broker-registration requests, as
 * its brokers send them to a name server (RegisterBrokerBody, DataVersion)
 * and what the name server answers (KVTable). Pure functions of the bytes;
 * any thread.
 *
 * RegisterBrokerBody, plain: JSON {"topicConfigSerializeWrapper":
 * {"topicConfigTable":{name:TopicConfig}, "dataVersion":{"timestamp",
 * "counter"}}, "filterServerList":[addr...]}; TopicConfig {topicName,
 * readQueueNums, writeQueueNums, perm, topicFilterType, topicSysFlag,
 * order}. Compressed (header compressed=true): zlib over i32 length +
 * DataVersion JSON, i32 topic count, per topic i32 length + "name read
 * write perm filterType" (space separated; no sysflag, no order), i32
 * length + filter-server JSON array; integers big-endian. */
#ifndef NS_REMBODY_H
#define NS_REMBODY_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "namesrv.pb-c.h"
#include "rmq_err.h"

/* A decoded RegisterBrokerBody: topics[0..n_topics) (owned) and its data
 * version, ready to go into a Rmq__RegisterBrokerRequest. */
typedef struct ns_rembody {
    Rmq__TopicConfig **topics;
    size_t n_topics;
    Rmq__DataVersion version;
    size_t n_filter_servers;
} ns_rembody_t;

/* Decodes body[0..len) (compressed: the zlib form). An empty body is a
 * table of no topics at version {0, 0}, as RocketMQ reads it. RMQ_EPROTO
 * with why naming what was wrong; RMQ_ENOMEM. *out is filled on RMQ_OK
 * only; release it with ns_rembody_clear. */
rmq_err_t ns_rembody_decode(const uint8_t *body, size_t len, int compressed, ns_rembody_t *out,
                            char *why, size_t whylen);
void ns_rembody_clear(ns_rembody_t *b);

/* Decodes a DataVersion JSON body {"timestamp":N,"counter":N} (other
 * members ignored). RMQ_EPROTO with why on bad input. */
rmq_err_t ns_rembody_version_decode(const uint8_t *body, size_t len, Rmq__DataVersion *dv,
                                    char *why, size_t whylen);
/* Appends dv as RocketMQ's DataVersion JSON. */
void ns_rembody_version_encode(struct evbuffer *out, const Rmq__DataVersion *dv);

/* RocketMQ's UtilAll.crc32 of data: zlib's CRC-32 with the top bit cleared. */
uint32_t ns_rembody_crc32(const uint8_t *data, size_t len);

#endif
