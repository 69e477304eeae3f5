/* rmq_acl.h: access control. Accounts (accessKey, secretKey) sign each
 * request with HMAC-SHA256 over a timestamp and the request's header
 * (rmq.proto, message Auth); servers check the signature, the replay window
 * and the account's permission on the request's topic and group (PUB, SUB,
 * PUB|SUB, DENY, with per-account defaults); admin operations need an admin
 * account. Addresses in globalWhiteRemoteAddresses are trusted unsigned.
 *
 * The ACL file is a .properties file (plain_acl.yml's content, flattened):
 *
 *   globalWhiteRemoteAddresses=10.10.*;192.168.0.7   # fnmatch patterns, ';'-separated
 *   replayWindowMs=60000                             # |now - timestamp| allowed
 *   account.<accessKey>.secretKey=...                # required, >= 8 chars
 *   account.<accessKey>.admin=true                   # admin codes; all topics and groups
 *   account.<accessKey>.whiteRemoteAddress=127.0.0.1 # account accepted only from these (IPv6: ::1, no brackets)
 *   account.<accessKey>.defaultTopicPerm=DENY        # DENY (default), PUB, SUB, PUB|SUB
 *   account.<accessKey>.defaultGroupPerm=SUB
 *   account.<accessKey>.topicPerms=TopicA=PUB;TopicB=PUB|SUB
 *   account.<accessKey>.groupPerms=GroupA=SUB;GroupB=DENY
 *
 * Request codes map to what they need (rmq_acl.c, acl_rules): sends need PUB
 * on the topic; pulls, offsets and queue queries SUB on the topic and/or
 * group (a %RETRY%G or %DLQ%G topic counts as group G); topic, group, broker
 * and name-server administration (and broker registration) need admin; any
 * other code needs only a valid signature. */
#ifndef RMQ_ACL_H
#define RMQ_ACL_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_config.h"
#include "rmq_rpc.h"

#define RMQ_ACL_PERM_DENY 0
#define RMQ_ACL_PERM_PUB 1
#define RMQ_ACL_PERM_SUB 2

typedef struct rmq_acl rmq_acl_t;

/* Access-control keys of a daemon (aclEnable, aclFile; the broker also
 * aclAccessKey, aclSecretKey for its own outgoing requests). */
typedef struct rmq_acl_config {
    int enable;            /* aclEnable */
    char *file;            /* aclFile */
    char *access_key;      /* aclAccessKey: this daemon's account when it dials others */
    char *secret_key;      /* aclSecretKey */
} rmq_acl_config_t;

#define RMQ_ACL_CFG_SERVER_ENTRIES(type, member)                                               \
    {"aclEnable", RMQ_CFG_BOOL, offsetof(type, member.enable), "false", 0, 0, NULL,            \
     "check signatures and permissions of every request (accounts in aclFile)"},               \
    {"aclFile", RMQ_CFG_STR, offsetof(type, member.file), "", 0, 4096, NULL,                   \
     "access-control file (.properties: accounts, permissions, whitelists)"}

#define RMQ_ACL_CFG_CLIENT_ENTRIES(type, member)                                               \
    {"aclAccessKey", RMQ_CFG_STR, offsetof(type, member.access_key), "", 0, 255, NULL,         \
     "account this daemon signs its own requests with (registration, slave sync, HA)"},        \
    {"aclSecretKey", RMQ_CFG_STR, offsetof(type, member.secret_key), "", 0, 255, NULL,         \
     "secret key of aclAccessKey"}

/* Loads an ACL file. NULL with "FILE:LINE: key=value: rule" (or
 * "aclFile=PATH: reason") in err on a bad file. Owner: caller. */
rmq_acl_t *rmq_acl_load(const char *path, char *err, size_t errlen);
/* Parses ACL text (same format); name is used in messages. */
rmq_acl_t *rmq_acl_parse(const char *text, size_t len, const char *name, char *err,
                         size_t errlen);
void rmq_acl_free(rmq_acl_t *acl);
size_t rmq_acl_account_count(const rmq_acl_t *acl);

/* Loads cfg->file when cfg->enable is set (*out NULL otherwise); one line
 * naming the key on error. */
rmq_err_t rmq_acl_config_load(const rmq_acl_config_t *cfg, rmq_acl_t **out, char *err,
                              size_t errlen);

/* Checks one request from peer ("ip:port" or "[v6]:port"). Returns
 * RMQ__STATUS__SUCCESS, or RMQ__STATUS__NO_PERMISSION with a remark naming
 * the account and the resource. now_ms: the wall clock. Any thread. */
int rmq_acl_check(const rmq_acl_t *acl, const char *peer, const Rmq__Command *cmd,
                  int64_t now_ms, char *remark, size_t remarklen);

/* Installs rmq_acl_check in front of every handler of srv (acl borrowed,
 * must outlive srv). Refusals are logged (rate-limited) and answered
 * NO_PERMISSION. Loop thread, set-up time. */
void rmq_acl_attach(rmq_server_t *srv, const rmq_acl_t *acl);

/* ---- signing ----------------------------------------------------------- */

/* Credentials for rmq_acl_signer; strings copied. */
typedef struct rmq_acl_credentials {
    char access_key[256];
    char secret_key[256];
} rmq_acl_credentials_t;

/* Signs cmd (auth unset) at ts_ms into sig; sig->auth is ready to attach
 * (cmd->auth = &sig->auth) and borrows access_key. Any thread. */
void rmq_acl_sign(const char *access_key, const char *secret_key, int64_t ts_ms,
                  const Rmq__Command *cmd, rmq_signature_t *sig);

/* rmq_sign_fn for rmq_client_opts_t: arg is an rmq_acl_credentials_t that
 * must outlive the clients; signs with the current wall clock. */
void rmq_acl_signer(const Rmq__Command *cmd, rmq_signature_t *sig, void *arg);

/* HA handshake signature: hex HMAC over
 * "HA\n<cluster>\n<broker>\n<id>\n<max_offset>\n<ts_ms>" into hex[65]. */
void rmq_acl_sign_ha(const char *secret_key, const char *cluster, const char *broker,
                     int64_t broker_id, int64_t max_offset, int64_t ts_ms, char hex[65]);

/* Checks an HA handshake from peer: signed by an admin account within the
 * replay window (or peer whitelisted). 0, or -1 with the reason in why. */
int rmq_acl_check_ha(const rmq_acl_t *acl, const char *peer, const char *access_key,
                     const char *signature, const char *cluster, const char *broker,
                     int64_t broker_id, int64_t max_offset, int64_t ts_ms, int64_t now_ms,
                     char *why, size_t whylen);

#endif
