/* rmq_tls_config.h: the TLS settings every daemon shares (tlsMode,
 * tlsCertPath, tlsKeyPath, tlsCaPath, tlsVerifyClient), their config-table
 * entries, and the SSL contexts built from them: one server context for the
 * client port and the HA port, one client context for the daemon's own
 * outgoing connections (registration, metadata sync, HA slave link).
 *
 * A daemon with tlsMode permissive or enforcing speaks TLS on every
 * outgoing connection too; so in a rolling upgrade switch every server to
 * permissive before any of them dials with TLS (see deploy/README). */
#ifndef RMQ_TLS_CONFIG_H
#define RMQ_TLS_CONFIG_H

#include <stddef.h>

#include <event2/event.h>
#include <openssl/ssl.h>

#include "rmq_config.h"
#include "rmq_rpc.h"

typedef struct rmq_tls_config {
    int mode;              /* tlsMode: rmq_tls_mode_t */
    char *cert_path;       /* tlsCertPath: PEM chain, server (and own client) identity */
    char *key_path;        /* tlsKeyPath: PEM private key */
    char *ca_path;         /* tlsCaPath: PEM CA bundle verifying peers; empty: peers not verified */
    int verify_client;     /* tlsVerifyClient: mutual TLS on the listening ports */
} rmq_tls_config_t;

/* "disabled", "permissive", "enforcing", NULL (index = rmq_tls_mode_t). */
extern const char *const rmq_tls_mode_names[];

/* Config-table entries for a struct type with an rmq_tls_config_t member. */
#define RMQ_TLS_CFG_ENTRIES(type, member)                                                       \
    {"tlsMode", RMQ_CFG_ENUM, offsetof(type, member.mode), "disabled", 0, 0,                    \
     rmq_tls_mode_names,                                                                        \
     "disabled, permissive (TLS and plaintext on one port) or enforcing (TLS only); "           \
     "outgoing connections use TLS unless disabled"},                                           \
    {"tlsCertPath", RMQ_CFG_STR, offsetof(type, member.cert_path), "", 0, 4096, NULL,           \
     "PEM certificate chain of this daemon"},                                                   \
    {"tlsKeyPath", RMQ_CFG_STR, offsetof(type, member.key_path), "", 0, 4096, NULL,             \
     "PEM private key of tlsCertPath"},                                                         \
    {"tlsCaPath", RMQ_CFG_STR, offsetof(type, member.ca_path), "", 0, 4096, NULL,               \
     "PEM CA bundle that verifies peers (servers we dial; clients with tlsVerifyClient)"},      \
    {"tlsVerifyClient", RMQ_CFG_BOOL, offsetof(type, member.verify_client), "false", 0, 0,      \
     NULL, "require and verify client certificates against tlsCaPath (mutual TLS)"}

/* Builds the listening side's context; *out is NULL when tlsMode is
 * disabled. On error returns RMQ_EINVAL (bad combination) or RMQ_ETLS
 * (OpenSSL refused a file) with one line naming the key, its value and
 * OpenSSL's reason in err. Owner of *out: caller (SSL_CTX_free). Any thread. */
rmq_err_t rmq_tls_config_server_ctx(const rmq_tls_config_t *c, SSL_CTX **out, char *err,
                                    size_t errlen);

/* Builds the context for the daemon's own outgoing connections: verifies
 * servers against tlsCaPath (when set) and presents tlsCertPath/tlsKeyPath
 * (when set) so mutual TLS peers accept it. *out is NULL when disabled.
 * Errors as above. Owner: caller. */
rmq_err_t rmq_tls_config_client_ctx(const rmq_tls_config_t *c, SSL_CTX **out, char *err,
                                    size_t errlen);

/* First-byte sniffing for listeners outside rmq_server (the HA port): waits
 * (up to timeout_ms) for the peer's first byte without consuming it and
 * calls fn with is_tls 1 (a TLS handshake record, 0x16), 0 (anything else),
 * or -1 (peer closed, error or timeout; fd is then closed by the sniffer).
 * The sniffer frees itself before calling fn. Loop thread of base. */
typedef void (*rmq_tls_sniff_fn)(evutil_socket_t fd, int is_tls, void *arg);
rmq_err_t rmq_tls_sniff(struct event_base *base, evutil_socket_t fd, int timeout_ms,
                        rmq_tls_sniff_fn fn, void *arg);

/* A bufferevent for an accepted socket: TLS (accepting) if tls, else plain.
 * Options BEV_OPT_CLOSE_ON_FREE. NULL on failure (fd left open). */
struct bufferevent *rmq_tls_bev_accept(struct event_base *base, evutil_socket_t fd,
                                       SSL_CTX *ctx, int tls);
/* A bufferevent for an outgoing connection (fd -1, connect later): TLS
 * (connecting) if ctx is not NULL, else plain. NULL on failure. */
struct bufferevent *rmq_tls_bev_connect(struct event_base *base, SSL_CTX *ctx);

/* Writes OpenSSL's reason for bev's last failure into buf ("" if none);
 * returns buf. */
const char *rmq_tls_bev_error(struct bufferevent *bev, char *buf, size_t len);

#endif
