/* rmq_security.h: what a daemon needs for TLS and access control, built
 * once from its tls* and acl* keys: the server and client SSL contexts, the
 * loaded ACL and its own signing credentials, plus helpers filling server
 * and client options from them. Clients (librmq, the tools) get the same
 * object, client half only, from options, a --client-config file or the
 * environment, all built by one function. */
#ifndef RMQ_SECURITY_H
#define RMQ_SECURITY_H

#include <stddef.h>

#include "rmq_acl.h"
#include "rmq_rpc.h"
#include "rmq_tls_config.h"

typedef struct rmq_security {
    int tls_mode;                  /* rmq_tls_mode_t */
    SSL_CTX *server_ctx;           /* client port and HA port; NULL: TLS disabled */
    SSL_CTX *client_ctx;           /* own outgoing connections; NULL: plaintext */
    rmq_acl_t *acl;                /* NULL: access control off */
    int signs;                     /* credentials set: own requests are signed */
    rmq_acl_credentials_t cred;    /* aclAccessKey / aclSecretKey */
} rmq_security_t;

/* Builds everything (acl may be NULL: no access-control keys). On error
 * returns non-OK with one line naming the key, the value and the reason in
 * err; sec is then empty. Owner: sec (rmq_security_deinit). */
rmq_err_t rmq_security_init(rmq_security_t *sec, const rmq_tls_config_t *tls,
                            const rmq_acl_config_t *acl, char *err, size_t errlen);
void rmq_security_deinit(rmq_security_t *sec);

/* Startup validation for mains: init then deinit. */
rmq_err_t rmq_security_check(const rmq_tls_config_t *tls, const rmq_acl_config_t *acl,
                             char *err, size_t errlen);

/* Sets opts->ssl_ctx and tls_mode. */
void rmq_security_server_opts(const rmq_security_t *sec, rmq_server_opts_t *opts);
/* Sets opts->ssl_ctx and the signer (sec must outlive the clients). */
void rmq_security_client_opts(rmq_security_t *sec, rmq_client_opts_t *opts);

/* ---- clients: librmq, mqadmin, mqbench ------------------------------------ */

/* What a client is told about TLS and signing, from the library's
 * rmq_security_opts_t, a --client-config file or the environment. Strings
 * may be NULL or "" (unset); tls.verify_client is not used. */
typedef struct rmq_client_sec_config {
    rmq_tls_config_t tls;          /* mode: anything but DISABLED dials with TLS */
    char *access_key;              /* sign every request as this account */
    char *secret_key;
} rmq_client_sec_config_t;

/* What a source calls each setting, so errors name what the user wrote. */
typedef struct rmq_client_sec_names {
    const char *tls_mode, *ca_path, *cert_path, *key_path, *access_key, *secret_key;
} rmq_client_sec_names_t;

/* The file keys: tlsMode, tlsCaPath, tlsCertPath, tlsKeyPath, accessKey, secretKey. */
extern const rmq_client_sec_names_t rmq_client_sec_file_names;

/* Loads a client properties file over the defaults into cfg (zeroed by
 * the caller): the servers' tls* keys (tlsVerifyClient is accepted and
 * unused) and accessKey / secretKey (the broker's aclAccessKey /
 * aclSecretKey are taken as aliases). Unknown keys are logged and skipped.
 * On error "FILE:LINE: key=value: rule" or the reason the file cannot be
 * read in err. Owner of the strings: cfg (rmq_client_sec_config_deinit,
 * also after an error). Any thread. */
rmq_err_t rmq_client_sec_config_load(rmq_client_sec_config_t *cfg, const char *path, char *err,
                                     size_t errlen);
void rmq_client_sec_config_deinit(rmq_client_sec_config_t *cfg);

/* Builds a client's own security from cfg: client_ctx (verifying servers
 * against ca_path when set, presenting cert_path/key_path when set) unless
 * tls.mode is DISABLED (paths are then ignored), and credentials when a
 * key is set; server_ctx and acl stay NULL. On error (unreadable or bad
 * file, key without certificate, access key without secret) returns
 * RMQ_EINVAL or RMQ_ETLS with one line in err naming the setting as names
 * calls it, its value and the reason; sec is then empty. Owner: sec
 * (rmq_security_deinit; rmq_security_client_opts hands it to clients,
 * which it must outlive). Any thread. */
rmq_err_t rmq_security_init_client(rmq_security_t *sec, const rmq_client_sec_config_t *cfg,
                                   const rmq_client_sec_names_t *names, char *err, size_t errlen);

/* TLS and signing from the environment, for clients given nothing else:
 *   RMQ_TLS=1            TLS on every connection (name servers and brokers)
 *   RMQ_TLS_CA=FILE      verify servers against this CA (else encrypted, not verified)
 *   RMQ_TLS_CERT=FILE    client certificate (servers with tlsVerifyClient=true)
 *   RMQ_TLS_KEY=FILE     its private key
 *   RMQ_ACCESS_KEY=AK    sign every request as this account (access control)
 *   RMQ_SECRET_KEY=SK    its secret key
 * Built once per process by rmq_security_init_client (the context and
 * credentials live until exit); sets opts->ssl_ctx and the signer. On a bad
 * variable returns non-OK with one line naming it and the reason in err
 * (every call). Any thread. */
rmq_err_t rmq_security_from_env(rmq_client_opts_t *opts, char *err, size_t errlen);

#endif
