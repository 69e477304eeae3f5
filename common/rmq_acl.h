/* rmq_acl.h: access control of the native rmq protocol over the neutral
 * policy (rmq_acl_policy.h: accounts, permissions, replay cache, the file
 * format). Each request carries Auth (rmq.proto): accessKey, the sender's
 * wall-clock timestamp, a random nonce and a signature, hex
 * HMAC-SHA256(secretKey, "rmq-sig-2" | ts | nonce | SHA-256(body) | the
 * packed Command without auth). The server checks the signer
 * (rmq_acl_authenticate), the signature, that the signature was not seen
 * within the replay window (rmq_acl_replay_check), then, for the name
 * server (RMQ_ACL_SIGNER_AND_NEEDS), what its code needs: administration
 * codes and broker registration an admin, any other code a valid
 * signature. The broker checks only the signer here (RMQ_ACL_SIGNER_ONLY):
 * what a request touches and needs is its core's to decide on the decoded
 * request (broker/core/bk_perm.h), with the signer from
 * rmq_acl_request_signer. Addresses in globalWhiteRemoteAddresses are
 * trusted unsigned. */
#ifndef RMQ_ACL_H
#define RMQ_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_acl_policy.h"
#include "rmq_rpc.h"

/* SHA-256 of a request body: flat bytes (data may be NULL when len is 0) or
 * an evbuffer's contents (NULL: empty), read in place. Out of memory gives
 * 32 zero bytes, which no signature matches. Any thread. */
void rmq_acl_body_digest(const void *data, size_t len, uint8_t out[32]);
void rmq_acl_body_digest_buf(struct evbuffer *body, uint8_t out[32]);

/* Checks one request from peer ("ip:port" or "[v6]:port") with its body,
 * under scope. Returns RMQ__STATUS__SUCCESS, or RMQ__STATUS__NO_PERMISSION with a remark
 * naming the account and what was wrong (signature, replay, resource).
 * now_ms: the wall clock. Loop thread (the replay cache). */
int rmq_acl_check(rmq_acl_t *acl, rmq_acl_scope_t scope, const char *peer, const Rmq__Command *cmd,
                  struct evbuffer *body, int64_t now_ms, char *remark, size_t remarklen);

/* Who signed cmd, for a handler that asks what the decoded request needs
 * (the broker's), after rmq_acl_check let it through: 1 with *account NULL (acl NULL, or
 * peer whitelisted: trusted), 0 with *account set, -1 with a remark
 * (refused). Any thread; reads acl only. */
int rmq_acl_request_signer(const rmq_acl_t *acl, const char *peer, const Rmq__Command *cmd,
                           const rmq_acl_account_t **account, char *remark, size_t remarklen);

/* Installs rmq_acl_check under scope in front of every handler of srv's
 * rmq codec (acl borrowed, must outlive srv). Refusals are logged (rate-limited) and
 * answered NO_PERMISSION. Loop thread, set-up time. */
void rmq_acl_attach(rmq_server_t *srv, rmq_acl_t *acl, rmq_acl_scope_t scope);

/* ---- signing ----------------------------------------------------------- */

/* Credentials for rmq_acl_signer; strings copied. */
typedef struct rmq_acl_credentials {
    char access_key[256];
    char secret_key[256];
} rmq_acl_credentials_t;

/* account's keys into cred, to sign as it after the policy may have been
 * reloaded; account NULL: cred emptied (unsigned). */
void rmq_acl_credentials_of(const rmq_acl_account_t *account, rmq_acl_credentials_t *cred);

/* Signs cmd (auth unset) and the digest of its body at ts_ms with a fresh
 * random nonce into sig; sig->auth is ready to attach (cmd->auth =
 * &sig->auth) and borrows access_key. Any thread. */
void rmq_acl_sign(const char *access_key, const char *secret_key, int64_t ts_ms,
                  const Rmq__Command *cmd, const uint8_t body_sha256[32], rmq_signature_t *sig);

/* rmq_sign_fn for rmq_client_opts_t: arg is an rmq_acl_credentials_t that
 * must outlive the clients; signs with the current wall clock. */
void rmq_acl_signer(const Rmq__Command *cmd, const uint8_t body_sha256[32],
                    rmq_signature_t *sig, void *arg);

#endif
