/* rmq_acl.c: access control of the native rmq protocol: the signature
 * (HMAC-SHA256 over a timestamp, a nonce, the body's digest and the packed
 * header), the client-side signer, which name-server codes need an admin
 * (code_is_admin), and the check installed in front of the rmq codec's
 * handlers. Accounts, permissions and the replay cache are the
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

void rmq_acl_credentials_of(const rmq_acl_account_t *account, rmq_acl_credentials_t *cred)
{
    *cred = (rmq_acl_credentials_t){{0}, {0}};
    if (account) {
        snprintf(cred->access_key, sizeof(cred->access_key), "%s", rmq_acl_account_key(account));
        snprintf(cred->secret_key, sizeof(cred->secret_key), "%s", rmq_acl_account_secret(account));
    }
}

void rmq_acl_signer(const Rmq__Command *cmd, const uint8_t body_sha256[32],
                    rmq_signature_t *sig, void *arg)
{
    const rmq_acl_credentials_t *cr = arg;
    rmq_acl_sign(cr->access_key, cr->secret_key, rmq_wall_ms(), cmd, body_sha256, sig);
}

/* ---- what a name-server request needs ---------------------------------------- */

/* 1 if code is an administration code of the name server (or a broker's
 * registration with it): it needs an admin account. Any other code needs
 * only a valid signature here; the broker's codes are checked by its core
 * on the decoded request (RMQ_ACL_SIGNER_ONLY). */
static int code_is_admin(int code)
{
    switch (code) {
    case RMQ__REQUEST_CODE__DELETE_TOPIC_IN_NAMESRV:
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
        return 1;
    default:
        return 0;
    }
}

/* Asks the policy whether a may do cmd under scope; 1 if allowed. */
static int request_allowed(const rmq_acl_account_t *a, const Rmq__Command *cmd, rmq_acl_scope_t scope,
                           char *remark, size_t remarklen)
{
    rmq_acl_need_t admin = { RMQ_ACL_ADMIN, 0, NULL };

    if (scope == RMQ_ACL_SIGNER_ONLY || !code_is_admin(cmd->code))
        return 1;
    return rmq_acl_allows(a, &admin, 1, rmq_request_name(cmd->code), remark, remarklen);
}

/* ---- the check --------------------------------------------------------------- */

int rmq_acl_check(rmq_acl_t *acl, rmq_acl_scope_t scope, const char *peer, const Rmq__Command *cmd,
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
    if (!request_allowed(a, cmd, scope, remark, remarklen))
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

/* Checks req under scope; 1 to dispatch, 0 after answering NO_PERMISSION. */
static int acl_auth(rmq_acl_t *acl, rmq_acl_scope_t scope, rmq_conn_t *conn, rmq_frame_t *req)
{
    char remark[512];

    if (rmq_acl_check(acl, scope, rmq_conn_peer(conn), req->cmd, req->body, rmq_wall_ms(), remark,
                      sizeof(remark)) == RMQ__STATUS__SUCCESS)
        return 1;
    LOG_WARN_RL("refused %s from %s: %s", rmq_request_name(req->cmd->code), rmq_conn_peer(conn),
                remark);
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__NO_PERMISSION, "%s", remark);
    return 0;
}

/* Server hooks (rmq_auth_fn), one per scope; arg is the ACL. */
static int acl_auth_needs(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    return acl_auth(arg, RMQ_ACL_SIGNER_AND_NEEDS, conn, req);
}

static int acl_auth_signer(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    return acl_auth(arg, RMQ_ACL_SIGNER_ONLY, conn, req);
}

void rmq_acl_attach(rmq_server_t *srv, rmq_acl_t *acl, rmq_acl_scope_t scope)
{
    if (acl)
        rmq_server_set_auth(srv, scope == RMQ_ACL_SIGNER_ONLY ? acl_auth_signer : acl_auth_needs, acl);
}
