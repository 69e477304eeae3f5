/* ns_regbody.c: inflating registration bodies (the native protocol's
 * compressed topic table and RocketMQ's compressed RegisterBrokerBody),
 * with the inflated size bounded before anything of that size is
 * allocated, and decoding the native table (see ns_regbody.h). */
#include "ns_regbody.h"

#include <stdio.h>
#include <stdlib.h>

#include "rmq_inflate.h"

rmq_err_t ns_regbody_inflate(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen,
                                 char *why, size_t whylen)
{
    char inner[160];
    rmq_err_t err = rmq_inflate(in, len, 15, NS_REGBODY_MAX, out, outlen, inner, sizeof inner);

    if (err == RMQ_ECORRUPT) {
        snprintf(why, whylen, "registration body: %s", inner);
        err = RMQ_EPROTO;
    }
    return err;
}

rmq_err_t ns_regbody_view(const Rmq__RegisterBrokerRequest *req, struct evbuffer *body,
                          Rmq__RegisterBrokerRequest *view, Rmq__TopicConfigTable **tab,
                          char *why, size_t whylen)
{
    *view = *req;
    *tab = NULL;
    if (!req->topics_in_body)
        return RMQ_OK;
    if (req->n_topics) {
        snprintf(why, whylen, "topics_in_body is set but %zu topics are inline", req->n_topics);
        return RMQ_EPROTO;
    }
    size_t len = body ? evbuffer_get_length(body) : 0;
    const uint8_t *in = len ? evbuffer_pullup(body, -1) : (const uint8_t *)"";
    uint8_t *raw = NULL;
    size_t rawlen = 0;
    if (len && !in)
        return RMQ_ENOMEM;
    rmq_err_t err = ns_regbody_inflate(in, len, &raw, &rawlen, why, whylen);
    if (err != RMQ_OK)
        return err;
    *tab = rmq__topic_config_table__unpack(NULL, rawlen, raw);
    free(raw);
    if (!*tab) {
        snprintf(why, whylen, "registration body: not a valid TopicConfigTable");
        return RMQ_EPROTO;
    }
    view->topics = (*tab)->topics;
    view->n_topics = (*tab)->n_topics;
    view->topics_in_body = 0;
    return RMQ_OK;
}
