/* rmq_security.c: a daemon's TLS contexts, ACL and credentials, built from
 * its configuration in one place so every listener and client agrees. */
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

/* ---- environment (client library, tools) ------------------------------------ */

static pthread_once_t env_once = PTHREAD_ONCE_INIT;
static rmq_err_t env_rc;
static char env_err[512];
static SSL_CTX *env_ctx;
static int env_signs;
static rmq_acl_credentials_t env_cred;

static const char *env_str(const char *name)
{
    const char *v = getenv(name);
    return v && v[0] ? v : "";
}

/* Builds the process-wide client context and credentials, once. */
static void env_load(void)
{
    const char *tls = env_str("RMQ_TLS");
    const char *ak = env_str("RMQ_ACCESS_KEY");
    const char *sk = env_str("RMQ_SECRET_KEY");

    if (tls[0] && strcmp(tls, "0") && strcmp(tls, "false")) {
        rmq_tls_config_t c = {
            .mode = RMQ_TLS_ENFORCING,
            .cert_path = (char *)env_str("RMQ_TLS_CERT"),
            .key_path = (char *)env_str("RMQ_TLS_KEY"),
            .ca_path = (char *)env_str("RMQ_TLS_CA"),
        };
        char why[400];
        env_rc = rmq_tls_config_client_ctx(&c, &env_ctx, why, sizeof(why));
        if (env_rc != RMQ_OK) {
            snprintf(env_err, sizeof(env_err), "RMQ_TLS_CA/RMQ_TLS_CERT/RMQ_TLS_KEY "
                     "(named as tlsCaPath/tlsCertPath/tlsKeyPath): %.400s", why);
            return;
        }
    }
    if (ak[0] || sk[0]) {
        if (!ak[0] || !sk[0]) {
            snprintf(env_err, sizeof(env_err), "%s is set but %s is not",
                     ak[0] ? "RMQ_ACCESS_KEY" : "RMQ_SECRET_KEY",
                     ak[0] ? "RMQ_SECRET_KEY" : "RMQ_ACCESS_KEY");
            env_rc = RMQ_EINVAL;
            return;
        }
        snprintf(env_cred.access_key, sizeof(env_cred.access_key), "%s", ak);
        snprintf(env_cred.secret_key, sizeof(env_cred.secret_key), "%s", sk);
        env_signs = 1;
    }
}

rmq_err_t rmq_security_from_env(rmq_client_opts_t *opts, char *err, size_t errlen)
{
    pthread_once(&env_once, env_load);
    if (env_rc != RMQ_OK) {
        snprintf(err, errlen, "%s", env_err);
        return env_rc;
    }
    opts->ssl_ctx = env_ctx;
    if (env_signs) {
        opts->sign = rmq_acl_signer;
        opts->sign_arg = &env_cred;
    }
    return RMQ_OK;
}
