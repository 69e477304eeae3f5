/* ns_regbody.c: inflating registration bodies (the native protocol's
 * compressed topic table and RocketMQ's compressed RegisterBrokerBody),
 * with the inflated size bounded before anything of that size is
 * allocated, and decoding the native table (see ns_regbody.h). */
#include "ns_regbody.h"

#include <stdio.h>
#include <stdlib.h>
#include <zlib.h>

rmq_err_t ns_regbody_inflate(const uint8_t *in, size_t len, uint8_t **out, size_t *outlen,
                                 char *why, size_t whylen)
{
    z_stream zs = {0};
    size_t cap = len * 4 + 1024, used = 0;
    uint8_t *buf = NULL;
    rmq_err_t err = RMQ_EPROTO;

    if (cap > NS_REGBODY_MAX)
        cap = NS_REGBODY_MAX;
    if (inflateInit(&zs) != Z_OK)
        return RMQ_ENOMEM;
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    for (;;) {
        uint8_t *grown = realloc(buf, cap);
        if (!grown) {
            err = RMQ_ENOMEM;
            goto out;
        }
        buf = grown;
        zs.next_out = buf + used;
        zs.avail_out = (uInt)(cap - used);
        int zrc = inflate(&zs, Z_NO_FLUSH);
        used = cap - zs.avail_out;
        if (zrc == Z_STREAM_END)
            break;
        if (zrc != Z_OK && zrc != Z_BUF_ERROR) {
            snprintf(why, whylen, "registration body: not zlib data (%s)", zs.msg ? zs.msg : "inflate failed");
            goto out;
        }
        if (zs.avail_out != 0) {
            snprintf(why, whylen, "registration body: zlib data is truncated");
            goto out;
        }
        if (cap == NS_REGBODY_MAX) {
            snprintf(why, whylen, "registration body: inflates to more than %u bytes", NS_REGBODY_MAX);
            goto out;
        }
        cap = cap * 2 > NS_REGBODY_MAX ? NS_REGBODY_MAX : cap * 2;
    }
    if (zs.avail_in != 0) {
        snprintf(why, whylen, "registration body: %u bytes after the zlib stream", zs.avail_in);
        goto out;
    }
    *out = buf;
    *outlen = used;
    buf = NULL;
    err = RMQ_OK;
out:
    inflateEnd(&zs);
    free(buf);
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
