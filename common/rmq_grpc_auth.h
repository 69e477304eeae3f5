/* rmq_grpc_auth.h: RocketMQ 5's gRPC call signature, checked against the
 * ACL policy (rmq_acl_policy.h). Every call of a 5.x client with
 * credentials carries
 *
 *   authorization: MQv2-HMAC-SHA1 Credential=<AK>, SignedHeaders=x-mq-date-time, Signature=<HEX>
 *   x-mq-date-time: yyyyMMdd'T'HHmmss'Z'
 *
 * the signature being hex(HMAC-SHA1(secretKey, the x-mq-date-time value)),
 * upper-case from the Java and Node clients. The date-time is the client's
 * local time with a literal Z, so it bounds nothing (the proxy does not
 * check it either) and the same signature repeats within a second: no
 * replay check applies. Pure functions of their arguments; any thread. */
#ifndef RMQ_GRPC_AUTH_H
#define RMQ_GRPC_AUTH_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_acl_policy.h"

#define RMQ_GRPC_AUTH_KEY_MAX 128

/* Splits an authorization value into its access key (Credential up to the
 * first '/') and hex signature; 0, or -1 with *why naming what is wrong. */
int rmq_grpc_auth_parse(const char *authorization, char access_key[RMQ_GRPC_AUTH_KEY_MAX + 1],
                        char signature[RMQ_GRPC_AUTH_KEY_MAX + 1], const char **why);

/* The signature of date_time under secret: upper-case hex into out[41]. */
void rmq_grpc_auth_sign(const char *secret, const char *date_time, char out[41]);

/* Who makes a call from peer with these metadata values (either may be
 * NULL when absent): 1 when peer is whitelisted (trusted, *account NULL),
 * 0 with *account set when the signature is that account's, -1 with a
 * remark naming op and why otherwise (unsigned and not whitelisted, a
 * malformed header, an unknown key or one refused from peer, a signature
 * that does not match). now_ms: the wall clock. */
int rmq_grpc_authenticate(const rmq_acl_t *acl, const char *peer, const char *authorization,
                          const char *date_time, int64_t now_ms, const char *op,
                          const rmq_acl_account_t **account, char *remark, size_t remarklen);

#endif
