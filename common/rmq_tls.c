/* rmq_tls.c: TLS contexts for the RPC layer, built from PEM files. TLS 1.2
 * is the floor. Servers select ALPN "h2" for clients that offer it on the
 * transport's connections (gRPC, rmq_codec_grpc.h), never on the HTTP
 * console's; clients offering no ALPN (rmq, remoting) are served as
 * before. Errors name the file and OpenSSL's reason. */
#include "rmq_rpc.h"

#include <pthread.h>
#include <stdio.h>

#include <openssl/err.h>

/* Writes "what: <first OpenSSL error>" into err and clears the error queue. */
static void tls_error(char *err, size_t errlen, const char *what, const char *path)
{
    char reason[256] = "unknown error";
    unsigned long e = ERR_get_error();

    if (e != 0)
        ERR_error_string_n(e, reason, sizeof(reason));
    ERR_clear_error();
    snprintf(err, errlen, "%s %s: %s", what, path ? path : "", reason);
}

/* Loads an optional certificate chain and key into ctx; 0 on success. */
static int load_identity(SSL_CTX *ctx, const char *cert, const char *key, char *err,
                         size_t errlen)
{
    if (cert == NULL && key == NULL)
        return 0;
    if (cert == NULL || key == NULL) {
        snprintf(err, errlen, "TLS needs both a certificate and a key");
        return -1;
    }
    if (SSL_CTX_use_certificate_chain_file(ctx, cert) != 1) {
        tls_error(err, errlen, "cannot load certificate", cert);
        return -1;
    }
    if (SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) != 1) {
        tls_error(err, errlen, "cannot load private key", key);
        return -1;
    }
    if (SSL_CTX_check_private_key(ctx) != 1) {
        tls_error(err, errlen, "private key does not match certificate", key);
        return -1;
    }
    return 0;
}

/* The SSL ex_data slot that marks a connection as one that may speak h2. */
static int h2_slot = -1;
static pthread_once_t h2_slot_once = PTHREAD_ONCE_INIT;

static void h2_slot_init(void)
{
    h2_slot = SSL_get_ex_new_index(0, "rmq: may select ALPN h2", NULL, NULL, NULL);
}

/* The server's ALPN choice: "h2" when the connection may speak it and the
 * client offers it, else no ALPN (the handshake goes on: the codec probe
 * decides). */
static int alpn_select(SSL *ssl, const unsigned char **out, unsigned char *outlen,
                       const unsigned char *in, unsigned int inlen, void *arg)
{
    static const unsigned char h2[] = "\x02h2";
    unsigned char *chosen;

    if (h2_slot < 0 || !SSL_get_ex_data(ssl, h2_slot) ||
        SSL_select_next_proto(&chosen, outlen, h2, sizeof(h2) - 1, in, inlen) != OPENSSL_NPN_NEGOTIATED)
        return SSL_TLSEXT_ERR_NOACK;
    *out = chosen;
    return SSL_TLSEXT_ERR_OK;
}

void rmq_tls_select_h2(SSL_CTX *ctx)
{
    pthread_once(&h2_slot_once, h2_slot_init);
    SSL_CTX_set_alpn_select_cb(ctx, alpn_select, NULL);
}

void rmq_tls_offer_h2(SSL *ssl)
{
    pthread_once(&h2_slot_once, h2_slot_init);
    if (h2_slot >= 0)
        SSL_set_ex_data(ssl, h2_slot, (void *)1);
}

static SSL_CTX *ctx_new(const SSL_METHOD *method, char *err, size_t errlen)
{
    SSL_CTX *ctx = SSL_CTX_new(method);

    if (ctx == NULL) {
        tls_error(err, errlen, "cannot create TLS context", NULL);
        return NULL;
    }
    SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
    return ctx;
}

/* Server context: cert and key required; ca (optional) verifies clients,
 * required when verify_client is set. Owner: caller. Any thread. */
SSL_CTX *rmq_tls_server_ctx_new(const char *cert, const char *key, const char *ca,
                                int verify_client, char *err, size_t errlen)
{
    char scratch[1];

    if (err == NULL || errlen == 0) {
        err = scratch;
        errlen = sizeof(scratch);
    }
    SSL_CTX *ctx = ctx_new(TLS_server_method(), err, errlen);
    if (ctx == NULL)
        return NULL;
    if (cert == NULL || key == NULL) {
        snprintf(err, errlen, "TLS server needs a certificate and a key");
        goto fail;
    }
    if (load_identity(ctx, cert, key, err, errlen) != 0)
        goto fail;
    rmq_tls_select_h2(ctx);
    if (ca != NULL && SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
        tls_error(err, errlen, "cannot load CA", ca);
        goto fail;
    }
    if (verify_client) {
        if (ca == NULL) {
            snprintf(err, errlen, "verifying clients needs a CA file");
            goto fail;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER | SSL_VERIFY_FAIL_IF_NO_PEER_CERT, NULL);
    }
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}

/* Client context: with ca the server's chain is verified, without it the
 * link is encrypted but the server is not authenticated; cert and key
 * (optional) identify the client. Owner: caller. Any thread. */
SSL_CTX *rmq_tls_client_ctx_new(const char *ca, const char *cert, const char *key,
                                char *err, size_t errlen)
{
    char scratch[1];

    if (err == NULL || errlen == 0) {
        err = scratch;
        errlen = sizeof(scratch);
    }
    SSL_CTX *ctx = ctx_new(TLS_client_method(), err, errlen);
    if (ctx == NULL)
        return NULL;
    if (ca != NULL) {
        if (SSL_CTX_load_verify_locations(ctx, ca, NULL) != 1) {
            tls_error(err, errlen, "cannot load CA", ca);
            goto fail;
        }
        SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    }
    if (load_identity(ctx, cert, key, err, errlen) != 0)
        goto fail;
    return ctx;
fail:
    SSL_CTX_free(ctx);
    return NULL;
}
