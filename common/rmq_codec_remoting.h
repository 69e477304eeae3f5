/* rmq_codec_remoting.h: Apache RocketMQ's "remoting" protocol as a second
 * codec over the transport (rmq_transport.h), so RocketMQ's own clients and
 * tools share a port with native rmq clients.
 *
 * Frame, big-endian: u32 length (of what follows) | u32 (serializeType << 24
 * | headerLength) | header | body. serializeType 0: a JSON header
 * {"code","language","version","opaque","flag","remark","extFields"}; 1:
 * RocketMQ's binary header (code i16, language u8, version i16, opaque
 * i32, flag i32, remark i32 length + bytes, extFields i32 length + repeated
 * {key i16 length + bytes, value i32 length + bytes}). Flag bit 0 marks a
 * response, bit 1 oneway. A reply uses the request's encoding. extFields
 * values may be JSON strings, numbers or booleans (ali-ons); handlers see
 * them all as strings (a number's source text, "true"/"false").
 *
 * Handlers see a neutral request (rmq_remoting_request_t) and answer with
 * a neutral reply (rmq_remoting_reply_t). A code with no handler gets
 * REQUEST_CODE_NOT_SUPPORTED (3) with a remark naming the code.
 *
 * Access control: RocketMQ ACL 1.0. With an ACL attached, a request carries
 * extFields AccessKey and Signature (and optionally SecurityToken);
 * Signature = Base64(HmacSHA1(secretKey, the values of every extField but
 * Signature in key order, concatenated, then the body)). The signer is
 * vetted by the neutral policy (rmq_acl_authenticate: whitelist, account,
 * address), then the signature, then (RMQ_ACL_SIGNER_AND_NEEDS, the name
 * server) what the code needs: the codes the table in rmq_codec_remoting.c
 * does not list need admin. The broker's handlers ask its core instead
 * (RMQ_ACL_SIGNER_ONLY), on the request they decoded. RocketMQ's signature carries no timestamp and no nonce:
 * there is no time window to check (the policy is given the current time
 * as the signing time) and no replay cache (a client repeating a request
 * sends the same signature, which a cache would refuse). A captured signed
 * request can therefore be replayed on this protocol, as with RocketMQ
 * itself; run it over TLS where that matters. The native codec's checks
 * are unchanged. Loop thread. */
#ifndef RMQ_CODEC_REMOTING_H
#define RMQ_CODEC_REMOTING_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_acl_policy.h"
#include "rmq_transport.h"

#define RMQ_REMOTING_JSON 0
#define RMQ_REMOTING_ROCKETMQ 1

#define RMQ_REMOTING_FLAG_RESPONSE 1
#define RMQ_REMOTING_FLAG_ONEWAY 2

#define RMQ_REMOTING_FIELDS_MAX 256   /* extFields per header */

/* RocketMQ response codes used by the fronts. */
#define RMQ_REMOTING_SUCCESS 0
#define RMQ_REMOTING_SYSTEM_ERROR 1
#define RMQ_REMOTING_SYSTEM_BUSY 2
#define RMQ_REMOTING_REQUEST_CODE_NOT_SUPPORTED 3
#define RMQ_REMOTING_NO_PERMISSION 16
#define RMQ_REMOTING_TOPIC_NOT_EXIST 17
#define RMQ_REMOTING_QUERY_NOT_FOUND 22
#define RMQ_REMOTING_INVALID_PARAMETER 29

/* RocketMQ request codes of a broker's registration, which both the name
 * server and a broker registering over remoting use. */
#define RMQ_REMOTING_REGISTER_BROKER 103
#define RMQ_REMOTING_UNREGISTER_BROKER 104
#define RMQ_REMOTING_QUERY_DATA_VERSION 322
/* RECALL_MESSAGE: the broker's, which the name server forwards for gRPC
 * clients. */
#define RMQ_REMOTING_RECALL_MESSAGE 370

typedef struct rmq_remoting_field {
    char *key;
    char *value;
} rmq_remoting_field_t;

/* A decoded request. Its fields and strings live in one allocation it owns
 * (arena; rmq_remoting_request_clear frees it), with a table that finds a
 * key without a walk over every field; body points into the bytes it was
 * decoded from. A request built by hand (arena NULL) is searched in order. */
typedef struct rmq_remoting_request {
    int serialize_type;            /* RMQ_REMOTING_JSON or _ROCKETMQ */
    int code;
    int language;                  /* RocketMQ LanguageCode (JAVA 0 ... ) */
    int version;
    int32_t opaque;
    int32_t flags;
    char *remark;                  /* "" when none */
    rmq_remoting_field_t *fields;
    size_t n_fields;
    const uint8_t *body;
    size_t body_len;
    void *arena;                   /* the decoder's; NULL in one built by hand */
} rmq_remoting_request_t;

/* A reply: extFields fields[0..n_fields) and body are borrowed for the encode. */
typedef struct rmq_remoting_reply {
    int code;
    const char *remark;            /* NULL: none */
    const rmq_remoting_field_t *fields;
    size_t n_fields;
    const void *body;
    size_t body_len;
    int fields_plain;              /* 1: no key or value needs a JSON escape (not checked again) */
} rmq_remoting_reply_t;

typedef void (*rmq_remoting_handler_fn)(rmq_conn_t *conn, const rmq_remoting_request_t *req,
                                        void *arg);

extern const rmq_codec_t rmq_codec_remoting;

/* ---- decoding (pure; what the codec and the fuzz targets call) ---------- */

/* Decodes one frame from the front of data[0..len), on a server taking
 * frames up to max_frame (checked before anything is allocated). RMQ_OK:
 * *req filled, *used bytes consumed; RMQ_EAGAIN: not a whole frame yet;
 * RMQ_EPROTO or RMQ_ETOOBIG: why names what was wrong (req left empty). */
rmq_err_t rmq_remoting_decode(const uint8_t *data, size_t len, uint32_t max_frame,
                              rmq_remoting_request_t *req, size_t *used, const char **why);
void rmq_remoting_request_clear(rmq_remoting_request_t *req);

/* The name of a RocketMQ LanguageCode ("JAVA" for 0; "OTHER" for a code
 * it does not name). */
const char *rmq_remoting_language_name(int code);
/* The value of extField key, or NULL. */
const char *rmq_remoting_field(const rmq_remoting_request_t *req, const char *key);

/* Appends a whole frame for rep answering req (or, with req NULL, a request
 * of code rep->code with opaque and flags as given, in encoding type: what
 * tests and clients send) to out. RMQ_EINVAL, with nothing appended, for a
 * code the binary header's 16 bits cannot carry (RocketMQ 5's pop codes go
 * in JSON headers only). */
rmq_err_t rmq_remoting_encode(struct evbuffer *out, int type, int code, int32_t opaque,
                              int32_t flags, int version, const rmq_remoting_reply_t *rep);

/* ---- set-up and replies -------------------------------------------------- */

/* Registers the remoting codec on srv (after its default codec). Set-up time. */
rmq_err_t rmq_remoting_install(rmq_server_t *srv);

/* Routes code to fn on srv's remoting codec. Set-up time. */
rmq_err_t rmq_remoting_handle(rmq_server_t *srv, int code, rmq_remoting_handler_fn fn, void *arg);

/* Hands every response a client sends on srv (an answer to a request the
 * server pushed to it) to fn, unchecked by the ACL (it answers the server's
 * own question). Without it responses are logged and dropped. Set-up time. */
void rmq_remoting_on_response(rmq_server_t *srv, rmq_remoting_handler_fn fn, void *arg);

/* Checks RocketMQ ACL 1.0 signatures against acl (borrowed; must outlive
 * srv) before every handler, and with RMQ_ACL_SIGNER_AND_NEEDS what each
 * code needs by the codec's table. NULL: no check. Set-up time. */
void rmq_remoting_set_acl(rmq_server_t *srv, rmq_acl_t *acl, rmq_acl_scope_t scope);

/* Answers req on conn with rep, in req's encoding; nothing for a oneway
 * request. RMQ_ECLOSED when conn is gone. */
rmq_err_t rmq_remoting_reply(rmq_conn_t *conn, const rmq_remoting_request_t *req,
                             const rmq_remoting_reply_t *rep);
/* Answers req with code and a formatted remark, no fields, no body. */
rmq_err_t rmq_remoting_replyf(rmq_conn_t *conn, const rmq_remoting_request_t *req, int code,
                              const char *fmt, ...) __attribute__((format(printf, 4, 5)));

/* RocketMQ ACL 1.0 signature of req's extFields (Signature excluded) and
 * body with secret: Base64 of the HmacSHA1 into sig[29]. */
void rmq_remoting_sign(const rmq_remoting_request_t *req, const char *secret, char sig[29]);

#endif
