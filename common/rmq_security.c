/* rmq_security.c: a daemon's TLS contexts, ACL and credentials, built from
 * its configuration in one place so every listener and client agrees; and
 * a client's context and credentials, built by one function whether they
 * come from options, a client properties file or the environment. */
#include "rmq_security.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

rmq_err_t rmq_security_init(rmq_security_t *sec, const rmq_tls_config_t *tls,
                            const rmq_acl_config_t *acl, char *err, size_t errlen)
{
    rmq_err_t rc;

    memset(sec, 0, sizeof(*sec));
    sec->tls_mode = tls->mode;
    rc = rmq_tls_config_server_ctx(tls, &sec->server_ctx, err, errlen);
    if (rc == RMQ_OK)
        rc = rmq_tls_config_client_ctx(tls, &sec->client_ctx, err, errlen);
    if (rc == RMQ_OK && acl)
        rc = rmq_acl_config_load(acl, &sec->acl, err, errlen);
    if (rc == RMQ_OK && acl && acl->access_key && acl->access_key[0]) {
        if (!acl->secret_key || !acl->secret_key[0]) {
            snprintf(err, errlen, "aclSecretKey=: required with aclAccessKey=%s",
                     acl->access_key);
            rc = RMQ_EINVAL;
        } else {
            snprintf(sec->cred.access_key, sizeof(sec->cred.access_key), "%s", acl->access_key);
            snprintf(sec->cred.secret_key, sizeof(sec->cred.secret_key), "%s", acl->secret_key);
            sec->signs = 1;
        }
    }
    if (rc != RMQ_OK)
        rmq_security_deinit(sec);
    return rc;
}

void rmq_security_deinit(rmq_security_t *sec)
{
    if (sec->server_ctx)
        SSL_CTX_free(sec->server_ctx);
    if (sec->client_ctx)
        SSL_CTX_free(sec->client_ctx);
    rmq_acl_free(sec->acl);
    memset(sec, 0, sizeof(*sec));
}

rmq_err_t rmq_security_check(const rmq_tls_config_t *tls, const rmq_acl_config_t *acl,
                             char *err, size_t errlen)
{
    rmq_security_t sec;
    rmq_err_t rc = rmq_security_init(&sec, tls, acl, err, errlen);
    if (rc == RMQ_OK)
        rmq_security_deinit(&sec);
    return rc;
}

void rmq_security_server_opts(const rmq_security_t *sec, rmq_server_opts_t *opts)
{
    opts->ssl_ctx = sec->server_ctx;
    opts->tls_mode = sec->server_ctx ? (rmq_tls_mode_t)sec->tls_mode : RMQ_TLS_DISABLED;
}

void rmq_security_client_opts(rmq_security_t *sec, rmq_client_opts_t *opts)
{
    opts->ssl_ctx = sec->client_ctx;
    if (sec->signs) {
        opts->sign = rmq_acl_signer;
        opts->sign_arg = &sec->cred;
    }
}

/* ---- clients (librmq, tools) ------------------------------------------------ */

static const rmq_cfg_entry_t client_entries[] = {
    RMQ_TLS_CFG_ENTRIES(rmq_client_sec_config_t, tls),
    {"accessKey", RMQ_CFG_STR, offsetof(rmq_client_sec_config_t, access_key), "", 0, 255, NULL,
     "account every request is signed as (access control)"},
    {"secretKey", RMQ_CFG_STR, offsetof(rmq_client_sec_config_t, secret_key), "", 0, 255, NULL,
     "secret key of accessKey"},
};

static const char *const client_aliases[] = {"aclAccessKey", "accessKey",
                                             "aclSecretKey", "secretKey", NULL};

static const rmq_cfg_table_t client_table = {
    client_entries, sizeof(client_entries) / sizeof(client_entries[0]), client_aliases,
};

const rmq_client_sec_names_t rmq_client_sec_file_names = {
    "tlsMode", "tlsCaPath", "tlsCertPath", "tlsKeyPath", "accessKey", "secretKey",
};

rmq_err_t rmq_client_sec_config_load(rmq_client_sec_config_t *cfg, const char *path, char *err,
                                     size_t errlen)
{
    rmq_err_t rc = rmq_config_defaults(&client_table, cfg);

    if (rc == RMQ_OK)
        rc = rmq_config_load(&client_table, cfg, path, err, errlen);
    else
        snprintf(err, errlen, "%s: cannot set the defaults", path);
    return rc;
}

void rmq_client_sec_config_deinit(rmq_client_sec_config_t *cfg)
{
    rmq_config_deinit(&client_table, cfg);
}

static const char *str_or_empty(const char *s)
{
    return s ? s : "";
}

/* Copies msg into out (len bytes) with the tls* key names that
 * rmq_tls_config's messages use replaced by what names calls them. */
static void rename_keys(const char *msg, const rmq_client_sec_names_t *names, char *out,
                        size_t len)
{
    const char *from[] = {"tlsMode", "tlsCaPath", "tlsCertPath", "tlsKeyPath"};
    const char *to[] = {names->tls_mode, names->ca_path, names->cert_path, names->key_path};
    size_t n = 0;

    while (*msg && n + 1 < len) {
        size_t k = 0;
        while (k < 4 && strncmp(msg, from[k], strlen(from[k])) != 0)
            k++;
        const char *piece = k < 4 ? to[k] : msg;
        size_t plen = k < 4 ? strlen(to[k]) : 1;
        if (plen > len - 1 - n)
            plen = len - 1 - n;
        memcpy(out + n, piece, plen);
        n += plen;
        msg += k < 4 ? strlen(from[k]) : 1;
    }
    out[n] = '\0';
}

/* The client context from cfg's tls settings (NULL when disabled). */
static rmq_err_t client_tls(rmq_security_t *sec, const rmq_client_sec_config_t *cfg,
                            const rmq_client_sec_names_t *names, char *err, size_t errlen)
{
    rmq_tls_config_t tls = {
        .mode = cfg->tls.mode,
        .cert_path = (char *)str_or_empty(cfg->tls.cert_path),
        .key_path = (char *)str_or_empty(cfg->tls.key_path),
        .ca_path = (char *)str_or_empty(cfg->tls.ca_path),
    };
    char why[512];
    rmq_err_t rc = rmq_tls_config_client_ctx(&tls, &sec->client_ctx, why, sizeof(why));

    if (rc != RMQ_OK)
        rename_keys(why, names, err, errlen);
    return rc;
}

/* The signing credentials from cfg's keys (none when both are unset). */
static rmq_err_t client_cred(rmq_security_t *sec, const rmq_client_sec_config_t *cfg,
                             const rmq_client_sec_names_t *names, char *err, size_t errlen)
{
    const char *ak = str_or_empty(cfg->access_key);
    const char *sk = str_or_empty(cfg->secret_key);

    if (!ak[0] && !sk[0])
        return RMQ_OK;
    if (!ak[0] || !sk[0]) {
        snprintf(err, errlen, "%s is set but %s is not", ak[0] ? names->access_key : names->secret_key,
                 ak[0] ? names->secret_key : names->access_key);
        return RMQ_EINVAL;
    }
    if (strlen(ak) >= sizeof(sec->cred.access_key) || strlen(sk) >= sizeof(sec->cred.secret_key)) {
        snprintf(err, errlen, "%s: longer than %zu bytes",
                 strlen(ak) >= sizeof(sec->cred.access_key) ? names->access_key : names->secret_key,
                 sizeof(sec->cred.access_key) - 1);
        return RMQ_EINVAL;
    }
    snprintf(sec->cred.access_key, sizeof(sec->cred.access_key), "%s", ak);
    snprintf(sec->cred.secret_key, sizeof(sec->cred.secret_key), "%s", sk);
    sec->signs = 1;
    return RMQ_OK;
}

rmq_err_t rmq_security_init_client(rmq_security_t *sec, const rmq_client_sec_config_t *cfg,
                                   const rmq_client_sec_names_t *names, char *err, size_t errlen)
{
    rmq_err_t rc;

    memset(sec, 0, sizeof(*sec));
    sec->tls_mode = cfg->tls.mode;
    rc = client_tls(sec, cfg, names, err, errlen);
    if (rc == RMQ_OK)
        rc = client_cred(sec, cfg, names, err, errlen);
    if (rc != RMQ_OK)
        rmq_security_deinit(sec);
    return rc;
}

/* ---- environment ------------------------------------------------------------ */

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static rmq_err_t env_rc;
static char env_err[512];
static rmq_security_t env_sec;

static const rmq_client_sec_names_t env_names = {
    "RMQ_TLS", "RMQ_TLS_CA", "RMQ_TLS_CERT", "RMQ_TLS_KEY", "RMQ_ACCESS_KEY", "RMQ_SECRET_KEY",
};

static char *env_str(const char *name)
{
    char *v = getenv(name);
    return v ? v : "";
}

/* Builds the process-wide client context and credentials, once. */
static void env_load(void)
{
    const char *tls = env_str("RMQ_TLS");
    rmq_client_sec_config_t cfg = {
        .tls = {
            .mode = tls[0] && strcmp(tls, "0") && strcmp(tls, "false") ? RMQ_TLS_ENFORCING
                                                                        : RMQ_TLS_DISABLED,
            .cert_path = env_str("RMQ_TLS_CERT"),
            .key_path = env_str("RMQ_TLS_KEY"),
            .ca_path = env_str("RMQ_TLS_CA"),
        },
        .access_key = env_str("RMQ_ACCESS_KEY"),
        .secret_key = env_str("RMQ_SECRET_KEY"),
    };

    env_rc = rmq_security_init_client(&env_sec, &cfg, &env_names, env_err, sizeof(env_err));
}

rmq_err_t rmq_security_from_env(rmq_client_opts_t *opts, char *err, size_t errlen)
{
    pthread_once(&env_once, env_load);
    if (env_rc != RMQ_OK) {
        snprintf(err, errlen, "%s", env_err);
        return env_rc;
    }
    rmq_security_client_opts(&env_sec, opts);
    return RMQ_OK;
}
