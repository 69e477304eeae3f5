/* rmq_tls_config.c: TLS settings shared by the daemons: SSL contexts built
 * from the tls* keys with errors that name the key, the value and OpenSSL's
 * reason; first-byte sniffing and bufferevent helpers for the HA port. */
#include "rmq_tls_config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/socket.h>

#include <event2/bufferevent.h>
#include <event2/bufferevent_ssl.h>
#include <openssl/err.h>

const char *const rmq_tls_mode_names[] = {"disabled", "permissive", "enforcing", NULL};

/* "key=value: what: <OpenSSL reason>"; clears the error queue. */
static rmq_err_t tls_fail(char *err, size_t errlen, const char *key, const char *value,
                          const char *what)
{
    char reason[256] = "unknown OpenSSL error";
    unsigned long e = ERR_peek_last_error();

    if (e != 0)
        ERR_error_string_n(e, reason, sizeof(reason));
    ERR_clear_error();
    snprintf(err, errlen, "%s=%s: %s: %s", key, value, what, reason);
    return RMQ_ETLS;
}

/* Loads tlsCertPath and tlsKeyPath into ctx (both or neither when !need). */
static rmq_err_t load_identity(SSL_CTX *ctx, const rmq_tls_config_t *c, int need, char *err,
                               size_t errlen)
{
    const char *mode = rmq_tls_mode_names[c->mode];

    if (!c->cert_path[0] && !c->key_path[0] && !need)
        return RMQ_OK;
    if (!c->cert_path[0]) {
        snprintf(err, errlen, "tlsCertPath=: required with tlsMode=%s%s", mode,
                 need ? "" : " when tlsKeyPath is set");
        return RMQ_EINVAL;
    }
    if (!c->key_path[0]) {
        snprintf(err, errlen, "tlsKeyPath=: required with tlsMode=%s%s", mode,
                 need ? "" : " when tlsCertPath is set");
        return RMQ_EINVAL;
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, c->cert_path) != 1)
        return tls_fail(err, errlen, "tlsCertPath", c->cert_path, "cannot load the certificate");
    if (SSL_CTX_use_PrivateKey_file(ctx, c->key_path, SSL_FILETYPE_PEM) != 1)
        return tls_fail(err, errlen, "tlsKeyPath", c->key_path, "cannot load the private key");
    if (SSL_CTX_check_private_key(ctx) != 1)
        return tls_fail(err, errlen, "tlsKeyPath", c->key_path,
                        "the key does not match tlsCertPath");
    return RMQ_OK;
}

static rmq_err_t load_ca(SSL_CTX *ctx, const rmq_tls_config_t *c, char *err, size_t errlen)
{
    if (SSL_CTX_load_verify_locations(ctx, c->ca_path, NULL) != 1)
        return tls_fail(err, errlen, "tlsCaPath", c->ca_path, "cannot load the CA bundle");
    return RMQ_OK;
}

/* A fresh context with TLS 1.2 as the floor. */
static SSL_CTX *ctx_new(const SSL_METHOD *method, char *err, size_t errlen)
{
    SSL_CTX *ctx = SSL_CTX_new(method);

    if (ctx == NULL) {
        tls_fail(err, errlen, "tlsMode", "", "cannot create a TLS context");
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    return ctx;
}

rmq_err_t rmq_tls_config_server_ctx(const rmq_tls_config_t *c, SSL_CTX **out, char *err,
                                    size_t errlen)
{
    rmq_err_t rc;

    *out = NULL;
    if (c->mode == RMQ_TLS_DISABLED)
        return RMQ_OK;
    if (c->verify_client && !c->ca_path[0]) {
        snprintf(err, errlen, "tlsCaPath=: required with tlsVerifyClient=true");
        return RMQ_EINVAL;
    }
    SSL_CTX *ctx = ctx_new(TLS_server_method(), err, errlen);
    if (ctx == NULL)
        return RMQ_ETLS;
    rc = load_identity(ctx, c, 1, err, errlen);
    if (rc == RMQ_OK && c->ca_path[0])
        rc = load_ca(ctx, c, err, errlen);
    if (rc != RMQ_OK) {
        SSL_CTX_free(ctx);
        return rc;
    }
    if (c->verify_client)
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    rmq_tls_select_h2(ctx);
    *out = ctx;
    return RMQ_OK;
}

rmq_err_t rmq_tls_config_client_ctx(const rmq_tls_config_t *c, SSL_CTX **out, char *err,
                                    size_t errlen)
{
    rmq_err_t rc = RMQ_OK;

    *out = NULL;
    if (c->mode == RMQ_TLS_DISABLED)
        return RMQ_OK;
    SSL_CTX *ctx = ctx_new(TLS_client_method(), err, errlen);
    if (ctx == NULL)
        return RMQ_ETLS;
    if (c->ca_path[0]) {
        rc = load_ca(ctx, c, err, errlen);
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    }
    if (rc == RMQ_OK)
        rc = load_identity(ctx, c, 0, err, errlen);
    if (rc != RMQ_OK) {
        SSL_CTX_free(ctx);
        return rc;
    }
    *out = ctx;
    return RMQ_OK;
}

/* ---- sniffing --------------------------------------------------------------- */

typedef struct sniff {
    struct event *ev;
    rmq_tls_sniff_fn fn;
    void *arg;
} sniff_t;

static void sniff_done(sniff_t *sn, evutil_socket_t fd, int result)
{
    rmq_tls_sniff_fn fn = sn->fn;
    void *arg = sn->arg;

    event_free(sn->ev);
    free(sn);
    if (result < 0)
        evutil_closesocket(fd);
    fn(fd, result, arg);
}

static void sniff_cb(evutil_socket_t fd, short what, void *arg)
{
    sniff_t *sn = arg;
    unsigned char first;

    if (what & EV_TIMEOUT) {
        sniff_done(sn, fd, -1);
        return;
    }
    ssize_t n = recv(fd, &first, 1, MSG_PEEK);
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
        return;
    sniff_done(sn, fd, n <= 0 ? -1 : first == 0x16);
}

rmq_err_t rmq_tls_sniff(struct event_base *base, evutil_socket_t fd, int timeout_ms,
                        rmq_tls_sniff_fn fn, void *arg)
{
    sniff_t *sn = calloc(1, sizeof(*sn));
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};

    if (sn == NULL)
        return RMQ_ENOMEM;
    sn->fn = fn;
    sn->arg = arg;
    sn->ev = event_new(base, fd, EV_READ | EV_PERSIST, sniff_cb, sn);
    if (sn->ev == NULL || event_add(sn->ev, &tv) != 0) {
        if (sn->ev)
            event_free(sn->ev);
        free(sn);
        return RMQ_ENOMEM;
    }
    return RMQ_OK;
}

/* ---- bufferevents ----------------------------------------------------------- */

struct bufferevent *rmq_tls_bev_accept(struct event_base *base, evutil_socket_t fd,
                                       SSL_CTX *ctx, int tls)
{
    if (!tls || ctx == NULL)
        return bufferevent_socket_new(base, fd, BEV_OPT_CLOSE_ON_FREE);
    SSL *ssl = SSL_new(ctx);
    if (ssl == NULL)
        return NULL;
    struct bufferevent *bev = bufferevent_openssl_socket_new(base, fd, ssl,
                                                             BUFFEREVENT_SSL_ACCEPTING,
                                                             BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL) {
        SSL_free(ssl);
        return NULL;
    }
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
}

struct bufferevent *rmq_tls_bev_connect(struct event_base *base, SSL_CTX *ctx)
{
    if (ctx == NULL)
        return bufferevent_socket_new(base, -1, BEV_OPT_CLOSE_ON_FREE);
    SSL *ssl = SSL_new(ctx);
    if (ssl == NULL)
        return NULL;
    struct bufferevent *bev = bufferevent_openssl_socket_new(base, -1, ssl,
                                                             BUFFEREVENT_SSL_CONNECTING,
                                                             BEV_OPT_CLOSE_ON_FREE);
    if (bev == NULL) {
        SSL_free(ssl);
        return NULL;
    }
    bufferevent_openssl_set_allow_dirty_shutdown(bev, 1);
    return bev;
}

const char *rmq_tls_bev_error(struct bufferevent *bev, char *buf, size_t len)
{
    unsigned long e = bufferevent_get_openssl_error(bev);

    buf[0] = '\0';
    if (e != 0)
        ERR_error_string_n(e, buf, len);
    return buf;
}
