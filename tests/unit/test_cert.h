/* test_cert.h: a throwaway self-signed P-256 certificate for 127.0.0.1 and
 * its key, in a temporary directory, for the TLS cases of unit tests. */
#ifndef TEST_CERT_H
#define TEST_CERT_H

typedef struct test_cert {
    char dir[64];
    char cert[128];      /* dir/cert.pem */
    char key[128];       /* dir/key.pem */
} test_cert_t;

/* Writes the pair under a new /tmp/rmq-<tag>-XXXXXX; fails the case on error. */
void test_cert_make(test_cert_t *c, const char *tag);
/* Removes the files and the directory. */
void test_cert_remove(const test_cert_t *c);

#endif
