/* test_cert.c: the unit tests' self-signed certificate (test_cert.h). */
#include "test_cert.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>

/* A certificate for 127.0.0.1 valid from a minute ago for an hour, signed by pkey. */
static X509 *cert_new(EVP_PKEY *pkey)
{
    X509 *x = X509_new();
    ck_assert_ptr_nonnull(x);
    X509_set_version(x, 2);
    ASN1_INTEGER_set(X509_get_serialNumber(x), 1);
    X509_gmtime_adj(X509_getm_notBefore(x), -60);
    X509_gmtime_adj(X509_getm_notAfter(x), 3600);
    X509_set_pubkey(x, pkey);
    X509_NAME *name = X509_get_subject_name(x);
    X509_NAME_add_entry_by_txt(name, "CN", MBSTRING_ASC, (const unsigned char *)"127.0.0.1", -1, -1, 0);
    X509_set_issuer_name(x, name);
    ck_assert_int_gt(X509_sign(x, pkey, EVP_sha256()), 0);
    return x;
}

void test_cert_make(test_cert_t *c, const char *tag)
{
    snprintf(c->dir, sizeof(c->dir), "/tmp/rmq-%s-XXXXXX", tag);
    ck_assert_ptr_nonnull(mkdtemp(c->dir));
    snprintf(c->cert, sizeof(c->cert), "%s/cert.pem", c->dir);
    snprintf(c->key, sizeof(c->key), "%s/key.pem", c->dir);
    EVP_PKEY *pkey = EVP_EC_gen("P-256");
    ck_assert_ptr_nonnull(pkey);
    X509 *x = cert_new(pkey);
    FILE *fp = fopen(c->cert, "w");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(PEM_write_X509(fp, x), 1);
    fclose(fp);
    fp = fopen(c->key, "w");
    ck_assert_ptr_nonnull(fp);
    ck_assert_int_eq(PEM_write_PrivateKey(fp, pkey, NULL, NULL, 0, NULL, NULL), 1);
    fclose(fp);
    X509_free(x);
    EVP_PKEY_free(pkey);
}

void test_cert_remove(const test_cert_t *c)
{
    unlink(c->cert);
    unlink(c->key);
    rmdir(c->dir);
}
