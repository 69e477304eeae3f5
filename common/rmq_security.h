/* rmq_security.h: what a daemon needs for TLS and access control, built
 * once from its tls* and acl* keys: the server and client SSL contexts, the
 * loaded ACL and its own signing credentials, plus helpers filling server
 * and client options from them. */
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

/* Client library and tools: TLS and signing from the environment.
 *   RMQ_TLS=1            TLS on every connection (name servers and brokers)
 *   RMQ_TLS_CA=FILE      verify servers against this CA (else encrypted, not verified)
 *   RMQ_TLS_CERT=FILE    client certificate (servers with tlsVerifyClient=true)
 *   RMQ_TLS_KEY=FILE     its private key
 *   RMQ_ACCESS_KEY=AK    sign every request as this account (access control)
 *   RMQ_SECRET_KEY=SK    its secret key
 * Read once per process (the context and credentials live until exit);
 * sets opts->ssl_ctx and the signer. On a bad variable returns non-OK with
 * one line naming it and the reason in err (every call). Any thread. */
rmq_err_t rmq_security_from_env(rmq_client_opts_t *opts, char *err, size_t errlen);

#endif
