/* rmq_acl.c: access control: the ACL file, request signatures
 * (HMAC-SHA256 over a timestamp and the packed header), and the table that
 * says what each request code needs. The model and the file format are
 * described in rmq_acl.h. */
#include "rmq_acl.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "rmq_log.h"
#include "rmq_time.h"

#define ACL_DEFAULT_WINDOW_MS 60000
#define ACL_MIN_SECRET 8
#define ACL_FILE_MAX (4 << 20)

typedef struct acl_perm {
    char *name;
    int perm;
} acl_perm_t;

typedef struct acl_account {
    char *access_key;
    char *secret_key;
    int admin;
    char *white;                 /* ';'-separated patterns; NULL: anywhere */
    int default_topic;
    int default_group;
    acl_perm_t *topics;
    size_t ntopics;
    acl_perm_t *groups;
    size_t ngroups;
    int line;                    /* first line that named it */
} acl_account_t;

struct rmq_acl {
    char *global_white;          /* NULL: none */
    int64_t window_ms;
    acl_account_t *accounts;
    size_t naccounts;
};

/* ---- loading ----------------------------------------------------------------- */

static void perms_free(acl_perm_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        free(p[i].name);
    free(p);
}

void rmq_acl_free(rmq_acl_t *acl)
{
    if (!acl)
        return;
    for (size_t i = 0; i < acl->naccounts; i++) {
        acl_account_t *a = &acl->accounts[i];
        free(a->access_key);
        free(a->secret_key);
        free(a->white);
        perms_free(a->topics, a->ntopics);
        perms_free(a->groups, a->ngroups);
    }
    free(acl->accounts);
    free(acl->global_white);
    free(acl);
}

size_t rmq_acl_account_count(const rmq_acl_t *acl)
{
    return acl ? acl->naccounts : 0;
}

/* "DENY", "PUB", "SUB", "PUB|SUB" (or "SUB|PUB"); -1 otherwise. */
static int perm_parse(const char *s)
{
    if (!strcmp(s, "DENY"))
        return RMQ_ACL_PERM_DENY;
    if (!strcmp(s, "PUB"))
        return RMQ_ACL_PERM_PUB;
    if (!strcmp(s, "SUB"))
        return RMQ_ACL_PERM_SUB;
    if (!strcmp(s, "PUB|SUB") || !strcmp(s, "SUB|PUB"))
        return RMQ_ACL_PERM_PUB | RMQ_ACL_PERM_SUB;
    return -1;
}

static const char *perm_name(int perm)
{
    static const char *const names[] = {"DENY", "PUB", "SUB", "PUB|SUB"};
    return names[perm & 3];
}

typedef struct acl_load {
    rmq_acl_t *acl;
    const char *name;
    char *err;
    size_t errlen;
} acl_load_t;

static acl_account_t *account_get(acl_load_t *ld, const char *ak, size_t aklen, int line)
{
    rmq_acl_t *acl = ld->acl;
    for (size_t i = 0; i < acl->naccounts; i++)
        if (strlen(acl->accounts[i].access_key) == aklen &&
            !memcmp(acl->accounts[i].access_key, ak, aklen))
            return &acl->accounts[i];
    acl_account_t *grown = realloc(acl->accounts, (acl->naccounts + 1) * sizeof(*grown));
    if (!grown)
        return NULL;
    acl->accounts = grown;
    acl_account_t *a = &acl->accounts[acl->naccounts];
    memset(a, 0, sizeof(*a));
    a->access_key = strndup(ak, aklen);
    if (!a->access_key)
        return NULL;
    a->line = line;
    acl->naccounts++;
    return a;
}

/* Parses "name=PERM;name=PERM" into *out. -1 on a bad entry. */
static int perms_parse(const char *value, acl_perm_t **out, size_t *n)
{
    char *copy = strdup(value), *save = NULL;
    int rc = 0;
    if (!copy)
        return -1;
    for (char *tok = strtok_r(copy, ";", &save); tok; tok = strtok_r(NULL, ";", &save)) {
        char *eq = strchr(tok, '=');
        int perm;
        if (!eq || eq == tok || (perm = perm_parse(eq + 1)) < 0) {
            rc = -1;
            break;
        }
        acl_perm_t *grown = realloc(*out, (*n + 1) * sizeof(*grown));
        if (!grown || !(grown[*n].name = strndup(tok, (size_t)(eq - tok)))) {
            if (grown)
                *out = grown;
            rc = -1;
            break;
        }
        *out = grown;
        grown[*n].perm = perm;
        (*n)++;
    }
    free(copy);
    return rc;
}

static int load_fail(acl_load_t *ld, int line, const char *key, const char *value,
                     const char *rule)
{
    snprintf(ld->err, ld->errlen, "%s:%d: %s=%s: %s", ld->name, line, key, value ? value : "",
             rule);
    return -1;
}

/* One key of the ACL file. */
static int load_key(const char *key, const char *value, int line, void *arg)
{
    acl_load_t *ld = arg;
    rmq_acl_t *acl = ld->acl;

    if (!value)
        return load_fail(ld, line, key, "", "malformed \\u escape");
    if (!strcmp(key, "globalWhiteRemoteAddresses")) {
        free(acl->global_white);
        acl->global_white = value[0] ? strdup(value) : NULL;
        return 0;
    }
    if (!strcmp(key, "replayWindowMs")) {
        char *end;
        long long v = strtoll(value, &end, 10);
        if (*end || v < 1000 || v > 86400000)
            return load_fail(ld, line, key, value, "must be 1000..86400000");
        acl->window_ms = v;
        return 0;
    }
    const char *dot = strrchr(key, '.');
    if (strncmp(key, "account.", 8) || !dot || dot <= key + 8)
        return load_fail(ld, line, key, value,
                         "unknown key (globalWhiteRemoteAddresses, replayWindowMs, "
                         "account.<accessKey>.<field>)");
    acl_account_t *a = account_get(ld, key + 8, (size_t)(dot - key - 8), line);
    const char *field = dot + 1;
    if (!a)
        return load_fail(ld, line, key, value, "out of memory");
    if (!strcmp(field, "secretKey")) {
        if (strlen(value) < ACL_MIN_SECRET)
            return load_fail(ld, line, key, "***", "secret keys need at least 8 characters");
        free(a->secret_key);
        a->secret_key = strdup(value);
    } else if (!strcmp(field, "admin")) {
        if (strcmp(value, "true") && strcmp(value, "false"))
            return load_fail(ld, line, key, value, "must be true or false");
        a->admin = !strcmp(value, "true");
    } else if (!strcmp(field, "whiteRemoteAddress")) {
        free(a->white);
        a->white = value[0] ? strdup(value) : NULL;
    } else if (!strcmp(field, "defaultTopicPerm") || !strcmp(field, "defaultGroupPerm")) {
        int perm = perm_parse(value);
        if (perm < 0)
            return load_fail(ld, line, key, value, "must be DENY, PUB, SUB or PUB|SUB");
        *(field[7] == 'T' ? &a->default_topic : &a->default_group) = perm;
    } else if (!strcmp(field, "topicPerms")) {
        if (perms_parse(value, &a->topics, &a->ntopics) != 0)
            return load_fail(ld, line, key, value,
                             "must be NAME=PERM;NAME=PERM with PERM DENY, PUB, SUB or PUB|SUB");
    } else if (!strcmp(field, "groupPerms")) {
        if (perms_parse(value, &a->groups, &a->ngroups) != 0)
            return load_fail(ld, line, key, value,
                             "must be NAME=PERM;NAME=PERM with PERM DENY, PUB, SUB or PUB|SUB");
    } else {
        return load_fail(ld, line, key, value,
                         "unknown account field (secretKey, admin, whiteRemoteAddress, "
                         "defaultTopicPerm, defaultGroupPerm, topicPerms, groupPerms)");
    }
    return 0;
}

rmq_acl_t *rmq_acl_parse(const char *text, size_t len, const char *name, char *err,
                         size_t errlen)
{
    acl_load_t ld = {calloc(1, sizeof(rmq_acl_t)), name, err, errlen};
    if (!ld.acl) {
        snprintf(err, errlen, "%s: out of memory", name);
        return NULL;
    }
    ld.acl->window_ms = ACL_DEFAULT_WINDOW_MS;
    if (rmq_properties_parse(text, len, load_key, &ld) != 0) {
        rmq_acl_free(ld.acl);
        return NULL;
    }
    for (size_t i = 0; i < ld.acl->naccounts; i++) {
        acl_account_t *a = &ld.acl->accounts[i];
        if (!a->secret_key) {
            snprintf(err, errlen, "%s:%d: account.%s.secretKey: missing", name, a->line,
                     a->access_key);
            rmq_acl_free(ld.acl);
            return NULL;
        }
    }
    return ld.acl;
}

rmq_acl_t *rmq_acl_load(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    char *text = NULL;
    size_t len = 0;
    rmq_acl_t *acl = NULL;

    if (!f) {
        snprintf(err, errlen, "aclFile=%s: cannot open: %m", path);
        return NULL;
    }
    text = malloc(ACL_FILE_MAX);
    if (text)
        len = fread(text, 1, ACL_FILE_MAX, f);
    if (!text || ferror(f) || len == ACL_FILE_MAX)
        snprintf(err, errlen, "aclFile=%s: cannot read (or larger than 4 MiB)", path);
    else
        acl = rmq_acl_parse(text, len, path, err, errlen);
    free(text);
    fclose(f);
    return acl;
}

rmq_err_t rmq_acl_config_load(const rmq_acl_config_t *cfg, rmq_acl_t **out, char *err,
                              size_t errlen)
{
    *out = NULL;
    if (!cfg->enable)
        return RMQ_OK;
    if (!cfg->file[0]) {
        snprintf(err, errlen, "aclFile=: required with aclEnable=true");
        return RMQ_EINVAL;
    }
    *out = rmq_acl_load(cfg->file, err, errlen);
    return *out ? RMQ_OK : RMQ_EINVAL;
}

/* ---- signatures -------------------------------------------------------------- */

static void hex_encode(const unsigned char *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
}

/* hex HMAC-SHA256(secret, ts_be64 || packed cmd without auth) into hex[65];
 * -1 on out of memory. */
static int cmd_mac(const char *secret, int64_t ts_ms, const Rmq__Command *cmd, char hex[65])
{
    Rmq__Command copy = *cmd;
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    uint8_t stack[1024];

    copy.auth = NULL;
    size_t n = rmq__command__get_packed_size(&copy);
    uint8_t *buf = n + 8 <= sizeof(stack) ? stack : malloc(n + 8);
    if (!buf) {
        hex[0] = '\0';
        return -1;
    }
    for (int i = 0; i < 8; i++)
        buf[i] = (uint8_t)((uint64_t)ts_ms >> (56 - 8 * i));
    rmq__command__pack(&copy, buf + 8);
    HMAC(EVP_sha256(), secret, (int)strlen(secret), buf, n + 8, mac, &maclen);
    hex_encode(mac, maclen, hex);
    if (buf != stack)
        free(buf);
    return 0;
}

void rmq_acl_sign(const char *access_key, const char *secret_key, int64_t ts_ms,
                  const Rmq__Command *cmd, rmq_signature_t *sig)
{
    rmq__auth__init(&sig->auth);
    cmd_mac(secret_key, ts_ms, cmd, sig->hex);
    sig->auth.access_key = (char *)access_key;
    sig->auth.timestamp_ms = ts_ms;
    sig->auth.signature = sig->hex;
}

void rmq_acl_signer(const Rmq__Command *cmd, rmq_signature_t *sig, void *arg)
{
    const rmq_acl_credentials_t *cr = arg;
    rmq_acl_sign(cr->access_key, cr->secret_key, rmq_wall_ms(), cmd, sig);
}

void rmq_acl_sign_ha(const char *secret_key, const char *cluster, const char *broker,
                     int64_t broker_id, int64_t max_offset, int64_t ts_ms, char hex[65])
{
    char text[1024];
    unsigned char mac[EVP_MAX_MD_SIZE];
    unsigned int maclen = 0;
    int n = snprintf(text, sizeof(text), "HA\n%s\n%s\n%" PRId64 "\n%" PRId64 "\n%" PRId64,
                     cluster, broker, broker_id, max_offset, ts_ms);
    if (n < 0 || (size_t)n >= sizeof(text))
        n = (int)sizeof(text) - 1;
    HMAC(EVP_sha256(), secret_key, (int)strlen(secret_key), (unsigned char *)text, (size_t)n,
         mac, &maclen);
    hex_encode(mac, maclen, hex);
}

/* ---- checks ------------------------------------------------------------------ */

/* Copies the IP part of "ip:port" / "[v6]:port" into ip. */
static void peer_ip(const char *peer, char *ip, size_t iplen)
{
    const char *end;
    if (peer[0] == '[') {
        peer++;
        end = strchr(peer, ']');
    } else {
        end = strrchr(peer, ':');
    }
    size_t n = end ? (size_t)(end - peer) : strlen(peer);
    snprintf(ip, iplen, "%.*s", (int)n, peer);
}

/* 1 if ip matches one of the ';'-separated fnmatch patterns. */
static int addr_match(const char *patterns, const char *ip)
{
    if (!patterns)
        return 0;
    for (const char *p = patterns; *p;) {
        size_t len = strcspn(p, ";,");
        char one[128];
        if (len > 0 && len < sizeof(one)) {
            memcpy(one, p, len);
            one[len] = '\0';
            if (fnmatch(one, ip, 0) == 0)
                return 1;
        }
        p += len;
        if (*p)
            p++;
    }
    return 0;
}

static const acl_account_t *account_find(const rmq_acl_t *acl, const char *ak)
{
    for (size_t i = 0; i < acl->naccounts; i++)
        if (!strcmp(acl->accounts[i].access_key, ak))
            return &acl->accounts[i];
    return NULL;
}

static int perm_of(const acl_perm_t *p, size_t n, int def, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].name, name))
            return p[i].perm;
    return def;
}

/* Constant-time comparison of two hex strings. */
static int sig_equal(const char *a, const char *b)
{
    size_t n = strlen(a);
    return n == strlen(b) && n == 64 && CRYPTO_memcmp(a, b, n) == 0;
}

/* What a request code needs. */
typedef enum need {
    NEED_SIGNED = 0,     /* any valid account */
    NEED_ADMIN,
    NEED_TOPIC_PUB,      /* topic PUB (retry/DLQ topics: group SUB) */
    NEED_TOPIC_SUB,
    NEED_GROUP_SUB,
    NEED_TOPIC_GROUP_SUB,
    NEED_HEARTBEAT,      /* SUB on every consumer group in the heartbeat */
} need_t;

static need_t code_need(int code)
{
    switch (code) {
    case RMQ__REQUEST_CODE__SEND_MESSAGE:
    case RMQ__REQUEST_CODE__SEND_BATCH_MESSAGE:
        return NEED_TOPIC_PUB;
    case RMQ__REQUEST_CODE__PULL_MESSAGE:
    case RMQ__REQUEST_CODE__QUERY_CONSUMER_OFFSET:
    case RMQ__REQUEST_CODE__UPDATE_CONSUMER_OFFSET:
        return NEED_TOPIC_GROUP_SUB;
    case RMQ__REQUEST_CODE__GET_MAX_OFFSET:
    case RMQ__REQUEST_CODE__GET_MIN_OFFSET:
    case RMQ__REQUEST_CODE__SEARCH_OFFSET_BY_TIMESTAMP:
    case RMQ__REQUEST_CODE__GET_EARLIEST_MSG_STORETIME:
    case RMQ__REQUEST_CODE__QUERY_MESSAGE:
    case RMQ__REQUEST_CODE__GET_TOPIC_STATS_INFO:
        return NEED_TOPIC_SUB;
    case RMQ__REQUEST_CODE__UNREGISTER_CLIENT:
    case RMQ__REQUEST_CODE__GET_CONSUMER_LIST_BY_GROUP:
    case RMQ__REQUEST_CODE__LOCK_BATCH_MQ:
    case RMQ__REQUEST_CODE__UNLOCK_BATCH_MQ:
    case RMQ__REQUEST_CODE__CONSUMER_SEND_MSG_BACK:
    case RMQ__REQUEST_CODE__GET_CONSUME_STATS:
        return NEED_GROUP_SUB;
    case RMQ__REQUEST_CODE__HEART_BEAT:
        return NEED_HEARTBEAT;
    case RMQ__REQUEST_CODE__UPDATE_AND_CREATE_TOPIC:
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
    case RMQ__REQUEST_CODE__WIPE_WRITE_PERM_OF_BROKER:
    case RMQ__REQUEST_CODE__ADD_WRITE_PERM_OF_BROKER:
    case RMQ__REQUEST_CODE__GET_NAMESRV_CONFIG:
        return NEED_ADMIN;
    default:
        return NEED_SIGNED;
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
    if (!*topic)
        *topic = "";
    if (!*group)
        *group = "";
}

/* Checks want on topic; retry and DLQ topics are checked as their group. */
static int topic_allows(const acl_account_t *a, const char *topic, int want, const char *code,
                        char *remark, size_t remarklen)
{
    int perm;
    if (!strncmp(topic, "%RETRY%", 7) || !strncmp(topic, "%DLQ%", 5)) {
        const char *group = topic + (topic[1] == 'R' ? 7 : 5);
        perm = perm_of(a->groups, a->ngroups, a->default_group, group);
        if (perm & RMQ_ACL_PERM_SUB)
            return 1;
        snprintf(remark, remarklen,
                 "no permission: account %s has %s on group %s (topic %s), %s needs SUB",
                 a->access_key, perm_name(perm), group, topic, code);
        return 0;
    }
    perm = perm_of(a->topics, a->ntopics, a->default_topic, topic);
    if (perm & want)
        return 1;
    snprintf(remark, remarklen, "no permission: account %s has %s on topic %s, %s needs %s",
             a->access_key, perm_name(perm), topic, code, perm_name(want));
    return 0;
}

static int group_allows(const acl_account_t *a, const char *group, const char *code,
                        char *remark, size_t remarklen)
{
    int perm = perm_of(a->groups, a->ngroups, a->default_group, group);
    if (perm & RMQ_ACL_PERM_SUB)
        return 1;
    snprintf(remark, remarklen, "no permission: account %s has %s on group %s, %s needs SUB",
             a->access_key, perm_name(perm), group, code);
    return 0;
}

/* Checks the account's permission for what cmd needs; 1 if allowed. */
static int resource_allows(const acl_account_t *a, const Rmq__Command *cmd, char *remark,
                           size_t remarklen)
{
    const char *code = rmq_request_name(cmd->code);
    const char *topic, *group;
    need_t need = code_need(cmd->code);

    if (a->admin)
        return 1;
    request_resources(cmd, &topic, &group);
    switch (need) {
    case NEED_SIGNED:
        return 1;
    case NEED_ADMIN:
        snprintf(remark, remarklen, "no permission: %s is an admin operation and account %s "
                 "is not an admin", code, a->access_key);
        return 0;
    case NEED_TOPIC_PUB:
        return topic_allows(a, topic, RMQ_ACL_PERM_PUB, code, remark, remarklen);
    case NEED_TOPIC_SUB:
        return topic_allows(a, topic, RMQ_ACL_PERM_SUB, code, remark, remarklen);
    case NEED_GROUP_SUB:
        return group_allows(a, group, code, remark, remarklen);
    case NEED_TOPIC_GROUP_SUB:
        return topic_allows(a, topic, RMQ_ACL_PERM_SUB, code, remark, remarklen) &&
               group_allows(a, group, code, remark, remarklen);
    case NEED_HEARTBEAT:
        if (cmd->header_case != RMQ__COMMAND__HEADER_HEARTBEAT)
            return 1;
        for (size_t i = 0; i < cmd->heartbeat->n_consumers; i++)
            if (!group_allows(a, cmd->heartbeat->consumers[i]->group_name, code, remark,
                              remarklen))
                return 0;
        return 1;
    }
    return 0;
}

/* Common part of request and HA checks: whitelist, account, address,
 * window. Returns 1 (whitelisted: skip the rest), 0 (go on, *out set) or
 * -1 (refused, remark set). */
static int check_account(const rmq_acl_t *acl, const char *peer, const char *ak, int64_t ts,
                         int64_t now_ms, const char *what, const acl_account_t **out,
                         char *remark, size_t remarklen)
{
    char ip[64];

    peer_ip(peer, ip, sizeof(ip));
    if (addr_match(acl->global_white, ip))
        return 1;
    if (!ak || !ak[0]) {
        snprintf(remark, remarklen, "no permission: %s from %s is not signed (access control "
                 "is on)", what, ip);
        return -1;
    }
    const acl_account_t *a = account_find(acl, ak);
    if (!a) {
        snprintf(remark, remarklen, "no permission: unknown accessKey %s (%s from %s)", ak,
                 what, ip);
        return -1;
    }
    if (a->white && !addr_match(a->white, ip)) {
        snprintf(remark, remarklen, "no permission: account %s may not connect from %s", ak,
                 ip);
        return -1;
    }
    int64_t skew = now_ms - ts;
    if (skew > acl->window_ms || skew < -acl->window_ms) {
        snprintf(remark, remarklen, "no permission: account %s: %s timestamp %" PRId64
                 " is %" PRId64 " ms away from now, outside the replay window of %" PRId64 " ms",
                 ak, what, ts, skew, acl->window_ms);
        return -1;
    }
    *out = a;
    return 0;
}

int rmq_acl_check(const rmq_acl_t *acl, const char *peer, const Rmq__Command *cmd,
                  int64_t now_ms, char *remark, size_t remarklen)
{
    const char *code = rmq_request_name(cmd->code);
    const Rmq__Auth *auth = cmd->auth;
    const acl_account_t *a = NULL;
    char hex[65];

    int rc = check_account(acl, peer, auth ? auth->access_key : NULL,
                           auth ? auth->timestamp_ms : 0, now_ms, code, &a, remark, remarklen);
    if (rc > 0)
        return RMQ__STATUS__SUCCESS;
    if (rc < 0)
        return RMQ__STATUS__NO_PERMISSION;
    if (cmd_mac(a->secret_key, auth->timestamp_ms, cmd, hex) != 0) {
        snprintf(remark, remarklen, "no permission: out of memory checking the signature");
        return RMQ__STATUS__NO_PERMISSION;
    }
    if (!sig_equal(hex, auth->signature ? auth->signature : "")) {
        snprintf(remark, remarklen, "no permission: account %s: signature of %s does not match",
                 a->access_key, code);
        return RMQ__STATUS__NO_PERMISSION;
    }
    if (!resource_allows(a, cmd, remark, remarklen))
        return RMQ__STATUS__NO_PERMISSION;
    return RMQ__STATUS__SUCCESS;
}

int rmq_acl_check_ha(const rmq_acl_t *acl, const char *peer, const char *access_key,
                     const char *signature, const char *cluster, const char *broker,
                     int64_t broker_id, int64_t max_offset, int64_t ts_ms, int64_t now_ms,
                     char *why, size_t whylen)
{
    const acl_account_t *a = NULL;
    char hex[65];

    int rc = check_account(acl, peer, access_key, ts_ms, now_ms, "HA handshake", &a, why,
                           whylen);
    if (rc != 0)
        return rc > 0 ? 0 : -1;
    rmq_acl_sign_ha(a->secret_key, cluster, broker, broker_id, max_offset, ts_ms, hex);
    if (!sig_equal(hex, signature ? signature : "")) {
        snprintf(why, whylen, "no permission: account %s: HA handshake signature does not match",
                 a->access_key);
        return -1;
    }
    if (!a->admin) {
        snprintf(why, whylen, "no permission: account %s is not an admin; replication needs one",
                 a->access_key);
        return -1;
    }
    return 0;
}

/* Server hook: 1 to dispatch, 0 after answering NO_PERMISSION. */
static int acl_auth(rmq_conn_t *conn, rmq_frame_t *req, void *arg)
{
    const rmq_acl_t *acl = arg;
    char remark[512];

    if (rmq_acl_check(acl, rmq_conn_peer(conn), req->cmd, rmq_wall_ms(), remark,
                      sizeof(remark)) == RMQ__STATUS__SUCCESS)
        return 1;
    LOG_WARN_RL("refused %s from %s: %s", rmq_request_name(req->cmd->code), rmq_conn_peer(conn),
                remark);
    rmq_conn_replyf(conn, rmq_reply_to(req->cmd), RMQ__STATUS__NO_PERMISSION, "%s", remark);
    return 0;
}

void rmq_acl_attach(rmq_server_t *srv, const rmq_acl_t *acl)
{
    if (acl)
        rmq_server_set_auth(srv, acl_auth, (void *)acl);
}
