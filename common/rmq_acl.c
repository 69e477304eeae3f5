/* rmq_acl.c: access control of the native rmq protocol: the signature
 * (HMAC-SHA256 over a timestamp, a nonce, the body's digest and the packed
 * header), the client-side signer, the mapping from a request to what it
 * needs (request_needs), and the check installed in front of the rmq
 * codec's handlers. Accounts, permissions and the replay cache are the
 * neutral policy's (rmq_acl_policy.c). */
#include "rmq_acl.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>

#include <event2/buffer.h>

#include "rmq_log.h"
#include "rmq_time.h"

#define SIG_DOMAIN "rmq-sig-2"
#define SIG_DOMAIN_LEN (sizeof(SIG_DOMAIN) - 1)
#define NEEDS_MAX 2

/* ---- digests and signatures ------------------------------------------------- */

void rmq_acl_body_digest(const void *data, size_t len, uint8_t out[32])
{
    SHA256(data != NULL ? data : (const void *)"", data != NULL ? len : 0, out);
}

void rmq_acl_body_digest_buf(struct evbuffer *body, uint8_t out[32])
{
    EVP_MD_CTX *ctx = EVP_MD_CTX_new();
    struct evbuffer_iovec stack[16], *vec = stack;
    unsigned int len = 32;
    int n = body != NULL ? evbuffer_peek(body, -1, NULL, NULL, 0) : 0;

    if (n > (int)(sizeof(stack) / sizeof(stack[0])))
        vec = malloc((size_t)n * sizeof(*vec));
    if (ctx == NULL || vec == NULL || EVP_DigestInit_ex(ctx, EVP_sha256(), NULL) != 1) {
        memset(out, 0, 32);
        goto out;
    }
    if (n > 0)
        n = evbuffer_peek(body, -1, NULL, vec, n);
    for (int i = 0; i < n; i++)
        EVP_DigestUpdate(ctx, vec[i].iov_base, vec[i].iov_len);
    EVP_DigestFinal_ex(ctx, out, &len);
out:
    if (vec != stack)
        free(vec);
    EVP_MD_CTX_free(ctx);
}

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (56 - 8 * i));
}

/* HMAC-SHA256(secret, SIG_DOMAIN | ts_be64 | nonce_be64 | body_sha256 |
 * packed cmd without auth) into mac[32]; -1 on out of memory. */
static int cmd_mac(const char *secret, int64_t ts_ms, uint64_t nonce, const Rmq__Command *cmd,
                   const uint8_t body_sha256[32], uint8_t mac[32])
{
    enum { HEAD = SIG_DOMAIN_LEN + 8 + 8 + 32 };
    Rmq__Command copy = *cmd;
    unsigned int maclen = 0;
    uint8_t stack[1024];

    copy.auth = NULL;
    size_t n = rmq__command__get_packed_size(&copy);
    uint8_t *buf = n + HEAD <= sizeof(stack) ? stack : malloc(n + HEAD);
    if (!buf)
        return -1;
    memcpy(buf, SIG_DOMAIN, SIG_DOMAIN_LEN);
    put_be64(buf + SIG_DOMAIN_LEN, (uint64_t)ts_ms);
    put_be64(buf + SIG_DOMAIN_LEN + 8, nonce);
    memcpy(buf + SIG_DOMAIN_LEN + 16, body_sha256, 32);
    rmq__command__pack(&copy, buf + HEAD);
    HMAC(EVP_sha256(), secret, (int)strlen(secret), buf, n + HEAD, mac, &maclen);
    if (buf != stack)
        free(buf);
    return 0;
}

void rmq_acl_sign(const char *access_key, const char *secret_key, int64_t ts_ms,
                  const Rmq__Command *cmd, const uint8_t body_sha256[32], rmq_signature_t *sig)
{
    uint8_t mac[32];
    uint64_t nonce = 0;

    rmq__auth__init(&sig->auth);
    if (RAND_bytes((unsigned char *)&nonce, sizeof(nonce)) != 1)
        nonce = (uint64_t)rmq_mono_us() ^ ((uint64_t)(uintptr_t)sig << 16);
    if (cmd_mac(secret_key, ts_ms, nonce, cmd, body_sha256, mac) == 0)
        rmq_acl_hex(mac, sizeof(mac), sig->hex);
    else
        sig->hex[0] = '\0';
    sig->auth.access_key = (char *)access_key;
    sig->auth.timestamp_ms = ts_ms;
    sig->auth.nonce = nonce;
    sig->auth.signature = sig->hex;
}

void rmq_acl_signer(const Rmq__Command *cmd, const uint8_t body_sha256[32],
                    rmq_signature_t *sig, void *arg)
{
    const rmq_acl_credentials_t *cr = arg;
    rmq_acl_sign(cr->access_key, cr->secret_key, rmq_wall_ms(), cmd, body_sha256, sig);
}

/* ---- what a request needs -------------------------------------------------- */

typedef enum shape {
    SHAPE_SIGNED = 0,    /* any valid account */
    SHAPE_ADMIN,
    SHAPE_TOPIC_PUB,
    SHAPE_TOPIC_SUB,
    SHAPE_GROUP_SUB,
    SHAPE_TOPIC_GROUP_SUB,
    SHAPE_HEARTBEAT,     /* SUB on every consumer group, PUB on every producer group */
} shape_t;

static shape_t code_shape(int code)
{
    switch (code) {
    case RMQ__REQUEST_CODE__SEND_MESSAGE:
    case RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE:
        return SHAPE_TOPIC_PUB;
    case RMQ__REQUEST_CODE__PULL_MESSAGE:
    case RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET:
    case RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET:
        return SHAPE_TOPIC_GROUP_SUB;
    case RMQ__REQUEST_CODE__GET_MAX_OFFSET:
    case RMQ__REQUEST_CODE__GET_MIN_OFFSET:
    case RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP:
    case RMQ__REQUEST_CODE__GET_EARLIEST_MSG_STORETIME:
    case RMQ__REQUEST_CODE__QUERY_MESSAGE:
    case RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO:
        return SHAPE_TOPIC_SUB;
    case RMQ__REQUEST_CODE__UNREGISTER_CLIENT:
    case RMQ__REQUEST_CODE__GET_CONSUMER_LIST_BY_GROUP:
    case RMQ__REQUEST_CODE__LOCK_BATCH_MQ:
    case RMQ__REQUEST_CODE__UNLOCK_BATCH_MQ:
    case RMQ__REQUEST_CODE__CONSUMER_SEND_MSG_BACK:
    case RMQ__REQUEST_CODE__GET_CONSUME_STATS:
        return SHAPE_GROUP_SUB;
    case RMQ__REQUEST_CODE__HEART_BEAT:
        return SHAPE_HEARTBEAT;
    case RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC:
    case RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC_LIST:
    case RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER:
    case RMQ__REQUEST_CODE__DELETE_TOPIC_IN_NAMESRV:
    case RMQ__REQUEST_CODE__UPDATE_AND_CREATE_SUBSCRIPTIONGROUP:
    case RMQ__REQUEST_CODE__DELETE_SUBSCRIPTIONGROUP:
    case RMQ__REQUEST_CODE__GET_ALL_TOPIC_CONFIG:
    case RMQ__REQUEST_CODE__GET_ALL_SUBSCRIPTIONGROUP_CONFIG:
    case RMQ__REQUEST_CODE__GET_ALL_CONSUMER_OFFSET:
    case RMQ__REQUEST_CODE__GET_ALL_DELAY_OFFSET:
    case RMQ__REQUEST_CODE__GET_BROKER_RUNTIME_INFO:
    case RMQ__REQUEST_CODE__PUT_KV_CONFIG:
    case RMQ__REQUEST_CODE__DELETE_KV_CONFIG:
    case RMQ__REQUEST_CODE__REGISTER_BROKER:
    case RMQ__REQUEST_CODE__UNREGISTER_BROKER:
    case RMQ__REQUEST_CODE__QUERY_DATA_VERSION:
    case RMQ__REQUEST_CODE__WIPE_WRITE_PERM_OF_BROKER:
    case RMQ__REQUEST_CODE__ADD_WRITE_PERM_OF_BROKER:
    case RMQ__REQUEST_CODE__GET_NAMESRV_CONFIG:
    case RMQ__REQUEST_CODE__CONTROLLER_REGISTER_BROKER:
    case RMQ__REQUEST_CODE__BROKER_HEARTBEAT:
    case RMQ__REQUEST_CODE__CONTROLLER_ALTER_SYNC_STATE_SET:
        return SHAPE_ADMIN;
    default:
        return SHAPE_SIGNED;
    }
}

/* The topic and group a request names ("" when it names none). */
static void request_resources(const Rmq__Command *cmd, const char **topic, const char **group)
{
    *topic = "";
    *group = "";
    switch (cmd->header_case) {
    case RMQ__COMMAND__HEADER_SEND:
        *topic = cmd->send->topic;
        break;
    case RMQ__COMMAND__HEADER_PULL:
        *topic = cmd->pull->topic;
        *group = cmd->pull->consumer_group;
        break;
    case RMQ__COMMAND__HEADER_CONSUMER_OFFSET:
        *topic = cmd->consumer_offset->topic;
        *group = cmd->consumer_offset->consumer_group;
        break;
    case RMQ__COMMAND__HEADER_QUEUE:
        *topic = cmd->queue->topic;
        break;
    case RMQ__COMMAND__HEADER_QUERY_MESSAGE:
        *topic = cmd->query_message->topic;
        break;
    case RMQ__COMMAND__HEADER_TOPIC:
        *topic = cmd->topic->topic;
        break;
    case RMQ__COMMAND__HEADER_UNREGISTER_CLIENT:
        *group = cmd->unregister_client->consumer_group;
        break;
    case RMQ__COMMAND__HEADER_GROUP:
        *group = cmd->group->consumer_group;
        break;
    case RMQ__COMMAND__HEADER_LOCK_BATCH:
        *group = cmd->lock_batch->consumer_group;
        break;
    case RMQ__COMMAND__HEADER_SEND_BACK:
        *group = cmd->send_back->group;
        break;
    case RMQ__COMMAND__HEADER_CONSUME_STATS_REQ:
        *topic = cmd->consume_stats_req->topic;
        *group = cmd->consume_stats_req->consumer_group;
        break;
    default:
        break;
    }
}

/* What cmd needs, as neutral needs (at most NEEDS_MAX); a heartbeat's
 * groups are not listed here (request_allowed walks them). */
static size_t request_needs(const Rmq__Command *cmd, rmq_acl_need_t needs[NEEDS_MAX])
{
    const char *topic, *group;

    request_resources(cmd, &topic, &group);
    switch (code_shape(cmd->code)) {
    case SHAPE_ADMIN:
        needs[0] = (rmq_acl_need_t){ RMQ_ACL_ADMIN, 0, NULL };
        return 1;
    case SHAPE_TOPIC_PUB:
        needs[0] = (rmq_acl_need_t){ RMQ_ACL_TOPIC, RMQ_ACL_PERM_PUB, topic };
        return 1;
    case SHAPE_TOPIC_SUB:
        needs[0] = (rmq_acl_need_t){ RMQ_ACL_TOPIC, RMQ_ACL_PERM_SUB, topic };
        return 1;
    case SHAPE_GROUP_SUB:
        needs[0] = (rmq_acl_need_t){ RMQ_ACL_GROUP, RMQ_ACL_PERM_SUB, group };
        return 1;
    case SHAPE_TOPIC_GROUP_SUB:
        needs[0] = (rmq_acl_need_t){ RMQ_ACL_TOPIC, RMQ_ACL_PERM_SUB, topic };
        needs[1] = (rmq_acl_need_t){ RMQ_ACL_GROUP, RMQ_ACL_PERM_SUB, group };
        return 2;
    case SHAPE_SIGNED:
    case SHAPE_HEARTBEAT:
        break;
    }
    return 0;
}

/* Asks the policy whether a may do cmd; 1 if allowed. */
static int request_allowed(const rmq_acl_account_t *a, const Rmq__Command *cmd, char *remark,
                           size_t remarklen)
{
    const char *op = rmq_request_name(cmd->code);
    rmq_acl_need_t needs[NEEDS_MAX];

    if (code_shape(cmd->code) == SHAPE_HEARTBEAT &&
        cmd->header_case == RMQ__COMMAND__HEADER_HEARTBEAT) {
        for (size_t i = 0; i < cmd->heartbeat->n_consumers; i++) {
            rmq_acl_need_t g = { RMQ_ACL_GROUP, RMQ_ACL_PERM_SUB,
                                 cmd->heartbeat->consumers[i]->group_name };
            if (!rmq_acl_allows(a, &g, 1, op, remark, remarklen))
                return 0;
        }
        for (size_t i = 0; i < cmd->heartbeat->n_producer_groups; i++) {
            rmq_acl_need_t g = { RMQ_ACL_GROUP, RMQ_ACL_PERM_PUB, cmd->heartbeat->producer_groups[i] };
            if (!rmq_acl_allows(a, &g, 1, op, remark, remarklen))
                return 0;
        }
        return 1;
    }
    return rmq_acl_allows(a, needs, request_needs(cmd, needs), op, remark, remarklen);
}

int rmq_acl_request_may_read(const rmq_acl_t *acl, const char *peer, const Rmq__Command *cmd,
                             const char *topic, char *remark, size_t remarklen)
{
    const rmq_acl_account_t *a = NULL;
    rmq_acl_need_t need = { RMQ_ACL_TOPIC, RMQ_ACL_PERM_SUB, topic };
    const char *ak = cmd->auth ? cmd->auth->access_key : NULL;
    int rc = acl ? rmq_acl_account_of(acl, peer, ak, &a) : 1;

    if (rc > 0)
        return 1;
    if (rc < 0) {
        snprintf(remark, remarklen, "no permission: %s from %s is not signed by a known account",
                 rmq_request_name(cmd->code), peer);
        return 0;
    }
    return rmq_acl_allows(a, &need, 1, rmq_request_name(cmd->code), remark, remarklen);
}

/* ---- the check --------------------------------------------------------------- */

int rmq_acl_check(rmq_acl_t *acl, const char *peer, const Rmq__Command *cmd,
                  struct evbuffer *body, int64_t now_ms, char *remark, size_t remarklen)
{
    const char *op = rmq_request_name(cmd->code);
    const Rmq__Auth *auth = cmd->auth;
    const rmq_acl_account_t *a = NULL;
    uint8_t digest[32], mac[32];
    char hex[65];

    int rc = rmq_acl_authenticate(acl, peer, auth ? auth->access_key : NULL,
                                  auth ? auth->timestamp_ms : 0, now_ms, op, &a, remark,
                                  remarklen);
    if (rc > 0)
        return RMQ__STATUS__SUCCESS;
    if (rc < 0)
        return RMQ__STATUS__NO_PERMISSION;
    rmq_acl_body_digest_buf(body, digest);
    if (cmd_mac(rmq_acl_account_secret(a), auth->timestamp_ms, auth->nonce, cmd, digest,
                mac) != 0) {
        snprintf(remark, remarklen, "no permission: out of memory checking the signature");
        return RMQ__STATUS__NO_PERMISSION;
    }
    rmq_acl_hex(mac, sizeof(mac), hex);
    if (!rmq_acl_sig_equal(hex, auth->signature ? auth->signature : "")) {
        snprintf(remark, remarklen, "no permission: account %s: signature of %s does not match "
                 "its header and body", rmq_acl_account_key(a), op);
        return RMQ__STATUS__NO_PERMISSION;
    }
    if (rmq_acl_replay_check(acl, a, mac, sizeof(mac), auth->timestamp_ms, now_ms, op, remark,
                             remarklen) != 0)
        return RMQ__STATUS__NO_PERMISSION;
    if (!request_allowed(a, cmd, remark, remarklen))
        return RMQ__STATUS__NO_PERMISSION;
    return RMQ__STATUS__SUCCESS;
}

int rmq_acl_request_signer(const rmq_acl_t *acl, const char *peer, const Rmq__Command *cmd,
                           const rmq_acl_account_t **account, char *remark, size_t remarklen)
{
    const Rmq__Auth *auth = cmd->auth;
    int64_t ts = auth ? auth->timestamp_ms : 0;

    *account = NULL;
    if (!acl)
        return 1;
    /* now = the request's own timestamp: the window was checked already */
    return rmq_acl_authenticate(acl, peer, auth ? auth->access_key : NULL, ts, ts,
                                rmq_request_name(cmd->code), account, remark, remarklen);
}

/* Server hook: 1 to dispatch, 0 after answering NO_PERMISSION. */
static int acl_auth(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    rmq_acl_t *acl = arg;
    char remark[512];

    if (rmq_acl_check(acl, rmq_conn_peer(conn), req->cmd, req->body, rmq_wall_ms(), remark,
                      sizeof(remark)) == RMQ__STATUS__SUCCESS)
        return 1;
    LOG_WARN_RL("refused %s from %s: %s", rmq_request_name(req->cmd->code), rmq_conn_peer(conn),
                remark);
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__NO_PERMISSION, "%s", remark);
    return 0;
}

void rmq_acl_attach(rmq_server_t *srv, rmq_acl_t *acl)
{
    if (acl)
        rmq_server_set_auth(srv, acl_auth, acl);
}
