/* ns_regbody.h: the compressed topic table of a REGISTER_BROKER whose
 * topics_in_body is set: the frame body is zlib (RFC 1950) over a packed
 * TopicConfigTable. Pure function of the bytes; any thread. */
#ifndef NS_REGBODY_H
#define NS_REGBODY_H

#include <stddef.h>
#include <stdint.h>

#include <event2/buffer.h>

#include "namesrv.pb-c.h"
#include "rmq_err.h"

#define NS_REGBODY_MAX (64u << 20)    /* largest inflated table accepted (about 2M topics) */

/* Inflates zlib (RFC 1950) data in[0..len) into *out (heap, caller frees)
 * of *outlen <= NS_REGBODY_MAX bytes. RMQ_EPROTO with why when it is not
 * one whole zlib stream or inflates to more; RMQ_ENOMEM. */
rmq_err_t ns_regbody_inflate(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen,
                             char *why, size_t whylen);

/* Fills *view with req, its topics taken from body when req->topics_in_body
 * (*tab then holds them: free with rmq__topic_config_table__free_unpacked
 * after view is used; NULL otherwise). RMQ_EPROTO with why filled when the
 * body does not inflate to at most NS_REGBODY_MAX bytes of a valid
 * TopicConfigTable, or topics_in_body comes with inline topics. RMQ_ENOMEM. */
rmq_err_t ns_regbody_view(const Rmq__RegisterBrokerRequest *req, struct evbuffer *body,
                          Rmq__RegisterBrokerRequest *view, Rmq__TopicConfigTable **tab,
                          char *why, size_t whylen);

#endif
