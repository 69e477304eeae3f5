/* test_acl.c: the access-control rules without sockets: signatures and
 * their window, whitelists, the name server's admin codes (the broker's
 * permissions are its core's: tests/core/test_core_perm.c), the HA
 * handshake check, the body under the signature, replay refusal and the
 * replay cache's bound. */
#include <check.h>
#include <string.h>

#include "rmq_acl.h"
#include "rmq_replay.h"
#include "test_acl_fixture.h"

#define NOW 1700000000000LL

/* Signs cmd (empty body) as ak/sk at ts and checks it from peer; returns
 * the status. */
static int check(Rmq__Command *cmd, const char *ak, const char *sk, int64_t ts, const char *peer,
                 char *remark)
{
    rmq_signature_t sig;
    uint8_t digest[32];
    cmd->auth = NULL;
    if (ak) {
        rmq_acl_body_digest(NULL, 0, digest);
        rmq_acl_sign(ak, sk, ts, cmd, digest, &sig);
        cmd->auth = &sig.auth;
    }
    int st = rmq_acl_check(acl, RMQ_ACL_SIGNER_AND_NEEDS, peer, cmd, NULL, NOW, remark, 512);
    cmd->auth = NULL;
    return st;
}

/* Checks cmd, already signed, with body at now. */
static int check_signed(Rmq__Command *cmd, const char *body, int64_t now, char *remark)
{
    struct evbuffer *buf = evbuffer_new();
    evbuffer_add(buf, body, strlen(body));
    int st = rmq_acl_check(acl, RMQ_ACL_SIGNER_AND_NEEDS, "127.0.0.1:5", cmd, buf, now, remark, 512);
    evbuffer_free(buf);
    return st;
}

static void send_cmd(Rmq__Command *cmd, Rmq__SendMessageRequest *h, const char *topic)
{
    rmq__command__init(cmd);
    rmq__send_message_request__init(h);
    h->topic = (char *)topic;
    h->producer_group = (char *)"pg";
    cmd->code = RMQ__REQUEST_CODE__SEND_MESSAGE;
    cmd->opaque = 7;
    cmd->header_case = RMQ__COMMAND__HEADER_SEND;
    cmd->send = h;
}

START_TEST(test_signature_and_window)
{
    Rmq__Command cmd;
    Rmq__SendMessageRequest h;
    char remark[512];
    send_cmd(&cmd, &h, "Out");
    ck_assert_int_eq(check(&cmd, "app", "app-secret-1", NOW, "127.0.0.1:5", remark), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(check(&cmd, "app", "app-secret-1", NOW - 4999, "127.0.0.1:5", remark), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(check(&cmd, "app", "app-secret-1", NOW - 5001, "127.0.0.1:5", remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "replay window"));
    ck_assert_int_eq(check(&cmd, "app", "app-secret-1", NOW + 5001, "127.0.0.1:5", remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_int_eq(check(&cmd, "app", "wrong-secret", NOW, "127.0.0.1:5", remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "signature of SEND_MESSAGE does not match"));
    ck_assert_int_eq(check(&cmd, NULL, NULL, 0, "127.0.0.1:5", remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "is not signed"));
    ck_assert_int_eq(check(&cmd, "ghost", "ghost-secret", NOW, "127.0.0.1:5", remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "unknown accessKey ghost"));

    /* a field changed after signing breaks the signature */
    rmq_signature_t sig;
    uint8_t digest[32];
    rmq_acl_body_digest(NULL, 0, digest);
    rmq_acl_sign("app", "app-secret-1", NOW, &cmd, digest, &sig);
    h.topic = (char *)"Both";
    cmd.auth = &sig.auth;
    ck_assert_int_eq(rmq_acl_check(acl, RMQ_ACL_SIGNER_AND_NEEDS, "127.0.0.1:5", &cmd, NULL, NOW, remark, sizeof remark),
                     RMQ__STATUS__NO_PERMISSION);
    cmd.auth = NULL;
}
END_TEST

/* The body is under the signature: the same header with another body is
 * refused, the signed body passes. */
START_TEST(test_body_under_signature)
{
    Rmq__Command cmd;
    Rmq__SendMessageRequest h;
    rmq_signature_t sig;
    uint8_t digest[32];
    char remark[512];

    send_cmd(&cmd, &h, "Out");
    rmq_acl_body_digest("pay 10 to bob", 13, digest);
    rmq_acl_sign("app", "app-secret-1", NOW, &cmd, digest, &sig);
    cmd.auth = &sig.auth;
    ck_assert_int_eq(check_signed(&cmd, "pay 99 to eve", NOW, remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "does not match its header and body"));
    ck_assert_int_eq(check_signed(&cmd, "pay 10 to bob", NOW, remark), RMQ__STATUS__SUCCESS);
    cmd.auth = NULL;
}
END_TEST

/* The digest of a body spread over many evbuffer chains equals the digest
 * of the same bytes flat (the client signs flat bodies, the server checks
 * evbuffers). */
START_TEST(test_body_digest_chains)
{
    static const char part[] = "0123456789abcdef";
    struct evbuffer *buf = evbuffer_new();
    char flat[20 * 16];
    uint8_t a[32], b[32];

    for (int i = 0; i < 20; i++) {
        evbuffer_add_reference(buf, part, 16, NULL, NULL);
        memcpy(flat + 16 * i, part, 16);
    }
    rmq_acl_body_digest_buf(buf, a);
    rmq_acl_body_digest(flat, sizeof flat, b);
    ck_assert_mem_eq(a, b, 32);
    evbuffer_free(buf);
    rmq_acl_body_digest_buf(NULL, a);
    rmq_acl_body_digest(NULL, 0, b);
    ck_assert_mem_eq(a, b, 32);
}
END_TEST

/* A request replayed inside the window is refused; the same request signed
 * again (a retry: new nonce) passes, and so do two requests signed in the
 * same millisecond. */
START_TEST(test_replay_refused)
{
    Rmq__Command cmd;
    Rmq__SendMessageRequest h;
    rmq_signature_t sig, again;
    uint8_t digest[32];
    char remark[512];

    send_cmd(&cmd, &h, "Out");
    rmq_acl_body_digest("m", 1, digest);
    rmq_acl_sign("app", "app-secret-1", NOW, &cmd, digest, &sig);
    rmq_acl_sign("app", "app-secret-1", NOW, &cmd, digest, &again);
    ck_assert_str_ne(sig.hex, again.hex);
    cmd.auth = &sig.auth;
    ck_assert_int_eq(check_signed(&cmd, "m", NOW, remark), RMQ__STATUS__SUCCESS);
    ck_assert_int_eq(check_signed(&cmd, "m", NOW + 10, remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "SEND_MESSAGE replayed"));
    ck_assert_int_eq(check_signed(&cmd, "m", NOW + 4999, remark), RMQ__STATUS__NO_PERMISSION);
    cmd.auth = &again.auth;
    ck_assert_int_eq(check_signed(&cmd, "m", NOW + 20, remark), RMQ__STATUS__SUCCESS);
    /* outside the window the old signature is refused by its timestamp, a
     * fresh one passes */
    cmd.auth = &sig.auth;
    ck_assert_int_eq(check_signed(&cmd, "m", NOW + 5001, remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "outside the replay window"));
    rmq_acl_sign("app", "app-secret-1", NOW + 5001, &cmd, digest, &sig);
    ck_assert_int_eq(check_signed(&cmd, "m", NOW + 5001, remark), RMQ__STATUS__SUCCESS);
    cmd.auth = NULL;
}
END_TEST

/* The cache holds at most its cap: expired entries leave first; with the
 * cache full of live entries the oldest goes and everything signed at or
 * before its timestamp is refused from then on, so an evicted signature can
 * never be replayed; newer signatures still pass. */
START_TEST(test_replay_cache_bound)
{
    rmq_replay_t *r = rmq_replay_new(4);
    uint8_t key[RMQ_REPLAY_KEY] = { 0 };

    for (int i = 0; i < 4; i++) {
        key[0] = (uint8_t)i;
        ck_assert_int_eq(rmq_replay_check(r, key, NOW + i, NOW, 1000), RMQ_REPLAY_FRESH);
    }
    ck_assert_uint_eq(rmq_replay_count(r), 4);
    key[0] = 2;
    ck_assert_int_eq(rmq_replay_check(r, key, NOW + 2, NOW, 1000), RMQ_REPLAY_SEEN);
    key[0] = 9;                                   /* full: evicts ts NOW+0 */
    ck_assert_int_eq(rmq_replay_check(r, key, NOW + 5, NOW, 1000), RMQ_REPLAY_FRESH);
    ck_assert_uint_eq(rmq_replay_count(r), 4);
    ck_assert_int_eq(rmq_replay_floor(r), NOW);
    key[0] = 0;                                   /* the evicted one, replayed */
    ck_assert_int_eq(rmq_replay_check(r, key, NOW, NOW, 1000), RMQ_REPLAY_TOO_OLD);
    key[0] = 10;                                  /* full, older than every entry */
    ck_assert_int_eq(rmq_replay_check(r, key, NOW + 1, NOW, 1000), RMQ_REPLAY_TOO_OLD);
    key[0] = 1;
    ck_assert_int_eq(rmq_replay_check(r, key, NOW + 1, NOW, 1000), RMQ_REPLAY_TOO_OLD);
    /* a second later every entry has expired: the cache empties itself */
    key[0] = 11;
    ck_assert_int_eq(rmq_replay_check(r, key, NOW + 2000, NOW + 2000, 1000), RMQ_REPLAY_FRESH);
    ck_assert_uint_eq(rmq_replay_count(r), 1);
    rmq_replay_free(r);

    /* many entries through the growth path, then all seen */
    r = rmq_replay_new(5000);
    for (int i = 0; i < 5000; i++) {
        memcpy(key, &i, sizeof(i));
        ck_assert_int_eq(rmq_replay_check(r, key, NOW + i % 100, NOW, 1000), RMQ_REPLAY_FRESH);
    }
    for (int i = 0; i < 5000; i++) {
        memcpy(key, &i, sizeof(i));
        ck_assert_int_eq(rmq_replay_check(r, key, NOW + i % 100, NOW, 1000), RMQ_REPLAY_SEEN);
    }
    rmq_replay_free(r);
}
END_TEST

/* Through the ACL: replayCacheEntries bounds it and the refusal says why. */
START_TEST(test_replay_cache_acl)
{
    static const char small[] = "replayCacheEntries=16\n"
                                "account.app.secretKey=app-secret-1\n"
                                "account.app.defaultTopicPerm=PUB\n";
    char err[256], remark[512];
    rmq_acl_t *saved = acl;
    Rmq__Command cmd;
    Rmq__SendMessageRequest h;
    rmq_signature_t first, sig;
    uint8_t digest[32];

    acl = rmq_acl_parse(small, strlen(small), "small", err, sizeof err);
    ck_assert_msg(acl != NULL, "%s", err);
    send_cmd(&cmd, &h, "T");
    rmq_acl_body_digest("m", 1, digest);
    rmq_acl_sign("app", "app-secret-1", NOW, &cmd, digest, &first);
    cmd.auth = &first.auth;
    ck_assert_int_eq(check_signed(&cmd, "m", NOW, remark), RMQ__STATUS__SUCCESS);
    for (int i = 1; i <= 16; i++) {
        rmq_acl_sign("app", "app-secret-1", NOW + i, &cmd, digest, &sig);
        cmd.auth = &sig.auth;
        ck_assert_int_eq(check_signed(&cmd, "m", NOW + i, remark), RMQ__STATUS__SUCCESS);
    }
    cmd.auth = &first.auth;                       /* evicted, then replayed */
    ck_assert_int_eq(check_signed(&cmd, "m", NOW + 20, remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "the newest the replay cache (16 entries) has dropped"));
    cmd.auth = NULL;
    rmq_acl_free(acl);
    acl = saved;

    static const char bad[] = "replayCacheEntries=3\n";
    ck_assert_ptr_null(rmq_acl_parse(bad, strlen(bad), "bad", err, sizeof err));
    ck_assert_ptr_nonnull(strstr(err, "must be 16..100000000"));
}
END_TEST

START_TEST(test_addresses)
{
    Rmq__Command cmd;
    Rmq__SendMessageRequest h;
    char remark[512];
    send_cmd(&cmd, &h, "Closed");
    ck_assert_int_eq(check(&cmd, NULL, NULL, 0, "10.9.1.2:40000", remark), RMQ__STATUS__SUCCESS);  /* global */
    ck_assert_int_eq(check(&cmd, "app", "app-secret-1", NOW, "10.1.1.1:1", remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "account app may not connect from 10.1.1.1"));
    send_cmd(&cmd, &h, "Out");
    ck_assert_int_eq(check(&cmd, "app", "app-secret-1", NOW, "[::1]:9", remark), RMQ__STATUS__SUCCESS);
}
END_TEST

START_TEST(test_admin_and_ha)
{
    Rmq__Command cmd = RMQ__COMMAND__INIT;
    char remark[512], hex[65];
    cmd.code = RMQ__REQUEST_CODE__DELETE_TOPIC_IN_NAMESRV;
    ck_assert_int_eq(check(&cmd, "app", "app-secret-1", NOW, "127.0.0.1:1", remark), RMQ__STATUS__NO_PERMISSION);
    ck_assert_ptr_nonnull(strstr(remark, "admin operation"));
    ck_assert_int_eq(check(&cmd, "adm", "admin-secret", NOW, "127.0.0.1:1", remark), RMQ__STATUS__SUCCESS);
    cmd.code = RMQ__REQUEST_CODE__DELETE_TOPIC_IN_BROKER;   /* a broker code: its core decides */
    ck_assert_int_eq(check(&cmd, "app", "app-secret-1", NOW, "127.0.0.1:1", remark), RMQ__STATUS__SUCCESS);
    cmd.code = RMQ__REQUEST_CODE__GET_ROUTEINFO_BY_TOPIC;   /* signature only */
    ck_assert_int_eq(check(&cmd, "app", "app-secret-1", NOW, "127.0.0.1:1", remark), RMQ__STATUS__SUCCESS);

    rmq_acl_sign_ha("admin-secret", "C", "b", 1, 100, NOW, hex);
    ck_assert_int_eq(rmq_acl_check_ha(acl, "127.0.0.1:1", "adm", hex, "C", "b", 1, 100, NOW, NOW, remark, sizeof remark), 0);
    ck_assert_int_eq(rmq_acl_check_ha(acl, "127.0.0.1:1", "adm", hex, "C", "b", 1, 101, NOW, NOW, remark, sizeof remark), -1);
    rmq_acl_sign_ha("app-secret-1", "C", "b", 1, 100, NOW, hex);
    ck_assert_int_eq(rmq_acl_check_ha(acl, "127.0.0.1:1", "app", hex, "C", "b", 1, 100, NOW, NOW, remark, sizeof remark), -1);
    ck_assert_ptr_nonnull(strstr(remark, "not an admin"));
    ck_assert_int_eq(rmq_acl_check_ha(acl, "127.0.0.1:1", "", "", "C", "b", 1, 100, 0, NOW, remark, sizeof remark), -1);
    ck_assert_ptr_nonnull(strstr(remark, "HA handshake from 127.0.0.1 is not signed"));
}
END_TEST

int main(void)
{
    Suite *s = suite_create("acl");
    TCase *tc = tcase_create("rules");
    tcase_add_checked_fixture(tc, acl_fixture_setup, acl_fixture_teardown);
    tcase_add_test(tc, test_signature_and_window);
    tcase_add_test(tc, test_body_under_signature);
    tcase_add_test(tc, test_body_digest_chains);
    tcase_add_test(tc, test_replay_refused);
    tcase_add_test(tc, test_replay_cache_bound);
    tcase_add_test(tc, test_replay_cache_acl);
    tcase_add_test(tc, test_addresses);
    tcase_add_test(tc, test_admin_and_ha);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_ENV);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
