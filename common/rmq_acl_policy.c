/* rmq_acl_policy.c: the protocol-neutral access-control policy: the ACL
 * file, accounts and their permissions, the signer checks every codec
 * shares (whitelist, account, address, timestamp window, replay cache), the
 * decision on an operation's needs, and the HA handshake signature. The
 * model and the file format are described in rmq_acl_policy.h. */
#include "rmq_acl_policy.h"

#include <fnmatch.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "rmq_log.h"
#include "rmq_message.h"
#include "rmq_replay.h"

#define ACL_DEFAULT_WINDOW_MS 60000
#define ACL_DEFAULT_REPLAY_ENTRIES (1 << 20)
#define ACL_MIN_SECRET 8
#define ACL_FILE_MAX (4 << 20)

typedef struct acl_perm {
    char *name;
    int perm;
} acl_perm_t;

struct rmq_acl_account {
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
};
typedef rmq_acl_account_t acl_account_t;

struct rmq_acl {
    char *global_white;          /* NULL: none */
    int64_t window_ms;
    int64_t replay_entries;      /* replayCacheEntries */
    rmq_replay_t *replay;        /* signatures seen within the window */
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
    rmq_replay_free(acl->replay);
    free(acl);
}

size_t rmq_acl_account_count(const rmq_acl_t *acl)
{
    return acl ? acl->naccounts : 0;
}

int64_t rmq_acl_window_ms(const rmq_acl_t *acl)
{
    return acl->window_ms;
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

/* Empties a permission list (a later line of the same key replaces it). */
static void perms_clear(acl_perm_t **p, size_t *n)
{
    perms_free(*p, *n);
    *p = NULL;
    *n = 0;
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
    if (!strcmp(key, "replayCacheEntries")) {
        char *end;
        long long v = strtoll(value, &end, 10);
        if (*end || v < 16 || v > 100000000)
            return load_fail(ld, line, key, value, "must be 16..100000000");
        acl->replay_entries = v;
        return 0;
    }
    const char *dot = strrchr(key, '.');
    if (strncmp(key, "account.", 8) || !dot || dot <= key + 8)
        return load_fail(ld, line, key, value,
                         "unknown key (globalWhiteRemoteAddresses, replayWindowMs, replayCacheEntries, "
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
        perms_clear(&a->topics, &a->ntopics);
        if (perms_parse(value, &a->topics, &a->ntopics) != 0)
            return load_fail(ld, line, key, value,
                             "must be NAME=PERM;NAME=PERM with PERM DENY, PUB, SUB or PUB|SUB");
    } else if (!strcmp(field, "groupPerms")) {
        perms_clear(&a->groups, &a->ngroups);
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
    ld.acl->replay_entries = ACL_DEFAULT_REPLAY_ENTRIES;
    if (rmq_properties_parse(text, len, load_key, &ld) != 0) {
        rmq_acl_free(ld.acl);
        return NULL;
    }
    ld.acl->replay = rmq_replay_new((size_t)ld.acl->replay_entries);
    if (!ld.acl->replay) {
        snprintf(err, errlen, "%s: out of memory", name);
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

static const acl_account_t *account_find(const rmq_acl_t *acl, const char *ak)
{
    for (size_t i = 0; i < acl->naccounts; i++)
        if (!strcmp(acl->accounts[i].access_key, ak))
            return &acl->accounts[i];
    return NULL;
}

/* ---- writing back, editing, replacing ------------------------------------------ */

/* One "key=value" line, both escaped; key is "account.<ak>.<field>" when ak is set. */
static void put_line(FILE *out, const char *ak, const char *key, const char *value)
{
    if (ak) {
        fputs("account.", out);
        rmq_properties_print(ak, 1, out);
        fputc('.', out);
    }
    rmq_properties_print(key, 1, out);
    fputc('=', out);
    rmq_properties_print(value, 0, out);
    fputc('\n', out);
}

/* An account's topicPerms or groupPerms line, when it has any. */
static void put_perms(FILE *out, const char *ak, const char *key, const acl_perm_t *p, size_t n)
{
    if (n == 0)
        return;
    fprintf(out, "account.");
    rmq_properties_print(ak, 1, out);
    fprintf(out, ".%s=", key);
    for (size_t i = 0; i < n; i++) {
        rmq_properties_print(p[i].name, 0, out);
        fprintf(out, "=%s%s", perm_name(p[i].perm), i + 1 < n ? ";" : "");
    }
    fputc('\n', out);
}

/* Writes acl in the file format, leaving out account skip (NULL: none). */
static void format_skipping(const rmq_acl_t *acl, const char *skip, FILE *out)
{
    char num[24];
    if (acl->global_white)
        put_line(out, NULL, "globalWhiteRemoteAddresses", acl->global_white);
    snprintf(num, sizeof num, "%" PRId64, acl->window_ms);
    put_line(out, NULL, "replayWindowMs", num);
    snprintf(num, sizeof num, "%" PRId64, acl->replay_entries);
    put_line(out, NULL, "replayCacheEntries", num);
    for (size_t i = 0; i < acl->naccounts; i++) {
        const acl_account_t *a = &acl->accounts[i];
        if (skip && !strcmp(a->access_key, skip))
            continue;
        put_line(out, a->access_key, "secretKey", a->secret_key);
        put_line(out, a->access_key, "admin", a->admin ? "true" : "false");
        if (a->white)
            put_line(out, a->access_key, "whiteRemoteAddress", a->white);
        put_line(out, a->access_key, "defaultTopicPerm", perm_name(a->default_topic));
        put_line(out, a->access_key, "defaultGroupPerm", perm_name(a->default_group));
        put_perms(out, a->access_key, "topicPerms", a->topics, a->ntopics);
        put_perms(out, a->access_key, "groupPerms", a->groups, a->ngroups);
    }
}

char *rmq_acl_format(const rmq_acl_t *acl, size_t *len)
{
    char *text = NULL;
    FILE *out = open_memstream(&text, len);
    if (!out)
        return NULL;
    format_skipping(acl, NULL, out);
    if (fclose(out) != 0) {
        free(text);
        return NULL;
    }
    return text;
}

/* value with RocketMQ's ',' list separator turned into the file's ';'. */
static void put_list(FILE *out, const char *ak, const char *key, const char *value)
{
    char *copy = strdup(value);
    if (!copy)
        return;
    for (char *c = copy; *c; c++)
        if (*c == ',')
            *c = ';';
    put_line(out, ak, key, copy);
    free(copy);
}

/* The lines of an edit, after the policy it changes. */
static void put_edit(const rmq_acl_t *acl, const rmq_acl_edit_t *e, FILE *out)
{
    format_skipping(acl, e->kind == RMQ_ACL_EDIT_DELETE ? e->access_key : NULL, out);
    if (e->kind == RMQ_ACL_EDIT_GLOBAL_WHITE) {
        put_list(out, NULL, "globalWhiteRemoteAddresses", e->global_white ? e->global_white : "");
        return;
    }
    if (e->kind != RMQ_ACL_EDIT_PUT)
        return;
    const char *ak = e->access_key;
    if (e->secret_key)
        put_line(out, ak, "secretKey", e->secret_key);
    put_line(out, ak, "admin", e->admin ? "true" : "false");
    if (e->white)
        put_line(out, ak, "whiteRemoteAddress", e->white);
    if (e->default_topic_perm)
        put_line(out, ak, "defaultTopicPerm", e->default_topic_perm);
    if (e->default_group_perm)
        put_line(out, ak, "defaultGroupPerm", e->default_group_perm);
    if (e->topic_perms)
        put_list(out, ak, "topicPerms", e->topic_perms);
    if (e->group_perms)
        put_list(out, ak, "groupPerms", e->group_perms);
}

/* An access key an edit may name: 1..255 of [A-Za-z0-9_.-]. */
static int access_key_valid(const char *ak)
{
    size_t n = ak ? strlen(ak) : 0;
    return n > 0 && n <= 255 && strspn(ak, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

rmq_acl_t *rmq_acl_edit(const rmq_acl_t *acl, const rmq_acl_edit_t *e, char *err, size_t errlen)
{
    if (e->kind != RMQ_ACL_EDIT_GLOBAL_WHITE && !access_key_valid(e->access_key)) {
        snprintf(err, errlen, "accessKey '%.64s': must be 1 to 255 of A-Z a-z 0-9 _ . -",
                 e->access_key ? e->access_key : "");
        return NULL;
    }
    if (e->kind == RMQ_ACL_EDIT_DELETE && !account_find(acl, e->access_key)) {
        snprintf(err, errlen, "accessKey %s: no such account", e->access_key);
        return NULL;
    }
    char *text = NULL;
    size_t len = 0;
    FILE *out = open_memstream(&text, &len);
    if (!out) {
        snprintf(err, errlen, "out of memory");
        return NULL;
    }
    put_edit(acl, e, out);
    rmq_acl_t *fresh = NULL;
    if (fclose(out) != 0)
        snprintf(err, errlen, "out of memory");
    else
        fresh = rmq_acl_parse(text, len, "the edited policy", err, errlen);
    free(text);
    return fresh;
}

void rmq_acl_replace(rmq_acl_t *acl, rmq_acl_t *fresh)
{
    rmq_acl_t old = *acl;
    *acl = *fresh;
    acl->replay = old.replay;
    old.replay = fresh->replay;
    *fresh = old;
    rmq_acl_free(fresh);
}

const char *rmq_acl_global_white(const rmq_acl_t *acl)
{
    return acl->global_white;
}

const rmq_acl_account_t *rmq_acl_account_at(const rmq_acl_t *acl, size_t i)
{
    return i < acl->naccounts ? &acl->accounts[i] : NULL;
}

void rmq_acl_account_view(const rmq_acl_account_t *a, rmq_acl_account_view_t *v)
{
    *v = (rmq_acl_account_view_t){
        .access_key = a->access_key,
        .secret_key = a->secret_key,
        .white = a->white,
        .admin = a->admin,
        .default_topic_perm = perm_name(a->default_topic),
        .default_group_perm = perm_name(a->default_group),
        .ntopics = a->ntopics,
        .ngroups = a->ngroups,
    };
}

const char *rmq_acl_account_perm(const rmq_acl_account_t *a, int group, size_t j, const char **perm)
{
    const acl_perm_t *p = group ? a->groups : a->topics;
    size_t n = group ? a->ngroups : a->ntopics;
    if (j >= n)
        return NULL;
    *perm = perm_name(p[j].perm);
    return p[j].name;
}

/* ---- signatures -------------------------------------------------------------- */

void rmq_acl_hex(const uint8_t *in, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[in[i] >> 4];
        out[2 * i + 1] = digits[in[i] & 15];
    }
    out[2 * n] = '\0';
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
    rmq_acl_hex(mac, maclen, hex);
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

static int perm_of(const acl_perm_t *p, size_t n, int def, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (!strcmp(p[i].name, name))
            return p[i].perm;
    return def;
}

int rmq_acl_sig_equal(const char *a, const char *b)
{
    size_t n = strlen(a);
    return n > 0 && n == strlen(b) && CRYPTO_memcmp(a, b, n) == 0;
}

/* Checks want on topic; retry and DLQ topics are checked as their group. */
static int topic_allows(const acl_account_t *a, const char *topic, int want, const char *op,
                        char *remark, size_t remarklen)
{
    static const size_t retry_len = sizeof(RMQ_RETRY_PREFIX) - 1, dlq_len = sizeof(RMQ_DLQ_PREFIX) - 1;
    int perm;
    int retry = !strncmp(topic, RMQ_RETRY_PREFIX, retry_len);
    if (retry || !strncmp(topic, RMQ_DLQ_PREFIX, dlq_len)) {
        const char *group = topic + (retry ? retry_len : dlq_len);
        perm = perm_of(a->groups, a->ngroups, a->default_group, group);
        if (perm & RMQ_ACL_PERM_SUB)
            return 1;
        snprintf(remark, remarklen,
                 "no permission: account %s has %s on group %s (topic %s), %s needs SUB",
                 a->access_key, perm_name(perm), group, topic, op);
        return 0;
    }
    perm = perm_of(a->topics, a->ntopics, a->default_topic, topic);
    if (perm & want)
        return 1;
    snprintf(remark, remarklen, "no permission: account %s has %s on topic %s, %s needs %s",
             a->access_key, perm_name(perm), topic, op, perm_name(want));
    return 0;
}

/* Checks want on group: SUB to consume as it, PUB to be its producer. */
static int group_allows(const acl_account_t *a, const char *group, int want, const char *op,
                        char *remark, size_t remarklen)
{
    int perm = perm_of(a->groups, a->ngroups, a->default_group, group);
    if (perm & want)
        return 1;
    snprintf(remark, remarklen, "no permission: account %s has %s on group %s, %s needs %s",
             a->access_key, perm_name(perm), group, op, perm_name(want));
    return 0;
}

int rmq_acl_allows(const rmq_acl_account_t *a, const rmq_acl_need_t *needs, size_t n,
                   const char *op, char *remark, size_t remarklen)
{
    if (a->admin)
        return 1;
    for (size_t i = 0; i < n; i++) {
        const char *name = needs[i].name ? needs[i].name : "";
        int ok = 0;
        switch (needs[i].resource) {
        case RMQ_ACL_ADMIN:
            snprintf(remark, remarklen, "no permission: %s is an admin operation and account "
                     "%s is not an admin", op, a->access_key);
            break;
        case RMQ_ACL_TOPIC:
            ok = topic_allows(a, name, needs[i].perm, op, remark, remarklen);
            break;
        case RMQ_ACL_GROUP:
            ok = group_allows(a, name, needs[i].perm == RMQ_ACL_PERM_PUB ? RMQ_ACL_PERM_PUB : RMQ_ACL_PERM_SUB,
                              op, remark, remarklen);
            break;
        }
        if (!ok)
            return 0;
    }
    return 1;
}

const char *rmq_acl_account_key(const rmq_acl_account_t *a)
{
    return a->access_key;
}

const char *rmq_acl_account_secret(const rmq_acl_account_t *a)
{
    return a->secret_key;
}

int rmq_acl_replay_check(rmq_acl_t *acl, const rmq_acl_account_t *a, const uint8_t *mac,
                         size_t maclen, int64_t ts_ms, int64_t now_ms, const char *op,
                         char *remark, size_t remarklen)
{
    if (maclen < RMQ_REPLAY_KEY) {
        snprintf(remark, remarklen, "no permission: account %s: %s signature too short to "
                 "track", a->access_key, op);
        return -1;
    }
    switch (rmq_replay_check(acl->replay, mac, ts_ms, now_ms, acl->window_ms)) {
    case RMQ_REPLAY_FRESH:
        return 0;
    case RMQ_REPLAY_SEEN:
        snprintf(remark, remarklen, "no permission: account %s: %s replayed (the same "
                 "signature was accepted within the replay window of %" PRId64 " ms)",
                 a->access_key, op, acl->window_ms);
        return -1;
    case RMQ_REPLAY_TOO_OLD:
        snprintf(remark, remarklen, "no permission: account %s: %s timestamp %" PRId64
                 " is not newer than %" PRId64 ", the newest the replay cache (%zu entries) "
                 "has dropped; sign it again", a->access_key, op, ts_ms,
                 rmq_replay_floor(acl->replay), rmq_replay_cap(acl->replay));
        return -1;
    case RMQ_REPLAY_NOMEM:
        break;
    }
    snprintf(remark, remarklen, "no permission: out of memory recording the signature of %s",
             op);
    return -1;
}

/* Whitelist, account, address, window; see rmq_acl_policy.h. */
int rmq_acl_authenticate(const rmq_acl_t *acl, const char *peer, const char *ak, int64_t ts,
                         int64_t now_ms, const char *what, const rmq_acl_account_t **out,
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

int rmq_acl_account_of(const rmq_acl_t *acl, const char *peer, const char *access_key,
                       const rmq_acl_account_t **account)
{
    char ip[64];

    peer_ip(peer, ip, sizeof(ip));
    if (addr_match(acl->global_white, ip))
        return 1;
    *account = access_key && access_key[0] ? account_find(acl, access_key) : NULL;
    return *account ? 0 : -1;
}

int rmq_acl_check_ha(const rmq_acl_t *acl, const char *peer, const char *access_key,
                     const char *signature, const char *cluster, const char *broker,
                     int64_t broker_id, int64_t max_offset, int64_t ts_ms, int64_t now_ms,
                     char *why, size_t whylen)
{
    const acl_account_t *a = NULL;
    char hex[65];

    int rc = rmq_acl_authenticate(acl, peer, access_key, ts_ms, now_ms, "HA handshake", &a, why,
                           whylen);
    if (rc != 0)
        return rc > 0 ? 0 : -1;
    rmq_acl_sign_ha(a->secret_key, cluster, broker, broker_id, max_offset, ts_ms, hex);
    if (!rmq_acl_sig_equal(hex, signature ? signature : "")) {
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
