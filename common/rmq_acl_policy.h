/* rmq_acl_policy.h: the protocol-neutral half of access control: accounts
 * (accessKey, secretKey, admin flag, address whitelist, permissions on topics
 * and groups), the checks every codec's signature scheme shares (who signs,
 * from where, when, and was this signature seen before), and the decision
 * whether an account may do an operation described by what it needs
 * (rmq_acl_need_t: admin, or PUB/SUB on a topic, or SUB on a consumer group,
 * or PUB on a producer group; a list when it needs several). A group's PUB
 * is what lets an account register as that group's producer, and so
 * receive its transaction check-backs (which carry whole messages); PUB on
 * a topic grants no group. No wire type appears here: each codec checks
 * its own signature (rmq_acl.h for the native protocol); what a request
 * needs is decided by the server that runs it (the name server: the
 * codecs' tables of its admin codes; the broker: its core's table of
 * operations, broker/core/bk_perm.h, on the decoded request), which then
 * asks this policy.
 *
 * The ACL file is a .properties file (plain_acl.yml's content, flattened):
 *
 *   globalWhiteRemoteAddresses=10.10.*;192.168.0.7   # fnmatch patterns, ';'-separated
 *   replayWindowMs=60000                             # |now - timestamp| allowed
 *   replayCacheEntries=1048576                       # signatures remembered (rmq_replay.h)
 *   account.<accessKey>.secretKey=...                # required, >= 8 chars
 *   account.<accessKey>.admin=true                   # admin operations; all topics and groups
 *   account.<accessKey>.whiteRemoteAddress=127.0.0.1 # account accepted only from these (IPv6: ::1, no brackets)
 *   account.<accessKey>.defaultTopicPerm=DENY        # DENY (default), PUB, SUB, PUB|SUB
 *   account.<accessKey>.defaultGroupPerm=SUB
 *   account.<accessKey>.topicPerms=TopicA=PUB;TopicB=PUB|SUB
 *   account.<accessKey>.groupPerms=GroupA=SUB;GroupB=DENY
 *
 * A later line of the same key replaces an earlier one. rmq_acl_format
 * writes a policy back in this format, without comments (as RocketMQ
 * rewrites plain_acl.yml); an edit (RocketMQ's ACL admin codes) and a
 * reload make a new policy that rmq_acl_replace moves into the one the
 * daemon's codecs hold.
 *
 * Threads: loading, editing and rmq_acl_allows run anywhere;
 * rmq_acl_replay_check and rmq_acl_replace mutate the ACL and run on the
 * loop thread of the one daemon that owns it. */
#ifndef RMQ_ACL_POLICY_H
#define RMQ_ACL_POLICY_H

#include <stddef.h>
#include <stdint.h>

#include "rmq_config.h"
#include "rmq_err.h"

#define RMQ_ACL_PERM_DENY 0
#define RMQ_ACL_PERM_PUB 1
#define RMQ_ACL_PERM_SUB 2

typedef struct rmq_acl rmq_acl_t;
typedef struct rmq_acl_account rmq_acl_account_t;

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
int64_t rmq_acl_window_ms(const rmq_acl_t *acl);

/* Loads cfg->file when cfg->enable is set (*out NULL otherwise); one line
 * naming the key on error. */
rmq_err_t rmq_acl_config_load(const rmq_acl_config_t *cfg, rmq_acl_t **out, char *err,
                              size_t errlen);

/* ---- writing back, editing, replacing ---------------------------------- */

/* acl in the file format (comments dropped, every account in full), so
 * that rmq_acl_parse gives the same policy back; *len its length. NULL
 * when out of memory. Owner: caller (free). */
char *rmq_acl_format(const rmq_acl_t *acl, size_t *len);

typedef enum rmq_acl_edit_kind {
    RMQ_ACL_EDIT_PUT = 0,          /* create an account, or update the fields given */
    RMQ_ACL_EDIT_DELETE,           /* remove an account */
    RMQ_ACL_EDIT_GLOBAL_WHITE,     /* replace globalWhiteRemoteAddresses */
} rmq_acl_edit_kind_t;

/* A change as RocketMQ's ACL admin requests carry it. Lists may use
 * RocketMQ's ',' or the file's ';'. NULL fields of a PUT keep the
 * account's value (admin is always set). Strings borrowed. */
typedef struct rmq_acl_edit {
    rmq_acl_edit_kind_t kind;
    const char *access_key;        /* PUT, DELETE: [A-Za-z0-9_.-], 1..255 */
    const char *secret_key;        /* PUT */
    const char *white;             /* PUT: whiteRemoteAddress */
    int admin;                     /* PUT */
    const char *default_topic_perm, *default_group_perm; /* PUT: DENY, PUB, SUB, PUB|SUB */
    const char *topic_perms, *group_perms;               /* PUT: "A=PUB,B=SUB" */
    const char *global_white;      /* GLOBAL_WHITE: "10.1.*,127.0.0.1" ("" none) */
} rmq_acl_edit_t;

/* A new policy: acl with e applied and checked as a file would be. NULL
 * with the reason in err (a bad access key, an unknown account to delete,
 * a value the file format refuses). acl is not changed. Owner: caller. */
rmq_acl_t *rmq_acl_edit(const rmq_acl_t *acl, const rmq_acl_edit_t *e, char *err, size_t errlen);

/* Moves fresh's accounts and settings into acl, which keeps its replay
 * cache (signatures accepted stay refused; its capacity is the one it was
 * made with); frees fresh. Every holder of acl sees the new policy. Loop
 * thread of the owning daemon. */
void rmq_acl_replace(rmq_acl_t *acl, rmq_acl_t *fresh);

/* An account as RocketMQ's PlainAccessConfig shows it (strings borrowed). */
typedef struct rmq_acl_account_view {
    const char *access_key, *secret_key;
    const char *white;             /* whiteRemoteAddress; NULL: anywhere */
    int admin;
    const char *default_topic_perm, *default_group_perm;
    size_t ntopics, ngroups;       /* rmq_acl_account_perm */
} rmq_acl_account_view_t;

/* globalWhiteRemoteAddresses as written (';'-separated), or NULL. */
const char *rmq_acl_global_white(const rmq_acl_t *acl);
/* The i-th account in file order, or NULL past the last. */
const rmq_acl_account_t *rmq_acl_account_at(const rmq_acl_t *acl, size_t i);
void rmq_acl_account_view(const rmq_acl_account_t *a, rmq_acl_account_view_t *v);
/* The j-th topic (group != 0: group) permission of a: its name, *perm
 * "DENY", "PUB", "SUB" or "PUB|SUB"; NULL past the last. */
const char *rmq_acl_account_perm(const rmq_acl_account_t *a, int group, size_t j, const char **perm);

/* ---- what an operation needs ------------------------------------------- */

typedef enum rmq_acl_resource {
    RMQ_ACL_ADMIN = 0,     /* an admin operation */
    RMQ_ACL_TOPIC,         /* perm on a topic (%RETRY%G and %DLQ%G: SUB on group G) */
    RMQ_ACL_GROUP,         /* SUB on a consumer group, PUB on a producer group */
} rmq_acl_resource_t;

typedef struct rmq_acl_need {
    rmq_acl_resource_t resource;
    int perm;              /* RMQ_ACL_PERM_PUB or _SUB (TOPIC, GROUP: anything else is SUB); ignored for ADMIN */
    const char *name;      /* topic or group (NULL: ""); borrowed */
} rmq_acl_need_t;

/* What a codec's access check decides before a request's handler runs. */
typedef enum rmq_acl_scope {
    RMQ_ACL_SIGNER_AND_NEEDS = 0,  /* the signer, its signature, and what the code needs by the codec's
                                    * own table (the name server's codes) */
    RMQ_ACL_SIGNER_ONLY,           /* the signer and its signature; the handlers ask what the decoded
                                    * request needs (the broker: its core's bk_perm.h) */
} rmq_acl_scope_t;

/* 1 if account a may do op (a name for the remark), which needs every one
 * of needs[0..n) (n 0: any valid account may); 0 with a remark naming the
 * account, the resource and op otherwise. Admin accounts may do anything. */
int rmq_acl_allows(const rmq_acl_account_t *a, const rmq_acl_need_t *needs, size_t n,
                   const char *op, char *remark, size_t remarklen);

/* ---- what every signature check shares ---------------------------------- */

/* Vets a request's signer before its codec checks the signature: peer
 * ("ip:port" or "[v6]:port") whitelisted, access_key a known account allowed
 * from peer, ts_ms within the replay window of now_ms (wall clock). Returns
 * 1 (whitelisted: no signature needed), 0 (*account set: check the
 * signature with rmq_acl_account_secret) or -1 (refused, remark set). */
int rmq_acl_authenticate(const rmq_acl_t *acl, const char *peer, const char *access_key,
                         int64_t ts_ms, int64_t now_ms, const char *op,
                         const rmq_acl_account_t **account, char *remark, size_t remarklen);

/* The signer of a request the server already admitted (rmq_acl_authenticate
 * and the signature check passed): 1 when peer is whitelisted (trusted, no
 * account), 0 with *account set, -1 if access_key names no account: who
 * the broker's handlers ask their core's permission check for. */
int rmq_acl_account_of(const rmq_acl_t *acl, const char *peer, const char *access_key,
                       const rmq_acl_account_t **account);

const char *rmq_acl_account_key(const rmq_acl_account_t *a);
const char *rmq_acl_account_secret(const rmq_acl_account_t *a);

/* Refuses a verified signature seen before: mac (its first 16 bytes, at
 * least that many) signed at ts_ms is looked up in the ACL's replay cache
 * and recorded (rmq_replay.h for the bound and the eviction rule). 0 when it
 * is new, -1 with a remark (replayed, or older than the cache can vouch for).
 * Loop thread of the owning daemon. */
int rmq_acl_replay_check(rmq_acl_t *acl, const rmq_acl_account_t *a, const uint8_t *mac,
                         size_t maclen, int64_t ts_ms, int64_t now_ms, const char *op,
                         char *remark, size_t remarklen);

/* Constant-time equality of two signature strings (non-empty, same length). */
int rmq_acl_sig_equal(const char *a, const char *b);
/* Lowercase hex of n bytes into out[2n + 1]. */
void rmq_acl_hex(const uint8_t *in, size_t n, char *out);

/* ---- HA handshake (the broker's replication link) ----------------------- */

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
